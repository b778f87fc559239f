"""An in-process iii engine speaking the real wire protocol on a loopback port (docs/rules/protocol.md §18).

Start it inside the test's event loop::

    async with TestEngine() as engine:
        engine.add_function("compose::status", handler)   # a scripted peer
        async with engine.client() as client:               # a protocol client
            await client.call("engine::functions::list", {})

What it does: the session handshake (`workerregistered`, buffered registrations until
`engine::workers::register` or a grace period, `reattach` with a token check), routing with
`_caller_worker_id`, baggage rewriting, the metadata sidecar, void and enqueue actions and strict
namespaces, trigger types and bindings (engine-provided, worker-provided with forwarding, parked),
the `engine::*` introspection functions, the configuration worker, the `engine::functions-available`
and `engine::workers-available` pushes, and hooks for tests: scripted peer functions, local
trigger-type providers, firing bindings, dropping every connection and sending raw frames.
"""

from __future__ import annotations

import inspect
import logging
import time
import uuid
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import anyio
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from ..protocol import frames as fr
from ..protocol.baggage import parse_baggage
from ..protocol.errors import (
    FUNCTION_NOT_FOUND,
    INVOCATION_FAILED,
    INVOCATION_STOPPED,
    EngineCallError,
)
from . import engine_functions
from .configuration import ConfigurationStore
from .engine_events import EventRouting
from .engine_records import (
    DEFAULT_NAMESPACE,
    ENGINE_WORKER,
    REGISTER_WORKER,
    Binding,
    Delivery,
    FrameRecord,
    FunctionEntry,
    PeerCall,
    PeerHandler,
    Route,
    TriggerTypeEntry,
    WorkerConn,
    env_grace_s,
    rewrite_baggage,
)

if TYPE_CHECKING:
    from .client import TestClient
    from .peers import ComposeFake, ConsoleFake, HarnessFake, JudgeFake, WorkerOpsFake

log = logging.getLogger("iii_directory.testing.engine")

class TestEngine(EventRouting):
    """The engine side of the protocol, on `127.0.0.1:<port>`; see the module docstring."""

    __test__ = False  # not a pytest class

    def __init__(
        self,
        *,
        namespace_grace_s: float | None = None,
        functions_debounce_s: float = 0.05,
        token: str | None = None,
        env: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.namespace_grace_s = env_grace_s() if namespace_grace_s is None else namespace_grace_s
        self.functions_debounce_s = functions_debounce_s
        self.token = token
        self.host = host
        self.port = port
        self.configuration = ConfigurationStore(env)
        self.functions: dict[tuple[str, str], FunctionEntry] = {}
        self.trigger_types: dict[tuple[str, str], TriggerTypeEntry] = {}
        self.bindings: dict[str, Binding] = {}
        self.connections: dict[str, WorkerConn] = {}
        self.frames: list[FrameRecord] = []
        self.reattaches: list[tuple[str, str]] = []
        """(previous worker id, new worker id) of every honoured reattach."""
        self.rejected_reattaches: list[str] = []
        self.pushes: list[dict[str, Any]] = []
        """Every `engine::functions-available` payload fired."""
        self._tokens: dict[str, str] = {}
        self._server: Server | None = None
        self._stack: AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._changed = anyio.Event()
        self._functions_dirty = anyio.Event()
        self._last_push_key: tuple[Any, ...] | None = None
        self._clients: list[TestClient] = []
        engine_functions.install(self)
        self._last_push_key = self._push_key()

    # ----------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}/"

    async def __aenter__(self) -> TestEngine:
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    async def start(self) -> None:
        self._stack = AsyncExitStack()
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._server = await serve(
            self._serve_socket, self.host, self.port, max_size=fr.MAX_FRAME_BYTES, compression=None,
            ping_interval=None,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._tg.start_soon(self._push_loop)

    async def stop(self) -> None:
        """Close clients, connections and the server; always leaves the task group, even when
        the caller is being cancelled."""
        try:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                for client in list(self._clients):
                    await client.close()
                if self._server is not None:
                    self._server.close()
                    await self._server.wait_closed()
        finally:
            self._server = None
            if self._tg is not None:
                self._tg.cancel_scope.cancel()
            if self._stack is not None:
                stack, self._stack = self._stack, None
                await stack.aclose()

    # ------------------------------------------------------------ test API

    def add_function(
        self,
        function_id: str,
        handler: PeerHandler,
        *,
        description: str | None = None,
        metadata: Any = None,
        namespace: str = DEFAULT_NAMESPACE,
        worker_name: str | None = None,
        request_format: Any = None,
        response_format: Any = None,
    ) -> FunctionEntry:
        """Serve `function_id` from a Python handler: `async handler(data)` or
        `async handler(data, call: PeerCall)`. Raise `EngineCallError(code, message)` for a
        coded error; any other exception is `invocation_failed`. Replaces an earlier peer."""
        entry = FunctionEntry(
            id=function_id, namespace=namespace, description=description,
            request_format=request_format, response_format=response_format, metadata=metadata,
            local=handler, local_worker=worker_name or function_id.split("::", 1)[0],
        )
        existing = self.functions.get((namespace, function_id))
        if existing is not None and existing.owner is not None:
            raise ValueError(f"{function_id} is already served by worker {existing.owner.worker_id}")
        self.functions[(namespace, function_id)] = entry
        self._functions_changed()
        return entry

    def remove_function(self, function_id: str, namespace: str = DEFAULT_NAMESPACE) -> None:
        entry = self.functions.get((namespace, function_id))
        if entry is not None and entry.owner is None:
            del self.functions[(namespace, function_id)]
            self._functions_changed()

    async def invoke(
        self,
        function_id: str,
        data: Any = None,
        *,
        namespace: str | None = None,
        baggage: str | None = None,
        traceparent: str | None = None,
        metadata: Any = None,
        timeout: float = 10.0,
    ) -> Any:
        """Call a function as the engine itself (no `_caller_worker_id`); raises EngineCallError."""
        with anyio.fail_after(timeout):
            return await self._call(None, function_id, {} if data is None else data, namespace=namespace,
                                    baggage=baggage, traceparent=traceparent, metadata=metadata)

    async def drop_connections(self, *, abrupt: bool = True) -> int:
        """Drop every worker connection (abrupt: the socket dies without a close frame;
        otherwise a 1001 "engine restart" close). Returns how many were dropped."""
        conns = [c for c in self.connections.values() if not c.closed]
        for conn in conns:
            if abrupt:
                conn.ws.transport.abort()
            else:
                await conn.ws.close(1001, "engine restart")
        with anyio.move_on_after(5):
            await self.wait_for(lambda: all(c.closed for c in conns))
        return len(conns)

    async def send_raw(self, target: str | WorkerConn, frame: Mapping[str, Any] | str | bytes) -> None:
        """Send anything (a frame dict, raw text or bytes) to a worker by name or id."""
        conn = target if isinstance(target, WorkerConn) else (self.worker(target) or self.connections.get(target))
        if conn is None:
            raise KeyError(f"no live connection {target!r}")
        if isinstance(frame, Mapping):
            await self._send(conn, dict(frame))
            return
        async with conn.send_lock:
            await conn.ws.send(frame)

    def frames_of(self, worker_id: str, *, direction: str = "in", kind: str | None = None) -> list[dict[str, Any]]:
        return [r.frame for r in self.frames if r.worker_id == worker_id and r.direction == direction
                and (kind is None or r.frame.get("type") == kind)]

    # ---------------------------------------------------- collaborator fakes

    def install_compose(self, containers: Mapping[str, Mapping[str, Any]] | None = None) -> ComposeFake:
        """Serve `compose::status / add / remove / operation` (see `peers.ComposeFake`)."""
        from .peers import ComposeFake

        return ComposeFake(self, containers)

    def install_judge(self) -> JudgeFake:
        """Serve `judge::evaluate` and `judge::models::list` (see `peers.JudgeFake`)."""
        from .peers import JudgeFake

        return JudgeFake(self)

    def install_harness(self) -> HarnessFake:
        """Provide `harness::hook::pre-generate` (see `peers.HarnessFake`)."""
        from .peers import HarnessFake

        return HarnessFake(self)

    def install_console(self) -> ConsoleFake:
        """Provide `console:script / style / module` (see `peers.ConsoleFake`)."""
        from .peers import ConsoleFake

        return ConsoleFake(self)

    def install_worker_ops(self) -> WorkerOpsFake:
        """Provide the `worker` trigger type (see `peers.WorkerOpsFake`)."""
        from .peers import WorkerOpsFake

        return WorkerOpsFake(self)

    def client(self, name: str | None = None, **kwargs: Any) -> TestClient:
        """A protocol client connected to this engine (use as `async with`)."""
        from .client import TestClient

        client = TestClient(self, name=name, **kwargs)
        self._clients.append(client)
        return client

    # ------------------------------------------------------------- sockets

    async def _serve_socket(self, ws: ServerConnection) -> None:
        path = ws.request.path if ws.request is not None else "/"
        route = path.split("?", 1)[0]
        if route.startswith("/otel"):
            async for _ in ws:
                pass
            return
        if route not in ("/", ""):
            await ws.close(1008, f"unknown route {route}")
            return
        if self.token is not None:
            header = ws.request.headers.get("Authorization", "") if ws.request is not None else ""
            if header != f"Bearer {self.token}":
                await ws.send(fr.encode({"type": fr.ERROR, "error": {"code": "UNAUTHORIZED",
                                                                       "message": "invalid or missing bearer token"}}))
                await ws.close(1008, "unauthorized")
                return
        conn = WorkerConn(ws=ws, worker_id=str(uuid.uuid4()), reattach_token=str(uuid.uuid4()),
                          connected_at_ms=int(time.time() * 1000))
        self.connections[conn.worker_id] = conn
        self._tokens[conn.worker_id] = conn.reattach_token
        await self._send(conn, {"type": fr.WORKER_REGISTERED, "worker_id": conn.worker_id,
                                "reattach_token": conn.reattach_token})
        self._workers_event("worker_connected", conn)
        self._spawn(self._namespace_grace, conn)
        self._touch()
        try:
            async for raw in ws:
                try:
                    frame = fr.decode(raw)
                except fr.FrameError as exc:
                    log.warning("test engine dropped a frame from %s (%s): %s", conn.worker_id, exc, fr.describe(raw))
                    continue
                if frame is None:
                    continue
                self.frames.append(FrameRecord("in", conn.worker_id, frame))
                await self._on_frame(conn, frame)
                self._touch()
        except ConnectionClosed:
            pass
        finally:
            self._disconnect(conn)

    async def _send(self, conn: WorkerConn, frame: dict[str, Any]) -> bool:
        if conn.closed:
            return False
        self.frames.append(FrameRecord("out", conn.worker_id, frame))
        try:
            async with conn.send_lock:
                await conn.ws.send(fr.encode(frame))
            return True
        except ConnectionClosed:
            return False

    async def _namespace_grace(self, conn: WorkerConn) -> None:
        await anyio.sleep(self.namespace_grace_s)
        if conn.namespace is None and not conn.closed:
            log.info("worker %s sent no engine::workers::register; namespace default", conn.worker_id)
            conn.namespace = DEFAULT_NAMESPACE
            await self._drain_buffer(conn)

    def _disconnect(self, conn: WorkerConn) -> None:
        if conn.closed:
            return
        conn.closed = True
        for key in list(conn.functions):
            entry = self.functions.get(key)
            if entry is not None and entry.owner is conn:
                del self.functions[key]
        conn.functions.clear()
        for key in list(conn.trigger_types):
            entry = self.trigger_types.pop(key, None)
            if entry is not None:
                for binding in self.bindings.values():
                    if binding.provider is entry:
                        binding.provider = None  # parked until a provider registers it again
        for binding_id in list(conn.bindings):
            binding = self.bindings.pop(binding_id, None)
            if binding is not None:
                self._retract(binding)
        for route in list(conn.inbound.values()):
            route.settle(error=EngineCallError(
                INVOCATION_STOPPED, f"Invocation of {route.function_id} stopped: worker {conn.worker_id} disconnected"))
        conn.inbound.clear()
        self._workers_event("worker_disconnected", conn)
        self._functions_changed()

    # ------------------------------------------------------------- frames

    async def _on_frame(self, conn: WorkerConn, frame: dict[str, Any]) -> None:
        kind = frame["type"]
        if kind in fr.REGISTRATION_TYPES and conn.namespace is None:
            conn.buffer.append(frame)
            return
        if kind == fr.INVOKE_FUNCTION:
            await self._on_invoke(conn, frame)
        elif kind == fr.INVOCATION_RESULT:
            route = conn.inbound.pop(str(frame.get("invocation_id")), None)
            if route is not None:
                if frame.get("error") is not None:
                    route.settle(error=EngineCallError.from_body(frame["error"]))
                else:
                    route.settle(result=frame.get("result"))
        elif kind == fr.REATTACH:
            await self._on_reattach(conn, frame)
        elif kind == fr.PING:
            await self._send(conn, {"type": fr.PONG})
        elif kind == fr.TRIGGER_REGISTRATION_RESULT:
            await self._on_trigger_result(conn, frame)
        elif kind in fr.REGISTRATION_TYPES:
            await self._apply_registration(conn, frame)
        else:
            log.debug("test engine ignored %s from %s", kind, conn.worker_id)

    async def _drain_buffer(self, conn: WorkerConn) -> None:
        pending, conn.buffer = conn.buffer, []
        for frame in pending:
            await self._apply_registration(conn, frame)
        self._touch()

    async def _apply_registration(self, conn: WorkerConn, frame: dict[str, Any]) -> None:
        kind = frame["type"]
        namespace = conn.namespace or DEFAULT_NAMESPACE
        if kind == fr.REGISTER_FUNCTION:
            await self._register_function(conn, frame, namespace)
        elif kind == fr.UNREGISTER_FUNCTION:
            key = (namespace, str(frame.get("id")))
            entry = self.functions.get(key)
            if entry is not None and entry.owner is conn:
                del self.functions[key]
                conn.functions.discard(key)
                self._functions_changed()
        elif kind == fr.REGISTER_TRIGGER_TYPE:
            type_ns = frame.get("namespace") if isinstance(frame.get("namespace"), str) and frame.get("namespace") else namespace
            key = (type_ns, str(frame.get("id")))
            existing = self.trigger_types.get(key)
            if existing is not None and existing.owner is not conn:
                log.warning("trigger type %s already provided by %s; ignored", key, existing.worker_name)
                return
            entry = TriggerTypeEntry(
                id=key[1], namespace=type_ns, description=str(frame.get("description") or ""),
                trigger_request_format=frame.get("trigger_request_format"),
                call_request_format=frame.get("call_request_format"), owner=conn,
            )
            self.trigger_types[key] = entry
            conn.trigger_types.add(key)
            await self._forward_parked(entry)
        elif kind == fr.REGISTER_TRIGGER:
            await self._register_binding(conn, frame)
        elif kind == fr.UNREGISTER_TRIGGER:
            binding = self.bindings.get(str(frame.get("id")))
            if binding is not None and (binding.owner is conn or binding.owner is None):
                del self.bindings[binding.id]
                conn.bindings.discard(binding.id)
                await self._retract_now(binding)
        # registerservice: accepted and not modelled further.

    async def _register_function(self, conn: WorkerConn, frame: dict[str, Any], namespace: str) -> None:
        function_id = frame.get("id")
        if not isinstance(function_id, str) or not function_id:
            return
        key = (namespace, function_id)
        existing = self.functions.get(key)
        reserved = function_id.startswith("engine::") and namespace != DEFAULT_NAMESPACE
        if reserved or (existing is not None and existing.owner is not conn):
            await self._send(conn, {
                "type": fr.REGISTRATION_REJECTED, "code": "FUNCTION_NAMESPACE_CONFLICT",
                "namespace": namespace, "function_id": function_id,
                "owner_worker_id": existing.owner_id if existing is not None else ENGINE_WORKER,
            })
            return
        self.functions[key] = FunctionEntry(
            id=function_id, namespace=namespace, description=frame.get("description"),
            request_format=frame.get("request_format"), response_format=frame.get("response_format"),
            metadata=frame.get("metadata"), owner=conn,
        )
        conn.functions.add(key)
        self._functions_changed()

    async def _on_reattach(self, conn: WorkerConn, frame: dict[str, Any]) -> None:
        previous = frame.get("previous_worker_id")
        token = frame.get("reattach_token")
        if not isinstance(previous, str) or self._tokens.get(previous) is None or self._tokens.get(previous) != token:
            log.warning("reattach from %s refused: unknown worker or bad token", conn.worker_id)
            self.rejected_reattaches.append(str(previous))
            return
        old = self.connections.get(previous)
        if old is not None and not old.closed:
            self._disconnect(old)  # retire synchronously
            old.ws.transport.abort()
        self._tokens.pop(previous, None)
        self.connections.pop(previous, None)
        conn.reattached_from = previous
        self.reattaches.append((previous, conn.worker_id))


    # ------------------------------------------------------------- routing

    async def _on_invoke(self, conn: WorkerConn, frame: dict[str, Any]) -> None:
        function_id = frame.get("function_id")
        action = frame.get("action") if isinstance(frame.get("action"), dict) else {}
        void = action.get("type") == "void"
        invocation_id = frame.get("invocation_id") if isinstance(frame.get("invocation_id"), str) else None
        if function_id == REGISTER_WORKER:
            error = await self._register_worker(conn, frame.get("data"))
            if invocation_id and not void:
                await self._reply(conn, invocation_id, REGISTER_WORKER, None, error)
            return
        if action.get("type") == "enqueue":
            if invocation_id:
                await self._reply(conn, invocation_id, str(function_id), None, EngineCallError(
                    "enqueue_error", f"cannot enqueue {function_id}: no queue provider is installed"))
            return
        self._spawn(self._serve_call, conn, frame, invocation_id if not void else None)

    async def _serve_call(self, caller: WorkerConn, frame: dict[str, Any], reply_id: str | None) -> None:
        function_id = str(frame.get("function_id"))
        namespace = frame.get("namespace")
        if namespace is not None and (not isinstance(namespace, str) or not namespace.strip()):
            if reply_id:
                await self._reply(caller, reply_id, function_id, None,
                                  EngineCallError("INVALID_NAMESPACE", "namespace must be a non-blank string"))
            return
        result: Any = None
        error: EngineCallError | None = None
        try:
            result = await self._call(
                caller, function_id, frame.get("data"), namespace=namespace,
                baggage=frame.get("baggage") if isinstance(frame.get("baggage"), str) else None,
                traceparent=frame.get("traceparent") if isinstance(frame.get("traceparent"), str) else None,
                metadata=frame.get("metadata"), invocation_id=reply_id,
            )
        except EngineCallError as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - a broken fake still answers
            error = EngineCallError(INVOCATION_FAILED, str(exc) or type(exc).__name__)
        if reply_id:
            await self._reply(caller, reply_id, function_id, result, error)

    async def _reply(self, conn: WorkerConn, invocation_id: str, function_id: str, result: Any,
                     error: EngineCallError | None) -> None:
        await self._send(conn, fr.result_frame(invocation_id, function_id, result=result,
                                               error=error.to_body() if error is not None else None))

    def _not_found(self, function_id: str, namespace: str) -> EngineCallError:
        elsewhere = sorted({ns for ns, fid in self.functions if fid == function_id and ns != namespace})
        if elsewhere:
            return EngineCallError(FUNCTION_NOT_FOUND, (
                f"Function {function_id} not found in namespace {namespace}. "
                f"It is registered in namespace(s): {', '.join(elsewhere)}."))
        return EngineCallError(FUNCTION_NOT_FOUND, f"Function {function_id} not found in namespace {namespace}.")

    async def _call(
        self,
        caller: WorkerConn | None,
        function_id: str,
        data: Any,
        *,
        namespace: str | None = None,
        baggage: str | None = None,
        traceparent: str | None = None,
        metadata: Any = None,
        invocation_id: str | None = None,
    ) -> Any:
        """Route one call and wait for its outcome (the engine never times out)."""
        space = namespace or DEFAULT_NAMESPACE
        entry = self.functions.get((space, function_id))
        if entry is None:
            raise self._not_found(function_id, space)
        if caller is not None and isinstance(data, dict):
            data = {**data, "_caller_worker_id": caller.worker_id}
        baggage = rewrite_baggage(baggage, function_id)
        if entry.local is not None:
            call = PeerCall(function_id, baggage, traceparent, metadata,
                            caller.worker_id if caller is not None else None)
            return await self._run_local(entry, data, call, caller)
        owner = entry.owner
        assert owner is not None
        if owner.closed:
            raise EngineCallError(INVOCATION_STOPPED, f"Invocation of {function_id} stopped: worker disconnected")
        route_id = invocation_id if invocation_id and invocation_id not in owner.inbound else str(uuid.uuid4())
        route = Route(function_id)
        owner.inbound[route_id] = route
        owner.active_invocations += 1
        try:
            sent = await self._send(owner, fr.invoke_frame(
                function_id, data, invocation_id=route_id, baggage=baggage, traceparent=traceparent,
                metadata=metadata,
                namespace=space if space != DEFAULT_NAMESPACE else None,
            ))
            if not sent:
                route.settle(error=EngineCallError(INVOCATION_STOPPED, f"Invocation of {function_id} stopped: worker disconnected"))
            await route.done.wait()
        finally:
            owner.active_invocations -= 1
            owner.inbound.pop(route_id, None)
        if route.error is not None:
            raise route.error
        return route.result

    async def _run_local(self, entry: FunctionEntry, data: Any, call: PeerCall, caller: WorkerConn | None) -> Any:
        handler = entry.local
        assert handler is not None
        if getattr(handler, "__engine_builtin__", False):
            return await handler(self, caller, data if data is not None else {})
        try:
            arity = len(inspect.signature(handler).parameters)
        except (TypeError, ValueError):
            arity = 1
        try:
            if arity >= 2:
                return await handler(data, call)
            return await handler(data)
        except EngineCallError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise EngineCallError(INVOCATION_FAILED, str(exc) or type(exc).__name__) from None






__all__ = [
    "Binding", "Delivery", "FrameRecord", "FunctionEntry", "PeerCall", "TestEngine", "TriggerTypeEntry",
    "WorkerConn", "parse_baggage", "rewrite_baggage",
]
