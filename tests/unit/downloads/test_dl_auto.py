"""Auto-download: `directory::__on_worker_added` and the boot reconcile (surfaces.md §9.6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from iii_directory.config import Settings
from iii_directory.content.visibility import InstalledWorkers
from iii_directory.directory import Directory
from iii_directory.functions import downloads
from iii_directory.functions.downloads import AutoDownloader
from iii_directory.port import EngineCallError, StandaloneEngine
from iii_directory.content.markers import CompletionMarker, write_marker
from iii_directory.table import FunctionTable
from iii_directory.testing.registry import MockRegistry

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


class ComposeEngine(StandaloneEngine):
    """A connected-engine stand-in that answers `compose::status` from a script."""

    standalone = False

    def __init__(self, answers: list[Any]) -> None:
        super().__init__()
        self.answers = answers
        self.calls: list[tuple[str, Any]] = []

    async def call(self, function_id: str, data: Any, **kwargs: Any) -> Any:
        self.calls.append((function_id, data))
        if function_id != "compose::status":
            return await super().call(function_id, data, **kwargs)
        answer = self.answers.pop(0) if self.answers else {"containers": []}
        if isinstance(answer, Exception):
            raise answer
        return answer


def auto_directory(settings: Settings, registry: MockRegistry, engine: StandaloneEngine,
                   enabled: bool = True) -> Directory:
    live = settings.model_copy(update={"registry_url": registry.url, "auto_download": enabled,
                                       "download_timeout_ms": 3000})
    return Directory(settings=live, engine=engine, table=FunctionTable.merge([downloads.SURFACE]))


def publish(registry: MockRegistry, name: str) -> None:
    registry.add_worker(name, version="2.0.0", skills={"skills/index.md": f"# {name}\n"})


async def test_worker_added_downloads_latest_without_events(settings: Settings,
                                                            registry_server: MockRegistry,
                                                            roots: dict[str, Path]) -> None:
    engine = ComposeEngine([])
    directory = auto_directory(settings, registry_server, engine)
    publish(registry_server, "shell")
    installed = directory.service(InstalledWorkers)
    installed.remember({"old"})
    out = await directory.invoke("directory::__on_worker_added",
                                 {"operation": "add", "worker": "shell", "stage": "done"})
    assert out == {"ok": True}
    assert (roots["skills"] / "shell" / "index.md").read_text() == "# shell\n"
    marker = json.loads((roots["skills"] / "shell" / ".iii-skill-complete").read_text())
    assert marker["tag_or_version"] == "latest" and marker["version"] == "2.0.0"
    assert registry_server.requests[-1].query == {"version": "latest"}
    assert engine.emitted == []
    assert not installed._fresh(directory.settings)  # invalidated after the download
    again = await directory.invoke("directory::__on_worker_added", {"worker": "shell"})
    assert again == {"ok": True}


@pytest.mark.parametrize("payload", [{}, {"worker": None}, {"worker": "  "},
                                     {"worker": "unknown"}, {"worker": "Bad/Name"}])
async def test_worker_added_is_always_ok(settings: Settings, registry_server: MockRegistry,
                                         roots: dict[str, Path], payload: dict[str, Any]) -> None:
    directory = auto_directory(settings, registry_server, ComposeEngine([]))
    assert await directory.invoke("directory::__on_worker_added", payload) == {"ok": True}
    assert not roots["skills"].exists() or not any(
        p.name != ".iii-skill-complete" for p in roots["skills"].rglob("*") if p.is_file())


async def test_worker_added_registry_failure_is_logged_only(settings: Settings,
                                                            registry_server: MockRegistry,
                                                            roots: dict[str, Path]) -> None:
    directory = auto_directory(settings, registry_server, ComposeEngine([]))
    registry_server.fail("/w/shell/skills", "500")
    assert await directory.invoke("directory::__on_worker_added", {"worker": "shell"}) == {
        "ok": True}
    assert not (roots["skills"] / "shell").exists()


async def test_worker_added_ignored_when_auto_download_off(settings: Settings,
                                                           registry_server: MockRegistry,
                                                           roots: dict[str, Path]) -> None:
    publish(registry_server, "shell")
    directory = auto_directory(settings, registry_server, ComposeEngine([]), enabled=False)
    assert await directory.invoke("directory::__on_worker_added", {"worker": "shell"}) == {
        "ok": True}
    assert registry_server.requests == []


async def test_in_flight_guard_skips_concurrent_duplicates(settings: Settings,
                                                           registry_server: MockRegistry,
                                                           roots: dict[str, Path]) -> None:
    publish(registry_server, "shell")
    registry_server.set("/w/shell/skills", json={
        "skills": [{"path": "skills/index.md", "content": "slow"}]}, delay=0.3)
    directory = auto_directory(settings, registry_server, ComposeEngine([]))
    downloader = directory.service(AutoDownloader)
    results: list[bool] = []

    async def run() -> None:
        results.append(await downloader.auto_download("shell"))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        group.start_soon(run)
    assert sorted(results) == [False, True]
    assert registry_server.count("/w/shell/skills") == 1


async def test_reconcile(settings: Settings, registry_server: MockRegistry,
                         roots: dict[str, Path]) -> None:
    for name in ("iii", "shell", "database", "local-one", "marked"):
        publish(registry_server, name)
    engine = ComposeEngine([
        EngineCallError("TIMEOUT", "compose is slow"),
        {"no": "containers"},
        {"containers": [{"container": "shell"}, {"container": "database", "state": "stopped"},
                        {"container": "local-one"}, {"container": "marked"},
                        {"container": "Not_Valid!"}, {"container": "gone"}, {}]},
    ])
    directory = auto_directory(settings, registry_server, engine)
    (roots["local"] / "local-one").mkdir(parents=True)
    write_marker(roots["skills"], CompletionMarker("marked", "latest"))
    downloader = directory.service(AutoDownloader)
    downloader.BACKOFF_STEP_S = 0.01
    installed = await downloader.reconcile()
    assert installed == ["iii", "database", "shell"]
    assert [c for c, _ in engine.calls].count("compose::status") == 3
    assert engine.calls[0][1] == {}
    fetched = [r.path for r in registry_server.requests]
    assert fetched == ["/w/iii/skills", "/w/database/skills", "/w/gone/skills",
                       "/w/shell/skills"]  # `iii` first, then containers sorted by name
    assert (roots["skills"] / "iii" / ".iii-skill-complete").is_file()
    assert not (roots["skills"] / "local-one").exists()
    assert directory.service(InstalledWorkers).last_known == frozenset(
        {"shell", "database", "local-one", "marked", "Not_Valid!", "gone"})
    assert await downloader.reconcile() == []  # everything present now


async def test_reconcile_without_compose_still_fetches_iii(settings: Settings,
                                                           registry_server: MockRegistry,
                                                           roots: dict[str, Path]) -> None:
    publish(registry_server, "iii")
    engine = ComposeEngine([EngineCallError("function_not_found", "no compose")] * 6)
    directory = auto_directory(settings, registry_server, engine)
    downloader = directory.service(AutoDownloader)
    downloader.BACKOFF_STEP_S = 0.0
    assert await downloader.reconcile() == ["iii"]
    assert [c for c, _ in engine.calls].count("compose::status") == 6


async def test_start_hook_schedules_the_reconcile(settings: Settings,
                                                  registry_server: MockRegistry,
                                                  roots: dict[str, Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    publish(registry_server, "iii")
    monkeypatch.setattr(AutoDownloader, "RECONCILE_DELAY_S", 0.0)
    directory = auto_directory(settings, registry_server, ComposeEngine([{"containers": []}]))
    await directory.start()
    task = directory.service(AutoDownloader).task
    assert task is not None
    with anyio.fail_after(10):
        await task
    assert (roots["skills"] / "iii" / "index.md").is_file()
    await directory.stop()


async def test_start_hook_is_inert_when_off_or_standalone(settings: Settings,
                                                          registry_server: MockRegistry) -> None:
    off = auto_directory(settings, registry_server, ComposeEngine([]), enabled=False)
    await off.start()
    assert off.service(AutoDownloader).task is None
    standalone = auto_directory(settings, registry_server, StandaloneEngine())
    await standalone.start()
    assert standalone.service(AutoDownloader).task is None


def test_binding_follows_auto_download(settings: Settings) -> None:
    (binding,) = downloads.SURFACE.bindings
    assert binding.trigger_type == "worker"
    assert binding.function_id == "directory::__on_worker_added"
    assert binding.config(settings) == {"operations": ["add"], "stages": ["done"]}
    assert binding.enabled(settings.model_copy(update={"auto_download": True}))
    assert not binding.enabled(settings.model_copy(update={"auto_download": False}))


@pytest.fixture
def registry_server() -> Any:
    with MockRegistry() as server:
        yield server
