"""Speculative encoder preload for `iii-directory serve` (start to the first hybrid answer, and a
cold worker's first seconds under load).

A worker learns its search mode only once it has connected and read its configuration from the
engine, and `serve` spends most of its first seconds importing its surfaces. Rule: when the
`dense` extra is installed (hybrid is then the default mode) and the local configuration seed
does not say `lexical`, `start()` builds the encoder on its own thread; `serve` calls it once its
registration frames are on the socket (`worker.encoder_preload`; not when the engine's
configuration says `lexical`), because its imports (numpy,
onnxruntime, tokenizers) hold the GIL and would delay them. The session load then overlaps the
configuration's start hooks and the first calls instead of stalling the event loop while the
first callers wait; on a host that never ran hybrid the graph optimization runs in a niced child
process (`_rank.dense.build_in_child`). A cold hybrid soak (50 callers, 60 s) left the fastest
file calls' slowest first-second answers at 270–300 ms with it, against 250–491 ms without (the
lexical worker's: 177–403 ms). Until stop 27 it started only when the model's disk vector cache
existed; without the child build a cold preload stalled the loop instead.

`DenseLane.load` adopts the preloaded encoder (`take`); a worker whose configuration turns out
`lexical`, or names its own model directory, drops it (`discard`). `III_DIRECTORY_PRELOAD=0`
turns the preload off.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PRELOAD_ENV = "III_DIRECTORY_PRELOAD"

from .preload_slot import Pending, dense_installed, discard, has_pending, put, take

__all__ = ["PRELOAD_ENV", "Pending", "discard", "seed_mode", "start", "take"]


def seed_mode(config_path: str | None) -> str | None:
    """`function_search_mode` of the local YAML seed, if it names one (errors are ignored: the
    worker's own boot reports them)."""
    if not config_path:
        return None
    try:
        import yaml

        with open(config_path, encoding="utf-8") as handle:
            value = yaml.safe_load(handle)
    except Exception:  # noqa: BLE001 - an unreadable seed only means no hint
        return None
    mode = value.get("function_search_mode") if isinstance(value, dict) else None
    return mode if isinstance(mode, str) else None


def start(config_path: str | None = None, *, cache_dir: Path | None = None,
          opener: Callable[[str | None, Path], Any] | None = None,
          installed: Callable[[], bool] | None = None) -> bool:
    """Begin building the packaged encoder in the background when the rule above holds;
    returns whether a preload is pending."""
    if has_pending():
        return True
    if os.environ.get(PRELOAD_ENV, "").strip() == "0" or seed_mode(config_path) == "lexical":
        return False
    try:
        return _start(cache_dir, opener, installed)
    except Exception as exc:  # noqa: BLE001 - a failed hint only means the usual load later
        log.debug("encoder preload not started: %s", exc)
        return False


def _start(cache_dir: Path | None, opener: Callable[[str | None, Path], Any] | None,
           installed: Callable[[], bool] | None) -> bool:
    from .encoding import encoder_thread

    if not (installed or dense_installed)():
        return False
    thread = encoder_thread()
    put((thread, thread.submit(_open, cache_dir, opener)))
    return True


def _open(cache_dir: Path | None, opener: Callable[[str | None, Path], Any] | None) -> Any:
    """The preload's work, on the encoder thread: the encoder's own imports first (numpy,
    onnxruntime, tokenizers: the longest step of a warm start, `_rank.dense`), then the lane's
    modules, then the encoder. Nothing of it runs on the event loop's thread, which meanwhile
    takes the catalog and imports the search stack."""
    if opener is None:
        from _rank import dense  # noqa: F401 - imported here first, see above
    from .dense_lane import DIMENSION, model_key, open_encoder
    from .vector_cache import VectorCache, default_cache_dir

    root = cache_dir or default_cache_dir()
    cache = VectorCache(model_key(None), DIMENSION, root)
    log.debug("encoder preload started (vector cache %s, %s)", cache.path,
              "warm" if cache.path is not None and cache.path.is_file() else "cold")
    return (opener or open_encoder)(None, root)
