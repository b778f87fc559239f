"""`directory::search_functions` end to end through `Directory.invoke` (standalone engine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from search_fakes import CATALOG, ExactIndex, FakeEncoder, PeerEngine, ids, record, search

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.search import guidance as g
from iii_directory.search import service as service_module
from iii_directory.encoder.dense_lane import DenseUnavailable
from iii_directory.search.ranking.second_query import SECOND_QUERY_CAPABILITIES, second_query
from iii_directory.search.service import SearchService

SEARCH = "directory::search_functions"


@pytest.fixture
def engine() -> PeerEngine:
    return PeerEngine(CATALOG)


@pytest.fixture
def directory(settings: Settings, engine: PeerEngine) -> Directory:
    return Directory(settings=settings, engine=engine)


def hybrid(directory: Directory, tmp_path: Path, encoder: FakeEncoder | None = None) -> FakeEncoder:
    directory.apply_settings(directory.settings.model_copy(update={"function_search_mode": "hybrid"}))
    encoder = encoder or FakeEncoder()
    directory.service(SearchService).use_encoder(encoder, index_factory=ExactIndex,
                                                 cache_dir=tmp_path / "cache")
    return encoder


# -- validation ----------------------------------------------------------------------------------


async def test_empty_list_is_rejected(directory: Directory) -> None:
    with pytest.raises(DirectoryError) as caught:
        await directory.invoke(SEARCH, {"capabilities": []})
    assert caught.value.code == "invocation_failed"
    assert caught.value.message == "provide at least one capability"


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
async def test_blank_capability_is_rejected(directory: Directory, blank: str) -> None:
    with pytest.raises(DirectoryError) as caught:
        await search(directory, "send an email", blank)
    assert caught.value.message == "capabilities must not be blank"


async def test_legacy_query_payload_is_rejected(directory: Directory) -> None:
    with pytest.raises(DirectoryError) as caught:
        await directory.invoke(SEARCH, {"query": "send an email"})
    assert caught.value.message == 'invalid request: field "capabilities": is required'
    with pytest.raises(DirectoryError):
        await directory.invoke(SEARCH, {"capabilities": [1]})


async def test_blank_after_the_18th_is_dropped_not_rejected(directory: Directory) -> None:
    capabilities = [f"send email number {i}" for i in range(18)] + ["  ", "forecast the weather"]
    response = await directory.invoke(SEARCH, {"capabilities": capabilities})
    assert response["guidance"].endswith(
        "Only the first 18 capabilities were searched; search again for:   , forecast the weather.")


# -- ranking and response shape -------------------------------------------------------------------


async def test_lexical_search_groups_by_worker(directory: Directory) -> None:
    response = await search(directory, "send an email message")
    assert response["search_mode"] == "lexical"
    assert isinstance(response["latency_ms"], float) and response["latency_ms"] >= 0
    assert response["workers"][0]["namespace"] == "mail"
    assert response["workers"][0]["functions"][0] == {
        "function_id": "mail::send", "description": "Send an email message to recipients.",
        "confidence": "high"}
    assert "installable" not in response and "skills" not in response and "triggers" not in response
    assert response["guidance"].startswith(g.MAIN_GUIDANCE)


async def test_excluded_functions_never_come_back(directory: Directory) -> None:
    for capability in ("process email delivery bounces", "list every registered function",
                       "search functions", "engine::functions::list", "mail::bounce-hook",
                       "directory::search_functions", "plainid"):
        response = await search(directory, capability)
        returned = ids(response)
        assert "mail::bounce-hook" not in returned
        assert not any(i.startswith("engine::functions::") for i in returned)
        assert "directory::search_functions" not in returned and "plainid" not in returned


async def test_other_engine_functions_stay_searchable(directory: Directory) -> None:
    assert ids(await search(directory, "list recent engine traces"))[0] == "engine::traces::list"


async def test_exact_id_capability(directory: Directory) -> None:
    response = await search(directory, " kv::get ")
    assert ids(response) == ["kv::get"]


async def test_intrinsic_only_request_searches_nothing(directory: Directory) -> None:
    response = await search(directory, "summarize the provided text")
    assert response["workers"] == []
    assert response["search_mode"] == "lexical"
    assert response["guidance"].startswith(g.REFINE_GUIDANCE)


async def test_no_match_gives_refine_guidance(directory: Directory) -> None:
    response = await search(directory, "order a pizza")
    assert response["workers"] == []
    assert "No functions matched" in response["guidance"]


async def test_batches_merge_in_request_order(directory: Directory) -> None:
    response = await search(directory, "weather forecast city", "zzz one", "zzz two", "zzz three",
                            "zzz four", "zzz five", "send an sms text message")
    returned = ids(response)
    assert returned[0] == "weather::forecast"
    assert returned.index("weather::forecast") < returned.index("sms::send")


async def test_compose_add_selection_appends_install_workflow(directory: Directory) -> None:
    response = await search(directory, "install workers into the compose project")
    assert "compose::add" in ids(response)
    assert g.INSTALL_WORKFLOW in response["guidance"]


# -- session memory --------------------------------------------------------------------------------


async def test_session_memory_suppresses_and_resends(directory: Directory) -> None:
    first = await search(directory, "send an email message", "weather forecast city", session="s1")
    assert ids(first)[0] == "mail::send" and "weather::forecast" in ids(first)
    assert first["guidance"].startswith(g.MAIN_GUIDANCE)
    second = await search(directory, "send an email message", "store a value under a key", session="s1")
    assert "mail::send" not in ids(second)
    assert ("Already provided earlier in this session (candidates unchanged — reuse the earlier "
            "result): mail::send") in second["guidance"]
    assert second["guidance"].startswith(g.MAIN_REPEAT)
    again = await search(directory, "send an email message", session="s1")
    assert ids(again)[0] == "mail::send"  # everything repeated → full re-send
    assert "Already provided" not in again["guidance"]
    assert again["guidance"].startswith(g.MAIN_GUIDANCE)
    other = await search(directory, "send an email message", session="s2")
    assert ids(other)[0] == "mail::send"


async def test_without_a_session_nothing_is_suppressed(directory: Directory) -> None:
    for _ in range(2):
        response = await search(directory, "send an email message")
        assert ids(response)[0] == "mail::send"
        assert response["guidance"].startswith(g.MAIN_GUIDANCE)


# -- hybrid ----------------------------------------------------------------------------------------


async def test_hybrid_encodes_all_capabilities_in_one_batch(directory: Directory, tmp_path: Path) -> None:
    encoder = hybrid(directory, tmp_path)
    await search(directory, "warm up")
    # the fusion's extra views embedded now, so no background batch of theirs lands in between
    await directory.service(SearchService).ensure_ready(directory.context(), views=True)
    before = encoder.calls
    response = await search(directory, *[f"send email {i}" for i in range(7)], "kv::get")
    assert response["search_mode"] == "hybrid"
    assert encoder.calls == before + 2  # a lone call: one half on each encoder thread
    assert not any(text == "kv::get" for text in encoder.texts)  # exact ids bypass the model


async def test_hybrid_embeds_second_texts_for_up_to_six_capabilities(
        directory: Directory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each capability's action-and-object text (`second_query.py`) goes into the call's one
    encoder batches (a lone call's texts, one half on each encoder thread) and the learned
    fusion reads its cosines; a call of more than `SECOND_QUERY_CAPABILITIES` capabilities
    embeds none (the eighteen-capability latency)."""
    encoder = hybrid(directory, tmp_path)
    await search(directory, "warm up")
    await directory.service(SearchService).ensure_ready(directory.context(), views=True)
    seconds: list[object] = []
    original = service_module.learned_lane

    def spy(*args: Any) -> Any:
        seconds.append(args[6])
        return original(*args)

    monkeypatch.setattr(service_module, "learned_lane", spy)
    few = ["please send the quarterly email to the team", "store the value under a key"]
    before = encoder.calls
    await search(directory, *few)
    assert encoder.calls == before + 2
    assert {second_query(c) for c in few} <= set(encoder.texts[-4:])
    assert len(seconds) == 2 and all(s is not None for s in seconds)
    many = [f"please forward the weekly email number {i}" for i in range(SECOND_QUERY_CAPABILITIES + 1)]
    seconds.clear()
    await search(directory, *many)
    assert not {second_query(c) for c in many} & set(encoder.texts)
    assert seconds and all(s is None for s in seconds)


async def test_the_dense_lane_gives_cosines_to_indexed_documents(
        directory: Directory, tmp_path: Path) -> None:
    hybrid(directory, tmp_path)
    await search(directory, "warm up")
    dense = directory.service(SearchService).dense
    assert dense.index is not None
    vector = FakeEncoder().encode(["send an email message"])[0]
    cosines = dense.cosines(dense.index.fingerprint, vector, ["mail::send", "no::such", "kv::get"])
    assert cosines[0] > cosines[2] and cosines[1] == 0.0
    with pytest.raises(DenseUnavailable):
        dense.cosines("another catalog", vector, ["mail::send"])


async def test_hybrid_embeds_the_dense_query_text(directory: Directory, tmp_path: Path) -> None:
    encoder = hybrid(directory, tmp_path)
    await search(directory, 'send {"subject": "hi"} to bob@example.com via https://mail.example.com/x')
    assert 'send { "hi"} to email address via URL' in encoder.texts
    assert not any("bob@example.com" in text for text in encoder.texts)


async def test_hybrid_without_a_model_reports_lexical(directory: Directory) -> None:
    directory.apply_settings(directory.settings.model_copy(update={"function_search_mode": "hybrid"}))
    service = directory.service(SearchService)
    service.dense.disable("no model in this test")  # the fallback is lexical
    response = await search(directory, "send an email message")
    assert response["search_mode"] == "lexical"
    assert ids(response)[0] == "mail::send"


async def test_hybrid_finds_paraphrases_through_the_dense_lane(directory: Directory, tmp_path: Path) -> None:
    hybrid(directory, tmp_path, FakeEncoder(synonyms={"meeting": "event", "schedule": "create"}))
    response = await search(directory, "schedule a meeting")
    assert response["search_mode"] == "hybrid"
    assert ids(response)[0] == "calendar::event::create"


async def test_vector_cache_reuse_across_refresh_and_restart(settings: Settings, tmp_path: Path) -> None:
    engine = PeerEngine(CATALOG)
    directory = Directory(settings=settings, engine=engine)
    first = hybrid(directory, tmp_path)
    service = directory.service(SearchService)
    await search(directory, "send an email message")
    await service.settle()
    embedded = service.dense.encoded_documents
    assert embedded == 11  # 14 records minus the internal one, the control plane and the search
    engine.add_functions([record("maps::geocode", "Turn an address into coordinates.", "address")])
    assert await service.refresh()
    await service.settle()
    assert service.dense.encoded_documents == embedded + 1
    assert service.dense.has_index(service.corpus.fingerprint)
    assert len(first.texts) > 0

    restarted = Directory(settings=settings, engine=engine)
    second = hybrid(restarted, tmp_path)
    response = await search(restarted, "send an email message")
    assert response["search_mode"] == "hybrid"
    restarted_service = restarted.service(SearchService)
    await restarted_service.settle()
    assert restarted_service.dense.encoded_documents == 0
    # geocode's index document is not embedded again; its extra views (search/ranking/views.py) are
    # embedded at the first learned lane that needs them, which the first process never had
    assert all(not text.startswith("maps::geocode") for text in second.texts)


# -- catalog refresh -------------------------------------------------------------------------------


async def test_on_functions_change_refreshes_and_keeps_old_catalog_on_failure(
        directory: Directory, engine: PeerEngine) -> None:
    assert ids(await search(directory, "turn an address into coordinates")) == []
    engine.add_functions([record("maps::geocode", "Turn an address into coordinates.", "address")])
    assert await directory.invoke("directory::on-functions-change", {"event": "functions_changed"}) == {"ok": True}
    assert ids(await search(directory, "turn an address into coordinates")) == ["maps::geocode"]

    async def broken(_data: Any) -> Any:
        raise OSError("engine went away")

    engine.add_peer("engine::functions::list", broken, listed=False)
    with pytest.raises(DirectoryError) as caught:
        await directory.invoke("directory::on-functions-change", {})
    assert caught.value.code == "catalog_fetch_failed"
    assert caught.value.message.startswith("catalog_fetch_failed")
    assert ids(await search(directory, "turn an address into coordinates")) == ["maps::geocode"]


async def test_fingerprint_change_resets_session_delivery(directory: Directory, engine: PeerEngine) -> None:
    await search(directory, "send an email message", session="s")
    engine.add_functions([record("maps::geocode", "Turn an address into coordinates.", "address")])
    await directory.invoke("directory::on-functions-change", {})
    response = await search(directory, "send an email message", "weather forecast city", session="s")
    assert ids(response)[0] == "mail::send" and "weather::forecast" in ids(response)
    assert "Already provided" not in response["guidance"]


# -- side lanes ------------------------------------------------------------------------------------


async def test_trigger_side_lane(directory: Directory, engine: PeerEngine) -> None:
    async def triggers(_data: Any) -> Any:
        return {"registered_triggers": [
            {"id": "t1", "trigger_type": "cron", "function_id": "weather::forecast",
             "worker_name": "weather", "config": {"expression": "0 7 * * *", "city": "Oslo"}},
            {"id": "t2", "trigger_type": "console:script", "function_id": "weather::forecast", "config": {}},
            {"id": "t3", "trigger_type": "http", "function_id": "iii::weather", "config": {}},
            {"id": 4, "trigger_type": "cron", "function_id": "x::y"},
        ]}

    engine.add_peer("engine::registered-triggers::list", triggers, listed=False)
    response = await search(directory, "weather forecast every morning with cron")
    assert response["triggers"] == [{"id": "t1", "trigger_type": "cron", "function_id": "weather::forecast",
                                     "worker_name": "weather",
                                     "config": {"expression": "0 7 * * *", "city": "Oslo"}}]
    assert g.TRIGGERS_NOTE in response["guidance"]


async def test_trigger_section_omitted_when_listing_fails(directory: Directory) -> None:
    response = await search(directory, "weather forecast every morning with cron")
    assert "triggers" not in response


async def test_skills_side_lane(directory: Directory, roots: dict[str, Path]) -> None:
    skills = roots["skills"] / "weather"
    skills.mkdir(parents=True)
    (skills / "forecasts.md").write_text(
        "---\ntitle: Weather forecasts\ndescription: How to read a weather forecast for a city. Details.\n---\nBody.\n")
    (skills / "hidden.md").write_text(
        "---\ntitle: Hidden weather forecast notes\ndisable-model-invocation: true\n---\nBody.\n")
    response = await search(directory, "weather forecast for a city")
    assert response["skills"] == [{"id": "weather/forecasts", "title": "Weather forecasts",
                                   "description": "How to read a weather forecast for a city."}]
    assert g.SKILLS_NOTE in response["guidance"]


# -- registry lane ---------------------------------------------------------------------------------


async def test_registry_failure_gives_empty_installable(directory: Directory) -> None:
    directory.apply_settings(directory.settings.model_copy(update={"registry_search": True}))
    response = await search(directory, "send an email message")
    assert "installable" not in response
    assert ids(response)[0] == "mail::send"


# -- optional reranker -----------------------------------------------------------------------------


class PreferReranker:
    """Scores passages containing `word` high; records every call."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, passages: list[str]) -> list[float]:
        self.calls.append((query, list(passages)))
        return [10.0 if self.word in passage else 0.0 for passage in passages]


class BrokenReranker:
    def score(self, query: str, passages: list[str]) -> list[float]:
        raise RuntimeError("model crashed")


async def test_reranker_reorders_admitted_lanes(directory: Directory, tmp_path: Path) -> None:
    hybrid(directory, tmp_path)
    service = directory.service(SearchService)
    baseline = ids(await search(directory, "send a message"))
    service.reranker = PreferReranker("sms")
    reranked = ids(await search(directory, "send a message"))
    assert service.reranker.calls and service.reranker.calls[0][0] == "send a message"
    assert reranked[0] == "sms::send"
    assert all(len(passages) <= 24 for _, passages in service.reranker.calls)
    assert baseline[0] != "sms::send"


async def test_failing_reranker_keeps_the_default_lanes(directory: Directory, tmp_path: Path) -> None:
    hybrid(directory, tmp_path)
    service = directory.service(SearchService)
    baseline = await search(directory, "send a message")
    service.reranker = BrokenReranker()
    response = await search(directory, "send a message")
    assert ids(response) == ids(baseline)
    assert response["search_mode"] == "hybrid"


async def test_calls_arriving_before_the_boot_snapshot_share_one_catalog_fetch(
        directory: Directory, engine: PeerEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker serves from its registration on: searches that arrive while the catalog is
    being fetched await that fetch instead of each fetching it again, one after another."""
    import anyio

    listing = anyio.Event()
    started: list[int] = []
    real_call = engine.call

    async def gated_call(function_id: str, data: Any, **kwargs: Any) -> Any:
        if function_id == "engine::functions::list":
            started.append(1)
            await listing.wait()  # held open until every search has arrived
        return await real_call(function_id, data, **kwargs)

    monkeypatch.setattr(engine, "call", gated_call)
    answers: list[dict[str, Any]] = []

    async def one() -> None:
        answers.append(await directory.invoke(SEARCH, {"capabilities": ["send an email"]}))

    async with anyio.create_task_group() as group:
        for _ in range(20):
            group.start_soon(one)
        while not started:
            await anyio.lowlevel.checkpoint()
        for _ in range(50):  # let every search reach the snapshot
            await anyio.lowlevel.checkpoint()
        listing.set()
    assert len(answers) == 20
    assert len(started) == 1
    assert all(a["workers"] == answers[0]["workers"] for a in answers)


async def test_a_standalone_call_does_not_wait_for_the_views_the_bench_does(directory: Directory,
                                                                           tmp_path: Path) -> None:
    """A one-shot `call` waits for the model and the index, not for the fusion's extra views
    (twice as many texts); the bench asks for them."""
    hybrid(directory, tmp_path)
    service = directory.service(SearchService)
    await service.ensure_ready(directory.context())
    assert service.dense.has_index(service.corpus.fingerprint)
    assert service.corpus.views.views is None
    await service.ensure_ready(directory.context(), views=True)
    assert service.corpus.views.views is not None


async def test_an_answered_lexical_capability_is_padded_from_its_bm25_hits(directory: Directory) -> None:
    # the lane (coverage-pruned, two matched terms) holds mail::send alone; the budget it leaves
    # is filled with the BM25 hits of the request's informative terms (lanes.bm25_tail)
    assert ids(await search(directory, "send an email message")) == ["mail::send", "mail::inbox", "sms::send"]
    # a refused capability gets no padding
    assert ids(await search(directory, "order a pizza")) == []


async def test_hybrid_refuses_a_capability_its_dense_ranking_does_not_support(
        directory: Directory, tmp_path: Path) -> None:
    hybrid(directory, tmp_path)
    response = await search(directory, "order a pizza")
    assert response["search_mode"] == "hybrid" and response["workers"] == []
    answered = await search(directory, "send an email message")
    assert ids(answered)[0] == "mail::send" and len(ids(answered)) > 1  # filled, learned order


# -- confidence (issue 31) -----------------------------------------------------------------------


def lexical_only(directory: Directory) -> None:
    """Lexical mode without the static lane, as the tests above run it."""
    directory.service(SearchService).static.enabled = False


async def test_a_weak_match_is_returned_low_with_a_note_instead_of_nothing(directory: Directory) -> None:
    """One shared id word ("forecast") is below the calibrated yes: the capability used to get
    no functions and the refine guidance; now its candidate comes back `low`."""
    lexical_only(directory)
    response = await search(directory, "any forecast")
    assert response["workers"] == [{"namespace": "weather", "functions": [{
        "function_id": "weather::forecast", "description": "Get the weather forecast for a city.",
        "confidence": "low"}]}]
    assert g.LOW_CONFIDENCE_NOTE.format(names='"any forecast"') in response["guidance"]
    assert g.REFINE_GUIDANCE not in response["guidance"]


async def test_high_candidates_come_first_in_the_answer(directory: Directory) -> None:
    lexical_only(directory)
    response = await search(directory, "any forecast", "show the inbox")
    assert [w["namespace"] for w in response["workers"]][0] == "mail"
    levels = [f["confidence"] for w in response["workers"] for f in w["functions"]]
    assert levels[0] == "high" and levels[-1] == "low"
    assert response["workers"][-1]["functions"][-1]["function_id"] == "weather::forecast"
    assert '"any forecast"' in response["guidance"] and '"show the inbox"' not in response["guidance"]


@pytest.mark.parametrize("text", ["will my key hold", "lovely morning isn't it", "qwzx plorb"])
async def test_requests_below_the_weak_floor_still_get_nothing(directory: Directory, text: str) -> None:
    lexical_only(directory)
    response = await search(directory, text)
    assert response["workers"] == [] and response["guidance"].startswith(g.REFINE_GUIDANCE)


async def test_each_need_lane_is_sorted_by_its_own_verb_in_hybrid(
        directory: Directory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A need's lane is re-sorted by action agreement even when it is a learned lane: the verb
    is what tells a need's siblings apart (`get the forecast` vs `create the event`)."""
    hybrid(directory, tmp_path)
    await search(directory, "warm up")
    agreed: list[str] = []
    original = SearchService._agree.__func__  # type: ignore[attr-defined]

    def spy(cls: type, call: Any, query: Any, lane: Any, *bonus: float) -> Any:
        agreed.append(query.text)
        return original(cls, call, query, lane, *bonus)

    monkeypatch.setattr(SearchService, "_agree", classmethod(spy))
    learned: list[bool] = []
    select = service_module.select_batch

    def keep(lanes: Any, **kwargs: Any) -> list[str]:
        learned.extend(kwargs.get("learned", ()))
        return select(lanes, **kwargs)

    monkeypatch.setattr(service_module, "select_batch", keep)
    whole = "get the weather forecast for Paris and create a calendar event with attendees"
    response = await search(directory, whole)
    assert response["search_mode"] == "hybrid"
    assert learned[1:] and all(learned[1:])  # the needs' lanes are learned lanes here
    assert {"get the weather forecast for Paris",
            "create a calendar event with attendees"} <= set(agreed)
    assert whole not in agreed or not learned[0]  # a whole capability's learned lane stays as fused


async def test_a_lexical_recall_tail_comes_in_its_requests_verb_order(settings: Settings) -> None:
    """The two-term lane holds the billing functions; the one-term padding that follows it puts
    the function whose action agrees with the request's verb (`send`) before a better BM25 hit
    that only shares an object word."""
    catalog = [
        record("billing::invoice-create", "Create an invoice for a billing customer.", "customer"),
        record("billing::customer-get", "Get a billing customer by id.", "customer"),
        record("reports::reminder-list", "List the reminder reports of every reminder.", "reminder"),
        record("notify::send", "Send a note to a person.", "to"),
    ]
    directory = Directory(settings=settings, engine=PeerEngine(catalog))
    lexical_only(directory)
    answer = ids(await search(directory, "send the billing customer a reminder message"))
    assert set(answer[:2]) == {"billing::invoice-create", "billing::customer-get"}
    assert answer.index("notify::send") < answer.index("reports::reminder-list")


async def test_padding_fills_a_short_selection_with_low_candidates(
        directory: Directory, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the selection leaves of the lanes and tails fills the budget graded `low`
    (`select.padding`); a refused capability stays empty."""
    lexical_only(directory)
    full = ids(await search(directory, "send an email message"))
    assert len(full) > 1
    original = service_module.select_batch
    monkeypatch.setattr(service_module, "select_batch",
                        lambda lanes, **kwargs: original(lanes, **kwargs)[:1])
    response = await search(directory, "send an email message")
    functions = [f for w in response["workers"] for f in w["functions"]]
    assert [f["function_id"] for f in functions][0] == full[0]
    assert sorted(f["function_id"] for f in functions) == sorted(full)
    assert all(f["confidence"] == "low" for f in functions if f["function_id"] != full[0])
    assert ids(await search(directory, "order a pizza")) == []


async def test_a_selected_id_without_a_lanes_confidence_is_low(
        directory: Directory, monkeypatch: pytest.MonkeyPatch) -> None:
    """An id no graded lane holds (the kept tail of a need whose own lane was emptied,
    `needs.answered_needs`) is graded `low`, never `high` by default."""
    lexical_only(directory)
    monkeypatch.setattr(service_module, "id_confidence", lambda lanes, tails, levels: {})
    response = await search(directory, "send an email message")
    levels = {f["confidence"] for w in response["workers"] for f in w["functions"]}
    assert response["workers"] and levels == {"low"}
async def test_the_static_lane_fills_an_empty_lane_for_a_request_that_carries_a_value(
        directory: Directory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No word of "is it raining in Oslo" is in the catalog, so BM25 and its single-term fallback
    find nothing; with the static lane its static ranking becomes the lane, graded `low` when
    the best static cosine reaches `STATIC_VALUE_COSINE` (lowered here: this tiny catalog's
    cosines are small). Without a value ("is it raining out there") the lane stays empty."""
    from iii_directory.search.ranking import confidence
    from iii_directory.search.static_lane import compiled_kernels

    if not compiled_kernels():
        pytest.skip("the static lane's kernels are not compiled")
    monkeypatch.setattr(confidence, "STATIC_VALUE_COSINE", 0.3)
    directory.service(SearchService).static.enabled = True
    response = await search(directory, "is it raining in Oslo")
    assert ids(response)[0] == "weather::forecast"
    assert {f["confidence"] for w in response["workers"] for f in w["functions"]} == {"low"}
    assert ids(await search(directory, "is it raining out there")) == []
    monkeypatch.setattr(confidence, "STATIC_VALUE_COSINE", 0.9)
    assert ids(await search(directory, "is it raining in Oslo")) == []
