"""`LazyModule`: a module imported on its first attribute access.

`serve` imports every surface (`functions.*`) to register the function table, but a surface's
domain modules (prompt, agent and skill writers, downloads, bundles) are needed only when one of
its functions is called. A surface names them `store = LazyModule("iii_directory.content.x")`
(with the real import under `TYPE_CHECKING` for type checkers), so registering and the first
search do not import them. The first access imports through `importlib.import_module`, whose
import lock makes concurrent first accesses from several threads safe.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands in for the module `name` until an attribute is read; then it is imported once."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    @property
    def loaded(self) -> bool:
        """Whether the module has been imported through this stand-in."""
        return self._module is not None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = importlib.import_module(self._name)
            self._module = module
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<LazyModule {self._name} ({'loaded' if self._module is not None else 'not loaded'})>"


def _no_httpx_command_line() -> None:
    raise SystemExit("httpx's command line is not loaded in this process (iii_directory.lazy.import_httpx)")


def import_httpx() -> ModuleType:
    """`httpx`, imported without its command line. `httpx/__init__` imports `httpx._main` only to
    offer `httpx.main`, the `httpx` console script, and that module imports click, pygments and
    rich wherever they are installed (~2.3 MiB resident in a worker, which never runs it). Unless
    httpx or its `_main` is already imported, a stand-in `httpx._main` whose `main` refuses is
    registered first; every other part of httpx is the real one."""
    if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
        stand_in = ModuleType("httpx._main", "Stand-in: httpx's command line is not loaded.")
        stand_in.main = _no_httpx_command_line  # type: ignore[attr-defined]
        sys.modules["httpx._main"] = stand_in
    return importlib.import_module("httpx")
