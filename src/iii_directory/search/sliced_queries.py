"""Capabilities made into queries and screened for a call, the event loop given a turn after each
(`timeslice.TimeSlice`): the asynchronous side of `query.make_query` and `answerability.screen`,
which stay synchronous in the ranking core."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..timeslice import TimeSlice
from .ranking.answerability import screen
from .ranking.corpus import DocumentSet
from .ranking.query import Query, make_query

if TYPE_CHECKING:
    from .ranking.answerability import Screening


async def make_queries(capabilities: Sequence[str], tick: TimeSlice) -> list[Query | None]:
    """Each capability's `make_query` (None when it is not searched: intrinsic or control-plane),
    giving the loop a turn (`tick`) after each one."""
    made: list[Query | None] = []
    for capability in capabilities:
        made.append(make_query(capability))
        await tick.pause()
    return made


async def screen_queries(queries: Sequence[Query | None], documents: DocumentSet, tick: TimeSlice,
                         ) -> tuple[list[Query | None], dict[str, Screening]]:
    """`answerability.screen` of each searched text, once per distinct text, giving the loop a
    turn after each; a refused query becomes None."""
    screened: dict[str, Screening] = {}
    for query in queries:
        if query is not None and query.text not in screened:
            screened[query.text] = screen(query.text, query.terms, documents)
            await tick.pause()
    return [None if q is None or screened[q.text].refused else q for q in queries], screened


async def prepare_queries(capabilities: Sequence[str], documents: DocumentSet, tick: TimeSlice,
                          ) -> tuple[list[Query | None], dict[str, Screening]]:
    """`make_queries` then `screen_queries`: together they cost about as much as the
    capability's ranking, milliseconds for a call of 18 at the maximum length, so both yield."""
    return await screen_queries(await make_queries(capabilities, tick), documents, tick)
