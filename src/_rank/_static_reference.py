"""Plain-Python reference of the static lane's two kernels (`_rank._static` compiles them).

Both work on flat buffers, never numpy: the int8 table is a memoryview of format `b`
(`rows × dims`, row-major), scales and vectors are `array.array("f")`. Sums run in double
precision in index order, so the compiled kernels (built with `-ffp-contract=off`) give the
same bits; the property tests hold the two to the same top-12 and scores within 1e-6.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

__all__ = ["cosine_top", "encode_ids"]

COMPLETE = True


def encode_ids(table: Sequence[int], scales: Sequence[float], dims: int, ids: Sequence[int],
               out: array) -> bool:
    """Write the L2-normalised sum of the table rows of `ids` into `out` (`dims` float32s).

    Row `i` is `table[i·dims : (i+1)·dims] · scales[i]` (its Zipf/SIF weight is baked in), so
    the sum is the weighted mean up to a positive factor, which the normalisation removes:
    `v = Σ_t row(ids[t])`, `out = v / ‖v‖₂`. Returns False (and writes zeros) when `v` is the
    zero vector — no id, or only rows that are zero ([UNK], specials).
    """
    acc = [0.0] * dims
    for piece in ids:
        scale = scales[piece]
        if scale == 0.0:
            continue
        base = piece * dims
        for d in range(dims):
            acc[d] += table[base + d] * scale
    norm = 0.0
    for d in range(dims):
        norm += acc[d] * acc[d]
    if norm == 0.0:
        for d in range(dims):
            out[d] = 0.0
        return False
    norm = math.sqrt(norm)
    for d in range(dims):
        out[d] = acc[d] / norm
    return True


def dot(matrix: Sequence[float], base: int, query: Sequence[float], dims: int) -> float:
    """`Σ_d matrix[base + d]·query[d]` in double over eight partial sums `s[d mod 8]`, combined
    as `((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7))` (the compiled kernel's order)."""
    s = [0.0] * 8
    for d in range(dims):
        s[d & 7] += matrix[base + d] * query[d]
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))


def cosine_top(matrix: Sequence[float], query: Sequence[float], dims: int,
               k: int) -> list[tuple[int, float]]:
    """Inner products (`dot`) of `query` with each `dims`-wide row of `matrix` (unit rows: cosines),
    the best `k` as `(row, score)` sorted by score descending, then row ascending."""
    n = len(matrix) // dims
    scores: list[tuple[float, int]] = []
    for row in range(n):
        scores.append((-dot(matrix, row * dims, query, dims), row))
    scores.sort()
    return [(row, -negative) for negative, row in scores[: max(0, k)]]
