"""Running one function of the table: validate → handler → serialise (docs/rules/design.md §2 and §4).

`invoke(runtime, function_id, data, info)` refuses a payload nested past the protocol's published
depth (`protocol.nesting.MAX_DATA_DEPTH`), parses the request with the function's model, gives
the handler a fresh `Context` (the live settings snapshot, the engine port, the caller's wire
context), applies the function's local deadline, and returns the serialised response. Every
failure leaves as a coded `DirectoryError`.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio

from .context import CallInfo, Context
from .errors import DirectoryError, from_exception, innermost
from .models import dump_response, parse_request
from .payload_text import lone_surrogate_problem
from .protocol.nesting import MAX_DATA_DEPTH, nests_deeper_than, too_deep_message
from .runtime import Runtime

log = logging.getLogger(__name__)


def new_context(runtime: Runtime, info: CallInfo | None = None) -> Context:
    """The handler's view of one call: the runtime, its live settings now, the wire context."""
    return Context(directory=runtime, settings=runtime.settings, info=info or CallInfo())


async def invoke(runtime: Runtime, function_id: str, data: Any, info: CallInfo | None = None) -> Any:
    """Run one function of the table; raise DirectoryError (coded) on any failure."""
    spec = runtime.table.functions.get(function_id)
    if spec is None:
        raise DirectoryError("function_not_found", f"Function '{function_id}' not found")
    if isinstance(data, dict) and "_caller_worker_id" in data:
        info = info or CallInfo()
        info.caller_worker_id = str(data.get("_caller_worker_id"))
    if nests_deeper_than(data, MAX_DATA_DEPTH):
        raise DirectoryError.plain(too_deep_message())
    problem = lone_surrogate_problem(data)
    if problem:
        raise DirectoryError.plain(problem)
    request = parse_request(spec.request, data)
    ctx = new_context(runtime, info)
    runtime.calls_in_flight += 1
    try:
        if spec.timeout_s is not None:
            with anyio.fail_after(spec.timeout_s):
                result = await spec.handler(ctx, request)
        else:
            result = await spec.handler(ctx, request)
    except DirectoryError:
        raise
    except TimeoutError:
        raise DirectoryError("TIMEOUT", f"{function_id} timed out") from None
    except Exception as exc:  # noqa: BLE001 - every failure becomes a coded error
        if isinstance(innermost(exc), TimeoutError):
            raise DirectoryError("TIMEOUT", f"{function_id} timed out") from None
        if not isinstance(innermost(exc), (OSError, ValueError, DirectoryError)):
            log.exception("handler %s failed", function_id)
        raise from_exception(exc) from None
    finally:
        runtime.calls_in_flight -= 1
    return dump_response(result)
