"""The row-facts cache: reused only while the file is provably unchanged."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from iii_directory.content import skills as skills_module
from iii_directory.atomic import SelfWrites, atomic_write
from iii_directory.content.stat_cache import SETTLE_NS, StatCache, settled

OLD_S = 3600.0


def _age(path: Path, seconds: float = OLD_S) -> None:
    """Backdate mtime; ctime stays "now", so also age the clock the cache compares with."""
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache's clock runs an hour ahead, so files written in the test count as settled."""
    real = time.time_ns
    monkeypatch.setattr("iii_directory.content.stat_cache.time.time_ns",
                        lambda: real() + int(OLD_S * 1e9))


def _counting(calls: list[Path]):
    def compute(path: Path) -> str:
        calls.append(path)
        return path.read_text()
    return compute


def test_settled_file_is_derived_once(tmp_path: Path, later: None) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("one")
    cache: StatCache[str] = StatCache()
    calls: list[Path] = []
    assert cache.derive(doc, doc.stat(), _counting(calls)) == "one"
    assert cache.derive(doc, doc.stat(), _counting(calls)) == "one"
    assert len(calls) == 1 and len(cache) == 1


def test_fresh_file_is_never_remembered(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("one")
    cache: StatCache[str] = StatCache()
    calls: list[Path] = []
    cache.derive(doc, doc.stat(), _counting(calls))
    cache.derive(doc, doc.stat(), _counting(calls))
    assert len(calls) == 2 and len(cache) == 0
    assert not settled(doc.stat(), time.time_ns())
    assert settled(doc.stat(), time.time_ns() + SETTLE_NS + 1)


def test_atomic_rewrite_of_same_size_is_seen(tmp_path: Path, later: None) -> None:
    doc = tmp_path / "a.md"
    atomic_write(doc, "one", SelfWrites())
    cache: StatCache[str] = StatCache()
    calls: list[Path] = []
    first = doc.stat()
    assert cache.derive(doc, first, _counting(calls)) == "one"
    atomic_write(doc, "two", SelfWrites())
    os.utime(doc, ns=(first.st_atime_ns, first.st_mtime_ns))  # same size, same mtime
    assert cache.derive(doc, doc.stat(), _counting(calls)) == "two"


def test_in_place_edit_with_restored_mtime_is_seen(tmp_path: Path, later: None) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("one")
    cache: StatCache[str] = StatCache()
    first = doc.stat()
    assert cache.derive(doc, first, _counting([])) == "one"
    time.sleep(0.01)
    doc.write_text("two")
    os.utime(doc, ns=(first.st_atime_ns, first.st_mtime_ns))  # only ctime moved
    assert cache.derive(doc, doc.stat(), _counting([])) == "two"


def test_errors_are_not_cached_and_capacity_is_bounded(tmp_path: Path, later: None) -> None:
    cache: StatCache[str] = StatCache(capacity=2)
    docs = []
    for name in "abc":
        doc = tmp_path / f"{name}.md"
        doc.write_text(name)
        docs.append(doc)
        cache.derive(doc, doc.stat(), _counting([]))
    assert len(cache) == 2

    def boom(path: Path) -> str:
        raise ValueError("unreadable")

    bad = tmp_path / "bad.md"
    bad.write_text("x")
    with pytest.raises(ValueError):
        cache.derive(bad, bad.stat(), boom)
    assert cache.derive(bad, bad.stat(), _counting([])) == "x"


def test_list_row_reflects_an_edit(tmp_path: Path, later: None) -> None:
    root = tmp_path / "skills"
    doc = root / "ns" / "a.md"
    doc.parent.mkdir(parents=True)
    atomic_write(doc, "---\ntitle: First\n---\nBody one.\n", SelfWrites())
    _age(doc)
    file = skills_module.SkillFile("ns/a", doc, root, skills_module.Origin.SKILLS)
    view = skills_module.SkillsView((file,), None, root, root, (), {},  # type: ignore[arg-type]
                                    skills_module.RowFactsCache())
    assert skills_module.list_row(view, file).title == "First"
    assert skills_module.list_row(view, file).title == "First"
    atomic_write(doc, "---\ntitle: Other\n---\nBody two.\n", SelfWrites())
    _age(doc)
    row = skills_module.list_row(view, file)
    assert (row.title, row.description) == ("Other", "Body two.")


def test_settle_time_follows_the_resolution_the_stamps_show() -> None:
    from types import SimpleNamespace

    from iii_directory.content.stat_cache import FINE_SETTLE_NS, settle_ns

    second = 1_000_000_000
    assert settle_ns(1_700_000_000 * second + 123_456_789, 1_700_000_000 * second) == FINE_SETTLE_NS
    assert settle_ns(1_700_000_000 * second, 1_700_000_001 * second + 5) == FINE_SETTLE_NS
    assert settle_ns(1_700_000_000 * second, 1_700_000_002 * second) == SETTLE_NS  # FAT, HFS+, ext3
    fine = SimpleNamespace(st_mtime_ns=1_700_000_000 * second + 1, st_ctime_ns=1_700_000_000 * second + 1)
    assert not settled(fine, fine.st_mtime_ns + FINE_SETTLE_NS - 1)  # type: ignore[arg-type]
    assert settled(fine, fine.st_mtime_ns + FINE_SETTLE_NS)  # type: ignore[arg-type]
    whole = SimpleNamespace(st_mtime_ns=1_700_000_000 * second, st_ctime_ns=1_700_000_000 * second)
    assert not settled(whole, whole.st_mtime_ns + FINE_SETTLE_NS)  # type: ignore[arg-type]
    assert not settled(whole, whole.st_mtime_ns + SETTLE_NS - 1)  # type: ignore[arg-type]
    assert settled(whole, whole.st_mtime_ns + SETTLE_NS)  # type: ignore[arg-type]
