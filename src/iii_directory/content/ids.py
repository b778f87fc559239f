"""Skill ids and names (docs/rules/surfaces.md §3.5).

Segment rule `^[a-z0-9_-]{1,64}$`; a full id is one or more segments joined by `/`, at most
1024 characters. Names (system prompts, agent profiles) follow the segment rule.
Validation errors are bare strings (no directory code).
"""

from __future__ import annotations

import re

from ..errors import DirectoryError, invalid_input

SEGMENT = re.compile(r"^[a-z0-9_-]{1,64}\Z")
MAX_ID_CHARS = 1024
MAX_SEGMENT_CHARS = 64

SKILL_GET_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::skills::list", "browse skill ids"),
    ("directory::skills::index", "see the per-worker overview"),
)


def segment_problem(segment: str) -> str | None:
    if not segment:
        return "segment must be non-empty"
    if len(segment) > MAX_SEGMENT_CHARS:
        return f'segment too long ({len(segment)} chars; max {MAX_SEGMENT_CHARS}): "{segment}"'
    if not SEGMENT.match(segment):
        return (
            "segment may only contain lowercase ASCII letters, digits, '-' and '_': "
            f'"{segment}"'
        )
    return None


def id_problem(skill_id: str) -> str | None:
    """The bare error message for an invalid id, or None when it is valid."""
    if not skill_id:
        return "id must be non-empty"
    if skill_id.startswith("/") or skill_id.endswith("/"):
        return f"id may not have a leading or trailing '/': \"{skill_id}\""
    if len(skill_id) > MAX_ID_CHARS:
        return f'id too long ({len(skill_id)} chars; max {MAX_ID_CHARS}): "{skill_id}"'
    for index, segment in enumerate(skill_id.split("/"), start=1):
        problem = segment_problem(segment)
        if problem:
            return f'invalid id (segment {index} of "{skill_id}"): {problem}'
    return None


def is_valid_id(skill_id: str) -> bool:
    return id_problem(skill_id) is None


def is_valid_name(name: str) -> bool:
    return bool(SEGMENT.match(name))


def name_problem(name: str) -> str | None:
    """The bare error for an invalid system-prompt name or agent profile id (docs/rules/surfaces.md §7),
    or None when `name` satisfies `^[a-z0-9_-]{1,64}$`."""
    if not name:
        return "name must be non-empty"
    if len(name) > MAX_SEGMENT_CHARS:
        return f"name too long ({len(name)} chars; max {MAX_SEGMENT_CHARS})"
    if not SEGMENT.match(name):
        return f"name may only contain lowercase ASCII letters, digits, '-' and '_': \"{name}\""
    return None


def normalize_skill_id(raw: str) -> str:
    """Input normalisation for skills get / update / create / delete (§3.5 steps 1–5)."""
    value = raw.strip()
    if not value:
        raise DirectoryError.plain("id must be non-empty")
    if value.startswith("iii://"):
        value = value[len("iii://"):]
    if "://" in value:
        raise DirectoryError.plain(
            "Invalid id (must be a bare skill path, a path ending in .md, or an iii:// URI): "
            + raw
        )
    if value in ("SKILLS.md", "SKILL.md"):
        value = "index"
    elif value.endswith("/SKILLS.md"):
        value = value[: -len("/SKILLS.md")] + "/index"
    elif value.endswith("/SKILL.md"):
        value = value[: -len("/SKILL.md")] + "/index"
    elif value.endswith(".md"):
        value = value[:-3]
    if "::" in value:
        raise invalid_input(
            "D112",
            f'"{value}" looks like a FUNCTION id (service::name), not a skill id. Skill ids use '
            "'/' (e.g. \"database/index\"). To CALL that function pass the id to agent_trigger; "
            "to READ its skill doc, look up the skill id.",
            next_steps=SKILL_GET_NEXT,
        )
    problem = id_problem(value)
    if problem:
        raise DirectoryError.plain(problem)
    return value


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute = 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            )
        previous = current
    return previous[-1]


def closest(missed: str, candidates: list[str], limit: int = 3) -> list[str]:
    """The `limit` closest candidates by lowercase Levenshtein distance, ties by name."""
    low = missed.lower()
    ranked = sorted(candidates, key=lambda c: (levenshtein(low, c.lower()), c))
    return ranked[:limit]
