"""Cooperative time slices: long CPU work on the event loop gives way every couple of
milliseconds.

The worker's event loop runs every handler. A search's ranking (learned fusion, answerability,
side lanes) and the connection's frame flush are synchronous between their awaits; left whole,
one batch of six capabilities held the loop for 10–30 ms, and every file-backed call waiting in
the ready queue waited for all of them (soak, 50 callers, hybrid: a fifth of the loop's time in
such chunks). Work that loops calls `await slice.pause()` between items: once `budget` seconds
have passed since the slice began or last gave way, it yields one loop turn (a checkpoint, which
also delivers cancellation), so the ready queue advances at least every `budget` plus one item.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio.lowlevel

SLICE_S = 0.002
"""Seconds of loop time a slice holds before it gives way."""


class TimeSlice:
    """`await pause()` yields when `budget` seconds (default `SLICE_S`, read when the slice is
    made) by `clock` (injectable) have passed since the slice started or last yielded; `yields`
    counts how often it did."""

    __slots__ = ("budget", "clock", "started", "yields")

    def __init__(self, budget: float | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.budget = SLICE_S if budget is None else budget
        self.clock = clock
        self.started = clock()
        self.yields = 0

    def due(self) -> bool:
        return self.clock() - self.started >= self.budget

    async def pause(self) -> None:
        if self.due():
            await anyio.lowlevel.checkpoint()
            self.yields += 1
            self.started = self.clock()
