"""Generates the plain settings table (`data/settings.json`, read by `plain_settings`) from the
`config.Settings` model, so the model stays the one source of the fields, their defaults and
their bounds. `python -m iii_directory.schemas --write` writes it beside `data/schemas.json`, and
a unit test fails when the shipped file differs from what the model produces.

One row per field, in the model's order, in the columns `plain_settings.COLUMNS` (rows of
arrays: the file is read on every `call`, and arrays parse faster than objects):

* `kind`: `str`, `str?` (a string or null), `bool`, `int` or `float`;
* `default`: the default value, or `compose_default`: the `rel` of a `config.ComposeDefault`
  factory (the folder follows `III_COMPOSE_DIR` when the settings are read);
* `minimum` / `maximum`: the inclusive bounds of a number (`ge` / `le`), null when unbounded;
* `words`: the values a `Literal` of strings allows;
* `check`: a named rule of a field validator (`CHECKS`), applied by `plain_settings` too.

Anything the plain reader could not reproduce exactly (another type, an exclusive bound, a
factory or validator it does not know, a model validator, another `extra` policy) raises
`UnsupportedField`: teach `plain_settings` the rule first, then name it here.
"""

from __future__ import annotations

import json
import types
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from .config import ComposeDefault, Settings
from .plain_settings import COLUMNS, NEEDS_MODEL, exact, parse
from .published import GENERATOR

CHECKS: dict[str, str] = {"_registry_base": "http_url"}
"""Field validators of the model → the rule `plain_settings` applies in their place
(`http_url`: `config_base.registry_base`)."""

_KINDS: dict[Any, str] = {str: "str", bool: "bool", int: "int", float: "float"}


class UnsupportedField(ValueError):
    """A model field the plain settings table cannot describe exactly."""


def _kind(name: str, annotation: Any) -> tuple[str, list[str] | None]:
    """The table's kind of a field's annotation, and the words of a `Literal` of strings."""
    if annotation in _KINDS:
        return _KINDS[annotation], None
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal and args and all(isinstance(word, str) for word in args):
        return "str", list(args)
    if origin in (Union, types.UnionType) and set(args) == {str, type(None)}:
        return "str?", None
    raise UnsupportedField(f"{name}: type {annotation!r} has no plain kind")


def _bounds(name: str, kind: str, info: FieldInfo) -> dict[str, Any]:
    """`minimum` / `maximum` from the field's `ge` / `le` constraints."""
    out: dict[str, Any] = {}
    for item in info.metadata:
        if isinstance(item, annotated_types.Ge) and kind in ("int", "float"):
            out["minimum"] = item.ge
        elif isinstance(item, annotated_types.Le) and kind in ("int", "float"):
            out["maximum"] = item.le
        else:
            raise UnsupportedField(f"{name}: constraint {item!r} has no plain rule")
    return out


_DEFAULT_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,), "str?": (str, type(None)), "bool": (bool,), "int": (int,), "float": (float, int),
}


def _default(name: str, kind: str, info: FieldInfo) -> dict[str, Any]:
    """`default` (a JSON value of the field's kind, as the model holds it: an integer default
    of a `float` field becomes a float) or `compose_default` (a `ComposeDefault`'s `rel`)."""
    if info.default_factory is not None:
        if isinstance(info.default_factory, ComposeDefault) and kind == "str":
            return {"compose_default": info.default_factory.rel}
        raise UnsupportedField(f"{name}: default factory {info.default_factory!r} is not a ComposeDefault")
    value = info.get_default()
    if not isinstance(value, _DEFAULT_TYPES[kind]) or (isinstance(value, bool) and kind != "bool"):
        raise UnsupportedField(f"{name}: default {value!r} is not a {kind}")
    return {"default": float(value) if kind == "float" else value}


def _checks(model: type[BaseModel]) -> dict[str, str]:
    """Field → the `CHECKS` rule of its validator; UnsupportedField for any other validator."""
    decorators = model.__pydantic_decorators__
    others = {**decorators.model_validators, **decorators.field_serializers, **decorators.model_serializers,
              **decorators.root_validators, **decorators.validators, **decorators.computed_fields}
    if others:
        raise UnsupportedField(f"validators, serializers or computed fields the plain table cannot follow: "
                               f"{sorted(others)}")
    out: dict[str, str] = {}
    for function_name, decorator in decorators.field_validators.items():
        if function_name not in CHECKS or decorator.info.mode != "after":
            raise UnsupportedField(f"field validator {function_name} has no plain rule (CHECKS)")
        for field in decorator.info.fields:
            if field in out:
                raise UnsupportedField(f"{field}: more than one field validator")
            out[field] = CHECKS[function_name]
    return out


def generate(model: type[BaseModel] = Settings) -> dict[str, Any]:
    """The document of `data/settings.json` for `model` (default: `config.Settings`)."""
    if model.model_config.get("extra", "ignore") != "ignore" or model.model_config.get("strict"):
        raise UnsupportedField("the plain table reads a model that ignores unknown keys and is not strict")
    checks = _checks(model)
    fields: dict[str, dict[str, Any]] = {}
    for name, info in model.model_fields.items():
        if info.alias not in (None, name) or info.validation_alias not in (None, name):
            raise UnsupportedField(f"{name}: an alias has no plain rule")
        kind, words = _kind(name, info.annotation)
        entry: dict[str, Any] = {"kind": kind, **_default(name, kind, info), **_bounds(name, kind, info)}
        if words is not None:
            entry["words"] = words
        if name in checks:
            entry["check"] = checks[name]
        fields[name] = entry
    unknown = set(checks) - set(fields)
    if unknown:
        raise UnsupportedField(f"validators of unknown fields: {sorted(unknown)}")
    rows = [[name, *(entry.get(column) for column in COLUMNS[1:])] for name, entry in fields.items()]
    document = {"generated_by": GENERATOR, "columns": list(COLUMNS), "fields": rows}
    _defaults_are_exact(document)
    return document


def _defaults_are_exact(document: dict[str, Any]) -> None:
    """UnsupportedField unless every default is one `plain_settings` may take as it stands
    (it does not re-check them): a value its own rule and check leave unchanged, and a folder
    default only on a string field without words or check."""
    for name, kind, default, compose, rule, check in parse(document):
        if compose is not None:
            if rule or check is not None:
                raise UnsupportedField(f"{name}: a folder default on a field with words or a check")
            continue
        held = exact(kind, rule, check, default)
        if held is NEEDS_MODEL or held != default or type(held) is not type(default):
            raise UnsupportedField(f"{name}: default {default!r} is not exact under its own rule")


def render(document: dict[str, Any]) -> str:
    """The document as compact JSON text (read on every `call`) with one field's row per line."""

    def compact(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    head = [f"{compact(key)}:{compact(value)}," for key, value in document.items() if key != "fields"]
    rows = ",\n".join(compact(row) for row in document["fields"])
    return "\n".join(["{", *head, '"fields":[', rows, "]}"]) + "\n"
