"""Errors of the wire protocol.

`EngineCallError` is the ErrorBody of a failed call (`{"code", "message"}`): raised for an
outgoing call that failed (the callee's error, a transport failure, or a local `TIMEOUT`), and
accepted from an invocation handler, whose `code` and `message` then travel unchanged.
`iii_directory.port` re-exports it for handlers.
"""

from __future__ import annotations

from typing import Any

INVOCATION_FAILED = "invocation_failed"
FUNCTION_NOT_FOUND = "function_not_found"
INVOCATION_STOPPED = "invocation_stopped"
TIMEOUT = "TIMEOUT"


class EngineCallError(Exception):
    """A call to another function failed: the callee's (or the transport's) ErrorBody."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def to_body(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}

    @classmethod
    def from_body(cls, body: Any) -> EngineCallError:
        """Read an ErrorBody leniently (a bare string or a malformed body still yields an error)."""
        if isinstance(body, dict):
            code = body.get("code")
            message = body.get("message")
            return cls(
                code if isinstance(code, str) and code else INVOCATION_FAILED,
                message if isinstance(message, str) else str(body),
            )
        return cls(INVOCATION_FAILED, str(body))


class NamespaceConflict(Exception):
    """The engine refused this worker's `(namespace, name)` (`WORKER_NAMESPACE_CONFLICT`);
    terminal: the connection does not retry."""


def error_body_of(exc: BaseException) -> dict[str, str]:
    """The ErrorBody sent for a handler failure: an exception carrying string `code` and
    `message` attributes keeps them; anything else is `invocation_failed` with its text.
    Never a stack trace."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    if isinstance(code, str) and code and isinstance(message, str):
        return {"code": code, "message": message}
    return {"code": INVOCATION_FAILED, "message": str(exc) or exc.__class__.__name__}
