"""Where the weak evidence floor of the graded decision goes (issue 31,
`search/ranking/confidence.py`).

    .venv/bin/python benchmarks/confidence_floor.py record [--eval-dir ../shared/eval] \
        [--mode hybrid --mode lexical --mode static] [--set NAME ...] --out signals.json
    .venv/bin/python benchmarks/confidence_floor.py floors signals.json
    .venv/bin/python benchmarks/confidence_floor.py boundaries signals.json

`record` runs every case of the tuning sets (`case_sets.tuning_sets`: dev, extra, extra2,
heldout; `--set` may add `realworld` once it is on main, report-only) through the search handler
in each mode, as the bench does, with an answerability observer, and records per capability the
decision's `Signals`, its lane and whether the lane holds a relevant function (grade ≥ 2). It
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
    """Per capability text: its `Signals` (as a dict), its lane's ids and the old yes/no."""
    import anyio

    from iii_directory.bench import run_mode
    from iii_directory.search.ranking import answerability

    seen: dict[str, dict[str, Any]] = {}

    def observer(text: str, found: Any, lane: Any, decision: bool) -> None:
        seen[text] = {"signals": dataclasses.asdict(found),
                      "lane": [doc_id for doc_id, _ in lane], "high": decision}

    cases = [{"id": str(i), "split": "x", "kind": "match", "capabilities": caps, "qrels": []}
             for i, caps in enumerate(capabilities)]
    previous = answerability.observe(observer)
    try:
        anyio.run(run_mode, mode, catalog, cases, 1, None)
    finally:
        answerability.observe(previous)
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
    for delta in (0.5, 0.6, 0.75, 0.9, 1.0, 1.5):
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
                    if not row["high"]:  # the decision's yes, before any boundary
                        continue
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
    args = parser.parse_args(argv)
    args.func(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
