"""Bundled system prompts and base agent profiles (docs/rules/surfaces.md §13).

The texts ship as package data and are read with `importlib.resources`; the worker never writes
them to disk. A local file with the same name (system prompt) or id (agent profile) shadows the
bundled copy; deleting that file brings the bundled copy back.

* system prompt `iii-minimal` — the minimal identity with directory-first discovery;
* agent profile `default` — the gallery default; its body is the `iii-minimal` prompt body;
* agent profile `iii` — the harness's full default identity (hidden, meant for `extends: iii`);
* agent profile `iii-minimal` — a hidden, body-less alias that extends `default`.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

PROMPT_NAMES: tuple[str, ...] = ("iii-minimal",)
AGENT_IDS: tuple[str, ...] = ("default", "iii", "iii-minimal")


def _read(folder: str, stem: str) -> str:
    # Bytes, not read_text: universal-newline translation would break byte-exact `raw`.
    data = resources.files(__name__).joinpath(folder, f"{stem}.md").read_bytes()
    return data.decode("utf-8")


@cache
def prompt_text(name: str) -> str | None:
    """The full embedded file of bundled system prompt `name`, or None."""
    return _read("prompts", name) if name in PROMPT_NAMES else None


@cache
def agent_text(agent_id: str) -> str | None:
    """The full embedded file of bundled agent profile `agent_id`, or None."""
    return _read("agents", agent_id) if agent_id in AGENT_IDS else None
