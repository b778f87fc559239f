"""Where a several-needs request loses a need (issue 31): selection or ranking.

    .venv/bin/python benchmarks/needs_lanes.py --catalog CATALOG --cases CASES \
        [--mode hybrid --mode lexical --mode static] [--cases-out]

Runs every case with `needs` through the search handler as the bench does, keeps the lanes and
tails each batch hands to `select.select_batch`, and counts per need (aggregates only, so a
report-only set can be read without looking at its cases): met in the answer's first 12; the
best rank any of its functions reaches in the whole capability's lane, in the needs' own lanes
and in the tails; and the needs the answer misses, by the best rank a lane gives them (in a
lane's first three: a slot-sharing loss; absent from every lane: a selection loss) and by
whether another function of their service is in the answer (a ranking loss inside the service).
`--cases-out` also prints each case's split and lost needs (for our own sets only).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

TOP = 12


def best_rank(ids: set[str], lanes: Sequence[Sequence[str]]) -> int | None:
    """The best 1-based rank any of `ids` reaches in `lanes` (None when absent)."""
    ranks = [lane.index(i) + 1 for lane in lanes for i in ids if i in lane]
    return min(ranks) if ranks else None


def bucket(rank: int | None) -> str:
    """A rank as one of `1`, `2-3`, `4-12`, `>12`, `absent`."""
    if rank is None:
        return "absent"
    return "1" if rank == 1 else "2-3" if rank <= 3 else "4-12" if rank <= TOP else ">12"


def diagnose(mode: str, catalog: list[dict[str, Any]], cases: Sequence[Mapping[str, Any]],
             show: bool) -> dict[str, Any]:
    import anyio

    from iii_directory.bench import response_ids, run_mode
    from iii_directory.search import service

    captured: list[tuple[list[list[str]], list[list[str]]]] = []
    original = service.select_batch

    def spy(lanes: Any, **kwargs: Any) -> list[str]:
        captured.append(([[d for d, _ in lane] for lane in lanes],
                         [[d for d, _ in tail] for tail in kwargs.get("tails", ())]))
        return original(lanes, **kwargs)

    counts: dict[str, Counter[str]] = {k: Counter() for k in ("whole", "needs", "tails", "any")}
    lost: Counter[str] = Counter()
    lanes_per_case: list[int] = []
    met_cases = 0
    service.select_batch = spy
    try:
        for case in cases:
            captured.clear()
            run, _, _ = anyio.run(run_mode, mode, catalog, [case], 1, None)
            answer = set(run[case["id"]][:TOP])
            lanes, tails = captured[-1] if captured else ([], [])
            lanes_per_case.append(len(lanes))
            all_met = True
            for need in case["needs"]:
                ids = set(need)
                ranks = {"whole": best_rank(ids, lanes[:1]), "needs": best_rank(ids, lanes[1:]),
                         "tails": best_rank(ids, tails), "any": best_rank(ids, lanes)}
                for key, rank in ranks.items():
                    counts[key][bucket(rank)] += 1
                met = bool(ids & answer)
                all_met &= met
                if not met:
                    kind = bucket(ranks["any"])
                    lost[kind] += 1
                    served = {i.split("::")[0] for i in answer}
                    lost["its service in the answer" if any(i.split("::")[0] in served
                                                            for i in ids)
                         else "its service not in the answer"] += 1
                    if show:
                        print(f"  lost {case['id']} {sorted(ids)} any-lane rank {kind}; "
                              f"{len(lanes)} lanes")
            met_cases += all_met
    finally:
        service.select_batch = original
    return {"cases": len(cases), "all_needs_met": met_cases / max(1, len(cases)),
            "needs": sum(len(c["needs"]) for c in cases),
            "lanes": Counter(lanes_per_case), "rank_of_need": {k: dict(v) for k, v in counts.items()},
            "lost_by_best_lane_rank": dict(lost)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--catalog", required=True)
    parser.add_argument("--cases", required=True)
    parser.add_argument("--mode", action="append", choices=("hybrid", "lexical", "static"))
    parser.add_argument("--cases-out", action="store_true")
    args = parser.parse_args(argv)
    catalog = json.loads(Path(args.catalog).read_text(encoding="utf-8"))
    document = json.loads(Path(args.cases).read_text(encoding="utf-8"))
    cases = [c for c in document["cases"] if c.get("needs")]
    for mode in args.mode or ["hybrid"]:
        print(mode, json.dumps(diagnose(mode, catalog, cases, args.cases_out), default=dict))
    return 0


if __name__ == "__main__":
    sys.exit(main())
