"""Search slots: how many `directory::search_functions` calls do their work at once.

Rule: a call holds one of `count` slots (default 4, `$III_DIRECTORY_SEARCH_SLOTS`) from the end
of its catalog wait to its response. A call that finds every slot taken waits its turn, first
come first served, for at most `wait_s` (default 30 s, the protocol's default client-side call
timeout, docs/rules/protocol.md §5, "Timeouts"), then fails with code `TIMEOUT` without doing any search work:
its caller has most likely given up, and the work would only delay the calls behind it.

Why: every search shares one interpreter with the file-backed functions (skills, prompts,
agents). Fifty concurrent searches interleave at each await, so each one and every file call
between them waits for all fifty; four at a time finish sooner, one after another, and a file
call waits for at most four. A judge-backed call spends its time awaiting the judge worker, not
the interpreter, and takes no slot (`SearchService._search`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from ..errors import DirectoryError

log = logging.getLogger(__name__)

SLOTS_ENV = "III_DIRECTORY_SEARCH_SLOTS"
DEFAULT_SLOTS = 4  # chosen: a file call waits for at most four searches (module docstring)
MAX_SLOTS = 256  # chosen: bounds a configured value
DEFAULT_WAIT_S = 30.0  # chosen, our change (docs/rules/search.md §15): the wait for a slot


def configured_slots(environ: dict[str, str] | None = None) -> int:
    """`$III_DIRECTORY_SEARCH_SLOTS` as an integer in 1..256; anything else (unset, not a number,
    out of range) gives the default 4, with a warning when it was set."""
    raw = (os.environ if environ is None else environ).get(SLOTS_ENV, "").strip()
    if not raw:
        return DEFAULT_SLOTS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_SLOTS:
        log.warning("%s=%r is not an integer in 1..%d; using %d", SLOTS_ENV, raw, MAX_SLOTS,
                    DEFAULT_SLOTS)
        return DEFAULT_SLOTS
    return value


class SearchSlots:
    """`count` slots handed out first come first served; `hold()` is one call's tenure."""

    def __init__(self, count: int = DEFAULT_SLOTS, wait_s: float = DEFAULT_WAIT_S) -> None:
        if count < 1:
            raise ValueError("count must be at least 1")
        self.count = count
        self.wait_s = wait_s
        self.waiting = 0
        """Calls queued for a slot now."""
        self.peak = 0
        """The most slots held at once so far."""
        self.queued = 0
        """Calls so far that found every slot taken and had to queue."""
        self._limiter = anyio.CapacityLimiter(count)

    @property
    def busy(self) -> int:
        """Slots held now."""
        return int(self._limiter.borrowed_tokens)

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Take a slot for the body; raise DirectoryError `TIMEOUT` when none frees up within
        `wait_s`. A free slot is taken without yielding to the event loop."""
        owner = object()
        try:
            self._limiter.acquire_on_behalf_of_nowait(owner)
        except anyio.WouldBlock:
            self.waiting += 1
            self.queued += 1
            try:
                with anyio.fail_after(self.wait_s):
                    await self._limiter.acquire_on_behalf_of(owner)
            except TimeoutError:
                raise DirectoryError(
                    "TIMEOUT",
                    f"directory::search_functions: all {self.count} search slots stayed busy "
                    f"for {self.wait_s:g} s; retry later") from None
            finally:
                self.waiting -= 1
        self.peak = max(self.peak, self.busy)
        try:
            yield
        finally:
            self._limiter.release_on_behalf_of(owner)
