"""BM25 and RRF: `_rank` against bm25s, rank_bm25, tantivy and the plain-Python reference.

Run: `python -m pytest benchmarks/bench_rank.py --benchmark-only` (add `RANK_BENCH_MARKDOWN=out.md`
for a Markdown summary). At scale, in one sitting against bm25s and the `tantivy` bindings (a
benchmark-only install: `pip install tantivy`): `python benchmarks/bench_rank.py scale` (100k and
1M Zipf documents and the docstring corpus; see `--help`, and docs/rank-at-scale.md).
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


# ------------------------------------------------------------------ at scale, one sitting


def _rss() -> int:
    """Resident bytes now (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            import os

            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _Engine:
    """One competitor: build(corpus) -> index, query(index, terms) -> top-k doc ids."""

    def __init__(self, name: str, build: Callable[[Corpus], object],
                 query: Callable[[object, list[str]], object]) -> None:
        self.name, self.build, self.query = name, build, query


def _tantivy_engine() -> _Engine | None:
    try:
        import tantivy
    except ImportError:
        return None

    def build(c: Corpus) -> object:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="default", index_option="freq")
        schema = builder.build()
        index = tantivy.Index(schema)  # in memory
        writer = index.writer(heap_size=512_000_000, num_threads=1)
        for terms in c.documents:  # our terms are lowercase ASCII words: `default` keeps them
            writer.add_document(tantivy.Document(body=" ".join(terms)))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        return (schema, index.searcher())

    def query(index: object, terms: list[str]) -> object:
        schema, searcher = index  # type: ignore[misc]
        clauses = [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", t))
                   for t in dict.fromkeys(terms)]
        return searcher.search(tantivy.Query.boolean_query(clauses), K).hits

    return _Engine("tantivy", build, query)


def _engines() -> list[_Engine]:
    engines = [
        _Engine("_rank", build_rank, lambda index, q: index.search(q, k=K)),  # type: ignore[attr-defined]
        _Engine("bm25s", build_bm25s,
                lambda index, q: index.retrieve([q or ["\x00"]], k=K, show_progress=False,  # type: ignore[attr-defined]
                                                n_threads=0)),
    ]
    engines.append(_Engine("bm25s-scores", build_bm25s,
                           lambda index, q: _top_k(index.get_scores(q))))  # type: ignore[attr-defined]
    found = _tantivy_engine()
    if found is not None:
        engines.append(found)
    return engines


def _check_scores(c: Corpus, ours: object, theirs: object) -> None:
    """bm25s (lucene) scores every document like the reference (a query's repeated terms
    counted once, as ours), up to one constant factor (recent bm25s drops Lucene's `k1 + 1`):
    our top k must carry its scores."""
    for q in c.queries[:20]:
        if not q:
            continue
        scores = theirs.get_scores(list(dict.fromkeys(q)))  # type: ignore[attr-defined]
        for doc, score, _ in ours.search(q, k=K):  # type: ignore[attr-defined]
            theirs_score = float(scores[doc])
            factors = (1.0, 1.2 + 1.0)  # k1 + 1, both built with k1 = 1.2
            if not any(math.isclose(theirs_score * f, score, rel_tol=1e-4) for f in factors):
                raise AssertionError(f"score mismatch on {q!r}, document {doc}")


def run_scale(c: Corpus, rounds: int, budget: float) -> list[dict[str, object]]:
    """Build every engine on `c` (time, memory), then time the query set `rounds` times per
    engine, interleaved and rotated so load hits every engine alike; per engine the median
    µs per query and its ratio to `_rank` in the same round."""
    import gc
    import os
    import time

    rows: dict[str, dict[str, object]] = {}
    indexes: dict[str, object] = {}
    for engine in _engines():
        if engine.name == "bm25s-scores":  # the bm25s index, queried through get_scores
            indexes[engine.name] = indexes["bm25s"]
            rows[engine.name] = {"corpus": c.name, "docs": len(c.documents), "engine": engine.name}
            continue
        gc.collect()
        before = _rss()
        start = time.perf_counter()
        indexes[engine.name] = engine.build(c)
        built = time.perf_counter() - start
        gc.collect()
        rows[engine.name] = {"corpus": c.name, "docs": len(c.documents), "engine": engine.name,
                             "build_s": built, "rss_growth_mb": (_rss() - before) / 2**20}
        for q in c.queries:  # warm-up
            engine.query(indexes[engine.name], q)
    ours = indexes["_rank"]
    rows["_rank"]["index_mb"] = ours._footprint()["bytes"] / 2**20  # type: ignore[attr-defined]
    _check_scores(c, ours, indexes["bm25s"])
    engines = [e for e in _engines() if e.name in indexes]
    per_round: dict[str, list[float]] = {e.name: [] for e in engines}
    deadline = time.perf_counter() + budget
    for r in range(rounds):
        for engine in engines[r % len(engines):] + engines[: r % len(engines)]:
            index, queries = indexes[engine.name], c.queries
            start = time.perf_counter()
            for q in queries:
                engine.query(index, q)
            per_round[engine.name].append((time.perf_counter() - start) / len(queries) * 1e6)
        if time.perf_counter() > deadline:
            break
    for engine in engines:
        times = per_round[engine.name]
        ratios = sorted(t / o for t, o in zip(times, per_round["_rank"]))
        rows[engine.name].update(
            query_us=sorted(times)[len(times) // 2], best_us=min(times),
            ratio_to_rank=ratios[len(ratios) // 2], rounds=len(times),
            load=os.getloadavg()[0])
    return list(rows.values())


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import os

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["scale"])
    parser.add_argument("--docs", type=int, nargs="*", default=[100_000, 1_000_000],
                        help="synthetic corpus sizes (the Zipf generator of _corpora)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--budget", type=float, default=120.0,
                        help="seconds of timed rounds per corpus (at least one round runs)")
    parser.add_argument("--no-real", action="store_true", help="skip the docstring corpus")
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args(argv)
    from _corpora import docstring_corpus, package_versions

    print(f"load average at start: {os.getloadavg()}")
    rows: list[dict[str, object]] = []
    corpora = [lambda n=n: synthetic_corpus(n, n_queries=args.queries) for n in args.docs]
    if not args.no_real:
        print(f"docstring corpus from {package_versions()}")
        corpora.append(lambda: docstring_corpus(args.queries))
    for make in corpora:
        c = make()
        for row in run_scale(c, args.rounds, args.budget):
            rows.append(row)
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in row.items()), flush=True)
        del c
    print(f"load average at end: {os.getloadavg()}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
