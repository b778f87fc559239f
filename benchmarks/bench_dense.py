"""Dense lane: encoder latency/throughput and VectorIndex exact vs HNSW (latency, recall@10).

Run: `python -m pytest benchmarks/bench_dense.py --benchmark-only`.
HNSW parameters are the production ones (M=16, ef_construction=200, ef=max(100, k)); vectors
are synthetic with a low intrinsic dimension (see `_vectors.clustered`). Building the 100k HNSW
graph is measured once (it dominates the run: about a minute and a half on 2 cores).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")
pytest.importorskip("hnswlib")

from _rank import dense  # noqa: E402
from _corpora import catalog_corpus  # noqa: E402
from _vectors import clustered  # noqa: E402
from _report import report  # noqa: E402

pytestmark = pytest.mark.timeout(900)

K = 10
N_QUERIES = 100
SIZES = {"2k": 2_000, "5k": 5_000, "20k": 20_000, "100k": 100_000}


# ------------------------------------------------------------------ encoder

SHORT_QUERIES = [
    "send an email to a customer",
    "presign a url for a stored file",
    "create a calendar event next tuesday",
    "list open pull requests",
    "charge a card for the invoice",
]


@pytest.fixture(scope="module", params=[1, 2], ids=["1-thread", "2-threads"])
def encoder(request: pytest.FixtureRequest) -> dense.Encoder:
    e = dense.Encoder(threads=request.param)
    e.encode(["warm up"])
    return e


def test_encoder_short_query(benchmark, encoder) -> None:  # type: ignore[no-untyped-def]
    benchmark.group = "encoder-query"
    benchmark(lambda: [encoder.encode([q]) for q in SHORT_QUERIES])
    threads = encoder._session.get_session_options().intra_op_num_threads
    report(benchmark, "encode 1 short query", f"{threads} thread(s)", len(SHORT_QUERIES))


def test_encoder_batched_documents(benchmark, encoder) -> None:  # type: ignore[no-untyped-def]
    corpus = catalog_corpus()
    if corpus is None:
        pytest.skip("the eval catalog is not on this machine")
    # the dense documents are the searchable text: drop the two extra copies of the name
    texts = [t.split(" ", 2)[2] for t in corpus.texts]
    benchmark.group = "encoder-batch"
    benchmark.pedantic(encoder.encode, args=(texts,), rounds=3, iterations=1, warmup_rounds=1)
    threads = encoder._session.get_session_options().intra_op_num_threads
    report(benchmark, f"encode {len(texts)} docs batched", f"{threads} thread(s)", len(texts))


# ------------------------------------------------------------------ vector index


@dataclass
class VectorSet:
    vectors: np.ndarray
    queries: np.ndarray
    exact: dense.VectorIndex
    hnsw: dense.VectorIndex | None = None
    build_seconds: float = 0.0


_SETS: dict[str, VectorSet] = {}


def vector_set(size: str) -> VectorSet:
    if size not in _SETS:
        vectors = clustered(SIZES[size])
        exact = dense.VectorIndex(threshold=10**12)
        exact.add(vectors)
        _SETS[size] = VectorSet(vectors, clustered(N_QUERIES, seed=99), exact)
    return _SETS[size]


def hnsw_of(vs: VectorSet) -> dense.VectorIndex:
    if vs.hnsw is None:
        started = time.perf_counter()
        index = dense.VectorIndex(threshold=0, threads=2)  # HNSW at every size, for comparison
        index.add(vs.vectors)
        vs.build_seconds = time.perf_counter() - started
        vs.hnsw = index
    return vs.hnsw


@pytest.mark.parametrize("size", list(SIZES))
def test_hnsw_build(benchmark, size) -> None:  # type: ignore[no-untyped-def]
    vs = vector_set(size)
    vs.hnsw = None
    benchmark.group = f"vector-build-{size}"
    benchmark.pedantic(hnsw_of, args=(vs,), rounds=1, iterations=1, warmup_rounds=0)
    report(benchmark, f"hnsw build {size} (per vector)", "hnsw", SIZES[size])


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("backend", ["exact", "hnsw"])
def test_vector_query(benchmark, size, backend) -> None:  # type: ignore[no-untyped-def]
    vs = vector_set(size)
    index = vs.exact if backend == "exact" else hnsw_of(vs)
    queries = [q[None, :] for q in vs.queries]
    run = lambda: [index.search(q, K) for q in queries]  # noqa: E731 - one query per call
    benchmark.group = f"vector-query-{size}"
    benchmark.pedantic(run, rounds=3 if size == "100k" else 10, iterations=1, warmup_rounds=1)
    note = ""
    if backend == "hnsw":
        got = index.search(vs.queries, K)[0]
        want = vs.exact.search(vs.queries, K)[0]
        recall = float(np.mean([len(set(g) & set(w)) / K for g, w in zip(got, want, strict=True)]))
        benchmark.extra_info["recall@10"] = recall
        note = f"recall@10 {recall:.3f}"
    report(benchmark, f"vector query {size} k=10", backend, len(queries), note)
