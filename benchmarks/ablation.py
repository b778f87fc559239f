"""What each rule, word list and fitted table of the decision and the fusion contributes (issue 31,
item 3): every ablation re-runs the bench's pipeline (`iii_directory.bench.run_mode`) with one part
turned off, on the real-world catalog and on the held-out catalog.

    .venv/bin/python benchmarks/ablation.py [--mode hybrid] [--set realworld --set heldout] \
        [--only NAME ...] [--json out.json]

Figures per set and mode: R@12 and MRR@1 of all results, answerable requests answered with
nothing, no-tool requests given a `high` answer and any answer, and R@12 / MRR@1 of the `high`
results only. Report only on the real-world set: nothing here is fitted, each ablation is a
switch, not a search over values.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
SETS = {
    "realworld": (DATA / "realworld_catalog.json", DATA / "realworld_cases.json"),
    "heldout": (DATA / "heldout_catalog.json", DATA / "heldout_cases.json"),
}


@contextmanager
def patched(target: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, saved)


def ablations() -> dict[str, Callable[[], Any]]:
    """name → a context manager that turns one part off."""
    from iii_directory.search.ranking import answerability as a
    from iii_directory.search.ranking import confidence as c
    from iii_directory.search.ranking import fusion
    from iii_directory.search import service

    @contextmanager
    def no_ordinary_words() -> Iterator[None]:
        a.ordinary_terms.cache_clear()
        a.concept_words.cache_clear()
        with patched(a, "ORDINARY_RANK", 0):
            yield
        a.ordinary_terms.cache_clear()
        a.concept_words.cache_clear()

    floor_only = lambda found: (not found.refused and a.supported(found)  # noqa: E731
                                and a.evidence_floor(found))
    return {
        "none": lambda: patched(a, "MIN_KNOWN_SHARE", a.MIN_KNOWN_SHARE),
        # the decision
        "calibrated score (6 fitted tables)": lambda: patched(c, "answerable", floor_only),
        "lane gates (supported)": lambda: patched(a, "supported", lambda found: True),
        "evidence floor in the yes": lambda: patched(
            a, "evidence_floor", lambda found: True),
        "ordinary-word list (ORDINARY_RANK)": no_ordinary_words,
        "action nouns list": lambda: patched(a, "VERBS", frozenset(a.ACTIONS)),
        "description weight 0.5 (→ 1)": lambda: patched(a, "DESCRIPTION_WEIGHT", 1.0),
        "static vouch": lambda: patched(c, "vouches", lambda query, found: False),
        # the fusion
        "learned fusion weights (→ weighted RRF)": lambda: patched(
            fusion, "score", lambda row, weights=None: row[fusion.FEATURES.index("rrf")]
            if "rrf" in fusion.FEATURES else 0.0),
        "action agreement re-sort": lambda: patched(
            service, "action_agreement", lambda lane, actions, describe: lane),
    }


def run(mode: str, name: str, make: Callable[[], Any], sets: list[str]) -> dict[str, Any]:
    from iii_directory.bench import run_mode, score_cases

    out: dict[str, Any] = {}
    for set_name in sets:
        catalog_path, cases_path = SETS[set_name]
        catalog = json.loads(catalog_path.read_text())
        document = json.loads(cases_path.read_text())
        cases = document["cases"] if isinstance(document, dict) else document
        high: dict[str, list[str]] = {}
        with make():
            every, _, _ = anyio.run(run_mode, mode, catalog, cases, 1, None, high)
        m, h = score_cases(cases, every, set()), score_cases(cases, high, set())
        out[set_name] = {"r12": m["recall_at_12"], "mrr1": m["mrr_at_1"],
                         "empty": m["answered_nothing_rate"], "fp_high": h["false_positive_rate"],
                         "fp_all": m["false_positive_rate"], "r12_high": h["recall_at_12"],
                         "mrr1_high": h["mrr_at_1"]}
        row = out[set_name]
        print(f"{mode:8} {set_name:10} {name:42} R@12 {row['r12']:.3f} MRR@1 {row['mrr1']:.3f} "
              f"empty {row['empty']:.3f} no-tool high {row['fp_high']:.3f} all {row['fp_all']:.3f}"
              f" | high R@12 {row['r12_high']:.3f} MRR@1 {row['mrr1_high']:.3f}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", action="append", choices=("hybrid", "lexical", "static"))
    parser.add_argument("--set", action="append", choices=sorted(SETS))
    parser.add_argument("--only", action="append")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    for mode in args.mode or ["hybrid"]:
        for name, make in ablations().items():
            if args.only and name != "none" and not any(o in name for o in args.only):
                continue
            results.setdefault(mode, {})[name] = run(mode, name, make, args.set or sorted(SETS))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
