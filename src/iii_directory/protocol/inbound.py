"""What one engine session receives, apart from the handshake: invocations (each answered,
always), results of this worker's own calls, subscriptions to the trigger types it provides and
registration refusals (docs/rules/protocol.md §5, §6). `connection.Connection` reads frames off
the socket and hands them here."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from . import frames as fr
from .errors import (
    FUNCTION_NOT_FOUND,
    INVOCATION_FAILED,
    INVOCATION_STOPPED,
    EngineCallError,
    NamespaceConflict,
    error_body_of,
)
from .nesting import too_deep_message

log = logging.getLogger("iii_directory.protocol")

NAMESPACE_CONFLICT = "WORKER_NAMESPACE_CONFLICT"


@dataclass(frozen=True)
class Invocation:
    """An incoming `invokefunction`, as handed to the invocation callback."""

    invocation_id: str | None
    function_id: str
    data: Any
    baggage: str | None = None
    traceparent: str | None = None
    metadata: Any = None
    namespace: str | None = None
    action: Any = None

@dataclass(frozen=True)
class Subscriber:
    """One binding of another worker to a trigger type this worker provides."""

    function_id: str
    namespace: str | None = None
    metadata: Any = None

@dataclass
class Pending:
    function_id: str
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: EngineCallError | None = None
    sent_on: int | None = None
    """Session number whose socket carried the call (None while queued)."""

    def settle(self, *, result: Any = None, error: EngineCallError | None = None) -> None:
        if self.done.is_set():
            return
        self.result = result
        self.error = error
        self.done.set()

InvokeHandler = Callable[[Invocation], Awaitable[Any]]


class InboundFrames:
    """The tables incoming frames update, and how each kind is served; the state is set up by
    `Connection.__init__`."""

    _pending: dict[str, Pending]
    _subscribers: dict[str, dict[str, Subscriber]]
    _trigger_types: dict[str, dict[str, Any]]
    _functions: dict[str, bytes]
    _on_invoke: InvokeHandler | None
    _inflight: set[anyio.CancelScope]
    _inflight_idle: anyio.Event
    _session_no: int
    _session_open: bool
    _stopping: bool
    _fatal: NamespaceConflict | None
    _stop: anyio.Event

    def _push(self, frame: dict[str, Any]) -> None:
        raise NotImplementedError

    def _answer_too_deep(self, head: dict[str, Any]) -> bool:
        """Answer (or settle) the invocation of a frame too deep to decode; False when `head`
        names none (the frame is then dropped and logged)."""
        invocation_id, function_id = head.get("invocation_id"), head.get("function_id")
        if not isinstance(invocation_id, str) or not invocation_id:
            return False
        error = {"code": INVOCATION_FAILED, "message": too_deep_message()}
        if head.get("type") == fr.INVOKE_FUNCTION:
            log.warning("answered %s (%s): %s", function_id, invocation_id, error["message"])
            self._push(fr.result_frame(invocation_id, str(function_id), error=error))
            return True
        if head.get("type") == fr.INVOCATION_RESULT:
            self._settle({"invocation_id": invocation_id, "error": error})
            return True
        return False

    def _settle(self, frame: dict[str, Any]) -> None:
        invocation_id = frame.get("invocation_id")
        pending = self._pending.get(invocation_id) if isinstance(invocation_id, str) else None
        if pending is None:
            log.debug("result for unknown invocation %s dropped", invocation_id)
            return
        if frame.get("error") is not None:
            pending.settle(error=EngineCallError.from_body(frame["error"]))
        else:
            pending.settle(result=frame.get("result"))

    def _add_subscriber(self, frame: dict[str, Any]) -> None:
        binding_id = frame.get("id")
        trigger_type = frame.get("trigger_type")
        function_id = frame.get("function_id")
        reply: dict[str, Any] = {
            "type": fr.TRIGGER_REGISTRATION_RESULT, "id": binding_id,
            "trigger_type": trigger_type, "function_id": function_id,
        }
        if not isinstance(binding_id, str) or not isinstance(function_id, str) or not isinstance(trigger_type, str):
            reply["error"] = {"code": "invalid_trigger",
                              "message": "registertrigger needs string id, trigger_type and function_id"}
        elif trigger_type not in self._trigger_types:
            reply["error"] = {"code": "trigger_type_not_found",
                              "message": f"trigger type '{trigger_type}' is not provided by this worker"}
        else:
            namespace = frame.get("namespace")
            self._subscribers.setdefault(trigger_type, {})[binding_id] = Subscriber(
                function_id=function_id,
                namespace=namespace if isinstance(namespace, str) and namespace else None,
                metadata=frame.get("metadata"),
            )
        self._push(reply)

    def _remove_subscriber(self, frame: dict[str, Any]) -> None:
        binding_id = frame.get("id")
        trigger_type = frame.get("trigger_type")
        if not isinstance(binding_id, str):
            log.warning("dropped unregistertrigger without a string id: %s", fr.describe(str(frame)))
            return
        if isinstance(trigger_type, str) and trigger_type:
            tables = [self._subscribers.get(trigger_type, {})]
        else:
            tables = list(self._subscribers.values())
        for table in tables:
            table.pop(binding_id, None)

    def _rejected(self, frame: dict[str, Any]) -> None:
        code = frame.get("code")
        if code == NAMESPACE_CONFLICT:
            message = (f"engine refused worker name {frame.get('worker_name')!r} in namespace "
                       f"{frame.get('namespace')!r}: already held by worker {frame.get('owner_worker_id')}")
            log.error("%s (%s); not reconnecting", message, code)
            self._fatal = NamespaceConflict(message)
            self._stopping = True
            self._stop.set()
            return
        log.error("engine rejected registration of %s in namespace %s (%s; owner %s)",
                  frame.get("function_id"), frame.get("namespace"), code, frame.get("owner_worker_id"))

    async def _serve_invocation(self, frame: dict[str, Any], session_no: int) -> None:
        raw_id = frame.get("invocation_id")
        invocation_id = raw_id if isinstance(raw_id, str) and raw_id else None
        function_id = frame.get("function_id")
        traceparent = frame.get("traceparent") if isinstance(frame.get("traceparent"), str) else None
        result: Any = None
        error: dict[str, Any] | None = None
        if not isinstance(function_id, str) or function_id not in self._functions:
            error = {"code": FUNCTION_NOT_FOUND, "message": f"Function '{function_id}' not found"}
        elif self._stopping or self._on_invoke is None:
            error = {"code": INVOCATION_STOPPED, "message": f"worker is shutting down; {function_id} not run"}
        else:
            baggage = frame.get("baggage")
            namespace = frame.get("namespace")
            invocation = Invocation(
                invocation_id=invocation_id,
                function_id=function_id,
                data=frame.get("data"),
                baggage=baggage if isinstance(baggage, str) else None,
                traceparent=traceparent,
                metadata=frame.get("metadata"),
                namespace=namespace if isinstance(namespace, str) else None,
                action=frame.get("action"),
            )
            scope = anyio.CancelScope()
            self._inflight.add(scope)
            self._inflight_idle = anyio.Event() if self._inflight_idle.is_set() else self._inflight_idle
            try:
                with scope:
                    try:
                        result = await self._on_invoke(invocation)
                    except Exception as exc:  # noqa: BLE001 - every failure is answered
                        error = error_body_of(exc)
                if scope.cancelled_caught:
                    error = {"code": INVOCATION_STOPPED,
                             "message": f"worker shut down before {function_id} finished"}
            finally:
                self._inflight.discard(scope)
                if not self._inflight:
                    self._inflight_idle.set()
        if invocation_id is None:
            return
        if session_no != self._session_no or not self._session_open:
            log.info("result of %s (%s) dropped: the session it came from is gone", function_id, invocation_id)
            return
        self._push(fr.result_frame(invocation_id, str(function_id), result=result, error=error,
                                   traceparent=traceparent))
