"""Which skills a caller may see: installed workers, kit namespaces, `filter_unregistered` (§3.6).

The installed-worker set comes from `compose::status`: worker names are
`containers[].container` (every declared container whatever its run state; entries without a
name are skipped; `containers: []` is a valid empty set; a missing or non-array `containers`
means "unknown"). It is cached for `registry_cache_ttl_ms` (the live value; `0` disables the
cache). On a fetch error or an unknown shape the last-known set is used; with no last-known set
the answer is "unknown" and the filter is skipped. In standalone mode the engine is never asked.

A skill survives the filter when ANY holds: its id has no `/`; its top segment is `directory`
or `iii`; its top segment is an installed worker or an agents namespace; or its id lies under
an installed kit namespace `<handle>/<kit>/`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .kits_lock import read_lock

if TYPE_CHECKING:
    from ..config import Settings
    from ..context import Context
    from ..runtime import Runtime

log = logging.getLogger(__name__)

COMPOSE_STATUS = "compose::status"
COMPOSE_STATUS_TIMEOUT_S = 5.0
ALWAYS_VISIBLE_NAMESPACES: frozenset[str] = frozenset({"directory", "iii"})


def parse_installed(payload: Any) -> frozenset[str] | None:
    """Worker names from a `compose::status` answer, or None when the shape is unknown."""
    if not isinstance(payload, Mapping):
        return None
    containers = payload.get("containers")
    if not isinstance(containers, list):
        return None
    names = set()
    for entry in containers:
        if isinstance(entry, Mapping):
            name = entry.get("container")
            if isinstance(name, str) and name.strip():
                names.add(name.strip())
    return frozenset(names)


def compose_route() -> tuple[dict[str, Any], str | None]:
    """The base payload and namespace of a `compose::*` call (docs/rules/protocol.md §12):
    `III_COMPOSE_NAMESPACE` (non-blank) routes the call there and adds `namespace`;
    `III_COMPOSE_FILE` (non-blank) adds `file`; otherwise the payload is `{}`."""
    payload: dict[str, Any] = {}
    namespace = os.environ.get("III_COMPOSE_NAMESPACE", "").strip() or None
    compose_file = os.environ.get("III_COMPOSE_FILE", "").strip()
    if compose_file:
        payload["file"] = compose_file
    if namespace:
        payload["namespace"] = namespace
    return payload, namespace


class InstalledWorkers:
    """The cached installed-worker set (one per Directory: `directory.service(InstalledWorkers)`).

    `invalidate()` forces the next read to re-fetch (configuration reload, a successful
    auto-download, a kit apply that changed workers); the last-known set survives it so a
    failing fetch can still fall back to it.
    """

    def __init__(self, directory: Runtime) -> None:
        self._directory = directory
        self._last_known: frozenset[str] | None = None
        self._fetched_at: float | None = None
        import anyio  # served calls alone ask the engine (a file-backed `call` runs without it)

        self._lock = anyio.Lock()
        directory.settings_listeners.append(lambda _old, _new: self.invalidate())

    @property
    def last_known(self) -> frozenset[str] | None:
        return self._last_known

    def invalidate(self) -> None:
        self._fetched_at = None

    def remember(self, names: Iterable[str]) -> None:
        """Store a set obtained elsewhere (e.g. the boot reconcile's own `compose::status`)."""
        self._last_known = frozenset(names)
        self._fetched_at = time.monotonic()

    def _fresh(self, settings: Settings) -> bool:
        if self._fetched_at is None or self._last_known is None:
            return False
        ttl = settings.registry_cache_ttl_ms / 1000.0
        return ttl > 0 and time.monotonic() - self._fetched_at < ttl

    async def get(self, ctx: Context | None = None, *, fresh: bool = False) -> frozenset[str] | None:
        """The installed set (None = unknown). `fresh=True` always asks the engine."""
        directory = self._directory
        if directory.engine.standalone:
            return self._last_known
        settings = ctx.settings if ctx is not None else directory.settings
        if not fresh and self._fresh(settings):
            return self._last_known
        async with self._lock:
            if not fresh and self._fresh(settings):
                return self._last_known
            payload, namespace = compose_route()
            try:
                if ctx is not None:
                    answer = await ctx.call(COMPOSE_STATUS, payload, timeout=COMPOSE_STATUS_TIMEOUT_S,
                                            namespace=namespace)
                else:
                    answer = await directory.engine.call(
                        COMPOSE_STATUS, payload, timeout=COMPOSE_STATUS_TIMEOUT_S, namespace=namespace
                    )
            except Exception as exc:  # noqa: BLE001 - a failing peer never breaks a read
                log.warning("compose::status failed (%s); using the last-known worker set", exc)
                return self._last_known
            names = parse_installed(answer)
            if names is None:
                log.warning("compose::status answered an unknown shape; using the last-known set")
                return self._last_known
            self._last_known = names
            self._fetched_at = time.monotonic()
            return names


# --- kits.lock (lenient) -------------------------------------------------------------------


def kit_namespaces(root: Path | None = None) -> frozenset[str]:
    """Installed kit ids (`<handle>/<kit>`) from `<project root>/kits.lock`, read leniently: a
    missing, unreadable, unparsable or unsupported lock counts as no kits (docs/rules/kits.md §3.1)."""
    return frozenset(read_lock(root).namespaces())


# --- the filter ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Visibility:
    """Everything the §3.6 filter needs. `installed=None` means unknown (filter skipped)."""

    enabled: bool
    installed: frozenset[str] | None
    kits: frozenset[str]
    agents_namespaces: frozenset[str]

    @property
    def active(self) -> bool:
        return self.enabled and self.installed is not None

    def survives(self, skill_id: str) -> bool:
        """True when the skill stays visible (always, when the filter is not active)."""
        if not self.active or "/" not in skill_id:
            return True
        top = skill_id.split("/", 1)[0]
        if top in ALWAYS_VISIBLE_NAMESPACES or top in self.agents_namespaces:
            return True
        assert self.installed is not None
        if top in self.installed:
            return True
        return any(skill_id.startswith(kit + "/") for kit in self.kits)
