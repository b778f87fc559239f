"""What one `directory::search_functions` call shares across its batches and side lanes: the
settings snapshot, the active corpus, the query vectors (all capabilities embedded in one
batch), the dense lane, and the judge with its single deadline."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..log_throttle import ThrottledLog
from ..timeslice import TimeSlice
from .ranking.answerability import Evidence, catalog_stats, evidence_leads
from .ranking.corpus import Corpus, DocumentSet
from ..encoder.dense_lane import DenseLane, DenseUnavailable
from .judge import Candidate, Judge, JudgeFailure, JudgeSettings, Kind, LaneAsk
from .ranking.lanes import Ranking, exact_lane, lexical_lane
from .ranking.query import Query, local_lanes, shortlist
from .ranking.views import SecondCosines, ViewCosines

if TYPE_CHECKING:
    from ..config import Settings
    from ..context import Context
    from .ranking.answerability import Screening

log = logging.getLogger(__name__)
_skips = ThrottledLog(log)
"""Under churn (skills written every second) nearly every call skips the ad-hoc lane: one INFO
line per reason every 30 s, the rest at DEBUG."""

TIERS = ("lexical", "hybrid", "judge")


def reason(exc: BaseException) -> str:
    """The exception's message, or its type name when the message is empty (`TimeoutError()`
    from a deadline carries none), so a log line always says why."""
    return str(exc) or type(exc).__name__


def best_tier(tiers: Sequence[str | None]) -> str:
    """The highest tier reached (lexical < hybrid < judge); `lexical` when nothing ran."""
    reached = [TIERS.index(t) for t in tiers if t is not None]
    return TIERS[max(reached)] if reached else "lexical"


@dataclass
class SearchCall:
    ctx: Context
    settings: Settings
    corpus: Corpus
    dense: DenseLane
    judge: Judge
    judge_active: bool
    deadline: float
    vectors: Any = None
    """The query matrix (one row per embedded query), or None when nothing was embedded."""
    concurrent: bool = False
    """Other search calls were in flight when this one started (the loop is busy)."""
    screened: dict[str, Screening] = field(default_factory=dict)
    """Each searched capability's `answerability.screen` by its text, computed once."""
    needs: frozenset[str] = frozenset()
    """The texts of the needs searched beside their capabilities (`needs.expand_needs`)."""
    shed: bool = False
    """A heavy call that found no heavy token in time (`slots.HeavyTicket`): no capability is
    embedded, the call is answered from the lexical lane."""
    lexical: dict[tuple[str, ...], tuple[Ranking, int]] = field(default_factory=dict)
    """Each searched query's `lanes.lexical_lane` by its terms: computed while the encoder
    embeds the call's capabilities (`lexical_ahead`), read by the installed lanes."""
    evidence: dict[tuple[str, tuple[str, ...]], Evidence] = field(default_factory=dict)
    """Each searched query's `answerability.evidence_leads` over the call's corpus by its text
    and terms: computed beside its lexical lane (`lexical_ahead`), read by the graded
    decision."""

    def lexical_lane(self, query: Query) -> tuple[Ranking, int]:
        """`lanes.lexical_lane` of `query` over the call's corpus, computed once per terms (a
        fresh list each time: callers may reorder it)."""
        pair = self.lexical.get(query.terms)
        if pair is None:
            pair = self.lexical[query.terms] = lexical_lane(self.corpus.documents, query.terms)
        return list(pair[0]), pair[1]

    async def lexical_ahead(self, queries: Sequence[Query | None]) -> None:
        """The lexical lane and the lexical evidence (`answerability.evidence_leads`) of every
        searched query, giving the loop a turn once a time slice is spent: the work of the
        installed lanes and the graded decision that reads no vector, done while they are
        encoded. A judge-backed call skips it (the judge may answer without it)."""
        if self.judge_active:
            return
        tick = TimeSlice()
        documents = self.corpus.documents
        for query in queries:
            if query is not None:
                self.lexical_lane(query)
                key = (query.text, tuple(query.terms))
                if key not in self.evidence:
                    self.evidence[key] = evidence_leads(
                        query.terms, documents, catalog_stats(documents), query.text)
                await tick.pause()

    def evidence_of(self, query: Query) -> Evidence | None:
        """The query's `answerability.evidence_leads` when `lexical_ahead` computed it."""
        return self.evidence.get((query.text, tuple(query.terms)))

    @property
    def judge_settings(self) -> JudgeSettings:
        s = self.settings
        return JudgeSettings(s.function_search_judge_question,
                             s.function_search_judge_min_relevance,
                             s.function_search_judge_side_lane_min_relevance,
                             s.function_search_judge_choice_min_probability)

    @property
    def local_mode(self) -> str:
        """`hybrid` when the configured mode allows a model and queries were embedded."""
        if self.settings.function_search_mode == "lexical" or self.vectors is None:
            return "lexical"
        return "hybrid"

    def view_cosines(self, query: Query) -> ViewCosines | None:
        """The request's cosines to the catalog's extra views (`views.py`) for the learned
        fusion, or None while they are not all embedded (they are then queued) or the query was
        not embedded."""
        if self.vectors is None or query.vector is None:
            return None
        views = self.corpus.views.get(self.dense.pipeline)
        if views is None:
            return None
        vector = self.vectors[query.vector]
        return lambda ids: views.cosines(ids, vector)

    def second_cosines(self, query: Query) -> SecondCosines | None:
        """The cosines of the request's action-and-object embedding (`second_query.py`) to the
        catalog's indexed documents, for the learned fusion; None when it was not embedded."""
        fingerprint = self.corpus.fingerprint
        if self.vectors is None or query.second_vector is None \
                or not self.dense.has_index(fingerprint):
            return None
        vector = self.vectors[query.second_vector]
        return lambda ids: self.dense.cosines(fingerprint, vector, ids)

    def query_vectors(self, queries: Sequence[Query]) -> Any:
        rows = [q.vector for q in queries]
        return self.vectors[rows]

    async def adhoc_dense(self, documents: DocumentSet,
                          queries: Sequence[Query]) -> list[Ranking | None] | None:
        """Ad-hoc dense rankings of `documents` for the embedded queries (None entries for the
        others); None when the model is not usable for this call or the embedding failed."""
        if self.local_mode != "hybrid" or not len(documents):
            return None
        embedded = [q for q in queries if q.vector is not None]
        if not embedded:
            return None
        try:
            rankings = await self.dense.rank_adhoc(
                documents.ids, [d.searchable for d in documents.documents],
                self.query_vectors(embedded), wait=not self.concurrent)
        except (DenseUnavailable, TimeoutError) as exc:
            why = reason(exc)
            _skips.info(why, "ad-hoc dense ranking skipped: %s", why)
            return None
        except Exception as exc:  # noqa: BLE001 - a model failure must not fail the search
            log.warning("ad-hoc dense ranking failed: %s", reason(exc))
            return None
        by_query = iter(rankings)
        return [next(by_query) if q.vector is not None else None for q in queries]

    async def local_rank(self, documents: DocumentSet,
                         queries: Sequence[Query]) -> tuple[list[Ranking], str]:
        """Lanes of `documents` without the judge: hybrid where ad-hoc embeddings worked,
        lexical otherwise. Returns the lanes and the tier that produced them."""
        dense = await self.adhoc_dense(documents, queries)
        tick = TimeSlice()
        lanes: list[Ranking] = []
        for position, query in enumerate(queries):
            lanes += local_lanes(documents, [query], None if dense is None else [dense[position]])
            await tick.pause()
        return lanes, "hybrid" if dense is not None else "lexical"

    async def judged(self, kind: Kind, documents: DocumentSet, queries: Sequence[Query],
                     candidates: dict[str, Candidate], depth: int, *, side: bool,
                     dense: Sequence[Ranking | None] | None = None) -> list[Ranking] | None:
        """Judge each query over its depth-`depth` shortlist in one request; None (after
        recording the failure) when the judge failed, so the caller falls back locally.
        `dense` gives precomputed dense rankings (the catalog index); otherwise ad-hoc
        embeddings are used when the set is larger than the depth."""
        if not self.judge_active or self.judge.paused():
            return None
        if dense is None and len(documents) > depth:
            dense = await self.adhoc_dense(documents, queries)
        asks = []
        exact: dict[int, Ranking] = {}
        for position, query in enumerate(queries):
            hit = exact_lane(query.text, documents, 1.0)
            if hit is not None:
                exact[position] = hit
                asks.append(LaneAsk(query.text, []))
                continue
            ranking = dense[position] if dense is not None else None
            ids = shortlist(documents, query, depth, ranking)
            asks.append(LaneAsk(query.text, [candidates[i] for i in ids if i in candidates]))
        try:
            lanes = await self.judge.ask(self.ctx.call, kind, asks, self.judge_settings,
                                         self.deadline, side=side)
        except JudgeFailure as failure:
            self.judge.record_failure(failure)
            log.info("judge (%s) failed, falling back: %s", kind, failure)
            return None
        return [exact.get(position, lane) for position, lane in enumerate(lanes)]
