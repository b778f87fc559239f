"""The published payload depth (`protocol.nesting`): the iterative depth test, and reading the
top-level members of a frame the JSON decoder refuses for its depth, so its invocation can be
answered (issue 36, item 1)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from iii_directory.protocol import frames as fr
from iii_directory.protocol.nesting import MAX_DATA_DEPTH, nests_deeper_than, too_deep_message, top_level_members


def nested(depth: int, leaf: Any = 1, opener: str = "[") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if opener == "[" else {"a": value}
    return value


def deep_text(depth: int, opener: str = "[") -> str:
    if opener == "[":
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize(("value", "depth"), [
    (1, 0), ("x", 0), (None, 0), ([], 1), ({}, 1), ({"a": [1, {"b": []}]}, 4),
    (nested(64), 64), (nested(64, opener="{"), 64), ([[], [[[]]], {}], 4),
])
def test_depth_is_counted_in_container_levels(value: Any, depth: int) -> None:
    assert not nests_deeper_than(value, depth)
    assert nests_deeper_than(value, depth - 1) == (depth > 0)


def test_depth_of_a_very_deep_value_needs_no_recursion() -> None:
    assert nests_deeper_than(nested(100_000), MAX_DATA_DEPTH)
    assert not nests_deeper_than([nested(60)] * 10_000, MAX_DATA_DEPTH)


@pytest.mark.parametrize("opener", ["[", "{"])
@pytest.mark.parametrize("depth", [1_000, 5_000, 200_000])
def test_members_before_and_after_the_deep_value_are_read(depth: int, opener: str) -> None:
    text = ('{"type":"invokefunction","function_id":"d::f","data":' + deep_text(depth, opener)
            + ',"invocation_id":"i-1","metadata":{"k":[1,2]}}')
    with pytest.raises(RecursionError):
        json.loads(text)
    assert top_level_members(text) == {"type": "invokefunction", "function_id": "d::f",
                                       "invocation_id": "i-1", "metadata": {"k": [1, 2]}}


def test_strings_with_commas_and_braces_do_not_fool_the_reader() -> None:
    tail = ',"note":"a,\\"invocation_id\\":\\"evil\\"}","invocation_id":"real"}'
    text = '{"type":"invokefunction","x":"{,[","data":' + deep_text(3_000) + tail
    members = top_level_members(text)
    assert members["invocation_id"] == "real"
    assert members["x"] == "{,["
    assert members["note"] == 'a,"invocation_id":"evil"}'


@pytest.mark.parametrize("text", ["[" * 5_000, '"x"', "", "{", '{"a"', '{"a":' + "[" * 5_000, "{1:2}"])
def test_no_object_or_no_members_reads_as_empty(text: str) -> None:
    assert isinstance(top_level_members(text), dict)
    assert "invocation_id" not in top_level_members(text)


def test_decode_names_the_head_of_a_too_deep_invocation() -> None:
    frame = '{"type":"invokefunction","invocation_id":"i-2","function_id":"d::f","data":' + deep_text(50_000) + "}"
    with pytest.raises(fr.FrameTooDeep) as info:
        fr.decode(frame)
    assert info.value.head == {"type": "invokefunction", "invocation_id": "i-2", "function_id": "d::f"}
    with pytest.raises(fr.FrameTooDeep):
        fr.decode(frame.encode())


def test_the_message_is_a_request_shape_error_naming_the_limit() -> None:
    assert too_deep_message() == f"invalid request: the payload nests deeper than {MAX_DATA_DEPTH} levels of arrays and objects"
