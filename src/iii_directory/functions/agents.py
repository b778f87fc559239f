"""`directory::agents::*` — list, get, create, update, delete, functions::add / remove
(docs/rules/surfaces.md §8, §11.3).

Every call re-scans `agents_folder` and `global_agents_folder`; bundled profiles fill in the ids
no file uses. Writes are validated with the scanner's rules before anything touches disk, land
atomically with a self-write mark, and fan out `directory::agents::on-change`. A bundled profile
is copied to `<agents_folder>/<id>.md` on its first edit; a user-global profile is edited in place.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..atomic import atomic_delete, atomic_write
from ..config import project_root
from ..content.files import modified_at
from ..content.functions_field import rewrite_functions
from ..content.roots import EscapesRoot, contained_target
from ..content.stale import check_expected
from ..context import Context
from ..errors import DirectoryError, invalid_input
from ..lazy import LazyModule
from ..models import Empty
from ..table import FunctionSpec, Surface, tool_label
from .agents_models import (
    AgentCreateInput,
    AgentDeleteInput,
    AgentDeleteOutput,
    AgentFunctionsInput,
    AgentFunctionsOutput,
    AgentGetInput,
    AgentGetOutput,
    AgentUpdateInput,
    AgentWriteOutput,
    ListAgentsOutput,
)

if TYPE_CHECKING:
    from ..content import agent_answers as answers
    from ..content import agent_sources
    from ..content import agents as store
else:  # imported by the first agents call, not to register (src/iii_directory/lazy.py)
    store = LazyModule("iii_directory.content.agents")
    agent_sources = LazyModule("iii_directory.content.agent_sources")
    answers = LazyModule("iii_directory.content.agent_answers")

ON_CHANGE = "directory::agents::on-change"
INFO_BATCH = 32
INFO_TIMEOUT_S = 5.0

AGENT_STALE_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::agents::get", "read the current content (raw: true) and redo the edit on it"),
)




# --- shared helpers -------------------------------------------------------------------------


async def _catalog(ctx: Context) -> store.Catalog:
    """The catalog of this call, scanned off the event loop."""
    settings = ctx.settings
    return await anyio.to_thread.run_sync(
        store.load_catalog, settings.path("agents_folder"), settings.path("global_agents_folder")
    )


async def _existing(ctx: Context, agent_id: str) -> tuple[store.Catalog, store.Profile]:
    """This call's catalog and the profile `agent_id` names in it; D410 when there is none."""
    catalog = await _catalog(ctx)
    profile = catalog.get(agent_id)
    if profile is None:
        raise catalog.not_found(agent_id)
    return catalog, profile


async def _sources(ctx: Context) -> agent_sources.SourceLookup:
    """`kits.lock` and the completion markers of this call, read off the event loop."""
    return await anyio.to_thread.run_sync(agent_sources.SourceLookup, project_root(), ctx.settings.path("skills_folder"))


def _project_target(ctx: Context, agent_id: str) -> Path:
    """`<agents_folder>/<id>.md`, refused when a symlink would carry the write elsewhere."""
    try:
        return contained_target(ctx.settings.path("agents_folder"), f"{agent_id}.md")
    except EscapesRoot as exc:
        raise DirectoryError.plain(f"refusing to write agent profile {agent_id!r}: {exc}") from None


def _skipped_file(path: Path) -> DirectoryError:
    return invalid_input(
        "D414",
        f"a file already exists at {path} (currently skipped by the scanner); edit or remove it on disk.",
    )


def _write_target(ctx: Context, profile: store.Profile) -> Path:
    """The profile's own file, or — for a bundled profile — its shadow in `agents_folder`."""
    if profile.path is not None:
        return profile.path
    target = _project_target(ctx, profile.id)
    if os.path.lexists(target):
        raise _skipped_file(target)
    return target


def _write(ctx: Context, op: str, agent_id: str, target: Path, content: str) -> tuple[store.ProfileFields, int]:
    """Validate `content` as a profile, write it atomically (self-write marked) and fan out
    `on-change`; the parsed fields and the bytes written."""
    fields = store.check_content(content)
    written = atomic_write(target, content, ctx.directory.self_writes)
    ctx.emit(ON_CHANGE, {"op": op, "name": agent_id})
    return fields, written


def _write_output(agent_id: str, fields: store.ProfileFields, written: int, path: Path) -> AgentWriteOutput:
    return AgentWriteOutput(
        id=agent_id,
        name=fields.name,
        description=fields.description,
        logo=fields.logo,
        bytes=written,
        modified_at=modified_at(path),
    )


# --- list / get -----------------------------------------------------------------------------


async def list_agents(ctx: Context, _req: Empty) -> dict[str, Any]:
    """The `ListAgentsOutput` shape as plain data (`content/agent_answers.py`)."""
    catalog = await _catalog(ctx)
    return answers.list_answer(catalog, await _sources(ctx))


async def unknown_skills(ctx: Context, skills: Sequence[str]) -> list[str]:
    """Resolved skills that resolve to no visible skill (the `<id>/index` alias counts)."""
    if not skills:
        return []
    from ..content.skills import load_view

    return answers.unknown_skills_in(await load_view(ctx), skills)


async def unknown_functions(ctx: Context, functions: Sequence[str]) -> list[str]:
    """Resolved functions the engine does not know, asked with `engine::functions::info` in
    batches of 32 (5 s each): an item with `error` or no item at all is unknown; a response
    without a `functions` array marks nothing in its batch; any failed call ⇒ `[]`."""
    unknown: list[str] = []
    for start in range(0, len(functions), INFO_BATCH):
        batch = list(functions[start : start + INFO_BATCH])
        try:
            with anyio.fail_after(INFO_TIMEOUT_S):
                answer = await ctx.call(
                    "engine::functions::info", {"function_ids": batch}, timeout=INFO_TIMEOUT_S
                )
        except Exception:  # noqa: BLE001 - the engine could not be asked: report nothing
            return []
        items = answer.get("functions") if isinstance(answer, dict) else None
        if not isinstance(items, list):
            continue
        known = {
            item["function_id"]
            for item in items
            if isinstance(item, dict) and isinstance(item.get("function_id"), str) and "error" not in item
        }
        unknown.extend(fid for fid in batch if fid not in known)
    return unknown


async def get_agent(ctx: Context, req: AgentGetInput) -> dict[str, Any]:
    """The resolved profile. Its three lookups — the skills view, the engine's function info,
    the kit sources — are independent and run side by side, so a busy worker makes the call
    wait for the slowest of them, not for their sum."""
    agent_id = store.check_id(req.id)
    catalog, profile = await _existing(ctx, agent_id)
    resolved = store.resolve(catalog, profile)
    skills: list[str] = []
    functions: list[str] = []
    sources: list[agent_sources.SourceLookup] = []

    async def look_up_skills() -> None:
        skills.extend(await unknown_skills(ctx, resolved.skills))

    async def look_up_functions() -> None:
        functions.extend(await unknown_functions(ctx, resolved.functions))

    async def look_up_sources() -> None:
        sources.append(await _sources(ctx))

    async with anyio.create_task_group() as group:
        group.start_soon(look_up_skills)
        group.start_soon(look_up_functions)
        group.start_soon(look_up_sources)
    return answers.get_answer(profile, resolved, sources[0].source(profile), unknown_skills=skills,
                              unknown_functions=functions, raw=req.raw)


# --- create / update / delete ---------------------------------------------------------------


async def create_agent(ctx: Context, req: AgentCreateInput) -> AgentWriteOutput:
    agent_id = store.check_id(req.id)
    existing = (await _catalog(ctx)).get(agent_id)
    if existing is not None and existing.path is not None:
        where = f" as a user-global profile ({existing.path})" if existing.is_global else ""
        raise invalid_input(
            "D414",
            f'agent profile "{agent_id}" already exists{where}.',
            next_steps=store.AGENT_CREATE_CONFLICT_NEXT,
        )
    target = _project_target(ctx, agent_id)
    if os.path.lexists(target):
        raise _skipped_file(target)
    fields, written = _write(ctx, "create", agent_id, target, req.content)
    return _write_output(agent_id, fields, written, target)


async def update_agent(ctx: Context, req: AgentUpdateInput) -> AgentWriteOutput:
    agent_id = store.check_id(req.id)
    _, profile = await _existing(ctx, agent_id)
    target = _write_target(ctx, profile)
    if req.expected_sha256 is not None:
        store.check_content(req.content)
        current = profile.raw if profile.path is None else await anyio.to_thread.run_sync(profile.path.read_bytes)
        check_expected("D414", "agent profile", agent_id, req.expected_sha256, current, next_steps=AGENT_STALE_NEXT)
    fields, written = _write(ctx, "update", agent_id, target, req.content)
    return _write_output(agent_id, fields, written, target)


async def delete_agent(ctx: Context, req: AgentDeleteInput) -> AgentDeleteOutput:
    agent_id = store.check_id(req.id)
    _, profile = await _existing(ctx, agent_id)
    if profile.path is None:
        raise invalid_input(
            "D414",
            f'agent profile "{agent_id}" is bundled with the worker and has no local file to delete.',
            next_steps=store.AGENT_CREATE_CONFLICT_NEXT,
        )
    atomic_delete(profile.path, ctx.directory.self_writes)
    ctx.emit(ON_CHANGE, {"op": "delete", "name": agent_id})
    return AgentDeleteOutput(id=agent_id)


# --- functions::add / remove ----------------------------------------------------------------


def _requested_functions(entries: Sequence[str]) -> list[str]:
    """Trimmed, de-duplicated request ids; D416 for a bad entry or an empty request."""
    for entry in entries:
        problem = store.function_id_problem(entry)
        if problem:
            raise invalid_input("D416", problem, next_steps=store.AGENT_FUNCTIONS_NEXT)
    wanted = store.unique(entry.strip() for entry in entries)
    if not wanted:
        raise invalid_input(
            "D416",
            "`functions` must name at least one engine function id (e.g. `coder::tree`).",
            next_steps=store.AGENT_FUNCTIONS_NEXT,
        )
    return wanted


async def _edit_functions(ctx: Context, req: AgentFunctionsInput, *, add: bool) -> AgentFunctionsOutput:
    agent_id = store.check_id(req.id)
    wanted = _requested_functions(req.functions)
    _, profile = await _existing(ctx, agent_id)
    current = list(profile.fields.functions)
    if add:
        added = [fid for fid in wanted if fid not in current]
        removed: list[str] = []
        new = current + added
    else:
        added = []
        removed = [fid for fid in wanted if fid in current]
        new = [fid for fid in current if fid not in removed]
    if new == current:
        return AgentFunctionsOutput(
            id=agent_id, functions=current, added=[], removed=[], unchanged=True,
            bytes=profile.raw_bytes, modified_at=profile.modified_at,
        )
    target = _write_target(ctx, profile)
    content = rewrite_functions(profile.raw, new)
    fields, written = _write(ctx, "update", agent_id, target, content)
    return AgentFunctionsOutput(
        id=agent_id, functions=list(fields.functions), added=added, removed=removed,
        unchanged=False, bytes=written, modified_at=modified_at(target),
    )


async def add_functions(ctx: Context, req: AgentFunctionsInput) -> AgentFunctionsOutput:
    return await _edit_functions(ctx, req, add=True)


async def remove_functions(ctx: Context, req: AgentFunctionsInput) -> AgentFunctionsOutput:
    return await _edit_functions(ctx, req, add=False)


# --- table ----------------------------------------------------------------------------------



SURFACE = Surface(
    functions=(
        FunctionSpec(
            id="directory::agents::list",
            description=(
                "List agent profiles (id, name, description, logo, icon, color, model, reasoning_effort, "
                "skill_count, function_count, extends, hidden, composer_placeholder, source, modified_at) "
                "from the agents folder plus the bundled ones (`builtin: true`). `source` says where each "
                "file came from: kit, worker, local, global or builtin. Inherited fields resolve through "
                "`extends` (composer_placeholder never inherits); skill_count null means no preloaded "
                "skills, function_count counts the preloaded functions (contracts injected into new sessions)."
            ),
            request=Empty,
            response=ListAgentsOutput,
            handler=list_agents,
        ),
        FunctionSpec(
            id="directory::agents::get",
            description=(
                "Fetch one agent profile by id: the system prompt resolved through its `extends` chain, "
                "display fields, preloaded `skills` (skill ids whose bodies the harness pre-loads into the "
                "session prompt) plus `unknown_skills`, preloaded `functions` (engine function ids the "
                "harness pre-loads into the session prompt) plus `unknown_functions`, model, "
                "reasoning_effort, `skills_index` (false = sessions start without the skills index), and "
                "`inheritance_error` when the chain does not resolve. Pass raw: true for the exact on-disk "
                "file to edit with directory::agents::update."
            ),
            request=AgentGetInput,
            response=AgentGetOutput,
            handler=get_agent,
        ),
        FunctionSpec(
            id="directory::agents::create",
            description=(
                "Create a new agent profile at <agents_folder>/<id>.md from full-file markdown "
                "(frontmatter with a non-empty `name`, emoji-only `logo`, optional `skills:` preloads, "
                "`skills_index: false` to start sessions without the skills index, and `functions:` list "
                "of engine function ids to pre-load into sessions; the body is the system prompt and may "
                "be empty). Rejects ids or paths that already exist; a bundled id is shadowed."
            ),
            request=AgentCreateInput,
            response=AgentWriteOutput,
            handler=create_agent,
            metadata=tool_label("Create agent profile"),
        ),
        FunctionSpec(
            id="directory::agents::update",
            description=(
                "Overwrite one existing agent profile with full-file markdown (frontmatter with a "
                "non-empty `name`, emoji-only `logo`, optional `skills:` and `functions:` lists and "
                "`skills_index`; the body is the system prompt and may be empty). Updating a bundled "
                "profile creates a local file that shadows it. To change only the preloaded functions, "
                "prefer directory::agents::functions::add / remove."
            ),
            request=AgentUpdateInput,
            response=AgentWriteOutput,
            handler=update_agent,
            metadata=tool_label("Update agent profile"),
        ),
        FunctionSpec(
            id="directory::agents::delete",
            description=(
                "Delete one existing agent profile's markdown file by id. Deleting the local shadow of a "
                "bundled profile falls back to the bundled copy; profiles that extend it stop resolving "
                "until fixed."
            ),
            request=AgentDeleteInput,
            response=AgentDeleteOutput,
            handler=delete_agent,
            metadata=tool_label("Delete agent profile"),
        ),
        FunctionSpec(
            id="directory::agents::functions::add",
            description=(
                "Add preloaded functions to one existing agent profile: appends the given engine function "
                "ids (e.g. `coder::tree`) to the profile's own `functions:` list — the contracts the "
                "harness pre-loads into the system prompt of every new session running as this profile. "
                "Ids already present are kept once; the rest of the file is untouched. Editing a bundled "
                "profile creates the local file that shadows it."
            ),
            request=AgentFunctionsInput,
            response=AgentFunctionsOutput,
            handler=add_functions,
            metadata=tool_label("Add agent profile functions"),
        ),
        FunctionSpec(
            id="directory::agents::functions::remove",
            description=(
                "Remove preloaded functions from one existing agent profile: drops the given engine "
                "function ids from the profile's own `functions:` list (ids not present are ignored); the "
                "rest of the file is untouched. Only the profile's OWN list is edited; ids inherited "
                "through `extends` stay (the resolved list is the union of the chain) and are removed on "
                "the parent."
            ),
            request=AgentFunctionsInput,
            response=AgentFunctionsOutput,
            handler=remove_functions,
            metadata=tool_label("Remove agent profile functions"),
        ),
    ),
)
