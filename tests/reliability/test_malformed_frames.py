"""The engine sends malformed frames while callers keep calling (issue 11): invalid JSON,
unknown types, missing fields, wrong types, huge and deeply nested payloads. The worker logs
and drops what it cannot use, answers what it can (coded errors), and keeps serving."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from reliability_support import assert_unchanged, tree

from iii_directory.port import EngineCallError

pytestmark = [pytest.mark.wire, pytest.mark.timeout(90)]

GET = "directory::skills::get"

MALFORMED: list[Any] = [
    "", "   ", "not json", "{", "[1,2]", "null", "42", '"text"', "{}", '{"type":"bogus"}',
    '{"no":"type"}', '{"type":5}', '{"type":null}', '{"type":["invokefunction"]}',
    '{"type":"INVOKEFUNCTION"}', "[" * 100_000, '{"type":"ping","x":' + "[" * 50_000 + "]" * 50_000 + "}",
    b"\xff\xfe\x00garbage", b"\x00" * 16, b'{"type":"ping"}',
    {"type": "invokefunction"},
    {"type": "invokefunction", "invocation_id": 7, "function_id": GET, "data": {"id": "x"}},
    {"type": "invokefunction", "invocation_id": "m-1", "function_id": 12, "data": {}},
    {"type": "invokefunction", "invocation_id": "m-2", "function_id": None},
    {"type": "invokefunction", "invocation_id": "m-3", "function_id": "nope::missing", "data": {}},
    {"type": "invokefunction", "invocation_id": "m-4", "function_id": GET, "data": [1, 2, 3]},
    {"type": "invokefunction", "invocation_id": "m-5", "function_id": GET, "data": "a string"},
    {"type": "invokefunction", "invocation_id": "m-6", "function_id": GET, "data": {"id": 5}},
    {"type": "invokefunction", "invocation_id": "m-7", "function_id": GET, "data": {"id": "x"},
     "action": "void", "baggage": 5, "traceparent": ["x"], "namespace": 3, "metadata": "m"},
    {"type": "invokefunction", "invocation_id": "m-8", "function_id": GET, "data": {"id": "a" * 4_000_000}},
    {"type": "invokefunction", "invocation_id": "m-9", "function_id": GET,
     "data": {"id": "x", "nested": json.loads("[" * 500 + "]" * 500)}},
    {"type": "invocationresult"},
    {"type": "invocationresult", "invocation_id": "nobody", "result": 1},
    {"type": "invocationresult", "invocation_id": 5, "error": "boom"},
    {"type": "invocationresult", "invocation_id": "nobody", "error": {"no": "code"}},
    {"type": "registertrigger"},
    {"type": "registertrigger", "id": 5, "trigger_type": ["x"], "function_id": {"a": 1}},
    {"type": "registertrigger", "id": "t-1", "trigger_type": "directory::skills::on-change", "function_id": 3},
    {"type": "registertrigger", "id": "t-2", "trigger_type": "no::such-type", "function_id": "f::g"},
    {"type": "registertrigger", "id": "t-3", "trigger_type": ["unhashable"], "function_id": "f::g"},
    {"type": "registertrigger", "id": "t-4", "trigger_type": {"a": 1}, "function_id": "f::g", "namespace": 5},
    {"type": "unregistertrigger", "id": "t-3", "trigger_type": ["unhashable"]},
    {"type": "unregistertrigger", "id": {"a": 1}},
    {"type": "unregistertrigger"},
    {"type": "unregistertrigger", "id": ["x"], "trigger_type": 4},
    {"type": "triggerregistrationresult", "error": "nope"},
    {"type": "triggerregistrationresult", "id": 1, "error": {"code": 5, "message": None}},
    {"type": "registrationrejected"},
    {"type": "registrationrejected", "code": "FUNCTION_NAMESPACE_CONFLICT", "function_id": 5},
    {"type": "error", "error": "not an object"},
    {"type": "error"},
    {"type": "workerregistered", "worker_id": 5, "reattach_token": ["x"]},
    {"type": "reattach", "previous_worker_id": None},
    {"type": "registerfunction", "id": None},
    {"type": "pong", "extra": {"deep": [1, 2]}},
    {"type": "ping", "unknown": "fields are ignored"},
    {"type": "functionregistered", "id": "observe-family"},
    {"type": "observe"},
    {"type": "invokefunction", "invocation_id": "huge", "function_id": "nope::x", "data": {"pad": "z" * 8_000_000}},
]


async def test_malformed_frames_are_dropped_while_serving_continues(live: Any, roots: dict[str, Path]) -> None:
    skill = roots["skills"] / "ns" / "doc.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("# Doc\n\nBody.\n")
    before = tree(roots["project"])
    served: list[Any] = []
    failures: list[BaseException] = []
    done = anyio.Event()

    async def keep_calling() -> None:
        while not done.is_set():
            try:
                served.append((await live.client.call(GET, {"id": "ns/doc"}, timeout=10))["id"])
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                failures.append(exc)
            await anyio.sleep(0.01)

    async with anyio.create_task_group() as tg:
        tg.start_soon(keep_calling)
        for frame in MALFORMED:
            await live.engine.send_raw(live.worker_id, frame)
        await live.engine.wait_for(
            lambda: {"m-3", "m-4", "m-5", "m-6", "m-8", "huge"} <= {
                f.get("invocation_id") for f in live.engine.frames_of(live.worker_id, kind="invocationresult")},
            timeout=30)
        await anyio.sleep(0.3)
        done.set()

    assert failures == [] and len(served) >= 5
    assert live.worker.connection.sessions == 1, "a malformed frame cost the session"
    answers = {f["invocation_id"]: f for f in live.engine.frames_of(live.worker_id, kind="invocationresult")}
    assert answers["m-3"]["error"]["code"] == "function_not_found"
    assert answers["huge"]["error"]["code"] == "function_not_found"
    for bad_data in ("m-4", "m-5", "m-6"):
        assert answers[bad_data]["error"]["code"] == "invocation_failed", answers[bad_data]
    assert answers["m-8"]["error"]["code"] in {"invocation_failed", "D110", "D112"}
    assert "m-9" in answers
    assert "m-1" in answers and answers["m-1"]["error"]["code"] == "function_not_found"
    assert live.engine.frames_of(live.worker_id, kind="pong")
    refused = live.engine.frames_of(live.worker_id, kind="triggerregistrationresult")
    assert {f.get("id") for f in refused if f.get("error")} >= {"t-1", "t-2", "t-3", "t-4"}
    assert (await live.client.call(GET, {"id": "ns/doc"}))["id"] == "ns/doc"
    assert_unchanged(before, roots["project"])


async def test_an_oversized_frame_costs_only_the_session(live: Any) -> None:
    """A message over the 64 MiB cap closes that socket (1009); the worker reconnects,
    replays and serves again."""
    await live.engine.send_raw(live.worker_id, '{"type":"ping","pad":"' + "x" * (64 * 1024 * 1024 + 10) + '"}')
    await live.engine.wait_for(lambda: live.worker.connection.sessions == 2 and live.worker.connection.connected,
                               timeout=20)
    await live.engine.wait_for(lambda: live.engine.function(GET) is not None, timeout=10)
    with pytest.raises(EngineCallError) as caught:
        await live.client.call(GET, {"id": "ns/missing"})
    assert caught.value.code == "D110"
