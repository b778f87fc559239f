"""The words of the discovery hint (docs/rules/search.md §12.5): one paragraph and the call instruction
for each way a harness exposes functions to its model.

The block is `<discovery_assist functions_generation=N>`, a newline, the paragraph, a space, the
exposure-specific call instruction and a newline, then `</discovery_assist>`. The paragraph
carries every rule §12.5 lists, in this order: search ONCE at this decision point before calling
an unverified task function (verified = seen in a search result, a contract lookup or a
successful call) instead of listing the catalog; never invent or call an unverified id; the
search call needs no contract lookup; short, non-overlapping capabilities covering all unmet
external needs in one call (usually one to six, at most eighteen); English with names, URLs and
ids kept; no intrinsic needs, no repeats, summarize-provided-text requests ignored; the result
holds candidates, not contracts — the smallest set, one batched `engine::functions::info` call
before first use; calls a Harness runtime block marks pre-verified are already verified.
"""

from __future__ import annotations

from typing import Literal

SEARCH_FUNCTION_ID = "directory::search_functions"

ExposeMode = Literal["agent_trigger", "native", "other"]
"""How the harness exposes functions to the model; `other` is any value this build does not know."""

HINT_PARAGRAPH = (
    "Before you call any task function whose id has not been verified in this conversation "
    "(by a search result, a contract lookup, or a successful call), call "
    "`directory::search_functions` ONCE at this decision point instead of browsing "
    "`engine::functions::list`. Never invent a function id or call one that is not verified: "
    "knowing clearly what you need is not the same as holding a verified id. The search call is "
    "fully specified here, so do not look up its contract. Derive its `capabilities` from the goal "
    "and the current state of the work: short, non-overlapping entries that together cover all "
    "unmet external needs in this one call (usually one to six, at most eighteen). Write every "
    "entry in English, preserving proper names, URLs, and function ids exactly. Do not include "
    "intrinsic needs such as reasoning, summarization, planning, or formatting, and do not repeat "
    "needs already covered; requests to summarize provided text are ignored. The result lists "
    "candidates, not contracts: pick the smallest set that does the job and, before the first use, "
    'call `engine::functions::info` ONCE with `{"function_ids": [...]}` for all of them. A call '
    "that a Harness runtime block marks as pre-verified is already verified: use its payload "
    "directly."
)

AGENT_TRIGGER_INSTRUCTION = (
    "Make the search call through `agent_trigger` with this envelope: "
    '{"function": "directory::search_functions", '
    '"description": "<short user-facing search description in the user\'s language>", '
    '"payload": {"capabilities": ["<needed capability>", "<another needed capability>"]}}'
)

NATIVE_INSTRUCTION = (
    "Call `directory::search_functions` directly as a tool, filling in its required "
    "`capabilities` field."
)


def call_instruction(expose: ExposeMode) -> str:
    """The call instruction for an exposure mode: the `agent_trigger` envelope, or the direct
    call for `native` and for any mode this build does not know (`other`)."""
    if expose == "agent_trigger":
        return AGENT_TRIGGER_INSTRUCTION
    return NATIVE_INSTRUCTION


def render_block(functions_generation: int, expose: ExposeMode) -> str:
    """`<discovery_assist functions_generation=N>` ⏎ paragraph, space, instruction ⏎
    `</discovery_assist>`."""
    return (
        f"<discovery_assist functions_generation={functions_generation}>\n"
        f"{HINT_PARAGRAPH} {call_instruction(expose)}\n"
        "</discovery_assist>"
    )
