"""The function table: each public id declared once (docs/rules/design.md §1).

A `Surface` is what one `functions.*` module contributes: its functions (id, description,
request/response models, metadata, handler), the trigger types it provides, the trigger
bindings it subscribes to, and background tasks to start once the worker is registered.
Registration frames, `iii-directory call`, `iii-directory schema` and the tests all read it.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .models import Request, Response, draft07_schema

if TYPE_CHECKING:
    from .config import Settings

Handler = Callable[[Any, Any], Awaitable[Any]]
"""`async def handler(ctx: context.Context, request) -> response`. The table sits below the
context and the runtime that hold it, so it names neither type (docs/architecture.md, "Layers")."""
StartHook = Callable[[Any], Awaitable[None]]
"""`async def hook(runtime: runtime.Runtime) -> None`, run after registration / at stop."""


def tool_label(text: str) -> dict[str, Any]:
    """Function metadata `{"tool": {"label": text}}`: the label a harness shows for a call."""
    return {"tool": {"label": text}}


@dataclass(frozen=True)
class FunctionSpec:
    id: str
    description: str
    request: type[Request]
    response: type[Response] | str | None
    """The response model, or `"module:Name"` naming it: imported only to generate the schema,
    so a surface whose handlers get their responses from a domain module registers without
    building those models (registration reads the published frames: `published.py`)."""
    handler: Handler
    metadata: Mapping[str, Any] = field(default_factory=dict)
    timeout_s: float | None = None
    """Local deadline for the handler; None = no deadline beyond the caller's own."""

    def request_schema(self) -> dict[str, Any]:
        return draft07_schema(self.request, mode="validation")

    def response_model(self) -> type[Response] | None:
        """`response`, a `"module:Name"` reference imported."""
        if not isinstance(self.response, str):
            return self.response
        module, _, name = self.response.partition(":")
        model: type[Response] = getattr(importlib.import_module(module), name)
        return model

    def response_schema(self) -> dict[str, Any] | None:
        model = self.response_model()
        if model is None:
            return None
        return draft07_schema(model, mode="serialization")

    def registration(self) -> dict[str, Any]:
        """The `registerfunction` frame body (without `type`)."""
        frame: dict[str, Any] = {
            "id": self.id,
            "description": self.description,
            "request_format": self.request_schema(),
        }
        response = self.response_schema()
        if response is not None:
            frame["response_format"] = response
        frame["metadata"] = dict(self.metadata)
        return frame


@dataclass(frozen=True)
class TriggerTypeSpec:
    id: str
    description: str
    trigger_request_format: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    call_request_format: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})

    def registration(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "description": self.description,
            "trigger_request_format": dict(self.trigger_request_format),
            "call_request_format": dict(self.call_request_format),
        }


@dataclass(frozen=True)
class BindingSpec:
    """A subscription this worker registers (`registertrigger`).

    `enabled(settings)` decides whether the binding is active for the current settings;
    bindings whose answer changes on a configuration reload are bound or unbound live.
    """

    key: str
    trigger_type: str
    function_id: str
    config: Callable[["Settings"], Mapping[str, Any]]
    enabled: Callable[["Settings"], bool] = lambda _settings: True


@dataclass(frozen=True)
class Surface:
    functions: tuple[FunctionSpec, ...] = ()
    trigger_types: tuple[TriggerTypeSpec, ...] = ()
    bindings: tuple[BindingSpec, ...] = ()
    on_start: tuple[StartHook, ...] = ()
    on_stop: tuple[StartHook, ...] = ()


class FunctionTable:
    """All surfaces merged; ids are unique.

    `merge(surfaces)` builds it at once. `deferred(index, load, complete)` knows every id from
    `index` (function id → surface name, the published one: `published.py`) and imports a surface
    (`load(name)`) only when one of its functions is first looked up; the trigger types, bindings
    and hooks, and any id the index does not know, come from the complete table (`complete()`),
    built on first need. Why: `iii-directory call` of one function imports that function's
    surface alone (docs/startup.md).
    """

    def __init__(
        self,
        functions: Mapping[str, FunctionSpec],
        trigger_types: tuple[TriggerTypeSpec, ...] = (),
        bindings: tuple[BindingSpec, ...] = (),
        on_start: tuple[StartHook, ...] = (),
        on_stop: tuple[StartHook, ...] = (),
    ) -> None:
        self.functions: Mapping[str, FunctionSpec] = functions
        self._parts: _Parts | None = _Parts(trigger_types, bindings, on_start, on_stop)
        self._complete: Callable[[], FunctionTable] | None = None

    @classmethod
    def deferred(cls, index: Mapping[str, str], load: Callable[[str], Surface],
                 complete: Callable[[], FunctionTable]) -> FunctionTable:
        table = cls({})
        table._parts = None
        table._complete = _once(complete)
        table.functions = _DeferredFunctions(index, load, table._complete)
        return table

    def _all(self) -> _Parts:
        if self._parts is None:
            assert self._complete is not None
            self._parts = self._complete()._all()
        return self._parts

    @property
    def trigger_types(self) -> tuple[TriggerTypeSpec, ...]:
        return self._all().trigger_types

    @property
    def bindings(self) -> tuple[BindingSpec, ...]:
        return self._all().bindings

    @property
    def on_start(self) -> tuple[StartHook, ...]:
        return self._all().on_start

    @property
    def on_stop(self) -> tuple[StartHook, ...]:
        return self._all().on_stop

    @classmethod
    def merge(cls, surfaces: list[Surface]) -> FunctionTable:
        functions: dict[str, FunctionSpec] = {}
        trigger_types: list[TriggerTypeSpec] = []
        bindings: list[BindingSpec] = []
        on_start: list[StartHook] = []
        on_stop: list[StartHook] = []
        for surface in surfaces:
            for spec in surface.functions:
                if spec.id in functions:
                    raise ValueError(f"function id declared twice: {spec.id}")
                functions[spec.id] = spec
            trigger_types.extend(surface.trigger_types)
            bindings.extend(surface.bindings)
            on_start.extend(surface.on_start)
            on_stop.extend(surface.on_stop)
        ids = [t.id for t in trigger_types]
        if len(ids) != len(set(ids)):
            raise ValueError("trigger type declared twice")
        return cls(dict(sorted(functions.items())), tuple(trigger_types), tuple(bindings),
                   tuple(on_start), tuple(on_stop))


@dataclass(frozen=True)
class _Parts:
    trigger_types: tuple[TriggerTypeSpec, ...]
    bindings: tuple[BindingSpec, ...]
    on_start: tuple[StartHook, ...]
    on_stop: tuple[StartHook, ...]


def _once(build: Callable[[], FunctionTable]) -> Callable[[], FunctionTable]:
    """`build`, called at most once; later calls return its first table."""
    built: list[FunctionTable] = []

    def complete() -> FunctionTable:
        if not built:
            built.append(build())
        return built[0]

    return complete


class _DeferredFunctions(Mapping[str, FunctionSpec]):
    """Specs by id: the ids are the index's; a spec is read from its surface, loaded on the
    first lookup of one of its ids. An id the index lacks, or that its surface turns out not to
    declare, is looked up in the complete table, so a stale index costs time, never an answer."""

    def __init__(self, index: Mapping[str, str], load: Callable[[str], Surface],
                 complete: Callable[[], FunctionTable]) -> None:
        self._index = dict(sorted(index.items()))
        self._load = load
        self._complete = complete
        self._specs: dict[str, FunctionSpec] = {}
        self._loaded: set[str] = set()

    def __getitem__(self, function_id: str) -> FunctionSpec:
        spec = self._specs.get(function_id)
        if spec is not None:
            return spec
        surface = self._index.get(function_id)
        if surface is not None and surface not in self._loaded:
            self._loaded.add(surface)
            try:
                declared = self._load(surface).functions
            except KeyError:  # the index names a surface that no longer exists
                declared = ()
            for one in declared:
                self._specs.setdefault(one.id, one)
            spec = self._specs.get(function_id)
            if spec is not None:
                return spec
        return self._complete().functions[function_id]

    def __contains__(self, function_id: object) -> bool:
        return function_id in self._index or (
            isinstance(function_id, str) and self.get(function_id) is not None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)
