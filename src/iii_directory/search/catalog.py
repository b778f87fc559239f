"""Fetching the live catalog from the engine (docs/rules/search.md §3.1).

1. `engine::functions::list {"include_internal": true}` — ids in listed order, first occurrence
   wins; excluded ids removed; the full raw id set remembered.
2. `engine::functions::info {"function_ids": [...]}` in chunks of 32, all concurrently; a failed
   chunk only drops its functions.
3. Entries that are missing, carry `error`, or are `metadata.internal` are skipped; the rest
   become canonical tools.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio

from .ranking.corpus import Corpus, Tool, tool_from_schema
from ..exclusions import is_excluded, is_internal

log = logging.getLogger(__name__)

INFO_CHUNK = 32  # chosen: keeps each engine::functions::info call small
CALL_TIMEOUT_S = 5.0  # spec: docs/rules/search.md §15

Caller = Callable[..., Awaitable[Any]]
"""`await call(function_id, data, timeout=seconds)` — the engine port's `call`."""


class CatalogFetchError(Exception):
    """The catalog could not be fetched (the previous catalog stays active)."""


def _item_id(item: Any) -> str | None:
    if isinstance(item, str):
        return item or None
    if isinstance(item, Mapping):
        for key in ("function_id", "id", "name"):
            value = item.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def listed_ids(result: Any) -> list[str]:
    """Ids of a `engine::functions::list` result: a JSON array, or an object with `functions`
    (or `items`); each item a string or an object with `function_id` | `id` | `name`. Duplicates
    keep their first occurrence."""
    if isinstance(result, Mapping):
        items = result.get("functions")
        if items is None:
            items = result.get("items")
    else:
        items = result
    if not isinstance(items, list):
        raise CatalogFetchError("engine::functions::list returned no function array")
    ids: dict[str, None] = {}
    for item in items:
        function_id = _item_id(item)
        if function_id is not None:
            ids.setdefault(function_id, None)
    return list(ids)


def _info_entries(result: Any) -> list[Mapping[str, Any]]:
    if isinstance(result, Mapping):
        items = result.get("functions")
        if items is None:
            items = result.get("items")
    else:
        items = result
    return [item for item in items if isinstance(item, Mapping)] if isinstance(items, list) else []


def entry_tool(function_id: str, entry: Mapping[str, Any]) -> Tool | None:
    """The canonical tool of one info entry; None when it carries an error or is internal."""
    if "error" in entry or is_internal(entry.get("metadata")):
        return None
    parameters = None
    for key in ("parameters", "request_format", "request_schema"):
        if entry.get(key) is not None:
            parameters = entry[key]
            break
    return tool_from_schema(function_id, entry.get("description"), parameters or {"type": "object"})


async def fetch_corpus(call: Caller) -> Corpus:
    """Fetch and build the catalog corpus; raise CatalogFetchError on failure."""
    try:
        listed = await call("engine::functions::list", {"include_internal": True},
                            timeout=CALL_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - any transport or engine failure
        raise CatalogFetchError(f"engine::functions::list failed: {exc}") from exc
    raw_ids = listed_ids(listed)
    wanted = [fid for fid in raw_ids if not is_excluded(fid)]
    chunks = [wanted[i:i + INFO_CHUNK] for i in range(0, len(wanted), INFO_CHUNK)]
    pool: dict[str, Mapping[str, Any]] = {}

    async def fetch_chunk(chunk: list[str]) -> None:
        try:
            result = await call("engine::functions::info", {"function_ids": chunk},
                                timeout=CALL_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - a failed chunk only drops its functions
            log.warning("engine::functions::info chunk of %d failed: %s", len(chunk), exc)
            return
        for entry in _info_entries(result):
            entry_id = _item_id(entry)
            if entry_id is not None:
                pool.setdefault(entry_id, entry)

    async with anyio.create_task_group() as group:
        for chunk in chunks:
            group.start_soon(fetch_chunk, chunk)

    tools = []
    for function_id in wanted:
        entry = pool.get(function_id)
        if entry is None:
            continue
        tool = entry_tool(function_id, entry)
        if tool is not None:
            tools.append(tool)
    corpus = Corpus.build(tools, raw_ids)
    described_internal = any(is_internal(entry.get("metadata")) for entry in pool.values())
    if wanted and not corpus.tools and not described_internal:
        raise CatalogFetchError(
            f"engine listed {len(wanted)} functions but none could be described"
        )
    return corpus
