"""Trigger types, bindings and deliveries of the test engine, with its state-change signal,
background tasks and pushes (`engine::functions-available`, `engine::workers-available`, the
configuration worker's events). `engine.TestEngine` builds the sockets, frames and routing on
this base."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio

from ..protocol import frames as fr
from ..protocol.errors import EngineCallError
from . import engine_functions
from .configuration import ConfigurationStore, event_matches
from .engine_records import (
    CONFIGURATION,
    DEFAULT_NAMESPACE,
    ENGINE_WORKER,
    FUNCTIONS_AVAILABLE,
    WORKERS_AVAILABLE,
    Binding,
    Delivery,
    FunctionEntry,
    TriggerTypeEntry,
    WorkerConn,
)

log = logging.getLogger("iii_directory.testing.engine")


class EventRouting:
    """The engine's binding tables and what moves events through them; the state it reads is set
    up by `TestEngine.__init__`."""

    functions: dict[tuple[str, str], FunctionEntry]
    trigger_types: dict[tuple[str, str], TriggerTypeEntry]
    bindings: dict[str, Binding]
    connections: dict[str, WorkerConn]
    configuration: ConfigurationStore
    pushes: list[dict[str, Any]]
    functions_debounce_s: float
    _tg: anyio.abc.TaskGroup | None
    _changed: anyio.Event
    _functions_dirty: anyio.Event
    _last_push_key: tuple[Any, ...] | None

    def worker(self, name: str) -> WorkerConn | None:
        """The live connection that registered `name` (None when absent)."""
        for conn in self.connections.values():
            if conn.name == name and not conn.closed:
                return conn
        return None

    def function(self, function_id: str, namespace: str = DEFAULT_NAMESPACE) -> FunctionEntry | None:
        return self.functions.get((namespace, function_id))

    async def _send(self, conn: WorkerConn, frame: dict[str, Any]) -> bool:
        raise NotImplementedError

    async def _call(self, caller: WorkerConn | None, function_id: str, data: Any, **options: Any) -> Any:
        raise NotImplementedError

    async def _drain_buffer(self, conn: WorkerConn) -> None:
        raise NotImplementedError

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
