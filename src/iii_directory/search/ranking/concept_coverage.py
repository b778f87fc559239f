"""Concept coverage: how well the best candidates cover *every* content concept of a request,
one signal of the lexical and static families' calibrated answerability scores
(`answerability.features`).

A request's *concepts* (`answerability.concept_words`, which hands them in) are its prose words
that are neither ordinary English, stop words nor filler. A candidate's words are the
alphabetic words of its BM25 document (id words, description, argument names). With `v(w)`
the static word-piece vector of one word (`_rank.static`: the L2-normalised sum of its pieces'
rows — every target ships the table, so the signal needs no MiniLM), concept `c`'s match in
document `d` is

    m(c, d) = clip(max_{w ∈ d} v(c) · v(w), 0, 1)          (1 for a word d uses)

and the signal is the best, over the lane's first `DEPTH` (3) candidates, of the mean match

    coverage = max_{d ∈ lane[:DEPTH]} mean_c m(c, d)        (1 when the request has no concept)

A near miss shares one concept with a function and not another (`record a voice memo from the
laptop microphone` → `audio::transcribe`); a paraphrased match has counterparts for most of its
words. Word vectors are computed once per word and remembered, a document's word matrix once
per document text and a concept's match in a document once per pair, each memo within its
share of the worker's text-memo budget (`text_memo.py`); an unseen pair costs one compiled
cosine scan of the document's words.
Figures, variants tried (minimum, IDF-weighted mean or share, rarest concept, top 1, verbs left
out, MiniLM word and token vectors, hybrid and static families): docs/record/search-quality.md, "Answerability",
"Concept coverage".
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Sequence

import _rank
from _rank.static import StaticEncoder, StaticIndex, default_encoder

from .corpus import DocumentSet
from .text_memo import text_memo

DEPTH = 3  # chosen: the lane head whose coverage the decision reads (the first three)

_ENCODER_LOCK = threading.Lock()
_ENCODER: list[StaticEncoder | None] = []


def _encoder() -> StaticEncoder | None:
    """The packaged static encoder, or None when its table cannot be loaded (a broken
    install: the signal is then unknown, `coverage` returns None)."""
    with _ENCODER_LOCK:
        if not _ENCODER:
            try:
                _ENCODER.append(default_encoder())
            except Exception:  # noqa: BLE001 - a broken table leaves the signal unknown
                _ENCODER.append(None)
        return _ENCODER[0]


@text_memo(share=0.14)
def word_vector(word: str) -> array:
    """The static vector of one word (unit, or zero when no piece has a row)."""
    encoder = _encoder()
    assert encoder is not None
    return encoder.encode_one(word)


@text_memo(share=0.12)
def document_words(lexical: str) -> tuple[StaticIndex, frozenset[str]]:
    """A `StaticIndex` of the distinct alphabetic words of one BM25 document, and the words."""
    words = sorted({word for word in _rank.tokenize(lexical) if word.isalpha()})
    index = StaticIndex(_encoder().dimension)  # type: ignore[union-attr]
    index.add([word_vector(word) for word in words])
    return index, frozenset(words)


@text_memo(share=0.06, arity=2)
def match(concept: str, lexical: str) -> float:
    """`m(c, d)`: the best cosine of the concept's vector to a word of document text `lexical`,
    clipped to [0, 1]; 1 when the document uses the word itself."""
    index, words = document_words(lexical)
    if concept in words:
        return 1.0
    best = index.search(word_vector(concept), 1)
    return min(1.0, max(0.0, best[0][1])) if best else 0.0


def coverage(wanted: Sequence[str], lane: Sequence[str], documents: DocumentSet) -> float | None:
    """The concept coverage of a request whose concepts are `wanted` by the first `DEPTH` ids
    of `lane` (ids of `documents`); None when the static table is unavailable or the lane is
    empty."""
    if not wanted:
        return 1.0
    candidates = [doc_id for doc_id in lane[:DEPTH] if doc_id in documents.positions]
    if not candidates or _encoder() is None:
        return None
    best = 0.0
    for doc_id in candidates:
        lexical = documents.documents[documents.positions[doc_id]].lexical
        best = max(best, sum(match(c, lexical) for c in wanted) / len(wanted))
        if best >= 1.0:
            break
    return best
