"""The encoder's fused attention graph against the unfused one: vectors, then speed in one process.

Run: `python benchmarks/bench_encoder_fusion.py [--weights int8 float] [--optimized-dir DIR]`.

* vectors: every eval catalog document (`function_id + " " + description`) and the first 200
  distinct capability texts of the eval, extra and extra2 cases, through `_rank.dense.Encoder`
  with `fuse=False` and `fuse=True` (same weights): the largest absolute difference of a vector
  component, the smallest and mean cosine, and how many rows are bit for bit the same;
* speed: both encoders built in this process and called alternately, call by call, on the same
  inputs (one capability text at a time; 16-document batches; one 512-character text 40 times),
  each call timed by this thread's CPU time and the wall clock; medians of each, and the median of
  the per-pair ratio fused / unfused. The 1-minute load average is printed before and after.

Both sessions load their saved optimized graph (`--optimized-dir`, a fresh temporary folder by
default, so the first run also builds them).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from _rank.dense import Encoder

ROOT = Path(__file__).resolve().parent.parent
EVAL = Path(os.environ.get("III_EVAL_DIR", "/work/shared/eval"))
CASE_FILES = (EVAL / "cases.json", ROOT / "benchmarks/data/extra_cases.json", ROOT / "benchmarks/data/extra2_cases.json")
CAPABILITIES = 200  #: distinct capability texts compared and timed
BATCH = 16  #: documents per timed batch (the encoder's batch_size)
BATCHES = 12  #: timed batches
LONG_CHARS = 512  #: characters of the long text
LONG_RUNS = 40  #: timed calls of the long text


def texts() -> tuple[list[str], list[str]]:
    """(catalog documents, capability texts) as the module doc says."""
    catalog = json.loads((EVAL / "catalog.json").read_text())
    documents = [f"{r['function_id']} {r.get('description') or ''}" for r in catalog]
    cases: list[dict] = []
    for path in CASE_FILES:
        loaded = json.loads(path.read_text())
        cases += loaded["cases"] if isinstance(loaded, dict) else loaded
    capabilities = list(dict.fromkeys(c for case in cases for c in case.get("capabilities", [])))
    return documents, capabilities[:CAPABILITIES]


def compare(unfused: Encoder, fused: Encoder, name: str, items: list[str]) -> str:
    a, b = unfused.encode(items), fused.encode(items)
    cosines = (a * b).sum(axis=1)
    same = int((a == b).all(axis=1).sum())
    return (f"{name}: max abs diff {np.abs(a - b).max():.3g}, min cosine {cosines.min():.7f}, "
            f"mean cosine {cosines.mean():.7f}, identical rows {same}/{len(items)}")


def alternate(unfused: Encoder, fused: Encoder, name: str, calls: Sequence[list[str]]) -> str:
    cpu: dict[bool, list[float]] = {False: [], True: []}
    wall: dict[bool, list[float]] = {False: [], True: []}
    unfused.encode(calls[0])
    fused.encode(calls[0])
    for call in calls:
        for flag, encoder in ((False, unfused), (True, fused)):
            cpu0, wall0 = time.thread_time(), time.perf_counter()
            encoder.encode(call)
            cpu[flag].append((time.thread_time() - cpu0) * 1e3)
            wall[flag].append((time.perf_counter() - wall0) * 1e3)
    ratio = float(np.median(np.array(cpu[True]) / np.array(cpu[False])))
    return (f"{name} (n={len(calls)}): CPU ms unfused {np.median(cpu[False]):.3f} fused {np.median(cpu[True]):.3f}"
            f" (paired ratio {ratio:.3f}); wall ms unfused {np.median(wall[False]):.3f}"
            f" fused {np.median(wall[True]):.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--weights", nargs="+", choices=("int8", "float"), default=["int8", "float"])
    parser.add_argument("--optimized-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    saved = args.optimized_dir or Path(tempfile.mkdtemp(prefix="bench-fusion-"))
    documents, capabilities = texts()
    print(f"{len(documents)} documents, {len(capabilities)} capability texts; load {os.getloadavg()[0]:.2f}")
    for weights in args.weights:
        unfused = Encoder(optimized_dir=saved, weights=weights, fuse=False)
        fused = Encoder(optimized_dir=saved, weights=weights, fuse=True)
        if not fused.fuse:
            print(f"{weights}: this onnxruntime fell back to the unfused graph")
            continue
        print(f"{weights} " + compare(unfused, fused, "documents", documents))
        print(f"{weights} " + compare(unfused, fused, "capabilities", capabilities))
        long = " ".join(documents)[:LONG_CHARS]
        for name, calls in (("one capability", [[t] for t in capabilities]),
                            (f"{BATCH}-document batch", [documents[i:i + BATCH] for i in range(0, BATCH * BATCHES, BATCH)]),
                            (f"one {LONG_CHARS}-char text", [[long]] * LONG_RUNS)):
            print(f"{weights} " + alternate(unfused, fused, name, calls), flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
