"""Every name rule is anchored at the very end: Python's `$` also matches before a trailing
newline, so `"pm\\n"` used to pass `^[a-z0-9_-]{1,64}$` and could become a file name."""

from __future__ import annotations

from pathlib import Path

import pytest

from iii_directory.content.ids import id_problem, is_valid_name, name_problem
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.kits.paths import is_valid_install_path
from iii_directory.kits.ref import RefError, parse_kit_ref
from iii_directory.kits.store import is_valid_plan_id, new_plan_id
from iii_directory.sources.registry_records import info_name_error, worker_name_problem


def test_a_trailing_newline_is_never_part_of_a_valid_name() -> None:
    assert is_valid_name("pm") and not is_valid_name("pm\n")
    assert name_problem("pm\n") is not None
    assert id_problem("a/b") is None and id_problem("a\n/b") is not None
    assert worker_name_problem("kanban\n") is not None
    assert info_name_error("kanban\n") is not None
    assert is_valid_install_path("agents/pm.md") and not is_valid_install_path("agents/pm\n.md")
    plan_id = new_plan_id()
    assert is_valid_plan_id(plan_id) and not is_valid_plan_id(plan_id + "\n")
    with pytest.raises(RefError):
        parse_kit_ref("acme/team@1.0.0-rc\n.1")


async def test_a_skill_id_with_a_newline_inside_is_refused_and_writes_nothing(
    directory: Directory, roots: dict[str, Path]
) -> None:
    before = sorted(roots["project"].rglob("*"))
    with pytest.raises(DirectoryError):
        await directory.invoke("directory::skills::create", {"id": "ns\n/x", "content": "Body.\n"})
    assert sorted(roots["project"].rglob("*")) == before
