"""What the test engine knows: its records of functions, trigger types, bindings and worker
connections, the constants and helpers they share, and `EngineHost` — the face the engine shows its
built-in functions (`engine_functions`), scripted peers (`peers`) and test clients (`client`,
`console`), so none of them imports the engine back (`engine.TestEngine` is the one host)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
from websockets.asyncio.server import ServerConnection

from ..protocol.errors import EngineCallError
from .configuration import ConfigurationStore

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
class Route:
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
    inbound: dict[str, Route] = field(default_factory=dict)
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


def env_grace_s() -> float:
    """`III_NAMESPACE_GRACE_MS` in seconds (default 5 s)."""
    try:
        return int(os.environ.get("III_NAMESPACE_GRACE_MS", "5000")) / 1000.0
    except ValueError:
        return 5.0


class EngineHost(Protocol):
    """The engine as its built-in functions, peers and clients use it."""

    token: str | None
    configuration: ConfigurationStore
    functions: dict[tuple[str, str], FunctionEntry]
    trigger_types: dict[tuple[str, str], TriggerTypeEntry]
    bindings: dict[str, Binding]
    connections: dict[str, WorkerConn]

    @property
    def url(self) -> str: ...

    def add_function(self, *args: Any, **kwargs: Any) -> FunctionEntry: ...

    def add_trigger_type(self, *args: Any, **kwargs: Any) -> TriggerTypeEntry: ...

    def bindings_of(self, trigger_type: str, *, active_only: bool = False) -> list[Binding]: ...

    def fire_trigger(self, *args: Any, **kwargs: Any) -> Delivery: ...

    def client(self, *args: Any, **kwargs: Any) -> Any: ...

    async def invoke(self, *args: Any, **kwargs: Any) -> Any: ...

    async def register_durable_binding(self, data: Any) -> Binding: ...

    async def remove_binding(self, binding_id: str) -> bool: ...

    async def _register_worker(self, conn: WorkerConn, data: Any) -> EngineCallError | None: ...

    def _deliver_config_events(self, events: list[dict[str, Any]]) -> Delivery: ...
