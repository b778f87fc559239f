"""The worker's settings as a plain object, for `iii-directory call` of a file-backed function
(docs/startup.md): the `config.Settings` fields, defaults and rules, read without building the
pydantic model (its first validator is a third of a call's start-up).

`plain_settings(value)` accepts a configuration value only when every known field already holds
a value of its exact type within its bounds (the model's strict subset: a string for a string, a
boolean for a boolean, an integer in range for an integer, one of the listed words for a mode);
unknown keys are ignored, as the model ignores them. Anything else — a value the model would
coerce (`"5"` for 5) or reject — answers None, and the caller builds the model, so coercion and
the error message stay the model's. `tests/unit/shell/test_plain_settings.py` holds the fields
and defaults to the model's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .config_base import compose_default, resolve_path

_STR = "str"
_OPT_STR = "str?"
_BOOL = "bool"
_INT = "int"
_FLOAT = "float"

FIELDS: dict[str, tuple[str, Callable[[], Any], tuple[Any, ...]]] = {
    "skills_folder": (_STR, lambda: compose_default("skills"), ()),
    "local_skills_folder": (_STR, lambda: compose_default("skills/iii"), ()),
    "agents_folder": (_STR, lambda: compose_default("agents"), ()),
    "global_agents_folder": (_STR, lambda: "~/.iii/agents", ()),
    "agents_skills_folder": (_STR, lambda: ".agents/skills", ()),
    "global_agents_skills_folder": (_STR, lambda: "~/.agents/skills", ()),
    "auto_download": (_BOOL, lambda: True, ()),
    "registry_url": (_STR, lambda: "https://api.workers.iii.dev", ()),
    "registry_web_url": (_OPT_STR, lambda: None, ()),
    "download_timeout_ms": (_INT, lambda: 60000, (1, None)),
    "registry_cache_ttl_ms": (_INT, lambda: 60000, (0, None)),
    "filter_unregistered": (_BOOL, lambda: True, ()),
    "inject_hint": (_BOOL, lambda: False, ()),
    "hint_min_workers": (_INT, lambda: 2, (0, None)),
    "registry_search": (_BOOL, lambda: True, ()),
    "function_search_mode": (_STR, lambda: "judge", ("lexical", "hybrid", "judge")),
    "function_search_judge_timeout_ms": (_INT, lambda: 3000, (1, 30000)),
    "function_search_judge_min_relevance": (_FLOAT, lambda: 0.5, (0.0, 1.0)),
    "function_search_judge_side_lane_min_relevance": (_FLOAT, lambda: 0.3, (0.0, 1.0)),
    "function_search_judge_question": (_STR, lambda: "choice", ("noul", "choice", "tournament")),
    "function_search_judge_choice_min_probability": (_FLOAT, lambda: 0.1, (0.0, 1.0)),
    "function_search_model_path": (_OPT_STR, lambda: None, ()),
    "function_search_model_download": (_BOOL, lambda: True, ()),
    "function_search_reranker_path": (_OPT_STR, lambda: None, ()),
    "function_search_text_cache_mib": (_INT, lambda: 16, (1, 4096)),
}
"""Field → (kind, default, rule): for an integer or a number the rule is (minimum, maximum),
None meaning unbounded; for a string a non-empty rule lists the words allowed."""


def _exact(kind: str, rule: tuple[Any, ...], value: Any) -> Any:
    """`value` as the model would hold it when it is already of the field's exact type and
    within its rule; `_NEEDS_MODEL` otherwise."""
    if kind == _OPT_STR and value is None:
        return None
    if kind in (_STR, _OPT_STR):
        if not isinstance(value, str) or (rule and value not in rule):
            return _NEEDS_MODEL
        return value
    if kind == _BOOL:
        return value if isinstance(value, bool) else _NEEDS_MODEL
    if isinstance(value, bool) or not isinstance(value, int if kind == _INT else (int, float)):
        return _NEEDS_MODEL
    low, high = rule
    if (low is not None and value < low) or (high is not None and value > high):
        return _NEEDS_MODEL
    return float(value) if kind == _FLOAT else value


_NEEDS_MODEL = object()


class PlainSettings:
    """The settings' values as attributes, with the model's `path`, `web_url` and
    `topology_changes`; immutable."""

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
        """`registry_web_url`, or `registry_url` with a leading `api.` host label dropped."""
        web = self._values["registry_web_url"]
        if web and web.strip():
            return str(web.strip().rstrip("/"))
        scheme, _, rest = self._values["registry_url"].partition("://")
        return f"{scheme}://{rest.removeprefix('api.')}"

    def path(self, field: str) -> Path:
        """Resolve a folder field now (docs/rules/surfaces.md §2.2)."""
        return resolve_path(self._values[field])


def plain_settings(value: Mapping[str, Any] | None) -> PlainSettings | None:
    """The settings of a configuration value (`None` = defaults) when every known field is
    exact (see the module's rule); None when the model must build them."""
    given = value or {}
    out: dict[str, Any] = {}
    for name, (kind, default, rule) in FIELDS.items():
        if name not in given:
            raw = default()
        else:
            raw = _exact(kind, rule, given[name])
            if raw is _NEEDS_MODEL:
                return None
        out[name] = raw
    url = out["registry_url"].strip()
    if not url.startswith(("http://", "https://")):
        return None  # the model's validator words the error
    out["registry_url"] = url.rstrip("/")
    return PlainSettings(out)
