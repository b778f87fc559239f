"""The worker shell through the real protocol: registration, invocation both ways, baggage,
coded errors, void calls, trigger fan-out, reattach with replay, shutdown and hot reload."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from wire_harness import Wire, fast_worker, running_worker, wait_registered
from shell_sample import HOOK_TYPE, ON_CHANGE, sample_table

from iii_directory.config import Settings, config_id
from iii_directory.port import EngineCallError
from iii_directory.protocol.errors import NamespaceConflict
from iii_directory.testing.engine import PeerCall, TestEngine

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]


@pytest.fixture
async def shell(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Wire]:
    async with running_worker(settings, monkeypatch, table=sample_table()) as (engine, worker, client):
        yield Wire(engine=engine, worker=worker, client=client)


# ------------------------------------------------------------------ registration

async def test_every_table_entry_is_registered_in_order(wire) -> None:
    engine, worker = wire.engine, wire.worker
    worker_id = worker.connection.worker_id
    frames = engine.frames_of(worker_id)
    kinds = [f["type"] for f in frames]
    table = worker.table

    registered = {f["id"]: f for f in frames if f["type"] == "registerfunction"}
    assert set(registered) == set(table.functions)
    for function_id, spec in table.functions.items():
        sent = {k: v for k, v in registered[function_id].items() if k != "type"}
        assert sent == spec.registration()
        entry = engine.function(function_id)
        assert entry is not None and entry.owner is not None and entry.owner.worker_id == worker_id

    types = [f["id"] for f in frames if f["type"] == "registertriggertype"]
    assert types == [t.id for t in table.trigger_types]
    for trigger_type in table.trigger_types:
        assert ("default", trigger_type.id) in engine.trigger_types

    bindings = [f for f in frames if f["type"] == "registertrigger"]
    expected = [b for b in table.bindings if b.enabled(wire.directory.settings)]
    assert [(b["trigger_type"], b["function_id"]) for b in bindings] == [
        (b.trigger_type, b.function_id) for b in expected]
    config = next(b for b in bindings if b["trigger_type"] == "configuration")
    assert config["config"] == {"configuration_id": "iii-directory", "event_types": ["configuration:updated"]}

    if types:
        assert kinds.index("registertriggertype") < kinds.index("registerfunction")
    assert kinds.index("registerfunction") < kinds.index("registertrigger")

    register = [f for f in frames if f["type"] == "invokefunction" and f["function_id"] == "engine::workers::register"]
    assert len(register) == 1
    assert register[0]["action"] == {"type": "void"} and "invocation_id" not in register[0]
    data = register[0]["data"]
    assert data["runtime"] == "python" and data["name"] == "iii-directory"
    assert isinstance(data["pid"], int) and data["namespace"] is None
    assert data["telemetry"]["framework"] == "iii-directory" and data["telemetry"]["language"] == "python"
    assert engine.worker("iii-directory") is not None


async def test_configuration_boot_sequence_on_the_wire(shell: Wire) -> None:
    calls = [f for f in shell.engine.frames_of(shell.worker_id, kind="invokefunction")
             if f["function_id"].startswith("configuration::")]
    assert [c["function_id"] for c in calls] == ["configuration::get", "configuration::register", "configuration::get"]
    assert all(c["namespace"] == "default" for c in calls)
    register = calls[1]["data"]
    assert register["id"] == "iii-directory" and register["name"] == "iii-directory"
    assert "initial_value" not in register  # a stored value is authoritative
    assert register["schema"]["$schema"] == "http://json-schema.org/draft-07/schema#"


async def test_engine_functions_list_sees_the_worker(shell: Wire) -> None:
    listed = await shell.client.call("engine::functions::list", {"prefix": "sample::"})
    ids = [f["function_id"] for f in listed["functions"]]
    assert "sample::echo" in ids and "sample::coded" not in ids  # internal hidden
    assert all(f["worker_name"] == "iii-directory" for f in listed["functions"])
    workers = await shell.client.call("engine::workers::list", {})
    assert any(w["name"] == "iii-directory" and w["runtime"] == "python" for w in workers["workers"])


# -------------------------------------------------------------------- invocation

async def test_baggage_traceparent_and_caller_reach_the_handler(shell: Wire) -> None:
    traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    result = await shell.client.call("sample::echo", {"text": "hi"}, baggage="iii.session.id=s-123,iii.message.id=m-1",
                                     traceparent=traceparent)
    assert result["text"] == "hi"
    assert result["session_id"] == "s-123"
    assert result["baggage"] == {"iii.session.id": "s-123", "iii.message.id": "m-1", "iii.function.id": "sample::echo"}
    assert result["traceparent"] == traceparent
    assert result["caller_worker_id"] == shell.client.worker_id  # `_caller_worker_id` tolerated
    frame = shell.engine.frames_of(shell.worker_id, kind="invocationresult")[-1]
    assert frame["traceparent"] == traceparent


async def test_metadata_sidecar_and_engine_calls_without_caller(shell: Wire) -> None:
    result = await shell.engine.invoke("sample::echo", {"text": "x"}, metadata={"trigger": "t1"})
    assert result["metadata"] == {"trigger": "t1"}
    assert result["caller_worker_id"] is None
    assert result["session_id"] is None


async def test_nested_calls_resend_baggage_and_traceparent(shell: Wire) -> None:
    seen: list[PeerCall] = []

    async def probe(data: Any, call: PeerCall) -> dict[str, Any]:
        seen.append(call)
        return {"got": data}

    shell.engine.add_function("peer::probe", probe)
    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    result = await shell.client.call("sample::nested", {"target": "peer::probe", "data": {"n": 1}},
                                     baggage="iii.session.id=s-9", traceparent=traceparent)
    assert result["result"]["got"]["n"] == 1
    assert result["result"]["got"]["_caller_worker_id"] == shell.worker_id
    assert seen[0].traceparent == traceparent
    assert seen[0].baggage is not None and "iii.session.id=s-9" in seen[0].baggage
    assert "iii.function.id=peer::probe" in seen[0].baggage


async def test_coded_plain_validation_and_crash_errors(shell: Wire) -> None:
    with pytest.raises(EngineCallError) as coded:
        await shell.client.call("sample::coded", {"id": "x"})
    assert coded.value.code == "D110"
    assert coded.value.message == 'D110 not_found: skill "x" does not exist.'

    with pytest.raises(EngineCallError) as plain:
        await shell.client.call("sample::plain", {})
    assert (plain.value.code, plain.value.message) == ("invocation_failed", "id must be non-empty")

    with pytest.raises(EngineCallError) as invalid:
        await shell.client.call("sample::coded", {"id": 5})
    assert invalid.value.code == "invocation_failed"
    assert invalid.value.message == 'invalid request: field "id": expected a string'

    with pytest.raises(EngineCallError) as crash:
        await shell.client.call("sample::broken", {})
    assert (crash.value.code, crash.value.message) == ("invocation_failed", "boom")

    for frame in shell.engine.frames_of(shell.worker_id, kind="invocationresult"):
        assert "stacktrace" not in (frame.get("error") or {})


async def test_unknown_function_answers_function_not_found(shell: Wire) -> None:
    await shell.engine.send_raw("iii-directory", {"type": "invokefunction", "invocation_id": "inv-nope",
                                                  "function_id": "sample::nope", "data": {}})
    reply = await shell.engine.wait_for(lambda: [f for f in shell.engine.frames_of(shell.worker_id, kind="invocationresult")
                                                 if f["invocation_id"] == "inv-nope"])
    assert reply[0]["error"] == {"code": "function_not_found", "message": "Function 'sample::nope' not found"}


async def test_garbage_frames_are_dropped_and_ping_answered(shell: Wire) -> None:
    for raw in ("", "not json", "[1,2]", '{"type":"bogus"}', '{"no":"type"}', b'{"type":"ping"}'):
        await shell.engine.send_raw("iii-directory", raw)
    await shell.engine.wait_for(lambda: shell.engine.frames_of(shell.worker_id, kind="pong"))
    assert (await shell.client.call("sample::echo", {"text": "still alive"}))["text"] == "still alive"


async def test_void_calls_both_ways(shell: Wire) -> None:
    received: list[Any] = []

    async def sink(data: Any) -> dict[str, bool]:
        received.append(data)
        return {"ok": True}

    shell.engine.add_function("peer::sink", sink)
    assert await shell.client.call("sample::fire", {"target": "peer::sink", "data": {"a": 1}}) == {"ok": True}
    await shell.engine.wait_for(lambda: received)
    assert received[0]["a"] == 1
    void = [f for f in shell.engine.frames_of(shell.worker_id, kind="invokefunction") if f["function_id"] == "peer::sink"]
    assert void[0]["action"] == {"type": "void"} and "invocation_id" not in void[0]

    shell.client.fire("sample::slow", {"seconds": 0})
    await shell.engine.wait_for(lambda: [f for f in shell.engine.frames_of(shell.worker_id, direction="out",
                                                                            kind="invokefunction")
                                         if f["function_id"] == "sample::slow"])


async def test_outgoing_call_times_out_locally(shell: Wire) -> None:
    async def stall(_data: Any) -> None:
        await anyio.sleep(5)

    shell.engine.add_function("slow::thing", stall)
    with pytest.raises(EngineCallError) as caught:
        await shell.client.call("sample::nested", {"target": "slow::thing", "timeout_ms": 200})
    assert caught.value.code == "invocation_failed"
    assert "TIMEOUT" in caught.value.message and "invocation timed out after 200ms" in caught.value.message


async def test_trigger_fan_out_to_subscribers(shell: Wire) -> None:
    events = shell.client.subscribe(ON_CHANGE)
    metadata_seen: list[Any] = []

    async def listener(data: Any, invocation: Any) -> dict[str, bool]:
        metadata_seen.append((data, invocation.metadata))
        return {"ok": True}

    shell.client.register_function("client::listener", listener)
    shell.client.bind(ON_CHANGE, "client::listener", {"kinds": ["x"]}, metadata={"m": 1})
    await shell.engine.wait_for(lambda: len(shell.worker.connection.subscribers(ON_CHANGE)) == 2)
    await shell.client.call("sample::emit", {"op": "create"})
    assert await events.wait_for(1) == [{"op": "create"}]
    await shell.engine.wait_for(lambda: metadata_seen)
    data, metadata = metadata_seen[0]
    assert data == {"op": "create", "_caller_worker_id": shell.worker_id}  # fan-out is worker-originated
    assert metadata == {"m": 1}
    fan_out = [f for f in shell.engine.frames_of(shell.worker_id, kind="invokefunction")
               if f["function_id"] == "client::listener"]
    assert fan_out[0]["action"] == {"type": "void"} and fan_out[0]["metadata"] == {"m": 1}


async def test_unregister_trigger_stops_fan_out(shell: Wire) -> None:
    binding_id = shell.client.bind(ON_CHANGE, "client::gone", {})
    await shell.engine.wait_for(lambda: binding_id in shell.worker.connection.subscribers(ON_CHANGE))
    shell.client.connection.unbind(binding_id)
    await shell.engine.wait_for(lambda: binding_id not in shell.worker.connection.subscribers(ON_CHANGE))
    assert binding_id not in shell.worker.connection.subscribers(ON_CHANGE)


# ------------------------------------------------------------ reconnect & replay

async def test_socket_killed_mid_session_reattaches_and_replays_once(shell: Wire) -> None:
    engine, worker = shell.engine, shell.worker
    old_id = shell.worker_id
    old_token = worker.connection.reattach_token
    old_bindings = [f["id"] for f in engine.frames_of(old_id, kind="registertrigger")]
    events = shell.client.subscribe(ON_CHANGE)
    await engine.wait_for(lambda: worker.connection.subscribers(ON_CHANGE))

    assert await engine.drop_connections() >= 2
    await engine.wait_for(lambda: worker.connection.sessions == 2 and worker.connection.connected, timeout=10)
    new_id = worker.connection.worker_id
    assert new_id != old_id
    await engine.wait_for(lambda: engine.worker("iii-directory") is not None
                          and engine.function("sample::echo") is not None, timeout=10)

    frames = engine.frames_of(new_id)
    assert frames[0] == {"type": "reattach", "previous_worker_id": old_id, "reattach_token": old_token}
    assert (old_id, new_id) in engine.reattaches
    functions = [f["id"] for f in frames if f["type"] == "registerfunction"]
    assert sorted(functions) == sorted(worker.table.functions) and len(functions) == len(set(functions))
    types = [f["id"] for f in frames if f["type"] == "registertriggertype"]
    assert types == [ON_CHANGE]
    assert [f["id"] for f in frames if f["type"] == "registertrigger"] == old_bindings
    kinds = [f["type"] for f in frames]
    register_at = max(i for i, f in enumerate(frames) if f.get("function_id") == "engine::workers::register")
    assert kinds.index("registertriggertype") < kinds.index("registerfunction") < kinds.index("registertrigger") < register_at

    # after the replay the worker re-reads its configuration once
    await engine.wait_for(lambda: [f for f in engine.frames_of(new_id, kind="invokefunction")
                                   if f["function_id"] == "configuration::get"])

    # the next invocation succeeds, and the re-forwarded subscription receives events again
    await shell.client.connection.wait_connected()
    result = await shell.client.call("sample::echo", {"text": "after-reconnect"})
    assert result["text"] == "after-reconnect"
    await engine.wait_for(lambda: worker.connection.subscribers(ON_CHANGE))
    await shell.client.call("sample::emit", {"op": "update"})
    assert (await events.wait_for(1))[-1] == {"op": "update"}


async def test_in_flight_call_fails_with_invocation_stopped_when_worker_drops(shell: Wire) -> None:
    async def call_slow() -> EngineCallError:
        with pytest.raises(EngineCallError) as caught:
            await shell.engine.invoke("sample::slow", {"seconds": 5})
        return caught.value

    outcome: list[EngineCallError] = []

    async def run() -> None:
        outcome.append(await call_slow())

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await shell.engine.wait_for(lambda: any(c.inbound for c in shell.engine.connections.values()))
        await shell.engine.drop_connections()
    assert outcome[0].code == "invocation_stopped"


# ---------------------------------------------------------------- lifecycle

async def test_second_worker_with_the_same_name_is_refused(shell: Wire) -> None:
    twin = fast_worker(shell.engine.url, table=sample_table())
    with anyio.fail_after(10), pytest.raises(NamespaceConflict):
        await twin.run()
    assert shell.engine.worker("iii-directory") is shell.engine.connections[shell.worker_id]


async def test_shutdown_lets_in_flight_calls_finish(settings: Settings) -> None:
    async with TestEngine(functions_debounce_s=0.05) as engine:
        engine.configuration.put(config_id(), settings.model_dump(mode="json"))
        worker = fast_worker(engine.url, table=sample_table(), shutdown_grace_s=5.0)
        async with anyio.create_task_group() as tg, engine.client() as client:
            tg.start_soon(worker.run)
            await worker.ready.wait()
            await wait_registered(engine, worker)
            results: list[Any] = []

            async def slow_call() -> None:
                results.append(await client.call("sample::slow", {"seconds": 0.3}))

            tg.start_soon(slow_call)
            await engine.wait_for(lambda: worker.connection.in_flight)
            worker.stop()
            await engine.wait_for(lambda: results)
            assert results == [{"ok": True}]


async def test_shutdown_grace_exceeded_fails_clearly(settings: Settings) -> None:
    async with TestEngine(functions_debounce_s=0.05) as engine:
        engine.configuration.put(config_id(), settings.model_dump(mode="json"))
        worker = fast_worker(engine.url, table=sample_table(), shutdown_grace_s=0.2)
        async with anyio.create_task_group() as tg, engine.client() as client:
            tg.start_soon(worker.run)
            await worker.ready.wait()
            await wait_registered(engine, worker)
            errors: list[EngineCallError] = []

            async def slow_call() -> None:
                with pytest.raises(EngineCallError) as caught:
                    await client.call("sample::slow", {"seconds": 30})
                errors.append(caught.value)

            tg.start_soon(slow_call)
            await engine.wait_for(lambda: worker.connection.in_flight)
            worker.stop()
            await engine.wait_for(lambda: errors)
            assert errors[0].code == "invocation_stopped"
            assert "sample::slow" in errors[0].message


# --------------------------------------------------------------- hot reload

async def _reload(shell: Wire, change: dict[str, Any]) -> None:
    value = {**shell.engine.config_value(), **change}
    await shell.engine.set_config(value)


async def test_tunable_change_applies_live(shell: Wire) -> None:
    directory = shell.worker.directory
    assert directory is not None
    seen: list[tuple[int, int]] = []
    directory.settings_listeners.append(lambda old, new: seen.append((old.registry_cache_ttl_ms, new.registry_cache_ttl_ms)))
    await _reload(shell, {"registry_cache_ttl_ms": 5})
    assert directory.settings.registry_cache_ttl_ms == 5
    assert seen == [(60000, 5)]


async def test_topology_change_is_refused_and_old_value_kept(shell: Wire, caplog: pytest.LogCaptureFixture) -> None:
    directory = shell.worker.directory
    assert directory is not None
    before = directory.settings
    await _reload(shell, {"skills_folder": "/elsewhere", "registry_cache_ttl_ms": 7})
    assert directory.settings is before  # tunables not partially applied either
    assert "restart required" in caplog.text


async def test_invalid_value_is_rejected_and_previous_kept(shell: Wire, caplog: pytest.LogCaptureFixture) -> None:
    directory = shell.worker.directory
    assert directory is not None
    before = directory.settings
    await _reload(shell, {"registry_url": "ftp://nope", "registry_cache_ttl_ms": 9})
    assert directory.settings is before
    assert "configuration change rejected" in caplog.text and "registry_url" in caplog.text


async def test_inject_hint_flip_binds_and_unbinds_the_hook_live(shell: Wire) -> None:
    harness = shell.engine.install_harness()
    assert harness.bindings == []
    await _reload(shell, {"inject_hint": True})
    await shell.engine.wait_for(lambda: harness.bindings)
    binding = harness.bindings[0]
    assert binding.function_id == "sample::hook"
    assert binding.config == {"priority": 100, "timeout_ms": 5000, "on_error": "fail_open"}
    assert await harness.fire({"turn": 1}) == [{"ok": True}]
    await _reload(shell, {"inject_hint": False})
    await shell.engine.wait_for(lambda: not shell.engine.bindings_of(HOOK_TYPE))


async def test_on_config_change_always_answers_ok(shell: Wire) -> None:
    assert await shell.client.call("directory::on-config-change", {"anything": 1}) == {"ok": True}


# ------------------------------------------------------------- config seeding

async def _boot_once(engine: TestEngine, **options: Any) -> Settings:
    worker = fast_worker(engine.url, table=sample_table(), **options)
    async with anyio.create_task_group() as tg:
        tg.start_soon(worker.run)
        with anyio.fail_after(15):
            await worker.ready.wait()
        assert worker.directory is not None
        settings = worker.directory.settings
        worker.stop()
    return settings


async def test_config_seed_is_registered_as_initial_value(roots: dict[str, Any], tmp_path: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("III_CONFIG_NAME", raising=False)
    seed = tmp_path / "seed.yaml"
    seed.write_text(f"skills_folder: {roots['skills']}\nregistry_cache_ttl_ms: 42\n")
    async with TestEngine(functions_debounce_s=0.05) as engine:
        settings = await _boot_once(engine, config_path=str(seed))
        assert engine.config_value() == {"skills_folder": str(roots["skills"]), "registry_cache_ttl_ms": 42}
        assert settings.registry_cache_ttl_ms == 42 and settings.skills_folder == str(roots["skills"])
        entry = engine.configuration.entries["iii-directory"]
        assert entry.name == "iii-directory" and entry.schema["example"]["registry_cache_ttl_ms"] == 60000


async def test_empty_store_is_seeded_with_defaults_under_iii_config_name(roots: dict[str, Any],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("III_CONFIG_NAME", "directory-two")
    async with TestEngine(functions_debounce_s=0.05) as engine:
        settings = await _boot_once(engine)
        assert engine.config_value("directory-two") == Settings().model_dump(mode="json")
        assert settings == Settings()
        binding = next(r.frame for r in engine.frames
                       if r.frame["type"] == "registertrigger" and r.frame["trigger_type"] == "configuration")
        assert binding["config"] == {"configuration_id": "directory-two", "event_types": ["configuration:updated"]}
