"""No test reaches into `benchmarks/` by path: the scripts there are what a maintainer runs, and a
test that needs their code either drives the script through its command line (a subprocess) or
finds that code in the package. Reading the case sets under `benchmarks/data/` is data, not code,
and stays allowed.

A test file fails when it puts a `benchmarks` path on `sys.path`, loads a module from one
(`spec_from_file_location`, `SourceFileLoader`, `runpy.run_path`), or imports a module named
after a script of `benchmarks/` that the tests do not hold themselves.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
BENCHMARKS = ROOT / "benchmarks"

LOADERS = frozenset({"spec_from_file_location", "SourceFileLoader", "run_path"})
PATH_EDITS = frozenset({"insert", "append", "extend"})


def script_names() -> frozenset[str]:
    """Module names only `benchmarks/` provides: its scripts' stems, less the tests' own."""
    own = {path.stem for path in TESTS.rglob("*.py")}
    return frozenset(path.stem for path in BENCHMARKS.glob("*.py")) - own


def _assigned(tree: ast.AST) -> dict[str, str]:
    """Every simple name assigned in the file → the source of its value (last one wins)."""
    values: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values[target.id] = ast.unparse(node.value)
    return values


def _mentions_benchmarks(node: ast.AST, values: dict[str, str], depth: int = 3) -> bool:
    """Whether the expression names `benchmarks`, directly or through assigned names."""
    if "benchmarks" in ast.unparse(node):
        return True
    if depth == 0:
        return False
    for name in (n.id for n in ast.walk(node) if isinstance(n, ast.Name)):
        if name in values and _mentions_benchmarks(ast.parse(values[name], mode="eval"), values,
                                                   depth - 1):
            return True
    return False


def _is_sys_path(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "path" and \
        isinstance(node.value, ast.Name) and node.value.id == "sys"


def reaches(source: str, scripts: frozenset[str]) -> Iterator[tuple[int, str]]:
    """(line, what) for each way `source` reaches into `benchmarks/` by path."""
    tree = ast.parse(source)
    values = _assigned(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in scripts:
                    yield node.lineno, f"imports benchmarks/{alias.name.split('.')[0]}.py"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in scripts:
                yield node.lineno, f"imports benchmarks/{node.module.split('.')[0]}.py"
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            edits_path = isinstance(func, ast.Attribute) and name in PATH_EDITS and \
                _is_sys_path(func.value)
            if (edits_path or name in LOADERS) and any(
                    _mentions_benchmarks(arg, values) for arg in node.args):
                yield node.lineno, f"{name}(…benchmarks…)"


def test_no_test_file_reaches_into_benchmarks_by_path() -> None:
    scripts = script_names()
    found = [f"{path.relative_to(ROOT)}:{line}: {what}"
             for path in sorted(TESTS.rglob("*.py"))
             for line, what in reaches(path.read_text(encoding="utf-8"), scripts)]
    assert found == []


def test_the_check_sees_each_way_in() -> None:
    scripts = frozenset({"fit_fusion", "soak"})
    source = '''
import sys, importlib.util
from pathlib import Path
ROOT = Path(__file__).parents[2]
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))
import fit_fusion
from soak import SoakSession
spec = importlib.util.spec_from_file_location("soak", ROOT / "benchmarks" / "soak.py")
data = (ROOT / "benchmarks" / "data" / "extra_cases.json").read_text()
sys.path.insert(0, str(ROOT / "src"))
'''
    assert [what for _, what in sorted(reaches(source, scripts))] == [
        "insert(…benchmarks…)", "imports benchmarks/fit_fusion.py", "imports benchmarks/soak.py",
        "spec_from_file_location(…benchmarks…)"]
