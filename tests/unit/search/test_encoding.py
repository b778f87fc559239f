"""The encoder pipeline (encoding.py): single flight, micro-batches, deadline and departure drops,
its own capacity limiter, the query LRU and the disk cache. Concurrency is staged with events
and an injected clock, never with sleeps."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from search_fakes import CATALOG, ExactIndex, FakeEncoder, PeerEngine, search

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.encoder import encoding as encoding_module
from iii_directory.encoder.encoding import (BACKGROUND_SHARE, BUSY_SHARE, DOCUMENT, INDEX,
                                            INDEX_BUSY_SHARE, QUERY, EncoderPipeline,
                                            EncodingDropped, pause_after, query_key)
from iii_directory.search.ranking.second_query import second_query
from iii_directory.search.service import SearchService
from iii_directory.encoder.vector_cache import VectorCache


class GatedEncoder(FakeEncoder):
    """A FakeEncoder whose every `encode` waits for `gate` (set by the test) and records its
    batches; `entered` is set when a batch is inside the encoder. Batches made only of
    `ungated` texts pass at once (and set `passed`)."""

    def __init__(self, ungated: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.passed = threading.Event()
        self.ungated = set(ungated)
        self.batches: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        if set(texts) <= self.ungated:
            self.passed.set()
            return super().encode(texts)
        self.entered.set()
        if not self.gate.wait(timeout=60):
            raise RuntimeError("the test never opened the gate")
        return super().encode(texts)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def wait_for_thread_event(event: threading.Event) -> None:
    """Wait (without blocking the loop) until another thread sets `event`."""
    while not event.is_set():
        await anyio.to_thread.run_sync(event.wait, 0.05)


async def test_concurrent_callers_share_one_encoding_per_text() -> None:
    encoder = GatedEncoder()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    texts = [f"document number {i}" for i in range(20)]
    results: dict[int, Any] = {}

    async def caller(index: int) -> None:
        mine = texts[index % 7:index % 7 + 10]
        results[index] = (mine, await pipeline.embed(mine, kind=DOCUMENT))

    async with anyio.create_task_group() as group:
        for index in range(50):
            group.start_soon(caller, index)
        await wait_for_thread_event(encoder.entered)  # the first batch holds the encoder
        await anyio.wait_all_tasks_blocked()
        encoder.gate.set()
    counts = Counter(encoder.texts)
    assert set(counts) == set(texts[:16]) and max(counts.values()) == 1
    assert pipeline.stats.encoded == 16 and pipeline.stats.coalesced > 0
    reference = FakeEncoder()
    for mine, vectors in results.values():
        np.testing.assert_allclose(vectors, reference.encode(mine), atol=1e-6)


async def test_texts_of_concurrent_callers_are_batched_by_length_within_bounds() -> None:
    encoder = GatedEncoder()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), max_batch=4, max_tokens=4 * 6)
    blocker = [ "first one in" ]
    short = [f"s{i}" for i in range(6)]  # 2 tokens by the estimate
    long = ["x" * 40 + str(i) for i in range(3)]  # 12 tokens by the estimate

    async with anyio.create_task_group() as group:
        group.start_soon(pipeline.embed, blocker)
        await wait_for_thread_event(encoder.entered)
        for text in long + short:  # every caller asks for one text while the encoder is busy
            group.start_soon(pipeline.embed, [text])
        await anyio.wait_all_tasks_blocked()
        encoder.gate.set()
    assert encoder.batches[0] == blocker
    rest = encoder.batches[1:]
    assert [len(b) for b in rest] == [4, 2, 2, 1]  # 6 short: 4 + 2; 3 long: 24 tokens ⇒ 2 + 1
    assert rest[0] == sorted(short)[:4] and rest[1] == sorted(short)[4:]
    assert all(len(b) * max(pipeline._tokens(t) for t in b) <= 24 for b in rest)


async def test_the_catalog_goes_before_ad_hoc_documents_and_warmed_capabilities() -> None:
    encoder = GatedEncoder()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    async with anyio.create_task_group() as group:
        group.start_soon(pipeline.embed, ["blocker"])
        await wait_for_thread_event(encoder.entered)
        group.start_soon(pipeline.embed, ["a skill document"])
        pipeline.warm(["an unseen capability"], kind=QUERY)  # nobody waits on it
        group.start_soon(lambda: pipeline.embed(["mail::send Send an email."], kind=INDEX))
        await anyio.wait_all_tasks_blocked()
        encoder.gate.set()
    assert encoder.batches[1:] == [["mail::send Send an email."],
                                   ["a skill document", "an unseen capability"]]
    assert pipeline.queries.get("an unseen capability") is not None  # filed as a capability
    assert pipeline.cached(["an unseen capability"], DOCUMENT) == [None]


async def test_a_capability_is_encoded_while_a_background_batch_holds_the_encoder() -> None:
    """A fresh capability never queues behind background work (issue 32): with a catalog batch
    inside the encoder and more queued, the capability is encoded and answered before the
    background batch is let go."""
    encoder = GatedEncoder(ungated=("send an email",))
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    pipeline.wall = lambda: 5.0  # time stands still: a wait would be a scheduling wait
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: pipeline.embed(["catalog document"], kind=INDEX))
        await wait_for_thread_event(encoder.entered)
        pipeline.warm(["a skill document"])
        vectors = await pipeline.embed(["send an email"], kind=QUERY)
        assert vectors.shape == (1, 384) and not encoder.gate.is_set()
        assert pipeline.stats.query_waits and pipeline.stats.query_waits[-1] == 0.0
        encoder.gate.set()
    assert encoder.batches[:2] == [["catalog document"], ["send an email"]]


async def test_a_lone_calls_capabilities_are_split_across_both_threads() -> None:
    class Recording(FakeEncoder):
        def __init__(self) -> None:
            super().__init__()
            self.threads: list[tuple[str, int]] = []

        def encode(self, texts: list[str]) -> np.ndarray:
            self.threads.append((threading.current_thread().name, len(texts)))
            return super().encode(texts)

    encoder = Recording()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    texts = [f"capability number {i}" for i in range(18)]
    vectors = await pipeline.embed(texts, kind=QUERY)
    np.testing.assert_allclose(vectors, FakeEncoder().encode(texts), atol=1e-6)
    assert sorted(size for _, size in encoder.threads) == [9, 9]
    assert {name.split("_")[0] for name, _ in encoder.threads} == {"encoder", "encoder-query"}
    few = Recording()
    pair = EncoderPipeline(few, VectorCache("t", 384, None))
    await pair.embed(texts[:2], kind=QUERY)  # a capability and its second text: one a thread
    assert sorted(size for _, size in few.threads) == [1, 1]
    assert {name.split("_")[0] for name, _ in few.threads} == {"encoder", "encoder-query"}
    busy = EncoderPipeline(Recording(), VectorCache("t", 384, None), busy=lambda: True)
    await busy.embed(texts, kind=QUERY)  # other calls in flight: the query thread alone
    assert [size for _, size in busy.encoder.threads] == [16, 2]
    for opened in (pipeline, busy, pair):
        await opened.close()


async def test_no_background_batch_starts_while_a_capability_batch_runs() -> None:
    encoder = GatedEncoder(ungated=("a skill document",))
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: pipeline.embed(["send an email"], kind=QUERY))
        await wait_for_thread_event(encoder.entered)
        pipeline.warm(["a skill document"])
        await anyio.wait_all_tasks_blocked()
        assert encoder.batches == [["send an email"]]  # the document waits for the capability
        encoder.gate.set()
    while pipeline.pending():
        await anyio.sleep(0)
    assert encoder.batches == [["send an email"], ["a skill document"]]


async def test_work_whose_deadline_passed_is_dropped_before_encoding() -> None:
    encoder = GatedEncoder()
    clock = Clock()
    # busy: other calls in flight, so the capabilities queue for the query thread alone
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), clock=clock, busy=lambda: True)
    outcome: dict[str, Any] = {}

    async def late() -> None:
        try:
            await pipeline.embed(["too late"], kind=QUERY, deadline=clock.now + 3.0)
        except EncodingDropped as exc:
            outcome["late"] = exc

    async def timely() -> None:
        outcome["timely"] = await pipeline.embed(["in time"], kind=QUERY, deadline=clock.now + 60.0)

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: pipeline.embed(["blocker"], kind=QUERY))
        await wait_for_thread_event(encoder.entered)
        group.start_soon(late)
        group.start_soon(timely)
        await anyio.wait_all_tasks_blocked()
        clock.now += 5.0  # the first call's deadline passes while the encoder is busy
        encoder.gate.set()
    assert "too late" not in encoder.texts and "in time" in encoder.texts
    assert isinstance(outcome["late"], EncodingDropped) and "deadline" in str(outcome["late"])
    assert outcome["timely"].shape == (1, 384)
    assert pipeline.stats.dropped == 1 and pipeline.pending() == 0


async def test_work_of_a_caller_that_went_away_is_dropped() -> None:
    encoder = GatedEncoder()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), busy=lambda: True)
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: pipeline.embed(["blocker"], kind=QUERY))
        await wait_for_thread_event(encoder.entered)
        gone = anyio.CancelScope()
        group.start_soon(_in_scope, gone, ["abandoned"], pipeline)
        await anyio.wait_all_tasks_blocked()
        assert pipeline.pending() == 2  # the blocker being encoded, the abandoned one queued
        gone.cancel()
        await anyio.wait_all_tasks_blocked()
        encoder.gate.set()
    assert "abandoned" not in encoder.texts and pipeline.stats.dropped == 1


async def _in_scope(scope: anyio.CancelScope, texts: list[str], pipeline: EncoderPipeline) -> None:
    with scope:
        await pipeline.embed(texts, kind=QUERY)


async def test_kept_documents_survive_their_callers() -> None:
    encoder = GatedEncoder()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    async with anyio.create_task_group() as group:
        group.start_soon(pipeline.embed, ["blocker"])
        await wait_for_thread_event(encoder.entered)
        pipeline.warm(["a skill", "a trigger"])  # background warm-up: nobody waits
        await anyio.wait_all_tasks_blocked()
        encoder.gate.set()
    while pipeline.pending():
        await anyio.sleep(0)  # the runner finishes on the loop; no timing involved
    assert sorted(encoder.texts[1:]) == ["a skill", "a trigger"]
    assert all(v is not None for v in pipeline.cached(["a skill", "a trigger"], DOCUMENT))


async def test_encoder_threads_never_take_the_default_limiter() -> None:
    encoder = GatedEncoder()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    default = anyio.to_thread.current_default_thread_limiter()
    saved = default.total_tokens
    default.total_tokens = 1  # one file-handler thread only: an encoder holding it would block it
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(pipeline.embed, ["busy encoder"])
            await wait_for_thread_event(encoder.entered)
            assert default.borrowed_tokens == 0 and pipeline.limiter.borrowed_tokens == 1
            answer = await anyio.to_thread.run_sync(lambda: "file work done")
            assert answer == "file work done"  # ran while the encoder thread was busy
            encoder.gate.set()
    finally:
        default.total_tokens = saved


async def test_a_repeated_capability_costs_no_encoder_call() -> None:
    encoder = FakeEncoder()
    encoder.lowercase = True  # type: ignore[attr-defined]  # like MiniLM's uncased tokenizer
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    first = await pipeline.embed(["Send an  email"], kind=QUERY)
    calls = encoder.calls
    again = await pipeline.embed(["send an email", " SEND AN EMAIL "], kind=QUERY)
    assert encoder.calls == calls == 1
    np.testing.assert_array_equal(again[0], first[0])
    assert query_key(" Send\tan  EMAIL ") == "send an email"
    assert query_key("Send an", lowercase=False) == "Send an"


async def test_a_failing_batch_fails_its_waiters_only() -> None:
    class Broken(FakeEncoder):
        def encode(self, texts: list[str]) -> np.ndarray:
            if "boom" in texts:
                raise RuntimeError("model crashed")
            return super().encode(texts)

    pipeline = EncoderPipeline(Broken(), VectorCache("t", 384, None))
    with pytest.raises(RuntimeError, match="model crashed"):
        await pipeline.embed(["boom"])
    assert (await pipeline.embed(["fine"])).shape == (1, 384)


async def test_a_restart_with_a_warm_disk_cache_embeds_nothing(tmp_path: Path) -> None:
    texts = [f"skill document {i}" for i in range(40)]
    first = FakeEncoder()
    await EncoderPipeline(first, VectorCache("m", 384, tmp_path)).embed(texts)
    assert len(first.texts) == 40
    second = FakeEncoder()
    vectors = await EncoderPipeline(second, VectorCache("m", 384, tmp_path)).embed(texts)
    assert second.texts == [] and vectors.shape == (40, 384)


# -- through the search service -----------------------------------------------------------------


def hybrid_directory(settings: Settings, engine: PeerEngine, cache: Path,
                     encoder: FakeEncoder) -> Directory:
    directory = Directory(settings=settings.model_copy(update={"function_search_mode": "hybrid"}),
                          engine=engine)
    directory.service(SearchService).use_encoder(encoder, index_factory=ExactIndex, cache_dir=cache)
    return directory


def seed_skills(root: Path, count: int) -> None:
    for i in range(count):
        folder = root / f"team{i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"page-{i}.md").write_text(
            f"---\ntitle: Page {i}\n---\n# Page {i}\n\nHow to send report {i} by email.\n",
            encoding="utf-8")


CAPABILITIES = ["send an email", "forecast the weather in Paris", "store a key value pair",
                "schedule a meeting", "read a cached value", "list calendar events"]


async def fifty_searches(directory: Directory) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []

    async def one(index: int) -> None:
        picked = [CAPABILITIES[(index + j) % len(CAPABILITIES)] for j in range(1 + index % 4)]
        answers.append(await search(directory, *picked))

    async with anyio.create_task_group() as group:
        for index in range(50):
            group.start_soon(one, index)
    return answers


async def test_fifty_concurrent_searches_embed_each_distinct_text_once(
        settings: Settings, roots: dict[str, Path], tmp_path: Path) -> None:
    seed_skills(roots["skills"], 30)
    encoder = FakeEncoder()
    directory = hybrid_directory(settings, PeerEngine(CATALOG), tmp_path / "cache", encoder)
    service = directory.service(SearchService)
    answers = await fifty_searches(directory)
    assert len(answers) == 50 and all(a["search_mode"] in ("lexical", "hybrid") for a in answers)
    await service.settle()
    while service.dense.pipeline is not None and service.dense.pipeline.pending():
        await anyio.sleep(0)  # background warm-up of the skill documents finishes
    again = await fifty_searches(directory)  # everything is warm now
    assert all(a["search_mode"] == "hybrid" for a in again)
    counts = Counter(encoder.texts)
    assert counts and max(counts.values()) == 1, counts.most_common(3)
    assert any("Page 7" in text for text in counts)  # skill documents went through the encoder
    await service.stop()

    restarted_encoder = FakeEncoder()
    restarted = hybrid_directory(settings, PeerEngine(CATALOG), tmp_path / "cache", restarted_encoder)
    answers = await fifty_searches(restarted)
    assert len(answers) == 50
    await restarted.service(SearchService).settle()
    # documents (catalog, skills) come from the disk cache; only the capabilities and their
    # action-and-object texts (second_query.py), whose vectors live in memory, are embedded
    # again — once each
    queried = {text for c in CAPABILITIES for text in (c, second_query(c))}
    assert sorted(restarted_encoder.texts) == sorted(queried)
    await restarted.service(SearchService).stop()


# -- background work yields the CPU --------------------------------------------------------------


def test_background_shares_shrink_while_other_calls_are_in_flight() -> None:
    busy = False
    pipeline = EncoderPipeline(FakeEncoder(), None, busy=lambda: busy)
    idle = {kind: pipeline.share_of(kind) for kind in (QUERY, INDEX, DOCUMENT)}
    busy = True
    loaded = {kind: pipeline.share_of(kind) for kind in (QUERY, INDEX, DOCUMENT)}
    assert idle == {QUERY: 1.0, INDEX: 1.0, DOCUMENT: BACKGROUND_SHARE}
    assert loaded == {QUERY: 1.0, INDEX: INDEX_BUSY_SHARE, DOCUMENT: BUSY_SHARE}
    assert BUSY_SHARE < BACKGROUND_SHARE and INDEX_BUSY_SHARE < 1.0


def test_a_pause_holds_the_encoder_to_its_share() -> None:
    assert pause_after(0.1, 0.5) == pytest.approx(0.1)
    assert pause_after(0.1, 0.2) == pytest.approx(0.4)
    assert pause_after(0.1, 1.0) == 0.0
    assert pause_after(0.1, 0.0) == pytest.approx(10.0)  # share floored at 1 %


async def test_a_more_urgent_text_ends_a_background_pause_at_once() -> None:
    encoder = GatedEncoder()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    reads: list[float] = []
    pipeline.wall = lambda: reads.append(0.0) or 0.0  # time stands still: only urgency ends it
    async with anyio.create_task_group() as group:
        group.start_soon(pipeline.embed, ["blocker"])
        await wait_for_thread_event(encoder.entered)
        group.start_soon(lambda: pipeline.embed(["mail::send Send an email."], kind=INDEX))
        await anyio.wait_all_tasks_blocked()
        before = len(reads)
        await pipeline._yield_cpu(10.0, 0.01, DOCUMENT)  # a 990 s pause, ended by the catalog
        during = len(reads) - before
        encoder.gate.set()
    assert during == 2  # the deadline, then one look at the queue: no sleep in between


async def test_documents_a_caller_waits_on_go_first_and_take_no_pause() -> None:
    wall = Clock()

    class Costly(FakeEncoder):
        def encode(self, texts: list[str]) -> np.ndarray:
            wall.now += 1.0
            return super().encode(texts)

    encoder = Costly()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), max_batch=1)
    pipeline.wall = wall
    pipeline.warm(["a warmed document"])
    vectors = await pipeline.embed(["a waited document"])  # a lone call's skill documents
    assert vectors.shape == (1, 384) and encoder.texts[0] == "a waited document"
    while pipeline._pausing is None:  # the warmed one is encoded next, then the share's pause
        await anyio.sleep(0)
    assert encoder.texts == ["a waited document", "a warmed document"]
    await pipeline.close()


async def test_a_catalog_text_arriving_during_a_pause_wakes_the_runner(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The pause after an ad-hoc batch is not polled: a catalog text queued while it runs ends
    it (the wall clock stands still and the poll interval is an hour)."""
    from iii_directory.encoder import encoding

    monkeypatch.setattr(encoding, "PAUSE_POLL_S", 3600.0)
    wall = Clock()

    class Costly(FakeEncoder):
        def encode(self, texts: list[str]) -> np.ndarray:
            wall.now += 1.0  # each batch costs one second of the injected wall clock
            return super().encode(texts)

    pipeline = EncoderPipeline(Costly(), VectorCache("t", 384, None))
    pipeline.wall = wall
    pipeline.warm(["a skill document"])  # nobody waits: the runner then pauses for a second
    with anyio.fail_after(30):  # a hang guard, not a timing: only the wake can end the pause
        while pipeline._pausing is None:
            await anyio.sleep(0)
        paused_at = wall.now
        vectors = await pipeline.embed(["mail::send Send an email."], kind=INDEX)
    assert vectors.shape == (1, 384) and wall.now == paused_at + 1.0  # its own batch only
    await pipeline.close()


async def test_catalog_embedding_progresses_at_its_share_while_calls_are_in_flight(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold worker under steady traffic (issue 33): every round of traffic warms a new
    capability and a rewritten skill while calls are in flight, yet the catalog's documents are
    embedded first, at `INDEX_BUSY_SHARE` of the injected wall clock. The clock moves only by
    the encoder's cost (10 ms a text) and while the runner pauses."""
    from iii_directory.encoder import encoding

    monkeypatch.setattr(encoding, "PAUSE_POLL_S", 0.0)
    wall = Clock()

    class Costly(FakeEncoder):
        def encode(self, texts: list[str]) -> np.ndarray:
            wall.now += 0.01 * len(texts)
            return super().encode(texts)

    encoder = Costly()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), max_batch=4,
                               busy=lambda: True)

    def ticking() -> float:
        if pipeline._pausing is not None:
            wall.now += 0.001  # time passes while the runner rests
        return wall.now

    pipeline.wall = ticking
    catalog = [f"tool{i}::run Run tool number {i}." for i in range(32)]
    started = wall.now
    finished: list[float] = []

    async def index() -> None:
        await pipeline.embed(catalog, kind=INDEX, keep=True)
        finished.append(wall.now)

    async def traffic() -> None:
        serial = 0
        while not finished:
            serial += 1
            pipeline.warm([f"an unseen capability {serial}"], kind=QUERY)
            pipeline.warm([f"a rewritten skill {serial}"])
            await anyio.sleep(0)

    with anyio.fail_after(30):  # a hang guard: starved, the index would never finish
        async with anyio.create_task_group() as group:
            group.start_soon(traffic)
            await index()
    cost = 0.01 * len(catalog)
    assert finished[0] - started <= cost / INDEX_BUSY_SHARE + 0.1
    assert encoder.texts[:len(catalog)] == sorted(catalog, key=lambda t: (pipeline._tokens(t), t))
    await pipeline.close()


async def test_a_cold_workers_first_index_takes_no_busy_pause_and_later_ones_do() -> None:
    from iii_directory.encoder.dense_lane import DenseLane
    from iii_directory.encoder.encoding import FIRST_INDEX_SHARE

    lane = DenseLane(persist=False, index_factory=ExactIndex, busy=lambda: True)
    lane.install(FakeEncoder())
    assert lane.pipeline is not None
    assert lane.pipeline.share_of(INDEX) == FIRST_INDEX_SHARE == 1.0  # every answer is lexical
    assert await lane.rebuild("fp1", ["mail::send"], ["mail::send Send an email."])
    assert lane.pipeline.share_of(INDEX) == INDEX_BUSY_SHARE  # a refresh while hybrid answers
    await lane.close()


async def test_freed_memory_is_released_once_both_lanes_are_idle() -> None:
    class Releasing(FakeEncoder):
        def __init__(self) -> None:
            super().__init__()
            self.releases = 0

        def release_memory(self) -> None:
            self.releases += 1

    encoder = Releasing()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    long = ["word " * 100 + str(i) for i in range(5)]  # 127 tokens each by the estimate
    pipeline.warm(["a skill document"])
    await pipeline.embed(long, kind=QUERY)  # 635 padded tokens: past RELEASE_AFTER_TOKENS
    with anyio.fail_after(30):  # a hang guard
        while not all(runner.done() for runner in pipeline._runners.values()):
            await anyio.sleep(0)
    assert encoder.releases == 1 and pipeline._unreleased_tokens == 0


async def test_a_capability_never_waits_for_a_memory_release() -> None:
    class Releasing(FakeEncoder):
        def __init__(self) -> None:
            super().__init__()
            self.released_on: list[str] = []

        def release_memory(self) -> None:
            self.released_on.append(threading.current_thread().name)

    encoder = Releasing()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), busy=lambda: True)
    for round_ in range(4):  # 4 × 4 × 127 padded tokens: past RELEASE_BUSY_TOKENS
        await pipeline.embed(["word " * 100 + f"{round_} {i}" for i in range(4)], kind=QUERY)
    with anyio.fail_after(30):  # a hang guard
        while not all(runner.done() for runner in pipeline._runners.values()):
            await anyio.sleep(0)
    assert encoder.released_on and not any(n.startswith("encoder-query") for n in encoder.released_on)
    await pipeline.close()


async def test_the_service_counts_calls_in_flight_as_busy(tmp_path: Path) -> None:
    engine = PeerEngine(CATALOG)
    directory = Directory(Settings(function_search_mode="hybrid"), engine=engine)
    service = directory.service(SearchService)
    assert service.dense.busy is not None and not service.dense.busy()
    directory.calls_in_flight = 2
    assert service.dense.busy()
    service.use_encoder(FakeEncoder(), index_factory=ExactIndex, cache_dir=tmp_path)
    assert service.dense.pipeline is not None and service.dense.pipeline.busy()


# -- shortest job first, with aging ---------------------------------------------------------------


@pytest.mark.parametrize(("opened_at", "first"), [(100.6, "short"), (101.2, "long")])
async def test_a_short_capability_passes_a_long_one_until_the_long_one_has_aged(
        opened_at: float, first: str) -> None:
    """A long text queued at t=100 and a short one at t=100.5 wait behind a running batch. When
    the next batch is taken at t=100.6 the short one goes first (shortest job first); at t=101.2
    the long one has waited `AGING_S` (1 s) and goes first (arrival order)."""
    encoder = GatedEncoder()
    wall = Clock()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), max_tokens=12,
                               busy=lambda: True)  # other calls in flight: one thread for capabilities
    pipeline.wall = wall
    texts = {"long": "x" * 40, "short": "s1"}  # 12 and 2 tokens by the estimate: no shared batch
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: pipeline.embed(["blocker"], kind=QUERY))
        await wait_for_thread_event(encoder.entered)
        group.start_soon(lambda: pipeline.embed([texts["long"]], kind=QUERY))
        await anyio.wait_all_tasks_blocked()
        wall.now = 100.5
        group.start_soon(lambda: pipeline.embed([texts["short"]], kind=QUERY))
        await anyio.wait_all_tasks_blocked()
        wall.now = opened_at
        encoder.gate.set()
    second = "short" if first == "long" else "long"
    assert encoder.batches[1:] == [[texts[first]], [texts[second]]]


async def test_an_aged_long_text_leads_a_batch_without_overfilling_it() -> None:
    """The batch bound counts the longest text in the batch whatever the order: an aged long
    text first, then short ones, stays within `max_tokens`."""
    encoder = GatedEncoder()
    wall = Clock()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), max_tokens=24,
                               busy=lambda: True)  # other calls in flight: one thread for capabilities
    pipeline.wall = wall
    long, short = "x" * 40, ["s1", "s2", "s3"]  # 12 tokens, then 2 each
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: pipeline.embed(["blocker"], kind=QUERY))
        await wait_for_thread_event(encoder.entered)
        group.start_soon(lambda: pipeline.embed([long], kind=QUERY))
        await anyio.wait_all_tasks_blocked()
        wall.now = 101.5
        group.start_soon(lambda: pipeline.embed(short, kind=QUERY))
        await anyio.wait_all_tasks_blocked()
        encoder.gate.set()
    assert encoder.batches[1:] == [[long, "s1"], ["s2", "s3"]]


async def test_token_counts_of_a_call_give_the_loop_way_between_texts() -> None:
    """`embed` counts a call's new texts on the loop in time slices: with a zero budget the
    loop turns between every two texts."""
    from iii_directory import timeslice

    turns = 0
    counted: list[str] = []

    class Counting(FakeEncoder):
        def token_count(self, text: str) -> int:
            counted.append(text)
            return 3

    pipeline = EncoderPipeline(Counting(), VectorCache("t", 384, None))

    async def ticker() -> None:
        nonlocal turns
        while len(counted) < 4:
            turns += 1
            await anyio.lowlevel.checkpoint()

    budget, timeslice.SLICE_S = timeslice.SLICE_S, 0.0
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(ticker)
            vectors = await pipeline.embed(["a", "b", "c", "d"], kind=QUERY)
    finally:
        timeslice.SLICE_S = budget
    assert vectors.shape == (4, 384) and counted == ["a", "b", "c", "d"]
    assert turns >= 3


async def test_a_long_capability_is_a_batch_of_its_own() -> None:
    """Capabilities over `LONG_QUERY_TOKENS` are encoded one per batch, so a short capability
    arriving meanwhile waits for at most one of them; short ones still share a batch."""
    encoder = GatedEncoder()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None), busy=lambda: True)
    long = [f"{i} " + "y" * 300 for i in range(3)]  # 77 tokens by the estimate
    short = ["s1", "s2"]
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: pipeline.embed(["blocker"], kind=QUERY))
        await wait_for_thread_event(encoder.entered)
        group.start_soon(lambda: pipeline.embed(long + short, kind=QUERY))
        await anyio.wait_all_tasks_blocked()
        encoder.gate.set()
    assert encoder.batches[1:] == [short, [long[0]], [long[1]], [long[2]]]


async def test_a_lone_call_lets_go_of_the_loop_only_once_its_model_run_has_begun(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The encoder's tokenizing holds the GIL: `submit` waits until the encoder says its model
    runs (`started`), so that prologue never queues behind the call's own lexical work."""
    monkeypatch.setattr(encoding_module, "HANDOFF_WAIT_S", 60.0)  # a slow thread start: no race

    class Announcing(FakeEncoder):
        def __init__(self) -> None:
            super().__init__()
            self.steps: list[str] = []
            self.gate = threading.Event()

        def encode(self, texts: list[str], started: Any = None) -> np.ndarray:
            self.steps.append("tokenized")
            if started is not None:
                started()
            self.gate.wait(10)
            return super().encode(texts)

    encoder = Announcing()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    pending = await pipeline.begin(["send an email"], kind=QUERY)
    assert encoder.steps == ["tokenized"], "the loop resumed before the run began"
    encoder.gate.set()
    assert (await pending.vectors()).shape == (1, 384)
    pending.leave()
    await pipeline.close()


async def test_a_release_after_a_capability_batch_never_holds_up_the_next_lone_call() -> None:
    """The query lane hands a due release to the background thread as a task of its own; the
    next lone call's texts are then all encoded by the query thread (the background thread is
    busy), not behind the release."""

    class Releasing(FakeEncoder):
        def __init__(self) -> None:
            super().__init__()
            self.gate = threading.Event()
            self.releasing = threading.Event()
            self.threads: list[tuple[str, int]] = []

        def encode(self, texts: list[str]) -> np.ndarray:
            self.threads.append((threading.current_thread().name.split("_")[0], len(texts)))
            return super().encode(texts)

        def release_memory(self) -> None:
            self.releasing.set()
            self.gate.wait(10)

    encoder = Releasing()
    pipeline = EncoderPipeline(encoder, VectorCache("t", 384, None))
    with anyio.fail_after(10):
        for word in ("word ", "term "):  # 2 × 256 padded tokens: a release is due
            await pipeline.embed([word * 300], kind=QUERY)
        await wait_for_thread_event(encoder.releasing)
        vectors = await pipeline.embed(["send an email", "send email"], kind=QUERY)
    assert vectors.shape == (2, 384) and not encoder.gate.is_set()
    assert encoder.threads[-2:] == [("encoder-query", 1)] * 2
    encoder.gate.set()
    await pipeline.close()
