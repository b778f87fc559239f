"""The encoder pipeline: the one owner of a worker's sentence encoder (issue 16).

Every text any search call wants embedded — catalog documents, skills, triggers, registry
contracts, capabilities — goes through `EncoderPipeline.embed`. The rules:

* **Cached first.** Document vectors come from the `VectorCache` (SHA-256 of the text, memory and
  disk); query vectors from an LRU keyed by the normalised capability text (`query_key`). A hit
  never reaches the encoder.
* **Single flight.** A text already queued or being encoded is awaited, not queued again: the
  pending table is keyed by the SHA-256 of the text, so each distinct text is encoded at most
  once while it is in flight, and — being cached afterwards — once per process lifetime.
* **One owner, micro-batches, two lanes.** A capability a caller waits on never queues behind
  background work: capabilities go through the *query lane*, everything else (catalog documents,
  then ad-hoc documents) through the *background lane*, each drained by its own runner task on
  its own thread, so a fresh capability is encoded while a background batch is still running
  (onnxruntime's `run` is thread-safe; the session is shared), and no background batch starts
  while a capability batch runs, which then has a core to itself on a 2-core host. A runner takes the most urgent
  class of its lane, sorts it by token length and packs a batch of at most `max_batch` texts
  whose padded size `count × longest` stays within `max_tokens`. Texts that arrive while a batch
  is encoding join the next one, so concurrent callers share batches. While no other call is in
  flight and no background work is queued (`sharing`), a call's capabilities (from `SPLIT_AT`
  texts on: a capability and its second text) are split in halves across both threads: a
  second core at no one's expense. Capabilities warmed for
  later (`warm(kind=QUERY)`: nobody waits on them) are background work, behind the catalog.
  The policy of a batch is `jobs.pick_batch`.
* **A lone call's capabilities start at once.** While no other call is in flight, `submit`
  hands them to the encoder threads itself (`_dispatch_lone`) instead of leaving them to a
  runner task that would run one loop turn later, behind the call's other work; the loop then
  blocks until the threads' model runs have begun (at most `HANDOFF_WAIT_S`), so their Python
  prologue (tokenizing, feeds) has the GIL instead of queueing behind the call's lexical work. `begin` returns as soon as the texts are handed over and `Pending.vectors()` awaits
  them: the caller does its work that reads no vector in between (search/query_vectors.py).
* **Deadlines and departures really stop work.** A job carries the latest deadline of its
  waiters (None = no deadline) and how many waiters remain. Before each batch the runner drops
  jobs whose deadline has passed (by the injected `clock`) and non-`keep` jobs whose every waiter
  went away (cancelled); their waiters get `EncodingDropped`. A batch already handed to the
  encoder runs to its end (onnxruntime cannot be interrupted), so batches are kept small.
* **Its own threads.** Background encoding runs on the pipeline's dedicated thread, entered
  through the pipeline's own `anyio.CapacityLimiter` (one token); capabilities on a second
  dedicated thread; never on anyio's default thread pool that file-backed handlers (skills,
  agents) use, so those never queue behind the encoder. Fixed threads also keep onnxruntime's
  buffers in two malloc arenas: batches hopping across pool threads left freed buffers in every
  thread's arena (hybrid soak RSS 220 → 296 MiB in 30 s).
* Background work yields the CPU. After an ad-hoc document batch (skills, triggers, registry
  warm-up) the runner pauses so that it uses at most `BACKGROUND_SHARE` of a core, or
  `BUSY_SHARE` while other calls are in flight (`busy()`, injected: the worker counts its
  invocations); after a catalog-document batch it pauses to `INDEX_BUSY_SHARE` while busy and not
  at all otherwise. A batch holding a text some caller waits on (a lone call's skill or trigger
  documents) goes first in its class and is not followed by a pause: the share bounds work
  nobody waits for. A more urgent background text arriving ends the pause at once (it wakes the
  runner; nothing polls). On a 2-core host the encoder is the one thread that competes with the
  event loop for CPU: in a hybrid soak it re-embedded every rewritten skill at half a core while
  50 callers waited on the loop. The catalog index is the most urgent background class, so
  traffic cannot starve it: it always gets at least `INDEX_BUSY_SHARE` of a core, and all the
  background thread can give before the first index is published (`FIRST_INDEX_SHARE`).
* `keep` jobs (documents warmed in the background) are never dropped for lack of waiters: a
  document embedded once is cached on disk and useful to every later call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio

from ..timeslice import TimeSlice
from .jobs import (AGING_S, BACKGROUND_LANE, DOCUMENT, INDEX, MAX_BATCH, MAX_TOKENS, QUERY,
                   QUERY_LANE, QUERY_WAITS, SPLIT_AT, EncodingDropped, Handed, Job, Pending, PipelineStats,
                   consume, lane_of, parameters, pick_batch, query_key, text_digest)
from .vector_cache import LruVectors, VectorCache

__all__ = ["BACKGROUND_LANE", "DOCUMENT", "INDEX", "QUERY", "QUERY_LANE", "EncoderPipeline",
           "EncodingDropped", "Job", "Pending", "PipelineStats", "query_key"]

log = logging.getLogger(__name__)

RELEASE_AFTER_TOKENS = 512  # chosen: bounds memory (docs/operations.md)
"""Padded tokens encoded since the last `release_memory` that make an idle runner release the
encoder's freed buffers to the OS (a capability or two stay under it)."""
BACKGROUND_SHARE = 0.5  # chosen: leaves half a core to the calls
"""At most this share of one core goes to ad-hoc document warm-up (skills, triggers, registry)
while it runs: the event loop serving every other call needs the rest on a 2-core host."""
BUSY_SHARE = 0.1  # chosen: calls in flight come first
"""The ad-hoc documents' share while other calls are in flight."""
INDEX_BUSY_SHARE = 0.2  # chosen: a refresh finishes without starving calls
"""The catalog documents' share while other calls are in flight once an index is published (a
catalog refresh re-embeds changed functions while the old index keeps answering hybrid);
unbounded when idle. See docs/record/performance.md "Cold start to hybrid"."""
FIRST_INDEX_SHARE = 1.0  # chosen: no hybrid answer before the first index
"""The catalog documents' share while busy before the worker's first index is published: until
then every answer is lexical, so the index is the one piece of work that improves every call,
and it runs on the background thread without pauses (the event loop keeps the other core)."""
RELEASE_BUSY_TOKENS = 1024  # chosen: bounds memory while busy (docs/operations.md)
"""Padded tokens after which the background runner releases freed memory even while it stays
busy: the word-embedding rows read since the last release stay resident until then (up to a
page per distinct token), and a release costs the next run a few milliseconds of page faults.
See docs/record/performance.md "Hybrid worker memory"."""
QUERY_LRU = 4096  # chosen: bounds memory (1.5 KiB a vector)
"""Capability vectors kept in memory (`query_key` → vector)."""
PAUSE_POLL_S = 0.05  # chosen: short against a call's latency
"""Longest single wait of a pause before the wall clock is read again (a wake ends it sooner)."""
HANDOFF_WAIT_S = 0.002  # chosen: a thread wake-up is tens of microseconds on an idle core
"""Longest the event loop blocks after handing a lone call's capabilities to the encoder
threads, until their model runs have begun (`EncoderPipeline._dispatch_lone`)."""


RELEASE_TASK = 2  # chosen: a key beside the lanes' in `EncoderPipeline._runners`
"""The task of a release the query lane handed to the background thread (`_run`)."""


def pause_after(spent: float, share: float) -> float:
    """Seconds to rest after `spent` seconds of encoding so the encoder uses `share` of a core:
    `spent × (1 − share) / share` (share floored at 1 %)."""
    return spent * (1.0 - share) / max(share, 0.01)


def encoder_thread() -> ThreadPoolExecutor:
    """The single thread an encoder is built and run on."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="encoder")


class EncoderPipeline:
    """The single owner of `encoder` (anything with `encode(list[str]) -> (n, dim) array`).

    `embed(texts, kind=…, deadline=…, keep=…)` → (len(texts), dim) float32 array in input order,
    raising `EncodingDropped` when a text was dropped. `clock` is the deadline clock (injected
    in tests); `limiter` the capacity limiter held while the background thread works (one
    token); `executor` the single-thread executor the encoder was built on (the background
    lane's; one is made otherwise); the query lane makes its own thread when first used.
    """

    def __init__(self, encoder: Any, cache: VectorCache | None, *, dimension: int = 384,
                 max_batch: int = MAX_BATCH, max_tokens: int = MAX_TOKENS,
                 clock: Callable[[], float] = time.monotonic,
                 limiter: anyio.CapacityLimiter | None = None,
                 queries: LruVectors | None = None,
                 background_share: float = BACKGROUND_SHARE,
                 executor: ThreadPoolExecutor | None = None,
                 busy: Callable[[], bool] | None = None) -> None:
        self.encoder = encoder
        self.cache = cache
        self.dimension = dimension
        self.max_batch = max_batch
        self.max_tokens = max_tokens
        self.clock = clock
        self.limiter = limiter if limiter is not None else anyio.CapacityLimiter(1)
        self.queries = queries if queries is not None else LruVectors(QUERY_LRU)
        self.lowercase = bool(getattr(encoder, "lowercase", False))
        self.background_share = background_share
        self.index_busy_share = INDEX_BUSY_SHARE
        """The catalog documents' share while busy (`DenseLane` sets `FIRST_INDEX_SHARE` until
        the worker's first index is published)."""
        self.busy = busy if busy is not None else (lambda: False)
        self.wall: Callable[[], float] = time.perf_counter
        """The clock background pauses are measured by (tests replace it)."""
        self.stats = PipelineStats()
        self._announces = "started" in parameters(encoder.encode)
        """Whether `encoder.encode` takes `started` (called as its model starts to run)."""
        self._pending: dict[bytes, Job] = {}
        self._unreleased_tokens = 0
        self._counting = threading.Lock()  # stats and token counts are updated by both threads
        self._executor: ThreadPoolExecutor | None = executor
        self._query_executor: ThreadPoolExecutor | None = None
        self._runners: dict[int, asyncio.Task[Any]] = {}
        self._wake: asyncio.Event | None = None
        self._query_idle = asyncio.Event()
        self._query_idle.set()
        """Clear while a query-lane batch is in the encoder (background batches wait for it)."""
        self._pausing: int | None = None
        """The class whose pause is running (a more urgent background text wakes it)."""
        self._closed = False

    # -- callers -----------------------------------------------------------------------------

    def query_text(self, text: str) -> str:
        return query_key(text, lowercase=self.lowercase)

    def cached(self, texts: Sequence[str], kind: int = DOCUMENT) -> list[Any]:
        """Vectors already known for `texts` (None where missing); queries are looked up by
        `query_key`."""
        if kind == QUERY:
            return [self.queries.get(self.query_text(t)) for t in texts]
        if self.cache is None:
            return [None] * len(texts)
        return self.cache.lookup(texts)

    async def embed(self, texts: Sequence[str], *, kind: int = DOCUMENT,
                    deadline: float | None = None, keep: bool = False) -> Any:
        """Vectors of `texts` in order: cached ones at once, the others through the queue."""
        pending = await self.begin(texts, kind=kind, deadline=deadline, keep=keep)
        try:
            return await pending.vectors()
        finally:
            pending.leave()

    async def begin(self, texts: Sequence[str], *, kind: int = DOCUMENT,
                    deadline: float | None = None, keep: bool = False) -> Pending:
        """Hand `texts` to the pipeline and return at once, before their vectors exist: cached
        ones are looked up, the others counted (tokens) and queued — a lone call's capabilities
        are on an encoder thread when this returns (`submit`). The caller does other work, then
        awaits `Pending.vectors()`, and must `leave()` it (also when it never awaits it)."""
        if kind == QUERY:
            texts = [self.query_text(t) for t in texts]
        found = self.cached(texts, kind)
        missing = [i for i, vector in enumerate(found) if vector is None]
        jobs: list[Job] = []
        if missing:
            tokens = await self._count_tokens([texts[i] for i in missing])
            jobs = self.submit([texts[i] for i in missing], kind=kind, deadline=deadline, keep=keep,
                               tokens=tokens)
        return Pending(self, found, missing, jobs)

    def submit(self, texts: Sequence[str], *, kind: int = DOCUMENT, deadline: float | None = None,
               keep: bool = False, query: bool | None = None,
               tokens: Sequence[int] | None = None) -> list[Job]:
        """Queue `texts` (joining jobs already in flight) and wake the runner of their lane; the
        caller is one more waiter of every returned job and must `_leave` them (`embed` does).
        `query` (default: `kind == QUERY`) files the vectors in the query LRU instead of the
        document cache; `tokens` are the texts' token counts when the caller has them (else
        counted here)."""
        if self._closed:
            raise EncodingDropped("the encoder pipeline is closed")
        is_query = kind == QUERY if query is None else query
        loop = asyncio.get_running_loop()
        now = self.wall()
        jobs = []
        for position, text in enumerate(texts):
            digest = text_digest(text)
            job = self._pending.get(digest)
            if job is None:
                count = self._tokens(text) if tokens is None else tokens[position]
                job = Job(text, digest, kind, count, loop.create_future(), now)
                job.future.add_done_callback(consume)
                self._pending[digest] = job
            else:
                self.stats.coalesced += 1
                if kind < job.kind and not job.running:
                    job.queued = now  # it changes lane or class: it waits from now on
            job.join(deadline, keep, persist=not is_query, query=is_query, kind=kind)
            jobs.append(job)
        if kind == QUERY and not self.busy():
            self._dispatch_lone()
        else:
            self._start(lane_of(kind))
        if (self._wake is not None and self._pausing is not None and kind < self._pausing
                and lane_of(kind) == BACKGROUND_LANE):
            self._wake.set()
        return jobs

    def warm(self, texts: Sequence[str], kind: int = DOCUMENT) -> None:
        """Queue texts for background embedding (kept until encoded, nobody waits). Warmed
        capabilities are background work of the lowest class: no caller waits on them, and the
        catalog index every hybrid answer needs goes first."""
        if kind == QUERY:
            texts = [self.query_text(t) for t in texts]
        found = self.cached(texts, kind)
        missing = list(dict.fromkeys(t for t, v in zip(texts, found) if v is None))
        if missing:
            self._leave(self.submit(missing, kind=DOCUMENT, keep=True, query=kind == QUERY))

    def pending(self) -> int:
        return len(self._pending)

    async def _wait(self, jobs: list[Job]) -> list[Any]:
        # shield: a caller that goes away must not cancel a future other callers share
        return [await asyncio.shield(job.future) for job in jobs]

    def _leave(self, jobs: list[Job]) -> None:
        for job in jobs:
            job.waiters -= 1

    async def _count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Each text's token count, giving the loop way between texts once a time slice is
        spent: the tokenizer runs on the loop's thread, ~0.5 ms for a 512-character text, and a
        call's 18 of them in one go held the loop ~10 ms on a loaded host."""
        tick = TimeSlice()
        counts: list[int] = []
        for text in texts:
            counts.append(self._tokens(text))
            await tick.pause()
        return counts

    def _tokens(self, text: str) -> int:
        counter = getattr(self.encoder, "token_count", None)
        if counter is not None:
            try:
                return int(counter(text))
            except Exception:  # noqa: BLE001 - an estimate is enough for batching
                pass
        return min(256, len(text) // 4 + 2)

    # -- the runner --------------------------------------------------------------------------

    def _start(self, lane: int, first: Handed | None = None) -> None:
        """Start the runner of `lane` unless it runs; it first collects `first` (a batch already
        handed to that lane's thread)."""
        runner = self._runners.get(lane)
        if runner is None or runner.done():
            self._runners[lane] = asyncio.get_running_loop().create_task(self._run(lane, first))

    def _dispatch_lone(self) -> None:
        """A lone call's capabilities (no other call in flight) go to the encoder threads before
        `submit` returns, not one loop turn later behind whatever the loop runs first: the
        query thread takes its batch (half of it from `split_from` texts on), the idle background
        thread the rest when its limiter is free; otherwise whichever thread is free first takes
        it (the query runner goes on with the call's texts after its batch). A lane whose
        runner is still active takes the texts at its next batch. Then the loop blocks until the
        threads' model runs have begun (`_encode`'s `started`), at most `HANDOFF_WAIT_S`: each
        needs the GIL for the Python prologue of its run (tokenizer, feeds) before onnxruntime
        releases it, and a loop busy with the call's other work would hold it until its next
        wait."""
        started: list[threading.Event] = []
        for lane in (QUERY_LANE, BACKGROUND_LANE):
            if not self._idle(lane):
                continue
            if lane == QUERY_LANE:
                batch = self.take_batch(QUERY_LANE, split_from=self.split_from())
                token = None
            else:
                token = object()
                if not self.sharing():
                    continue
                if not self._borrow(token):
                    self._start(BACKGROUND_LANE)  # it helps once the limiter is free
                    continue
                batch = self.take_batch(QUERY_LANE)
                if not batch:
                    self.limiter.release_on_behalf_of(token)
                    continue
            if not batch:
                self._start(lane)
                continue
            event = threading.Event()
            future = self._hand_over(batch, lane, event)
            started.append(event)
            self._start(lane, Handed(batch, future, token))
        deadline = time.perf_counter() + HANDOFF_WAIT_S
        for event in started:
            event.wait(max(0.0, deadline - time.perf_counter()))

    def _borrow(self, token: object) -> bool:
        """Take the background thread's limiter for `token` without waiting; False when held."""
        try:
            self.limiter.acquire_on_behalf_of_nowait(token)
        except anyio.WouldBlock:
            return False
        return True

    def _idle(self, lane: int) -> bool:
        runner = self._runners.get(lane)
        return runner is None or runner.done() or runner is asyncio.current_task()

    async def close(self) -> None:
        """Stop the runners; every waiting caller gets `EncodingDropped`."""
        self._closed = True
        runners, self._runners = list(self._runners.values()), {}
        for runner in runners:
            runner.cancel()
        await asyncio.gather(*runners, return_exceptions=True)
        for job in list(self._pending.values()):
            self._finish(job, error=EncodingDropped("the encoder pipeline closed"))
        for executor in (self._executor, self._query_executor):
            if executor is not None:
                executor.shutdown(wait=False)
        self._executor = self._query_executor = None

    async def _run(self, lane: int, first: Handed | None = None) -> None:
        """Drain one lane (after collecting `first`, a batch `_dispatch_lone` handed over);
        once both lanes are idle, release the encoder's freed memory — on the background
        thread, and as a task of its own when the query lane finished last, so the next lone
        call's capabilities never wait behind it."""
        if first is not None:
            await self._collect(first, lane)
        while True:
            while self._has_work(lane):
                # let callers scheduled in the same loop iteration add texts to this batch
                await asyncio.sleep(0)
                helping = lane == BACKGROUND_LANE and self.sharing()
                if lane == BACKGROUND_LANE and not helping:
                    await self._query_idle.wait()  # a capability batch has the core to itself
                if helping:  # capabilities are taken only once the thread is free to run them
                    async with self.limiter:
                        batch = self.take_batch(QUERY_LANE)
                        if batch:
                            await self._collect(Handed(batch, self._hand_over(batch, lane)), lane)
                    continue
                batch = self.take_batch(lane, split_from=self.split_from() if lane == QUERY_LANE else 0)
                if batch:
                    started = self.wall()
                    await self._encode_batch(batch, lane)
                    share = self.share_of(batch[0].kind)
                    if share < 1.0 and not any(job.waiters > 0 for job in batch):
                        await self._yield_cpu(self.wall() - started, share, batch[0].kind)
            release = getattr(self.encoder, "release_memory", None)
            if (release is None or self._unreleased_tokens < RELEASE_AFTER_TOKENS
                    or not self._idle(1 - lane)):
                return
            self._unreleased_tokens = 0
            if lane == QUERY_LANE:  # a release takes milliseconds: the capability lane never waits
                self._runners[RELEASE_TASK] = asyncio.get_running_loop().create_task(
                    self.in_thread(release))
                return
            await self.in_thread(release)
            if not self._pending:
                return

    def _has_work(self, lane: int) -> bool:
        """Texts the runner of `lane` may take: its own, and capabilities while `sharing`."""
        waiting = [job for job in self._pending.values() if not job.running]
        if any(lane_of(job.kind) == lane for job in waiting):
            return True
        return (lane == BACKGROUND_LANE and any(job.kind == QUERY for job in waiting)
                and self.sharing())

    def sharing(self) -> bool:
        """Whether capabilities may use the background thread too: no other call is in flight
        and no background text is queued, being encoded or paused after. A lone call's
        capabilities are then split across both threads (a second core at no one's expense)."""
        return (not self.busy() and self._pausing is None
                and not any(lane_of(job.kind) == BACKGROUND_LANE for job in self._pending.values()))

    def split_from(self) -> int:
        """From how many texts a lone call's capabilities are split across both threads:
        `SPLIT_AT` while `sharing`, else never (0)."""
        return SPLIT_AT if self.sharing() else 0

    async def in_thread(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run `function(*args)` on the background thread, holding the pipeline's limiter."""
        if self._executor is None:
            self._executor = encoder_thread()
        async with self.limiter:
            return await asyncio.wrap_future(self._executor.submit(function, *args))

    async def _encode_batch(self, batch: list[Job], lane: int = BACKGROUND_LANE) -> None:
        """Encode `batch` on the thread of `lane` (the background thread under the limiter)."""
        if lane == QUERY_LANE:
            await self._collect(Handed(batch, self._hand_over(batch, lane)), lane)
            return
        async with self.limiter:
            await self._collect(Handed(batch, self._hand_over(batch, lane)), lane)

    def _hand_over(self, batch: list[Job], lane: int,
                   started: threading.Event | None = None) -> concurrent.futures.Future[Any]:
        """Submit `batch` to the thread of `lane` now (no await); `started` is set by the thread
        as it begins. A query-lane batch clears `_query_idle` until it is collected."""
        if batch[0].kind == QUERY:
            waits = self.stats.query_waits
            waits.append(max(0.0, self.wall() - min(job.queued for job in batch)))
            del waits[:-QUERY_WAITS]
        if lane == QUERY_LANE:
            self._query_idle.clear()
            if self._query_executor is None:
                self._query_executor = ThreadPoolExecutor(max_workers=1,
                                                          thread_name_prefix="encoder-query")
            executor = self._query_executor
        else:
            if self._executor is None:
                self._executor = encoder_thread()
            executor = self._executor
        return executor.submit(self._encode, [job.text for job in batch], batch, lane, started)

    async def _collect(self, handed: Handed, lane: int) -> None:
        """Await a handed batch and give every job its vector (or the batch's error)."""
        batch = handed.batch
        try:
            vectors = await asyncio.wrap_future(handed.future)
        except Exception as exc:  # noqa: BLE001 - every waiter of the batch learns it
            log.warning("encoder batch of %d texts failed: %s", len(batch), exc)
            for job in batch:
                self._finish(job, error=exc)
            return
        finally:
            if lane == QUERY_LANE:
                self._query_idle.set()
            if handed.token is not None:
                self.limiter.release_on_behalf_of(handed.token)
        for job, vector in zip(batch, vectors):
            if job.query:
                self.queries.put(job.text, vector)
            self._finish(job, vector=vector)

    def share_of(self, kind: int) -> float:
        """The share of one core a batch of `kind` may use (1.0: no pause after it)."""
        if kind == DOCUMENT:
            return min(self.background_share, BUSY_SHARE) if self.busy() else self.background_share
        if kind == INDEX and self.busy():
            return self.index_busy_share
        return 1.0

    async def _yield_cpu(self, spent: float, share: float, kind: int) -> None:
        """After a background batch of `kind` that took `spent` seconds, leave the CPU to the
        event loop for long enough that the batches use at most `share` of one core: the pause
        is `spent × (1 − share) / share`. A job more urgent than `kind` arriving ends it at once
        (`submit` sets the wake event)."""
        deadline = self.wall() + pause_after(spent, share)
        self._wake, self._pausing = asyncio.Event(), kind
        try:
            while (now := self.wall()) < deadline:
                if any(job.kind < kind and lane_of(job.kind) == BACKGROUND_LANE
                       and not job.running for job in self._pending.values()):
                    return
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), min(PAUSE_POLL_S, deadline - now))
                except TimeoutError:
                    continue
                return  # woken: a more urgent background text arrived
        finally:
            self._wake, self._pausing = None, None

    def take_batch(self, lane: int = BACKGROUND_LANE, *, split_from: int = 0) -> list[Job]:
        """Drop expired and abandoned jobs, then the next batch of `lane` by `jobs.pick_batch`
        (texts queued at least `AGING_S` ago by `wall` count as aged; from `split_from` texts on
        it takes at most half of a lone call's capabilities); the batch's jobs are marked running."""
        now = self.clock()
        live: list[Job] = []
        for job in list(self._pending.values()):
            if job.future.done() or job.running:
                continue
            if job.expired(now) or job.abandoned():
                self.stats.dropped += 1
                reason = "deadline passed" if job.expired(now) else "every caller went away"
                self._finish(job, error=EncodingDropped(f"not encoded: {reason}"))
                continue
            if lane_of(job.kind) == lane:
                live.append(job)
        batch = pick_batch(live, lane, self.wall() - AGING_S, max_batch=self.max_batch,
                           max_tokens=self.max_tokens, split_from=split_from)
        for job in batch:
            job.running = True
        return batch

    def _encode(self, texts: list[str], batch: list[Job], lane: int = BACKGROUND_LANE,
                started: threading.Event | None = None) -> Any:
        """Encoder thread: one batch, validated; document vectors stored in the cache here so
        the disk append stays off the event loop. A busy release runs on the background
        thread only: a caller waiting on a capability never waits for it. `started` is set
        as the model starts to run, after the tokenizing that holds the GIL (at once for an
        encoder that cannot say when it runs; `_dispatch_lone` waits for it)."""
        import numpy as np

        if started is not None and self._announces:
            raw = self.encoder.encode(list(texts), started=started.set)
        else:
            if started is not None:
                started.set()
            raw = self.encoder.encode(list(texts))
        vectors = np.asarray(raw, dtype=np.float32)
        if vectors.shape != (len(texts), self.dimension) or not np.all(np.isfinite(vectors)):
            raise ValueError("the encoder returned malformed vectors")
        padded = len(texts) * max(j.tokens for j in batch)
        with self._counting:
            self.stats.encoded += len(texts)
            self.stats.batches += 1
            self.stats.largest_batch_tokens = max(self.stats.largest_batch_tokens, padded)
            self._unreleased_tokens += padded
            due = lane == BACKGROUND_LANE and self._unreleased_tokens >= RELEASE_BUSY_TOKENS
            if due:
                self._unreleased_tokens = 0
        release = getattr(self.encoder, "release_memory", None)
        if release is not None and due:
            release()  # a busy runner never goes idle: release every few thousand tokens
        stored = [(job.text, row) for job, row in zip(batch, vectors) if job.persist]
        if stored and self.cache is not None:
            self.cache.store([t for t, _ in stored], np.vstack([r for _, r in stored]))
        return vectors

    def _finish(self, job: Job, *, vector: Any = None, error: BaseException | None = None) -> None:
        if self._pending.get(job.digest) is job:
            del self._pending[job.digest]
        if job.future.done():
            return
        if error is not None:
            job.future.set_exception(error)
        else:
            job.future.set_result(vector)
