# BM25 and BM25F of `_rank._core` (included by _core.pyx): the index build and the search entry.
# The kernels are portable C: _topk.h (weights, top-k selection, exhaustive scoring),
# _maxscore.h (pruned top-k), _bounds.h (tiers, blocks, depth bounds); the layout and the
# pruning are described in docs/rank-at-scale.md.

from libc.stdint cimport uint16_t
from libc.stdlib cimport realloc

cdef extern from "_maxscore.h" nogil:
    ctypedef struct RkHit:
        double score
        int32_t doc
        int32_t matched
    ctypedef struct RkIndex:
        const int64_t* offsets
        const int32_t* docs
        const double* weights
        const uint16_t* tf
        const double* idf
        const double* knorm
        double k1p1
        const int64_t* blk_off
        const int32_t* blk_last
        const double* blk_max
        const double* term_max
        const int64_t* kth_off
        const double* kth
    double rk_weight(const RkIndex* ix, int32_t term, int64_t p)
    Py_ssize_t rk_score_all(const RkIndex* ix, const int32_t* qterms, Py_ssize_t nq,
                            int32_t min_matched, Py_ssize_t k, double* scores, int32_t* matched,
                            int32_t* touched, RkHit* hits)
    Py_ssize_t rk_top_k(const RkIndex* ix, const int32_t* qterms, Py_ssize_t nq, int32_t mm,
                        Py_ssize_t k, RkHit* hits)

cdef extern from "_bounds.h" nogil:
    ctypedef struct RkBounds:
        int64_t* blk_off
        int64_t* kth_off
    void rk_bounds_free(RkBounds* b)
    int rk_build_bounds(RkIndex* ix, int64_t n_terms, RkBounds* b)

# A top-k query is pruned (rk_top_k) when k is at most PRUNE_MAX_K and its terms hold at least
# `_prune_postings` postings; a shorter walk is summed exhaustively, which is cheaper there.
cdef Py_ssize_t PRUNE_MAX_K = 1024
cdef Py_ssize_t _prune_postings = 16384
# Postings store a 16-bit term frequency (6 bytes with the document id; the weight is formed at
# query time) from `_compact_postings` postings on, where memory counts; below, and for a
# frequency past 16 bits, every weight is stored (12 bytes), which is faster to sum.
cdef uint16_t TF_MAX = 65535
cdef int64_t _compact_postings = 1 << 22


def _set_compact_postings(int64_t postings):
    """Set the postings count from which an index stores compact term frequencies; returns the
    previous value (tests use 0 to build every index compact)."""
    global _compact_postings
    previous = _compact_postings
    _compact_postings = max(0, postings)
    return previous


def _set_prune_postings(Py_ssize_t postings):
    """Set the walk from which top-k queries are pruned; returns the previous value (tests use
    0 to run the pruned path on every query)."""
    global _prune_postings
    previous = _prune_postings
    _prune_postings = max(0, postings)
    return previous


cdef inline double _idf(double n_docs, double df) noexcept nogil:
    """`ln((N - df + 0.5) / (df + 0.5) + 1)` — see `_reference.idf`."""
    return log((n_docs - df + 0.5) / (df + 0.5) + 1.0)


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


cdef extern from "Python.h":
    object PyTuple_Pack(Py_ssize_t n, object a, object b, object c)


cdef inline object _hit_tuple(int32_t doc, double score, int32_t matched):
    # one stable-ABI call instead of PyTuple_New plus three PyTuple_SetItem calls
    return PyTuple_Pack(3, doc, score, matched)


cdef class BM25Index:
    """Okapi BM25 over pre-tokenized documents (compiled; see `_reference.BM25Index`)."""

    cdef readonly double k1
    cdef readonly double b
    cdef readonly double avgdl
    cdef dict _vocab
    cdef Py_ssize_t _n
    cdef Py_ssize_t _n_terms
    cdef RkIndex _ix  # read-only views of the arrays below, for the C kernels
    cdef int64_t* _offsets
    cdef int32_t* _docs
    cdef double* _weights
    cdef uint16_t* _tf
    cdef double* _idf
    cdef double* _knorm
    cdef RkBounds _bounds
    # the exhaustive path's scratch (n entries each), allocated by its first query
    cdef double* _scores
    cdef int32_t* _matched
    cdef int32_t* _touched
    cdef RkHit* _hits
    cdef bint _scratch_busy
    cdef Py_ssize_t _active  # searches running; a rebuild waits for none

    def __cinit__(self):
        self._n = 0
        self._n_terms = 0
        self._active = 0
        self._scratch_busy = False
        self._clear_pointers()

    def __dealloc__(self):
        self._release()

    cdef void _clear_pointers(self) noexcept:
        self._offsets = NULL
        self._docs = NULL
        self._weights = NULL
        self._tf = NULL
        self._idf = NULL
        self._knorm = NULL
        memset(&self._bounds, 0, sizeof(RkBounds))
        self._scores = NULL
        self._matched = NULL
        self._touched = NULL
        self._hits = NULL
        memset(&self._ix, 0, sizeof(RkIndex))

    cdef void _release(self) noexcept:
        free(self._offsets)
        free(self._docs)
        free(self._weights)
        free(self._tf)
        free(self._idf)
        free(self._knorm)
        rk_bounds_free(&self._bounds)
        free(self._scores)
        free(self._matched)
        free(self._touched)
        free(self._hits)
        self._clear_pointers()

    cdef int _check_idle(self) except -1:
        if self._active:
            raise RuntimeError(f"cannot re-initialise a {type(self).__name__} while it is "
                               f"being searched")
        return 0

    def __init__(self, documents, k1=1.2, b=0.75):
        self._check_idle()
        k1_value, b_value = check_params(k1, b)
        if isinstance(documents, (str, bytes)) or not _is_sequence(documents):
            raise TypeError(
                f"documents must be a sequence of term sequences, got {type(documents).__name__}")
        cdef Py_ssize_t n = len(documents)
        if n >= 2147483647:
            raise ValueError("too many documents for one index (at most 2**31 - 2)")
        cdef dict vocab = {}
        cdef _Ids ids = _Ids(NULL, 0, 0)  # the term ids of every document, concatenated
        cdef int64_t* doc_start = <int64_t*>malloc(<size_t>(n + 1) * sizeof(int64_t))
        cdef Py_ssize_t position = 0
        try:
            if doc_start == NULL:
                raise MemoryError()
            doc_start[0] = 0
            for document in documents:
                if position >= n:
                    raise ValueError("documents changed length while the index was built")
                doc_start[position + 1] = doc_start[position] + _intern_terms(
                    document, position, vocab, &ids)
                position += 1
            if position != n:
                raise ValueError("documents changed length while the index was built")
            self._release()  # __init__ called again on a built index
            self._vocab = None
            self.k1, self.b = k1_value, b_value
            self._n = n
            self._n_terms = len(vocab)
            self._build(ids.data, doc_start, NULL)
        finally:
            free(ids.data)
            free(doc_start)
        self._vocab = vocab  # set last: an index whose build failed answers nothing

    cdef int _build(self, const int32_t* terms, const int64_t* doc_start,
                    const double* gain) except -1:
        """Postings in document order with their term frequencies (a 16-bit count; with `gain`,
        BM25F's per-occurrence `w_f / norm_f`, or a count above 65535: stored weights), then
        the per-block bounds."""
        cdef Py_ssize_t n = self._n, n_terms = self._n_terms
        cdef int64_t total
        cdef double* tfs = NULL
        cdef bint overflow = False
        cdef int32_t* last = <int32_t*>malloc(<size_t>max(n_terms, 1) * sizeof(int32_t))
        cdef int64_t* fill = <int64_t*>malloc(<size_t>max(n_terms, 1) * sizeof(int64_t))
        try:
            self.avgdl = (<double>doc_start[n] / <double>n) if n > 0 else 0.0
            self._offsets = <int64_t*>calloc(<size_t>(n_terms + 1), sizeof(int64_t))
            if self._offsets == NULL or last == NULL or fill == NULL:
                raise MemoryError()
            with nogil:
                _count_postings(terms, doc_start, n, n_terms, self._offsets, last)
            total = self._offsets[n_terms]
            self._docs = <int32_t*>malloc(<size_t>max(total, 1) * sizeof(int32_t))
            if self._docs == NULL:
                raise MemoryError()
            if gain == NULL and total >= _compact_postings:
                self._tf = <uint16_t*>calloc(<size_t>max(total, 1), sizeof(uint16_t))
                if self._tf == NULL:
                    raise MemoryError()
                with nogil:
                    overflow = _fill_counts(terms, doc_start, n, n_terms, self._offsets,
                                            self._docs, self._tf, last, fill)
            if self._tf == NULL or overflow:
                free(self._tf)
                self._tf = NULL
                tfs = <double*>calloc(<size_t>max(total, 1), sizeof(double))
                if tfs == NULL:
                    raise MemoryError()
                with nogil:
                    _fill_gains(terms, doc_start, gain, n, n_terms, self._offsets, self._docs,
                                tfs, last, fill)
            self._weigh(doc_start, tfs, gain != NULL)
        finally:
            free(tfs)
            free(last)
            free(fill)
        self._bound_blocks()
        return 0

    cdef int _weigh(self, const int64_t* doc_start, const double* tfs, bint fielded) except -1:
        """Per-term IDF; with counts, each document's `k1·(1 − b + b·dl/avgdl)` (the weight is
        formed at query time), else every posting's weight."""
        cdef Py_ssize_t n = self._n, n_terms = self._n_terms, t, d
        cdef int64_t p
        cdef double term_idf, dl, avgdl = self.avgdl, k1 = self.k1, b = self.b
        self._idf = <double*>malloc(<size_t>max(n_terms, 1) * sizeof(double))
        if self._idf == NULL:
            raise MemoryError()
        for t in range(n_terms):
            self._idf[t] = _idf(<double>n, <double>(self._offsets[t + 1] - self._offsets[t]))
        if self._tf != NULL:
            self._knorm = <double*>malloc(<size_t>max(n, 1) * sizeof(double))
            if self._knorm == NULL:
                raise MemoryError()
            for d in range(n):
                dl = <double>(doc_start[d + 1] - doc_start[d])
                self._knorm[d] = k1 * (1.0 - b + b * dl / avgdl) if avgdl > 0.0 else k1
            return 0
        self._weights = <double*>malloc(<size_t>max(self._offsets[n_terms], 1) * sizeof(double))
        if self._weights == NULL:
            raise MemoryError()
        with nogil:
            for t in range(n_terms):
                term_idf = self._idf[t]
                for p in range(self._offsets[t], self._offsets[t + 1]):
                    if fielded:
                        self._weights[p] = _saturate(term_idf, tfs[p], k1)
                    else:
                        dl = <double>(doc_start[self._docs[p] + 1] - doc_start[self._docs[p]])
                        self._weights[p] = term_idf * (tfs[p] * (k1 + 1.0)) / (
                            tfs[p] + k1 * (1.0 - b + b * dl / avgdl))
        return 0

    cdef int _bound_blocks(self) except -1:
        """The pruned path's bounds (_bounds.h): blocks, term maxima and depth bounds."""
        cdef int failed
        self._ix.offsets = self._offsets
        self._ix.docs = self._docs
        self._ix.weights = self._weights
        self._ix.tf = self._tf
        self._ix.idf = self._idf
        self._ix.knorm = self._knorm
        self._ix.k1p1 = self.k1 + 1.0
        with nogil:
            failed = rk_build_bounds(&self._ix, self._n_terms, &self._bounds)
        if failed:
            raise MemoryError()
        return 0

    def __len__(self):
        return self._n

    @property
    def vocabulary_size(self):
        """Number of distinct terms in the corpus."""
        return self._n_terms

    def _footprint(self):
        """{"postings": (term, document) pairs stored, "bytes": the index's C arrays (postings,
        bounds, per-term and per-document arrays, the exhaustive path's scratch once allocated);
        the vocabulary dict is not counted} — for benchmarks."""
        cdef int64_t total = self._offsets[self._n_terms] if self._offsets != NULL else 0
        cdef int64_t blocks = 0, levels = 0, size
        if self._bounds.blk_off != NULL:
            blocks = self._bounds.blk_off[self._n_terms]
            levels = self._bounds.kth_off[self._n_terms]
        size = total * (4 + (8 if self._weights != NULL else 2))  # docs, tf or weights
        size += (self._n_terms + 1) * 8 * 5  # offsets, idf, blk_off, term_max, kth_off
        size += blocks * 16 + levels * 8  # blocks: last document, largest weight, density
        if self._knorm != NULL:
            size += self._n * 8
        if self._scores != NULL:
            size += self._n * (8 + 4 + 4 + sizeof(RkHit))
        return {"postings": total, "bytes": size}

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
            if nq == 0 or kk == 0 or mm > nq:
                return []
            self._active += 1  # under the GIL: a rebuild refuses while any search runs
            try:
                if 0 < kk <= PRUNE_MAX_K and walk >= _prune_postings:
                    return self._run_top_k(qterms, nq, <int32_t>mm, kk, walk)
                return self._run_all(qterms, nq, <int32_t>mm, kk, walk)
            finally:
                self._active -= 1
        finally:
            if qterms != small:
                free(qterms)

    cdef list _run_top_k(self, const int32_t* qterms, Py_ssize_t nq, int32_t mm, Py_ssize_t kk,
                         Py_ssize_t walk):
        """Pruned top-k: per-call memory only, so concurrent searches share nothing."""
        cdef RkHit* hits = <RkHit*>malloc(<size_t>kk * sizeof(RkHit))
        cdef Py_ssize_t nh, i
        if hits == NULL:
            raise MemoryError()
        try:
            if walk >= NOGIL_POSTINGS:
                with nogil:
                    nh = rk_top_k(&self._ix, qterms, nq, mm, kk, hits)
            else:
                nh = rk_top_k(&self._ix, qterms, nq, mm, kk, hits)
            if nh < 0:
                raise MemoryError()
            return [_hit_tuple(hits[i].doc, hits[i].score, hits[i].matched) for i in range(nh)]
        finally:
            free(hits)

    cdef list _run_all(self, const int32_t* qterms, Py_ssize_t nq, int32_t mm, Py_ssize_t kk,
                       Py_ssize_t walk):
        """Exhaustive scoring into n-sized scratch: the index's own (allocated on first use) or,
        while another search holds it, this call's."""
        cdef double* scores
        cdef int32_t* matched
        cdef int32_t* touched
        cdef RkHit* hits
        cdef bint own = not self._scratch_busy
        cdef Py_ssize_t nh, i, n = max(self._n, 1)
        if own:  # checked and set under the GIL, so two threads never share the scratch
            if self._scores == NULL:
                self._scores = <double*>calloc(<size_t>n, sizeof(double))
                self._matched = <int32_t*>calloc(<size_t>n, sizeof(int32_t))
                self._touched = <int32_t*>malloc(<size_t>n * sizeof(int32_t))
                self._hits = <RkHit*>malloc(<size_t>n * sizeof(RkHit))
                if (self._scores == NULL or self._matched == NULL or self._touched == NULL
                        or self._hits == NULL):
                    free(self._scores)
                    free(self._matched)
                    free(self._touched)
                    free(self._hits)
                    self._scores = self._matched = NULL
                    self._touched = NULL
                    self._hits = NULL
                    raise MemoryError()
            self._scratch_busy = True
            scores, matched, touched, hits = self._scores, self._matched, self._touched, self._hits
        else:
            scores = <double*>calloc(<size_t>n, sizeof(double))
            matched = <int32_t*>calloc(<size_t>n, sizeof(int32_t))
            touched = <int32_t*>malloc(<size_t>n * sizeof(int32_t))
            hits = <RkHit*>malloc(<size_t>n * sizeof(RkHit))
        try:
            if scores == NULL or matched == NULL or touched == NULL or hits == NULL:
                raise MemoryError()
            if walk >= NOGIL_POSTINGS:
                with nogil:
                    nh = rk_score_all(&self._ix, qterms, nq, mm, kk, scores, matched, touched,
                                      hits)
            else:
                nh = rk_score_all(&self._ix, qterms, nq, mm, kk, scores, matched, touched, hits)
            return [_hit_tuple(hits[i].doc, hits[i].score, hits[i].matched) for i in range(nh)]
        finally:
            if own:
                self._scratch_busy = False
            else:
                free(scores)
                free(matched)
                free(touched)
                free(hits)


cdef class BM25FIndex(BM25Index):
    """BM25F over fielded documents (compiled; see `_reference.BM25FIndex`)."""

    cdef readonly tuple field_weights
    cdef readonly tuple field_b
    cdef readonly tuple field_avgdl

    def __init__(self, documents, weights, b, k1=1.2):
        self._check_idle()
        k1_value = check_params(k1, 0.0)[0]
        field_weights, field_b = check_fields(weights, b)
        if isinstance(documents, (str, bytes)) or not _is_sequence(documents):
            raise TypeError(f"documents must be a sequence of fielded documents, "
                            f"got {type(documents).__name__}")
        cdef Py_ssize_t n = len(documents)
        if n >= 2147483647:
            raise ValueError("too many documents for one index (at most 2**31 - 2)")
        cdef Py_ssize_t n_fields = len(field_weights)
        cdef Py_ssize_t position = 0, f, i, j, count, start
        cdef list totals = [0] * n_fields
        cdef list field_lengths = []  # the term count of every field of every document
        cdef dict vocab = {}
        cdef _Ids ids = _Ids(NULL, 0, 0)
        cdef int64_t* doc_start = <int64_t*>malloc(<size_t>(n + 1) * sizeof(int64_t))
        cdef double* gain = NULL
        cdef double norm
        try:
            if doc_start == NULL:
                raise MemoryError()
            doc_start[0] = 0
            for document in documents:
                if isinstance(document, (str, bytes)) or not _is_sequence(document):
                    raise TypeError(f"document {position} must be a sequence of fields, "
                                    f"got {type(document).__name__}")
                if len(document) != n_fields:
                    raise ValueError(f"document {position} has {len(document)} fields, "
                                     f"expected {n_fields}")
                if position >= n:
                    raise ValueError("documents changed length while the index was built")
                for f in range(n_fields):
                    count = _intern_terms(document[f], position, vocab, &ids)
                    field_lengths.append(count)
                    totals[f] += count
                doc_start[position + 1] = ids.n
                position += 1
            if position != n:
                raise ValueError("documents changed length while the index was built")
            averages = tuple((t / n) if n > 0 else 0.0 for t in totals)
            gain = <double*>malloc(<size_t>max(ids.n, 1) * sizeof(double))
            if gain == NULL:
                raise MemoryError()
            i = start = 0
            for position in range(n):
                for f in range(n_fields):
                    count = field_lengths[i]
                    i += 1
                    norm = _field_norm(field_weights[f], field_b[f], <double>count, averages[f])
                    for j in range(start, start + count):
                        gain[j] = norm
                    start += count
            self._release()  # __init__ called again on a built index
            self._vocab = None
            self.k1, self.b = k1_value, 0.0
            self.field_weights, self.field_b, self.field_avgdl = field_weights, field_b, averages
            self._n = n
            self._n_terms = len(vocab)
            self._build(ids.data, doc_start, gain)
        finally:
            free(ids.data)
            free(doc_start)
            free(gain)
        self._vocab = vocab  # set last: an index whose build failed answers nothing


include "_postings.pxi"
