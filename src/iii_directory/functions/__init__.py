"""One module per surface; each exports `SURFACE` (a `table.Surface`).

`build_table()` merges them into the single function table the worker registers;
`deferred_table()` is the same table with each surface imported on first use (`call`).
"""

from __future__ import annotations

import importlib

from ..published import published
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


def surface(name: str) -> Surface:
    """The `SURFACE` of the module `functions.<name>` (one of `SURFACE_MODULES`)."""
    if name not in SURFACE_MODULES:
        raise KeyError(f"no surface module {name!r}")
    module = importlib.import_module(f"{__name__}.{name}")
    found: Surface = module.SURFACE
    return found


def surfaces() -> list[Surface]:
    return [surface(name) for name in SURFACE_MODULES]


def build_table() -> FunctionTable:
    return FunctionTable.merge(surfaces())


def deferred_table() -> FunctionTable:
    """The function table whose ids come from the published index (`published.py`) and whose
    surfaces are imported when first used; without a published index, `build_table()`."""
    index = published().surfaces
    if not index:
        return build_table()
    return FunctionTable.deferred(index, surface, build_table)
