"""The visible set of skills (docs/rules/surfaces.md §3.3–§3.5): one root scanned, the agent-skills
roots scanned shallowly, the three merged by precedence, lookup and display ids. `skills`
re-exports it beside reading, rows and `get` resolution.

* **Scan** (one skills root): regular `**/*.md` files in lexical byte order, kept when classified
  `skill` (§3.2). On-disk id = the relative path without `.md`, a final `SKILL.md` / `SKILLS.md`
  counting as `index.md`. Invalid ids are skipped; duplicates keep the first seen.
* **Agent-skills roots** are scanned shallowly: `<dir>/SKILL.md` → `<dir>/index`.
* **Visible set**: local rows, then `skills_folder` rows whose top-level namespace has no
  directory under the local root (kit namespaces are shadowed per kit), de-duplicated by id
  (local wins); then the `filter_unregistered` filter; then agent-skills entries whose top
  segment is not a top-level directory of either skills root nor served by an earlier
  agent-skills root. Sorted by on-disk id.
* **Lookup**: the exact on-disk id, else `<id>/index` (never a sibling).
* **Display id**: a trailing `/index` is dropped unless the shorter id is itself on disk.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .ids import is_valid_id
from .roots import (
    Found,
    Kind,
    agent_skills_roots,
    classify,
    local_skills_root,
    really_within,
    relative_parts,
    remembered_walk,
    same_path,
    skills_root,
    top_level_dirs,
    walk_markdown,
)
from .stat_cache import StatCache
from .visibility import Visibility, kit_namespaces

if TYPE_CHECKING:
    from ..config import Settings

log = logging.getLogger(__name__)

INDEX_NAMES = frozenset({"SKILL.md", "SKILLS.md"})
T = TypeVar("T")


class Origin(str, Enum):
    LOCAL = "local"
    SKILLS = "skills"
    AGENT_SKILLS = "agent_skills"


@dataclass(frozen=True)
class SkillFile:
    """One scanned skill: its on-disk id, its file, the root holding it and that root's role."""

    id: str
    path: Path
    root: Path
    origin: Origin

    @property
    def top(self) -> str:
        return self.id.split("/", 1)[0]


# --- scanning --------------------------------------------------------------------------------


def on_disk_id(parts: Sequence[str]) -> str:
    """`a/b.md` → `a/b`; `a/SKILL.md`, `a/SKILLS.md` → `a/index`; root `SKILL.md` → `index`."""
    name = parts[-1]
    stem = "index" if name in INDEX_NAMES else name[: -len(".md")]
    return "/".join([*parts[:-1], stem])


@functools.lru_cache(maxsize=16384)
def skill_id_of(parts: tuple[str, ...]) -> tuple[str | None, bool]:
    """`(on-disk id, valid)` of a markdown file at root-relative `parts`; `(None, False)` when
    the path does not hold a skill (§3.2). A pure function of `parts`, so remembered."""
    if classify(parts) is not Kind.SKILL:
        return None, False
    skill_id = on_disk_id(parts)
    return skill_id, is_valid_id(skill_id)


_SCANS: dict[tuple[str, Origin], tuple[list[Any], list[SkillFile]]] = {}
"""Root → (the walk it was scanned from, the scan): `walk_markdown` hands back the very same
list while the root's folders are unchanged, and the scan is a function of it alone."""


def scan_root(root: Path, origin: Origin, walked: list[Found] | None = None) -> list[SkillFile]:
    """The skills of one root (§3.3), sorted by id; `walked` is the root's `walk_markdown`
    when the caller already has it."""
    if walked is None:
        walked = walk_markdown(root)
    key = (str(root), origin)
    memo = _SCANS.get(key)
    if memo is not None and memo[0] is walked:
        return list(memo[1])
    files: dict[str, SkillFile] = {}
    for found in walked:
        skill_id, valid = skill_id_of(found.parts)
        if skill_id is None:
            continue
        if not valid:
            log.info("skills: invalid id %r from %s; skipped", skill_id, found.path)
            continue
        if skill_id in files:
            log.info('skills: duplicate id "%s" also produced by %s; skipped', skill_id, found.path)
            continue
        files[skill_id] = SkillFile(skill_id, found.path, root, origin)
    scanned = [files[k] for k in sorted(files)]
    if len(_SCANS) >= 64:
        _SCANS.clear()
    _SCANS[key] = (walked, scanned)
    return list(scanned)


def scan_agent_skills_root(root: Path) -> list[SkillFile]:
    """Shallow `<dir>/SKILL.md` entries of a read-only agent-skills root (id `<dir>/index`)."""
    try:
        names = sorted(os.listdir(root))
        if not names:
            return []
        real_root = root.resolve()
    except (OSError, RuntimeError):
        return []
    out = []
    for name in names:
        if not is_valid_id(name):
            continue
        doc = root / name / "SKILL.md"
        try:
            if not doc.is_file() or not really_within(real_root, doc):
                continue
        except OSError:
            continue
        out.append(SkillFile(f"{name}/index", doc, root, Origin.AGENT_SKILLS))
    return out


# --- the visible set ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillsView:
    """The visible set of one call plus what the write paths need to explain refusals."""

    files: tuple[SkillFile, ...]
    visibility: Visibility
    skills_root: Path
    local_root: Path
    agent_roots: tuple[Path, ...]
    agents_namespaces: Mapping[str, Path]
    """Agents namespace → the first agent-skills root that serves a `<name>/SKILL.md`."""
    row_facts: StatCache[Any] | None = None
    """The Directory's `RowFactsCache`; None parses every file for its row."""
    by_id: Mapping[str, SkillFile] = field(init=False, repr=False)

    _agent_prefixes: tuple[tuple[Path, str, str], ...] = field(init=False, repr=False)
    """Each agent root with its absolute path and that path plus a separator, computed once."""
    _root_memo: dict[Path, Path | None | bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", {f.id: f for f in self.files})
        prefixes = []
        for root in self.agent_roots:
            root_s = os.path.normcase(os.path.abspath(root))
            prefixes.append((root, root_s, root_s.rstrip(os.sep) + os.sep))
        object.__setattr__(self, "_agent_prefixes", tuple(prefixes))
        object.__setattr__(self, "_root_memo", {})

    def lookup(self, skill_id: str) -> SkillFile | None:
        """Exact on-disk id, else the `<id>/index` overview (never a sibling)."""
        found = self.by_id.get(skill_id)
        if found is None:
            found = self.by_id.get(f"{skill_id}/index")
        return found

    def display_id(self, skill_id: str) -> str:
        """Strip a trailing `/index` unless the shorter id is itself on disk here."""
        if skill_id.endswith("/index"):
            short = skill_id[: -len("/index")]
            if short not in self.by_id:
                return short
        return skill_id

    def under(self, namespace: str) -> list[SkillFile]:
        """Visible documents equal to or under `<namespace>/`."""
        prefix = namespace + "/"
        return [f for f in self.files if f.id == namespace or f.id.startswith(prefix)]

    def _root_in_agent_root(self, root: Path) -> Path | None | bool:
        """For every file of the scanned `root` at once: the agent root holding all of `root`,
        None when no agent root overlaps it, False when one lies inside it (ask per file).
        Remembered per view (one view lives for one call)."""
        memo = self._root_memo
        if root in memo:
            return memo[root]
        root_s = os.path.normcase(os.path.abspath(root))
        inside_root = root_s.rstrip(os.sep) + os.sep
        answer: Path | None | bool = None
        for agent_root, agent_s, agent_inside in self._agent_prefixes:
            if _within(root_s, agent_s, agent_inside):
                answer = agent_root
                break
            if _within(agent_s, root_s, inside_root):
                answer = False
                break
        memo[root] = answer
        return answer

    def in_agent_root(self, file: SkillFile) -> Path | None:
        """The agent-skills root a file lies in (by location), if any."""
        if file.origin is Origin.AGENT_SKILLS:
            return file.root
        if not self._agent_prefixes:
            return None
        whole = self._root_in_agent_root(file.root)
        if whole is not False:
            return whole
        path_s = os.path.normcase(os.path.abspath(file.path))
        for root, root_s, inside in self._agent_prefixes:
            if path_s == root_s or path_s.startswith(inside):
                return root
        return None


def _within(path_s: str, root_s: str, inside: str) -> bool:
    return path_s == root_s or path_s.startswith(inside)


def _kit_dirs_inside_local(local: Path, skills: Path, kits: frozenset[str]) -> set[str]:
    """Local-root-relative paths (`a/b`) of kit install directories inside the local root."""
    inside = set()
    for kit in kits:
        parts = relative_parts(local, skills.joinpath(*kit.split("/")))
        if parts:
            inside.add("/".join(parts))
    return inside


def merge_skill_roots(local: Path, skills: Path, kits: frozenset[str], *,
                      walks: tuple[list[Found], list[Found]] | None = None,
                      local_tops: frozenset[str] | None = None) -> list[SkillFile]:
    """Step 1 of §3.4: local rows, then unshadowed `skills_folder` rows; sorted, unique by id.

    A top-level directory of the local root shadows that namespace of `skills_folder`
    entirely, except for installed kits: `<local>/<handle>/<kit>/` shadows only that kit, and a
    kit install directory that sits inside the local root is not an override at all. `walks`
    (the two roots' `walk_markdown`) and `local_tops` (`top_level_dirs(local)`) are passed by a
    caller that already has them."""
    kit_dirs = _kit_dirs_inside_local(local, skills, kits)
    local_walk, skills_walk = walks if walks is not None else (None, None)
    local_rows = [
        f for f in scan_root(local, Origin.LOCAL, local_walk)
        if not any(f.id.startswith(d + "/") for d in kit_dirs)
    ]
    shadow_tops = set(top_level_dirs(local) if local_tops is None else local_tops) - kit_dirs

    def shadowed(file: SkillFile) -> bool:
        if "/" not in file.id:
            return False
        for kit in kits:
            if file.id.startswith(kit + "/"):
                return local.joinpath(*kit.split("/")).is_dir()
        return file.top in shadow_tops

    skills_rows = [] if same_path(local, skills) else [
        f for f in scan_root(skills, Origin.SKILLS, skills_walk) if not shadowed(f)
    ]
    merged: dict[str, SkillFile] = {}
    for file in [*local_rows, *skills_rows]:
        merged.setdefault(file.id, file)
    return [merged[k] for k in sorted(merged)]


MISSING = "missing"
"""The walk token of a root that cannot be stat-ed: no files, no folders (`_walk_token`)."""
MAX_VIEWS = 16
"""The most visible sets `build_view` remembers (one per settings and installed set in use)."""
_VIEWS: dict[tuple[Any, ...], tuple[tuple[list[Found], list[Found]], SkillsView]] = {}
_VIEWS_LOCK = threading.Lock()
"""Everything a visible set is computed from → (the two walks it came from, the view). The view
is a function of that key alone, so an equal key hands back the very same (frozen) view."""
_LATEST: dict[tuple[Any, ...], tuple[Any, ...]] = {}
"""The roots, installed set, filter and row-facts cache of a view → the key of its latest view
in `_VIEWS`: a new walk (a skill written) replaces that view instead of adding one, so a worker
whose skills churn holds one view per settings and installed set, not `MAX_VIEWS` stale ones."""


def _walk_token(root: Path, walked: list[Found]) -> object | None:
    """What stands for a root's walk in `build_view`'s key: the walk's identity while
    `walk_markdown` remembers it (every folder under the root provably unchanged, see
    `roots.remembered_walk`), `MISSING` for a root that cannot be stat-ed; None (do not
    remember the view) otherwise."""
    if remembered_walk(root, walked):
        return id(walked)
    if not walked:
        try:
            os.stat(root)
        except OSError:
            return MISSING
    return None


@dataclass(frozen=True)
class _Roots:
    """What `build_view` reads of the settings and the process: the resolved roots and the
    project root holding `kits.lock`."""

    local: Path
    skills: Path
    agent_roots: tuple[Path, ...]
    nested: bool
    """The local root is the skills root itself."""
    project: Path


ROOT_INPUTS = ("local_skills_folder", "skills_folder", "agents_skills_folder",
               "global_agents_skills_folder")
RESOLUTION_ENVIRONMENT = ("HOME", "USERPROFILE", "III_COMPOSE_DIR", "III_COMPOSE_FILE")
"""The variables root resolution reads (`config_base.resolve_path`, `project_root`)."""
MAX_ROOTS = 16
_ROOTS: dict[tuple[Any, ...], _Roots] = {}


def _roots_of(settings: Settings) -> _Roots:
    """The roots of `settings`, resolved now (docs/rules/surfaces.md §2.2): remembered under
    everything resolution reads — the four folder settings, `RESOLUTION_ENVIRONMENT` and the
    working directory — so an unchanged process resolves no path again."""
    from ..config_base import project_root

    try:
        cwd = os.getcwd()
    except OSError:  # no working directory: resolve (and fail) as the helpers do
        cwd = None
    environ = os.environ
    key = (tuple(getattr(settings, name) for name in ROOT_INPUTS),
           tuple(environ.get(name) for name in RESOLUTION_ENVIRONMENT), cwd)
    found = _ROOTS.get(key) if cwd is not None else None
    if found is None:
        local = local_skills_root(settings)
        skills = skills_root(settings)
        found = _Roots(local, skills, tuple(agent_skills_roots(settings)),
                       same_path(local, skills), project_root())
        if cwd is not None:
            with _VIEWS_LOCK:
                while len(_ROOTS) >= MAX_ROOTS:
                    del _ROOTS[next(iter(_ROOTS))]
                _ROOTS[key] = found
    return found


def build_view(settings: Settings, installed: frozenset[str] | None,
               row_facts: StatCache[Any] | None = None) -> SkillsView:
    """Compute the visible set (§3.4) for `settings` and an installed-worker set (None = unknown).

    Every call reads the roots again — one `stat` per folder of a remembered walk (`roots.
    walk_markdown`), one for a missing root, the agent-skills roots and the kits lock — and
    reuses the view of an earlier call when all of that, the roots, the installed set and the
    filter are equal (`_VIEWS`): merging, filtering and sorting are then skipped."""
    roots = _roots_of(settings)
    local, skills, agent_roots, nested = roots.local, roots.skills, roots.agent_roots, roots.nested
    kits = kit_namespaces(roots.project)
    agent_entries = [scan_agent_skills_root(root) for root in agent_roots]
    local_walk = walk_markdown(local)
    skills_walk = local_walk if nested else walk_markdown(skills)
    local_token = _walk_token(local, local_walk)
    skills_token = local_token if nested else _walk_token(skills, skills_walk)
    local_tops = frozenset() if local_token is MISSING else top_level_dirs(local)
    skills_tops = local_tops if nested else (
        frozenset() if skills_token is MISSING else top_level_dirs(skills))
    slot = (str(local), str(skills), agent_roots, installed, settings.filter_unregistered, row_facts)
    key: tuple[Any, ...] | None = None
    if local_token is not None and skills_token is not None:
        key = (*slot, local_token, skills_token, local_tops, skills_tops,
               tuple(tuple(e) for e in agent_entries), kits)
        hit = _VIEWS.get(key)  # a walk's id is its own: the entry holds the walk alive
        if hit is not None:
            return hit[1]

    agents_namespaces: dict[str, Path] = {}
    for root, entries in zip(agent_roots, agent_entries, strict=True):
        for entry in entries:
            agents_namespaces.setdefault(entry.top, root)

    visibility = Visibility(
        enabled=settings.filter_unregistered,
        installed=installed,
        kits=kits,
        agents_namespaces=frozenset(agents_namespaces),
    )
    merged = merge_skill_roots(local, skills, kits, walks=(local_walk, skills_walk),
                               local_tops=local_tops)
    visible = [f for f in merged if visibility.survives(f.id)]

    taken = set(local_tops) | set(skills_tops)
    for entries in agent_entries:
        for entry in entries:
            if entry.top in taken:
                continue
            taken.add(entry.top)
            visible.append(entry)
    visible.sort(key=lambda f: f.id)
    view = SkillsView(
        files=tuple(visible),
        visibility=visibility,
        skills_root=skills,
        local_root=local,
        agent_roots=agent_roots,
        agents_namespaces=agents_namespaces,
        row_facts=row_facts,
    )
    if key is not None:
        with _VIEWS_LOCK:  # scans also run in worker threads
            replaced = _LATEST.get(slot)
            gone = _VIEWS.pop(replaced, None) if replaced is not None else None
            while len(_VIEWS) >= MAX_VIEWS:
                del _VIEWS[next(iter(_VIEWS))]
            _VIEWS[key] = ((local_walk, skills_walk), view)
            _LATEST[slot] = key
            while len(_LATEST) > MAX_VIEWS:
                del _LATEST[next(iter(_LATEST))]
        if gone is not None and row_facts is not None:  # a file the new view lost was deleted
            kept = {file.path for file in view.files}  # or moved: its row facts go with it
            for file in gone[1].files:
                if file.path not in kept:
                    row_facts.discard(str(file.path))
    return view
