"""The fitted numbers of the ranking, read once from `data/fitted.json`.

Each entry names the script that fits it, its loss, the data sets and the commit it was fitted
on, the features its values weigh and the values; the fit scripts write the file (`--write`) and
check it (`--check`), so a number in the ranking can always be traced to its fit
(docs/search.md, "Where the numbers come from").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

FITTED_PATH = Path(__file__).with_name("data") / "fitted.json"
"""Chosen: beside the stage modules, shipped as package data like every other JSON file."""


@cache
def table() -> dict[str, dict[str, Any]]:
    """Every entry of the file by its name (`module.CONSTANT`, `answerability.CALIBRATION.family`)."""
    return json.loads(FITTED_PATH.read_text(encoding="utf-8"))["fitted"]


def entry(name: str, features: Sequence[str]) -> dict[str, Any]:
    """The entry `name`, refused unless its features are `features` in this order: a weight
    applied to the wrong column would rank silently wrong."""
    found = table()[name]
    if tuple(found["features"]) != tuple(features):
        raise RuntimeError(f"{FITTED_PATH.name}: {name} weighs {found['features']}, "
                           f"the code reads {list(features)}; re-run {found['script']} --write")
    if len(found["values"]) != len(features):
        raise RuntimeError(f"{FITTED_PATH.name}: {name} has {len(found['values'])} values "
                           f"for {len(features)} features")
    return found


def weights(name: str, features: Sequence[str]) -> tuple[float, ...]:
    """The values of entry `name`, one per feature of `features`."""
    return tuple(float(value) for value in entry(name, features)["values"])


def render(document: dict[str, Any]) -> str:
    """The file's text: one entry per block, each list of numbers or names on one line, so a
    refit shows in a diff as the lines that changed."""
    lines = ["{", f" \"rule\": {json.dumps(document['rule'])},", " \"fitted\": {"]
    entries = list(document["fitted"].items())
    for index, (name, fields) in enumerate(entries):
        lines.append(f"  {json.dumps(name)}: {{")
        items = list(fields.items())
        lines += [f"   {json.dumps(key)}: {json.dumps(value)}" + ("," if k < len(items) - 1 else "")
                  for k, (key, value) in enumerate(items)]
        lines.append("  }" + ("," if index < len(entries) - 1 else ""))
    return "\n".join(lines + [" }", "}"]) + "\n"
