"""The in-process ensemble yardstick of issue 32: BM25 + MiniLM fused by weighted RRF, caching nothing.

Run: `python benchmarks/bench_ensemble.py` (one pass of 40 first-call texts, then the command that
times our worker's first call over the wire in the same sitting); `--pairs N` alternates N passes
of the ensemble with N runs of that command (`bench_wire.py`'s first-call rows, a subprocess) and
prints the ratio wire / ensemble of each pair.

The ensemble is what a retrieval library builds in-process from the same catalog, without the
worker's caches or lanes:

* documents: every searchable record of the benchmark catalog (`_phrasings.catalog()`, the one
  `bench_wire.py`'s hybrid rig serves; records `is_excluded` drops are left out), its text
  `function_id + " " + description`;
* a BM25 retriever: `rank_bm25.BM25Okapi` (k1 = 1.5, b = 0.75, its defaults) over a lower-case
  word tokenization (`[a-z0-9]+`) of that text; it scores every document and returns its top k;
* a dense retriever: the packaged all-MiniLM-L6-v2 through `_rank.dense.Encoder` with
  `fuse=False` — the graph as exported, as a library runs it, not our speed rewrite
  (`_rank._fuse_attention`), so the yardstick does not move with our engineering; `--fused` runs
  it on our fused graph instead, to show that ratio beside the honest one —, the catalog's
  vectors embedded once at setup; every query is encoded afresh (no query cache), scored by cosine
  (unit vectors: a dot product) against every document, top k;
* fusion: weighted reciprocal rank fusion, score(d) = Σ_r w_r / (c + rank_r(d)) with ranks from 1,
  w = (0.5, 0.5), c = 60 (the usual ensemble-retriever defaults); the top `TOP` of that score,
  ties kept in first-seen order (BM25's list first).

Texts: `_phrasings.fresh(1, serial)` with a new serial per query — the generator `bench_wire.py`'s
first-call rows use — so neither side has seen a text before. Each query is timed on its own
(`time.perf_counter`, and the process CPU time beside it); the first is a warm-up and not counted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

from _rank.dense import Encoder
from iii_directory.exclusions import is_excluded

sys.path.insert(0, str(Path(__file__).parent))

from _phrasings import catalog, fresh

ROOT = Path(__file__).resolve().parent.parent
K = 12  #: each retriever's list length
TOP = 12  #: results the fused list returns (the worker's default `limit`)
RRF_C = 60  #: reciprocal rank fusion constant
WEIGHTS = (0.5, 0.5)  #: BM25, dense
WIRE_ARGS = ["-m", "pytest", "benchmarks/bench_wire.py", "--benchmark-only",
             "-k", "search_first_call and not background"]
WIRE_ROW = "test_search_first_call[1]"
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """Lower-case alphanumeric runs of `text` (`a-z0-9`; everything else separates)."""
    return _WORD.findall(text.lower())


def top(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the `k` highest scores, highest first (stable: the lower index wins a tie)."""
    return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


def fuse(rankings: Sequence[Sequence[int]], weights: Sequence[float], c: int) -> list[int]:
    """Weighted reciprocal rank fusion: Σ_r w_r / (c + rank) over the lists holding a document
    (rank from 1), highest first; ties keep the order documents were first seen in."""
    scores: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + weight / (c + rank)
    return sorted(scores, key=lambda d: -scores[d])


class Ensemble:
    """BM25 and MiniLM retrievers over `records`, fused by weighted RRF (module docstring)."""

    def __init__(self, records: Iterable[dict[str, Any]], encoder: Encoder) -> None:
        kept = [r for r in records if not is_excluded(r["function_id"], r.get("metadata"))]
        self.ids = [r["function_id"] for r in kept]
        texts = [f"{r['function_id']} {r.get('description') or ''}" for r in kept]
        self.encoder = encoder
        self.bm25 = BM25Okapi([words(t) for t in texts])
        self.vectors = encoder.encode(texts)

    def lexical(self, query: str) -> list[int]:
        return top(np.asarray(self.bm25.get_scores(words(query))), K)

    def dense(self, query: str) -> list[int]:
        vector = self.encoder.encode([query])[0]
        return top(self.vectors @ vector, K)

    def search(self, query: str, clock: list[float] | None = None) -> list[str]:
        """The fused top `TOP` function ids for `query`; when `clock` is given, the wall seconds
        of the BM25 and the dense retriever are appended to it."""
        start = time.perf_counter()
        lexical = self.lexical(query)
        middle = time.perf_counter()
        dense = self.dense(query)
        if clock is not None:
            clock += [middle - start, time.perf_counter() - middle]
        fused = fuse([lexical, dense], WEIGHTS, RRF_C)
        return [self.ids[i] for i in fused[:TOP]]


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank quantile of ascending `sorted_values` (q = 0.95: the value at rank ⌈0.95·n⌉)."""
    rank = max(1, math.ceil(q * len(sorted_values) - 1e-9))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def load() -> str:
    """The 1-minute load average, for the figures' margin."""
    return f"{os.getloadavg()[0]:.2f}"


def timed(ensemble: Ensemble, serials: Iterable[int], rounds: int) -> dict[str, float]:
    """Median / p95 / max wall ms, median CPU ms and the median wall ms of each retriever (BM25,
    dense: encoder and cosines) of `rounds` one-capability searches, each with a text not used
    before (one untimed warm-up first)."""
    serials = iter(serials)
    ensemble.search(fresh(1, next(serials))[0])
    walls: list[float] = []
    cpus: list[float] = []
    parts: list[list[float]] = []
    for _ in range(rounds):
        (text,) = fresh(1, next(serials))
        cpu0, wall0 = time.process_time(), time.perf_counter()
        clock: list[float] = []
        found = ensemble.search(text, clock)
        parts.append(clock)
        walls.append((time.perf_counter() - wall0) * 1e3)
        cpus.append((time.process_time() - cpu0) * 1e3)
        assert len(found) == min(TOP, len(ensemble.ids))
    walls.sort()
    cpus.sort()
    return {"median": walls[len(walls) // 2], "p95": quantile(walls, 0.95), "max": walls[-1],
            "cpu_median": cpus[len(cpus) // 2], "rounds": rounds,
            "bm25_median": sorted(p[0] for p in parts)[rounds // 2] * 1e3,
            "dense_median": sorted(p[1] for p in parts)[rounds // 2] * 1e3}


def wire_first_call() -> dict[str, float]:
    """Run `bench_wire.py`'s first-call rows (a subprocess, this interpreter and environment) and
    return the one-capability row's median / p95 / max ms."""
    with tempfile.TemporaryDirectory(prefix="bench-ensemble-") as scratch:
        out = Path(scratch) / "wire.json"
        done = subprocess.run([sys.executable, *WIRE_ARGS, f"--benchmark-json={out}"], check=False, cwd=ROOT,
                              capture_output=True, text=True)
        if done.returncode != 0 or not out.is_file():
            raise RuntimeError(f"bench_wire.py failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        rows = {b["name"]: b["stats"] for b in json.loads(out.read_text())["benchmarks"]}
    stats = rows[WIRE_ROW]
    data = sorted(x * 1e3 for x in stats.get("data") or [])
    return {"median": stats["median"] * 1e3, "p95": quantile(data, 0.95) if data else float("nan"),
            "max": stats["max"] * 1e3, "rounds": stats["rounds"]}


def line(what: str, figures: dict[str, float], before: str, after: str) -> str:
    cpu = (f", CPU median {figures['cpu_median']:.2f} ms (BM25 {figures['bm25_median']:.2f}, dense"
           f" {figures['dense_median']:.2f} ms)" if "cpu_median" in figures else "")
    return (f"{what}: median {figures['median']:.2f} ms, p95 {figures['p95']:.2f} ms, max {figures['max']:.2f} ms"
            f" over {figures['rounds']} new texts{cpu} (load {before} → {after})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=40, help="timed texts a pass (default 40)")
    parser.add_argument("--pairs", type=int, default=0,
                        help="alternate this many ensemble passes with bench_wire runs (default 0: the ensemble only)")
    parser.add_argument("--threads", type=int, default=1, help="encoder intra-op threads (default 1, as the worker)")
    parser.add_argument("--weights", choices=("float", "int8"), default="float",
                        help="encoder weight arithmetic (default float: the packaged model as a library runs it)")
    parser.add_argument("--fused", action="store_true",
                        help="run the encoder on our fused attention graph (default: the graph as exported)")
    args = parser.parse_args(argv)
    if args.rounds < 2:
        parser.error("--rounds must be at least 2")

    started = time.perf_counter()
    ensemble = Ensemble(catalog(), Encoder(threads=args.threads, weights=args.weights, fuse=args.fused))
    graph = "fused" if args.fused else "as exported"
    print(f"ensemble: {len(ensemble.ids)} documents, BM25Okapi + MiniLM ({args.weights}, {graph}, {args.threads} thread), "
          f"RRF w={WEIGHTS} c={RRF_C}, k={K}, top {TOP}; set up in {time.perf_counter() - started:.1f} s")
    serials = itertools.count(1_000)  # above any serial bench_wire.py uses in a run
    wire_command = " ".join(["python", *WIRE_ARGS[:-1], f'"{WIRE_ARGS[-1]}"'])
    if args.pairs <= 0:
        before = load()
        figures = timed(ensemble, serials, args.rounds)
        print(line("ensemble in-process, one capability", figures, before, load()))
        print(f"our first call over the wire, same sitting: {wire_command}  (row {WIRE_ROW})")
        return 0
    ratios = []
    for pair in range(1, args.pairs + 1):
        before = load()
        ours = timed(ensemble, serials, args.rounds)
        print(line(f"pair {pair} ensemble in-process", ours, before, load()), flush=True)
        before = load()
        wire = wire_first_call()
        print(line(f"pair {pair} worker over the wire ({WIRE_ROW})", wire, before, load()), flush=True)
        ratios.append(wire["median"] / ours["median"])
        print(f"pair {pair} ratio of medians wire / ensemble: {ratios[-1]:.2f}×", flush=True)
    print("ratios: " + ", ".join(f"{r:.2f}×" for r in ratios))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
