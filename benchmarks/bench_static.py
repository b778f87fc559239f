"""Static lane cost: table load time, RSS increase, and encode + score per capability at 512
functions, compiled kernels against the plain-Python reference and against MiniLM (when the
`dense` extra is installed), all measured in the same run.

    .venv/bin/python benchmarks/bench_static.py [--functions 512] [--repeat 3] [--json out.json]

Load time and RSS come from a fresh interpreter per sample (the cold start a worker pays):
`VmRSS` before `_rank.static.default_encoder()` and after it plus the index of the catalog.
The catalog is the eval catalog's `"{id} {description}"` texts, cycled with a numbered
namespace up to `--functions`; the capabilities are every capability of the eval cases and our
case sets. Per-capability time is the tokenizer + encode + cosine top-64 over the catalog.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVAL = Path("/work/shared/eval")
CASE_FILES = [EVAL / "cases.json", ROOT / "benchmarks" / "data" / "extra_cases.json",
              ROOT / "benchmarks" / "data" / "extra2_cases.json"]

_COLD = r"""
import json, sys, time
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
import _rank.static as s
before = rss()
t, cpu = time.perf_counter(), time.process_time()
encoder = s.default_encoder()
load, load_cpu = time.perf_counter() - t, time.process_time() - cpu
after_load = rss()
texts = json.loads(sys.argv[1])
t = time.perf_counter()
index = s.StaticIndex(encoder.dimension)
index.add(encoder.encode(texts))
build = time.perf_counter() - t
print(json.dumps({"load_ms": load * 1e3, "load_cpu_ms": load_cpu * 1e3, "index_ms": build * 1e3, "rss_table_mb": after_load - before,
                  "rss_total_mb": rss() - before, "implementation": s.IMPLEMENTATION}))
"""


def catalog_texts(n: int) -> list[str]:
    records = json.loads((EVAL / "catalog.json").read_text(encoding="utf-8"))
    base = [f"{r['function_id']} {r.get('description', '')}" for r in records]
    return [text if i < len(base) else f"w{i // len(base)}{text}"
            for i, text in enumerate(base[i % len(base)] for i in range(n))]


def capabilities() -> list[str]:
    out: list[str] = []
    for path in CASE_FILES:
        if path.is_file():
            for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
                out.extend(case["capabilities"])
    return out


def cold(texts: list[str], repeat: int) -> dict[str, float | str]:
    samples = []
    for _ in range(repeat):
        result = subprocess.run([sys.executable, "-c", _COLD, json.dumps(texts)], capture_output=True,
                                text=True, check=True, timeout=300)
        samples.append(json.loads(result.stdout))
    keys = ("load_ms", "load_cpu_ms", "index_ms", "rss_table_mb", "rss_total_mb")
    out: dict[str, float | str] = {k: statistics.median(s[k] for s in samples) for k in keys}
    out["implementation"] = samples[0]["implementation"]
    return out


def timed(work: Callable[[str], object], queries: list[str], repeat: int) -> dict[str, float]:
    """Median and p95 (ms) of `work(capability)`, best of `repeat` passes per capability."""
    best = [float("inf")] * len(queries)
    for _ in range(repeat):
        for i, text in enumerate(queries):
            started = time.perf_counter()
            work(text)
            best[i] = min(best[i], time.perf_counter() - started)
    ordered = sorted(best)
    return {"median_ms": statistics.median(ordered) * 1e3,
            "p95_ms": ordered[int(0.95 * (len(ordered) - 1))] * 1e3}


def per_capability(encode, search, queries: list[str], repeat: int) -> dict[str, float]:  # noqa: ANN001
    """Median and p95 (ms) of encode + search per capability, best of `repeat` passes each."""
    return timed(lambda text: search(encode(text)), queries, repeat)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)

    from _rank import _static_reference, static

    texts = catalog_texts(args.functions)
    queries = capabilities()
    figures: dict[str, object] = {"functions": len(texts), "capabilities": len(queries)}
    figures["cold"] = cold(texts, args.repeat)

    encoder = static.default_encoder()
    index = static.StaticIndex(encoder.dimension)
    index.add(encoder.encode(texts))
    for text in queries:  # warm the word cache as a running worker has it
        encoder.tokenizer.ids(text)
    rows = {}
    compiled = static._kernels
    rows[f"static ({static.IMPLEMENTATION})"] = per_capability(
        encoder.encode_one, lambda v: index.search(v, 64), queries, args.repeat)
    static._kernels = _static_reference
    try:
        rows["static (python reference)"] = per_capability(
            encoder.encode_one, lambda v: index.search(v, 64), queries, 1)
    finally:
        static._kernels = compiled
    rows["tokenizer only"] = per_capability(encoder.tokenizer.ids, lambda v: v, queries, args.repeat)
    try:
        from _rank import dense
    except ImportError:
        dense = None
    if dense is not None:
        minilm = dense.Encoder(threads=1)
        vectors = dense.VectorIndex()
        vectors.add(minilm.encode(texts))
        rows["MiniLM int8 (1 thread)"] = per_capability(
            lambda t: minilm.encode([t]), lambda v: vectors.search(v, 64), queries, 1)
    figures["per_capability"] = rows

    c = figures["cold"]
    print(f"static lane, {len(texts)} functions, {len(queries)} capabilities "
          f"({c['implementation']} kernels)")
    print(f"  table + tokenizer load   {c['load_ms']:.1f} ms wall, {c['load_cpu_ms']:.1f} ms CPU   "
          f"(RSS +{c['rss_table_mb']:.1f} MB)")
    print(f"  index of {len(texts)} functions  {c['index_ms']:.1f} ms   "
          f"(RSS +{c['rss_total_mb']:.1f} MB with the table)")
    for name, row in rows.items():
        print(f"  {name:<28} per capability: median {row['median_ms']:.3f} ms, "
              f"p95 {row['p95_ms']:.3f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
