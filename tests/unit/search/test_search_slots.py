"""Search slots (search/slots.py): at most N searches work at once, the rest queue first come
first served for a bounded wait, then fail with TIMEOUT having done nothing; judge-backed calls
take no slot. Event-driven: no test waits on a clock."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from search_fakes import CATALOG, PeerEngine, hold_skills_fetch, search
from test_judge import judge_directory, models, pick  # noqa: F401 - fixture re-export

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.search.service import SearchService
from iii_directory.search.guidance import SHED_NOTE
from iii_directory.search.slots import (DEFAULT_SLOTS, HEAVY_CHARS, SLOTS_ENV, SearchSlots,
                                        configured_slots, is_heavy)


class Holders:
    """Tasks that take a slot, note their order, and keep it until released one by one."""

    def __init__(self, slots: SearchSlots) -> None:
        self.slots = slots
        self.order: list[int] = []
        self.release: dict[int, anyio.Event] = {}
        self.errors: dict[int, str] = {}

    async def hold(self, index: int) -> None:
        self.release[index] = anyio.Event()
        try:
            async with self.slots.hold():
                self.order.append(index)
                await self.release[index].wait()
        except DirectoryError as exc:
            self.errors[index] = exc.code


async def test_at_most_count_hold_and_the_rest_queue_in_arrival_order() -> None:
    slots = SearchSlots(2)
    holders = Holders(slots)
    async with anyio.create_task_group() as group:
        for index in range(5):
            group.start_soon(holders.hold, index)
            await anyio.wait_all_tasks_blocked()
        assert holders.order == [0, 1]
        assert (slots.busy, slots.waiting) == (2, 3)
        for index in range(5):
            holders.release[index].set()
            await anyio.wait_all_tasks_blocked()
            assert slots.busy == min(2, 4 - index)
    assert holders.order == [0, 1, 2, 3, 4]
    assert (slots.busy, slots.waiting, slots.peak, slots.queued) == (0, 0, 2, 3)


async def test_a_call_that_waits_past_its_budget_fails_with_timeout_and_holds_nothing() -> None:
    slots = SearchSlots(1, wait_s=0)
    holders = Holders(slots)
    async with anyio.create_task_group() as group:
        group.start_soon(holders.hold, 0)
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(DirectoryError) as caught:
            async with slots.hold():
                pytest.fail("the body must not run without a slot")
        assert caught.value.code == "TIMEOUT"
        assert "search slots" in caught.value.message
        assert (slots.busy, slots.waiting) == (1, 0)
        holders.release[0].set()
    assert slots.busy == 0


async def test_a_free_slot_is_taken_even_with_no_wait_budget() -> None:
    slots = SearchSlots(1, wait_s=0)
    async with slots.hold():
        assert slots.busy == 1
    assert (slots.busy, slots.queued) == (0, 0)


async def test_a_cancelled_waiter_leaves_the_queue_and_takes_no_slot() -> None:
    slots = SearchSlots(1)
    holders = Holders(slots)
    async with anyio.create_task_group() as group:
        group.start_soon(holders.hold, 0)
        await anyio.wait_all_tasks_blocked()
        with anyio.CancelScope() as scope:
            group.start_soon(holders.hold, 1)
            await anyio.wait_all_tasks_blocked()
            assert slots.waiting == 1
            scope.cancel()
        group.cancel_scope.cancel()
    assert (slots.busy, slots.waiting) == (0, 0)
    assert holders.order == [0]


async def test_a_failing_body_gives_its_slot_back() -> None:
    slots = SearchSlots(1)
    with pytest.raises(RuntimeError):
        async with slots.hold():
            raise RuntimeError("boom")
    assert slots.busy == 0


def test_count_must_be_positive() -> None:
    with pytest.raises(ValueError):
        SearchSlots(0)


@pytest.mark.parametrize(("raw", "expected"), [
    (None, DEFAULT_SLOTS), ("", DEFAULT_SLOTS), ("1", 1), (" 8 ", 8), ("256", 256),
    ("0", DEFAULT_SLOTS), ("-3", DEFAULT_SLOTS), ("257", DEFAULT_SLOTS), ("four", DEFAULT_SLOTS),
    ("2.5", DEFAULT_SLOTS),
])
def test_configured_slots(raw: str | None, expected: int, caplog: pytest.LogCaptureFixture) -> None:
    environ = {} if raw is None else {SLOTS_ENV: raw}
    with caplog.at_level(logging.WARNING, logger="iii_directory.search.slots"):
        assert configured_slots(environ) == expected
    warned = any(SLOTS_ENV in r.getMessage() for r in caplog.records)
    assert warned == (raw in {"0", "-3", "257", "four", "2.5"})


def test_the_service_reads_its_slot_count_from_the_environment(
        settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SLOTS_ENV, "3")
    directory = Directory(settings=settings, engine=PeerEngine(CATALOG))
    assert directory.service(SearchService).slots.count == 3


async def test_searches_beyond_the_slots_wait_and_all_answer(
        settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lexical searches hold their slot through the side-lane fetch; with one slot the other
    calls queue until the first is let through, then every call answers."""
    directory = Directory(settings=settings, engine=PeerEngine(CATALOG))
    service = directory.service(SearchService)
    service.slots = SearchSlots(1)
    gate = hold_skills_fetch(monkeypatch)
    answers: list[dict[str, Any]] = []

    async def one() -> None:
        answers.append(await search(directory, "send an sms text message"))

    async with anyio.create_task_group() as group:
        for _ in range(4):
            group.start_soon(one)
        await anyio.wait_all_tasks_blocked()
        assert (service.slots.busy, service.slots.waiting, service.in_flight) == (1, 3, 4)
        gate.set()
    assert len(answers) == 4 and all(a["workers"] for a in answers)
    assert (service.slots.peak, service.slots.queued, service.slots.busy) == (1, 3, 0)


async def test_a_judge_backed_search_takes_no_slot(
        judge_directory: tuple[Directory, PeerEngine]) -> None:  # noqa: F811
    directory, engine = judge_directory
    service = directory.service(SearchService)
    seen: list[int] = []
    judged = pick("sms::send")

    async def judge(data: Any) -> Any:
        seen.append(service.slots.busy)
        return await judged(data)

    engine.add_peer("judge::evaluate", judge)
    engine.add_peer("judge::models::list", models)
    response = await search(directory, "send a message")
    assert response["search_mode"] == "judge"
    assert seen == [0]
    assert service.slots.peak == 0


# -- heavy calls: one at a time, shed to the lexical lane past their patience ----------------------

HEAVY = ["x" * 512] * 9  # 4,608 characters: over HEAVY_CHARS
ORDINARY = ["send an email"] * 18


def test_a_call_is_heavy_by_the_characters_of_its_capabilities() -> None:
    assert is_heavy(HEAVY) and not is_heavy(ORDINARY)
    assert not is_heavy(["x" * HEAVY_CHARS]) and is_heavy(["x" * HEAVY_CHARS, "y"])


async def test_heavy_calls_go_one_at_a_time_while_ordinary_ones_pass() -> None:
    slots = SearchSlots(4, patience_s=3600)
    order: list[str] = []
    release = anyio.Event()

    async def heavy(name: str) -> None:
        async with slots.heavy(HEAVY) as ticket:
            assert ticket.heavy and not ticket.shed
            order.append(name)
            await release.wait()

    async with anyio.create_task_group() as group:
        group.start_soon(heavy, "first")
        await anyio.wait_all_tasks_blocked()
        group.start_soon(heavy, "second")
        await anyio.wait_all_tasks_blocked()
        assert order == ["first"] and slots.heavy_waiting == 1
        async with slots.heavy(ORDINARY) as ticket:  # an ordinary call never waits here
            assert not ticket.heavy and not ticket.shed
            order.append("ordinary")
        release.set()
    assert order == ["first", "ordinary", "second"]
    assert (slots.heavy_waiting, slots.shed) == (0, 0)


async def test_a_heavy_call_past_its_patience_goes_on_shed_and_holds_no_token() -> None:
    slots = SearchSlots(4, patience_s=0)
    release = anyio.Event()

    async def holder() -> None:
        async with slots.heavy(HEAVY):
            await release.wait()

    async with anyio.create_task_group() as group:
        group.start_soon(holder)
        await anyio.wait_all_tasks_blocked()
        async with slots.heavy(HEAVY) as ticket:
            assert ticket.heavy and ticket.shed
        assert (slots.shed, slots.heavy_waiting) == (1, 0)
        release.set()
    async with slots.heavy(HEAVY) as ticket:  # the token is free again: taken at once
        assert not ticket.shed
    assert slots.shed == 1


async def test_a_shed_heavy_search_in_hybrid_is_answered_lexically_with_a_guidance_line(
        settings: Settings, tmp_path: Path) -> None:
    from search_fakes import ExactIndex, FakeEncoder

    directory = Directory(settings=settings.model_copy(update={"function_search_mode": "hybrid"}),
                          engine=PeerEngine(CATALOG))
    service = directory.service(SearchService)
    encoder = FakeEncoder()
    service.use_encoder(encoder, index_factory=ExactIndex, cache_dir=tmp_path / "cache")
    capabilities = [f"send an sms text message to customer number {i} " + "please " * 60
                    for i in range(9)]
    assert is_heavy(capabilities)
    warm = await directory.invoke("directory::search_functions", {"capabilities": capabilities})
    await service.settle()
    service.slots = SearchSlots(4, patience_s=0)
    release = anyio.Event()

    async def holder() -> None:
        async with service.slots.heavy(capabilities):
            await release.wait()

    async with anyio.create_task_group() as group:
        group.start_soon(holder)
        await anyio.wait_all_tasks_blocked()
        asked = [f"quokka {c}" for c in capabilities]
        shed = await directory.invoke("directory::search_functions", {"capabilities": asked})
        release.set()
    assert shed["search_mode"] == "lexical" and SHED_NOTE in shed["guidance"]
    # background documents may be embedded meanwhile; none of the shed call's capabilities is
    assert shed["workers"] and not any("quokka" in text for text in encoder.texts)
    assert SHED_NOTE not in warm["guidance"] and service.slots.shed == 1
    await service.stop()
