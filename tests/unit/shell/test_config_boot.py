"""Configuration boot and re-fetch rules (surfaces.md §2.3) against a scripted `call`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iii_directory.config import InvalidSettings, Settings, config_id
from iii_directory.config_boot import (
    ConfigCallFailed,
    RetryPolicy,
    boot_settings,
    config_call,
    fetch_settings,
    SeedUnreadable,
    read_seed,
)
from iii_directory.port import EngineCallError

FAST = RetryPolicy(attempts=3, timeout_s=1.0, sleep_s=0.0)


class FakeConfigWorker:
    """Answers configuration calls from a script: a value (or an error) per call."""

    def __init__(self, stored: Any = None, *, missing: bool = False) -> None:
        self.stored = stored
        self.missing = missing
        self.calls: list[tuple[str, dict[str, Any], float]] = []
        self.failures: dict[str, list[EngineCallError]] = {}

    async def __call__(self, function_id: str, data: dict[str, Any], *, timeout: float) -> Any:
        self.calls.append((function_id, data, timeout))
        queue = self.failures.get(function_id)
        if queue:
            raise queue.pop(0)
        if function_id == "configuration::get":
            if self.missing:
                raise EngineCallError("NOT_FOUND", f"configuration '{data['id']}' not found")
            return {"id": data["id"], "value": self.stored}
        if function_id == "configuration::register":
            self.missing = False
            if "initial_value" in data:
                self.stored = data["initial_value"]
            return {**data, "value": self.stored}
        raise AssertionError(function_id)

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]

    def registration(self) -> dict[str, Any]:
        return next(c[1] for c in self.calls if c[0] == "configuration::register")


async def test_missing_entry_is_seeded_with_defaults() -> None:
    worker = FakeConfigWorker(missing=True)
    settings = await boot_settings(worker, "iii-directory", None, FAST)
    assert worker.names() == ["configuration::get", "configuration::register", "configuration::get"]
    registration = worker.registration()
    assert registration["initial_value"] == Settings().model_dump(mode="json")
    assert registration["name"] == "iii-directory"
    assert registration["description"].startswith("Skills/prompts folders, workers-registry URL")
    assert registration["schema"]["example"] == Settings().model_dump(mode="json")
    assert settings == Settings()


async def test_null_value_is_seeded_with_defaults() -> None:
    worker = FakeConfigWorker(stored=None)
    await boot_settings(worker, "iii-directory", None, FAST)
    assert "initial_value" in worker.registration()


async def test_stored_value_is_authoritative() -> None:
    worker = FakeConfigWorker(stored={"registry_cache_ttl_ms": 5})
    settings = await boot_settings(worker, "iii-directory", None, FAST)
    assert "initial_value" not in worker.registration()
    assert settings.registry_cache_ttl_ms == 5


async def test_seed_wins_over_stored_value() -> None:
    worker = FakeConfigWorker(stored={"registry_cache_ttl_ms": 5})
    settings = await boot_settings(worker, "iii-directory", {"registry_cache_ttl_ms": 7}, FAST)
    assert worker.registration()["initial_value"] == {"registry_cache_ttl_ms": 7}
    assert settings.registry_cache_ttl_ms == 7


async def test_invalid_seed_is_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    worker = FakeConfigWorker(stored={"registry_cache_ttl_ms": 5})
    settings = await boot_settings(worker, "iii-directory", {"download_timeout_ms": 0}, FAST)
    assert "initial_value" not in worker.registration()
    assert settings.registry_cache_ttl_ms == 5
    assert "relying on existing configuration entry" in caplog.text


async def test_invalid_stored_value_is_fatal() -> None:
    worker = FakeConfigWorker(stored={"function_search_mode": "psychic"})
    with pytest.raises(InvalidSettings, match="function_search_mode"):
        await boot_settings(worker, "iii-directory", None, FAST)


async def test_unreachable_configuration_worker_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    worker = FakeConfigWorker()
    worker.failures["configuration::get"] = [EngineCallError("function_not_found", "no configuration worker")] * 3
    settings = await boot_settings(worker, "iii-directory", {"registry_cache_ttl_ms": 3}, FAST)
    assert worker.names() == ["configuration::get"] * 3
    assert settings.registry_cache_ttl_ms == 3
    assert "configuration::get failed after 3 attempts" in caplog.text


async def test_retries_then_succeeds_with_sleeps(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr("iii_directory.config_boot.anyio.sleep", fake_sleep)
    worker = FakeConfigWorker(stored={})
    worker.failures["configuration::register"] = [EngineCallError("TIMEOUT", "t1"), EngineCallError("TIMEOUT", "t2")]
    await boot_settings(worker, "iii-directory", None, RetryPolicy())
    assert worker.names().count("configuration::register") == 3
    assert slept == [0.25, 0.5]
    assert all(timeout == 5.0 for _f, _d, timeout in worker.calls)


async def test_final_error_names_function_and_last_error() -> None:
    worker = FakeConfigWorker()
    worker.failures["configuration::get"] = [EngineCallError("TIMEOUT", f"try {n}") for n in range(3)]
    with pytest.raises(ConfigCallFailed) as caught:
        await config_call(worker, "configuration::get", {"id": "x"}, FAST)
    assert str(caught.value) == "configuration::get failed after 3 attempts: TIMEOUT: try 2"


async def test_not_found_is_not_retried() -> None:
    worker = FakeConfigWorker(missing=True)
    with pytest.raises(EngineCallError):
        await config_call(worker, "configuration::get", {"id": "x"}, FAST)
    assert len(worker.calls) == 1


async def test_fetch_settings_null_means_defaults() -> None:
    assert await fetch_settings(FakeConfigWorker(stored=None), "iii-directory", FAST) == Settings()


def test_config_id_honours_iii_config_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("III_CONFIG_NAME", "directory-two")
    assert config_id() == "directory-two"
    monkeypatch.setenv("III_CONFIG_NAME", "  ")
    assert config_id() == "iii-directory"


def test_read_seed(tmp_path: Path) -> None:
    good = tmp_path / "c.yaml"
    good.write_text("registry_cache_ttl_ms: 9\n")
    assert read_seed(str(good)) == {"registry_cache_ttl_ms": 9}
    empty = tmp_path / "e.yaml"
    empty.write_text("")
    assert read_seed(str(empty)) == {}
    assert read_seed(None) is None
    assert read_seed("") is None


@pytest.mark.parametrize(("name", "content", "reason"), [
    ("missing.yaml", None, "does not exist"),
    ("folder", "<dir>", "cannot be read"),
    ("l.yaml", "- 1\n", "must hold a YAML mapping"),
    ("b.yaml", "a: [\n", "is not valid YAML"),
    ("bin.yaml", b"\xff\xfe\x00bad", "cannot be read"),
])
def test_a_named_config_that_cannot_be_read_or_parsed_is_an_error(
        tmp_path: Path, name: str, content: Any, reason: str) -> None:
    """Issue 17, defect 5: a config the user names is never silently replaced by defaults."""
    path = tmp_path / name
    if content == "<dir>":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(SeedUnreadable) as caught:
        read_seed(str(path))
    assert str(path) in str(caught.value) and reason in str(caught.value)

