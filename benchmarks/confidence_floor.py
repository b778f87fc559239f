"""Where the weak evidence floor of the graded decision goes (issue 31,
`search/ranking/confidence.py`).

    .venv/bin/python benchmarks/confidence_floor.py record [--eval-dir ../shared/eval] \
        [--mode hybrid --mode lexical --mode static] [--set NAME ...] --out signals.json
    .venv/bin/python benchmarks/confidence_floor.py floors signals.json
    .venv/bin/python benchmarks/confidence_floor.py boundaries signals.json

`record` runs every case of the tuning sets (`case_sets.tuning_sets`: dev, extra, extra2,
heldout; `--set` may add `realworld` once it is on main, report-only) through the search handler
in each mode, as the bench does, with an answerability observer, and records per capability the
decision's `Signals`, its lane, whether the lane holds a relevant function (grade ≥ 2) and
whether it was a fallback lane (graded `low` at best, so `boundaries` skips it as the pipeline
does). It
also records 1,000 random-letter strings and 1,000 unrelated sentences (the generators of
tests/unit/search/unrelated_requests.py, same seeds) over the example and eval catalogs.

It records too the seeded near misses over the eval catalog (`fit_answerability_nearmiss.REQUESTS`,
each as written, after "can you " and after "I need to "): tool-like requests for services that
catalog lacks, no-match requests of our own for the `high` boundary.

`floors` re-grades every recorded capability under each candidate floor and prints, per mode:
answerable capabilities (a relevant function in the lane) that get nothing, and unrelated
requests that get anything. `boundaries` re-grades the recorded `high` answers under each
candidate `high` boundary (`confidence.confident` and its neighbours) and prints, per mode and
set, the no-match cases that keep a `high` answer and the `high` answers to capabilities with a
relevant function in their lane that become `low`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "search"))

from case_sets import relevant_functions, tuning_sets  # noqa: E402

UNRELATED = 1000


def _nearmiss() -> list[str]:
    from fit_answerability_nearmiss import REQUESTS

    return [prefix + text for text in REQUESTS for prefix in ("", "can you ", "I need to ")]


NEARMISS = _nearmiss()


def observed_run(mode: str, catalog: list[dict[str, Any]],
                 capabilities: list[list[str]]) -> dict[str, dict[str, Any]]:
    """Per capability text: its `Signals` (as a dict), its lane's ids, the old yes/no, and
    whether its lane was a fallback lane (`confidence.fallback_lanes`,
    `static_fallback_lanes`: graded `low` at best, whatever the decision says)."""
    import anyio

    from iii_directory.bench import run_mode
    from iii_directory.search import service
    from iii_directory.search.ranking import answerability

    seen: dict[str, dict[str, Any]] = {}
    fallback: set[str] = set()
    batch: list[str] = []

    def observer(text: str, found: Any, lane: Any, decision: bool) -> None:
        seen[text] = {"signals": dataclasses.asdict(found),
                      "lane": [doc_id for doc_id, _ in lane], "high": decision}

    lexical_fallback, static_fallback = service.fallback_lanes, service.static_fallback_lanes

    def fallback_lanes(documents: Any, queries: Any, lanes: Any, exact: Any) -> Any:
        out, marked = lexical_fallback(documents, queries, lanes, exact)
        batch[:] = [query.text for query in queries]
        fallback.update(text for text, filled in zip(batch, marked) if filled)
        return out, marked

    def static_fallback_lanes(lanes: Any, marks: Any, empty: Any, rankings: Any) -> Any:
        out, marked = static_fallback(lanes, marks, empty, rankings)
        fallback.update(text for text, filled in zip(batch, marked) if filled)
        return out, marked

    cases = [{"id": str(i), "split": "x", "kind": "match", "capabilities": caps, "qrels": []}
             for i, caps in enumerate(capabilities)]
    previous = answerability.observe(observer)
    service.fallback_lanes, service.static_fallback_lanes = fallback_lanes, static_fallback_lanes
    try:
        anyio.run(run_mode, mode, catalog, cases, 1, None)
    finally:
        answerability.observe(previous)
        service.fallback_lanes, service.static_fallback_lanes = lexical_fallback, static_fallback
    for text, row in seen.items():
        row["fallback"] = text in fallback
    return seen


def unrelated_calls() -> dict[str, list[list[str]]]:
    """The property test's requests, six to a call."""
    from unrelated_requests import random_letters, unrelated_sentence

    out = {}
    for kind, generate in (("letters", random_letters), ("sentences", unrelated_sentence)):
        rng = random.Random(f"issue-18-{kind}")
        texts = [generate(rng) for _ in range(UNRELATED)]
        out[kind] = [texts[i:i + 6] for i in range(0, UNRELATED, 6)]
    return out


def record(args: argparse.Namespace) -> None:
    eval_dir = Path(args.eval_dir)
    sets = tuning_sets(eval_dir)
    realworld = ROOT / "benchmarks" / "data" / "realworld_catalog.json"
    if realworld.is_file():
        for name in ("realworld_cases", "realworld_multineed_cases"):
            path = realworld.with_name(f"{name}.json")
            if path.is_file():
                document = json.loads(path.read_text())
                sets[name] = (realworld, document["cases"] if isinstance(document, dict)
                              else document)
    chosen = args.set or sorted(sets)
    example = json.loads((resources.files("iii_directory") / "data" / "example_catalog.json")
                         .read_text("utf-8"))
    eval_catalog = json.loads((eval_dir / "catalog.json").read_text())
    rows: list[dict[str, Any]] = []
    for mode in args.mode or ["hybrid", "lexical", "static"]:
        for name in chosen:
            catalog_path, cases = sets[name]
            catalog = json.loads(Path(catalog_path).read_text())
            seen = observed_run(mode, catalog, [list(c["capabilities"]) for c in cases])
            for case in cases:
                for index, text in enumerate(case["capabilities"]):
                    relevant = relevant_functions(case, index) if case["kind"] != "no_match" else set()
                    found = seen.get(text)
                    rows.append({"mode": mode, "set": name, "case": case["id"],
                                 "kind": case["kind"], "text": text,
                                 "relevant_in_lane": bool(found and relevant & set(found["lane"])),
                                 "answerable": bool(relevant), **(found or {})})
        for catalog_name, catalog in (("example", example), ("eval", eval_catalog)):
            for kind, calls in unrelated_calls().items():
                seen = observed_run(mode, catalog, calls)
                for call in calls:
                    for text in call:
                        rows.append({"mode": mode, "set": f"unrelated-{kind}-{catalog_name}",
                                     "case": text, "kind": "unrelated", "text": text,
                                     "relevant_in_lane": False, "answerable": False,
                                     **(seen.get(text) or {})})
        seen = observed_run(mode, eval_catalog, [[text] for text in NEARMISS])
        rows.extend({"mode": mode, "set": "nearmiss", "case": text, "kind": "no_match",
                     "text": text, "relevant_in_lane": False, "answerable": False,
                     **(seen.get(text) or {})} for text in NEARMISS)
        print(f"recorded {mode}", file=sys.stderr)
    Path(args.out).write_text(json.dumps(rows) + "\n")


def candidate_floors() -> dict[str, Callable[[Any], bool]]:
    """The floors compared: today's evidence floor, the shipped weak floor, and looser ones."""
    from iii_directory.search.ranking import answerability as a
    from iii_directory.search.ranking import confidence as c

    return {
        "evidence_floor": a.evidence_floor,
        "shipped weak_floor": c.weak_floor,
        "evidence_floor or admitted with an action": lambda f: a.evidence_floor(f) or (
            bool(f.admitted) and f.action is not None),
        "evidence_floor and supported": lambda f: a.evidence_floor(f) and a.supported(f),
        "any content term": lambda f: f.rare_matched > 0,
        "cosine ≥ .30 or id term": lambda f: (f.cosine or 0) >= 0.30 or f.rare_matched >= 1,
        "or concept coverage ≥ .45 with an action": lambda f: c.weak_floor(f) or (
            f.action is not None and (f.concepts or 0.0) >= 0.45),
    }


def floors(args: argparse.Namespace) -> None:
    from iii_directory.search.ranking.answerability import Signals, answerable

    rows = json.loads(Path(args.path).read_text())
    for mode in sorted({r["mode"] for r in rows}):
        print(f"\n== {mode}")
        for name, floor in candidate_floors().items():
            lost = leaked = answerable_rows = 0
            leaks: list[str] = []
            for row in rows:
                if row["mode"] != mode or "signals" not in row:
                    continue
                found = Signals(**row["signals"])
                graded = not found.refused and (row["high"] or answerable(found) or floor(found))
                if row["relevant_in_lane"]:
                    answerable_rows += 1
                    lost += not graded
                if row["kind"] == "unrelated" and graded:
                    leaked += 1
                    leaks.append(row["text"])
            print(f"  {name:<32} answerable-in-lane lost {lost}/{answerable_rows}   "
                  f"unrelated answered {leaked}")
            for text in leaks[:args.show]:
                print(f"      leak: {text}")


def curve_points(mode: str) -> dict[str, Callable[[Any, str], bool]]:
    """The operating points of the weak floor's trade-off curve for `mode`, strictest first,
    each the one before or one more clause (so each admits a superset and the curve is
    monotone): the hand-set evidence floor, round three's floor, the shipped `weak_floor`, then
    looser floors, down to no floor at all (every capability with a lane is answered). Each
    floor is called with the capability's `Signals` and its text."""
    from iii_directory.search.ranking import answerability as a
    from iii_directory.search.ranking import confidence as c

    def round_three(f: Any, text: str) -> bool:
        """The weak floor before values: an admitted dense ranking with an action or a
        question (hybrid), a concept coverage with an action (lexical and static)."""
        if f.admitted:
            return f.action is not None or c.asks_question(text)
        return (f.cosine is None and f.action is not None and f.concepts is not None
                and f.concepts >= c.CONCEPT_FLOOR)

    def shipped(f: Any, text: str) -> bool:
        return c.weak_floor(f, c.asks_question(text), c.carries_value(text))

    if mode == "hybrid":
        clauses: list[tuple[str, Callable[[Any, str], bool]]] = [
            ("evidence floor", lambda f, t: a.evidence_floor(f)),
            ("or admitted with an action", lambda f, t: bool(f.admitted) and f.action is not None),
            ("round three: or admitted with a question", round_three),
            ("shipped: or a value with a content term, admission or a margin >= .17 "
             "(a question too)", shipped),
            ("or a value with a best cosine >= .20",
             lambda f, t: c.carries_value(t) and (f.cosine or 0) >= 0.20),
            ("or admitted, whatever the wording", lambda f, t: bool(f.admitted)),
            ("or corroborated", lambda f, t: bool(f.corroborated)),
            ("or best cosine >= .30 or an id-named term",
             lambda f, t: (f.cosine or 0) >= 0.30 or f.rare_matched >= 1),
            ("or any content term", lambda f, t: f.rare_matched > 0),
            ("no floor (every lane)", lambda f, t: True),
        ]
    else:
        clauses = [
            ("evidence floor", lambda f, t: a.evidence_floor(f)),
            ("round three: or concepts >= .55 with an action", round_three),
            ("shipped: or a value with a content term (static: or a static cosine >= .45)", shipped),
            ("or concepts >= .45 with an action",
             lambda f, t: f.action is not None and (f.concepts or 0.0) >= 0.45),
            ("or any content term with an action",
             lambda f, t: f.action is not None and f.rare_matched > 0),
            ("or log-odds >= -1", lambda f, t: a.score(f) >= -1.0),
            ("or any content term", lambda f, t: f.rare_matched > 0),
            ("no floor (every lane)", lambda f, t: True),
        ]
    points: dict[str, Callable[[Any, str], bool]] = {}
    taken: list[Callable[[Any, str], bool]] = []
    for name, clause in clauses:
        taken.append(clause)
        points[name] = (lambda held: lambda f, t: any(one(f, t) for one in held))(list(taken))
    return points


UNRELATED_SETS = ("unrelated-letters-example", "unrelated-sentences-example",
                  "unrelated-letters-eval", "unrelated-sentences-eval")


def curve(args: argparse.Namespace) -> None:
    """Per mode and operating point (`curve_points`): answerable cases answered with nothing
    per set (a case is answered when one of its capabilities is graded; a capability with no
    lane was never graded), answerable capabilities of our own sets with a relevant function in
    the lane that get nothing, the property test's unrelated requests answered (of 4,000: 2,000 per catalog),
    and no-match cases answered at all. Sets named `realworld*` are printed in aggregate only."""
    from iii_directory.search.ranking.answerability import Signals, answerable

    rows = json.loads(Path(args.path).read_text())
    for mode in sorted({r["mode"] for r in rows}):
        mine = [r for r in rows if r["mode"] == mode]
        sets = [s for s in dict.fromkeys(r["set"] for r in mine)
                if not s.startswith("unrelated") and s != "nearmiss"]
        print(f"\n== {mode}: answerable answered nothing (cases) per set | relevant-in-lane "
              "capabilities lost | unrelated answered (example+eval) | no-match answered")
        for name, floor in curve_points(mode).items():
            graded: dict[tuple[str, str], bool] = {}
            lost = 0
            leaks = {s: 0 for s in UNRELATED_SETS}
            for row in mine:
                key = (row["set"], row["case"])
                yes = False
                if "signals" in row:
                    found = Signals(**row["signals"])
                    yes = not found.refused and (row["high"] or answerable(found)
                                                 or floor(found, row["text"]))
                graded[key] = graded.get(key, False) or yes
                if row["relevant_in_lane"] and not yes and not row["set"].startswith("realworld"):
                    lost += 1
                if row["kind"] == "unrelated" and yes:
                    leaks[row["set"]] += 1
            cells = []
            nomatch = [0, 0]
            for set_name in sets:
                kinds = {(r["set"], r["case"]): r["kind"] for r in mine if r["set"] == set_name}
                ans = [k for k, kind in kinds.items() if kind in ("match", "multi")]
                empty = sum(1 for k in ans if not graded[k])
                cells.append(f"{set_name[:9]} {empty}/{len(ans)}={empty / max(1, len(ans)):.3f}")
                if not set_name.startswith("realworld"):
                    no = [k for k, kind in kinds.items() if kind == "no_match"]
                    nomatch[0] += sum(1 for k in no if graded[k])
                    nomatch[1] += len(no)
            rw_no_cases = {(r["set"], r["case"]) for r in mine
                           if r["set"].startswith("realworld") and r["kind"] == "no_match"}
            rw_no = sum(1 for k in rw_no_cases if graded[k])
            print(f"  {name}")
            print(f"      empty: " + "  ".join(cells))
            print(f"      lost {lost}  unrelated {sum(leaks.values())} "
                  f"({' '.join(str(v) for v in leaks.values())})  no-match answered own "
                  f"{nomatch[0]}/{nomatch[1]}  realworld {rw_no}/{len(rw_no_cases)}")


def candidate_boundaries() -> dict[str, Callable[[Any], bool]]:
    """The `high` boundaries compared, each applied on top of the recorded `high`: the shipped
    one, and the hybrid margin and the score margin at other values."""
    from iii_directory.search.ranking import answerability as a
    from iii_directory.search.ranking import confidence as c

    def above(delta: float) -> Callable[[Any], bool]:
        return lambda f: f.cosine is not None or (
            a.score(f) >= a.CALIBRATION[a.family(f)][2] + delta)

    def margin(value: float) -> Callable[[Any], bool]:
        return lambda f: f.cosine is None or (f.margin or 0.0) >= value

    out: dict[str, Callable[[Any], bool]] = {"shipped confident": c.confident}
    for value in (0.12, 0.15, 0.16, 0.17, 0.18, 0.20):
        out[f"hybrid margin >= {value}"] = margin(value)
    for delta in (0.5, 0.6, 0.75, 0.9, 0.95, 1.0, 1.05, 1.1, 1.2, 1.3, 1.5):
        out[f"score >= threshold + {delta}"] = above(delta)
    return out


def boundaries(args: argparse.Namespace) -> None:
    from iii_directory.search.ranking.answerability import Signals

    rows = [r for r in json.loads(Path(args.path).read_text())
            if "signals" in r and r["kind"] != "unrelated"]
    sets = sorted({r["set"] for r in rows})
    for mode in sorted({r["mode"] for r in rows}):
        print(f"\n== {mode}: no-match cases with a high answer / high answers to answerable "
              "capabilities made low")
        print(f"  {'boundary':<28}" + "".join(f"{name[:14]:>16}" for name in sets))
        for name, boundary in {"the yes (no boundary)": lambda f: True,
                               **candidate_boundaries()}.items():
            cells = []
            for set_name in sets:
                high_cases: set[str] = set()
                lowered = 0
                for row in rows:
                    if row["mode"] != mode or row["set"] != set_name:
                        continue
                    found = Signals(**row["signals"])
                    if not row["high"] or row.get("fallback"):  # the decision's yes, before
                        continue  # any boundary; a fallback lane is `low` whatever it says
                    keeps = boundary(found)
                    if row["kind"] == "no_match" and keeps:
                        high_cases.add(row["case"])
                    elif row["relevant_in_lane"] and not keeps:
                        lowered += 1
                cells.append(f"{len(high_cases)} / -{lowered}")
            print(f"  {name:<28}" + "".join(f"{cell:>16}" for cell in cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(required=True)
    rec = sub.add_parser("record")
    rec.add_argument("--eval-dir", default=str(ROOT.parent / "shared" / "eval"))
    rec.add_argument("--mode", action="append", choices=("hybrid", "lexical", "static"))
    rec.add_argument("--set", action="append")
    rec.add_argument("--out", required=True)
    rec.set_defaults(func=record)
    flo = sub.add_parser("floors")
    flo.add_argument("path")
    flo.add_argument("--show", type=int, default=3)
    flo.set_defaults(func=floors)
    bound = sub.add_parser("boundaries")
    bound.add_argument("path")
    bound.set_defaults(func=boundaries)
    cur = sub.add_parser("curve")
    cur.add_argument("path")
    cur.set_defaults(func=curve)
    args = parser.parse_args(argv)
    args.func(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
