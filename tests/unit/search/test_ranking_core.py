"""The ranking core (`iii_directory.search.ranking`) is pure and synchronous: it imports nothing
that awaits or runs threads (anyio, asyncio, concurrent.futures, multiprocessing), no part of the
encoder, the hint hook or the orchestration above it, defines no coroutine, and uses `threading`
only for locks around its shared caches. Importing every one of its modules loads no anyio."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import iii_directory.search.ranking as ranking

CORE = Path(ranking.__file__).parent
MODULES = sorted(CORE.glob("*.py"))
FORBIDDEN_LIBRARIES = ("anyio", "asyncio", "concurrent", "multiprocessing", "trio")
ALLOWED_OURS = ("_rank", "iii_directory.search.ranking", "iii_directory.exclusions")
"""What the core may import of ours: the native core, itself, and the exclusion rule (a leaf)."""
THREADING_ALLOWED = {"Lock", "RLock"}


def imported(tree: ast.AST) -> list[tuple[str, int]]:
    """(absolute module, line) of every import, relative ones resolved against the core."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["iii_directory", "search", "ranking"][: 4 - node.level]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((module, node.lineno))
    return found


def violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for module, line in imported(tree):
        top = module.split(".")[0]
        if top in FORBIDDEN_LIBRARIES:
            found.append(f"line {line}: imports {module}")
        ours = top in ("_rank", "iii_directory")
        if ours and not any(module == a or module.startswith(a + ".") for a in ALLOWED_OURS):
            found.append(f"line {line}: imports {module}")
    for node in ast.walk(tree):
        if isinstance(node, (ast.AsyncFunctionDef, ast.Await)):
            found.append(f"line {node.lineno}: a coroutine")
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == "threading" and node.attr not in THREADING_ALLOWED):
            found.append(f"line {node.lineno}: threading.{node.attr}")
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_a_core_module_imports_no_machinery(path: Path) -> None:
    assert violations(path) == []


def test_the_check_sees_machinery(tmp_path: Path) -> None:
    module = tmp_path / "stage.py"
    module.write_text("import anyio\nimport threading\nfrom ..encoder import encoding\n"
                      "from ..service import SearchService\nfrom .lanes import Ranking\n"
                      "async def rank():\n    await anyio.sleep(0)\n"
                      "LOCK = threading.Lock()\nthreading.Thread(target=rank)\n",
                      encoding="utf-8")
    assert violations(module) == [
        "line 1: imports anyio", "line 3: imports iii_directory.search.encoder",
        "line 4: imports iii_directory.search.service", "line 6: a coroutine",
        "line 7: a coroutine", "line 9: threading.Thread"]


def test_importing_the_core_loads_no_anyio() -> None:
    names = [f"iii_directory.search.ranking.{p.stem}" for p in MODULES if p.stem != "__init__"]
    code = ("import importlib, sys\n"
            f"for name in {names!r}:\n    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('anyio', 'asyncio', 'concurrent') or m.startswith(('iii_directory.encoder', "
            "'iii_directory.hints', 'iii_directory.search.service'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
