"""Where lexical+static loses what lexical alone finds, stage by stage (issue 19, sixth round).

    .venv/bin/python benchmarks/static_vs_lexical.py [--eval-dir ../shared/eval] [--list]

Runs `--mode lexical` and `--mode static` through the bench's own pipeline
(`iii_directory.bench.run_mode`) on eval `dev`, `extra`, `extra2` and the held-out catalog —
never `test` — and compares them relevant function by relevant function (grade ≥ 2, each
capability it covers) and no-match case by no-match case.

A relevant function lexical selects in its top 12 and static does not is *lost*, classified by
the first static stage that lost it:

* `refused`  — the static decision said no where the lexical decision said yes (the families
  differ: `static` weighs the static cosine, `lexical` the concept coverage);
* `dropped`  — the lexical lane's leader's worker is not in the static top 32, the lane emptied;
* `deep`     — in the fused lane, but the fusion ordered it below what the budget of 12 took;
* `tail`     — lexical selected it from its BM25 recall tail; static's tail is its static hits;
* `other`    — in no static lane, tail or refusal (selection across capabilities).

A function static finds and lexical does not is *gained*, by the stage that found it: `vouch`
(lexical's decision refused; static answered), `rescued` (lexical's lane was empty: the
expansion or the static head alone), `fused` (the fused lane reached it), `tail`.

A no-match case static answers and lexical does not is a *false positive added*, by cause:
`alone` (empty lexical lane, static head answered alone), `expanded` (empty lexical lane, the
static expansion found a lane), `decision` (both had a lane; static's family said yes, lexical's
no), `vouch` (static's decision said no, `answerability.vouches` yes), and the reverse
(`removed`).

`--list` prints each lost / gained function and added false positive with its capability.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from iii_directory import bench  # noqa: E402
from iii_directory.search import answerability  # noqa: E402
from iii_directory.search.static_lane import StaticLane  # noqa: E402

from static_failures import sets, sets_parser  # noqa: E402


class Seen:
    """Per capability text, in one mode: the lane the decision saw, the decision, whether
    the static vouch made it, and (static) the lexical lane, fused lane and tail."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Any]] = {}

    def install(self) -> None:
        original = StaticLane.fuse_lanes
        seen = self

        async def fuse_lanes(lane_self: StaticLane, call: Any, queries: Any, lanes: Any) -> Any:
            fused, tails = await original(lane_self, call, queries, lanes)
            for position, query in enumerate(queries):
                seen.entries.setdefault(query.text, {}).update(
                    lexical=[d for d, _ in lanes[position][0]],
                    fused=[d for d, _ in fused[position]],
                    tail=[d for d, _ in tails[position]] if tails else [])
            return fused, tails

        StaticLane.fuse_lanes = fuse_lanes  # type: ignore[method-assign]

        def observer(text: str, found: Any, lane: Any, decision: bool) -> None:
            entry = seen.entries.setdefault(text, {})
            entry["decision"] = decision
            entry["answerable"] = answerability.answerable(found)
            entry["decided"] = [d for d, _ in lane]

        answerability.observe(observer)


def run(mode: str, catalog: list[dict[str, Any]], cases: list[dict[str, Any]],
        seen: Seen) -> dict[str, list[str]]:
    seen.entries.clear()
    result, _, _ = anyio.run(bench.run_mode, mode, catalog, cases, 1, None)
    return {case_id: bench.top_ids(ids) for case_id, ids in result.items()}


def lost_stage(static: dict[str, Any], lexical: dict[str, Any], function_id: str) -> str:
    if static.get("decision") is False and lexical.get("decision") is True:
        return "refused"
    if static.get("lexical") and not static.get("fused"):
        return "dropped"
    if function_id in static.get("fused", []) and static.get("decision"):
        return "deep"
    if function_id not in lexical.get("decided", []):
        return "tail"
    return "other"


def gained_stage(static: dict[str, Any], lexical: dict[str, Any], function_id: str) -> str:
    if static.get("decision") and not static.get("answerable"):
        return "vouch"
    if not static.get("lexical"):
        return "rescued"
    if function_id in static.get("fused", []):
        return "fused"
    return "tail"


def fp_cause(static: dict[str, Any], lexical: dict[str, Any]) -> str:
    if static.get("decision") and not static.get("answerable"):
        return "vouch"
    if not lexical.get("decided") and not static.get("lexical"):
        return "alone"
    if not lexical.get("decided"):
        return "expanded"
    return "decision"


def main() -> None:
    parser = sets_parser(__doc__)
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    seen = Seen()
    seen.install()
    for name, catalog, cases in sets(args.eval_dir):
        lexical_top = run("lexical", catalog, cases, seen)
        lexical_seen = dict(seen.entries)
        static_top = run("static", catalog, cases, seen)
        static_seen = dict(seen.entries)
        lost: Counter[str] = Counter()
        gained: Counter[str] = Counter()
        fp: Counter[str] = Counter()
        for case in cases:
            lex, sta = lexical_top.get(case["id"], []), static_top.get(case["id"], [])
            if case["kind"] == "no_match":
                texts = case["capabilities"]
                if sta and not lex:
                    causes = [fp_cause(static_seen.get(t, {}), lexical_seen.get(t, {}))
                              for t in texts if static_seen.get(t, {}).get("decision")]
                    fp.update(f"added:{c}" for c in causes)
                    if args.list:
                        print(f"{name:8} fp+ {','.join(causes):10} | {' / '.join(texts)[:90]}")
                elif lex and not sta:
                    fp["removed"] += 1
                continue
            for qrel in case["qrels"]:
                function_id = qrel["function_id"]
                if qrel["grade"] < 2 or (function_id in lex) == (function_id in sta):
                    continue
                covers = qrel.get("covers") or range(len(case["capabilities"]))
                for index in covers:
                    text = case["capabilities"][index]
                    s, x = static_seen.get(text, {}), lexical_seen.get(text, {})
                    if function_id in lex:
                        kind = "lost:" + lost_stage(s, x, function_id)
                        lost[kind] += 1
                    else:
                        kind = "gained:" + gained_stage(s, x, function_id)
                        gained[kind] += 1
                    if args.list:
                        print(f"{name:8} {kind:14} {function_id:36} | {text[:70]}")
        print(name, dict(sorted(lost.items())), dict(sorted(gained.items())),
              dict(sorted(fp.items())))


if __name__ == "__main__":
    sys.exit(main())
