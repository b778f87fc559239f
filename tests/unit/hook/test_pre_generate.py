"""`directory::pre-generate` through `Directory.invoke`: the response shape, the injected
tail message, the coarse annotations, settings, the published schemas and the binding."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.functions.hook import HOOK_BINDING_CONFIG, HintService
from iii_directory.hints.hint_text import render_block

from .payloads import SEARCH, WIDE_TOOLS, assistant, payload, result, user

PRE = "directory::pre-generate"



async def test_injects_one_ephemeral_tail_message(directory: Directory) -> None:
    before = int(time.time() * 1000)
    response = await directory.invoke(PRE, payload(functions_generation=12))
    after = int(time.time() * 1000)
    assert response["decision"] == "continue"
    messages = response["mutations"]["append_messages"]
    assert len(messages) == 1
    message = messages[0]
    assert set(message) == {"role", "content", "timestamp"}
    assert message["role"] == "user"
    assert message["content"] == [{"type": "text", "text": render_block(12, "agent_trigger")}]
    assert isinstance(message["timestamp"], int) and before <= message["timestamp"] <= after
    assert response["annotations"] == {
        "directory": {
            "type": "console.transcript",
            "version": 1,
            "summary": "directory · hint injected",
            "data": {"outcome": "hint_injected", "allowed_functions": 4, "functions_generation": 12},
        }
    }
    assert set(response) == {"decision", "mutations", "annotations"}


@pytest.mark.parametrize(("expose", "mode"), [
    (None, "agent_trigger"),
    ("agent_trigger", "agent_trigger"),
    ("native", "native"),
    ("mcp", "native"),
    ("", "native"),
    (7, "native"),
])
async def test_instruction_follows_expose(directory: Directory, expose: Any, mode: str) -> None:
    body = payload(functions_generation=3)
    if expose is not None:
        body["generate"]["expose"] = expose
    response = await directory.invoke(PRE, body)
    text = response["mutations"]["append_messages"][0]["content"][0]["text"]
    assert text == render_block(3, mode)  # type: ignore[arg-type]


async def test_explicit_null_expose_means_agent_trigger(directory: Directory) -> None:
    body = payload(functions_generation=3)
    body["generate"]["expose"] = None
    response = await directory.invoke(PRE, body)
    assert response["mutations"]["append_messages"][0]["content"][0]["text"] == render_block(3, "agent_trigger")


async def test_skip_omits_mutations_and_names_the_reason(directory: Directory) -> None:
    response = await directory.invoke(PRE, payload(tools=("web::fetch", "mail::send"), functions_generation=2))
    assert response == {
        "decision": "continue",
        "annotations": {
            "directory": {
                "type": "console.transcript",
                "version": 1,
                "summary": "directory · skipped",
                "data": {"outcome": "skipped", "reason": "search_unavailable",
                         "allowed_functions": 2, "functions_generation": 2},
            }
        },
    }


async def test_once_per_turn_through_the_handler(directory: Directory) -> None:
    def reason(response: dict[str, Any]) -> str | None:
        return response["annotations"]["directory"]["data"].get("reason")

    assert reason(await directory.invoke(PRE, payload(step=0))) is None
    assert reason(await directory.invoke(PRE, payload(step=0))) is None  # replay re-sends
    assert reason(await directory.invoke(PRE, payload(step=1))) == "hint_already_sent"
    assert reason(await directory.invoke(PRE, payload(step=1, session_id="other"))) is None
    assert reason(await directory.invoke(PRE, payload(step=2, turn_id="turn-2"))) is None


async def test_ledger_survives_settings_reload(directory: Directory) -> None:
    await directory.invoke(PRE, payload(step=0))
    directory.apply_settings(directory.settings.model_copy(update={"hint_min_workers": 1}))
    response = await directory.invoke(PRE, payload(step=1))
    assert response["annotations"]["directory"]["data"]["reason"] == "hint_already_sent"
    assert len(directory.service(HintService).ledger) == 1


@pytest.mark.parametrize(("min_workers", "expected"), [(0, None), (2, None), (3, "narrow_surface")])
async def test_hint_min_workers_is_read_live(directory: Directory, min_workers: int, expected: str | None) -> None:
    directory.apply_settings(directory.settings.model_copy(update={"hint_min_workers": min_workers}))
    response = await directory.invoke(PRE, payload())
    assert response["annotations"]["directory"]["data"].get("reason") == expected


SECRET_WORDS = ("SECRET-SESSION-42", "TURN-SECRET-9", "PROMPT-SECRET", "USER-SECRET", "TOOL-SECRET")


@pytest.mark.parametrize("messages", [
    [user("USER-SECRET please plan")],
    [user("USER-SECRET"), result(SEARCH, "USER-SECRET result")],
    [user("USER-SECRET call mail::send"), assistant("USER-SECRET")],
])
async def test_nothing_but_coarse_fields_leaves_the_hook(directory: Directory, messages: list[Any]) -> None:
    body = payload(session_id="SECRET-SESSION-42", turn_id="TURN-SECRET-9", messages=messages,
                   system_prompt="PROMPT-SECRET")
    body["generate"]["tools"][1]["description"] = "TOOL-SECRET"
    body["generate"]["tools"][1]["parameters"] = {"properties": {"TOOL-SECRET": {}}}
    response = await directory.invoke(PRE, body)
    annotations = response["annotations"]
    assert set(annotations) == {"directory"}
    assert set(annotations["directory"]) == {"type", "version", "summary", "data"}
    data = annotations["directory"]["data"]
    assert set(data) <= {"outcome", "reason", "allowed_functions", "functions_generation"}
    assert all(isinstance(v, int) for k, v in data.items() if k in ("allowed_functions", "functions_generation"))
    dumped = json.dumps(response)
    for word in SECRET_WORDS:
        assert word not in dumped
    for tool in WIDE_TOOLS[1:]:
        assert tool not in json.dumps(annotations)


async def test_response_schema_published_from_the_models(directory: Directory) -> None:
    spec = directory.table.functions[PRE]
    assert dict(spec.metadata) == {"internal": True, "trace_hidden": True}
    assert spec.description == "Internal: inject the conditional search hint into one harness generation."
    request = spec.request_schema()
    assert request["required"] == ["depth", "generate", "session_id", "step", "turn_id"]
    generate = request["definitions"]["GeneratePayload"]
    assert set(generate["properties"]) == {"system_prompt", "messages", "functions_generation", "tools", "expose"}
    assert generate["required"] == ["functions_generation", "messages", "system_prompt", "tools"]
    assert request["definitions"]["ToolSchema"]["required"] == ["description", "name", "parameters"]
    assert request["properties"]["step"]["minimum"] == 0
    response = spec.response_schema()
    assert response is not None
    assert set(response["properties"]) == {"decision", "mutations", "annotations"}
    assert set(response["required"]) == {"decision", "annotations"}
    defs = response["definitions"]
    assert set(defs["DiscoveryTranscriptAnnotation"]["required"]) == {"type", "version", "summary", "data"}
    assert set(defs["DiscoveryPassV1"]["required"]) == {"outcome", "allowed_functions", "functions_generation"}
    assert defs["DiscoveryReason"]["enum"] == [
        "search_unavailable", "already_searched", "narrow_surface", "already_operating", "task_guided",
        "hint_already_sent",
    ]
    assert defs["DiscoveryOutcome"]["enum"] == ["hint_injected", "skipped"]
    assert defs["PreGenerateMutations"]["required"] == ["append_messages"]

    preview = directory.table.functions["directory::hint-preview"]
    assert dict(preview.metadata) == {"internal": True, "trace_hidden": True}
    preview_schema = preview.response_schema()
    assert preview_schema is not None and preview_schema["required"] == ["agent_trigger", "native"]


def test_binding_follows_inject_hint(directory: Directory) -> None:
    bindings = [b for b in directory.table.bindings if b.function_id == PRE]
    assert len(bindings) == 1
    binding = bindings[0]
    assert binding.trigger_type == "harness::hook::pre-generate"
    assert dict(binding.config(Settings())) == {"priority": 100, "timeout_ms": 5000, "on_error": "fail_open"}
    assert dict(HOOK_BINDING_CONFIG) == dict(binding.config(Settings()))
    assert binding.enabled(Settings()) is False
    assert binding.enabled(Settings(inject_hint=True)) is True
