# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled kernels of the static lane (`_rank.static`): table rows → a unit vector, and cosine
top-k over stored unit vectors.

Typed memoryviews over the table (int8, format `b`) and `array.array("f")` buffers; no numpy.
The maths mirror `_rank._static_reference` exactly (double sums in index order, no fused
multiply-add: the extension is built with `-ffp-contract=off`).
"""

from libc.math cimport sqrt
from libc.stdlib cimport free, malloc

#: Marks a complete build (the dispatcher ignores placeholder builds without it).
COMPLETE = True


ctypedef struct Scored:
    double score
    Py_ssize_t row


cdef inline bint _worse(const Scored* a, const Scored* b) noexcept nogil:
    """a ranks after b: lower score, or the same score and a higher row."""
    return a.score < b.score or (a.score == b.score and a.row > b.row)


def encode_ids(const signed char[:] table, const float[:] scales, Py_ssize_t dims,
               const int[:] ids, float[:] out):
    cdef Py_ssize_t n = ids.shape[0]
    cdef Py_ssize_t t, d, base
    cdef int piece
    cdef double scale, norm = 0.0
    if out.shape[0] < dims:
        raise ValueError(f"out holds {out.shape[0]} values, need {dims}")
    cdef Py_ssize_t rows = scales.shape[0]
    for t in range(n):
        if ids[t] < 0 or ids[t] >= rows:
            raise IndexError(f"piece id {ids[t]} outside the table (0..{rows - 1})")
    cdef double* acc = <double*>malloc(<size_t>dims * sizeof(double))
    if acc == NULL:
        raise MemoryError()
    try:
        with nogil:
            for d in range(dims):
                acc[d] = 0.0
            for t in range(n):
                piece = ids[t]
                scale = <double>scales[piece]
                if scale == 0.0:
                    continue
                base = <Py_ssize_t>piece * dims
                for d in range(dims):
                    acc[d] += <double>table[base + d] * scale
            for d in range(dims):
                norm += acc[d] * acc[d]
            if norm != 0.0:
                norm = sqrt(norm)
                for d in range(dims):
                    out[d] = <float>(acc[d] / norm)
            else:
                for d in range(dims):
                    out[d] = 0.0
    finally:
        free(acc)
    return norm != 0.0


def cosine_top(const float[:] matrix, const float[:] query, Py_ssize_t dims, Py_ssize_t k):
    if dims <= 0:
        raise ValueError("dims must be > 0")
    if query.shape[0] < dims:
        raise ValueError(f"query holds {query.shape[0]} values, need {dims}")
    cdef Py_ssize_t n = matrix.shape[0] // dims
    cdef Py_ssize_t row, d, base, j, nh = 0
    cdef double total
    cdef Scored c
    if k > n:
        k = n
    if k <= 0:
        return []
    cdef Scored* hits = <Scored*>malloc(<size_t>k * sizeof(Scored))
    if hits == NULL:
        raise MemoryError()
    try:
        with nogil:
            for row in range(n):
                base = row * dims
                total = 0.0
                for d in range(dims):
                    total += <double>matrix[base + d] * <double>query[d]
                c.score = total
                c.row = row
                # keep hits[:nh] sorted best first; insert a better candidate
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
        return [(hits[j].row, hits[j].score) for j in range(nh)]
    finally:
        free(hits)
