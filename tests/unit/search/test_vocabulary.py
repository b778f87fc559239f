"""The lexical vocabulary: stems, concepts, request rewrites and action classes."""

from __future__ import annotations

import _rank
import pytest

from iii_directory.search.ranking.corpus import Document, DocumentSet, index_terms, query_terms
from iii_directory.search.ranking.lanes import action_agreement
from iii_directory.search.ranking.query import make_query
from iii_directory.search.ranking.text import is_control_plane
from iii_directory.search.ranking.vocabulary import (function_actions, normal_term, request_actions,
                                                     rewrite_request, stem)


def test_stems_join_inflections() -> None:
    assert stem("filling") == stem("fill")
    assert stem("invitation") == stem("invite")
    assert stem("scheduled") == stem("schedule") == stem("scheduling")
    # numbers, short and non-alphabetic terms stay as they are
    assert [stem(t) for t in ("2024", "v2", "id", "s3")] == ["2024", "v2", "id", "s3"]


def test_concepts_join_synonyms_on_both_sides() -> None:
    assert normal_term("terminal") == normal_term("shell") == normal_term("console")
    assert normal_term("spreadsheet") == normal_term("sheet") == normal_term("spreadsheets")
    assert normal_term("remember") == normal_term("memory")
    assert normal_term("transcript") == normal_term("transcribe")
    assert normal_term("online") == normal_term("web")
    # a word that means different things with different objects is not grouped
    assert normal_term("post") != normal_term("send")
    docs = DocumentSet((Document("shell::exec", "", "shell exec run a shell command"),
                        Document("files::read", "", "files read read a text file")))
    hits = docs.bm25(_rank.tokenize_query("run ls in a terminal"))
    # `terminal` matches `shell`: two distinct concepts, so the two-term minimum holds
    assert [(h[0], h[2]) for h in hits] == [("shell::exec", 2)]


def test_a_concept_counts_once() -> None:
    docs = DocumentSet((Document("a::b", "", "spreadsheet sheet worksheet"),))
    assert docs.bm25(["sheet", "spreadsheet"], min_matched=2) == []
    assert index_terms(["sheets", "spreadsheet"]) == [normal_term("sheet")] * 2


REWRITES = [
    ("drop a heads-up in #deploys that staging is down", "drop a message in a channel that staging is down"),
    ("comment on issue #88", "comment on issue #88"),
    ("push tomorrow's standup back by an hour", "postpone tomorrow's standup by an hour"),
    ("log into the vendor portal", "login the vendor portal"),
    ("run the report every Monday at 9am", "run the report on a recurring schedule at 9am"),
    ("back up the db daily", "backup the db on a recurring schedule"),
    ("spin up the staging stack", "start the staging stack"),
    ("give the buyer their money back", "give the buyer their refund"),
    ("run `ls -la /var/log` now", "run some code now"),
    ("send an email to a customer", "send an email to a customer"),
    ("put back the previous release", "revert the previous release"),
    ("shoot back a quick thanks", "reply a quick thanks"),
    ("change the name of a.txt to b.txt", "rename a.txt (text file) to b.txt (text file)"),
    ("read this out loud", "read this aloud"),
    ("tack three entries onto the tab", "append three entries to the tab"),
    ("take the needs-triage label off PAY-88", "remove the needs-triage label from PAY-88"),
    ("pull up the last 200 lines", "show the last 200 lines"),
    ("transcribe ./memos/standup.m4a", "transcribe ./memos/standup.m4a (audio file)"),
    # a path inside a URL, an e-mail address and a version number are not file names
    ("fetch https://example.com/story.html", "fetch https://example.com/story.html"),
    ("email anna@example.de", "email anna@example.de"),
    ("version 1.2 is out", "version 1.2 is out"),
]


@pytest.mark.parametrize(("text", "expected"), REWRITES)
def test_request_rewrites(text: str, expected: str) -> None:
    assert rewrite_request(text) == expected


def test_rewrites_feed_terms_and_dense_text_not_the_exact_id_text() -> None:
    query = make_query("post a summary in #support-escalations")
    assert query is not None
    assert query.text == "post a summary in #support-escalations"
    assert "channel" in query.terms and "support" not in query.terms
    assert query.dense_text == "post a summary in a channel"


def test_request_actions() -> None:
    def actions(text: str) -> frozenset[str]:
        return request_actions(_rank.tokenize_query(rewrite_request(text)))

    assert actions("store the value under the key") == {"set"}
    assert actions("find error logs from the payments service") == {"search"}
    assert actions("open https://example.com in a browser") == {"read", "create"}
    # a recurrence asks for a schedule whatever the verb
    assert actions("run the cleanup every Monday at 9am") == {"schedule"}
    # no known verb among the first three terms
    assert actions("what are the coordinates of the office") == frozenset()


def test_function_actions() -> None:
    assert function_actions("state::set", "Store a JSON value under a key.") == {"set"}
    assert function_actions("chat::post-message", "Post a message to a channel.") == {"send"}
    assert function_actions("oauth::getToken", "Return a valid access token.") == {"read"}
    assert function_actions("cron::trigger", "Run a scheduled job right now.") == {"run"}
    assert function_actions("calendar::free-busy", "Return the busy intervals.") == {"read"}
    assert function_actions("git::stash", "") == frozenset()


def test_action_agreement_reorders_near_ties_only() -> None:
    descriptions = {"state::get": "Read the value stored under a key.",
                    "state::set": "Store a JSON value under a key.",
                    "state::list": "List the keys."}
    lane = [("state::get", 1.0), ("state::set", 0.9), ("state::list", 0.5)]
    agreed = action_agreement(lane, frozenset({"set"}), descriptions.__getitem__)
    assert [i for i, _ in agreed] == ["state::set", "state::get", "state::list"]
    assert agreed[0][1] == 0.9 * 1.25
    # a clear leader keeps its place: the bonus is 25 %
    far = [("state::get", 1.0), ("state::set", 0.7)]
    assert [i for i, _ in action_agreement(far, frozenset({"set"}), descriptions.__getitem__)] == [
        "state::get", "state::set"]
    assert action_agreement(lane, frozenset(), descriptions.__getitem__) == lane


def test_numbers_in_requests_are_not_matched() -> None:
    docs = DocumentSet((Document("python::run", "", "python run execute a python 3 snippet and print"),))
    assert docs.bm25(_rank.tokenize_query("3D print the bracket")) == []
    assert query_terms(["order", "7781"]) == ["order"]


def test_control_plane_requests_are_not_searched() -> None:
    assert is_control_plane(_rank.tokenize_query("list every function registered on the engine"))
    assert is_control_plane(_rank.tokenize_query("which workers are connected to the engine?"))
    assert not is_control_plane(_rank.tokenize_query("query the search engine for news"))
    assert not is_control_plane(_rank.tokenize_query("run the cleanup function every Monday"))
    assert make_query("list every function registered on the engine") is None
    assert make_query("run the cleanup function every Monday") is not None


def test_filler_words_are_not_matched() -> None:
    docs = DocumentSet((Document("cron::trigger", "", "cron trigger run a scheduled job right now"),))
    assert docs.bm25(_rank.tokenize_query("start a live video call right now")) == []
    assert [h[0] for h in docs.bm25(_rank.tokenize_query("trigger the scheduled job now"))] == [
        "cron::trigger"]


def test_a_scheduled_thing_is_not_a_schedule_request() -> None:
    assert request_actions(_rank.tokenize_query("cancel the scheduled backup job")) == {"delete"}
    assert request_actions(_rank.tokenize_query("set up a recurring export")) == {"schedule"}


def test_requests_about_the_engine_itself_are_not_searched() -> None:
    assert make_query("report the engine's uptime, version and queue depths") is None
    assert make_query("how healthy is the engine right now?") is None
    assert make_query("use a search engine to find the release notes") is not None
    assert make_query("query the search engine for news") is not None
