"""Exact cosine top-k over stored unit vectors, and the (score, id) ordering `_rank.dense.VectorIndex` uses."""

from __future__ import annotations

import numpy as np

#: queries scored per matrix product in exact search (bounds the (queries × n) score matrix)
_QUERY_BLOCK = 64


def _exact_top(vectors: np.ndarray, queries: np.ndarray, take: int) -> tuple[np.ndarray, np.ndarray]:
    """Brute force: one matrix product, then per row every vector scoring at least the
    `take`-th best (ties at the cut included), ordered and cut to `take`."""
    # einsum runs single-threaded numpy loops: a BLAS product would wake every BLAS thread for a
    # matrix-vector sized job, which on a busy 2-core host costs more than it saves
    similarity = np.einsum("qd,nd->qn", queries, vectors)
    n = similarity.shape[1]
    ids = np.empty((queries.shape[0], take), dtype=np.int64)
    scores = np.empty((queries.shape[0], take), dtype=np.float32)
    for r in range(similarity.shape[0]):
        row = similarity[r]
        if take < n:
            kth = np.partition(row, n - take)[n - take]
            candidates = np.flatnonzero(row >= kth)
        else:
            candidates = np.arange(n)
        order = np.lexsort((candidates, -row[candidates]))[:take]
        ids[r] = candidates[order]
        scores[r] = row[candidates[order]]
    return ids, scores


def _order(ids: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort each row by score descending, then id ascending."""
    order = np.lexsort((ids, -scores), axis=-1)
    return np.take_along_axis(ids, order, axis=1), np.take_along_axis(scores, order, axis=1)
