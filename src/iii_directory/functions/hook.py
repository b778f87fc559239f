"""Surface `hook`: `directory::pre-generate` (the discovery hint a harness asks for before each
generation), `directory::hint-preview` (the exact blocks, for the configuration UI) and the
`harness::hook::pre-generate` binding, active only while `inject_hint` is true (docs/rules/search.md §12).

The hook never fails a generation: its request model reads every field leniently (a value of
the wrong type counts as absent), the decision runs only pure functions over what was sent, and
`decision` is always `continue`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, ConfigDict, Field, WithJsonSchema

from ..config import Settings
from ..context import Context
from ..models import Empty, Request, Response
from ..hints.hint_text import ExposeMode, render_block
from ..hints.hook import (ANNOTATION_TYPE, ANNOTATION_VERSION, DiscoveryOutcome, DiscoveryReason,
                          HintLedger, HookOutcome, decide, hint_message)
from ..table import BindingSpec, FunctionSpec, Surface

if TYPE_CHECKING:
    from ..runtime import Runtime

PRE_GENERATE_ID = "directory::pre-generate"
HINT_PREVIEW_ID = "directory::hint-preview"
HOOK_TRIGGER_TYPE = "harness::hook::pre-generate"
HOOK_BINDING_CONFIG: Mapping[str, Any] = {"priority": 100, "timeout_ms": 5000, "on_error": "fail_open"}
HIDDEN_METADATA: Mapping[str, Any] = {"internal": True, "trace_hidden": True}
DECISION_CONTINUE = "continue"
"""The hook never stops a generation: every pass answers `continue`."""


# --- lenient readers: a wrong type counts as absent -------------------------------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _count(value: Any) -> int:
    """A non-negative integer; anything else (bool, negative, fraction, text, null) is 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return 0


def _array(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tools(value: Any) -> list[dict[str, Any]]:
    """Tool entries that name a function; entries without a string `name` are not callable."""
    return [item for item in _array(value) if isinstance(item, dict) and isinstance(item.get("name"), str)]


def _expose(value: Any) -> ExposeMode:
    """Absent (or null) ⇒ `agent_trigger`; a value this build does not know ⇒ `other`."""
    if value is None or value == "agent_trigger":
        return "agent_trigger"
    if value == "native":
        return "native"
    return "other"


Text = Annotated[str, BeforeValidator(_text)]
UInt64 = Annotated[int, Field(ge=0, json_schema_extra={"format": "uint64"}), BeforeValidator(_count)]
UInt32 = Annotated[int, Field(ge=0, json_schema_extra={"format": "uint32"}), BeforeValidator(_count)]

EXPOSE_SCHEMA: dict[str, Any] = {
    "oneOf": [
        {"type": "string", "enum": ["agent_trigger", "native"]},
        {
            "type": "string",
            "enum": ["other"],
            "description": (
                "Forward compatibility: an exposure mode this build does not know gets the "
                "mode-neutral call instruction rather than a deserialization error."
            ),
        },
    ]
}
ExposeKind = Annotated[
    Literal["agent_trigger", "native", "other"], BeforeValidator(_expose), WithJsonSchema(EXPOSE_SCHEMA)
]


def _required(*names: str) -> ConfigDict:
    """Publish the seed's required list while the reader tolerates absent fields."""
    return ConfigDict(json_schema_extra={"required": list(names)})


class ToolSchema(Request):
    """One catalog entry: the contract fields search runs on."""

    model_config = _required("description", "name", "parameters")

    name: Text = ""
    description: Text = ""
    parameters: Any = None


class GeneratePayload(Request):
    model_config = _required("functions_generation", "messages", "system_prompt", "tools")

    system_prompt: Text = ""
    messages: Annotated[list[Any], BeforeValidator(_array)] = Field(default_factory=list)
    functions_generation: UInt64 = 0
    tools: Annotated[list[ToolSchema], BeforeValidator(_tools)] = Field(default_factory=list)
    expose: ExposeKind = Field(
        default="agent_trigger",
        description=(
            "How the harness exposes functions to the model for this generation. Absent on "
            "harnesses that predate the field, which only ever exposed through agent_trigger by "
            "default."
        ),
    )


class PreGenerateHookRequest(Request):
    model_config = _required("depth", "generate", "session_id", "step", "turn_id")

    session_id: Text = ""
    turn_id: Text = ""
    step: UInt64 = 0
    depth: UInt32 = 0
    generate: Annotated[GeneratePayload, BeforeValidator(_object)] = Field(default_factory=GeneratePayload)


class DiscoveryPassV1(Response):
    """The durable transcript row for one hook pass. Coarse by design: outcome, reason, and counts only — no prompts, messages, tool contracts, session ids, or timings ever leave the hook."""  # noqa: E501

    omit_when_none: ClassVar[frozenset[str]] = frozenset({"reason"})

    outcome: DiscoveryOutcome
    reason: DiscoveryReason | None = None
    allowed_functions: Annotated[int, Field(ge=0, json_schema_extra={"format": "uint64"})]
    functions_generation: Annotated[int, Field(ge=0, json_schema_extra={"format": "uint64"})]


class DiscoveryTranscriptAnnotation(Response):
    type: str
    version: Annotated[int, Field(ge=0, json_schema_extra={"format": "uint8"})]
    summary: str
    data: DiscoveryPassV1


class PreGenerateAnnotations(Response):
    directory: DiscoveryTranscriptAnnotation


class PreGenerateMutations(Response):
    append_messages: list[Any] = Field(
        description=(
            "Ephemeral tail messages for this generation only. The hint rides here rather than as "
            "a system-prompt mutation: the system prompt is the provider's first input item, and a "
            "once-per-turn append there invalidated the entire prompt-cache prefix twice per turn."
        )
    )


class PreGenerateHookResponse(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset({"mutations"})

    decision: str
    mutations: PreGenerateMutations | None = None
    annotations: PreGenerateAnnotations


class HintPreviewRequest(Empty):
    pass


class HintPreviewResponse(Response):
    """The exact hint text per exposure mode, for the configuration UI. The live block's `functions_generation` attribute varies per generation; the preview renders it as 0."""  # noqa: E501

    agent_trigger: str
    native: str


# --- handlers ---------------------------------------------------------------------------------


class HintService:
    """Per-worker state of the hook: the once-per-turn ledger (survives catalog changes and
    configuration reloads)."""

    def __init__(self, directory: Runtime) -> None:
        self.ledger = HintLedger()


def annotations_for(outcome: HookOutcome) -> PreGenerateAnnotations:
    return PreGenerateAnnotations(
        directory=DiscoveryTranscriptAnnotation(
            type=ANNOTATION_TYPE,
            version=ANNOTATION_VERSION,
            summary=outcome.summary,
            data=DiscoveryPassV1(
                outcome=outcome.outcome,
                reason=outcome.reason,
                allowed_functions=outcome.allowed_functions,
                functions_generation=outcome.functions_generation,
            ),
        )
    )


async def pre_generate(ctx: Context, req: PreGenerateHookRequest) -> PreGenerateHookResponse:
    generate = req.generate
    outcome = decide(
        ledger=ctx.directory.service(HintService).ledger,
        session_id=req.session_id,
        turn_id=req.turn_id,
        step=req.step,
        functions_generation=generate.functions_generation,
        expose=generate.expose,
        tool_names=[tool.name for tool in generate.tools],
        messages=generate.messages,
        min_workers=ctx.settings.hint_min_workers,
    )
    mutations = None
    if outcome.injected:
        message = hint_message(generate.functions_generation, generate.expose, int(ctx.now() * 1000))
        mutations = PreGenerateMutations(append_messages=[message])
    return PreGenerateHookResponse(
        decision=DECISION_CONTINUE, mutations=mutations, annotations=annotations_for(outcome)
    )


async def hint_preview(ctx: Context, req: HintPreviewRequest) -> HintPreviewResponse:
    return HintPreviewResponse(
        agent_trigger=render_block(0, "agent_trigger"), native=render_block(0, "native")
    )


def _hint_enabled(settings: Settings) -> bool:
    return settings.inject_hint


SURFACE = Surface(
    functions=(
        FunctionSpec(
            id=PRE_GENERATE_ID,
            description="Internal: inject the conditional search hint into one harness generation.",
            request=PreGenerateHookRequest,
            response=PreGenerateHookResponse,
            handler=pre_generate,
            metadata=HIDDEN_METADATA,
        ),
        FunctionSpec(
            id=HINT_PREVIEW_ID,
            description="Internal: the exact search-hint text per exposure mode, for the configuration UI.",
            request=HintPreviewRequest,
            response=HintPreviewResponse,
            handler=hint_preview,
            metadata=HIDDEN_METADATA,
        ),
    ),
    bindings=(
        BindingSpec(
            key="pre-generate-hint",
            trigger_type=HOOK_TRIGGER_TYPE,
            function_id=PRE_GENERATE_ID,
            config=lambda _settings: dict(HOOK_BINDING_CONFIG),
            enabled=_hint_enabled,
        ),
    ),
)
