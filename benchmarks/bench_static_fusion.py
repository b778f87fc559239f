"""Cost of the static lane's fusion per capability at 512 functions: the rule
(`static_fusion.fuse_static`) against the learned order below its first place
(`static_fusion.learned_order`), measured in the same run.

    .venv/bin/python benchmarks/bench_static_fusion.py [--functions 512] [--repeat 3]

The catalog is the eval catalog's functions, cycled with a numbered namespace up to
`--functions`; the capabilities are those of the eval `dev` split (never `test`). Encoding and
the cosine top-64 are `benchmarks/bench_static.py`'s figure and are not timed here.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from pathlib import Path

from _rank.static import StaticIndex, default_encoder

from iii_directory.search.ranking import static_fusion
from iii_directory.search import static_lane
from iii_directory.search.ranking.corpus import Corpus, tool_from_schema
from iii_directory.search.ranking.fusion import Request
from iii_directory.search.ranking.lanes import lexical_lane
from iii_directory.search.ranking.query import make_query

EVAL = Path("/work/shared/eval")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=EVAL)
    parser.add_argument("--functions", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    records = json.loads((args.eval_dir / "catalog.json").read_text())
    base = [tool_from_schema(r["function_id"], r.get("description"), r.get("request_schema"))
            for r in records if not (r.get("metadata") or {}).get("internal")]
    tools = []
    while len(tools) < args.functions:
        tool, cycle = base[len(tools) % len(base)], len(tools) // len(base)
        name = tool.name if cycle == 0 else f"w{cycle}{tool.name}"
        tools.append(tool_from_schema(name, tool.description, tool.parameters))
    corpus = Corpus.build(tools)
    encoder = default_encoder()
    ids, texts = corpus.index_inputs()
    index = StaticIndex(encoder.dimension)
    index.add(encoder.encode(texts))
    describe = lambda function_id: corpus.descriptions.get(function_id, "")  # noqa: E731
    cases = json.loads((args.eval_dir / "cases.json").read_text())["cases"]
    queries = [q for case in cases if case["split"] == "dev" for q in
               (make_query(text) for text in case["capabilities"]) if q is not None]
    rule: list[float] = []
    learned: list[float] = []
    for _ in range(args.repeat):
        for query in queries:
            lexical, _ = lexical_lane(corpus.documents, query.terms)
            ranking = [(ids[row], cos) for row, cos in
                       index.search(encoder.encode_one(query.dense_text), static_lane.STATIC_K)]
            started = time.perf_counter()
            lane = static_fusion.fuse_static(lexical, ranking)
            middle = time.perf_counter()
            if lane and lexical:
                static_fusion.learned_order(lane, lexical, ranking, Request.of(query.terms),
                                          corpus.documents, describe)
            rule.append((middle - started) * 1e3)
            learned.append((time.perf_counter() - middle) * 1e3)

    def p95(values: list[float]) -> float:
        return sorted(values)[max(0, round(0.95 * len(values)) - 1)]

    print(f"{len(corpus)} functions, {len(queries)} dev capabilities x {args.repeat}")
    print(f"  fuse_static    p50 {statistics.median(rule):.3f} ms  p95 {p95(rule):.3f} ms")
    print(f"  learned_order  p50 {statistics.median(learned):.3f} ms  p95 {p95(learned):.3f} ms")
    print(f"  process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
