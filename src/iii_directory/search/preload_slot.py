"""The hand-over slot of the `serve` encoder preload (`search.preload` fills it,
`DenseLane.load` empties it): kept apart so the dense lane needs nothing of the preload's start
rule, and the two import no cycle."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

Pending = tuple[ThreadPoolExecutor, "Future[Any]"]

_pending: Pending | None = None


def has_pending() -> bool:
    return _pending is not None


def put(pending: Pending) -> None:
    global _pending
    _pending = pending


def take(model_dir: str | None) -> Pending | None:
    """The pending preload for the packaged model (`model_dir` None), handed over once; a
    preload for any other model directory is discarded."""
    global _pending
    if model_dir is not None:
        discard()
        return None
    pending, _pending = _pending, None
    return pending


def discard() -> None:
    """Drop a pending preload: its thread ends once the build finishes, and the encoder (no
    longer referenced) is freed with the future."""
    global _pending
    pending, _pending = _pending, None
    if pending is None:
        return
    thread, future = pending
    future.cancel()  # not started yet: never built; else it is freed once the build returns
    thread.shutdown(wait=False)
