"""The `<discovery_assist>` block (search.md §12.5) and `directory::hint-preview` (§12.6)."""

from __future__ import annotations

import json
import re

import pytest

from iii_directory.directory import Directory
from iii_directory.hints.hint_text import (AGENT_TRIGGER_INSTRUCTION, HINT_PARAGRAPH,
                                           NATIVE_INSTRUCTION, call_instruction, render_block)

BLOCK = re.compile(
    r"\A<discovery_assist functions_generation=(\d+)>\n(?P<body>[^\n]+)\n</discovery_assist>\Z"
)


@pytest.mark.parametrize("expose", ["agent_trigger", "native", "other"])
def test_block_layout(expose: str) -> None:
    block = render_block(42, expose)  # type: ignore[arg-type]
    match = BLOCK.match(block)
    assert match is not None, block
    assert match.group(1) == "42"
    assert match.group("body") == f"{HINT_PARAGRAPH} {call_instruction(expose)}"  # type: ignore[arg-type]


def test_instruction_per_mode() -> None:
    assert call_instruction("agent_trigger") == AGENT_TRIGGER_INSTRUCTION
    assert call_instruction("native") == NATIVE_INSTRUCTION
    assert call_instruction("other") == NATIVE_INSTRUCTION
    assert render_block(1, "other") == render_block(1, "native")
    assert render_block(1, "agent_trigger") != render_block(1, "native")


def test_agent_trigger_envelope_is_valid_json_with_the_contract_fields() -> None:
    envelope = json.loads(AGENT_TRIGGER_INSTRUCTION[AGENT_TRIGGER_INSTRUCTION.index("{"):])
    assert envelope["function"] == "directory::search_functions"
    assert envelope["description"] == "<short user-facing search description in the user's language>"
    assert envelope["payload"] == {"capabilities": ["<needed capability>", "<another needed capability>"]}
    assert "agent_trigger" in AGENT_TRIGGER_INSTRUCTION


def test_native_instruction_calls_directly_with_capabilities() -> None:
    assert "directory::search_functions" in NATIVE_INSTRUCTION
    assert "directly" in NATIVE_INSTRUCTION
    assert "required `capabilities` field" in NATIVE_INSTRUCTION
    assert "agent_trigger" not in NATIVE_INSTRUCTION


@pytest.mark.parametrize("phrase", [
    # one phrase per meaning §12.5 requires of the paragraph
    "has not been verified in this conversation",
    "by a search result, a contract lookup, or a successful call",
    "call `directory::search_functions` ONCE at this decision point",
    "instead of browsing `engine::functions::list`",
    "Never invent a function id or call one that is not verified",
    "knowing clearly what you need is not the same as holding a verified id",
    "fully specified here, so do not look up its contract",
    "short, non-overlapping entries",
    "all unmet external needs in this one call",
    "usually one to six, at most eighteen",
    "in English, preserving proper names, URLs, and function ids",
    "intrinsic needs such as reasoning, summarization, planning, or formatting",
    "do not repeat needs already covered",
    "requests to summarize provided text are ignored",
    "candidates, not contracts",
    "pick the smallest set",
    'before the first use, call `engine::functions::info` ONCE with `{"function_ids": [...]}`',
    "marks as pre-verified is already verified: use its payload directly",
])
def test_paragraph_carries_every_required_meaning(phrase: str) -> None:
    assert phrase in HINT_PARAGRAPH


def test_paragraph_is_one_paragraph() -> None:
    assert "\n" not in HINT_PARAGRAPH
    assert "\n" not in AGENT_TRIGGER_INSTRUCTION and "\n" not in NATIVE_INSTRUCTION


async def test_hint_preview_returns_exactly_the_rendered_blocks(directory: Directory) -> None:
    preview = await directory.invoke("directory::hint-preview", {})
    assert preview == {
        "agent_trigger": render_block(0, "agent_trigger"),
        "native": render_block(0, "native"),
    }
    assert preview["agent_trigger"].startswith("<discovery_assist functions_generation=0>\n")
    assert preview["native"].endswith("\n</discovery_assist>")


async def test_hint_preview_ignores_unknown_keys(directory: Directory) -> None:
    assert await directory.invoke("directory::hint-preview", {"x": 1}) == await directory.invoke(
        "directory::hint-preview", None
    )
