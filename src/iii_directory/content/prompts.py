"""System prompts on disk: the scan, the bundled copies and the write-time checks
(docs/rules/surfaces.md §3.8, §4.4, §7).

A system prompt is any `*.md` file below `skills_folder` or `local_skills_folder` whose relative
path has a component equal to `system-prompts`. Its frontmatter is required, needs a non-empty
`description`, and may declare a `name`; the name is the declared one or the file stem and must
satisfy `^[a-z0-9_-]{1,64}$`. The body may not be empty.

Merge: local entries first; `skills_folder` entries whose first path segment is a top-level
directory of the local root are dropped (a local `system-prompts/` shadows the global one
wholesale). When the local root lies inside `skills_folder` (the default `skills/iii`), its
files belong to the local root only. Lookups take the first entry with a name, so local wins.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import DirectoryError, invalid_input, not_found
from . import bundled
from .files import MAX_FILE_BYTES, body_is_empty, read_head
from .ids import closest, name_problem
from .markdown import FrontmatterError, parse_frontmatter
from .roots import (
    Kind,
    classify,
    lexically_within,
    same_path,
    top_level_dirs,
    walk_markdown,
)

log = logging.getLogger(__name__)


MISSING_FRONTMATTER = "missing YAML frontmatter (expected --- ... --- block at file start)"
MISSING_DESCRIPTION = "frontmatter missing non-empty `description`"

PROMPT_NOT_FOUND_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::system-prompts::list", "browse system prompt names"),
)
PROMPT_UPDATE_NOT_FOUND_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::system-prompts::create", "create it (this is the first write)"),
    ("directory::system-prompts::list", "browse system prompt names"),
)
PROMPT_CREATE_CONFLICT_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::system-prompts::update", "edit the existing system prompt"),
    ("directory::system-prompts::list", "browse system prompt names"),
)


class PromptFormatError(ValueError):
    """Frontmatter a system prompt cannot have; the message is the parser's sentence."""


@dataclass(frozen=True)
class PromptText:
    """A parsed system-prompt file: the declared name (trimmed, None when absent or blank),
    the trimmed description (`""` when absent) and the body verbatim."""

    declared_name: str | None
    description: str
    body: str


def _text(front: dict[str, Any], key: str) -> str | None:
    value = front.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise PromptFormatError(f"invalid frontmatter YAML: `{key}` must be a string")
    return value.strip() or None


def parse_prompt(content: str) -> PromptText:
    """Split and read a system-prompt file; raise PromptFormatError when the frontmatter is
    missing, malformed, or holds a non-string `name` / `description`."""
    try:
        front, body = parse_frontmatter(content)
    except FrontmatterError as exc:
        raise PromptFormatError(f"invalid frontmatter YAML: {exc}") from None
    if front is None:
        raise PromptFormatError(MISSING_FRONTMATTER)
    return PromptText(_text(front, "name"), _text(front, "description") or "", body)


# --- scan -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptFile:
    name: str
    description: str
    path: Path
    rel: str
    """Path relative to the root it was found in, `/`-separated."""


def scan_root(root: Path, *, exclude: Path | None = None) -> list[PromptFile]:
    """The valid system prompts of one root; per name the first file in path order wins.
    Files under `exclude` (another root nested in this one) belong to that root and are left out."""
    entries: list[PromptFile] = []
    seen: set[str] = set()
    for found in walk_markdown(root):
        if classify(found.parts) is not Kind.SYSTEM_PROMPT:
            continue
        if exclude is not None and lexically_within(exclude, found.path):
            continue
        head = read_head(found.path)
        if head is None:
            log.debug("system prompt %s skipped: unreadable", found.path)
            continue
        try:
            text = parse_prompt(head[0])
        except PromptFormatError as exc:
            log.debug("system prompt %s skipped: %s", found.path, exc)
            continue
        name = text.declared_name or found.parts[-1][: -len(".md")]
        problem = name_problem(name)
        if problem:
            log.debug("system prompt %s skipped: invalid prompt name %r: %s", found.path, name, problem)
            continue
        if not text.description:
            log.debug("system prompt %s skipped: %s", found.path, MISSING_DESCRIPTION)
            continue
        if name in seen:
            log.debug("system prompt %s skipped: duplicate name %r", found.path, name)
            continue
        seen.add(name)
        entries.append(PromptFile(name, text.description, found.path, found.rel))
    return entries


def scan_prompts(skills_root: Path, local_root: Path) -> list[PromptFile]:
    """The merged scan: local entries (sorted by name), then the surviving `skills_folder`
    entries (sorted by name)."""
    if same_path(local_root, skills_root):
        return sorted(scan_root(skills_root), key=lambda e: e.name)
    local = sorted(scan_root(local_root), key=lambda e: e.name)
    shadowed = top_level_dirs(local_root)
    rest = [
        entry
        for entry in scan_root(skills_root, exclude=local_root)
        if entry.rel.split("/", 1)[0] not in shadowed
    ]
    return local + sorted(rest, key=lambda e: e.name)


def find(entries: Sequence[PromptFile], name: str) -> PromptFile | None:
    return next((entry for entry in entries if entry.name == name), None)


# --- bundled --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BundledPrompt:
    name: str
    description: str
    body: str
    raw: str


@cache
def bundled_prompts() -> dict[str, BundledPrompt]:
    prompts: dict[str, BundledPrompt] = {}
    for name in bundled.PROMPT_NAMES:
        raw = bundled.prompt_text(name)
        assert raw is not None
        text = parse_prompt(raw)
        prompts[name] = BundledPrompt(name, text.description, text.body, raw)
    return prompts


# --- request checks -------------------------------------------------------------------------


def check_name(raw: str) -> str:
    """The trimmed request name, or a bare name-rule error."""
    name = raw.strip()
    problem = name_problem(name)
    if problem:
        raise DirectoryError.plain(problem)
    return name


def not_found_error(name: str, entries: Sequence[PromptFile], *, update: bool = False) -> DirectoryError:
    """D210 with the 3 closest names (files plus bundled) and the right Next list."""
    names = sorted({entry.name for entry in entries} | set(bundled_prompts()))
    return not_found(
        "D210",
        "system prompt",
        name,
        suggestions=closest(name, names),
        next_steps=PROMPT_UPDATE_NOT_FOUND_NEXT if update else PROMPT_NOT_FOUND_NEXT,
    )


def check_size_and_body(content: str) -> None:
    """D113 for content over the size cap or with an empty body after the frontmatter."""
    size = len(content.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        raise invalid_input("D113", f"content is too large ({size} bytes; max {MAX_FILE_BYTES}).")
    try:
        front, body = parse_frontmatter(content)
    except FrontmatterError:
        return  # reported as D213 by the frontmatter check
    if body_is_empty(body):
        raise invalid_input(
            "D113",
            "content has an empty body after the frontmatter block; readers reject empty bodies.",
        )


def _sentence(message: str) -> str:
    return message if message.endswith(".") else message + "."


def check_frontmatter(content: str) -> PromptText:
    """D213 for a missing or malformed frontmatter block or a blank description."""
    try:
        text = parse_prompt(content)
    except PromptFormatError as exc:
        raise invalid_input("D213", _sentence(str(exc))) from None
    if not text.description:
        raise invalid_input(
            "D213",
            "frontmatter is missing a non-empty `description`; the next scan would skip this prompt.",
        )
    return text


def check_declared_matches(text: PromptText, requested: str) -> None:
    """D213 when a declared `name` differs from the requested one (create, bundled copy)."""
    if text.declared_name is not None and text.declared_name != requested:
        raise invalid_input(
            "D213",
            f'frontmatter `name` ("{text.declared_name}") must match the requested system prompt '
            f'name ("{requested}").',
        )


def check_declared_valid(text: PromptText) -> None:
    """D213 when a declared `name` fails the name rule (in-place update)."""
    if text.declared_name is None:
        return
    problem = name_problem(text.declared_name)
    if problem:
        raise invalid_input(
            "D213",
            f"frontmatter `name` is invalid ({problem}); the next scan would skip this prompt.",
        )


def skipped_file_error(path: Path) -> DirectoryError:
    return invalid_input(
        "D214",
        f"a file already exists at {path} (currently skipped by the scanner); edit or remove it on disk.",
    )
