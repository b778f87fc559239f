"""A first call's capabilities reach the encoder before the call's other work, and that work runs
while they are encoded (search/query_vectors.py, encoder/encoding.py `_dispatch_lone`); a
failed pass or a spent budget leaves the call lexical.

A stand-in encoder built through `open_encoder(encoder_class=...)` holds every armed batch at a
gate the test opens; ordering is read from the pipeline's own state (a job handed to a thread is
`running`), never from timing."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from search_fakes import CATALOG, ExactIndex, FakeEncoder, PeerEngine, search

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.encoder import dense_lane
from iii_directory.encoder.encoding import QUERY, EncoderPipeline
from iii_directory.encoder.vector_cache import VectorCache
from iii_directory.search import call as call_module
from iii_directory.search.service import SearchService


class GatedStandIn(FakeEncoder):
    """Stands in for `_rank.dense.Encoder` (built with its arguments by `open_encoder`). Once
    `armed`, every batch waits at `gate` and sets `entered` when it is inside `encode`."""

    def __init__(self, model_dir: Any = None, **options: Any) -> None:
        super().__init__()
        self.options = options
        self.armed = False
        self.gate = threading.Event()
        self.entered = threading.Event()

    def encode(self, texts: list[str]) -> np.ndarray:
        if self.armed:
            self.entered.set()
            if not self.gate.wait(timeout=60):
                raise RuntimeError("the test never opened the gate")
        return super().encode(texts)


async def wait_for_thread_event(event: threading.Event) -> None:
    """Wait (without blocking the loop) until another thread sets `event`."""
    while not event.is_set():
        await anyio.to_thread.run_sync(event.wait, 0.05)


async def drain(service: SearchService) -> None:
    """Wait until the pipeline holds no text (the fusion's views a first hybrid call queued in
    the background, say), so that only the call under test reaches the gate."""
    pipeline = service.dense.pipeline
    assert pipeline is not None
    while pipeline.pending():
        await asyncio.gather(*(asyncio.shield(job.future) for job in pipeline._pending.values()),
                             return_exceptions=True)


def running_queries(service: SearchService) -> list[str]:
    pipeline = service.dense.pipeline
    assert pipeline is not None
    return sorted(job.text for job in pipeline._pending.values() if job.running and job.kind == QUERY)


async def test_a_lone_calls_capability_is_encoding_before_its_lexical_work_starts(
        settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = Directory(settings=settings.model_copy(update={"function_search_mode": "hybrid",
                                                               "registry_search": False}),
                          engine=PeerEngine(CATALOG))
    service = directory.service(SearchService)
    encoder = dense_lane.open_encoder(None, encoder_class=GatedStandIn)
    assert isinstance(encoder, GatedStandIn) and encoder.options["max_length"] == dense_lane.TOKEN_CAP
    service.use_encoder(encoder, index_factory=ExactIndex, cache_dir=tmp_path)
    warm = await search(directory, "charge a credit card")  # index, views, side lanes
    assert warm["search_mode"] == "hybrid"
    await service.settle()
    await drain(service)

    seen: list[list[str]] = []
    real = call_module.lexical_lane

    def lexical_lane(documents: Any, terms: Any) -> Any:
        seen.append(running_queries(service))  # what the encoder threads hold right now
        return real(documents, terms)

    monkeypatch.setattr(call_module, "lexical_lane", lexical_lane)
    encoder.armed = True
    answer: dict[str, Any] = {}

    async def call() -> None:
        answer.update(await search(directory, "send an email to a customer"))

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await wait_for_thread_event(encoder.entered)
        await anyio.wait_all_tasks_blocked()
        # the call is now waiting for its vectors, its lexical lane already computed while the
        # encoder held its capability (and its action-and-object text)
        assert seen, "the lexical lane ran before the vectors arrived"
        assert all("send an email to a customer" in held for held in seen), seen
        assert not answer
        encoder.gate.set()
    assert answer["search_mode"] == "hybrid"
    await service.stop()


async def test_begin_hands_a_lone_calls_capabilities_to_a_thread_before_it_returns() -> None:
    encoder = GatedStandIn()
    encoder.armed = True
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    pending = await pipeline.begin(["send an email", "send email"], kind=QUERY)
    # no loop turn since: the runner task has not run, the thread already has the batch
    assert all(job.running for job in pending.jobs)
    assert encoder.entered.wait(timeout=30)
    encoder.gate.set()
    vectors = await pending.vectors()
    pending.leave()
    assert vectors.shape == (2, 384)
    np.testing.assert_array_equal(vectors, FakeEncoder().encode(["send an email", "send email"]))
    await pipeline.close()


async def test_while_other_calls_are_in_flight_capabilities_wait_for_the_runners_batch() -> None:
    encoder = GatedStandIn()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), busy=lambda: True)
    first = await pipeline.begin(["send an email"], kind=QUERY)
    second = await pipeline.begin(["charge a card"], kind=QUERY)
    assert not any(job.running for job in first.jobs + second.jobs)  # queued for one batch
    both = await first.vectors(), await second.vectors()
    first.leave()
    second.leave()
    assert [v.shape for v in both] == [(1, 384), (1, 384)]
    assert encoder.calls == 1  # the callers of one loop turn shared a batch
    await pipeline.close()


async def test_a_caller_that_leaves_before_awaiting_drops_its_queued_text() -> None:
    encoder = GatedStandIn()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), busy=lambda: True)
    pending = await pipeline.begin(["never needed"], kind=QUERY)
    pending.leave()
    pending.leave()  # once only
    assert pending.jobs[0].waiters == 0
    await anyio.wait_all_tasks_blocked()
    assert pipeline.stats.dropped == 1 and encoder.calls == 0
    await pipeline.close()


class FailingStandIn(GatedStandIn):
    """Once armed, every batch fails."""

    def encode(self, texts: list[str]) -> np.ndarray:
        if self.armed:
            raise RuntimeError("the encoder broke")
        return FakeEncoder.encode(self, texts)


async def hybrid_directory(settings: Settings, tmp_path: Path,
                           encoder_class: type[GatedStandIn]) -> tuple[Directory, GatedStandIn]:
    directory = Directory(settings=settings.model_copy(update={"function_search_mode": "hybrid",
                                                               "registry_search": False}),
                          engine=PeerEngine(CATALOG))
    service = directory.service(SearchService)
    encoder = dense_lane.open_encoder(None, encoder_class=encoder_class)
    service.use_encoder(encoder, index_factory=ExactIndex, cache_dir=tmp_path)
    assert (await search(directory, "charge a credit card"))["search_mode"] == "hybrid"
    await service.settle()
    await drain(service)
    encoder.armed = True
    return directory, encoder


async def test_a_failed_encoder_pass_answers_from_the_lexical_lanes(
        settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    directory, _ = await hybrid_directory(settings, tmp_path, FailingStandIn)
    answer = await search(directory, "send an email to a customer")
    assert answer["search_mode"] == "lexical"
    assert answer["workers"][0]["namespace"] == "mail", answer["workers"]
    assert "query embedding failed" in caplog.text
    await directory.service(SearchService).stop()


async def test_a_call_whose_embedding_budget_is_spent_answers_from_the_lexical_lanes(
        settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory, encoder = await hybrid_directory(settings, tmp_path, GatedStandIn)
    service = directory.service(SearchService)
    assert service.dense.pipeline is not None
    dropped = service.dense.pipeline.stats.dropped
    monkeypatch.setattr(service.dense, "query_timeout_s", 0.0)  # the budget is spent at once
    answer = await search(directory, "send an email to a customer")
    assert answer["search_mode"] == "lexical"
    assert answer["workers"][0]["namespace"] == "mail"
    # its texts' deadline had passed when they reached the pipeline: dropped, never encoded
    assert service.dense.pipeline.stats.dropped > dropped and not encoder.entered.is_set()
    await service.stop()
