# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of `_rank`: the term pipeline, BM25 and BM25F with pruned top-k, weighted RRF.

Built for the CPython stable ABI (Py_LIMITED_API 3.11). Postings live in C arrays (malloc), not
numpy, so the core builds where numpy does not exist; BM25 is in _bm25.pxi and _postings.pxi,
its kernels in portable C headers (_topk.h, _maxscore.h, _bounds.h). The maths mirror
`_rank._reference` exactly (same formulas, same summation order), and tests hold the two to the
same answers (docs/rank-at-scale.md).
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

include "_bm25.pxi"


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
