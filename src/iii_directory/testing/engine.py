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
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from ..protocol import frames as fr
from ..protocol.baggage import parse_baggage
from ..protocol.errors import FUNCTION_NOT_FOUND, INVOCATION_FAILED, INVOCATION_STOPPED, EngineCallError
from . import engine_functions
from .configuration import ConfigurationStore, event_matches

if TYPE_CHECKING:
    from .client import TestClient
    from .peers import ComposeFake, ConsoleFake, HarnessFake, JudgeFake, WorkerOpsFake

log = logging.getLogger("iii_directory.testing.engine")

DEFAULT_NAMESPACE = "default"
ENGINE_WORKER = "iii-engine-functions"
FUNCTIONS_AVAILABLE = "engine::functions-available"
WORKERS_AVAILABLE = "engine::workers-available"
CONFIGURATION = "configuration"
REGISTER_WORKER = "engine::workers::register"

PeerHandler = Callable[..., Awaitable[Any]]


@dataclass
class PeerCall:
    """What a scripted peer handler may inspect besides `data`."""

    function_id: str
    baggage: str | None
    traceparent: str | None
    metadata: Any
    caller_worker_id: str | None


@dataclass
class FunctionEntry:
    id: str
    namespace: str
    description: str | None = None
    request_format: Any = None
    response_format: Any = None
    metadata: Any = None
    owner: WorkerConn | None = None
    local: PeerHandler | None = None
    local_worker: str | None = None

    @property
    def worker_name(self) -> str:
        if self.owner is not None and self.owner.name:
            return self.owner.name
        if self.local_worker:
            return self.local_worker
        return self.id.split("::", 1)[0]

    @property
    def owner_id(self) -> str:
        return self.owner.worker_id if self.owner is not None else (self.local_worker or ENGINE_WORKER)

    @property
    def internal(self) -> bool:
        return isinstance(self.metadata, dict) and self.metadata.get("internal") is True


@dataclass
class TriggerTypeEntry:
    id: str
    namespace: str
    description: str = ""
    trigger_request_format: Any = None
    call_request_format: Any = None
    owner: WorkerConn | None = None
    local_worker: str | None = None

    @property
    def worker_name(self) -> str:
        if self.owner is not None and self.owner.name:
            return self.owner.name
        return self.local_worker or ENGINE_WORKER


@dataclass
class Binding:
    id: str
    trigger_type: str
    function_id: str
    config: Any
    metadata: Any = None
    namespace: str | None = None
    trigger_namespace: str | None = None
    owner: WorkerConn | None = None
    once: bool = False
    provider: TriggerTypeEntry | None = None
    error: dict[str, Any] | None = None

    @property
    def active(self) -> bool:
        return self.provider is not None


@dataclass
class _Route:
    function_id: str
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: EngineCallError | None = None

    def settle(self, *, result: Any = None, error: EngineCallError | None = None) -> None:
        if not self.done.is_set():
            self.result, self.error = result, error
            self.done.set()


@dataclass
class FrameRecord:
    direction: str
    """`in` (worker → engine) or `out` (engine → worker)."""
    worker_id: str
    frame: dict[str, Any]


@dataclass(eq=False)
class WorkerConn:
    """One WebSocket worker connection as the engine sees it."""

    ws: ServerConnection
    worker_id: str
    reattach_token: str
    connected_at_ms: int
    namespace: str | None = None
    name: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    buffer: list[dict[str, Any]] = field(default_factory=list)
    functions: set[tuple[str, str]] = field(default_factory=set)
    trigger_types: set[tuple[str, str]] = field(default_factory=set)
    bindings: set[str] = field(default_factory=set)
    inbound: dict[str, _Route] = field(default_factory=dict)
    active_invocations: int = 0
    closed: bool = False
    reattached_from: str | None = None
    send_lock: anyio.Lock = field(default_factory=anyio.Lock)

    @property
    def pid(self) -> Any:
        return self.info.get("pid")

    @property
    def ip_address(self) -> str | None:
        peer = self.ws.remote_address
        return str(peer[0]) if peer else None


class Delivery:
    """Returned by operations that deliver events in the background; `await` it to wait until
    every delivery finished (optional)."""

    def __init__(self) -> None:
        self._done = anyio.Event()
        self.outcomes: list[Any] = []

    def finish(self, outcomes: Iterable[Any] = ()) -> None:
        self.outcomes.extend(outcomes)
        self._done.set()

    async def wait(self) -> list[Any]:
        await self._done.wait()
        return self.outcomes

    def __await__(self) -> Generator[Any, None, list[Any]]:
        return self.wait().__await__()


def rewrite_baggage(baggage: str | None, function_id: str) -> str | None:
    """The caller's baggage with its `iii.function.id` entry set to the invoked function (other
    entries untouched, added at the end when absent)."""
    if not baggage:
        return baggage
    parts = [p for p in baggage.split(",")]
    out: list[str] = []
    replaced = False
    for part in parts:
        key = part.split(";", 1)[0].split("=", 1)[0].strip()
        if key == "iii.function.id":
            out.append(f"iii.function.id={function_id}")
            replaced = True
        else:
            out.append(part)
    if not replaced:
        out.append(f"iii.function.id={function_id}")
    return ",".join(p for p in out if p.strip())


class TestEngine:
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

    def _spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        if self._tg is None:
            raise RuntimeError("TestEngine is not started")
        try:
            self._tg.start_soon(fn, *args)
        except RuntimeError:  # the engine is shutting down: background work is moot
            log.debug("test engine stopped; %s not started", getattr(fn, "__name__", fn))

    def _touch(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Wait until `predicate()` is truthy (re-checked on every engine state change and every
        50 ms); returns its value, raises TimeoutError after `timeout` seconds."""
        with anyio.fail_after(timeout):
            while True:
                value = predicate()
                if value:
                    return value
                with anyio.move_on_after(0.05):
                    await self._changed.wait()

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

    def add_trigger_type(
        self,
        trigger_type: str,
        *,
        description: str = "",
        namespace: str = DEFAULT_NAMESPACE,
        worker_name: str | None = None,
        trigger_request_format: Any = None,
        call_request_format: Any = None,
    ) -> TriggerTypeEntry:
        """Provide a trigger type from the engine side (a stand-in provider): bindings to it are
        stored and can be fired with `fire_trigger`."""
        entry = TriggerTypeEntry(
            id=trigger_type, namespace=namespace, description=description,
            trigger_request_format=trigger_request_format, call_request_format=call_request_format,
            local_worker=worker_name or ENGINE_WORKER,
        )
        self.trigger_types[(namespace, trigger_type)] = entry
        self._activate_parked(entry)
        self._touch()
        return entry

    def remove_trigger_type(self, trigger_type: str, namespace: str = DEFAULT_NAMESPACE) -> None:
        entry = self.trigger_types.pop((namespace, trigger_type), None)
        if entry is not None:
            for binding in self.bindings.values():
                if binding.provider is entry:
                    binding.provider = None
            self._touch()

    def bindings_of(self, trigger_type: str, *, active_only: bool = False) -> list[Binding]:
        return [b for b in self.bindings.values()
                if b.trigger_type == trigger_type and (b.active or not active_only)]

    def worker(self, name: str) -> WorkerConn | None:
        """The live connection that registered `name` (None when absent)."""
        for conn in self.connections.values():
            if conn.name == name and not conn.closed:
                return conn
        return None

    def function(self, function_id: str, namespace: str = DEFAULT_NAMESPACE) -> FunctionEntry | None:
        return self.functions.get((namespace, function_id))

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

    def fire_trigger(
        self,
        trigger_type: str,
        payload: Any,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        select: Callable[[Binding], bool] | None = None,
    ) -> Delivery:
        """Deliver `payload` to every active binding of an engine-side trigger type (optionally
        filtered by `select(binding)`); each bound function is invoked without
        `_caller_worker_id`, with the binding's metadata sidecar. `await` the returned Delivery
        for the outcomes (results, or EngineCallError instances)."""
        targets = [b for b in self.bindings.values()
                   if b.trigger_type == trigger_type and b.provider is not None
                   and b.provider.owner is None and b.provider.namespace == namespace
                   and (select is None or select(b))]
        return self._deliver(targets, lambda _b: payload)

    def fire_binding(self, binding_id: str, payload: Any) -> Delivery:
        """Deliver `payload` through one binding, whatever its trigger type (the test acts as
        the provider): its function is invoked with the binding's namespace and metadata."""
        binding = self.bindings.get(binding_id)
        if binding is None:
            raise KeyError(f"no binding {binding_id!r}")
        return self._deliver([binding], lambda _b: payload)

    def set_config(
        self, value: Any, *, config_id: str = "iii-directory", validate: bool = False
    ) -> Delivery:
        """Change a configuration value as an external edit would and deliver the
        `configuration:updated` events. `validate=True` behaves like `configuration::set`
        (raises EngineCallError on a bad value)."""
        if validate:
            _result, events = self.configuration.set({"id": config_id, "value": value})
        else:
            _result, events = self.configuration.put(config_id, value)
        return self._deliver_config_events(events)

    def config_value(self, config_id: str = "iii-directory") -> Any:
        entry = self.configuration.entries.get(config_id)
        return None if entry is None else entry.value

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

    # ------------------------------------------------------------ bindings

    def _provider_for(self, binding: Binding) -> TriggerTypeEntry | None:
        if binding.trigger_namespace:
            spaces = [binding.trigger_namespace]
        else:
            own = binding.owner.namespace if binding.owner is not None and binding.owner.namespace else DEFAULT_NAMESPACE
            spaces = [own, DEFAULT_NAMESPACE] if own != DEFAULT_NAMESPACE else [DEFAULT_NAMESPACE]
        for space in spaces:
            entry = self.trigger_types.get((space, binding.trigger_type))
            if entry is not None:
                return entry
        return None

    async def _register_binding(self, owner: WorkerConn | None, frame: Mapping[str, Any], *, once: bool = False) -> Binding:
        binding_id = str(frame.get("id") or uuid.uuid4())
        old = self.bindings.pop(binding_id, None)
        if old is not None:
            await self._retract_now(old)
        namespace = frame.get("namespace")
        trigger_namespace = frame.get("trigger_namespace")
        binding = Binding(
            id=binding_id, trigger_type=str(frame.get("trigger_type")), function_id=str(frame.get("function_id")),
            config=frame.get("config") if frame.get("config") is not None else {},
            metadata=frame.get("metadata"),
            namespace=namespace if isinstance(namespace, str) and namespace else None,
            trigger_namespace=trigger_namespace if isinstance(trigger_namespace, str) and trigger_namespace else None,
            owner=owner, once=once,
        )
        self.bindings[binding_id] = binding
        if owner is not None:
            owner.bindings.add(binding_id)
        provider = self._provider_for(binding)
        if provider is not None:
            await self._attach(binding, provider)
        self._touch()
        return binding

    async def _attach(self, binding: Binding, provider: TriggerTypeEntry) -> None:
        binding.provider = provider
        binding.error = None
        if provider.owner is not None:
            frame: dict[str, Any] = {
                "type": fr.REGISTER_TRIGGER, "id": binding.id, "trigger_type": binding.trigger_type,
                "function_id": binding.function_id, "config": binding.config,
            }
            if binding.metadata is not None:
                frame["metadata"] = binding.metadata
            if binding.namespace and binding.namespace != DEFAULT_NAMESPACE:
                frame["namespace"] = binding.namespace
            if binding.trigger_namespace and binding.trigger_namespace != DEFAULT_NAMESPACE:
                frame["trigger_namespace"] = binding.trigger_namespace
            await self._send(provider.owner, frame)

    async def _forward_parked(self, entry: TriggerTypeEntry) -> None:
        for binding in list(self.bindings.values()):
            if binding.provider is None and binding.trigger_type == entry.id and self._provider_for(binding) is entry:
                await self._attach(binding, entry)

    def _activate_parked(self, entry: TriggerTypeEntry) -> None:
        for binding in self.bindings.values():
            if binding.provider is None and binding.trigger_type == entry.id and self._provider_for(binding) is entry:
                binding.provider = entry

    def _retract(self, binding: Binding) -> None:
        provider = binding.provider
        binding.provider = None
        if provider is not None and provider.owner is not None and not provider.owner.closed:
            self._spawn(self._send, provider.owner,
                        {"type": fr.UNREGISTER_TRIGGER, "id": binding.id, "trigger_type": binding.trigger_type})

    async def _retract_now(self, binding: Binding) -> None:
        provider = binding.provider
        binding.provider = None
        if provider is not None and provider.owner is not None:
            await self._send(provider.owner,
                             {"type": fr.UNREGISTER_TRIGGER, "id": binding.id, "trigger_type": binding.trigger_type})

    async def _on_trigger_result(self, conn: WorkerConn, frame: dict[str, Any]) -> None:
        binding = self.bindings.get(str(frame.get("id")))
        if binding is None or frame.get("error") is None:
            return  # success is silent
        binding.error = frame.get("error")
        if binding.owner is not None and binding.owner is not conn:
            await self._send(binding.owner, {
                "type": fr.TRIGGER_REGISTRATION_RESULT, "id": binding.id, "trigger_type": binding.trigger_type,
                "function_id": binding.function_id, "error": frame.get("error"),
            })

    async def register_durable_binding(self, data: Mapping[str, Any]) -> Binding:
        """`engine::register_trigger`: a binding owned by no connection (`once` = one-shot)."""
        return await self._register_binding(None, {**data, "id": str(uuid.uuid4())}, once=bool(data.get("once")))

    async def remove_binding(self, binding_id: str) -> bool:
        binding = self.bindings.pop(binding_id, None)
        if binding is None:
            return False
        if binding.owner is not None:
            binding.owner.bindings.discard(binding_id)
        await self._retract_now(binding)
        self._touch()
        return True

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
        route = _Route(function_id)
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

    # ------------------------------------------------------------- workers

    async def _register_worker(self, conn: WorkerConn, data: Any) -> EngineCallError | None:
        data = data if isinstance(data, dict) else {}
        namespace = data.get("namespace")
        if namespace is None:
            namespace = DEFAULT_NAMESPACE
        elif not isinstance(namespace, str) or not namespace.strip():
            return EngineCallError("INVALID_NAMESPACE", "namespace must be a non-blank string")
        name = data.get("name") if isinstance(data.get("name"), str) else None
        if name:
            for other in self.connections.values():
                if other is not conn and not other.closed and other.name == name and other.namespace == namespace:
                    await self._send(conn, {
                        "type": fr.REGISTRATION_REJECTED, "code": "WORKER_NAMESPACE_CONFLICT",
                        "namespace": namespace, "worker_name": name, "owner_worker_id": other.worker_id,
                    })
                    await conn.ws.close(1008, "worker namespace conflict")
                    return EngineCallError("WORKER_NAMESPACE_CONFLICT", f"worker {name} already registered")
        conn.info = {k: v for k, v in data.items() if k != "_caller_worker_id"}
        conn.name = name
        first = conn.namespace is None
        conn.namespace = namespace
        if first:
            await self._drain_buffer(conn)
        self._workers_event("worker_metadata_updated", conn)
        return None

    def _workers_event(self, event: str, conn: WorkerConn) -> None:
        payload = {"event": event, "worker_id": conn.worker_id}
        targets = [b for b in self.bindings.values() if b.trigger_type == WORKERS_AVAILABLE and b.provider is not None]
        if targets and self._tg is not None:
            self._deliver(targets, lambda _b: payload)

    # ---------------------------------------------------------- deliveries

    def _deliver(self, targets: list[Binding], payload_for: Callable[[Binding], Any]) -> Delivery:
        delivery = Delivery()
        self._spawn(self._deliver_all, targets, payload_for, delivery)
        return delivery

    async def _deliver_all(self, targets: list[Binding], payload_for: Callable[[Binding], Any],
                           delivery: Delivery) -> None:
        outcomes: list[Any] = [None] * len(targets)

        async def one(index: int, binding: Binding) -> None:
            try:
                outcomes[index] = await self._call(
                    None, binding.function_id, payload_for(binding), namespace=binding.namespace,
                    metadata=binding.metadata)
            except EngineCallError as exc:
                log.info("delivery of %s to %s failed: %s", binding.trigger_type, binding.function_id, exc)
                outcomes[index] = exc
            if binding.once:
                await self.remove_binding(binding.id)

        async with anyio.create_task_group() as tg:
            for index, binding in enumerate(targets):
                tg.start_soon(one, index, binding)
        delivery.finish(outcomes)

    def _deliver_config_events(self, events: list[dict[str, Any]]) -> Delivery:
        delivery = Delivery()
        self._spawn(self._deliver_config, events, delivery)
        return delivery

    async def _deliver_config(self, events: list[dict[str, Any]], delivery: Delivery) -> None:
        outcomes: list[Any] = []
        for event in events:
            for binding in list(self.bindings.values()):
                if binding.trigger_type != CONFIGURATION or binding.provider is None:
                    continue
                if not event_matches(binding.config, event):
                    continue
                condition = binding.config.get("condition_function_id") if isinstance(binding.config, dict) else None
                if isinstance(condition, str) and condition:
                    try:
                        if await self._call(None, condition, event) is not True:
                            continue
                    except EngineCallError:
                        continue
                try:
                    outcomes.append(await self._call(None, binding.function_id, event,
                                                     namespace=binding.namespace, metadata=binding.metadata))
                except EngineCallError as exc:
                    outcomes.append(exc)
        delivery.finish(outcomes)

    def _functions_changed(self) -> None:
        self._functions_dirty.set()
        self._touch()

    def function_summaries(self) -> list[dict[str, Any]]:
        return [engine_functions.summary(self.functions[k]) for k in sorted(self.functions, key=lambda k: (k[1], k[0]))]

    def _push_key(self) -> tuple[Any, ...]:
        return tuple((e.namespace, e.id, e.description, repr(e.metadata))
                     for e in sorted(self.functions.values(), key=lambda e: (e.id, e.namespace)))

    async def _push_loop(self) -> None:
        """Fire `engine::functions-available` after the function set changed (debounced, and
        only when the set really differs from the last push)."""
        while True:
            await self._functions_dirty.wait()
            await anyio.sleep(self.functions_debounce_s)
            self._functions_dirty = anyio.Event()
            key = self._push_key()
            if key == self._last_push_key:
                continue
            self._last_push_key = key
            payload = {"event": "functions_changed", "functions": self.function_summaries()}
            self.pushes.append(payload)
            targets = [b for b in self.bindings.values()
                       if b.trigger_type == FUNCTIONS_AVAILABLE and b.provider is not None]
            if targets:
                self._deliver(targets, lambda _b: payload)


def env_grace_s() -> float:
    """`III_NAMESPACE_GRACE_MS` in seconds (default 5 s)."""
    try:
        return int(os.environ.get("III_NAMESPACE_GRACE_MS", "5000")) / 1000.0
    except ValueError:
        return 5.0


__all__ = [
    "Binding", "Delivery", "FrameRecord", "FunctionEntry", "PeerCall", "TestEngine", "TriggerTypeEntry",
    "WorkerConn", "parse_baggage", "rewrite_baggage",
]
