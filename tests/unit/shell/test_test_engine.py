"""The in-process test engine against protocol.md §18: session, buffering, conflicts, routing,
introspection, bindings, configuration events, pushes and the collaborator fakes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from iii_directory.protocol.errors import EngineCallError
from iii_directory.testing.engine import PeerCall, TestEngine

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
async def engine() -> AsyncIterator[TestEngine]:
    async with TestEngine(functions_debounce_s=0.02, namespace_grace_s=0.3) as running:
        yield running


async def error_of(coro: Any) -> EngineCallError:
    with pytest.raises(EngineCallError) as caught:
        await coro
    return caught.value


async def _ok(_data: Any) -> dict[str, bool]:
    return {"ok": True}


# ----------------------------------------------------------------- session

async def test_raw_session_handshake_buffering_and_ping(engine: TestEngine) -> None:
    async with connect(engine.url) as ws:
        hello = json.loads(await ws.recv())
        assert hello["type"] == "workerregistered" and set(hello) == {"type", "worker_id", "reattach_token"}
        await ws.send(json.dumps({"type": "registerfunction", "id": "raw::fn", "description": "d"}))
        await ws.send("")
        await ws.send("{bad json")
        await ws.send(json.dumps({"type": "ping"}))
        assert json.loads(await ws.recv()) == {"type": "pong"}
        assert engine.function("raw::fn") is None  # buffered until engine::workers::register
        await ws.send(json.dumps({"type": "invokefunction", "function_id": "engine::workers::register",
                                  "data": {"name": "raw", "pid": 7}, "action": {"type": "void"}}).encode())
        await engine.wait_for(lambda: engine.function("raw::fn"))
        assert engine.function("raw::fn").worker_name == "raw"


async def test_grace_period_fixes_namespace_default(engine: TestEngine) -> None:
    async with connect(engine.url) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "registerfunction", "id": "late::fn"}))
        await engine.wait_for(lambda: engine.function("late::fn"), timeout=3)
        # registered without engine::workers::register: the grace period put it in `default`
        assert engine.function("late::fn", namespace="default") is not None


async def test_otel_route_is_accepted_and_discarded(engine: TestEngine) -> None:
    async with connect(engine.url + "otel") as ws:
        await ws.send(b"OTLP....")
        await ws.send(b"MTRC....")
    assert not engine.connections


async def test_worker_namespace_conflict_closes_the_second(engine: TestEngine) -> None:
    async with engine.client(name="twin") as first:
        async with connect(engine.url) as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "invokefunction", "function_id": "engine::workers::register",
                                      "data": {"name": "twin", "pid": 1}, "action": {"type": "void"}}))
            rejected = json.loads(await ws.recv())
            assert rejected == {"type": "registrationrejected", "code": "WORKER_NAMESPACE_CONFLICT",
                                "namespace": "default", "worker_name": "twin", "owner_worker_id": first.worker_id}
            with anyio.fail_after(3), pytest.raises(ConnectionClosed):
                await ws.recv()
            assert ws.close_code == 1008


async def test_function_namespace_conflict(engine: TestEngine) -> None:
    engine.add_function("taken::fn", _ok)
    async with engine.client() as client:
        client.register_function("taken::fn", _ok)
        await engine.wait_for(lambda: engine.frames_of(client.worker_id, direction="out", kind="registrationrejected"))
        frame = engine.frames_of(client.worker_id, direction="out", kind="registrationrejected")[0]
        assert frame["code"] == "FUNCTION_NAMESPACE_CONFLICT" and frame["function_id"] == "taken::fn"


async def test_reattach_token_checked(engine: TestEngine) -> None:
    async with connect(engine.url) as first:
        hello = json.loads(await first.recv())
        async with connect(engine.url) as second:
            await second.recv()
            await second.send(json.dumps({"type": "reattach", "previous_worker_id": hello["worker_id"],
                                          "reattach_token": "wrong"}))
            await engine.wait_for(lambda: engine.rejected_reattaches)
            await second.send(json.dumps({"type": "reattach", "previous_worker_id": hello["worker_id"],
                                          "reattach_token": hello["reattach_token"]}))
            await engine.wait_for(lambda: engine.reattaches)
            assert engine.reattaches[0][0] == hello["worker_id"]
            assert hello["worker_id"] not in engine.connections  # retired synchronously


# ----------------------------------------------------------------- routing

async def test_routing_caller_id_baggage_metadata_and_results(engine: TestEngine) -> None:
    async with engine.client() as a, engine.client() as b:
        async def probe(data: Any, invocation: Any) -> Any:
            return {"data": data, "baggage": invocation.baggage, "traceparent": invocation.traceparent,
                    "metadata": invocation.metadata}

        b.register_function("b::probe", probe)
        await engine.wait_for(lambda: engine.function("b::probe"))
        out = await a.call("b::probe", {"x": 1}, baggage="iii.session.id=s,iii.function.id=a::caller",
                           traceparent="00-t", metadata={"trigger": "t1"})
        assert out == {"data": {"x": 1, "_caller_worker_id": a.worker_id},
                       "baggage": "iii.session.id=s,iii.function.id=b::probe", "traceparent": "00-t",
                       "metadata": {"trigger": "t1"}}
        sent = engine.frames_of(a.worker_id, kind="invokefunction")[-1]
        received = engine.frames_of(b.worker_id, direction="out", kind="invokefunction")[-1]
        assert received["invocation_id"] == sent["invocation_id"]  # caller's id reused
        assert (await a.call("b::probe", [1, 2]))["data"] == [1, 2]  # non-objects untouched
        assert (await engine.invoke("b::probe", {"y": 2}))["data"] == {"y": 2}  # engine-originated


async def test_coded_errors_relayed_unchanged_and_not_found_hint(engine: TestEngine) -> None:
    async def coded(_data: Any) -> Any:
        raise EngineCallError("D110", "D110 not_found: skill \"x\" does not exist.")

    engine.add_function("peer::coded", coded)
    engine.add_function("state::get", _ok, namespace="orders")
    async with engine.client() as client:
        error = await error_of(client.call("peer::coded", {}))
        assert (error.code, error.message) == ("D110", 'D110 not_found: skill "x" does not exist.')
        missing = await error_of(client.call("state::get", {}))
        assert missing.code == "function_not_found"
        assert missing.message == ("Function state::get not found in namespace default. "
                                   "It is registered in namespace(s): orders.")
        assert await client.call("state::get", {}, namespace="orders") == {"ok": True}
        blank = await error_of(client.call("peer::coded", {}, namespace="  "))
        assert blank.code == "INVALID_NAMESPACE"


async def test_void_enqueue_and_no_engine_timeout(engine: TestEngine) -> None:
    seen: list[Any] = []

    async def slow(data: Any) -> Any:
        seen.append(data)
        await anyio.sleep(0.3)
        return {"done": True}

    engine.add_function("peer::slow", slow)
    async with engine.client() as client:
        client.fire("peer::slow", {"n": 1})
        await engine.wait_for(lambda: seen)
        assert not engine.frames_of(client.worker_id, direction="out", kind="invocationresult")
        assert await client.call("peer::slow", {"n": 2}, timeout=5) == {"done": True}
        client.connection._push({"type": "invokefunction", "invocation_id": "q1", "function_id": "peer::slow",
                                  "data": {}, "action": {"type": "enqueue", "queue": "q"}})
        reply = await engine.wait_for(lambda: [f for f in engine.frames_of(client.worker_id, direction="out",
                                                                           kind="invocationresult")
                                               if f["invocation_id"] == "q1"])
        assert reply[0]["error"]["code"] == "enqueue_error"


async def test_disconnect_fails_in_flight_with_invocation_stopped(engine: TestEngine) -> None:
    async with engine.client() as caller:
        callee = engine.client()
        await callee.__aenter__()
        started = anyio.Event()

        async def hang(_data: Any) -> Any:
            started.set()
            await anyio.sleep(30)

        callee.register_function("callee::hang", hang)
        await engine.wait_for(lambda: engine.function("callee::hang"))
        outcome: list[EngineCallError] = []

        async def call() -> None:
            outcome.append(await error_of(caller.call("callee::hang", {}, timeout=10)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await started.wait()
            callee.connection._ws.transport.abort()  # type: ignore[union-attr]
        assert outcome[0].code == "invocation_stopped"
        assert engine.function("callee::hang") is None
        await callee.close()


# ------------------------------------------------------------ introspection

async def test_functions_list_hiding_filters_and_search(engine: TestEngine) -> None:
    engine.add_function("alpha::send_email", _ok, description="Send an email")
    engine.add_function("beta::mailer", _ok, description="Deliver mail")
    engine.add_function("gamma::notify", _ok, description="Notify by email")
    engine.add_function("alpha::hidden", _ok, metadata={"internal": True})
    engine.add_function("engine::queue::peek", _ok)
    listed = await engine.invoke("engine::functions::list", {})
    ids = [f["function_id"] for f in listed["functions"]]
    assert ids == sorted(ids)
    assert "alpha::hidden" not in ids and "engine::functions::list" not in ids and "engine::queue::peek" in ids
    everything = await engine.invoke("engine::functions::list", {"include_internal": True})
    assert {"alpha::hidden", "engine::functions::list"} <= {f["function_id"] for f in everything["functions"]}
    searched = await engine.invoke("engine::functions::list", {"search": "mail"})
    assert [f["function_id"] for f in searched["functions"]] == ["beta::mailer", "alpha::send_email", "gamma::notify"]
    assert [f["function_id"] for f in (await engine.invoke("engine::functions::list", {"prefix": "alpha::"}))["functions"]] \
        == ["alpha::send_email"]
    by_worker = await engine.invoke("engine::functions::list", {"workers": ["beta", "gamma"]})
    assert {f["worker_name"] for f in by_worker["functions"]} == {"beta", "gamma"}
    row = next(f for f in listed["functions"] if f["function_id"] == "alpha::send_email")
    assert row == {"function_id": "alpha::send_email", "namespace": "default", "worker_name": "alpha",
                   "description": "Send an email"}


async def test_functions_info_single_batch_and_errors(engine: TestEngine) -> None:
    engine.add_function("a::one", _ok, description="One", request_format={"type": "object"}, metadata={"x": 1})
    detail = await engine.invoke("engine::functions::info", {"function_id": "a::one"})
    assert detail == {"function_id": "a::one", "namespace": "default", "worker_name": "a", "description": "One",
                      "metadata": {"x": 1}, "request_schema": {"type": "object"}, "registered_triggers": []}
    batch = await engine.invoke("engine::functions::info", {"function_ids": ["a::one", "nope::x", "a::one"]})
    assert [f["function_id"] for f in batch["functions"]] == ["a::one", "nope::x"]
    assert batch["functions"][1] == {"function_id": "nope::x", "error": "not_found"}
    for bad in ({}, {"function_id": "a::one", "function_ids": ["a::one"]}, {"function_ids": []},
                {"function_ids": [f"f::{n}" for n in range(33)]}):
        assert (await error_of(engine.invoke("engine::functions::info", bad))).code == "INVALID_ARGUMENTS"
    assert (await engine.invoke("engine::functions::info", {"function_ids": [f"f::{n}" for n in range(32)]}))
    missing = await error_of(engine.invoke("engine::functions::info", {"function_id": "nope::x"}))
    assert (missing.code, missing.message) == ("NOT_FOUND", "Function 'nope::x' is not registered.")
    engine.add_function("dup::fn", _ok, namespace="n1")
    assert (await engine.invoke("engine::functions::info", {"function_id": "dup::fn"}))["namespace"] == "n1"
    engine.add_function("dup::fn", _ok, namespace="n2")
    assert "several namespaces" in (await error_of(engine.invoke("engine::functions::info", {"function_id": "dup::fn"}))).message


async def test_triggers_and_registered_triggers(engine: TestEngine) -> None:
    engine.add_function("w::target", _ok)
    engine.add_trigger_type("cron", description="Schedules", trigger_request_format={"type": "object"})
    created = await engine.invoke("engine::register_trigger", {
        "trigger_type": "cron", "function_id": "w::target", "config": {"expression": "x" * 100}, "metadata": {"m": 1}})
    types = await engine.invoke("engine::triggers::list", {})
    assert [t["id"] for t in types["triggers"]] == ["configuration", "cron"]  # engine::* hidden
    assert "engine::functions-available" in {t["id"] for t in (await engine.invoke(
        "engine::triggers::list", {"include_internal": True}))["triggers"]}
    info = await engine.invoke("engine::triggers::info", {"id": "cron"})
    assert info["instance_count"] == 1 and info["configuration_schema"] == {"type": "object"}
    missing = await error_of(engine.invoke("engine::triggers::info", {"id": "nope"}))
    assert missing.message == "Trigger type 'nope' is not registered in namespace 'default'."
    rows = (await engine.invoke("engine::registered-triggers::list", {"trigger_type": "cron"}))["registered_triggers"]
    assert rows[0]["id"] == created["id"] and rows[0]["worker_name"] == "w"
    assert len(rows[0]["config_summary"]) == 81 and rows[0]["config_summary"].endswith("…")
    detail = await engine.invoke("engine::registered-triggers::info", {"id": created["id"]})
    assert detail["metadata"] == {"m": 1} and detail["trigger"]["id"] == "cron" and detail["function"]["function_id"] == "w::target"
    assert (await engine.invoke("engine::functions::info", {"function_id": "w::target"}))["registered_triggers"][0]["id"] == created["id"]
    assert await engine.invoke("engine::unregister_trigger", {"id": created["id"]}) == {"removed": True}
    assert await engine.invoke("engine::unregister_trigger", {"id": created["id"]}) == {"removed": False}


async def test_once_binding_fires_once(engine: TestEngine) -> None:
    hits: list[Any] = []

    async def target(data: Any) -> Any:
        hits.append(data)
        return {"ok": True}

    engine.add_function("w::wake", target)
    engine.add_trigger_type("compose-operation")
    await engine.invoke("engine::register_trigger", {"trigger_type": "compose-operation", "function_id": "w::wake",
                                                     "config": {}, "once": True})
    assert await engine.fire_trigger("compose-operation", {"n": 1}) == [{"ok": True}]
    assert await engine.fire_trigger("compose-operation", {"n": 2}) == []
    assert hits == [{"n": 1}]
    durable = await engine.invoke("engine::register_trigger", {"trigger_type": "not-provided-yet",
                                                               "function_id": "w::wake", "config": {}})
    assert not engine.bindings[durable["id"]].active  # parked
    assert await engine.fire_binding(durable["id"], {"n": 3}) == [{"ok": True}]
    assert hits[-1] == {"n": 3}


async def test_workers_list_and_info(engine: TestEngine) -> None:
    async with engine.client(name="lister") as client:
        client.register_function("lister::fn", _ok)
        await engine.wait_for(lambda: engine.function("lister::fn"))
        async with connect(engine.url) as anonymous:  # no engine::workers::register → no pid → hidden
            await anonymous.recv()
            workers = (await engine.invoke("engine::workers::list", {}))["workers"]
        names = [w["name"] for w in workers]
        assert names == sorted(names) and "lister" in names and "" not in names
        row = next(w for w in workers if w["name"] == "lister")
        assert row["function_count"] == 1 and row["status"] == "connected" and row["runtime"] == "python"
        engine_row = next(w for w in workers if w["name"] == "iii-engine-functions")
        assert (engine_row["runtime"], engine_row["status"], engine_row["isolation"]) == ("engine", "available", "in-process")
        info = await engine.invoke("engine::workers::info", {"name": "lister"})
        assert info["worker"]["pid"] and info["worker"]["internal"] is False
        assert [f["function_id"] for f in info["functions"]] == ["lister::fn"]
        gone = await error_of(engine.invoke("engine::workers::info", {"name": "ghost"}))
        assert gone.message == "Worker 'ghost' is not connected."


# ----------------------------------------------------------------- triggers

async def test_worker_provided_types_forward_park_and_relay_errors(engine: TestEngine) -> None:
    async with engine.client(name="subscriber") as subscriber:
        binding_id = subscriber.bind("prov::on-change", "subscriber::listen", {"k": 1})
        await engine.wait_for(lambda: binding_id in engine.bindings)
        assert not engine.bindings[binding_id].active  # parked: no provider yet
        async with engine.client(name="provider") as provider:
            provider.connection.register_trigger_type({"id": "prov::on-change", "description": "d"})
            await engine.wait_for(lambda: provider.connection.subscribers("prov::on-change"))
            forwarded = engine.frames_of(provider.worker_id, direction="out", kind="registertrigger")[0]
            assert forwarded == {"type": "registertrigger", "id": binding_id, "trigger_type": "prov::on-change",
                                 "function_id": "subscriber::listen", "config": {"k": 1}}
            subscriber.connection.unbind(binding_id)
            await engine.wait_for(lambda: not provider.connection.subscribers("prov::on-change"))
        # a provider that refuses: the error is relayed to the originator
        async with engine.client(name="refuser") as refuser:
            refuser.connection.register_trigger_type({"id": "ref::t", "description": "d"})
            await engine.wait_for(lambda: engine.trigger_types.get(("default", "ref::t")))
            refuser.connection._trigger_types.pop("ref::t")  # now it answers trigger_type_not_found
            bad = subscriber.bind("ref::t", "subscriber::listen")
            await engine.wait_for(lambda: engine.frames_of(subscriber.worker_id, direction="out",
                                                           kind="triggerregistrationresult"))
            relayed = engine.frames_of(subscriber.worker_id, direction="out", kind="triggerregistrationresult")[0]
            assert relayed["id"] == bad and relayed["error"]["code"] == "trigger_type_not_found"


async def test_configuration_events_and_condition_function(engine: TestEngine) -> None:
    async with engine.client() as client:
        seen = client.subscribe("configuration", {"configuration_id": "svc", "event_types": ["configuration:updated"]})
        everything = client.subscribe("configuration")
        await engine.wait_for(lambda: len(engine.bindings_of("configuration", active_only=True)) == 2)
        await client.call("configuration::register", {"id": "svc", "name": "svc", "description": "",
                                                      "schema": {"type": "object"}, "initial_value": {"a": 1}})
        await client.call("configuration::set", {"id": "svc", "value": {"a": 2}})
        await seen.wait_for(1)
        await everything.wait_for(2)
        assert seen[0]["old_value"] == {"a": 1} and seen[0]["new_value"] == {"a": 2}
        assert [e["event_type"] for e in everything] == ["configuration:registered", "configuration:updated"]
        assert "_caller_worker_id" not in seen[0]

        async def never(_data: Any) -> bool:
            return False

        engine.add_function("cond::never", never)
        gated = client.subscribe("configuration", {"condition_function_id": "cond::never"})
        await engine.wait_for(lambda: len(engine.bindings_of("configuration", active_only=True)) == 3)
        await engine.set_config({"a": 3}, config_id="svc")
        await everything.wait_for(3)
        assert gated == []


async def test_functions_and_workers_available_pushes(engine: TestEngine) -> None:
    async with engine.client() as client:
        pushes = client.subscribe("engine::functions-available")
        workers = client.subscribe("engine::workers-available")
        await engine.wait_for(lambda: len(engine.bindings_of("engine::functions-available", active_only=True)) == 1)
        engine.add_function("fresh::fn", _ok)
        engine.add_function("fresh::other", _ok)
        await pushes.wait_for(1)
        await anyio.sleep(0.1)
        burst = [p for p in pushes if any(f["function_id"] == "fresh::other" for f in p["functions"])]
        assert burst and burst[0]["event"] == "functions_changed"
        assert any(f["function_id"] == "engine::functions::list" for f in burst[0]["functions"])  # full list
        async with engine.client(name="joiner"):
            await workers.wait_for(2)
        events = [e["event"] for e in workers]
        assert events[:2] == ["worker_connected", "worker_metadata_updated"]
        await workers.wait_for(3)
        assert workers[-1]["event"] == "worker_disconnected"


# -------------------------------------------------------------------- fakes

async def test_compose_fake(engine: TestEngine) -> None:
    compose = engine.install_compose()
    compose.set_containers("alpha")
    assert await engine.invoke("compose::status", {}) == {"containers": [{"container": "alpha", "state": "running"}]}
    compose.polls_until_done = 1
    started = await engine.invoke("compose::add", {"workers": [{"worker": "beta", "version": "^1"}], "operation_id": "op1"})
    assert started == {"operation_id": "op1"}
    assert (await engine.invoke("compose::operation", {"operation_id": "op1"}))["status"] == "running"
    assert (await engine.invoke("compose::operation", {"operation_id": "op1"}))["status"] == "succeeded"
    assert "beta" in compose.containers
    compose.down = True
    assert (await error_of(engine.invoke("compose::status", {}))).code == "compose_unavailable"
    compose.down = False
    compose.outcome, compose.polls_until_done = "failed", 0
    await engine.invoke("compose::remove", {"workers": ["alpha"], "operation_id": "op2"})
    failed = await engine.invoke("compose::operation", {"operation_id": "op2"})
    assert failed["status"] == "failed" and failed["last_event"]["detail"] and "alpha" in compose.containers
    compose.failures["compose::status"] = EngineCallError("boom", "scripted")
    assert (await error_of(engine.invoke("compose::status", {}))).code == "boom"
    assert len(compose.calls_to("compose::operation")) == 3


async def test_judge_harness_console_and_worker_ops_fakes(engine: TestEngine) -> None:
    judge = engine.install_judge()
    reply = await engine.invoke("judge::evaluate", {"evaluations": [{"id": "e0", "questions": [
        {"id": "q1", "type": "boolean"}, {"id": "q2", "type": "choice", "options": {"f0": "a", "f1": "b"}}]}]})
    assert reply["status"] == "ok" and reply["results"][0]["answers"]["q2"]["value"] == "f0"
    assert (await engine.invoke("judge::models::list", {}))["models"][0]["default"] is True
    judge.delays["judge::evaluate"] = 0.01
    judge.reply = {"status": "error", "error": {"code": "provider_unavailable", "message": "x"}}
    assert (await engine.invoke("judge::evaluate", {}))["status"] == "error"

    harness, console, ops = engine.install_harness(), engine.install_console(), engine.install_worker_ops()
    seen: list[tuple[Any, PeerCall]] = []

    async def record(data: Any, call: PeerCall) -> Any:
        seen.append((data, call))
        return {"content": "x", "content_type": "text/css; charset=utf-8"}

    engine.add_function("dir::hook", record)
    engine.add_function("dir::ui", record)
    engine.add_function("dir::added", record)
    for trigger_type, function_id, config in (
            ("harness::hook::pre-generate", "dir::hook", {"priority": 100}),
            ("console:style", "dir::ui", {"path": "iii-directory/styles.css"}),
            ("worker", "dir::added", {"operations": ["add"], "stages": ["done"]})):
        await engine.invoke("engine::register_trigger", {"trigger_type": trigger_type, "function_id": function_id,
                                                         "config": config, "metadata": {"src": trigger_type}})
    assert [b.function_id for b in harness.bindings] == ["dir::hook"]
    assert await harness.fire({"turn": 1}) == [{"content": "x", "content_type": "text/css; charset=utf-8"}]
    assert seen[-1][1].metadata == {"src": "harness::hook::pre-generate"}
    assert (await console.fetch("console:style", "iii-directory/styles.css"))["content_type"].startswith("text/css")
    assert await ops.emit_add("resend", stage="started") == []
    delivered = await ops.emit_add("resend")
    assert len(delivered) == 1 and seen[-1][0]["worker"] == "resend" and seen[-1][0]["operation"] == "add"
