"""Payload strings that are not Unicode text.

A JSON `\\uD800` escape decodes to a lone surrogate: a Python string no file name, log line or
reply can encode as UTF-8. `lone_surrogate_problem(data)` finds the first one in a request
(keys and values, at any depth) and names where it sits, so the call is refused with a bare
request-shape error before any handler runs, and nothing is written.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def _first_surrogate(text: str) -> str | None:
    if text.isascii():
        return None
    try:
        text.encode("utf-8")  # surrogates are the only code points UTF-8 refuses; C-speed check
    except UnicodeEncodeError as exc:
        return text[exc.start]
    return None


def lone_surrogate_problem(data: Any) -> str | None:
    """The bare reason `data` is refused, or None: `request field "<path>" holds the lone
    surrogate U+XXXX, which is not Unicode text` (`<path>` as `a.b[0]`; `(key)` marks a key)."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            char = _first_surrogate(value)
            if char is not None:
                where = path or "(payload)"
                return (f'request field "{_printable(where)}" holds the lone surrogate '
                        f"U+{ord(char):04X}, which is not Unicode text")
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                key_text = str(key)
                child = f"{path}.{key_text}" if path else key_text
                if _first_surrogate(key_text) is not None:
                    stack.append((f"{child} (key)", key_text))
                else:
                    stack.append((child, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item) for i, item in reversed(list(enumerate(value))))
    return None


def _printable(path: str) -> str:
    """The path with its own surrogates shown as U+FFFD (the message itself must encode)."""
    return _SURROGATE.sub("\ufffd", path)
