"""Search's memos of request text are bounded by bytes under one worker budget (issue 33,
item 3): a memo counts what each entry holds, drops its least recently used entries past its
share, and the count is not below what the entries really hold (tracemalloc); many distinct
maximum-length capabilities through the whole query path leave every memo within its share;
`function_search_text_cache_mib` sets the budget, live."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator

import pytest
from search_fakes import CATALOG, PeerEngine

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.search.ranking import answerability, query
from iii_directory.search import sliced_queries
from iii_directory.search.ranking.corpus import Corpus
from iii_directory.search.request_limits import CAPABILITY_MAX_CHARS
from iii_directory.search.service import SearchService
from iii_directory.search.ranking.text_memo import (BUDGET, MIB, HotMemo, MemoBudget, TextMemo,
                                                    approx_bytes, text_memo)
from iii_directory.timeslice import TimeSlice


@pytest.fixture(autouse=True)
def restored_budget() -> Iterator[None]:
    limit = BUDGET.limit_bytes
    yield
    BUDGET.set_limit(limit)


def distinct_capability(n: int, length: int = CAPABILITY_MAX_CHARS) -> str:
    """A distinct request-like text of exactly `length` characters (distinct words too)."""
    words = []
    i = 0
    while len(" ".join(words)) < length:
        words.append(["send", "invoice", f"customer{n}w{i}", "report", f"q{n}x{i}data"][i % 5])
        i += 1
    return " ".join(words)[:length]


def memo_of(function: object) -> TextMemo[object] | HotMemo:
    memo = getattr(function, "memo", None)
    if memo is None:
        memo = getattr(function, "__self__")
    assert isinstance(memo, (TextMemo, HotMemo))
    return memo


def test_a_memo_keeps_its_share_and_drops_the_least_recently_used() -> None:
    budget = MemoBudget(64 * 1024)
    calls: list[str] = []

    @text_memo(share=0.5, budget=budget)
    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    memo = memo_of(upper)
    texts = [distinct_capability(n, 400) for n in range(200)]
    assert upper(texts[0]) == texts[0].upper()
    for text in texts[1:]:
        upper(text)
        upper(texts[0])  # kept in use: never the least recently used
        assert memo.bytes <= memo.limit_bytes == 32 * 1024
    calls.clear()
    upper(texts[0])
    upper(texts[1])
    assert calls == [texts[1]]  # the first stayed; an early one was dropped
    assert 0 < len(memo) < 200


def test_a_hot_memo_is_a_plain_subscript_and_drops_its_oldest() -> None:
    budget = MemoBudget(16 * 1024)
    calls: list[str] = []

    @text_memo(share=1.0, budget=budget, hot=True)
    def stemmed(word: str) -> str:
        calls.append(word)
        return word[:-1]

    memo = memo_of(stemmed)
    words = [f"word{n:04d}" * 3 for n in range(200)]
    assert [stemmed(w) for w in words[:3]] == [w[:-1] for w in words[:3]]
    assert stemmed(words[0]) == words[0][:-1] and calls.count(words[0]) == 1  # a hit
    for word in words:
        stemmed(word)
    assert memo.bytes <= memo.limit_bytes and 0 < len(memo) < 200
    assert words[0] not in memo and words[-1] in memo  # the oldest went first
    memo.cache_clear()
    assert len(memo) == 0 and memo.bytes == 0


def test_a_result_larger_than_the_share_is_returned_and_not_kept() -> None:
    budget = MemoBudget(4096)

    @text_memo(share=0.5, budget=budget)
    def echo(text: str) -> str:
        return text * 10

    assert echo("x" * 500) == "x" * 5000
    assert len(memo_of(echo)) == 0 and memo_of(echo).bytes == 0


def test_a_smaller_limit_applies_at_once() -> None:
    budget = MemoBudget(1 * MIB)

    @text_memo(share=1.0, budget=budget)
    def words(text: str) -> tuple[str, ...]:
        return tuple(text.split())

    for n in range(300):
        words(distinct_capability(n))
    assert budget.held_bytes() > 256 * 1024
    budget.set_limit(256 * 1024)
    assert budget.held_bytes() <= 256 * 1024


@pytest.mark.parametrize("hot", [False, True])
def test_the_count_is_not_below_what_the_entries_hold(hot: bool) -> None:
    budget = MemoBudget(64 * MIB)  # nothing is evicted: every entry stays alive

    @text_memo(share=1.0, budget=budget, hot=hot)
    def derived(text: str) -> tuple[tuple[str, ...], frozenset[str], str]:
        words = text.split()
        return tuple(words), frozenset(w.upper() for w in words), text.lower()

    texts = [distinct_capability(n) for n in range(400)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for text in texts:
            derived(text)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    counted = memo_of(derived).bytes
    assert held <= counted, (held, counted)
    assert counted <= 3 * held  # an over-count, not a wild one


def test_approx_bytes_reaches_into_dataclasses_and_objects() -> None:
    made = query.make_query("send an email to a customer about the overdue invoice")
    assert made is not None
    assert approx_bytes(made) > approx_bytes(made.text) + approx_bytes(made.terms)


async def test_many_long_capabilities_leave_every_memo_within_its_share() -> None:
    BUDGET.set_limit(1 * MIB)
    BUDGET.clear()
    documents = Corpus.empty().documents
    capabilities = [distinct_capability(n) for n in range(600)]
    for start in range(0, len(capabilities), 18):
        await sliced_queries.prepare_queries(capabilities[start:start + 18], documents, TimeSlice())
    for memo in BUDGET.memos:
        assert memo.bytes <= memo.limit_bytes, memo.function
    assert BUDGET.held_bytes() <= BUDGET.limit_bytes
    for function in (query.make_query, answerability._request_words, answerability.concept_words):
        assert len(memo_of(function)) > 0  # still remembering recent texts
    assert len(memo_of(query.make_query)) < len(capabilities)


async def test_the_setting_sets_the_budget_live(settings: Settings) -> None:
    directory = Directory(settings=settings.model_copy(update={"function_search_text_cache_mib": 3}),
                          engine=PeerEngine(CATALOG))
    directory.service(SearchService)
    assert BUDGET.limit_bytes == 3 * MIB
    directory.apply_settings(directory.settings.model_copy(update={"function_search_text_cache_mib": 5}))
    assert BUDGET.limit_bytes == 5 * MIB
    assert Settings().function_search_text_cache_mib == 16
    with pytest.raises(ValueError):
        Settings(function_search_text_cache_mib=0)


def test_a_recent_memo_keeps_what_the_last_two_generations_used() -> None:
    from iii_directory.search.ranking.text_memo import RecentMemo

    computed: list[str] = []

    def build(key: str) -> list[str]:
        computed.append(key)
        return [key]

    memo = RecentMemo(build, turn_every=2)
    kept, dropped = memo["kept"], memo["dropped"]
    assert memo["kept"] is kept and computed == ["kept", "dropped"]  # a hit computes nothing
    memo.tick()
    memo.tick()  # a new generation: both still there, in the previous one
    assert memo["kept"] is kept  # used again: carried into the current generation
    memo.tick()
    memo.tick()  # another: "dropped" was not used during the one before
    assert memo["kept"] is kept and len(computed) == 2
    assert memo["dropped"] is not dropped and memo["dropped"] == dropped
    assert computed == ["kept", "dropped", "dropped"]
    memo.cache_clear()
    assert len(memo) == 0 and not memo.previous


def test_the_skill_memos_forget_entries_no_scan_shows_any_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """A skill edited or deleted leaves its entry and document behind for two generations at
    most, however many skills came and went (the count-bounded caches kept 16,384 of each)."""
    from iii_directory.search import side_lanes

    monkeypatch.setattr(side_lanes, "_ENTRIES", side_lanes.RecentMemo(side_lanes._ENTRIES.function, 1))
    monkeypatch.setattr(side_lanes, "_DOCUMENTS", side_lanes.RecentMemo(side_lanes._skill_document, 1))
    monkeypatch.setattr(side_lanes, "skill_document", side_lanes._DOCUMENTS.__getitem__)
    for version in range(50):  # one skill rewritten 50 times, one scan each
        entry = side_lanes._entry("soak/a", f"Soak v{version}", "Step.")
        side_lanes.skill_document(entry)
        side_lanes._ENTRIES.tick()
        side_lanes._DOCUMENTS.tick()
    assert len(side_lanes._ENTRIES) + len(side_lanes._ENTRIES.previous) <= 2
    assert len(side_lanes._DOCUMENTS) + len(side_lanes._DOCUMENTS.previous) <= 2
