"""`directory::on-config-change` (surfaces.md §2.3): re-fetch, refuse topology changes, reject
invalid values, apply tunables live and re-evaluate bindings; always `{"ok": true}`."""

from __future__ import annotations

from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.functions import internal
from iii_directory.port import EngineCallError, StandaloneEngine
from iii_directory.table import BindingSpec, FunctionTable, Surface

HOOK = BindingSpec("hook", "harness::hook::pre-generate", "directory::pre-generate",
                   config=lambda s: {"priority": 100, "min": s.hint_min_workers}, enabled=lambda s: s.inject_hint)


class ConfigEngine(StandaloneEngine):
    def __init__(self) -> None:
        super().__init__()
        self.value: Any = None
        self.error: EngineCallError | None = None
        self.changes: list[tuple[str, bool, dict[str, Any]]] = []

    async def call(self, function_id: str, data: Any, **kwargs: Any) -> Any:
        if function_id == "configuration::get":
            if self.error is not None:
                raise self.error
            return {"id": data["id"], "value": self.value}
        return await super().call(function_id, data, **kwargs)

    async def set_binding(self, key: str, trigger_type: str, function_id: str, config: Any, active: bool) -> None:
        self.changes.append((key, active, dict(config)))
        await super().set_binding(key, trigger_type, function_id, config, active)


@pytest.fixture
def engine() -> ConfigEngine:
    return ConfigEngine()


@pytest.fixture
def directory(settings: Settings, engine: ConfigEngine) -> Directory:
    table = FunctionTable.merge([internal.SURFACE, Surface(bindings=(HOOK,))])
    return Directory(settings=settings, engine=engine, table=table)


async def change(directory: Directory, engine: ConfigEngine, **fields: Any) -> Any:
    engine.value = {**directory.settings.model_dump(mode="json"), **fields}
    return await directory.invoke("directory::on-config-change", {"ignored": True})


async def test_tunable_applies_and_listeners_run(directory: Directory, engine: ConfigEngine) -> None:
    seen: list[int] = []
    directory.settings_listeners.append(lambda _old, new: seen.append(new.registry_cache_ttl_ms))
    assert await change(directory, engine, registry_cache_ttl_ms=5) == {"ok": True}
    assert directory.settings.registry_cache_ttl_ms == 5 and seen == [5]
    assert engine.changes == []


async def test_inject_hint_binds_then_unbinds(directory: Directory, engine: ConfigEngine) -> None:
    await change(directory, engine, inject_hint=True)
    assert engine.changes == [("hook", True, {"priority": 100, "min": 2})]
    assert "hook" in engine.bindings
    await change(directory, engine, hint_min_workers=4)
    assert engine.changes[-1] == ("hook", True, {"priority": 100, "min": 4})  # config changed → re-bound
    await change(directory, engine, inject_hint=False)
    assert engine.changes[-1][:2] == ("hook", False) and "hook" not in engine.bindings


async def test_topology_change_keeps_everything(directory: Directory, engine: ConfigEngine,
                                               caplog: pytest.LogCaptureFixture) -> None:
    before = directory.settings
    assert await change(directory, engine, agents_folder="/else", registry_cache_ttl_ms=1, inject_hint=True) == {"ok": True}
    assert directory.settings is before and engine.changes == []
    assert "restart required" in caplog.text and "agents_folder" in caplog.text


async def test_topology_compares_against_the_boot_snapshot(directory: Directory, engine: ConfigEngine) -> None:
    await change(directory, engine, registry_cache_ttl_ms=5)
    # putting the boot value back is not a topology change
    await change(directory, engine, skills_folder=directory.boot_settings.skills_folder, registry_cache_ttl_ms=6)
    assert directory.settings.registry_cache_ttl_ms == 6


async def test_invalid_value_is_rejected(directory: Directory, engine: ConfigEngine,
                                         caplog: pytest.LogCaptureFixture) -> None:
    before = directory.settings
    assert await change(directory, engine, download_timeout_ms="soon") == {"ok": True}
    assert directory.settings is before
    assert "configuration change rejected" in caplog.text and "download_timeout_ms" in caplog.text


async def test_fetch_failure_keeps_previous(directory: Directory, engine: ConfigEngine,
                                            caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_sleep(_seconds: float) -> None:
        return None

    monkeypatch.setattr("iii_directory.config_boot.anyio.sleep", no_sleep)
    before = directory.settings
    engine.error = EngineCallError("TIMEOUT", "slow")
    assert await directory.invoke("directory::on-config-change", {}) == {"ok": True}
    assert directory.settings is before
    assert "re-fetch failed" in caplog.text


def test_binding_spec_and_metadata() -> None:
    spec = internal.SURFACE.functions[0]
    assert spec.id == "directory::on-config-change"
    assert spec.metadata == {"internal": True}
    assert spec.description == ("Internal: reload tunable iii-directory settings from the authoritative "
                                "configuration when it changes.")
    binding = internal.SURFACE.bindings[0]
    assert (binding.trigger_type, binding.function_id) == ("configuration", "directory::on-config-change")
    assert binding.config(Settings()) == {"configuration_id": "iii-directory", "event_types": ["configuration:updated"]}
