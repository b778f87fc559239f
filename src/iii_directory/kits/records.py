"""Plans, progress journals, apply reports and the other kit outputs (docs/rules/kits.md §6, §8, §9).

Field names follow the v1.2.41 seed. Serialisation: the fields named in each model's
`omit_when_none` are left out when absent; every other field is always present (`null` when
None). The stored plan record (`{plan, contents, progress?}`) uses the same models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..models import Response
from .shapes import AgentEntry, Author, Deprecation, KitDetail, KitFunction, SkillEntry

Decision = Literal["overwrite", "keep", "kit", "mine", "merged", "remove"]
Change = Literal["added", "modified", "removed", "kept"]
LocalState = Literal["absent", "intact", "edited", "missing", "occupied"]
FileState = Literal["intact", "edited", "missing", "skipped"]
Owner = Literal["kit", "worker", "local", "global", "builtin"]
WorkerAction = Literal["none", "add", "update", "redeclare", "remove"]
PlanKind = Literal["install", "update", "remove"]
StepState = Literal["pending", "running", "done", "failed", "skipped"]
FlowStatus = Literal["planned", "applied", "up_to_date", "replanned"]


# A warning or a blocking issue.
class Issue(Response):
    omit_when_none = frozenset({"path"})
    code: str
    path: str | None = None
    message: str


class Collision(Response):
    omit_when_none = frozenset({"kit", "worker", "version", "sha256", "modified"})
    owner: Owner = Field(description="Who owns the file at the path today.")
    kit: str | None = None
    worker: str | None = None
    version: str | None = None
    sha256: str | None = Field(None, description="sha256 of the file there now.")
    modified: bool | None = Field(None, description="The owner's copy was edited locally.")


# Frontmatter changes versus the installed version; empty parts are left out.
class AgentChanges(Response):
    omit_when_none = frozenset(
        {"fields", "functions_added", "functions_removed", "skills_added", "skills_removed"}
    )
    fields: dict[str, list[str | None]] | None = Field(
        None, description="Scalar fields that changed: `field → [from, to]`."
    )
    functions_added: list[str] | None = None
    functions_removed: list[str] | None = None
    skills_added: list[str] | None = None
    skills_removed: list[str] | None = None


class PlanFile(Response):
    omit_when_none = frozenset(
        {"base", "theirs", "ours", "collision", "merge", "conflicts", "note", "agent",
         "agent_changes", "body_changed", "skill", "skipped"}
    )
    path: str = Field(description="Logical install path (`agents/<id>.md`, `skills/<handle>/<kit>/…`).")
    source: str = Field(description="Path inside the kit (`agents/<id>.md`, `skills/…`).")
    kind: Literal["agent", "skill"]
    id: str = Field(description="Agent profile id, or skill id.")
    change: Change
    local: LocalState = Field(description="What the file is on disk right now, relative to the plan.")
    base: str | None = Field(None, description="Content hash the kit installed (the merge base).")
    theirs: str | None = Field(None, description="Content hash of the kit's version this plan installs.")
    ours: str | None = Field(None, description="Content hash of the local file when the plan was made.")
    collision: Collision | None = None
    merge: Literal["clean", "conflicts"] | None = None
    conflicts: int | None = Field(None, ge=0)
    default: Decision | None = Field(
        None, description="Applied when the caller decides nothing; `null` = a decision is required."
    )
    options: list[Decision] = Field(description="Choices the apply accepts for this file.")
    skipped: bool | None = Field(None, description="The lock says the user kept someone else's file here.")
    note: str | None = Field(None, description="One-line explanation for the review.")
    agent: AgentEntry | None = Field(
        None, description="Kit profile frontmatter (agents; the side this plan installs, or the removed one)."
    )
    agent_changes: AgentChanges | None = Field(
        None, description="Frontmatter changes versus the installed version (modified agents)."
    )
    body_changed: bool | None = None
    skill: SkillEntry | None = Field(None, description="Skill frontmatter (skills).")


class PlanWorker(Response):
    omit_when_none = frozenset(
        {"range", "range_from", "declared", "container", "to", "type", "description", "path", "used_by"}
    )
    name: str
    range: str | None = Field(None, description="Range the kit declares (absent for a worker the kit dropped).")
    range_from: str | None = Field(None, description="Range the installed kit version declared.")
    installed: str | None = Field(None, description="Version Compose has installed.")
    declared: str | None = Field(None, description="`version:` selector in the compose file.")
    container: str | None = None
    action: WorkerAction
    to: str | None = Field(None, description="Version the range resolves to in the registry today.")
    type: str | None = Field(None, description="Worker type (`binary`, `image`, …).")
    description: str | None = None
    path: bool | None = Field(None, description="The operator's `path://` build; kits never manage it.")
    used_by: list[str] | None = Field(None, description="Other installed kits that declare this worker.")
    registry_url: str


class FunctionAdded(Response):
    agent: str
    function: str


class ModelChange(Response):
    agent: str
    from_: str | None = Field(None, alias="from")
    to: str | None = None


class Capabilities(Response):
    workers_added: list[str] = Field(default_factory=list)
    functions_added: list[FunctionAdded] = Field(default_factory=list)
    models_changed: list[ModelChange] = Field(default_factory=list)


class PlanCounts(Response):
    agents: int = Field(ge=0)
    skills: int = Field(ge=0)
    workers: int = Field(ge=0)
    functions: int = Field(ge=0)
    added: int = Field(ge=0)
    modified: int = Field(ge=0)
    removed: int = Field(ge=0)
    unchanged: int = Field(ge=0)
    collisions: int = Field(ge=0)
    conflicts: int = Field(ge=0)
    decisions_required: int = Field(ge=0, description="Files whose `default` is `null`.")


class Plan(Response):
    omit_when_none = frozenset(
        {"bump", "author", "description", "license", "repo", "published_at", "notes", "deprecation"}
    )
    plan_id: str
    kind: PlanKind
    kit: str
    from_: str | None = Field(None, alias="from", description="Installed version (update, remove).")
    to: str | None = Field(None, description="Version this plan installs (install, update).")
    requested: str = Field(description="What was asked for (tag, version or range) — stored in the lock.")
    bump: str | None = Field(None, description="`major` | `minor` | `patch` | `prerelease` (update).")
    major: bool
    author: Author | None = None
    description: str | None = None
    license: str | None = None
    repo: str | None = None
    published_at: str | None = None
    notes: str | None = None
    deprecation: Deprecation | None = None
    registry_url: str = Field(description="The kit's page in the registry web app.")
    workers: list[PlanWorker]
    files: list[PlanFile]
    capabilities: Capabilities
    functions: list[KitFunction] = Field(
        description="Functions the kit's profiles preload, with the worker that provides each.",
    )
    warnings: list[Issue]
    blocking: list[Issue]
    counts: PlanCounts
    created_at: str
    expires_at: str
    review: str = Field(description="Where a human reviews it.")

    def file(self, path: str) -> PlanFile | None:
        return next((f for f in self.files if f.path == path), None)


# File bodies a plan refers to.
class PlanContents(Response):
    blobs: dict[str, str] = Field(default_factory=dict, description="Kit blobs by sha256 (theirs and bases).")
    ours: dict[str, str] = Field(
        default_factory=dict, description="Local file bodies when the plan was made, by install path."
    )
    merged: dict[str, str] = Field(default_factory=dict, description="Three-way merge results, by install path.")


class Step(Response):
    omit_when_none = frozenset({"detail"})
    id: str = Field(description="`workers` | `files` | `lock`.")
    label: str
    state: StepState
    detail: str | None = None


class Progress(Response):
    omit_when_none = frozenset({"error", "started_at"})
    steps: list[Step]
    written: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Install path → sha written (or `\"\"` for a deletion) by an earlier, interrupted "
            "attempt. Re-validation accepts these as expected."
        ),
    )
    error: str | None = None
    started_at: str | None = None

    def step(self, step_id: str) -> Step:
        return next(s for s in self.steps if s.id == step_id)


class PlanRecord(Response):
    """What `<root>/.iii/directory/kit-plans/<plan_id>.json` holds."""

    omit_when_none = frozenset({"progress"})
    plan: Plan
    contents: PlanContents = Field(default_factory=PlanContents)
    progress: Progress | None = None


class ApplyReport(Response):
    plan_id: str
    kind: PlanKind | None = None
    kit: str
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    steps: list[Step]
    files_written: list[str]
    files_merged: list[str]
    files_removed: list[str]
    files_kept: list[str] = Field(description="Files left as they are (kept, skipped, or mine).")
    workers_added: list[str]
    workers_updated: list[str]
    workers_removed: list[str]
    agents: list[str] = Field(description="Agent profile ids this kit now provides.")
    skills_changed: bool
    agents_changed: bool
    lock_path: str


# The envelope of `download-kit`, `plan-update`, `remove` and `apply`.
class FlowResult(Response):
    omit_when_none = frozenset({"plan", "report"})
    status: FlowStatus
    kit: str
    message: str = Field(description="One sentence for a terminal user.")
    plan: Plan | None = None
    report: ApplyReport | None = None


# ---------------------------------------------------------------------------------------------
# Update checks, listing, get, diff


class KitUpdate(Response):
    omit_when_none = frozenset({"ignored", "deprecation", "not_found"})
    current: str
    available: str | None = Field(
        None, description="Newest version satisfying `requested`, unless the user ignored it."
    )
    latest: str | None = None
    major: bool
    ignored: str | None = Field(
        None, description="`available` would be this version, but the user ignored it."
    )
    deprecation: Deprecation | None = None
    not_found: bool | None = None


class KitUpdateRow(KitUpdate):
    kit: str


class UpdateCache(Response):
    """`<root>/.iii/directory/kit-updates.json`."""

    omit_when_none = frozenset({"error"})
    checked_at: str | None = None
    kits: dict[str, KitUpdate] = Field(default_factory=dict)
    error: str | None = None


class CheckUpdatesResult(Response):
    checked_at: str | None = None
    available: int = Field(ge=0, description="Installed kits with an update to offer.")
    kits: list[KitUpdateRow]
    error: str | None = Field(
        None, description="Why the last check could not reach the registry, if it could not."
    )


class FileCounts(Response):
    agents: int = Field(ge=0)
    skills: int = Field(ge=0)
    intact: int = Field(ge=0)
    edited: int = Field(ge=0)
    missing: int = Field(ge=0)
    skipped: int = Field(ge=0)


class KitRow(Response):
    omit_when_none = frozenset({"update"})
    kit: str
    version: str
    requested: str
    installed_at: str
    workers: dict[str, str]
    files: FileCounts
    update: KitUpdate | None = None
    registry_url: str
    pending: list[str] = Field(description="Plans of this kit waiting for review.")


class PlanSummary(Response):
    plan_id: str
    kind: PlanKind
    kit: str
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    major: bool
    counts: PlanCounts
    warnings: int = Field(ge=0)
    blocking: int = Field(ge=0)
    created_at: str
    expires_at: str


class ListResult(Response):
    omit_when_none = frozenset({"updates_error"})
    kits: list[KitRow]
    pending: list[PlanSummary] = Field(description="Pending plans (summaries).")
    updates_checked_at: str | None = None
    updates_error: str | None = None
    attention: int = Field(ge=0, description="Pending plans plus available updates: what the Kits badge counts.")
    lock_path: str


class FileRow(Response):
    path: str
    kind: Literal["agent", "skill"]
    id: str = Field(description="Agent id, or the skill id.")
    state: FileState = Field(description="Local state of an installed file relative to its lock entry.")
    sha256: str = Field(description="Base sha256 from the lock.")
    local_sha256: str | None = Field(None, description="sha256 on disk, `null` when missing.")


class WorkerStatus(Response):
    name: str
    range: str
    declared: str | None = None
    installed: str | None = None
    satisfied: bool | None = None
    path: bool = False
    registry_url: str


class GetResult(KitRow):
    omit_when_none = frozenset({"update", "detail", "readme"})
    file_list: list[FileRow]
    detail: KitDetail | None = Field(None, description="Registry detail of the installed version, when reachable.")
    readme: str | None = None
    worker_status: list[WorkerStatus] = Field(description="Workers as Compose has them now.")


class DiffResult(Response):
    kit: str
    path: str
    base: str | None = Field(
        None,
        description=(
            "What the kit installed (the lock's base), from the registry; `null` when the "
            "registry does not have it."
        ),
    )
    local: str | None = Field(None, description="The file on disk, `null` when it is missing.")
    state: FileState = Field(description="Local state of an installed file relative to its lock entry.")


class DiscardResult(Response):
    plan_id: str
    discarded: bool


class PlanResult(Response):
    omit_when_none = frozenset({"contents"})
    plan: Plan
    progress: Progress | None = None
    contents: PlanContents | None = Field(
        None, description="File bodies the plan refers to; only with `contents=true`."
    )


class IgnoreResult(Response):
    kit: str
    ignored_versions: list[str]
