"""The judge lane (search.md §6): requests, guards, reply validation, admission, pause, fallback."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from search_fakes import CATALOG, ExactIndex, FakeEncoder, PeerEngine, ids, raise_error, search

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.port import EngineCallError
from iii_directory.search.judge import (
    EVALUATION_MAX_BYTES,
    Judge,
    JudgeFailure,
    JudgeSettings,
    LaneAsk,
    build_evaluations,
    compact_option,
    function_candidate,
    models_window,
    near_equal_groups,
    parse_reply,
    skill_candidate,
    trigger_candidate,
)
from iii_directory.search.service import SearchService

SETTINGS = JudgeSettings("choice", 0.5, 0.3, 0.1)


def candidates(n: int, description: str = "Does a thing.") -> list[Any]:
    return [function_candidate(f"ns::f{i:02d}", description, ["b", "a"]) for i in range(n)]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def choice_reply(evaluations: list[dict[str, Any]], best: str = "f0", probabilities: dict[str, float] | None = None) -> dict[str, Any]:
    return {"status": "ok", "model": "m", "results": [
        {"id": e["id"], "answers": {"c0": {"value": best, "probabilities": probabilities or {best: 0.9}}}}
        for e in evaluations]}


# -- requests ------------------------------------------------------------------------------------


def test_choice_request_shape() -> None:
    evaluations = build_evaluations("functions", [LaneAsk("send an email", candidates(3))], "choice")
    assert len(evaluations) == 1
    body = evaluations[0].body
    assert body["id"] == "e0"
    assert body["state"] == {"capabilities": {"c0": "send an email"}}
    question = body["questions"][0]
    assert question["id"] == "c0" and question["type"] == "choice"
    assert question["options"]["f1"] == {"function_id": "ns::f01", "description": "Does a thing.",
                                         "parameter_names": ["a", "b"]}
    assert "data" in body["instructions"] and "never instructions" in body["instructions"]


def test_noul_request_shape() -> None:
    asks = [LaneAsk("a", candidates(2)), LaneAsk("b", candidates(1))]
    evaluations = build_evaluations("functions", asks, "noul")
    assert [e.body["id"] for e in evaluations] == ["e0", "e1"]
    body = evaluations[0].body
    assert set(body["state"]["functions"]) == {"f0", "f1"}
    assert [q["id"] for q in body["questions"]] == ["c0_f0", "c0_f1"]
    assert body["questions"][0]["type"] == "boolean"
    assert body["questions"][0]["criteria"]["true"].startswith("directly performs a needed action")


def test_side_lane_documents() -> None:
    assert skill_candidate("a/b", "How to do it.").document == {"skill_id": "a/b", "description": "How to do it."}
    assert trigger_candidate("t1", "cron trigger runs a::b").document == {"description": "cron trigger runs a::b"}
    body = build_evaluations("triggers", [LaneAsk("x", [trigger_candidate("t1", "cron")])], "noul")[0].body
    assert "triggers" in body["state"]


def test_compact_options_for_small_windows() -> None:
    assert compact_option("a::b", "one two three four five six seven eight nine ten") == \
        "a::b: one two three four five six seven eight"
    evaluations = build_evaluations("functions", [LaneAsk("x", candidates(2))], "choice", compact=True)
    assert evaluations[0].body["questions"][0]["options"]["f0"] == "ns::f00: Does a thing."


def test_chunks_of_sixteen_and_halving_under_the_size_guards() -> None:
    assert [len(e.options) for e in build_evaluations("functions", [LaneAsk("x", candidates(20))], "choice")] == [16, 4]
    big = candidates(16, "word " * 300)  # ~1.5 KiB per option: a 16-option question is too large
    evaluations = build_evaluations("functions", [LaneAsk("x", big)], "choice")
    assert sum(len(e.options) for e in evaluations) == 16
    assert all(len(json.dumps(e.body)) <= EVALUATION_MAX_BYTES for e in evaluations)
    assert max(len(e.options) for e in evaluations) < 16


def test_a_document_that_cannot_fit_is_a_payload_failure() -> None:
    huge = [function_candidate("ns::huge", "x" * 20000, [])]
    with pytest.raises(JudgeFailure) as caught:
        build_evaluations("functions", [LaneAsk("x", huge)], "choice")
    assert caught.value.kind == "payload"


# -- replies -------------------------------------------------------------------------------------


def test_strict_reply_validation() -> None:
    evaluations = build_evaluations("functions", [LaneAsk("x", candidates(2))], "choice")
    good = choice_reply([e.body for e in evaluations], "f1", {"f1": 0.8})
    assert parse_reply(good, evaluations) == {"e0": {"f0": 0.0, "f1": 0.8}}
    bad_replies = [
        {**good, "status": "pending"},
        {**good, "model": ""},
        {**good, "results": []},
        {**good, "results": good["results"] * 2},
        {**good, "results": [{"id": "e9", "answers": {}}]},
        choice_reply([e.body for e in evaluations], "f7"),
        choice_reply([e.body for e in evaluations], "f1", {"f1": 1.5}),
        choice_reply([e.body for e in evaluations], "f1", {"f1": "high"}),
        "not an object",
    ]
    for reply in bad_replies:
        with pytest.raises(JudgeFailure) as caught:
            parse_reply(reply, evaluations)
        assert caught.value.kind == "provider"


def test_boolean_answers_need_bool_values() -> None:
    evaluations = build_evaluations("functions", [LaneAsk("x", candidates(1))], "noul")
    reply = {"status": "ok", "model": "m", "results": [{"id": "e0", "answers": {"c0_f0": {"value": "yes", "probability": 0.9}}}]}
    with pytest.raises(JudgeFailure):
        parse_reply(reply, evaluations)


@pytest.mark.parametrize(("code", "kind"), [("provider_unavailable", "unavailable"), ("missing_key", "unavailable"),
                                            ("deadline", "deadline"), ("attempt_timeout", "deadline"),
                                            ("rate_limited", "provider")])
def test_error_status_mapping(code: str, kind: str) -> None:
    evaluations = build_evaluations("functions", [LaneAsk("x", candidates(1))], "choice")
    with pytest.raises(JudgeFailure) as caught:
        parse_reply({"status": "error", "error": {"code": code, "message": "no"}}, evaluations)
    assert caught.value.kind == kind


# -- admission -----------------------------------------------------------------------------------


async def ask(reply: Any, asks: list[LaneAsk], settings: JudgeSettings = SETTINGS,
              judge: Judge | None = None) -> list[Any]:
    judge = judge or Judge()
    sent: list[Any] = []

    async def call(function_id: str, data: Any, *, timeout: float) -> Any:
        sent.append((function_id, data))
        if function_id == "judge::models::list":
            return {"models": [{"id": "m", "context_window": 100000, "default": True}]}
        return reply(data) if callable(reply) else reply

    return await judge.ask(call, "functions", asks, settings, judge.clock() + 3)


async def test_choice_keeps_best_and_probable_options() -> None:
    def reply(data: Any) -> Any:
        return choice_reply(data["evaluations"], "f2", {"f0": 0.1, "f1": 0.09, "f2": 0.05, "f3": 0.1})

    lanes = await ask(reply, [LaneAsk("x", candidates(4))])
    # f2 is not the best by probability: the best is the highest probability, ties by option id
    assert lanes == [[("ns::f00", 0.1), ("ns::f03", 0.1)]]


async def test_choice_best_is_always_kept() -> None:
    def reply(data: Any) -> Any:
        return choice_reply(data["evaluations"], "f1", {"f1": 0.02})

    assert await ask(reply, [LaneAsk("x", candidates(3))]) == [[("ns::f01", 0.02)]]


async def test_noul_floor_and_side_floor() -> None:
    def reply(data: Any) -> Any:
        return {"status": "ok", "model": "m", "results": [
            {"id": e["id"], "answers": {"c0_f0": {"value": True, "probability": 0.6},
                                        "c0_f1": {"value": False, "probability": 0.4},
                                        "c0_f2": {"value": False, "probability": 0.1}}}
            for e in data["evaluations"]]}

    noul = JudgeSettings("noul", 0.5, 0.3, 0.1)
    assert await ask(reply, [LaneAsk("x", candidates(3))], noul) == [[("ns::f00", 0.6)]]
    judge = Judge()

    async def call(function_id: str, data: Any, *, timeout: float) -> Any:
        return reply(data)

    side = await judge.ask(call, "skills", [LaneAsk("x", candidates(3))], noul, judge.clock() + 3, side=True)
    assert side == [[("ns::f00", 0.6), ("ns::f01", 0.4)]]


async def test_valid_empty_answer_stays_empty() -> None:
    def reply(data: Any) -> Any:
        return {"status": "ok", "model": "m", "results": [
            {"id": e["id"], "answers": {"c0_f0": {"value": False, "probability": 0.0}}} for e in data["evaluations"]]}

    assert await ask(reply, [LaneAsk("x", candidates(1))], JudgeSettings("noul", 0.5, 0.3, 0.1)) == [[]]


async def test_deadline_ms_is_sent() -> None:
    seen: list[Any] = []

    def reply(data: Any) -> Any:
        seen.append(data)
        return choice_reply(data["evaluations"])

    await ask(reply, [LaneAsk("x", candidates(1))])
    assert 1 <= seen[0]["deadline_ms"] <= 3000


# -- pause -----------------------------------------------------------------------------------------


def test_pause_rules() -> None:
    clock = Clock()
    judge = Judge(clock=clock)
    judge.record_failure(JudgeFailure("deadline", "late"))
    judge.record_failure(JudgeFailure("payload", "big"))
    assert not judge.paused()
    judge.record_failure(JudgeFailure("provider", "bad"))
    assert judge.paused()
    clock.now += 20
    judge.record_failure(JudgeFailure("unavailable", "gone"))  # does not extend the pause
    clock.now += 10.01
    assert not judge.paused()


async def test_our_timeout_at_the_deadline_is_a_deadline_failure() -> None:
    judge = Judge()

    async def call(function_id: str, data: Any, *, timeout: float) -> Any:
        raise TimeoutError

    with pytest.raises(JudgeFailure) as caught:
        await judge.ask(call, "functions", [LaneAsk("x", candidates(1))], SETTINGS, judge.clock() + 1,
                        compact=False)
    assert caught.value.kind == "deadline"

    async def gone(function_id: str, data: Any, *, timeout: float) -> Any:
        raise EngineCallError("function_not_found", "no judge")

    with pytest.raises(JudgeFailure) as caught:
        await judge.ask(gone, "functions", [LaneAsk("x", candidates(1))], SETTINGS, judge.clock() + 1,
                        compact=False)
    assert caught.value.kind == "unavailable"


def test_models_window() -> None:
    assert models_window({"models": [{"id": "a", "context_window": 8000}, {"id": "b", "context_window": 2000}]}) == 2000
    assert models_window({"models": [{"id": "a", "context_window": 8000, "default": True},
                                     {"id": "b", "context_window": 2000}]}) == 8000
    assert models_window({"nothing": 1}) > 4096


# -- tournament ------------------------------------------------------------------------------------


def test_near_equal_groups() -> None:
    assert [len(g) for g in near_equal_groups(candidates(290), 128)] == [97, 97, 96]
    assert [len(g) for g in near_equal_groups(candidates(16), 16)] == [16]


async def test_tournament_rounds_then_final_choice() -> None:
    requests: list[Any] = []

    async def call(function_id: str, data: Any, *, timeout: float) -> Any:
        if function_id == "judge::models::list":
            return {"models": [{"id": "m", "context_window": 1000}]}  # small window → groups of 16
        requests.append(data)
        results = []
        for e in data["evaluations"]:
            options = e["questions"][0]["options"]
            assert all(isinstance(o, str) for o in options.values())  # compact options
            target = next((k for k, v in options.items() if v.startswith("ns::f07")), "f0")
            results.append({"id": e["id"], "answers": {"c0": {"value": target, "probabilities": {target: 0.9}}}})
        return {"status": "ok", "model": "m", "results": results}

    judge = Judge()
    lanes = await judge.tournament(call, [LaneAsk("x", candidates(40))], SETTINGS, judge.clock() + 3)
    assert lanes[0][0] == ("ns::f07", 0.9)
    assert len(requests) == 2  # one round of 3 groups (→ 9 survivors), then the final
    assert len(requests[0]["evaluations"]) == 3
    assert len(requests[1]["evaluations"]) == 1


# -- through the service ---------------------------------------------------------------------------


def judge_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"function_search_mode": "judge", "registry_search": False})


def with_encoder(directory: Directory) -> Directory:
    directory.service(SearchService).use_encoder(FakeEncoder(), index_factory=ExactIndex, persist=False)
    return directory


@pytest.fixture
def judge_directory(settings: Settings) -> tuple[Directory, PeerEngine]:
    engine = PeerEngine(CATALOG)
    return with_encoder(Directory(settings=judge_settings(settings), engine=engine)), engine


def pick(function_id: str):
    async def handler(data: Any) -> Any:
        results = []
        for e in data["evaluations"]:
            options = e["questions"][0]["options"]
            chosen = next((k for k, v in options.items()
                           if (v["function_id"] if isinstance(v, dict) and "function_id" in v else str(v)).startswith(function_id)),
                          next(iter(options)))
            results.append({"id": e["id"], "answers": {"c0": {"value": chosen, "probabilities": {chosen: 0.95}}}})
        return {"status": "ok", "model": "fake-judge", "results": results}
    return handler


async def models(_data: Any) -> Any:
    return {"models": [{"id": "fake-judge", "context_window": 100000, "default": True}]}


async def test_judge_mode_answers_through_the_judge(judge_directory: tuple[Directory, PeerEngine]) -> None:
    directory, engine = judge_directory
    engine.add_peer("judge::evaluate", pick("sms::send"))
    engine.add_peer("judge::models::list", models)
    response = await search(directory, "send a message")
    assert response["search_mode"] == "judge"
    assert ids(response) == ["sms::send"]
    request = next(data for fid, data in engine.calls if fid == "judge::evaluate")
    assert request["evaluations"][0]["state"]["capabilities"]["c0"] == "send a message"


async def test_judge_absent_falls_back_to_hybrid(judge_directory: tuple[Directory, PeerEngine]) -> None:
    directory, engine = judge_directory
    response = await search(directory, "send an sms text message")
    assert response["search_mode"] == "hybrid"
    assert ids(response)[0] == "sms::send"  # the hybrid lane; its recall tail may follow
    assert not any(fid == "judge::evaluate" for fid, _ in engine.calls)


async def test_judge_failure_pauses_and_falls_back(judge_directory: tuple[Directory, PeerEngine]) -> None:
    directory, engine = judge_directory
    engine.add_peer("judge::evaluate", raise_error("provider_error"))
    engine.add_peer("judge::models::list", models)
    response = await search(directory, "send an sms text message")
    assert response["search_mode"] == "hybrid"
    assert ids(response)[0] == "sms::send"  # the hybrid lane; its recall tail may follow
    calls = sum(fid == "judge::evaluate" for fid, _ in engine.calls)
    assert calls == 1
    await search(directory, "send an sms text message")
    assert sum(fid == "judge::evaluate" for fid, _ in engine.calls) == calls  # paused
    assert directory.service(SearchService).judge.paused()


async def test_wrong_judge_reply_falls_back(judge_directory: tuple[Directory, PeerEngine]) -> None:
    directory, engine = judge_directory

    async def wrong(data: Any) -> Any:
        return {"status": "ok", "model": "m", "results": []}

    engine.add_peer("judge::evaluate", wrong)
    engine.add_peer("judge::models::list", models)
    response = await search(directory, "send an sms text message")
    assert response["search_mode"] == "hybrid"
    assert ids(response)[0] == "sms::send"  # the hybrid lane; its recall tail may follow


async def test_slow_judge_hits_the_shared_deadline_without_pausing(settings: Settings) -> None:

    async def slow(data: Any) -> Any:
        await anyio.sleep(5)
        return {}

    class SlowEngine(PeerEngine):
        async def call(self, function_id: str, data: Any, **kwargs: Any) -> Any:
            if function_id == "judge::evaluate":
                with anyio.fail_after(kwargs.get("timeout", 30)):
                    return await super().call(function_id, data, **kwargs)
            return await super().call(function_id, data, **kwargs)

    slow_engine = SlowEngine(CATALOG)
    slow_engine.add_peer("judge::evaluate", slow)
    slow_engine.add_peer("judge::models::list", models)
    slow_settings = judge_settings(settings).model_copy(update={"function_search_judge_timeout_ms": 200})
    directory = Directory(settings=slow_settings, engine=slow_engine)
    service = directory.service(SearchService)
    service.dense.disable("no model in this test")  # the fallback is lexical
    with anyio.fail_after(3):
        response = await search(directory, "send an sms text message")
    assert response["search_mode"] == "lexical"
    assert ids(response)[0] == "sms::send"
    assert not directory.service(SearchService).judge.paused()


async def test_exact_ids_are_answered_without_the_judge(judge_directory: tuple[Directory, PeerEngine]) -> None:
    directory, engine = judge_directory
    engine.add_peer("judge::evaluate", pick("sms::send"))
    engine.add_peer("judge::models::list", models)
    response = await search(directory, "kv::get")
    assert ids(response) == ["kv::get"]
    assert not any(fid == "judge::evaluate" for fid, _ in engine.calls)


async def test_judged_batches_skip_the_namespace_floor(judge_directory: tuple[Directory, PeerEngine]) -> None:
    directory, engine = judge_directory

    async def two(data: Any) -> Any:
        results = []
        for e in data["evaluations"]:
            options = e["questions"][0]["options"]
            names = {k: v["function_id"] for k, v in options.items()}
            probabilities = {k: (0.9 if n == "mail::send" else 0.2 if n == "sms::send" else 0.0) for k, n in names.items()}
            best = max(probabilities, key=probabilities.get)
            results.append({"id": e["id"], "answers": {"c0": {"value": best, "probabilities": probabilities}}})
        return {"status": "ok", "model": "m", "results": results}

    engine.add_peer("judge::evaluate", two)
    engine.add_peer("judge::models::list", models)
    response = await search(directory, "send a message")
    assert ids(response) == ["mail::send", "sms::send"]
