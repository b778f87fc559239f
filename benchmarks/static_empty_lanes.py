"""Empty lexical lanes under `--mode static` (issue 19): for every capability whose lexical lane
(and its static expansion) came out empty and that the static lane did not answer alone, which
relaxed gate would answer it, counted as positives (the static top 4 holds a relevant function)
and negatives (no-match cases, chatter, near misses) per set.

    .venv/bin/python benchmarks/static_empty_lanes.py [--eval-dir ../shared/eval]

Runs the bench's pipeline over `static_variants.all_sets` (eval `dev`, `extra`, `extra2`, the
held-out catalog, seeded chatter and near misses; never `test`). Each candidate gate is printed
as `set:+positives/-negatives` among the capabilities it would answer.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from case_sets import relevant_functions  # noqa: E402
from static_variants import ROOT, all_sets  # noqa: E402

from iii_directory import bench  # noqa: E402
from iii_directory.search import static_lane  # noqa: E402
from iii_directory.search.corpus import namespace_of  # noqa: E402

Row = dict[str, Any]

GATES: dict[str, Callable[[Row], bool]] = {
    "cosine >= 0.55, a worker twice in the head": lambda r: r["cosine"] >= 0.55 and r["share"] >= 2,
    "cosine >= 0.50, a worker twice in the head": lambda r: r["cosine"] >= 0.50 and r["share"] >= 2,
    "cosine >= 0.50, one worker holds the head": lambda r: r["cosine"] >= 0.50 and r["share"] >= 4,
    "margin >= 0.15, a worker twice in the head": lambda r: r["margin"] >= 0.15 and r["share"] >= 2,
    "margin >= 0.20, a worker twice in the head": lambda r: r["margin"] >= 0.20 and r["share"] >= 2,
    "cosine >= 0.45, BM25 leader's worker leads static": lambda r: r["cosine"] >= 0.45 and r["agree"],
    "cosine >= 0.50, BM25 leader's worker leads static": lambda r: r["cosine"] >= 0.50 and r["agree"],
}


class EmptyLanes:
    """Records, per capability text, the lexical lane the static rule saw, its static ranking,
    what the rule made of them and the single-term BM25 leader."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[Any, Any, Any, str | None]] = {}
        self._call: list[tuple[Any, Any, Any]] = []

    def install(self) -> None:
        original_rule = static_lane.fuse_static
        original_lanes = static_lane.StaticLane.fuse_lanes
        recorder = self

        def fuse_static(lexical: Any, ranking: Any) -> Any:
            lane = original_rule(lexical, ranking)
            recorder._call.append((lexical, ranking, lane))
            return lane

        async def fuse_lanes(lane_self: Any, call: Any, queries: Any, lanes: Any) -> Any:
            recorder._call = []
            out = await original_lanes(lane_self, call, queries, lanes)
            for query, (lexical, ranking, lane) in zip(queries, recorder._call):
                hits = call.corpus.documents.bm25(query.terms, 1, 1)
                recorder.seen[query.text] = (lexical, ranking, lane, hits[0][0] if hits else None)
            return out

        static_lane.fuse_static = fuse_static  # type: ignore[assignment]
        static_lane.StaticLane.fuse_lanes = fuse_lanes  # type: ignore[method-assign]


def rows_of(cases: list[dict[str, Any]], seen: dict[str, Any]) -> list[Row]:
    """One row per unanswered empty lane: label 1 / 0 / −1 (relevant in the static top 4 / a
    no-match case / neither), best cosine, its margin over the top-64 median, head share and
    whether the BM25 leader's worker is the static leader's."""
    out = []
    for case in cases:
        for index, text in enumerate(case["capabilities"]):
            entry = seen.get(text)
            if entry is None or entry[0] or entry[2]:
                continue
            _, ranking, _, leader = entry
            if not ranking:
                continue
            ids = [d for d, _ in ranking]
            cosines = [c for _, c in ranking]
            relevant = relevant_functions(case, index)
            label = 0 if case["kind"] == "no_match" else (1 if relevant & set(ids[:4]) else -1)
            workers = Counter(namespace_of(d) for d in ids[:4])
            out.append({"label": label, "cosine": cosines[0],
                        "margin": cosines[0] - statistics.median(cosines),
                        "share": workers.most_common(1)[0][1],
                        "agree": leader is not None and namespace_of(leader) == namespace_of(ids[0])})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    args = parser.parse_args()
    recorder = EmptyLanes()
    recorder.install()
    per_set: dict[str, list[Row]] = {}
    for name, catalog, cases in all_sets(args.eval_dir):
        recorder.seen.clear()
        anyio.run(bench.run_mode, "static", catalog, cases, 1, None)
        per_set[name] = rows_of(cases, recorder.seen)
    print("unanswered empty lanes, positives:",
          " ".join(f"{name}:{sum(r['label'] == 1 for r in rows)}/{len(rows)}"
                   for name, rows in per_set.items()))
    for gate, rule in GATES.items():
        counts = []
        for name, rows in per_set.items():
            taken = [r for r in rows if rule(r)]
            counts.append(f"{name}:+{sum(r['label'] == 1 for r in taken)}"
                          f"/-{sum(r['label'] == 0 for r in taken)}")
        print(f"{gate:52} {' '.join(counts)}")


if __name__ == "__main__":
    sys.exit(main())
