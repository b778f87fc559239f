"""Fuzzing the engine frames (issue 11): the decoder only ever returns a frame, `None` or
raises `FrameError`; a live worker fed random frames — real frame types with random fields,
random function ids and payloads, garbage text and bytes — keeps its session, answers every
invocation that carries an id, and writes nothing outside its roots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, strategies as st
from reliability_support import fuzz_settings, tree

from iii_directory.protocol import frames as fr

pytestmark = [pytest.mark.timeout(900)]

JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                      st.text(max_size=30))
JSON = st.recursive(JSON_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)), max_leaves=12)
TYPES = st.one_of(st.sampled_from(sorted(fr.KNOWN_TYPES)), st.text(max_size=12), JSON_LEAF)
FIELDS = ["invocation_id", "function_id", "data", "id", "trigger_type", "config", "error", "result",
          "code", "namespace", "baggage", "traceparent", "metadata", "action", "worker_id",
          "reattach_token", "previous_worker_id", "owner_worker_id", "description"]


@st.composite
def nested(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 200_000))
    opener = draw(st.sampled_from(["[", '{"a":', '{"type":"ping","x":[']))
    return opener * depth


RAW_TEXT = st.one_of(st.text(max_size=200), JSON.map(json.dumps), nested(),
                     st.dictionaries(st.sampled_from(FIELDS + ["type"]), JSON, max_size=6).map(json.dumps))


@given(st.one_of(RAW_TEXT, st.binary(max_size=200), RAW_TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))))
@fuzz_settings(ci=1000)
def test_decode_returns_a_frame_none_or_frame_error(raw: str | bytes) -> None:
    try:
        frame = fr.decode(raw)
    except fr.FrameError:
        return
    assert frame is None or (isinstance(frame, dict) and frame["type"] in fr.KNOWN_TYPES)


# --------------------------------------------------------------------------- live worker

FUNCTIONS = st.sampled_from([
    "directory::skills::get", "directory::skills::list", "directory::skills::create",
    "directory::skills::update", "directory::skills::delete", "directory::agents::get",
    "directory::agents::create", "directory::agents::functions::add", "directory::system-prompts::get",
    "directory::system-prompts::create", "directory::engine::functions::info", "directory::hint-preview",
    "directory::search_functions", "directory::kits::list", "nope::missing",
])
PATHY = st.sampled_from(["../outside/escape", "/etc/passwd", "..", "ns/../../x", "ns/doc", "a/b/c",
                         "iii://ns/doc", "x.md", "~/x", "ns/doc.md.tmp", "\x00", ""])
PAYLOAD = st.one_of(
    JSON,
    st.fixed_dictionaries({"id": st.one_of(PATHY, st.text(max_size=30))},
                          optional={"content": st.text(max_size=80), "raw": st.booleans(),
                                    "functions": st.lists(st.text(max_size=12), max_size=3),
                                    "capabilities": st.lists(st.text(max_size=20), max_size=4),
                                    "function_id": st.text(max_size=20)}),
)


@st.composite
def engine_frame(draw: st.DrawFn) -> Any:
    choice = draw(st.integers(0, 9))
    if choice <= 4:  # an invocation, mostly of a real function
        frame: dict[str, Any] = {"type": "invokefunction", "function_id": draw(FUNCTIONS),
                                 "data": draw(PAYLOAD)}
        if draw(st.booleans()):
            frame["invocation_id"] = f"fz-{draw(st.integers(0, 10**9))}"
        for key in draw(st.lists(st.sampled_from(["action", "baggage", "traceparent", "metadata", "namespace"]),
                                 max_size=2, unique=True)):
            frame[key] = draw(JSON)
        return frame
    if choice <= 7:  # any frame type with random fields
        frame = {"type": draw(TYPES)}
        frame.update(draw(st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=5)))
        if frame.get("type") == "invokefunction":
            frame.pop("invocation_id", None)  # answered ids are asserted only for generated ones
        return frame
    if choice == 8:
        return draw(st.text(max_size=100))
    return draw(st.binary(max_size=100))


def answered_ids(live: Any) -> set[str]:
    return {f.get("invocation_id") for f in live.engine.frames_of(live.worker_id, kind="invocationresult")}


@given(frames=st.lists(engine_frame(), min_size=1, max_size=6))
@fuzz_settings(ci=300)
async def test_a_live_worker_survives_random_engine_frames(live: Any, roots: dict[str, Path],
                                                           frames: list[Any]) -> None:
    outside = roots["project"] / "outside"
    if not outside.exists():
        outside.mkdir()
        (outside / "secret.md").write_text("# Secret\n\nDo not touch.\n")
    before = tree(outside) | {f"home/{k}": v for k, v in tree(roots["home"]).items()}
    session = live.worker.connection.sessions
    expected: set[str] = set()
    for frame in frames:
        if isinstance(frame, dict) and frame.get("type") == "invokefunction" and "invocation_id" in frame:
            frame["invocation_id"] = f"{frame['invocation_id']}-{len(live.engine.frames)}"
            expected.add(frame["invocation_id"])
        await live.engine.send_raw(live.worker_id, frame if isinstance(frame, dict) else frame)
    with anyio.fail_after(30):
        while not expected <= answered_ids(live):
            await anyio.sleep(0.005)
    assert live.worker.connection.sessions == session, "a frame cost the session"
    listed = await live.client.call("directory::skills::list", {}, timeout=10)
    assert isinstance(listed["skills"], list)
    after = tree(outside) | {f"home/{k}": v for k, v in tree(roots["home"]).items()}
    assert after == before, "a frame made the worker write outside its roots"
    live.engine.frames.clear()
