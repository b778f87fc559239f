"""The folder-listing cache of the skills walk: a folder is listed again whenever it changed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from iii_directory.config import Settings
from iii_directory.content import roots
from iii_directory.content.listing_cache import Listing, ListingCache
from iii_directory.content.skills import RowFactsCache, build_view, list_rows

HOUR_NS = 3600 * 10**9


def _old(path: Path) -> None:
    """Backdate a folder's mtime, so any later entry change moves it (ctime stays "now")."""
    stamp = time.time() - 3600
    os.utime(path, (stamp, stamp))


def _tree(root: Path) -> None:
    for ns in ("alpha", "beta"):
        (root / ns).mkdir(parents=True)
        (root / ns / "index.md").write_text(f"# {ns}\n\nAbout {ns}.\n")
        (root / ns / "page.md").write_text(f"# {ns} page\n\nA page.\n")
    for folder in (root, root / "alpha", root / "beta"):
        _old(folder)


@pytest.fixture
def settled_cache(monkeypatch: pytest.MonkeyPatch) -> ListingCache:
    """A cache whose clock runs an hour ahead (every folder counts as settled), used by the walk."""
    cache = ListingCache(clock=lambda: time.time_ns() + HOUR_NS)
    monkeypatch.setattr(roots, "LISTINGS", cache)
    return cache


def _rels(root: Path) -> list[str]:
    return [found.rel for found in roots.walk_markdown(root)]


def test_settled_folders_are_listed_once(tmp_path: Path, settled_cache: ListingCache) -> None:
    _tree(tmp_path)
    first = _rels(tmp_path)
    assert first == ["alpha/index.md", "alpha/page.md", "beta/index.md", "beta/page.md"]
    assert settled_cache.scans == 3
    assert _rels(tmp_path) == first
    assert settled_cache.scans == 3


def test_an_added_or_removed_file_is_seen(tmp_path: Path, settled_cache: ListingCache) -> None:
    _tree(tmp_path)
    _rels(tmp_path)
    (tmp_path / "beta" / "new.md").write_text("# new\n")
    assert "beta/new.md" in _rels(tmp_path)
    assert settled_cache.scans == 4  # beta only
    _old(tmp_path / "beta")
    (tmp_path / "alpha" / "page.md").unlink()
    assert _rels(tmp_path) == ["alpha/index.md", "beta/index.md", "beta/new.md", "beta/page.md"]


def test_a_new_folder_is_seen(tmp_path: Path, settled_cache: ListingCache) -> None:
    _tree(tmp_path)
    _rels(tmp_path)
    (tmp_path / "gamma").mkdir()
    (tmp_path / "gamma" / "index.md").write_text("# gamma\n")
    assert "gamma/index.md" in _rels(tmp_path)


def test_unsettled_folders_are_listed_every_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ListingCache(clock=lambda: 0)  # every folder is younger than the clock: never settled
    monkeypatch.setattr(roots, "LISTINGS", cache)
    _tree(tmp_path)
    _rels(tmp_path)
    _rels(tmp_path)
    assert cache.scans == 6
    assert len(cache) == 0


def test_a_folder_with_a_symlink_is_never_cached(tmp_path: Path, settled_cache: ListingCache) -> None:
    _tree(tmp_path)
    target = tmp_path / "beta" / "page.md"
    (tmp_path / "alpha" / "linked.md").symlink_to(target)
    _old(tmp_path / "alpha")
    assert "alpha/linked.md" in _rels(tmp_path)
    scans = settled_cache.scans
    target.unlink()  # the link dangles; alpha itself is unchanged
    assert "alpha/linked.md" not in _rels(tmp_path)
    assert settled_cache.scans > scans


def test_list_rows_see_a_new_skill_through_the_cache(tmp_path: Path, settled_cache: ListingCache) -> None:
    skills = tmp_path / "skills"
    _tree(skills)
    settings = Settings(skills_folder=str(skills), local_skills_folder=str(skills / "iii"),
                        agents_skills_folder=str(tmp_path / "agent-skills"), filter_unregistered=False)
    facts = RowFactsCache()
    before = [row.id for row in list_rows(build_view(settings, None, facts))]
    (skills / "alpha" / "extra.md").write_text("# Extra\n\nMore.\n")
    after = [row.id for row in list_rows(build_view(settings, None, facts))]
    assert sorted(set(after) - set(before)) == ["alpha/extra"]


def test_a_file_under_an_agent_root_inside_the_skills_root_is_read_only(tmp_path: Path) -> None:
    from iii_directory.content.skills import row_origin

    skills = tmp_path / "skills"
    _tree(skills)
    (skills / "vendor" / "tool").mkdir(parents=True)
    (skills / "vendor" / "tool" / "SKILL.md").write_text("# Tool\n\nA vendored tool.\n")
    settings = Settings(skills_folder=str(skills), local_skills_folder=str(skills / "iii"),
                        agents_skills_folder=str(skills / "vendor"), filter_unregistered=False)
    view = build_view(settings, None)
    origins = {f.id: row_origin(view, f) for f in view.files}
    assert origins["vendor/tool/index"] == "read_only"
    assert origins["alpha/page"] == "skills"


def test_a_folder_with_fine_stamps_settles_after_a_tenth_of_a_second(tmp_path: Path) -> None:
    import os

    from iii_directory.content.stat_cache import FINE_SETTLE_NS

    folder = tmp_path / "ns"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n")
    st = os.stat(folder)
    stamp = max(st.st_mtime_ns, st.st_ctime_ns)
    if not (st.st_mtime_ns % 1_000_000_000 or st.st_ctime_ns % 1_000_000_000):
        pytest.skip("this file system stores whole seconds")
    young = ListingCache(clock=lambda: stamp + FINE_SETTLE_NS - 1)
    young.store(folder, young.before(folder), Listing((("a.md", folder / "a.md"),), ()))
    assert young.cached(folder) is None  # not yet settled: listed again next time
    old = ListingCache(clock=lambda: stamp + FINE_SETTLE_NS)
    listing = Listing((("a.md", folder / "a.md"),), ())
    old.store(folder, old.before(folder), listing)
    assert old.cached(folder) is listing
    (folder / "b.md").write_text("# B\n")  # a change moves the folder's stamps: not reused
    assert old.cached(folder) is None


def test_an_unchanged_tree_reuses_its_walk_and_scan(tmp_path: Path, settled_cache: ListingCache) -> None:
    from iii_directory.content.skills import Origin, scan_root

    _tree(tmp_path)
    first = roots.walk_markdown(tmp_path)
    assert roots.walk_markdown(tmp_path) is first  # every folder's listing still the same
    scanned = scan_root(tmp_path, Origin.SKILLS)
    again = scan_root(tmp_path, Origin.SKILLS)
    assert again == scanned and again is not scanned  # the caller gets its own list
    assert all(a is b for a, b in zip(again, scanned, strict=True))
    (tmp_path / "beta" / "new.md").write_text("# new\n")  # moves beta's stamps
    changed = roots.walk_markdown(tmp_path)
    assert changed is not first and "beta/new.md" in [f.rel for f in changed]
    assert "beta/new" in [f.id for f in scan_root(tmp_path, Origin.SKILLS)]


def test_a_walk_through_an_unsettled_folder_is_not_remembered(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    young = ListingCache(clock=lambda: 0)  # nothing ever settles: no listing is cached
    monkeypatch.setattr(roots, "LISTINGS", young)
    first = roots.walk_markdown(tmp_path)
    second = roots.walk_markdown(tmp_path)
    assert second == first and second is not first
    assert young.scans == 6
