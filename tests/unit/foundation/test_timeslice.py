"""`TimeSlice`: CPU work on the event loop gives way once its budget is spent — and only then.
The clock is injected; no test waits on time."""

from __future__ import annotations

import anyio
import anyio.lowlevel

from iii_directory import timeslice
from iii_directory.timeslice import TimeSlice


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def ticks_while(work: TimeSlice, steps: list[float], clock: Clock) -> tuple[int, list[int]]:
    """Run `work.pause()` once per entry of `steps` (advancing `clock` by it first) while a
    second task counts the loop turns it gets; the count seen after each pause."""
    ticks = 0
    seen: list[int] = []
    done = False

    async def ticker() -> None:
        nonlocal ticks
        while not done:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(ticker)
        await anyio.lowlevel.checkpoint()  # the ticker has started
        start = ticks
        for step in steps:
            clock.now += step
            await work.pause()
            seen.append(ticks - start)
        done = True
    return ticks, seen


async def test_a_slice_holds_the_loop_until_its_budget_is_spent() -> None:
    clock = Clock()
    work = TimeSlice(0.002, clock)
    _, seen = await ticks_while(work, [0.0005, 0.0005, 0.0005], clock)
    assert seen == [0, 0, 0]
    assert work.yields == 0


async def test_a_spent_slice_gives_the_loop_one_turn_and_starts_again() -> None:
    clock = Clock()
    work = TimeSlice(0.002, clock)
    _, seen = await ticks_while(work, [0.001, 0.0015, 0.0005, 0.0015], clock)
    # yields after 2.5 ms (second pause) and again 2 ms later (fourth), not in between
    assert work.yields == 2
    assert seen[0] == 0 and seen[1] >= 1 and seen[2] == seen[1] and seen[3] > seen[2]


async def test_the_default_budget_is_read_when_a_slice_is_made(monkeypatch) -> None:
    monkeypatch.setattr(timeslice, "SLICE_S", 0.0)
    assert TimeSlice().budget == 0.0
    monkeypatch.setattr(timeslice, "SLICE_S", 0.004)
    assert TimeSlice().budget == 0.004


async def test_a_pause_delivers_cancellation() -> None:
    clock = Clock()
    work = TimeSlice(0.0, clock)
    reached = False
    with anyio.CancelScope() as scope:
        scope.cancel()
        await work.pause()
        reached = True
    assert not reached and scope.cancelled_caught
