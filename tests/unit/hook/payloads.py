"""Builders for harness pre-generate payloads used across the hook tests."""

from __future__ import annotations

from typing import Any

SEARCH = "directory::search_functions"
WIDE_TOOLS = (SEARCH, "web::fetch", "mail::send", "engine::functions::info")


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"{name} does things.", "parameters": {"type": "object"}}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def result(function_id: str, text: str = "{}") -> dict[str, Any]:
    return {
        "role": "function_result",
        "function_id": function_id,
        "content": [{"type": "text", "text": text}],
    }


def payload(
    *,
    session_id: str = "session-1",
    turn_id: str = "turn-1",
    step: int = 0,
    depth: int = 0,
    tools: tuple[str, ...] = WIDE_TOOLS,
    messages: list[Any] | None = None,
    functions_generation: int = 7,
    expose: str | None = None,
    system_prompt: str = "You are a careful agent.",
) -> dict[str, Any]:
    generate: dict[str, Any] = {
        "system_prompt": system_prompt,
        "messages": [user("Find the weather in Paris and mail it to Ana.")] if messages is None else messages,
        "functions_generation": functions_generation,
        "tools": [tool(name) for name in tools],
    }
    if expose is not None:
        generate["expose"] = expose
    return {"session_id": session_id, "turn_id": turn_id, "step": step, "depth": depth, "generate": generate}
