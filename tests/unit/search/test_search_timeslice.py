"""A search's ranking gives the event loop way between capabilities (`timeslice.TimeSlice`) —
and slicing changes no answer. The budget is forced to zero, so every pause yields; no test
depends on time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from search_fakes import CATALOG, ExactIndex, FakeEncoder, PeerEngine, search

from iii_directory import timeslice
from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.search.service import SearchService
from iii_directory.timeslice import TimeSlice

CAPABILITIES = ("send an email to a customer", "charge a credit card", "create a calendar event",
                "list my open invoices", "translate text to french", "upload a file to storage")


def answer_of(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "latency_ms"}


@pytest.fixture
def counted_pauses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every pause that gave way, named by the function that paused."""
    import sys

    yielded: list[str] = []
    original = TimeSlice.pause

    async def pause(self: TimeSlice) -> None:
        before = self.yields
        await original(self)
        if self.yields > before:
            yielded.append(sys._getframe(1).f_code.co_name)

    monkeypatch.setattr(TimeSlice, "pause", pause)
    return yielded


def seed_skills(root: Path) -> None:
    topics = ("emailing customers", "card payments", "calendar events", "invoices")
    for i, topic in enumerate(topics):
        (root / f"team{i}").mkdir(parents=True, exist_ok=True)
        (root / f"team{i}" / "guide.md").write_text(
            f"---\ntitle: {topic}\n---\n# {topic}\n\nHow our team handles {topic}.\n",
            encoding="utf-8")


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
async def test_a_search_gives_way_between_capabilities_and_answers_the_same(
        mode: str, settings: Settings, roots: dict[str, Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, counted_pauses: list[str]) -> None:
    seed_skills(roots["skills"])
    directory = Directory(settings=settings.model_copy(update={"function_search_mode": mode}),
                          engine=PeerEngine(CATALOG))
    service = directory.service(SearchService)
    if mode == "hybrid":
        service.use_encoder(FakeEncoder(), index_factory=ExactIndex, cache_dir=tmp_path)
    await search(directory, *CAPABILITIES)  # warm: index, vectors
    await service.settle()

    monkeypatch.setattr(timeslice, "SLICE_S", 3600.0)
    counted_pauses.clear()  # the cold first search may have spent its budget
    whole = await search(directory, *CAPABILITIES)
    assert counted_pauses == []
    monkeypatch.setattr(timeslice, "SLICE_S", 0.0)
    sliced = await search(directory, *CAPABILITIES)

    assert whole["search_mode"] == sliced["search_mode"] == mode
    assert whole.get("skills"), "the skills side lane ranked something"
    assert answer_of(sliced) == answer_of(whole)
    # lexical lanes, answerability and the side lanes each give way once per capability
    for where in ("_installed_lanes", "_answerable", "local_rank"):
        assert counted_pauses.count(where) >= len(CAPABILITIES), (where, counted_pauses)
    await service.stop()


async def test_other_tasks_run_while_a_search_ranks(settings: Settings, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    directory = Directory(settings=settings.model_copy(update={"function_search_mode": "hybrid"}),
                          engine=PeerEngine(CATALOG))
    service = directory.service(SearchService)
    service.use_encoder(FakeEncoder(), index_factory=ExactIndex, cache_dir=tmp_path)
    await search(directory, *CAPABILITIES)
    await service.settle()
    monkeypatch.setattr(timeslice, "SLICE_S", 0.0)
    ranking = 0
    interleaved = 0
    original = service._answerable

    async def answerable(*args: Any) -> Any:
        nonlocal ranking
        ranking += 1
        try:
            return await original(*args)
        finally:
            ranking -= 1

    monkeypatch.setattr(service, "_answerable", answerable)
    done = False

    async def other() -> None:
        nonlocal interleaved
        while not done:
            interleaved += ranking > 0  # this task ran while a search was deciding its lanes
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(other)
        await search(directory, *CAPABILITIES)
        done = True
    assert interleaved >= len(CAPABILITIES) - 1
    await service.stop()
