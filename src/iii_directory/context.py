"""What a handler receives besides its request (docs/rules/design.md §2).

`Context` gives the settings snapshot for this call, the engine port (`call`, `fire`, `emit`),
the caller's baggage and trace context (re-sent on nested calls), the clock, and the
`Runtime` that owns caches and services (`ctx.directory`). Handlers never see the socket.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .port import DEFAULT_CALL_TIMEOUT_S
from .protocol.baggage import parse_baggage

if TYPE_CHECKING:
    from .config import Settings
    from .port import EnginePort
    from .runtime import Runtime


@dataclass
class CallInfo:
    """Per-invocation wire context: raw baggage and traceparent, the metadata sidecar and the
    calling connection (when the engine inserted `_caller_worker_id`)."""

    baggage: str | None = None
    traceparent: str | None = None
    metadata: Mapping[str, Any] | None = None
    caller_worker_id: str | None = None


@dataclass
class Context:
    directory: Runtime
    settings: Settings
    info: CallInfo = field(default_factory=CallInfo)

    @property
    def engine(self) -> EnginePort:
        return self.directory.engine

    @property
    def baggage(self) -> dict[str, str]:
        return parse_baggage(self.info.baggage)

    @property
    def session_id(self) -> str | None:
        """`iii.session.id` from the caller's baggage (unauthenticated; may be absent)."""
        value = self.baggage.get("iii.session.id", "").strip()
        return value or None

    @property
    def standalone(self) -> bool:
        return self.directory.engine.standalone

    async def call(
        self,
        function_id: str,
        data: Any,
        *,
        timeout: float = DEFAULT_CALL_TIMEOUT_S,
        namespace: str | None = None,
    ) -> Any:
        """Call another function, forwarding this call's baggage and traceparent."""
        return await self.directory.engine.call(
            function_id,
            data,
            timeout=timeout,
            namespace=namespace,
            baggage=self.info.baggage,
            traceparent=self.info.traceparent,
        )

    async def fire(self, function_id: str, data: Any, *, namespace: str | None = None) -> None:
        await self.directory.engine.fire(
            function_id, data, namespace=namespace,
            baggage=self.info.baggage, traceparent=self.info.traceparent,
        )

    def emit(self, trigger_type: str, payload: Mapping[str, Any]) -> None:
        """Fire an event of one of this worker's trigger types (never waits for subscribers)."""
        self.directory.engine.emit(trigger_type, payload)

    @staticmethod
    def monotonic() -> float:
        return time.monotonic()

    @staticmethod
    def now() -> float:
        return time.time()
