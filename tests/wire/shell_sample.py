"""A small sample surface for the shell's wire tests: functions that expose what the shell hands
to handlers (baggage, traceparent, metadata, caller id), make nested, void and slow calls, fail in
every way, and emit events of a provided trigger type; plus a binding that follows `inject_hint`."""

from __future__ import annotations

from typing import Any

import anyio
from pydantic import Field

from iii_directory.context import Context
from iii_directory.errors import DirectoryError, not_found
from iii_directory.functions import engine as engine_surface
from iii_directory.functions import internal as internal_surface
from iii_directory.models import Empty, Ok, Request, Response
from iii_directory.table import BindingSpec, FunctionSpec, FunctionTable, Surface, TriggerTypeSpec

ON_CHANGE = "sample::on-change"
HOOK_TYPE = "harness::hook::pre-generate"


class EchoIn(Request):
    text: str = ""


class EchoOut(Response):
    text: str
    session_id: str | None
    baggage: dict[str, str]
    traceparent: str | None
    metadata: Any
    caller_worker_id: str | None


async def echo(ctx: Context, req: EchoIn) -> EchoOut:
    return EchoOut(text=req.text, session_id=ctx.session_id, baggage=ctx.baggage,
                   traceparent=ctx.info.traceparent, metadata=ctx.info.metadata,
                   caller_worker_id=ctx.info.caller_worker_id)


class TargetIn(Request):
    target: str
    data: dict[str, Any] = Field(default_factory=dict)
    timeout_ms: int = 5000


async def nested(ctx: Context, req: TargetIn) -> dict[str, Any]:
    return {"result": await ctx.call(req.target, req.data, timeout=req.timeout_ms / 1000)}


async def fire(ctx: Context, req: TargetIn) -> Ok:
    await ctx.fire(req.target, req.data)
    return Ok()


class SleepIn(Request):
    seconds: float = 0.0


async def slow(_ctx: Context, req: SleepIn) -> Ok:
    await anyio.sleep(req.seconds)
    return Ok()


class IdIn(Request):
    id: str


async def coded(_ctx: Context, req: IdIn) -> Ok:
    raise not_found("D110", "skill", req.id)


async def plain(_ctx: Context, _req: Empty) -> Ok:
    raise DirectoryError.plain("id must be non-empty")


async def broken(_ctx: Context, _req: Empty) -> Ok:
    raise RuntimeError("boom")


class EmitIn(Request):
    op: str


async def emit(ctx: Context, req: EmitIn) -> Ok:
    ctx.emit(ON_CHANGE, {"op": req.op})
    return Ok()


SURFACE = Surface(
    functions=(
        FunctionSpec("sample::echo", "Echo with the call context.", EchoIn, EchoOut, echo,
                     metadata={"tool": {"label": "Echo"}}),
        FunctionSpec("sample::nested", "Call another function.", TargetIn, None, nested),
        FunctionSpec("sample::fire", "Void-call another function.", TargetIn, Ok, fire),
        FunctionSpec("sample::slow", "Sleep, then answer.", SleepIn, Ok, slow),
        FunctionSpec("sample::coded", "Fail with a D110.", IdIn, Ok, coded, metadata={"internal": True}),
        FunctionSpec("sample::plain", "Fail without a code.", Empty, Ok, plain),
        FunctionSpec("sample::broken", "Crash.", Empty, Ok, broken),
        FunctionSpec("sample::emit", "Emit an on-change event.", EmitIn, Ok, emit),
        FunctionSpec("sample::hook", "Hook target.", Empty, Ok, lambda _c, _r: _ok(), metadata={"internal": True}),
    ),
    trigger_types=(TriggerTypeSpec(ON_CHANGE, "Fires after a sample change."),),
    bindings=(
        BindingSpec("sample-hook", HOOK_TYPE, "sample::hook",
                    config=lambda _s: {"priority": 100, "timeout_ms": 5000, "on_error": "fail_open"},
                    enabled=lambda s: s.inject_hint),
    ),
)


async def _ok() -> Ok:
    return Ok()


def sample_table() -> FunctionTable:
    return FunctionTable.merge([SURFACE, internal_surface.SURFACE, engine_surface.SURFACE])
