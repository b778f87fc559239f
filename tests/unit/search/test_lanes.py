"""Lanes: coverage pruning, fusion, admission, the dense cut, exact ids (search.md §5)."""

from __future__ import annotations

import pytest

from iii_directory.search.ranking.corpus import Document, DocumentSet
from iii_directory.search.ranking.lanes import (BM25_TAIL_DEPTH, answered_tail, bm25_tail,
                                                ranking_tail, AD_HOC, CATALOG, catalog_admitted,
                                                coverage_prune, dense_cut, exact_lane, corroborated,
                                                hybrid_lane, is_admitted, is_coherent,
                                                lexical_ranking, single_term_fallback, weighted_rrf)


def test_coverage_pruning_thresholds() -> None:
    hits = [("a", 10.0, 3), ("b", 5.0, 3), ("c", 4.99, 3), ("d", 8.5, 2), ("e", 8.49, 2)]
    kept = [doc_id for doc_id, _ in coverage_prune(hits)]
    # b: exactly half with the leader's coverage; c: below half; d: 85 % with fewer terms;
    # e: just under 85 % with fewer terms.
    assert kept == ["a", "b", "d"]


def test_coverage_pruning_of_empty() -> None:
    assert coverage_prune([]) == []


def test_lexical_ranking_prunes_family_members() -> None:
    docs = DocumentSet((
        Document("calendar::event::create", "", "calendar event create calendar event create calendar event create new meeting"),
        Document("calendar::event::delete", "", "calendar event delete calendar event delete calendar event delete remove"),
    ))
    ranking = lexical_ranking(docs, ["create", "calendar", "event"])
    assert ranking[0][0] == "calendar::event::create"
    assert [doc_id for doc_id, _ in ranking] == ["calendar::event::create"]


def test_weighted_rrf_scores_and_tie_breaks() -> None:
    a = [("x", 9.0), ("y", 8.0)]
    b = [("y", 0.9), ("z", 0.8)]
    fused = weighted_rrf(a, b, 1.0)
    assert [doc_id for doc_id, _ in fused] == ["y", "x", "z"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1][1] == pytest.approx(1 / 61)
    # x (rank 1 in A) and z (rank 2 in B) would tie only on equal scores; x's is higher anyway.
    tie = weighted_rrf([("p", 1.0)], [("q", 1.0)], 1.0)
    assert [doc_id for doc_id, _ in tie] == ["p", "q"]  # equal scores: rank in A wins


def test_weighted_rrf_uses_first_occurrence() -> None:
    fused = dict(weighted_rrf([("x", 1.0), ("x", 0.5)], [], 1.0))
    assert fused == {"x": pytest.approx(1 / 61)}


def test_admission_is_inclusive_at_030() -> None:
    assert is_admitted([("a", 0.30)])
    assert not is_admitted([("a", 0.2999)])
    assert not is_admitted([])


def test_coherence_needs_one_worker_twice_in_the_first_four() -> None:
    assert is_coherent([("a::x", 0.3), ("b::x", 0.3), ("c::x", 0.3), ("a::y", 0.3)])
    assert not is_coherent([("a::x", 0.3), ("b::x", 0.3), ("c::x", 0.3), ("d::x", 0.3), ("a::y", 0.3)])
    assert is_coherent([("x::a", 0.3), ("y::a", 0.3), ("y::b", 0.3)])  # not necessarily the leader's
    assert not is_coherent([("plain", 0.3), ("plain2", 0.3)])  # ids without a namespace never count
    assert not is_coherent([])
    # only hits within 0.06 of the best count
    assert not is_coherent([("a::x", 0.5), ("b::x", 0.45), ("a::y", 0.43)])  # a::y is 0.07 behind
    assert is_coherent([("a::x", 0.5), ("b::x", 0.45), ("a::y", 0.45)])
    assert not is_coherent([("a::x", 0.5), ("b::x", 0.5)],
                           [("c::z", 9.0), ("c::y", 5.0), ("d::z", 4.0), ("a::x", 3.0)])
    assert is_coherent([("a::x", 0.5), ("b::x", 0.3)], [("a::q", 9.0)])  # the leader agrees


def test_coherence_by_agreement_with_the_lexical_lane() -> None:
    dense = [("oauth::url", 0.357), ("browser::fill", 0.322), ("pay::create", 0.30), ("store::put", 0.3)]
    assert not is_coherent(dense)
    assert is_coherent(dense, [("log::write", 11.0), ("browser::type", 6.0)])  # browser twice
    assert not is_coherent(dense, [("log::write", 11.0), ("a::b", 7.0), ("c::d", 6.0), ("browser::type", 5.0)])
    # two lexical hits of one worker do not make a scattered dense head coherent
    assert not is_coherent(dense, [("log::write", 11.0), ("log::tail", 10.0)])
    assert not catalog_admitted(dense, [("log::write", 11.0)])
    assert catalog_admitted(dense, [("browser::type", 6.0)])


def test_catalog_admission_is_confident_or_coherent() -> None:
    scattered = [("db::list", 0.352), ("state::list", 0.35), ("engine::health", 0.335), ("files::list", 0.33)]
    family = [("maps::geocode", 0.332), ("maps::reverse", 0.327), ("maps::route", 0.316)]
    assert not catalog_admitted(scattered)  # a no-match wording: unrelated workers, middling cosines
    assert is_admitted(scattered)  # §5.5 as written would take it
    assert catalog_admitted(family)
    assert catalog_admitted([("db::list", 0.40), ("state::list", 0.39)])  # confident: inclusive at 0.40
    assert not catalog_admitted([("db::list", 0.3999), ("state::list", 0.39)])
    assert not catalog_admitted([("maps::a", 0.2999), ("maps::b", 0.29)])  # under 0.30: never
    assert not catalog_admitted([])


def test_hybrid_lane_policies() -> None:
    lexical = [("kv::get", 3.0)]
    scattered = [("db::list", 0.35), ("state::list", 0.34), ("files::list", 0.33)]
    # not admitted, and the encoder places kv nowhere: the catalog lane drops the lexical guess
    assert hybrid_lane(lexical, scattered, CATALOG) == []
    supported = scattered + [("kv::list", 0.2)]
    assert hybrid_lane(lexical, supported, CATALOG) == lexical
    assert [i for i, _ in hybrid_lane(lexical, scattered, AD_HOC)] == [
        "kv::get", "db::list", "state::list", "files::list"]
    agreeing = [("db::list", 0.35), ("state::list", 0.34), ("kv::get", 0.33)]
    assert [i for i, _ in hybrid_lane(lexical, agreeing, CATALOG)] == ["kv::get", "db::list", "state::list"]


def test_corroboration() -> None:
    lexical = [("kv::get", 3.0), ("kv::set", 2.0)]
    far = [(f"w{i}::f", 0.29 - i / 100) for i in range(16)] + [("kv::get", 0.1)]
    assert not corroborated(lexical, far, matched=2)  # kv is 17th
    assert corroborated(lexical, far[:15] + [("kv::x", 0.01)], matched=2)  # 16th counts
    assert not corroborated([], far, matched=2)
    # a single-term fallback needs its worker in the first four at a cosine of 0.30 or more
    near = [("a::x", 0.35), ("kv::list", 0.30), ("b::y", 0.29)]
    assert corroborated(lexical, near, matched=1)
    assert not corroborated(lexical, [("a::x", 0.35), ("kv::list", 0.29)], matched=1)
    assert not corroborated(lexical, [("a::x", 0.5), ("b::x", 0.5), ("c::x", 0.5), ("d::x", 0.5),
                                      ("kv::list", 0.5)], matched=1)
    # the ad-hoc policy (registry, skills, triggers) keeps §5.5 as written
    assert hybrid_lane(lexical, far, AD_HOC) == lexical
    # not admitted (kv is 0.09 behind a 0.39 leader), yet corroborated: the lexical lane stays
    behind = [("a::x", 0.39), ("b::y", 0.35), ("kv::list", 0.30)]
    assert hybrid_lane(lexical, behind, CATALOG, matched=1) == lexical
    assert hybrid_lane(lexical, [("a::x", 0.29)], CATALOG, matched=1) == []


def test_dense_cut_uses_gap_floor_and_depth() -> None:
    dense = [("a", 0.62), ("b", 0.43), ("c", 0.42), ("d", 0.31)]
    assert [i for i, _ in dense_cut(dense)] == ["a", "b", "c"]
    low = [("a", 0.35), ("b", 0.30), ("c", 0.29)]
    assert [i for i, _ in dense_cut(low)] == ["a", "b"]
    many = [(f"id{i:02d}", 0.9) for i in range(40)]
    assert len(dense_cut(many)) == 24


def test_hybrid_lane_keeps_lexical_when_not_admitted() -> None:
    lexical = [("a", 3.0)]
    assert hybrid_lane(lexical, [("b", 0.25)]) == lexical
    fused = hybrid_lane(lexical, [("b", 0.5), ("a", 0.45)])
    assert [doc_id for doc_id, _ in fused] == ["a", "b"]


def test_exact_lane() -> None:
    docs = DocumentSet((Document("email::send", "", "email send"),))
    assert exact_lane("  email::send ", docs) == [("email::send", 0.0)]
    assert exact_lane("email::send", docs, 1.0) == [("email::send", 1.0)]
    assert exact_lane("send email", docs) is None
    assert exact_lane("x::y", {"x::y"}) == [("x::y", 0.0)]


def test_catalog_fusion_weights_the_dense_list_1_5() -> None:
    dense = [("a::y", 0.5), ("a::x", 0.45)]
    agreed = hybrid_lane([("a::x", 9.0)], dense, CATALOG)  # agreement still wins
    assert [i for i, _ in agreed] == ["a::x", "a::y"]
    assert agreed[0][1] == pytest.approx(1 / 61 + 1.5 / 62)
    # Leaders that disagree: RRF's tie goes to the lexical leader at weight 1.0, to the dense
    # leader at 1.5.
    assert [i for i, _ in hybrid_lane([("a::z", 9.0)], dense, AD_HOC)] == ["a::z", "a::y", "a::x"]
    assert [i for i, _ in hybrid_lane([("a::z", 9.0)], dense, CATALOG)] == ["a::y", "a::x", "a::z"]


def test_single_term_fallback_needs_a_worker_twice_in_the_first_three() -> None:
    hits = [("web::extract-article", 7.7, 1), ("translate::text", 7.1, 1), ("translate::document", 6.9, 1),
            ("translate::detect", 6.5, 1), ("translate::glossary", 3.0, 1), ("search::news", 5.1, 1)]
    # the lane is the worker's hits, coverage-pruned (glossary is under half of text's score)
    assert [i for i, _ in single_term_fallback(hits)] == [
        "translate::text", "translate::document", "translate::detect"]
    scattered = [("shell::which", 6.7, 1), ("image::describe", 5.4, 1), ("maps::directions", 4.5, 1),
                 ("image::ocr", 4.4, 1)]
    assert single_term_fallback(scattered) == []  # the pair sits outside the first three
    assert single_term_fallback([("plain", 5.0, 1), ("plain2", 5.0, 1)]) == []
    assert single_term_fallback([]) == []


def test_lexical_ranking_falls_back_only_without_two_term_matches() -> None:
    docs = DocumentSet((
        Document("media::transcribe", "", "media transcribe media transcribe speech to text"),
        Document("media::synthesize", "", "media synthesize media synthesize text to speech with a tone"),
        Document("shell::which", "", "shell which locate a binary"),
    ))
    assert [i for i, _ in lexical_ranking(docs, ["transcribe", "tone", "memo"])] == [
        "media::transcribe", "media::synthesize"]
    assert lexical_ranking(docs, ["think", "which", "approach"]) == []  # one scattered hit
    # a two-term match wins outright: no fallback candidates are added
    assert [i for i, _ in lexical_ranking(docs, ["speech", "tone", "which"])] == ["media::synthesize"]



def test_answered_tail_after_the_dense_cut() -> None:
    lexical = [("kv::get", 3.0)]
    dense = [("kv::get", 0.45), ("kv::set", 0.44), ("kv::list", 0.21), ("db::x", 0.2),
             ("db::y", 0.199)]
    lane = hybrid_lane(lexical, dense, CATALOG)
    assert [i for i, _ in lane] == ["kv::get", "kv::set"]  # the cut keeps 0.25 and up
    assert [i for i, _ in answered_tail(lane, dense)] == ["kv::list", "db::x"]
    many = [(f"n{i}::f", 0.5 - i / 100) for i in range(20)]
    assert len(answered_tail([("n0::f", 1.0)], many)) == 6
    assert answered_tail([], dense) == []


def test_answered_tail_fills_an_answered_lane_from_the_dense_ranking() -> None:
    dense = [("kv::get", 0.35), ("kv::set", 0.34), ("db::x", 0.21), ("db::y", 0.19)]
    # no admission check any more: the answerability decision said yes to this lane
    assert [i for i, _ in answered_tail([("kv::get", 1.0)], dense)] == ["kv::set", "db::x"]
    assert answered_tail([], dense) == []  # a refused capability gets nothing
    # an emptied need of an answered capability keeps its tail
    assert [i for i, _ in answered_tail([], dense, answered=True)] == ["kv::get", "kv::set",
                                                                       "db::x"]


def test_bm25_tail_pads_with_one_term_hits_the_lane_left_out() -> None:
    docs = DocumentSet((
        Document("mail::send", "", "mail send send an email message"),
        Document("mail::inbox", "", "mail inbox list email messages"),
        Document("sms::send", "", "sms send send a text"),
        Document("kv::get", "", "kv get read a value"),
    ))
    lane = [("mail::send", 1.0)]
    # one matched term is enough, the lane's own hit is not repeated, kv::get matches nothing
    assert {i for i, _ in bm25_tail(lane, docs, ["send", "email"])} == {"sms::send", "mail::inbox"}
    assert bm25_tail([], docs, ["send", "email"]) == []
    assert {i for i, _ in bm25_tail([], docs, ["send", "email"], answered=True)} == {
        "mail::send", "mail::inbox", "sms::send"}
    many = DocumentSet(tuple(Document(f"w{i}::send", "", "send") for i in range(30)))
    assert len(bm25_tail([("w0::send", 1.0)], many, ["send"])) == BM25_TAIL_DEPTH


def test_ranking_tail_keeps_the_lane_and_fills_in_the_rankings_order() -> None:
    lane = [("kv::get", 3.0)]
    learned = [("kv::set", 1.0), ("kv::get", 0.8), ("db::x", 0.5)]
    assert ranking_tail(lane, learned) == [("kv::set", 1.0), ("db::x", 0.5)]
    assert ranking_tail([], learned) == []
    assert ranking_tail([], learned, answered=True) == learned
