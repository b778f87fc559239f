# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of `_rank`: the term pipeline, eager-scored BM25 and BM25F, weighted RRF.

Built for the CPython stable ABI (Py_LIMITED_API 3.11). Postings live in C arrays (malloc), not
numpy, so the core builds where numpy does not exist. The maths mirror `_rank._reference`
exactly (same formulas, same summation order), and tests hold the two to the same answers.
"""

from libc.math cimport log
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

from collections.abc import Sequence as _Sequence

from ._reference import check_fields, check_params, check_rrf_args

#: Marks a complete build (the dispatcher ignores placeholder builds without it).
COMPLETE = True

# Release the GIL for a query only when it walks at least this many postings: below it the
# release/re-acquire round trip costs more than the scoring it would let run in parallel.
cdef Py_ssize_t NOGIL_POSTINGS = 20000


# =========================================================================== tokenizer

cdef inline bint _is_digit(unsigned char c) noexcept nogil:
    return 48 <= c <= 57


cdef inline bint _is_upper(unsigned char c) noexcept nogil:
    return 65 <= c <= 90


cdef inline bint _is_lower(unsigned char c) noexcept nogil:
    return 97 <= c <= 122


cdef inline bint _is_alnum(unsigned char c) noexcept nogil:
    return _is_digit(c) or _is_upper(c) or _is_lower(c)


cdef inline bint _eq(const unsigned char* s, Py_ssize_t n, const char* word, Py_ssize_t m) noexcept nogil:
    return n == m and memcmp(s, word, <size_t>m) == 0


cdef bint _is_stopword(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """The 22 stopwords of docs/rules/search.md §4 (all are 1 to 4 letters long)."""
    if n == 1:
        return s[0] == 97  # a
    if n == 2:
        return (_eq(s, n, b"an", 2) or _eq(s, n, b"as", 2) or _eq(s, n, b"at", 2)
                or _eq(s, n, b"be", 2) or _eq(s, n, b"by", 2) or _eq(s, n, b"in", 2)
                or _eq(s, n, b"is", 2) or _eq(s, n, b"it", 2) or _eq(s, n, b"of", 2)
                or _eq(s, n, b"on", 2) or _eq(s, n, b"or", 2) or _eq(s, n, b"to", 2))
    if n == 3:
        return (_eq(s, n, b"and", 3) or _eq(s, n, b"are", 3) or _eq(s, n, b"for", 3)
                or _eq(s, n, b"the", 3) or _eq(s, n, b"was", 3))
    if n == 4:
        return (_eq(s, n, b"from", 4) or _eq(s, n, b"that", 4) or _eq(s, n, b"this", 4)
                or _eq(s, n, b"with", 4))
    return False


cdef Py_ssize_t _fold_plural(unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Plural folding in place; returns the new length (see `_reference._fold_plural`)."""
    if n > 4 and s[n - 3] == 105 and s[n - 2] == 101 and s[n - 1] == 115:  # ...ies -> ...y
        s[n - 3] = 121
        return n - 2
    if n > 3 and s[n - 1] == 115 and s[n - 2] != 115 and s[n - 2] != 117 and s[n - 2] != 105:
        return n - 1
    return n


cdef int _emit(list out, const unsigned char* src, Py_ssize_t start, Py_ssize_t end,
               unsigned char* buf) except -1:
    """Lowercase src[start:end] into buf, drop stopwords, fold plurals, append the term."""
    cdef Py_ssize_t n = end - start
    cdef Py_ssize_t i
    cdef unsigned char c
    for i in range(n):
        c = src[start + i]
        buf[i] = c + 32 if _is_upper(c) else c
    if _is_stopword(buf, n):
        return 0
    n = _fold_plural(buf, n)
    out.append((<char*>buf)[:n].decode("ascii"))
    return 0


cdef list _tokenize_bytes(const unsigned char* s, Py_ssize_t n):
    cdef list out = []
    cdef Py_ssize_t i = 0, start, end, j, part
    cdef bint camel
    if n == 0:
        return out
    cdef unsigned char* buf = <unsigned char*>malloc(<size_t>n)
    if buf == NULL:
        raise MemoryError()
    try:
        while i < n:
            if not _is_alnum(s[i]):
                i += 1
                continue
            start = i
            while i < n and _is_alnum(s[i]):
                i += 1
            end = i
            camel = False
            for j in range(start + 1, end):
                if _is_upper(s[j]) and (_is_lower(s[j - 1]) or _is_digit(s[j - 1])):
                    camel = True
                    break
            if camel:
                part = start
                for j in range(start + 1, end):
                    if _is_upper(s[j]) and (_is_lower(s[j - 1]) or _is_digit(s[j - 1])):
                        _emit(out, s, part, j, buf)
                        part = j
                _emit(out, s, part, end, buf)
            _emit(out, s, start, end, buf)
    finally:
        free(buf)
    return out


cdef bytes _utf8(object text, str name):
    if not isinstance(text, str):
        raise TypeError(f"{name}() expects str, got {type(text).__name__}")
    # Every non-ASCII character is a separator, so scanning UTF-8 bytes is exact: all bytes of
    # a multi-byte character are >= 0x80 and never alphanumeric, a quote, a colon or a backslash.
    return (<str>text).encode("utf-8", "surrogatepass")


cdef inline bint _is_json_space(unsigned char c) noexcept nogil:
    return c == 32 or c == 9 or c == 10 or c == 13


cdef Py_ssize_t _strip_json_keys(const unsigned char* s, Py_ssize_t n, unsigned char* out) noexcept nogil:
    """Byte-level `strip_json_keys`; writes at most n bytes to out and returns the length."""
    cdef Py_ssize_t i = 0, j, after, o = 0
    while i < n:
        if s[i] != 34:  # not a quote
            out[o] = s[i]
            o += 1
            i += 1
            continue
        j = i + 1
        while j < n and s[j] != 34:
            j += 2 if s[j] == 92 else 1
        if j >= n:  # unterminated: keep the rest
            memcpy(out + o, s + i, <size_t>(n - i))
            return o + n - i
        after = j + 1
        while after < n and _is_json_space(s[after]):
            after += 1
        if after < n and s[after] == 58:  # a key: drop it with its colon
            out[o] = 32
            o += 1
            i = after + 1
        else:
            memcpy(out + o, s + i, <size_t>(j + 1 - i))
            o += j + 1 - i
            i = j + 1
    return o


def tokenize(text):
    cdef bytes data = _utf8(text, "tokenize")
    return _tokenize_bytes(<const unsigned char*><char*>data, len(data))


def strip_json_keys(text):
    cdef bytes data = _utf8(text, "strip_json_keys")
    cdef Py_ssize_t n = len(data)
    if n == 0 or b'"' not in data:
        return text
    cdef unsigned char* buf = <unsigned char*>malloc(<size_t>n)
    if buf == NULL:
        raise MemoryError()
    try:
        n = _strip_json_keys(<const unsigned char*><char*>data, n, buf)
        return (<char*>buf)[:n].decode("utf-8", "surrogatepass")
    finally:
        free(buf)


def tokenize_query(text):
    cdef bytes data = _utf8(text, "tokenize_query")
    cdef Py_ssize_t n = len(data)
    if n == 0 or b'"' not in data:
        return _tokenize_bytes(<const unsigned char*><char*>data, n)
    cdef unsigned char* buf = <unsigned char*>malloc(<size_t>n)
    if buf == NULL:
        raise MemoryError()
    try:
        n = _strip_json_keys(<const unsigned char*><char*>data, n, buf)
        return _tokenize_bytes(buf, n)
    finally:
        free(buf)


# =========================================================================== BM25

ctypedef struct Hit:
    double score
    int32_t doc
    int32_t matched


cdef inline bint _worse(const Hit* a, const Hit* b) noexcept nogil:
    """a ranks after b: lower score, or the same score and a higher document index."""
    return a.score < b.score or (a.score == b.score and a.doc > b.doc)


cdef void _sift_down(Hit* heap, Py_ssize_t size, Py_ssize_t i) noexcept nogil:
    """Restore a heap whose root is its worst hit."""
    cdef Py_ssize_t child
    cdef Hit tmp
    while True:
        child = 2 * i + 1
        if child >= size:
            return
        if child + 1 < size and _worse(&heap[child + 1], &heap[child]):
            child += 1
        if not _worse(&heap[child], &heap[i]):
            return
        tmp = heap[i]
        heap[i] = heap[child]
        heap[child] = tmp
        i = child


cdef void _sort_hits(Hit* hits, Py_ssize_t n, bint is_heap) noexcept nogil:
    """Sort hits best first: insertion sort for short runs, else heap sort (no allocation)."""
    cdef Py_ssize_t i, j, end
    cdef Hit tmp
    if n <= 24:
        for i in range(1, n):
            tmp = hits[i]
            j = i - 1
            while j >= 0 and _worse(&hits[j], &tmp):
                hits[j + 1] = hits[j]
                j -= 1
            hits[j + 1] = tmp
        return
    if not is_heap:
        i = n // 2 - 1
        while i >= 0:
            _sift_down(hits, n, i)
            i -= 1
    # the root is the worst hit: move it behind the shrinking heap, so the best ends up first
    end = n - 1
    while end > 0:
        tmp = hits[0]
        hits[0] = hits[end]
        hits[end] = tmp
        _sift_down(hits, end, 0)
        end -= 1


cdef inline double _idf(double n_docs, double df) noexcept nogil:
    """`ln((N - df + 0.5) / (df + 0.5) + 1)` — see `_reference.idf`."""
    return log((n_docs - df + 0.5) / (df + 0.5) + 1.0)


cdef inline double _term_weight(double idf_value, double tf, double dl, double avgdl,
                                double k1, double b) noexcept nogil:
    """`idf · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))` — see `_reference.term_weight`."""
    return idf_value * (tf * (k1 + 1.0)) / (tf + k1 * (1.0 - b + b * dl / avgdl))


cdef inline double _field_norm(double weight, double b, double length,
                               double avg_length) noexcept nogil:
    """`w_f / (1 − b_f + b_f·len_f/avglen_f)` — see `_reference.field_norm`."""
    if length <= 0.0 or avg_length <= 0.0:
        return weight
    return weight / (1.0 - b + b * length / avg_length)


cdef inline double _saturate(double idf_value, double tf, double k1) noexcept nogil:
    """`idf · tf·(k1+1) / (tf + k1)`, 0 when tf is 0 — see `_reference.saturate`."""
    if tf <= 0.0:
        return 0.0
    return idf_value * (tf * (k1 + 1.0)) / (tf + k1)


cdef Py_ssize_t _score(const int64_t* offsets, const int32_t* docs, const double* weights,
                       const int32_t* qterms, Py_ssize_t nq, int32_t min_matched, Py_ssize_t k,
                       double* scores, int32_t* matched, int32_t* touched, Hit* hits) noexcept nogil:
    """Accumulate the query's postings, keep hits with enough matched terms, select and sort the
    best `k` (all when k < 0) into `hits`; returns their count. Leaves scores/matched zeroed."""
    cdef Py_ssize_t t, p, nt = 0, nh, i
    cdef int32_t d
    cdef int32_t term
    for t in range(nq):
        term = qterms[t]
        for p in range(offsets[term], offsets[term + 1]):
            d = docs[p]
            if matched[d] == 0:
                touched[nt] = d
                nt += 1
            scores[d] += weights[p]
            matched[d] += 1
    if k < 0 or k > nt:
        k = nt
    if k <= 16:
        nh = _select_sorted(touched, nt, scores, matched, min_matched, k, hits)
    else:
        nh = _select_heap(touched, nt, scores, matched, min_matched, k, hits)
    for i in range(nt):
        d = touched[i]
        scores[d] = 0.0
        matched[d] = 0
    return nh


cdef Py_ssize_t _select_sorted(const int32_t* touched, Py_ssize_t nt, const double* scores,
                               const int32_t* matched, int32_t min_matched, Py_ssize_t k,
                               Hit* hits) noexcept nogil:
    """Top-k for small k: keep `hits[:nh]` sorted best first and insert each better candidate."""
    cdef Py_ssize_t i, j, nh = 0
    cdef int32_t d
    cdef Hit c
    for i in range(nt):
        d = touched[i]
        if matched[d] < min_matched:
            continue
        c.score = scores[d]
        c.doc = d
        c.matched = matched[d]
        if nh == k:
            if not _worse(&hits[k - 1], &c):
                continue
            j = k - 1
        else:
            j = nh
            nh += 1
        while j > 0 and _worse(&hits[j - 1], &c):
            hits[j] = hits[j - 1]
            j -= 1
        hits[j] = c
    return nh


cdef Py_ssize_t _select_heap(const int32_t* touched, Py_ssize_t nt, const double* scores,
                             const int32_t* matched, int32_t min_matched, Py_ssize_t k,
                             Hit* hits) noexcept nogil:
    """Top-k for large k: a heap whose root is the worst kept hit, then heap sort."""
    cdef Py_ssize_t i, p, nh = 0
    cdef int32_t d
    for i in range(nt):
        d = touched[i]
        if matched[d] < min_matched:
            continue
        if nh < k:
            hits[nh].score = scores[d]
            hits[nh].doc = d
            hits[nh].matched = matched[d]
            nh += 1
            if nh == k:  # the heap is full: heapify with the worst hit at the root
                p = k // 2 - 1
                while p >= 0:
                    _sift_down(hits, k, p)
                    p -= 1
        elif scores[d] > hits[0].score or (scores[d] == hits[0].score and d < hits[0].doc):
            hits[0].score = scores[d]
            hits[0].doc = d
            hits[0].matched = matched[d]
            _sift_down(hits, k, 0)
    _sort_hits(hits, nh, nh == k)
    return nh


cdef extern from "Python.h":
    object PyTuple_Pack(Py_ssize_t n, object a, object b, object c)


cdef inline object _hit_tuple(int32_t doc, double score, int32_t matched):
    # one stable-ABI call instead of PyTuple_New plus three PyTuple_SetItem calls
    return PyTuple_Pack(3, doc, score, matched)


cdef class BM25Index:
    """Okapi BM25 over pre-tokenized documents, with eager scoring (compiled)."""

    cdef readonly double k1
    cdef readonly double b
    cdef readonly double avgdl
    cdef dict _vocab
    cdef Py_ssize_t _n
    cdef Py_ssize_t _n_terms
    cdef int64_t* _offsets
    cdef int32_t* _docs
    cdef double* _weights
    cdef double* _scores
    cdef int32_t* _matched
    cdef int32_t* _touched
    cdef Hit* _hits
    cdef bint _busy

    def __cinit__(self):
        self._offsets = NULL
        self._docs = NULL
        self._weights = NULL
        self._scores = NULL
        self._matched = NULL
        self._touched = NULL
        self._hits = NULL
        self._busy = False
        self._n = 0
        self._n_terms = 0

    def __dealloc__(self):
        self._release()

    cdef void _release(self) noexcept:
        free(self._offsets)
        free(self._docs)
        free(self._weights)
        free(self._scores)
        free(self._matched)
        free(self._touched)
        free(self._hits)
        self._offsets = NULL
        self._docs = NULL
        self._weights = NULL
        self._scores = NULL
        self._matched = NULL
        self._touched = NULL
        self._hits = NULL

    def __init__(self, documents, k1=1.2, b=0.75):
        if self._busy:
            raise RuntimeError("cannot re-initialise a BM25Index while it is being searched")
        k1_value, b_value = check_params(k1, b)
        if isinstance(documents, (str, bytes)) or not _is_sequence(documents):
            raise TypeError(
                f"documents must be a sequence of term sequences, got {type(documents).__name__}")
        cdef Py_ssize_t n = len(documents)
        if n >= 2147483647:
            raise ValueError("too many documents for one index (at most 2**31 - 2)")
        cdef dict vocab = {}
        cdef list doc_terms = []  # the term ids of every document, concatenated
        cdef list lengths = []
        cdef Py_ssize_t position = 0
        for document in documents:
            lengths.append(_intern_terms(document, position, vocab, doc_terms))
            position += 1
        if position != n:
            raise ValueError("documents changed length while the index was built")
        self._release()  # __init__ called again on a built index
        self._vocab = None
        self.k1, self.b = k1_value, b_value
        self._n = n
        self._n_terms = len(vocab)
        self._build(doc_terms, lengths)
        self._vocab = vocab  # set last: an index whose build failed answers nothing

    cdef int _build(self, list doc_terms, list lengths, list gains=None) except -1:
        """Postings and their weights. Without `gains` every occurrence adds 1 to its term's
        frequency and weights are Okapi BM25; with `gains` (one number per occurrence, BM25F's
        `w_f / norm_f`) occurrences add their gain and weights are `_saturate`d once."""
        cdef Py_ssize_t n = self._n, n_terms = self._n_terms, total = len(doc_terms)
        cdef Py_ssize_t i, d, p, start, end, t
        cdef bint fielded = gains is not None
        cdef int32_t* terms = <int32_t*>malloc(<size_t>max(total, 1) * sizeof(int32_t))
        cdef double* gain = NULL
        cdef int64_t* doc_start = <int64_t*>malloc(<size_t>(n + 1) * sizeof(int64_t))
        cdef int64_t* df = <int64_t*>calloc(<size_t>max(n_terms, 1), sizeof(int64_t))
        cdef int64_t* last = <int64_t*>malloc(<size_t>max(n_terms, 1) * sizeof(int64_t))
        cdef int64_t* fill = <int64_t*>malloc(<size_t>max(n_terms, 1) * sizeof(int64_t))
        cdef double* tfs = NULL
        cdef double avgdl, term_idf, dl
        try:
            if terms == NULL or doc_start == NULL or df == NULL or last == NULL or fill == NULL:
                raise MemoryError()
            for i in range(total):
                terms[i] = <int32_t>doc_terms[i]
            if fielded:
                gain = <double*>malloc(<size_t>max(total, 1) * sizeof(double))
                if gain == NULL:
                    raise MemoryError()
                for i in range(total):
                    gain[i] = <double>gains[i]
            doc_start[0] = 0
            for d in range(n):
                doc_start[d + 1] = doc_start[d] + <Py_ssize_t>lengths[d]
            self.avgdl = avgdl = (<double>total / <double>n) if n > 0 else 0.0
            self._offsets = <int64_t*>calloc(<size_t>(n_terms + 1), sizeof(int64_t))
            self._scores = <double*>calloc(<size_t>max(n, 1), sizeof(double))
            self._matched = <int32_t*>calloc(<size_t>max(n, 1), sizeof(int32_t))
            self._touched = <int32_t*>malloc(<size_t>max(n, 1) * sizeof(int32_t))
            self._hits = <Hit*>malloc(<size_t>max(n, 1) * sizeof(Hit))
            if (self._offsets == NULL or self._scores == NULL or self._matched == NULL
                    or self._touched == NULL or self._hits == NULL):
                raise MemoryError()
            with nogil:
                # document frequencies: count each term once per document
                for t in range(n_terms):
                    last[t] = -1
                for d in range(n):
                    for p in range(doc_start[d], doc_start[d + 1]):
                        t = terms[p]
                        if last[t] != d:
                            last[t] = d
                            df[t] += 1
                for t in range(n_terms):
                    self._offsets[t + 1] = self._offsets[t] + df[t]
            self._docs = <int32_t*>malloc(<size_t>max(self._offsets[n_terms], 1) * sizeof(int32_t))
            self._weights = <double*>malloc(<size_t>max(self._offsets[n_terms], 1) * sizeof(double))
            tfs = <double*>calloc(<size_t>max(self._offsets[n_terms], 1), sizeof(double))
            if self._docs == NULL or self._weights == NULL or tfs == NULL:
                raise MemoryError()
            with nogil:
                # postings in document order, with term frequencies
                for t in range(n_terms):
                    last[t] = -1
                    fill[t] = self._offsets[t]
                for d in range(n):
                    for p in range(doc_start[d], doc_start[d + 1]):
                        t = terms[p]
                        if last[t] != d:
                            last[t] = d
                            self._docs[fill[t]] = <int32_t>d
                            fill[t] += 1
                        tfs[fill[t] - 1] += gain[p] if fielded else 1.0
                # eager scoring: every posting's BM25 (BM25F) weight, once
                for t in range(n_terms):
                    term_idf = _idf(<double>n, <double>df[t])
                    for p in range(self._offsets[t], self._offsets[t + 1]):
                        if fielded:
                            self._weights[p] = _saturate(term_idf, tfs[p], self.k1)
                            continue
                        d = self._docs[p]
                        dl = <double>(doc_start[d + 1] - doc_start[d])
                        self._weights[p] = _term_weight(term_idf, tfs[p], dl, avgdl,
                                                        self.k1, self.b)
        finally:
            free(terms)
            free(gain)
            free(doc_start)
            free(df)
            free(last)
            free(fill)
            free(tfs)
        return 0

    def __len__(self):
        return self._n

    @property
    def vocabulary_size(self):
        """Number of distinct terms in the corpus."""
        return self._n_terms

    def search(self, terms, k=None, min_matched=1):
        if isinstance(terms, (str, bytes)) or not _is_sequence(terms):
            raise TypeError(f"query terms must be a sequence of str, got {type(terms).__name__}")
        cdef Py_ssize_t kk = -1
        cdef Py_ssize_t mm
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, int):
                raise TypeError(f"k must be an int or None, got {type(k).__name__}")
            if k < 0:
                raise ValueError(f"k must be >= 0, got {k}")
            kk = min(k, self._n)
        if isinstance(min_matched, bool) or not isinstance(min_matched, int):
            raise TypeError(f"min_matched must be an int, got {type(min_matched).__name__}")
        if min_matched < 0:
            raise ValueError(f"min_matched must be >= 0, got {min_matched}")
        mm = max(1, min(min_matched, 2147483647))
        if self._vocab is None:
            raise RuntimeError("BM25Index was not initialised (its build failed or never ran)")
        cdef Py_ssize_t nq_raw = len(terms)
        cdef int32_t small[32]
        cdef int32_t* qterms = small
        cdef Py_ssize_t nq = 0, i, walk = 0
        cdef int32_t tid
        cdef bint seen
        cdef set seen_terms = None
        if nq_raw > 32:
            qterms = <int32_t*>malloc(<size_t>nq_raw * sizeof(int32_t))
            if qterms == NULL:
                raise MemoryError()
            seen_terms = set()
        try:
            for term in terms:
                if not isinstance(term, str):
                    raise TypeError(f"query term must be str, got {type(term).__name__}")
                found = self._vocab.get(term)
                if found is None:
                    continue
                tid = <int32_t>found
                if seen_terms is not None:
                    if tid in seen_terms:
                        continue
                    seen_terms.add(tid)
                else:
                    seen = False
                    for i in range(nq):
                        if qterms[i] == tid:
                            seen = True
                            break
                    if seen:
                        continue
                if nq >= nq_raw:
                    raise ValueError("query terms changed length during the search")
                qterms[nq] = tid
                nq += 1
                walk += self._offsets[tid + 1] - self._offsets[tid]
            if nq == 0 or kk == 0:
                return []
            return self._run(qterms, nq, <int32_t>mm, kk, walk)
        finally:
            if qterms != small:
                free(qterms)

    cdef list _run(self, const int32_t* qterms, Py_ssize_t nq, int32_t mm, Py_ssize_t kk,
                   Py_ssize_t walk):
        cdef double* scores
        cdef int32_t* matched
        cdef int32_t* touched
        cdef Hit* hits
        cdef bint own = not self._busy
        cdef Py_ssize_t nh, i
        if own:  # checked and set under the GIL, so two threads never share the scratch
            self._busy = True
            scores, matched, touched, hits = self._scores, self._matched, self._touched, self._hits
        else:
            scores = <double*>calloc(<size_t>self._n, sizeof(double))
            matched = <int32_t*>calloc(<size_t>self._n, sizeof(int32_t))
            touched = <int32_t*>malloc(<size_t>self._n * sizeof(int32_t))
            hits = <Hit*>malloc(<size_t>self._n * sizeof(Hit))
        try:
            if scores == NULL or matched == NULL or touched == NULL or hits == NULL:
                raise MemoryError()
            if walk >= NOGIL_POSTINGS:
                with nogil:
                    nh = _score(self._offsets, self._docs, self._weights, qterms, nq, mm, kk,
                                scores, matched, touched, hits)
            else:
                nh = _score(self._offsets, self._docs, self._weights, qterms, nq, mm, kk,
                            scores, matched, touched, hits)
            return [_hit_tuple(hits[i].doc, hits[i].score, hits[i].matched) for i in range(nh)]
        finally:
            if own:
                self._busy = False
            else:
                free(scores)
                free(matched)
                free(touched)
                free(hits)


cdef class BM25FIndex(BM25Index):
    """BM25F over fielded documents, with eager scoring (compiled; see `_reference.BM25FIndex`)."""

    cdef readonly tuple field_weights
    cdef readonly tuple field_b
    cdef readonly tuple field_avgdl

    def __init__(self, documents, weights, b, k1=1.2):
        if self._busy:
            raise RuntimeError("cannot re-initialise a BM25FIndex while it is being searched")
        k1_value = check_params(k1, 0.0)[0]
        field_weights, field_b = check_fields(weights, b)
        if isinstance(documents, (str, bytes)) or not _is_sequence(documents):
            raise TypeError(f"documents must be a sequence of fielded documents, "
                            f"got {type(documents).__name__}")
        cdef Py_ssize_t n = len(documents)
        if n >= 2147483647:
            raise ValueError("too many documents for one index (at most 2**31 - 2)")
        cdef Py_ssize_t n_fields = len(field_weights)
        cdef Py_ssize_t position = 0, f, i, count, n_terms
        cdef list totals = [0] * n_fields
        cdef list field_lengths = []  # the term count of every field of every document
        cdef dict vocab = {}
        cdef list doc_terms = []
        cdef list lengths = []
        for document in documents:
            if isinstance(document, (str, bytes)) or not _is_sequence(document):
                raise TypeError(f"document {position} must be a sequence of fields, "
                                f"got {type(document).__name__}")
            if len(document) != n_fields:
                raise ValueError(f"document {position} has {len(document)} fields, "
                                 f"expected {n_fields}")
            count = 0
            for f in range(n_fields):
                n_terms = _intern_terms(document[f], position, vocab, doc_terms)
                field_lengths.append(n_terms)
                totals[f] += n_terms
                count += n_terms
            lengths.append(count)
            position += 1
        if position != n:
            raise ValueError("documents changed length while the index was built")
        averages = tuple((t / n) if n > 0 else 0.0 for t in totals)
        cdef list gains = []
        i = 0
        for position in range(n):
            for f in range(n_fields):
                count = field_lengths[i]
                i += 1
                if count:
                    gains.extend([_field_norm(field_weights[f], field_b[f], <double>count,
                                              averages[f])] * count)
        self._release()  # __init__ called again on a built index
        self._vocab = None
        self.k1, self.b = k1_value, 0.0
        self.field_weights, self.field_b, self.field_avgdl = field_weights, field_b, averages
        self._n = n
        self._n_terms = len(vocab)
        self._build(doc_terms, lengths, gains)
        self._vocab = vocab  # set last: an index whose build failed answers nothing


cdef Py_ssize_t _intern_terms(object terms, Py_ssize_t position, dict vocab,
                              list doc_terms) except -1:
    """Append the term ids of `terms` (a term sequence of document `position`) to `doc_terms`,
    giving each unseen term the next id in `vocab`; the number of terms."""
    if isinstance(terms, (str, bytes)) or not _is_sequence(terms):
        raise TypeError(f"document {position} must be a sequence of str terms, "
                        f"got {type(terms).__name__}")
    cdef Py_ssize_t count = 0
    cdef object tid
    for term in terms:
        if not isinstance(term, str):
            raise TypeError(f"document {position} has a non-string term of type "
                            f"{type(term).__name__}")
        tid = vocab.get(term)
        if tid is None:
            tid = len(vocab)
            vocab[term] = tid
        doc_terms.append(tid)
        count += 1
    return count


cdef bint _is_sequence(object value):
    return isinstance(value, (list, tuple)) or isinstance(value, _Sequence)


# =========================================================================== RRF

cdef bint _rrf_before(Py_ssize_t a, Py_ssize_t b, const double* scores, const int64_t* ranks,
                      Py_ssize_t width) noexcept nogil:
    """Item a sorts before item b: higher score, then lower rank per list (0 = missing = ∞)."""
    cdef Py_ssize_t i
    cdef int64_t ra, rb
    if scores[a] != scores[b]:
        return scores[a] > scores[b]
    for i in range(width):
        ra = ranks[a * width + i]
        rb = ranks[b * width + i]
        if ra != rb:
            if ra == 0:
                return False
            if rb == 0:
                return True
            return ra < rb
    return False


cdef void _rrf_sort(Py_ssize_t* items, Py_ssize_t* tmp, Py_ssize_t n, const double* scores,
                    const int64_t* ranks, Py_ssize_t width) noexcept nogil:
    """Bottom-up merge sort of item indexes by `_rrf_before`."""
    cdef Py_ssize_t run = 1, lo, mid, hi, i, j, o
    cdef Py_ssize_t* src = items
    cdef Py_ssize_t* dst = tmp
    cdef Py_ssize_t* swap
    while run < n:
        lo = 0
        while lo < n:
            mid = min(lo + run, n)
            hi = min(lo + 2 * run, n)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if _rrf_before(src[j], src[i], scores, ranks, width):
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
            lo = hi
        swap = src
        src = dst
        dst = swap
        run *= 2
    if src != items:
        memcpy(items, src, <size_t>n * sizeof(Py_ssize_t))


def rrf(rankings, weights=None, k=60):
    lists, ws, kk = check_rrf_args(rankings, weights, k)
    cdef Py_ssize_t width = len(lists)
    cdef Py_ssize_t total = 0, i, idx, pos, nkeys
    cdef double kd = kk
    for ranking in lists:
        total += len(ranking)
    if total == 0:
        return []
    cdef dict index = {}
    cdef list keys = []
    cdef int64_t* ranks = <int64_t*>calloc(<size_t>(total * width), sizeof(int64_t))
    cdef double* w = <double*>malloc(<size_t>width * sizeof(double))
    cdef double* scores = <double*>malloc(<size_t>total * sizeof(double))
    cdef Py_ssize_t* items = <Py_ssize_t*>malloc(<size_t>total * sizeof(Py_ssize_t))
    cdef Py_ssize_t* tmp = <Py_ssize_t*>malloc(<size_t>total * sizeof(Py_ssize_t))
    cdef double s
    try:
        if ranks == NULL or w == NULL or scores == NULL or items == NULL or tmp == NULL:
            raise MemoryError()
        for i in range(width):
            w[i] = ws[i]
        for i in range(width):
            pos = 0
            for key in lists[i]:
                pos += 1
                found = index.get(key)
                if found is None:
                    idx = len(keys)
                    if idx >= total:
                        raise ValueError("rankings changed length during fusion")
                    index[key] = idx
                    keys.append(key)
                else:
                    idx = found
                if ranks[idx * width + i] == 0:
                    ranks[idx * width + i] = pos
        nkeys = len(keys)
        with nogil:
            for idx in range(nkeys):
                s = 0.0
                for i in range(width):
                    if ranks[idx * width + i] != 0:
                        s += w[i] / (kd + <double>ranks[idx * width + i])
                scores[idx] = s
                items[idx] = idx
            _rrf_sort(items, tmp, nkeys, scores, ranks, width)
        return [(keys[items[i]], scores[items[i]]) for i in range(nkeys)]
    finally:
        free(ranks)
        free(w)
        free(scores)
        free(items)
        free(tmp)
