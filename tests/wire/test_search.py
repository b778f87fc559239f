"""Function search through the engine protocol: the worker boots against the test engine,
snapshots the catalog, follows `engine::functions-available` pushes, and answers
`directory::search_functions` in lexical, hybrid and judge modes (search.md §1–§11)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from search_fakes import ExactIndex, FakeEncoder

from iii_directory.config import Settings
from iii_directory.port import EngineCallError
from iii_directory.search.service import SearchService
from iii_directory.testing.registry import MockRegistry

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]

SEARCH = "directory::search_functions"


def ids(response: dict[str, Any]) -> list[str]:
    return [f["function_id"] for w in response["workers"] for f in w["functions"]]


async def echo(data: Any) -> Any:
    return data


def add_peers(wire: Any) -> None:
    engine = wire.engine
    engine.add_function("weather::forecast", echo, description="Get the weather forecast for a city. Daily.",
                        request_format={"type": "object", "properties": {"city": {}, "days": {}}})
    engine.add_function("sms::send", echo, description="Send an SMS text message to a phone number.",
                        request_format={"type": "object", "properties": {"to": {}, "text": {}}})
    engine.add_function("sms::hook", echo, description="Receive SMS delivery reports.",
                        metadata={"internal": True})


async def eventually(wire: Any, capability: str, predicate: Callable[[dict[str, Any]], bool],
                     timeout: float = 10.0, **kwargs: Any) -> dict[str, Any]:
    """Search until `predicate(response)` holds (the catalog refresh is asynchronous)."""
    with anyio.fail_after(timeout):
        while True:
            response = await wire.call(SEARCH, {"capabilities": [capability]}, **kwargs)
            if predicate(response):
                return response
            await anyio.sleep(0.05)


async def set_mode(wire: Any, mode: str, **extra: Any) -> None:
    current = wire.directory.settings.model_dump(mode="json")
    await wire.engine.set_config({**current, "function_search_mode": mode, **extra})
    with anyio.fail_after(10):
        while wire.directory.settings.function_search_mode != mode:
            await anyio.sleep(0.02)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"registry_search": False})


async def test_boot_snapshot_serves_the_workers_own_functions(wire: Any) -> None:
    response = await wire.call(SEARCH, {"capabilities": ["download skills from the workers registry"]})
    assert response["search_mode"] == "lexical"
    assert "directory::skills::download_from_registry" in ids(response)
    assert isinstance(response["latency_ms"], float)
    assert "directory::search_functions" not in ids(response)


async def test_functions_available_push_refreshes_the_corpus(wire: Any) -> None:
    add_peers(wire)
    response = await eventually(wire, "send an sms text message", lambda r: "sms::send" in ids(r))
    assert ids(response)[0] == "sms::send"
    hidden = await wire.call(SEARCH, {"capabilities": ["receive sms delivery reports"]})
    assert "sms::hook" not in ids(hidden)
    wire.engine.remove_function("sms::send")
    await eventually(wire, "send an sms text message", lambda r: "sms::send" not in ids(r))


async def test_on_functions_change_over_the_wire(wire: Any) -> None:
    assert await wire.call("directory::on-functions-change", {"event": "functions_changed"}) == {"ok": True}
    bindings = wire.engine.bindings_of("engine::functions-available")
    assert any(b.function_id == "directory::on-functions-change" and b.config == {} for b in bindings)


async def test_request_errors_are_coded(wire: Any) -> None:
    with pytest.raises(EngineCallError) as caught:
        await wire.call(SEARCH, {"capabilities": []})
    assert (caught.value.code, caught.value.message) == ("invocation_failed", "provide at least one capability")
    with pytest.raises(EngineCallError) as caught:
        await wire.call(SEARCH, {"capabilities": ["send an sms", "  "]})
    assert caught.value.message == "capabilities must not be blank"
    with pytest.raises(EngineCallError) as caught:
        await wire.call(SEARCH, {"query": "send an sms"})
    assert caught.value.code == "invocation_failed"


async def test_session_memory_follows_the_baggage(wire: Any) -> None:
    add_peers(wire)
    baggage = "iii.session.id=console-1,iii.message.id=t_1"
    await eventually(wire, "weather forecast for a city", lambda r: "weather::forecast" in ids(r))
    first = await wire.call(SEARCH, {"capabilities": ["send an sms text message", "weather forecast for a city"]},
                            baggage=baggage)
    assert ids(first) == ["sms::send", "weather::forecast"]
    second = await wire.call(SEARCH, {"capabilities": ["send an sms text message", "list skills"]}, baggage=baggage)
    assert "sms::send" not in ids(second)
    assert "Already provided earlier in this session" in second["guidance"]


async def test_trigger_side_lane_lists_existing_bindings(wire: Any) -> None:
    response = await wire.call(SEARCH, {"capabilities": ["configuration change reload"]})
    triggers = response.get("triggers", [])
    assert any(t["trigger_type"] == "configuration" and t["function_id"] == "directory::on-config-change"
               for t in triggers)
    row = next(t for t in triggers if t["function_id"] == "directory::on-config-change")
    assert row["config"]["configuration_id"] == "iii-directory"


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
async def test_an_unanswerable_capability_gets_an_honest_empty_answer(wire: Any, mode: str) -> None:
    add_peers(wire)
    await eventually(wire, "send an sms text message", lambda r: "sms::send" in ids(r))
    if mode == "hybrid":
        wire.directory.service(SearchService).use_encoder(FakeEncoder(), index_factory=ExactIndex,
                                                          persist=False)
        await set_mode(wire, "hybrid")
        await eventually(wire, "send an sms text message", lambda r: r["search_mode"] == "hybrid")
    for capability in ("qzvx wrplkt hhgrk", "directory::search_functions", "engine::functions::list",
                       "summarise the text I pasted above", "simmer the onions gently until golden"):
        response = await wire.call(SEARCH, {"capabilities": [capability]})
        assert response["workers"] == [], capability
        assert response["guidance"].startswith("No functions matched these capabilities")
    served = await wire.call(SEARCH, {"capabilities": ["qzvx wrplkt", "send an sms text message"]})
    assert ids(served)[0] == "sms::send"


async def test_every_candidate_carries_its_confidence_over_the_wire(wire: Any) -> None:
    """Issue 31: a weak match comes back `low` with the guidance note instead of an empty
    answer; a confident one is `high` and first."""
    add_peers(wire)
    wire.directory.service(SearchService).static.enabled = False
    await eventually(wire, "send an sms text message", lambda r: "sms::send" in ids(r))
    response = await wire.call(SEARCH, {"capabilities": ["any forecast", "send an sms text message"]})
    levels = {f["function_id"]: f["confidence"] for w in response["workers"] for f in w["functions"]}
    assert levels["sms::send"] == "high" and levels["weather::forecast"] == "low"
    assert ids(response)[0] == "sms::send" and set(levels.values()) == {"high", "low"}
    assert 'Only low-confidence candidates for "any forecast"' in response["guidance"]
    nothing = await wire.call(SEARCH, {"capabilities": ["qzvx wrplkt hhgrk"]})
    assert nothing["workers"] == []



async def test_a_question_with_an_admitted_dense_ranking_gets_low_candidates_over_the_wire(
        wire: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31: a request that asks a question, with only an admitted dense ranking for
    evidence (no content term, no action), gets `low` candidates; the same words as a statement
    get nothing, unless the statement carries a value (a capitalised name: `carries_value`),
    which also earns `low`. The signals are fixed so the rule is what the test reads."""
    from iii_directory.search.ranking import answerability as a
    from iii_directory.search.ranking import confidence

    add_peers(wire)
    wire.directory.service(SearchService).static.enabled = False
    await eventually(wire, "send an sms text message", lambda r: "sms::send" in ids(r))
    weak = a.Signals(words=4, known_share=1.0, coverage=0.0, rare_matched=0.0, cosine=0.35,
                     margin=0.1, action=None, admitted=True)
    monkeypatch.setattr(confidence, "signals", lambda *args: weak)
    asked = await wire.call(SEARCH, {"capabilities": ["where is the forecast for Oslo"]})
    assert "weather::forecast" in ids(asked)
    assert {f["confidence"] for w in asked["workers"] for f in w["functions"]} == {"low"}
    told = await wire.call(SEARCH, {"capabilities": ["the forecast for our town"]})
    assert told["workers"] == []
    named = await wire.call(SEARCH, {"capabilities": ["the forecast for Oslo"]})
    assert "weather::forecast" in ids(named)
    assert {f["confidence"] for w in named["workers"] for f in w["functions"]} == {"low"}


async def test_hybrid_mode_over_the_wire(wire: Any) -> None:
    add_peers(wire)
    service = wire.directory.service(SearchService)
    service.use_encoder(FakeEncoder(synonyms={"rain": "weather", "outlook": "forecast"}),
                        index_factory=ExactIndex, persist=False)
    await set_mode(wire, "hybrid")
    response = await eventually(wire, "rain outlook", lambda r: r["search_mode"] == "hybrid"
                                and "weather::forecast" in ids(r))
    assert ids(response)[0] == "weather::forecast"


async def test_hybrid_fusion_reads_the_catalogs_extra_views(wire: Any) -> None:
    """The first learned lane queues the catalog's description and action views (ranking/views.py)
    for embedding; later calls rank with them."""
    add_peers(wire)
    service = wire.directory.service(SearchService)
    encoder = FakeEncoder(synonyms={"rain": "weather", "outlook": "forecast"})
    service.use_encoder(encoder, index_factory=ExactIndex, persist=False)
    await set_mode(wire, "hybrid")
    await eventually(wire, "rain outlook", lambda r: r["search_mode"] == "hybrid"
                     and "weather::forecast" in ids(r))
    with anyio.fail_after(10):
        while service.corpus.views.views is None:
            await wire.call(SEARCH, {"capabilities": ["rain outlook"]})
            await anyio.sleep(0.1)
    assert {"forecast weather", "send sms"} <= set(encoder.texts)  # action views
    assert "Send an SMS text message to a phone number." in encoder.texts  # a description view
    response = await wire.call(SEARCH, {"capabilities": ["rain outlook"]})
    assert response["search_mode"] == "hybrid" and ids(response)[0] == "weather::forecast"


async def test_hybrid_is_confident_in_a_middling_dense_head_only_when_a_worker_repeats(wire: Any) -> None:
    # FakeEncoder cosine of "alpha beta" with each of these documents: 0.316 (between 0.30 and
    # the confident 0.40), one document per worker: the §5.5 floor alone would admit the lane.
    for function_id, description in (("ant::fetch", "Alpha thing more."), ("bee::fetch", "Beta thing more."),
                                      ("cat::store", "Alpha other more.")):
        wire.engine.add_function(function_id, echo, description=description)
    service = wire.directory.service(SearchService)
    service.use_encoder(FakeEncoder(), index_factory=ExactIndex, persist=False)
    await set_mode(wire, "hybrid")
    await eventually(wire, "ant fetch thing", lambda r: r["search_mode"] == "hybrid"
                     and "ant::fetch" in ids(r))
    # not admitted: the lane is not confident, so its candidates come back `low` (issue 31;
    # before, an empty answer)
    scattered = await wire.call(SEARCH, {"capabilities": ["alpha beta"]})
    assert scattered["search_mode"] == "hybrid" and scattered["workers"]
    assert {f["confidence"] for w in scattered["workers"] for f in w["functions"]} == {"low"}
    assert 'Only low-confidence candidates for "alpha beta"' in scattered["guidance"]

    wire.engine.add_function("ant::store", echo, description="Alpha other more.")
    coherent = await eventually(wire, "alpha beta", lambda r: "ant::store" in ids(r))
    assert {f for f in ids(coherent)} >= {"ant::fetch", "ant::store"}
    assert coherent["workers"][0]["namespace"] == "ant"
    assert coherent["workers"][0]["functions"][0]["confidence"] == "high"


async def test_judge_mode_with_a_fake_judge(wire: Any) -> None:
    add_peers(wire)
    judge = wire.engine.install_judge()

    def choose(target: str) -> Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]:
        def answer(question: dict[str, Any], _evaluation: dict[str, Any]) -> dict[str, Any]:
            options = question.get("options") or {}
            for key, option in options.items():
                text = option.get("function_id", "") if isinstance(option, dict) else str(option)
                if text.startswith(target):
                    return {"value": key, "probabilities": {key: 0.97}}
            first = next(iter(options))
            return {"value": first, "probabilities": {first: 0.01}}
        return answer

    judge.answer = choose("sms::send")
    wire.directory.service(SearchService).dense.disable("judge only: no model in this test")
    await eventually(wire, "send an sms text message", lambda r: "sms::send" in ids(r))
    await set_mode(wire, "judge")
    response = await eventually(wire, "message my phone", lambda r: r["search_mode"] == "judge")
    assert ids(response)[0] == "sms::send"
    assert judge.calls  # the judge was asked through the engine
    # what the judge keeps it vouches for: `high` (issue 31)
    assert {f["confidence"] for w in response["workers"] for f in w["functions"]} == {"high"}


async def test_judge_answering_wrongly_falls_back_to_lexical(wire: Any) -> None:
    add_peers(wire)
    judge = wire.engine.install_judge()
    judge.reply = {"status": "ok", "model": "fake-judge", "results": [{"id": "nope", "answers": {}}]}
    await eventually(wire, "send an sms text message", lambda r: "sms::send" in ids(r))
    service = wire.directory.service(SearchService)
    service.dense.disable("no model in this test")  # the fallback is lexical
    await set_mode(wire, "judge")
    response = await wire.call(SEARCH, {"capabilities": ["send an sms text message"]})
    assert response["search_mode"] == "lexical"
    assert ids(response) == ["sms::send"]
    assert service.judge.paused()


async def test_slow_judge_hits_the_deadline(wire: Any) -> None:
    add_peers(wire)
    judge = wire.engine.install_judge()

    async def slow(data: Any) -> Any:
        await anyio.sleep(3)
        return {"status": "ok", "model": "fake-judge", "results": []}

    wire.engine.add_function("judge::evaluate", slow, worker_name="judge", description="Slow judge")
    await eventually(wire, "send an sms text message", lambda r: "sms::send" in ids(r))
    service = wire.directory.service(SearchService)
    service.dense.disable("no model in this test")  # the fallback is lexical
    await set_mode(wire, "judge", function_search_judge_timeout_ms=300)
    started = anyio.current_time()
    response = await wire.call(SEARCH, {"capabilities": ["send an sms text message"]})
    assert anyio.current_time() - started < 2.5
    assert response["search_mode"] == "lexical"
    assert ids(response) == ["sms::send"]
    assert not service.judge.paused()
    assert judge is not None


async def test_registry_lane_over_the_wire(wire: Any) -> None:
    with MockRegistry() as registry:
        registry.add_worker("resend", version="2.0.0", description="Transactional email sending.", functions=[
            {"name": "resend::send-email", "description": "Send a transactional email. HTML allowed.",
             "request_schema": {"type": "object", "properties": {"to": {}}}}])
        current = wire.directory.settings.model_dump(mode="json")
        await wire.engine.set_config({**current, "registry_search": True, "registry_url": registry.url})
        with anyio.fail_after(10):
            while wire.directory.settings.registry_url != registry.url:
                await anyio.sleep(0.02)
        response = await wire.call(SEARCH, {"capabilities": ["send a transactional email"]})
        assert response["installable"] == [{
            "name": "resend", "version": "2.0.0", "description": "Transactional email sending.",
            "functions": [{"function_id": "resend::send-email", "description": "Send a transactional email."}],
            "install": {"function": "compose::add", "payload": {"worker": "resend"}},
        }]


async def test_workers_appear_once_grouped_over_the_wire(wire: Any) -> None:
    """`workers` holds one entry per worker in first-seen order, rank order within (search.md
    §7.3; the seeds' "grouped by worker"): the round robin of a two-capability call ranks
    sms::send, weather::forecast, sms::schedule, and the response lists the SMS worker once
    with both functions, ahead of the weather worker."""
    add_peers(wire)
    wire.engine.add_function("sms::schedule", echo,
                             description="Schedule an SMS text message to a phone number for later.",
                             request_format={"type": "object", "properties": {"to": {}, "at": {}}})
    capabilities = ["send an sms text message to a phone number",
                    "get the weather forecast for a city"]
    with anyio.fail_after(10):
        while True:
            response = await wire.call(SEARCH, {"capabilities": capabilities})
            if "sms::schedule" in ids(response) and "weather::forecast" in ids(response):
                break
            await anyio.sleep(0.05)
    namespaces = [w["namespace"] for w in response["workers"]]
    assert namespaces[:2] == ["sms", "weather"]
    assert len(namespaces) == len(set(namespaces))
    assert ids(response)[:3] == ["sms::send", "sms::schedule", "weather::forecast"]
    for worker in response["workers"]:
        assert worker["functions"] and all(
            f["function_id"].startswith(worker["namespace"] + "::") and f["description"]
            for f in worker["functions"])
