"""The graded decision (issue 31, ranking/confidence.py): `high`, `low` or nothing per capability,
the merge of confidences across lanes and batches, and the lexical fallback lane."""

from __future__ import annotations

import dataclasses

import pytest

from iii_directory.search.ranking import answerability as a
from iii_directory.search.ranking import confidence as c
from iii_directory.search.ranking.corpus import Corpus, tool_from_schema
from iii_directory.search.ranking.query import make_query


def s(content: float, *, action: bool | None = None, coverage: float = 0.1,
      cosine: float | None = None, refused: str = "", admitted: bool | None = None,
      known: float = 1.0, margin: float | None = None, concepts: float | None = None
      ) -> a.Signals:
    if margin is None and cosine is not None:
        margin = cosine - 0.1
    return a.Signals(words=5, known_share=known, coverage=coverage, rare_matched=content,
                     cosine=cosine, margin=margin, action=action, refused=refused,
                     admitted=admitted, concepts=concepts)


@pytest.mark.parametrize("found, expected", [
    # refused classes get nothing, whatever the evidence
    (s(3.0, cosine=0.9, refused="intrinsic"), None),
    (s(3.0, refused="excluded"), None),
    (s(3.0, refused="unreadable"), None),
    # nothing reaches the weak floor: nothing
    (s(0.0, coverage=0.9), None),
    (s(0.5), None),
    (s(0.0, cosine=0.3), None),
    (s(0.0, cosine=0.3, action=True), None),           # an action, but the lane not admitted
    (s(0.0, cosine=0.3, admitted=True), None),         # admitted, but no action named
    # the weak floor without the calibrated yes: low
    (s(0.0, cosine=0.3, admitted=True, action=False), "low"),
    (s(1.0, coverage=0.0, known=0.55, action=False), "low"),
])
def test_grade_below_the_calibrated_yes(found: a.Signals, expected: str | None) -> None:
    assert not a.answerable(found)
    assert c.grade(found) == expected


def test_grade_is_high_when_the_calibrated_decision_answers() -> None:
    found = s(3.0, coverage=1.0, action=True)
    assert a.answerable(found)
    assert c.grade(found) == "high"


def test_a_static_vouch_lifts_low_to_the_confident_boundary_never_a_refusal() -> None:
    weak = s(1.0, coverage=0.0, known=0.55, action=False)
    assert c.grade(weak) == "low" and c.grade(weak, vouched=True) == "low"
    vouched = s(0.0, coverage=1.0, action=True, concepts=1.0)   # no lexical evidence floor
    assert not a.answerable(vouched) and c.confident(vouched)
    assert c.grade(vouched, vouched=True) == "high"
    assert c.grade(s(3.0, refused="intrinsic"), vouched=True) is None


@pytest.mark.parametrize("margin, expected", [
    (c.HIGH_MARGIN + 0.05, "high"), (c.HIGH_MARGIN, "high"), (c.HIGH_MARGIN - 0.01, "low")])
def test_hybrid_high_needs_the_relative_margin_over_the_background(margin: float,
                                                                    expected: str) -> None:
    """A yes of the decision is `high` only when the best cosine stands `HIGH_MARGIN` above the
    catalog's background similarity; below it the same candidates are `low`, never emptied."""
    found = s(3.0, coverage=1.0, action=True, cosine=0.8, margin=margin, admitted=True)
    assert a.answerable(found)
    assert c.grade(found) == expected


def test_lexical_high_needs_the_score_margin_above_the_yes_threshold() -> None:
    """Without a MiniLM cosine, `high` needs the calibrated log-odds `HIGH_SCORE_MARGIN` above
    the family's yes threshold: a bare yes is `low`."""
    for content in (0.5, 1.0, 2.0, 3.0):
        for coverage in (0.2, 0.5, 0.8, 1.0):
            for action in (None, True, False):
                found = s(content, coverage=coverage, action=action, concepts=0.7)
                if not a.answerable(found):
                    continue
                margin = a.score(found) - a.CALIBRATION["lexical"][2]
                expected = "high" if margin >= c.HIGH_SCORE_MARGIN else "low"
                assert c.grade(found) == expected


def test_static_high_needs_its_own_score_margin() -> None:
    """The static family (a best static cosine, no MiniLM one) reads its own margin above its
    yes threshold, `STATIC_HIGH_SCORE_MARGIN`, not the lexical family's: a static yes between the
    two margins is `low`, the same evidence read as lexical (no static cosine) keeps its own
    family's rule."""
    assert c.SCORE_MARGINS == {"lexical": c.HIGH_SCORE_MARGIN,
                               "static": c.STATIC_HIGH_SCORE_MARGIN}
    assert c.STATIC_HIGH_SCORE_MARGIN > c.HIGH_SCORE_MARGIN
    seen = set()
    for content in (0.5, 1.0, 1.5, 2.0, 3.0):
        for coverage in (0.1, 0.2, 0.3, 0.5, 0.8, 1.0):
            for action in (None, True, False):
                for cosine in (0.4, 0.5, 0.55, 0.6, 0.7):
                    found = dataclasses.replace(
                        s(content, coverage=coverage, action=action, concepts=0.6), extra=cosine)
                    assert a.family(found) == "static"
                    if not a.answerable(found):
                        continue
                    margin = a.score(found) - a.CALIBRATION["static"][2]
                    expected = "high" if margin >= c.STATIC_HIGH_SCORE_MARGIN else "low"
                    assert c.grade(found) == expected
                    if c.HIGH_SCORE_MARGIN <= margin < c.STATIC_HIGH_SCORE_MARGIN:
                        seen.add("between")
                    seen.add(expected)
    assert seen >= {"high", "low", "between"}


def test_concept_coverage_with_a_named_action_earns_low_without_lexical_evidence() -> None:
    """Lexical and static families: no content term matched, but the lane's first candidates
    cover the request's concepts (`CONCEPT_FLOOR`) and the request names an action."""
    covered = s(0.0, coverage=0.0, action=False, concepts=c.CONCEPT_FLOOR)
    assert not a.evidence_floor(covered)
    assert c.grade(covered) == "low"
    assert c.grade(s(0.0, coverage=0.0, action=None, concepts=0.9)) is None   # no action named
    assert c.grade(s(0.0, coverage=0.0, action=True, concepts=c.CONCEPT_FLOOR - 0.01)) is None
    assert c.grade(s(0.0, action=True, concepts=0.9, refused="intrinsic")) is None
    # hybrid reads the dense ranking's admission, never the concept coverage
    assert c.grade(s(0.0, coverage=0.0, action=True, concepts=1.0, cosine=0.15,
                     admitted=False)) is None


def test_what_the_decision_refused_is_low_when_it_reaches_the_evidence_floor() -> None:
    """Everything the yes/no decision refused above its evidence floor is now `low`."""
    for content in (0.5, 1.0, 2.0):
        for coverage in (0.0, 0.2, 0.4, 0.8):
            for action in (None, True, False):
                found = s(content, coverage=coverage, action=action, known=0.6)
                if a.evidence_floor(found) and not a.answerable(found):
                    assert c.grade(found) == "low"


def test_id_confidence_takes_the_best_lane_and_tails_are_low() -> None:
    lanes = [[("a::x", 1.0), ("b::y", 0.5)], [("b::y", 2.0), ("c::z", 1.0)], [("d::w", 1.0)]]
    tails = [[("e::v", 0.1)], [("f::u", 0.1), ("a::x", 0.1)], [("g::t", 0.1)]]
    levels = c.id_confidence(lanes, tails, ["low", "high", None])
    assert levels == {"a::x": "low", "b::y": "high", "e::v": "low", "c::z": "high",
                      "f::u": "low"}


def test_merged_levels_and_high_first_are_stable() -> None:
    merged = c.merged_levels([{"a::x": "low", "b::y": "high"}, {"a::x": "high", "c::z": "low"}])
    assert merged == {"a::x": "high", "b::y": "high", "c::z": "low"}
    order = ["c::z", "a::x", "d::q", "b::y"]
    assert c.high_first(order, {"c::z": "low", "a::x": "high", "b::y": "high", "d::q": "low"}) \
        == ["a::x", "b::y", "c::z", "d::q"]


def corpus() -> Corpus:
    return Corpus.build([
        tool_from_schema("ledger::journal::reverse", "Reverse a posted journal entry.", {}),
        tool_from_schema("mail::send", "Send an email message to recipients.", {}),
        tool_from_schema("calendar::event::create", "Create a calendar event.", {}),
    ])


def test_an_empty_lexical_lane_falls_back_to_single_term_hits() -> None:
    documents = corpus().documents
    query = make_query("the journal entry was posted twice, undo it")
    other = make_query("send an email")
    assert query is not None and other is not None
    kept = [("mail::send", 3.0)]
    lanes, fallback = c.fallback_lanes(documents, [query, other], [[], kept], [None, None])
    assert [doc_id for doc_id, _ in lanes[0]] == ["ledger::journal::reverse"]
    assert lanes[1] == kept and fallback == [True, False]


def test_no_fallback_for_an_exact_id_or_a_request_with_no_shared_word() -> None:
    documents = corpus().documents
    exact = make_query("mail::send")
    none = make_query("zzqx wibble")
    assert exact is not None and none is not None
    lanes, fallback = c.fallback_lanes(documents, [exact, none], [[], []],
                                       [[("mail::send", 1.0)], None])
    assert lanes == [[], []] and fallback == [False, False]


@pytest.mark.parametrize("text, asks", [
    ("where is truck KL-442 right now", True),
    ("what are the coordinates of 1600 Amphitheatre Parkway?", True),
    ("was it raining in Seattle on 14 March 2024?", True),
    ("how long is the drive from Lyon to Geneva", True),
    ("any press coverage of the Acme data breach this week?", True),
    ("what a gloomy morning we're having, isn't it", False),      # an exclamation
    ("can you believe how gloomy it is out there today", False),  # a polite command's opener
    ("send an email to ana@x.io", False),
    ("anything else", False),
])
def test_asks_question(text: str, asks: bool) -> None:
    assert c.asks_question(text) is asks


def test_an_admitted_dense_ranking_earns_low_for_a_question_as_for_an_action() -> None:
    """A question asks for a fact: it is its own action. Without an admitted dense ranking (or
    the margin a `high` answer needs) it stays under the weak floor like any other request."""
    question = s(0.0, cosine=0.3, admitted=True)
    assert c.grade(question) is None
    assert c.grade(question, question=True) == "low"
    assert c.grade(s(0.0, cosine=0.3, margin=c.HIGH_MARGIN - 0.01, admitted=False),
                   question=True) is None
    assert c.grade(s(0.0, cosine=0.3, margin=0.1), question=True) is None
    assert c.grade(s(3.0, refused="unreadable", admitted=True), question=True) is None


@pytest.mark.parametrize("text, carries", [
    ("bump counter signups_today", True),                         # an identifier
    ("turn 'Pike Place Market, Seattle' into coordinates", True),  # a quoted span
    ("charge the car to 80% overnight", True),                     # a number
    ("forward the invoice to ana@corp.io", True),                  # an address
    ("draft an NDA between us and Northwind Ltd", True),           # a name inside the sentence
    ("rerun github::actions::run on main", True),                  # an id
    ("Lovely morning we're having, isn't it", False),              # a capital opening the sentence
    ("then fold in fresh ginger for tonight's curry", False),      # an apostrophe is no quote
    ("I hope it stays dry. Tomorrow is the match", False),         # a new sentence's capital
    ("it was so chilly that I had to wear two jumpers", False),    # the pronoun I
])
def test_carries_value(text: str, carries: bool) -> None:
    assert c.carries_value(text) is carries


def test_a_content_term_in_a_request_that_carries_a_value_earns_low() -> None:
    """One content term matched only in a description is under the evidence floor; with a value
    (an argument for a tool) in the request it earns `low`, without one nothing, and a value
    with no content term matched earns nothing either."""
    weak = s(0.5)
    assert not a.evidence_floor(weak) and not a.answerable(weak)
    assert c.grade(weak) is None
    assert c.grade(weak, value=True) == "low"
    assert c.grade(s(0.0), value=True) is None
    assert c.grade(s(0.5, refused="unreadable"), value=True) is None
    # hybrid: an admitted dense ranking counts a value as a named action
    assert c.grade(s(0.0, cosine=0.3, admitted=True), value=True) == "low"
    assert c.grade(s(0.0, cosine=0.3, margin=c.HIGH_MARGIN - 0.01, admitted=False),
                   value=True) is None
    # hybrid: or a dense ranking with the margin a `high` answer needs, admitted or not
    standing_out = s(0.0, cosine=0.3, margin=c.HIGH_MARGIN, admitted=False)
    assert c.grade(standing_out) is None and c.grade(standing_out, value=True) == "low"
    assert c.grade(standing_out, question=True) == "low"


def test_the_static_ranking_fills_an_empty_lane_only_for_a_request_that_carries_a_value() -> None:
    """Static lane: a lane still empty after the BM25 fallback takes the first `FALLBACK_DEPTH`
    of its static ranking, marked a fallback (`low` at best), when the request carries a value;
    an exact id, a lane that has candidates and a request without a value keep theirs."""
    texts = ["point shop.example.com at 203.0.113.7", "see", "mail::send", "send the report"]
    queries = [make_query(t) for t in texts]
    assert all(q is not None for q in queries)
    lanes = [[], [], [], [("mail::send", 1.0)]]
    exact = [None, None, [("mail::send", 1.0)], None]
    empty = c.static_fallback_positions(queries, lanes, exact)
    assert empty == [0]
    ranking = [(f"dns::record::{i}", 0.5 - i / 100) for i in range(20)]
    filled, fallback = c.static_fallback_lanes(lanes, [False] * 4, empty, [ranking])
    assert filled[0] == ranking[:c.FALLBACK_DEPTH] and fallback == [True, False, False, False]
    assert filled[1:] == lanes[1:]
    assert c.static_fallback_lanes(lanes, [False] * 4, empty, None) == (lanes, [False] * 4)


def test_a_static_cosine_with_a_value_earns_low_in_the_static_family_only() -> None:
    static = a.Signals(words=5, known_share=1.0, coverage=0.0, rare_matched=0.0,
                       extra=c.STATIC_VALUE_COSINE)
    assert c.grade(static) is None
    assert c.grade(static, value=True) == "low"
    below = a.Signals(words=5, known_share=1.0, coverage=0.0, rare_matched=0.0,
                      extra=c.STATIC_VALUE_COSINE - 0.01)
    assert c.grade(below, value=True) is None
