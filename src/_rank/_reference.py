"""Plain-Python reference of the `_rank` maths: the term pipeline, Okapi BM25 and weighted RRF.

This module is the specification the compiled core (`_rank._core`) is held to: the property
tests compare both on random corpora and queries (same order, scores within 1e-6 relative).
It is also the fallback when the core is not compiled, or when `RANK_IMPLEMENTATION=python`.
The docstrings here are the documentation of record; the compiled functions borrow them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any, TypeVar

__all__ = ["STOPWORDS", "BM25FIndex", "BM25Index", "rrf", "strip_json_keys", "tokenize", "tokenize_query"]

#: The 22 stopwords removed from every term list (docs/rules/search.md §4, step 3).
STOPWORDS: frozenset[str] = frozenset(
    "a an and are as at be by for from in is it of on or that the this to was with".split()
)

K = TypeVar("K", bound=Hashable)


# --------------------------------------------------------------------------- tokenizer


def _is_ascii_alnum(ch: str) -> bool:
    return ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ("0" <= ch <= "9")


def _pieces(text: str) -> list[str]:
    """Split `text` on every character that is not ASCII alphanumeric; drop empty pieces."""
    pieces: list[str] = []
    start = -1
    for i, ch in enumerate(text):
        if _is_ascii_alnum(ch):
            if start < 0:
                start = i
        elif start >= 0:
            pieces.append(text[start:i])
            start = -1
    if start >= 0:
        pieces.append(text[start:])
    return pieces


def _camel_parts(piece: str) -> list[str]:
    """Split an ASCII-alphanumeric piece at camelCase boundaries.

    A new part starts at an uppercase letter whose previous character is a lowercase letter or
    a digit: `presignUrl` → [`presign`, `Url`], `HTTPServer` → [`HTTPServer`], `v2Api` → [`v2`,
    `Api`].
    """
    parts: list[str] = []
    start = 0
    for i in range(1, len(piece)):
        prev = piece[i - 1]
        if "A" <= piece[i] <= "Z" and (("a" <= prev <= "z") or ("0" <= prev <= "9")):
            parts.append(piece[start:i])
            start = i
    parts.append(piece[start:])
    return parts


def _fold_plural(term: str) -> str:
    """Fold a plural: length > 4 and `…ies` → `…y`; else length > 3, `…s` but not `…ss`, `…us`,
    `…is` → drop the `s`. Terms are ASCII, so character length is byte length."""
    n = len(term)
    if n > 4 and term.endswith("ies"):
        return term[:-3] + "y"
    if n > 3 and term.endswith("s") and not term.endswith(("ss", "us", "is")):
        return term[:-1]
    return term


def tokenize(text: str) -> list[str]:
    """Turn text into BM25 terms (docs/rules/search.md §4, `bm25_terms`).

    1. Split on every character that is not ASCII alphanumeric; drop empty pieces.
    2. For each piece emit its camelCase parts (only when there are at least two), then the
       whole piece, all lowercased (`putObject` → `put`, `object`, `putobject`).
    3. Drop the 22 stopwords (`a an and are as at be by for from in is it of on or that the
       this to was with`).
    4. Fold plurals: `summaries` → `summary`, `values` → `value`; `process`, `status`, `redis`
       stay.

    Duplicates are kept (they are term frequencies). Raises `TypeError` for a non-string.
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize() expects str, got {type(text).__name__}")
    terms: list[str] = []
    for piece in _pieces(text):
        parts = _camel_parts(piece)
        candidates = [*parts, piece] if len(parts) >= 2 else [piece]
        for candidate in candidates:
            term = candidate.lower()
            if term in STOPWORDS:
                continue
            terms.append(_fold_plural(term))
    return terms


_JSON_WHITESPACE = " \t\n\r"


def strip_json_keys(text: str) -> str:
    """Remove every double-quoted string followed (after optional JSON whitespace: space, tab,
    line feed, carriage return) by `:`, together
    with the colon (docs/rules/search.md §4, queries only). Backslash escapes inside quotes are honoured;
    each removed key is replaced by one space so the words around it stay apart. A quoted string
    that is not a key is kept whole, and scanning resumes after its closing quote."""
    if not isinstance(text, str):
        raise TypeError(f"strip_json_keys() expects str, got {type(text).__name__}")
    out: list[str] = []
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch != '"':
            out.append(ch)
            i += 1
            continue
        j = i + 1
        while j < n and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        if j >= n:  # unterminated: keep the rest as it is
            out.append(text[i:])
            break
        after = j + 1
        while after < n and text[after] in _JSON_WHITESPACE:
            after += 1
        if after < n and text[after] == ":":
            out.append(" ")
            i = after + 1
        else:
            out.append(text[i : j + 1])
            i = j + 1
    return "".join(out)


def tokenize_query(text: str) -> list[str]:
    """Terms of a query: `tokenize(strip_json_keys(text))` — quoted JSON keys (`"stdout":`) are
    removed first so they do not pull ranking toward unrelated functions."""
    return tokenize(strip_json_keys(text))


# --------------------------------------------------------------------------- BM25


def idf(n_docs: int, df: int) -> float:
    """Okapi BM25 inverse document frequency, the non-negative variant used by Lucene:
    `ln((N - df + 0.5) / (df + 0.5) + 1)` (Robertson & Zaragoza 2009; Lucene BM25Similarity)."""
    return math.log((n_docs - df + 0.5) / (df + 0.5) + 1.0)


def term_weight(idf_value: float, tf: float, dl: float, avgdl: float, k1: float, b: float) -> float:
    """BM25 contribution of one term to one document:
    `idf · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))` (Robertson et al., Okapi at TREC-3)."""
    return idf_value * (tf * (k1 + 1.0)) / (tf + k1 * (1.0 - b + b * dl / avgdl))


def check_params(k1: float, b: float) -> tuple[float, float]:
    """Validate BM25 parameters: `k1` finite and ≥ 0, `b` in [0, 1]."""
    if isinstance(k1, bool) or not isinstance(k1, (int, float)):
        raise TypeError(f"k1 must be a number, got {type(k1).__name__}")
    if isinstance(b, bool) or not isinstance(b, (int, float)):
        raise TypeError(f"b must be a number, got {type(b).__name__}")
    k1, b = float(k1), float(b)
    if not math.isfinite(k1) or k1 < 0.0:
        raise ValueError(f"k1 must be a finite number >= 0, got {k1!r}")
    if not math.isfinite(b) or not 0.0 <= b <= 1.0:
        raise ValueError(f"b must be between 0 and 1, got {b!r}")
    return k1, b


def check_document(position: int, document: Any) -> Sequence[str]:
    """A document is a sequence of string terms (not a bare string, which would be its letters)."""
    if isinstance(document, (str, bytes)) or not isinstance(document, Sequence):
        raise TypeError(
            f"document {position} must be a sequence of str terms, got {type(document).__name__}"
        )
    for term in document:
        if not isinstance(term, str):
            raise TypeError(
                f"document {position} has a non-string term of type {type(term).__name__}"
            )
    return document


def query_terms(terms: Any) -> list[str]:
    """Validate a query (a sequence of str, not a bare string) and de-duplicate it, keeping the
    first occurrence of each term."""
    if isinstance(terms, (str, bytes)) or not isinstance(terms, Sequence):
        raise TypeError(f"query terms must be a sequence of str, got {type(terms).__name__}")
    seen: dict[str, None] = {}
    for term in terms:
        if not isinstance(term, str):
            raise TypeError(f"query term must be str, got {type(term).__name__}")
        seen.setdefault(term, None)
    return list(seen)


def check_search_args(k: Any, min_matched: Any) -> tuple[int | None, int]:
    """`k` is None (every match) or an int ≥ 0; `min_matched` is an int ≥ 0 (0 and 1 are the
    same filter: a document only appears when it matched at least one term)."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int)):
        raise TypeError(f"k must be an int or None, got {type(k).__name__}")
    if k is not None and k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if isinstance(min_matched, bool) or not isinstance(min_matched, int):
        raise TypeError(f"min_matched must be an int, got {type(min_matched).__name__}")
    if min_matched < 0:
        raise ValueError(f"min_matched must be >= 0, got {min_matched}")
    return k, max(1, min_matched)


class BM25Index:
    """Okapi BM25 over pre-tokenized documents, with eager scoring.

    `BM25Index(documents, k1=1.2, b=0.75)`: `documents[i]` is the term list of document `i`.
    Document length is its term count, `avgdl` the corpus mean. Every posting's weight
    (`term_weight`) is computed here, at build time, so a query only adds numbers.
    `len(index)` is the number of documents.
    """

    def __init__(self, documents: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> None:
        k1, b = check_params(k1, b)
        if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
            raise TypeError(
                f"documents must be a sequence of term sequences, got {type(documents).__name__}"
            )
        docs = [check_document(i, d) for i, d in enumerate(documents)]
        self.k1, self.b = k1, b
        self._n = len(docs)
        total = sum(len(d) for d in docs)
        avgdl = total / self._n if self._n else 0.0
        self.avgdl = avgdl
        frequencies: dict[str, dict[int, int]] = {}
        for doc_id, doc in enumerate(docs):
            for term in doc:
                tfs = frequencies.setdefault(term, {})
                tfs[doc_id] = tfs.get(doc_id, 0) + 1
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for term, tfs in frequencies.items():
            term_idf = idf(self._n, len(tfs))
            self._postings[term] = [
                (doc_id, term_weight(term_idf, float(tf), float(len(docs[doc_id])), avgdl,
                                     self.k1, self.b))
                for doc_id, tf in sorted(tfs.items())
            ]

    def __len__(self) -> int:
        return self._n

    @property
    def vocabulary_size(self) -> int:
        """Number of distinct terms in the corpus."""
        return len(self._postings)

    def search(
        self, terms: Sequence[str], k: int | None = None, min_matched: int = 1
    ) -> list[tuple[int, float, int]]:
        """Score every document against `terms` and return `(doc index, score, distinct matched
        terms)` for the documents that matched at least `min_matched` distinct query terms.

        Query terms are de-duplicated (first occurrence kept); each contributes its posting
        weights in query order. Results are sorted by score descending, then document index
        ascending, and cut to the first `k` (all when `k` is None). An empty query or corpus
        gives `[]`.
        """
        unique = query_terms(terms)
        k, min_matched = check_search_args(k, min_matched)
        if k == 0:
            return []
        scores: dict[int, float] = {}
        matched: dict[int, int] = {}
        for term in unique:
            for doc_id, weight in self._postings.get(term, ()):
                scores[doc_id] = scores.get(doc_id, 0.0) + weight
                matched[doc_id] = matched.get(doc_id, 0) + 1
        hits = [(d, s, matched[d]) for d, s in scores.items() if matched[d] >= min_matched]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits if k is None else hits[:k]


def check_fields(weights: Any, bs: Any) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Validate BM25F field parameters: one finite weight >= 0 and one `b` in [0, 1] per field,
    at least one field."""
    for name, values in (("weights", weights), ("b", bs)):
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(f"field {name} must be a sequence of numbers, got {type(values).__name__}")
    if len(weights) != len(bs):
        raise ValueError(f"got {len(weights)} field weights for {len(bs)} field b values")
    if not weights:
        raise ValueError("a BM25F index needs at least one field")
    ws: list[float] = []
    for w in weights:
        if isinstance(w, bool) or not isinstance(w, (int, float)):
            raise TypeError(f"field weight must be a number, got {type(w).__name__}")
        if not math.isfinite(w) or w < 0.0:
            raise ValueError(f"field weight must be a finite number >= 0, got {w!r}")
        ws.append(float(w))
    out_b = [check_params(0.0, b)[1] for b in bs]
    return tuple(ws), tuple(out_b)


def check_fielded_document(position: int, document: Any, n_fields: int) -> list[Sequence[str]]:
    """A fielded document is a sequence of exactly `n_fields` term sequences."""
    if isinstance(document, (str, bytes)) or not isinstance(document, Sequence):
        raise TypeError(
            f"document {position} must be a sequence of fields, got {type(document).__name__}")
    if len(document) != n_fields:
        raise ValueError(f"document {position} has {len(document)} fields, expected {n_fields}")
    return [check_document(position, field) for field in document]


def field_norm(weight: float, b: float, length: float, avg_length: float) -> float:
    """What one occurrence of a term in a field adds to the document's pseudo-frequency:
    `w_f / (1 − b_f + b_f·len_f/avglen_f)` (an empty field, which adds nothing, and a field no
    document fills normalise by 1)."""
    if length <= 0.0 or avg_length <= 0.0:
        return weight
    return weight / (1.0 - b + b * length / avg_length)


def saturate(idf_value: float, tf: float, k1: float) -> float:
    """BM25F saturation of a pseudo-frequency, applied once: `idf · tf·(k1+1) / (tf + k1)`; 0
    for a pseudo-frequency of 0 (every field holding the term weighs 0)."""
    if tf <= 0.0:
        return 0.0
    return idf_value * (tf * (k1 + 1.0)) / (tf + k1)


class BM25FIndex(BM25Index):
    """BM25F over documents made of fields (Robertson, Zaragoza & Taylor 2004; Zaragoza et al.,
    TREC 2004), with eager scoring.

    `BM25FIndex(documents, weights, b, k1=1.2)`: `documents[i][f]` is the term list of field `f`
    of document `i`; `weights[f]` (finite, ≥ 0) and `b[f]` (in [0, 1]) are that field's weight
    and length normalisation. A term's pseudo-frequency in a document is
    `tf~ = Σ_f w_f · tf_f / (1 − b_f + b_f · len_f / avglen_f)` (`len_f` the field's term count,
    `avglen_f` its corpus mean), its weight `idf · tf~·(k1+1) / (tf~ + k1)` — saturation once,
    over the fields together — and `idf` the Okapi IDF over documents (`df` counts documents
    holding the term in any field). One field with weight 1 is Okapi BM25 exactly.
    `field_weights`, `field_b` and `field_avgdl` hold the parameters and field means; `avgdl` is
    the mean total length and `b` is 0.0 (normalisation happens per field). `search` is
    `BM25Index.search`.
    """

    def __init__(self, documents: Sequence[Sequence[Sequence[str]]], weights: Sequence[float],
                 b: Sequence[float], k1: float = 1.2) -> None:
        k1 = check_params(k1, 0.0)[0]
        field_weights, field_b = check_fields(weights, b)
        if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
            raise TypeError(
                f"documents must be a sequence of fielded documents, got {type(documents).__name__}"
            )
        n_fields = len(field_weights)
        docs = [check_fielded_document(i, d, n_fields) for i, d in enumerate(documents)]
        self.k1, self.b = k1, 0.0
        self.field_weights, self.field_b = field_weights, field_b
        self._n = len(docs)
        totals = [sum(len(doc[f]) for doc in docs) for f in range(n_fields)]
        self.field_avgdl = tuple(t / self._n if self._n else 0.0 for t in totals)
        self.avgdl = sum(totals) / self._n if self._n else 0.0
        frequencies: dict[str, dict[int, float]] = {}
        for doc_id, doc in enumerate(docs):
            for f, terms in enumerate(doc):
                add = field_norm(field_weights[f], field_b[f], float(len(terms)),
                                 self.field_avgdl[f])
                for term in terms:
                    tfs = frequencies.setdefault(term, {})
                    tfs[doc_id] = tfs.get(doc_id, 0.0) + add
        self._postings = {}
        for term, tfs in frequencies.items():
            term_idf = idf(self._n, len(tfs))
            self._postings[term] = [(doc_id, saturate(term_idf, tf, k1))
                                    for doc_id, tf in sorted(tfs.items())]


# --------------------------------------------------------------------------- RRF


def check_rrf_args(rankings: Any, weights: Any, k: Any) -> tuple[list[Sequence[Any]], list[float], float]:
    """Validate `rrf` arguments: `rankings` a sequence of key sequences; `weights` None (all
    1.0) or one finite weight ≥ 0 per ranking; `k` a finite number ≥ 0."""
    if isinstance(rankings, (str, bytes)) or not isinstance(rankings, Sequence):
        raise TypeError(f"rankings must be a sequence of key sequences, got {type(rankings).__name__}")
    lists: list[Sequence[Any]] = []
    for position, ranking in enumerate(rankings):
        if isinstance(ranking, (str, bytes)) or not isinstance(ranking, Sequence):
            raise TypeError(f"ranking {position} must be a sequence of keys, got {type(ranking).__name__}")
        lists.append(ranking)
    if weights is None:
        ws = [1.0] * len(lists)
    else:
        if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence):
            raise TypeError(f"weights must be a sequence of numbers, got {type(weights).__name__}")
        if len(weights) != len(lists):
            raise ValueError(f"got {len(weights)} weights for {len(lists)} rankings")
        ws = []
        for w in weights:
            if isinstance(w, bool) or not isinstance(w, (int, float)):
                raise TypeError(f"weight must be a number, got {type(w).__name__}")
            if not math.isfinite(w) or w < 0:
                raise ValueError(f"weight must be a finite number >= 0, got {w!r}")
            ws.append(float(w))
    if isinstance(k, bool) or not isinstance(k, (int, float)):
        raise TypeError(f"k must be a number, got {type(k).__name__}")
    if not math.isfinite(k) or k < 0:
        raise ValueError(f"k must be a finite number >= 0, got {k!r}")
    return lists, ws, float(k)


def rrf(
    rankings: Sequence[Sequence[K]], weights: Sequence[float] | None = None, k: float = 60
) -> list[tuple[K, float]]:
    """Weighted reciprocal-rank fusion (Cormack, Clarke & Büttcher 2009; docs/rules/search.md §5.4).

    A key's rank in a list is the 1-based position of its **first** occurrence.
    `score(key) = Σ_i weights[i] / (k + rank_i(key))`, a list without the key adding 0
    (weights default to 1.0 each). Returns `(key, score)` sorted by score descending, then by
    rank in the first list ascending (missing = ∞), then in the second list, and so on, then by
    key ascending. (Two keys never share a rank in the same list, so the rank tie-breaks
    already give a total order and keys are never compared: they only need to be hashable.)
    """
    lists, ws, kk = check_rrf_args(rankings, weights, k)
    ranks: dict[Any, list[float]] = {}
    width = len(lists)
    for i, ranking in enumerate(lists):
        for position, key in enumerate(ranking, start=1):
            row = ranks.get(key)
            if row is None:
                row = ranks[key] = [math.inf] * width
            if row[i] == math.inf:
                row[i] = float(position)
    fused: list[tuple[Any, float]] = []
    for key, row in ranks.items():
        score = 0.0
        for i in range(width):
            if row[i] != math.inf:
                score += ws[i] / (kk + row[i])
        fused.append((key, score))
    fused.sort(key=lambda item: (-item[1], *ranks[item[0]]))
    return fused
