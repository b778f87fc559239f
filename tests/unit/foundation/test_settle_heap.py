"""`serve` tunes the garbage collector once it has started (`worker.settle_heap`)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from iii_directory import worker


@pytest.fixture
def restore_gc() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    gc.enable()


def test_settle_heap_freezes_start_up_objects_and_widens_the_young_generation(restore_gc: None) -> None:
    gc.unfreeze()
    born_at_start = [object(), {"a": [1, 2]}]
    _, middle, oldest = gc.get_threshold()
    worker.settle_heap()
    assert gc.get_freeze_count() > 0  # what lived at start-up is out of the collector's walk
    assert gc.get_threshold() == (worker.GC_YOUNG_THRESHOLD, middle, oldest)
    assert worker.GC_YOUNG_THRESHOLD > 700
    cycle: list[object] = []
    cycle.append(cycle)  # garbage made later is still collected
    del cycle
    assert gc.collect() >= 1
    assert born_at_start[1] == {"a": [1, 2]}


async def test_the_heap_is_settled_only_once_the_worker_is_ready(restore_gc: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import anyio

    from iii_directory.encoder import mapped_pages

    calls: list[str] = []
    monkeypatch.setattr(worker, "settle_heap", lambda: calls.append("settled"))
    monkeypatch.setattr(mapped_pages, "release_start_up_pages", lambda: calls.append("released") or 0)

    from iii_directory.runtime import Runtime

    class Ready:
        ready = anyio.Event()
        directory = Runtime()

    stand_in = Ready()
    stand_in.directory.first_answer.arm(60.0)  # a hybrid worker's: shut until its first answer
    async with anyio.create_task_group() as tg:
        tg.start_soon(worker._settle_heap_when_ready, stand_in, 0.0)
        await anyio.wait_all_tasks_blocked()
        assert calls == []
        stand_in.ready.set()
        await anyio.wait_all_tasks_blocked()
        assert calls == [], "nothing beside the first search"
        stand_in.directory.first_answer.open()
    # settled, the start-up pages handed back, and once more `again_after` seconds later
    assert calls == ["settled", "released", "released"]
    assert worker.START_UP_RELEASE_AGAIN_S > 0


async def test_the_start_up_release_runs_off_the_event_loop(restore_gc: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The release (a stand-in reader that stays blocked until told) runs on a thread: while it
    is blocked the event loop serves a file-backed call, whose thread the default limiter (one
    token here) still grants, so the release holds none of the file calls' tokens."""
    import threading

    import anyio

    from iii_directory.encoder import mapped_pages

    loop_thread = threading.get_ident()
    entered, proceed = threading.Event(), threading.Event()
    readers: list[int] = []

    def stand_in_reader() -> int:
        readers.append(threading.get_ident())
        entered.set()
        if threading.get_ident() == loop_thread:  # on the loop: waiting would block the test
            return 0
        proceed.wait()
        return 0

    monkeypatch.setattr(worker, "settle_heap", lambda: None)
    monkeypatch.setattr(mapped_pages, "release_start_up_pages", stand_in_reader)

    class Ready:
        ready = anyio.Event()
        directory = None  # no first-answer gate to wait for

    stand_in = Ready()
    anyio.to_thread.current_default_thread_limiter().total_tokens = 1
    served: list[str] = []
    limiter = anyio.to_thread.current_default_thread_limiter()
    async with anyio.create_task_group() as tg:
        tg.start_soon(worker._settle_heap_when_ready, stand_in, 0.0)
        stand_in.ready.set()
        try:
            # the first release is inside the reader (waited for on a thread of its own)
            await anyio.to_thread.run_sync(entered.wait, limiter=anyio.CapacityLimiter(1))
            assert limiter.borrowed_tokens == 0  # it holds no token of the file calls' limiter
            served.append(await anyio.to_thread.run_sync(lambda: "file call answered"))
            assert not proceed.is_set() and len(readers) == 1  # ...and is still blocked in it
        finally:
            proceed.set()
    assert served == ["file call answered"]
    assert len(readers) == 2 and loop_thread not in readers


def test_serve_limits_the_default_worker_threads() -> None:
    """A lexical worker runs blocking work on at most `WORKER_THREADS` AnyIO threads (not 40)."""
    import anyio

    async def limited() -> tuple[float, float]:
        before = anyio.to_thread.current_default_thread_limiter().total_tokens
        worker.limit_worker_threads()
        return before, anyio.to_thread.current_default_thread_limiter().total_tokens

    before, after = anyio.run(limited)
    assert after == worker.WORKER_THREADS < before


def test_serve_keeps_the_collector_off_until_the_heap_is_settled(restore_gc: None,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`cli.cmd_serve` turns the cyclic collector off before the worker's imports;
    `settle_heap` collects the start-up's cycles (they are not frozen) and turns it on again,
    and so does `_collector_on_after` when the heap is never settled."""
    import argparse

    from iii_directory import cli

    seen: list[bool] = []
    monkeypatch.setattr(worker, "serve_main", lambda url, config: seen.append(gc.isenabled()) or 0)
    try:
        assert cli.cmd_serve(argparse.Namespace(url="ws://127.0.0.1:9", config=None)) == 0
        assert seen == [False]
        import weakref

        class Node:
            me: object = None

        gc.unfreeze()
        cycle = Node()
        cycle.me = cycle
        probe = weakref.ref(cycle)
        del cycle
        assert probe() is not None  # the collector is off: the cycle is still there
        worker.settle_heap()
        assert gc.isenabled()
        assert probe() is None, "the start-up's cycles are collected, not frozen"
        gc.disable()
        import anyio

        anyio.run(worker._collector_on_after, 0.0)
        assert gc.isenabled()
    finally:
        gc.enable()
