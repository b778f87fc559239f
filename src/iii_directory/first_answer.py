"""The first-answer gate: background start-up chores of `serve` wait for the first search answer.

A warm hybrid restart's first search answer is bound by work that holds the GIL: the encoder's
imports and tokenizer on its thread, the search stack's import, the catalog snapshot, the
registry client's warm-up and the call itself (docs/startup.md, "Warm restart"). Chores that no
first answer needs used to run in the same window and share the GIL with it: the skills listing
rows and body index (`content.watch`), the start-up page release and `gc.freeze`
(`worker._settle_heap_when_ready`), and the release of the code pages the encoder's session
load ran (`encoder.dense_lane`).

Rule: a `Runtime`'s gate (`runtime.first_answer`) is open unless `serve` arms it, which it
does for a worker whose configuration is not `lexical`. An armed gate opens when the first
`directory::search_functions` answer is out (`open()`), or `limit_s` seconds after it was armed,
whichever comes first; a chore `await`s `wait()` before it starts. So a worker that is never
searched runs its chores at most `limit_s` late, and a call that needs a chore's result does
the work itself, as before the chore had run (the listing and the body index fill on demand).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

FIRST_ANSWER_LIMIT_S = 3.0  # chosen: a warm restart's first answer comes within it at load ~6 (1.0–2.1 s)
"""Longest an armed gate stays shut: chores start at most this late when no search comes."""


class FirstAnswerGate:
    """Open, or armed until the first search answer or `limit_s` seconds (module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._deadline: float | None = None
        """When an armed gate opens by itself (`clock` seconds); None: open."""
        self._event: Any = None
        """The `anyio.Event` that waiters sleep on, made by the first waiter of an armed gate."""
        self.after_open: Callable[[], Awaitable[None]] | None = None
        """What a waiter that found the gate shut awaits once it opens before it returns: `serve`
        gives the connection's flush, so a chore never runs ahead of the first answer's frame
        (the answer opens the gate before its result frame is written)."""

    @property
    def is_open(self) -> bool:
        """Not armed, opened, or past its limit."""
        return self._deadline is None or self.clock() >= self._deadline

    def arm(self, limit_s: float = FIRST_ANSWER_LIMIT_S,
            after_open: Callable[[], Awaitable[None]] | None = None) -> None:
        """Shut the gate until `open()` or `limit_s` seconds from now (`after_open`: see the
        attribute)."""
        self._deadline = self.clock() + limit_s
        self.after_open = after_open

    def open(self) -> None:
        """Open the gate now and wake its waiters (a no-op when it is open)."""
        self._deadline = None
        event, self._event = self._event, None
        if event is not None:
            event.set()

    async def wait(self) -> None:
        """Return once the gate is open (at once when it is), after `after_open` when it had to
        wait."""
        import anyio

        waited = False
        while not self.is_open:
            assert self._deadline is not None
            waited = True
            if self._event is None:
                self._event = anyio.Event()
            with anyio.move_on_after(max(0.0, self._deadline - self.clock())):
                await self._event.wait()
        if waited and self.after_open is not None:
            await self.after_open()
