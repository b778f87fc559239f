"""The C allocator's arenas and free pages (glibc `mallopt` / `malloc_trim`, through `ctypes`).

Python objects of 512 bytes or less live in CPython's own arenas; everything larger, and every
native library's memory (pydantic-core, OpenSSL, httpx's sockets' buffers), comes from the C
`malloc`. glibc gives each thread that allocates while another holds an arena a heap of its own
("arena"), up to eight per core, and never frees an arena: a worker whose registry lane ran 16
GET threads for a few seconds keeps 15 of them, each holding the live blocks and the free
fragments its thread left (0.1–2 MiB each). Two helpers:

* `limit_arenas(count)` — `mallopt(M_ARENA_MAX, count)`: threads beyond `count` arenas share
  one of those instead of creating another. It holds only if set before glibc has computed its
  limit, which happens when the ninth arena is created: call it early.
* `trim()` — `malloc_trim(0)`: give back the whole free pages inside every arena (the main
  heap's top too).

Both are no-ops (False) where the C library has no such function (musl, macOS, Windows).
Figures: docs/record/performance.md, "The lexical soak worker under 55 MiB".
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

M_ARENA_MAX = -8  # spec: glibc <malloc.h>, the mallopt parameter of the arena limit
"""glibc's `mallopt` parameter number of the arena limit (`M_ARENA_MAX`)."""

_LIBC: Any = None


def _libc() -> Any:
    """The process's C library through `ctypes` (False where it cannot be loaded)."""
    global _LIBC
    if _LIBC is None:
        try:
            import ctypes

            _LIBC = ctypes.CDLL(None)
        except (OSError, ImportError):
            _LIBC = False
    return _LIBC


def _function(name: str) -> Any:
    """The C library's function `name`, or None where it has none."""
    libc = _libc()
    if not libc:
        return None
    try:
        return getattr(libc, name)
    except AttributeError:
        return None


def limit_arenas(count: int) -> bool:
    """Cap glibc's malloc arenas at `count` (`mallopt(M_ARENA_MAX, count)`); True when the C
    library took it. Arenas that exist stay; new threads share them once the cap is reached."""
    mallopt = _function("mallopt")
    if mallopt is None or count < 1:
        return False
    taken = bool(mallopt(M_ARENA_MAX, int(count)))
    if not taken:
        log.debug("mallopt(M_ARENA_MAX, %d) refused", count)
    return taken


def trim() -> bool:
    """`malloc_trim(0)`: hand the free pages of every arena back to the system; True when some
    memory was released. Walks every arena under its lock: run it off the event loop."""
    malloc_trim = _function("malloc_trim")
    if malloc_trim is None:
        return False
    return bool(malloc_trim(0))
