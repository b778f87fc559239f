"""Routing and staging of downloaded files (docs/rules/surfaces.md §9.2 steps 5–7, §9.3 steps 4–6).

A download is planned completely before anything is written: every path is validated, every
destination is checked to stay inside its root, sizes and counts are capped. Only a plan with no
problem is applied, one atomic write per file (file-by-file overwrite: files of the namespace
that the download does not carry are kept). So a malicious or malformed bundle writes nothing.

Routing of a registry bundle entry (`path` after stripping one leading `skills/`):
* exactly `agents/<id>.md` → `<agents_folder>/<id>.md` (`agents_written`), unless a kit owns the
  id (`agents_skipped`); an invalid id is skipped silently;
* classified ignored (`prompts/…`) or agent (nested `agents/…`) → skipped;
* otherwise → `<skills_folder>/<worker>/<rel>`: a system-prompt `.md` reports its stem in
  `system_prompts_written`; anything else reports `<rel>` in `skills_written`.
A repo tree routes the same way into `<skills_folder>/<skill>/` except that it never installs
agent profiles (every `agents/` path is skipped).

Caps (chosen for this project): at most `MAX_FILES` files per download; a markdown file at most
`MAX_MARKDOWN_BYTES` (the read cap, so every written document stays servable); any other file
at most `MAX_OTHER_BYTES`; all files together at most `MAX_TOTAL_BYTES`.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import SelfWrites, atomic_write
from ..content.files import MAX_FILE_BYTES, sha256_hex
from ..content.ids import is_valid_name
from ..content.roots import EscapesRoot, Kind, classify, contained_target, utf8_name
from ..errors import DirectoryError
from .registry_records import undecodable

MAX_FILES = 1000
MAX_MARKDOWN_BYTES = MAX_FILE_BYTES
MAX_OTHER_BYTES = 4 * 1024 * 1024
MAX_TOTAL_BYTES = 64 * 1024 * 1024

SKILLS_EVENT = "directory::skills::on-change"
PROMPTS_EVENT = "directory::system-prompts::on-change"
AGENTS_EVENT = "directory::agents::on-change"


class PathProblem(ValueError):
    """A bundle path that is not a safe relative path; the message is the bare reason."""


def safe_relative(path: str) -> str:
    """Validate a bundle path as a safe relative path (§9.3 step 6) and return it normalised
    (`/`-joined, `.` components dropped). `\\` counts as a separator so Windows-style
    traversal is caught too."""
    if not path:
        raise PathProblem("path must be non-empty")
    shown = json.dumps(path, ensure_ascii=False)
    if "\0" in path:
        raise PathProblem(f"path may not contain NUL: {shown}")
    unified = path.replace("\\", "/")
    if unified.startswith("/"):
        raise PathProblem(f"path may not be absolute: {shown}")
    parts = unified.split("/")
    if any(part == ".." for part in parts):
        raise PathProblem(f"path may not contain '..': {shown}")
    if len(parts[0]) >= 2 and parts[0][1] == ":" and parts[0][0].isalpha():
        raise PathProblem(f"path may not contain a prefix or root: {shown}")
    kept = [part for part in parts if part not in ("", ".")]
    if not kept:
        raise PathProblem(f"path resolved to empty: {shown}")
    for part in kept:
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in part):
            raise PathProblem(f"path may not contain control characters: {shown}")
        if len(part.encode("utf-8", "surrogatepass")) > 255:
            raise PathProblem(f"path component too long: {shown}")
    return "/".join(kept)


def size_cap(rel: str) -> int:
    return MAX_MARKDOWN_BYTES if rel.endswith(".md") else MAX_OTHER_BYTES


@dataclass(frozen=True)
class PlannedFile:
    target: Path
    content: bytes
    kind: Kind
    report: str
    """What the response lists: the namespace-relative path (skills), the stem (system
    prompts) or the agent id."""


@dataclass
class DownloadPlan:
    namespace: str
    agents_skipped: list[dict[str, str]] = field(default_factory=list)
    _by_target: dict[Path, PlannedFile] = field(default_factory=dict)
    _folders: set[Path] = field(default_factory=set)
    """Every ancestor folder of a planned file."""
    _total_bytes: int = 0

    @property
    def files(self) -> list[PlannedFile]:
        """The files to write, in plan order (a replaced entry keeps its first position)."""
        return list(self._by_target.values())

    def reported(self, kind: Kind) -> list[str]:
        """The `report` values of one kind, first occurrence order, without duplicates."""
        seen: dict[str, None] = {}
        for planned in self._by_target.values():
            if planned.kind is kind:
                seen.setdefault(planned.report, None)
        return list(seen)

    @property
    def agent_hashes(self) -> dict[str, str]:
        return {f.report: sha256_hex(f.content) for f in self._by_target.values()
                if f.kind is Kind.AGENT}

    def add(self, planned: PlannedFile) -> None:
        """Add a file (a later entry for the same target replaces the earlier one), enforcing
        the file-count and total-size caps and refusing a path that another planned file needs
        as a folder (or the reverse), which could only be half-applied."""
        parents = planned.target.parents
        if planned.target in self._folders or any(parent in self._by_target for parent in parents):
            raise DirectoryError.plain(
                f"download of {self.namespace} names {planned.target} as both a file and a folder"
            )
        self._folders.update(parents)
        previous = self._by_target.get(planned.target)
        if previous is not None:
            self._total_bytes -= len(previous.content)
        self._by_target[planned.target] = planned
        self._total_bytes += len(planned.content)
        if len(self._by_target) > MAX_FILES:
            raise DirectoryError.plain(
                f"download of {self.namespace} has too many files (more than {MAX_FILES})"
            )
        if self._total_bytes > MAX_TOTAL_BYTES:
            raise DirectoryError.plain(
                f"download of {self.namespace} is too large (more than {MAX_TOTAL_BYTES} bytes)"
            )


def _check_destination(root: Path, relative: str, label: str) -> Path:
    """The destination of a write inside `root`, refusing escapes and file/directory clashes."""
    try:
        target = contained_target(root, relative)
    except EscapesRoot:
        raise DirectoryError.plain(
            f"{label}: destination {root / relative} resolves outside {root}"
        ) from None
    if target.is_dir() and not target.is_symlink():
        raise DirectoryError.plain(f"{label}: destination {target} is a directory")
    probe = target.parent
    while probe != root and probe.parent != probe:
        if os.path.lexists(probe) and not probe.is_dir():
            raise DirectoryError.plain(f"{label}: {probe} exists and is not a directory")
        probe = probe.parent
    return target


# --------------------------------------------------------------------------------------------
# Registry bundles


def plan_registry_bundle(
    payload: Any,
    worker: str,
    skills_root: Path,
    agents_root: Path,
    owned_agents: Mapping[str, str],
) -> DownloadPlan:
    """Validate and route a `GET /w/{worker}/skills` payload; raise before anything is written."""
    if not isinstance(payload, Mapping):
        raise undecodable("skills payload is not an object")
    name = payload.get("name")
    if isinstance(name, str) and name and name != worker:
        raise DirectoryError.plain(f'registry returned worker name "{name}", expected "{worker}"')
    raw_entries = payload.get("skills", [])
    if raw_entries is None:
        raw_entries = []
    if not isinstance(raw_entries, list):
        raise undecodable("skills is not a list")
    entries: list[tuple[str, str, str]] = []
    for raw in raw_entries:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("path"), str):
            raise undecodable("skills entry without a string path")
        content = raw.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise undecodable("skills entry content is not a string")
        original = raw["path"]
        stripped = original[len("skills/"):] if original.startswith("skills/") else original
        try:
            rel = safe_relative(stripped)
        except PathProblem as exc:
            raise DirectoryError.plain(f'invalid skill path "{original}": {exc}') from None
        entries.append((original, rel, content))
    if any(rel == "SKILL.md" for _, rel, _ in entries):
        entries = [e for e in entries if e[1] != "index.md"]

    plan = DownloadPlan(namespace=worker)
    for original, rel, content in entries:
        data = content.encode("utf-8")
        if len(data) > size_cap(rel):
            raise DirectoryError.plain(
                f'invalid skill path "{original}": file is too large '
                f"({len(data)} bytes; max {size_cap(rel)})"
            )
        parts = tuple(rel.split("/"))
        if len(parts) == 2 and parts[0] == "agents" and parts[1].endswith(".md"):
            agent_id = parts[1][:-3]
            if not is_valid_name(agent_id):
                continue
            owner = owned_agents.get(agent_id)
            if owner is not None:
                if not any(s["id"] == agent_id for s in plan.agents_skipped):
                    plan.agents_skipped.append({"id": agent_id, "owned_by": owner})
                continue
            target = _check_destination(agents_root, f"{agent_id}.md",
                                        f'invalid skill path "{original}"')
            plan.add(PlannedFile(target, data, Kind.AGENT, agent_id))
            continue
        kind = classify(parts)
        if kind in (Kind.IGNORED, Kind.AGENT):
            continue
        target = _check_destination(skills_root, f"{worker}/{rel}",
                                    f'invalid skill path "{original}"')
        if kind is Kind.SYSTEM_PROMPT and rel.endswith(".md"):
            plan.add(PlannedFile(target, data, Kind.SYSTEM_PROMPT, parts[-1][:-3]))
        else:
            plan.add(PlannedFile(target, data, Kind.SKILL, rel))
    return plan


# --------------------------------------------------------------------------------------------
# Repo trees


def plan_repo_tree(source: Path, skill: str, skills_root: Path, repo: str) -> DownloadPlan:
    """Route the files of a cloned `skills/<skill>/` folder into `<skills_root>/<skill>/`.

    Entries whose name starts with `.` and non-UTF-8 names are skipped; symbolic links are
    never followed (one that points outside the skill folder refuses the whole download);
    only regular files and directories are copied; `prompts/` and `agents/` paths are skipped.
    """
    plan = DownloadPlan(namespace=skill)
    real_source = source.resolve()
    label = f'skills/{skill} in "{repo}"'

    def visit(directory: Path, prefix: tuple[str, ...]) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            raise DirectoryError.plain(f"read {directory}: {exc.strerror or exc}") from None
        for entry in entries:
            name = entry.name
            if name.startswith(".") or not utf8_name(name):
                continue
            parts = prefix + (name,)
            rel = "/".join(parts)
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                target = Path(entry.path).resolve()
                if target != real_source and real_source not in target.parents:
                    raise DirectoryError.plain(
                        f"{label}: {rel} is a symbolic link pointing outside the skill folder"
                    )
                continue
            kind = classify(parts)
            if kind in (Kind.IGNORED, Kind.AGENT):
                continue
            if stat.S_ISDIR(mode):
                visit(Path(entry.path), parts)
                continue
            if not stat.S_ISREG(mode):
                continue
            size = entry.stat(follow_symlinks=False).st_size
            if size > size_cap(rel):
                raise DirectoryError.plain(
                    f"{label}: {rel} is too large ({size} bytes; max {size_cap(rel)})"
                )
            try:
                data = Path(entry.path).read_bytes()
            except OSError as exc:
                raise DirectoryError.plain(f"read {entry.path}: {exc.strerror or exc}") from None
            target = _check_destination(skills_root, f"{skill}/{rel}", label)
            if kind is Kind.SYSTEM_PROMPT and name.endswith(".md"):
                plan.add(PlannedFile(target, data, Kind.SYSTEM_PROMPT, name[:-3]))
            else:
                plan.add(PlannedFile(target, data, Kind.SKILL, rel))

    visit(source, ())
    return plan


# --------------------------------------------------------------------------------------------
# Applying


def apply_plan(plan: DownloadPlan, marks: SelfWrites | None) -> None:
    """Write every planned file atomically, in plan order (blocking; run it in a thread)."""
    for planned in plan.files:
        atomic_write(planned.target, planned.content, marks)


@dataclass(frozen=True)
class DownloadResult:
    """The response of every download function plus what the fan-out needs."""

    namespace: str
    skills_written: list[str]
    system_prompts_written: list[str]
    agents_written: list[str]
    agents_skipped: list[dict[str, str]]
    source: dict[str, str]
    version: str | None = None
    """The registry-reported version (registry downloads only)."""

    @classmethod
    def from_plan(cls, plan: DownloadPlan, source: dict[str, str],
                  version: str | None = None) -> DownloadResult:
        return cls(
            namespace=plan.namespace,
            skills_written=plan.reported(Kind.SKILL),
            system_prompts_written=plan.reported(Kind.SYSTEM_PROMPT),
            agents_written=plan.reported(Kind.AGENT),
            agents_skipped=list(plan.agents_skipped),
            source=source,
            version=version,
        )

    def events(self) -> list[tuple[str, dict[str, str]]]:
        """One `{op: "download", namespace, source}` event per kind written (§9.4)."""
        payload = {"op": "download", "namespace": self.namespace, "source": self.source["kind"]}
        events = []
        if self.skills_written:
            events.append((SKILLS_EVENT, dict(payload)))
        if self.system_prompts_written:
            events.append((PROMPTS_EVENT, dict(payload)))
        if self.agents_written:
            events.append((AGENTS_EVENT, dict(payload)))
        return events

    def response(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "skills_written": list(self.skills_written),
            "system_prompts_written": list(self.system_prompts_written),
            "agents_written": list(self.agents_written),
            "agents_skipped": [dict(s) for s in self.agents_skipped],
            "source": dict(self.source),
        }
