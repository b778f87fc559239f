"""Frame encoding and decoding (protocol.md §2, §4)."""

from __future__ import annotations

import json

import pytest

from iii_directory.protocol import frames as fr


def test_encode_is_compact_json() -> None:
    text = fr.encode({"type": "ping", "x": "é"})
    assert text == '{"type":"ping","x":"é"}'


@pytest.mark.parametrize("raw", ["", "   ", b"", b" \n"])
def test_empty_frames_are_ignored(raw: str | bytes) -> None:
    assert fr.decode(raw) is None


def test_text_and_binary_json_decode_and_keep_unknown_fields() -> None:
    frame = {"type": "invokefunction", "function_id": "a::b", "data": {}, "future_field": 1}
    assert fr.decode(json.dumps(frame)) == frame
    assert fr.decode(json.dumps(frame).encode()) == frame


@pytest.mark.parametrize("raw, problem", [
    ("not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"no": "type"}', "no string `type`"),
    ('{"type": 3}', "no string `type`"),
    ('{"type": "observe"}', "unknown frame type"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_bad_frames_raise_frame_error(raw: str | bytes, problem: str) -> None:
    with pytest.raises(fr.FrameError, match=problem):
        fr.decode(raw)


def test_oversized_binary_frame_is_refused() -> None:
    with pytest.raises(fr.FrameError, match="exceeds"):
        fr.decode(b" " * (fr.MAX_FRAME_BYTES + 1))


def test_every_catalogue_type_is_known() -> None:
    for kind in ("workerregistered", "reattach", "registerfunction", "unregisterfunction", "registertriggertype",
                 "registertrigger", "unregistertrigger", "triggerregistrationresult", "invokefunction",
                 "invocationresult", "registrationrejected", "registerservice", "ping", "pong", "error"):
        assert fr.decode(json.dumps({"type": kind})) == {"type": kind}


def test_invoke_frame_omits_unset_optionals() -> None:
    assert fr.invoke_frame("a::b", {"x": 1}) == {"type": "invokefunction", "function_id": "a::b", "data": {"x": 1}}
    void = fr.invoke_frame("a::b", None, void=True, namespace="default", baggage="k=v", traceparent="00-1",
                           metadata={"m": 1})
    assert void == {"type": "invokefunction", "function_id": "a::b", "data": None, "action": {"type": "void"},
                    "namespace": "default", "baggage": "k=v", "traceparent": "00-1", "metadata": {"m": 1}}
    assert "invocation_id" not in void


def test_result_frame_carries_result_or_error() -> None:
    ok = fr.result_frame("i1", "a::b", result={"ok": True}, traceparent="00-x")
    assert ok == {"type": "invocationresult", "invocation_id": "i1", "function_id": "a::b",
                  "result": {"ok": True}, "traceparent": "00-x"}
    bad = fr.result_frame("i1", "a::b", error={"code": "D110", "message": "D110 not_found: x"})
    assert "result" not in bad and bad["error"]["code"] == "D110"
    assert fr.result_frame("i2", "a::b", result=None)["result"] is None


def test_describe_truncates() -> None:
    assert fr.describe("x" * 500, limit=10) == "x" * 10 + "…"
    assert fr.describe(b"abc") == "abc"


def test_encode_replaces_lone_surrogates_so_every_frame_encodes() -> None:
    frame = fr.result_frame("i1", "a::b", error={"code": "D110", "message": 'skill "x\ud800y" \udcff'})
    text = fr.encode(frame)
    text.encode("utf-8")  # never raises
    assert json.loads(text)["error"]["message"] == 'skill "x\ufffdy" \ufffd'
    paired = fr.encode({"type": "pong", "x": "\ud83d\ude00 é \U0001f600"})
    assert json.loads(paired)["x"] == "\ufffd\ufffd é \U0001f600"
    assert fr.encode({"type": "ping"}) == '{"type":"ping"}'
