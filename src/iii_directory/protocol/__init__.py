"""The engine wire protocol (docs/rules/protocol.md): frames, back-off, the reconnecting `Connection` with
reattach and replay, invocations both ways, and the error bodies. No directory knowledge at all:
the worker (`iii_directory.worker`) wires the function table to it.

The names below load with their module on first access (PEP 562), so importing one submodule
(`protocol.errors` for the engine port, `protocol.frames`) does not import `connection` and
websockets: `iii-directory call` never opens a socket (docs/startup.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backoff import Backoff
    from .connection import DEFAULT_URL, Connection, Invocation, Subscriber, validate_url
    from .errors import EngineCallError, NamespaceConflict, error_body_of

_HOMES = {
    "Backoff": "backoff",
    "DEFAULT_URL": "connection",
    "Connection": "connection",
    "Invocation": "connection",
    "Subscriber": "connection",
    "validate_url": "connection",
    "EngineCallError": "errors",
    "NamespaceConflict": "errors",
    "error_body_of": "errors",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
