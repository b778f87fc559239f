"""Malformed generate payloads never fail the generation: the hook answers `continue`, either
injecting or skipping with a reason, and never raises."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.hints.hook import HintLedger, decide

from .payloads import SEARCH, WIDE_TOOLS, payload, tool, user

PRE = "directory::pre-generate"
REASONS = {"search_unavailable", "already_searched", "narrow_surface", "already_operating", "task_guided",
           "hint_already_sent"}


def assert_well_formed(response: dict[str, Any]) -> None:
    assert response["decision"] == "continue"
    data = response["annotations"]["directory"]["data"]
    if data["outcome"] == "hint_injected":
        assert "reason" not in data
        assert len(response["mutations"]["append_messages"]) == 1
    else:
        assert data["outcome"] == "skipped" and data["reason"] in REASONS
        assert "mutations" not in response
    json.dumps(response)


def reason_of(response: dict[str, Any]) -> str | None:
    return response["annotations"]["directory"]["data"].get("reason")


def with_generate(**fields: Any) -> dict[str, Any]:
    body = payload()
    body["generate"].update(fields)
    return body


MALFORMED: list[tuple[str, Any, str | None]] = [
    # id, request body, expected reason (None = injected)
    ("null_body", None, "search_unavailable"),
    ("empty_body", {}, "search_unavailable"),
    ("generate_missing", {"session_id": "s", "turn_id": "t", "step": 0, "depth": 0}, "search_unavailable"),
    ("generate_is_a_string", {**payload(), "generate": "oops"}, "search_unavailable"),
    ("generate_null", {**payload(), "generate": None}, "search_unavailable"),
    ("tools_is_an_object", with_generate(tools={"name": SEARCH}), "search_unavailable"),
    ("tools_items_junk", with_generate(tools=[1, "x", None, [SEARCH], {"name": 3}]), "search_unavailable"),
    ("tools_junk_around_real_ones",
     with_generate(tools=[None, tool(SEARCH), 5, tool("web::fetch"), {"name": None}, tool("mail::send")]), None),
    ("tool_without_description_or_parameters",
     with_generate(tools=[{"name": SEARCH}, {"name": "web::fetch"}, {"name": "mail::send"}]), None),
    ("messages_missing", {**payload(), "generate": {"tools": [tool(n) for n in WIDE_TOOLS]}}, None),
    ("messages_is_a_string", with_generate(messages="call web::fetch"), None),
    ("messages_null", with_generate(messages=None), None),
    ("messages_items_not_objects", with_generate(messages=[1, "user", None, [], True, 2.5]), None),
    ("role_and_content_null", with_generate(messages=[{"role": None, "content": None}]), None),
    ("content_string_guides", with_generate(messages=[{"role": "user", "content": "use mail::send"}]),
     "task_guided"),
    ("content_single_block_object",
     with_generate(messages=[{"role": "user", "content": {"type": "text", "text": "use mail::send"}}]),
     "task_guided"),
    ("content_items_junk",
     with_generate(messages=[{"role": "user", "content": [None, 3, {"type": "text", "text": None},
                                                          {"type": "text"}, {"text": "mail::send"}]}]), None),
    ("function_result_with_non_string_id",
     with_generate(messages=[user("x"), {"role": "function_result", "function_id": 12}]), None),
    ("function_result_null_id",
     with_generate(messages=[user("x"), {"role": "function_result", "function_id": None}]), None),
    ("numbers_of_the_wrong_type",
     {**payload(), "step": "3", "depth": -1, "generate": {**payload()["generate"], "functions_generation": None}},
     None),
    ("negative_and_fractional_numbers",
     {**payload(), "step": -5, "depth": 1.5, "generate": {**payload()["generate"], "functions_generation": -1}},
     None),
    ("ids_of_the_wrong_type", {**payload(), "session_id": 5, "turn_id": ["t"]}, None),
    ("system_prompt_not_a_string", with_generate(system_prompt={"x": 1}), None),
]


@pytest.mark.parametrize(("body", "expected"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
async def test_malformed_payloads_continue(directory: Directory, body: Any, expected: str | None) -> None:
    response = await directory.invoke(PRE, body)
    assert_well_formed(response)
    assert reason_of(response) == expected


async def test_counts_of_the_wrong_type_read_as_zero(directory: Directory) -> None:
    body = with_generate(functions_generation="12")
    response = await directory.invoke(PRE, body)
    assert response["annotations"]["directory"]["data"]["functions_generation"] == 0
    assert "functions_generation=0>" in response["mutations"]["append_messages"][0]["content"][0]["text"]


async def test_allowed_functions_counts_callable_entries(directory: Directory) -> None:
    body = with_generate(tools=[tool(SEARCH), None, {"name": 1}, tool("web::fetch"), tool("mail::send")])
    response = await directory.invoke(PRE, body)
    assert response["annotations"]["directory"]["data"]["allowed_functions"] == 3


async def test_huge_transcript_is_handled(directory: Directory) -> None:
    filler = "lorem ipsum dolor sit amet " * 400
    messages: list[Any] = [user("start " + filler)]
    for index in range(5_000):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"{index} {filler}"}]})
        messages.append({"role": "function_result", "function_id": "engine::functions::info",
                         "content": [{"type": "text", "text": "a::b " * 50}]})
    messages.append({"role": "assistant", "content": "x" * 5_000_000})
    response = await directory.invoke(PRE, with_generate(messages=messages))
    assert_well_formed(response)
    assert reason_of(response) is None


# --- property: random JSON anywhere in the payload --------------------------------------------

WORDS = ["a", " ", ":", "_", "-", "(", ")", "`", ".", "\n", "\t", "::", "web::fetch", "mail::send", SEARCH,
         "engine::functions::list", "user", "function_result", "text", "é"]
json_text = st.lists(st.sampled_from(WORDS), max_size=12).map("".join)
json_scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
                | json_text)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["role", "content", "type", "text", "function_id", "name", "x"]), children, max_size=4
    ),
    max_leaves=20,
)
text_blocks = st.fixed_dictionaries({"type": st.sampled_from(["text", "image", 3]),
                                     "text": json_scalars})
messages_st = st.lists(
    json_values | st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "function_result", None, 1]),
         "content": json_values | st.lists(text_blocks | json_values, max_size=4),
         "function_id": st.sampled_from([SEARCH, "web::fetch", "engine::functions::info", None, 7])},
    ),
    max_size=12,
)
tools_st = st.lists(
    json_values | st.builds(tool, st.sampled_from(list(WIDE_TOOLS) + ["x::y", "bare"])), max_size=6
)
generate_st = st.fixed_dictionaries(
    {},
    optional={
        "system_prompt": json_values,
        "messages": messages_st | json_values,
        "functions_generation": json_values,
        "tools": tools_st | json_values,
        "expose": st.sampled_from(["agent_trigger", "native", "other", "new-mode", None, 5]),
    },
)
request_st = st.fixed_dictionaries(
    {},
    optional={
        "session_id": st.sampled_from(["s1", "s2", ""]) | json_values,
        "turn_id": st.sampled_from(["t1", "t2"]) | json_values,
        "step": st.integers(0, 5) | json_values,
        "depth": json_values,
        "generate": generate_st | json_values,
    },
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=request_st)
def test_random_payloads_never_raise(body: dict[str, Any]) -> None:
    directory = Directory(Settings(hint_min_workers=1))

    async def run() -> dict[str, Any]:
        return await directory.invoke(PRE, body)

    assert_well_formed(anyio.run(run))


@settings(max_examples=200, deadline=None)
@given(tools=st.lists(json_scalars, max_size=6), messages=messages_st, min_workers=st.integers(0, 4))
def test_gate_functions_never_raise(tools: list[Any], messages: list[Any], min_workers: int) -> None:
    names = [name for name in tools if isinstance(name, str)]
    outcome = decide(ledger=HintLedger(), session_id="s", turn_id="t", step=0, functions_generation=0,
                     expose="native", tool_names=names, messages=messages, min_workers=min_workers)
    assert outcome.allowed_functions == len(names)
