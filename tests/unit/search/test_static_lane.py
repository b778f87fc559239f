"""The static lane (`search/static_lane.py`, its rule `ranking/static_fusion.py`): its fusion rule,
when it serves, and a search on a host without the `dense` extra. Needs no numpy (it runs on BM25-only targets)."""

from __future__ import annotations

import logging
import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.search.ranking import static_fusion as sf
from iii_directory.search import static_lane as sl
from iii_directory.search.service import SearchService
from iii_directory.standalone import standalone_engine

SEARCH = "directory::search_functions"

CATALOG = [
    {"function_id": "mail::send", "description": "Send an email message to recipients.",
     "request_schema": {"type": "object", "properties": {"to": {"type": "string"}}}},
    {"function_id": "mail::search", "description": "Search the mailbox for messages.",
     "request_schema": {"type": "object", "properties": {"query": {"type": "string"}}}},
    {"function_id": "calendar::event::create", "description": "Create a calendar event.",
     "request_schema": {"type": "object", "properties": {"title": {"type": "string"}}}},
    {"function_id": "calendar::event::list", "description": "List calendar events in a range.",
     "request_schema": {"type": "object", "properties": {"start": {"type": "string"}}}},
    {"function_id": "files::list", "description": "List the files in a folder.",
     "request_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"function_id": "files::read", "description": "Read a file's contents.",
     "request_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
]


def ranking(*ids: str, top: float = 0.7, step: float = 0.01) -> list[tuple[str, float]]:
    return [(doc_id, top - i * step) for i, doc_id in enumerate(ids)]


# -- the rule --------------------------------------------------------------------------------------


def test_a_confident_bm25_leader_stays_first() -> None:
    lexical = [("a::x", 9.0), ("b::y", 8.0)]
    # the static lane prefers b::y, but holds a::x in its first four: BM25's leader is kept
    fused = sf.fuse_static(lexical, ranking("b::y", "c::z", "a::x", "d::w"))
    assert [d for d, _ in fused][:2] == ["a::x", "b::y"]
    # outside its first four, plain reciprocal-rank fusion decides
    fused = sf.fuse_static(lexical, ranking("b::y", "c::z", "d::w", "e::v", "a::x"))
    assert [d for d, _ in fused][0] == "b::y"


def test_static_hits_join_the_lane() -> None:
    fused = sf.fuse_static([("a::x", 9.0)], ranking("a::x", "a::q", "c::z"))
    assert {d for d, _ in fused} == {"a::x", "a::q", "c::z"}


def test_an_uncorroborated_lexical_lane_is_dropped() -> None:
    far = ranking(*[f"w{i}::f" for i in range(sf.CORROBORATION_DEPTH)], "a::x")
    assert sf.fuse_static([("a::x", 9.0)], far) == []
    near = ranking(*[f"w{i}::f" for i in range(sf.CORROBORATION_DEPTH - 1)], "a::other")
    assert sf.fuse_static([("a::x", 9.0)], near) != []


def test_a_static_head_corroborates_a_lexical_hit_below_a_stray_leader() -> None:
    # the leader's worker (a) is nowhere in the static lane, but b holds two of its first four
    # and the lexical lane's second hit: the lane is kept, not dropped
    head = ranking("b::y", "c::z", "b::q", *[f"w{i}::f" for i in range(sf.CORROBORATION_DEPTH)])
    lexical = [("a::x", 9.0), ("b::y", 8.0)]
    assert "b::y" in {d for d, _ in sf.fuse_static(lexical, head)}
    # one static hit of b in the head is not enough; nor is b below the lexical lane's first three
    single = ranking("b::y", "c::z", "d::q", *[f"w{i}::f" for i in range(sf.CORROBORATION_DEPTH)])
    assert sf.fuse_static(lexical, single) == []
    deep = [("a::x", 9.0), ("e::1", 8.0), ("e::2", 7.0), ("b::y", 6.0)]
    assert sf.fuse_static(deep, head) == []


def test_the_lexical_head_stays_inside_the_fused_lanes_first_four() -> None:
    lane = [("s::1", 1.0), ("s::2", 0.9), ("s::3", 0.8), ("s::4", 0.7), ("a::x", 0.6),
            ("s::5", 0.5)]
    lexical = [("s::1", 9.0), ("a::x", 8.0), ("s::2", 7.0), ("b::y", 6.0)]
    kept = sf.keep_lexical_head(lane, lexical)
    assert [d for d, _ in kept] == ["s::1", "s::2", "s::3", "a::x", "s::4", "s::5"]
    assert dict(kept)["a::x"] == 0.8  # scored as the hit before it: the order holds
    # the first place is never taken; a lane already holding the head is left as it is
    led = sf.keep_lexical_head(lane, [("a::x", 9.0)])
    assert led[0][0] == "s::1" and [d for d, _ in led][:4].count("a::x") == 1
    assert sf.keep_lexical_head(lane, [("s::4", 9.0), ("s::1", 8.0)]) == lane
    assert sf.keep_lexical_head([], lexical) == []


def test_an_empty_lexical_lane_takes_only_a_confident_coherent_static_head() -> None:
    coherent = ranking("a::x", "a::y", "b::z", top=sf.ALONE_COSINE)
    assert [d for d, _ in sf.fuse_static([], coherent)] == ["a::x", "a::y", "b::z"]
    assert sf.fuse_static([], ranking("a::x", "a::y", top=sf.ALONE_COSINE - 0.01)) == []
    assert sf.fuse_static([], ranking("a::x", "b::y", "c::z", "d::w", top=0.9)) == []
    assert sf.fuse_static([], []) == []


def test_static_cut_and_tail() -> None:
    ranked = [("a::x", 0.8), ("b::y", 0.65), ("c::z", 0.61), ("d::w", 0.2)]
    assert [d for d, _ in sf.static_cut(ranked)] == ["a::x", "b::y", "c::z"]
    assert sf.static_cut([]) == []
    tail = sf.static_tail([("a::x", 1.0)], ranking(*[f"t{i}::f" for i in range(9)], "a::x"))
    assert len(tail) == sf.TAIL_DEPTH and all(d != "a::x" for d, _ in tail)
    assert sf.static_tail([], ranked) == []


def test_the_learned_order_keeps_the_leader_and_reorders_the_rest() -> None:
    from iii_directory.search.ranking.corpus import Corpus, tool_from_schema
    from iii_directory.search.ranking.fusion import Request
    from iii_directory.search.ranking.lanes import action_agreement

    corpus = Corpus.build([tool_from_schema(r["function_id"], r["description"],
                                            r["request_schema"]) for r in CATALOG])
    describe = corpus.descriptions.get
    terms = ["create", "calendar", "event"]
    lexical = [("calendar::event::create", 9.0), ("calendar::event::list", 6.0)]
    static = ranking("calendar::event::list", "calendar::event::create", "mail::send",
                     "files::list")
    lane = sf.fuse_static(lexical, static)
    ordered = sf.learned_order(lane, lexical, static, Request.of(terms), corpus.documents,
                               lambda f: describe(f, ""))
    assert ordered[0][0] == "calendar::event::create"
    assert ordered[0][1] == 1.0 + sf.ACTION_BONUS
    assert {d for d, _ in lane} <= {d for d, _ in ordered}
    assert all(0.0 < s <= 1.0 for _, s in ordered[1:])
    # the service's agreement pass leaves the leader first
    again = action_agreement(ordered, Request.of(terms).actions, lambda f: describe(f, ""))
    assert again[0][0] == "calendar::event::create"
    assert sf.learned_order([], lexical, static, Request.of(terms), corpus.documents,
                            lambda f: describe(f, "")) == []


def test_a_refusal_the_static_lane_vouches_for() -> None:
    from iii_directory.search.ranking import static_evidence
    from iii_directory.search.ranking.answerability import Signals, answerable, vouches

    query = object()
    # no content term a document's id names: under the evidence floor, so the decision says no
    strong = Signals(words=6, known_share=1.0, coverage=0.5, rare_matched=0.0, action=False,
                     extra=0.7)
    assert not answerable(strong)
    static_evidence.record([(query, 0.7, static_evidence.VOUCH_HEAD)])
    assert vouches(query, strong)
    assert not vouches(object(), strong)  # the static lane did not serve that capability
    weak = Signals(words=6, known_share=1.0, coverage=0.5, rare_matched=0.0, action=False,
                   extra=0.4, concepts=0.3)
    assert not vouches(query, weak)  # the calibrated score stays below even odds
    no_verb = Signals(words=6, known_share=1.0, coverage=0.5, rare_matched=0.0, action=None,
                      extra=0.7)
    assert not vouches(query, no_verb)
    refused = Signals(words=6, known_share=1.0, coverage=0.5, rare_matched=0.0, action=False,
                      extra=0.7, refused="intrinsic")
    assert not vouches(query, refused)
    static_evidence.record([(query, 0.7, static_evidence.VOUCH_HEAD - 1)])  # the head spans two workers
    assert not vouches(query, strong)
    assert sf.head_share(ranking("a::x", "a::y", "b::z", "a::w")) == 3
    assert sf.head_share([]) == 0
    assert static_evidence.queries() == [query]  # what the benchmark scripts read back
    static_evidence.clear()
    assert static_evidence.queries() == []


# -- when it serves --------------------------------------------------------------------------------


@pytest.mark.parametrize(("setting", "dense", "mode", "serves"), [
    ("auto", False, "hybrid", True),
    ("auto", False, "judge", True),
    ("auto", False, "lexical", False),  # a configured lexical mode stays BM25 only
    ("auto", True, "hybrid", False),    # hybrid hosts keep MiniLM
    ("on", True, "lexical", True),
    ("off", False, "hybrid", False),
    ("bogus", False, "hybrid", True),
])
def test_when_the_lane_serves(monkeypatch: pytest.MonkeyPatch, setting: str, dense: bool,
                              mode: str, serves: bool) -> None:
    monkeypatch.setenv(sl.STATIC_ENV, setting)
    monkeypatch.setattr(sl._rank, "available", lambda: {"dense": dense, "static": True})
    monkeypatch.setattr(sl, "compiled_kernels", lambda: True)
    assert sl.StaticLane().serves(mode) is serves
    assert sl.StaticLane(enabled=True).serves(mode) is True
    assert sl.StaticLane(enabled=False).serves(mode) is False


def test_a_broken_table_turns_the_lane_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from _rank import static

    def broken() -> None:
        raise ValueError("sha256 mismatch")

    monkeypatch.setattr(static, "default_encoder", broken)
    lane = sl.StaticLane(enabled=True)
    assert lane._load() is None
    assert lane.error == "sha256 mismatch" and not lane.serves()


# -- a search without the dense extra --------------------------------------------------------------


@pytest.fixture
def bm25_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """This host as one without the `dense` extra."""
    monkeypatch.setenv(sl.STATIC_ENV, "auto")
    monkeypatch.setattr(sl._rank, "available", lambda: {"dense": False, "static": True})
    monkeypatch.setattr(sl, "compiled_kernels", lambda: True)


async def _search(settings: Settings, mode: str, capability: str) -> tuple[dict, SearchService]:
    directory = Directory(settings=settings.model_copy(update={"function_search_mode": mode}),
                          engine=standalone_engine(CATALOG))
    service = directory.service(SearchService)
    service.dense.disable("no dense extra on this host")
    response = await directory.invoke(SEARCH, {"capabilities": [capability]})
    await service.stop()
    return response, service


def _ids(response: dict) -> list[str]:
    return [f["function_id"] for w in response["workers"] for f in w["functions"]]


async def test_search_without_the_dense_extra_fuses_the_static_lane(
        settings: Settings, bm25_only: None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="iii_directory.search.static_lane")
    # A request the answerability decision accepts (ranking/answerability.py refuses "email the
    # report to my manager" in every BM25-only mode: "email" earns no content credit there).
    fused, service = await _search(settings, "hybrid", "send my manager a message")
    assert fused["search_mode"] == "lexical"  # the published values are kept
    assert service.static.encoder is not None
    assert any("static lane in use" in r.getMessage() for r in caplog.records)
    plain, _ = await _search(settings, "lexical", "send my manager a message")
    assert _ids(plain)[0] == "mail::send"  # then its BM25 hits (lanes.bm25_tail)
    assert _ids(fused)[0] == "mail::send"
    assert len(_ids(fused)) > 1  # the static recall tail (plain lexical pads from BM25 now)


async def test_exact_ids_still_bypass_the_static_lane(settings: Settings, bm25_only: None) -> None:
    response, _ = await _search(settings, "hybrid", "files::read")
    assert _ids(response) == ["files::read"]


async def test_lexical_mode_stays_bm25_only(settings: Settings, bm25_only: None) -> None:
    _, service = await _search(settings, "lexical", "list the files in a folder")
    assert service.static.encoder is None or service.static._index is None


def test_no_table_means_no_static_lane(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sl.STATIC_ENV, "auto")
    monkeypatch.setattr(sl._rank, "available", lambda: {"dense": False, "static": False})
    assert not sl.StaticLane().serves("hybrid")


async def test_a_large_catalog_is_indexed_in_the_background(settings: Settings, bm25_only: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sl, "AWAIT_BUILD_FUNCTIONS", 2)
    directory = Directory(settings=settings.model_copy(update={"function_search_mode": "hybrid"}),
                          engine=standalone_engine(CATALOG))
    service = directory.service(SearchService)
    service.dense.disable("no dense extra on this host")
    first = await directory.invoke(SEARCH, {"capabilities": ["list the files in a folder"]})
    assert first["search_mode"] == "lexical"  # served while the index builds
    await service.static.stop()  # a build in flight is cancelled cleanly
    service.static._building = None
    await service.static.index(service.corpus)
    for task in list(service.static._tasks):
        await task
    assert service.static._index is not None
    assert service.static._index[0] == service.corpus.fingerprint
    await service.stop()


def test_auto_needs_the_compiled_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sl.STATIC_ENV, "auto")
    monkeypatch.setattr(sl._rank, "available", lambda: {"dense": False, "static": True})
    monkeypatch.setattr(sl, "compiled_kernels", lambda: False)
    assert not sl.StaticLane().serves("hybrid")
    assert sl.StaticLane(enabled=True).serves("hybrid")
