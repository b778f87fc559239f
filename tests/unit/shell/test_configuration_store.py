"""The test engine's configuration worker (protocol.md §10) and its JSON Schema checker."""

from __future__ import annotations

from typing import Any

import pytest

from iii_directory.config import config_schema
from iii_directory.protocol.errors import EngineCallError
from iii_directory.testing.configuration import ConfigurationStore, event_matches, expand
from iii_directory.testing.schema_check import first_error

SCHEMA = {"type": "object", "properties": {
    "port": {"type": "integer", "minimum": 1}, "on": {"type": "boolean"}, "name": {"type": "string"},
    "ratio": {"anyOf": [{"type": "number"}, {"type": "null"}]}, "mode": {"enum": ["a", "b"]},
}}


def store(env: dict[str, str] | None = None) -> ConfigurationStore:
    return ConfigurationStore(env or {})


def code_of(fn: Any, *args: Any) -> str:
    with pytest.raises(EngineCallError) as caught:
        fn(*args)
    return caught.value.code


def test_register_get_set_list_schema_and_events() -> None:
    s = store()
    entry, events = s.register({"id": "svc", "name": "Svc", "description": "d", "schema": SCHEMA,
                                "initial_value": {"port": 80}})
    assert entry == {"id": "svc", "name": "Svc", "description": "d", "schema": SCHEMA, "value": {"port": 80}}
    assert [e["event_type"] for e in events] == ["configuration:registered"]
    assert events[0]["old_value"] is None and events[0]["new_value"] == {"port": 80}
    assert "metadata" not in events[0]
    assert s.get({"id": "svc"}) == {"id": "svc", "value": {"port": 80}}
    result, events = s.set({"id": "svc", "value": {"port": 81}})
    assert result == {"old_value": {"port": 80}, "new_value": {"port": 81}}
    assert events[0]["event_type"] == "configuration:updated"
    assert s.list() == {"configurations": [{"id": "svc", "name": "Svc", "description": "d", "schema": SCHEMA}]}
    assert s.schema({"id": "svc"})["schema"] == SCHEMA


def test_reregister_keeps_value_unless_initial_value_given() -> None:
    s = store()
    s.register({"id": "svc", "name": "n", "description": "", "schema": SCHEMA, "initial_value": {"port": 1}})
    _entry, events = s.register({"id": "svc", "name": "n2", "description": "", "schema": SCHEMA})
    assert s.get({"id": "svc"})["value"] == {"port": 1}
    assert events[0]["event_type"] == "configuration:updated"
    s.register({"id": "svc", "name": "n2", "description": "", "schema": SCHEMA, "initial_value": {"port": 2}})
    assert s.get({"id": "svc"})["value"] == {"port": 2}


def test_new_entry_without_initial_value_stores_null() -> None:
    s = store()
    s.register({"id": "svc", "name": "n", "description": "", "schema": SCHEMA})
    assert s.get({"id": "svc"}) == {"id": "svc", "value": None}


def test_error_codes() -> None:
    s = store()
    assert code_of(s.get, {"id": "Bad Id"}) == "INVALID_ID"
    assert code_of(s.get, {"id": "missing"}) == "NOT_FOUND"
    assert code_of(s.set, {"id": "missing", "value": {}}) == "NOT_REGISTERED"
    assert code_of(s.schema, {"id": "missing"}) == "NOT_FOUND"
    assert code_of(s.register, {"id": "svc", "schema": SCHEMA, "initial_value": {"port": 0}}) == "SCHEMA_INVALID"
    s.put("seeded", {"x": 1})
    assert code_of(s.set, {"id": "seeded", "value": {}}) == "SCHEMA_UNAVAILABLE"
    s.register({"id": "svc", "name": "n", "description": "", "schema": SCHEMA, "initial_value": {}})
    assert code_of(s.set, {"id": "svc", "value": {"mode": "c"}}) == "SCHEMA_INVALID"


def test_env_expansion_with_defaults_and_coercion() -> None:
    s = store({"PORT": "8080", "ON": "true", "NAME": "svc"})
    raw = {"port": "${PORT}", "on": "${ON}", "name": "x-${NAME}-${MISSING:dflt}", "ratio": "${R:null}"}
    s.register({"id": "svc", "name": "n", "description": "", "schema": SCHEMA, "initial_value": raw})
    assert s.get({"id": "svc"})["value"] == {"port": 8080, "on": True, "name": "x-svc-dflt", "ratio": None}
    assert s.get({"id": "svc", "raw": True})["value"] == raw


def test_unset_variable_without_default_fails_expansion() -> None:
    with pytest.raises(EngineCallError) as caught:
        expand({"name": "${NOPE}"}, SCHEMA, {})
    assert caught.value.code == "EXPAND_FAILED" and "NOPE" in caught.value.message


def test_get_revalidates_after_expansion() -> None:
    env: dict[str, str] = {"PORT": "80"}
    s = store(env)
    s.register({"id": "svc", "name": "n", "description": "", "schema": SCHEMA, "initial_value": {"port": "${PORT}"}})
    env["PORT"] = "0"
    assert code_of(s.get, {"id": "svc"}) == "SCHEMA_INVALID"


def test_event_filtering() -> None:
    event = {"id": "iii-directory", "event_type": "configuration:updated"}
    assert event_matches({"configuration_id": "iii-directory", "event_types": ["configuration:updated"]}, event)
    assert event_matches({}, event) and event_matches(None, event)
    assert not event_matches({"configuration_id": "other"}, event)
    assert not event_matches({"event_types": ["configuration:registered"]}, event)


def test_the_worker_schema_validates_its_defaults_and_catches_bad_values() -> None:
    schema = config_schema()
    assert first_error(schema["example"], schema) is None
    assert first_error({**schema["example"], "download_timeout_ms": 0}, schema) is not None
    assert first_error({**schema["example"], "function_search_mode": "psychic"}, schema) is not None
    assert first_error({**schema["example"], "registry_web_url": None, "unknown_key": 1}, schema) is None


@pytest.mark.parametrize("value, schema, ok", [
    (1, {"type": "integer"}, True), (1.0, {"type": "integer"}, True), (True, {"type": "integer"}, False),
    ("x", {"type": ["string", "null"]}, True), (None, {"type": ["string", "null"]}, True),
    ([1, "a"], {"type": "array", "items": {"type": "integer"}}, False),
    ({"a": 1}, {"type": "object", "required": ["b"]}, False),
    ({"a": 1}, {"type": "object", "additionalProperties": False}, False),
    ("abc", {"type": "string", "maxLength": 2}, False), ("abc", {"pattern": "^a"}, True),
    (5, {"exclusiveMaximum": 5}, False), (3, {"oneOf": [{"type": "integer"}, {"type": "number"}]}, False),
    (3, {"allOf": [{"minimum": 1}, {"maximum": 2}]}, False),
    ({"x": 1}, {"definitions": {"X": {"type": "integer"}}, "properties": {"x": {"$ref": "#/definitions/X"}}}, True),
    ("s", True, True), ("s", False, False), (2, {"const": 2}, True),
])
def test_schema_check_keywords(value: Any, schema: Any, ok: bool) -> None:
    assert (first_error(value, schema) is None) is ok
