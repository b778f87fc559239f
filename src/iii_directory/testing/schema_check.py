"""A small JSON Schema checker for the test engine's configuration worker.

Covers the keywords the worker's schemas use (draft-07 / 2020-12 subset): `type` (string or
list), `enum`, `const`, `properties`, `required`, `additionalProperties`, `items`, numeric and
length bounds, `pattern`, `anyOf` / `oneOf` / `allOf`, `$ref` into `definitions` / `$defs`, and
boolean schemas. `first_error` returns one readable sentence naming the path, or `None`.
"""

from __future__ import annotations

import re
from typing import Any

_TYPE_CHECKS = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool)
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _where(path: str) -> str:
    return f"at {path}" if path else "at the top level"


def _resolve(ref: str, root: Any) -> Any:
    if not ref.startswith("#/"):
        return True
    node = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            return True
        node = node[part]
    return node


def first_error(value: Any, schema: Any, root: Any = None, path: str = "") -> str | None:
    """The first violation of `schema` by `value`, or None when it conforms."""
    root = schema if root is None else root
    if schema is True or schema is None:
        return None
    if schema is False:
        return f"{_where(path)}: no value is allowed"
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        error = first_error(value, _resolve(str(schema["$ref"]), root), root, path)
        if error:
            return error
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_TYPE_CHECKS.get(name, lambda _v: True)(value) for name in names):
            return f"{_where(path)}: expected {' or '.join(names)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{_where(path)}: {value!r} is not one of {schema['enum']!r}"
    if "const" in schema and value != schema["const"]:
        return f"{_where(path)}: expected {schema['const']!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for key, test, word in (
            ("minimum", lambda v, b: v >= b, "≥"), ("maximum", lambda v, b: v <= b, "≤"),
            ("exclusiveMinimum", lambda v, b: v > b, ">"), ("exclusiveMaximum", lambda v, b: v < b, "<"),
        ):
            bound = schema.get(key)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool) and not test(value, bound):
                return f"{_where(path)}: {value!r} must be {word} {bound}"
    if isinstance(value, str):
        if isinstance(schema.get("minLength"), int) and len(value) < schema["minLength"]:
            return f"{_where(path)}: shorter than {schema['minLength']} characters"
        if isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
            return f"{_where(path)}: longer than {schema['maxLength']} characters"
        if isinstance(schema.get("pattern"), str) and not re.search(schema["pattern"], value):
            return f"{_where(path)}: does not match {schema['pattern']!r}"
    if isinstance(value, dict):
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        for name in schema.get("required") or []:
            if name not in value:
                return f"{_where(path)}: missing required property {name!r}"
        for name, child in value.items():
            sub_path = f"{path}.{name}" if path else str(name)
            if name in properties:
                error = first_error(child, properties[name], root, sub_path)
            elif "additionalProperties" in schema:
                error = first_error(child, schema["additionalProperties"], root, sub_path)
            else:
                error = None
            if error:
                return error
    if isinstance(value, list) and isinstance(schema.get("items"), (dict, bool)):
        for index, child in enumerate(value):
            error = first_error(child, schema["items"], root, f"{path}[{index}]")
            if error:
                return error
    for child in schema.get("allOf") or []:
        error = first_error(value, child, root, path)
        if error:
            return error
    if schema.get("anyOf"):
        errors = [first_error(value, child, root, path) for child in schema["anyOf"]]
        if all(errors):
            return errors[0]
    if schema.get("oneOf"):
        errors = [first_error(value, child, root, path) for child in schema["oneOf"]]
        matches = sum(1 for e in errors if e is None)
        if matches != 1:
            return errors[0] if matches == 0 else f"{_where(path)}: matches several oneOf branches"
    return None


def types_at(schema: Any, root: Any = None) -> set[str]:
    """Every JSON type `schema` admits (following `$ref`, `anyOf`, `oneOf`); empty = any."""
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return set()
    if "$ref" in schema:
        return types_at(_resolve(str(schema["$ref"]), root), root)
    kinds = schema.get("type")
    found: set[str] = set(kinds if isinstance(kinds, list) else [kinds]) if kinds else set()
    for key in ("anyOf", "oneOf"):
        for child in schema.get(key) or []:
            found |= types_at(child, root)
    return found


def child_schema(schema: Any, key: str | int, root: Any = None) -> Any:
    """The subschema that applies to property or item `key` of a value of `schema`."""
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return True
    if "$ref" in schema:
        return child_schema(_resolve(str(schema["$ref"]), root), key, root)
    if isinstance(key, int):
        return schema.get("items", True)
    properties = schema.get("properties")
    if isinstance(properties, dict) and key in properties:
        return properties[key]
    return schema.get("additionalProperties", True)
