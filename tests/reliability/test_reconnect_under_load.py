"""The engine drops the worker's connection every couple of seconds during load (issue 11):
no invocation is answered twice or on another session than the one it came on, every call the
callers re-send after the reattach is answered, and each session replays the registrations
exactly once (protocol.md §14)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from iii_directory.functions import build_table
from iii_directory.testing import soak

pytestmark = [pytest.mark.wire, pytest.mark.timeout(150),
              pytest.mark.skipif(sys.platform == "win32", reason="POSIX worker subprocess")]

REGISTER = "engine::workers::register"


def worker_sessions(engine: Any) -> list[str]:
    """Connection ids of the directory worker, in connection order."""
    ids: list[str] = []
    for record in engine.frames:
        frame = record.frame
        if (record.direction == "in" and frame.get("type") == "invokefunction"
                and frame.get("function_id") == REGISTER and isinstance(frame.get("data"), dict)
                and frame["data"].get("name") == "iii-directory" and record.worker_id not in ids):
            ids.append(record.worker_id)
    return ids


async def test_connection_drops_under_load(tmp_path: Path) -> None:
    table = build_table()
    async with soak.SoakSession(tmp_path, seed=7, keep_frames=True) as session:
        report = await session.load(8.0, 10, warmup=0.5, drop_every=2.0)
        engine = session.engine
        await engine.wait_for(lambda: engine.worker("iii-directory") is not None
                              and engine.function("directory::skills::get") is not None, timeout=30)
        sessions = worker_sessions(engine)
        reattaches = list(engine.reattaches)
        frames = {sid: engine.frames_of(sid) for sid in sessions}
        sent = {sid: engine.frames_of(sid, direction="out", kind="invokefunction") for sid in sessions}
        last_open = not engine.connections[sessions[-1]].closed
    print(report.table())

    assert report.drops >= 3 and report.retries >= 1
    assert report.errors == [], report.errors[:5]  # every re-sent call got a real answer
    assert len(sessions) == report.drops + 1
    assert reattaches == list(zip(sessions, sessions[1:]))
    assert last_open

    binding_ids: list[str] | None = None
    for index, sid in enumerate(sessions):
        own = frames[sid]
        if index:
            assert own[0]["type"] == "reattach" and own[0]["previous_worker_id"] == sessions[index - 1]
        functions = Counter(f["id"] for f in own if f["type"] == "registerfunction")
        assert set(functions) == set(table.functions) and set(functions.values()) == {1}, sid
        types = Counter(f["id"] for f in own if f["type"] == "registertriggertype")
        assert set(types) == {t.id for t in table.trigger_types} and set(types.values()) == {1}
        bindings = [f["id"] for f in own if f["type"] == "registertrigger"]
        assert len(bindings) == len(set(bindings))
        binding_ids = bindings if binding_ids is None else binding_ids
        assert sorted(bindings) == sorted(binding_ids)  # the same binding ids every time
        assert sum(1 for f in own if f.get("function_id") == REGISTER) == 1

    answered: Counter[str] = Counter()
    for sid in sessions:
        asked = {f["invocation_id"] for f in sent[sid] if "invocation_id" in f}
        results = [f["invocation_id"] for f in frames[sid] if f["type"] == "invocationresult"]
        assert set(results) <= asked, "an answer travelled on another session than its invocation"
        answered.update(results)
        if sid == sessions[-1]:
            assert asked <= set(results), "the open session left invocations unanswered"
    assert [i for i, n in answered.items() if n > 1] == [], "an invocation was answered twice"
    assert not list((tmp_path / "skills").rglob("*.tmp"))


async def test_an_invocation_re_sent_after_reattach_is_answered_once(
        settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An invocation in flight when the socket dies is re-sent by the engine (same id) on the new
    session: the worker answers it exactly once, there, and never on the dead session."""
    import anyio
    from wire_harness import fast_worker, wait_registered

    from iii_directory.config import config_id
    from iii_directory.testing.engine import TestEngine

    for name in ("III_CONFIG_NAME", "III_NAMESPACE", "III_WORKER_NAME", "III_TOKEN", "III_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    gate = anyio.Event()

    async def slow_status(_data: Any) -> dict[str, Any]:
        await gate.wait()
        return {"containers": []}

    async with TestEngine(functions_debounce_s=0.05, namespace_grace_s=1.0) as engine:
        engine.configuration.put(config_id(), settings.model_copy(update={"filter_unregistered": True})
                                 .model_dump(mode="json"))
        engine.add_function("compose::status", slow_status)
        worker = fast_worker(engine.url)
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker.run)
            with anyio.fail_after(30):
                await worker.ready.wait()
            await wait_registered(engine, worker)
            first = worker.connection.worker_id
            frame = {"type": "invokefunction", "invocation_id": "resend-1",
                     "function_id": "directory::skills::list", "data": {}}
            await engine.send_raw(first, frame)
            await engine.wait_for(lambda: worker.connection.in_flight == 1)
            await engine.drop_connections()
            await engine.wait_for(lambda: worker.connection.sessions == 2 and worker.connection.connected,
                                  timeout=10)
            await wait_registered(engine, worker)
            second = worker.connection.worker_id
            gate.set()  # the first run finishes now, on the dead session
            await engine.send_raw(second, frame)
            await engine.wait_for(lambda: [f for f in engine.frames_of(second, kind="invocationresult")
                                           if f["invocation_id"] == "resend-1"], timeout=15)
            await anyio.sleep(0.3)  # room for a duplicate to show up
            answers = [f for sid in (first, second) for f in engine.frames_of(sid, kind="invocationresult")
                       if f["invocation_id"] == "resend-1"]
            on_first = [f for f in engine.frames_of(first, kind="invocationresult") if f["invocation_id"] == "resend-1"]
            worker.stop()
    assert len(answers) == 1 and not on_first
    assert "result" in answers[0] and isinstance(answers[0]["result"]["skills"], list)


async def test_a_call_sent_on_a_dropped_socket_fails_at_once() -> None:
    """The engine never answers a call on a later session (results are routed by connection),
    so an outgoing call whose frame went out on a socket that died fails right away with
    `invocation_stopped` instead of waiting out its timeout; the next call works."""
    import anyio

    from iii_directory.port import EngineCallError
    from iii_directory.testing.engine import TestEngine

    async def never(_data: Any) -> None:
        await anyio.sleep_forever()

    async def echo(data: Any) -> Any:
        return {"echo": data.get("x")}

    async with TestEngine(functions_debounce_s=0.05, namespace_grace_s=0.2) as engine:
        engine.add_function("peer::never", never)
        engine.add_function("peer::echo", echo)
        async with engine.client("caller") as client:
            outcome: list[BaseException] = []

            async def call() -> None:
                try:
                    await client.call("peer::never", {}, timeout=30)
                except EngineCallError as exc:
                    outcome.append(exc)

            with anyio.fail_after(5):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call)
                    await engine.wait_for(lambda: any(r.frame.get("function_id") == "peer::never"
                                                      for r in engine.frames))
                    await engine.drop_connections()
            assert isinstance(outcome[0], EngineCallError) and outcome[0].code == "invocation_stopped"
            await client.connection.wait_connected()
            assert await client.call("peer::echo", {"x": 1}) == {"echo": 1}
