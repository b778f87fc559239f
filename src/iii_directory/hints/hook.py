"""The pre-generate discovery hint (docs/rules/search.md §12): gates, the once-per-turn ledger, the
injected tail message and the coarse transcript annotation.

Everything here reads the harness payload defensively: a transcript is a list of JSON values
of any shape, and an odd message (not an object, a missing role, string content, null fields)
simply does not count towards a gate. Nothing in this module raises on malformed input, and the
work is linear in the size of the transcript window (the messages from the latest user message
onward).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .hint_text import SEARCH_FUNCTION_ID, ExposeMode, render_block

ENGINE_PREFIX = "engine::"

ANNOTATION_TYPE = "console.transcript"
ANNOTATION_VERSION = 1  # spec: docs/rules/search.md §12.5
SUMMARY_INJECTED = "directory · hint injected"
SUMMARY_SKIPPED = "directory · skipped"

DEFAULT_LEDGER_CAPACITY = 1024  # spec: docs/rules/search.md §10 (as many as sessions)
"""Sessions whose once-per-turn record is kept (least recently used dropped first)."""


# Why the hook skipped, in gate order (docs/rules/search.md §12.3).
class DiscoveryReason(str, Enum):
    search_unavailable = "search_unavailable"
    already_searched = "already_searched"
    narrow_surface = "narrow_surface"
    already_operating = "already_operating"
    task_guided = "task_guided"
    hint_already_sent = "hint_already_sent"


class DiscoveryOutcome(str, Enum):
    hint_injected = "hint_injected"
    skipped = "skipped"


# --- reading the transcript -------------------------------------------------------------------


def _field(message: Any, key: str) -> Any:
    return message.get(key) if isinstance(message, dict) else None


def latest_user_index(messages: Sequence[Any]) -> int | None:
    """Index of the last message whose `role` is `"user"`, or None when there is none."""
    for index in range(len(messages) - 1, -1, -1):
        if _field(messages[index], "role") == "user":
            return index
    return None


def task_window(messages: Sequence[Any]) -> Sequence[Any]:
    """The messages of the current task: from the latest user message (inclusive) onward; the
    whole transcript when no user message exists."""
    start = latest_user_index(messages)
    return messages if start is None else messages[start:]


def result_function_ids(window: Iterable[Any]) -> Iterator[str]:
    """`function_id` of every `role == "function_result"` message (non-string ids are skipped)."""
    for message in window:
        if _field(message, "role") == "function_result":
            function_id = _field(message, "function_id")
            if isinstance(function_id, str):
                yield function_id


def text_blocks(message: Any) -> Iterator[str]:
    """The text of a message: `content[]` items with `type == "text"`; tolerated shapes are a
    plain string content, a single block object, and bare strings inside the list."""
    content = _field(message, "content")
    if isinstance(content, str):
        yield content
        return
    if isinstance(content, dict):
        content = (content,)
    elif not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, str):
            yield block
        elif isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                yield text


_WORD_EDGE_EXTRA = frozenset(":_-")


def trim_word(word: str) -> str:
    """Strip leading and trailing characters other than alphanumerics, `:`, `_` and `-`."""
    edge = "".join(c for c in set(word) if not (c.isalnum() or c in _WORD_EDGE_EXTRA))
    return word.strip(edge) if edge else word


def named_ids(window: Iterable[Any]) -> Iterator[str]:
    """Every whitespace-separated word containing `::` in the window's text, trimmed."""
    for message in window:
        for text in text_blocks(message):
            if "::" in text:
                for word in [word for word in text.split() if "::" in word]:
                    yield trim_word(word)


# --- the surface ------------------------------------------------------------------------------


def is_task_tool(name: str) -> bool:
    """A callable task function: neither the search itself nor an `engine::` function."""
    return name != SEARCH_FUNCTION_ID and not name.startswith(ENGINE_PREFIX)


def surface_width(tool_names: Iterable[str]) -> int:
    """Distinct worker namespaces (the part before the first `::`) among the task tools; ids
    without `::` (or with an empty namespace) do not count."""
    namespaces = set()
    for name in tool_names:
        if not is_task_tool(name):
            continue
        namespace, sep, _ = name.partition("::")
        if sep and namespace:
            namespaces.add(namespace)
    return len(namespaces)


# --- gates 1-5 --------------------------------------------------------------------------------


def gate_reason(
    tool_names: Sequence[str], messages: Sequence[Any], min_workers: int
) -> DiscoveryReason | None:
    """The first of gates 1-5 (docs/rules/search.md §12.3) that applies, or None when all clear.

    1. `search_unavailable` — `directory::search_functions` is not among the tools;
    2. `already_searched` — a search `function_result` follows the latest user message;
    3. `narrow_surface` — fewer than `min_workers` worker namespaces (0 never narrows);
    4. `already_operating` — a `function_result` of a task function (not `engine::`, not the
       search) follows the latest user message;
    5. `task_guided` — the current task's text names a callable task function id.
    """
    if SEARCH_FUNCTION_ID not in tool_names:
        return DiscoveryReason.search_unavailable
    window = task_window(messages)
    results = list(result_function_ids(window))
    if SEARCH_FUNCTION_ID in results:
        return DiscoveryReason.already_searched
    if min_workers > 0 and surface_width(tool_names) < min_workers:
        return DiscoveryReason.narrow_surface
    if any(is_task_tool(function_id) for function_id in results):
        return DiscoveryReason.already_operating
    callable_ids = {name for name in tool_names if is_task_tool(name) and "::" in name}
    if callable_ids and any(word in callable_ids for word in named_ids(window)):
        return DiscoveryReason.task_guided
    return None


# --- gate 6: once per turn --------------------------------------------------------------------


@dataclass(frozen=True)
class HintRecord:
    """What was sent to a session: the turn and step of the hint and the generation context."""

    turn_id: str
    step: int
    functions_generation: int
    expose: ExposeMode


class HintLedger:
    """Once-per-turn decisions per session (docs/rules/search.md §12.4), for at most `capacity` sessions.

    * no record, or a different `turn_id` → store the new record, send;
    * same turn, `step ≤ stored step` → send again (a replay; the record is unchanged);
    * same turn, later step → do not send.
    Changes of `functions_generation` or `expose` within a turn do not re-arm. When full, the
    least recently used session is forgotten (it would simply get the hint again next turn).
    """

    def __init__(self, capacity: int = DEFAULT_LEDGER_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._records: OrderedDict[str, HintRecord] = OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    def get(self, session_id: str) -> HintRecord | None:
        return self._records.get(session_id)

    def should_send(self, session_id: str, record: HintRecord) -> bool:
        """Decide for this generation and record the hint when it opens a new turn."""
        stored = self._records.get(session_id)
        if stored is not None:
            self._records.move_to_end(session_id)
            if stored.turn_id == record.turn_id:
                return record.step <= stored.step
        self._records[session_id] = record
        self._records.move_to_end(session_id)
        while len(self._records) > self.capacity:
            self._records.popitem(last=False)
        return True


# --- the decision and what leaves the hook ----------------------------------------------------


@dataclass(frozen=True)
class HookOutcome:
    """One hook pass: the skip reason (None = injected) and the coarse counts."""

    reason: DiscoveryReason | None
    allowed_functions: int
    functions_generation: int

    @property
    def injected(self) -> bool:
        return self.reason is None

    @property
    def outcome(self) -> DiscoveryOutcome:
        return DiscoveryOutcome.hint_injected if self.injected else DiscoveryOutcome.skipped

    @property
    def summary(self) -> str:
        return SUMMARY_INJECTED if self.injected else SUMMARY_SKIPPED


def decide(
    *,
    ledger: HintLedger,
    session_id: str,
    turn_id: str,
    step: int,
    functions_generation: int,
    expose: ExposeMode,
    tool_names: Sequence[str],
    messages: Sequence[Any],
    min_workers: int,
) -> HookOutcome:
    """Run the six gates in order. A blank `session_id` keeps no record (fail-open: the
    once-per-turn gate then always allows)."""
    reason = gate_reason(tool_names, messages, min_workers)
    if reason is None and session_id:
        record = HintRecord(turn_id, step, functions_generation, expose)
        if not ledger.should_send(session_id, record):
            reason = DiscoveryReason.hint_already_sent
    return HookOutcome(reason, len(tool_names), functions_generation)


def hint_message(functions_generation: int, expose: ExposeMode, timestamp_ms: int) -> dict[str, Any]:
    """The ephemeral tail message that carries the block (docs/rules/search.md §12.5)."""
    return {
        "role": "user",
        "content": [{"type": "text", "text": render_block(functions_generation, expose)}],
        "timestamp": timestamp_ms,
    }
