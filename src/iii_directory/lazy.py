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
from collections.abc import Callable
from types import ModuleType
from typing import Any, NoReturn


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


def _refuse(part: str, caller: str) -> Callable[..., NoReturn]:
    def refused(*_args: Any, **_kwargs: Any) -> NoReturn:
        raise SystemExit(f"{part} is not loaded in this process (iii_directory.lazy.{caller})")

    return refused


def _import_without(package: str, part: str, names: tuple[str, ...], caller: str) -> ModuleType:
    """`package`, imported with a stand-in for its submodule `part` whose `names` refuse to
    run; unless `package` or `part` is already imported (then both stay what they are)."""
    full = f"{package}.{part}"
    if package not in sys.modules and full not in sys.modules:
        stand_in = ModuleType(full, f"Stand-in: {full} is not loaded (iii_directory.lazy.{caller}).")
        for name in names:
            setattr(stand_in, name, _refuse(full, caller))
        sys.modules[full] = stand_in
    return importlib.import_module(package)


def import_httpx() -> ModuleType:
    """`httpx`, imported without its command line. `httpx/__init__` imports `httpx._main` only to
    offer `httpx.main`, the `httpx` console script, and that module imports click, pygments and
    rich wherever they are installed (~2.3 MiB resident in a worker, which never runs it). Unless
    httpx or its `_main` is already imported, a stand-in `httpx._main` whose `main` refuses is
    registered first; every other part of httpx is the real one."""
    return _import_without("httpx", "_main", ("main",), "import_httpx")


def import_watchfiles() -> ModuleType:
    """`watchfiles`, imported without its process runner. `watchfiles/__init__` imports
    `watchfiles.run` only to offer `run_process` / `arun_process` (restart a program when files
    change), and that module imports `multiprocessing`, `pickle` and `subprocess` (15 modules,
    ~0.3 MiB in a worker, which only watches). Unless watchfiles or its `run` is already
    imported, a stand-in `watchfiles.run` whose functions refuse is registered first; `awatch`,
    `Change` and the filters are watchfiles' own."""
    return _import_without("watchfiles", "run", ("run_process", "arun_process", "detect_target_type",
                                                  "import_string"), "import_watchfiles")
