"""The answers of `directory::skills::list` and `::get` as plain JSON data, in the published
shapes (`ListSkillsOutput`, `GetSkillOutput`: the fields in the models' order, `ids` and `raw`
left out when absent). The surface (`functions/skills.py`) and the file-backed `call` path
(`quick_call.py`) both answer from here; the request fields arrive as validated values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .files import modified_at
from .skill_listing import ListingRows, wire_rows
from .skills import NOTE_SEPARATOR, SkillsView, read_raw_document, read_skill, resolve_get

if TYPE_CHECKING:
    from .body_index import BodyIndex


def list_answer(view: SkillsView, rows: ListingRows, bodies: BodyIndex | None, *,
                include_description: bool | None = None, prefix: str | None = None,
                search: str | None = None, type: str | None = None,  # noqa: A002 - the published name
                search_body: bool | None = None, include_origin: bool | None = None,
                limit: int | None = None, ids_only: bool | None = None) -> dict[str, Any]:
    """`{"skills": rows}`, or with `ids_only` `{"skills": [], "ids": ids}` (`wire_rows`)."""
    listed = wire_rows(
        view, rows, bodies, search=search, prefix=prefix, type=type, search_body=search_body is True,
        include_description=include_description is not False, include_origin=include_origin is True,
        limit=limit)
    if ids_only is True:
        return {"skills": [], "ids": [row["id"] for row in listed]}
    return {"skills": listed}


def get_answer(view: SkillsView, skill_id: str, installed: frozenset[str] | None,
               raw: bool | None) -> dict[str, Any]:
    """The document `get` serves for the normalised `skill_id` (`skills.resolve_get`, D110 on
    a miss): with `raw`, the exact file as well (and an empty body allowed)."""
    resolved = resolve_get(view, skill_id, installed)
    file = resolved.file
    document = (read_raw_document if raw else read_skill)(file.path)
    stamp = modified_at(file.path)
    display = view.display_id(file.id)
    meta = document.meta
    body = meta.body if resolved.note is None else resolved.note + NOTE_SEPARATOR + meta.body
    answer: dict[str, Any] = {
        "body": body,
        "disable_model_invocation": meta.disable_model_invocation,
        "function_id": meta.function_id,
        "id": display,
        "modified_at": stamp,
        "path": str(file.path),
    }
    if raw:
        answer["raw"] = document.raw
    answer["title"] = meta.resolved_title(display)
    answer["type"] = meta.type
    return answer
