"""Skills reads on a 1,000-document tree (surfaces.md §6): every call re-scans disk.

Run: `python -m pytest benchmarks/bench_skills.py --benchmark-only`
(`BENCH_SKILLS_WORKERS=250` for 5,000 documents).

Tree: 50 worker namespaces, each with an `index.md` overview (frontmatter + two paragraphs)
and 19 how-to pages, plus 10 agent skills. `list` reads every file's frontmatter; `list_page`
is the Directory page's first call (descriptions and origins); `list_search_body` a body search
that matches nothing (every body is looked at); `get_miss` ranks suggestions over the whole
visible set; `index` renders the overview of 50 workers.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory

WORKERS, PAGES = int(os.environ.get("BENCH_SKILLS_WORKERS", "50")), 19


def _tree(root: Path) -> None:
    for w in range(WORKERS):
        ns = root / "skills" / f"worker-{w:02d}"
        ns.mkdir(parents=True)
        (ns / "index.md").write_text(
            f"---\ntitle: Worker {w}\ntype: index\n---\n# Worker {w}\n\n"
            f"Worker {w} does useful things for agents.\n\nMore detail follows.\n")
        for p in range(PAGES):
            (ns / f"page-{p:02d}.md").write_text(
                f"---\ntype: how-to\nfunction_id: worker-{w:02d}::do-{p}\n---\n# Page {p}\n\n"
                + "Explains one function in a few sentences. " * 8 + "\n")
    for a in range(10):
        doc = root / ".agents" / "skills" / f"agent-{a}" / "SKILL.md"
        doc.parent.mkdir(parents=True)
        doc.write_text(f"# Agent skill {a}\n\nA system-installed skill.\n")


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Directory]:
    root = tmp_path_factory.mktemp("skills-bench")
    _tree(root)
    settings = Settings(
        skills_folder=str(root / "skills"), local_skills_folder=str(root / "local"),
        agents_folder=str(root / "agents"), agents_skills_folder=str(root / ".agents" / "skills"),
        global_agents_skills_folder=str(root / "none"), filter_unregistered=False,
    )
    yield Directory(settings=settings)


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def _invoke(loop: asyncio.AbstractEventLoop, directory: Directory, fid: str, data: dict[str, Any]) -> Any:
    try:
        return loop.run_until_complete(directory.invoke(fid, data))
    except Exception as exc:  # noqa: BLE001 - a miss is the measured path
        return exc


def test_list_all(benchmark: Any, directory: Directory, loop: asyncio.AbstractEventLoop) -> None:
    result = benchmark(_invoke, loop, directory, "directory::skills::list", {})
    assert len(result["skills"]) == WORKERS * (PAGES + 1) + 10


def test_list_page(benchmark: Any, directory: Directory, loop: asyncio.AbstractEventLoop) -> None:
    request = {"include_description": True, "include_origin": True}
    result = benchmark(_invoke, loop, directory, "directory::skills::list", request)
    assert len(result["skills"]) == WORKERS * (PAGES + 1) + 10


def test_list_search_body(benchmark: Any, directory: Directory, loop: asyncio.AbstractEventLoop) -> None:
    request = {"search": "rollout undo", "search_body": True, "include_description": False}
    result = benchmark(_invoke, loop, directory, "directory::skills::list", request)
    assert result["skills"] == []


def test_list_prefix(benchmark: Any, directory: Directory, loop: asyncio.AbstractEventLoop) -> None:
    result = benchmark(_invoke, loop, directory, "directory::skills::list", {"prefix": "worker-07/"})
    assert len(result["skills"]) == PAGES + 1


def test_get_hit(benchmark: Any, directory: Directory, loop: asyncio.AbstractEventLoop) -> None:
    result = benchmark(_invoke, loop, directory, "directory::skills::get", {"id": "worker-07/page-03"})
    assert result["id"] == "worker-07/page-03"


def test_get_miss_with_suggestions(benchmark: Any, directory: Directory, loop: asyncio.AbstractEventLoop) -> None:
    result = benchmark(_invoke, loop, directory, "directory::skills::get", {"id": "worker-07/page-3"})
    assert "Did you mean" in str(result)


def test_index(benchmark: Any, directory: Directory, loop: asyncio.AbstractEventLoop) -> None:
    result = benchmark(_invoke, loop, directory, "directory::skills::index", {})
    assert result["workers_count"] == WORKERS
