"""The compiled core's pruned top-k (MaxScore, block bounds, depth bounds) against the reference.

`_set_prune_postings(0)` sends every top-k query with k <= 1024 down the pruned path, so small
corpora exercise it; the exhaustive path (k None) stays the yardstick inside the core.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _rank import _reference

from .conftest import COMPILED

pytestmark = pytest.mark.skipif(COMPILED is None, reason="the compiled core is not built")

# few terms, skewed: long postings lists, many equal weights, so ties and pruning both happen
SKEWED = st.sampled_from(["a"] * 8 + ["b"] * 4 + ["c"] * 2 + ["d", "e", "f", "g"])
DOCUMENT = st.lists(SKEWED, max_size=12)
CORPUS = st.lists(DOCUMENT, max_size=300)
QUERY = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "zz"]), max_size=8)


@pytest.fixture(autouse=True, params=["stored", "compact"])
def always_prune(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test runs on both postings layouts: stored weights and 16-bit term counts."""
    previous = COMPILED._set_prune_postings(0)
    compact = COMPILED._set_compact_postings(0 if request.param == "compact" else 1 << 62)
    yield
    COMPILED._set_prune_postings(previous)
    COMPILED._set_compact_postings(compact)


def _same(expected: list[tuple[int, float, int]], actual: list[tuple[int, float, int]]) -> None:
    assert [(d, m) for d, _, m in actual] == [(d, m) for d, _, m in expected]
    for (_, want, _), (_, got, _) in zip(expected, actual, strict=True):
        assert math.isclose(got, want, rel_tol=1e-12)


def _zipf_corpus(n_docs: int, vocabulary: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocabulary)]
    weights = [1.0 / (rank + 1) ** 1.05 for rank in range(vocabulary)]
    return [rng.choices(words, weights=weights, k=rng.randint(1, 30)) for _ in range(n_docs)]


@settings(max_examples=300, deadline=None)
@given(corpus=CORPUS, query=QUERY, k=st.integers(0, 40), min_matched=st.integers(0, 4),
       k1=st.floats(0.0, 3.0), b=st.floats(0.0, 1.0))
def test_pruned_top_k_matches_reference(corpus: list[list[str]], query: list[str], k: int,
                                        min_matched: int, k1: float, b: float) -> None:
    expected = _reference.BM25Index(corpus, k1=k1, b=b).search(query, k=k, min_matched=min_matched)
    index = COMPILED.BM25Index(corpus, k1=k1, b=b)
    actual = index.search(query, k=k, min_matched=min_matched)
    _same(expected, actual)
    # the pruned path and the exhaustive one sum the same weights in the same order
    assert actual == index.search(query, k=None, min_matched=min_matched)[:k]


@settings(max_examples=150, deadline=None)
@given(data=st.data(), query=QUERY, k=st.integers(1, 30), min_matched=st.integers(0, 3),
       k1=st.floats(0.0, 3.0))
def test_pruned_bm25f_matches_reference(data: st.DataObject, query: list[str], k: int,
                                        min_matched: int, k1: float) -> None:
    n_fields = data.draw(st.integers(1, 3))
    corpus = data.draw(st.lists(st.lists(DOCUMENT, min_size=n_fields, max_size=n_fields),
                                max_size=150))
    weights = data.draw(st.lists(st.floats(0.0, 4.0), min_size=n_fields, max_size=n_fields))
    bs = data.draw(st.lists(st.floats(0.0, 1.0), min_size=n_fields, max_size=n_fields))
    expected = _reference.BM25FIndex(corpus, weights, bs, k1=k1).search(
        query, k=k, min_matched=min_matched)
    actual = COMPILED.BM25FIndex(corpus, weights, bs, k1=k1).search(
        query, k=k, min_matched=min_matched)
    _same(expected, actual)


def test_zipf_corpus_every_k_and_filter() -> None:
    """Long lists over several blocks, queries of frequent and rare terms, k from 1 past the
    number of matches, min_matched 0 to 3, repeated terms."""
    corpus = _zipf_corpus(3_000, 400, seed=3)
    reference = _reference.BM25Index(corpus)
    index = COMPILED.BM25Index(corpus)
    rng = random.Random(5)
    for _ in range(60):
        query = rng.choices([f"w{i}" for i in range(420)], k=rng.randint(1, 6))
        query += query[: rng.randint(0, 2)]  # repeated terms count once
        for k in (1, 2, 3, 10, 17, 64, 65, 1000, 5000):
            for min_matched in (0, 1, 2, 3):
                _same(reference.search(query, k=k, min_matched=min_matched),
                      index.search(query, k=k, min_matched=min_matched))


def test_ties_keep_the_lower_index() -> None:
    # 200 identical documents and 50 others: every tie is broken by the document index
    corpus = [["x", "y"]] * 200 + [["x"]] * 50 + [["y", "y", "z"]] * 5
    for k in (1, 5, 10, 100, 199, 200, 201, 260):
        hits = COMPILED.BM25Index(corpus).search(["x", "y", "z"], k=k)
        _same(_reference.BM25Index(corpus).search(["x", "y", "z"], k=k), hits)
    # the 50 one-term documents tie at the top score: the first three of them win
    top = COMPILED.BM25Index(corpus).search(["x"], k=3)
    assert [d for d, _, _ in top] == [200, 201, 202]


def test_uneven_blocks_find_every_document() -> None:
    # inside a block the probe guesses a position from the block's average density: lists
    # dense at one end of a block and sparse at the other send the guess far both ways
    corpus: list[list[str]] = [[] for _ in range(20_000)]
    for d in [*range(400), *range(400, 20_000, 37)]:
        corpus[d].append("x")
    for d in [*range(0, 20_000, 5), *range(19_600, 20_000)]:
        corpus[d].extend(["y", "y"] if d % 3 else ["y"])
    for d in range(0, 20_000, 11):
        corpus[d].append("z")
    index, reference = COMPILED.BM25Index(corpus), _reference.BM25Index(corpus)
    for query in (["x", "y"], ["z", "x"], ["y", "z", "x"]):
        for k in (1, 10, 100):
            for min_matched in (1, 2):
                _same(reference.search(query, k=k, min_matched=min_matched),
                      index.search(query, k=k, min_matched=min_matched))


def test_k_beyond_the_matches_and_empty_queries() -> None:
    corpus = _zipf_corpus(500, 60, seed=11)
    index, reference = COMPILED.BM25Index(corpus), _reference.BM25Index(corpus)
    rare = [t for t in {t for d in corpus for t in d}
            if sum(t in d for d in corpus) < 5][:2]
    for query in ([], ["nowhere"], rare, rare + ["w0"], ["w0", "w0"]):
        for k in (1, 10, 499, 500, 10_000):
            _same(reference.search(query, k=k), index.search(query, k=k))
    assert index.search([], k=10) == [] and index.search(["w0"], k=0) == []
    assert index.search(["w0", "w1"], k=10, min_matched=3) == []


def test_term_frequency_past_16_bits_stores_weights() -> None:
    # a term repeated 70,000 times in one document does not fit the compact count
    corpus = [["a"] * 70_000 + ["b"], ["a", "b"], ["b"] * 3, ["a"]]
    for k in (1, 2, 4, None):
        _same(_reference.BM25Index(corpus).search(["a", "b"], k=k),
              COMPILED.BM25Index(corpus).search(["a", "b"], k=k))


def test_footprint_counts_the_postings_layout(request: pytest.FixtureRequest) -> None:
    corpus = _zipf_corpus(2_000, 300, seed=2)
    footprint = COMPILED.BM25Index(corpus)._footprint()
    postings = sum(len(set(d)) for d in corpus)
    assert footprint["postings"] == postings
    # 4-byte document ids with 2-byte counts or 8-byte weights, plus bounds and the per-term and
    # per-document arrays
    per = 6 if "compact" in request.node.name else 12
    assert per * postings < footprint["bytes"] < per * postings + 80 * 300 + 8 * 2_000 + 4 * postings
