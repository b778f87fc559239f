"""The watcher (§12.2–§12.3): path judging, self-write suppression, and real notifications
coalesced into one `{op: "external"}` per kind."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest

from iii_directory.config import Settings
from iii_directory.atomic import SelfWrites, atomic_write
from iii_directory.content.body_index import BodyIndex
from iii_directory.content.skill_listing import ListingRows
from iii_directory.content.roots import watch_roots
from iii_directory.content.watch import (
    AGENTS_EVENT,
    PROMPTS_EVENT,
    SKILLS_EVENT,
    PathJudge,
    SkillsWatcher,
    expand_new_directories,
    external_events,
)
from iii_directory.directory import Directory

from .helpers import call, write

EXTERNAL = {"op": "external"}


def test_path_judging(settings: Settings, roots: dict[str, Path]) -> None:
    judge = PathJudge(watch_roots(settings))
    skills, local, agents = roots["skills"], roots["local"], roots["agents"]
    assert judge(skills / "ns" / "a.md") == SKILLS_EVENT
    assert judge(local / "ns" / "a.md") == SKILLS_EVENT
    assert judge(skills / "system-prompts" / "p.md") == PROMPTS_EVENT
    assert judge(skills / "ns" / "system-prompts" / "p.md") == PROMPTS_EVENT
    assert judge(skills / "ns" / "prompts" / "p.md") is None
    assert judge(skills / "ns" / "agents" / "a.md") is None
    assert judge(skills / "ns" / "a.md.tmp") is None
    assert judge(skills / "ns" / "a.txt") is None
    assert judge(agents / "coder.md") == AGENTS_EVENT
    assert judge(agents / "nested" / "coder.md") is None
    assert judge(roots["global_agents"] / "g.md") == AGENTS_EVENT
    assert judge(roots["agents_skills"] / "pdf" / "SKILL.md") == SKILLS_EVENT
    assert judge(roots["project"] / "elsewhere.md") is None


def test_nested_roots_judge_by_the_deepest(roots: dict[str, Path]) -> None:
    settings = Settings(skills_folder=str(roots["skills"]), local_skills_folder=str(roots["skills"] / "prompts"),
                        agents_folder=str(roots["agents"]))
    judge = PathJudge(watch_roots(settings))
    assert judge(roots["skills"] / "prompts" / "ns" / "a.md") == SKILLS_EVENT
    assert judge(roots["skills"] / "other" / "prompts" / "a.md") is None


def test_one_event_per_kind_and_marks_consumed(settings: Settings, roots: dict[str, Path]) -> None:
    judge = PathJudge(watch_roots(settings))
    marks = SelfWrites()
    own = roots["skills"] / "ns" / "own.md"
    marks.mark(own)
    window = [roots["skills"] / "ns" / "a.md", roots["skills"] / "ns" / "b.md", own,
              roots["skills"] / "system-prompts" / "p.md", roots["agents"] / "x.md"]
    assert external_events(window, judge, marks) == [SKILLS_EVENT, PROMPTS_EVENT, AGENTS_EVENT]
    assert not marks.consume(own)
    marks.mark(own)
    assert external_events([own, own], judge, marks) == []
    assert external_events([own], judge, marks) == [SKILLS_EVENT]


# --- real notifications ----------------------------------------------------------------------


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await anyio.sleep(0.05)
    return predicate()


@pytest.fixture
async def watching(directory: Directory, roots: dict[str, Path]) -> AsyncIterator[Directory]:
    """A running watcher, proven live by a probe write, with the probe's events cleared."""
    watcher = directory.service(SkillsWatcher)
    await watcher.start()
    try:
        emitted = directory.engine.emitted
        probe = roots["agents"] / "probe.md"
        for _ in range(40):
            probe.write_text(f"probe {time.monotonic()}")
            if await wait_until(lambda: bool(emitted), timeout=0.25):
                break
        assert emitted, "the watcher never reported the probe"
        seen = watcher.windows
        probe.unlink()
        await wait_until(lambda: watcher.windows > seen)
        emitted.clear()
        yield directory
    finally:
        await watcher.stop()
    assert not watcher.running


async def settle(directory: Directory, since: int) -> None:
    """Wait until the watcher judged a window that started after `since`, plus a margin for
    notifications that straggle into the next window."""
    watcher = directory.service(SkillsWatcher)
    assert await wait_until(lambda: watcher.windows > since)
    await anyio.sleep(0.25)


def windows(directory: Directory) -> int:
    return directory.service(SkillsWatcher).windows


@pytest.mark.timeout(30)
async def test_external_burst_is_one_event_per_kind(watching: Directory, roots: dict[str, Path]) -> None:
    emitted = watching.engine.emitted
    seen = windows(watching)
    write(roots["skills"], "ns/a.md")
    write(roots["skills"], "ns/b.md")
    write(roots["local"], "ns/c.md")
    (roots["skills"] / "ns" / "a.md").write_text("# edited\n\nx\n")
    (roots["skills"] / "ns" / "b.md").unlink()
    write(roots["skills"], "system-prompts/p.md", "---\ndescription: d\n---\nx\n")
    write(roots["skills"], "ns/prompts/ignored.md")
    write(roots["skills"], "ns/x.md.tmp")
    await settle(watching, seen)
    assert sorted(emitted, key=str) == sorted([(SKILLS_EVENT, EXTERNAL), (PROMPTS_EVENT, EXTERNAL)], key=str)
    emitted.clear()
    seen = windows(watching)
    write(roots["agents"], "nested/deep.md")
    write(roots["skills"], "ns/agents/old.md")
    await settle(watching, seen)
    assert emitted == []
    seen = windows(watching)
    write(roots["agents"], "coder.md", "---\nname: Coder\n---\n")
    await settle(watching, seen)
    assert emitted == [(AGENTS_EVENT, EXTERNAL)]


@pytest.mark.timeout(30)
async def test_worker_writes_fire_only_their_precise_op(watching: Directory, roots: dict[str, Path]) -> None:
    emitted = watching.engine.emitted
    seen = windows(watching)
    await call(watching, "directory::skills::create", {"id": "ns/mine", "content": "# Mine\n\nx\n"})
    await settle(watching, seen)
    seen = windows(watching)
    await call(watching, "directory::skills::update", {"id": "ns/mine", "content": "# Mine\n\ny\n"})
    await settle(watching, seen)
    seen = windows(watching)
    await call(watching, "directory::skills::delete", {"id": "ns/mine"})
    await settle(watching, seen)
    assert emitted == [
        (SKILLS_EVENT, {"op": "create", "namespace": "ns", "id": "ns/mine"}),
        (SKILLS_EVENT, {"op": "update", "namespace": "ns", "id": "ns/mine"}),
        (SKILLS_EVENT, {"op": "delete", "namespace": "ns", "id": "ns/mine"}),
    ]
    # a marked write by any module of this worker is suppressed too; an unmarked one is not
    seen = windows(watching)
    atomic_write(roots["skills"] / "ns" / "quiet.md", "# q\n\nx\n", watching.self_writes)
    await settle(watching, seen)
    assert len(emitted) == 3
    seen = windows(watching)
    write(roots["skills"], "ns/loud.md")
    await settle(watching, seen)
    assert emitted[3:] == [(SKILLS_EVENT, EXTERNAL)]


@pytest.mark.timeout(30)
async def test_roots_are_created_and_agent_skills_watched_only_if_present(
        directory: Directory, roots: dict[str, Path]) -> None:
    watcher = directory.service(SkillsWatcher)
    await watcher.start()
    try:
        watched = {r.path for r in watcher.roots}
        assert roots["skills"].is_dir() and roots["local"].is_dir() and roots["agents"].is_dir()
        assert roots["agents_skills"] not in watched and not roots["agents_skills"].exists()
        assert roots["global_agents"] not in watched
    finally:
        await watcher.stop()


def test_new_directories_are_walked(tmp_path: Path) -> None:
    write(tmp_path, "ns/a.md")
    write(tmp_path, "ns/deep/b.md")
    write(tmp_path, "ns/c.txt")
    write(tmp_path, "file.md")
    found = expand_new_directories([tmp_path / "ns", tmp_path / "file.md", tmp_path / "gone"])
    assert found == {tmp_path / "ns" / "a.md", tmp_path / "ns" / "deep" / "b.md"}
    assert len(expand_new_directories([tmp_path / "ns"], limit=1)) == 1


def _settled_index(directory: Directory) -> BodyIndex:
    """The directory's body index with its clock an hour ahead: what it reads is settled."""
    index = directory.service(BodyIndex)
    index.clock = lambda: time.time_ns() + 3600 * 1_000_000_000
    return index


@pytest.mark.timeout(30)
async def test_the_body_index_is_built_when_watching_starts(directory: Directory,
                                                            roots: dict[str, Path]) -> None:
    doc = write(roots["skills"], "ns/early.md", "# Early\n\nthere before the start\n")
    index = _settled_index(directory)
    rows = directory.service(ListingRows)
    rows.clock = index.clock
    watcher = directory.service(SkillsWatcher)
    await watcher.start()
    try:
        assert await wait_until(lambda: doc in index)
        reads, built = index.reads, rows.built
        assert index.contains(doc, os.stat(doc), "before the start") and index.reads == reads
        listed = await call(directory, "directory::skills::list", {"search": "start", "search_body": True})
        assert [row["id"] for row in listed["skills"]] == ["ns/early"]
        assert (index.reads, rows.built) == (reads, built), "the first list read no file"
    finally:
        await watcher.stop()


@pytest.mark.timeout(30)
async def test_the_body_index_waits_for_the_first_answer_gate(directory: Directory,
                                                              roots: dict[str, Path]) -> None:
    """A hybrid `serve` arms the gate (`first_answer.py`): the listing rows and the body index
    are built after its first search answer, not beside it; the watcher itself runs at once."""
    doc = write(roots["skills"], "ns/early.md", "# Early\n\nthere before the start\n")
    index = _settled_index(directory)
    directory.first_answer.arm(60.0)
    watcher = directory.service(SkillsWatcher)
    await watcher.start()
    try:
        await anyio.wait_all_tasks_blocked()
        assert watcher.running and doc not in index
        assert directory.first_answer._event is not None, "the build is parked on the gate"
        directory.first_answer.open()
        assert await wait_until(lambda: doc in index)
    finally:
        await watcher.stop()


@pytest.mark.timeout(30)
async def test_the_watcher_keeps_the_body_index_current(watching: Directory,
                                                        roots: dict[str, Path]) -> None:
    index = _settled_index(watching)
    seen = windows(watching)
    doc = write(roots["skills"], "ns/kept.md", "# Kept\n\nfirst words\n")
    gone = write(roots["skills"], "ns/gone.md", "# Gone\n\nsoon\n")
    await settle(watching, seen)
    assert doc in index and gone in index
    seen = windows(watching)
    doc.write_text("# Kept\n\nsecond words, longer\n")
    gone.unlink()
    await settle(watching, seen)
    assert gone not in index
    reads = index.reads
    assert index.contains(doc, os.stat(doc), "second words") and index.reads == reads
