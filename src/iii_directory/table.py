"""The function table: each public id declared once (docs/rules/design.md §1).

A `Surface` is what one `functions.*` module contributes: its functions (id, description,
request/response models, metadata, handler), the trigger types it provides, the trigger
bindings it subscribes to, and background tasks to start once the worker is registered.
Registration frames, `iii-directory call`, `iii-directory schema` and the tests all read it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
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
    response: type[Response] | None
    handler: Handler
    metadata: Mapping[str, Any] = field(default_factory=dict)
    timeout_s: float | None = None
    """Local deadline for the handler; None = no deadline beyond the caller's own."""

    def request_schema(self) -> dict[str, Any]:
        return draft07_schema(self.request, mode="validation")

    def response_schema(self) -> dict[str, Any] | None:
        if self.response is None:
            return None
        return draft07_schema(self.response, mode="serialization")

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


@dataclass(frozen=True)
class FunctionTable:
    """All surfaces merged; ids are unique."""

    functions: Mapping[str, FunctionSpec]
    trigger_types: tuple[TriggerTypeSpec, ...]
    bindings: tuple[BindingSpec, ...]
    on_start: tuple[StartHook, ...]
    on_stop: tuple[StartHook, ...]

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
