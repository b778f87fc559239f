"""Capabilities as queries, and local (model-free or ad-hoc dense) ranking of any document set.

A `Query` is one compacted capability with its BM25 terms, the text its embedding is made from
and, when the call embedded its queries, the row of its vector in the call's query matrix.
Helpers here turn a `DocumentSet` and the queries into lanes for each mode, and build judge
shortlists (docs/rules/search.md §6.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import _rank

from .corpus import DocumentSet
from .lanes import Ranking, exact_lane, hybrid_lane, lexical_ranking, raw_bm25, weighted_rrf
from .second_query import second_query
from .text_memo import text_memo
from .text import compact_capability, dense_query, is_control_plane, is_intrinsic
from .vocabulary import rewrite_request


@dataclass(frozen=True)
class Query:
    """One searched capability: `text` (compacted), its `terms`, `vector` — its row in the
    call's query matrix, or None when it was not embedded — `dense_text`, what the encoder
    embeds (`text.dense_query`; defaults to `text`), and `second_text` / `second_vector`, the
    request cut to its action and object (`second_query.py`) and its row, when embedded."""

    text: str
    terms: tuple[str, ...]
    vector: int | None = None
    dense_text: str = ""
    second_text: str = ""
    second_vector: int | None = None

    def __post_init__(self) -> None:
        if not self.dense_text:
            object.__setattr__(self, "dense_text", self.text)
        if not self.second_text:
            object.__setattr__(self, "second_text", self.dense_text)

    def with_vector(self, row: int | None, second: int | None = None) -> Query:
        return Query(self.text, self.terms, row, self.dense_text, self.second_text, second)


@text_memo(share=0.26)
def make_query(capability: str) -> Query | None:
    """The query of one capability, or None for an intrinsic (summarize-provided-text) or a
    control-plane request (`text.is_control_plane`). A pure function of the text, so it is
    remembered within its share of the text-memo budget (`text_memo.py`): agents repeat their
    capabilities, and compacting, tokenising and rewriting one took a tenth of a short call's
    ranking time. A `Query` is immutable (`with_vector` makes a new one), so calls can share
    it."""
    text = compact_capability(capability)
    terms = tuple(_rank.tokenize_query(text))
    if is_intrinsic(terms) or is_control_plane(terms, text):
        return None
    rewritten = rewrite_request(text)
    if rewritten != text:
        terms = tuple(_rank.tokenize_query(rewritten))
    dense_text = dense_query(rewritten)
    return Query(text, terms, dense_text=dense_text, second_text=second_query(dense_text))


def local_lanes(documents: DocumentSet, queries: Sequence[Query],
                dense: Sequence[Ranking | None] | None) -> list[Ranking]:
    """Lexical lanes, or hybrid lanes where a dense ranking is given (admission decides);
    exact-id lanes forced."""
    lanes = []
    for position, query in enumerate(queries):
        exact = exact_lane(query.text, documents)
        if exact is not None:
            lanes.append(exact)
            continue
        lexical = lexical_ranking(documents, query.terms)
        ranking = dense[position] if dense is not None else None
        lanes.append(hybrid_lane(lexical, ranking) if ranking is not None else lexical)
    return lanes


def shortlist(documents: DocumentSet, query: Query, depth: int,
              dense: Ranking | None) -> list[str]:
    """The ids a judge sees for one capability: the whole set when it has no more than `depth`
    documents; else raw BM25 (two-term minimum, no pruning), fused with the dense ranking when
    there is one, cut to `depth`."""
    if len(documents) <= depth:
        return documents.ids
    lexical = raw_bm25(documents, query.terms)
    fused = weighted_rrf(lexical, dense) if dense else lexical
    return [doc_id for doc_id, _ in fused[:depth]]
