"""`plain_settings` holds the same fields, defaults and values as the `Settings` model, from the
same sources (defaults, `III_COMPOSE_DIR`, the configuration file's values), and hands every
value it cannot take exactly over to the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iii_directory import cli
from iii_directory.config import InvalidSettings, Settings, load_settings
from iii_directory.plain_settings import FIELDS, PlainSettings, plain_settings


def same(plain: PlainSettings, model: Settings) -> None:
    assert plain.values() == model.model_dump()
    assert [type(v) for v in plain.values().values()] == [type(v) for v in model.model_dump().values()]
    for field in ("skills_folder", "local_skills_folder", "agents_folder", "global_agents_folder",
                  "agents_skills_folder", "global_agents_skills_folder"):
        assert plain.path(field) == model.path(field)
    assert plain.web_url == model.web_url
    assert plain.filter_unregistered is model.filter_unregistered


def test_the_fields_are_the_models_in_its_order() -> None:
    assert list(FIELDS) == list(Settings.model_fields)


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
