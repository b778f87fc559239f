"""Lone surrogates in a request (issue 17, defect 2): refused before any handler runs, with
a bare request-shape error naming the field, and nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from iii_directory.directory import Directory
from iii_directory.errors import INVOCATION_FAILED, DirectoryError
from iii_directory.payload_text import lone_surrogate_problem


def test_the_first_lone_surrogate_is_named_with_its_field() -> None:
    assert lone_surrogate_problem({"id": "ok", "content": "é \U0001f600 \x00 \ufffe"}) is None
    assert lone_surrogate_problem(None) is None
    assert lone_surrogate_problem({"id": "x\ud800y"}) == (
        'request field "id" holds the lone surrogate U+D800, which is not Unicode text')
    assert "functions[1]" in (lone_surrogate_problem({"id": "a", "functions": ["a::b", "\udfff"]}) or "")
    keyed = lone_surrogate_problem({"a": {"\udc80k": 1}}) or ""
    assert "U+DC80" in keyed and "(key)" in keyed
    keyed.encode("utf-8")
    assert "(payload)" in (lone_surrogate_problem("\ud800") or "")


@pytest.mark.anyio
async def test_a_write_with_a_lone_surrogate_is_refused_and_writes_nothing(
        directory: Directory, roots: dict[str, Path]) -> None:
    for function_id, payload in [
        ("directory::skills::create", {"id": "ns/x\ud800y", "content": "# T\n\nBody.\n"}),
        ("directory::skills::create", {"id": "ns/x\udc80y", "content": "# T\n\nBody.\n"}),
        ("directory::agents::create", {"id": "a\ud800", "content": "---\nname: a\n---\nBody.\n"}),
        ("directory::system-prompts::create", {"name": "p", "content": "---\nname: p\ndescription: \ud800\n---\nB\n"}),
    ]:
        with pytest.raises(DirectoryError) as caught:
            await directory.invoke(function_id, payload)
        assert caught.value.code == INVOCATION_FAILED
        assert "lone surrogate" in caught.value.message
    for root in ("skills", "agents"):
        assert not roots[root].exists() or not any(p.is_file() for p in roots[root].rglob("*"))
