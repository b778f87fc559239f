"""`Runtime`: the one object that owns settings, caches, services and the function table
(docs/rules/design.md §8).

It sits below the domain (content, sources, kits, search) and the surfaces (`functions.*`), which
keep their per-instance state in it (`runtime.service(Factory)`); `directory.Directory` is the
runtime with the worker's full function table, and `invocation` runs one function of the table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from .config import Settings
from .atomic import SelfWrites
from .first_answer import FirstAnswerGate
from .port import EnginePort, StandaloneEngine
from .table import FunctionTable

log = logging.getLogger(__name__)

T = TypeVar("T")


class Runtime:
    def __init__(
        self,
        settings: Settings | None = None,
        engine: EnginePort | None = None,
        table: FunctionTable | None = None,
    ) -> None:
        self._settings = settings or Settings()
        self.boot_settings = self._settings
        self.engine: EnginePort = engine or StandaloneEngine()
        self.table = table if table is not None else FunctionTable.merge([])
        self.self_writes = SelfWrites()
        self._services: dict[Any, Any] = {}
        self.settings_listeners: list[Callable[[Settings, Settings], None]] = []
        self.calls_in_flight = 0
        """Function calls running now (`invocation.invoke`): what shared background work
        (the encoder's warm-up) reads to know whether callers are waiting."""
        self.first_answer = FirstAnswerGate()
        """What background start-up chores wait for (`first_answer.py`; open unless `serve`
        arms it)."""

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

    def service(self, factory: Callable[[Runtime], T]) -> T:
        """The one instance of a per-surface service (created on first use, keyed by factory)."""
        instance = self._services.get(factory)
        if instance is None:
            instance = factory(self)
            self._services[factory] = instance
        return instance

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
