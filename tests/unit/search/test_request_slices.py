"""A search request's own text work gives the loop way however long its capabilities are
(issue 33, item 2): building each capability's query (compaction, tokenising, rewriting, the
second query) and screening it (`answerability.screen`) pause on the call's `TimeSlice` after
every capability, so other tasks run between them. Clocks are injected or the budget is forced
to zero: no test depends on time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from search_fakes import CATALOG, PeerEngine, search

from iii_directory import timeslice
from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.search.ranking import answerability, query as query_module
from iii_directory.search import sliced_queries
from iii_directory.search.ranking.corpus import Corpus
from iii_directory.search.sliced_queries import prepare_queries
from iii_directory.search.request_limits import CAPABILITY_MAX_CHARS
from iii_directory.search.service import SearchService
from iii_directory.timeslice import TimeSlice

WORDS = ("send", "email", "invoice", "customer", "schedule", "meeting", "upload", "file", "share",
         "link", "translate", "refund", "payment", "store", "weather", "ticket", "render", "pdf")


def longest(seed: int) -> str:
    """A distinct capability of exactly `CAPABILITY_MAX_CHARS` characters."""
    words = [f"{WORDS[(seed * 7 + i) % len(WORDS)]}{seed}x{i}" if i % 3 else WORDS[(seed + i) % len(WORDS)]
             for i in range(CAPABILITY_MAX_CHARS)]
    return " ".join(words)[:CAPABILITY_MAX_CHARS].strip().ljust(CAPABILITY_MAX_CHARS, "z")


def stepping_clock(step: float) -> Callable[[], float]:
    """A clock that advances `step` seconds every time it is read."""
    now = 0.0

    def clock() -> float:
        nonlocal now
        now += step
        return now

    return clock


async def test_prepare_queries_pauses_after_every_query_and_screening() -> None:
    query_module.make_query.cache_clear()
    documents = Corpus.empty().documents
    capabilities = [longest(i) for i in range(18)] + ["send an email", "send an email"]
    sliced = TimeSlice(budget=0.001, clock=stepping_clock(1.0))  # every pause is due
    queries, screened = await prepare_queries(capabilities, documents, sliced)
    distinct = len({q.text for q in queries if q is not None})
    assert sliced.yields == len(capabilities) + len(screened)
    assert distinct == len(screened) == 19
    whole = TimeSlice(budget=3600.0, clock=stepping_clock(0.0))  # never due
    assert await prepare_queries(capabilities, documents, whole) == (queries, screened)
    assert whole.yields == 0


async def test_other_tasks_run_between_the_capabilities_of_one_long_request(
        settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = Directory(settings=settings, engine=PeerEngine(CATALOG))
    await search(directory, "send an email")  # the catalog snapshot
    query_module.make_query.cache_clear()
    monkeypatch.setattr(timeslice, "SLICE_S", 0.0)
    turns = 0
    seen: list[tuple[str, int]] = []

    def counted(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any) -> Any:
            seen.append((name, turns))
            return real(*args)
        return wrapper

    monkeypatch.setattr(sliced_queries, "make_query", counted("query", query_module.make_query))
    monkeypatch.setattr(sliced_queries, "screen", counted("screen", answerability.screen))
    done = False

    async def other() -> None:
        nonlocal turns
        while not done:
            turns += 1
            await anyio.lowlevel.checkpoint()

    capabilities = [longest(i) for i in range(18)]
    async with anyio.create_task_group() as group:
        group.start_soon(other)
        response = await search(directory, *capabilities)
        done = True
    assert response["search_mode"] == "lexical"
    assert [name for name, _ in seen] == ["query"] * 18 + ["screen"] * 18
    marks = [turn for _, turn in seen]
    assert all(later > earlier for earlier, later in zip(marks, marks[1:])), marks
    await directory.service(SearchService).stop()
