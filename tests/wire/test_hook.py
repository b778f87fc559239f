"""The discovery hint through the engine protocol: `directory::pre-generate` and
`directory::hint-preview` invoked over the wire, the hook fired by a harness stand-in with
realistic generate payloads, and the `inject_hint` binding following live configuration
changes (search.md §12, protocol.md §11)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.port import EngineCallError
from iii_directory.hints.hint_text import render_block

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]

HOOK = "harness::hook::pre-generate"
PRE = "directory::pre-generate"
SEARCH = "directory::search_functions"
BINDING_CONFIG = {"priority": 100, "timeout_ms": 5000, "on_error": "fail_open"}


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The shared settings, with `inject_hint` taken from an indirect parameter (default off)."""
    return settings.model_copy(update={"inject_hint": bool(getattr(request, "param", False))})


def harness_stand_in(wire: Any) -> None:
    """The harness worker: provides the pre-generate hook trigger type."""
    wire.engine.add_trigger_type(HOOK, description="Pre-generate hook", worker_name="harness")


def hook_bindings(wire: Any) -> list[Any]:
    return [b for b in wire.engine.bindings_of(HOOK, active_only=True) if b.function_id == PRE]


async def set_inject_hint(wire: Any, value: bool) -> None:
    """Flip `inject_hint` through the configuration worker, keeping every other field."""
    current = wire.directory.settings.model_dump(mode="json")
    await wire.engine.set_config({**current, "inject_hint": value})


def tool(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": {}, "additionalProperties": True}}


TOOLS = [
    tool(SEARCH, "Find the functions to call for unmet external capabilities."),
    tool("engine::functions::info", "Fetch function contracts."),
    tool("engine::functions::list", "List functions."),
    tool("directory::skills::get", "Read one skill document."),
    tool("web::fetch", "Fetch a web page."),
    tool("resend::send_email", "Send an email through Resend."),
    tool("agent_trigger", "Call any function by id."),
]


def generate_request(*, session: str = "sess-7f3", turn: str = "turn-1", step: int = 0,
                     messages: list[Any] | None = None, expose: str | None = None,
                     generation: int = 4) -> dict[str, Any]:
    generate: dict[str, Any] = {
        "system_prompt": "You are the iii agent. Be concise.",
        "messages": messages if messages is not None else [
            {"role": "user", "content": [{"type": "text", "text": "Send Ana the headlines of lemonde.fr"}],
             "timestamp": 1_700_000_000_000},
        ],
        "functions_generation": generation,
        "tools": TOOLS,
    }
    if expose is not None:
        generate["expose"] = expose
    return {"session_id": session, "turn_id": turn, "step": step, "depth": 0, "generate": generate}


def reason(response: dict[str, Any]) -> str | None:
    return response["annotations"]["directory"]["data"].get("reason")


async def test_pre_generate_over_the_wire(wire: Any) -> None:
    response = await wire.call(PRE, generate_request(expose="native", generation=9))
    assert response["decision"] == "continue"
    [message] = response["mutations"]["append_messages"]
    assert message["role"] == "user"
    assert message["content"] == [{"type": "text", "text": render_block(9, "native")}]
    assert isinstance(message["timestamp"], int)
    assert response["annotations"]["directory"] == {
        "type": "console.transcript", "version": 1, "summary": "directory · hint injected",
        "data": {"outcome": "hint_injected", "allowed_functions": len(TOOLS), "functions_generation": 9},
    }
    dumped = json.dumps(response["annotations"])
    for secret in ("sess-7f3", "turn-1", "lemonde", "You are the iii agent", "web::fetch"):
        assert secret not in dumped


async def test_hint_preview_over_the_wire(wire: Any) -> None:
    preview = await wire.call("directory::hint-preview", {})
    assert preview == {"agent_trigger": render_block(0, "agent_trigger"), "native": render_block(0, "native")}


async def test_registration_metadata(wire: Any) -> None:
    for function_id in (PRE, "directory::hint-preview"):
        entry = wire.engine.function(function_id)
        assert entry is not None
        assert entry.metadata == {"internal": True, "trace_hidden": True}


async def test_bad_payload_is_a_clear_error(wire: Any) -> None:
    with pytest.raises(EngineCallError) as excinfo:
        await wire.call(PRE, ["not", "an", "object"])
    assert excinfo.value.code == "invocation_failed"
    assert "expected a JSON object" in excinfo.value.message


async def test_malformed_generate_still_continues_over_the_wire(wire: Any) -> None:
    body = generate_request()
    body["generate"]["messages"] = "a transcript that is not a list"
    body["generate"]["tools"] = [None, 3, *TOOLS]
    response = await wire.call(PRE, body)
    assert response["decision"] == "continue"
    assert response["annotations"]["directory"]["data"]["allowed_functions"] == len(TOOLS)


async def test_no_binding_while_inject_hint_is_off(wire: Any) -> None:
    harness_stand_in(wire)
    assert wire.directory.settings.inject_hint is False
    assert not [b for b in wire.engine.bindings_of(HOOK) if b.function_id == PRE]


@pytest.mark.parametrize("settings", [True], indirect=True)
async def test_bound_at_boot_and_fired_through_a_turn(wire: Any, settings: Settings) -> None:
    assert settings.inject_hint is True
    harness_stand_in(wire)
    await wire.engine.wait_for(lambda: hook_bindings(wire))
    [binding] = hook_bindings(wire)
    assert binding.config == BINDING_CONFIG

    async def fire(body: dict[str, Any]) -> dict[str, Any]:
        [outcome] = await wire.engine.fire_trigger(HOOK, body)
        assert not isinstance(outcome, Exception), outcome
        return outcome

    user = {"role": "user", "content": [{"type": "text", "text": "Send Ana the headlines of lemonde.fr"}]}
    first = await fire(generate_request(step=0, messages=[user]))
    assert reason(first) is None
    assert first["mutations"]["append_messages"][0]["content"][0]["text"] == render_block(4, "agent_trigger")
    # the harness replays step 0 (e.g. after a provider retry): the hint is sent again
    assert reason(await fire(generate_request(step=0, messages=[user]))) is None
    searched = [
        user,
        {"role": "assistant", "content": [{"type": "text", "text": "Searching."}],
         "function_calls": [{"function_id": SEARCH, "payload": {"capabilities": ["fetch a web page"]}}]},
        {"role": "function_result", "function_id": SEARCH,
         "content": [{"type": "text", "text": '{"workers": [{"namespace": "web"}]}'}]},
    ]
    assert reason(await fire(generate_request(step=1, messages=searched))) == "already_searched"
    # a later step of the same turn with nothing that blocks earlier gates: once per turn
    assert reason(await fire(generate_request(step=2, messages=[user]))) == "hint_already_sent"
    operating = [*searched, {"role": "function_result", "function_id": "web::fetch",
                             "content": [{"type": "text", "text": "<html>…</html>"}]}]
    assert reason(await fire(generate_request(step=3, messages=operating))) == "already_searched"
    # the next user turn re-arms
    follow_up = [*operating, {"role": "user", "content": [{"type": "text", "text": "Now book a table."}]}]
    assert reason(await fire(generate_request(turn="turn-2", step=4, messages=follow_up))) is None
    fetched = [*follow_up, {"role": "function_result", "function_id": "web::fetch",
                            "content": [{"type": "text", "text": "{}"}]}]
    assert reason(await fire(generate_request(turn="turn-2", step=5, messages=fetched))) == "already_operating"
    guided = [{"role": "user", "content": [{"type": "text", "text": "Use resend::send_email to mail Ana."}]}]
    assert reason(await fire(generate_request(turn="turn-3", messages=guided))) == "task_guided"


async def test_live_config_change_binds_and_unbinds(wire: Any) -> None:
    harness_stand_in(wire)
    assert not hook_bindings(wire)

    await set_inject_hint(wire, True)
    await wire.engine.wait_for(lambda: hook_bindings(wire))
    assert wire.directory.settings.inject_hint is True
    [binding] = hook_bindings(wire)
    assert binding.config == BINDING_CONFIG
    [outcome] = await wire.engine.fire_trigger(HOOK, generate_request(session="live-1"))
    assert reason(outcome) is None

    await set_inject_hint(wire, False)
    await wire.engine.wait_for(lambda: not hook_bindings(wire))
    assert wire.directory.settings.inject_hint is False
    assert await wire.engine.fire_trigger(HOOK, generate_request(session="live-2")) == []

    await set_inject_hint(wire, True)
    await wire.engine.wait_for(lambda: hook_bindings(wire))
    assert len(hook_bindings(wire)) == 1


async def test_hint_min_workers_hot_applies(wire: Any) -> None:
    current = wire.directory.settings.model_dump(mode="json")
    await wire.engine.set_config({**current, "hint_min_workers": 5})
    await wire.engine.wait_for(lambda: wire.directory.settings.hint_min_workers == 5)
    assert reason(await wire.call(PRE, generate_request(session="narrow"))) == "narrow_surface"
    await wire.engine.set_config({**current, "hint_min_workers": 0})
    await wire.engine.wait_for(lambda: wire.directory.settings.hint_min_workers == 0)
    assert reason(await wire.call(PRE, generate_request(session="wide"))) is None
