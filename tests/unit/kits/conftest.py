"""Fixtures for the kit flows (see `kitenv.KitEnv`). The helpers next to this file are
imported by module name, so their directory goes on `sys.path` (any pytest import mode)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from kitenv import T0, KitEnv  # noqa: E402
from kitfake import FakeComposeEngine, KitCatalog, team_v1  # noqa: E402

from iii_directory.config import Settings  # noqa: E402
from iii_directory.directory import Directory  # noqa: E402
from iii_directory.kits.service import KitsService  # noqa: E402
from iii_directory.testing.registry import MockRegistry  # noqa: E402


@pytest.fixture
def mock_registry() -> Iterator[MockRegistry]:
    with MockRegistry() as registry:
        yield registry


@pytest.fixture
async def kits(settings: Settings, roots: dict[str, Path], mock_registry: MockRegistry,
               monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[KitEnv]:
    """A kit environment; at teardown the kits service stops (as `serve` stops it), cancelling
    background work such as the bundle downloads an apply starts while the loop still runs —
    left pending, they were destroyed with the loop mid-connect (`coroutine
    'connect_tcp.<locals>.try_connect' was never awaited`)."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("III_COMPOSE_NAMESPACE", raising=False)
    engine = FakeComposeEngine()
    directory = Directory(
        settings=settings.model_copy(update={"registry_url": mock_registry.url}), engine=engine
    )
    catalog = KitCatalog(mock_registry)
    catalog.publish("acme/team", team_v1())
    now = [T0]
    service = directory.service(KitsService)
    service.clock = lambda: now[0]
    service.poll_interval_s = 0.0
    yield KitEnv(directory, engine, catalog, mock_registry, roots, now)
    await service.stop()
