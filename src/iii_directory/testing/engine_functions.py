"""The test engine's built-in functions (docs/rules/protocol.md §9, §10): `engine::functions::*`,
`engine::triggers::*`, `engine::registered-triggers::*`, `engine::workers::*`,
`engine::register_trigger` / `unregister_trigger`, `engine::channels::create`, and the
`configuration::*` worker; plus the engine-provided trigger types.

Listing rules: sorted by id; `engine::*` ids (except `engine::queue::*`) and functions whose
`metadata.internal` is true are hidden unless `include_internal`; with `search` rows are ranked
id-anchored match < id substring < description-only match, then by id.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.errors import EngineCallError

if TYPE_CHECKING:
    from .engine_records import (
        Binding,
        EngineHost,
        FunctionEntry,
        TriggerTypeEntry,
        WorkerConn,
    )

BuiltIn = Callable[["EngineHost", "WorkerConn | None", Any], Awaitable[Any]]

MAX_BATCH = 32
SUMMARY_CUT = 80
ENGINE_WORKER = "iii-engine-functions"

_BUILTINS: dict[str, tuple[str, BuiltIn]] = {}


def builtin(function_id: str, description: str) -> Callable[[BuiltIn], BuiltIn]:
    def wrap(fn: BuiltIn) -> BuiltIn:
        fn.__engine_builtin__ = True  # type: ignore[attr-defined]
        _BUILTINS[function_id] = (description, fn)
        return fn
    return wrap


def _args(data: Any) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise EngineCallError("INVALID_ARGUMENTS", "request must be a JSON object")
    return data


def _opt_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise EngineCallError("INVALID_ARGUMENTS", f"{key} must be a string")
    return value.strip() or None


def _hidden_id(function_id: str) -> bool:
    return function_id.startswith("engine::") and not function_id.startswith("engine::queue::")


def summary(entry: FunctionEntry) -> dict[str, Any]:
    """FunctionSummary `{function_id, namespace, worker_name, description?, metadata?}`."""
    row: dict[str, Any] = {"function_id": entry.id, "namespace": entry.namespace, "worker_name": entry.worker_name}
    if entry.description is not None:
        row["description"] = entry.description
    if entry.metadata is not None:
        row["metadata"] = entry.metadata
    return row


def _trigger_row(binding: Binding) -> dict[str, Any]:
    return {"id": binding.id, "trigger_type": binding.trigger_type, "config": binding.config}


def detail(engine: EngineHost, entry: FunctionEntry) -> dict[str, Any]:
    """FunctionDetail: the summary plus registered schemas (verbatim) and the bindings that
    target the function."""
    row = summary(entry)
    if entry.request_format is not None:
        row["request_schema"] = entry.request_format
    if entry.response_format is not None:
        row["response_schema"] = entry.response_format
    row["registered_triggers"] = [
        _trigger_row(b) for b in engine.bindings.values()
        if b.function_id == entry.id and (b.namespace or "default") == entry.namespace
    ]
    return row


def _rank(search: str, ident: str, description: str | None) -> int | None:
    """0 = id-anchored (the id or one of its `::` segments starts with the text), 1 = id
    substring, 2 = description-only match, None = no match."""
    needle = search.lower()
    ident_l = ident.lower()
    if ident_l.startswith(needle) or any(seg.startswith(needle) for seg in ident_l.split("::")):
        return 0
    if needle in ident_l:
        return 1
    if description and needle in description.lower():
        return 2
    return None


def _search_sorted(rows: list[tuple[str, Any, str | None]], search: str | None) -> list[Any]:
    if not search:
        return [r for _id, r, _d in sorted(rows, key=lambda t: t[0])]
    ranked = [(rank, ident, row) for ident, row, desc in rows if (rank := _rank(search, ident, desc)) is not None]
    return [row for _r, _i, row in sorted(ranked, key=lambda t: (t[0], t[1]))]


def _resolve(engine: EngineHost, table: dict[tuple[str, str], Any], ident: str, namespace: str | None,
             kind: str) -> Any:
    """Loose introspection lookup: an explicit namespace is exact; otherwise `default` wins,
    a unique other namespace resolves, several are ambiguous."""
    if namespace:
        return table.get((namespace, ident))
    if ("default", ident) in table:
        return table[("default", ident)]
    spaces = sorted(ns for ns, i in table if i == ident)
    if len(spaces) == 1:
        return table[(spaces[0], ident)]
    if len(spaces) > 1:
        raise EngineCallError("NOT_FOUND", f"{kind} '{ident}' is registered in several namespaces "
                                           f"({', '.join(spaces)}); pass namespace to choose one.")
    return None


# ---------------------------------------------------------------- functions

@builtin("engine::functions::list", "List registered functions (filters: search, prefix, worker, workers, include_internal).")
async def functions_list(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    data = _args(data)
    search, prefix, worker = _opt_str(data, "search"), _opt_str(data, "prefix"), _opt_str(data, "worker")
    workers = data.get("workers")
    if workers is not None and not (isinstance(workers, list) and all(isinstance(w, str) for w in workers)):
        raise EngineCallError("INVALID_ARGUMENTS", "workers must be an array of strings")
    include_internal = data.get("include_internal") is True
    rows = []
    for entry in engine.functions.values():
        if not include_internal and (_hidden_id(entry.id) or entry.internal):
            continue
        if prefix and not entry.id.startswith(prefix):
            continue
        if worker and entry.worker_name != worker:
            continue
        if workers and entry.worker_name not in workers:
            continue
        rows.append((f"{entry.id}\0{entry.namespace}", summary(entry), entry.description))
    if search:
        rows = [(i.split("\0")[0], r, d) for i, r, d in rows]
    return {"functions": _search_sorted(rows, search)}


@builtin("engine::functions::info", "Full detail for one function (function_id) or a batch of at most 32 (function_ids).")
async def functions_info(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    data = _args(data)
    single = data.get("function_id")
    batch = data.get("function_ids")
    namespace = _opt_str(data, "namespace")
    if (single is None) == (batch is None):
        raise EngineCallError("INVALID_ARGUMENTS", "pass exactly one of function_id or function_ids")
    if single is not None:
        if not isinstance(single, str) or not single:
            raise EngineCallError("INVALID_ARGUMENTS", "function_id must be a non-empty string")
        entry = _resolve(engine, engine.functions, single, namespace, "Function")
        if entry is None:
            raise EngineCallError("NOT_FOUND", f"Function '{single}' is not registered.")
        return detail(engine, entry)
    if not isinstance(batch, list) or not all(isinstance(f, str) for f in batch):
        raise EngineCallError("INVALID_ARGUMENTS", "function_ids must be an array of strings")
    if not batch:
        raise EngineCallError("INVALID_ARGUMENTS", "function_ids must not be empty")
    if len(batch) > MAX_BATCH:
        raise EngineCallError("INVALID_ARGUMENTS", f"function_ids holds {len(batch)} ids; at most {MAX_BATCH} are allowed")
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for function_id in batch:
        if function_id in seen:
            continue
        seen.add(function_id)
        try:
            entry = _resolve(engine, engine.functions, function_id, namespace, "Function")
        except EngineCallError:
            entry = None
        out.append(detail(engine, entry) if entry is not None else {"function_id": function_id, "error": "not_found"})
    return {"functions": out}


# ------------------------------------------------------------ trigger types

def _type_detail(engine: EngineHost, entry: TriggerTypeEntry) -> dict[str, Any]:
    row: dict[str, Any] = {"id": entry.id, "namespace": entry.namespace, "worker_name": entry.worker_name,
                           "description": entry.description}
    if entry.trigger_request_format is not None:
        row["configuration_schema"] = entry.trigger_request_format
    if entry.call_request_format is not None:
        row["request_schema"] = entry.call_request_format
    row["instance_count"] = sum(1 for b in engine.bindings.values() if b.provider is entry)
    return row


@builtin("engine::triggers::list", "List trigger types (filters: search, prefix, worker, include_internal).")
async def triggers_list(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    data = _args(data)
    search, prefix, worker = _opt_str(data, "search"), _opt_str(data, "prefix"), _opt_str(data, "worker")
    include_internal = data.get("include_internal") is True
    rows = []
    for entry in engine.trigger_types.values():
        if not include_internal and entry.id.startswith("engine::"):
            continue
        if prefix and not entry.id.startswith(prefix):
            continue
        if worker and entry.worker_name != worker:
            continue
        rows.append((entry.id, {"id": entry.id, "namespace": entry.namespace, "worker_name": entry.worker_name,
                                "description": entry.description}, entry.description))
    return {"triggers": _search_sorted(rows, search)}


@builtin("engine::triggers::info", "Detail of one trigger type.")
async def triggers_info(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    data = _args(data)
    ident = _opt_str(data, "id")
    namespace = _opt_str(data, "namespace")
    if not ident:
        raise EngineCallError("INVALID_ARGUMENTS", "id is required")
    entry = _resolve(engine, engine.trigger_types, ident, namespace, "Trigger type")
    if entry is None:
        raise EngineCallError("NOT_FOUND", f"Trigger type '{ident}' is not registered in namespace '{namespace or 'default'}'.")
    return _type_detail(engine, entry)


# ---------------------------------------------------------------- bindings

def config_summary(config: Any) -> str:
    """Compact JSON of a binding's config, cut to 80 characters plus `…` when longer."""
    text = json.dumps(config, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= SUMMARY_CUT else text[:SUMMARY_CUT] + "…"


def _binding_worker(engine: EngineHost, binding: Binding) -> str:
    entry = engine.functions.get((binding.namespace or "default", binding.function_id))
    return entry.worker_name if entry is not None else binding.function_id.split("::", 1)[0]


def _binding_row(engine: EngineHost, binding: Binding) -> dict[str, Any]:
    return {"id": binding.id, "trigger_type": binding.trigger_type, "function_id": binding.function_id,
            "worker_name": _binding_worker(engine, binding), "config": binding.config,
            "config_summary": config_summary(binding.config)}


@builtin("engine::registered-triggers::list", "List trigger bindings (filters: search, trigger_type, function_id, worker, include_internal).")
async def registered_list(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    data = _args(data)
    search = _opt_str(data, "search")
    trigger_type, function_id = _opt_str(data, "trigger_type"), _opt_str(data, "function_id")
    worker = _opt_str(data, "worker")
    include_internal = data.get("include_internal") is True
    rows = []
    for binding in engine.bindings.values():
        if not include_internal and binding.function_id.startswith("engine::"):
            continue
        if trigger_type and binding.trigger_type != trigger_type:
            continue
        if function_id and binding.function_id != function_id:
            continue
        row = _binding_row(engine, binding)
        if worker and row["worker_name"] != worker:
            continue
        if search:
            hay = " ".join([binding.id, binding.trigger_type, binding.function_id, row["config_summary"]]).lower()
            if search.lower() not in hay:
                continue
        rows.append(row)
    rows.sort(key=lambda r: (r["trigger_type"], r["function_id"], r["id"]))
    return {"registered_triggers": rows}


@builtin("engine::registered-triggers::info", "Detail of one trigger binding.")
async def registered_info(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    data = _args(data)
    ident = _opt_str(data, "id")
    if not ident:
        raise EngineCallError("INVALID_ARGUMENTS", "id is required")
    binding = engine.bindings.get(ident)
    if binding is None:
        raise EngineCallError("NOT_FOUND", f"Registered trigger '{ident}' is not registered.")
    row = _binding_row(engine, binding)
    row.pop("config_summary")
    if binding.metadata is not None:
        row["metadata"] = binding.metadata
    row["trigger"] = _type_detail(engine, binding.provider) if binding.provider is not None else None
    entry = engine.functions.get((binding.namespace or "default", binding.function_id))
    row["function"] = detail(engine, entry) if entry is not None else None
    return row


@builtin("engine::register_trigger", "Register a durable trigger binding (once: true makes it one-shot).")
async def register_trigger(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    data = _args(data)
    for key in ("trigger_type", "function_id"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise EngineCallError("INVALID_ARGUMENTS", f"{key} is required")
    binding = await engine.register_durable_binding({
        "trigger_type": data["trigger_type"], "function_id": data["function_id"],
        "config": data.get("config") if data.get("config") is not None else {},
        "metadata": data.get("metadata"), "trigger_namespace": data.get("trigger_namespace"),
        "once": data.get("once") is True,
    })
    return {"id": binding.id}


@builtin("engine::unregister_trigger", "Remove a trigger binding by id.")
async def unregister_trigger(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    data = _args(data)
    ident = data.get("id")
    if not isinstance(ident, str) or not ident:
        raise EngineCallError("INVALID_ARGUMENTS", "id is required")
    return {"removed": await engine.remove_binding(ident)}


# ----------------------------------------------------------------- workers

def _worker_status(conn: WorkerConn) -> str:
    if conn.closed:
        return "disconnected"
    return "busy" if conn.active_invocations > 0 else "connected"


def _worker_row(conn: WorkerConn) -> dict[str, Any]:
    info = conn.info
    return {
        "name": conn.name or "", "description": info.get("description") or "", "version": info.get("version"),
        "id": conn.worker_id, "namespace": conn.namespace or "default", "runtime": info.get("runtime"),
        "os": info.get("os"), "status": _worker_status(conn),
        "function_count": len(conn.functions), "connected_at_ms": conn.connected_at_ms,
        "active_invocations": conn.active_invocations, "isolation": info.get("isolation"),
        "ip_address": conn.ip_address,
    }


def _engine_rows(engine: EngineHost) -> list[dict[str, Any]]:
    groups: dict[str, int] = {}
    for entry in engine.functions.values():
        if entry.owner is None:
            groups[entry.worker_name] = groups.get(entry.worker_name, 0) + 1
    return [{
        "name": name, "description": "built-in" if name == ENGINE_WORKER else "in-process test peer",
        "version": None, "id": name, "namespace": "default", "runtime": "engine", "os": sys.platform,
        "status": "available", "function_count": count, "connected_at_ms": 0, "active_invocations": 0,
        "isolation": "in-process", "ip_address": None,
    } for name, count in groups.items()]


@builtin("engine::workers::list", "List connected workers (filters: search, runtime, status).")
async def workers_list(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    data = _args(data)
    search, runtime, status = _opt_str(data, "search"), _opt_str(data, "runtime"), _opt_str(data, "status")
    rows = [_worker_row(c) for c in engine.connections.values() if not c.closed and c.pid is not None]
    rows += _engine_rows(engine)
    if runtime:
        rows = [r for r in rows if r["runtime"] == runtime]
    if status:
        rows = [r for r in rows if r["status"] == status]
    if search:
        rows = [r for r in rows if search.lower() in f"{r['name']} {r['description']}".lower()]
    rows.sort(key=lambda r: (r["name"], r["id"]))
    return {"workers": rows}


@builtin("engine::workers::info", "Detail of one worker by name.")
async def workers_info(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    data = _args(data)
    name = _opt_str(data, "name")
    namespace = _opt_str(data, "namespace")
    if not name:
        raise EngineCallError("INVALID_ARGUMENTS", "name is required")
    matches = [c for c in engine.connections.values() if not c.closed and c.name == name
               and (namespace is None or c.namespace == namespace)]
    if len(matches) > 1 and namespace is None:
        default = [c for c in matches if c.namespace == "default"]
        if len(default) == 1:
            matches = default
        else:
            raise EngineCallError("NOT_FOUND", f"Worker '{name}' is connected in several namespaces; pass namespace.")
    if matches:
        conn = matches[0]
        row = _worker_row(conn)
        if conn.pid is not None:
            row["pid"] = conn.pid
        row["internal"] = False
        functions = [engine.functions[k] for k in sorted(conn.functions, key=lambda k: k[1]) if k in engine.functions]
        types = [engine.trigger_types[k] for k in sorted(conn.trigger_types, key=lambda k: k[1]) if k in engine.trigger_types]
    else:
        rows = [r for r in _engine_rows(engine) if r["name"] == name]
        if not rows:
            raise EngineCallError("NOT_FOUND", f"Worker '{name}' is not connected.")
        row = {**rows[0], "internal": True}
        functions = sorted((e for e in engine.functions.values() if e.owner is None and e.worker_name == name),
                           key=lambda e: e.id)
        types = sorted((t for t in engine.trigger_types.values() if t.owner is None and t.worker_name == name),
                       key=lambda t: t.id)
    ids = {f.id for f in functions}
    return {
        "worker": row,
        "functions": [summary(f) for f in functions],
        "trigger_types": [{"id": t.id, "namespace": t.namespace, "worker_name": t.worker_name,
                           "description": t.description} for t in types],
        "registered_triggers": [_binding_row(engine, b) for b in engine.bindings.values() if b.function_id in ids],
    }


@builtin("engine::workers::register", "Report a worker's name, pid and namespace (void call).")
async def workers_register(engine: EngineHost, caller: WorkerConn | None, data: Any) -> Any:
    # Worker connections are handled inline by the engine (it must drain their buffer in order);
    # this entry only serves callers without a connection.
    if caller is None:
        raise EngineCallError("INVALID_ARGUMENTS", "engine::workers::register needs a worker connection")
    error = await engine._register_worker(caller, data)
    if error is not None:
        raise error
    return None


@builtin("engine::channels::create", "Create a streaming channel pair.")
async def channels_create(_engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    channel_id = str(uuid.uuid4())
    key = str(uuid.uuid4())
    return {"writer": {"channel_id": channel_id, "access_key": key, "direction": "write"},
            "reader": {"channel_id": channel_id, "access_key": key, "direction": "read"}}


# ----------------------------------------------------------- configuration

@builtin("configuration::register", "Register (or re-register) a configuration entry with its schema.")
async def configuration_register(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    result, events = engine.configuration.register(_args(data))
    engine._deliver_config_events(events)
    return result


@builtin("configuration::get", "Read a configuration value (env-expanded unless raw).")
async def configuration_get(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    return engine.configuration.get(_args(data))


@builtin("configuration::set", "Replace a configuration value (validated against its schema).")
async def configuration_set(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    result, events = engine.configuration.set(_args(data))
    engine._deliver_config_events(events)
    return result


@builtin("configuration::list", "List configuration entries (never values).")
async def configuration_list(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    return engine.configuration.list(data)


@builtin("configuration::schema", "The schema of one configuration entry.")
async def configuration_schema(engine: EngineHost, _caller: WorkerConn | None, data: Any) -> Any:
    return engine.configuration.schema(_args(data))


ENGINE_TRIGGER_TYPES: tuple[tuple[str, str], ...] = (
    ("engine::functions-available", "Fires with the full function list when the set of functions changes."),
    ("engine::workers-available", "Fires when a worker connects, updates its metadata or disconnects."),
    ("configuration", "Fires on configuration:registered / configuration:updated / configuration:deleted."),
)


def install(engine: EngineHost) -> None:
    """Add the built-in functions and engine-provided trigger types to a fresh engine."""
    from .engine_records import FunctionEntry, TriggerTypeEntry

    for function_id, (description, fn) in _BUILTINS.items():
        engine.functions[("default", function_id)] = FunctionEntry(
            id=function_id, namespace="default", description=description, local=fn, local_worker=ENGINE_WORKER,
        )
    for trigger_type, description in ENGINE_TRIGGER_TYPES:
        engine.trigger_types[("default", trigger_type)] = TriggerTypeEntry(
            id=trigger_type, namespace="default", description=description, local_worker=ENGINE_WORKER,
        )
