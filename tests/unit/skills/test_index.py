"""`directory::skills::index` (§6.3): overview rows, exact rendering, the byte budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iii_directory.content.skills import SkillRow
from iii_directory.content.skills_index import is_worker_overview, render_index
from iii_directory.directory import Directory

from .helpers import PeerEngine, call, write


def row(on_disk: str, title: str, description: str = "", type_: str | None = None) -> SkillRow:
    display = on_disk.removesuffix("/index")
    return SkillRow(on_disk, display, title, type_, None, False, description, 1, "")


def test_empty_index() -> None:
    rendered = render_index([])
    assert (rendered.body, rendered.workers_count) == ("# Skills index\n\n0 worker(s).\n", 0)


def test_exact_rendering() -> None:
    rendered = render_index([row("bare/index", "bare"), row("team-a/index", "Team A", "Does A things."),
                             row("team-a/foo", "Foo", "not an overview")])
    assert rendered.workers_count == 2
    assert rendered.body == (
        "# Skills index\n\n2 worker(s).\n"
        "\n## bare\n"
        '\nFull reference: call `directory::skills::get { "id": "bare" }` (legacy `iii://bare`).\n'
        "\n## Team A\n"
        "\nDoes A things.\n"
        '\nFull reference: call `directory::skills::get { "id": "team-a" }` (legacy `iii://team-a`).\n'
    )


def test_overview_rows() -> None:
    assert is_worker_overview(row("ns/index", "t"))
    assert is_worker_overview(row("ns/deep/thing", "t", type_="index"))
    assert not is_worker_overview(row("ns/exec", "t"))
    assert not is_worker_overview(row("ns/deep/index", "t"))
    assert not is_worker_overview(row("index", "t"))


def test_budget_keeps_every_heading() -> None:
    rows = [row(f"w{i:02d}/index", f"Worker {i}", "d" * 200) for i in range(50)]
    rendered = render_index(rows)
    assert rendered.workers_count == 50
    for i in range(50):
        assert f"\n## Worker {i}\n" in rendered.body
    assert rendered.body.endswith(
        "\n(some descriptions omitted to save space; call directory::skills::get for the full reference)\n")
    included = rendered.body.count("d" * 200)
    assert 0 < included < 50


def test_budget_boundary_is_inclusive() -> None:
    head = "# Skills index\n\n1 worker(s).\n\n## t\n"
    fits = 3000 - len(head) - 2
    assert "omitted" not in render_index([row("a/index", "t", "x" * fits)]).body
    assert "omitted" in render_index([row("a/index", "t", "x" * (fits + 1))]).body
    multibyte = "é" * (fits // 2 + 1)
    assert "omitted" in render_index([row("a/index", "t", multibyte)]).body


async def test_index_through_the_function(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "team-a/index.md", "# team-a\n\nTeam A overview.\n")
    write(roots["skills"], "team-b/index.md", "---\ntype: index\n---\n# team-b\n\nTeam B overview.\n")
    write(roots["skills"], "team-a/foo.md", "---\ntype: how-to\n---\n# Foo\n\nFoo body.\n")
    write(roots["agents_skills"], "pdf/SKILL.md", "# PDF\n\nAgent skill.\n")
    got = await call(directory, "directory::skills::index", {"worker": "ignored"})
    assert got["workers_count"] == 2
    body = got["body"]
    assert body.startswith("# Skills index\n\n2 worker(s).\n")
    assert "## team-a" in body and "## team-b" in body and "Team B overview." in body
    assert ('Full reference: call `directory::skills::get { "id": "team-a" }` (legacy `iii://team-a`).'
            in body)
    assert "team-a/foo" not in body and "## Foo" not in body and "PDF" not in body


async def test_index_always_refetches(make_directory: Any, peer: PeerEngine, roots: dict[str, Path]) -> None:
    write(roots["skills"], "shell/index.md", "# Shell\n\nx\n")
    write(roots["skills"], "database/index.md", "# Database\n\nx\n")
    peer.installed("shell")
    directory = make_directory(peer, filter_unregistered=True)
    assert (await call(directory, "directory::skills::index"))["workers_count"] == 1
    peer.installed("shell", "database")
    assert (await call(directory, "directory::skills::index"))["workers_count"] == 2
    assert peer.status_calls() == 2
