"""Skills on disk: scan, precedence, the visible set, lookup and display ids (docs/rules/surfaces.md §3.3–§3.5).

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

Reading a document (§3.7, §4.2), list rows, `get` resolution with its worker-overview
fallbacks and the "Did you mean" ranking (§5) live here too; writes are in `skill_writes`,
the index rendering in `skills_index`.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..config import Settings
from ..errors import DirectoryError, not_found, quote
from ..log_throttle import ThrottledLog
from .files import body_is_empty, read_capped, rfc3339
from .ids import SKILL_GET_NEXT, closest, is_valid_id, levenshtein
from .markdown import FrontmatterError, first_h1, first_paragraph, load_yaml, split_frontmatter
from .roots import (
    Kind,
    agent_skills_roots,
    classify,
    local_skills_root,
    really_within,
    relative_parts,
    same_path,
    skills_root,
    top_level_dirs,
    walk_markdown,
)
from .stat_cache import StatCache
from .visibility import InstalledWorkers, Visibility, kit_namespaces

if TYPE_CHECKING:
    from ..context import Context

log = logging.getLogger(__name__)
_unreadable = ThrottledLog(log)
"""A listed file that cannot be read — typically deleted between the listing and the read,
which a worker whose skills are being rewritten meets hundreds of times a minute — is logged
at INFO once per error code every 30 s; the repeats go to DEBUG."""

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


def scan_root(root: Path, origin: Origin) -> list[SkillFile]:
    """The skills of one root (§3.3), sorted by id."""
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


def merge_skill_roots(local: Path, skills: Path, kits: frozenset[str]) -> list[SkillFile]:
    """Step 1 of §3.4: local rows, then unshadowed `skills_folder` rows; sorted, unique by id.

    A top-level directory of the local root shadows that namespace of `skills_folder`
    entirely, except for installed kits: `<local>/<handle>/<kit>/` shadows only that kit, and a
    kit install directory that sits inside the local root is not an override at all."""
    kit_dirs = _kit_dirs_inside_local(local, skills, kits)
    local_rows = [
        f for f in scan_root(local, Origin.LOCAL)
        if not any(f.id.startswith(d + "/") for d in kit_dirs)
    ]
    shadow_tops = set(top_level_dirs(local)) - kit_dirs

    def shadowed(file: SkillFile) -> bool:
        if "/" not in file.id:
            return False
        for kit in kits:
            if file.id.startswith(kit + "/"):
                return local.joinpath(*kit.split("/")).is_dir()
        return file.top in shadow_tops

    skills_rows = [] if same_path(local, skills) else [
        f for f in scan_root(skills, Origin.SKILLS) if not shadowed(f)
    ]
    merged: dict[str, SkillFile] = {}
    for file in [*local_rows, *skills_rows]:
        merged.setdefault(file.id, file)
    return [merged[k] for k in sorted(merged)]


def build_view(settings: Settings, installed: frozenset[str] | None,
               row_facts: StatCache[Any] | None = None) -> SkillsView:
    """Compute the visible set (§3.4) for `settings` and an installed-worker set (None = unknown)."""
    local = local_skills_root(settings)
    skills = skills_root(settings)
    agent_roots = agent_skills_roots(settings)
    kits = kit_namespaces()

    agent_entries = [scan_agent_skills_root(root) for root in agent_roots]
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
    visible = [f for f in merge_skill_roots(local, skills, kits) if visibility.survives(f.id)]

    taken = set(top_level_dirs(local)) | set(top_level_dirs(skills))
    for entries in agent_entries:
        for entry in entries:
            if entry.top in taken:
                continue
            taken.add(entry.top)
            visible.append(entry)
    visible.sort(key=lambda f: f.id)
    return SkillsView(
        files=tuple(visible),
        visibility=visibility,
        skills_root=skills,
        local_root=local,
        agent_roots=tuple(agent_roots),
        agents_namespaces=agents_namespaces,
        row_facts=row_facts,
    )


async def load_view(ctx: Context, *, fresh: bool = False) -> SkillsView:
    """The visible set of this call: installed workers from the cache (`fresh=True` re-fetches,
    as `index` does), then the scan off the event loop. With `filter_unregistered` off the
    engine is not asked."""
    return await in_view(ctx, lambda view: view, fresh=fresh)


async def in_view(ctx: Context, work: Callable[[SkillsView], T], *, fresh: bool = False) -> T:
    """`work(view)` on the visible set of this call, computed like `load_view`, with the scan
    and the work in one worker thread: one thread hop per call instead of two (under 50
    callers each hop waits for the interpreter lock behind the event loop)."""
    installed = None
    if ctx.settings.filter_unregistered:
        installed = await ctx.directory.service(InstalledWorkers).get(ctx, fresh=fresh)
    row_facts = ctx.directory.service(RowFactsCache)
    return await anyio.to_thread.run_sync(
        lambda: work(build_view(ctx.settings, installed, row_facts)))


# --- reading -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillMeta:
    """The recognised frontmatter of a skill (§4.2) and its body."""

    title: str | None
    name: str | None
    type: str | None
    function_id: str | None
    description: str | None
    disable_model_invocation: bool
    body: str

    def resolved_title(self, fallback: str) -> str:
        """fm `title` → fm `name` → the first body H1 → `fallback`."""
        return self.title or self.name or first_h1(self.body) or fallback

    def summary(self) -> str:
        """fm `description`, else the body's first paragraph (`""` when none)."""
        return self.description or first_paragraph(self.body)


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return None


def parse_skill(content: str) -> SkillMeta:
    """Frontmatter is optional and malformed YAML is tolerated (treated as no frontmatter)."""
    split = split_frontmatter(content)
    data: Any = {}
    if split.frontmatter is not None:
        try:
            data = load_yaml(split.frontmatter)
        except FrontmatterError as exc:
            log.info("skills: malformed frontmatter ignored: %s", exc)
            data = {}
    if not isinstance(data, Mapping):
        data = {}
    flag = data.get("disable-model-invocation")
    return SkillMeta(
        title=_text(data, "title"),
        name=_text(data, "name"),
        type=_text(data, "type"),
        function_id=_text(data, "function_id"),
        description=_text(data, "description"),
        disable_model_invocation=flag if isinstance(flag, bool) else False,
        body=split.body,
    )


@dataclass(frozen=True)
class SkillDocument:
    meta: SkillMeta
    raw: str


def read_skill(path: Path) -> SkillDocument:
    """Read a skill under the read invariants (§3.7): the size cap and a non-empty body.
    Errors are bare strings."""
    raw = read_capped(path)
    meta = parse_skill(raw)
    if body_is_empty(meta.body):
        raise DirectoryError.plain(f"file {path} has empty body")
    return SkillDocument(meta, raw)


def read_raw_document(path: Path) -> SkillDocument:
    """A `raw` read enforces only the size cap (an empty body is allowed)."""
    raw = read_capped(path)
    return SkillDocument(parse_skill(raw), raw)


@dataclass(frozen=True)
class SkillRow:
    """One `list` row (§6.1), on-disk id kept for filtering."""

    on_disk_id: str
    id: str
    title: str
    type: str | None
    function_id: str | None
    disable_model_invocation: bool
    description: str
    bytes: int
    modified_at: str
    origin: str = ""
    """`row_origin` of the file (sent only when a caller asks for it)."""

    def wire(self, *, include_description: bool = True, include_origin: bool = False
             ) -> dict[str, Any]:
        out = {
            "id": self.id,
            "title": self.title,
            "type": self.type,
            "function_id": self.function_id,
            "disable_model_invocation": self.disable_model_invocation,
            "description": self.description if include_description else "",
            "bytes": self.bytes,
            "modified_at": self.modified_at,
        }
        if include_origin:
            out["origin"] = self.origin
        return out


def row_origin(view: SkillsView, file: SkillFile) -> str:
    """Where a visible file comes from, as the write paths see it: `read_only` when it lies in an
    agent-skills root (writes refuse it, D116), else `local` for the local skills root, `kit` for
    an installed kit's folder in `skills_folder`, `skills` for the rest of `skills_folder`."""
    if view.in_agent_root(file) is not None:
        return "read_only"
    if file.origin is Origin.LOCAL:
        return "local"
    kits = view.visibility.kits if view.visibility is not None else frozenset()
    if any(file.id.startswith(kit + "/") for kit in kits):
        return "kit"
    return "skills"


@dataclass(frozen=True)
class _RowFacts:
    """What a list row takes from a readable skill file (the title before its id fallback)."""

    title: str | None
    type: str | None
    function_id: str | None
    disable_model_invocation: bool
    description: str


def _row_facts(path: Path) -> _RowFacts:
    meta = read_skill(path).meta
    return _RowFacts(
        title=meta.resolved_title(""),
        type=meta.type,
        function_id=meta.function_id,
        disable_model_invocation=meta.disable_model_invocation,
        description=meta.summary(),
    )


class RowFactsCache(StatCache[_RowFacts]):
    """Row facts of every listed file, reused while the file is unchanged (`stat_cache`);
    one per `Directory` (`directory.service(RowFactsCache)`)."""

    def __init__(self, directory: object | None = None) -> None:
        super().__init__()


def row_facts_of(view: SkillsView, file: SkillFile) -> _RowFacts | None:
    """The row facts of one visible file (from the view's row-facts cache while the file is
    unchanged), None when it cannot be read: what the search's skills lane needs of a
    `list_row`, without the size, timestamp and origin."""
    try:
        st = os.stat(file.path)
    except OSError:
        st = None
    try:
        if st is None or view.row_facts is None:
            return _row_facts(file.path)
        return view.row_facts.derive(file.path, st, _row_facts)
    except DirectoryError as exc:
        _unreadable.info(exc.code, "skills: %s", exc.message)
        return None


def list_row(view: SkillsView, file: SkillFile) -> SkillRow:
    """The row of one visible file; an unreadable file still yields a row (§4.2). One `stat`
    gives the size, the mtime and the key of the row-facts cache."""
    display = view.display_id(file.id)
    try:
        st = file.path.stat()
    except OSError:
        st = None
    size = st.st_size if st is not None else 0
    stamp = rfc3339(st.st_mtime) if st is not None else ""
    try:
        if st is None or view.row_facts is None:
            facts = _row_facts(file.path)
        else:
            facts = view.row_facts.derive(file.path, st, _row_facts)
    except DirectoryError as exc:
        _unreadable.info(exc.code, "skills: %s", exc.message)
        return SkillRow(file.id, display, display, None, None, False, "", size, stamp,
                        row_origin(view, file))
    return SkillRow(
        on_disk_id=file.id,
        id=display,
        title=facts.title or display,
        type=facts.type,
        function_id=facts.function_id,
        disable_model_invocation=facts.disable_model_invocation,
        description=facts.description,
        bytes=size,
        modified_at=stamp,
        origin=row_origin(view, file),
    )


def list_rows(
    view: SkillsView,
    *,
    search: str | None = None,
    prefix: str | None = None,
    type: str | None = None,  # noqa: A002 - the published field name
    search_body: bool = False,
) -> list[SkillRow]:
    """Rows in visible-set order: `prefix` on the on-disk id, `type` exact, `search` a
    case-insensitive substring of the display id, title or description — or, with
    `search_body`, of the markdown body (read only for rows the cheaper fields missed)."""
    needle = search.lower() if search else None
    rows = []
    for file in view.files:
        if prefix is not None and not file.id.startswith(prefix):
            continue
        row = list_row(view, file)
        if type is not None and row.type != type:
            continue
        if needle is not None and not any(
            needle in text.lower() for text in (row.id, row.title, row.description)
        ) and not (search_body and body_contains(file.path, needle)):
            continue
        rows.append(row)
    return rows


def body_contains(path: Path, needle: str) -> bool:
    """Whether the body of the skill at `path` contains the lowercase `needle`
    (case-insensitive); an unreadable file contains nothing."""
    try:
        return needle in read_skill(path).meta.body.lower()
    except DirectoryError:
        return False


# --- get: lookup with the worker-overview fallbacks (§6.2) ------------------------------------


def match_worker(segment: str, installed: frozenset[str] | None) -> str | None:
    """Map an id's first segment to an installed worker (candidates: installed + `directory`):
    an exact case-insensitive name wins; else the unique shortest candidate containing the
    segment (case-insensitive); an empty segment or `iii` maps to nothing."""
    if not segment or segment == "iii":
        return None
    candidates = sorted(set(installed or ()) | {"directory"})
    low = segment.lower()
    for name in candidates:
        if name.lower() == low:
            return name
    containing = [name for name in candidates if low in name.lower()]
    if not containing:
        return None
    shortest = min(len(name) for name in containing)
    best = [name for name in containing if len(name) == shortest]
    return best[0] if len(best) == 1 else None


@dataclass(frozen=True)
class Resolved:
    """A `get` answer: the file served and the note prepended to its body (if any)."""

    file: SkillFile
    note: str | None = None


NOTE_SEPARATOR = "\n\n---\n\n"


def overview_note(missed: str, shown: str, worker: str) -> str:
    return (
        f"> Note: no skill `{missed}`. Showing `{shown}` (the worker overview) instead. "
        f"For this worker's callable functions use `engine::functions::list` with worker={worker}; "
        f'for any other skills it ships call `directory::skills::list` with prefix="{worker}/".'
    )


def skill_less_note(worker: str) -> str:
    return (
        f"> Note: the worker `{worker}` is installed but ships no skill doc, so `{worker}` has no "
        "overview. Showing the iii engine overview below. "
        f"For `{worker}`'s own API, call `engine::functions::list` with worker={worker}, "
        f"or `engine::workers::info` with name={worker}."
    )


def resolve_get(view: SkillsView, skill_id: str, installed: frozenset[str] | None) -> Resolved:
    """Find the document `get` serves for a normalised id, or raise D110 (§6.2 steps 1–3)."""
    found = view.lookup(skill_id)
    if found is not None:
        return Resolved(found)
    worker = match_worker(skill_id.split("/", 1)[0], installed)
    if worker is not None:
        overview = view.by_id.get(f"{worker}/index")
        docs = view.under(worker)
        if overview is not None and ("/" not in skill_id or docs == [overview]):
            note = overview_note(skill_id, view.display_id(overview.id), worker)
            return Resolved(overview, note)
        if not docs:
            engine_overview = view.by_id.get("iii/index")
            if engine_overview is not None:
                return Resolved(engine_overview, skill_less_note(worker))
            raise DirectoryError(
                "D110",
                f"D110 not_found: {quote(skill_id)} does not exist — the worker `{worker}` is "
                "installed but ships no skill doc. Next: call engine::functions::list with "
                f"worker={worker} to list its functions; or engine::workers::info with name={worker}.",
            )
    raise not_found(
        "D110", "skill", skill_id,
        suggestions=suggest_for_get(view, skill_id), next_steps=SKILL_GET_NEXT,
    )


# --- suggestions (§5) -------------------------------------------------------------------------


def get_score(missed: str, candidate: str) -> int:
    """`100 × (non-empty segments of the missed id found among the candidate's segments)
    − levenshtein(lower(missed), lower(candidate))`."""
    segments = set(candidate.split("/"))
    shared = sum(1 for seg in missed.split("/") if seg and seg in segments)
    return 100 * shared - levenshtein(missed.lower(), candidate.lower())


def suggest_for_get(view: SkillsView, missed: str, limit: int = 3) -> list[str]:
    """The closest visible ids by `get_score` (stable, so ties keep id order), first `limit`,
    those scoring ≤ 0 dropped, rendered as display ids.

    Since `levenshtein(a, b) ≥ |len(a) − len(b)|`, a candidate's score is bounded above by
    `100 × shared − |len(a) − len(b)|`; candidates are visited by that bound and the scan stops
    once no remaining bound can displace the current top `limit`."""
    missed_segments = [seg for seg in missed.split("/") if seg]
    bounded = []
    for index, file in enumerate(view.files):
        segments = set(file.id.split("/"))
        shared = sum(1 for seg in missed_segments if seg in segments)
        bounded.append((100 * shared - abs(len(missed) - len(file.id)), index, file.id))
    bounded.sort(key=lambda item: (-item[0], item[1]))
    best: list[tuple[int, int, str]] = []
    for bound, index, candidate in bounded:
        if len(best) == limit:
            worst_score, worst_index, _ = best[-1]
            if bound < worst_score:
                break
            if bound == worst_score and index > worst_index:
                continue
        best.append((get_score(missed, candidate), index, candidate))
        best.sort(key=lambda item: (-item[0], item[1]))
        del best[limit:]
    return [view.display_id(fid) for score, _, fid in best if score > 0]


def suggest_for_edit(view: SkillsView, missed: str, limit: int = 3) -> list[str]:
    """The `limit` closest on-disk ids by lowercase Levenshtein distance, ties by id."""
    return closest(missed, [f.id for f in view.files], limit)
