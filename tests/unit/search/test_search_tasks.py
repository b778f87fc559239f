"""A search call does its first piece of work in each task group in its own task (the
capability embedding, the first batch, a batch's installed lanes) and starts tasks only for
the work that runs beside it and may wait: anyio's task spawns were a tenth of a short call's
loop time. A side lane with no entries is ranked in the call's task, and a batch's registry
lane is not started while the registry search is off."""

from __future__ import annotations

import asyncio
from typing import Any

from search_fakes import CATALOG, PeerEngine, search

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.search.service import SearchService


async def test_a_lexical_search_starts_a_task_only_for_the_work_beside_it(settings: Settings) -> None:
    directory = Directory(settings=settings.model_copy(update={"function_search_mode": "lexical",
                                                               "registry_search": False}),
                          engine=PeerEngine(CATALOG))
    before = await search(directory, "send an email to a customer")  # warm: catalog, skills
    await directory.service(SearchService).settle()

    loop = asyncio.get_running_loop()
    started: list[str] = []
    previous = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        started.append(getattr(coro, "__qualname__", repr(coro)))
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(factory)
    try:
        response = await search(directory, "send an email to a customer")
    finally:
        loop.set_task_factory(previous)
    assert response["workers"] == before["workers"]
    # skills and triggers fetched beside the lexical lanes; with no skill and no trigger their
    # lanes are ranked in the call's task, as are the one batch and its installed lanes (the
    # registry search is off)
    assert len(started) == 2, started
