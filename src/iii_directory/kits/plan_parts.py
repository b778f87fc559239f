"""What a plan is made of (docs/rules/kits.md §5.3, §6.9): the project as a plan sees it, the kit's target
files, one file's entry with its collision analysis, and the worker actions Compose will run.
`plan` assembles them into install, update and removal plans."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config import Settings
from ..content.markdown import split_frontmatter
from ..content.markers import CompletionMarker
from .compose import DeclaredWorker
from .lock import Lock
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
    Collision,
    Issue,
    PlanContents,
    PlanFile,
    PlanWorker,
)
from .ref import satisfies
from .registry import worker_page
from .shapes import AgentEntry, KitDetail, KitFiles, KitFunction, KitWorker

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

# ---------------------------------------------------------------------------------------------
# Files


def agent_key(entry: AgentEntry) -> str:
    if entry.id:
        return entry.id
    return agent_id(entry.path or "") or (entry.path or "")


def body_of(text: str) -> str:
    split = split_frontmatter(text)
    return text if split.frontmatter is None else split.body


def agent_changes(old: AgentEntry | None, new: AgentEntry | None) -> AgentChanges | None:
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
    """The warning a collision adds (docs/rules/kits.md §6.9)."""
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
    """Worker actions (docs/rules/kits.md §5.3): the target's workers in registry order, then the
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


def blocking_issues(kit: str, detail: KitDetail, workers: list[PlanWorker], view: ProjectView) -> list[Issue]:
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
