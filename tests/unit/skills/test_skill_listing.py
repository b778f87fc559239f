"""`skills::list` rows from the listing cache: the published shape of the old path, and every
call sees disk (an edit, a delete, a new file, another process's write without the watcher).

The cache's clock is injected: an hour ahead, so files written in a test count as settled."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.content.body_index import BodyIndex
from iii_directory.content.skill_listing import ListingRows, wire_rows
from iii_directory.content.skills import RowFactsCache, build_view, list_rows
from iii_directory.functions.skills import ListSkillsOutput, SkillEntry

HOUR_NS = 3600 * 1_000_000_000


def later() -> int:
    return time.time_ns() + HOUR_NS


def put(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Settings:
    skills = tmp_path / "skills"
    put(skills, "ops/index.md", "---\ntitle: Ops\ntype: index\n---\n# Ops\n\nOperations overview.\n")
    put(skills, "ops/deploy.md", "---\ntype: how-to\nfunction_id: ops::deploy\n---\n# Deploy\n\n"
        "Ships a release.\n\n## Rollback\n\nRun rollout undo.\n")
    put(skills, "ops/quiet.md", "---\ndisable-model-invocation: true\n---\nNo heading here.\n")
    put(skills, "ops/empty.md", "---\ntitle: Empty\n---\n")
    put(skills, "docs/readme.md", "# Readme\n\nÜber alles.\n")
    put(tmp_path / "agent-skills", "pdf/SKILL.md", "# PDF\n\nRead PDFs.\n")
    return Settings(skills_folder=str(skills), local_skills_folder=str(tmp_path / "local"),
                    agents_folder=str(tmp_path / "agents"),
                    agents_skills_folder=str(tmp_path / "agent-skills"),
                    global_agents_skills_folder=str(tmp_path / "none"), filter_unregistered=False)


class Lister:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.rows = ListingRows(clock=later)
        self.bodies = BodyIndex(clock=later)

    def __call__(self, **request: Any) -> list[dict[str, Any]]:
        return wire_rows(build_view(self.settings, None, RowFactsCache()), self.rows, self.bodies,
                         **request)

    def ids(self, **request: Any) -> list[str]:
        return [row["id"] for row in self(**request)]


def published(settings: Settings, include_description: bool, include_origin: bool,
              **filters: Any) -> list[dict[str, Any]]:
    """What the response model made of `list_rows` (the path before the cache)."""
    rows = list_rows(build_view(settings, None, RowFactsCache()), **filters)
    out = ListSkillsOutput(skills=[SkillEntry(**row.wire(
        include_description=include_description, include_origin=include_origin)) for row in rows])
    return out.model_dump(mode="json", by_alias=True)["skills"]


@pytest.mark.parametrize("filters", [
    {}, {"prefix": "ops/"}, {"type": "how-to"}, {"search": "OPS"}, {"search": "über"},
    {"search": "rollout undo"}, {"search": "rollout undo", "search_body": True},
    {"search": "release", "search_body": True, "prefix": "docs/"},
])
def test_rows_have_the_published_shape(tree: Settings, filters: dict[str, Any]) -> None:
    lister = Lister(tree)
    for description in (True, False):
        for origin in (True, False):
            expected = published(tree, description, origin, **filters)
            for _ in range(2):  # built, then from the cache
                assert lister(include_description=description, include_origin=origin,
                              **filters) == expected


def test_unchanged_rows_are_not_rebuilt_and_copies_are_handed_out(tree: Settings) -> None:
    lister = Lister(tree)
    first = lister(include_origin=True)
    built = lister.rows.built
    first[0]["title"] = "scribbled"
    again = lister(include_origin=True)
    assert lister.rows.built == built and again[0]["title"] != "scribbled"


def test_an_edit_shows_on_the_next_call(tree: Settings) -> None:
    lister = Lister(tree)
    lister()
    put(Path(tree.skills_folder), "ops/deploy.md", "---\ntype: reference\n---\n# Ship it\n\nNew.\n")
    row = next(r for r in lister() if r["id"] == "ops/deploy")
    assert (row["title"], row["type"], row["function_id"]) == ("Ship it", "reference", None)
    assert lister.ids(search="new.", search_body=True) == ["ops/deploy"]


def test_a_same_size_edit_by_another_process_without_the_watcher(tree: Settings) -> None:
    lister = Lister(tree)
    doc = Path(tree.skills_folder) / "docs" / "readme.md"
    assert lister.ids(search="alles", search_body=True) == ["docs/readme"]
    before = os.stat(doc)
    script = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text('# Raadme\\n\\nÜber elles.\\n')"
    subprocess.run([sys.executable, "-c", script, str(doc)], check=True)
    os.utime(doc, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(doc).st_size == before.st_size
    assert next(r for r in lister() if r["id"] == "docs/readme")["title"] == "Raadme"
    assert lister.ids(search="alles", search_body=True) == []
    assert lister.ids(search="elles", search_body=True) == ["docs/readme"]


def test_a_delete_and_a_new_file_show_on_the_next_call(tree: Settings) -> None:
    lister = Lister(tree)
    assert "ops" in lister.ids()
    skills = Path(tree.skills_folder)
    (skills / "ops" / "quiet.md").unlink()
    put(skills, "ops.md", "# Ops page\n\nA page beside the folder.\n")
    ids = lister.ids()
    assert "ops/quiet" not in ids
    assert "ops/index" in ids and "ops" in ids, "a new file changes another row's display id"
    assert ids == [row["id"] for row in published(tree, True, False)]


def test_fresh_files_are_rebuilt_on_every_call(tree: Settings) -> None:
    now = [time.time_ns()]
    lister = Lister(tree)
    lister.rows = ListingRows(clock=lambda: now[0])
    lister()
    built = lister.rows.built
    lister()
    assert lister.rows.built == 2 * built and len(lister.rows) == 0
    now[0] += HOUR_NS
    lister()
    lister()
    assert lister.rows.built == 3 * built and len(lister.rows) == built
