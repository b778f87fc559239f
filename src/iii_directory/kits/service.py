"""The kit flows that change the project (docs/rules/kits.md §8, §9): plan an install, update or removal,
apply, replan and discard, with their events on `directory::kits::on-change`.

`KitsService` (`directory.service(KitsService)`) adds to `state.KitsState` the apply lock (one
apply at a time per process), Compose polling and background tasks. Each flow receives a
`Session` — the settings snapshot of the call and the function used to call Compose — so
handlers never touch the socket.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..content.markers import all_markers
from ..content.visibility import InstalledWorkers
from ..errors import DirectoryError
from ..invocation import invoke
from .apply import (
    ApplyDeps,
    GivenDecision,
    Stale,
    applied_message,
    apply_plan,
    plan_missing,
)
from .compose import Caller, Compose, read_declared
from .events import KITS_ON_CHANGE
from .lock import (
    Lock,
    load_lock,
)
from .plan import (
    ProjectView,
    Target,
    auto_applicable,
    build_install,
    build_remove,
    build_update,
    planned_message,
)
from .records import (
    DiscardResult,
    FlowResult,
    PlanRecord,
    PlanResult,
    Progress,
)
from .ref import (
    KitRef,
    RefError,
    VersionRef,
    parse_kit_ref,
    parse_version_ref,
    requested_for,
    version_ref_from_requested,
)
from .store import new_plan_id

if TYPE_CHECKING:
    pass
from .state import KitsState, not_installed, ref_error

log = logging.getLogger(__name__)

AGENTS_ON_CHANGE = "directory::agents::on-change"
SKILLS_ON_CHANGE = "directory::skills::on-change"


@dataclass
class Session:
    """What one flow needs from its call: the settings snapshot and a Compose caller."""

    settings: Settings
    call: Caller


class KitsService(KitsState):
    # -- plumbing -------------------------------------------------------------------------

    def compose(self, session: Session) -> Compose:
        return Compose(session.call, poll_interval_s=self.poll_interval_s)

    def spawn(self, work: Coroutine[Any, Any, Any], name: str, *, daemon: bool = False) -> None:
        """Run background work; failures are logged only. `daemon` tasks (the update schedule)
        run until `stop` and are not waited for by `drain`."""

        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001
                log.exception("kits background task %s failed", name)

        task = asyncio.get_running_loop().create_task(guarded(), name=f"kits:{name}")
        pool = self._daemons if daemon else self._tasks
        pool.add(task)
        task.add_done_callback(pool.discard)

    async def drain(self) -> None:
        """Wait for the one-off background tasks started so far (not the schedule)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def stop(self) -> None:
        tasks = [*self._tasks, *self._daemons]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.registry.aclose()

    async def view(self, session: Session, lock: Lock, *, check_compose: bool) -> ProjectView:
        settings = session.settings
        compose_error = await self.compose(session).status() if check_compose else None
        return ProjectView(
            settings=settings,
            lock=lock,
            declared=read_declared(),
            compose_error=compose_error,
            markers=all_markers(settings.path("skills_folder")),
        )

    async def _target(self, settings: Settings, kit: str, version: str, detail: Any) -> Target:
        files = await self.registry.files(settings, kit, version)
        try:
            functions = await self.registry.functions(settings, kit, version)
        except DirectoryError:
            functions = []
        return Target(detail=detail, files=files, functions=functions)

    async def _old_detail(self, settings: Settings, kit: str, version: str) -> Any:
        try:
            return await self.registry.detail(settings, kit, version)
        except DirectoryError:
            return None

    def _blob_fetcher(self, settings: Settings) -> Callable[[str], Awaitable[str | None]]:
        async def fetch(sha: str) -> str | None:
            try:
                return await self.registry.blob(settings, sha)
            except DirectoryError:
                return None

        return fetch

    async def _build(
        self, session: Session, ref: KitRef, version: VersionRef, requested: str, lock: Lock,
        *, plan_id: str,
    ) -> tuple[PlanRecord | None, str]:
        """Resolve and build an install or update plan; (None, version) when the lock already
        has the resolved version."""
        settings = session.settings
        detail = await self.registry.resolve(settings, ref, version)
        installed = lock.get(ref.kit)
        view = await self.view(session, lock, check_compose=True)
        if installed is not None and installed.version == detail.version:
            return None, detail.version
        target = await self._target(settings, ref.kit, detail.version, detail)
        now = self.clock()
        if installed is None:
            return build_install(ref.handle, ref.name, requested, target, view, plan_id, now), detail.version
        old = await self._old_detail(settings, ref.kit, installed.version)
        record = await build_update(
            ref.handle, ref.name, requested, installed, target, old, view, plan_id, now,
            self._blob_fetcher(settings),
        )
        return record, detail.version

    def _publish(self, root: Path, record: PlanRecord, *, supersede: bool) -> None:
        store = self.store(root)
        store.save(record)
        plan = record.plan
        if supersede:
            store.supersede(plan.kit, plan.kind, plan.plan_id, self.clock())
        self.emit(KITS_ON_CHANGE, {"op": "plan", "kit": plan.kit, "plan_id": plan.plan_id, "kind": plan.kind})

    # -- download-kit, plan-update, remove ------------------------------------------------

    async def download_kit(self, session: Session, raw: str, apply: bool) -> FlowResult:
        try:
            ref = parse_kit_ref(raw)
        except RefError as exc:
            raise ref_error(exc, "kit=<author>/<kit>[@<version|tag|range>]") from None
        root = self.root()
        lock = load_lock(root)
        installed = lock.get(ref.kit)
        if ref.version is not None:
            version = ref.version
        elif installed is not None:
            try:
                version = version_ref_from_requested(installed.requested)
            except RefError as exc:
                raise ref_error(exc, "kit=<author>/<kit>[@<version|tag|range>]") from None
        else:
            version = VersionRef("tag", "latest")
        requested = requested_for(ref.version, installed.requested if installed else None)
        record, resolved = await self._build(session, ref, version, requested, lock, plan_id=new_plan_id())
        if record is None:
            return FlowResult(status="up_to_date", kit=ref.kit, message=f"{ref.kit} {resolved} is already installed.")
        self._publish(root, record, supersede=True)
        plan = record.plan
        if apply and auto_applicable(plan):
            return await self.apply(session, plan.plan_id, None, None, progress_as=("", raw.strip()))
        prefix = "Not applied automatically: the plan needs review. " if apply else ""
        return FlowResult(status="planned", kit=ref.kit, message=prefix + planned_message(plan), plan=plan)

    async def plan_update(self, session: Session, raw: str, version_text: str | None) -> FlowResult:
        ref, root, lock, installed = self._installed(raw)
        try:
            if version_text is not None:
                version = parse_version_ref(version_text)
                requested = requested_for(version, None)
            else:
                version = version_ref_from_requested(installed.requested)
                requested = installed.requested
        except RefError as exc:
            raise ref_error(exc, "version=<version|tag|range>") from None
        settings = session.settings
        detail = await self.registry.resolve(settings, ref, version)
        if detail.version == installed.version:
            return FlowResult(
                status="up_to_date", kit=ref.kit,
                message=f'{ref.kit} {installed.version} is up to date for "{requested}".',
            )
        view = await self.view(session, lock, check_compose=True)
        target = await self._target(settings, ref.kit, detail.version, detail)
        old = await self._old_detail(settings, ref.kit, installed.version)
        record = await build_update(
            ref.handle, ref.name, requested, installed, target, old, view, new_plan_id(),
            self.clock(), self._blob_fetcher(settings),
        )
        self._publish(root, record, supersede=True)
        return FlowResult(status="planned", kit=ref.kit, message=planned_message(record.plan), plan=record.plan)

    async def remove(self, session: Session, raw: str) -> FlowResult:
        ref, root, lock, installed = self._installed(raw)
        # Removal plans never block on Compose; an apply that removes workers checks it then.
        view = await self.view(session, lock, check_compose=False)
        record = build_remove(ref.kit, installed, view, new_plan_id(), self.clock())
        self._publish(root, record, supersede=True)
        return FlowResult(status="planned", kit=ref.kit, message=planned_message(record.plan), plan=record.plan)

    # -- apply ----------------------------------------------------------------------------

    async def apply(
        self,
        session: Session,
        plan_id: str,
        decisions: dict[str, GivenDecision] | None,
        remove_workers: list[str] | None,
        *,
        progress_as: tuple[str, str] | None = None,
    ) -> FlowResult:
        async with self._apply_lock:
            root = self.root()
            store = self.store(root)
            record = store.load(plan_id)
            if record is None:
                raise plan_missing(plan_id)
            plan = record.plan
            event_plan, event_kit = progress_as or (plan.plan_id, plan.kit)

            async def on_progress(progress: Progress) -> None:
                self.emit(KITS_ON_CHANGE, {
                    "op": "progress", "plan_id": event_plan, "kit": event_kit,
                    "steps": [s.model_dump(mode="json") for s in progress.steps],
                    "error": progress.error,
                })

            deps = ApplyDeps(
                settings=session.settings, root=root, store=store, registry=self.registry,
                compose=self.compose(session), marks=self.directory.self_writes,
                clock=self.clock, on_progress=on_progress,
            )
            try:
                report = await apply_plan(record, deps, decisions, remove_workers)
            except Stale as stale:
                return await self._replan(session, root, record, stale.reason)
        self._after_apply(session, report)
        return FlowResult(status="applied", kit=plan.kit, message=applied_message(report), report=report)

    async def _replan(self, session: Session, root: Path, old: PlanRecord, reason: str) -> FlowResult:
        """The project changed since `old` was made: drop it and plan the same change again."""
        store = self.store(root)
        store.delete(old.plan.plan_id)
        plan = old.plan
        lock = load_lock(root)
        handle, _, name = plan.kit.partition("/")
        if plan.kind == "remove":
            installed = lock.get(plan.kit)
            if installed is None:
                raise not_installed(plan.kit)
            view = await self.view(session, lock, check_compose=False)
            record: PlanRecord | None = build_remove(plan.kit, installed, view, new_plan_id(), self.clock())
        else:
            try:
                version = VersionRef("exact", plan.to) if plan.to else version_ref_from_requested(plan.requested)
            except RefError as exc:
                raise ref_error(exc, "kit=<author>/<kit>[@<version|tag|range>]") from None
            record, resolved = await self._build(
                session, KitRef(handle, name), version, plan.requested, lock, plan_id=new_plan_id()
            )
            if record is None:
                return FlowResult(
                    status="up_to_date", kit=plan.kit,
                    message=f"Not applied: {reason}. {plan.kit} {resolved} is already installed.",
                )
        assert record is not None
        self._publish(root, record, supersede=False)
        return FlowResult(
            status="replanned", kit=plan.kit,
            message=f"Not applied: {reason}. {planned_message(record.plan)}", plan=record.plan,
        )

    def _after_apply(self, session: Session, report: Any) -> None:
        payload = {"op": "kit", "kit": report.kit, "plan_id": report.plan_id}
        if report.agents_changed:
            self.emit(AGENTS_ON_CHANGE, payload)
        if report.skills_changed:
            self.emit(SKILLS_ON_CHANGE, payload)
        self.emit(KITS_ON_CHANGE, {"op": "apply", "kit": report.kit, "plan_id": report.plan_id, "kind": report.kind})
        if report.workers_added or report.workers_updated or report.workers_removed:
            self._workers_changed()
        moved = [*report.workers_added, *report.workers_updated]
        if moved:
            self.spawn(self._download_bundles(moved), "bundles")
        if report.kind != "remove":
            self.spawn(self._check_quietly(session.settings, report.kit), "check-updates")

    def _workers_changed(self) -> None:
        """Installed workers moved: the skills visibility filter must re-read Compose."""
        self.directory.service(InstalledWorkers).invalidate()

    async def _download_bundles(self, workers: list[str]) -> None:
        """Fetch the skill bundles of added / updated workers (tag `latest`); the download
        skips kit-owned profiles and fires its own on-change events."""
        function_id = "directory::skills::download"
        if function_id not in self.directory.table.functions:
            return
        wrote = False
        for worker in workers:
            try:
                result = await invoke(self.directory, function_id, {"worker": worker, "tag": "latest"})
            except DirectoryError as exc:
                log.info("skill bundle of %s not downloaded: %s", worker, exc.message)
                continue
            if isinstance(result, dict) and any(
                result.get(key) for key in ("skills_written", "agents_written", "system_prompts_written")
            ):
                wrote = True
        if wrote:
            self._workers_changed()

    async def _check_quietly(self, settings: Settings, kit: str) -> None:
        try:
            await self.check_updates(settings, kit, event_kit=True)
        except DirectoryError as exc:
            log.info("update check for %s failed: %s", kit, exc.message)

    # -- plan, discard --------------------------------------------------------------------

    def plan(self, plan_id: str, contents: bool) -> PlanResult:
        record = self.store(self.root()).load(plan_id)
        if record is None:
            raise plan_missing(plan_id)
        return PlanResult(plan=record.plan, progress=record.progress, contents=record.contents if contents else None)

    def discard(self, plan_id: str) -> DiscardResult:
        store = self.store(self.root())
        try:
            record = store.load(plan_id)
        except DirectoryError:
            record = None
        discarded = store.delete(plan_id)
        if discarded:
            self.emit(KITS_ON_CHANGE, {"op": "discard", "plan_id": plan_id, "kit": record.plan.kit if record else None})
        return DiscardResult(plan_id=plan_id, discarded=discarded)



def engine_caller(call: Callable[..., Awaitable[Any]]) -> Caller:
    """Adapt `ctx.call` / `engine.call` to the Compose caller signature."""

    async def caller(function_id: str, data: dict[str, Any], timeout: float, namespace: str | None) -> Any:
        return await call(function_id, data, timeout=timeout, namespace=namespace)

    return caller


__all__ = ["KitsService", "Session", "engine_caller"]
