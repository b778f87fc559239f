"""Exclusions (search.md §3.2)."""

from __future__ import annotations

import pytest

from iii_directory.exclusions import is_excluded


@pytest.mark.parametrize(
    "function_id",
    ["directory::search_functions", "engine::functions::list", "engine::workers::register",
     "engine::registered-triggers::list", "engine::triggers::info", "engine::channels::create",
     "state::claim-namespace", "directory::on-config-change", "kits::on-config-change"],
)
def test_excluded_ids(function_id: str) -> None:
    assert is_excluded(function_id)


@pytest.mark.parametrize(
    "function_id",
    ["engine::traces::list", "engine::logs::list", "engine::queue::enqueue",
     "engine::register_trigger", "directory::skills::list", "state::get", "plainid"],
)
def test_searchable_ids(function_id: str) -> None:
    assert not is_excluded(function_id)


def test_internal_metadata_excludes() -> None:
    assert is_excluded("email::bounce-hook", {"internal": True})
    assert not is_excluded("email::send", {"internal": False})
    assert not is_excluded("email::send", {"internal": "true"})
    assert not is_excluded("email::send", None)
