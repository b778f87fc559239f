# Building the postings of `_rank._core` (included by _bm25.pxi): term ids streamed into a C
# array, document frequencies, and the postings with their counts or summed gains.

cdef struct _Ids:
    int32_t* data
    Py_ssize_t n
    Py_ssize_t cap


cdef int _ids_push(_Ids* ids, int32_t value) except -1:
    """Append to a growing C array (doubling), so a corpus's term ids never become a list."""
    cdef int32_t* grown
    if ids.n == ids.cap:
        grown = <int32_t*>realloc(ids.data, <size_t>max(1024, 2 * ids.cap) * sizeof(int32_t))
        if grown == NULL:
            raise MemoryError()
        ids.data = grown
        ids.cap = max(1024, 2 * ids.cap)
    ids.data[ids.n] = value
    ids.n += 1
    return 0


cdef Py_ssize_t _intern_terms(object terms, Py_ssize_t position, dict vocab,
                              _Ids* ids) except -1:
    """Append the term ids of `terms` (a term sequence of document `position`) to `ids`, giving
    each unseen term the next id in `vocab`; the number of terms."""
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
        _ids_push(ids, <int32_t>tid)
        count += 1
    return count


cdef bint _is_sequence(object value):
    return isinstance(value, (list, tuple)) or isinstance(value, _Sequence)


cdef void _count_postings(const int32_t* terms, const int64_t* doc_start, Py_ssize_t n,
                          Py_ssize_t n_terms, int64_t* offsets, int32_t* last) noexcept nogil:
    """offsets[t + 1] = offsets[t] + df(t), each term counted once per document (offsets starts
    zeroed; `last` is scratch of n_terms entries)."""
    cdef Py_ssize_t d, t
    cdef int64_t p
    for t in range(n_terms):
        last[t] = -1
    for d in range(n):
        for p in range(doc_start[d], doc_start[d + 1]):
            t = terms[p]
            if last[t] != d:
                last[t] = <int32_t>d
                offsets[t + 1] += 1
    for t in range(n_terms):
        offsets[t + 1] += offsets[t]


cdef bint _fill_counts(const int32_t* terms, const int64_t* doc_start, Py_ssize_t n,
                       Py_ssize_t n_terms, const int64_t* offsets, int32_t* docs, uint16_t* tf,
                       int32_t* last, int64_t* fill) noexcept nogil:
    """Postings in document order with 16-bit term frequencies (tf starts zeroed); True when a
    frequency does not fit (the caller then stores weights)."""
    cdef Py_ssize_t d, t
    cdef int64_t p
    for t in range(n_terms):
        last[t] = -1
        fill[t] = offsets[t]
    for d in range(n):
        for p in range(doc_start[d], doc_start[d + 1]):
            t = terms[p]
            if last[t] != d:
                last[t] = <int32_t>d
                docs[fill[t]] = <int32_t>d
                fill[t] += 1
            if tf[fill[t] - 1] == TF_MAX:
                return True
            tf[fill[t] - 1] += 1
    return False


cdef void _fill_gains(const int32_t* terms, const int64_t* doc_start, const double* gain,
                      Py_ssize_t n, Py_ssize_t n_terms, const int64_t* offsets, int32_t* docs,
                      double* tfs, int32_t* last, int64_t* fill) noexcept nogil:
    """Postings in document order with summed gains (1 per occurrence without `gain`; tfs
    starts zeroed)."""
    cdef Py_ssize_t d, t
    cdef int64_t p
    for t in range(n_terms):
        last[t] = -1
        fill[t] = offsets[t]
    for d in range(n):
        for p in range(doc_start[d], doc_start[d + 1]):
            t = terms[p]
            if last[t] != d:
                last[t] = <int32_t>d
                docs[fill[t]] = <int32_t>d
                fill[t] += 1
            tfs[fill[t] - 1] += gain[p] if gain != NULL else 1.0
