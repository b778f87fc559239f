"""`KitEnv`: one project with a Directory on a scripted Compose engine, the loopback
MockRegistry with the `acme/team` catalogue, a fixed clock and file helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from kitfake import FakeComposeEngine, KitCatalog, team_v11

from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.kits.lock import Lock, load_lock
from iii_directory.kits.service import KitsService
from iii_directory.testing.registry import MockRegistry
from iii_directory.testing.schema_check import first_error

T0 = datetime(2026, 10, 8, 14, 2, 11, tzinfo=UTC)
FLOW = "skills/acme/team/tickets/flow.md"
LEGACY_PATH = "skills/acme/team/legacy/old.md"


def by_path(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A plan's files by install path."""
    return {f["path"]: f for f in plan["files"]}


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
        """Invoke a function; its result must satisfy the function's published response schema."""
        result = await self.directory.invoke(function_id, data or {})
        spec = self.directory.table.functions[function_id]
        schema = spec.response_schema()
        if schema is not None and function_id.startswith(("directory::kits::", "directory::download-kit")):
            problem = first_error(result, schema)
            assert problem is None, f"{function_id} answered outside its schema: {problem}"
        return result

    async def fails(self, function_id: str, data: dict[str, Any]) -> DirectoryError:
        """The coded error a call must end with."""
        with pytest.raises(DirectoryError) as caught:
            await self.call(function_id, data)
        return caught.value

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

    async def update_pending(self) -> Path:
        """`install_v1`, then acme/team 1.1.0 published and the update schedule set to check at
        once (hourly after): the path of the update cache, removed so its return marks a check."""
        await self.install_v1()
        await self.service.drain()
        cache = self.project / ".iii" / "directory" / "kit-updates.json"
        cache.unlink()
        self.catalog.publish("acme/team", team_v11())
        self.service.first_check_delay_s = 0.0
        self.service.update_interval_s = 3600.0
        return cache
