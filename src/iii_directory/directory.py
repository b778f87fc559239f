"""The one object that owns settings, caches, services and the function table
(DESIGN.md rule 8), and runs an invocation: validate → handler → serialise."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import anyio

from .content.atomic import SelfWrites
from .config import Settings
from .context import CallInfo, Context
from .errors import DirectoryError, from_exception
from .models import dump_response, parse_request
from .port import EnginePort, StandaloneEngine
from .payload_text import lone_surrogate_problem
from .table import FunctionTable

log = logging.getLogger(__name__)

T = TypeVar("T")


class Directory:
    def __init__(
        self,
        settings: Settings | None = None,
        engine: EnginePort | None = None,
        table: FunctionTable | None = None,
    ) -> None:
        from .functions import build_table

        self._settings = settings or Settings()
        self.boot_settings = self._settings
        self.engine: EnginePort = engine or StandaloneEngine()
        self.table = table or build_table()
        self.self_writes = SelfWrites()
        self._services: dict[Any, Any] = {}
        self.settings_listeners: list[Callable[[Settings, Settings], None]] = []

    @property
    def settings(self) -> Settings:
        """The live settings; handlers take one snapshot per call."""
        return self._settings

    def apply_settings(self, new: Settings) -> None:
        """Swap the live settings (tunables) and notify listeners (caches clear themselves)."""
        old = self._settings
        self._settings = new
        for listener in list(self.settings_listeners):
            try:
                listener(old, new)
            except Exception:  # noqa: BLE001 - a listener must not break the reload
                log.exception("settings listener failed")

    def service(self, factory: Callable[[Directory], T]) -> T:
        """The one instance of a per-surface service (created on first use, keyed by factory)."""
        instance = self._services.get(factory)
        if instance is None:
            instance = factory(self)
            self._services[factory] = instance
        return instance

    def context(self, info: CallInfo | None = None) -> Context:
        return Context(directory=self, settings=self._settings, info=info or CallInfo())

    async def invoke(self, function_id: str, data: Any, info: CallInfo | None = None) -> Any:
        """Run one function of the table; raise DirectoryError (coded) on any failure."""
        spec = self.table.functions.get(function_id)
        if spec is None:
            raise DirectoryError("function_not_found", f"Function '{function_id}' not found")
        if isinstance(data, dict) and "_caller_worker_id" in data:
            info = info or CallInfo()
            info.caller_worker_id = str(data.get("_caller_worker_id"))
        problem = lone_surrogate_problem(data)
        if problem:
            raise DirectoryError.plain(problem)
        request = parse_request(spec.request, data)
        ctx = self.context(info)
        try:
            if spec.timeout_s is not None:
                with anyio.fail_after(spec.timeout_s):
                    result = await spec.handler(ctx, request)
            else:
                result = await spec.handler(ctx, request)
        except DirectoryError:
            raise
        except TimeoutError:
            raise DirectoryError("TIMEOUT", f"{function_id} timed out") from None
        except Exception as exc:  # noqa: BLE001 - every failure becomes a coded error
            if not isinstance(exc, (OSError, ValueError)):
                log.exception("handler %s failed", function_id)
            raise from_exception(exc) from None
        return dump_response(result)

    async def start(self) -> None:
        """Run the surfaces' start hooks (background work after registration)."""
        for hook in self.table.on_start:
            try:
                await hook(self)
            except Exception:  # noqa: BLE001
                log.exception("start hook %s failed", getattr(hook, "__qualname__", hook))

    async def stop(self) -> None:
        for hook in self.table.on_stop:
            try:
                await hook(self)
            except Exception:  # noqa: BLE001
                log.exception("stop hook %s failed", getattr(hook, "__qualname__", hook))
