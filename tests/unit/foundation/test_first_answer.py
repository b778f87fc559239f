"""The first-answer gate (`first_answer.py`): what holds `serve`'s start-up chores back until
the first search answer, and what opens it. No sleeps: the gate's clock is injected, and tasks
are observed blocked with `wait_all_tasks_blocked`."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import pytest

from iii_directory.first_answer import FIRST_ANSWER_LIMIT_S, FirstAnswerGate
from iii_directory.runtime import Runtime


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_gate_is_open_until_armed_and_a_runtime_starts_with_an_open_one() -> None:
    assert FirstAnswerGate().is_open
    assert Runtime().first_answer.is_open  # only `serve` arms it: tests and `call` never wait
    assert FIRST_ANSWER_LIMIT_S > 0


async def test_an_armed_gate_holds_its_waiters_until_it_is_opened() -> None:
    gate = FirstAnswerGate(clock=Clock())
    gate.arm(60.0)
    assert not gate.is_open
    passed: list[str] = []

    async def chore(name: str) -> None:
        await gate.wait()
        passed.append(name)

    async with anyio.create_task_group() as group:
        group.start_soon(chore, "listing")
        group.start_soon(chore, "release")
        await anyio.wait_all_tasks_blocked()
        assert passed == []
        gate.open()
    assert sorted(passed) == ["listing", "release"]
    assert gate.is_open
    await gate.wait()  # an open gate does not wait
    gate.open()  # opening twice is harmless


async def test_an_armed_gate_opens_by_itself_at_its_limit() -> None:
    clock = Clock()
    gate = FirstAnswerGate(clock=clock)
    gate.arm(3.0)
    clock.now += 2.9
    assert not gate.is_open
    clock.now += 0.2
    assert gate.is_open
    with anyio.fail_after(5):
        await gate.wait()


@pytest.mark.parametrize("standalone", [True, False])
async def test_a_search_answer_or_failure_opens_the_gate(standalone: bool) -> None:
    """… and a served call starts the model load itself when the start hooks have not reached
    the search surface's yet (a lone first call then waits for the warm index)."""
    from iii_directory.functions import search as surface
    from iii_directory.search import service

    class FailingSearch:
        def __init__(self) -> None:
            self.started = 0

        def start_model(self) -> None:
            self.started += 1

        async def search(self, ctx: Any, capabilities: list[str]) -> dict[str, Any]:
            raise RuntimeError("no catalog")

    runtime = Runtime()
    searcher = FailingSearch()
    runtime._services[service.SearchService] = searcher
    runtime.first_answer.arm(60.0)

    class Ctx:
        directory = runtime

    Ctx.standalone = standalone  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError):
        await surface.search_functions(Ctx(), surface.SearchFunctionsRequest(capabilities=["send mail"]))  # type: ignore[arg-type]
    assert runtime.first_answer.is_open
    assert searcher.started == (0 if standalone else 1)  # `call` loads in `ensure_ready`


class Submitted:
    def __init__(self) -> None:
        self.work: list[Any] = []

    def submit(self, fn: Any, *args: Any) -> None:
        self.work.append(fn)


def test_the_lane_hands_back_the_session_loads_pages_after_adopting_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from iii_directory.encoder import dense_lane, mapped_pages

    monkeypatch.setattr(mapped_pages, "release_library_pages", lambda: 0)
    lane = dense_lane.DenseLane(persist=False)

    class Saved:
        optimized_path = "/cache/onnx-key"

    thread = Submitted()
    lane._release_load_pages(Saved(), thread)  # type: ignore[arg-type]
    assert thread.work == [mapped_pages.release_library_pages]  # on the encoder thread
    lane._release_load_pages(object(), thread)  # type: ignore[arg-type]  # not from a saved graph
    assert len(thread.work) == 1


def test_open_encoder_releases_the_imports_pages_and_the_lane_the_loads(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Any) -> None:
    from iii_directory.encoder import dense_lane, mapped_pages

    released: list[str] = []
    monkeypatch.setattr(mapped_pages, "release_library_pages", lambda: released.append("libs") or 0)

    class StandIn:
        def __init__(self, model_dir: Any, **options: Any) -> None:
            released.append("session")
            self.optimized_path = str(tmp_path)

        def release_memory(self) -> None:
            released.append("trim")

    encoder = dense_lane.open_encoder(None, tmp_path, encoder_class=StandIn)
    # a stand-in gets the imports' pages released before it is built (the real encoder: beside
    # its session load, `_rank.dense.Encoder(beside_session=...)`)
    assert released == ["libs", "session"]
    with ThreadPoolExecutor(1) as thread:
        lane = dense_lane.DenseLane(persist=False)
        lane._release_load_pages(encoder, thread)
    assert released == ["libs", "session", "libs"]


async def test_a_waiter_that_found_the_gate_shut_awaits_after_open_first() -> None:
    """`serve` passes the connection's flush: a chore starts only once the first answer's
    frame is on the socket."""
    gate = FirstAnswerGate(clock=Clock())
    order: list[str] = []

    async def flushed() -> None:
        order.append("flushed")

    gate.arm(60.0, after_open=flushed)

    async def chore() -> None:
        await gate.wait()
        order.append("chore")

    async with anyio.create_task_group() as group:
        group.start_soon(chore)
        await anyio.wait_all_tasks_blocked()
        gate.open()
    assert order == ["flushed", "chore"]
    await gate.wait()  # open: no flush awaited
    assert order == ["flushed", "chore"]
