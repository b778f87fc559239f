"""The worker side of one engine session, kept alive forever (docs/rules/protocol.md §3, §5, §6, §14).

A `Connection` owns the registration state (trigger types, functions, bindings) and replays it
on every new socket; it dispatches incoming `invokefunction` frames to a callback, each in its own
task, and always replies; it makes outgoing calls with client-side timeouts and void calls; it
keeps the subscriber tables of the trigger types this worker provides and fans events out as
void calls; it answers JSON `ping` and reconnects with back-off, `reattach` and a full replay.

Session order on every socket, after the engine's `workerregistered`: `reattach` (when there was
an earlier session) → trigger types → functions → bindings (same ids) → frames queued while
disconnected → the void `engine::workers::register` call.

Outgoing calls still queued while disconnected keep their own timeouts; a call whose frame
already went out on a socket that then died fails at once with `invocation_stopped`, because the
engine routes a result only to the connection that made the call.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import websockets
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from ..timeslice import TimeSlice
from . import frames as fr
from .backoff import Backoff
from .errors import (
    INVOCATION_FAILED,
    INVOCATION_STOPPED,
    TIMEOUT,
    EngineCallError,
    NamespaceConflict,
)
from .inbound import InboundFrames, InvokeHandler, Pending
from .inbound import Invocation as Invocation  # re-exported: the invocation callback's argument
from .inbound import Subscriber as Subscriber  # re-exported: a row of the subscriber tables
from .urls import validate_url as validate_url  # re-exported: the worker validates its URL here

log = logging.getLogger("iii_directory.protocol")

DEFAULT_URL = "ws://127.0.0.1:49134"
DEFAULT_QUEUE_LIMIT = 1000
DEFAULT_CALL_TIMEOUT_S = 30.0
REGISTER_FUNCTION_ID = "engine::workers::register"


SessionHook = Callable[[bool], Awaitable[None]]


class Connection(InboundFrames):
    """One logical engine connection that survives socket drops.

    Registration methods (`register_function`, `register_trigger_type`, `bind`, …) update the
    replayed state and, while a session is open, send the frame at once. `run()` connects and
    serves until `stop()`; it raises `NamespaceConflict` when the engine refuses the worker name.
    """

    def __init__(
        self,
        url: str,
        *,
        worker_info: Mapping[str, Any],
        on_invoke: InvokeHandler | None = None,
        on_session: SessionHook | None = None,
        token: str | None = None,
        backoff: Backoff | None = None,
        queue_limit: int = DEFAULT_QUEUE_LIMIT,
        open_timeout: float = 10.0,
        ping_interval: float | None = 20.0,
    ) -> None:
        self.url = validate_url(url)
        self.worker_info = dict(worker_info)
        self._on_invoke = on_invoke
        self._on_session = on_session
        self._token = token if token is not None else (os.environ.get("III_TOKEN") or None)
        self.backoff = backoff or Backoff()
        self.queue_limit = queue_limit
        self.open_timeout = open_timeout
        self.ping_interval = ping_interval

        self._trigger_types: dict[str, dict[str, Any]] = {}
        self._functions: dict[str, bytes] = {}
        """Function id → its `registerfunction` frame, kept as UTF-8 JSON text for the replay: the
        frames carry the request and response schemas, ~0.7 MiB of parsed JSON for the worker's
        table against ~0.15 MiB of text."""
        self._bindings: dict[str, dict[str, Any]] = {}
        self._subscribers: dict[str, dict[str, Subscriber]] = {}

        self._outbox: deque[dict[str, Any]] = deque()
        self._wakeup = anyio.Event()
        self._send_lock = anyio.Lock()
        self._pending: dict[str, Pending] = {}
        self._inflight: set[anyio.CancelScope] = set()
        self._inflight_idle = anyio.Event()
        self._inflight_idle.set()

        self._ws: ClientConnection | None = None
        self._session_open = False
        self._session_no = 0
        self._connected = anyio.Event()
        self._stop = anyio.Event()
        self._stopping = False
        self._fatal: NamespaceConflict | None = None
        self._task_group: anyio.abc.TaskGroup | None = None

        self.worker_id: str | None = None
        self.reattach_token: str | None = None
        self.sessions = 0
        """Number of sessions established so far (1 after the first handshake)."""

    # ------------------------------------------------------------------ state

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    @property
    def function_ids(self) -> list[str]:
        return list(self._functions)

    @property
    def binding_ids(self) -> list[str]:
        return list(self._bindings)

    @property
    def in_flight(self) -> int:
        """Number of incoming invocations whose handler is running."""
        return len(self._inflight)

    def subscribers(self, trigger_type: str) -> dict[str, Subscriber]:
        """The current subscriber table of a provided trigger type (a copy)."""
        return dict(self._subscribers.get(trigger_type, {}))

    async def wait_connected(self) -> None:
        """Wait until a session is established (returns at once when one is). Raises the
        terminal error, or `EngineCallError(invocation_stopped)` once the connection stopped."""
        while not self._connected.is_set():
            if self._fatal is not None:
                raise self._fatal
            if self._stop.is_set():
                raise EngineCallError(INVOCATION_STOPPED, "connection stopped before a session was established")
            connected, stopped = self._connected, self._stop
            async with anyio.create_task_group() as tg:
                async def first(event: anyio.Event) -> None:
                    await event.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(first, connected)
                tg.start_soon(first, stopped)

    # ---------------------------------------------------------- registrations

    def register_trigger_type(self, body: Mapping[str, Any]) -> None:
        frame = {"type": fr.REGISTER_TRIGGER_TYPE, **body}
        self._trigger_types[str(frame["id"])] = frame
        self._subscribers.setdefault(str(frame["id"]), {})
        self._send_registration(frame)

    def register_function(self, body: Mapping[str, Any]) -> None:
        frame = {"type": fr.REGISTER_FUNCTION, **body}
        self._functions[str(frame["id"])] = fr.encode(frame).encode("utf-8")
        self._send_registration(frame)

    def unregister_function(self, function_id: str) -> None:
        if self._functions.pop(function_id, None) is not None:
            self._send_registration({"type": fr.UNREGISTER_FUNCTION, "id": function_id})

    def bind(
        self,
        binding_id: str,
        trigger_type: str,
        function_id: str,
        config: Mapping[str, Any] | None = None,
        metadata: Any = None,
    ) -> None:
        """Register (or replace) a trigger binding with a stable id."""
        frame: dict[str, Any] = {
            "type": fr.REGISTER_TRIGGER,
            "id": binding_id,
            "trigger_type": trigger_type,
            "function_id": function_id,
            "config": dict(config or {}),
        }
        if metadata is not None:
            frame["metadata"] = metadata
        self._bindings[binding_id] = frame
        self._send_registration(frame)

    def unbind(self, binding_id: str) -> None:
        frame = self._bindings.pop(binding_id, None)
        if frame is not None:
            self._send_registration({
                "type": fr.UNREGISTER_TRIGGER, "id": binding_id, "trigger_type": frame["trigger_type"],
            })

    def _send_registration(self, frame: dict[str, Any]) -> None:
        # While disconnected the replay carries the state; only an open session needs the frame.
        if self._session_open:
            self._push(frame)

    # -------------------------------------------------------------- outgoing

    async def call(
        self,
        function_id: str,
        data: Any,
        *,
        timeout: float = DEFAULT_CALL_TIMEOUT_S,
        namespace: str | None = None,
        baggage: str | None = None,
        traceparent: str | None = None,
        metadata: Any = None,
    ) -> Any:
        """Invoke a function and wait for its result; `EngineCallError` on failure, code
        `TIMEOUT` after `timeout` seconds (the engine never times out a call)."""
        if self._stopping:
            raise EngineCallError(INVOCATION_STOPPED, f"call to {function_id} refused: worker is shutting down")
        invocation_id = str(uuid.uuid4())
        pending = Pending(function_id)
        self._pending[invocation_id] = pending
        try:
            self._push(fr.invoke_frame(
                function_id, data, invocation_id=invocation_id, namespace=namespace,
                baggage=baggage, traceparent=traceparent, metadata=metadata,
            ))
            with anyio.move_on_after(timeout):
                await pending.done.wait()
            if not pending.done.is_set():
                raise EngineCallError(TIMEOUT, f"invocation timed out after {round(timeout * 1000)}ms")
        finally:
            self._pending.pop(invocation_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    def fire(
        self,
        function_id: str,
        data: Any,
        *,
        namespace: str | None = None,
        baggage: str | None = None,
        traceparent: str | None = None,
        metadata: Any = None,
    ) -> None:
        """A void call: no invocation id, no reply, never waits."""
        self._push(fr.invoke_frame(
            function_id, data, void=True, namespace=namespace, baggage=baggage,
            traceparent=traceparent, metadata=metadata,
        ))

    def emit(self, trigger_type: str, payload: Any) -> int:
        """Fan an event out to every current subscriber of a provided trigger type as void
        calls (binding namespace and metadata attached). Returns the number of subscribers."""
        table = self._subscribers.get(trigger_type, {})
        for subscriber in list(table.values()):
            self.fire(subscriber.function_id, payload, namespace=subscriber.namespace,
                      metadata=subscriber.metadata)
        return len(table)

    def _push(self, frame: dict[str, Any]) -> None:
        """Queue a frame for the writer. While disconnected the queue holds at most
        `queue_limit` frames and the oldest is dropped beyond that."""
        self._outbox.append(frame)
        while not self._session_open and len(self._outbox) > self.queue_limit:
            dropped = self._outbox.popleft()
            self._drop_queued(dropped, f"more than {self.queue_limit} frames queued while disconnected")
        self._wakeup.set()

    async def wait_sent(self) -> None:
        """Return once every frame queued before this call has been handed to the socket, or at
        once when no session is open (the replay of the next session carries registrations)."""
        while self._session_open and self._outbox:
            await anyio.lowlevel.checkpoint()  # the writer, woken by `_push`, takes the send lock first
            async with self._send_lock:  # held by the writer's flush until the outbox is empty
                pass

    def _drop_queued(self, frame: dict[str, Any], why: str) -> None:
        invocation_id = frame.get("invocation_id")
        pending = self._pending.get(invocation_id) if isinstance(invocation_id, str) else None
        if frame.get("type") == fr.INVOKE_FUNCTION and pending is not None:
            pending.settle(error=EngineCallError(
                INVOCATION_FAILED, f"call to {frame.get('function_id')} dropped: {why}"))
        log.warning("dropped queued %s frame (%s): %s", frame.get("type"), frame.get("function_id", ""), why)

    # ------------------------------------------------------------- lifecycle

    async def run(self) -> None:
        """Connect and serve until `stop()`; reconnect forever in between. Raises
        `NamespaceConflict` when the engine refuses this worker's name (terminal)."""
        async with anyio.create_task_group() as tg:
            self._task_group = tg
            try:
                await self._connect_loop()
            finally:
                self._fail_pending(INVOCATION_STOPPED, "connection closed")
                tg.cancel_scope.cancel()
        if self._fatal is not None:
            raise self._fatal

    async def stop(self, grace: float = 10.0) -> None:
        """Shut down cleanly: refuse new invocations, let in-flight ones finish within `grace`
        seconds (the rest are answered `invocation_stopped`), fail pending outgoing calls, flush
        the queue and close the socket."""
        if self._stopping:
            return
        self._stopping = True
        with anyio.move_on_after(grace):
            await self._inflight_idle.wait()
        for scope in list(self._inflight):
            scope.cancel()
        with anyio.move_on_after(min(grace, 2.0)):
            await self._inflight_idle.wait()
        self._fail_pending(INVOCATION_STOPPED, "worker is shutting down")
        ws = self._ws
        if ws is not None:
            with anyio.move_on_after(min(grace, 2.0)):
                await self._flush(ws)
                await ws.close(1000, "worker shutting down")
        self._stop.set()
        self._wakeup.set()

    def _fail_pending(self, code: str, why: str) -> None:
        for pending in list(self._pending.values()):
            pending.settle(error=EngineCallError(code, f"call to {pending.function_id} failed: {why}"))

    async def _connect_loop(self) -> None:
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else None
        while not self._stopping:
            log.log(logging.INFO if self.backoff.attempt == 0 else logging.DEBUG, "connecting to engine at %s", self.url)
            try:
                ws = await connect(
                    self.url,
                    additional_headers=headers,
                    max_size=fr.MAX_FRAME_BYTES,
                    open_timeout=self.open_timeout,
                    ping_interval=self.ping_interval,
                    compression=None,
                )
            except InvalidURI as exc:
                raise ValueError(f"malformed engine URL {self.url!r}: {exc}") from None
            except (OSError, InvalidHandshake, TimeoutError, websockets.WebSocketException) as exc:
                delay = self.backoff.next_delay()
                log.warning("engine at %s unreachable (%s); retrying in %.1fs", self.url, exc or type(exc).__name__, delay)
                await self._sleep(delay)
                continue
            reason = "closed"
            try:
                reason = await self._session(ws)
            finally:
                self._end_session()
            if self._fatal is not None or self._stopping:
                return
            delay = self.backoff.next_delay()
            log.warning("disconnected from engine (%s); reconnecting in %.1fs", reason, delay)
            await self._sleep(delay)

    async def _sleep(self, delay: float) -> None:
        with anyio.move_on_after(delay):
            await self._stop.wait()

    def _end_session(self) -> None:
        self._ws = None
        self._session_open = False
        # The engine routes a result to the connection that made the call, so a call that went
        # out on this socket can never be answered now: fail it instead of letting it time out.
        for pending in list(self._pending.values()):
            if pending.sent_on == self._session_no:
                pending.settle(error=EngineCallError(
                    INVOCATION_STOPPED,
                    f"call to {pending.function_id} failed: the engine connection dropped before the answer"))
        if self._connected.is_set():
            self._connected = anyio.Event()
        # Subscriber tables die with the session; the engine re-forwards live bindings.
        for table in self._subscribers.values():
            table.clear()
        # Registrations are replayed from state; results belong to the dead session.
        kept = [f for f in self._outbox if f.get("type") == fr.INVOKE_FUNCTION]
        self._outbox.clear()
        self._outbox.extend(kept)

    async def _session(self, ws: ClientConnection) -> str:
        """Serve one socket until it closes; returns a description of why it ended."""
        self._ws = ws
        self._session_no += 1
        session_no = self._session_no
        async with anyio.create_task_group() as tg:
            try:
                async for raw in ws:
                    try:
                        frame = fr.decode(raw)
                    except fr.FrameError as exc:
                        if not (isinstance(exc, fr.FrameTooDeep) and self._answer_too_deep(exc.head)):
                            log.warning("dropped frame from engine (%s): %s", exc, fr.describe(raw))
                        continue
                    if frame is None:
                        continue
                    try:
                        await self._dispatch(frame, ws, session_no, tg)
                    except ConnectionClosed:
                        raise
                    except Exception:  # noqa: BLE001 - a frame this code cannot use never ends the session
                        log.exception("dropped %s frame from engine: %s", frame.get("type"), fr.describe(str(frame)))
                        continue
                    if self._fatal is not None:
                        await ws.close(1000, "namespace conflict")
                        break
                reason = f"code {ws.close_code}" + (f" {ws.close_reason}" if ws.close_reason else "")
            except ConnectionClosed as exc:
                reason = str(exc) or "connection closed"
            tg.cancel_scope.cancel()
        return reason

    async def _handshake(self, frame: dict[str, Any], ws: ClientConnection,
                         tg: anyio.abc.TaskGroup) -> None:
        previous = (self.worker_id, self.reattach_token) if self.sessions else None
        async with self._send_lock:
            self._session_open = True
            # Snapshot synchronously: anything registered from now on goes through the outbox.
            replay: list[dict[str, Any] | bytes] = []
            if previous is not None and previous[0]:
                reattach: dict[str, Any] = {"type": fr.REATTACH, "previous_worker_id": previous[0]}
                if previous[1]:
                    reattach["reattach_token"] = previous[1]
                replay.append(reattach)
            replay.extend(self._trigger_types.values())
            replay.extend(self._functions.values())
            replay.extend(self._bindings.values())
            for item in replay:  # text frames all: a kept function frame is decoded, not parsed
                await ws.send(item.decode("utf-8") if isinstance(item, bytes) else fr.encode(item))
            while self._outbox:
                queued = self._outbox.popleft()
                try:
                    await self._send_one(ws, queued)
                except ConnectionClosed:
                    self._outbox.appendleft(queued)
                    raise
            await ws.send(fr.encode(fr.invoke_frame(REGISTER_FUNCTION_ID, dict(self.worker_info), void=True)))
        self.worker_id = str(frame.get("worker_id") or "")
        token = frame.get("reattach_token")
        self.reattach_token = token if isinstance(token, str) and token else None
        self.sessions += 1
        self.backoff.reset()
        self._connected.set()
        log.info("connected to engine at %s as worker %s%s", self.url, self.worker_id,
                 " (reattached and replayed)" if previous else "")
        tg.start_soon(self._writer, ws)
        if self._on_session is not None and self._task_group is not None:
            self._task_group.start_soon(self._run_session_hook, previous is not None)

    async def _run_session_hook(self, reattached: bool) -> None:
        try:
            assert self._on_session is not None
            await self._on_session(reattached)
        except Exception:  # noqa: BLE001 - a hook failure must not end the session
            log.exception("session hook failed")

    async def _writer(self, ws: ClientConnection) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup = anyio.Event()
            try:
                await self._flush(ws)
            except ConnectionClosed:
                return

    async def _flush(self, ws: ClientConnection) -> None:
        """Send the outbox in order; encoding many frames gives the loop way every
        `timeslice.SLICE_S` so handlers are not held behind a long flush."""
        tick = TimeSlice()
        async with self._send_lock:
            while self._outbox and self._ws is ws:
                frame = self._outbox.popleft()
                try:
                    await self._send_one(ws, frame)
                except ConnectionClosed:
                    self._outbox.appendleft(frame)
                    raise
                await tick.pause()

    async def _send_one(self, ws: ClientConnection, frame: dict[str, Any]) -> None:
        try:
            text = fr.encode(frame)
        except (TypeError, ValueError) as exc:
            log.error("cannot encode %s frame: %s", frame.get("type"), exc)
            if frame.get("type") == fr.INVOCATION_RESULT:
                text = fr.encode(fr.result_frame(
                    str(frame.get("invocation_id")), str(frame.get("function_id")),
                    error={"code": INVOCATION_FAILED, "message": f"result is not JSON-serialisable: {exc}"},
                ))
            else:
                return
        await ws.send(text)
        invocation_id = frame.get("invocation_id")
        if frame.get("type") == fr.INVOKE_FUNCTION and isinstance(invocation_id, str):
            pending = self._pending.get(invocation_id)
            if pending is not None:
                pending.sent_on = self._session_no

    # -------------------------------------------------------------- incoming

    async def _dispatch(self, frame: dict[str, Any], ws: ClientConnection, session_no: int,
                        tg: anyio.abc.TaskGroup) -> None:
        kind = frame["type"]
        if kind == fr.WORKER_REGISTERED:
            if not self._session_open:
                await self._handshake(frame, ws, tg)
            return
        if kind == fr.PING:
            async with self._send_lock:
                await ws.send(fr.encode({"type": fr.PONG}))
            return
        if kind == fr.INVOKE_FUNCTION:
            if self._task_group is not None:
                self._task_group.start_soon(self._serve_invocation, frame, session_no)
            return
        if kind == fr.INVOCATION_RESULT:
            self._settle(frame)
            return
        if kind == fr.REGISTER_TRIGGER:
            self._add_subscriber(frame)
            return
        if kind == fr.UNREGISTER_TRIGGER:
            self._remove_subscriber(frame)
            return
        if kind == fr.TRIGGER_REGISTRATION_RESULT:
            if frame.get("error") is not None:
                err = EngineCallError.from_body(frame.get("error"))
                bound = self._bindings.get(str(frame.get("id"))) or {}
                log.warning("binding %s (%s → %s, config %s) refused: %s", frame.get("id"), frame.get("trigger_type"),
                            frame.get("function_id"), bound.get("config"), err)
            return
        if kind == fr.REGISTRATION_REJECTED:
            self._rejected(frame)
            return
        if kind == fr.ERROR:
            err = EngineCallError.from_body(frame.get("error"))
            log.error("engine refused the connection: %s", err)
            return
        if kind == fr.PONG:
            return
        log.debug("ignored %s frame from engine", kind)
