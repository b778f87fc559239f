"""Install, update and removal plans (kits.md §5.3, §6).

A plan is computed without writing anything: every file the kit brings or drops with its local
state, collision, merge outcome, default decision and options; the worker actions Compose will
run; capabilities; warnings and blocking issues; counts. The bodies a plan refers to (kit
blobs, local files, merge results) go into its `PlanContents`, stored beside it, so an apply
can validate decisions without downloading anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from ..config import Settings
from ..content.markdown import split_frontmatter
from .clock import stamp
from .compose import DeclaredWorker
from .lock import Lock, LockedFile, LockedKit, file_state
from .merge import three_way
from ..content.markers import CompletionMarker
from .origins import agent_origin
from .paths import (
    BUILTIN_AGENT_IDS,
    agent_id,
    decode,
    file_id,
    install_path_for,
    is_valid_install_path,
    kind_of,
    read_local,
    sha256_hex,
    source_path_for,
)
from .records import (
    AgentChanges,
    Capabilities,
    Collision,
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
from .ref import bump_kind, is_major_jump, satisfies
from .registry import kit_page, worker_page
from .shapes import AgentEntry, KitDetail, KitFiles, KitFunction, KitWorker
from .store import PLAN_TTL

BlobFetch = Callable[[str], Awaitable[str | None]]
"""Fetch a blob by sha256; returns None when unavailable (errors are swallowed by callers)."""

COMPOSE_NOT_RUNNING = (
    "This kit adds or moves workers, which needs the Compose daemon. Start the project with "
    "`iii compose --up`, then review the plan again."
)
_SCALAR_FIELDS = ("name", "description", "logo", "model", "reasoning_effort", "extends", "icon", "color")


@dataclass
class ProjectView:
    """What planning reads from the project: settings (folders), the lock, the compose
    declarations, whether Compose answered, and the worker completion markers."""

    settings: Settings
    lock: Lock
    declared: dict[str, DeclaredWorker] = field(default_factory=dict)
    compose_error: str | None = None
    markers: list[CompletionMarker] = field(default_factory=list)

    @property
    def compose_up(self) -> bool:
        return self.compose_error is None


@dataclass
class Target:
    """The version a plan installs: its detail, file bodies and functions."""

    detail: KitDetail
    files: KitFiles
    functions: list[KitFunction] = field(default_factory=list)


@dataclass(frozen=True)
class TargetFile:
    path: str
    source: str
    content: str
    sha: str


def target_files(files: KitFiles, handle: str, name: str) -> dict[str, TargetFile]:
    """Valid install paths of a served version → body and locally computed sha."""
    out: dict[str, TargetFile] = {}
    for served in files.files:
        install = install_path_for(served.path, handle, name)
        if install is None or not is_valid_install_path(install):
            continue
        out[install] = TargetFile(install, source_path_for(install), served.content, sha256_hex(served.content))
    return dict(sorted(out.items()))


def review_text(plan_id: str) -> str:
    return (
        "Review it in the ADE (Directory → Kits) or apply it with "
        f"`iii trigger directory::kits::apply plan_id={plan_id}`."
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def planned_message(plan: Plan) -> str:
    """`<verb> is planned[ (<extras>)]. Review it in the ADE: …` (kits.md §8.7)."""
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
# Files


def _agent_key(entry: AgentEntry) -> str:
    if entry.id:
        return entry.id
    return agent_id(entry.path or "") or (entry.path or "")


def _body(text: str) -> str:
    split = split_frontmatter(text)
    return text if split.frontmatter is None else split.body


def _agent_changes(old: AgentEntry | None, new: AgentEntry | None) -> AgentChanges | None:
    if old is None and new is None:
        return None
    if old is None or new is None:
        return AgentChanges()
    fields: dict[str, list[str | None]] = {}
    for name in _SCALAR_FIELDS:
        before, after = getattr(old, name), getattr(new, name)
        if before != after:
            fields[name] = [before, after]

    def diff(a: list[str], b: list[str]) -> list[str] | None:
        out = sorted(set(a) - set(b))
        return out or None

    return AgentChanges(
        fields=fields or None,
        functions_added=diff(new.functions, old.functions),
        functions_removed=diff(old.functions, new.functions),
        skills_added=diff(new.skills, old.skills),
        skills_removed=diff(old.skills, new.skills),
    )


_OWNER_NOTES = {
    "kit": "belongs to kit {kit}",
    "local": "created in this project",
    "global": "user-global profile",
    "builtin": "built-in profile",
}


def _collision_note(collision: Collision) -> str:
    if collision.owner == "worker":
        version = f" {collision.version}" if collision.version else ""
        return f"came from worker {collision.worker}{version}"
    return _OWNER_NOTES[collision.owner].format(kit=collision.kit)


def collision_warning(path: str, collision: Collision) -> Issue:
    """The warning a collision adds (kits.md §6.9)."""
    owner = collision.owner
    if owner == "worker":
        version = f" {collision.version}" if collision.version else ""
        edited = " (it was edited in this project)" if collision.modified else ""
        message = f"{path} came from worker {collision.worker}{version} and will be replaced{edited}."
        return Issue(code="agent_overwrite", path=path, message=message)
    if owner == "kit":
        version = f" {collision.version}" if collision.version else ""
        message = f"{path} belongs to kit {collision.kit}{version}; replacing it moves the file to this kit."
        return Issue(code="agent_overwrite_kit", path=path, message=message)
    if owner == "local" and path.startswith("agents/"):
        message = (
            f"{path} was created in this project and does not come from any package; "
            "replacing it loses that profile."
        )
        return Issue(code="agent_overwrite_local", path=path, message=message)
    if owner == "local":
        message = f"{path} already exists in this project and is not tracked by kits.lock."
        return Issue(code="file_overwrite_local", path=path, message=message)
    if owner == "global":
        message = (
            f"{path} shadows your user-global profile of the same id (~/.iii/agents) in this project."
        )
        return Issue(code="agent_shadows_global", path=path, message=message)
    message = f"{path} replaces a profile built into iii-directory for this whole project."
    return Issue(code="builtin_override", path=path, message=message)


def _global_profile_sha(settings: Settings, agent: str) -> str | None:
    try:
        data = (settings.path("global_agents_folder") / f"{agent}.md").read_bytes()
    except OSError:
        return None
    return sha256_hex(data)


def added_entry(
    file: TargetFile, kit: str, detail: KitDetail, view: ProjectView, contents: PlanContents,
) -> tuple[PlanFile, Issue | None]:
    """An `added` file (install, or new in an update) with its collision analysis."""
    contents.blobs[file.sha] = file.content
    kind = kind_of(file.path)
    local = read_local(view.settings, file.path)
    entry = PlanFile(
        path=file.path, source=file.source, kind=kind, id=file_id(file.path),
        change="added", local="absent", theirs=file.sha, default="overwrite", options=["overwrite"],
        agent=detail.agent_at(file.source) if kind == "agent" else None,
        skill=detail.skill_at(file.source) if kind == "skill" else None,
    )
    collision: Collision | None = None
    if local is not None:
        local_sha = sha256_hex(local)
        entry.ours = local_sha
        if local_sha == file.sha:
            entry.local = "intact"
            entry.note = "already identical on disk"
            return entry, None
        entry.local = "occupied"
        contents.ours[file.path] = decode(local) or ""
        if kind == "agent":
            origin = agent_origin(
                view.settings, view.lock, entry.id, sha=local_sha, markers=view.markers
            )
            if origin.kind == "kit" and origin.kit == kit:
                return entry, None
            collision = Collision(
                owner=origin.kind,  # type: ignore[arg-type]
                kit=origin.kit, worker=origin.worker, version=origin.version,
                sha256=local_sha, modified=origin.modified,
            )
        else:
            collision = Collision(owner="local", sha256=local_sha)
    elif kind == "agent":
        global_sha = _global_profile_sha(view.settings, entry.id)
        if global_sha is not None:
            collision = Collision(owner="global", sha256=global_sha)
        elif entry.id in BUILTIN_AGENT_IDS:
            collision = Collision(owner="builtin")
    if collision is None:
        return entry, None
    entry.collision = collision
    entry.options = ["overwrite", "keep"]
    entry.note = _collision_note(collision)
    return entry, collision_warning(file.path, collision)


# ---------------------------------------------------------------------------------------------
# Workers


def plan_workers(
    kit: str,
    target: list[KitWorker],
    previous: dict[str, str] | None,
    view: ProjectView,
    *,
    dropped: dict[str, str] | None = None,
) -> list[PlanWorker]:
    """Worker actions (kits.md §5.3): the target's workers in registry order, then the
    workers the installed version declared and the target no longer does."""
    settings = view.settings
    out: list[PlanWorker] = []
    for worker in target:
        declared = view.declared.get(worker.name)
        prev = (previous or {}).get(worker.name)
        if declared is None:
            action = "add"
        elif declared.path_worker:
            action = "none"
        elif declared.installed and satisfies(worker.range, declared.installed) is False:
            action = "update"
        elif prev is not None and prev != worker.range and declared.selector == prev:
            action = "redeclare"
        else:
            action = "none"
        out.append(PlanWorker(
            name=worker.name, range=worker.range,
            range_from=prev if prev is not None and prev != worker.range else None,
            installed=declared.installed if declared else None,
            declared=declared.selector if declared else None,
            container=declared.container if declared else None,
            action=action, to=worker.resolved, type=worker.type, description=worker.description,
            path=True if declared and declared.path_worker else None,
            used_by=view.lock.declaring(worker.name, excluding=kit) or None,
            registry_url=worker_page(settings, worker.name),
        ))
    for name, old_range in sorted((dropped or {}).items()):
        declared = view.declared.get(name)
        removable = declared is not None and not declared.path_worker
        out.append(PlanWorker(
            name=name, range_from=old_range,
            installed=declared.installed if declared else None,
            declared=declared.selector if declared else None,
            container=declared.container if declared else None,
            action="remove" if removable else "none",
            path=True if declared and declared.path_worker else None,
            used_by=view.lock.declaring(name, excluding=kit) or None,
            registry_url=worker_page(settings, name),
        ))
    return out


def needs_compose(workers: list[PlanWorker]) -> bool:
    return any(w.action in ("add", "update", "redeclare") for w in workers)


def _blocking(kit: str, detail: KitDetail, workers: list[PlanWorker], view: ProjectView) -> list[Issue]:
    issues: list[Issue] = []
    if detail.deprecation is not None:
        message = f"{kit} is deprecated"
        if detail.deprecation.message and detail.deprecation.message.strip():
            message += f": {detail.deprecation.message.strip()}"
        if detail.deprecation.replaced_by:
            message += f". Install {detail.deprecation.replaced_by} instead"
        issues.append(Issue(code="kit_deprecated", message=message + "."))
    if needs_compose(workers) and not view.compose_up:
        issues.append(Issue(code="compose_not_running", message=COMPOSE_NOT_RUNNING))
    return issues


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
    """Plan for a kit that is not in the lock (kits.md §6.6)."""
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
            FunctionAdded(agent=_agent_key(a), function=fn)
            for a in target.detail.agents for fn in a.functions
        ],
        models_changed=[
            ModelChange(agent=_agent_key(a), from_=None, to=a.model)
            for a in target.detail.agents if a.model
        ],
    )
    live = [f for f in files if f.change != "removed"]
    plan = Plan(
        plan_id=plan_id, kind="install", kit=kit, from_=None, to=target.detail.version,
        requested=requested, major=False, **_detail_fields(target.detail),  # type: ignore[arg-type]
        registry_url=kit_page(view.settings, kit), workers=workers, files=files,
        capabilities=capabilities, functions=list(target.functions), warnings=warnings,
        blocking=_blocking(kit, target.detail, workers, view),
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
        entry.agent_changes = _agent_changes(old_agent, entry.agent)
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
            entry.body_changed = _body(base_text) != _body(file.content)
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
    """Plan from the locked version to the target version (kits.md §6.7)."""
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
    old_agents = {_agent_key(a): a for a in (old_detail.agents if old_detail else [])}
    functions_added: list[FunctionAdded] = []
    models_changed: list[ModelChange] = []
    for agent in target.detail.agents:
        key = _agent_key(agent)
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
        blocking=_blocking(kit, target.detail, workers, view),
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
    """Plan the removal of an installed kit (kits.md §6.8); never blocked."""
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
