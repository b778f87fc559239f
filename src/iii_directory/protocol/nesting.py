"""How deep a payload may nest, and the head of a frame too deep to decode (docs/input-bounds.md).

An invocation's `data` may nest at most `MAX_DATA_DEPTH` (64) levels of arrays and objects: every
request of the function table nests fewer than ten, and a reply that echoes a request stays far
inside the 128 levels serde_json (the engine's decoder) accepts by default, while every recursive
walk of a payload (validation, serialisation) stays far inside Python's recursion limit.

A frame nested past the JSON decoder's own limit (about 1,000 levels) cannot be decoded at all;
`top_level_members` still reads the members around the deep one (`type`, `invocation_id`,
`function_id`), so such an invocation is answered with `too_deep_message()` instead of dropped.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DATA_DEPTH = 64
"""Deepest nesting of arrays and objects an invocation's `data` may have (`{}` is 1 level)."""

TAIL_BUDGET_CHARS = 64 * 1024
"""How far from the end of an undecodable frame the members after its deep value are looked for."""
TAIL_TRIES = 64
"""At most this many candidate commas are tried there (each try is one C-speed decode)."""

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def too_deep_message(limit: int = MAX_DATA_DEPTH) -> str:
    """The request-shape error (docs/rules/protocol.md §8) for a payload nested past `limit`."""
    return f"invalid request: the payload nests deeper than {limit} levels of arrays and objects"


def nests_deeper_than(value: Any, limit: int) -> bool:
    """True when `value` holds more than `limit` levels of nested lists/dicts; iterative, so any
    depth is measured without recursion, and it stops at the first container past the limit."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _skip_space(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


def top_level_members(text: str) -> dict[str, Any]:
    """The members of the JSON object `text` that decode on their own although the whole does
    not: those before the first too-deep value, read one by one, then the longest run of members
    after it that decodes as an object (`_tail_members`). `{}` when `text` is no object."""
    found: dict[str, Any] = {}
    pos = _skip_space(text, 0)
    if not text.startswith("{", pos):
        return found
    pos += 1
    while True:
        pos = _skip_space(text, pos)
        try:
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip_space(text, pos)
            if not isinstance(key, str) or not text.startswith(":", pos):
                return found
            value, pos = _DECODER.raw_decode(text, _skip_space(text, pos + 1))
        except RecursionError:
            break
        except ValueError:
            return found
        found[key] = value
        pos = _skip_space(text, pos)
        if not text.startswith(",", pos):
            return found
        pos += 1
    tail = _tail_members(text)
    return {**tail, **found}


def _tail_members(text: str) -> dict[str, Any]:
    """The longest suffix `,"k": v, …}` within `TAIL_BUDGET_CHARS` of the end that decodes as an
    object once `{` replaces its comma. A candidate starting inside the deep value must cross one
    of that value's closing brackets, which ends the candidate early, so it never decodes."""
    floor = max(0, len(text) - TAIL_BUDGET_CHARS)
    best: dict[str, Any] = {}
    cut = text.rfind(",", floor)
    for _ in range(TAIL_TRIES):
        if cut == -1:
            break
        try:
            candidate = json.loads("{" + text[cut + 1:])
        except (ValueError, RecursionError):
            candidate = None
        if isinstance(candidate, dict):
            best = candidate
        cut = text.rfind(",", floor, cut)
    return best
