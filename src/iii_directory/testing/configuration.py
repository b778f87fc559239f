"""The test engine's built-in configuration worker (docs/rules/protocol.md §10), in memory.

Values are stored raw; reads expand `${VAR}` / `${VAR:default}` from the environment, coerce a
string that was exactly one placeholder to the type the schema asks for, and re-validate.
Mutations return the `configuration` trigger events they cause; the engine delivers them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..protocol.errors import EngineCallError
from .schema_check import child_schema, first_error, types_at

ID_RULE = re.compile(r"^[a-z0-9_-]{1,64}\Z")
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}")

REGISTERED = "configuration:registered"
UPDATED = "configuration:updated"
DELETED = "configuration:deleted"


@dataclass
class ConfigEntry:
    id: str
    name: str
    description: str
    schema: Any
    value: Any
    metadata: Any = None
    schema_registered: bool = False
    """True once `configuration::register` supplied the schema since this engine started."""

    def public(self, *, with_value: bool) -> dict[str, Any]:
        row: dict[str, Any] = {"id": self.id, "name": self.name, "description": self.description,
                               "schema": self.schema}
        if with_value:
            row["value"] = self.value
        if self.metadata is not None:
            row["metadata"] = self.metadata
        return row


def expand(value: Any, schema: Any, env: Mapping[str, str], root: Any = None) -> Any:
    """Replace `${VAR}` / `${VAR:default}` in every string; a string that was exactly one
    placeholder is coerced to the schema's integer / number / boolean / null type when it parses
    as one. An unset variable without a default raises `EXPAND_FAILED`."""
    root = schema if root is None else root
    if isinstance(value, dict):
        return {k: expand(v, child_schema(schema, k, root), env, root) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v, child_schema(schema, i, root), env, root) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise EngineCallError("EXPAND_FAILED", f"environment variable '{name}' is not set and has no default")

    whole = _PLACEHOLDER.fullmatch(value) is not None
    text = _PLACEHOLDER.sub(substitute, value)
    if whole:
        return _coerce(text, types_at(schema, root))
    return text


def _coerce(text: str, kinds: set[str]) -> Any:
    if not kinds or "string" in kinds:
        return text
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    if isinstance(parsed, bool):
        return parsed if "boolean" in kinds else text
    if parsed is None:
        return None if "null" in kinds else text
    if isinstance(parsed, int) and ({"integer", "number"} & kinds):
        return parsed
    if isinstance(parsed, float) and "number" in kinds:
        return parsed
    return text


class ConfigurationStore:
    """`configuration::register / get / set / list / schema` over an in-memory adapter."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = env
        self.entries: dict[str, ConfigEntry] = {}

    @property
    def env(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    # ------------------------------------------------------------ helpers

    @staticmethod
    def _check_id(data: Any) -> str:
        config_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(config_id, str) or not ID_RULE.match(config_id):
            raise EngineCallError("INVALID_ID", f"invalid configuration id {config_id!r}: expected [a-z0-9_-]{{1,64}}")
        return config_id

    def _expanded(self, entry: ConfigEntry, raw: Any) -> Any:
        if raw is None:
            return None
        value = expand(raw, entry.schema, self.env)
        if entry.schema not in (None, True, {}):
            error = first_error(value, entry.schema)
            if error:
                raise EngineCallError("SCHEMA_INVALID", f"configuration '{entry.id}' {error}")
        return value

    def _lenient(self, entry: ConfigEntry, raw: Any) -> Any:
        try:
            return expand(raw, entry.schema, self.env)
        except EngineCallError:
            return raw

    def event(self, entry: ConfigEntry, kind: str, old_raw: Any, new_raw: Any) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "type": "configuration", "event_type": kind, "id": entry.id, "name": entry.name,
            "description": entry.description, "schema": entry.schema,
            "old_value": None if old_raw is None else self._lenient(entry, old_raw),
            "new_value": None if new_raw is None else self._lenient(entry, new_raw),
        }
        if entry.metadata is not None:
            payload["metadata"] = entry.metadata
        return payload

    # ---------------------------------------------------------- functions

    def register(self, data: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        config_id = self._check_id(data)
        schema = data.get("schema", True)
        if not isinstance(schema, (dict, bool)):
            raise EngineCallError("SCHEMA_INVALID", "schema must be a JSON Schema object")
        existing = self.entries.get(config_id)
        entry = ConfigEntry(
            id=config_id,
            name=str(data.get("name") or config_id),
            description=str(data.get("description") or ""),
            schema=schema,
            value=existing.value if existing else None,
            metadata=data.get("metadata"),
            schema_registered=True,
        )
        if "initial_value" in data:
            self._expanded(entry, data["initial_value"])  # validates; raises SCHEMA_INVALID
            entry.value = data["initial_value"]
        old = existing.value if existing else None
        self.entries[config_id] = entry
        # A value seeded from outside before any register counts as "registered" now.
        kind = UPDATED if existing is not None and existing.schema_registered else REGISTERED
        return entry.public(with_value=True), [self.event(entry, kind, old if kind == UPDATED else None, entry.value)]

    def get(self, data: Any) -> dict[str, Any]:
        config_id = self._check_id(data)
        entry = self.entries.get(config_id)
        if entry is None:
            raise EngineCallError("NOT_FOUND", f"configuration '{config_id}' not found")
        if data.get("raw") is True:
            return {"id": config_id, "value": entry.value}
        return {"id": config_id, "value": self._expanded(entry, entry.value)}

    def set(self, data: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        config_id = self._check_id(data)
        entry = self.entries.get(config_id)
        if entry is None:
            raise EngineCallError("NOT_REGISTERED", f"configuration '{config_id}' is not registered")
        if not entry.schema_registered:
            raise EngineCallError("SCHEMA_UNAVAILABLE",
                                  f"configuration '{config_id}' has no schema registered since engine boot")
        value = data.get("value")
        self._expanded(entry, value)
        return self.put(config_id, value)

    def put(self, config_id: str, value: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Store a raw value without validation (what an external edit of the file adapter
        does), creating the entry when needed; an `:updated` event once a schema is known."""
        entry = self.entries.get(config_id)
        if entry is None:
            entry = ConfigEntry(id=config_id, name=config_id, description="", schema=True, value=None)
            self.entries[config_id] = entry
        old = entry.value
        entry.value = value
        events = [self.event(entry, UPDATED, old, value)] if entry.schema_registered else []
        return {"old_value": old, "new_value": value}, events

    def delete(self, config_id: str) -> list[dict[str, Any]]:
        entry = self.entries.pop(config_id, None)
        if entry is None:
            return []
        return [self.event(entry, DELETED, entry.value, None)]

    def list(self, _data: Any = None) -> dict[str, Any]:
        return {"configurations": [self.entries[k].public(with_value=False) for k in sorted(self.entries)]}

    def schema(self, data: Any) -> dict[str, Any]:
        config_id = self._check_id(data)
        entry = self.entries.get(config_id)
        if entry is None:
            raise EngineCallError("NOT_FOUND", f"configuration '{config_id}' not found")
        return entry.public(with_value=False)


def event_matches(config: Any, event: Mapping[str, Any]) -> bool:
    """Does a `configuration` binding's config (`configuration_id`, `event_types`) select this
    event? (`condition_function_id` is checked by the engine, which can call functions.)"""
    if not isinstance(config, dict):
        return True
    wanted_id = config.get("configuration_id")
    if isinstance(wanted_id, str) and wanted_id and wanted_id != event.get("id"):
        return False
    kinds = config.get("event_types")
    if isinstance(kinds, list) and kinds and event.get("event_type") not in kinds:
        return False
    return True
