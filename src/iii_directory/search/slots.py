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

Heavy calls: a call whose capabilities hold more than `HEAVY_CHARS` characters in all (18
maximum-length capabilities are 9,216; the longest ordinary call of 18 graded capabilities is
about 2,000) costs several times an ordinary call at every step — query preparation,
screening, encoding (each capability up to the encoder's 128 tokens), the registry lane. Before
any of that work it first takes one of `heavy_count` heavy tokens (default 1), so heavy calls
run one at a time: ordinary calls keep the other slots and do not queue behind a line of heavy
ones. A heavy call waits for its token for at most `patience_s` (default 20 s, two thirds of the
client's 30 s timeout); past it, it goes on without one as a *shed* call (`HeavyTicket.shed`): in
hybrid it is answered from the lexical lane with a guidance line (no encoding, its most expensive
step), instead of failing with `TIMEOUT` when its turn would come after its caller gave up. The
long patience is the budget: a caller that keeps sending heavy calls mostly waits, which costs
the worker nothing, and ordinary callers keep the CPU. Heavy calls are scheduled by size, not
refused: the limits at the edge (`request_limits.py`) already bound one call's work.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio

from ..errors import DirectoryError

log = logging.getLogger(__name__)

SLOTS_ENV = "III_DIRECTORY_SEARCH_SLOTS"
DEFAULT_SLOTS = 4  # chosen: a file call waits for at most four searches (module docstring)
MAX_SLOTS = 256  # chosen: bounds a configured value
DEFAULT_WAIT_S = 30.0  # chosen, our change (docs/rules/search.md §15): the wait for a slot
HEAVY_CHARS = 4096  # chosen: twice the longest ordinary call (18 × 111 characters, the 99th percentile)
"""Characters of a call's capabilities in all above which it is a heavy call."""
HEAVY_SLOTS = 1  # chosen: heavy calls one at a time (docs/record/performance.md, issue 33)
"""Heavy calls doing their work at once."""
HEAVY_PATIENCE_S = 20.0  # chosen: two thirds of the client's 30 s timeout, the rest for a lexical answer
"""How long a heavy call waits for its token before it goes on shed (lexical)."""


def is_heavy(capabilities: Sequence[str], limit: int = HEAVY_CHARS) -> bool:
    """Whether the capabilities hold more than `limit` characters in all."""
    return sum(len(text) for text in capabilities) > limit


@dataclass
class HeavyTicket:
    """A call's standing in the heavy lane: `heavy` when it is a heavy call, `shed` when it went
    on without a heavy token (its patience ran out)."""

    heavy: bool = False
    shed: bool = False


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

    def __init__(self, count: int = DEFAULT_SLOTS, wait_s: float = DEFAULT_WAIT_S, *,
                 heavy_count: int = HEAVY_SLOTS, patience_s: float = HEAVY_PATIENCE_S) -> None:
        if count < 1 or heavy_count < 1:
            raise ValueError("count and heavy_count must be at least 1")
        self.count = count
        self.wait_s = wait_s
        self.heavy_count = min(heavy_count, count)
        self.patience_s = patience_s
        self.heavy_waiting = 0
        """Heavy calls queued for a heavy token now."""
        self.shed = 0
        """Heavy calls so far that went on without a heavy token (answered lexical in hybrid)."""
        self._heavy = anyio.CapacityLimiter(self.heavy_count)
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

    @asynccontextmanager
    async def heavy(self, capabilities: Sequence[str]) -> AsyncIterator[HeavyTicket]:
        """A heavy call's turn: hold a heavy token for the body, waiting first come first served
        for at most `patience_s`; past it the body runs without one and the ticket says `shed`.
        An ordinary call passes at once (`heavy` False). A free token is taken without yielding."""
        if not is_heavy(capabilities):
            yield HeavyTicket()
            return
        owner = object()
        try:
            self._heavy.acquire_on_behalf_of_nowait(owner)
        except anyio.WouldBlock:
            self.heavy_waiting += 1
            taken = False
            try:
                with anyio.move_on_after(self.patience_s):
                    await self._heavy.acquire_on_behalf_of(owner)
                    taken = True
            finally:
                self.heavy_waiting -= 1
            if not taken:
                self.shed += 1
                yield HeavyTicket(heavy=True, shed=True)
                return
        try:
            yield HeavyTicket(heavy=True)
        finally:
            self._heavy.release_on_behalf_of(owner)
