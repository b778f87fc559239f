"""The engine port: what handlers may ask of the engine (docs/rules/design.md §3).

Two adapters implement it: the live WebSocket connection (`iii_directory.worker`) and
`StandaloneEngine`, backed by a catalog file, for `iii-directory call` and the bench.
Handlers never see the socket; they call `ctx.call(...)` / `ctx.emit(...)`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from .errors import DirectoryError
from .protocol.errors import EngineCallError

log = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT_S = 30.0

__all__ = ["DEFAULT_CALL_TIMEOUT_S", "EngineCallError", "EnginePort", "StandaloneEngine", "normalize_record"]


class EnginePort(Protocol):
    standalone: bool

    async def call(
        self,
        function_id: str,
        data: Any,
        *,
        timeout: float = DEFAULT_CALL_TIMEOUT_S,
        namespace: str | None = None,
        baggage: str | None = None,
        traceparent: str | None = None,
    ) -> Any:
        """Invoke a function and return its result; raise EngineCallError on failure."""
        ...

    async def fire(
        self,
        function_id: str,
        data: Any,
        *,
        namespace: str | None = None,
        baggage: str | None = None,
        traceparent: str | None = None,
    ) -> None:
        """Fire-and-forget (void) invocation."""
        ...

    def emit(self, trigger_type: str, payload: Mapping[str, Any]) -> None:
        """Fan an event of a trigger type this worker provides out to its subscribers."""
        ...

    async def set_binding(self, key: str, trigger_type: str, function_id: str,
                          config: Mapping[str, Any], active: bool) -> None:
        """Bind (active) or unbind a subscription identified by `key`."""
        ...


def normalize_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A catalog record (`function_id` or `name`, `description`, `request_schema` or
    `parameters`, optional `metadata`) as an engine FunctionDetail."""
    function_id = record.get("function_id") or record.get("name")
    if not isinstance(function_id, str) or not function_id:
        raise ValueError("catalog record without function_id/name")
    worker = record.get("worker_name") or function_id.split("::", 1)[0]
    detail: dict[str, Any] = {
        "function_id": function_id,
        "namespace": record.get("namespace") or "default",
        "worker_name": worker,
    }
    if record.get("description") is not None:
        detail["description"] = record["description"]
    schema = record.get("request_schema", record.get("parameters"))
    if schema is not None:
        detail["request_schema"] = schema
    if record.get("response_schema") is not None:
        detail["response_schema"] = record["response_schema"]
    if record.get("metadata") is not None:
        detail["metadata"] = record["metadata"]
    detail["registered_triggers"] = list(record.get("registered_triggers") or [])
    return detail


class StandaloneEngine:
    """An engine stand-in with no socket: serves `engine::functions::list/info` from a catalog,
    records emitted events, and fails every other call clearly."""

    standalone = True

    def __init__(self, catalog: Iterable[Mapping[str, Any]] = ()) -> None:
        self._functions: dict[str, dict[str, Any]] = {}
        for record in catalog:
            detail = normalize_record(record)
            self._functions[detail["function_id"]] = detail
        self.emitted: list[tuple[str, dict[str, Any]]] = []
        self.bindings: dict[str, tuple[str, str, dict[str, Any]]] = {}

    def add_functions(self, details: Iterable[Mapping[str, Any]]) -> None:
        for record in details:
            detail = normalize_record(record)
            self._functions.setdefault(detail["function_id"], detail)

    @property
    def functions(self) -> dict[str, dict[str, Any]]:
        return self._functions

    async def call(self, function_id: str, data: Any, **_: Any) -> Any:
        data = data if isinstance(data, dict) else {}
        if function_id == "engine::functions::list":
            return {"functions": self._list(data)}
        if function_id == "engine::functions::info":
            return self._info(data)
        raise EngineCallError(
            "function_not_found",
            f"Function {function_id} not found: no engine is connected (standalone mode)",
        )

    async def fire(self, function_id: str, data: Any, **_: Any) -> None:
        log.debug("standalone: dropped void call to %s", function_id)

    def emit(self, trigger_type: str, payload: Mapping[str, Any]) -> None:
        self.emitted.append((trigger_type, dict(payload)))

    async def set_binding(self, key: str, trigger_type: str, function_id: str,
                          config: Mapping[str, Any], active: bool) -> None:
        if active:
            self.bindings[key] = (trigger_type, function_id, dict(config))
        else:
            self.bindings.pop(key, None)

    def _summary(self, detail: Mapping[str, Any]) -> dict[str, Any]:
        row = {k: detail[k] for k in ("function_id", "namespace", "worker_name") if k in detail}
        for key in ("description", "metadata"):
            if key in detail:
                row[key] = detail[key]
        return row

    def _list(self, data: Mapping[str, Any]) -> list[dict[str, Any]]:
        include_internal = bool(data.get("include_internal"))
        prefix = data.get("prefix") or ""
        search = (data.get("search") or "").lower()
        rows = []
        for fid in sorted(self._functions):
            detail = self._functions[fid]
            internal = fid.startswith("engine::") or (detail.get("metadata") or {}).get("internal") is True
            if internal and not include_internal:
                continue
            if prefix and not fid.startswith(prefix):
                continue
            if search and search not in fid.lower() and search not in (detail.get("description") or "").lower():
                continue
            rows.append(self._summary(detail))
        return rows

    def _info(self, data: Mapping[str, Any]) -> Any:
        single = data.get("function_id")
        batch = data.get("function_ids")
        if (single is None) == (batch is None):
            raise EngineCallError("INVALID_ARGUMENTS", "exactly one of function_id or function_ids is required")
        if single is not None:
            if single not in self._functions:
                raise EngineCallError("NOT_FOUND", f"Function '{single}' is not registered.")
            return dict(self._functions[single])
        if not isinstance(batch, list) or not batch or len(batch) > 32:
            raise EngineCallError("INVALID_ARGUMENTS", "function_ids must hold 1 to 32 ids")
        seen: list[str] = []
        for fid in batch:
            if fid not in seen:
                seen.append(fid)
        return {
            "functions": [
                dict(self._functions[f]) if f in self._functions else {"function_id": f, "error": "not_found"}
                for f in seen
            ]
        }


def engine_error_to_directory(exc: EngineCallError) -> DirectoryError:
    return DirectoryError.plain(f"{exc.code}: {exc.message}")
