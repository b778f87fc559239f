"""BM25F (fields with their own weights and length normalisation) against hand-computed values,
for both implementations."""

from __future__ import annotations

import math
from types import ModuleType

import pytest

from .conftest import COMPILED

# two fields (title, body), weights 2 and 1, b 1.0 and 0.0, k1 1.2; N = 2
FIELDED = [
    [["email"], ["send", "email"]],
    [["sms"], ["send"]],
]
# title lengths 1, 1 (mean 1): title gain 2 / (1 − 1 + 1·1/1) = 2; body b = 0: gain 1
#   email, d0: tf~ = 2 + 1 = 3, df 1: ln((2 − 1 + 0.5)/1.5 + 1) = ln 2; 3·2.2/(3 + 1.2) = 11/7
#   send, d0 and d1: tf~ = 1, df 2: ln(0.5/2.5 + 1) = ln 1.2; 2.2/2.2 = 1
#   sms, d1: tf~ = 2, df 1: ln 2; 2·2.2/(2 + 1.2) = 11/8
LN2 = math.log(2.0)
LN12 = math.log(1.2)


def test_hand_computed_scores(impl: ModuleType) -> None:
    index = impl.BM25FIndex(FIELDED, [2.0, 1.0], [1.0, 0.0])
    assert len(index) == 2
    assert index.field_avgdl == (1.0, 1.5) and index.avgdl == 2.5
    assert (index.field_weights, index.field_b, index.k1, index.b) == ((2.0, 1.0), (1.0, 0.0), 1.2, 0.0)
    hits = index.search(["email", "send", "sms"])
    assert [(doc, matched) for doc, _, matched in hits] == [(0, 2), (1, 2)]
    assert [score for _, score, _ in hits] == pytest.approx(
        [LN2 * 11 / 7 + LN12, LN2 * 11 / 8 + LN12], rel=1e-12)


def test_field_length_normalisation(impl: ModuleType) -> None:
    # one field, b = 1: lengths 1 and 3 (mean 2) give gains 1/0.5 = 2 and 1/1.5; k1 = 0 makes the
    # weight the idf whatever the frequency, so use k1 = 1 and compare with the formula
    index = impl.BM25FIndex([[["a"]], [["a", "b", "c"]]], [1.0], [1.0], k1=1.0)
    first, second = index.search(["a"])
    term_idf = math.log(0.5 / 2.5 + 1.0)
    assert (first[0], second[0]) == (0, 1)
    assert first[1] == pytest.approx(term_idf * 2 * 2 / 3, rel=1e-12)
    assert second[1] == pytest.approx(term_idf * (2 / 3) * 2 / (2 / 3 + 1), rel=1e-12)


def test_one_field_is_okapi_bm25(impl: ModuleType) -> None:
    docs = [["send", "email", "email"], ["send", "sms"], ["read", "email", "inbox", "message"], []]
    plain = impl.BM25Index(docs, k1=1.2, b=0.75).search(["send", "email", "sms"])
    fielded = impl.BM25FIndex([[d] for d in docs], [1.0], [0.75], k1=1.2).search(["send", "email", "sms"])
    assert [(d, m) for d, _, m in fielded] == [(d, m) for d, _, m in plain]
    assert [s for _, s, _ in fielded] == pytest.approx([s for _, s, _ in plain], rel=1e-12)


def test_idf_counts_documents_not_fields(impl: ModuleType) -> None:
    # "x" twice in one document (two fields) and in no other: df = 1 among 3 documents
    index = impl.BM25FIndex([[["x"], ["x"]], [["y"], []], [[], ["z"]]], [1.0, 1.0], [0.0, 0.0], k1=0.0)
    assert index.search(["x"])[0][1] == pytest.approx(math.log(2.5 / 1.5 + 1), rel=1e-12)


def test_zero_weight_field_matches_but_adds_nothing(impl: ModuleType) -> None:
    index = impl.BM25FIndex([[["a"], ["b"]], [["b"], []]], [1.0, 0.0], [0.75, 0.75])
    hits = index.search(["a", "b"])
    assert [(d, m) for d, _, m in hits] == [(0, 2), (1, 1)]
    assert index.search(["b"])[0][0] == 1 and index.search(["b"])[1][1] == 0.0


def test_empty_field_with_full_normalisation(impl: ModuleType) -> None:
    # b = 1 and an empty field: 1 − b + b·0/avg is 0, yet nothing in that field is scored
    index = impl.BM25FIndex([[[], ["a"]], [["a"], ["a"]]], [1.0, 1.0], [1.0, 1.0])
    assert [d for d, _, _ in index.search(["a"])] == [1, 0]
    assert all(math.isfinite(s) for _, s, _ in index.search(["a"]))


def test_search_options_and_empty_corpus(impl: ModuleType) -> None:
    index = impl.BM25FIndex(FIELDED, [2.0, 1.0], [1.0, 0.0])
    assert index.search(["email", "send"], k=1) == index.search(["email", "send"])[:1]
    assert [d for d, _, _ in index.search(["email", "send"], min_matched=2)] == [0]
    assert index.search(["nothing"]) == [] and index.vocabulary_size == 3
    empty = impl.BM25FIndex([], [1.0, 1.0], [0.5, 0.5])
    assert len(empty) == 0 and empty.search(["a"]) == [] and empty.field_avgdl == (0.0, 0.0)


@pytest.mark.parametrize(
    ("documents", "weights", "b", "error", "match"),
    [
        ("abc", [1.0], [0.5], TypeError, "fielded documents"),
        ([["a"]], [1.0], [0.5], TypeError, "non-string term|must be a sequence"),
        ([[["a"]]], [1.0, 1.0], [0.5, 0.5], ValueError, "has 1 fields, expected 2"),
        ([[["a"], 5]], [1.0, 1.0], [0.5, 0.5], TypeError, "must be a sequence"),
        ([[["a", 1]]], [1.0], [0.5], TypeError, "non-string term"),
        ([[["a"]]], [1.0], [0.5, 0.5], ValueError, "field weights"),
        ([[["a"]]], [], [], ValueError, "at least one field"),
        ([[["a"]]], [-1.0], [0.5], ValueError, "finite number >= 0"),
        ([[["a"]]], [float("nan")], [0.5], ValueError, "finite number >= 0"),
        ([[["a"]]], ["1"], [0.5], TypeError, "must be a number"),
        ([[["a"]]], [1.0], [1.5], ValueError, "between 0 and 1"),
        ([[["a"]]], 1.0, [0.5], TypeError, "sequence of numbers"),
    ],
)
def test_bad_arguments(impl: ModuleType, documents: object, weights: object, b: object,
                       error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        impl.BM25FIndex(documents, weights, b)


def test_bad_k1(impl: ModuleType) -> None:
    with pytest.raises(ValueError):
        impl.BM25FIndex(FIELDED, [1.0, 1.0], [0.5, 0.5], k1=-1.0)


def test_rejected_reinitialisation_keeps_the_index(impl: ModuleType) -> None:
    index = impl.BM25FIndex(FIELDED, [2.0, 1.0], [1.0, 0.0])
    before = index.search(["email", "send"])
    with pytest.raises(ValueError):
        index.__init__(FIELDED, [2.0], [1.0, 0.0])
    assert index.search(["email", "send"]) == before and index.field_weights == (2.0, 1.0)


def test_is_a_bm25_index(impl: ModuleType) -> None:
    assert isinstance(impl.BM25FIndex(FIELDED, [1.0, 1.0], [0.5, 0.5]), impl.BM25Index)


def test_uninitialised_compiled_index_refuses_searches() -> None:
    if COMPILED is None:
        pytest.skip("the compiled core is not built")
    index = COMPILED.BM25FIndex.__new__(COMPILED.BM25FIndex)
    with pytest.raises(RuntimeError, match="not initialised"):
        index.search(["a"])
