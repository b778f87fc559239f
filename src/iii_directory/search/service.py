"""`SearchService`: the search state of one Directory and the whole request → response pipeline
(docs/rules/search.md §1–§11).

State: the active corpus (boot snapshot, refreshed on `engine::functions-available`), the dense
lane (model, vector cache, document index), the optional reranker, the judge's pause, and the
session memory. One async lock serialises catalog reloads; a new fingerprint resets session
delivery and requests a dense index for it.

Pipeline of one call: validate → keep 18 → a heavy call's turn (`slots.py`) → compact, drop
intrinsic → each capability's needs beside it (`needs.expand_needs`) → embed every query in one
batch (∥ fetch the side-lane corpora) → batches of six capabilities, concurrently (installed lanes
graded `high` / `low` / none, `confidence.graded_lanes` ∥ registry lane) ∥ side lanes → selection
(a capability's own lane after its needs' lanes from round 1 on) → `low` padding to 12 from what
the lanes and tails hold beyond it (`select.padding`) → `high` first → session memory → grouping
→ guidance → response with `search_mode` and `latency_ms` (`response.respond`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import nullcontext
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from ..timeslice import TimeSlice
from .ranking.answerability import Screening, informative_terms
from .call import SearchCall
from .catalog import CatalogFetchError, fetch_corpus
from .ranking.confidence import (HIGH, LOW, Confidence, fallback_lanes, graded_lanes,
                                 id_confidence, static_fallback_lanes,
                                 static_fallback_positions)
from .ranking.corpus import Corpus
from ..encoder.dense_lane import DenseLane, DenseUnavailable, embed_views
from .ranking.fusion import Request, learned_lane
from .judge import FUNCTION_DEPTH, JUDGE_EVALUATE, Candidate, Judge, JudgeFailure, LaneAsk, function_candidate
from .ranking.lanes import (ACTION_BONUS, CATALOG, Ranking, action_agreement, answered_tail,
                            bm25_tail, exact_lane, ranking_tail, weighted_rrf)
from .memory import SessionMemory
from .ranking.needs import answered_needs, expand_needs, need_action_bonus, need_texts, regroup
from .ranking.query import Query
from .sliced_queries import make_queries, screen_queries
from .query_vectors import begin_embedding
from .registry_lane import search_registry
from .request_limits import validate_capabilities
from .response import BatchResult, respond
from .rerank import RERANK_TIMEOUT_S, Reranker, apply_scores, load_reranker, rerank_head
from .slots import SearchSlots, configured_slots
from .ranking.select import BATCH_SIZE, batches, padding, select_batch
from .side_lanes import SideResult, fetch_skills, fetch_triggers, rank_skills, rank_triggers
from .static_lane import StaticLane
from .ranking.text_memo import BUDGET as MEMO_BUDGET, MIB
from .ranking.vocabulary import request_actions

if TYPE_CHECKING:
    from ..config import Settings
    from ..context import Context
    from ..runtime import Runtime as Directory

log = logging.getLogger(__name__)



class SearchService:
    """Per-Directory search state (`directory.service(SearchService)`)."""

    def __init__(self, directory: Directory) -> None:
        self.directory = directory
        self.corpus = Corpus.empty()
        self.loaded = False
        self.memory = SessionMemory()
        self.judge = Judge()
        self.dense = DenseLane(busy=self._busy)
        self.static = StaticLane()
        self.reranker: Reranker | None = None
        self._reload_lock = anyio.Lock()
        self._model_started = False
        self._booting: anyio.Event | None = None
        self._candidates: tuple[str, dict[str, Candidate]] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.in_flight = 0
        """Search calls running now (waiting for a slot included)."""
        self.slots = SearchSlots(configured_slots())
        MEMO_BUDGET.set_limit(directory.settings.function_search_text_cache_mib * MIB)
        directory.settings_listeners.append(self._on_settings)

    def _busy(self) -> bool:
        """More than one call in flight in this worker: background embedding yields more."""
        return self.directory.calls_in_flight > 1

    def _on_settings(self, old: Settings, new: Settings) -> None:
        """A switch to a model-backed mode starts the model (it loads only when needed); a new
        text-memo budget applies at once."""
        MEMO_BUDGET.set_limit(new.function_search_text_cache_mib * MIB)
        if new.function_search_mode != "lexical" and self.loaded:
            try:
                self.start_model()
            except RuntimeError:  # no running event loop: the next search loads it
                pass

    # -- background work -------------------------------------------------------------------

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run `coroutine` in the background of the current event loop (kept until done)."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        """Cancel background work (model load, index builds) and wait for it to unwind."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.static.stop()
        await self.dense.close()

    async def settle(self) -> None:
        """Wait for background work (model load, index builds) to finish."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # -- catalog ---------------------------------------------------------------------------

    async def refresh(self) -> bool:
        """Fetch the catalog and activate it; True when the fingerprint changed. Raises
        CatalogFetchError (the previous catalog stays active)."""
        async with self._reload_lock:
            corpus = await fetch_corpus(self.directory.engine.call)
            self.loaded = True
            return self.activate(corpus)

    def activate(self, corpus: Corpus) -> bool:
        """Swap in `corpus` when its fingerprint differs; then reset session delivery and
        request a dense index. The raw id set (judge detection) is always updated."""
        if corpus.fingerprint == self.corpus.fingerprint and self.loaded:
            self.corpus.relist(corpus.raw_ids)
            return False
        self.corpus = corpus
        self.loaded = True
        self.memory.reset_delivery()
        if self.dense.state in ("loading", "ready"):
            self._request_index(corpus)
        log.info("search catalog active: %d functions (%s)", len(corpus), corpus.fingerprint[:12])
        return True

    def _request_index(self, corpus: Corpus) -> None:
        ids, texts = corpus.index_inputs()
        self.dense.requested = corpus.fingerprint
        try:
            self.spawn(self.dense.rebuild_if_current(corpus.fingerprint, ids, texts))
        except RuntimeError:  # no running loop (activation outside async code)
            pass

    async def boot(self) -> None:
        """The boot snapshot; a failure is logged and leaves an empty catalog. Single flight:
        the calls that arrive while it runs (a worker serves from its registration on, before
        its start hook's snapshot is done) await it instead of each fetching the catalog again
        behind the reload lock, where many callers of a cold worker would queue one behind
        another."""
        if self._booting is not None:
            await self._booting.wait()
            return
        booting = self._booting = anyio.Event()
        try:
            try:
                await self.refresh()
            except CatalogFetchError as exc:
                self.loaded = True
                log.warning("search catalog boot snapshot failed; starting empty: %s", exc)
            await self.static.start(self.directory.settings.function_search_mode)
        finally:
            self._booting = None
            booting.set()

    async def load_model(self) -> bool:
        """Load the embedding model (and the optional reranker), then index the active corpus.
        A `lexical` configuration never loads it; switching to `hybrid` or `judge` does."""
        self._model_started = True
        settings = self.directory.settings
        if settings.function_search_reranker_path and self.reranker is None:
            self.reranker = await anyio.to_thread.run_sync(
                load_reranker, settings.function_search_reranker_path)
        if not await self.dense.load(settings.function_search_model_path):
            return False
        if not self.loaded:  # the boot snapshot is still running; its activation indexes it
            return True
        return await self.dense.rebuild(self.corpus.fingerprint, *self.corpus.index_inputs())

    def use_encoder(self, encoder: Any, *, index_factory: Any = None, cache_dir: Any = None,
                    persist: bool = True) -> None:
        """Serve the dense lane with an already-built encoder (tests, benchmarks) instead of
        loading the configured model."""
        self.dense = DenseLane(cache_dir, persist=persist, index_factory=index_factory,
                               busy=self._busy)
        self.dense.install(encoder)
        self._model_started = True
        if self.loaded:
            self._request_index(self.corpus)

    def start_model(self) -> None:
        """Load the model in the background, once, when the configured mode can use it."""
        if not self._model_started and self.directory.settings.function_search_mode != "lexical":
            self.spawn(self.load_model())
            self._model_started = True

    async def ensure_ready(self, ctx: Context, *, views: bool = False) -> None:
        """Lazily take the catalog when no boot snapshot ran (standalone `call`, the bench). In
        standalone mode a non-lexical search waits for the model and the index once, since the
        catalog never changes there. With `views` (the bench) it also waits for the fusion's
        extra views; a one-shot `call` uses them only when the vector cache already holds them,
        rather than embedding twice as many texts before its first answer (minutes on an
        emulated or small ARM host)."""
        if not self.loaded:
            await self.boot()
        if ctx.standalone and ctx.settings.function_search_mode != "lexical":
            if not self._model_started:
                await self.load_model()
            else:
                await self.dense.load_done_ready()
            if self.dense.ready and not self.dense.has_index(self.corpus.fingerprint):
                await self.dense.rebuild(self.corpus.fingerprint, *self.corpus.index_inputs())
            if views and self.dense.ready:  # the fusion's extra views (search/ranking/views.py)
                await embed_views(self.corpus.views, self.dense.pipeline)

    def function_candidates(self, corpus: Corpus) -> dict[str, Candidate]:
        if self._candidates is None or self._candidates[0] != corpus.fingerprint:
            self._candidates = (corpus.fingerprint, {
                tool.name: function_candidate(tool.name, tool.description, tool.parameter_names)
                for tool in corpus.tools
            })
        return self._candidates[1]

    # -- the call --------------------------------------------------------------------------

    async def search(self, ctx: Context, capabilities: Sequence[str]) -> dict[str, Any]:
        self.in_flight += 1
        try:
            return await self._search(ctx, capabilities, concurrent=self.in_flight > 1)
        finally:
            self.in_flight -= 1

    async def _search(self, ctx: Context, capabilities: Sequence[str], *,
                      concurrent: bool) -> dict[str, Any]:
        kept, dropped = validate_capabilities(capabilities)
        started = time.perf_counter()
        await self.ensure_ready(ctx)
        # a heavy call (search/slots.py) waits for its turn before any of its work
        async with self.slots.heavy(kept) as ticket:
            return await self._admitted(ctx, kept, dropped, started, concurrent, ticket.shed)

    async def _admitted(self, ctx: Context, kept: list[str], dropped: list[str], started: float,
                        concurrent: bool, shed: bool) -> dict[str, Any]:
        """The call's work once admitted: queries, then a search slot for the lanes."""
        settings = ctx.settings
        corpus = self.corpus
        tick = TimeSlice()
        per_capability, owners = expand_needs(await make_queries(kept, tick))
        per_capability, screened = await screen_queries(per_capability, corpus.documents, tick)
        call = SearchCall(
            ctx=ctx, settings=settings, corpus=corpus, dense=self.dense, judge=self.judge,
            judge_active=(settings.function_search_mode == "judge" and not self.judge.paused()
                          and JUDGE_EVALUATE in corpus.raw_ids),
            deadline=self.judge.clock() + settings.function_search_judge_timeout_ms / 1000.0,
            concurrent=concurrent, screened=screened,
            needs=need_texts(per_capability, owners), shed=shed,
        )
        # A judge-backed call mostly awaits the judge worker; it takes no slot (search/slots.py).
        async with (nullcontext() if call.judge_active else self.slots.hold()):
            searched = [q for q in per_capability if q is not None]
            corpora: dict[str, Any] = {}
            # the capabilities go to the encoder first; the work that reads no vector (the
            # side-lane corpora, the lexical lanes) runs while they are encoded
            embedding = await begin_embedding(call, self.dense, per_capability)

            async def fetch(name: str, fetcher: Any) -> None:
                corpora[name] = await fetcher(call)

            try:
                async with anyio.create_task_group() as group:
                    if searched:
                        group.start_soon(fetch, "skills", fetch_skills)
                        group.start_soon(fetch, "triggers", fetch_triggers)
                    await call.lexical_ahead(per_capability)
                    corpora["queries"] = await embedding.finish(call)
            finally:
                embedding.leave()
            grouped = regroup(corpora["queries"], owners, len(kept))  # each with its needs
            batch_queries = [[q for needs in batch for q in needs if q is not None]
                             for batch in batches(grouped, BATCH_SIZE)]
            side_queries = [needs[0] for needs in grouped if needs[0] is not None]

            results: list[BatchResult] = [BatchResult() for _ in batch_queries]
            side: dict[str, SideResult] = {}

            async def run_batch(position: int, queries: list[Query]) -> None:
                results[position] = await self._batch(call, queries)

            async def run_side(name: str, ranker: Any) -> None:
                side[name] = await ranker(call, corpora.get(name), side_queries)

            # a side lane with no entries answers at once, so it runs here, not in a task;
            # a task group is opened only for work that may wait (a second batch, a side
            # lane's ad-hoc vectors or judge)
            rankers = {"skills": rank_skills, "triggers": rank_triggers} if side_queries else {}
            spawned = [name for name in rankers if corpora.get(name)]
            for name, ranker in rankers.items():
                if name not in spawned:
                    await run_side(name, ranker)
            if len(batch_queries) > 1 or spawned:
                async with anyio.create_task_group() as group:
                    for position, queries in enumerate(batch_queries[1:], 1):
                        group.start_soon(run_batch, position, queries)
                    for name in spawned:
                        group.start_soon(run_side, name, rankers[name])
                    if batch_queries:
                        await run_batch(0, batch_queries[0])
            elif batch_queries:
                await run_batch(0, batch_queries[0])

            return self._respond(call, results, side, dropped, started)

    async def _batch(self, call: SearchCall, queries: list[Query]) -> BatchResult:
        if not queries:
            return BatchResult()
        result = BatchResult()

        async def installed() -> None:
            lanes, tier, tails, learned, levels = await self._installed_lanes(call, queries)
            # a lane's recall tail in its request's verb order, as the lane itself
            describe = self._describe(call)
            ordered = [action_agreement(tail, request_actions(query.terms), describe)
                       for query, tail in zip(queries, tails)]
            selection = select_batch(lanes, judged=tier == "judge", tails=ordered,
                                     learned=learned,
                                     needs=[q.text in call.needs for q in queries])
            fill = [] if tier == "judge" else padding(selection, lanes, ordered)
            result.selection = selection + fill
            result.tier = tier
            result.levels = id_confidence(lanes, tails, levels)
            # padding, and the kept tail of a need whose own lane was emptied (no level), is low
            result.levels.update((doc_id, LOW) for doc_id in result.selection
                                 if doc_id in fill or doc_id not in result.levels)
            result.low_only = [q.text for q, lane, level in zip(queries, lanes, levels)
                               if lane and level == LOW]

        async def registry() -> None:
            result.installables = await search_registry(call, queries)

        if not call.settings.registry_search:  # the registry lane is off: nothing to wait on
            result.installables = []
            await installed()
            return result
        async with anyio.create_task_group() as group:  # installed lanes in this task
            group.start_soon(registry)
            await installed()
        return result

    # -- installed lanes -------------------------------------------------------------------

    def _dense_rankings(self, call: SearchCall, queries: Sequence[Query]) -> list[Ranking | None] | None:
        """Index rankings for the embedded queries; None when the index cannot answer."""
        embedded = [q for q in queries if q.vector is not None]
        if not embedded:
            return None
        try:
            rankings = iter(self.dense.rank(call.corpus.fingerprint, call.query_vectors(embedded)))
        except DenseUnavailable:
            return None
        return [next(rankings) if q.vector is not None else None for q in queries]

    async def _installed_lanes(self, call: SearchCall,
                               queries: list[Query]
                               ) -> tuple[list[Ranking], str, list[Ranking], list[bool],
                                          list[Confidence | None]]:
        """The installed-catalog lanes of one batch, the tier that produced them, their recall
        tails, which lanes are learned and each lane's confidence (`confidence.grade`; a judged
        lane and an exact id are `high`: the judge keeps or drops what it was shown). In hybrid, a lane that admits its dense ranking (or
        has no lexical ranking) is the learned fusion (`fusion.learned_lane`), or what a
        configured reranker made of it; any other lane is its lexical ranking. Lanes that are not
        learned, and every need's lane (`call.needs`: a need is one verb phrase, and its verb is
        what tells the siblings of its service apart), are re-sorted by action agreement. Then one graded decision per capability
        (`confidence.graded_lanes`; in hybrid it also reads admission and corroboration)
        empties the certainly unservable lanes; a graded lane's tail fills the budget it leaves: the dense
        tail (`lanes.answered_tail`) of a learned lane, the learned order (`lanes.ranking_tail`)
        of a lexical lane with a dense ranking, the informative BM25 hits (`lanes.bm25_tail`) of
        a lexical-mode lane; the static lane's tails when it serves."""
        documents = call.corpus.documents
        tick = TimeSlice()
        dense = self._dense_rankings(call, queries) if call.local_mode == "hybrid" else None
        if call.judge_active and not self.judge.paused():
            judged = await self._judge_lanes(call, queries, dense)
            if judged is not None:
                return judged, "judge", [], [], [HIGH] * len(judged)
        await tick.pause()
        pairs: list[tuple[Ranking, int]] = []
        for query in queries:
            pairs.append(call.lexical_lane(query))
            await tick.pause()
        lexical = [lane for lane, _ in pairs]
        exact = [exact_lane(q.text, documents) for q in queries]
        if dense is None:
            lexical, static_tails = await self.static.fuse_lanes(call, queries, pairs)
            lexical, fallback = fallback_lanes(documents, queries, lexical, exact)
            if static_tails:  # the static lane served: its ranking fills what is still empty
                empty = static_fallback_positions(queries, lexical, exact)
                ranked = await self.static.rankings(
                    call.corpus, [queries[i].dense_text for i in empty],
                    call.settings.function_search_mode) if empty else None
                lexical, fallback = static_fallback_lanes(lexical, fallback, empty, ranked)
            lanes = [self._agree(call, q, lane) for q, lane in zip(queries, lexical)]
            lanes, levels = await self._answerable(call, queries, lanes, None, None, tick)
            levels = [LOW if low and level else level for low, level in zip(fallback, levels)]
            kept = answered_needs([q.text for q in queries], [bool(lane) for lane in lanes],
                                  call.needs)
            if static_tails:
                tails = [tail if lane or keep else []
                         for tail, lane, keep in zip(static_tails, lanes, kept)]
            else:
                tails = [bm25_tail(lane, documents, informative_terms(q.text, q.terms), keep)
                         if e is None else []
                         for q, lane, e, keep in zip(queries, lanes, exact, kept)]
            levels = [HIGH if e is not None else level for e, level in zip(exact, levels)]
            return ([e if e is not None else lane for e, lane in zip(exact, lanes)], "lexical",
                    tails, [], levels)
        lanes: list[Ranking] = []
        learned: list[bool] = []
        fills: list[Ranking | None] = []
        admitted = [None if d is None else CATALOG.admit(d, lex) for lex, d in zip(lexical, dense)]
        for query, lex, d, admits in zip(queries, lexical, dense, admitted):
            fused = None if d is None else learned_lane(
                Request.of(query.terms), documents, lex, d, self._describe(call),
                call.view_cosines(query), call.second_cosines(query))
            if fused is not None and (not lex or admits):
                lanes.append(fused)
                fills.append(None)
            else:  # no dense ranking, or one that only corroborates the lexical lane
                lanes.append(lex)
                fills.append(fused)
            learned.append(fills[-1] is None and fused is not None)
            await tick.pause()
        if self.reranker is not None:
            ranked = await self._rerank(call, queries, lexical, dense, admitted, lanes)
            learned = [was and new is old for was, new, old in zip(learned, ranked, lanes)]
            lanes = ranked
        lanes = [lane if was_learned and query.text not in call.needs
                 else self._agree(call, query, lane,
                                  need_action_bonus(query.text, call.needs, ACTION_BONUS))
                 for query, lane, was_learned in zip(queries, lanes, learned)]
        lanes, levels = await self._answerable(call, queries, lanes, dense, pairs, tick, admitted)
        kept = answered_needs([q.text for q in queries], [bool(lane) for lane in lanes],
                              call.needs)
        tails = [[] if d is None or e is not None
                 else answered_tail(lane, d, keep) if fill is None
                 else ranking_tail(lane, fill, keep)
                 for lane, d, e, fill, keep in zip(lanes, dense, exact, fills, kept)]
        learned = [was_learned and e is None for was_learned, e in zip(learned, exact)]
        lanes = [e if e is not None else lane for e, lane in zip(exact, lanes)]
        levels = [HIGH if e is not None else level for e, level in zip(exact, levels)]
        return lanes, "hybrid", tails, learned, levels

    async def _answerable(self, call: SearchCall, queries: list[Query], lanes: list[Ranking],
                          dense: list[Ranking | None] | None,
                          pairs: list[tuple[Ranking, int]] | None,
                          tick: TimeSlice,
                          admitted: list[bool | None] | None = None
                          ) -> tuple[list[Ranking], list[Confidence | None]]:
        """`confidence.graded_lanes`, one capability at a time (each decision is the
        capability's own), giving the loop way between them as `tick` says; the call's
        screenings and the lanes' admissions (hybrid) are handed over, not computed again."""
        documents, describe = call.corpus.documents, self._describe(call)
        out: list[Ranking] = []
        levels: list[Confidence | None] = []
        for position, (query, lane) in enumerate(zip(queries, lanes)):
            screened: Screening | None = call.screened.get(query.text)
            ((graded, level),) = graded_lanes(
                [query], documents, [lane], None if dense is None else [dense[position]],
                describe, None if pairs is None else [pairs[position]], [screened],
                None if admitted is None else [admitted[position]], [call.evidence_of(query)])
            out.append(graded)
            levels.append(level)
            await tick.pause()
        return out, levels

    @staticmethod
    def _describe(call: SearchCall) -> Callable[[str], str]:
        """A function id's slim description in the call's corpus ("" when unknown)."""
        descriptions = call.corpus.descriptions
        return lambda function_id: descriptions.get(function_id, "")

    @classmethod
    def _agree(cls, call: SearchCall, query: Query, lane: Ranking,
               bonus: float = ACTION_BONUS) -> Ranking:
        """`lane` re-sorted by action agreement with its request (`lanes.action_agreement`)."""
        return action_agreement(lane, request_actions(query.terms), cls._describe(call), bonus)

    async def _judge_lanes(self, call: SearchCall, queries: list[Query],
                           dense: list[Ranking | None] | None) -> list[Ranking] | None:
        candidates = self.function_candidates(call.corpus)
        documents = call.corpus.documents
        if call.settings.function_search_judge_question != "tournament":
            return await call.judged("functions", documents, queries, candidates, FUNCTION_DEPTH,
                                     side=False, dense=dense or [None] * len(queries))
        exact = [exact_lane(q.text, documents, 1.0) for q in queries]
        pool = [candidates[tool.name] for tool in call.corpus.tools]
        asks = [LaneAsk(q.text, [] if e is not None else pool) for q, e in zip(queries, exact)]
        try:
            lanes = await self.judge.tournament(call.ctx.call, asks, call.judge_settings,
                                                call.deadline)
        except JudgeFailure as failure:
            self.judge.record_failure(failure)
            log.info("judge tournament failed, falling back: %s", failure)
            return None
        return [e if e is not None else lane for e, lane in zip(exact, lanes)]

    async def _rerank(self, call: SearchCall, queries: list[Query], lexical: list[Ranking],
                      dense: list[Ranking | None], admitted: list[bool | None],
                      default: list[Ranking]) -> list[Ranking]:
        """Steps 5'–7' of the reranker stage for admitted lanes (`admitted`: each lane's
        `CATALOG.admit`, None without a dense ranking); one 3 s budget for all."""
        reranker = self.reranker
        assert reranker is not None
        documents = {tool.name: tool.dense_text for tool in call.corpus.tools}
        plans: dict[int, tuple[Ranking, list[str]]] = {}
        for i, (lex, d) in enumerate(zip(lexical, dense)):
            if d is not None and admitted[i]:
                retrieval = weighted_rrf(lex, d)
                plans[i] = (retrieval, rerank_head(retrieval))

        def score_all() -> dict[int, Any]:
            return {i: reranker.score(queries[i].text, [documents[x] for x in head])
                    for i, (_, head) in plans.items()}

        if not plans:
            return default
        try:
            with anyio.fail_after(RERANK_TIMEOUT_S):
                logits = await anyio.to_thread.run_sync(score_all, abandon_on_cancel=True)
        except Exception as exc:  # noqa: BLE001 - timed out or failed: default lanes
            log.info("reranker skipped: %s", exc)
            return default
        lanes = list(default)
        for i, (retrieval, head) in plans.items():
            reranked = apply_scores(retrieval, head, logits.get(i))
            if reranked is not None:
                lanes[i] = reranked
        return lanes

    # -- the response ----------------------------------------------------------------------

    def _respond(self, call: SearchCall, results: list[BatchResult], side: dict[str, SideResult],
                 dropped: list[str], started: float) -> dict[str, Any]:
        return respond(call, self.memory, results, side, dropped, started)
