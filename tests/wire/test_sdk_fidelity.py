"""Fidelity of the test engine: a tiny worker built on the official Python SDK (`iii-sdk`)
connects to it next to the directory worker, registers a function, is invoked, invokes one of
ours (result and coded error), receives a configuration event through a trigger binding, and
survives an engine-side drop with a reconnect and replay (protocol.md §18, "Conformance")."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

iii = pytest.importorskip("iii")

from iii_helpers.observability.reconnection import ReconnectionConfig  # noqa: E402

from iii_directory.port import EngineCallError  # noqa: E402

pytestmark = [pytest.mark.wire, pytest.mark.timeout(90)]

SDK_NAME = "sdk-fidelity"


@pytest.fixture
def sdk_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OTEL_ENABLED", "false")
    for name in ("III_WORKER_NAME", "III_NAMESPACE", "III_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    yield


async def _connect_sdk(url: str) -> Any:
    options = iii.InitOptions(
        worker_name=SDK_NAME,
        worker_description="SDK fidelity probe",
        enable_metrics_reporting=False,
        otel={"enabled": False},
        invocation_timeout_ms=10_000,
        reconnection_config=ReconnectionConfig(initial_delay_ms=50, max_delay_ms=200),
    )
    return await anyio.to_thread.run_sync(lambda: iii.register_worker(url, options))


async def test_official_sdk_worker_against_the_test_engine(wire, sdk_env) -> None:
    engine = wire.engine
    config_events: list[dict[str, Any]] = []
    sdk = await _connect_sdk(engine.url)
    try:
        def greet(data: dict[str, Any]) -> dict[str, Any]:
            return {"greeting": f"Hello {data['name']}"}

        def on_config(data: dict[str, Any]) -> dict[str, bool]:
            config_events.append(data)
            return {"ok": True}

        sdk.register_function("sdk::greet", greet, description="Greets",
                              request_format={"type": "object", "properties": {"name": {"type": "string"}}})
        sdk.register_function("sdk::on-config", on_config, metadata={"internal": True})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            sdk.register_trigger({"type": "configuration", "function_id": "sdk::on-config",
                                  "config": {"configuration_id": "iii-directory",
                                             "event_types": ["configuration:updated"]}})
        await engine.wait_for(lambda: engine.function("sdk::greet") and engine.function("sdk::on-config")
                              and engine.bindings_of("configuration", active_only=True)
                              and any(b.function_id == "sdk::on-config" for b in engine.bindings.values()))

        # registration as the engine sees it
        conn = engine.worker(SDK_NAME)
        assert conn is not None and isinstance(conn.pid, int) and conn.namespace == "default"
        listed = await wire.call("engine::workers::list", {})
        assert any(w["name"] == SDK_NAME and w["runtime"] == "python" for w in listed["workers"])

        # a call into the SDK worker (from our test client, through the engine)
        assert await wire.call("sdk::greet", {"name": "Ada"}) == {"greeting": "Hello Ada"}

        # the SDK worker calls one of ours
        info = await anyio.to_thread.run_sync(lambda: sdk.trigger({
            "function_id": "directory::engine::functions::info", "payload": {"function_id": "sdk::greet"}}))
        assert info["function_id"] == "sdk::greet"
        assert info["worker_name"] == SDK_NAME
        assert info["description"] == "Greets"
        assert info["request_schema"] == {"type": "object", "properties": {"name": {"type": "string"}}}

        # ... and sees our coded error unchanged
        with pytest.raises(iii.InvocationError) as caught:
            await anyio.to_thread.run_sync(lambda: sdk.trigger({
                "function_id": "directory::engine::functions::info", "payload": {"function_id": " "}}))
        assert caught.value.code == "invocation_failed"
        assert "function_id must be non-empty" in str(caught.value)

        # a configuration event reaches the SDK's binding
        await engine.set_config({**engine.config_value(), "registry_cache_ttl_ms": 1234})
        await engine.wait_for(lambda: config_events)
        assert config_events[0]["event_type"] == "configuration:updated"
        assert config_events[0]["new_value"]["registry_cache_ttl_ms"] == 1234
        assert "_caller_worker_id" not in config_events[0]
        await engine.wait_for(lambda: wire.directory.settings.registry_cache_ttl_ms == 1234)

        # reconnect with replay: both the SDK worker and ours come back and answer
        first_id = conn.worker_id
        await engine.drop_connections()
        await engine.wait_for(lambda: (c := engine.worker(SDK_NAME)) is not None and c.worker_id != first_id
                              and engine.function("sdk::greet") is not None, timeout=15)
        await engine.wait_for(lambda: engine.function("directory::engine::functions::info") is not None, timeout=15)
        await wire.client.connection.wait_connected()
        assert await wire.call("sdk::greet", {"name": "again"}) == {"greeting": "Hello again"}
        with pytest.raises(EngineCallError) as missing:
            await wire.call("sdk::nope", {})
        assert missing.value.code == "function_not_found"
    finally:
        await anyio.to_thread.run_sync(sdk.shutdown)
