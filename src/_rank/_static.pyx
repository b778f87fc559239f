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


cdef inline double _dot(const float* m, const float* q, Py_ssize_t dims) noexcept nogil:
    """`Σ_d m[d]·q[d]` in double over eight interleaved partial sums (`d mod 8`), combined as
    `((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7))` — the reference's order, and independent chains the
    CPU can overlap."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0
    cdef double rest[8]
    cdef Py_ssize_t d = 0, whole = dims - dims % 8, j
    while d < whole:
        s0 += <double>m[d] * <double>q[d]
        s1 += <double>m[d + 1] * <double>q[d + 1]
        s2 += <double>m[d + 2] * <double>q[d + 2]
        s3 += <double>m[d + 3] * <double>q[d + 3]
        s4 += <double>m[d + 4] * <double>q[d + 4]
        s5 += <double>m[d + 5] * <double>q[d + 5]
        s6 += <double>m[d + 6] * <double>q[d + 6]
        s7 += <double>m[d + 7] * <double>q[d + 7]
        d += 8
    rest[0] = s0
    rest[1] = s1
    rest[2] = s2
    rest[3] = s3
    rest[4] = s4
    rest[5] = s5
    rest[6] = s6
    rest[7] = s7
    for j in range(whole, dims):
        rest[j - whole] += <double>m[j] * <double>q[j]
    return ((rest[0] + rest[1]) + (rest[2] + rest[3])) + ((rest[4] + rest[5]) + (rest[6] + rest[7]))


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
                c.score = _dot(&matrix[base], &query[0], dims)
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
