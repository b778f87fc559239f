"""Concept coverage (`search/concept_coverage.py`) and its place in the lexical and static
families' calibrated answerability scores."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from types import ModuleType

import _rank
import pytest
from search_fakes import CATALOG

from iii_directory.search import answerability as a
from iii_directory.search import concept_coverage as c
from iii_directory.search.corpus import Corpus, tool_from_schema


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


# -- the measurement script (benchmarks/concept_coverage.py) -------------------------------------


def measurement() -> ModuleType:
    pytest.importorskip("numpy")
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import concept_coverage

    return concept_coverage


def test_the_measurement_computes_the_shipped_signal(documents) -> None:
    """`benchmarks/concept_coverage.py`'s `top3_cmean` is what the product computes."""
    measured = measurement()
    coverage = measured.Coverage(documents)
    for text, lane in (("forecast tomorrow in paris", ["mail::send", "weather::forecast"]),
                       ("record a voice memo from the laptop microphone", ["mail::send"]),
                       ("please send the invoice to my accountant", ["sms::send", "mail::send"])):
        assert list(coverage.concepts(text, False)) == list(a.concept_words(text))
        values = coverage.values(text, lane, False)
        assert values["top3_cmean"] == pytest.approx(
            c.coverage(a.concept_words(text), lane, documents), abs=1e-6)
        assert values["top3_cmin"] <= values["top3_cmean"]


def test_the_frontier_counts_kept_positives_at_each_false_positive_level() -> None:
    measured = measurement()
    fa = measured.fa

    def row(case: str, kind: str, score: float) -> dict:
        return {"set": "s", "case": case, "kind": kind, "text": case, "lane": ["x"],
                "relevant": ["x"] if kind == "match" else [], "signals": {"score": score}}

    rows = [row("p1", "match", 3.0), row("p2", "match", 1.0), row("p3", "match", -1.0),
            *(row(f"n{i}", "no_match", s) for i, s in enumerate((2.0, 0.0, -2.0, -3.0,
                                                                  -4.0, -5.0, -6.0, -7.0,
                                                                  -8.0, -9.0)))]
    saved = fa.scored, fa.features, fa.scores
    try:
        fa.scored = lambda signals: signals is not None
        fa.features = lambda signals, family: [signals["score"]]
        fa.scores = lambda model, x: x[:, 0]
        kept = measured.frontier(None, rows, "lexical")
    finally:
        fa.scored, fa.features, fa.scores = saved
    # FP .05 (0 of 10 no-match answered): above 2.0; .10 and .15 (1 of 10): above 0.0; .20 and
    # up (2 or more): above -2.0 and lower
    assert kept == pytest.approx([1 / 3, 2 / 3, 2 / 3, 1.0, 1.0, 1.0])


def test_the_worst_concept_is_the_least_of_each_concepts_best_match(documents) -> None:
    """`cworst` (issue 18, tried for the hybrid family): each concept's best match among the
    first three candidates, then the least of those — not the best candidate's minimum."""
    measured = measurement()
    coverage = measured.Coverage(documents)
    text, lane = "send the forecast by sms", ["mail::send", "weather::forecast", "sms::send"]
    wanted = a.concept_words(text)
    texts = [documents.documents[documents.positions[d]].lexical for d in lane]
    values = coverage.values(text, lane, False)
    assert values["top3_cworst"] == pytest.approx(
        min(max(c.match(w, t) for t in texts) for w in wanted), abs=1e-6)
    assert values["top3_cworst"] >= values["top3_cmin"]
    assert values["top1_cworst"] == values["top1_cmin"]


def test_dense_values_read_the_recorded_dense_ids_and_else_the_lane(documents) -> None:
    measured = measurement()
    coverage = measured.Coverage(documents)
    row = {"text": "forecast tomorrow in paris", "lane": ["mail::send"],
           "dense": ["weather::forecast"]}
    values = measured.row_values(coverage, row)
    assert values["dense_top3_cmean"] == pytest.approx(
        c.coverage(a.concept_words(row["text"]), ["weather::forecast"], documents), abs=1e-6)
    assert values["all_top3_cmean"] < values["dense_top3_cmean"]
    lexical = measured.row_values(coverage, {**row, "dense": []})
    assert lexical["dense_top3_cmean"] == lexical["all_top3_cmean"]
