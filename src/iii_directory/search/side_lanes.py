"""The side lanes: installed skill documents and registered triggers (docs/rules/search.md §3.6, §9).

Run once per call over all searched capabilities: their corpora are fetched while the queries are
embedded, then ranked concurrently with the function batches. Each
capability lane is lexical (coverage-pruned BM25), hybrid (fused with ad-hoc embeddings where
admitted) or judged (a depth-8 shortlist, noul floor 0.3), falling back to the local ranking.
Lanes merge round-robin, de-duplicated, at most 6 skills and 6 triggers; empty sections are
omitted, and so is the trigger section when the registered-triggers list failed.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio

from .call import SearchCall
from .ranking.corpus import Document, DocumentSet, DocumentSetCache
from .judge import SIDE_DEPTH, Candidate, skill_candidate, trigger_candidate
from .ranking.lanes import Ranking
from .ranking.query import Query
from .ranking.select import round_robin
from .ranking.text import bm25_document, searchable_text, side_document, slim_description
from .ranking.text_memo import RecentMemo

T = TypeVar("T")

log = logging.getLogger(__name__)

SIDE_BUDGET = 6  # spec: docs/rules/search.md §9
TRIGGERS_LIST = "engine::registered-triggers::list"
TRIGGERS_TIMEOUT_S = 5.0  # spec: docs/rules/search.md §15


@dataclass(frozen=True)
class SideResult:
    """One side lane's rows (None = section omitted) and whether the judge produced them."""

    rows: list[dict[str, Any]] | None
    judged: bool = False


# -- skills --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillEntry:
    id: str
    title: str
    description: str

    @property
    def document(self) -> str:
        """`"{title}: {description}"`, at most 300 bytes."""
        return side_document(f"{self.title}: {self.description}")

    def row(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "description": slim_description(self.description)}


def visible_skills(settings: Any, installed: frozenset[str] | None,
                   row_facts: Any = None) -> list[SkillEntry]:
    """Skill candidates: the visible set (with the given installed set), minus documents that
    disable model invocation. `row_facts` is the Directory's `RowFactsCache` (None: parse
    every file). Every visible file is `stat`ed on every call; while the view and every
    file's signature are those of a remembered call, its entries are reused (`VisibleEntries`)."""
    from ..content.skills import build_view, row_facts_in_state

    view = build_view(settings, installed, row_facts)
    return ENTRIES.entries(view, row_facts_in_state)


MAX_ENTRY_SETS = 16  # chosen: one per view in use (`skills_view.MAX_VIEWS`)

FileSignature = tuple[int, int, int, int, int]


class VisibleEntries:
    """The skill entries of a view, reused while nothing they were read from can have changed:
    the same (remembered, so unchanged) view, and every visible file `stat`ed again with the
    signature (`stat_cache.signature`: device, inode, size, mtime, ctime) it had. The rule of
    `stat_cache`: a set is remembered only when every file was readable and settled (mtime
    and ctime at least `stat_cache.settle_ns` before `clock()`), so an equal signature proves
    the file unchanged. At most `MAX_ENTRY_SETS` views, oldest first out. Thread-safe; `clock`
    (nanoseconds since the epoch) is injectable so tests decide what is settled."""

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self.clock = clock
        self._sets: dict[int, tuple[weakref.ref[Any], tuple[str, ...], list[FileSignature | None],
                                    list[SkillEntry]]] = {}
        """id(view) → (the view, held weakly: a view `skills_view` no longer keeps takes its set
        with it; the paths, their signatures, the entries)."""
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._sets.clear()

    def entries(self, view: Any, facts_in_state: Callable[[Any, Any, Any], Any]) -> list[SkillEntry]:
        """The entries of `view`; `facts_in_state(view, file, st)` reads a file's row facts in
        the state `st` (`skills.row_facts_in_state`)."""
        from ..content.stat_cache import settled, signature

        held = self._sets.get(id(view))
        if held is not None and held[0]() is not view:
            held = None
        paths = held[1] if held is not None else tuple(str(file.path) for file in view.files)
        states: list[os.stat_result | None] = []
        signatures: list[FileSignature | None] = []
        for path in paths:
            try:
                st = os.stat(path)
            except OSError:
                states.append(None)
                signatures.append(None)
                continue
            states.append(st)
            signatures.append(signature(st))
        if held is not None and held[2] == signatures:
            return list(held[3])
        entries = []
        keep = True
        now = self.clock()
        for file, st in zip(view.files, states):
            display = view.display_id(file.id)
            facts = facts_in_state(view, file, st)
            if facts is None:  # unreadable: ranked by its id, as its list row shows it
                keep = False
                entries.append(_entry(display, display, ""))
                continue
            if st is None or not settled(st, now):
                keep = False
            if not facts.disable_model_invocation:
                entries.append(_entry(display, facts.title or display, facts.description))
        _ENTRIES.tick()  # one generation of the entry and document memos per entries read
        _DOCUMENTS.tick()
        if keep:
            key = id(view)

            def forget(ref: weakref.ref[Any]) -> None:
                """The view is gone: so is its set. No lock (a collection may run this while
                the lock is held); a set that replaced it meanwhile may go too: a miss."""
                found = self._sets.get(key)
                if found is not None and found[0] is ref:
                    self._sets.pop(key, None)

            with self._lock:
                while len(self._sets) >= MAX_ENTRY_SETS:
                    del self._sets[next(iter(self._sets))]
                self._sets[key] = (weakref.ref(view, forget), paths, signatures, entries)
        return list(entries)


ENTRIES = VisibleEntries()
"""The process-wide set `visible_skills` reads (views are process-wide too: `skills_view`)."""


SCANS_PER_GENERATION = 64  # chosen: a turn costs one read's misses; stale entries go within 128 reads
"""Reads of a view's entries (`VisibleEntries` building them, not reusing them) between two
generations of the entry and document memos (`RecentMemo`)."""

_ENTRIES = RecentMemo(lambda fields: SkillEntry(*fields), SCANS_PER_GENERATION)


def _entry(skill_id: str, title: str, description: str) -> SkillEntry:
    """One `SkillEntry` per distinct content while it stays visible, so the ranking documents
    built from unchanged entries are found by identity (`skill_document`)."""
    return _ENTRIES[(skill_id, title, description)]


INLINE_SCAN_S = 0.001  # chosen: a scan this short costs less than a thread hop
"""Skills scans that have been taking less than this run on the event loop (see `ScanCost`)."""
SCAN_SMOOTHING = 0.25  # chosen: a moving average that forgets in a few scans


class ScanCost:
    """How long the skills scans of one Directory take (`directory.service(ScanCost)`): an
    exponential moving average, `seconds ← 0.75·seconds + 0.25·last`.

    A scan of small roots takes a few hundred microseconds, while handing it to a worker thread
    and back costs 0.1–0.5 ms of scheduling on a 2-core host, most of a lexical search call
    (median 1.8 → 0.9 ms inline). While the average stays under `INLINE_SCAN_S` (1 ms) and no
    other search call is in flight, the scan runs inline; a slower one (large roots, a slow
    disk), or any scan while calls overlap, runs in a thread. Inline scans under load stalled the
    loop for every other caller (soak, 50 callers: search p99 1.2 → 3.0 s). The average keeps one
    slow scan (a GC pause) from sending the next ones to the thread. `clock` (seconds, default
    `time.perf_counter`) is injectable so tests never depend on how long a sleep takes."""

    def __init__(self, directory: object | None = None, *,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.seconds: float | None = None
        self.clock = clock

    @property
    def inline(self) -> bool:
        return self.seconds is not None and self.seconds < INLINE_SCAN_S

    def timed(self, scan: Callable[[], T]) -> T:
        started = self.clock()
        try:
            return scan()
        finally:
            last = self.clock() - started
            self.seconds = last if self.seconds is None else \
                (1 - SCAN_SMOOTHING) * self.seconds + SCAN_SMOOTHING * last


async def load_skills(call: SearchCall) -> list[SkillEntry]:
    """The visible skills of this call. Under `filter_unregistered` the installed workers are
    the cached `compose::status` set **plus** the live catalog's namespaces; unknown ⇒
    unfiltered. The scan runs inline or in a worker thread as `ScanCost` decides."""
    from ..content.skills import RowFactsCache
    from ..content.visibility import InstalledWorkers

    installed = None
    if call.settings.filter_unregistered:
        installed = await call.ctx.directory.service(InstalledWorkers).get(call.ctx)
        if installed is not None:
            installed = frozenset(installed | call.corpus.raw_namespaces)
    row_facts = call.ctx.directory.service(RowFactsCache)
    cost = call.ctx.directory.service(ScanCost)
    scan = functools.partial(cost.timed, functools.partial(
        visible_skills, call.settings, installed, row_facts))
    if cost.inline and not call.concurrent:
        return scan()
    return await anyio.to_thread.run_sync(scan)


def _skill_document(entry: SkillEntry) -> Document:
    searchable = searchable_text(entry.id, entry.document, ())
    return Document(entry.id, searchable, bm25_document(entry.id, searchable))


_DOCUMENTS = RecentMemo(_skill_document, SCANS_PER_GENERATION)
skill_document: Callable[[SkillEntry], Document] = _DOCUMENTS.__getitem__
"""The ranking document of one skill entry; a pure function of the (frozen) entry, so
remembered (`RecentMemo`: while the entry stays visible): every search call builds the
documents of every visible skill."""


def skill_documents(entries: Sequence[SkillEntry], cache: DocumentSetCache) -> DocumentSet:
    return cache.of_entries(entries, skill_document)


async def fetch_skills(call: SearchCall) -> list[SkillEntry] | None:
    """The skill candidates of this call; None when the scan failed (section omitted)."""
    try:
        return await load_skills(call)
    except Exception as exc:  # noqa: BLE001 - the section is optional
        log.warning("skills side lane failed: %s", exc)
        return None


async def rank_skills(call: SearchCall, entries: list[SkillEntry] | None,
                      queries: Sequence[Query]) -> SideResult:
    if entries is None:
        return SideResult(None)
    documents = skill_documents(entries, call.ctx.directory.service(DocumentSetCache))
    candidates = {e.id: skill_candidate(e.id, e.document) for e in entries} if call.judge_active else {}
    return await _side_result(call, "skills", entries, documents, queries, candidates)


# -- triggers ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TriggerEntry:
    id: str
    trigger_type: str
    function_id: str
    worker_name: str | None
    config: Any

    @property
    def document(self) -> str:
        """`"{trigger_type} trigger runs {function_id}"` plus `" configured by k1, k2"` (config
        keys sorted; values never ranked), at most 300 bytes."""
        text = f"{self.trigger_type} trigger runs {self.function_id}"
        if isinstance(self.config, Mapping) and self.config:
            text += " configured by " + ", ".join(sorted(str(k) for k in self.config))
        return side_document(text)

    def row(self) -> dict[str, Any]:
        row: dict[str, Any] = {"id": self.id, "trigger_type": self.trigger_type,
                               "function_id": self.function_id}
        if self.worker_name is not None:
            row["worker_name"] = self.worker_name
        row["config"] = self.config
        return row


def parse_triggers(reply: Any) -> list[TriggerEntry]:
    """Rows of `registered_triggers[]`: malformed rows (string `id`, `trigger_type`,
    `function_id` required) and ephemeral console bindings (`console:*` types, `iii::*`
    functions) skipped."""
    rows = reply.get("registered_triggers") if isinstance(reply, Mapping) else None
    if not isinstance(rows, list):
        raise ValueError("engine::registered-triggers::list returned no registered_triggers")
    entries = []
    for row in rows:
        if not isinstance(row, Mapping):
            continue
        trigger_id, trigger_type, function_id = row.get("id"), row.get("trigger_type"), row.get("function_id")
        if not all(isinstance(v, str) for v in (trigger_id, trigger_type, function_id)):
            continue
        if trigger_type.startswith("console:") or function_id.startswith("iii::"):
            continue
        worker = row.get("worker_name")
        entries.append(TriggerEntry(trigger_id, trigger_type, function_id,
                                    worker if isinstance(worker, str) else None,
                                    row.get("config", {})))
    return entries


def trigger_documents(entries: Sequence[TriggerEntry], cache: DocumentSetCache) -> DocumentSet:
    return cache.get(tuple(Document(e.id, e.document, e.document) for e in entries))


async def fetch_triggers(call: SearchCall) -> list[TriggerEntry] | None:
    """The registered triggers (first row per id); None when the listing failed."""
    try:
        reply = await call.ctx.call(TRIGGERS_LIST, {}, timeout=TRIGGERS_TIMEOUT_S)
        entries = parse_triggers(reply)
    except Exception as exc:  # noqa: BLE001 - the section is omitted on failure
        log.debug("registered triggers unavailable: %s", exc)
        return None
    by_id: dict[str, TriggerEntry] = {}
    for entry in entries:
        by_id.setdefault(entry.id, entry)
    return list(by_id.values())


async def rank_triggers(call: SearchCall, entries: list[TriggerEntry] | None,
                        queries: Sequence[Query]) -> SideResult:
    if entries is None:
        return SideResult(None)
    documents = trigger_documents(entries, call.ctx.directory.service(DocumentSetCache))
    candidates = {e.id: trigger_candidate(e.id, e.document) for e in entries} if call.judge_active else {}
    return await _side_result(call, "triggers", entries, documents, queries, candidates)


# -- shared --------------------------------------------------------------------------------------


async def _side_result(call: SearchCall, kind: str, entries: Sequence[SkillEntry | TriggerEntry],
                       documents: DocumentSet, queries: Sequence[Query],
                       candidates: dict[str, Candidate]) -> SideResult:
    """Rank one side lane per query, merge the lanes round-robin up to `SIDE_BUDGET`, and
    answer the entries' rows (None when nothing survives)."""
    lanes, judged = await _rank_side(call, kind, documents, queries, candidates)
    ids = round_robin([[doc_id for doc_id, _ in lane] for lane in lanes], SIDE_BUDGET)
    wanted = set(ids)
    by_id: dict[str, SkillEntry | TriggerEntry] = {}  # the chosen ids' entries (the last one of a repeated id)
    for entry in entries:
        if entry.id in wanted:
            by_id[entry.id] = entry
    rows = [by_id[i].row() for i in ids if i in by_id]
    return SideResult(rows or None, judged)


async def _rank_side(call: SearchCall, kind: str, documents: DocumentSet,
                     queries: Sequence[Query],
                     candidates: dict[str, Candidate]) -> tuple[list[Ranking], bool]:
    if not queries or not len(documents):
        return [], False
    lanes = await call.judged(kind, documents, queries, candidates, SIDE_DEPTH, side=True)  # type: ignore[arg-type]
    if lanes is not None:
        return lanes, True
    local, _ = await call.local_rank(documents, queries)
    return local, False
