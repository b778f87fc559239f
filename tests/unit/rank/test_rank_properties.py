"""Hypothesis: the compiled core gives the reference's answers on random inputs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _rank import _reference

from .conftest import COMPILED

pytestmark = pytest.mark.skipif(COMPILED is None, reason="the compiled core is not built")

# a small vocabulary so documents and queries overlap often
TERMS = st.sampled_from([f"t{i}" for i in range(24)] + ["", "x" * 40, "é"])
DOCUMENT = st.lists(TERMS, max_size=30)
CORPUS = st.lists(DOCUMENT, max_size=60)
QUERY = st.lists(TERMS, max_size=12)
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from('aAbBzZ09 "\\:_-\t\n.sSiIeEuU'),
        st.characters(codec="utf-8"),
    ),
    max_size=80,
)


def _same_hits(expected: list[tuple[int, float, int]], actual: list[tuple[int, float, int]]) -> None:
    assert [(d, m) for d, _, m in actual] == [(d, m) for d, _, m in expected]
    for (_, want, _), (_, got, _) in zip(expected, actual, strict=True):
        assert math.isclose(got, want, rel_tol=1e-6)


@settings(max_examples=300, deadline=None)
@given(
    corpus=CORPUS,
    query=QUERY,
    k=st.one_of(st.none(), st.integers(0, 70)),
    min_matched=st.integers(0, 4),
    k1=st.floats(0.0, 3.0),
    b=st.floats(0.0, 1.0),
)
def test_bm25_matches_reference(
    corpus: list[list[str]], query: list[str], k: int | None, min_matched: int, k1: float, b: float
) -> None:
    expected = _reference.BM25Index(corpus, k1=k1, b=b).search(query, k=k, min_matched=min_matched)
    actual = COMPILED.BM25Index(corpus, k1=k1, b=b).search(query, k=k, min_matched=min_matched)
    _same_hits(expected, actual)


FIELDED_CORPUS = st.integers(1, 4).flatmap(
    lambda n: st.tuples(
        st.lists(st.lists(DOCUMENT, min_size=n, max_size=n), max_size=40),
        st.lists(st.floats(0.0, 5.0), min_size=n, max_size=n),
        st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n),
    )
)


@settings(max_examples=300, deadline=None)
@given(
    fielded=FIELDED_CORPUS,
    query=QUERY,
    k=st.one_of(st.none(), st.integers(0, 50)),
    min_matched=st.integers(0, 4),
    k1=st.floats(0.0, 3.0),
)
def test_bm25f_matches_reference(
    fielded: tuple[list[list[list[str]]], list[float], list[float]], query: list[str],
    k: int | None, min_matched: int, k1: float,
) -> None:
    corpus, weights, bs = fielded
    expected = _reference.BM25FIndex(corpus, weights, bs, k1=k1).search(query, k=k, min_matched=min_matched)
    actual = COMPILED.BM25FIndex(corpus, weights, bs, k1=k1).search(query, k=k, min_matched=min_matched)
    _same_hits(expected, actual)


@settings(max_examples=200, deadline=None)
@given(corpus=CORPUS, query=QUERY, k1=st.floats(0.0, 3.0), b=st.floats(0.0, 1.0))
def test_one_field_bm25f_is_bm25(corpus: list[list[str]], query: list[str], k1: float, b: float) -> None:
    # the same numbers up to rounding, so documents whose scores tie may swap: compare per document
    for impl in (_reference, COMPILED):
        expected = {d: (s, m) for d, s, m in impl.BM25Index(corpus, k1=k1, b=b).search(query)}
        actual = {d: (s, m) for d, s, m in
                  impl.BM25FIndex([[d] for d in corpus], [1.0], [b], k1=k1).search(query)}
        assert actual.keys() == expected.keys()
        for doc, (score, matched) in actual.items():
            assert matched == expected[doc][1]
            assert math.isclose(score, expected[doc][0], rel_tol=1e-9)


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_tokenizer_matches_reference(text: str) -> None:
    assert COMPILED.tokenize(text) == _reference.tokenize(text)
    assert COMPILED.strip_json_keys(text) == _reference.strip_json_keys(text)
    assert COMPILED.tokenize_query(text) == _reference.tokenize_query(text)


@settings(max_examples=300, deadline=None)
@given(
    rankings=st.lists(st.lists(st.integers(0, 15), max_size=12), max_size=4),
    data=st.data(),
    k=st.floats(0.0, 100.0),
)
def test_rrf_matches_reference(rankings: list[list[int]], data: st.DataObject, k: float) -> None:
    weights = data.draw(
        st.one_of(st.none(), st.lists(st.floats(0.0, 3.0), min_size=len(rankings), max_size=len(rankings)))
    )
    expected = _reference.rrf(rankings, weights=weights, k=k)
    actual = COMPILED.rrf(rankings, weights=weights, k=k)
    assert [key for key, _ in actual] == [key for key, _ in expected]
    for (_, want), (_, got) in zip(expected, actual, strict=True):
        assert math.isclose(got, want, rel_tol=1e-6, abs_tol=0.0)
