"""Hand a process's freed heap pages back to the OS; re-exported by `_rank.dense`."""

from __future__ import annotations

from typing import Any

RELEASE_AFTER_TOKENS = 256
"""Padded tokens of a batch from which `Encoder.encode` releases freed memory afterwards."""


def release_memory() -> bool:
    """Hand the heap's freed pages back to the OS: glibc `malloc_trim(0)`. onnxruntime frees
    a batch's activations to the C allocator, which otherwise keeps the peak resident. A no-op
    (False) where the C library has no `malloc_trim` (musl, macOS, Windows)."""
    global _TRIM
    if _TRIM is None:
        try:
            import ctypes

            _TRIM = ctypes.CDLL(None).malloc_trim
            _TRIM.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM is False:
        return False
    _TRIM(0)
    return True


_TRIM: Any = None
