"""The first search after a warm restart answers hybrid (issue 16): a lone call that arrives while
the preloaded encoder is still opening waits for the catalog index instead of answering lexical.
Through the engine protocol; the test decides when the encoder is ready, so nothing is timed."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from search_fakes import FakeEncoder

from iii_directory.config import Settings
from iii_directory.encoder import dense_lane, preload_slot
from iii_directory.search.service import SearchService
from wire_harness import running_worker

pytestmark = [pytest.mark.wire, pytest.mark.dense, pytest.mark.timeout(120)]

SEARCH = "directory::search_functions"


async def test_a_lone_first_search_waits_for_the_warm_index(
        settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("III_DIRECTORY_CACHE_DIR", str(tmp_path / "vectors"))
    monkeypatch.setattr(dense_lane, "dense_installed", lambda: True)
    monkeypatch.setattr(dense_lane, "WARM_INDEX_WAIT_S", 60.0)  # the test opens the encoder
    opening: Future[Any] = Future()
    thread = ThreadPoolExecutor(1)
    preload_slot.put((thread, opening))  # what `serve` does over a warm vector cache
    hybrid = settings.model_copy(update={"function_search_mode": "hybrid"})
    try:
        async with running_worker(hybrid, monkeypatch) as (engine, worker, client):
            service = worker.directory.service(SearchService)
            with anyio.fail_after(30):
                while service.dense.state != "loading":
                    await anyio.sleep(0.01)
            assert service.dense.warm_start
            assert not worker.directory.first_answer.is_open  # chores wait (first_answer.py)
            answers: list[dict[str, Any]] = []

            async def first_search() -> None:
                answers.append(await client.call(SEARCH, {"capabilities": ["list the skills"]},
                                                 timeout=60.0))

            async with anyio.create_task_group() as group:
                group.start_soon(first_search)
                with anyio.fail_after(30):
                    while service.in_flight < 1:
                        await anyio.sleep(0.01)
                assert answers == [] and service.dense.state == "loading"
                opening.set_result(FakeEncoder())  # the preloaded session is built
            assert answers[0]["search_mode"] == "hybrid"
            assert service.dense.has_index(service.corpus.fingerprint)
            assert worker.directory.first_answer.is_open
    finally:
        preload_slot.discard()
        thread.shutdown(wait=False)
