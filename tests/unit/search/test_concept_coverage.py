"""Concept coverage (`search/ranking/concept_coverage.py`) and its place in the lexical and static
families' calibrated answerability scores."""

from __future__ import annotations

import dataclasses

import _rank
import pytest
from search_fakes import CATALOG

from iii_directory.search.ranking import answerability as a
from iii_directory.search.ranking import concept_coverage as c
from iii_directory.search.ranking.corpus import Corpus, tool_from_schema


@pytest.fixture(scope="module")
def documents():
    return Corpus.build([tool_from_schema(r["function_id"], r["description"], r["request_schema"])
                         for r in CATALOG if not r.get("metadata", {}).get("internal")]).documents


def test_concepts_leave_out_ordinary_stop_and_filler_words() -> None:
    assert a.concept_words("please send the invoice to my accountant right now") == (
        "send", "invoice", "accountant")
    assert a.concept_words("the invoice, the invoice") == ("invoice",)
    assert a.concept_words("do it for me now") == ()


def test_a_shared_word_matches_fully_and_a_synonym_more_than_an_unrelated_word() -> None:
    assert c.match("email", "mail send email message") == 1.0
    synonym, unrelated = c.match("mail", "email send"), c.match("tomato", "email send")
    assert 0.0 <= unrelated < 0.3 < synonym < 1.0


def test_coverage_is_the_mean_concept_match_of_the_best_of_the_first_three(documents) -> None:
    wanted = a.concept_words("forecast tomorrow in paris")
    weather = c.coverage(wanted, ["weather::forecast"], documents)
    lexical = documents.documents[documents.positions["weather::forecast"]].lexical
    assert weather == pytest.approx(sum(c.match(w, lexical) for w in wanted) / 3)
    others = ["mail::send", "kv::get", "sms::send"]
    assert c.coverage(wanted, [*others, "weather::forecast"], documents) < weather  # 4th: unread
    assert c.coverage(wanted, ["mail::send", "kv::get", "weather::forecast"], documents) == weather


def test_coverage_separates_a_covered_request_from_a_near_miss(documents) -> None:
    covered = c.coverage(a.concept_words("send an email to the team"), ["mail::send"], documents)
    near_miss = c.coverage(a.concept_words("record a voice memo from the laptop microphone"),
                           ["mail::send"], documents)
    assert covered == 1.0 and near_miss is not None and near_miss < 0.3


def test_a_request_without_concepts_is_covered_and_an_empty_lane_is_unknown(documents) -> None:
    assert c.coverage((), ["mail::send"], documents) == 1.0
    assert c.coverage(("invoice",), [], documents) is None
    assert c.coverage(("invoice",), ["no::such"], documents) is None


def test_lexical_and_static_signals_carry_the_concept_coverage_and_hybrid_not(documents) -> None:
    text = "send an email to the team"
    terms = _rank.tokenize_query(text)
    lane = [("mail::send", 3.0), ("sms::send", 1.0)]
    found = a.signals(text, terms, documents, lane=lane)
    assert found.concepts == c.coverage(a.concept_words(text), ["mail::send", "sms::send"],
                                        documents) == 1.0
    static = a.signals(text, terms, documents, lane=lane, extra=0.6)
    assert a.family(static) == "static" and static.concepts == 1.0
    hybrid = a.signals(text, terms, documents, dense=[("mail::send", 0.6)], lane=lane)
    assert hybrid.concepts is None


def test_the_static_score_weighs_concept_coverage() -> None:
    """The static family (issue 19, sixth round): at the same lexical evidence and static
    cosine, a request whose concepts the lane's candidates cover is answered and a near miss
    (most concepts without a counterpart) refused."""
    weights = dict(zip(a.FEATURE_NAMES["static"], a.CALIBRATION["static"][0]))
    assert weights["concepts"] > 0
    base = a.Signals(words=6, known_share=1.0, coverage=0.1, rare_matched=1.0, action=None,
                     extra=0.4)
    assert a.evidence_floor(base) and a.family(base) == "static"
    assert not a.answerable(dataclasses.replace(base, concepts=0.2))
    assert a.answerable(dataclasses.replace(base, concepts=0.9))
    assert a.features(dataclasses.replace(base, concepts=0.9))[-1] == 0.9
    assert a.features(base)[-1] == a.CONCEPTS_UNKNOWN


def test_the_lexical_score_weighs_concept_coverage() -> None:
    """Same lexical evidence, the concept coverage decides: a near miss (one concept of the
    request in the candidate, the others nowhere) is refused, a covered request answered."""
    base = a.Signals(words=6, known_share=1.0, coverage=0.3, rare_matched=1.0, action=None)
    assert a.evidence_floor(base)
    weights = dict(zip(a.FEATURE_NAMES["lexical"], a.CALIBRATION["lexical"][0]))
    assert weights["concepts"] > 0
    near_miss = dataclasses.replace(base, concepts=0.2)
    covered = dataclasses.replace(base, concepts=0.8)
    assert a.features(covered)[-1] == 0.8
    assert not a.answerable(near_miss)
    assert a.answerable(covered)
    unknown = dataclasses.replace(base, concepts=None)
    assert a.features(unknown)[-1] == a.CONCEPTS_UNKNOWN
