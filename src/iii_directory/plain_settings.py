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
from typing import TYPE_CHECKING, Any

from .config_base import compose_default, registry_base, resolve_path, web_base

SETTINGS_PATH = Path(os.path.dirname(os.path.abspath(__file__)), "data", "settings.json")

_KINDS = ("str", "str?", "bool", "int", "float")

COLUMNS = ("name", "kind", "default", "compose_default", "minimum", "maximum", "words", "check")
"""The table's columns, one row per field in the model's order: `kind` is `str`, `str?` (a
string or null), `bool`, `int` or `float`; `compose_default` the folder under `III_COMPOSE_DIR`
that replaces `default`; `minimum` / `maximum` a number's inclusive bounds (null: unbounded);
`words` the values a string may take (null: any); `check` a named rule (`CHECKS`)."""

CHECKS: dict[str, Callable[[str], str]] = {"http_url": registry_base}
"""A field's named check → the function that answers its value as the model holds it, or raises
ValueError (the model's validator calls the same function)."""


if TYPE_CHECKING:  # a row is a plain tuple: a class would cost its creation on every `call`
    Field = tuple[str, str, Any, str | None, tuple[Any, ...], Callable[[str], str] | None]


def parse(document: Any) -> tuple[Field, ...]:
    """The rows of the table's JSON document (`COLUMNS`); ValueError on a wrong shape, an
    unknown kind or check, or a folder default of a field that is not a string."""
    try:
        if list(document["columns"]) != list(COLUMNS) or not document["fields"]:
            raise ValueError("the columns are not plain_settings.COLUMNS, or there are no fields")
        rows = []
        for name, kind, default, compose, low, high, words, check in document["fields"]:
            if kind not in _KINDS or (check is not None and check not in CHECKS):
                raise ValueError(f"field {name!r}: unknown kind {kind!r} or check {check!r}")
            if compose is not None and (kind != "str" or not isinstance(compose, str)):
                raise ValueError(f"field {name!r}: compose_default must name a folder of a string field")
            if kind in ("int", "float"):
                rule: tuple[Any, ...] = (low, high)
            elif words is None:
                rule = ()
            elif all(isinstance(word, str) for word in words):
                rule = tuple(words)
            else:
                raise ValueError(f"field {name!r}: words must be strings")
            rows.append((name, kind, default, compose, rule, CHECKS[check] if check is not None else None))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a settings table: {exc!r}") from None
    return tuple(rows)


@functools.cache
def fields(path: Path = SETTINGS_PATH) -> tuple[Field, ...] | None:
    """The shipped table's rows (read once per process) as (name, kind, default, compose, rule,
    check): `compose` is the `rel` of a default under `III_COMPOSE_DIR` (then `default` is
    unused); `rule` is (minimum, maximum) of a number, None meaning unbounded, or the words a
    string allows (empty: any); `check` the function of the field's named check. None when the
    file is missing or malformed (then the model reads the settings)."""
    try:
        with open(path, "rb") as handle:
            return parse(json.loads(handle.read()))
    except (OSError, ValueError) as exc:
        logging.getLogger(__name__).debug("no plain settings table (%s): %s", path, exc)
        return None


def exact(kind: str, rule: tuple[Any, ...], check: Callable[[str], str] | None, value: Any) -> Any:
    """`value` as the model would hold it when it is already of the field's exact type (`kind`),
    within its `rule` and through its `check`; `NEEDS_MODEL` otherwise."""
    if kind == "str?" and value is None:
        return None
    if kind in ("str", "str?"):
        if not isinstance(value, str) or (rule and value not in rule):
            return NEEDS_MODEL
        if check is None:
            return value
        try:
            return check(value)
        except ValueError:
            return NEEDS_MODEL  # the model's validator words the error
    if kind == "bool":
        return value if isinstance(value, bool) else NEEDS_MODEL
    if isinstance(value, bool) or not isinstance(value, int if kind == "int" else (int, float)):
        return NEEDS_MODEL
    low, high = rule
    if (low is not None and value < low) or (high is not None and value > high):
        return NEEDS_MODEL
    return float(value) if kind == "float" else value


NEEDS_MODEL = object()


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
    exact (see the module's rule); None when the model must build them."""
    table = fields()
    if table is None:
        return None
    given = value or {}
    out: dict[str, Any] = {}
    for name, kind, default, compose, rule, check in table:
        if name in given:
            raw = exact(kind, rule, check, given[name])
            if raw is NEEDS_MODEL:
                return None
        elif compose is not None:
            raw = compose_default(compose)
        else:
            raw = default  # exact by construction (`settings_table` refuses any other default)
        out[name] = raw
    return PlainSettings(out)
