"""Agent profiles on disk: validation, the scan, the catalog with bundled profiles, and
inheritance over `extends` (docs/rules/surfaces.md §3.9, §4.3, §4.5). `source` attribution lives in
`agent_sources`, the `functions` rewrite in `functions_field`.

A profile is a direct `<id>.md` child of `agents_folder` or `global_agents_folder` (per id the
first root wins); the id is the file stem and follows the name rule. Frontmatter is required and
validated by `parse_profile` — the same function at scan time (invalid files are skipped) and at
write time (its message is returned bare). The catalog is the scanned profiles plus the bundled
profiles whose id no file uses.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import DirectoryError, invalid_input, not_found, quote
from . import bundled
from .files import MAX_FILE_BYTES, modified_at, read_capped
from .ids import closest, name_problem
from .markdown import FrontmatterError, parse_frontmatter
from .roots import really_within, same_path

log = logging.getLogger(__name__)

ICONS: tuple[str, ...] = ("agent", "code", "search", "terminal", "database", "test", "review", "docs", "design")
COLORS: tuple[str, ...] = ("neutral", "blue", "purple", "teal", "green", "amber", "rose")
MAX_LOGO_BYTES = 16
MAX_PLACEHOLDER_CHARS = 200
MAX_EXTENDS_DEPTH = 8
MISSING_FRONTMATTER = "missing YAML frontmatter (expected --- ... --- block at file start)"

AGENT_NOT_FOUND_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::agents::list", "browse agent profile ids"),
)
AGENT_CREATE_CONFLICT_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::agents::update", "edit the existing agent profile"),
    ("directory::agents::list", "browse agent profile ids"),
)
AGENT_FUNCTIONS_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::agents::get", "read the profile's current preloaded functions"),
    ("directory::agents::list", "browse agent profile ids"),
)


class ProfileError(ValueError):
    """A profile file the scanner would skip; the message is the bare sentence writes return."""


# --- validation and normalisation (§4.3) ----------------------------------------------------


@dataclass(frozen=True)
class ProfileFields:
    """A validated, normalised profile file."""

    name: str
    description: str
    logo: str | None
    skills: tuple[str, ...]
    functions: tuple[str, ...]
    model: str | None
    reasoning_effort: str | None
    icon: str | None
    color: str | None
    extends: str | None
    hidden: bool
    composer_placeholder: str | None
    skills_index: bool | None
    body: str


def _string(front: Mapping[str, Any], key: str) -> str | None:
    value = front.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ProfileError(f"invalid frontmatter YAML: `{key}` must be a string")


def _trimmed(front: Mapping[str, Any], key: str) -> str | None:
    """A trimmed string field; empty ⇒ None."""
    value = _string(front, key)
    return (value.strip() or None) if value is not None else None


def _flag(front: Mapping[str, Any], key: str) -> bool | None:
    value = front.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise ProfileError(f"invalid frontmatter YAML: `{key}` must be a boolean")


def _strings(front: Mapping[str, Any], key: str, *, none_items: bool = False) -> list[Any]:
    value = front.get(key)
    if value is None:
        return []
    if isinstance(value, list) and all(
        isinstance(item, str) or (none_items and item is None) for item in value
    ):
        return value
    raise ProfileError(f"invalid frontmatter YAML: `{key}` must be a list of strings")


def function_id_problem(entry: str | None) -> str | None:
    """The bare message for a `functions` entry that is blank or holds whitespace."""
    text = (entry or "").strip()
    if not text:
        return "`functions` entries must be non-empty function ids"
    if any(ch.isspace() for ch in text):
        return (
            f"`functions` entry {quote(text)} may not contain whitespace — one engine function id "
            "per entry (e.g. `coder::tree`)"
        )
    return None


def _logo(front: Mapping[str, Any]) -> str | None:
    raw = _string(front, "logo")
    if raw is None:
        return None
    logo = raw.strip()
    if not logo:
        raise ProfileError("`logo` must be non-empty when present (emoji only)")
    size = len(logo.encode("utf-8"))
    if size > MAX_LOGO_BYTES:
        raise ProfileError(f"`logo` too long ({size} bytes; max {MAX_LOGO_BYTES}) — emoji only")
    if any(ch in "/\\" or ch.isspace() for ch in logo):
        raise ProfileError("`logo` may not contain path separators or whitespace — emoji only")
    return logo


def _closed_set(front: Mapping[str, Any], key: str, allowed: Sequence[str]) -> str | None:
    value = _trimmed(front, key)
    if value is not None and value not in allowed:
        raise ProfileError(f"`{key}` must be one of {', '.join(allowed)} (got {quote(value)})")
    return value


def unique(items: Iterable[str]) -> list[str]:
    """`items` with later duplicates dropped, order kept."""
    seen: set[str] = set()
    kept = []
    for item in items:
        if item not in seen:
            seen.add(item)
            kept.append(item)
    return kept


def normalize_placeholder(value: str) -> str | None:
    """Whitespace runs (newlines included) collapsed to one space, trimmed; blank ⇒ None."""
    return " ".join(value.split()) or None


def parse_profile(content: str) -> ProfileFields:
    """Validate and normalise a profile file; raise ProfileError with the bare message."""
    try:
        front, body = parse_frontmatter(content)
    except FrontmatterError as exc:
        raise ProfileError(f"invalid frontmatter YAML: {exc}") from None
    if front is None:
        raise ProfileError(MISSING_FRONTMATTER)
    name = _trimmed(front, "name")
    if name is None:
        raise ProfileError("frontmatter missing non-empty `name`")
    logo = _logo(front)
    icon = _closed_set(front, "icon", ICONS)
    color = _closed_set(front, "color", COLORS)
    functions: list[str] = []
    for entry in _strings(front, "functions", none_items=True):
        problem = function_id_problem(entry)
        if problem:
            raise ProfileError(problem)
        functions.append(entry.strip())
    placeholder_raw = _string(front, "composer_placeholder")
    placeholder = normalize_placeholder(placeholder_raw) if placeholder_raw is not None else None
    if placeholder is not None and len(placeholder) > MAX_PLACEHOLDER_CHARS:
        raise ProfileError(
            f"`composer_placeholder` too long ({len(placeholder)} characters; max "
            f"{MAX_PLACEHOLDER_CHARS}) — one short example request"
        )
    return ProfileFields(
        name=name,
        description=_trimmed(front, "description") or "",
        logo=logo,
        skills=tuple(_strings(front, "skills")),
        functions=tuple(unique(functions)),
        model=_trimmed(front, "model"),
        reasoning_effort=_trimmed(front, "reasoning_effort"),
        icon=icon,
        color=color,
        extends=_trimmed(front, "extends"),
        hidden=bool(_flag(front, "hidden")),
        composer_placeholder=placeholder,
        skills_index=_flag(front, "skills_index"),
        body=body,
    )


def check_content(content: str) -> ProfileFields:
    """Write-time checks: the size cap, then `parse_profile`; bare errors."""
    size = len(content.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        raise DirectoryError.plain(f"content too large ({size} bytes; max {MAX_FILE_BYTES})")
    try:
        return parse_profile(content)
    except ProfileError as exc:
        raise DirectoryError.plain(str(exc)) from None


def check_id(raw: str) -> str:
    """The trimmed profile id, or the bare name-rule error."""
    agent_id = raw.strip()
    problem = name_problem(agent_id)
    if problem:
        raise DirectoryError.plain(problem)
    return agent_id


# --- the scan and the catalog (§3.9) ------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """One catalog entry: a file in a profile root, or a bundled profile (`path` None)."""

    id: str
    fields: ProfileFields
    raw: str
    path: Path | None
    is_global: bool = False

    @property
    def builtin(self) -> bool:
        return self.path is None

    @property
    def modified_at(self) -> str:
        return "" if self.path is None else modified_at(self.path)

    @property
    def raw_bytes(self) -> int:
        return len(self.raw.encode("utf-8"))


def profile_files(root: Path) -> list[tuple[str, Path]]:
    """The direct `*.md` children of `root` as `(stem, path)`, sorted by name; symlinks whose
    target leaves the root are ignored."""
    try:
        real_root = root.resolve()
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except (OSError, RuntimeError):
        return []
    found = []
    for entry in entries:
        if not entry.name.endswith(".md"):
            continue
        path = Path(entry.path)
        try:
            if entry.is_symlink() and not really_within(real_root, path):
                continue
            if not entry.is_file(follow_symlinks=True):
                continue
        except OSError:
            continue
        found.append((entry.name[: -len(".md")], path))
    return found


def read_profile_file(path: Path) -> str:
    """The file's text; ProfileError when it is oversized, unreadable or not UTF-8."""
    try:
        return read_capped(path)
    except DirectoryError as exc:
        raise ProfileError(exc.message) from None


def scan_root(root: Path, *, is_global: bool) -> dict[str, Profile]:
    """The valid profiles of one root, by id."""
    profiles: dict[str, Profile] = {}
    for stem, path in profile_files(root):
        problem = name_problem(stem)
        if problem:
            log.debug("invalid agent profile id %r (%s): %s", stem, path, problem)
            continue
        try:
            raw = read_profile_file(path)
            fields = parse_profile(raw)
        except ProfileError as exc:
            log.debug("agent profile %s skipped: %s", path, exc)
            continue
        profiles[stem] = Profile(stem, fields, raw, path, is_global)
    return profiles


@cache
def bundled_profiles() -> dict[str, Profile]:
    profiles: dict[str, Profile] = {}
    for agent_id in bundled.AGENT_IDS:
        raw = bundled.agent_text(agent_id)
        assert raw is not None
        profiles[agent_id] = Profile(agent_id, parse_profile(raw), raw, None)
    return profiles


@dataclass(frozen=True)
class Catalog:
    """Scanned profiles (first root wins per id) plus unshadowed bundled ones, sorted by id."""

    agents_root: Path
    profiles: Mapping[str, Profile]

    def get(self, agent_id: str) -> Profile | None:
        return self.profiles.get(agent_id)

    def __iter__(self) -> Iterator[Profile]:
        return iter(self.profiles.values())

    def not_found(self, agent_id: str) -> DirectoryError:
        """D410 with the 3 closest catalog ids and AGENT_NOT_FOUND_NEXT."""
        return not_found(
            "D410",
            "agent profile",
            agent_id,
            suggestions=closest(agent_id, list(self.profiles)),
            next_steps=AGENT_NOT_FOUND_NEXT,
        )


def load_catalog(agents_root: Path, global_root: Path) -> Catalog:
    files: dict[str, Profile] = {}
    roots = [(agents_root, False)]
    if not same_path(global_root, agents_root):
        roots.append((global_root, True))
    for root, is_global in roots:
        for agent_id, profile in scan_root(root, is_global=is_global).items():
            files.setdefault(agent_id, profile)
    merged = dict(files)
    for agent_id, profile in bundled_profiles().items():
        merged.setdefault(agent_id, profile)
    return Catalog(agents_root, {k: merged[k] for k in sorted(merged)})


# --- inheritance (§4.5) -------------------------------------------------------------------


@dataclass(frozen=True)
class Resolved:
    """A profile's effective values over its (possibly collapsed) `extends` chain."""

    chain: tuple[Profile, ...]
    inheritance_error: str | None
    system_prompt: str
    skills: tuple[str, ...]
    functions: tuple[str, ...]
    model: str | None
    reasoning_effort: str | None
    skills_index: bool | None


def extends_chain(catalog: Catalog, profile: Profile) -> tuple[list[Profile], str | None]:
    """[self, parent, grandparent, …] and None, or [self] and the problem sentence."""
    chain = [profile]
    while chain[-1].fields.extends is not None:
        parent_id = chain[-1].fields.extends
        trail = " → ".join([p.id for p in chain] + [parent_id])
        if any(p.id == parent_id for p in chain):
            return [profile], f"has an extends loop: {trail}."
        if len(chain) > MAX_EXTENDS_DEPTH:
            return [profile], f"extends chain is deeper than {MAX_EXTENDS_DEPTH} levels: {trail}."
        parent = catalog.get(parent_id)
        if parent is None:
            return [profile], f"extends unknown agent profile {quote(parent_id)}."
        chain.append(parent)
    return chain, None


def compose_prompt(bodies_root_first: Sequence[str]) -> str:
    """The resolved `system_prompt` of a chain whose last body is the profile's own.

    Blank bodies (whitespace only) are skipped and nothing kept gives `""`. The first kept body
    starts the prompt verbatim and each further one is appended as `<prompt without trailing
    newlines>` + `"\n\n"` + `<body verbatim>`; only an appended body trims what precedes it.
    So base `Base body.\n\n` + child `Child body.\n` gives `Base body.\n\nChild body.\n`, and a
    blank child of that base serves `Base body.\n\n` unchanged (a profile with no prompt of
    its own serves its parent chain's prompt as is).
    """
    kept = [body for body in bodies_root_first if body.strip()]
    if not kept:
        return ""
    prompt = kept[0]
    for body in kept[1:]:
        prompt = prompt.rstrip("\r\n") + "\n\n" + body
    return prompt


def _nearest(values: Iterable[Any]) -> Any:
    return next((value for value in values if value is not None), None)


def resolve(catalog: Catalog, profile: Profile) -> Resolved:
    chain, problem = extends_chain(catalog, profile)
    error = None
    if problem is not None:
        error = invalid_input(
            "D415", f"agent profile {quote(profile.id)} {problem}", next_steps=AGENT_NOT_FOUND_NEXT
        ).message
    root_first = [member.fields for member in reversed(chain)]
    self_first = [member.fields for member in chain]
    return Resolved(
        chain=tuple(chain),
        inheritance_error=error,
        system_prompt=compose_prompt([f.body for f in root_first]),
        skills=tuple(unique(s for f in root_first for s in f.skills)),
        functions=tuple(unique(fn for f in root_first for fn in f.functions)),
        model=_nearest(f.model for f in self_first),
        reasoning_effort=_nearest(f.reasoning_effort for f in self_first),
        skills_index=_nearest(f.skills_index for f in self_first),
    )
