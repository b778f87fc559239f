"""The graded case sets the ranking is tuned and cross-checked on: `dev` of the eval set, our
`extra` and `extra2` cases over the eval catalog, and the held-out catalog with its cases.
Never the eval set's `test` split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"


def tuning_sets(eval_dir: Path) -> dict[str, tuple[Path, list[dict[str, Any]]]]:
    """set name → (catalog path, cases) for dev, extra, extra2 and heldout."""
    catalog = eval_dir / "catalog.json"
    dev = [c for c in json.loads((eval_dir / "cases.json").read_text())["cases"]
           if c["split"] == "dev"]
    sets = {"dev": (catalog, dev)}
    for name in ("extra", "extra2"):
        sets[name] = (catalog, json.loads((DATA / f"{name}_cases.json").read_text())["cases"])
    sets["heldout"] = (DATA / "heldout_catalog.json",
                       json.loads((DATA / "heldout_cases.json").read_text())["cases"])
    return sets


def relevant_functions(case: dict[str, Any], index: int, min_grade: int = 2) -> set[str]:
    """The functions graded ≥ `min_grade` for the case's capability `index`: a qrel without
    `covers` covers every capability of its case."""
    every = range(len(case["capabilities"]))
    return {q["function_id"] for q in case["qrels"]
            if q["grade"] >= min_grade and index in (q.get("covers") or every)}
