"""Strings no reply can carry as they are (issue 17, defect 2): lone surrogates (U+D800–U+DFFF,
which JSON's `\\uXXXX` escapes can deliver but UTF-8 cannot encode) and other odd code points
(NUL, non-characters, bidi controls, combining marks, the last plane) in every field of every
function of the table, sent over the wire. Every invocation is answered, every answer is a
frame the engine can decode, and the session survives — in both search modes a user can run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, strategies as st
from reliability_support import fuzz_settings, tree
from wire_harness import Wire, running_worker

from iii_directory.config import Settings
from iii_directory.functions import build_table

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(900)]

TABLE = build_table()
FUNCTION_IDS = sorted(TABLE.functions)
SURROGATE = re.compile("[\ud800-\udfff]")

SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
ODD = st.sampled_from(["\x00", "\ufffe", "\uffff", "\U0010ffff", "\u202e", "\u0301", "\ufeff", "\r\n",
                       "/", "..", "::", "é", "a", "\udc80", "\ud83d", "\ude00"])
ODD_TEXT = st.lists(st.one_of(SURROGATES, ODD, st.text(max_size=4)), min_size=1, max_size=8).map("".join)


def properties(function_id: str) -> dict[str, Any]:
    schema = TABLE.functions[function_id].registration().get("request_format") or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def shaped(prop: Any, text: str) -> Any:
    """`text` in the shape the schema gives the field: a list for arrays, a map for objects."""
    kind = prop.get("type") if isinstance(prop, dict) else None
    if kind == "array":
        return [text]
    if kind == "object":
        return {text: text}
    return text


def payload_of(function_id: str, text: str) -> dict[str, Any]:
    """Every declared field of the function's request set to `text` (shaped by its type); a
    function without declared fields gets `text` as an extra key and value."""
    props = properties(function_id)
    if not props:
        return {text: text}
    return {name: shaped(prop, text) for name, prop in props.items()}


class Sender:
    """Sends `invokefunction` frames as raw JSON text with `\\uXXXX` escapes (the way another
    engine delivers a lone surrogate) and waits for their results."""

    def __init__(self, live: Wire) -> None:
        self.live = live
        self.counter = 0

    async def invoke_all(self, calls: list[tuple[str, Any]]) -> dict[str, dict[str, Any]]:
        ids = []
        for function_id, data in calls:
            self.counter += 1
            invocation_id = f"odd-{self.counter}"
            ids.append(invocation_id)
            frame = {"type": "invokefunction", "function_id": function_id, "invocation_id": invocation_id,
                     "data": data}
            await self.live.engine.send_raw(self.live.worker_id, json.dumps(frame, ensure_ascii=True))
        with anyio.fail_after(60):
            while True:
                answers = {f.get("invocation_id"): f
                           for f in self.live.engine.frames_of(self.live.worker_id, kind="invocationresult")}
                if all(i in answers for i in ids):
                    return {i: answers[i] for i in ids}
                await anyio.sleep(0.01)


def check_answer(frame: dict[str, Any]) -> None:
    assert ("result" in frame) != ("error" in frame), frame
    assert not SURROGATE.search(json.dumps(frame, ensure_ascii=False)), "an answer carries a lone surrogate"
    if "error" in frame:
        assert frame["error"]["code"] and frame["error"]["message"]


async def survives(live: Wire, session: int) -> None:
    assert live.worker.connection.sessions == session, "an unencodable reply cost the engine session"
    listed = await live.client.call("directory::skills::list", {}, timeout=10)
    assert isinstance(listed["skills"], list)


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
async def test_every_function_answers_a_lone_surrogate_in_every_field(
        settings: Settings, monkeypatch: pytest.MonkeyPatch, roots: dict[str, Path], mode: str) -> None:
    settings = settings.model_copy(update={"function_search_mode": mode})
    async with running_worker(settings, monkeypatch) as (engine, worker, client):
        live = Wire(engine=engine, worker=worker, client=client)
        session = worker.connection.sessions
        before_home = tree(roots["home"] / ".iii")
        calls = [(fid, payload_of(fid, text)) for fid in FUNCTION_IDS for text in ("x\ud800y", "\udc80", "a\udfff")]
        answers = await Sender(live).invoke_all(calls)
        assert len(answers) == 3 * len(FUNCTION_IDS)
        for frame in answers.values():
            check_answer(frame)
        await survives(live, session)
        assert tree(roots["home"] / ".iii") == before_home
        for root in ("skills", "agents"):
            written = [p for p in roots[root].rglob("*")] if roots[root].exists() else []
            assert not [p for p in written if "\ufffd" in p.name or SURROGATE.search(str(p))]


@given(calls=st.lists(st.tuples(st.sampled_from(FUNCTION_IDS), ODD_TEXT), min_size=1, max_size=6))
@fuzz_settings(ci=150)
async def test_odd_code_points_through_random_functions_keep_the_session(
        live: Wire, calls: list[tuple[str, str]]) -> None:
    session = live.worker.connection.sessions
    answers = await Sender(live).invoke_all([(fid, payload_of(fid, text)) for fid, text in calls])
    for frame in answers.values():
        check_answer(frame)
    await survives(live, session)
    live.engine.frames.clear()
