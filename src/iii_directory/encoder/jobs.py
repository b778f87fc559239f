"""What the encoder pipeline (encoding.py) queues and how it cuts batches: priority classes and
lanes, one `Job` per distinct text in flight, the pipeline's counters, and `pick_batch`, the
batch policy (most urgent class first, texts some caller waits on first, shortest job first with
aging, bounded by texts and padded tokens, a long capability alone, an optional split in halves);
a batch handed to a thread and not collected yet (`Handed`), and a caller's vectors handed over
and not awaited yet (`Pending`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .vector_cache import text_key

QUERY = 0  # chosen: priority order, not a magnitude
"""Priority class of capability texts (a caller waits on them)."""
INDEX = 1  # chosen: priority order, not a magnitude
"""Priority class of catalog documents (the index every hybrid answer needs)."""
DOCUMENT = 2  # chosen: priority order, not a magnitude
"""Priority class of ad-hoc documents (skills, triggers, registry contracts)."""

QUERY_LANE = 0  # chosen: lane index, not a magnitude
"""The lane of capabilities a caller waits on (its own runner and thread)."""
BACKGROUND_LANE = 1  # chosen: lane index, not a magnitude
"""The lane of catalog and ad-hoc documents and of warmed capabilities."""

MAX_BATCH = 16  # chosen, our change (docs/rules/search.md §5.2): bounds memory
"""Texts per encoder batch (bounded batch shapes: see `_rank.dense.Encoder`)."""
MAX_TOKENS = 512  # chosen: bounds the encoder's arena (docs/operations.md)
"""Padded tokens per encoder batch: `texts × longest text` ≤ this."""
SPLIT_AT = 2  # chosen: a capability and its action-and-object text (docs/record/performance.md)
"""Capabilities of a lone call that are split across both threads from this many texts on: the
two halves then finish in the time of the longer one where one batch costs their sum (padded to
the longer), and with int8 weights two one-text runs cost the CPU of one two-text batch."""
AGING_S = 1.0  # chosen: a third of a call's 3 s embedding budget (dense_lane.QUERY_TIMEOUT_S)
"""A text waiting this long is no longer passed by shorter ones: it goes in arrival order."""
LONG_QUERY_TOKENS = 64  # chosen: above the longest graded capability (210 characters, ~50 tokens)
"""A capability over this many tokens is encoded in a batch of its own (query lane)."""
QUERY_WAITS = 256  # chosen: enough batches for a p95
"""Query-lane batch waits kept in `PipelineStats.query_waits`."""


def lane_of(kind: int) -> int:
    """Capabilities go through the query lane, every other class through the background lane."""
    return QUERY_LANE if kind == QUERY else BACKGROUND_LANE


class EncodingDropped(Exception):
    """The text was not encoded: its deadline passed or every caller went away first."""


def query_key(text: str, *, lowercase: bool = True) -> str:
    """The normalised capability text a query vector is cached under and embedded from: runs of
    whitespace collapsed to one space, trimmed, and lower-cased when the encoder's tokenizer
    lower-cases anyway (MiniLM's does), so the key determines the vector."""
    collapsed = " ".join(text.split())
    return collapsed.lower() if lowercase else collapsed


text_digest = text_key
"""A text's single-flight key: the same SHA-256 the vector cache files it under."""


@dataclass
class Job:
    """One distinct text waiting for the encoder."""

    text: str
    digest: bytes
    kind: int
    tokens: int
    future: asyncio.Future[Any]
    queued: float = 0.0
    """Wall time the job was queued (`EncoderPipeline.wall`)."""
    waiters: int = 0
    deadline: float | None = None
    keep: bool = False
    persist: bool = False
    """Some waiter is a document: store the vector in the document cache."""
    query: bool = False
    """Some waiter is a capability: keep the vector in the query LRU."""
    unbounded: bool = False
    """Some waiter has no deadline."""
    running: bool = False
    """The job is in a batch a runner handed to the encoder."""

    def join(self, deadline: float | None, keep: bool, persist: bool, query: bool,
             kind: int) -> None:
        self.waiters += 1
        if deadline is None:
            self.unbounded = True
        elif self.deadline is None or deadline > self.deadline:
            self.deadline = deadline
        self.keep = self.keep or keep
        self.persist = self.persist or persist
        self.query = self.query or query
        self.kind = min(self.kind, kind)

    def expired(self, now: float) -> bool:
        return not self.unbounded and self.deadline is not None and now >= self.deadline

    def abandoned(self) -> bool:
        return self.waiters <= 0 and not self.keep


@dataclass
class PipelineStats:
    encoded: int = 0
    """Texts sent to the encoder."""
    batches: int = 0
    dropped: int = 0
    """Jobs dropped before encoding (deadline passed or no caller left)."""
    coalesced: int = 0
    """Requests that joined a text already in flight (single flight)."""
    largest_batch_tokens: int = 0
    query_waits: list[float] = field(default_factory=list)
    """Per query-lane batch, wall seconds from its first text's arrival to the batch's start
    (the last `QUERY_WAITS` batches): what a fresh capability waited for the encoder."""


@dataclass
class Handed:
    """A batch submitted to an encoder thread, not collected yet: its jobs, the thread's future
    and the limiter token held for it (None: none held by the batch itself)."""

    batch: list[Job]
    future: concurrent.futures.Future[Any]
    token: object | None = None


def pick_batch(live: Sequence[Job], lane: int, aged: float, *, max_batch: int, max_tokens: int,
               split_from: int = 0) -> list[Job]:
    """The next batch of `lane` among `live` jobs (not running, not expired, not abandoned, all
    of that lane): the most urgent class present, texts some caller waits on first; among those,
    texts queued at or before `aged` (wall time) in arrival order, then the others shortest first
    (by tokens, text) — shortest job first with aging; a capability over `LONG_QUERY_TOKENS` is a
    batch of its own in the query lane; as many as fit `max_batch` texts and `max_tokens` padded
    tokens (`count × longest`; at least one); with `split_from` > 0 and at least that many texts,
    at most half of them (rounded up), leaving the rest to the other thread."""
    if not live:
        return []
    urgent = min(job.kind for job in live)
    ordered = sorted((j for j in live if j.kind == urgent),
                     key=lambda j: (j.waiters <= 0, j.queued > aged,
                                    j.tokens if j.queued > aged else j.queued, j.text))
    if split_from > 0 and len(ordered) >= split_from:
        ordered = ordered[:(len(ordered) + 1) // 2]
    batch: list[Job] = []
    longest = 0
    for job in ordered:
        longest = max(longest, job.tokens)
        alone = lane == QUERY_LANE and longest > LONG_QUERY_TOKENS
        if batch and (len(batch) >= max_batch or alone
                      or (len(batch) + 1) * longest > max_tokens):
            break
        batch.append(job)
    return batch


class Pending:
    """Vectors `EncoderPipeline.begin` handed over: `found` (None where `missing`), the jobs of
    the missing texts, which this caller waits on until `leave()`; `pipeline` is the
    `EncoderPipeline` (its `_wait`, `_leave` and `dimension`)."""

    def __init__(self, pipeline: Any, found: list[Any], missing: list[int],
                 jobs: list[Job]) -> None:
        self.pipeline = pipeline
        self.found = found
        self.missing = missing
        self.jobs = jobs
        self._left = False

    async def vectors(self) -> Any:
        """The (len(texts), dim) float32 matrix in input order, once every job is encoded;
        `EncodingDropped` (or the batch's error) when one was not."""
        import numpy as np

        if self.jobs:
            for i, vector in zip(self.missing, await self.pipeline._wait(self.jobs)):
                self.found[i] = vector
        if not self.found:
            return np.zeros((0, self.pipeline.dimension), dtype=np.float32)
        return np.vstack(self.found).astype(np.float32, copy=False)

    def leave(self) -> None:
        """This caller stops waiting (once): a job nobody else waits on is dropped before it is
        encoded."""
        if not self._left:
            self._left = True
            self.pipeline._leave(self.jobs)


def parameters(function: Any) -> list[str]:
    """The parameter names of `function` (none when they cannot be read)."""
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def consume(future: asyncio.Future[Any]) -> None:
    """Retrieve a job's exception so a future nobody awaits any more logs nothing."""
    if not future.cancelled():
        future.exception()
