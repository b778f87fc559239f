"""The `guidance` text of a search response (docs/rules/search.md §11).

The parts, in order, joined by single spaces:
1. nothing installed matched → the refine guidance (no installables) or the install guidance;
   otherwise the main guidance (first result of a session) or its one-line repeat pointer, plus
   the suppression note, the low-confidence note and the install note when they apply;
2. the installation workflow (first time per session) or its repeat pointer, when installables
   are present or `compose::add` was selected;
3. the language guidance (always);
4. the skills and triggers notes, when those sections are present;
5. the dropped-capabilities sentence, when more than 18 capabilities were sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

REFINE_GUIDANCE = (
    "No functions matched these capabilities. If the task is to BUILD something no function "
    "covers (author a worker, register an engine function, run custom code), read the shipped "
    "how-to first: call directory::skills::list, then directory::skills::get {\"id\": …} for the "
    "relevant document. Otherwise search once more at the next decision point, listing all unmet "
    "external capabilities in one call. Do not search for intrinsic reasoning, summarization, "
    "planning, or formatting, and do not repeat needs already represented. Write every "
    "capability in English."
)

INSTALL_GUIDANCE = (
    "No installed function matched these capabilities. The `installable` entries are registry "
    "workers that WOULD match but are NOT installed: calling their functions now fails with "
    "function_not_found until the worker is installed. For needs that nothing covers, read the "
    "shipped how-to with directory::skills::list and directory::skills::get. Do not search for "
    "intrinsic reasoning, summarization, planning, or formatting, and write every capability in "
    "English."
)

MAIN_GUIDANCE = (
    "Only relevant candidates are listed; this result replaces engine::functions::list for these "
    "ids. `workers` are INSTALLED candidates grouped by worker. Choose the smallest set that does "
    "the job, then BEFORE first use fetch their contracts in ONE engine::functions::info call "
    "with {\"function_ids\": [...]}. Call them directly when they are tools in your surface, "
    "otherwise through agent_trigger. Search again once, only for capabilities absent from both "
    "`workers` and `installable`, with English capabilities and no intrinsic needs (reasoning, "
    "summarization, planning, formatting). If a function id is rejected, fall back to normal "
    "discovery."
)

MAIN_REPEAT = (
    "Candidates below follow the same rules as earlier in this session: fetch contracts once "
    "with engine::functions::info before first use."
)

SUPPRESSED_NOTE = (
    "Already provided earlier in this session (candidates unchanged — reuse the earlier result): "
    "{ids}."
)

LOW_CONFIDENCE_NOTE = (
    "Only low-confidence candidates for {names}: read their descriptions and skip any that do "
    "not do the job."
)

INSTALL_NOTE = (
    "Prefer the installed `workers`. If the user explicitly asked to install something, follow "
    "the installation workflow even if compose::add is among `workers`. `installable` workers are "
    "NOT installed; never pass an installable function id to engine::functions::info."
)

INSTALL_WORKFLOW = (
    "Installation workflow: keep an exact package name the user gave. Confirm it with "
    "directory::registry::workers::info {\"name\": …} (add `version` or `tag`, never both) and "
    "stop if it does not exist. Fetch engine::functions::info {\"function_ids\": "
    "[\"compose::add\", \"compose::operation\"]} unless already fetched, and follow compose::add's "
    "request schema; use `install.payload` only when it names the chosen package, and object "
    "entries in `workers` only when the schema supports them. Honour any approval requirement. "
    "Choose a unique operation_id, register a one-shot wake with engine::register_trigger "
    "{\"trigger_type\": \"compose-operation\", \"config\": {\"operation_id\": \"<operation-id>\", "
    "\"terminal_only\": true}, \"once\": true}, then call compose::add with the same "
    "operation_id. Read compose::operation once for race recovery: if it is already terminal, "
    "remove the wake with engine::unregister_trigger; otherwise end the turn and wait for the "
    "wake — no polling. Confirm the result with engine::workers::info {\"name\": …} and report "
    "failures. Finish there if the task was only the install; otherwise reuse the returned "
    "function ids, batch-fetch the remaining contracts, and search again only for ids you still "
    "do not know."
)

INSTALL_WORKFLOW_REPEAT = (
    "Installing follows the same installation workflow as earlier in this session."
)

LANGUAGE_GUIDANCE = (
    "Capabilities are written in English, but keep every user-facing message in the user's own "
    "language."
)

SKILLS_NOTE = (
    "`skills` lists installed how-to documents matching the capabilities: read the relevant one "
    "with directory::skills::get {\"id\": …} before acting."
)

TRIGGERS_NOTE = (
    "`triggers` lists existing bindings that already fire, schedule or hook a function for these "
    "capabilities: inspect the bound function with engine::functions::info {\"function_id\": …} "
    "and reuse the binding instead of registering a duplicate."
)

SHED_NOTE = (
    "This worker was busy with other long searches, so these capabilities were searched by their "
    "words only (search_mode lexical); shorter capabilities, a few words each, are searched "
    "by meaning at once."
)

DROPPED_SENTENCE = "Only the first 18 capabilities were searched; search again for: {names}."


@dataclass
class GuidanceInput:
    """What the guidance depends on."""

    workers_empty: bool
    suppressed: Sequence[str] = ()
    has_installables: bool = False
    compose_add_selected: bool = False
    first_main: bool = True
    first_install_workflow: bool = True
    has_skills: bool = False
    has_triggers: bool = False
    dropped: Sequence[str] = field(default_factory=list)
    low_only: Sequence[str] = ()
    """Capabilities whose candidates are all `confidence: low` (search/ranking/confidence.py)."""
    shed: bool = False
    """A heavy call of a model-backed mode answered lexically under load (search/slots.py)."""


def needs_install_workflow(has_installables: bool, compose_add_selected: bool) -> bool:
    return has_installables or compose_add_selected


def compose(info: GuidanceInput) -> str:
    """The guidance text for one response."""
    parts: list[str] = []
    if info.workers_empty and not info.suppressed:
        parts.append(INSTALL_GUIDANCE if info.has_installables else REFINE_GUIDANCE)
    else:
        parts.append(MAIN_GUIDANCE if info.first_main else MAIN_REPEAT)
        if info.suppressed:
            parts.append(SUPPRESSED_NOTE.format(ids=", ".join(info.suppressed)))
        if info.low_only:
            parts.append(LOW_CONFIDENCE_NOTE.format(
                names=", ".join(f'"{name}"' for name in dict.fromkeys(info.low_only))))
        if info.has_installables:
            parts.append(INSTALL_NOTE)
    if needs_install_workflow(info.has_installables, info.compose_add_selected):
        parts.append(INSTALL_WORKFLOW if info.first_install_workflow else INSTALL_WORKFLOW_REPEAT)
    parts.append(LANGUAGE_GUIDANCE)
    if info.has_skills:
        parts.append(SKILLS_NOTE)
    if info.has_triggers:
        parts.append(TRIGGERS_NOTE)
    if info.shed:
        parts.append(SHED_NOTE)
    if info.dropped:
        parts.append(DROPPED_SENTENCE.format(names=", ".join(info.dropped)))
    return " ".join(parts)
