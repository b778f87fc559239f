"""Fuzzing search capabilities (issue 11): any `capabilities` value — empty, duplicated, too
many, huge, unicode, punctuation-only, not a list — gets a search answer or a coded
validation error, never a crash; answers only name functions of the catalog."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st
from reliability_support import fuzz_settings

from iii_directory.config import Settings
from iii_directory.context import CallInfo
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.standalone import standalone_engine

pytestmark = [pytest.mark.timeout(900)]

WORDS = ["send", "email", "invoice", "schedule", "meeting", "the", "a", "translate", "pdf", "sql", "::", "mailer::send",
         "directory::skills::get", "résumé", "日本語", "😀", "-", "*", "\x00", " ", "\n", "a" * 300]
CAPABILITY = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join),
    st.text(max_size=60),
    st.text(alphabet="!@#$%^&*()[]{}<>?/\\|~`'\".,;:", min_size=1, max_size=20),
    st.just("x" * 20_000),
)
CAPABILITIES = st.one_of(
    st.lists(CAPABILITY, min_size=0, max_size=24),
    st.lists(CAPABILITY, min_size=1, max_size=3).map(lambda caps: caps * 2),
    st.one_of(st.none(), st.text(max_size=10), st.integers(), st.dictionaries(st.text(max_size=5), st.text(max_size=5))),
    st.lists(st.one_of(st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2)), min_size=1, max_size=3),
)


@pytest.fixture
def search_directory(settings: Settings) -> Directory:
    catalog = json.loads((resources.files("iii_directory") / "data" / "example_catalog.json").read_text("utf-8"))
    engine = standalone_engine(catalog)
    directory = Directory(settings=settings.model_copy(update={"registry_search": False}), engine=engine)
    engine.add_own_functions(directory.table)
    return directory


@given(CAPABILITIES, st.sampled_from([None, "session.id=fuzz-1", "session.id=fuzz-2,x=y", "garbage;;=,"]))
@fuzz_settings(ci=300)
async def test_any_capabilities_answer_or_refuse(search_directory: Directory, roots: dict[str, Path],
                                                 capabilities: Any, baggage: str | None) -> None:
    known = set(search_directory.engine.functions)
    try:
        answer = await search_directory.invoke("directory::search_functions", {"capabilities": capabilities},
                                               CallInfo(baggage=baggage))
    except DirectoryError as exc:
        assert exc.code and exc.message
        return
    assert isinstance(answer["guidance"], str) and answer["search_mode"] == "lexical"
    for group in answer["workers"]:
        for item in group["functions"]:
            assert item["function_id"] in known and item["function_id"].startswith(group["namespace"] + "::")
