"""Synthetic embedding-like vectors for the VectorIndex benchmarks."""

from __future__ import annotations

import numpy as np


def clustered(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    """Unit vectors with low intrinsic dimension, like sentence embeddings: a 24-dimensional
    latent mixture of 50 clusters projected into `dim` dimensions, plus a little noise."""
    rng = np.random.default_rng(seed)
    projection = np.random.default_rng(12345).normal(size=(24, dim))
    centres = np.random.default_rng(54321).normal(size=(50, 24))
    latent = centres[rng.integers(0, 50, n)] + 0.5 * rng.normal(size=(n, 24))
    points = latent @ projection + 0.5 * rng.normal(size=(n, dim))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)
