"""The remembered visible set (`skills_view.build_view`) and the remembered skill entries of the
search's skills lane (`side_lanes.VisibleEntries`): reused while nothing they were read from can
have changed, rebuilt the moment a folder, a root or a file changes. What is settled is decided by
injected clocks, never by sleeping; every change also sets its folder's mtime to a fresh value, so
two changes within one timestamp tick cannot look alike."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.content import skills_view
from iii_directory.content.listing_cache import LISTINGS
from iii_directory.content.skills import RowFactsCache, build_view, row_facts_in_state
from iii_directory.content.stat_cache import signature
from iii_directory.search.side_lanes import VisibleEntries

from .helpers import write

LATER_NS = 60 * 1_000_000_000
_STAMPS = itertools.count(1_000_000_000_000_000_000, 1_000_000_007)


def touch(folder: Path) -> None:
    """Give `folder` an mtime no earlier change had (ctime moves with it)."""
    stamp = next(_STAMPS)
    os.utime(folder, ns=(stamp, stamp))


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Folders count as settled: the listing cache's clock runs a minute ahead."""
    monkeypatch.setattr(LISTINGS, "clock", lambda: time.time_ns() + LATER_NS)
    skills_view._VIEWS.clear()
    skills_view._LATEST.clear()
    yield
    skills_view._VIEWS.clear()
    skills_view._LATEST.clear()


def ids(view: Any) -> list[str]:
    return [f.id for f in view.files]


def test_an_unchanged_tree_hands_back_the_same_view(settings: Settings, roots: dict[str, Path],
                                                    settled: None) -> None:
    write(roots["skills"], "mail/index.md")
    write(roots["skills"], "mail/send.md")
    first = build_view(settings, None)
    assert build_view(settings, None) is first
    assert build_view(settings, frozenset({"mail"})) is not first  # another installed set
    on = settings.model_copy(update={"filter_unregistered": True})
    assert ids(build_view(on, frozenset())) == []  # the filter still applies
    assert ids(build_view(on, frozenset({"mail"}))) == ["mail/index", "mail/send"]


def test_missing_roots_are_remembered_until_one_appears(settings: Settings, roots: dict[str, Path],
                                                        settled: None) -> None:
    empty = build_view(settings, None)
    assert ids(empty) == [] and build_view(settings, None) is empty
    write(roots["skills"], "mail/index.md")
    assert ids(build_view(settings, None)) == ["mail/index"]


def test_every_change_of_a_folder_is_seen(settings: Settings, roots: dict[str, Path],
                                          settled: None) -> None:
    write(roots["skills"], "mail/index.md")
    write(roots["skills"], "shell/index.md")
    (roots["local"]).mkdir(parents=True)
    assert ids(build_view(settings, None)) == ["mail/index", "shell/index"]
    build_view(settings, None)
    write(roots["skills"], "mail/send.md")  # a file in a sub-folder
    touch(roots["skills"] / "mail")
    assert ids(build_view(settings, None)) == ["mail/index", "mail/send", "shell/index"]
    (roots["local"] / "shell").mkdir()  # an empty local folder shadows the namespace
    touch(roots["local"])
    assert ids(build_view(settings, None)) == ["mail/index", "mail/send"]
    (roots["skills"] / "mail" / "send.md").unlink()
    touch(roots["skills"] / "mail")
    assert ids(build_view(settings, None)) == ["mail/index"]
    write(roots["agents_skills"], "pdf/SKILL.md")  # an agent-skills root
    assert ids(build_view(settings, None)) == ["mail/index", "pdf/index"]


def test_a_kits_lock_is_read_on_every_call(settings: Settings, roots: dict[str, Path],
                                           settled: None) -> None:
    write(roots["skills"], "acme/team/flow.md")
    on = settings.model_copy(update={"filter_unregistered": True})
    assert ids(build_view(on, frozenset())) == []  # not installed
    write(roots["project"], "kits.lock", "version: 1\nkits:\n  acme/team: {}\n")
    assert ids(build_view(on, frozenset())) == ["acme/team/flow"]  # an installed kit
    (roots["project"] / "kits.lock").unlink()
    assert ids(build_view(on, frozenset())) == []


class CountingFacts:
    """`row_facts_in_state` that counts the files it read."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def __call__(self, view: Any, file: Any, st: Any) -> Any:
        self.read.append(file.id)
        return row_facts_in_state(view, file, st)


def test_entries_are_reused_while_every_file_keeps_its_signature(
        settings: Settings, roots: dict[str, Path], settled: None) -> None:
    doc = write(roots["skills"], "mail/index.md", "---\ntitle: Mail\n---\n# Mail\n\nSend mail.\n")
    write(roots["skills"], "mail/hidden.md", "---\ndisable-model-invocation: true\n---\n# H\n\nNo.\n")
    memo = VisibleEntries(clock=lambda: time.time_ns() + LATER_NS)
    facts = CountingFacts()
    cache = RowFactsCache()
    first = memo.entries(build_view(settings, None, cache), facts)
    assert [(e.id, e.title) for e in first] == [("mail", "Mail")]  # display ids
    assert sorted(facts.read) == ["mail/hidden", "mail/index"]
    again = memo.entries(build_view(settings, None, cache), facts)
    assert again == first and again[0] is first[0] and len(facts.read) == 2  # nothing read
    doc.write_text("---\ntitle: Post\n---\n# Post\n\nSend letters.\n")  # edited in place
    stamp = next(_STAMPS)
    os.utime(doc, ns=(stamp, stamp))
    edited = memo.entries(build_view(settings, None, cache), facts)
    assert [(e.id, e.title, e.description) for e in edited] == [("mail", "Post", "Send letters.")]
    assert len(facts.read) == 4


def test_fresh_or_unreadable_files_are_read_on_every_call(
        settings: Settings, roots: dict[str, Path], settled: None) -> None:
    write(roots["skills"], "mail/index.md", "---\ntitle: Mail\n---\n# Mail\n\nSend mail.\n")
    view = build_view(settings, None, RowFactsCache())
    facts = CountingFacts()
    fresh = VisibleEntries(clock=time.time_ns)  # just written: not settled yet
    assert fresh.entries(view, facts) == fresh.entries(view, facts)
    assert len(facts.read) == 2
    gone = VisibleEntries(clock=lambda: time.time_ns() + LATER_NS)
    (roots["skills"] / "mail" / "index.md").unlink()  # the view still lists it: unreadable
    assert [e.id for e in gone.entries(view, facts)] == ["mail"]
    assert [e.id for e in gone.entries(view, facts)] == ["mail"]
    assert len(facts.read) == 4


def test_relative_roots_follow_the_working_directory_and_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None) -> None:
    relative = Settings(skills_folder="skills", local_skills_folder="skills/iii",
                        agents_skills_folder="~/agent-skills", filter_unregistered=False)
    for name in ("a", "b"):
        write(tmp_path / name / "skills", f"{name}-only/index.md")
        write(tmp_path / name / "agent-skills", f"{name}-agent/SKILL.md")
    monkeypatch.delenv("III_COMPOSE_DIR", raising=False)
    monkeypatch.delenv("III_COMPOSE_FILE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "a"))
    monkeypatch.chdir(tmp_path / "a")
    assert ids(build_view(relative, None)) == ["a-agent/index", "a-only/index"]
    monkeypatch.chdir(tmp_path / "b")
    assert ids(build_view(relative, None)) == ["a-agent/index", "b-only/index"]
    monkeypatch.setenv("HOME", str(tmp_path / "b"))
    assert ids(build_view(relative, None)) == ["b-agent/index", "b-only/index"]


def test_a_missing_root_is_not_listed(settings: Settings, roots: dict[str, Path],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A root that cannot be `stat`ed costs that `stat`: no `scandir`, no `realpath`."""
    import iii_directory.content.roots as roots_module

    listed: list[object] = []
    real_scandir = os.scandir

    def counting_scandir(path: Any) -> Any:
        listed.append(path)
        return real_scandir(path)

    monkeypatch.setattr(roots_module.os, "scandir", counting_scandir)
    monkeypatch.setattr(Path, "resolve", lambda self, strict=False: pytest.fail("resolved"))
    before = LISTINGS.scans
    assert ids(build_view(settings, None)) == []
    assert LISTINGS.scans == before and listed == []


def test_a_new_walk_replaces_the_view_and_a_lost_file_its_row_facts(
        settings: Settings, roots: dict[str, Path], settled: None) -> None:
    """One view per roots, installed set and filter: a skill written replaces it (a churning
    worker held `MAX_VIEWS` stale views of every file), and the row facts of a file the new
    view no longer lists are dropped."""
    facts = RowFactsCache()
    write(roots["skills"], "mail/index.md")
    write(roots["skills"], "shell/index.md")
    first = build_view(settings, None, facts)
    for file in first.files:  # stored as a settled file's facts would be
        facts.put(str(file.path), signature(os.stat(file.path)), row_facts_in_state(first, file, None))
    held = set(facts._entries)
    gone = roots["skills"] / "shell" / "index.md"
    gone.unlink()
    touch(roots["skills"] / "shell")
    second = build_view(settings, None, facts)
    assert ids(second) == ["mail/index"]
    assert len(skills_view._VIEWS) == 1 and build_view(settings, None, facts) is second
    assert str(gone) in held and str(gone) not in facts._entries
