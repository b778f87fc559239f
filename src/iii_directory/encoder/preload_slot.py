"""The hand-over slot of the `serve` encoder preload (`search.preload` fills it,
`DenseLane.load` empties it): kept apart so the dense lane needs nothing of the preload's start
rule, and the two import no cycle. `dense_installed` lives here too, so the preload can ask it on
the event loop's thread without importing the dense lane."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

Pending = tuple[ThreadPoolExecutor, "Future[Any]"]

_pending: Pending | None = None


def dense_installed() -> bool:
    """The `dense` extra and the vendored tokenizer are present (`_rank.available`, which finds
    the modules without importing them)."""
    try:
        import _rank

        return bool(_rank.available().get("dense"))
    except Exception:  # noqa: BLE001 - a broken environment means no dense lane
        return False


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
    if not future.cancel():  # not started yet: never built; else freed once the build returns
        thread.submit(_release)  # after the build, on its thread: the heap it used goes back
    thread.shutdown(wait=False)


def _release() -> None:
    """Hand the discarded encoder's freed heap back to the OS (`_rank.dense.release_memory`,
    glibc `malloc_trim`): without it a worker configured `lexical` kept ~95 MiB of a preload it
    never used."""
    import gc

    gc.collect()
    try:
        from _rank.dense import release_memory
    except ImportError:  # pragma: no cover - no dense extra, nothing was built
        return
    release_memory()
