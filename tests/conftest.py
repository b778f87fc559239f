"""Shared fixtures: isolated roots and settings for every test."""

from __future__ import annotations

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
