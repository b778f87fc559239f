"""The engine wire protocol (docs/rules/protocol.md): frames, back-off, the reconnecting `Connection` with
reattach and replay, invocations both ways, and the error bodies. No directory knowledge at all:
the worker (`iii_directory.worker`) wires the function table to it."""

from __future__ import annotations

from .backoff import Backoff
from .connection import DEFAULT_URL, Connection, Invocation, Subscriber, validate_url
from .errors import EngineCallError, NamespaceConflict, error_body_of

__all__ = [
    "DEFAULT_URL",
    "Backoff",
    "Connection",
    "EngineCallError",
    "Invocation",
    "NamespaceConflict",
    "Subscriber",
    "error_body_of",
    "validate_url",
]
