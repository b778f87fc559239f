"""`iii-directory call` of a file-backed read function on a short path (docs/startup.md): no
request model, no settings model, no event loop, no function table.

A `call` of one of `QUICK`'s ids runs what the served function runs — the same checks in the
same order (`invocation.invoke`: payload depth, lone surrogates, the request) and the same
answer, built by the content layer's `*_answers` modules that the surface's handlers use too —
synchronously, in the standalone setting: no engine, so the installed-worker set is unknown
(`content.visibility`) and `engine::functions::info` knows the `--catalog` records and this
worker's own functions. The request is checked against its published schema
(`request_check`); each entry names the two rules of its model the schema does not carry
(trimmed optional text, published-only lengths), and `tests/unit/shell/test_quick_call.py` holds
them, the answers and the errors to the pydantic path's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .errors import DirectoryError, from_exception, innermost
from .payload_text import lone_surrogate_problem
from .protocol.nesting import MAX_DATA_DEPTH, nests_deeper_than, too_deep_message
from .published import published
from .request_check import check

log = logging.getLogger(__name__)

Answer = Callable[[Any, dict[str, Any], Sequence[Mapping[str, Any]]], Any]
"""`answer(settings, request, catalog)`: the function's JSON answer."""


def skills_list(settings: Any, req: dict[str, Any], catalog: Sequence[Mapping[str, Any]]) -> Any:
    from .content.skill_answers import list_answer
    from .content.skill_listing import ListingRows
    from .content.skills import RowFactsCache, build_view

    bodies = None
    if req["search_body"] is True:  # as the surface: the body index for a body search only
        from .content.body_index import BodyIndex

        bodies = BodyIndex()
    view = build_view(settings, None, RowFactsCache())
    return list_answer(view, ListingRows(), bodies, **req)


def skills_get(settings: Any, req: dict[str, Any], catalog: Sequence[Mapping[str, Any]]) -> Any:
    from .content.ids import normalize_skill_id
    from .content.skill_answers import get_answer
    from .content.skills import build_view

    skill_id = normalize_skill_id(req["id"])
    return get_answer(build_view(settings, None), skill_id, None, req["raw"])


def skills_index(settings: Any, req: dict[str, Any], catalog: Sequence[Mapping[str, Any]]) -> Any:
    from .content.skills import RowFactsCache, build_view, list_row
    from .content.skills_index import render_index

    view = build_view(settings, None, RowFactsCache())
    rendered = render_index(list_row(view, f) for f in view.files if view.in_agent_root(f) is None)
    return {"body": rendered.body, "workers_count": rendered.workers_count}


def prompts_list(settings: Any, req: dict[str, Any], catalog: Sequence[Mapping[str, Any]]) -> Any:
    from .content.prompt_answers import list_answer
    from .content.prompts import scan_prompts

    return list_answer(scan_prompts(settings.path("skills_folder"), settings.path("local_skills_folder")))


def prompts_get(settings: Any, req: dict[str, Any], catalog: Sequence[Mapping[str, Any]]) -> Any:
    from .content.prompt_answers import get_answer
    from .content.prompts import check_name, scan_prompts

    name = check_name(req["name"])
    entries = scan_prompts(settings.path("skills_folder"), settings.path("local_skills_folder"))
    return get_answer(entries, name, req["raw"])


def agents_list(settings: Any, req: dict[str, Any], catalog: Sequence[Mapping[str, Any]]) -> Any:
    from .config_base import project_root
    from .content.agent_answers import list_answer
    from .content.agent_sources import SourceLookup
    from .content.agents import load_catalog

    profiles = load_catalog(settings.path("agents_folder"), settings.path("global_agents_folder"))
    return list_answer(profiles, SourceLookup(project_root(), settings.path("skills_folder")))


def agents_get(settings: Any, req: dict[str, Any], catalog: Sequence[Mapping[str, Any]]) -> Any:
    from .config_base import project_root
    from .content.agent_answers import get_answer, unknown_skills_in
    from .content.agent_sources import SourceLookup
    from .content.agents import check_id, load_catalog, resolve
    from .content.skills import RowFactsCache, build_view

    agent_id = check_id(req["id"])
    profiles = load_catalog(settings.path("agents_folder"), settings.path("global_agents_folder"))
    profile = profiles.get(agent_id)
    if profile is None:
        raise profiles.not_found(agent_id)
    resolved = resolve(profiles, profile)
    skills = unknown_skills_in(build_view(settings, None, RowFactsCache()), resolved.skills) \
        if resolved.skills else []
    known = {record.get("function_id") or record.get("name") for record in catalog} | set(published().frames)
    functions = [fid for fid in resolved.functions if fid not in known]
    source = SourceLookup(project_root(), settings.path("skills_folder")).source(profile)
    return get_answer(profile, resolved, source, unknown_skills=skills, unknown_functions=functions,
                      raw=req["raw"])


QUICK: dict[str, tuple[Answer, tuple[str, ...], tuple[str, ...]]] = {
    "directory::skills::list": (skills_list, ("prefix", "search", "type"), ()),
    "directory::skills::get": (skills_get, (), ("id",)),
    "directory::skills::index": (skills_index, (), ()),
    "directory::system-prompts::list": (prompts_list, (), ()),
    "directory::system-prompts::get": (prompts_get, (), ("name",)),
    "directory::agents::list": (agents_list, (), ()),
    "directory::agents::get": (agents_get, (), ("id",)),
}
"""Function id → (answer, trimmed fields, fields whose published `maxLength` the model does not
enforce): the read-only file-backed functions; every other id takes the full path."""


def request_schema(function_id: str) -> Mapping[str, Any] | None:
    """The published request schema of `function_id`, None when there is none."""
    frame = published().frames.get(function_id)
    schema = frame.get("request_format") if frame is not None else None
    return schema if isinstance(schema, dict) else None


def answer(function_id: str, data: Any, settings: Any, catalog: Sequence[Mapping[str, Any]]) -> Any:
    """Run one `QUICK` function on `data`; a DirectoryError (coded) on any failure, worded as
    the served function's (`invocation.invoke`)."""
    run, trimmed, unchecked = QUICK[function_id]
    if nests_deeper_than(data, MAX_DATA_DEPTH):
        raise DirectoryError.plain(too_deep_message())
    problem = lone_surrogate_problem(data)
    if problem:
        raise DirectoryError.plain(problem)
    schema = request_schema(function_id)
    if schema is None:
        raise DirectoryError.plain(f"no published request schema for {function_id}")
    request = check(schema, data, trimmed=trimmed, unchecked_lengths=unchecked)
    try:
        return run(settings, request, catalog)
    except DirectoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure becomes a coded error
        if not isinstance(innermost(exc), (OSError, ValueError, DirectoryError)):
            log.exception("handler %s failed", function_id)
        raise from_exception(exc) from None


def available(function_id: str) -> bool:
    """Whether `function_id` takes this path: one of `QUICK`, with a published request schema
    that `request_check` reads whole (else the full path answers)."""
    if function_id not in QUICK:
        return False
    from .request_check import supported

    schema = request_schema(function_id)
    return schema is not None and supported(schema)
