"""The answers of `directory::agents::list` and `::get` as plain JSON data, in the published
shapes (`ListAgentsOutput`, `AgentGetOutput`, `AgentSource`: the fields in the models' order,
their `omit_when_none` fields left out when absent). The surface (`functions/agents.py`) and the
file-backed `call` path (`quick_call.py`) both answer from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import DirectoryError
from .agent_sources import Source, SourceLookup
from .agents import Catalog, Profile, Resolved, resolve
from .ids import normalize_skill_id

if TYPE_CHECKING:
    from .skills_view import SkillsView

_SOURCE_OPTIONAL = ("kit", "modified", "version", "worker")
_ENTRY_OPTIONAL = frozenset({"composer_placeholder", "inheritance_error"})
_GET_OPTIONAL = frozenset({"composer_placeholder", "skills_index", "inheritance_error", "raw"})


def source_wire(source: Source) -> dict[str, Any]:
    """`AgentSource`: `kind`, then whichever of kit, modified, version, worker are set."""
    out: dict[str, Any] = {"kind": source.kind}
    for name in _SOURCE_OPTIONAL:
        value = getattr(source, name)
        if value is not None:
            out[name] = value
    return out


def _ordered(fields: dict[str, Any], optional: frozenset[str]) -> dict[str, Any]:
    """`fields` sorted by name (the models declare theirs in that order), the `optional` ones
    left out when None."""
    return {k: fields[k] for k in sorted(fields) if not (k in optional and fields[k] is None)}


def shared_fields(profile: Profile, resolved: Resolved, source: Source) -> dict[str, Any]:
    """The fields a list row and a get answer both carry: the profile's own display fields,
    the model and reasoning effort resolved through `extends`, and where the file came from."""
    own = profile.fields
    return {
        "id": profile.id,
        "name": own.name,
        "description": own.description,
        "logo": own.logo,
        "model": resolved.model,
        "reasoning_effort": resolved.reasoning_effort,
        "icon": own.icon,
        "color": own.color,
        "extends": own.extends,
        "hidden": own.hidden,
        "composer_placeholder": own.composer_placeholder,
        "builtin": profile.builtin,
        "inheritance_error": resolved.inheritance_error,
        "source": source_wire(source),
        "modified_at": profile.modified_at,
    }


def list_answer(catalog: Catalog, sources: SourceLookup) -> dict[str, Any]:
    """One `AgentEntry` per profile of the catalog, in catalog order."""
    rows = []
    for profile in catalog:
        resolved = resolve(catalog, profile)
        fields = shared_fields(profile, resolved, sources.source(profile))
        fields["skill_count"] = len(resolved.skills) or None
        fields["function_count"] = len(resolved.functions)
        rows.append(_ordered(fields, _ENTRY_OPTIONAL))
    return {"agents": rows}


def get_answer(profile: Profile, resolved: Resolved, source: Source, *, unknown_skills: Sequence[str],
               unknown_functions: Sequence[str], raw: bool | None) -> dict[str, Any]:
    """The resolved profile (`AgentGetOutput`), with the lookups' unknown skills and functions."""
    fields = shared_fields(profile, resolved, source)
    fields.update(
        system_prompt=resolved.system_prompt,
        skills=list(resolved.skills),
        unknown_skills=list(unknown_skills),
        functions=list(resolved.functions),
        unknown_functions=list(unknown_functions),
        skills_index=resolved.skills_index,
        raw=profile.raw if raw else None,
    )
    return _ordered(fields, _GET_OPTIONAL)


def unknown_skills_in(view: SkillsView, skills: Sequence[str]) -> list[str]:
    """The entries of `skills` that name no visible skill of `view` (an invalid id names none;
    the `<id>/index` alias counts)."""
    unknown = []
    for entry in skills:
        try:
            skill_id = normalize_skill_id(entry)
        except DirectoryError:
            unknown.append(entry)
            continue
        if view.lookup(skill_id) is None:
            unknown.append(entry)
    return unknown
