"""The static lane: MiniLM-distilled word-piece vectors (`_rank.static`) for lexical lanes, on
hosts where the MiniLM encoder cannot run (no `dense` extra: musl, armv7, or a BM25-only
install). Chosen for this project; figures in docs/search.md (the lexical+static rows of "Quality"),
their history in docs/record/search-quality.md, "Static lane".

When it serves (`STATIC_ENV`, `IIIDIR_STATIC_LANE`):
* `auto` (default): when the `dense` extra is missing, the kernels are compiled and the
  configured mode asks for a model (`hybrid` or `judge`), for every lane that comes out lexical. A configured `lexical` mode
  stays BM25 only, hybrid hosts keep MiniLM, and `search_mode` stays `lexical` in responses.
* `on`: also on hosts with the `dense` extra, whenever a lane comes out lexical (the bench's
  `static` mode, or a hybrid host before its MiniLM index is ready).
* `off`: never.

The rule applied to each lane, and its constants: `static_fusion.py`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio

import _rank

from .ranking import static_evidence
from .ranking.corpus import Corpus
from .ranking.lanes import Ranking, exact_lane
from .ranking.static_expansion import CatalogWords
from .ranking.static_fusion import (expanded_lane, fuse_static, head_share, keep_lexical_head,
                                    learned_order, static_tail)

log = logging.getLogger(__name__)

STATIC_ENV = "IIIDIR_STATIC_LANE"
STATIC_K = 64  # spec: docs/rules/search.md §5.3 (as the dense lane)
# chosen: a catalog this small indexes in well under a second while the search waits
AWAIT_BUILD_FUNCTIONS = 2_000


def compiled_kernels() -> bool:
    """`_rank.static` runs its compiled kernels. `auto` needs them: the plain-Python reference
    takes ~90 ms a capability at 512 functions (benchmarks/bench_static.py)."""
    try:
        from _rank import static
    except Exception:  # noqa: BLE001 - a broken install means no static lane
        return False
    return static.IMPLEMENTATION == "cython"


def static_setting() -> str:
    value = os.environ.get(STATIC_ENV, "auto").strip().lower() or "auto"
    return value if value in ("auto", "on", "off") else "auto"


class StaticLane:
    """The static encoder and the static index of the active catalog (one per fingerprint,
    built once in a worker thread; concurrent callers wait for the same build)."""

    def __init__(self, *, enabled: bool | None = None) -> None:
        self.enabled = enabled
        """True / False force the lane on / off; None follows `IIIDIR_STATIC_LANE`."""
        self.encoder: Any = None
        self.error: str | None = None
        self._index: tuple[str, list[str], Any, CatalogWords] | None = None
        """(catalog fingerprint, ids, static index, the catalog's words for expansion)."""
        self._build_lock = anyio.Lock()
        self._load_lock = threading.Lock()
        self._announced = False
        self._bm25_only_host: bool | None = None
        self._building: str | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def serves(self, mode: str = "hybrid") -> bool:
        """Whether lexical lanes take the static lane on this host under the configured `mode`."""
        if self.error is not None:
            return False
        if self.enabled is not None:
            return self.enabled
        setting = static_setting()
        if setting == "off":
            return False
        if setting == "on":
            return True
        if mode == "lexical":
            return False
        if self._bm25_only_host is None:  # installed packages do not change while running
            available = _rank.available()
            self._bm25_only_host = (bool(available.get("static")) and not available.get("dense")
                                    and compiled_kernels())
        return self._bm25_only_host

    def _load(self) -> Any:
        with self._load_lock:
            if self.encoder is None and self.error is None:
                started = time.perf_counter()
                try:
                    from _rank import static

                    self.encoder = static.default_encoder()
                except Exception as exc:  # noqa: BLE001 - a broken table means no static lane
                    self.error = str(exc)
                    log.warning("search: static lane unavailable: %s", exc)
                    return None
                from _rank import static

                log.info("search: static lane in use (%s kernels, %d×%d table, loaded in %.0f ms)",
                         static.IMPLEMENTATION, self.encoder.table.rows, self.encoder.dimension,
                         (time.perf_counter() - started) * 1000.0)
            return self.encoder

    async def start(self, mode: str) -> None:
        """Load the table at start-up when the lane will serve, and log that it does."""
        if not self._announced and self.serves(mode):
            self._announced = True
            await anyio.to_thread.run_sync(self._load)

    def _build(self, corpus: Corpus) -> tuple[str, list[str], Any, CatalogWords]:
        from _rank.static import StaticIndex

        encoder = self._load()
        ids, texts = corpus.index_inputs()
        index = StaticIndex(encoder.dimension)
        index.add(encoder.encode(texts))
        return corpus.fingerprint, ids, index, CatalogWords.build(encoder, corpus.documents)

    async def _build_current(self, corpus: Corpus) -> tuple[str, list[str], Any, CatalogWords] | None:
        """Build the index of `corpus` in a worker thread unless it is already the current one
        (one build at a time; callers waiting on the lock reuse its result)."""
        async with self._build_lock:
            current = self._index
            if current is None or current[0] != corpus.fingerprint:
                await anyio.to_thread.run_sync(self._load)
                if self.encoder is None:
                    return None
                current = await anyio.to_thread.run_sync(self._build, corpus)
                self._index = current
        return current

    async def _build_in_background(self, corpus: Corpus) -> None:
        try:
            await self._build_current(corpus)
        except Exception as exc:  # noqa: BLE001 - a failed build leaves the lane lexical
            log.warning("search: static index build failed: %s", exc)
        finally:
            self._building = None

    async def index(self, corpus: Corpus) -> tuple[str, list[str], Any, CatalogWords] | None:
        """The static index of `corpus`. A catalog of up to `AWAIT_BUILD_FUNCTIONS` functions is
        indexed while the search waits (512 functions: about 0.1 s); a larger one in the
        background, and searches stay lexical (None) until it is ready."""
        current = self._index
        if current is not None and current[0] == corpus.fingerprint:
            return current
        if len(corpus) <= AWAIT_BUILD_FUNCTIONS:
            return await self._build_current(corpus)
        if self._building != corpus.fingerprint:
            self._building = corpus.fingerprint
            task = asyncio.get_running_loop().create_task(self._build_in_background(corpus))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return None

    async def stop(self) -> None:
        """Cancel a background index build and wait for it to unwind."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def rankings(self, corpus: Corpus, texts: Sequence[str],
                       mode: str = "hybrid") -> list[Ranking] | None:
        """The static ranking (first `STATIC_K` by cosine) of each text; None when the lane does
        not serve under `mode`."""
        if not self.serves(mode) or not len(corpus):
            return None
        built = await self.index(corpus)
        if built is None:
            return None
        _, ids, index, _ = built
        encoder = self.encoder
        return [[(ids[row], cos) for row, cos in index.search(encoder.encode_one(text), STATIC_K)]
                for text in texts]

    async def fuse_lanes(self, call: Any, queries: Sequence[Any],
                         lanes: Sequence[tuple[Ranking, int]]) -> tuple[list[Ranking], list[Ranking]]:
        """The lexical lanes (`lanes.lexical_lane` pairs) each fused with its static ranking
        (`fuse_static`), and their recall tails (`static_tail`; none for an exact-id lane);
        the lexical lanes and no tails when the lane does not serve. `call` is the
        `SearchCall` (its corpus and configured mode)."""
        corpus = call.corpus
        rankings = await self.rankings(corpus, [q.dense_text for q in queries],
                                       call.settings.function_search_mode)
        if rankings is None:
            static_evidence.clear()
            return [lane for lane, _ in lanes], []
        static_evidence.record((query, ranking[0][1], head_share(ranking))
                               for query, ranking in zip(queries, rankings) if ranking)
        from .ranking.fusion import Request

        descriptions = corpus.descriptions
        describe: Callable[[str], str] = lambda function_id: descriptions.get(function_id, "")
        built = self._index
        words = built[3] if built is not None and built[0] == corpus.fingerprint else None
        fused = []
        tails = []
        for query, (bm25, _), ranking in zip(queries, lanes, rankings):
            lexical = bm25
            if not lexical and words is not None:
                lexical = expanded_lane(self.encoder, words, corpus.documents, query)
            lane = fuse_static(lexical, ranking)
            if lane and lexical:
                lane = learned_order(lane, lexical, ranking, Request.of(query.terms),
                                     corpus.documents, describe)
            if bm25:
                lane = keep_lexical_head(lane, bm25)
            fused.append(lane)
            exact = exact_lane(query.text, corpus.documents) is not None
            tails.append([] if exact else static_tail(lane, ranking))
        return fused, tails
