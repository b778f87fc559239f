"""The request cut to its action and object (`second_query.py`)."""

from __future__ import annotations

import pytest

from iii_directory.search.ranking.query import make_query
from iii_directory.search.ranking.second_query import second_query


@pytest.mark.parametrize(("capability", "expected"), [
    ("send an email to a customer", "send email customer"),
    ("shrink the logo to 256x256", "shrink logo"),
    ("please just list the open pull requests now", "list pull requests"),
    # no known verb in the first three words: the concepts alone
    ("what are the coordinates of 1600 Amphitheatre Parkway?", "coordinates amphitheatre parkway"),
])
def test_the_leading_verb_and_the_concept_words(capability: str, expected: str) -> None:
    assert second_query(capability) == expected


def test_without_a_concept_every_word_that_is_not_a_stop_word_or_filler() -> None:
    # `time` and `day` are ordinary English, so the request names no concept
    assert second_query("set the time of day") == "set time day"


def test_a_request_with_no_word_left_is_its_own_second_query() -> None:
    assert second_query("the of and") == "the of and"


def test_a_query_carries_the_second_text_of_its_dense_text() -> None:
    query = make_query('send {"to": "+4915112345678", "text": "Your table is ready"} as a text message')
    assert query is not None
    assert query.second_text == second_query(query.dense_text)
    assert query.second_vector is None and query.with_vector(0, 3).second_vector == 3
