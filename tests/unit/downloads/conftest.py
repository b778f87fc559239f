"""Fixtures: a live MockRegistry, a loopback HTTPS git remote, and a Directory serving only the
downloads surface (so these tests do not depend on other surfaces)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.functions import downloads
from iii_directory.port import StandaloneEngine
from iii_directory.table import FunctionTable
from iii_directory.testing.gitremote import GitRemote
from iii_directory.testing.registry import MockRegistry
from wire_checks import direct_loopback  # noqa: F401 - autouse: loopback servers bypass proxies


@pytest.fixture
def registry() -> Iterator[MockRegistry]:
    with MockRegistry() as server:
        yield server


@pytest.fixture
def dl_settings(settings: Settings, registry: MockRegistry) -> Settings:
    return settings.model_copy(update={"registry_url": registry.url, "download_timeout_ms": 5000})


@pytest.fixture
def dl_engine() -> StandaloneEngine:
    return StandaloneEngine()


@pytest.fixture
def dl_directory(dl_settings: Settings, dl_engine: StandaloneEngine) -> Directory:
    return Directory(settings=dl_settings, engine=dl_engine,
                     table=FunctionTable.merge([downloads.SURFACE]))


@pytest.fixture(scope="session")
def _session_remote() -> Iterator[GitRemote]:
    with GitRemote() as server:
        yield server


@pytest.fixture
def remote(_session_remote: GitRemote, monkeypatch: pytest.MonkeyPatch) -> GitRemote:
    """The shared HTTPS remote, trusted by git through GIT_SSL_CAINFO for this test."""
    for key, value in _session_remote.env.items():
        monkeypatch.setenv(key, value)
    _session_remote.heal()
    return _session_remote


@pytest.fixture
def clone_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temporary clones land here, so a test can check that none is left behind."""
    where = tmp_path / "clones"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def _tree(root: Path) -> dict[str, str]:
    if not root.exists():
        return {}
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def tree() -> Callable[[Path], dict[str, str]]:
    """`tree(root)`: every regular file under `root` as relative path → text."""
    return _tree


