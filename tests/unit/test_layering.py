"""Imports point down (DESIGN.md "Layers"), and no module of the product imports itself back.

Every module under src/ is parsed with `ast`; every import counts: top-level ones, those inside
functions (lazy imports), those under `if TYPE_CHECKING:` (a type is a dependency too), and the
relative forms (`from . import x`, `from ..pkg import y`). The surfaces that
`functions.build_table` loads by name (`SURFACE_MODULES`) count as imports of `functions`.

A module's layer is the entry of `LAYERS` with the longest matching dotted prefix. An import
may go to the same or a lower layer, never a higher one; within a layer, the import graph must
still have no cycle. Other layers reach `iii_directory.search` only through the modules its
`__all__` names (its public face).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
OURS = ("_rank", "iii_directory")

LAYERS: dict[str, int] = {
    # native ranking core: knows nothing of iii
    "_rank": 0,
    # leaves: package constants, coded errors, the exclusion rule, the engine wire protocol
    "iii_directory": 10,
    "iii_directory.errors": 10,
    "iii_directory.exclusions": 10,
    "iii_directory.protocol": 10,
    # typed values: request/response models, settings, the engine port
    "iii_directory.models": 20,
    "iii_directory.request_check": 20,
    "iii_directory.port": 20,
    "iii_directory.config_base": 25,
    "iii_directory.config": 30,
    "iii_directory.plain_settings": 30,
    "iii_directory.config_boot": 35,
    # the function table and the runtime that holds it (atomic writes: the runtime owns the
    # self-write marks)
    "iii_directory.table": 40,
    "iii_directory.atomic": 40,
    "iii_directory.published": 45,
    # generates data/settings.json from the settings model (build time: `schemas --write`)
    "iii_directory.settings_table": 46,
    "iii_directory.runtime": 50,
    "iii_directory.context": 60,
    "iii_directory.invocation": 70,
    "iii_directory.standalone": 70,
    # domain: files on disk < outside world < kit plans and ranking policy
    "iii_directory.content": 100,
    "iii_directory.ui": 100,
    "iii_directory.sources": 110,
    "iii_directory.kits": 120,
    # search: the synchronous ranking core < the encoder machinery (its dense lane returns the
    # core's rankings) < the orchestration of a call; the pre-generate hint stands alone
    "iii_directory.search.ranking": 115,
    "iii_directory.encoder": 118,
    "iii_directory.hints": 120,
    "iii_directory.search": 120,
    # one module per surface, then the assembled directory, the worker and the entry points
    "iii_directory.functions": 200,
    "iii_directory.directory": 210,
    # the short path of `iii-directory call` (file-backed reads: content answers, no table)
    "iii_directory.quick_call": 212,
    "iii_directory.schemas": 215,
    "iii_directory.worker": 220,
    "iii_directory.cli": 230,
    "iii_directory.bench": 240,
    "iii_directory.__main__": 240,
    # in-process peers for tests (an engine, a registry, git remotes): never imported by the product
    "iii_directory.testing": 300,
}

CYCLE_EXEMPT: tuple[str, ...] = ()
"""Modules allowed to import each other in a circle: none. The test engine's built-in functions,
peers and clients type the engine as `testing.engine_records.EngineHost`, so they do not import it."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, known: set[str]) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import statement anywhere in the file. `from X import
    name` counts as an import of `X.name` when that is a module of ours, else of `X`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield (sub if sub in known else target), node.lineno


def layer_of(module: str) -> int:
    best = ""
    for prefix in LAYERS:
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    assert best, f"{module} has no entry in LAYERS"
    return LAYERS[best]


def import_graph() -> dict[str, dict[str, int]]:
    """module → {imported module of ours: first line}."""
    modules = all_modules()
    known = set(modules)
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        edges: dict[str, int] = {}
        for target, line in imports_of(module, path, known):
            if target.split(".")[0] not in OURS or target == module:
                continue
            while target not in known and "." in target:  # `import a.b.c` of a name
                target = target.rsplit(".", 1)[0]
            edges.setdefault(target, line)
        graph[module] = edges
    from iii_directory.functions import SURFACE_MODULES

    for name in SURFACE_MODULES:  # loaded by name in functions.surfaces()
        graph["iii_directory.functions"].setdefault(f"iii_directory.functions.{name}", 0)
    return graph


def find_cycle(graph: dict[str, dict[str, int]], nodes: set[str]) -> list[str] | None:
    """One cycle among `nodes` (as a path that ends where it starts), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, {})):
            if nxt not in nodes:
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(nodes):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


GRAPH = import_graph()


def test_every_module_has_a_layer() -> None:
    missing = [m for m in GRAPH if not any(m == p or m.startswith(p + ".") for p in LAYERS)]
    assert not missing


def test_the_parser_sees_every_import_form() -> None:
    """The checks below are only as good as the edges: lazy, TYPE_CHECKING-only, relative and
    package-relative imports of known modules all appear."""
    assert "iii_directory.functions" in GRAPH["iii_directory.directory"]  # top-level, relative
    assert "iii_directory.runtime" in GRAPH["iii_directory.context"]  # TYPE_CHECKING only
    assert "iii_directory.content.kits_lock" in GRAPH["iii_directory.sources.downloads"]  # in a function
    assert "iii_directory.protocol.frames" in GRAPH["iii_directory.testing.engine"]  # `from ..protocol import frames`
    assert "_rank._reference" in GRAPH["_rank"]
    assert "iii_directory.functions.search" in GRAPH["iii_directory.functions"]  # by name


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_point_down(module: str) -> None:
    own = layer_of(module)
    upward = [
        f"line {line}: {target} (layer {layer_of(target)})"
        for target, line in sorted(GRAPH[module].items())
        if layer_of(target) > own
    ]
    assert not upward, f"{module} (layer {own}) imports upward: {upward}"


def test_no_import_cycle() -> None:
    product = {m for m in GRAPH if not (CYCLE_EXEMPT and m.startswith(CYCLE_EXEMPT))}
    cycle = find_cycle(GRAPH, product)
    assert cycle is None, " -> ".join(cycle or [])


def test_find_cycle_finds_one() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert find_cycle(graph, set(graph)) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": 1}, "b": {}}, {"a", "b"}) is None


def test_rank_knows_nothing_of_iii() -> None:
    leaks = {m: sorted(t for t in e if t.startswith("iii_directory"))
             for m, e in GRAPH.items() if m.split(".")[0] == "_rank"}
    assert not any(leaks.values()), leaks


def private_search_imports(graph: dict[str, dict[str, int]], public: tuple[str, ...]) -> list[str]:
    """Imports from outside `iii_directory.search` of one of its modules that `public` (module
    names, each with its submodules) does not hold."""
    return [
        f"{module} line {line}: {target}"
        for module, edges in sorted(graph.items())
        if not (module == "iii_directory.search" or module.startswith("iii_directory.search."))
        for target, line in sorted(edges.items())
        if target.startswith("iii_directory.search.")
        and not any(target == p or target.startswith(p + ".") for p in public)
    ]


def test_other_layers_import_only_the_public_face_of_search() -> None:
    """Outside `iii_directory.search`, a module imports only what `search.__all__` names: the
    orchestration's `service`, `catalog` and `request_limits`, and the `ranking` core."""
    import iii_directory.search

    public = tuple(f"iii_directory.search.{name}" for name in iii_directory.search.__all__)
    assert all(name in GRAPH for name in public)
    assert private_search_imports(GRAPH, public) == []


def test_the_public_face_check_sees_a_private_import() -> None:
    graph = {"iii_directory.bench": {"iii_directory.search.service": 3,
                                     "iii_directory.search.ranking.select": 4,
                                     "iii_directory.search.judge": 5},
             "iii_directory.search.service": {"iii_directory.search.judge": 1}}
    public = ("iii_directory.search.service", "iii_directory.search.ranking")
    assert private_search_imports(graph, public) == [
        "iii_directory.bench line 5: iii_directory.search.judge"]
