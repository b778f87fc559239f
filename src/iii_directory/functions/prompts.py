"""`directory::system-prompts::*` — list, get, create, update, delete (docs/rules/surfaces.md §7).

Every call re-scans `skills_folder` and `local_skills_folder`; bundled prompts fill in the
names no file uses. Writes are validated with the scanner's rules before anything touches disk,
land atomically with a self-write mark, and fan out `directory::system-prompts::on-change`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import anyio
from pydantic import Field

from ..atomic import atomic_delete, atomic_write
from ..content.id_fields import NameText
from ..content.files import modified_at
from ..content.roots import SYSTEM_PROMPTS_SEGMENT, EscapesRoot, contained_target
from ..context import Context
from ..errors import DirectoryError, invalid_input
from ..models import Empty, Request, Response
from ..table import FunctionSpec, Surface, tool_label
from ..lazy import LazyModule

if TYPE_CHECKING:
    from ..content import prompt_answers as answers
    from ..content import prompts as store
else:  # imported by the first prompts call, not to register (src/iii_directory/lazy.py)
    store = LazyModule("iii_directory.content.prompts")
    answers = LazyModule("iii_directory.content.prompt_answers")

ON_CHANGE = "directory::system-prompts::on-change"


# --- models ---------------------------------------------------------------------------------


class SystemPromptEntry(Response):
    builtin: bool = Field(
        description="Bundled with the worker, no file behind it: editing it creates the local file "
        "(which then shadows this entry); there is nothing to delete."
    )
    description: str
    modified_at: str
    name: str


class ListSystemPromptsOutput(Response):
    prompts: list[SystemPromptEntry]


class SystemPromptGetInput(Request):
    name: NameText
    raw: bool | None = Field(
        default=None,
        description="When `true`, the response includes the full on-disk file content (frontmatter "
        "included) as `raw`, ready for `directory::system-prompts::update`.",
    )


class SystemPromptGetOutput(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset({"raw"})

    body: str
    builtin: bool = Field(
        description="Served from the copy bundled with the worker (no local file yet): an update "
        "creates the local file."
    )
    description: str
    modified_at: str
    name: str
    raw: str | None = None


class SystemPromptCreateInput(Request):
    content: str = Field(
        description="Full file content, frontmatter included; `description` is required and a "
        "declared `name` must match."
    )
    name: NameText = Field(
        description="New system prompt name, used as the file stem; same charset as listed names "
        "and not already taken."
    )


class SystemPromptCreateOutput(Response):
    bytes: int = Field(ge=0, description="Bytes written.")
    description: str = Field(description="Description parsed from the frontmatter.")
    modified_at: str = Field(description="File mtime after the write, RFC 3339.")
    name: str = Field(description="The created system prompt's name (as requested).")


class SystemPromptUpdateInput(Request):
    content: str = Field(
        description="Full file content, frontmatter included; `description` must stay non-empty."
    )
    name: NameText = Field(
        description="System prompt name to overwrite, as listed; a bundled prompt (`builtin: true`) "
        "is copied to a local file first."
    )


class SystemPromptUpdateOutput(Response):
    bytes: int = Field(ge=0, description="Bytes written.")
    description: str = Field(description="Description parsed from the new frontmatter.")
    modified_at: str = Field(description="File mtime after the write, RFC 3339.")
    name: str = Field(
        description="The system prompt's EFFECTIVE name after the write: the new frontmatter "
        "`name:` when declared, otherwise the file stem. Differs from the input name when the "
        "update renames the system prompt."
    )


Written = TypeVar("Written", SystemPromptCreateOutput, SystemPromptUpdateOutput)


class SystemPromptDeleteInput(Request):
    name: NameText = Field(
        description="Existing system prompt name, as returned by `directory::system-prompts::list`."
    )


class SystemPromptDeleteOutput(Response):
    name: str = Field(description="Name of the system prompt whose file was removed.")


# --- handlers -------------------------------------------------------------------------------


async def _scan(ctx: Context) -> list[store.PromptFile]:
    """The merged scan of this call, off the event loop (it walks the whole skills tree)."""
    settings = ctx.settings
    return await anyio.to_thread.run_sync(
        store.scan_prompts, settings.path("skills_folder"), settings.path("local_skills_folder")
    )


async def list_prompts(ctx: Context, _req: Empty) -> dict[str, Any]:
    """The `ListSystemPromptsOutput` shape as plain data (`content/prompt_answers.py`)."""
    return answers.list_answer(await _scan(ctx))


async def get_prompt(ctx: Context, req: SystemPromptGetInput) -> dict[str, Any]:
    """The `SystemPromptGetOutput` shape as plain data (`content/prompt_answers.py`)."""
    name = store.check_name(req.name)
    return answers.get_answer(await _scan(ctx), name, req.raw)


def _new_file(ctx: Context, name: str, content: str) -> tuple[Path, store.PromptText]:
    """The target `<skills_folder>/system-prompts/<name>.md` of a new prompt file and the parsed
    content, checked in order: the target stays inside `skills_folder` (no symlink carries it
    out), nothing is there yet, the content passes the read rules, a declared name matches."""
    try:
        target = contained_target(
            ctx.settings.path("skills_folder"), f"{SYSTEM_PROMPTS_SEGMENT}/{name}.md"
        )
    except EscapesRoot as exc:
        raise DirectoryError.plain(f"refusing to write system prompt {name!r}: {exc}") from None
    if os.path.lexists(target):
        raise store.skipped_file_error(target)
    store.check_size_and_body(content)
    text = store.check_frontmatter(content)
    store.check_declared_matches(text, name)
    return target, text


def _write(ctx: Context, op: str, name: str, target: Path, content: str, text: store.PromptText,
           answer: type[Written]) -> Written:
    """Write the validated `content` atomically (self-write marked), fan out `on-change` and
    answer `{name, description, bytes, modified_at}`."""
    written = atomic_write(target, content, ctx.directory.self_writes)
    ctx.emit(ON_CHANGE, {"op": op, "name": name})
    return answer(name=name, description=text.description, bytes=written, modified_at=modified_at(target))


async def create_prompt(ctx: Context, req: SystemPromptCreateInput) -> SystemPromptCreateOutput:
    name = store.check_name(req.name)
    if store.find(await _scan(ctx), name) is not None:
        raise invalid_input(
            "D214",
            f'system prompt "{name}" already exists.',
            next_steps=store.PROMPT_CREATE_CONFLICT_NEXT,
        )
    target, text = _new_file(ctx, name, req.content)
    return _write(ctx, "create", name, target, req.content, text, SystemPromptCreateOutput)


async def update_prompt(ctx: Context, req: SystemPromptUpdateInput) -> SystemPromptUpdateOutput:
    name = store.check_name(req.name)
    entries = await _scan(ctx)
    entry = store.find(entries, name)
    if entry is not None:
        store.check_size_and_body(req.content)
        text = store.check_frontmatter(req.content)
        store.check_declared_valid(text)
        target = entry.path
        effective = text.declared_name or target.name[:-3]
    elif name in store.bundled_prompts():
        target, text = _new_file(ctx, name, req.content)
        effective = name
    else:
        raise store.not_found_error(name, entries, update=True)
    return _write(ctx, "update", effective, target, req.content, text, SystemPromptUpdateOutput)


async def delete_prompt(ctx: Context, req: SystemPromptDeleteInput) -> SystemPromptDeleteOutput:
    name = store.check_name(req.name)
    entries = await _scan(ctx)
    entry = store.find(entries, name)
    if entry is None:
        raise store.not_found_error(name, entries)
    atomic_delete(entry.path, ctx.directory.self_writes)
    ctx.emit(ON_CHANGE, {"op": "delete", "name": name})
    return SystemPromptDeleteOutput(name=name)


# --- table ----------------------------------------------------------------------------------



SURFACE = Surface(
    functions=(
        FunctionSpec(
            id="directory::system-prompts::list",
            description=(
                "List system prompts (name, description, modified_at) from skills_folder's "
                "`system-prompts/` plus the ones bundled with this worker (`builtin: true` until a "
                "local file shadows one)."
            ),
            request=Empty,
            response=ListSystemPromptsOutput,
            handler=list_prompts,
        ),
        FunctionSpec(
            id="directory::system-prompts::get",
            description=(
                "Fetch one system prompt by name — a filesystem-backed entry, or a worker-bundled one "
                "(`builtin: true`) when no local file shadows it. Returns the raw markdown body plus "
                "name, description, and modified_at — no envelope, no templating."
            ),
            request=SystemPromptGetInput,
            response=SystemPromptGetOutput,
            handler=get_prompt,
        ),
        FunctionSpec(
            id="directory::system-prompts::create",
            description=(
                "Create a new system prompt at <skills_folder>/system-prompts/<name>.md from "
                "full-file markdown (non-empty frontmatter `description` required; a declared `name` "
                "must match). Rejects names or paths that already exist."
            ),
            request=SystemPromptCreateInput,
            response=SystemPromptCreateOutput,
            handler=create_prompt,
            metadata=tool_label("Create system prompt"),
        ),
        FunctionSpec(
            id="directory::system-prompts::update",
            description=(
                "Overwrite one existing system prompt with full-file markdown; the frontmatter must "
                "keep a non-empty `description`. Updating a bundled prompt (`builtin: true`) creates "
                "a local file that shadows it. Returns the effective name (frontmatter `name:` wins "
                "over the file stem)."
            ),
            request=SystemPromptUpdateInput,
            response=SystemPromptUpdateOutput,
            handler=update_prompt,
            metadata=tool_label("Update system prompt"),
        ),
        FunctionSpec(
            id="directory::system-prompts::delete",
            description=(
                "Permanently delete one EXISTING filesystem-backed system prompt by name. Resolves "
                "against the same merged scan as directory::system-prompts::list, removes only that "
                "prompt's markdown file, and fans out directory::system-prompts::on-change with "
                '{ op: "delete" }.'
            ),
            request=SystemPromptDeleteInput,
            response=SystemPromptDeleteOutput,
            handler=delete_prompt,
            metadata=tool_label("Delete system prompt"),
        ),
    ),
)
