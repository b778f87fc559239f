"""Fixtures for the kit flows: a Directory on a scripted Compose engine, the loopback
MockRegistry with the `acme/team` catalogue, a fixed clock and project helpers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from kitfake import FakeComposeEngine, KitCatalog, team_v1

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.kits.lock import Lock, load_lock
from iii_directory.kits.service import KitsService
from iii_directory.testing.registry import MockRegistry

T0 = datetime(2026, 10, 8, 14, 2, 11, tzinfo=UTC)


@dataclass
class KitEnv:
    directory: Directory
    engine: FakeComposeEngine
    catalog: KitCatalog
    registry: MockRegistry
    roots: dict[str, Path]
    now: list[datetime]

    @property
    def service(self) -> KitsService:
        return self.directory.service(KitsService)

    @property
    def project(self) -> Path:
        return self.roots["project"]

    async def call(self, function_id: str, data: Any = None) -> Any:
        return await self.directory.invoke(function_id, data or {})

    def path(self, install: str) -> Path:
        if install.startswith("agents/"):
            return self.roots["agents"] / install[len("agents/"):]
        return self.roots["skills"] / install[len("skills/"):]

    def write(self, install: str, text: str) -> None:
        target = self.path(install)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def read(self, install: str) -> str | None:
        target = self.path(install)
        return target.read_text(encoding="utf-8") if target.exists() else None

    def lock(self) -> Lock:
        return load_lock(self.project)

    def declare(self, **workers: tuple[str, str | None]) -> None:
        """Compose declarations: name → (selector, resolved version or None)."""
        lines = ["containers:"]
        locked = ["containers:"]
        for name, (selector, resolved) in workers.items():
            lines += [f"  {name}:", f"    version: \"{selector}\""]
            if resolved:
                locked += [f"  {name}:", "    resolved:", f"      version: {resolved}"]
        (self.project / "worker-compose.yaml").write_text("\n".join(lines) + "\n")
        (self.project / "worker-compose.lock").write_text("\n".join(locked) + "\n")

    def marker(self, worker: str, version: str, agents: dict[str, str]) -> None:
        import json

        folder = self.roots["skills"] / worker
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".iii-skill-complete").write_text(json.dumps({
            "worker": worker, "source": "registry", "tag_or_version": "latest", "schema": 2,
            "version": version, "agents": agents,
        }))

    def advance(self, **delta: float) -> None:
        self.now[0] = self.now[0] + timedelta(**delta)

    async def install_v1(self) -> dict[str, Any]:
        """The checklist's "installed_v1": kanban declared ^1.4 (1.6.1), then
        `download-kit acme/team@^1` applied with defaults."""
        self.declare(kanban=("^1.4", "1.6.1"))
        planned = await self.call("directory::download-kit", {"kit": "acme/team@^1"})
        applied = await self.call("directory::kits::apply", {"plan_id": planned["plan"]["plan_id"]})
        assert applied["status"] == "applied", applied
        return applied


@pytest.fixture
def mock_registry() -> Iterator[MockRegistry]:
    with MockRegistry() as registry:
        yield registry


@pytest.fixture
def kits(settings: Settings, roots: dict[str, Path], mock_registry: MockRegistry,
         monkeypatch: pytest.MonkeyPatch) -> KitEnv:
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
    return KitEnv(directory, engine, catalog, mock_registry, roots, now)
