"""The pre-generate hook on a 2,000-message transcript (search.md §12; hook budget 5000 ms).

Run: `python -m pytest benchmarks/bench_hook.py --benchmark-only`.

Transcript shape: one user message opens the task, then 1,999 assistant / engine-result
messages, each with a few hundred words and the odd `ns::fn` mention that is not a callable
tool, so every gate has to read the whole task window and all gates clear (the worst case).
`invoke` measures the whole function as the worker runs it (request validation → handler →
serialisation); `gates` measures the pure decision alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.hints.hook import HintLedger, decide

SEARCH = "directory::search_functions"
TOOLS = [SEARCH, "engine::functions::info"] + [f"worker{n}::action{m}" for n in range(20) for m in range(10)]
WORDS = ("the quick brown fox jumps over the lazy dog while reading notes::draft and planning "
         "the next step of the work ").split()


def _text(index: int, words: int = 300) -> str:
    return " ".join(WORDS[(index + k) % len(WORDS)] for k in range(words))


def transcript(size: int = 2_000) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Please plan a release. " + _text(0)}]}
    ]
    for index in range(1, size):
        if index % 2:
            messages.append({"role": "assistant", "content": [{"type": "text", "text": _text(index)}]})
        else:
            messages.append({"role": "function_result", "function_id": "engine::functions::info",
                             "content": [{"type": "text", "text": _text(index, 60)}]})
    return messages


def payload(messages: list[dict[str, Any]], step: int) -> dict[str, Any]:
    return {
        "session_id": "bench-session",
        "turn_id": "turn-1",
        "step": step,
        "depth": 0,
        "generate": {
            "system_prompt": "You are an agent.",
            "messages": messages,
            "functions_generation": 3,
            "tools": [{"name": name, "description": f"{name} does one thing.", "parameters": {}} for name in TOOLS],
            "expose": "native",
        },
    }


@pytest.fixture(scope="module")
def messages() -> list[dict[str, Any]]:
    return transcript()


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    event_loop = asyncio.new_event_loop()
    yield event_loop
    event_loop.close()


def test_gates_2000_messages(benchmark: Any, messages: list[dict[str, Any]]) -> None:
    def run() -> Any:
        return decide(ledger=HintLedger(), session_id="s", turn_id="t", step=0, functions_generation=3,
                      expose="native", tool_names=TOOLS, messages=messages, min_workers=2)

    outcome = benchmark(run)
    assert outcome.injected


def test_invoke_2000_messages_injects(benchmark: Any, messages: list[dict[str, Any]],
                                      loop: asyncio.AbstractEventLoop) -> None:
    directory = Directory(Settings())
    body = payload(messages, step=0)  # the same step every round: a replay, so it injects each time
    response = benchmark(lambda: loop.run_until_complete(directory.invoke("directory::pre-generate", body)))
    assert response["annotations"]["directory"]["data"]["outcome"] == "hint_injected"


def test_invoke_2000_messages_later_step(benchmark: Any, messages: list[dict[str, Any]],
                                         loop: asyncio.AbstractEventLoop) -> None:
    directory = Directory(Settings())
    loop.run_until_complete(directory.invoke("directory::pre-generate", payload(messages, step=0)))
    body = payload(messages, step=1)
    response = benchmark(lambda: loop.run_until_complete(directory.invoke("directory::pre-generate", body)))
    assert response["annotations"]["directory"]["data"]["reason"] == "hint_already_sent"
