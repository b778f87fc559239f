"""`directory::skills::*` — list, get, create, update, delete, index (docs/rules/surfaces.md §6), plus the
three file-backed on-change trigger types and the file watcher (§12).

Every call re-scans the roots (disk is the source of truth). Writes are validated before
anything touches disk, land atomically with a self-write mark, and fan out
`directory::skills::on-change` with their precise op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import anyio
from pydantic import Field

from ..content.id_fields import SkillIdText
from ..content.ids import normalize_skill_id
from ..content.stale import EXPECTED_SHA256_TEXT
from ..content.visibility import InstalledWorkers
from ..context import Context
from ..models import DigestText, Empty, OptionalText, Request, Response
from ..request_bounds import ID_CHARS, LABEL_CHARS
from ..table import FunctionSpec, Surface, TriggerTypeSpec, tool_label
from ..lazy import LazyModule

if TYPE_CHECKING:
    from ..content import skill_answers as answers
    from ..content import skill_writes, skills, watch
    from ..content import skills_index as index_text
    from ..runtime import Runtime
else:  # imported by the first skills call (writes: the first write; the watcher: `serve`'s start
    # hook), not to register or for `call` (lazy.py)
    skills = LazyModule("iii_directory.content.skills")
    answers = LazyModule("iii_directory.content.skill_answers")
    index_text = LazyModule("iii_directory.content.skills_index")
    skill_writes = LazyModule("iii_directory.content.skill_writes")
    watch = LazyModule("iii_directory.content.watch")

SKILLS_ON_CHANGE = "directory::skills::on-change"
PROMPTS_ON_CHANGE = "directory::system-prompts::on-change"
AGENTS_ON_CHANGE = "directory::agents::on-change"

_FUNCTION_ID_TEXT = (
    "Frontmatter `function_id:` when present — the canonical bus function id this skill "
    "documents (e.g. `sandbox::create`). The row's `id` field is the SKILL path on disk (e.g. "
    "`sandbox/skills/sandbox/create`); `function_id` is what an agent should pass to "
    "`agent_trigger`. `null` for skills that aren't 1:1 with a single function (index/reference)."
)
_TYPE_TEXT = (
    "Frontmatter `type:` (e.g. `index`, `how-to`, `reference`). `null` when the file has no "
    "frontmatter or omits the key."
)
_TITLE_TEXT = (
    "Frontmatter `title:` when present and non-empty, otherwise the first `# H1` line in the "
    "body, otherwise the bare `id`."
)
Edited = TypeVar("Edited", "skill_writes.Written", "skill_writes.Deleted")

_DMI_TEXT = "Whether model-facing indexes should omit this skill from invocation candidates."


# --- models ---------------------------------------------------------------------------------


class ListSkillsInput(Request):
    include_description: bool | None = Field(
        default=None,
        description="When `false`, the response omits the first-paragraph `description` field on "
        "every row. Useful for token-light pickers that only need `id` + `title` + `type`. "
        "Default `true`.",
    )
    prefix: OptionalText = Field(
        default=None,
        max_length=ID_CHARS,
        description="Exact prefix match against `id`. Combine with `search` to scope a fuzzy match "
        'to one worker namespace, e.g. `prefix: "sandbox/"`.',
    )
    search: OptionalText = Field(
        default=None,
        max_length=ID_CHARS,
        description="Case-insensitive substring match against `id`, `title`, and (when "
        "`include_description` is true) the first body paragraph. Omitted rows are filtered out "
        "cheaply on the FsSkill { id } pass before the per-file frontmatter read, so a narrowed "
        "list is dramatically cheaper for the caller than the unfiltered one.",
    )
    type: OptionalText = Field(
        default=None,
        max_length=LABEL_CHARS,
        description="Exact match against the frontmatter `type:` field (`index`, `how-to`, "
        "`reference`, ...). `null` for entries with no frontmatter `type:`.",
    )
    search_body: bool | None = Field(
        default=None,
        description="When `true`, `search` also matches the markdown body of each skill "
        "(case-insensitive substring; the body is read only for rows whose id, title and "
        "description missed). Rows are unchanged. Default `false`.",
    )
    include_origin: bool | None = Field(
        default=None,
        description="When `true`, every row also carries `origin` (where its file lives and so "
        "whether it can be edited). Default `false`: rows keep their published shape.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="At most this many rows: the first ones of the filtered list, in list order. "
        "A page can show its first screen from a small answer and read the rest after. Default: "
        "every row.",
    )
    ids_only: bool | None = Field(
        default=None,
        description="When `true`, `skills` is empty and `ids` lists the id of every row the "
        "request matches, in list order (the same filters and `limit`): a light answer for a "
        "caller that only needs which skills match, e.g. a body search. Default `false`.",
    )


class SkillEntry(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset({"origin"})

    bytes: int = Field(ge=0)
    description: str = Field(
        description="First paragraph of the body, empty when the file has only headings. Also "
        "empty when the caller passed `list { include_description: false }` for a token-light row."
    )
    disable_model_invocation: bool = Field(description=_DMI_TEXT)
    function_id: str | None = Field(description=_FUNCTION_ID_TEXT)
    id: str
    modified_at: str = Field(
        description="File mtime as RFC 3339 (best effort; empty if unavailable)."
    )
    origin: str | None = Field(
        default=None,
        description="Present only when the request set `include_origin: true`. `read_only`: the "
        "file lies in a read-only agent-skills root (update/delete refuse it with D116); "
        "`local`: the local skills root (it overrides a `skills_folder` namespace of the same "
        "name); `kit`: an installed kit's folder (edits diverge from the kit); `skills`: the "
        "rest of `skills_folder`.",
    )
    title: str = Field(description=_TITLE_TEXT)
    type: str | None = Field(description=_TYPE_TEXT)


class ListSkillsOutput(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset({"ids"})

    skills: list[SkillEntry]
    ids: list[str] | None = Field(
        default=None,
        description="Present only when the request set `ids_only: true`: the matching rows' ids, "
        "in list order (`skills` is then empty).",
    )


class GetSkillInput(Request):
    id: SkillIdText = Field(
        description="Skill id as returned by directory::skills::list (e.g. "
        "`directory/skills/list`); `<id>.md` and `iii://<id>` forms are accepted."
    )
    raw: bool | None = Field(
        default=None,
        description="When true, also return the exact on-disk file (frontmatter included) as "
        "`raw`, ready for directory::skills::update.",
    )


class GetSkillOutput(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset({"raw"})

    body: str = Field(
        description="Raw markdown body (post-frontmatter) from disk.\n\nNote: there is no "
        "`description` field. `description` is the body's first paragraph, which is already "
        "inside `body` — every caller asking for the body would otherwise pay for the prefix "
        "twice. Use `directory::skills::list` rows when you want the teaser without the full body."
    )
    disable_model_invocation: bool = Field(description=_DMI_TEXT)
    function_id: str | None = Field(
        description="Frontmatter `function_id:` when present — the canonical bus function id this "
        "skill documents (e.g. `sandbox::create`). The response's `id` field is the SKILL path on "
        "disk; `function_id` is what the agent should pass to `agent_trigger`. `null` when the "
        "skill isn't 1:1 with a single function."
    )
    id: str
    modified_at: str = Field(description="File mtime as RFC 3339.")
    path: str = Field(
        description="Absolute on-disk path of the skill file. Its parent directory is the skill's "
        "base directory — where payload the body references by relative path (`scripts/`, "
        "`reference/`, agent-skills convention) lives. Only meaningful to callers sharing this "
        "worker's filesystem (shell/file tools on the same machine)."
    )
    raw: str | None = Field(
        default=None,
        description="FULL on-disk file content (frontmatter block included). Present only when "
        "the request set `raw: true`. This is the exact string to hand back to "
        "`directory::skills::update`; fallback notes that `get` may prepend to `body` are never "
        "added here.",
    )
    title: str = Field(description=_TITLE_TEXT)
    type: str | None = Field(description=_TYPE_TEXT)


class CreateSkillInput(Request):
    content: str = Field(
        description="Full file content, frontmatter optional; only the size cap and a non-empty "
        "body are enforced."
    )
    id: SkillIdText = Field(
        description="New skill id, used as the file path under skills_folder (`/`-separated "
        "segments of `[a-z0-9_-]`), not already taken."
    )


class UpdateSkillInput(Request):
    content: str = Field(
        description="FULL new file content, frontmatter block included — the string "
        "`directory::skills::get { raw: true }` returns, edited."
    )
    expected_sha256: DigestText = Field(default=None, description=EXPECTED_SHA256_TEXT)
    id: SkillIdText = Field(
        description="Skill id to overwrite (same forms directory::skills::get accepts); the file "
        "must already exist."
    )


class WriteSkillOutput(Response):
    bytes: int = Field(ge=0, description="Bytes written.")
    function_id: str | None = Field(
        description="Frontmatter `function_id:` of the content, `null` when absent."
    )
    id: str
    modified_at: str = Field(description="File mtime after the write, RFC 3339.")
    title: str = Field(
        description="Title resolved from the content (frontmatter `title:`, then `name:`, then "
        "body H1, then the id) — what `list` rows will show."
    )
    type: str | None = Field(description="Frontmatter `type:` of the content, `null` when absent.")


class CreateSkillOutput(WriteSkillOutput):
    id: str = Field(description="The created skill's id (normalized form of the input id).")


class UpdateSkillOutput(WriteSkillOutput):
    id: str = Field(description="The id that was updated (normalized form of the input id).")


class DeleteSkillInput(Request):
    id: SkillIdText = Field(
        description="Existing skill id — the same forms `directory::skills::get` accepts (bare "
        "id, `<id>.md`, `SKILL(S).md`, `iii://<id>`)."
    )


class DeleteSkillOutput(Response):
    id: str = Field(
        description="Id of the skill whose file was removed — the RESOLVED on-disk id (e.g. "
        "`ns/index` for input `ns`), not the input form."
    )


class SkillsIndexOutput(Response):
    body: str = Field(
        description="Rendered markdown document — one short `## <title>` block per installed "
        "worker (each worker's root overview doc, whether or not it declares frontmatter "
        "`type: index`), carrying the worker's first-paragraph overview and a "
        "`directory::skills::get` call to read the full reference. Sorted lex by id."
    )
    workers_count: int = Field(
        ge=0,
        description="Number of worker entries rendered (i.e. the count of worker overview rows "
        "that survived the filter). Cheap sanity check that doesn't require re-parsing the body.",
    )


# --- handlers -------------------------------------------------------------------------------


async def list_skills(ctx: Context, req: ListSkillsInput) -> dict[str, Any]:
    """The `ListSkillsOutput` shape as plain data: the rows come finished from the listing
    cache (`content/skill_listing.py`), so 5,000 rows are not re-validated per call."""
    from ..content.skill_listing import ListingRows

    rows = ctx.directory.service(ListingRows)
    bodies = None
    if req.search_body is True:  # the body index is imported and built for a body search only
        from ..content.body_index import BodyIndex

        bodies = ctx.directory.service(BodyIndex)
    fields = dict(req)
    return await skills.in_view(ctx, lambda view: answers.list_answer(view, rows, bodies, **fields))


async def get_skill(ctx: Context, req: GetSkillInput) -> dict[str, Any]:
    """The `GetSkillOutput` shape as plain data (`content/skill_answers.py`)."""
    skill_id = normalize_skill_id(req.id)
    workers = ctx.directory.service(InstalledWorkers)
    filtering = ctx.settings.filter_unregistered
    installed = await workers.get(ctx) if filtering else None

    def scan_and_read() -> tuple[skills.SkillsView, dict[str, Any] | None]:
        """The view, and when the id is on disk (or the installed set is already known) the
        answer too: one thread hop for the common case instead of two."""
        view = skills.build_view(ctx.settings, installed)
        if view.lookup(skill_id) is None and not filtering:
            return view, None  # the worker-overview fallbacks need the installed set first
        return view, answers.get_answer(view, skill_id, installed, req.raw)

    view, found = await anyio.to_thread.run_sync(scan_and_read)
    if found is None:
        installed = await workers.get(ctx)
        found = await anyio.to_thread.run_sync(answers.get_answer, view, skill_id, installed, req.raw)
    return found


def _write_output(written: skill_writes.Written, model: type[WriteSkillOutput]) -> Any:
    return model(
        id=written.id,
        title=written.title,
        type=written.type,
        function_id=written.function_id,
        bytes=written.bytes,
        modified_at=written.modified_at,
    )


async def _edit(ctx: Context, op: str, edit: Callable[..., Edited], *args: Any) -> Edited:
    """Run one skill write off the event loop against this call's visible set (the self-write
    marks appended to `args`), then fan out its `on-change` event."""
    view = await skills.load_view(ctx)
    done = await anyio.to_thread.run_sync(edit, view, *args, ctx.directory.self_writes)
    ctx.emit(SKILLS_ON_CHANGE, skill_writes.change_event(op, done.id))
    return done


async def create_skill(ctx: Context, req: CreateSkillInput) -> CreateSkillOutput:
    skill_id = normalize_skill_id(req.id)
    written = await _edit(ctx, "create", skill_writes.create_skill, skill_id, req.content)
    return _write_output(written, CreateSkillOutput)


async def update_skill(ctx: Context, req: UpdateSkillInput) -> UpdateSkillOutput:
    skill_id = normalize_skill_id(req.id)
    skill_writes.check_content(req.content)
    written = await _edit(ctx, "update", _update_guarded(req.expected_sha256), skill_id, req.content)
    return _write_output(written, UpdateSkillOutput)


def _update_guarded(expected_sha256: str | None) -> Callable[..., skill_writes.Written]:
    """`skill_writes.update_skill` with the request's stale-write guard bound."""

    def update(view: skills.SkillsView, skill_id: str, content: str, marks: Any) -> skill_writes.Written:
        return skill_writes.update_skill(view, skill_id, content, marks, expected_sha256)

    return update


async def delete_skill(ctx: Context, req: DeleteSkillInput) -> DeleteSkillOutput:
    skill_id = normalize_skill_id(req.id)
    deleted = await _edit(ctx, "delete", skill_writes.delete_skill, skill_id)
    return DeleteSkillOutput(id=deleted.id)


async def skills_index(ctx: Context, req: Empty) -> SkillsIndexOutput:
    view = await skills.load_view(ctx, fresh=True)

    def rows() -> list[skills.SkillRow]:
        return [
            skills.list_row(view, file) for file in view.files if view.in_agent_root(file) is None
        ]

    rendered = index_text.render_index(await anyio.to_thread.run_sync(rows))
    return SkillsIndexOutput(body=rendered.body, workers_count=rendered.workers_count)


# --- the table ------------------------------------------------------------------------------



async def start_watching(runtime: Runtime) -> None:
    """Start hook: `content.watch.start_watcher` (staging sweep, then the file watcher)."""
    await watch.start_watcher(runtime)


async def stop_watching(runtime: Runtime) -> None:
    """Stop hook: `content.watch.stop_watcher`."""
    await watch.stop_watcher(runtime)


SURFACE = Surface(
    functions=(
        FunctionSpec(
            id="directory::skills::list",
            description=(
                "List skills, one row per skill (id, title, type, function_id, description, "
                "bytes, modified_at). Filters: `search` (substring on id/title/description), "
                "`prefix` (worker namespace), `type`; `include_description: false` for lighter "
                "rows. Pass a row's `function_id`, not its `id`, to agent_trigger."
            ),
            request=ListSkillsInput,
            response=ListSkillsOutput,
            handler=list_skills,
        ),
        FunctionSpec(
            id="directory::skills::get",
            description=(
                "Fetch one skill by id and return its raw markdown body plus id, title, type, "
                "function_id, and modified_at. A worker overview is addressed by the bare worker "
                "name; `<id>.md` and `iii://<id>` forms are accepted. On a miss, D110 names the "
                "closest ids."
            ),
            request=GetSkillInput,
            response=GetSkillOutput,
            handler=get_skill,
            metadata=tool_label("Get skill"),
        ),
        FunctionSpec(
            id="directory::skills::create",
            description=(
                "Create a new skill at <skills_folder>/<id>.md from full-file markdown "
                "(frontmatter optional, non-empty body). Rejects ids or paths that already "
                "exist, including system-installed skills. Use directory::skills::update to edit "
                "existing skills."
            ),
            request=CreateSkillInput,
            response=CreateSkillOutput,
            handler=create_skill,
            metadata=tool_label("Create skill"),
        ),
        FunctionSpec(
            id="directory::skills::update",
            description=(
                "Overwrite one existing skill with full-file markdown (pass back the `raw` from "
                "directory::skills::get { raw: true }, edited). Never creates files; refuses "
                "read-only system-installed skills."
            ),
            request=UpdateSkillInput,
            response=UpdateSkillOutput,
            handler=update_skill,
            metadata=tool_label("Update skill"),
        ),
        FunctionSpec(
            id="directory::skills::delete",
            description=(
                "Delete one existing skill's markdown file by id (same id forms as "
                "directory::skills::get); refuses read-only system-installed skills."
            ),
            request=DeleteSkillInput,
            response=DeleteSkillOutput,
            handler=delete_skill,
            metadata=tool_label("Delete skill"),
        ),
        FunctionSpec(
            id="directory::skills::index",
            description=(
                "Read a per-worker overview: one markdown block per installed worker (title, "
                "first paragraph, and the directory::skills::get call for the reference). For "
                "per-skill rows use directory::skills::list."
            ),
            request=Empty,
            response=SkillsIndexOutput,
            handler=skills_index,
        ),
    ),
    trigger_types=(
        TriggerTypeSpec(
            id=SKILLS_ON_CHANGE,
            description=(
                "Fires after a directory::skills::download that wrote at least one skill "
                "markdown file, or a directory::skills::update, create, or delete. Also fires "
                'with { op: "external" } when a watched skills root changes on disk outside this '
                "worker — including the read-only agents skills root, when that root exists at "
                "startup."
            ),
        ),
        TriggerTypeSpec(
            id=PROMPTS_ON_CHANGE,
            description=(
                "Fires after a directory::skills::download that wrote at least one system "
                "prompt, or a directory::system-prompts::update, create, or delete. Also fires "
                'with { op: "external" } when a watched system-prompts root changes on disk '
                "outside this worker."
            ),
        ),
        TriggerTypeSpec(
            id=AGENTS_ON_CHANGE,
            description=(
                "Fires after a directory::skills::download that wrote at least one agent "
                "profile, or a directory::agents::update, create, or delete. Also fires with "
                '{ op: "external" } when a watched agents file changes on disk outside this '
                "worker."
            ),
        ),
    ),
    on_start=(start_watching,),
    on_stop=(stop_watching,),
)
