"""Measure static-lane variants in one process each (issue 19): recall@12, MRR@1 and the
no-match false-positive rate of `--mode static` on eval `dev`, `extra`, `extra2` and the held-out
catalog, plus how many of 200 seeded chatter sentences (per catalog) and 200 near misses (eval
catalog) get an answer — seeds of their own, not the fit's (`fit_answerability.py`).

    .venv/bin/python benchmarks/static_variants.py [--set dev --set heldout ...]

Runs the bench's pipeline (`iii_directory.bench.run_mode`); never `test`. A variant is the tree
as it is: patch the module under measurement in a copy of this tree, or set the constants it
reads, then run this script — one process per variant.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from iii_directory import bench  # noqa: E402

from calibration_chatter import chatter  # noqa: E402
from fit_answerability_nearmiss import nearmiss  # noqa: E402
from static_failures import DATA, ROOT, sets  # noqa: E402

NEGATIVES = 200
SEED = "static-variants"


def negatives(name: str, generate: Any) -> list[dict[str, Any]]:
    rng = random.Random(f"{SEED}-{name}")
    sentences = list(dict.fromkeys(generate(rng) for _ in range(NEGATIVES * 3)))[:NEGATIVES]
    return [{"id": f"{name}-{i}", "split": name, "kind": "no_match", "capabilities": [text],
             "qrels": []} for i, text in enumerate(sentences)]


def all_sets(eval_dir: Path) -> list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    out = sets(eval_dir)
    catalog = out[0][1]
    held = json.loads((DATA / "heldout_catalog.json").read_text())
    out += [("chatter", catalog, negatives("chatter", chatter)),
            ("heldout-chatter", held, negatives("heldout-chatter", chatter)),
            ("nearmiss", catalog, negatives("nearmiss", nearmiss))]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    parser.add_argument("--set", action="append")
    parser.add_argument("--mode", default="static")
    args = parser.parse_args()
    sets = [s for s in all_sets(args.eval_dir) if not args.set or s[0] in args.set]
    print(pipeline_row(sets, args.mode))


def pipeline_row(sets: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]],
                 mode: str = "static",
                 lane: Callable[[list[dict[str, Any]]], str] | None = None) -> str:
    """One line: R@12 / MRR@1 / no-match FP rate per case set, answered / asked per negative set;
    `lane(cases)`, when given, is run right after each ranked set's pipeline and its text put
    before that set's figures."""
    row = []
    for name, catalog, cases in sets:
        run, _, _ = anyio.run(bench.run_mode, mode, catalog, cases, 1, None)
        metrics = bench.score_cases(cases, run, set())
        if metrics["ranked_cases"]:
            prefix = f"lane {lane(cases)} pipe " if lane is not None else ""
            row.append(f"{name} {prefix}{metrics['recall_at_12']:.3f}/{metrics['mrr_at_1']:.3f}/"
                       f"{metrics['false_positive_rate'] or 0:.3f}")
        else:
            answered = round(metrics["false_positive_rate"] * metrics["no_match_cases"])
            row.append(f"{name} {answered}/{metrics['no_match_cases']}")
    return "  ".join(row)


if __name__ == "__main__":
    sys.exit(main())
