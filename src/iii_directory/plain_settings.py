"""The worker's settings as a plain object, for `iii-directory call` of a file-backed function
(docs/startup.md): the `config.Settings` fields, defaults and rules, read without building the
pydantic model (its first validator is a third of a call's start-up).

The fields come from the package's `data/settings.json`, which `python -m iii_directory.schemas
--write` generates from the model (`settings_table.py`; a unit test fails when the shipped file
differs from what the model produces), so the model is their one source.

`plain_settings(value)` accepts a configuration value only when every known field already holds
a value of its exact type within its bounds (the model's strict subset: a string for a string, a
boolean for a boolean, an integer in range for an integer, one of the listed words for a mode)
and passes the field's named check (`http_url`); unknown keys are ignored, as the model ignores
them. Anything else — a value the model would coerce (`"5"` for 5) or reject, or a missing or
unreadable table — answers None, and the caller builds the model, so coercion and the error
message stay the model's.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .config_base import compose_default, registry_base, resolve_path, web_base

log = logging.getLogger(__name__)

SETTINGS_PATH = Path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "settings.json"))

_KINDS = ("str", "str?", "bool", "int", "float")

CHECKS: dict[str, Callable[[str], str]] = {"http_url": registry_base}
"""A field's named check → the function that answers its value as the model holds it, or raises
ValueError (the model's validator calls the same function)."""


class Field:
    """One row of the table: `compose` is the `rel` of a default under `III_COMPOSE_DIR` (then
    `default` is unused); `rule` is (minimum, maximum) of a number, None meaning unbounded, or
    the words a string allows (empty: any). A plain class: a named tuple or a dataclass would
    compile code at import, on every `call`."""

    __slots__ = ("check", "compose", "default", "kind", "name", "rule")

    def __init__(self, name: str, kind: str, default: Any, compose: str | None, rule: tuple[Any, ...],
                 check: Callable[[str], str] | None) -> None:
        self.name, self.kind, self.default, self.compose = name, kind, default, compose
        self.rule, self.check = rule, check


def parse(document: Any) -> tuple[Field, ...]:
    """The rows of the table's JSON document; ValueError on a wrong shape or an unknown kind
    or check."""
    entries = document.get("fields") if isinstance(document, dict) else None
    if not isinstance(entries, dict) or not entries:
        raise ValueError("no `fields` object")
    rows = []
    for name, entry in entries.items():
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if kind not in _KINDS:
            raise ValueError(f"field {name!r}: unknown kind {kind!r}")
        compose = entry.get("compose_default")
        if compose is not None and (kind != "str" or not isinstance(compose, str)):
            raise ValueError(f"field {name!r}: compose_default must name a folder of a string field")
        if compose is None and "default" not in entry:
            raise ValueError(f"field {name!r}: no default")
        if kind in ("int", "float"):
            rule: tuple[Any, ...] = (entry.get("minimum"), entry.get("maximum"))
        else:
            words = entry.get("words", [])
            if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
                raise ValueError(f"field {name!r}: words must be a list of strings")
            rule = tuple(words)
        check_name = entry.get("check")
        if check_name is not None and check_name not in CHECKS:
            raise ValueError(f"field {name!r}: unknown check {check_name!r}")
        rows.append(Field(name, kind, entry.get("default"), compose, rule,
                          CHECKS[check_name] if check_name is not None else None))
    return tuple(rows)


@functools.cache
def fields(path: Path = SETTINGS_PATH) -> tuple[Field, ...] | None:
    """The shipped table's rows (read once per process); None when the file is missing or
    malformed (then the model reads the settings)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return parse(json.load(handle))
    except (OSError, ValueError) as exc:
        log.debug("no plain settings table (%s): %s", path, exc)
        return None


def _exact(field: Field, value: Any) -> Any:
    """`value` as the model would hold it when it is already of the field's exact type, within
    its rule and through its check; `_NEEDS_MODEL` otherwise."""
    kind, rule = field.kind, field.rule
    if kind == "str?" and value is None:
        return None
    if kind in ("str", "str?"):
        if not isinstance(value, str) or (rule and value not in rule):
            return _NEEDS_MODEL
        if field.check is None:
            return value
        try:
            return field.check(value)
        except ValueError:
            return _NEEDS_MODEL  # the model's validator words the error
    if kind == "bool":
        return value if isinstance(value, bool) else _NEEDS_MODEL
    if isinstance(value, bool) or not isinstance(value, int if kind == "int" else (int, float)):
        return _NEEDS_MODEL
    low, high = rule
    if (low is not None and value < low) or (high is not None and value > high):
        return _NEEDS_MODEL
    return float(value) if kind == "float" else value


_NEEDS_MODEL = object()


class PlainSettings:
    """The settings' values as attributes, with the model's `path` and `web_url`; immutable."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("settings are immutable")

    def values(self) -> dict[str, Any]:
        """Every field and its value (the model's `model_dump()`)."""
        return dict(self._values)

    @property
    def web_url(self) -> str:
        """`registry_web_url`, or `registry_url` with a leading `api.` host label dropped
        (`config_base.web_base`)."""
        return web_base(self._values["registry_url"], self._values["registry_web_url"])

    def path(self, field: str) -> Path:
        """Resolve a folder field now (docs/rules/surfaces.md §2.2)."""
        return resolve_path(self._values[field])


def plain_settings(value: Mapping[str, Any] | None) -> PlainSettings | None:
    """The settings of a configuration value (`None` = defaults) when every known field is
    exact (see the module's rule); None when the model must build them. Defaults pass the same
    rule, as the model validates its defaults."""
    table = fields()
    if table is None:
        return None
    given = value or {}
    out: dict[str, Any] = {}
    for field in table:
        if field.name in given:
            raw = given[field.name]
        elif field.compose is not None:
            raw = compose_default(field.compose)
        else:
            raw = field.default
        raw = _exact(field, raw)
        if raw is _NEEDS_MODEL:
            return None
        out[field.name] = raw
    return PlainSettings(out)
