"""Frame encoding and decoding (docs/rules/protocol.md §2, §4).

Every frame is one JSON object tagged by a lowercase `type`. Text and binary frames both carry
JSON; an empty frame is ignored; a frame that does not decode to an object with a known `type` is
dropped (the caller logs it). Unknown fields are kept and ignored by readers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import nesting

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Largest JSON message either side accepts (64 MiB)."""

WORKER_REGISTERED = "workerregistered"
REATTACH = "reattach"
REGISTER_FUNCTION = "registerfunction"
UNREGISTER_FUNCTION = "unregisterfunction"
REGISTER_TRIGGER_TYPE = "registertriggertype"
REGISTER_TRIGGER = "registertrigger"
UNREGISTER_TRIGGER = "unregistertrigger"
TRIGGER_REGISTRATION_RESULT = "triggerregistrationresult"
INVOKE_FUNCTION = "invokefunction"
INVOCATION_RESULT = "invocationresult"
REGISTRATION_REJECTED = "registrationrejected"
REGISTER_SERVICE = "registerservice"
PING = "ping"
PONG = "pong"
ERROR = "error"

KNOWN_TYPES: frozenset[str] = frozenset({
    WORKER_REGISTERED, REATTACH, REGISTER_FUNCTION, UNREGISTER_FUNCTION, REGISTER_TRIGGER_TYPE,
    REGISTER_TRIGGER, UNREGISTER_TRIGGER, TRIGGER_REGISTRATION_RESULT, INVOKE_FUNCTION,
    INVOCATION_RESULT, REGISTRATION_REJECTED, REGISTER_SERVICE, PING, PONG, ERROR,
})

REGISTRATION_TYPES: frozenset[str] = frozenset({
    REGISTER_FUNCTION, UNREGISTER_FUNCTION, REGISTER_TRIGGER_TYPE, REGISTER_TRIGGER,
    UNREGISTER_TRIGGER, REGISTER_SERVICE,
})
"""Frames the engine buffers until it knows a connection's namespace (docs/rules/protocol.md §3)."""

VOID_ACTION: dict[str, str] = {"type": "void"}


class FrameError(ValueError):
    """A received frame that cannot be used (undecodable, not an object, unknown type)."""


class FrameTooDeep(FrameError):
    """A frame nested past what the JSON decoder allows; `head` holds the top-level members
    that still decode (`nesting.top_level_members`), so an invocation in it can be answered."""

    def __init__(self, message: str, head: dict[str, Any]) -> None:
        super().__init__(message)
        self.head = head


_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def scrub_surrogates(text: str) -> str:
    """`text` with every surrogate code point (U+D800–U+DFFF, the only ones UTF-8 cannot
    encode) replaced by U+FFFD, so it always encodes."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")  # the common case, at C speed
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, text)
    return text


def encode(frame: dict[str, Any]) -> str:
    """Compact JSON text of one frame, always encodable as UTF-8: a lone surrogate anywhere in
    the frame (a decoded `\\uD800` escape, a non-UTF-8 file name read back) travels as U+FFFD
    instead of failing the send and closing the socket."""
    return scrub_surrogates(json.dumps(frame, ensure_ascii=False, separators=(",", ":")))


def decode(raw: str | bytes | bytearray | memoryview) -> dict[str, Any] | None:
    """Parse one received message. `None` for an empty frame; `FrameError` for anything that is
    not a JSON object with a known string `type`."""
    if isinstance(raw, (bytes, bytearray, memoryview)):
        data = bytes(raw)
        if len(data) > MAX_FRAME_BYTES:
            raise FrameError(f"frame of {len(data)} bytes exceeds {MAX_FRAME_BYTES}")
        if not data.strip():
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FrameError(f"frame is not UTF-8: {exc}") from None
    else:
        text = raw
        if not text.strip():
            return None
    try:
        frame = json.loads(text)
    except ValueError as exc:
        raise FrameError(f"frame is not JSON: {exc}") from None
    except RecursionError:
        raise FrameTooDeep("frame nests deeper than the JSON decoder allows",
                           nesting.top_level_members(text)) from None
    if not isinstance(frame, dict):
        raise FrameError("frame is not a JSON object")
    kind = frame.get("type")
    if not isinstance(kind, str):
        raise FrameError("frame has no string `type`")
    if kind not in KNOWN_TYPES:
        raise FrameError(f"unknown frame type {kind!r}")
    return frame


def describe(raw: str | bytes | bytearray | memoryview, limit: int = 200) -> str:
    """A short, log-safe excerpt of a raw frame."""
    text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "…"


def invoke_frame(
    function_id: str,
    data: Any,
    *,
    invocation_id: str | None = None,
    void: bool = False,
    namespace: str | None = None,
    baggage: str | None = None,
    traceparent: str | None = None,
    metadata: Any = None,
) -> dict[str, Any]:
    """An `invokefunction` frame; optional fields are omitted when unset."""
    frame: dict[str, Any] = {"type": INVOKE_FUNCTION, "function_id": function_id, "data": data}
    if invocation_id is not None:
        frame["invocation_id"] = invocation_id
    if void:
        frame["action"] = dict(VOID_ACTION)
    if namespace is not None:
        frame["namespace"] = namespace
    if baggage:
        frame["baggage"] = baggage
    if traceparent:
        frame["traceparent"] = traceparent
    if metadata is not None:
        frame["metadata"] = metadata
    return frame


def result_frame(
    invocation_id: str,
    function_id: str,
    *,
    result: Any = None,
    error: dict[str, Any] | None = None,
    traceparent: str | None = None,
    baggage: str | None = None,
) -> dict[str, Any]:
    """An `invocationresult` frame carrying either `result` or `error`."""
    frame: dict[str, Any] = {
        "type": INVOCATION_RESULT, "invocation_id": invocation_id, "function_id": function_id,
    }
    if error is not None:
        frame["error"] = error
    else:
        frame["result"] = result
    if traceparent:
        frame["traceparent"] = traceparent
    if baggage:
        frame["baggage"] = baggage
    return frame
