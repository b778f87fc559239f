"""The workers registry flaps — HTTP 500/502, hangs past the timeout, truncated bodies,
malformed JSON, reset connections — during searches and downloads (issue 11). Searches still
answer (no `installable` section); downloads fail with coded errors and leave nothing partial
on disk (no files, no completion marker); once the registry heals the same calls succeed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.standalone import standalone_engine
from iii_directory.testing.registry import MockRegistry

pytestmark = [pytest.mark.timeout(120)]

MODES: list[Any] = [500, 502, 503, "timeout", "truncated", "malformed", "reset"]
SEARCH = "directory::search_functions"
DOWNLOAD = "directory::skills::download_from_registry"


def publish(registry: MockRegistry, name: str, text: str, skills: dict[str, str] | None = None) -> None:
    registry.add_worker(name, version="1.0.0", description=text, skills=skills or {}, functions=[
        {"id": f"{name}::run", "description": f"{text}.",
         "request_format": {"type": "object", "properties": {"q": {"type": "string"}}}}])


@pytest.fixture
def registry() -> Iterator[MockRegistry]:
    with MockRegistry() as server:
        publish(server, "weatherly", "Forecast the weather and send weather alerts")
        for index in range(6):
            publish(server, f"bundle{index}", f"Bundle {index} tools", skills={
                "skills/index.md": f"# Bundle {index}\n\nOverview.\n",
                **{f"skills/guide/page-{p}.md": f"# Page {p}\n\nStep {p}.\n" for p in range(4)},
                "agents/helper.md": "---\nname: Helper\n---\nYou help.\n"})
        yield server


@pytest.fixture
def flaky(settings: Settings, registry: MockRegistry) -> Directory:
    catalog = json.loads((resources.files("iii_directory") / "data" / "example_catalog.json").read_text("utf-8"))
    engine = standalone_engine(catalog)
    directory = Directory(settings=settings.model_copy(update={
        "registry_url": registry.url, "registry_cache_ttl_ms": 0, "download_timeout_ms": 500,
        "registry_search": True}), engine=engine)
    engine.add_own_functions(directory.table)
    return directory


async def weather_search(directory: Directory) -> dict[str, Any]:
    return await directory.invoke(SEARCH, {"capabilities": ["forecast the weather", "send weather alerts"]})


@pytest.mark.parametrize("mode", MODES, ids=str)
@pytest.mark.parametrize("route", ["/w", "/w/weatherly"])
async def test_searches_answer_without_installable_while_the_registry_fails(
        flaky: Directory, registry: MockRegistry, mode: Any, route: str) -> None:
    healthy = await weather_search(flaky)
    assert healthy.get("installable"), "the installable lane works while the registry is healthy"
    registry.fail(route, mode)
    answer = await weather_search(flaky)
    assert isinstance(answer["guidance"], str) and answer["search_mode"] == "lexical"
    assert not answer.get("installable")
    registry.heal(route)
    assert (await weather_search(flaky)).get("installable")


async def test_concurrent_searches_all_answer_while_the_registry_flaps(flaky: Directory, registry: MockRegistry) -> None:
    answers: list[dict[str, Any]] = []

    async def search() -> None:
        answers.append(await weather_search(flaky))

    for round_no, mode in enumerate(MODES):
        registry.fail("/w", mode, times=2)
        registry.fail("/w/weatherly", MODES[(round_no + 3) % len(MODES)], times=1)
        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(search)
    assert len(answers) == 4 * len(MODES)
    assert all(isinstance(a["guidance"], str) for a in answers)
    assert any(a.get("installable") for a in answers) and any(not a.get("installable") for a in answers)


def bundle_files(skills: Path, agents: Path, name: str) -> dict[str, str]:
    folder = skills / name
    found = {p.relative_to(skills).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()} \
        if folder.exists() else {}
    if (agents / "helper.md").exists():
        found["agents/helper.md"] = (agents / "helper.md").read_text()
    return found


@pytest.mark.parametrize("mode", [*MODES, 404], ids=str)
async def test_a_download_during_a_registry_failure_is_coded_and_writes_nothing(
        flaky: Directory, registry: MockRegistry, roots: dict[str, Path], mode: Any) -> None:
    registry.fail("/w/bundle0/skills", mode)
    with pytest.raises(DirectoryError) as caught:
        await flaky.invoke(DOWNLOAD, {"worker": "bundle0"})
    assert caught.value.code == ("D310" if mode == 404 else "D320"), caught.value.message
    assert caught.value.message.startswith(caught.value.code)
    assert "127.0.0.1" not in caught.value.message  # the URL never leaks
    assert bundle_files(roots["skills"], roots["agents"], "bundle0") == {}
    registry.heal("/w/bundle0/skills")
    done = await flaky.invoke(DOWNLOAD, {"worker": "bundle0"})
    assert len(done["skills_written"]) == 5 and done["agents_written"] == ["helper"]
    assert (roots["skills"] / "bundle0" / ".iii-skill-complete").exists()


async def test_a_re_download_during_a_registry_failure_keeps_the_installed_bundle(
        flaky: Directory, registry: MockRegistry, roots: dict[str, Path]) -> None:
    await flaky.invoke(DOWNLOAD, {"worker": "bundle1"})
    installed = bundle_files(roots["skills"], roots["agents"], "bundle1")
    for mode in MODES:
        registry.fail("/w/bundle1/skills", mode)
        with pytest.raises(DirectoryError):
            await flaky.invoke(DOWNLOAD, {"worker": "bundle1"})
        assert bundle_files(roots["skills"], roots["agents"], "bundle1") == installed
    assert not list(roots["skills"].rglob("*.tmp"))


async def test_concurrent_downloads_land_whole_or_not_at_all_while_the_registry_flaps(
        flaky: Directory, registry: MockRegistry, roots: dict[str, Path]) -> None:
    outcomes: dict[str, Any] = {}

    async def download(name: str) -> None:
        try:
            outcomes[name] = await flaky.invoke(DOWNLOAD, {"worker": name})
        except DirectoryError as exc:
            outcomes[name] = exc

    for index in range(6):
        if index % 2 == 0:
            registry.fail(f"/w/bundle{index}/skills", MODES[index], times=1)
    async with anyio.create_task_group() as tg:
        for index in range(6):
            tg.start_soon(download, f"bundle{index}")
    for index in range(6):
        name = f"bundle{index}"
        folder = roots["skills"] / name
        if isinstance(outcomes[name], DirectoryError):
            assert index % 2 == 0 and outcomes[name].code == "D320"
            assert not folder.exists()
        else:
            assert (folder / ".iii-skill-complete").exists()
            assert sorted(p.name for p in (folder / "guide").iterdir()) == [f"page-{p}.md" for p in range(4)]
    assert not list(roots["skills"].rglob("*.tmp"))


async def test_the_mock_registry_answers_a_burst_of_concurrent_connections() -> None:
    """Hundreds of simultaneous connections (50 callers searching at once) are all answered;
    with the stdlib's listen backlog of 5 a third of them hung until their timeout."""
    import ssl

    import httpx

    context = ssl.create_default_context()
    failures: list[BaseException] = []
    with MockRegistry() as server:
        server.add_worker("burst", version="1.0.0", description="Burst test")

        async def one() -> None:
            try:
                async with httpx.AsyncClient(timeout=20, verify=context, trust_env=False) as client:
                    assert (await client.get(server.url + "/w", params={"search": "burst"})).status_code == 200
            except httpx.HTTPError as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            for _ in range(300):
                tg.start_soon(one)
    assert failures == []
