"""Gates 1-5 of the pre-generate hook (search.md §12.3), table-driven, plus their order."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iii_directory.hints.hook import (DiscoveryReason, gate_reason, named_ids, surface_width,
                                      task_window, trim_word)

from .payloads import SEARCH, WIDE_TOOLS, assistant, result, user

R = DiscoveryReason

CASES: list[tuple[str, tuple[str, ...], list[Any], int, DiscoveryReason | None]] = [
    # id, tools, messages, hint_min_workers, expected reason
    ("clear", WIDE_TOOLS, [user("plan a trip")], 2, None),
    ("no_search_tool", ("web::fetch", "mail::send"), [user("plan a trip")], 2, R.search_unavailable),
    ("no_tools_at_all", (), [user("x")], 0, R.search_unavailable),
    ("search_tool_with_other_case", ("Directory::search_functions", "web::fetch"), [user("x")], 0,
     R.search_unavailable),
    ("searched_after_user", WIDE_TOOLS, [user("x"), result(SEARCH)], 2, R.already_searched),
    ("searched_before_latest_user_rearms", WIDE_TOOLS,
     [user("x"), result(SEARCH), user("now something else")], 2, None),
    ("search_result_role_must_be_function_result", WIDE_TOOLS,
     [user("x"), {"role": "assistant", "function_id": SEARCH, "content": []}], 2, None),
    ("narrow_one_worker", (SEARCH, "web::fetch", "web::crawl", "engine::functions::info"),
     [user("x")], 2, R.narrow_surface),
    ("narrow_ignores_engine_search_and_bare_ids",
     (SEARCH, "web::fetch", "engine::functions::list", "bare_tool", "directory::skills::get"),
     [user("x")], 3, R.narrow_surface),
    ("width_counts_directory_namespace", (SEARCH, "web::fetch", "directory::skills::get"),
     [user("x")], 2, None),
    ("zero_never_narrow", (SEARCH,), [user("x")], 0, None),
    ("one_worker_enough_when_min_is_one", (SEARCH, "web::fetch"), [user("x")], 1, None),
    ("operating_after_user", WIDE_TOOLS, [user("x"), result("web::fetch")], 2, R.already_operating),
    ("engine_results_do_not_count_as_operating", WIDE_TOOLS,
     [user("x"), result("engine::functions::info"), result("engine::functions::list")], 2, None),
    ("operating_before_latest_user_does_not_count", WIDE_TOOLS,
     [user("x"), result("web::fetch"), user("next task")], 2, None),
    ("operating_on_unknown_function_still_operating", WIDE_TOOLS,
     [user("x"), result("other::thing")], 2, R.already_operating),
    ("guided_by_user_text", WIDE_TOOLS, [user("please call web::fetch on example.org")], 2, R.task_guided),
    ("guided_with_punctuation", WIDE_TOOLS, [user("Use (`mail::send`), then stop.")], 2, R.task_guided),
    ("guided_by_assistant_text_after_user", WIDE_TOOLS,
     [user("get it"), assistant("I will use mail::send.")], 2, R.task_guided),
    ("guided_only_in_current_task", WIDE_TOOLS,
     [user("call web::fetch"), assistant("done"), user("now something new")], 2, None),
    ("naming_the_search_is_not_guidance", WIDE_TOOLS, [user("run directory::search_functions")], 2, None),
    ("naming_engine_is_not_guidance", WIDE_TOOLS, [user("use engine::functions::info")], 2, None),
    ("naming_an_uncallable_id_is_not_guidance", WIDE_TOOLS, [user("use s3::put_object")], 2, None),
    ("partial_id_is_not_guidance", WIDE_TOOLS, [user("use web::fetcher or mail::sendall")], 2, None),
    ("inner_punctuation_is_kept", WIDE_TOOLS, [user("web::fetch's result")], 2, None),
    ("non_text_blocks_are_not_read", WIDE_TOOLS,
     [{"role": "user", "content": [{"type": "image", "text": "web::fetch"}]}], 2, None),
    ("string_content_is_read_as_text", WIDE_TOOLS, [{"role": "user", "content": "call mail::send"}], 2,
     R.task_guided),
    ("function_result_text_counts", WIDE_TOOLS,
     [user("x"), result("engine::functions::info", "see mail::send")], 2, R.task_guided),
    ("no_user_message_whole_transcript_is_the_task", WIDE_TOOLS, [result("web::fetch")], 2,
     R.already_operating),
    ("empty_transcript", WIDE_TOOLS, [], 2, None),
]


@pytest.mark.parametrize(("tools", "messages", "min_workers", "expected"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_gate_table(tools: tuple[str, ...], messages: list[Any], min_workers: int,
                    expected: DiscoveryReason | None) -> None:
    assert gate_reason(tools, messages, min_workers) == expected


ORDER: list[tuple[str, tuple[str, ...], list[Any], int, DiscoveryReason]] = [
    # Each case also satisfies every later gate; the earliest one wins.
    ("search_unavailable_before_all", ("web::fetch",),
     [user("call web::fetch"), result(SEARCH), result("web::fetch")], 5, R.search_unavailable),
    ("already_searched_before_narrow", (SEARCH, "web::fetch"),
     [user("call web::fetch"), result(SEARCH), result("web::fetch")], 5, R.already_searched),
    ("narrow_before_operating", (SEARCH, "web::fetch"),
     [user("call web::fetch"), result("web::fetch")], 5, R.narrow_surface),
    ("operating_before_guided", WIDE_TOOLS, [user("call web::fetch"), result("web::fetch")], 2,
     R.already_operating),
]


@pytest.mark.parametrize(("tools", "messages", "min_workers", "expected"),
                         [case[1:] for case in ORDER], ids=[case[0] for case in ORDER])
def test_gate_order(tools: tuple[str, ...], messages: list[Any], min_workers: int,
                    expected: DiscoveryReason) -> None:
    assert gate_reason(tools, messages, min_workers) == expected


def test_task_window_starts_at_latest_user_message() -> None:
    messages = [user("a"), assistant("b"), user("c"), result("web::fetch")]
    assert list(task_window(messages)) == messages[2:]
    assert list(task_window([assistant("only")])) == [assistant("only")]


@pytest.mark.parametrize(("word", "trimmed"), [
    ("`web::fetch`,", "web::fetch"),
    ("(mail::send).", "mail::send"),
    ('"a::b_c-d"', "a::b_c-d"),
    ("::x::", "::x::"),
    ("«ns::fn»", "ns::fn"),
    ("***", ""),
    ("été::ça!", "été::ça"),
])
def test_trim_word(word: str, trimmed: str) -> None:
    assert trim_word(word) == trimmed


def test_named_ids_reads_only_words_with_separator() -> None:
    window = [user("first web::fetch then\tmail::send\nthen nothing"), {"role": "user", "content": None}]
    assert list(named_ids(window)) == ["web::fetch", "mail::send"]


def test_surface_width_counts_distinct_worker_namespaces() -> None:
    names = [SEARCH, "web::fetch", "web::crawl", "mail::send", "a::b::c", "engine::x", "plain", "::odd"]
    assert surface_width(names) == 3


def _trim_reference(word: str) -> str:
    def keep(c: str) -> bool:
        return c.isalnum() or c in ":_-"

    start, end = 0, len(word)
    while start < end and not keep(word[start]):
        start += 1
    while end > start and not keep(word[end - 1]):
        end -= 1
    return word[start:end]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1é_-:.,()`'\"«»*/") + ["\u0663", "\u00b2"]), max_size=30))
def test_trim_word_matches_the_character_rule(word: str) -> None:
    assert trim_word(word) == _trim_reference(word)
