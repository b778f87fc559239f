"""`directory::skills::list` (§6.1): rows, filters, unreadable files, filter_unregistered."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from iii_directory.directory import Directory

from .helpers import PeerEngine, call, error, ids, write

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$")


async def test_rows_carry_every_field(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"], "ns/labelled.md",
                 "# Labelled skill\n\nFirst paragraph summary.\n\nSecond paragraph.\n")
    rows = (await call(directory, "directory::skills::list"))["skills"]
    assert rows == [{
        "id": "ns/labelled",
        "title": "Labelled skill",
        "type": None,
        "function_id": None,
        "disable_model_invocation": False,
        "description": "First paragraph summary.",
        "bytes": path.stat().st_size,
        "modified_at": rows[0]["modified_at"],
    }]
    assert RFC3339.match(rows[0]["modified_at"])


async def test_frontmatter_wins(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/fm.md",
          "---\ntitle: FM title\ntype: how-to\nfunction_id: ns::do\ndisable-model-invocation: true\n---\n"
          "# Body H1\n\nThe paragraph.\n")
    (row,) = (await call(directory, "directory::skills::list"))["skills"]
    assert (row["title"], row["type"], row["function_id"], row["disable_model_invocation"],
            row["description"]) == ("FM title", "how-to", "ns::do", True, "The paragraph.")


async def test_ids_and_aliases(directory: Directory, roots: dict[str, Path]) -> None:
    for rel in ["ns/alpha.md", "ns/beta.md", "team-a/playbook.md", "team-a/meetings/standup.md",
                "ns-skills/SKILLS.md", "ns-nested/section/SKILLS.md", "ns/Bad-Name.md",
                "ns/prompts/x.md", "ns/system-prompts/y.md", "ns/agents/z.md"]:
        write(roots["skills"], rel)
    assert await ids(directory) == [
        "ns-nested/section", "ns-skills", "ns/alpha", "ns/beta", "team-a/meetings/standup",
        "team-a/playbook",
    ]


async def test_filters(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "database/index.md", "---\ntype: index\n---\n# Database\n\nStores rows.\n")
    write(roots["skills"], "database/query.md", "---\ntype: how-to\n---\n# Query\n\nUse SELECT.\n")
    write(roots["skills"], "shell/index.md", "# Shell\n\nRuns commands in a sandbox.\n")
    assert await ids(directory, prefix="database/") == ["database", "database/query"]
    assert await ids(directory, prefix="  ") == ["database", "database/query", "shell"]
    assert await ids(directory, type="how-to") == ["database/query"]
    assert await ids(directory, type="zzz") == []
    assert await ids(directory, search="SANDBOX") == ["shell"]
    assert await ids(directory, search="query") == ["database/query"]
    assert await ids(directory, search="nothing-like-this") == []
    rows = (await call(directory, "directory::skills::list",
                       {"search": "sandbox", "include_description": False}))["skills"]
    assert [(r["id"], r["description"]) for r in rows] == [("shell", "")]
    rows = (await call(directory, "directory::skills::list", {"include_description": None}))["skills"]
    assert rows[0]["description"] == "Stores rows."


async def test_unreadable_files_still_list(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/big.md", "---\ntitle: Big\n---\n" + "x" * 262_200)
    write(roots["skills"], "ns/fm-only.md", "---\ntitle: Only FM\n---\n")
    write(roots["skills"], "ns/binary.md", b"\xff\xfe")
    write(roots["skills"], "ns/ok.md", "# Fine\n\nok\n")
    rows = {r["id"]: r for r in (await call(directory, "directory::skills::list"))["skills"]}
    assert rows["ns/big"]["title"] == "ns/big"
    assert rows["ns/big"]["bytes"] > 262_144
    assert rows["ns/fm-only"]["title"] == "ns/fm-only"
    assert rows["ns/binary"]["description"] == ""
    assert rows["ns/ok"]["title"] == "Fine"
    index = await call(directory, "directory::skills::index")
    assert index["workers_count"] == 0


async def test_alias_bomb_file_still_lists(directory: Directory, roots: dict[str, Path]) -> None:
    lines = ["---", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 10) + "]")
    lines += ["title: Bomb", "---", "# Safe heading", "", "Body."]
    write(roots["skills"], "ns/bomb.md", "\n".join(lines) + "\n")
    (row,) = (await call(directory, "directory::skills::list"))["skills"]
    assert (row["id"], row["title"], row["description"]) == ("ns/bomb", "Safe heading", "Body.")


async def test_type_confused_requests_are_rejected(directory: Directory) -> None:
    failure = await error(directory, "directory::skills::list", {"search": 5})
    assert failure.message == 'invalid request: field "search": expected a string'
    assert await ids(directory, filter="x") == []


async def test_filter_unregistered(make_directory: Any, peer: PeerEngine, roots: dict[str, Path]) -> None:
    for rel in ["shell/index.md", "database/index.md", "iii/index.md", "directory/x.md", "index.md"]:
        write(roots["skills"], rel)
    write(roots["agents_skills"], "pdf/SKILL.md")
    peer.installed("shell")
    directory = make_directory(peer, filter_unregistered=True)
    assert await ids(directory) == ["directory/x", "iii", "index", "pdf", "shell"]
    standalone = make_directory(filter_unregistered=True)
    assert "database" in await ids(standalone)


async def test_search_body_matches_the_body_only_when_asked(
    directory: Directory, roots: dict[str, Path]
) -> None:
    write(roots["skills"], "ops/deploy.md",
          "# Deploy\n\nShips a release.\n\n## Rollback\n\nRun `kubectl rollout undo` first.\n")
    write(roots["skills"], "ops/notes.md", "---\ntitle: Notes\n---\n# Notes\n\nKubectl tips.\n")
    write(roots["skills"], "ops/empty.md", "---\ntitle: Empty\n---\n")
    assert await ids(directory, search="rollout undo") == []
    assert await ids(directory, search="ROLLOUT UNDO", search_body=True) == ["ops/deploy"]
    assert await ids(directory, search="kubectl", search_body=True) == ["ops/deploy", "ops/notes"]
    assert await ids(directory, search="title: notes", search_body=True) == []
    assert await ids(directory, search="kubectl", search_body=False) == ["ops/notes"]
    rows = (await call(directory, "directory::skills::list",
                       {"search": "rollout", "search_body": True}))["skills"]
    assert [(r["id"], r["description"]) for r in rows] == [("ops/deploy", "Ships a release.")]
    failure = await error(directory, "directory::skills::list", {"search_body": "yes"})
    assert failure.message == 'invalid request: field "search_body": expected a boolean'


async def test_include_origin_says_where_each_row_lives(
    directory: Directory, roots: dict[str, Path]
) -> None:
    write(roots["project"], "kits.lock", "version: 1\nkits:\n  acme/a: {}\n")
    write(roots["skills"], "acme/a/flow.md")
    write(roots["skills"], "shared/tool.md")
    write(roots["local"], "mine/note.md")
    write(roots["agents_skills"], "pdf/SKILL.md")
    plain = (await call(directory, "directory::skills::list"))["skills"]
    assert all("origin" not in row for row in plain), "rows keep their published shape"
    rows = (await call(directory, "directory::skills::list", {"include_origin": True}))["skills"]
    assert {r["id"]: r["origin"] for r in rows} == {
        "acme/a/flow": "kit", "shared/tool": "skills", "mine/note": "local", "pdf": "read_only"}
    narrowed = await call(directory, "directory::skills::list",
                          {"include_origin": True, "prefix": "pdf"})
    assert [(r["id"], r["origin"]) for r in narrowed["skills"]] == [("pdf", "read_only")]
    failure = await error(directory, "directory::skills::list", {"include_origin": "yes"})
    assert failure.message == 'invalid request: field "include_origin": expected a boolean'


async def test_repeated_unreadable_files_log_once_then_at_debug(
        directory: Directory, roots: dict[str, Path], caplog: Any, monkeypatch: Any) -> None:
    from iii_directory.content import skills

    monkeypatch.setattr(skills, "_unreadable", skills.ThrottledLog(skills.log, 30.0, lambda: 0.0))
    for name in ("a", "b", "c"):
        write(roots["skills"], f"ns/{name}.md", "---\ntitle: Big\n---\n" + "x" * 262_200)
    with caplog.at_level("DEBUG", logger="iii_directory.content.skills"):
        await call(directory, "directory::skills::list")
        await call(directory, "directory::skills::list")
    unreadable = [r.levelname for r in caplog.records if "is too large" in r.getMessage()]
    # six reads of three oversized files, two listings: the first at INFO, the rest at DEBUG
    assert unreadable == ["INFO"] + ["DEBUG"] * 5


async def test_limit_and_ids_only_shape_a_light_answer(
    directory: Directory, roots: dict[str, Path]
) -> None:
    for name in ("a", "b", "c", "d"):
        write(roots["skills"], f"ops/{name}.md", f"# {name.upper()}\n\nAbout {name}.\n\nrecord it\n")
    full = (await call(directory, "directory::skills::list", {"include_origin": True}))["skills"]
    first = await call(directory, "directory::skills::list", {"include_origin": True, "limit": 2})
    assert first == {"skills": full[:2]}, "the first rows of the same list, same shape"
    assert (await call(directory, "directory::skills::list", {"limit": 99}))["skills"] == [
        {k: v for k, v in row.items() if k != "origin"} for row in full]
    light = await call(directory, "directory::skills::list",
                       {"search": "RECORD", "search_body": True, "ids_only": True})
    assert light == {"skills": [], "ids": ["ops/a", "ops/b", "ops/c", "ops/d"]}
    assert await call(directory, "directory::skills::list",
                      {"search": "about c", "ids_only": True, "limit": 1}) == {"skills": [], "ids": ["ops/c"]}
    assert "ids" not in await call(directory, "directory::skills::list", {"ids_only": False})
    failure = await error(directory, "directory::skills::list", {"limit": 0})
    assert "limit" in failure.message
