"""Skills on disk (docs/rules/surfaces.md §3–§5): the visible set (`skills_view`, re-exported
here), reading a document (§3.7, §4.2), list rows with their per-file facts cache, `get`
resolution with its worker-overview fallbacks and the "Did you mean" ranking (§5). Writes are in
`skill_writes`, the index rendering in `skills_index`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import DirectoryError, not_found, quote
from ..log_throttle import ThrottledLog
from .files import body_is_empty, read_capped, rfc3339
from .ids import SKILL_GET_NEXT, closest, levenshtein
from .markdown import (
    FrontmatterError,
    first_h1,
    first_paragraph,
    load_yaml,
    split_frontmatter,
)
from .skills_view import (
    Origin,
    SkillFile,
    SkillsView,
    build_view,
    merge_skill_roots,
    on_disk_id,
    scan_agent_skills_root,
    scan_root,
    skill_id_of,
)
from .stat_cache import StatCache
from .visibility import InstalledWorkers

if TYPE_CHECKING:
    from ..context import Context

log = logging.getLogger(__name__)
_unreadable = ThrottledLog(log)
"""A listed file that cannot be read — typically deleted between the listing and the read,
which a worker whose skills are being rewritten meets hundreds of times a minute — is logged
at INFO once per error code every 30 s; the repeats go to DEBUG."""

T = TypeVar("T")




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
    return row_facts_in_state(view, file, st)


def row_facts_in_state(view: SkillsView, file: SkillFile,
                       st: os.stat_result | None) -> _RowFacts | None:
    """`row_facts_of` for the file in the state `st` (a fresh `stat`, None when it failed)."""
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
    try:
        st = os.stat(file.path)
    except OSError:
        st = None
    return row_in_state(view, file, st)


def row_in_state(view: SkillsView, file: SkillFile, st: os.stat_result | None) -> SkillRow:
    """The row of one visible file in the state `st` (a fresh `stat`, None when it failed)."""
    display = view.display_id(file.id)
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



async def load_view(ctx: Context, *, fresh: bool = False) -> SkillsView:
    """The visible set of this call: installed workers from the cache (`fresh=True` re-fetches,
    as `index` does), then the scan off the event loop. With `filter_unregistered` off the
    engine is not asked."""
    return await in_view(ctx, lambda view: view, fresh=fresh)


async def in_view(ctx: Context, work: Callable[[SkillsView], T], *, fresh: bool = False) -> T:
    """`work(view)` on the visible set of this call, computed like `load_view`, with the scan
    and the work in one worker thread: one thread hop per call instead of two (under 50
    callers each hop waits for the interpreter lock behind the event loop)."""
    import anyio  # the async entry points alone need it (a file-backed `call` runs without it)

    installed = None
    if ctx.settings.filter_unregistered:
        installed = await ctx.directory.service(InstalledWorkers).get(ctx, fresh=fresh)
    row_facts = ctx.directory.service(RowFactsCache)
    return await anyio.to_thread.run_sync(
        lambda: work(build_view(ctx.settings, installed, row_facts)))


__all__ = [
    "Origin",
    "SkillFile",
    "SkillsView",
    "build_view",
    "merge_skill_roots",
    "on_disk_id",
    "scan_agent_skills_root",
    "scan_root",
    "skill_id_of",
]
