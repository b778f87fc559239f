"""The kits subsystem's per-Directory state and its read-side flows (docs/rules/kits.md §8, §9): list,
get, diff, ignore and update checks, with their events on `directory::kits::on-change`.

`KitsState` holds the registry client, the clock and the schedule settings; `service.KitsService`
builds the plan and apply flows on it.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..config import Settings
from ..errors import DirectoryError
from .clock import FIRST_CHECK_DELAY_S, UPDATE_INTERVAL_S, Clock, stamp, utc_now
from .compose import POLL_INTERVAL_S, kit_root, read_declared
from .events import KITS_ON_CHANGE
from .lock import (
    Lock,
    LockedKit,
    file_state,
    load_lock,
    lock_path,
    read_lock,
    write_lock,
)
from .paths import (
    decode,
    file_id,
    is_valid_install_path,
    kind_of,
    local_sha,
    read_local,
    sha256_hex,
)
from .records import (
    CheckUpdatesResult,
    DiffResult,
    FileCounts,
    FileRow,
    GetResult,
    IgnoreResult,
    KitRow,
    KitUpdateRow,
    ListResult,
    PlanRecord,
    PlanSummary,
    UpdateCache,
    WorkerStatus,
)
from .ref import (
    KitRef,
    RefError,
    parse_kit_id,
    satisfies,
)
from .registry import KitRegistry, kit_page, worker_page
from .store import PlanStore
from .updates import available_map, filtered, queries, read_cache, refilter, write_cache

if TYPE_CHECKING:
    from ..runtime import Runtime

log = logging.getLogger(__name__)

NEXT_INSTALLED = "Next: call directory::kits::list to see installed kits."


def ref_error(exc: RefError, usage: str) -> DirectoryError:
    return DirectoryError("D511", f"D511 invalid_input: {exc}. Use {usage}.")


def not_installed(kit: str, *, with_next: bool = True) -> DirectoryError:
    text = f'D510 not_found: kit "{kit}" is not installed in this project.'
    return DirectoryError("D510", f"{text} {NEXT_INSTALLED}" if with_next else text)


class KitsState:
    """Per-Directory state of the kits subsystem (`directory.service(KitsService)`) and the
    flows that read the project without planning anything."""

    def __init__(self, directory: Runtime) -> None:
        self.directory = directory
        self.registry: KitRegistry = directory.service(KitRegistry)
        self.clock: Clock = utc_now
        self.poll_interval_s: float = POLL_INTERVAL_S
        self.update_interval_s: float = UPDATE_INTERVAL_S
        self.first_check_delay_s: float = FIRST_CHECK_DELAY_S
        self._apply_lock = anyio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._daemons: set[asyncio.Task[Any]] = set()

    # -- plumbing -------------------------------------------------------------------------

    @staticmethod
    def root() -> Path:
        return kit_root()

    def store(self, root: Path) -> PlanStore:
        return PlanStore(root, self.directory.self_writes)

    def emit(self, trigger_type: str, payload: dict[str, Any]) -> None:
        try:
            self.directory.engine.emit(trigger_type, payload)
        except Exception:  # noqa: BLE001 - events are fire-and-forget
            log.exception("emit %s failed", trigger_type)

    def _installed(self, raw: str, *, with_next: bool = True) -> tuple[KitRef, Path, Lock, LockedKit]:
        """The kit `raw` names, the project root, its lock and the kit's entry; D510 when the
        kit is not installed."""
        try:
            ref = parse_kit_id(raw)
        except RefError as exc:
            raise ref_error(exc, "kit=<author>/<kit>") from None
        root = self.root()
        lock = load_lock(root)
        installed = lock.get(ref.kit)
        if installed is None:
            raise not_installed(ref.kit, with_next=with_next)
        return ref, root, lock, installed

    # -- list, get, diff ------------------------------------------------------------------

    def _row(self, settings: Settings, kit: str, entry: LockedKit, cache: UpdateCache,
             pending: list[PlanRecord]) -> KitRow:
        counts = FileCounts(agents=0, skills=0, intact=0, edited=0, missing=0, skipped=0)
        for path, locked in entry.files.items():
            if path.startswith("agents/"):
                counts.agents += 1
            else:
                counts.skills += 1
            state = file_state(locked, local_sha(settings, path))
            setattr(counts, state, getattr(counts, state) + 1)
        update = cache.kits.get(kit)
        return KitRow(
            kit=kit, version=entry.version, requested=entry.requested,
            installed_at=entry.installed_at, workers=dict(sorted(entry.workers.items())),
            files=counts, update=update if update is not None and update.current == entry.version else None,
            registry_url=kit_page(settings, kit),
            pending=[r.plan.plan_id for r in pending if r.plan.kit == kit],
        )

    def list(self, settings: Settings) -> ListResult:
        root = self.root()
        lock = load_lock(root)
        pending = self.store(root).list(self.clock())
        cache = read_cache(root)
        rows = [self._row(settings, kit, lock.kits[kit], cache, pending) for kit in sorted(lock.kits)]
        pending_updates = {r.plan.kit for r in pending if r.plan.kind == "update"}
        attention = len(pending) + sum(
            1 for row in rows if row.update and row.update.available and row.kit not in pending_updates
        )
        summaries = [
            PlanSummary(
                plan_id=r.plan.plan_id, kind=r.plan.kind, kit=r.plan.kit, from_=r.plan.from_, to=r.plan.to,
                major=r.plan.major, counts=r.plan.counts, warnings=len(r.plan.warnings),
                blocking=len(r.plan.blocking), created_at=r.plan.created_at, expires_at=r.plan.expires_at,
            )
            for r in pending
        ]
        return ListResult(
            kits=rows, pending=summaries, updates_checked_at=cache.checked_at,
            updates_error=cache.error, attention=attention, lock_path=str(lock_path(root)),
        )

    async def get(self, settings: Settings, raw: str, with_registry: bool) -> GetResult:
        ref, root, _lock, entry = self._installed(raw)
        pending = self.store(root).list(self.clock())
        row = self._row(settings, ref.kit, entry, read_cache(root), pending)
        file_list: list[FileRow] = []
        for path, locked in sorted(entry.files.items()):
            sha = local_sha(settings, path)
            file_list.append(FileRow(
                path=path, kind=kind_of(path), id=file_id(path) if is_valid_install_path(path) else path,
                state=file_state(locked, sha), sha256=locked.sha256, local_sha256=sha,
            ))
        declared = read_declared()
        worker_status = []
        for name, rng in sorted(entry.workers.items()):
            decl = declared.get(name)
            installed = decl.installed if decl else None
            worker_status.append(WorkerStatus(
                name=name, range=rng, declared=decl.selector if decl else None, installed=installed,
                satisfied=satisfies(rng, installed) if installed else None,
                path=bool(decl and decl.path_worker), registry_url=worker_page(settings, name),
            ))
        detail = readme = None
        if with_registry:
            try:
                detail = await self.registry.detail(settings, ref.kit, entry.version)
            except DirectoryError:
                detail = None
            try:
                readme = await self.registry.readme(settings, ref.kit, entry.version)
            except DirectoryError:
                readme = None
        return GetResult(
            **row.model_dump(), file_list=file_list, detail=detail, readme=readme,
            worker_status=worker_status,
        )

    async def diff(self, settings: Settings, raw: str, path: str) -> DiffResult:
        ref, _root, _lock, entry = self._installed(raw)
        locked = entry.files.get(path)
        if locked is None:
            raise DirectoryError("D510", f"D510 not_found: {path} is not a file of {ref.kit}.")
        base = await self.registry.blob(settings, locked.sha256)
        data = read_local(settings, path)
        local = decode(data)
        return DiffResult(
            kit=ref.kit, path=path, base=base, local=local,
            state=file_state(locked, sha256_hex(data) if data is not None else None),
        )

    # -- ignore, check-updates ------------------------------------------------------------

    def ignore(self, raw: str, version: str, ignore: bool) -> IgnoreResult:
        ref, root, lock, entry = self._installed(raw, with_next=False)
        versions = [v for v in entry.ignored_versions if v != version]
        if ignore:
            versions = sorted([*versions, version])
        entry.ignored_versions = versions
        write_lock(root, lock, self.directory.self_writes)
        if ignore:
            store = self.store(root)
            for record in store.list(self.clock()):
                if record.plan.kit == ref.kit and record.plan.kind == "update" and record.plan.to == version:
                    store.delete(record.plan.plan_id)
        cache = read_cache(root)
        if ref.kit in cache.kits:
            cache.kits[ref.kit] = refilter(cache.kits[ref.kit], version, ignore)
            write_cache(root, cache, self.directory.self_writes)
        self.emit(KITS_ON_CHANGE, {"op": "updates", "kit": ref.kit})
        return IgnoreResult(kit=ref.kit, ignored_versions=versions)

    async def check_updates(
        self, settings: Settings, kit: str | None = None, *, event_kit: bool = False
    ) -> CheckUpdatesResult:
        root = self.root()
        lock = load_lock(root)
        only: str | None = None
        if kit is not None:
            try:
                only = parse_kit_id(kit).kit
            except RefError as exc:
                raise ref_error(exc, "kit=<author>/<kit>") from None
            if only not in lock.kits:
                raise not_installed(only)
        previous = read_cache(root)
        fresh = UpdateCache(checked_at=stamp(self.clock()), kits=dict(previous.kits) if only else {})
        try:
            answers = await self.registry.updates(settings, queries(lock, only))
        except DirectoryError as exc:
            failed = UpdateCache(checked_at=fresh.checked_at, kits=dict(previous.kits), error=exc.message)
            write_cache(root, failed, self.directory.self_writes)
            raise
        for answer in answers:
            entry = lock.get(answer.kit)
            if entry is None or (only is not None and answer.kit != only):
                continue
            fresh.kits[answer.kit] = filtered(answer, entry)
        fresh.kits = {k: v for k, v in sorted(fresh.kits.items()) if k in lock.kits}
        changed = available_map(fresh) != available_map(previous)
        write_cache(root, fresh, self.directory.self_writes)
        if changed:
            payload: dict[str, Any] = {"op": "updates"}
            if event_kit and only:
                payload["kit"] = only
            self.emit(KITS_ON_CHANGE, payload)
        return CheckUpdatesResult(
            checked_at=fresh.checked_at,
            available=sum(1 for u in fresh.kits.values() if u.available),
            kits=[KitUpdateRow(kit=k, **u.model_dump()) for k, u in fresh.kits.items()],
            error=None,
        )

    # -- schedule -------------------------------------------------------------------------

    async def scheduled_checks(self) -> None:
        """15 s after start, then every 6 hours, while the lock lists at least one kit."""
        await anyio.sleep(self.first_check_delay_s)
        while True:
            settings = self.directory.settings
            try:
                if read_lock_kits(self.root()):
                    await self.check_updates(settings)
            except DirectoryError as exc:
                log.info("scheduled kit update check failed: %s", exc.message)
            except Exception:  # noqa: BLE001 - never let the schedule die
                log.exception("scheduled kit update check failed")
            await anyio.sleep(self.update_interval_s)


def read_lock_kits(root: Path) -> bool:
    return bool(read_lock(root).kits)
