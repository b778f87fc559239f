"""Apply a reviewed plan (docs/rules/kits.md §8.5): workers through Compose, then files through a
journal, then `kits.lock` last.

Order and guarantees:

1. re-validate against the project (nothing written yet); a changed project raises `Stale`
   and the caller replans;
2. blocking issues; 3. `remove_workers`; 4. decisions, resolved against the bodies stored
   with the plan — so a rejected apply never counts a download;
5. the counted download, checked sha by sha against what was reviewed (D516);
6.–7. Compose: a failure leaves files and lock untouched;
8. files in plan order, each write atomic; the journal (`progress.written`: install path →
   sha written, `""` for a deletion) is persisted every 10 files and after the last, so a
   retried apply accepts its own earlier writes during re-validation and converges;
9. the lock, last: it never claims content that is not on disk.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import Settings
from ..atomic import SelfWrites, atomic_delete, atomic_write
from ..errors import DirectoryError
from .clock import Clock, stamp
from .compose import Compose, ComposeFailure, compose_error
from .lock import LockedFile, LockedKit, load_lock, lock_path, write_lock
from .merge import has_conflict_markers
from .paths import agent_id, disk_path, install_path_for, local_sha, normalize, sha256_hex
from .records import ApplyReport, Decision, PlanFile, PlanRecord, Progress, Step
from .registry import KitRegistry, ci_flag
from .store import PlanStore, is_expired

JOURNAL_EVERY = 10
NEXT_PLANS = "Next: call directory::kits::list to see pending plans."


class Stale(Exception):
    """The project changed since the plan was made; `reason` is one sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Choice:
    """A resolved decision: what to do with one plan file (merged text for `merged`)."""

    decision: Decision
    content: str | None = None


@dataclass(frozen=True)
class GivenDecision:
    choice: str
    content: str | None = None


@dataclass
class ApplyDeps:
    settings: Settings
    root: Path
    store: PlanStore
    registry: KitRegistry
    compose: Compose
    marks: SelfWrites
    clock: Clock
    on_progress: Callable[[Progress], Awaitable[None]]
    write: Callable[[Path, str, SelfWrites | None], int] | None = None
    """File writer (default: `atomic_write`); tests inject failures here."""
    delete: Callable[[Path, SelfWrites | None], None] | None = None
    """File remover (default: `atomic_delete`)."""


def plan_missing(plan_id: str) -> DirectoryError:
    return DirectoryError(
        "D512",
        f'D512 not_found: plan "{plan_id}" does not exist (applied, discarded or expired). {NEXT_PLANS}',
    )


def _invalid(code: str, text: str) -> DirectoryError:
    return DirectoryError(code, f"{code} invalid_input: {text}")


# ---------------------------------------------------------------------------------------------
# Steps 1–4: validation (nothing written)


def revalidate(record: PlanRecord, deps: ApplyDeps) -> None:
    """Raise D512 when expired, `Stale` when the lock or a plan file changed since planning."""
    plan = record.plan
    now = deps.clock()
    if is_expired(record, now):
        raise _invalid(
            "D512",
            f"plan {plan.plan_id} expired at {plan.expires_at}. "
            f"Next: call directory::download-kit kit={plan.kit} to plan again.",
        )
    lock = load_lock(deps.root)
    current = lock.get(plan.kit)
    if plan.kind == "install" and current is not None:
        raise Stale(f"{plan.kit} was installed after this plan was made")
    if plan.kind in ("update", "remove") and (current is None or current.version != plan.from_):
        now_has = current.version if current is not None else "not installed"
        raise Stale(f"kits.lock now has {plan.kit} {now_has}, not {plan.from_}")
    written = record.progress.written if record.progress else {}
    for file in plan.files:
        sha = local_sha(deps.settings, file.path)
        if sha == file.ours:
            continue
        journaled = written.get(file.path)
        if journaled is not None and ((journaled == "" and sha is None) or (journaled != "" and sha == journaled)):
            continue
        raise Stale(f"{file.path} changed on disk after the plan was made")


async def check_blocking(record: PlanRecord, compose: Compose) -> None:
    plan = record.plan
    if not plan.blocking:
        return
    others = [b for b in plan.blocking if b.code != "compose_not_running"]
    if others:
        raise _invalid("D514", f"the plan is blocked: {others[0].message}")
    if await compose.status() is None:
        raise Stale("the Compose daemon is running now")
    raise _invalid("D514", f"the plan is blocked: {plan.blocking[0].message}")


def check_remove_workers(record: PlanRecord, remove_workers: list[str]) -> None:
    removable = {w.name for w in record.plan.workers if w.action == "remove"}
    for name in remove_workers:
        if name not in removable:
            raise _invalid(
                "D513",
                f'worker "{name}" is not one this plan can remove (only workers the kit no longer '
                "declares, or the kit's own on removal).",
            )


def resolve_decisions(record: PlanRecord, given: dict[str, GivenDecision]) -> dict[str, Choice]:
    """Every plan file's decision (the caller's, else the default), checked against the plan
    and its stored bodies; all problems are reported together (D513)."""
    plan, contents = record.plan, record.contents
    problems: list[str] = []
    paths = {f.path for f in plan.files}
    for path in given:
        if path not in paths:
            problems.append(f"{path} is not part of plan {plan.plan_id}")
    resolved: dict[str, Choice] = {}
    for file in plan.files:
        options = " | ".join(file.options)
        decision = given.get(file.path)
        if decision is None:
            if file.default is None:
                problems.append(f"{file.path} needs a decision ({options})")
                continue
            choice, content = file.default, None
        else:
            choice, content = decision.choice, decision.content
        if choice not in file.options:
            problems.append(f'{file.path} cannot take "{choice}"; choose {options}')
            continue
        if choice in ("overwrite", "kit") and (file.theirs is None or file.theirs not in contents.blobs):
            problems.append(f"{file.path} has no downloaded content")
            continue
        if choice == "merged":
            if content is None:
                if file.merge != "clean" or file.path not in contents.merged:
                    problems.append(
                        f'{file.path} has conflicts: pass the resolved text as {{"choice": "merged", "content": …}}'
                    )
                    continue
                content = contents.merged[file.path]
            if has_conflict_markers(content):
                problems.append(f"{file.path} still has conflict markers")
                continue
        resolved[file.path] = Choice(choice, content if choice == "merged" else None)  # type: ignore[arg-type]
    if problems:
        raise _invalid(
            "D513",
            "; ".join(problems)
            + f". Next: call directory::kits::plan plan_id={plan.plan_id} to see each file's options.",
        )
    return resolved


# ---------------------------------------------------------------------------------------------
# Step 5: the counted download


@dataclass(frozen=True)
class Served:
    content: str
    sha: str


async def counted_download(record: PlanRecord, deps: ApplyDeps) -> dict[str, Served]:
    """Download the target (counted) and check every reviewed file against it (D516).
    Returns install path → body for every served file that maps to a safe install path."""
    plan = record.plan
    handle, _, name = plan.kit.partition("/")
    files = await deps.registry.download(deps.settings, plan.kit, plan.to or "", ci_flag())
    served: dict[str, Served] = {}
    for item in files.files:
        install = install_path_for(item.path, handle, name)
        if install is None or normalize(install) != install:
            continue
        served[install] = Served(item.content, sha256_hex(item.content))
    for file in plan.files:
        if file.theirs is None:
            continue
        got = served.get(file.path)
        if got is None or got.sha != file.theirs:
            raise DirectoryError(
                "D516",
                f"D516 integrity: the registry served different content for {file.path} than the "
                f"plan reviewed. Next: call directory::download-kit kit={plan.kit} to review the "
                "current version.",
            )
    return served


# ---------------------------------------------------------------------------------------------
# Steps 6–9


def new_progress(record: PlanRecord) -> Progress:
    plan = record.plan
    moving = sum(1 for w in plan.workers if w.action in ("add", "update", "redeclare"))
    return Progress(steps=[
        Step(id="workers", label=f"Workers ({moving})" if moving else "Workers", state="pending"),
        Step(id="files", label=f"Files ({len(plan.files)})", state="pending"),
        Step(id="lock", label="kits.lock", state="pending"),
    ])


class _Run:
    """One apply attempt: the record, its journal and the report being filled."""

    def __init__(self, record: PlanRecord, deps: ApplyDeps) -> None:
        self.record = record
        self.deps = deps
        self.progress = record.progress or new_progress(record)
        self.progress.error = None
        self.progress.started_at = stamp(deps.clock())
        record.progress = self.progress
        plan = record.plan
        self.report = ApplyReport(
            plan_id=plan.plan_id, kind=plan.kind, kit=plan.kit, from_=plan.from_, to=plan.to,
            steps=[], files_written=[], files_merged=[], files_removed=[], files_kept=[],
            workers_added=[], workers_updated=[], workers_removed=[], agents=[],
            skills_changed=False, agents_changed=False, lock_path=str(lock_path(deps.root)),
        )

    async def update(self, step: Step, state: str | None = None, detail: str | None = None) -> None:
        if state is not None:
            step.state = state  # type: ignore[assignment]
        if detail is not None:
            step.detail = detail
        await self.deps.on_progress(self.progress)

    def save(self) -> None:
        self.deps.store.save(self.record)

    async def fail(self, step: Step, error: DirectoryError) -> DirectoryError:
        step.state = "failed"
        step.detail = error.message
        self.progress.error = error.message
        self.save()
        await self.deps.on_progress(self.progress)
        return error

    # -- step 7 ---------------------------------------------------------------------------

    async def workers(self, remove_workers: list[str]) -> None:
        plan = self.record.plan
        step = self.progress.step("workers")
        moving = [w for w in plan.workers if w.action in ("add", "update", "redeclare")]
        to_add = [{"worker": w.name, "version": w.range} for w in moving]
        removing = [w for w in plan.workers if w.name in remove_workers]
        to_remove = [w.container or w.name for w in removing]
        if not to_add and not to_remove:
            await self.update(step, "skipped", "no worker changes")
            return
        await self.update(step, "running")
        compose = self.deps.compose
        down = await compose.status()
        if down is not None:
            raise await self.fail(step, DirectoryError(
                "D514",
                f"D514 compose_not_running: the Compose daemon did not answer ({down}). Start the "
                "project with `iii compose --up` and retry the apply.",
            ))
        suffix = f"{plan.plan_id.removeprefix('kp_')}-{uuid.uuid4().hex[:8]}"
        if to_add:
            label = "compose::add " + ", ".join(f"{w.name}@{w.range}" for w in moving)
            await self._operation(step, "compose::add", {"workers": to_add}, f"kits-add-{suffix}", label,
                                  "Nothing was written; fix the worker and retry the apply.")
        if to_remove:
            label = "compose::remove " + ", ".join(to_remove)
            await self._operation(step, "compose::remove", {"workers": to_remove},
                                  f"kits-remove-{suffix}", label, None)
        self.report.workers_added = [w.name for w in moving if w.action == "add"]
        self.report.workers_updated = [w.name for w in moving if w.action in ("update", "redeclare")]
        self.report.workers_removed = list(remove_workers)
        await self.update(step, "done")

    async def _operation(self, step: Step, function_id: str, payload: dict[str, object],
                         operation_id: str, label: str, advice: str | None) -> None:
        await self.update(step, detail=label)
        try:
            started = await self.deps.compose.start(function_id, payload, operation_id)
        except Exception as exc:  # noqa: BLE001 - any call failure aborts before files
            raise await self.fail(step, compose_error(f"{function_id} failed: {_describe(exc)}")) from None

        async def on_detail(detail: str) -> None:
            await self.update(step, detail=f"{label} — {detail}")

        try:
            await self.deps.compose.wait(started, on_detail)
        except ComposeFailure as exc:
            tail = f" {advice}" if advice else ""
            raise await self.fail(step, compose_error(f"{function_id} did not finish: {exc}.{tail}")) from None
        except DirectoryError as exc:
            raise await self.fail(step, exc) from None

    # -- step 8 ---------------------------------------------------------------------------

    async def files(self, choices: dict[str, Choice], served: dict[str, Served]) -> None:
        plan = self.record.plan
        step = self.progress.step("files")
        await self.update(step, "running")
        total = len(plan.files)
        changed = kept = 0
        for index, file in enumerate(plan.files, start=1):
            choice = choices[file.path]
            try:
                touched = self._apply_file(file, choice, served)
            except DirectoryError as exc:
                raise await self.fail(step, exc) from None
            except OSError as exc:
                raise await self.fail(step, DirectoryError.plain(f"{file.path}: {exc.strerror or exc}")) from None
            if choice.decision in ("keep", "mine"):
                kept += 1
            elif touched:
                changed += 1
            step.detail = f"{index}/{total}"
            if index % JOURNAL_EVERY == 0 or index == total:
                self.save()
                await self.deps.on_progress(self.progress)
        await self.update(step, "done", f"{changed} changed, {kept} kept")

    def _apply_file(self, file: PlanFile, choice: Choice, served: dict[str, Served]) -> bool:
        """Carry out one decision; True when the disk changed."""
        report, written = self.report, self.progress.written
        if choice.decision in ("keep", "mine"):
            report.files_kept.append(file.path)
            return False
        target = disk_path(self.deps.settings, file.path)
        if target is None:
            raise DirectoryError.plain(f"{file.path} resolves outside its root; refusing to touch it")
        if choice.decision == "remove":
            existed = target.is_file()
            if existed:
                (self.deps.delete or atomic_delete)(target, self.deps.marks)
                self._prune(target.parent, file.path)
            written[file.path] = ""
            report.files_removed.append(file.path)
            if existed:
                self._mark_changed(file)
            return existed
        if choice.decision == "merged":
            text = choice.content or ""
            report.files_merged.append(file.path)
        else:
            text = served[file.path].content
            report.files_written.append(file.path)
        (self.deps.write or atomic_write)(target, text, self.deps.marks)
        written[file.path] = sha256_hex(text)
        self._mark_changed(file)
        return True

    def _mark_changed(self, file: PlanFile) -> None:
        if file.kind == "agent":
            self.report.agents_changed = True
        else:
            self.report.skills_changed = True

    def _prune(self, directory: Path, install: str) -> None:
        """Remove now-empty parents up to (not including) the skills / agents root."""
        root = self.deps.settings.path("agents_folder" if install.startswith("agents/") else "skills_folder")
        current = directory
        while current != root and root in current.parents:
            try:
                current.rmdir()
            except OSError:
                return
            current = current.parent

    # -- step 9 ---------------------------------------------------------------------------

    async def lock(self, choices: dict[str, Choice], served: dict[str, Served]) -> None:
        plan = self.record.plan
        step = self.progress.step("lock")
        await self.update(step, "running")
        try:
            lock = load_lock(self.deps.root)
            if plan.kind == "remove":
                lock.kits.pop(plan.kit, None)
            else:
                previous = lock.get(plan.kit)
                entry = _next_entry(self.record, choices, served, previous, stamp(self.deps.clock()))
                lock.kits[plan.kit] = entry
                for file in plan.files:
                    collision = file.collision
                    if (collision is None or collision.owner != "kit" or not collision.kit
                            or collision.kit == plan.kit or choices[file.path].decision != "overwrite"):
                        continue
                    other = lock.get(collision.kit)
                    if other is not None and file.path in other.files:
                        other.files[file.path].skipped = True
                self.report.agents = sorted(
                    agent_id(p) or p for p, f in entry.files.items()
                    if p.startswith("agents/") and not f.skipped
                )
            write_lock(self.deps.root, lock, self.deps.marks)
        except DirectoryError as exc:
            raise await self.fail(step, exc) from None
        except OSError as exc:
            raise await self.fail(step, DirectoryError.plain(f"kits.lock: {exc.strerror or exc}")) from None
        await self.update(step, "done")


def _next_entry(
    record: PlanRecord, choices: dict[str, Choice], served: dict[str, Served],
    previous: LockedKit | None, installed_at: str,
) -> LockedKit:
    """The kit's lock entry after an install / update (docs/rules/kits.md §8.5, "Next lock entry")."""
    plan = record.plan
    by_path = {f.path: f for f in plan.files}
    files: dict[str, LockedFile] = {}
    for path, body in sorted(served.items()):
        planned = by_path.get(path)
        if planned is not None:
            if planned.change == "removed":
                continue
            files[path] = LockedFile(body.sha, skipped=choices[path].decision == "keep")
        elif previous is not None and path in previous.files:
            carried = previous.files[path]
            files[path] = LockedFile(carried.sha256, carried.skipped)
        else:
            files[path] = LockedFile(body.sha)
    return LockedKit(
        requested=plan.requested,
        version=plan.to or "",
        installed_at=installed_at,
        workers={w.name: w.range for w in plan.workers if w.range is not None},
        files=files,
        ignored_versions=list(previous.ignored_versions) if previous else [],
    )


async def apply_plan(
    record: PlanRecord,
    deps: ApplyDeps,
    decisions: dict[str, GivenDecision] | None = None,
    remove_workers: list[str] | None = None,
) -> ApplyReport:
    """Run steps 1–9; raise `Stale` (replan), or a DirectoryError; return the report. The
    caller deletes nothing: on success the plan record is deleted here."""
    revalidate(record, deps)
    await check_blocking(record, deps.compose)
    check_remove_workers(record, remove_workers or [])
    choices = resolve_decisions(record, decisions or {})
    served: dict[str, Served] = {}
    if record.plan.kind != "remove":
        served = await counted_download(record, deps)
    run = _Run(record, deps)
    await deps.on_progress(run.progress)
    await run.workers(remove_workers or [])
    await run.files(choices, served)
    await run.lock(choices, served)
    run.report.steps = [step.model_copy() for step in run.progress.steps]
    deps.store.delete(record.plan.plan_id)
    return run.report


def applied_message(report: ApplyReport) -> str:
    """`Installed <kit> <to>: <n> file(s) written[, <n> removed][, <n> kept][, <n> worker(s)
    added or updated].` (docs/rules/kits.md §8.7)."""
    if report.kind == "install":
        verb = f"Installed {report.kit} {report.to}"
    elif report.kind == "update":
        verb = f"Updated {report.kit} {report.from_} → {report.to}"
    else:
        verb = f"Removed {report.kit}"
    written = len(report.files_written) + len(report.files_merged)
    parts = [f"{written} file written" if written == 1 else f"{written} files written"]
    if report.files_removed:
        parts.append(f"{len(report.files_removed)} removed")
    if report.files_kept:
        parts.append(f"{len(report.files_kept)} kept")
    moved = len(report.workers_added) + len(report.workers_updated)
    if moved:
        parts.append(f"{moved} worker added or updated" if moved == 1 else f"{moved} workers added or updated")
    return f"{verb}: {', '.join(parts)}."


def _describe(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    if isinstance(message, str) and message:
        return message
    return str(exc) or exc.__class__.__name__
