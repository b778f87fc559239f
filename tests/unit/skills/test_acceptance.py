"""The skills scenarios of surfaces.md §15.2 ("Reading skills") and §15.3, asserting the newest
behaviour where the checklist marks an expectation stale (⚠)."""

from __future__ import annotations

import os
from pathlib import Path

from iii_directory.directory import Directory

from .helpers import call, error, ids, write

GET, LIST, INDEX = "directory::skills::get", "directory::skills::list", "directory::skills::index"


async def rows(directory: Directory, **request: object) -> dict[str, dict]:
    return {r["id"]: r for r in (await call(directory, LIST, dict(request)))["skills"]}


async def test_01_flat_folder_appears(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/alpha.md")
    write(roots["skills"], "ns/beta.md")
    assert await ids(directory) == ["ns/alpha", "ns/beta"]


async def test_02_title_and_description_from_the_body(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/labelled.md", "# Labelled skill\n\nFirst paragraph summary.\n\nSecond one.\n")
    row = (await rows(directory))["ns/labelled"]
    assert (row["title"], row["description"], row["type"]) == ("Labelled skill", "First paragraph summary.", None)


async def test_03_frontmatter_title_and_type_win(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/fm.md", "---\ntitle: Frontmatter title\ntype: how-to\n---\n# Body H1\n\nThe paragraph.\n")
    row = (await rows(directory))["ns/fm"]
    assert (row["title"], row["type"], row["description"]) == ("Frontmatter title", "how-to", "The paragraph.")


async def test_04_nested_folders(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "team-a/playbook.md")
    write(roots["skills"], "team-a/meetings/standup.md")
    assert await ids(directory) == ["team-a/meetings/standup", "team-a/playbook"]


async def test_05_06_get(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/lookup.md", "# Lookup\n\nLookup body.\n")
    got = await call(directory, GET, {"id": "ns/lookup"})
    assert (got["title"], got["type"], got["body"]) == ("Lookup", None, "# Lookup\n\nLookup body.\n")
    assert got["modified_at"] and "description" not in got
    write(roots["skills"], "ns/typed.md", "---\ntitle: FM\ntype: reference\n---\n# Body H1 ignored\n\nx\n")
    got = await call(directory, GET, {"id": "ns/typed"})
    assert (got["title"], got["type"]) == ("FM", "reference")
    assert "# Body H1 ignored" in got["body"]


async def test_07_16_18_id_forms(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/prefixed.md")
    write(roots["skills"], "ns-path/lookup.md")
    write(roots["skills"], "ns-combo/lookup.md")
    assert (await call(directory, GET, {"id": "iii://ns/prefixed"}))["id"] == "ns/prefixed"
    assert (await call(directory, GET, {"id": "ns-path/lookup.md"}))["id"] == "ns-path/lookup"
    assert (await call(directory, GET, {"id": "iii://ns-combo/lookup.md"}))["id"] == "ns-combo/lookup"


async def test_08_changes_seen_immediately(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"], "ns/live.md", "# Live\n\nold body\n")
    await call(directory, GET, {"id": "ns/live"})
    path.write_text("# Live\n\nnew body\n")
    assert (await call(directory, GET, {"id": "ns/live"}))["body"] == "# Live\n\nnew body\n"


async def test_09_unknown_skill(directory: Directory) -> None:
    failure = await error(directory, GET, {"id": "ns/unknown"})
    assert "D110" in failure.message and "does not exist" in failure.message


async def test_10_non_iii_scheme(directory: Directory) -> None:
    assert "iii://" in (await error(directory, GET, {"id": "https://example.com"})).message


async def test_11_bare_worker_name(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "sandbox/index.md", "# Sandbox\n\nOverview.\n")
    bare = await call(directory, GET, {"id": "sandbox"})
    full = await call(directory, GET, {"id": "sandbox/index"})
    assert bare["id"] == "sandbox" and bare["body"] == full["body"]


async def test_12_uppercase_file_skipped(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/Bad-Name.md")
    listed = await ids(directory)
    assert "ns/Bad-Name" not in listed and "ns/bad-name" not in listed


async def test_13_20_index(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "team-a/index.md", "# team-a\n\nTeam A does A.\n")
    write(roots["skills"], "team-b/index.md", "---\ntype: index\n---\n# team-b\n\nTeam B does B.\n")
    write(roots["skills"], "team-a/foo.md", "---\ntype: how-to\n---\n# Foo\n\nFoo.\n")
    write(roots["skills"], "round-trip/index.md", "# Round trip\n\nRT.\n")
    got = await call(directory, INDEX)
    body = got["body"]
    assert got["workers_count"] >= 2
    assert body.startswith("# Skills index")
    assert "## team-a" in body and "## team-b" in body
    assert "Team A does A." in body and "Team B does B." in body
    assert 'Full reference: call `directory::skills::get { "id": "team-a" }` (legacy `iii://team-a`).' in body
    assert "team-a/foo" not in body and "## Foo" not in body
    assert "(legacy `iii://round-trip`)" in body
    a = await call(directory, GET, {"id": "iii://round-trip"})
    b = await call(directory, GET, {"id": "iii://round-trip/index"})
    assert a["id"] == b["id"] == "round-trip" and a["body"] == b["body"]


async def test_14_15_17_19_skills_md_aliases(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns-skills/SKILLS.md")
    write(roots["skills"], "ns-nested/section/SKILLS.md")
    write(roots["skills"], "ns-skills-get/SKILLS.md")
    write(roots["skills"], "ns-combo-skills/SKILLS.md")
    listed = await ids(directory)
    assert "ns-skills" in listed and "ns-skills/SKILLS" not in listed
    assert "ns-nested/section" in listed
    assert (await call(directory, GET, {"id": "ns-skills-get/SKILLS.md"}))["id"] == "ns-skills-get"
    assert (await call(directory, GET, {"id": "iii://ns-combo-skills/SKILLS.md"}))["id"] == "ns-combo-skills"


# --- §15.3 smoke expectations that concern skills ---------------------------------------------


async def test_smoke_overview_ids_and_light_rows(directory: Directory, roots: dict[str, Path]) -> None:
    for ns in ("shell", "database", "iii"):
        write(roots["skills"], f"{ns}/index.md", f"# {ns}\n\nAbout {ns}.\n")
    listed = await rows(directory, include_description=False)
    assert list(listed) == ["database", "iii", "shell"]
    assert {r["description"] for r in listed.values()} == {""}


async def test_smoke_local_override_wins(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "shell/index.md", "# Downloaded\n\nx\n")
    write(roots["skills"], "shell/exec.md")
    write(roots["local"], "shell/index.md", "# Local\n\nx\n")
    assert (await call(directory, GET, {"id": "shell"}))["title"] == "Local"
    assert (await error(directory, GET, {"id": "shell/exec"})).code == "D110"


async def test_smoke_miss_suggests_display_ids(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "database/index.md")
    write(roots["skills"], "database/skills/database/query.md")
    message = (await error(directory, GET, {"id": "database/query"})).message
    assert "not_found" in message and "Next:" in message
    assert "Did you mean: database/skills/database/query, database." in message
    assert "database/index" not in message


async def test_smoke_inputs(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/a.md")
    for bad in [{"id": 1}, {"id": ["a"]}, {"id": None}]:
        assert "invalid request" in (await error(directory, GET, bad)).message
    assert "invalid request" in (await error(directory, LIST, {"search": 1})).message
    assert await ids(directory, filter="ns") == ["ns/a"]
    assert (await call(directory, INDEX, {"worker": "ns"}))["workers_count"] == 0
    assert await ids(directory, type="zzz") == [] and await ids(directory, search="qqq") == []
    long_id = "/".join(["abcdefghij" * 5] * 9)[:455].rstrip("/")
    assert (await error(directory, GET, {"id": long_id})).code == "D110"
    for bad in ["ns/", "ns//a"]:
        assert (await error(directory, GET, {"id": bad})).code == "invocation_failed"


async def test_smoke_broken_files(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/index.md", "# NS\n\nfine\n")
    write(roots["skills"], "ns/SKILLS.md", "# Duplicate\n\nx\n")
    write(roots["skills"], "ns/big.md", "x" * 262_145)
    write(roots["skills"], "ns/fm-only.md", "---\ntitle: t\n---\n")
    unreadable = write(roots["skills"], "ns/locked.md", "# Locked\n\nx\n")
    os.chmod(unreadable, 0)
    try:
        for skill in ("ns/big", "ns/fm-only"):
            assert (await error(directory, GET, {"id": skill})).code == "invocation_failed"
        if not os.access(unreadable, os.R_OK):
            assert (await error(directory, GET, {"id": "ns/locked"})).message.startswith("read ")
        listed = await ids(directory)
        assert listed.count("ns") == 1 and {"ns/big", "ns/fm-only", "ns/locked"} <= set(listed)
        assert (await call(directory, INDEX))["workers_count"] == 1
    finally:
        os.chmod(unreadable, 0o644)
