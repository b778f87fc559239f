"""Several needs in one capability (issue 31, ranking/needs.py): where a capability is cut, and
how its needs travel with it through a call."""

from __future__ import annotations

import pytest

from iii_directory.search.ranking.needs import (MAX_NEEDS, NEED_ACTION_BONUS, answered_needs,
                                                expand_needs, need_action_bonus, need_texts,
                                                regroup, split_needs)
from iii_directory.search.ranking.query import make_query


@pytest.mark.parametrize("text, needs", [
    ("find the arXiv paper on diffusion distillation, summarise it and email it to my team",
     ("find the arXiv paper on diffusion distillation", "summarise it", "email it to my team")),
    ("download the video and convert it to mp3", ("download the video", "convert it to mp3")),
    ("get the weather in Paris then book a table for two",
     ("get the weather in Paris", "book a table for two")),
    ("create an issue; assign it to Bob", ("create an issue", "assign it to Bob")),
    # context before the needs is not a need
    ("the database password leaked, generate a new one and keep the old version",
     ("generate a new one", "keep the old version")),
])
def test_clauses_that_start_with_a_verb_are_needs(text: str, needs: tuple[str, ...]) -> None:
    assert split_needs(text) == needs


@pytest.mark.parametrize("text", [
    "search and replace text in a file",            # one verb phrase, two verbs
    "read and write files",
    "list the files in a folder and its subfolders",
    "check the stock price of AAPL and TSLA",
    "When are ana@corp.io, raj@corp.io and li@corp.io all available for a review",
    "upload the report so that the team can review it",   # a purpose, not a need
    "send Alex the offer: 120k, starting March 1",
    'send {"to": "+4915112345678", "text": "hi"} as a text message',  # inside JSON
    "cut a release off the v2.4.0 tag, with the changelog as the notes",
    "send an email",
])
def test_one_need_stays_whole(text: str) -> None:
    assert split_needs(text) == ()


def test_at_most_max_needs() -> None:
    text = ", ".join(f"create ticket {n}" for n in range(8))
    assert len(split_needs(text)) == MAX_NEEDS


def test_expand_needs_keeps_each_capability_first_and_regroups() -> None:
    whole = make_query("download the video and convert it to mp3")
    single = make_query("send an email")
    flat, owners = expand_needs([whole, None, single])
    assert [q.text if q else None for q in flat] == [
        "download the video and convert it to mp3", "download the video", "convert it to mp3",
        None, "send an email"]
    assert owners == [0, 0, 0, 1, 2]
    grouped = regroup(flat, owners, 3)
    assert [len(group) for group in grouped] == [3, 1, 1] and grouped[0][0] is whole


def test_need_texts_are_the_entries_after_each_capability() -> None:
    flat, owners = expand_needs([make_query("download the video and convert it to mp3"), None,
                                 make_query("send an email")])
    assert need_texts(flat, owners) == {"download the video", "convert it to mp3"}


def test_a_call_searches_at_most_its_budget_of_needs() -> None:
    """Eighteen capabilities of five needs each add `NEEDS_PER_CALL` needs, not ninety: the work
    of a call of long capabilities stays bounded."""
    from iii_directory.search.ranking.needs import NEEDS_PER_CALL
    from iii_directory.search.ranking.query import make_query

    text = ("find the invoice, email it to the client, upload the report, schedule a call "
            "and post a summary to the team channel")
    queries = [make_query(f"{text} {n}") for n in range(18)]
    assert all(q is not None for q in queries)
    flat, owners = expand_needs(queries)
    assert len(flat) - len(queries) == NEEDS_PER_CALL
    assert sorted(set(owners)) == list(range(18))


def test_a_six_step_chain_keeps_all_six_needs() -> None:
    """The longest chains of our case sets name six steps; the sixth is searched too."""
    text = ("look up the customer in the CRM by email address, list their open helpdesk tickets, "
            "refund their most recent charge, reply on the ticket confirming the refund, add a "
            "note to their CRM record and post a summary in #support-escalations")
    needs = split_needs(text)
    assert len(needs) == 6
    assert needs[-1] == "post a summary in #support-escalations"


def test_only_a_needs_hybrid_lane_weighs_its_verb_more() -> None:
    needs = frozenset({"email it to the team"})
    assert need_action_bonus("email it to the team", needs, 0.25) == NEED_ACTION_BONUS
    assert need_action_bonus("find the paper and email it to the team", needs, 0.25) == 0.25


def test_an_emptied_need_keeps_its_tail_only_under_an_answered_capability() -> None:
    needs = frozenset({"find the paper", "email it to legal", "post it", "send it"})
    texts = ["find the paper and email it to legal", "find the paper", "email it to legal",
             "book a flight and post it", "post it", "weather chat and send it", "send it"]
    answered = [True, True, False, False, False, True, True]
    assert answered_needs(texts, answered, needs) == [False, False, True, False, False, False,
                                                      False]
    assert answered_needs([], [], needs) == []
