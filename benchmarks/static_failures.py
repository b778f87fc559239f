"""Where the static lane's recall goes (issue 19): for every relevant function a `--mode static`
search misses in its top 12, the function's rank in the static ranking, in the lexical lane,
in plain single-term BM25 and in the fused lane, and whether the answerability decision
refused the capability.

    .venv/bin/python benchmarks/static_failures.py [--eval-dir ../shared/eval] [--summary]

Runs the bench's own pipeline (`iii_directory.bench.run_mode`, static mode) over eval `dev`,
`benchmarks/data/extra_cases.json`, `extra2_cases.json` and the held-out catalog; never
`test`. Each miss is classified by where it was lost:

* `refused`   — the decision emptied the capability's lane;
* `no-lane:cosine` — the lane was empty before the decision (no lexical lane, even expanded)
  and the static head may not answer alone because its best cosine is below
  `static_lane.ALONE_COSINE`;
* `no-lane:head` — the same, the cosine reached, but no worker holds two of the first four;
* `dropped`   — a lexical lane existed but the fused lane was empty (not corroborated);
* `deep`      — in the fused lane but below the 12 selected;
* `tail`      — only in the answered lane's static recall tail, and not selected;
* `static-only` — not in the fused lane, but in the static top 64;
* `lexical-only` — only in single-term BM25 (top 100);
* `absent`    — in no ranking at all.

`--summary` prints the counts per set and class only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import anyio

from iii_directory import bench
from iii_directory.search import answerability
from iii_directory.search.static_lane import ALONE_COSINE, StaticLane

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"


def sets(eval_dir: Path) -> list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    """(name, catalog, cases) for dev, extra, extra2 and the held-out catalog."""
    catalog = json.loads((eval_dir / "catalog.json").read_text())
    cases = json.loads((eval_dir / "cases.json").read_text())
    cases = cases["cases"] if isinstance(cases, dict) else cases
    out = [("dev", catalog, [c for c in cases if c["split"] == "dev"])]
    for name in ("extra", "extra2"):
        document = json.loads((DATA / f"{name}_cases.json").read_text())
        out.append((name, catalog, document["cases"] if isinstance(document, dict) else document))
    held = json.loads((DATA / "heldout_cases.json").read_text())
    out.append(("heldout", json.loads((DATA / "heldout_catalog.json").read_text()),
                held["cases"] if isinstance(held, dict) else held))
    return out


class Recorder:
    """What the pipeline saw per capability text: lexical lane, static ranking, fused lane,
    single-term BM25, and the decision."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, Any]] = {}

    def install(self) -> None:
        original = StaticLane.fuse_lanes
        recorder = self

        async def fuse_lanes(lane_self: StaticLane, call: Any, queries: Any, lanes: Any) -> Any:
            fused, tails = await original(lane_self, call, queries, lanes)
            rankings = await lane_self.rankings(call.corpus, [q.dense_text for q in queries],
                                                call.settings.function_search_mode)
            documents = call.corpus.documents
            for position, query in enumerate(queries):
                single = [d for d, _, _ in documents.bm25(query.terms, 1, 100)]
                recorder.seen.setdefault(query.text, {}).update(
                    lexical=[d for d, _ in lanes[position][0]],
                    static=[d for d, _ in (rankings[position] if rankings else [])],
                    static_cosine=rankings[position][0][1] if rankings and rankings[position] else None,
                    fused=[d for d, _ in fused[position]], single=single,
                    tail=[d for d, _ in tails[position]] if tails else [])
            return fused, tails

        StaticLane.fuse_lanes = fuse_lanes  # type: ignore[method-assign]

        def observer(text: str, found: Any, lane: Any, decision: bool) -> None:
            entry = recorder.seen.setdefault(text, {})
            entry["decision"] = decision
            entry["score"] = answerability.score(found)
            entry["floor"] = answerability.evidence_floor(found)
            entry["signals"] = found

        answerability.observe(observer)


def rank(ids: list[str], function_id: str) -> int | None:
    return ids.index(function_id) + 1 if function_id in ids else None


def classify(entry: dict[str, Any], function_id: str) -> str:
    if entry.get("decision") is False:
        return "refused"
    if not entry.get("fused"):
        if entry.get("lexical"):
            return "dropped"
        cosine = entry.get("static_cosine")
        return "no-lane:cosine" if cosine is None or cosine < ALONE_COSINE else "no-lane:head"
    if function_id in entry["fused"]:
        return "deep"
    if function_id in entry.get("tail", []):
        return "tail"
    if function_id in entry.get("static", []):
        return "static-only"
    if function_id in entry.get("single", []):
        return "lexical-only"
    return "absent"


def sets_parser(doc: str) -> argparse.ArgumentParser:
    """The command line of a script that runs over `sets`: its doc's first paragraph and
    `--eval-dir`."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    return parser


def main() -> None:
    parser = sets_parser(__doc__)
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    recorder = Recorder()
    recorder.install()
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for name, catalog, cases in sets(args.eval_dir):
        recorder.seen.clear()
        run, _, _ = anyio.run(bench.run_mode, "static", catalog, cases, 1, None)
        for case in cases:
            if case["kind"] == "no_match":
                continue
            top = bench.top_ids(run.get(case["id"], []))
            for qrel in case["qrels"]:
                if qrel["grade"] < 2 or qrel["function_id"] in top:
                    continue
                function_id = qrel["function_id"]
                covers = qrel.get("covers") or range(len(case["capabilities"]))
                for index in covers:
                    text = case["capabilities"][index]
                    entry = recorder.seen.get(text, {})
                    kind = classify(entry, function_id)
                    totals[name][kind] += 1
                    if args.summary:
                        continue
                    found = entry.get("signals")
                    print(f"{name:8} {kind:13} {function_id:40} static={rank(entry.get('static', []), function_id)} "
                          f"lex={rank(entry.get('lexical', []), function_id)} "
                          f"bm25={rank(entry.get('single', []), function_id)} "
                          f"fused={rank(entry.get('fused', []), function_id)} "
                          f"decision={entry.get('decision')} floor={entry.get('floor')} "
                          f"score={entry.get('score', float('nan')):.2f} "
                          f"content={getattr(found, 'rare_matched', None)} "
                          f"action={getattr(found, 'action', None)} "
                          f"cos={getattr(found, 'extra', None)} | {text[:70]}")
    for name, counts in totals.items():
        print(name, dict(sorted(counts.items())), "total", sum(counts.values()))


if __name__ == "__main__":
    sys.exit(main())
