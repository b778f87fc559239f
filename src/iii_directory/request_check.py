"""Checking a request against its published JSON Schema without the pydantic model
(`iii-directory call` of a file-backed function, docs/startup.md).

The request schemas (`data/schemas.json`, generated from the request models) use a small subset
of draft-07 for the functions this serves: an object of `properties` with `required` names;
each property a `type` (`string`, `boolean`, `integer`, `number`, `array` of such `items`),
optionally nullable (`anyOf` of one type and `{"type": "null"}`), with `maxLength` /
`minLength`, `minimum` / `maximum` and a `default`. The rules are the request models' (strict
JSON types, unknown keys ignored, docs/rules/protocol.md §8), and a bad request gets the
model's own sentence (`models.describe_validation_error`): the first bad field in declaration
order, `invalid request: field "limit": expected an integer`.

Two rules of the models are not in the schema, so a caller names them: `trimmed` fields are
optional text (trimmed, a blank one counts as absent: `models.OptionalText`), and
`unchecked_lengths` fields publish a `maxLength` the model does not enforce (ids and names, whose
own rule words the error: `content.ids`). `supported(schema)` says whether every keyword of a
schema is one this module knows.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from .errors import DirectoryError

_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "string": ((str,), "expected a string"),
    "boolean": ((bool,), "expected a boolean"),
    "integer": ((int,), "expected an integer"),
    "number": ((int, float), "expected a number"),
    "array": ((list,), "expected an array"),
}
_KNOWN_PROPERTY_KEYS = frozenset({"type", "anyOf", "default", "description", "maxLength", "minLength",
                                  "minimum", "maximum", "items", "format", "examples"})
_KNOWN_OBJECT_KEYS = frozenset({"$schema", "type", "properties", "required", "description"})


def _branch(prop: Mapping[str, Any]) -> tuple[Mapping[str, Any], bool]:
    """The property's one typed schema and whether `null` is allowed too."""
    branches = prop.get("anyOf")
    if branches is None:
        return prop, False
    typed = [b for b in branches if b != {"type": "null"}]
    return typed[0], len(typed) < len(branches)


def _plain_type(schema: Mapping[str, Any]) -> bool:
    return (set(schema) <= _KNOWN_PROPERTY_KEYS and schema.get("type") in _TYPES and "anyOf" not in schema
            and (schema.get("type") != "array" or _plain_type(schema.get("items", {"type": None}))))


def supported(schema: Mapping[str, Any]) -> bool:
    """Whether `check` knows every keyword `schema` uses."""
    if not set(schema) <= _KNOWN_OBJECT_KEYS or schema.get("type") != "object":
        return False
    for prop in schema.get("properties", {}).values():
        if not set(prop) <= _KNOWN_PROPERTY_KEYS:
            return False
        branches = prop.get("anyOf")
        if branches is not None:
            typed = [b for b in branches if b != {"type": "null"}]
            if len(typed) != 1 or len(branches) > 2 or not _plain_type(typed[0]):
                return False
            if "type" in prop:
                return False
        elif not _plain_type(prop):
            return False
    return True


def _problem(schema: Mapping[str, Any], value: Any, check_length: bool) -> tuple[str, str] | None:
    """(location suffix, words) of the first problem of `value` against one typed schema."""
    kind = schema["type"]
    types, words = _TYPES[kind]
    if not isinstance(value, types) or (kind in ("integer", "number") and isinstance(value, bool)):
        return "", words
    if kind == "string":
        if check_length and "maxLength" in schema and len(value) > schema["maxLength"]:
            return "", f"longer than {schema['maxLength']} characters"
        if "minLength" in schema and len(value) < schema["minLength"]:
            count = schema["minLength"]
            return "", f"String should have at least {count} character{'' if count == 1 else 's'}"
    elif kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            return "", f"Input should be greater than or equal to {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return "", f"Input should be less than or equal to {schema['maximum']}"
    elif kind == "array":
        for index, item in enumerate(value):
            found = _problem(schema["items"], item, check_length)
            if found is not None:
                return f".{index}{found[0]}", found[1]
    return None


def check(schema: Mapping[str, Any], data: Any, *, trimmed: Collection[str] = (),
          unchecked_lengths: Collection[str] = ()) -> dict[str, Any]:
    """The request as a dict of every declared field (absent ones at their default), or a
    DirectoryError worded as the model's (`models.parse_request`). `null` counts as `{}`."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DirectoryError.plain("invalid request: expected a JSON object")
    required = schema.get("required", ())
    out: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if name not in data:
            if name in required:
                raise DirectoryError.plain(f'invalid request: field "{name}": is required')
            out[name] = prop.get("default")
            continue
        value = data[name]
        typed, nullable = _branch(prop)
        if value is None and nullable:
            out[name] = None
            continue
        found = _problem(typed, value, name not in unchecked_lengths)
        if found is not None:
            raise DirectoryError.plain(f'invalid request: field "{name}{found[0]}": {found[1]}')
        if name in trimmed and isinstance(value, str):
            value = value.strip() or None
        out[name] = value
    return out
