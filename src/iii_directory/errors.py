"""Errors as values with codes.

A handler raises `DirectoryError(code, message)`. On the wire it becomes the ErrorBody
`{"code": code, "message": message}` (docs/rules/protocol.md §8). Coded directory errors keep the code as
the first token of the message too (`"D110 not_found: …"`), so consumers that read only the
message still see it. Errors without a directory code travel as `invocation_failed` with the
bare message. No stack trace is ever sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

INVOCATION_FAILED = "invocation_failed"
_CODED = re.compile(r"^(D\d{3}) ")


class DirectoryError(Exception):
    """An error a handler returns to its caller: a wire `code` and a human `message`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @classmethod
    def plain(cls, message: str) -> DirectoryError:
        """An un-coded error: a directory code at the start of `message` is still lifted out."""
        match = _CODED.match(message)
        return cls(match.group(1) if match else INVOCATION_FAILED, message)

    def to_wire(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}

    def __repr__(self) -> str:
        return f"DirectoryError({self.code!r}, {self.message!r})"


def quote(value: str) -> str:
    """JSON-style double quoting with backslash escapes, as the not-found messages use."""
    return json.dumps(value, ensure_ascii=False)


def render_next(steps: Sequence[tuple[str, str]]) -> str:
    """` Next: call F1 to WHY1; or call F2 to WHY2.` (empty when there are no steps)."""
    if not steps:
        return ""
    parts = [f"call {fn} to {why}" for fn, why in steps]
    return " Next: " + "; or ".join(parts) + "."


def not_found(
    code: str,
    kind: str,
    missed: str,
    *,
    suggestions: Iterable[str] = (),
    next_steps: Sequence[tuple[str, str]] = (),
) -> DirectoryError:
    """`<CODE> not_found: <kind> "<missed>" does not exist.[ Did you mean: a, b.][ Next: …]`."""
    message = f"{code} not_found: {kind} {quote(missed)} does not exist."
    names = [s for s in suggestions if s]
    if names:
        message += " Did you mean: " + ", ".join(names) + "."
    message += render_next(next_steps)
    return DirectoryError(code, message)


def invalid_input(
    code: str, problem: str, *, next_steps: Sequence[tuple[str, str]] = ()
) -> DirectoryError:
    """`<CODE> invalid_input: <problem sentence>[ Next: …]`."""
    return DirectoryError(code, f"{code} invalid_input: {problem}{render_next(next_steps)}")


def registry_error(problem: str) -> DirectoryError:
    """`D320 registry_error: <problem>`."""
    return DirectoryError("D320", f"D320 registry_error: {problem}")


def innermost(exc: BaseException) -> BaseException:
    """The failure a task group wraps: a group of one is its member; a larger group is its
    first coded `DirectoryError` when it holds one, else its first member (depth first)."""
    while isinstance(exc, BaseExceptionGroup):
        coded = exc.subgroup(lambda e: isinstance(e, DirectoryError))
        exc = (coded or exc).exceptions[0]
    return exc


def from_exception(exc: BaseException) -> DirectoryError:
    """Map any handler failure to a wire error without leaking a traceback; a failure inside a
    task group is reported as the error it wraps (`innermost`), not as the group."""
    exc = innermost(exc)
    if isinstance(exc, DirectoryError):
        return exc
    if isinstance(exc, OSError):
        detail = exc.strerror or str(exc)
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        return DirectoryError(INVOCATION_FAILED, f"I/O error: {detail}{where}")
    text = str(exc) or exc.__class__.__name__
    return DirectoryError.plain(text)


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    body.update(extra)
    return body
