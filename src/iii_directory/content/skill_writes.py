"""Creating, updating and deleting skill files (docs/rules/surfaces.md §6.4–§6.6, §11).

Every check runs before anything touches disk, so a refused request changes nothing:

* create: id checks → reserved segments (D115) → agents namespaces (D115) → ids the visibility
  filter would hide (D115) → already visible (D114) → a file already at the target (D114) →
  content (D113) → atomic write to `<skills_folder>/<id>.md`;
* update: id checks → content (D113) → lookup (D110 with the closest on-disk ids) →
  read-only agent-skills root (D116) → the optional stale-write guard (D114 when the file no
  longer holds the content whose SHA-256 the caller sent, see `stale`) → atomic overwrite in place;
* delete: id checks → lookup (D110) → D116 → remove (self-write marked first) → remove the
  parent directories left empty, never a skills root itself.

No write leaves its root: targets are checked component by component, symlinks included.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DirectoryError, invalid_input, not_found
from ..atomic import SelfWrites, atomic_delete, atomic_write
from .files import MAX_FILE_BYTES, body_is_empty, modified_at
from .roots import AGENTS_SEGMENT, PROMPTS_SEGMENT, SYSTEM_PROMPTS_SEGMENT, EscapesRoot, Kind
from .roots import classify, contained_target, lexically_within, same_path
from .skills import SkillFile, SkillsView, parse_skill, suggest_for_edit
from .stale import check_expected

SKILL_UPDATE_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::skills::list", "browse skill ids"),
    ("directory::skills::download", "materialize a missing bundle first"),
    ("directory::skills::create", "author a new skill"),
)
SKILL_STALE_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::skills::get", "read the current content (raw: true) and redo the edit on it"),
)
SKILL_CREATE_CONFLICT_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::skills::update", "edit the existing skill"),
    ("directory::skills::list", "browse skill ids"),
)


@dataclass(frozen=True)
class Written:
    """What a create / update answers: `{id, title, type, function_id, bytes, modified_at}`."""

    id: str
    title: str
    type: str | None
    function_id: str | None
    bytes: int
    modified_at: str
    path: Path


def change_event(op: str, skill_id: str) -> dict[str, Any]:
    """The `directory::skills::on-change` payload of a write: `{op, namespace, id}`, the
    namespace being the id's first segment."""
    return {"op": op, "namespace": skill_id.split("/", 1)[0], "id": skill_id}


def check_content(content: str) -> bytes:
    """D113 unless the content satisfies the read invariants (size cap, non-empty body)."""
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise invalid_input(
            "D113", f"content is not valid Unicode text ({exc.reason} at character {exc.start})."
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise invalid_input(
            "D113", f"content is too large ({len(data)} bytes; max {MAX_FILE_BYTES})."
        )
    if body_is_empty(parse_skill(content).body):
        raise invalid_input(
            "D113",
            "content has an empty body after the frontmatter block; readers reject empty bodies.",
        )
    return data


def _reserved_segment_error(skill_id: str) -> DirectoryError | None:
    parts = skill_id.split("/")
    kind = classify([*parts[:-1], parts[-1] + ".md"])
    if kind is Kind.IGNORED:
        return invalid_input(
            "D115",
            f'id "{skill_id}" contains the reserved `{PROMPTS_SEGMENT}` path segment; rename that '
            "segment before creating the skill.",
        )
    if kind is Kind.SYSTEM_PROMPT:
        return invalid_input(
            "D115",
            f'id "{skill_id}" contains a `{SYSTEM_PROMPTS_SEGMENT}` path segment, which the scanner '
            "classifies as a prompt — the created file would be invisible to "
            "directory::skills::list. Use directory::system-prompts::create for prompt files.",
        )
    if kind is Kind.AGENT:
        return invalid_input(
            "D115",
            f'id "{skill_id}" contains an `{AGENTS_SEGMENT}` path segment, which the scanner '
            "classifies as an agent — the created file would be invisible to "
            "directory::skills::list. Use directory::agents::create for agent profiles.",
        )
    return None


def _escape_error(skill_id: str, root: Path) -> DirectoryError:
    return invalid_input(
        "D115",
        f'id "{skill_id}" resolves outside its root ({root}) through a symlink; writes never '
        "leave their root.",
    )


def _written(skill_id: str, content: str, size: int, path: Path) -> Written:
    meta = parse_skill(content)
    return Written(
        id=skill_id,
        title=meta.resolved_title(skill_id),
        type=meta.type,
        function_id=meta.function_id,
        bytes=size,
        modified_at=modified_at(path),
        path=path,
    )


def create_skill(view: SkillsView, skill_id: str, content: str, marks: SelfWrites) -> Written:
    """Create `<skills_folder>/<id>.md` for a normalised, validated id (§6.4 steps 2–8)."""
    reserved = _reserved_segment_error(skill_id)
    if reserved is not None:
        raise reserved
    top = skill_id.split("/", 1)[0]
    if "/" in skill_id and top in view.agents_namespaces:
        raise invalid_input(
            "D115",
            f'namespace "{top}" is reserved by a system-installed skill under an agents skills '
            f"root ({view.agents_namespaces[top]}); edit it with its owning tool, or copy it into "
            "skills_folder on disk to fork it.",
        )
    if view.visibility.active and not view.visibility.survives(skill_id):
        raise invalid_input(
            "D115",
            f'id "{skill_id}" would be hidden by filter_unregistered: its top namespace segment '
            f'"{top}" is not an installed worker. Use a single-segment id, install the worker '
            "first, or set filter_unregistered: false.",
        )
    if view.lookup(skill_id) is not None:
        raise invalid_input(
            "D114", f'skill "{skill_id}" already exists.', next_steps=SKILL_CREATE_CONFLICT_NEXT
        )
    parent, _, leaf = skill_id.rpartition("/")
    try:
        folder = contained_target(view.skills_root, parent) if parent else view.skills_root
    except EscapesRoot:
        raise _escape_error(skill_id, view.skills_root) from None
    target = folder / f"{leaf}.md"
    if os.path.lexists(target):
        raise invalid_input(
            "D114",
            f"a file already exists at {target} (currently skipped by the scanner); edit or "
            "remove it on disk.",
        )
    data = check_content(content)
    size = atomic_write(target, data, marks)
    return _written(skill_id, content, size, target)


def _find_for_edit(view: SkillsView, skill_id: str) -> SkillFile:
    found = view.lookup(skill_id)
    if found is None:
        raise not_found(
            "D110", "skill", skill_id,
            suggestions=suggest_for_edit(view, skill_id), next_steps=SKILL_UPDATE_NEXT,
        )
    read_only = view.in_agent_root(found)
    if read_only is not None:
        raise invalid_input(
            "D116",
            f'skill "{skill_id}" is system-installed under an agents skills root ({read_only}) '
            "and read-only; edit it with its owning tool, or copy it into skills_folder on disk "
            "to fork it.",
        )
    return found


def _in_place_target(view: SkillsView, file: SkillFile, skill_id: str) -> Path:
    """The file to overwrite: the scanned path, or a symlink's target inside the same root."""
    rel = os.path.relpath(os.path.abspath(file.path), os.path.abspath(file.root))
    try:
        contained_target(file.root, Path(rel).as_posix())
    except EscapesRoot:
        raise _escape_error(skill_id, file.root) from None
    if file.path.is_symlink():
        return file.path.resolve()
    return file.path


def update_skill(
    view: SkillsView, skill_id: str, content: str, marks: SelfWrites, expected_sha256: str | None = None
) -> Written:
    """Overwrite the visible skill `skill_id` resolves to, wherever it lives (§6.5); with
    `expected_sha256`, only while the file still holds the content of that digest (else D114)."""
    data = check_content(content)
    found = _find_for_edit(view, skill_id)
    target = _in_place_target(view, found, skill_id)
    if expected_sha256 is not None:
        check_expected("D114", "skill", skill_id, expected_sha256, target.read_bytes(), next_steps=SKILL_STALE_NEXT)
    size = atomic_write(target, data, marks)
    return _written(skill_id, content, size, target)


@dataclass(frozen=True)
class Deleted:
    id: str
    """The resolved on-disk id."""
    path: Path


def delete_skill(view: SkillsView, skill_id: str, marks: SelfWrites) -> Deleted:
    """Remove the visible skill `skill_id` resolves to and its emptied parents (§6.6)."""
    found = _find_for_edit(view, skill_id)
    _in_place_target(view, found, skill_id)
    try:
        atomic_delete(found.path, marks)
    except DirectoryError as exc:
        raise DirectoryError.plain(exc.message.replace("remove ", "delete ", 1)) from None
    _prune_empty_parents(found.path.parent, (found.root, view.skills_root, view.local_root))
    return Deleted(found.id, found.path)


def _prune_empty_parents(directory: Path, stops: tuple[Path, ...]) -> None:
    """Remove empty directories upward, never a stop root, stopping at the first non-empty one."""
    root = stops[0]
    current = directory
    while lexically_within(root, current) and not any(same_path(current, s) for s in stops):
        try:
            current.rmdir()
        except OSError:
            return
        current = current.parent
