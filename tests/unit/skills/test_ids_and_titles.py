"""Two rules of skill ids and titles (issue 36; docs/skill-ids-and-titles.md):

* `<ns>.md` and `<ns>/index.md` (or `SKILL.md` / `SKILLS.md`) both name the id `<ns>`: the literal
  file owns `<ns>` and the overview is listed, read and pointed to as `<ns>/index`, in every
  root, so each list row names exactly one file;
* a `# comment` inside a fenced code block is never a title, and code is never a description.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from iii_directory.content.markdown import first_h1, first_paragraph
from iii_directory.directory import Directory

from .helpers import call, error, write

FLAT = "# Flat ns2\n\nThe flat file.\n"
OVERVIEW = "---\ntype: index\n---\n# Ns2 overview\n\nThe overview.\n"


def rows_by_id(listed: dict[str, object]) -> dict[str, dict[str, object]]:
    return {row["id"]: row for row in listed["skills"]}  # type: ignore[index, union-attr]


@pytest.mark.parametrize("overview", ["ns2/index.md", "ns2/SKILL.md", "ns2/SKILLS.md"])
async def test_the_literal_file_owns_the_bare_id_and_the_overview_keeps_index(
        directory: Directory, roots: dict[str, Path], overview: str) -> None:
    write(roots["skills"], "ns2.md", FLAT)
    write(roots["skills"], overview, OVERVIEW)
    rows = rows_by_id(await call(directory, "directory::skills::list", {"include_origin": True}))
    assert set(rows) == {"ns2", "ns2/index"}
    assert (rows["ns2"]["title"], rows["ns2/index"]["title"]) == ("Flat ns2", "Ns2 overview")
    flat = await call(directory, "directory::skills::get", {"id": "ns2"})
    assert (flat["id"], flat["path"]) == ("ns2", str(roots["skills"] / "ns2.md"))
    for form in ("ns2/index", "iii://ns2/index", "ns2/SKILL.md"):
        got = await call(directory, "directory::skills::get", {"id": form})
        assert (got["id"], got["title"]) == ("ns2/index", "Ns2 overview")
    index = (await call(directory, "directory::skills::index"))["body"]
    assert '`directory::skills::get { "id": "ns2/index" }`' in index


async def test_deleting_the_literal_file_gives_the_bare_id_back_to_the_overview(
        directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns2.md", FLAT)
    write(roots["skills"], "ns2/index.md", OVERVIEW)
    assert (await call(directory, "directory::skills::delete", {"id": "ns2"}))["id"] == "ns2"
    assert not (roots["skills"] / "ns2.md").exists()
    assert set(rows_by_id(await call(directory, "directory::skills::list"))) == {"ns2"}
    assert (await call(directory, "directory::skills::get", {"id": "ns2"}))["title"] == "Ns2 overview"


async def test_create_refuses_the_bare_id_an_overview_already_answers(
        directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns2/index.md", OVERVIEW)
    refused = await error(directory, "directory::skills::create", {"id": "ns2", "content": FLAT})
    assert refused.code == "D114"
    assert not (roots["skills"] / "ns2.md").exists()


async def test_the_rule_holds_across_roots(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["local"], "ns2.md", FLAT)
    write(roots["skills"], "ns2/index.md", OVERVIEW)
    rows = rows_by_id(await call(directory, "directory::skills::list", {"include_origin": True}))
    assert {k: (v["title"], v["origin"]) for k, v in rows.items()} == {
        "ns2": ("Flat ns2", "local"), "ns2/index": ("Ns2 overview", "skills")}


FENCED = [
    ("```bash\n# install it\nnpm i x\n```\n\n# Real title\n\nUse it.\n", "Real title", "Use it."),
    ("~~~\n# tilde comment\n~~~\n\nPlain text.\n", None, "Plain text."),
    ("````md\n# inner\n```\n# still inside\n````\n# After\n", "After", ""),
    ("  ```\n# indented fence\n  ```\n# Out\n", "Out", ""),
    ("```py\n# never closed\n", None, ""),
    ("Intro line\n```\n# code\n```\nafter\n", None, "Intro line"),
    ("``` a`b\n# not a fence: backtick in the info string\n", "not a fence: backtick in the info string", "``` a`b"),
    ("    # indented four: still read as the title, as the left-trim rule says\n",
     "indented four: still read as the title, as the left-trim rule says", ""),
]


@pytest.mark.parametrize(("body", "title", "description"), FENCED)
def test_code_is_never_a_title_or_a_description(body: str, title: str | None, description: str) -> None:
    assert first_h1(body) == title
    assert first_paragraph(body) == description


async def test_a_fenced_comment_does_not_title_a_skill(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/code.md", "```python\n# comment in code\nx = 1\n```\n\nText para.\n")
    row = rows_by_id(await call(directory, "directory::skills::list"))["ns/code"]
    assert (row["title"], row["description"]) == ("ns/code", "Text para.")
    assert (await call(directory, "directory::skills::get", {"id": "ns/code"}))["title"] == "ns/code"
