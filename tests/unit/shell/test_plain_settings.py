"""`plain_settings` holds the same fields, defaults and values as the `Settings` model, from the
same sources (defaults, `III_COMPOSE_DIR`, the configuration file's values), and hands every
value it cannot take exactly over to the model. Its table (`data/settings.json`) is what
`settings_table.generate()` reads off the model, and the generator refuses a rule it cannot
describe."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field, field_validator

from iii_directory import cli, schemas, settings_table
from iii_directory import plain_settings as plain_module
from iii_directory.config import (
    ComposeDefault,
    InvalidSettings,
    Settings,
    load_settings,
)
from iii_directory.plain_settings import (
    SETTINGS_PATH,
    PlainSettings,
    fields,
    parse,
    plain_settings,
)


def same(plain: PlainSettings, model: Settings) -> None:
    assert plain.values() == model.model_dump()
    assert [type(v) for v in plain.values().values()] == [type(v) for v in model.model_dump().values()]
    for field in ("skills_folder", "local_skills_folder", "agents_folder", "global_agents_folder",
                  "agents_skills_folder", "global_agents_skills_folder"):
        assert plain.path(field) == model.path(field)
    assert plain.web_url == model.web_url
    assert plain.filter_unregistered is model.filter_unregistered


def test_the_shipped_table_equals_what_the_model_produces() -> None:
    shipped = json.loads(SETTINGS_PATH.read_text(encoding="utf-8"))
    assert shipped == settings_table.generate(), \
        "data/settings.json is stale: run `python -m iii_directory.schemas --write`"


def test_the_fields_are_the_models_in_its_order() -> None:
    table = fields()
    assert table is not None
    assert [field[0] for field in table] == list(Settings.model_fields)


class _Drifted(Settings):
    hint_min_workers: int = Field(default=3, ge=0, le=9)
    function_search_mode: Literal["lexical", "hybrid"] = "hybrid"


def _row(document: dict[str, Any], name: str) -> dict[str, Any]:
    """The table's row of `name` as a mapping of its columns."""
    (row,) = [row for row in document["fields"] if row[0] == name]
    return dict(zip(document["columns"], row, strict=True))


def test_a_change_to_the_model_changes_the_table() -> None:
    shipped = json.loads(SETTINGS_PATH.read_text(encoding="utf-8"))
    drifted = settings_table.generate(_Drifted)
    assert drifted != shipped
    assert _row(drifted, "hint_min_workers") == {"name": "hint_min_workers", "kind": "int", "default": 3,
                                                 "compose_default": None, "minimum": 0, "maximum": 9,
                                                 "words": None, "check": None}
    assert _row(drifted, "function_search_mode")["words"] == ["lexical", "hybrid"]
    assert _row(drifted, "function_search_mode")["default"] == "hybrid"
    assert _row(shipped, "skills_folder")["compose_default"] == "skills"
    assert _row(shipped, "registry_url")["check"] == "http_url"


class _ExclusiveBound(BaseModel):
    size: int = Field(default=1, gt=0)


class _LambdaFactory(BaseModel):
    folder: str = Field(default_factory=lambda: "x")


class _UnknownValidator(BaseModel):
    name: str = "a"

    @field_validator("name")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.lower()


class _ListField(BaseModel):
    names: list[str] = []


class _Forbids(BaseModel, extra="forbid"):
    name: str = "a"


class _DefaultOutOfBounds(BaseModel):
    size: int = Field(default=0, ge=1)


class _FolderDefaultWithWords(BaseModel):
    folder: Literal["a", "b"] = Field(default_factory=ComposeDefault("a"))


class _UnnormalisedCheckedDefault(BaseModel):
    registry_url: str = "https://api.example.dev/"

    @field_validator("registry_url")
    @classmethod
    def _registry_base(cls, value: str) -> str:
        return value.strip().rstrip("/")


@pytest.mark.parametrize(("model", "reason"), [
    (_ExclusiveBound, "constraint Gt"), (_LambdaFactory, "is not a ComposeDefault"),
    (_UnknownValidator, "_lower has no plain rule"), (_ListField, "has no plain kind"),
    (_Forbids, "ignores unknown keys"), (_DefaultOutOfBounds, "default 0 is not exact"),
    (_FolderDefaultWithWords, "folder default on a field with words"),
    (_UnnormalisedCheckedDefault, "default 'https://api.example.dev/' is not exact"),
])
def test_a_rule_the_plain_reader_cannot_follow_is_refused(model: type[BaseModel], reason: str) -> None:
    with pytest.raises(settings_table.UnsupportedField, match=re.escape(reason)):
        settings_table.generate(model)


def test_write_then_check_round_trips(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    assert schemas.write(target, settings_table.generate, settings_table.render) is True
    assert schemas.is_current(target, settings_table.generate)
    assert schemas.write(target, settings_table.generate, settings_table.render) is False
    assert [f[0] for f in fields(target) or ()] == list(Settings.model_fields)
    document = json.loads(target.read_text(encoding="utf-8"))
    document["fields"][9][4] = 5  # download_timeout_ms's minimum
    target.write_text(json.dumps(document), encoding="utf-8")
    assert not schemas.is_current(target, settings_table.generate)


COLUMNS = ["name", "kind", "default", "compose_default", "minimum", "maximum", "words", "check"]


@pytest.mark.parametrize("document", [
    [], {"fields": []}, {"columns": COLUMNS, "fields": []}, {"columns": COLUMNS[:-1], "fields": [["a"]]},
    {"columns": COLUMNS, "fields": [["a", "list", [], None, None, None, None, None]]},
    {"columns": COLUMNS, "fields": [["a", "str", "x", None, None, None]]},
    {"columns": COLUMNS, "fields": [["a", "int", None, "x", None, None, None, None]]},
    {"columns": COLUMNS, "fields": [["a", "str", "x", None, None, None, None, "lowercase"]]},
    {"columns": COLUMNS, "fields": [["a", "str", "x", None, None, None, [1], None]]},
    {"columns": COLUMNS, "fields": 3},
])
def test_a_malformed_table_is_refused(document: Any) -> None:
    with pytest.raises(ValueError):
        parse(document)


def test_without_a_readable_table_the_model_reads_the_settings(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "settings.json"
    broken.write_text("{not json", encoding="utf-8")
    assert fields(broken) is None and fields(tmp_path / "missing.json") is None
    monkeypatch.setattr(plain_module, "fields", lambda: None)
    assert plain_settings(None) is None
    assert isinstance(cli.quick_settings(None), Settings)


def test_compose_default_follows_the_variable_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    factory = ComposeDefault("skills")
    monkeypatch.delenv("III_COMPOSE_DIR", raising=False)
    assert factory() == "skills"
    monkeypatch.setenv("III_COMPOSE_DIR", "/srv/p")
    assert factory() == "/srv/p/skills" and repr(factory) == "ComposeDefault('skills')"


@pytest.mark.parametrize("compose_dir", [None, "/srv/project/./x", "rel/dir"])
def test_the_defaults_are_the_models(monkeypatch: pytest.MonkeyPatch, compose_dir: str | None) -> None:
    if compose_dir is None:
        monkeypatch.delenv("III_COMPOSE_DIR", raising=False)
    else:
        monkeypatch.setenv("III_COMPOSE_DIR", compose_dir)
    monkeypatch.setenv("HOME", "/home/someone")
    plain = plain_settings(None)
    assert plain is not None
    same(plain, Settings())
    same(plain_settings({}), load_settings({}))  # type: ignore[arg-type]


EXACT: list[dict[str, Any]] = [
    {"skills_folder": "~/s", "local_skills_folder": "/abs/local", "agents_folder": "a/../b"},
    {"filter_unregistered": False, "auto_download": False, "inject_hint": True, "hint_min_workers": 0},
    {"registry_url": "  http://localhost:9/api/ ", "registry_web_url": " https://web.example/ "},
    {"registry_url": "https://api.example.dev", "registry_web_url": None},
    {"download_timeout_ms": 1, "registry_cache_ttl_ms": 0, "function_search_text_cache_mib": 4096},
    {"function_search_mode": "lexical", "function_search_judge_question": "tournament"},
    {"function_search_judge_min_relevance": 1, "function_search_judge_side_lane_min_relevance": 0.0,
     "function_search_judge_choice_min_probability": 0.25, "function_search_judge_timeout_ms": 30000},
    {"function_search_model_path": "/m", "function_search_reranker_path": None, "unknown_key": [1, 2]},
    {"registry_search": False},
]


@pytest.mark.parametrize("seed", EXACT)
def test_exact_values_are_read_as_the_model_reads_them(seed: dict[str, Any]) -> None:
    plain = plain_settings(seed)
    assert plain is not None
    same(plain, load_settings(seed))


NEEDS_MODEL: list[dict[str, Any]] = [
    {"download_timeout_ms": "5"}, {"download_timeout_ms": 0}, {"download_timeout_ms": 1.0},
    {"download_timeout_ms": True}, {"filter_unregistered": "false"}, {"filter_unregistered": 1},
    {"function_search_mode": "fast"}, {"function_search_judge_min_relevance": 1.5},
    {"function_search_judge_min_relevance": "0.5"}, {"registry_url": "ftp://x"}, {"registry_url": None},
    {"skills_folder": 5}, {"skills_folder": None}, {"function_search_text_cache_mib": 4097},
]


@pytest.mark.parametrize("seed", NEEDS_MODEL)
def test_anything_else_is_the_models_to_coerce_or_refuse(seed: dict[str, Any]) -> None:
    assert plain_settings(seed) is None
    try:
        load_settings(seed)
    except InvalidSettings:
        pass  # the model words the error; `call` reports it as before (tests/unit/shell/test_quick_call.py)


def test_the_call_settings_follow_the_config_file(tmp_path: Path) -> None:
    """`call`: defaults, then the file; `registry_search` off unless the file turns it on."""
    seed = tmp_path / "seed.yaml"
    seed.write_text("skills_folder: elsewhere\nhint_min_workers: 3\n", encoding="utf-8")
    plain = cli.quick_settings(str(seed))
    assert isinstance(plain, PlainSettings)
    same(plain, cli.standalone_settings(str(seed)))
    assert plain.registry_search is False
    seed.write_text("registry_search: true\ndownload_timeout_ms: '7'\n", encoding="utf-8")
    model = cli.quick_settings(str(seed))
    assert isinstance(model, Settings) and model.download_timeout_ms == 7 and model.registry_search is True


def test_plain_settings_are_immutable() -> None:
    plain = plain_settings(None)
    assert plain is not None
    with pytest.raises(AttributeError):
        plain.skills_folder = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        _ = plain.no_such_field
