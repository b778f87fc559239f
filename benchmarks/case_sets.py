"""The graded case sets the ranking is tuned and cross-checked on: `dev` of the eval set, our
`extra` and `extra2` cases over the eval catalog, and the held-out catalog with its cases.
Never the eval set's `test` split. `relevant_functions` (a capability's relevant functions) is
`iii_directory.bench`'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from iii_directory.bench import relevant_functions

__all__ = ["relevant_functions", "tuning_sets"]

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
