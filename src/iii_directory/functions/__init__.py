"""One module per surface; each exports `SURFACE` (a `table.Surface`).

`build_table()` merges them into the single function table the worker registers.
"""

from __future__ import annotations

import importlib

from ..table import FunctionTable, Surface

SURFACE_MODULES: tuple[str, ...] = (
    "engine",
    "internal",
    "skills",
    "prompts",
    "agents",
    "downloads",
    "registry",
    "search",
    "hook",
    "kits",
    "ui",
)


def surfaces() -> list[Surface]:
    return [importlib.import_module(f"{__name__}.{name}").SURFACE for name in SURFACE_MODULES]


def build_table() -> FunctionTable:
    return FunctionTable.merge(surfaces())
