"""A lone call after a warm start waits (bounded) for the catalog index instead of answering
lexical; a crowd, a cold start and a big re-embed never wait (encoder/dense_lane.py,
`DenseLane.wait_warm_index`). Waits end on events, never on elapsed time."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from search_fakes import ExactIndex, FakeEncoder

from iii_directory.encoder import dense_lane, preload_slot
from iii_directory.encoder.dense_lane import DenseLane

pytestmark = pytest.mark.dense

FINGERPRINT = "catalog-1"
IDS = [f"w::f{i}" for i in range(3)]
TEXTS = [f"function number {i}" for i in range(3)]


def ready_lane(tmp_path: Path) -> DenseLane:
    lane = DenseLane(tmp_path, index_factory=ExactIndex)
    lane.install(FakeEncoder())
    return lane


async def test_a_waiting_call_sees_the_index_the_build_publishes(tmp_path: Path) -> None:
    lane = ready_lane(tmp_path)
    lane.requested = FINGERPRINT
    assert lane.index_expected_soon(FINGERPRINT, TEXTS)  # three misses: one micro-batch
    outcome: list[bool] = []

    async def wait() -> None:
        outcome.append(await lane.wait_warm_index(FINGERPRINT, TEXTS, timeout=60.0))

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        await anyio.sleep(0)
        assert outcome == []  # still waiting: nothing was published
        assert await lane.rebuild_if_current(FINGERPRINT, IDS, TEXTS)
    assert outcome == [True]


async def test_no_wait_when_the_index_needs_a_big_re_embed_or_another_catalog(tmp_path: Path) -> None:
    lane = ready_lane(tmp_path)
    lane.requested = FINGERPRINT
    many = [f"document {i}" for i in range(dense_lane.WARM_MISSES + 1)]
    assert not lane.index_expected_soon(FINGERPRINT, many)
    assert await lane.wait_warm_index(FINGERPRINT, many, timeout=60.0) is False  # at once
    lane.requested = "catalog-2"
    assert not lane.index_expected_soon(FINGERPRINT, TEXTS)


async def test_a_cold_start_does_not_wait_a_warm_start_does(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dense_lane, "dense_installed", lambda: True)
    cold = DenseLane(tmp_path / "cold")
    cold.state = "loading"  # a model load without a preload: the cache may be empty
    assert not cold.index_expected_soon(FINGERPRINT, TEXTS)

    opening: Future[Any] = Future()
    thread = ThreadPoolExecutor(1)
    preload_slot.put((thread, opening))
    warm = DenseLane(tmp_path / "warm", index_factory=ExactIndex)
    outcome: list[bool] = []

    async def load_then_index() -> None:
        await warm.load(None)
        await warm.rebuild(FINGERPRINT, IDS, TEXTS)

    async def wait() -> None:
        outcome.append(await warm.wait_warm_index(FINGERPRINT, TEXTS, timeout=60.0))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(load_then_index)
            await anyio.sleep(0)
            assert warm.state == "loading" and warm.warm_start
            assert warm.index_expected_soon(FINGERPRINT, TEXTS)
            group.start_soon(wait)
            await anyio.sleep(0)
            assert outcome == []
            opening.set_result(FakeEncoder())  # the preloaded session is built
        assert outcome == [True]
    finally:
        preload_slot.discard()
        thread.shutdown(wait=False)


async def test_a_failed_build_releases_the_waiters(tmp_path: Path) -> None:
    lane = ready_lane(tmp_path)
    lane.requested = FINGERPRINT
    lane.warm_start = True
    outcome: list[bool] = []

    def broken(vectors: Any) -> Any:
        raise RuntimeError("index build failed")

    lane.index_factory = broken

    async def wait() -> None:
        outcome.append(await lane.wait_warm_index(FINGERPRINT, TEXTS, timeout=60.0))

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        await anyio.sleep(0)
        assert not await lane.rebuild_if_current(FINGERPRINT, IDS, TEXTS)
    assert outcome == [False] and lane.failed_index == FINGERPRINT
    assert not lane.index_expected_soon(FINGERPRINT, TEXTS)
