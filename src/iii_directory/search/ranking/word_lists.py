"""The hand-written word lists of the ranking, read once from `data/words/*.json`.

Each file opens with `rule`, the test a word must pass to be added, so a list grows by its rule
rather than by whichever request failed last (docs/search.md, "Where the numbers come from").
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

WORDS_DIR = Path(__file__).with_name("data") / "words"
"""Chosen: beside the stage modules, shipped as package data like every other JSON file."""


@cache
def load(name: str) -> dict[str, Any]:
    """The file `name`.json: its `rule` and its lists, in the order they were written."""
    return json.loads((WORDS_DIR / f"{name}.json").read_text(encoding="utf-8"))


def words(name: str, key: str = "words") -> tuple[str, ...]:
    """One flat list of file `name`."""
    return tuple(load(name)[key])


def groups(name: str, key: str) -> tuple[tuple[str, ...], ...]:
    """A list of word groups of file `name` (the first word of each names the group)."""
    return tuple(tuple(group) for group in load(name)[key])


def classes(name: str, key: str) -> dict[str, tuple[str, ...]]:
    """Named word lists of file `name`, in file order."""
    return {label: tuple(members) for label, members in load(name)[key].items()}
