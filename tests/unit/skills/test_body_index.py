"""The body index of `search_body`: every lookup sees disk, whoever changed it.

The index's clock is injected: `LATER` (an hour ahead) makes every file written in a test
settled, the real clock leaves a file written a moment ago too fresh to keep."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iii_directory.content.body_index import BodyIndex

HOUR_NS = 3600 * 1_000_000_000


def later() -> int:
    return time.time_ns() + HOUR_NS


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def body(index: BodyIndex, path: Path) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        st = None
    return index.body(path, st)


@pytest.fixture
def index() -> BodyIndex:
    return BodyIndex(clock=later)


def test_a_settled_file_is_read_once_and_lowercased(tmp_path: Path, index: BodyIndex) -> None:
    doc = write(tmp_path / "a.md", "---\ntitle: A\n---\n# Alpha\n\nRun ROLLOUT undo.\n")
    assert body(index, doc) == "# alpha\n\nrun rollout undo.\n"
    assert index.contains(doc, os.stat(doc), "rollout undo")
    assert not index.contains(doc, os.stat(doc), "title: a"), "front matter is not body"
    assert index.reads == 1 and len(index) == 1


def test_an_edit_is_seen_by_the_next_lookup(tmp_path: Path, index: BodyIndex) -> None:
    doc = write(tmp_path / "a.md", "# A\n\nold words\n")
    assert index.contains(doc, os.stat(doc), "old words")
    write(doc, "# A\n\nnew words\n")
    assert index.contains(doc, os.stat(doc), "new words")
    assert not index.contains(doc, os.stat(doc), "old words")
    assert index.reads == 2


def test_a_same_size_edit_by_another_process_without_the_watcher(tmp_path: Path,
                                                                 index: BodyIndex) -> None:
    doc = write(tmp_path / "a.md", "# A\n\nalpha\n")
    assert index.contains(doc, os.stat(doc), "alpha")
    before = os.stat(doc)
    script = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text('# A\\n\\nomega\\n')"
    subprocess.run([sys.executable, "-c", script, str(doc)], check=True)
    os.utime(doc, ns=(before.st_atime_ns, before.st_mtime_ns))  # even the mtime put back
    after = os.stat(doc)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert index.contains(doc, after, "omega"), "ctime moved, so the entry is stale"
    assert not index.contains(doc, after, "alpha")


def test_a_delete_drops_the_entry(tmp_path: Path, index: BodyIndex) -> None:
    doc = write(tmp_path / "a.md", "# A\n\ngone soon\n")
    assert index.contains(doc, os.stat(doc), "gone soon")
    doc.unlink()
    assert body(index, doc) is None
    assert len(index) == 0 and index.bytes == 0


def test_a_delete_seen_by_the_watcher_drops_the_entry(tmp_path: Path, index: BodyIndex) -> None:
    doc = write(tmp_path / "a.md", "# A\n\ngone soon\n")
    index.build([doc])
    doc.unlink()
    assert index.refresh([doc]) == [] and len(index) == 0


def test_a_new_file_is_found_and_kept(tmp_path: Path, index: BodyIndex) -> None:
    index.build([write(tmp_path / "a.md", "# A\n\nfirst\n")])
    reads = index.reads
    doc = write(tmp_path / "b.md", "# B\n\nsecond file\n")
    assert index.contains(doc, os.stat(doc), "second")
    assert index.contains(doc, os.stat(doc), "file")
    assert index.reads == reads + 1 and len(index) == 2


def test_a_fresh_file_is_read_on_every_lookup_until_settled(tmp_path: Path) -> None:
    now = [time.time_ns()]
    index = BodyIndex(clock=lambda: now[0])
    doc = write(tmp_path / "a.md", "# A\n\nfresh\n")
    assert index.contains(doc, os.stat(doc), "fresh")
    assert index.contains(doc, os.stat(doc), "fresh")
    assert index.reads == 2 and len(index) == 0, "a second change in the same tick could hide"
    now[0] += HOUR_NS
    index.contains(doc, os.stat(doc), "fresh")
    index.contains(doc, os.stat(doc), "fresh")
    assert index.reads == 3 and len(index) == 1


def test_refresh_reports_what_is_still_too_fresh(tmp_path: Path) -> None:
    now = [time.time_ns()]
    index = BodyIndex(clock=lambda: now[0])
    doc = write(tmp_path / "a.md", "# A\n\nfresh\n")
    assert index.refresh([doc]) == [doc] and len(index) == 0
    now[0] += HOUR_NS
    assert index.refresh([doc]) == [] and len(index) == 1
    assert index.refresh([doc]) == [] and index.reads == 2, "an unchanged entry is not re-read"


def test_a_file_that_is_not_a_readable_skill_contains_nothing(tmp_path: Path,
                                                              index: BodyIndex) -> None:
    empty = write(tmp_path / "empty.md", "---\ntitle: x\n---\n\n")
    assert not index.contains(empty, os.stat(empty), "title")
    assert len(index) == 0


def test_bodies_are_bounded_in_bytes(tmp_path: Path) -> None:
    index = BodyIndex(clock=later, max_bytes=100)
    docs = [write(tmp_path / f"{n}.md", f"# {n}\n\n" + "x" * 40 + "\n") for n in range(4)]
    assert index.build(docs) <= 2
    for doc in docs:
        assert index.contains(doc, os.stat(doc), "xxxx")
    assert index.bytes <= 100 and len(index) == 2
    assert docs[-1] in index and docs[0] not in index, "the least recently used goes first"
    huge = write(tmp_path / "huge.md", "# H\n\n" + "y" * 500 + "\n")
    assert index.contains(huge, os.stat(huge), "yyy") and huge not in index
