"""The worker-side connection against a scripted raw WebSocket server: session order, replay
with reattach, the disconnected queue, calls and timeouts, invocations, provided trigger types,
the terminal namespace conflict, auth and shutdown."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from websockets.asyncio.server import ServerConnection, serve

from iii_directory.protocol.backoff import Backoff
from iii_directory.protocol.connection import Connection, Invocation, validate_url
from iii_directory.protocol.errors import EngineCallError, NamespaceConflict

pytestmark = pytest.mark.timeout(30)


@dataclass
class Session:
    ws: ServerConnection
    number: int
    frames: list[dict[str, Any]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)

    async def send(self, frame: dict[str, Any] | str) -> None:
        await self.ws.send(frame if isinstance(frame, str) else json.dumps(frame))

    def kinds(self) -> list[str]:
        return [f["type"] for f in self.frames]


class Scripted:
    """A minimal engine: greets every socket with `workerregistered` and records frames."""

    def __init__(self) -> None:
        self.sessions: list[Session] = []
        self.port = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    async def handler(self, ws: ServerConnection) -> None:
        session = Session(ws, len(self.sessions) + 1,
                          headers={k.lower(): v for k, v in ws.request.headers.raw_items()} if ws.request is not None else {})
        self.sessions.append(session)
        await session.send({"type": "workerregistered", "worker_id": f"w{session.number}",
                            "reattach_token": f"t{session.number}"})
        async for raw in ws:
            session.frames.append(json.loads(raw))

    async def wait(self, predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
        with anyio.fail_after(timeout):
            while not (value := predicate()):
                await anyio.sleep(0.01)
        return value

    def session(self, number: int) -> Session:
        return self.sessions[number - 1]


@asynccontextmanager
async def scripted() -> AsyncIterator[Scripted]:
    engine = Scripted()
    async with serve(engine.handler, "127.0.0.1", 0) as server:
        engine.port = server.sockets[0].getsockname()[1]
        yield engine


def make_connection(url: str, **kwargs: Any) -> Connection:
    options: dict[str, Any] = {"worker_info": {"name": "w", "pid": 1}, "backoff": Backoff(base=0.02, cap=0.05),
                               "ping_interval": None}
    options.update(kwargs)
    return Connection(url, **options)


@asynccontextmanager
async def running(conn: Connection) -> AsyncIterator[Connection]:
    async with anyio.create_task_group() as tg:
        tg.start_soon(conn.run)
        with anyio.fail_after(5):
            await conn.wait_connected()
        yield conn
        await conn.stop(grace=1.0)
        tg.cancel_scope.cancel()


def register_all(conn: Connection) -> None:
    conn.register_trigger_type({"id": "w::on-change", "description": "d", "trigger_request_format": {"type": "object"},
                                "call_request_format": {"type": "object"}})
    conn.register_function({"id": "w::echo", "description": "Echo"})
    conn.register_function({"id": "w::other"})
    conn.bind("b-1", "configuration", "w::echo", {"configuration_id": "w"})


# ----------------------------------------------------------------- url

@pytest.mark.parametrize("url", ["ws://127.0.0.1:49134", "wss://engine.example/ws", "ws://[::1]:1/"])
def test_valid_urls(url: str) -> None:
    assert validate_url(url) == url


@pytest.mark.parametrize("url, problem", [
    ("", "empty"), ("http://x", "scheme"), ("ws://", "no host"), ("ws://h:99999", "malformed"), ("x", "scheme"),
])
def test_malformed_urls(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        validate_url(url)


# ------------------------------------------------------------- session

async def test_first_session_sends_state_then_register() -> None:
    async with scripted() as engine:
        conn = make_connection(engine.url, worker_info={"name": "w", "pid": 42, "namespace": None})
        register_all(conn)
        async with running(conn):
            first = await engine.wait(lambda: engine.sessions and len(engine.session(1).frames) >= 5 and engine.session(1))
            assert first.kinds() == ["registertriggertype", "registerfunction", "registerfunction", "registertrigger",
                                     "invokefunction"]
            register = first.frames[-1]
            assert register == {"type": "invokefunction", "function_id": "engine::workers::register",
                                "data": {"name": "w", "pid": 42, "namespace": None}, "action": {"type": "void"}}
            assert conn.worker_id == "w1" and conn.reattach_token == "t1"
            # later registrations go out at once
            conn.register_function({"id": "w::late"})
            conn.unbind("b-1")
            await engine.wait(lambda: len(first.frames) >= 7)
            assert first.frames[5] == {"type": "registerfunction", "id": "w::late"}
            assert first.frames[6] == {"type": "unregistertrigger", "id": "b-1", "trigger_type": "configuration"}


async def test_reconnect_reattaches_and_replays_with_queued_frames_before_register() -> None:
    async with scripted() as engine:
        conn = make_connection(engine.url)
        register_all(conn)
        async with running(conn):
            await engine.wait(lambda: engine.sessions and len(engine.session(1).frames) >= 5)
            await engine.session(1).ws.close(1001, "engine restart")
            await engine.wait(lambda: not conn.connected or conn.sessions == 2)
            conn.fire("x::queued", {"n": 1})
            await engine.wait(lambda: len(engine.sessions) == 2 and len(engine.session(2).frames) >= 7)
            second = engine.session(2)
            assert second.frames[0] == {"type": "reattach", "previous_worker_id": "w1", "reattach_token": "t1"}
            assert second.kinds()[1:] == ["registertriggertype", "registerfunction", "registerfunction",
                                          "registertrigger", "invokefunction", "invokefunction"]
            assert second.frames[4]["id"] == "b-1"  # same binding id
            # the function frames (kept as text between sessions) replay exactly as first sent
            first_functions = [f for f in engine.session(1).frames if f["type"] == "registerfunction"]
            assert second.frames[2:4] == first_functions
            assert second.frames[5]["function_id"] == "x::queued"
            assert second.frames[6]["function_id"] == "engine::workers::register"
            assert conn.worker_id == "w2" and conn.sessions == 2


async def test_disconnected_queue_drops_the_oldest_beyond_the_limit() -> None:
    async with scripted() as engine:
        conn = make_connection(engine.url, queue_limit=3, backoff=Backoff(base=0.3, cap=0.3, jitter=0.0))
        async with running(conn):
            await engine.wait(lambda: engine.session(1).frames)
            await engine.session(1).ws.close()
            await engine.wait(lambda: not conn.connected)
            failures: list[EngineCallError] = []

            async def doomed() -> None:
                with pytest.raises(EngineCallError) as caught:
                    await conn.call("x::dropped", {}, timeout=5)
                failures.append(caught.value)

            async with anyio.create_task_group() as tg:
                tg.start_soon(doomed)
                await anyio.sleep(0.01)
                for n in range(4):
                    conn.fire("x::fire", {"n": n})
            assert failures[0].code == "invocation_failed" and "dropped" in failures[0].message
            second = await engine.wait(lambda: len(engine.sessions) == 2 and len(engine.session(2).frames) >= 5
                                       and engine.session(2))
            sent = [f["data"]["n"] for f in second.frames if f.get("function_id") == "x::fire"]
            assert sent == [1, 2, 3]


async def test_call_result_error_and_timeout() -> None:
    async with scripted() as engine:
        conn = make_connection(engine.url)
        async with running(conn):
            session = await engine.wait(lambda: engine.sessions and engine.session(1))
            results: list[Any] = []

            async def call(function_id: str) -> None:
                try:
                    results.append(await conn.call(function_id, {"a": 1}, timeout=0.1 if function_id == "x::slow" else 5,
                                                   baggage="iii.session.id=s", traceparent="00-t"))
                except EngineCallError as exc:
                    results.append(exc)

            async with anyio.create_task_group() as tg:
                for fid in ("x::ok", "x::bad", "x::slow"):
                    tg.start_soon(call, fid)
                calls = await engine.wait(lambda: [f for f in session.frames if f.get("invocation_id")
                                                   and f["function_id"] != "engine::workers::register"]
                                          if len(session.frames) >= 4 else None)
                by_id = {f["function_id"]: f for f in calls}
                assert by_id["x::ok"]["baggage"] == "iii.session.id=s" and by_id["x::ok"]["traceparent"] == "00-t"
                await session.send({"type": "invocationresult", "invocation_id": by_id["x::ok"]["invocation_id"],
                                    "function_id": "x::ok", "result": {"fine": True}})
                await session.send({"type": "invocationresult", "invocation_id": by_id["x::bad"]["invocation_id"],
                                    "function_id": "x::bad", "error": {"code": "D110", "message": "D110 not_found: x"}})
            assert {"fine": True} in results
            errors = [r for r in results if isinstance(r, EngineCallError)]
            assert {(e.code, e.message) for e in errors} == {("D110", "D110 not_found: x"),
                                                            ("TIMEOUT", "invocation timed out after 100ms")}


async def test_invocations_dispatch_concurrently_and_always_reply() -> None:
    seen: list[Invocation] = []
    release = anyio.Event()

    async def on_invoke(invocation: Invocation) -> Any:
        seen.append(invocation)
        if invocation.function_id == "w::wait":
            await release.wait()
            return {"released": True}
        if invocation.function_id == "w::fail":
            raise RuntimeError("boom")
        return {"data": invocation.data}

    async with scripted() as engine:
        conn = make_connection(engine.url, on_invoke=on_invoke)
        for fid in ("w::wait", "w::echo", "w::fail"):
            conn.register_function({"id": fid})
        async with running(conn):
            session = await engine.wait(lambda: engine.sessions and engine.session(1))
            await session.send({"type": "invokefunction", "invocation_id": "i-wait", "function_id": "w::wait", "data": {}})
            await session.send({"type": "invokefunction", "invocation_id": "i-echo", "function_id": "w::echo",
                                "data": {"x": 1, "_caller_worker_id": "c"}, "baggage": "iii.session.id=s",
                                "traceparent": "00-abc", "metadata": {"trigger": "t1"}})
            await session.send({"type": "invokefunction", "invocation_id": "i-fail", "function_id": "w::fail", "data": {}})
            await session.send({"type": "invokefunction", "invocation_id": "i-nope", "function_id": "w::nope", "data": {}})
            await session.send({"type": "ping"})
            await session.send("garbage")
            results = lambda: {f["invocation_id"]: f for f in session.frames if f["type"] == "invocationresult"}  # noqa: E731
            await engine.wait(lambda: {"i-echo", "i-fail", "i-nope"} <= set(results()))
            assert "i-wait" not in results()  # the slow one does not block the others
            assert results()["i-echo"] == {"type": "invocationresult", "invocation_id": "i-echo", "function_id": "w::echo",
                                           "result": {"data": {"x": 1, "_caller_worker_id": "c"}}, "traceparent": "00-abc"}
            assert results()["i-fail"]["error"] == {"code": "invocation_failed", "message": "boom"}
            assert results()["i-nope"]["error"] == {"code": "function_not_found", "message": "Function 'w::nope' not found"}
            assert {"type": "pong"} in session.frames
            echo = next(i for i in seen if i.function_id == "w::echo")
            assert (echo.baggage, echo.traceparent, echo.metadata) == ("iii.session.id=s", "00-abc", {"trigger": "t1"})
            release.set()
            await engine.wait(lambda: "i-wait" in results())


async def test_result_of_a_dead_session_is_not_sent_on_the_next() -> None:
    release = anyio.Event()

    async def on_invoke(_invocation: Invocation) -> Any:
        await release.wait()
        return {"late": True}

    async with scripted() as engine:
        conn = make_connection(engine.url, on_invoke=on_invoke)
        conn.register_function({"id": "w::slow"})
        async with running(conn):
            first = await engine.wait(lambda: engine.sessions and engine.session(1))
            await first.send({"type": "invokefunction", "invocation_id": "i1", "function_id": "w::slow", "data": {}})
            await engine.wait(lambda: conn.in_flight)
            await first.ws.close()
            second = await engine.wait(lambda: len(engine.sessions) == 2 and engine.session(2))
            await engine.wait(lambda: conn.connected)
            release.set()
            await engine.wait(lambda: not conn.in_flight)
            await anyio.sleep(0.05)
            assert not [f for f in second.frames if f["type"] == "invocationresult"]


async def test_provided_trigger_types_subscribe_fan_out_and_clear_on_drop() -> None:
    async with scripted() as engine:
        conn = make_connection(engine.url)
        conn.register_trigger_type({"id": "w::on-change", "description": "d"})
        async with running(conn):
            session = await engine.wait(lambda: engine.sessions and engine.session(1))
            await session.send({"type": "registertrigger", "id": "trig-1", "trigger_type": "w::on-change",
                                "function_id": "other::listener", "config": {"kinds": ["skills"]}, "metadata": {"m": 1},
                                "namespace": "orders"})
            await session.send({"type": "registertrigger", "id": "trig-2", "trigger_type": "w::unknown",
                                "function_id": "other::listener", "config": {}})
            replies = await engine.wait(lambda: [f for f in session.frames if f["type"] == "triggerregistrationresult"]
                                        if len([f for f in session.frames if f["type"] == "triggerregistrationresult"]) == 2
                                        else None)
            assert replies[0] == {"type": "triggerregistrationresult", "id": "trig-1", "trigger_type": "w::on-change",
                                  "function_id": "other::listener"}
            assert replies[1]["error"]["code"] == "trigger_type_not_found"
            assert conn.emit("w::on-change", {"op": "create"}) == 1
            fan = await engine.wait(lambda: [f for f in session.frames if f["type"] == "invokefunction"
                                               and f["function_id"] == "other::listener"])
            assert fan[0] == {"type": "invokefunction", "function_id": "other::listener", "data": {"op": "create"},
                              "action": {"type": "void"}, "namespace": "orders", "metadata": {"m": 1}}
            await session.send({"type": "unregistertrigger", "id": "trig-1", "trigger_type": "w::on-change"})
            await engine.wait(lambda: not conn.subscribers("w::on-change"))
            await session.send({"type": "registertrigger", "id": "trig-3", "trigger_type": "w::on-change",
                                "function_id": "other::listener", "config": {}})
            await engine.wait(lambda: conn.subscribers("w::on-change"))
            await session.ws.close()
            await engine.wait(lambda: len(engine.sessions) == 2 and conn.connected)
            assert conn.subscribers("w::on-change") == {}


async def test_worker_namespace_conflict_is_terminal() -> None:
    async with scripted() as engine:
        conn = make_connection(engine.url)

        async def run() -> None:
            with pytest.raises(NamespaceConflict, match="already held"):
                await conn.run()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            session = await engine.wait(lambda: engine.sessions and engine.session(1))
            await session.send({"type": "registrationrejected", "code": "WORKER_NAMESPACE_CONFLICT",
                                "namespace": "default", "worker_name": "w", "owner_worker_id": "w0"})
        await anyio.sleep(0.1)
        assert len(engine.sessions) == 1


async def test_function_namespace_conflict_is_only_logged(caplog: pytest.LogCaptureFixture) -> None:
    async with scripted() as engine:
        conn = make_connection(engine.url)
        async with running(conn):
            session = await engine.wait(lambda: engine.sessions and engine.session(1))
            await session.send({"type": "registrationrejected", "code": "FUNCTION_NAMESPACE_CONFLICT",
                                "namespace": "default", "function_id": "w::x", "owner_worker_id": "w0"})
            await session.send({"type": "error", "error": {"code": "FORBIDDEN", "message": "nope"}})
            await engine.wait(lambda: "FUNCTION_NAMESPACE_CONFLICT" in caplog.text and "FORBIDDEN" in caplog.text)
            assert conn.connected


async def test_bearer_token_on_the_upgrade() -> None:
    async with scripted() as engine:
        async with running(make_connection(engine.url, token="s3cret")):
            session = await engine.wait(lambda: engine.sessions and engine.session(1))
            assert session.headers.get("authorization") == "Bearer s3cret"


async def test_token_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("III_TOKEN", "from-env")
    async with scripted() as engine:
        async with running(make_connection(engine.url)):
            session = await engine.wait(lambda: engine.sessions and engine.session(1))
            assert session.headers.get("authorization") == "Bearer from-env"


async def test_stop_fails_pending_calls_and_refuses_new_ones() -> None:
    async with scripted() as engine:
        conn = make_connection(engine.url)
        errors: list[EngineCallError] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(conn.run)
            await conn.wait_connected()

            async def pending() -> None:
                with pytest.raises(EngineCallError) as caught:
                    await conn.call("x::never", {}, timeout=10)
                errors.append(caught.value)

            tg.start_soon(pending)
            await engine.wait(lambda: any(f.get("function_id") == "x::never" for f in engine.session(1).frames))
            await conn.stop(grace=0.5)
        assert errors[0].code == "invocation_stopped"
        with pytest.raises(EngineCallError, match="shutting down"):
            await conn.call("x::after", {})
        assert engine.session(1).ws.close_code == 1000


async def test_wait_connected_wakes_up_when_stopped() -> None:
    conn = make_connection("ws://127.0.0.1:9/")  # nothing listens there

    async def wait() -> None:
        with pytest.raises(EngineCallError, match="stopped before a session"):
            await conn.wait_connected()

    async with anyio.create_task_group() as tg:
        tg.start_soon(conn.run)
        tg.start_soon(wait)
        await anyio.sleep(0.05)
        await conn.stop(grace=0.1)


async def test_queue_limit_does_not_apply_to_a_live_session() -> None:
    async with scripted() as engine:
        conn = make_connection(engine.url, queue_limit=3)
        async with running(conn):
            session = await engine.wait(lambda: engine.sessions and engine.session(1))
            for n in range(10):
                conn.fire("x::burst", {"n": n})
            sent = await engine.wait(lambda: [f for f in session.frames if f.get("function_id") == "x::burst"]
                                     if len([f for f in session.frames if f.get("function_id") == "x::burst"]) == 10
                                     else None)
            assert [f["data"]["n"] for f in sent] == list(range(10))


async def test_a_long_flush_gives_the_loop_way_between_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    from iii_directory import timeslice

    monkeypatch.setattr(timeslice, "SLICE_S", 0.0)
    events: list[str] = []

    class Socket:
        async def send(self, text: str) -> None:
            events.append("frame " + str(json.loads(text)["n"]))

    conn = make_connection("ws://127.0.0.1:9/")
    socket = Socket()
    conn._ws = socket  # type: ignore[assignment]
    conn._outbox.extend({"type": "invokefunction", "n": n} for n in range(4))
    done = False

    async def other_work() -> None:
        while not done:
            events.append("other")
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(other_work)
        await anyio.lowlevel.checkpoint()
        await conn._flush(socket)  # type: ignore[arg-type]
        done = True
    frames = [e for e in events if e.startswith("frame")]
    assert frames == ["frame 0", "frame 1", "frame 2", "frame 3"]
    between = [events[events.index(a) + 1:events.index(b)] for a, b in zip(frames, frames[1:])]
    assert all("other" in gap for gap in between), events


async def test_a_frame_too_deep_to_decode_is_answered_and_the_session_stays() -> None:
    """Issue 36, item 1: an invocation nested past the JSON decoder's limit gets a coded answer
    (no longer dropped with a warning), and a result too deep to decode fails its call at once."""
    seen: list[Invocation] = []

    async def on_invoke(invocation: Invocation) -> Any:
        seen.append(invocation)
        return {"ok": True}

    async with scripted() as engine:
        conn = make_connection(engine.url, on_invoke=on_invoke)
        conn.register_function({"id": "w::echo"})
        async with running(conn):
            session = await engine.wait(lambda: engine.sessions and engine.session(1))
            deep = "[" * 20_000 + "]" * 20_000
            await session.send('{"type":"invokefunction","function_id":"w::echo","data":' + deep
                               + ',"invocation_id":"i-deep"}')
            await session.send('{"type":"invokefunction","function_id":"w::echo","data":' + deep + "}")
            await session.send({"type": "invokefunction", "invocation_id": "i-after", "function_id": "w::echo", "data": {}})
            results = lambda: {f["invocation_id"]: f for f in session.frames if f["type"] == "invocationresult"}  # noqa: E731
            await engine.wait(lambda: {"i-deep", "i-after"} <= set(results()))
            assert results()["i-deep"]["error"]["code"] == "invocation_failed"
            assert "nests deeper than 64 levels" in results()["i-deep"]["error"]["message"]
            assert results()["i-deep"]["function_id"] == "w::echo"
            assert results()["i-after"]["result"] == {"ok": True}
            assert [i.invocation_id for i in seen] == ["i-after"]

            async def answer_deeply() -> None:
                call = await engine.wait(lambda: next((f for f in session.frames if f.get("function_id") == "x::f"), None))
                await session.send('{"type":"invocationresult","invocation_id":"' + call["invocation_id"]
                                   + '","result":' + deep + "}")

            async with anyio.create_task_group() as tg:
                tg.start_soon(answer_deeply)
                with pytest.raises(EngineCallError) as info:
                    await conn.call("x::f", {}, timeout=5)
            assert "nests deeper than" in info.value.message
            assert conn.sessions == 1
