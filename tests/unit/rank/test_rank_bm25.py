"""Okapi BM25 (search.md §5.1) against hand-computed values, for both implementations."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType

import pytest

from .conftest import COMPILED

DOCS = [
    ["send", "email", "email"],  # dl 3
    ["send", "sms"],  # dl 2
    ["read", "email", "inbox", "message"],  # dl 4
]
# N = 3, avgdl = 3, k1 = 1.2, b = 0.75, worked out by hand:
#   idf(send) = idf(email) = ln((3 - 2 + 0.5) / 2.5 + 1) = ln 1.6
#   idf(sms) = ln(2.5 / 1.5 + 1) = ln(8/3)
#   d0 email: tf 2, dl 3 -> 2 * 2.2 / (2 + 1.2 * 1.0)  = 1.375  x ln 1.6
#   d0 send:  tf 1, dl 3 -> 2.2 / (1 + 1.2)            = 1.0    x ln 1.6
#   d1 send:  tf 1, dl 2 -> 2.2 / (1 + 1.2 * 0.75)     = 22/19  x ln 1.6
#   d1 sms:   tf 1, dl 2 -> 22/19 x ln(8/3)
#   d2 email: tf 1, dl 4 -> 2.2 / (1 + 1.2 * 1.25)     = 0.88   x ln 1.6
LN16 = 0.47000362924573558
LN83 = 0.98082925301172619
D0 = LN16 * 1.375 + LN16 * 1.0
D1_SEND = LN16 * 22 / 19
D2 = LN16 * 0.88


def test_hand_computed_scores(impl: ModuleType) -> None:
    index = impl.BM25Index(DOCS)
    assert len(index) == 3
    assert index.avgdl == 3.0
    hits = index.search(["send", "email"])
    assert [(doc, matched) for doc, _, matched in hits] == [(0, 2), (1, 1), (2, 1)]
    assert [score for _, score, _ in hits] == pytest.approx([D0, D1_SEND, D2], rel=1e-12)
    (only,) = index.search(["sms"])
    assert only[0] == 1 and only[1] == pytest.approx(LN83 * 22 / 19, rel=1e-12)


def test_idf_matches_the_formula(impl: ModuleType) -> None:
    # one document holding the term among ten: ln((10 - 1 + 0.5) / 1.5 + 1)
    docs = [["x"]] + [["y"]] * 9
    index = impl.BM25Index(docs, k1=0.0)  # k1 = 0: the weight is exactly the idf
    assert index.search(["x"])[0][1] == pytest.approx(math.log(9.5 / 1.5 + 1), rel=1e-12)


def test_b_zero_ignores_length(impl: ModuleType) -> None:
    index = impl.BM25Index([["a"], ["a", "b", "c", "d"]], b=0.0)
    (first, second) = index.search(["a"])
    assert first[1] == second[1] and (first[0], second[0]) == (0, 1)


def test_query_terms_are_deduplicated(impl: ModuleType) -> None:
    index = impl.BM25Index(DOCS)
    assert index.search(["send", "send", "email", "send"]) == index.search(["send", "email"])
    assert index.search(["email", "send"])[0][2] == 2


def test_ties_sort_by_index(impl: ModuleType) -> None:
    index = impl.BM25Index([["z"], ["x", "y"], ["x", "y"], ["y", "x"]])
    assert [doc for doc, _, _ in index.search(["x", "y"])] == [1, 2, 3]


def test_k_and_min_matched(impl: ModuleType) -> None:
    index = impl.BM25Index(DOCS)
    assert [h[0] for h in index.search(["send", "email"], k=1)] == [0]
    assert [h[0] for h in index.search(["send", "email"], k=2)] == [0, 1]
    assert index.search(["send", "email"], k=0) == []
    assert len(index.search(["send", "email"], k=100)) == 3
    assert [h[0] for h in index.search(["send", "email"], min_matched=2)] == [0]
    assert index.search(["send", "email"], min_matched=3) == []
    assert index.search(["send"], min_matched=0) == index.search(["send"], min_matched=1)


def test_top_k_selection_matches_full_sort(impl: ModuleType) -> None:
    docs = [[f"t{(i * 7 + j) % 13}" for j in range(i % 9 + 1)] for i in range(300)]
    index = impl.BM25Index(docs)
    query = ["t1", "t3", "t5", "t8"]
    full = index.search(query)
    for k in (1, 2, 5, 17, 64, len(full), len(full) + 5):
        assert index.search(query, k=k) == full[:k]
        assert index.search(query, k=k, min_matched=2) == [h for h in full if h[2] >= 2][:k]


def test_unknown_and_empty_queries(impl: ModuleType) -> None:
    index = impl.BM25Index(DOCS)
    assert index.search([]) == []
    assert index.search(()) == []
    assert index.search(["nothing", "here"]) == []
    assert index.search(["nothing", "sms"])[0][2] == 1


def test_empty_corpora(impl: ModuleType) -> None:
    empty = impl.BM25Index([])
    assert len(empty) == 0 and empty.search(["a"]) == [] and empty.search([]) == []
    blanks = impl.BM25Index([[], [], []])
    assert len(blanks) == 3 and blanks.search(["a"], k=2) == []
    mixed = impl.BM25Index([[], ["a"]])
    assert [h[0] for h in mixed.search(["a"])] == [1]


def test_long_queries_with_duplicates(impl: ModuleType) -> None:
    docs = [[f"w{i}", f"w{i + 1}"] for i in range(100)]
    index = impl.BM25Index(docs)
    query = [f"w{i % 50}" for i in range(200)]
    hits = index.search(query)
    assert len(hits) == 50  # documents 0..49 hold a query term
    assert max(h[2] for h in hits) == 2


def test_accepts_any_sequences(impl: ModuleType) -> None:
    index = impl.BM25Index((("a", "b"), ["b"]))
    assert [h[0] for h in index.search(("b",))] == [1, 0]


@pytest.mark.parametrize(
    ("documents", "error", "match"),
    [
        ("abc", TypeError, "sequence of term sequences"),
        (None, TypeError, "sequence of term sequences"),
        (["abc"], TypeError, "document 0 must be a sequence"),
        ([["a"], 5], TypeError, "document 1 must be a sequence"),
        ([["a", 1]], TypeError, "non-string term"),
        ([["a", None]], TypeError, "non-string term"),
    ],
)
def test_bad_documents(impl: ModuleType, documents: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        impl.BM25Index(documents)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"k1": float("nan")}, ValueError),
        ({"k1": -1.0}, ValueError),
        ({"k1": float("inf")}, ValueError),
        ({"b": 1.5}, ValueError),
        ({"b": -0.1}, ValueError),
        ({"k1": "1.2"}, TypeError),
        ({"b": None}, TypeError),
    ],
)
def test_bad_parameters(impl: ModuleType, kwargs: dict[str, object], error: type) -> None:
    with pytest.raises(error):
        impl.BM25Index(DOCS, **kwargs)


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        (("send",), {}, TypeError),
        ((None,), {}, TypeError),
        (([1],), {}, TypeError),
        ((["send", b"email"],), {}, TypeError),
        ((["send"],), {"k": -1}, ValueError),
        ((["send"],), {"k": 1.5}, TypeError),
        ((["send"],), {"k": True}, TypeError),
        ((["send"],), {"min_matched": -1}, ValueError),
        ((["send"],), {"min_matched": "2"}, TypeError),
    ],
)
def test_bad_queries(impl: ModuleType, args: tuple[object, ...], kwargs: dict[str, object], error: type) -> None:
    index = impl.BM25Index(DOCS)
    with pytest.raises(error):
        index.search(*args, **kwargs)


@pytest.mark.timeout(60)
def test_concurrent_searches_agree(impl: ModuleType) -> None:
    # big enough that a query walks more postings than the compiled core's GIL-release threshold
    size = 30_000 if impl is COMPILED else 3_000
    docs = [["common", f"t{i % 97}", f"u{i % 89}"] for i in range(size)]
    index = impl.BM25Index(docs)
    queries = [["common", f"t{i}", f"u{i}"] for i in range(8)]
    expected = [index.search(q, k=10) for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(3):
            assert list(pool.map(lambda q: index.search(q, k=10), queries)) == expected


def test_vocabulary_size_and_parameters(impl: ModuleType) -> None:
    index = impl.BM25Index(DOCS, k1=1.5, b=0.5)
    assert index.vocabulary_size == 6
    assert (index.k1, index.b) == (1.5, 0.5)


def test_reinitialising_rebuilds(impl: ModuleType) -> None:
    index = impl.BM25Index(DOCS)
    index.__init__([["other"]])
    assert len(index) == 1 and index.search(["send"]) == [] and index.search(["other"])[0][0] == 0


def test_rejected_reinitialisation_keeps_the_index(impl: ModuleType) -> None:
    index = impl.BM25Index(DOCS)
    before = index.search(["send", "email"])
    with pytest.raises(TypeError):
        index.__init__([["a", 1]], k1=2.0)
    assert index.search(["send", "email"]) == before and index.k1 == 1.2


def test_uninitialised_compiled_index_refuses_searches() -> None:
    if COMPILED is None:
        pytest.skip("the compiled core is not built")
    index = COMPILED.BM25Index.__new__(COMPILED.BM25Index)
    with pytest.raises(RuntimeError, match="not initialised"):
        index.search(["a"])
    assert len(index) == 0
