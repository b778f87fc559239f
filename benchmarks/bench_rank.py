"""BM25 and RRF: `_rank` against bm25s, rank_bm25 and the plain-Python reference.

Run: `python -m pytest benchmarks/bench_rank.py --benchmark-only` (add `RANK_BENCH_MARKDOWN=out.md`
for a Markdown summary).
Every query is one call (no batching) with k = 10. Documents of the eval catalog are built as
search.md §3.4 says (function id three times, the slim description, the argument names);
synthetic corpora have a Zipf vocabulary so frequent words make long postings lists.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

import _rank
from _rank import _reference
from _corpora import Corpus, catalog_corpus, synthetic_corpus
from _report import report

bm25s = pytest.importorskip("bm25s")
rank_bm25 = pytest.importorskip("rank_bm25")

K = 10
pytestmark = pytest.mark.timeout(900)

_CORPORA: dict[str, Corpus] = {}


def corpus(name: str) -> Corpus:
    """Corpora are built once per session (building is not what is measured)."""
    if name not in _CORPORA:
        if name == "catalog":
            found = catalog_corpus()
            if found is None:
                pytest.skip("the eval catalog (/work/shared/eval/catalog.json) is not on this machine")
            _CORPORA[name] = found
        elif name == "20k":
            _CORPORA[name] = synthetic_corpus(20_000, n_queries=100)
        else:
            _CORPORA[name] = synthetic_corpus(100_000, n_queries=20)
    return _CORPORA[name]


# ------------------------------------------------------------------ the competitors


def build_rank(c: Corpus) -> object:
    return _rank.BM25Index(c.documents)


def build_reference(c: Corpus) -> object:
    return _reference.BM25Index(c.documents)


def build_bm25s(c: Corpus) -> object:
    retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")  # lucene = the same IDF as ours
    retriever.index(c.documents, show_progress=False)
    return retriever


def build_rank_bm25(c: Corpus) -> object:
    return rank_bm25.BM25Okapi(c.documents, k1=1.2, b=0.75)


def query_rank(index: object, c: Corpus) -> Callable[[], object]:
    search = index.search  # type: ignore[attr-defined]
    queries = c.queries
    return lambda: [search(q, k=K) for q in queries]


def query_bm25s(index: object, c: Corpus) -> Callable[[], object]:
    queries = [q if q else ["\x00"] for q in c.queries]  # bm25s rejects an empty query
    return lambda: [index.retrieve([q], k=K, show_progress=False, n_threads=0) for q in queries]  # type: ignore[attr-defined]


def _top_k(scores: np.ndarray) -> np.ndarray:
    if len(scores) <= K:
        return np.argsort(-scores, kind="stable")
    head = np.argpartition(-scores, K)[:K]
    return head[np.argsort(-scores[head], kind="stable")]


def query_scores(index: object, c: Corpus) -> Callable[[], object]:
    """bm25s `get_scores` / rank_bm25 `get_scores` plus a numpy top-k: their fastest
    single-query path."""
    queries = c.queries
    return lambda: [_top_k(index.get_scores(q)) for q in queries]  # type: ignore[attr-defined]


# ------------------------------------------------------------------ sanity: same answers


def test_bm25s_agrees_with_rank() -> None:
    """Not timed: bm25s (lucene) computes the same scores, so the race is fair."""
    c = corpus("catalog")
    ours = _rank.BM25Index(c.documents)
    theirs = build_bm25s(c)
    for q in c.queries[:40]:
        if not q:
            continue
        hits = ours.search(q, k=K)
        scores = theirs.get_scores(q)
        for doc, score, _ in hits:
            assert math.isclose(float(scores[doc]), score, rel_tol=1e-4), (q, doc)


# ------------------------------------------------------------------ queries

QUERY_CASES = [
    ("_rank", build_rank, query_rank),
    ("bm25s", build_bm25s, query_bm25s),
    ("bm25s-scores", build_bm25s, query_scores),
    ("rank_bm25", build_rank_bm25, query_scores),
    ("reference", build_reference, query_rank),
]
SLOW = {"rank_bm25", "reference", "bm25s", "bm25s-scores"}


@pytest.mark.parametrize("corpus_name", ["catalog", "20k", "100k"])
@pytest.mark.parametrize(("implementation", "build", "make_query"), QUERY_CASES, ids=[c[0] for c in QUERY_CASES])
def test_query(benchmark, corpus_name, implementation, build, make_query) -> None:  # type: ignore[no-untyped-def]
    c = corpus(corpus_name)
    run = make_query(build(c), c)
    benchmark.group = f"bm25-query-{corpus_name}"
    if corpus_name == "100k" and implementation in SLOW:
        benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    elif implementation in SLOW:
        benchmark.pedantic(run, rounds=10, iterations=1, warmup_rounds=1)
    else:
        benchmark(run)
    report(benchmark, f"query {corpus_name} ({len(c.documents)} docs)", implementation, len(c.queries))


# ------------------------------------------------------------------ index build

BUILD_CASES = [
    ("_rank", build_rank),
    ("bm25s", build_bm25s),
    ("rank_bm25", build_rank_bm25),
    ("reference", build_reference),
]


@pytest.mark.parametrize("corpus_name", ["catalog", "20k", "100k"])
@pytest.mark.parametrize(("implementation", "build"), BUILD_CASES, ids=[c[0] for c in BUILD_CASES])
def test_build(benchmark, corpus_name, implementation, build) -> None:  # type: ignore[no-untyped-def]
    c = corpus(corpus_name)
    benchmark.group = f"bm25-build-{corpus_name}"
    rounds = 3 if corpus_name == "100k" else (5 if corpus_name == "20k" else 20)
    benchmark.pedantic(build, args=(c,), rounds=rounds, iterations=1, warmup_rounds=0)
    report(benchmark, f"build {corpus_name} (per index)", implementation, 1)


# ------------------------------------------------------------------ term pipeline and RRF


@pytest.mark.parametrize(("implementation", "module"), [("_rank", _rank), ("reference", _reference)])
def test_tokenize_query(benchmark, implementation, module) -> None:  # type: ignore[no-untyped-def]
    c = corpus("catalog")
    texts = c.query_texts
    fn = module.tokenize_query
    benchmark.group = "tokenize-query"
    benchmark(lambda: [fn(t) for t in texts])
    report(benchmark, "tokenize_query (eval caps)", implementation, len(texts))


@pytest.mark.parametrize(("implementation", "module"), [("_rank", _rank), ("reference", _reference)])
def test_rrf(benchmark, implementation, module) -> None:  # type: ignore[no-untyped-def]
    lexical = [f"ns::fn{i}" for i in range(0, 40, 3)]
    dense = [f"ns::fn{i}" for i in range(0, 48, 2)]
    fn = module.rrf
    benchmark.group = "rrf"
    benchmark(fn, [lexical, dense], [1.0, 1.0])
    report(benchmark, "rrf (14 + 24 ids)", implementation, 1)
