"""A protocol client for tests: a small worker connected to the `TestEngine` through the real
wire protocol (it reuses `iii_directory.protocol.Connection`).

It calls functions (`call`, `fire`), serves Python handlers (`register_function`), binds
trigger types (`bind`) and collects fan-out events (`subscribe`).
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import anyio

from ..protocol.backoff import Backoff
from ..protocol.connection import Connection, Invocation

if TYPE_CHECKING:
    from .engine_records import EngineHost

ClientHandler = Callable[..., Awaitable[Any]]
_names = itertools.count(1)


class EventLog(list[Any]):
    """The payloads delivered to one subscription, in arrival order."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = anyio.Event()

    def add(self, payload: Any) -> None:
        self.append(payload)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, count: int = 1, timeout: float = 5.0) -> list[Any]:
        """Wait until at least `count` events arrived; TimeoutError after `timeout` seconds."""
        with anyio.fail_after(timeout):
            while len(self) < count:
                await self._changed.wait()
        return list(self)


class TestClient:
    """Use as `async with engine.client() as client:` (or `await client.start(task_group)`)."""

    __test__ = False

    def __init__(self, engine: EngineHost, *, name: str | None = None, namespace: str | None = None) -> None:
        self.engine = engine
        self.name = name or f"test-client-{next(_names)}"
        info: dict[str, Any] = {
            "runtime": "python", "version": "0", "name": self.name, "os": "test", "pid": os.getpid(),
            "isolation": None, "namespace": namespace,
            "telemetry": {"language": "python", "project_name": None, "framework": "iii-directory-tests"},
        }
        self.connection = Connection(
            engine.url, worker_info=info, on_invoke=self._serve, token=engine.token or None,
            backoff=Backoff(base=0.05, cap=0.2), ping_interval=None,
        )
        self._handlers: dict[str, ClientHandler] = {}
        self.invocations: list[Invocation] = []
        self._stack: AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._subs = itertools.count(1)

    async def __aenter__(self) -> TestClient:
        self._stack = AsyncExitStack()
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._tg.start_soon(self.connection.run)
        with anyio.fail_after(10):
            await self.connection.wait_connected()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop the connection (shielded, bounded) and always leave the task group."""
        if self._stack is None:
            return
        stack, self._stack = self._stack, None
        try:
            with anyio.CancelScope(shield=True), anyio.move_on_after(3):
                await self.connection.stop(grace=1.0)
        finally:
            if self._tg is not None:
                self._tg.cancel_scope.cancel()
            await stack.aclose()

    @property
    def worker_id(self) -> str | None:
        return self.connection.worker_id

    async def call(self, function_id: str, data: Any = None, *, baggage: str | None = None,
                   traceparent: str | None = None, timeout: float = 10.0, namespace: str | None = None,
                   metadata: Any = None) -> Any:
        return await self.connection.call(function_id, {} if data is None else data, timeout=timeout,
                                          namespace=namespace, baggage=baggage, traceparent=traceparent,
                                          metadata=metadata)

    def fire(self, function_id: str, data: Any = None, **kwargs: Any) -> None:
        self.connection.fire(function_id, {} if data is None else data, **kwargs)

    def register_function(self, function_id: str, handler: ClientHandler, *, description: str | None = None,
                          metadata: Any = None, request_format: Any = None) -> None:
        """Serve `function_id` with `async handler(data)` or `async handler(data, invocation)`."""
        self._handlers[function_id] = handler
        body: dict[str, Any] = {"id": function_id}
        if description is not None:
            body["description"] = description
        if request_format is not None:
            body["request_format"] = request_format
        if metadata is not None:
            body["metadata"] = metadata
        self.connection.register_function(body)

    def bind(self, trigger_type: str, function_id: str, config: Any = None, *, metadata: Any = None) -> str:
        binding_id = str(uuid.uuid4())
        self.connection.bind(binding_id, trigger_type, function_id, config or {}, metadata)
        return binding_id

    def subscribe(self, trigger_type: str, config: Any = None) -> EventLog:
        """Bind a fresh collector function to `trigger_type`; every delivered payload lands in
        the returned list (without the engine-inserted `_caller_worker_id`)."""
        log = EventLog()
        function_id = f"{self.name}::subscriber-{next(self._subs)}"

        async def collect(data: Any) -> dict[str, bool]:
            if isinstance(data, dict):  # the engine's routing key, not part of the event
                data = {k: v for k, v in data.items() if k != "_caller_worker_id"}
            log.add(data)
            return {"ok": True}

        self.register_function(function_id, collect, metadata={"internal": True})
        self.bind(trigger_type, function_id, config)
        return log

    async def _serve(self, invocation: Invocation) -> Any:
        self.invocations.append(invocation)
        handler = self._handlers[invocation.function_id]
        import inspect

        if len(inspect.signature(handler).parameters) >= 2:
            return await handler(invocation.data, invocation)
        return await handler(invocation.data)
