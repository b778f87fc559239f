"""A call's capability vectors, handed to the encoder before the call's other work and awaited
only where they are needed (docs/search.md, "A first call's timeline").

`begin_embedding` decides which texts the call embeds — every searched capability that is not
an exact function id, with its action-and-object text (`second_query.py`) when the call embeds
at most `SECOND_QUERY_CAPABILITIES` of them — and hands them to the encoder pipeline: a lone
call's texts are on an encoder thread when it returns. The call then does every piece of work
that does not read a vector (fetching the side-lane corpora, the lexical lanes) while the
encoder runs, and `QueryEmbedding.finish` awaits the vectors and gives each query its rows of
`call.vectors`. Any failure, timeout or unready model leaves the queries without vectors (the
call answers from the lexical lanes).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio

from ..encoder.dense_lane import DenseLane
from ..encoder.encoding import Pending
from .ranking.lanes import exact_lane
from .ranking.query import Query
from .ranking.second_query import SECOND_QUERY_CAPABILITIES

if TYPE_CHECKING:
    from .call import SearchCall

log = logging.getLogger(__name__)


class QueryEmbedding:
    """The embedding of one call's queries, begun and not yet finished: the queries, the
    positions of the embedded ones (`wanted`), whether their second texts are embedded too, and
    the pipeline's `Pending` vectors (None when nothing is awaited: nothing to embed, or the
    vectors were decided at once)."""

    def __init__(self, queries: list[Query | None], wanted: list[int] | None = None,
                 second: bool = False, pending: Pending | None = None,
                 timeout_at: float = 0.0) -> None:
        self.queries = queries
        self.wanted = wanted or []
        self.second = second
        self.pending = pending
        self.timeout_at = timeout_at
        """`anyio.current_time()` past which the call stops waiting (`DenseLane.query_timeout_s`)."""

    async def finish(self, call: SearchCall) -> list[Query | None]:
        """The queries, each embedded one with its rows of `call.vectors` (set here); the
        queries as they were when the vectors could not be had."""
        if self.pending is not None:
            try:
                with anyio.fail_after(max(0.0, self.timeout_at - anyio.current_time())):
                    call.vectors = await self.pending.vectors()
            except Exception as exc:  # noqa: BLE001 - no vectors: lexical results
                log.warning("query embedding failed; serving lexical results: %s", exc)
                return self.queries
            finally:
                self.leave()
        if call.vectors is None or not self.wanted:
            return self.queries
        embedded = list(self.queries)
        count = len(self.wanted)
        for row, i in enumerate(self.wanted):
            embedded[i] = self.queries[i].with_vector(  # type: ignore[union-attr]
                row, count + row if self.second else None)
        return embedded

    def leave(self) -> None:
        """Stop waiting for the vectors (a call that fails before `finish`): texts nobody else
        waits on are dropped before they are encoded."""
        if self.pending is not None:
            self.pending.leave()


async def begin_embedding(call: SearchCall, dense: DenseLane,
                          queries: list[Query | None]) -> QueryEmbedding:
    """Hand the call's texts to the encoder (see the module docstring). A call that finds no
    index for its catalog: a lone one waits for an index about to be published
    (`DenseLane.wait_warm_index`); then, still without one, it serves the vectors the query
    cache already holds and queues the others for later calls (`DenseLane.ready_queries`)."""
    if (call.settings.function_search_mode == "lexical" or call.shed
            or dense.state not in ("ready", "loading")):
        return QueryEmbedding(queries)
    wanted = [i for i, q in enumerate(queries)
              if q is not None and exact_lane(q.text, call.corpus.documents) is None]
    if not wanted:
        return QueryEmbedding(queries)
    fingerprint = call.corpus.fingerprint
    if not call.concurrent and not call.ctx.standalone and not dense.has_index(fingerprint):
        documents = call.corpus.index_inputs()[1]
        if dense.index_expected_soon(fingerprint, documents):
            await dense.wait_warm_index(fingerprint, documents)
    if not dense.ready:
        return QueryEmbedding(queries)
    texts = [queries[i].dense_text for i in wanted]  # type: ignore[union-attr]
    second = len(wanted) <= SECOND_QUERY_CAPABILITIES  # then each one's `second_query` text
    if second:
        texts += [queries[i].second_text for i in wanted]  # type: ignore[union-attr]
    if not dense.has_index(fingerprint) and not call.ctx.standalone:
        # cold start: serve what is ready; unknown capabilities warm in the background
        call.vectors = dense.ready_queries(texts)
        return QueryEmbedding(queries, wanted, second)
    timeout_at = anyio.current_time() + dense.query_timeout_s
    try:
        pending = await dense.begin_queries(texts)
    except Exception as exc:  # noqa: BLE001 - no vectors: lexical results
        log.warning("query embedding failed; serving lexical results: %s", exc)
        return QueryEmbedding(queries)
    return QueryEmbedding(queries, wanted, second, pending, timeout_at)

