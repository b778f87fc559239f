"""The learned fusion of admitted catalog lanes: candidates, features, scores."""

from __future__ import annotations

import math

import _rank
import pytest

from iii_directory.search.ranking.corpus import Document, DocumentSet
from iii_directory.search.ranking import fusion
from iii_directory.search.ranking.fusion import (FEATURES, HEAD, HEAD_FEATURES,
                                                 HEAD_SCORED_FEATURES, HEAD_WEIGHTS,
                                                 SECOND_FEATURES, SECOND_VIEWED_FEATURES,
                                                 VIEW_FEATURES, VIEWED_FEATURES, WEIGHTS,
                                                 WEIGHTS_WITHOUT_SECOND, WEIGHTS_WITHOUT_VIEWS,
                                                 Request, features, id_words, head_rows,
                                                 learned_lane, worker_term)
from iii_directory.search.ranking.lanes import lexical_ranking
from iii_directory.search.ranking.select import select_batch

DESCRIPTIONS = {
    "state::get": "Read the value stored under a key.",
    "state::set": "Store a value under a key.",
    "sheets::append-rows": "Append rows after the last row of a sheet.",
    "email::send": "Send an email.",
}
DOCS = DocumentSet(tuple(
    Document(i, f"{i} {d}", f"{i} {i} {i} {d}") for i, d in DESCRIPTIONS.items()))


def request(text: str) -> Request:
    return Request.of(tuple(_rank.tokenize_query(text)))


def lane_features(text: str, dense: list[tuple[str, float]]):
    """`features` of one request over DOCS, with its lexical ranking."""
    return features(request(text), DOCS, lexical_ranking(DOCS, _rank.tokenize_query(text)), dense,
                    DESCRIPTIONS.__getitem__)


def lane(text: str, dense: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """`learned_lane` of one request over DOCS, with its lexical ranking."""
    return learned_lane(request(text), DOCS, lexical_ranking(DOCS, _rank.tokenize_query(text)),
                        dense, DESCRIPTIONS.__getitem__)


def test_one_weight_per_feature() -> None:
    assert len(WEIGHTS) == len(SECOND_VIEWED_FEATURES) == 20
    assert len(WEIGHTS_WITHOUT_SECOND) == len(VIEWED_FEATURES) == 17
    assert len(WEIGHTS_WITHOUT_VIEWS) == len(FEATURES) == 13
    assert VIEWED_FEATURES == FEATURES + VIEW_FEATURES
    assert SECOND_VIEWED_FEATURES == VIEWED_FEATURES + SECOND_FEATURES
    assert len(HEAD_WEIGHTS) == len(HEAD_SCORED_FEATURES) == 23
    assert HEAD_SCORED_FEATURES == SECOND_VIEWED_FEATURES + HEAD_FEATURES
    assert all(math.isfinite(w) for w in WEIGHTS + WEIGHTS_WITHOUT_SECOND + WEIGHTS_WITHOUT_VIEWS
               + HEAD_WEIGHTS)


def test_view_features_read_the_request_cosines_to_each_view() -> None:
    dense = [("state::get", 0.6), ("state::set", 0.5), ("email::send", 0.1)]
    text = "store the value under the key"
    cosines = {"state::get": (0.2, 0.3), "state::set": (0.7, 0.4), "email::send": (0.0, 0.1)}

    def views(ids):
        return [cosines.get(i, (0.0, 0.0))[0] for i in ids], [cosines.get(i, (0.0, 0.0))[1] for i in ids]

    names, rows = features(request(text), DOCS, lexical_ranking(DOCS, _rank.tokenize_query(text)),
                           dense, DESCRIPTIONS.__getitem__, views)
    row = dict(zip(VIEWED_FEATURES, rows[names.index("state::set")]))
    assert (row["cos_desc"], row["cos_act"]) == (0.7, 0.4)
    assert row["view_max"] == 0.7 and row["view_mean"] == pytest.approx((0.5 + 0.7 + 0.4) / 3)


def test_without_views_a_row_has_the_thirteen_features() -> None:
    dense = [("state::get", 0.6), ("state::set", 0.5)]
    _, rows = lane_features("store the value under the key", dense)
    assert all(len(row) == len(FEATURES) for row in rows)


def test_a_view_that_matches_lifts_its_candidate() -> None:
    """The encoder ties two siblings; the action view of one matches the request."""
    dense = [("email::send", 0.5), ("state::get", 0.5)]
    text = "zzz"
    lex = lexical_ranking(DOCS, _rank.tokenize_query(text))

    def views(ids):
        return [0.3 for _ in ids], [0.9 if i == "state::get" else 0.1 for i in ids]

    assert learned_lane(request(text), DOCS, lex, dense, DESCRIPTIONS.__getitem__)[0][0] \
        == "email::send"
    assert learned_lane(request(text), DOCS, lex, dense, DESCRIPTIONS.__getitem__,
                        views)[0][0] == "state::get"


def test_second_query_features_read_its_cosine_with_max_and_mean() -> None:
    dense = [("state::get", 0.6), ("state::set", 0.5), ("email::send", 0.1)]
    text = "store the value under the key"

    def views(ids):
        return [0.2 for _ in ids], [0.3 for _ in ids]

    def second(ids):
        return [0.8 if i == "state::set" else 0.1 for i in ids]

    names, rows = features(request(text), DOCS, lexical_ranking(DOCS, _rank.tokenize_query(text)),
                           dense, DESCRIPTIONS.__getitem__, views, second)
    row = dict(zip(SECOND_VIEWED_FEATURES, rows[names.index("state::set")]))
    assert len(rows[0]) == len(SECOND_VIEWED_FEATURES)
    assert row["cos_second"] == 0.8 and row["second_max"] == 0.8
    assert row["second_mean"] == pytest.approx((0.5 + 0.8) / 2)


def test_a_second_query_that_matches_lifts_its_candidate() -> None:
    """Views tie two siblings; the request's action-and-object embedding matches one. Without
    views the second query is not read (no weights were fitted for that combination)."""
    dense = [("email::send", 0.5), ("state::get", 0.5)]
    text = "zzz"
    lex = lexical_ranking(DOCS, _rank.tokenize_query(text))

    def views(ids):
        return [0.3 for _ in ids], [0.3 for _ in ids]

    def second(ids):
        return [0.9 if i == "state::get" else 0.1 for i in ids]

    describe = DESCRIPTIONS.__getitem__
    assert learned_lane(request(text), DOCS, lex, dense, describe, views)[0][0] == "email::send"
    assert learned_lane(request(text), DOCS, lex, dense, describe, views, second)[0][0] \
        == "state::get"
    assert learned_lane(request(text), DOCS, lex, dense, describe, None, second)[0][0] \
        == "email::send"


def test_head_rows_of_equal_values_are_zero() -> None:
    rows = [tuple(0.4 for _ in SECOND_VIEWED_FEATURES)] * 2
    assert [row[len(SECOND_VIEWED_FEATURES):] for row in head_rows(rows)] == [(0.0, 0.0, 0.0)] * 2


def test_head_rows_add_the_z_scores_of_cos_view_max_and_the_second_cosine() -> None:
    width = len(SECOND_VIEWED_FEATURES)
    rows = [tuple(float(i + k) for k in range(width)) for i in (0, 2, 4)]
    extended = head_rows(rows)
    assert [len(row) for row in extended] == [len(HEAD_SCORED_FEATURES)] * 3
    assert [row[:width] for row in extended] == rows
    for name in HEAD_FEATURES:  # every column steps by 2 between rows
        column = [row[HEAD_SCORED_FEATURES.index(name)] for row in extended]
        assert column == pytest.approx([-1.224745, 0.0, 1.224745], abs=1e-6)
    assert head_rows([]) == []


def test_the_head_score_resorts_only_the_first_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the second query, the first `HEAD` candidates are re-sorted by the head score; the
    rest keep the learned order and every position keeps its score."""
    dense = [("email::send", 0.6), ("state::get", 0.55), ("state::set", 0.5),
             ("sheets::append-rows", 0.45)]
    text = "zzz"
    lex = lexical_ranking(DOCS, _rank.tokenize_query(text))
    favoured = "state::set"  # third by the learned score, best by the second query's z-score

    def views(ids):
        return [0.3 for _ in ids], [0.3 for _ in ids]

    def second(ids):
        return [0.9 if i == favoured else 0.2 for i in ids]

    describe = DESCRIPTIONS.__getitem__
    cos_only = (1.0,) + (0.0,) * (len(SECOND_VIEWED_FEATURES) - 1)
    monkeypatch.setattr(fusion, "WEIGHTS", cos_only)
    monkeypatch.setattr(fusion, "WEIGHTS_WITHOUT_SECOND", cos_only[:len(VIEWED_FEATURES)])
    plain = learned_lane(request(text), DOCS, lex, dense, describe, views)
    head_only = [0.0] * len(HEAD_SCORED_FEATURES)
    head_only[HEAD_SCORED_FEATURES.index("second_z")] = 1.0
    monkeypatch.setattr(fusion, "HEAD_WEIGHTS", tuple(head_only))
    resorted = learned_lane(request(text), DOCS, lex, dense, describe, views, second)
    assert [d for d, _ in plain] == [d for d, _ in dense]
    assert resorted[0][0] == favoured
    assert {d for d, _ in resorted[:HEAD]} == {d for d, _ in plain[:HEAD]}
    assert resorted[HEAD:] == plain[HEAD:]
    assert [s for _, s in resorted] == [s for _, s in plain]


def test_id_words_and_worker_names() -> None:
    assert id_words("storage::presignUrl") == id_words("storage::presign-url")
    assert "url" in id_words("storage::presignUrl")
    assert worker_term("sheets") & request("add a row to the sheet").terms
    assert not worker_term("sms") & request("send a message").terms


def test_features_of_each_candidate() -> None:
    dense = [("state::get", 0.6), ("state::set", 0.5), ("email::send", 0.1)]
    names, rows = lane_features("store the value under the key", dense)
    assert names[:3] == ["state::get", "state::set", "email::send"]  # dense first, then BM25
    row = dict(zip(FEATURES, rows[names.index("state::set")]))
    assert row["cos"] == 0.5 and row["dense_rr"] == 0.5
    assert row["action"] == 1.0  # store ~ set
    assert dict(zip(FEATURES, rows[names.index("state::get")]))["action"] == 0.0
    assert row["lexical_worker"] == 1.0 and row["dense_worker"] == 0.5
    assert 0.0 < row["bm25"] <= 1.0 and row["two_terms"] == 1.0


def test_a_bm25_candidate_outside_the_dense_ranking_gets_the_floor_cosine() -> None:
    dense = [("email::send", 0.31), ("state::get", 0.2)]
    names, rows = lane_features("append rows to the sheet", dense)
    row = dict(zip(FEATURES, rows[names.index("sheets::append-rows")]))
    assert row["cos"] == 0.2 and row["dense_rr"] == 0.0
    assert row["bm25"] == 1.0 and row["bm25_rr"] == 1.0 and row["worker_named"] == 1.0


def test_learned_lane_scores_relative_to_the_leader() -> None:
    dense = [("state::get", 0.6), ("state::set", 0.59), ("email::send", 0.1)]
    ranked = lane("store the value under the key", dense)
    assert ranked[0] == ("state::set", 1.0)  # the action agrees; the encoder's order does not
    assert all(0.0 < score <= 1.0 for _, score in ranked)
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
    assert lane("zzz qqq", []) == []


@pytest.mark.parametrize("learned, expected", [
    ([True], ["a::1", "b::1"]),   # a learned lane keeps every worker
    ([False], ["a::1"]),          # the floor drops b (0.1 < 0.4 × 1.0)
])
def test_learned_lanes_skip_the_namespace_floor(learned: list[bool], expected: list[str]) -> None:
    assert select_batch([[("a::1", 1.0), ("b::1", 0.1)]], learned=learned) == expected
