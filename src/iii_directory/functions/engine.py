"""`directory::engine::functions::info` (docs/rules/surfaces.md §10.3): a thin proxy to the engine's
native `engine::functions::info` for one `function_id`.

Rules: the id is trimmed and must be non-empty (`function_id must be non-empty`); the native call
has a 10 s timeout and its failure reads `engine::functions::info proxy: <error>`; `worker_name`
comes from the engine or is the id's part before the first `::`; schemas are read from
`request_format` / `request_schema` and `response_format` / `response_schema` (`null` when
absent); `metadata` is `null` when absent; trigger entries lacking `id` or `trigger_type` are
dropped and a missing `config` becomes `{}`. In standalone mode the catalog answers.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..context import Context
from ..errors import DirectoryError
from ..models import Request, Response
from ..port import EngineCallError
from ..request_bounds import ID_CHARS
from ..table import FunctionSpec, Surface

FUNCTION_ID = "directory::engine::functions::info"
DESCRIPTION = (
    "Read full detail for one engine function: schemas, owning worker, and registered triggers that "
    "target it. Proxies to the engine's native engine::functions::info."
)
NATIVE_TIMEOUT_S = 10.0


class FunctionInfoInput(Request):
    function_id: str = Field(max_length=ID_CHARS,
                             description="Fully-qualified function id on the bus (e.g. `sandbox::create`).")


class RegisteredTriggerSummary(Response):
    """Trigger instance summary for the response envelope."""

    config: Any
    id: str
    trigger_type: str


class FunctionInfoOutput(Response):
    """Response shape for `directory::engine::functions::info`.

    Mirrors the shape of the old `directory::engine::functions::info` but WITHOUT the `how_guide` and `related_skills` fields."""  # noqa: E501 - published text

    description: str | None = None
    function_id: str
    metadata: Any = None
    registered_triggers: list[RegisteredTriggerSummary]
    request_schema: Any = None
    response_schema: Any = None
    worker_name: str | None = None


def _first_present(record: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if record.get(key) is not None:
            return record[key]
    return None


def shape_info(function_id: str, record: Any) -> FunctionInfoOutput:
    """Map a native FunctionDetail to the published response."""
    record = record if isinstance(record, dict) else {}
    worker = record.get("worker_name")
    if not isinstance(worker, str) or not worker:
        worker = function_id.split("::", 1)[0]
    description = record.get("description")
    triggers = []
    for item in record.get("registered_triggers") or []:
        if not isinstance(item, dict):
            continue
        ident, kind = item.get("id"), item.get("trigger_type")
        if not isinstance(ident, str) or not isinstance(kind, str):
            continue
        config = item.get("config")
        triggers.append(RegisteredTriggerSummary(id=ident, trigger_type=kind, config={} if config is None else config))
    returned_id = record.get("function_id")
    return FunctionInfoOutput(
        function_id=returned_id if isinstance(returned_id, str) and returned_id else function_id,
        worker_name=worker,
        description=description if isinstance(description, str) else None,
        request_schema=_first_present(record, "request_format", "request_schema"),
        response_schema=_first_present(record, "response_format", "response_schema"),
        metadata=record.get("metadata"),
        registered_triggers=triggers,
    )


async def functions_info(ctx: Context, req: FunctionInfoInput) -> FunctionInfoOutput:
    function_id = req.function_id.strip()
    if not function_id:
        raise DirectoryError.plain("function_id must be non-empty")
    try:
        record = await ctx.call("engine::functions::info", {"function_id": function_id}, timeout=NATIVE_TIMEOUT_S)
    except EngineCallError as exc:
        raise DirectoryError.plain(f"engine::functions::info proxy: {exc}") from None
    return shape_info(function_id, record)


SURFACE = Surface(
    functions=(
        FunctionSpec(
            id=FUNCTION_ID,
            description=DESCRIPTION,
            request=FunctionInfoInput,
            response=FunctionInfoOutput,
            handler=functions_info,
            metadata={},
        ),
    ),
)
