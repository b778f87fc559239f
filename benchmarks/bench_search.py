"""`directory::search_functions` end to end: latency of one call, cold embedding, scaled catalogs.

Run: `python -m pytest benchmarks/bench_search.py --benchmark-only` (add `-k eval` for the eval
catalog only; the 50k rows build an HNSW graph first, about a minute on 2 cores).

* `test_eval_call` — one call with 1, 6 and 18 capabilities through `Directory.invoke` on the
  eval catalog (295 records; the shipped example catalog when the eval set is not on this
  machine), `lexical` and `hybrid` (packaged MiniLM, warm; the index and the fusion's views
  embedded before the first round, so no background document batch holds the encoder while a
  round runs). Registry lane off, no skills, the standalone engine (the trigger side lane fails
  fast, as with no engine).
* `test_eval_call_new_texts` — **first calls**: the same hybrid calls, every round with capability
  texts no call has used before (each phrasing with a new order number), so every per-text cache
  (query vectors, parsed queries, second queries, term memos) misses and every capability goes
  through the encoder pipeline: an agent's first wording of a need. `test_eval_call` measures
  **repeated calls** (the same wording again, served from those caches). The summary reports the
  two apart.
* `test_cold_embedding_512` — embedding a 512-function catalog into an empty vector cache, then
  a restart on the same cache directory (must embed nothing).
* `test_scaled_call` — catalogs of 5,000 and 50,000 functions (the eval catalog cloned under
  numbered namespaces). Document vectors are seeded into the cache with random unit vectors so
  only the index build is paid (HNSW at ≥ 5,000 documents); queries go through the real model.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.exclusions import is_excluded
from iii_directory.search.service import SearchService
from iii_directory.standalone import standalone_engine

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")

from _phrasings import PHRASINGS, catalog, fresh  # noqa: E402
from _report import report  # noqa: E402

pytestmark = pytest.mark.timeout(900)

def scaled(records: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """`size` searchable records: copies of `records` under numbered namespaces
    (`email7::send`); excluded and internal records are left out."""
    out: list[dict[str, Any]] = []
    copy = 0
    while len(out) < size:
        for record in records:
            namespace, sep, rest = record["function_id"].partition("::")
            if not sep or is_excluded(record["function_id"], record.get("metadata")):
                continue
            out.append({**record, "function_id": f"{namespace}{copy}::{rest}" if copy else record["function_id"]})
            if len(out) == size:
                break
        copy += 1
    return out


def settings(root: Path, mode: str) -> Settings:
    empty = root / "empty"
    return Settings(
        skills_folder=str(empty / "skills"), local_skills_folder=str(empty / "skills" / "iii"),
        agents_folder=str(empty / "agents"), agents_skills_folder=str(empty / "agent-skills"),
        global_agents_skills_folder=str(empty / "global"), auto_download=False, registry_search=False,
        filter_unregistered=False, function_search_mode=mode,
    )


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def encoder() -> Any:
    from _rank import dense

    from iii_directory.encoder.dense_lane import encoder_threads, encoder_weights

    # III_DIRECTORY_ENCODER_THREADS and _WEIGHTS, as the worker
    e = dense.Encoder(threads=encoder_threads(), weights=encoder_weights())
    e.encode(["warm up"])
    return e


def make_directory(loop: asyncio.AbstractEventLoop, records: list[dict[str, Any]], mode: str,
                   root: Path, encoder: Any = None) -> Directory:
    directory = Directory(settings=settings(root, mode), engine=standalone_engine(records))
    service = directory.service(SearchService)

    async def prepare() -> None:
        await service.boot()
        if mode != "lexical":
            service.use_encoder(encoder, cache_dir=root / "cache")
            await service.ensure_ready(directory.context(), views=True)
            await service.settle()

    loop.run_until_complete(prepare())
    return directory


_DIRECTORIES: dict[str, Directory] = {}


def eval_directory(loop: asyncio.AbstractEventLoop, mode: str, root: Path, encoder: Any) -> Directory:
    if mode not in _DIRECTORIES:
        _DIRECTORIES[mode] = make_directory(loop, catalog(), mode, root / mode, encoder)
    return _DIRECTORIES[mode]


def call(loop: asyncio.AbstractEventLoop, directory: Directory, capabilities: list[str]) -> Any:
    return loop.run_until_complete(directory.invoke("directory::search_functions",
                                                    {"capabilities": capabilities}))


@pytest.mark.parametrize("count", [1, 6, 18])
@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_eval_call(benchmark: Any, loop: asyncio.AbstractEventLoop, encoder: Any,
                   tmp_path_factory: pytest.TempPathFactory, mode: str, count: int) -> None:
    directory = eval_directory(loop, mode, tmp_path_factory.mktemp("eval"), encoder)
    capabilities = PHRASINGS[:count]
    call(loop, directory, capabilities)
    benchmark.group = f"search-eval-{count}-caps"
    result = benchmark(call, loop, directory, capabilities)
    assert result["search_mode"] == mode
    report(benchmark, f"search eval {count} caps, repeated call", mode, 1)


@pytest.mark.parametrize("count", [1, 6, 18])
def test_eval_call_new_texts(benchmark: Any, loop: asyncio.AbstractEventLoop, encoder: Any,
                             tmp_path_factory: pytest.TempPathFactory, count: int) -> None:
    directory = eval_directory(loop, "hybrid", tmp_path_factory.mktemp("eval"), encoder)
    pipeline = directory.service(SearchService).dense.pipeline
    assert pipeline is not None
    call(loop, directory, PHRASINGS[:count])
    before = pipeline.stats.encoded
    serials = iter(range(count * 1000, count * 1000 + 1000))

    def new_texts() -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (loop, directory, fresh(count, next(serials))), {}

    benchmark.group = f"search-eval-{count}-caps"
    result = benchmark.pedantic(call, setup=new_texts, rounds=40, warmup_rounds=2)
    assert result["search_mode"] == "hybrid"
    assert pipeline.stats.encoded >= before + 42 * count  # every round went through the encoder
    report(benchmark, f"search eval {count} caps, first call", "hybrid", 1)


def test_cold_embedding_512(benchmark: Any, loop: asyncio.AbstractEventLoop, encoder: Any,
                            tmp_path_factory: pytest.TempPathFactory) -> None:
    records = scaled(catalog(), 512)
    for i, record in enumerate(records):  # distinct texts: every document is a cache miss
        record["description"] = f"{record['description']} Variant {i}."
    root = tmp_path_factory.mktemp("cold")
    timings: list[float] = []

    def cold() -> Directory:
        started = time.perf_counter()
        directory = make_directory(loop, records, "hybrid", root / f"run{len(timings)}", encoder)
        timings.append(time.perf_counter() - started)
        return directory

    benchmark.group = "search-embedding"
    directory = benchmark.pedantic(cold, rounds=1, iterations=1, warmup_rounds=0)
    assert directory.service(SearchService).dense.encoded_documents == 512
    restarted = make_directory(loop, records, "hybrid", root / "run0", encoder)
    assert restarted.service(SearchService).dense.encoded_documents == 0  # a restart re-embeds nothing
    report(benchmark, "cold embed 512 functions", "hybrid", 512)


_SCALED: dict[tuple[int, str], Directory] = {}


def scaled_directory(loop: asyncio.AbstractEventLoop, size: int, mode: str, root: Path,
                     encoder: Any) -> Directory:
    key = (size, mode)
    if key not in _SCALED:
        records = scaled(catalog(), size)
        if mode == "hybrid":
            seed_vectors(loop, records, root)
        _SCALED[key] = make_directory(loop, records, mode, root, encoder)
    return _SCALED[key]


def seed_vectors(loop: asyncio.AbstractEventLoop, records: list[dict[str, Any]], root: Path) -> None:
    """Put a random unit vector for every document text into the cache `use_encoder` reads."""
    from iii_directory.encoder.vector_cache import VectorCache

    probe = Directory(settings=settings(root, "lexical"), engine=standalone_engine(records))
    service = probe.service(SearchService)
    loop.run_until_complete(service.boot())
    _, texts = service.corpus.index_inputs()
    rows = np.random.default_rng(7).normal(size=(len(texts), 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    VectorCache("test", 384, root / "cache").store(texts, rows)


@pytest.mark.parametrize("count", [1, 6])
@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
@pytest.mark.parametrize("size", [5_000, 50_000], ids=["5k", "50k"])
def test_scaled_call(benchmark: Any, loop: asyncio.AbstractEventLoop, encoder: Any,
                     tmp_path_factory: pytest.TempPathFactory, size: int, mode: str, count: int) -> None:
    directory = scaled_directory(loop, size, mode, tmp_path_factory.mktemp(f"scaled{size}{mode}"), encoder)
    capabilities = PHRASINGS[:count]
    call(loop, directory, capabilities)
    benchmark.group = f"search-{size // 1000}k-{count}-caps"
    result = benchmark(call, loop, directory, capabilities)
    assert result["search_mode"] == mode
    report(benchmark, f"search {size // 1000}k {count} caps", mode, 1)
