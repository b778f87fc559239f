"""The answers of `directory::system-prompts::list` and `::get` as plain JSON data, in the
published shapes (`ListSystemPromptsOutput`, `SystemPromptGetOutput`: the fields in the
models' order, `raw` left out when absent), from one merged scan (`prompts.scan_prompts`). The
surface (`functions/prompts.py`) and the file-backed `call` path (`quick_call.py`) both answer
from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import DirectoryError
from .files import body_is_empty, modified_at, read_capped
from .prompts import PromptFile, PromptFormatError, bundled_prompts, find, not_found_error, parse_prompt


def _row(name: str, description: str, stamp: str, builtin: bool) -> dict[str, Any]:
    return {"builtin": builtin, "description": description, "modified_at": stamp, "name": name}


def list_answer(entries: Sequence[PromptFile]) -> dict[str, Any]:
    """Every scanned prompt, then the bundled ones no file shadows, sorted by name (stable)."""
    rows = [_row(e.name, e.description, modified_at(e.path), False) for e in entries]
    file_names = {e.name for e in entries}
    rows += [_row(b.name, b.description, "", True) for b in bundled_prompts().values()
             if b.name not in file_names]
    rows.sort(key=lambda row: row["name"])
    return {"prompts": rows}


def _answer(name: str, description: str, body: str, raw: str | None, stamp: str,
            builtin: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"body": body, "builtin": builtin, "description": description,
                           "modified_at": stamp, "name": name}
    if raw is not None:
        out["raw"] = raw
    return out


def get_answer(entries: Sequence[PromptFile], name: str, raw: bool | None) -> dict[str, Any]:
    """The prompt `name` (already checked: `prompts.check_name`): its file when one is
    scanned, else the bundled copy, else D210. With `raw`, the exact file too (and an empty
    body allowed)."""
    entry = find(entries, name)
    if entry is not None:
        content = read_capped(entry.path)
        try:
            text = parse_prompt(content)
        except PromptFormatError as exc:
            raise DirectoryError.plain(f"{entry.path}: {exc}") from None
        if not raw and body_is_empty(text.body):
            raise DirectoryError.plain(f"file {entry.path} has empty body")
        return _answer(entry.name, text.description, text.body, content if raw else None,
                       modified_at(entry.path), False)
    bundled = bundled_prompts().get(name)
    if bundled is not None:
        return _answer(bundled.name, bundled.description, bundled.body, bundled.raw if raw else None,
                       "", True)
    raise not_found_error(name, entries)
