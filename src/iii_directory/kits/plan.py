"""Install, update and removal plans (docs/rules/kits.md §5.3, §6).

A plan is computed without writing anything: every file the kit brings or drops with its local
state, collision, merge outcome, default decision and options; the worker actions Compose will
run; capabilities; warnings and blocking issues; counts. The bodies a plan refers to (kit
blobs, local files, merge results) go into its `PlanContents`, stored beside it, so an apply
can validate decisions without downloading anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from .clock import stamp
from .lock import LockedFile, LockedKit, file_state
from .merge import three_way
from .paths import (
    decode,
    file_id,
    is_valid_install_path,
    kind_of,
    read_local,
    sha256_hex,
    source_path_for,
)
from .plan_parts import (
    ProjectView,
    Target,
    TargetFile,
    added_entry,
    agent_changes,
    agent_key,
    blocking_issues,
    body_of,
    plan_workers,
    target_files,
)
from .records import (
    Capabilities,
    FunctionAdded,
    Issue,
    ModelChange,
    Plan,
    PlanContents,
    PlanCounts,
    PlanFile,
    PlanRecord,
    PlanWorker,
)
from .ref import bump_kind, is_major_jump
from .registry import kit_page
from .shapes import KitDetail, KitFunction
from .store import PLAN_TTL

BlobFetch = Callable[[str], Awaitable[str | None]]
"""Fetch a blob by sha256; returns None when unavailable (errors are swallowed by callers)."""



def review_text(plan_id: str) -> str:
    return (
        "Review it in the ADE (Directory → Kits) or apply it with "
        f"`iii trigger directory::kits::apply plan_id={plan_id}`."
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def planned_message(plan: Plan) -> str:
    """`<verb> is planned[ (<extras>)]. Review it in the ADE: …` (docs/rules/kits.md §8.7)."""
    if plan.kind == "install":
        verb = f"Install {plan.kit} {plan.to}"
    elif plan.kind == "update":
        verb = f"Update {plan.kit} {plan.from_} → {plan.to}"
    else:
        verb = f"Remove {plan.kit} {plan.from_}"
    extras: list[str] = []
    if plan.blocking:
        extras.append(f"blocked: {plan.blocking[0].message}")
    if plan.warnings:
        extras.append(_plural(len(plan.warnings), "warning"))
    if plan.counts.decisions_required:
        extras.append(_plural(plan.counts.decisions_required, "decision") + " required")
    suffix = f" ({'; '.join(extras)})" if extras else ""
    return (
        f"{verb} is planned{suffix}. Review it in the ADE: Directory → Kits, or apply it with "
        f"`iii trigger directory::kits::apply plan_id={plan.plan_id}`."
    )


def auto_applicable(plan: Plan) -> bool:
    """No warnings, no blocking issue and no file that needs a decision."""
    return not plan.warnings and not plan.blocking and plan.counts.decisions_required == 0


# ---------------------------------------------------------------------------------------------
# Counts and the plan object


def _counts(
    files: list[PlanFile], workers: list[PlanWorker], functions: list[KitFunction],
    *, agents: int, skills: int, unchanged: int = 0,
) -> PlanCounts:
    return PlanCounts(
        agents=agents, skills=skills,
        workers=sum(1 for w in workers if w.range is not None),
        functions=len(functions),
        added=sum(1 for f in files if f.change == "added"),
        modified=sum(1 for f in files if f.change in ("modified", "kept")),
        removed=sum(1 for f in files if f.change == "removed"),
        unchanged=unchanged,
        collisions=sum(1 for f in files if f.collision is not None),
        conflicts=sum(1 for f in files if f.merge == "conflicts"),
        decisions_required=sum(1 for f in files if f.default is None),
    )


def _detail_fields(detail: KitDetail) -> dict[str, object]:
    return {
        "author": detail.author,
        "description": detail.description,
        "license": detail.license,
        "repo": detail.repo,
        "published_at": detail.published_at,
        "notes": detail.notes,
        "deprecation": detail.deprecation,
    }


def _times(now: datetime) -> dict[str, str]:
    return {"created_at": stamp(now), "expires_at": stamp(now + PLAN_TTL)}


def _sorted_files(files: list[PlanFile]) -> list[PlanFile]:
    return sorted(files, key=lambda f: (0 if f.kind == "agent" else 1, f.path))


# ---------------------------------------------------------------------------------------------
# Builders


def build_install(
    handle: str, name: str, requested: str, target: Target, view: ProjectView,
    plan_id: str, now: datetime,
) -> PlanRecord:
    """Plan for a kit that is not in the lock (docs/rules/kits.md §6.6)."""
    kit = f"{handle}/{name}"
    contents = PlanContents()
    files: list[PlanFile] = []
    warnings: list[Issue] = []
    for file in target_files(target.files, handle, name).values():
        entry, warning = added_entry(file, kit, target.detail, view, contents)
        files.append(entry)
        if warning is not None:
            warnings.append(warning)
    files = _sorted_files(files)
    workers = plan_workers(kit, target.detail.workers, None, view)
    capabilities = Capabilities(
        workers_added=[w.name for w in workers if w.action == "add"],
        functions_added=[
            FunctionAdded(agent=agent_key(a), function=fn)
            for a in target.detail.agents for fn in a.functions
        ],
        models_changed=[
            ModelChange(agent=agent_key(a), from_=None, to=a.model)
            for a in target.detail.agents if a.model
        ],
    )
    live = [f for f in files if f.change != "removed"]
    plan = Plan(
        plan_id=plan_id, kind="install", kit=kit, from_=None, to=target.detail.version,
        requested=requested, major=False, **_detail_fields(target.detail),  # type: ignore[arg-type]
        registry_url=kit_page(view.settings, kit), workers=workers, files=files,
        capabilities=capabilities, functions=list(target.functions), warnings=warnings,
        blocking=blocking_issues(kit, target.detail, workers, view),
        counts=_counts(
            files, workers, target.functions,
            agents=sum(1 for f in live if f.kind == "agent"),
            skills=sum(1 for f in live if f.kind == "skill"),
        ),
        review=review_text(plan_id), **_times(now),
    )
    return PlanRecord(plan=plan, contents=contents)


async def _modified_entry(
    file: TargetFile, locked_sha: str, skipped: bool, target: Target, old_detail: KitDetail | None,
    view: ProjectView, contents: PlanContents, fetch_blob: BlobFetch,
) -> tuple[PlanFile, Issue | None]:
    contents.blobs[file.sha] = file.content
    kind = kind_of(file.path)
    local = read_local(view.settings, file.path)
    local_sha = sha256_hex(local) if local is not None else None
    entry = PlanFile(
        path=file.path, source=file.source, kind=kind, id=file_id(file.path),
        change="modified", local="intact", base=locked_sha, theirs=file.sha, ours=local_sha,
        default="kit", options=["kit"], skipped=True if skipped else None,
        agent=target.detail.agent_at(file.source) if kind == "agent" else None,
        skill=target.detail.skill_at(file.source) if kind == "skill" else None,
    )
    if kind == "agent":
        old_agent = old_detail.agent_at(file.source) if old_detail else None
        entry.agent_changes = agent_changes(old_agent, entry.agent)
    if skipped:
        entry.change = "kept"
        entry.local = "occupied" if local is not None else "absent"
        entry.default = "keep"
        entry.options = ["keep", "overwrite"]
        entry.note = "you kept the existing file at install; the kit's version changed"
        if local is not None:
            contents.ours[file.path] = decode(local) or ""
        return entry, None
    base_text = await fetch_blob(locked_sha)
    if base_text is not None:
        contents.blobs[locked_sha] = base_text
        if kind == "agent":
            entry.body_changed = body_of(base_text) != body_of(file.content)
    state = file_state(LockedFile(locked_sha), local_sha, ignore_skip=True)
    if state == "missing":
        entry.local = "missing"
        entry.options = ["kit", "mine"]
        entry.note = "you deleted this file; the update restores it unless you keep it deleted"
        return entry, None
    if state == "intact":
        return entry, None
    entry.local = "edited"
    ours_text = decode(local) or ""
    contents.ours[file.path] = ours_text
    entry.options = ["kit", "mine", "merged"]
    if base_text is None:
        entry.merge = "conflicts"
        entry.default = None
        entry.options = ["kit", "mine"]
        entry.note = (
            "edited by you; the installed version is no longer in the registry, so it cannot be merged"
        )
        message = (
            f"{file.path} was edited here and its base is unavailable; choose the kit's version or yours."
        )
        return entry, Issue(code="merge_conflict", path=file.path, message=message)
    result = three_way(base_text, ours_text, file.content)
    contents.merged[file.path] = result.text
    entry.merge = result.status
    if result.status == "clean":
        entry.default = "merged"
        entry.note = "edited by you and changed in the kit; the changes merge cleanly"
        message = f"{file.path} has local edits; the update merges them with the kit's changes."
        return entry, Issue(code="local_edits_merged", path=file.path, message=message)
    entry.default = None
    entry.conflicts = result.conflicts
    entry.note = "edited by you and changed in the kit; the changes conflict"
    need = "1 conflict needs" if result.conflicts == 1 else f"{result.conflicts} conflicts need"
    message = f"{file.path} was edited here and changed in the kit; {need} a decision."
    return entry, Issue(code="merge_conflict", path=file.path, message=message)


async def _dropped_entry(
    path: str, locked_sha: str, old_detail: KitDetail | None, view: ProjectView,
    contents: PlanContents, fetch_blob: BlobFetch,
) -> PlanFile | None:
    local = read_local(view.settings, path)
    if local is None:
        return None
    base_text = await fetch_blob(locked_sha)
    if base_text is not None:
        contents.blobs[locked_sha] = base_text
    local_sha = sha256_hex(local)
    edited = local_sha != locked_sha
    if edited:
        contents.ours[path] = decode(local) or ""
    kind = kind_of(path)
    source = source_path_for(path)
    return PlanFile(
        path=path, source=source, kind=kind, id=file_id(path), change="removed",
        local="edited" if edited else "intact", base=locked_sha, ours=local_sha,
        default="keep" if edited else "remove", options=["remove", "keep"],
        note=(
            "removed from the kit; you edited it, so it stays as a local file unless you remove it"
            if edited else "removed from the kit"
        ),
        agent=old_detail.agent_at(source) if old_detail and kind == "agent" else None,
        skill=old_detail.skill_at(source) if old_detail and kind == "skill" else None,
    )


async def build_update(
    handle: str, name: str, requested: str, installed: LockedKit, target: Target,
    old_detail: KitDetail | None, view: ProjectView, plan_id: str, now: datetime,
    fetch_blob: BlobFetch,
) -> PlanRecord:
    """Plan from the locked version to the target version (docs/rules/kits.md §6.7)."""
    kit = f"{handle}/{name}"
    contents = PlanContents()
    files: list[PlanFile] = []
    warnings: list[Issue] = []
    unchanged = 0
    served = target_files(target.files, handle, name)
    locked = {p: e for p, e in installed.files.items() if is_valid_install_path(p)}
    for path in sorted(set(served) | set(locked)):
        file, entry = served.get(path), locked.get(path)
        warning: Issue | None = None
        if file is not None and entry is None:
            plan_file, warning = added_entry(file, kit, target.detail, view, contents)
        elif file is not None and entry is not None:
            if file.sha == entry.sha256:
                unchanged += 1
                continue
            plan_file, warning = await _modified_entry(
                file, entry.sha256, entry.skipped, target, old_detail, view, contents, fetch_blob
            )
        else:
            assert entry is not None
            if entry.skipped:
                continue
            maybe = await _dropped_entry(path, entry.sha256, old_detail, view, contents, fetch_blob)
            if maybe is None:
                continue
            plan_file = maybe
        files.append(plan_file)
        if warning is not None:
            warnings.append(warning)
    files = _sorted_files(files)
    from_v, to_v = installed.version, target.detail.version
    major = is_major_jump(from_v, to_v)
    if major:
        warnings.insert(0, Issue(
            code="major_update", message=f"{from_v} → {to_v} is a major version: expect breaking changes."
        ))
    new_names = {w.name for w in target.detail.workers}
    dropped = {n: r for n, r in installed.workers.items() if n not in new_names}
    workers = plan_workers(kit, target.detail.workers, installed.workers, view, dropped=dropped)
    old_agents = {agent_key(a): a for a in (old_detail.agents if old_detail else [])}
    functions_added: list[FunctionAdded] = []
    models_changed: list[ModelChange] = []
    for agent in target.detail.agents:
        key = agent_key(agent)
        before = old_agents.get(key)
        known = set(before.functions) if before else set()
        functions_added.extend(
            FunctionAdded(agent=key, function=fn) for fn in agent.functions if fn not in known
        )
        if before is not None and before.model != agent.model:
            models_changed.append(ModelChange(agent=key, from_=before.model, to=agent.model))
    plan = Plan(
        plan_id=plan_id, kind="update", kit=kit, from_=from_v, to=to_v, requested=requested,
        bump=bump_kind(from_v, to_v), major=major, **_detail_fields(target.detail),  # type: ignore[arg-type]
        registry_url=kit_page(view.settings, kit), workers=workers, files=files,
        capabilities=Capabilities(
            workers_added=[w.name for w in workers if w.action == "add"],
            functions_added=functions_added, models_changed=models_changed,
        ),
        functions=list(target.functions), warnings=warnings,
        blocking=blocking_issues(kit, target.detail, workers, view),
        counts=_counts(
            files, workers, target.functions,
            agents=sum(1 for p in served if p.startswith("agents/")),
            skills=sum(1 for p in served if p.startswith("skills/")),
            unchanged=unchanged,
        ),
        review=review_text(plan_id), **_times(now),
    )
    return PlanRecord(plan=plan, contents=contents)


def build_remove(kit: str, installed: LockedKit, view: ProjectView, plan_id: str, now: datetime) -> PlanRecord:
    """Plan the removal of an installed kit (docs/rules/kits.md §6.8); never blocked."""
    contents = PlanContents()
    files: list[PlanFile] = []
    warnings: list[Issue] = []
    for path, entry in sorted(installed.files.items()):
        if entry.skipped or not is_valid_install_path(path):
            continue
        local = read_local(view.settings, path)
        if local is None:
            continue
        local_sha = sha256_hex(local)
        edited = local_sha != entry.sha256
        contents.ours[path] = decode(local) or ""
        files.append(PlanFile(
            path=path, source=source_path_for(path), kind=kind_of(path), id=file_id(path),
            change="removed", local="edited" if edited else "intact", base=entry.sha256,
            ours=local_sha, default="keep" if edited else "remove", options=["remove", "keep"],
            note="edited by you" if edited else None,
        ))
        if edited:
            warnings.append(Issue(
                code="edited_file_kept", path=path,
                message=f"{path} was edited in this project; it is kept unless you choose to delete it.",
            ))
    files = _sorted_files(files)
    workers = plan_workers(kit, [], None, view, dropped=dict(installed.workers))
    plan = Plan(
        plan_id=plan_id, kind="remove", kit=kit, from_=installed.version, to=None,
        requested=installed.requested, major=False, registry_url=kit_page(view.settings, kit),
        workers=workers, files=files, capabilities=Capabilities(), functions=[],
        warnings=warnings, blocking=[],
        counts=_counts(files, workers, [], agents=0, skills=0),
        review=review_text(plan_id), **_times(now),
    )
    return PlanRecord(plan=plan, contents=contents)
