"""Stale staging files (issue 17, defect 7): a `<name>.<ext>.tmp` left by a killed write is
removed at start once it is older than `STALE_STAGING_S` and no live writer holds its lock;
fresh, locked, symlinked and non-staging `.tmp` files stay. The clock is injected."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from iii_directory.config import Settings
from iii_directory.atomic import atomic_write
from iii_directory.content.staging_sweep import STALE_STAGING_S, sweep_roots, sweep_stale_staging
from iii_directory.directory import Directory

NOW = 2_000_000_000.0


def staged(path: Path, age_s: float, content: str = "half a wri") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    os.utime(path, (NOW - age_s, NOW - age_s))
    return path


def test_only_old_unlocked_staging_files_are_removed(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    old = staged(root / "ns" / "doc.md.tmp", STALE_STAGING_S + 1)
    old_json = staged(root / "worker" / ".dl-marker.json.tmp", STALE_STAGING_S * 10)
    fresh = staged(root / "ns" / "new.md.tmp", STALE_STAGING_S - 1)
    not_staging = staged(root / "ns" / "notes.tmp", STALE_STAGING_S * 10)
    final = staged(root / "ns" / "doc.md", STALE_STAGING_S * 10, "# Doc\n")
    outside = staged(tmp_path / "outside" / "x.md.tmp", STALE_STAGING_S * 10)
    link = root / "ns" / "link.md.tmp"
    link.symlink_to(outside)
    os.utime(link, (NOW - STALE_STAGING_S * 10,) * 2, follow_symlinks=False)

    removed = sweep_stale_staging(root, now=lambda: NOW)

    assert sorted(removed) == sorted([old, old_json])
    assert not old.exists() and not old_json.exists()
    assert fresh.exists() and not_staging.exists() and final.read_text() == "# Doc\n"
    assert outside.exists() and link.is_symlink()
    assert sweep_stale_staging(tmp_path / "missing", now=lambda: NOW) == []


@pytest.mark.skipif(sys.platform == "win32", reason="staging locks are POSIX flock")
def test_a_staging_file_locked_by_a_live_writer_is_kept(tmp_path: Path) -> None:
    import fcntl

    stale = staged(tmp_path / "skills" / "ns" / "busy.md.tmp", STALE_STAGING_S * 10)
    fd = os.open(stale, os.O_WRONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert sweep_stale_staging(tmp_path / "skills", now=lambda: NOW) == []
        assert stale.exists()
    finally:
        os.close(fd)
    assert sweep_stale_staging(tmp_path / "skills", now=lambda: NOW) == [stale]


def test_a_write_after_a_sweep_still_lands(tmp_path: Path) -> None:
    target = tmp_path / "skills" / "ns" / "doc.md"
    staged(target.with_name("doc.md.tmp"), STALE_STAGING_S * 10)
    sweep_stale_staging(tmp_path / "skills", now=lambda: NOW)
    atomic_write(target, "# Doc\n\nBody.\n")
    assert target.read_text() == "# Doc\n\nBody.\n"
    assert not target.with_name("doc.md.tmp").exists()


def test_sweep_roots_covers_every_writable_root(settings: Settings, roots: dict[str, Path]) -> None:
    leftovers = [staged(roots["skills"] / "a" / "x.md.tmp", STALE_STAGING_S * 2),
                 staged(roots["local"] / "b" / "y.md.tmp", STALE_STAGING_S * 2),
                 staged(roots["agents"] / "helper.md.tmp", STALE_STAGING_S * 2)]
    removed = sweep_roots(settings, now=lambda: NOW)
    assert sorted(removed) == sorted(leftovers)


@pytest.mark.anyio
async def test_the_worker_sweeps_its_roots_at_start(directory: Directory, roots: dict[str, Path]) -> None:
    leftover = roots["skills"] / "ns" / "doc.md.tmp"
    leftover.parent.mkdir(parents=True, exist_ok=True)
    leftover.write_text("torn")
    ancient = 1_000_000.0  # the real clock runs here: an mtime in 1970 is old
    os.utime(leftover, (ancient, ancient))
    fresh = staged(roots["skills"] / "ns" / "other.md.tmp", 0)
    os.utime(fresh, None)  # now
    await directory.start()
    try:
        assert not leftover.exists()
        assert fresh.exists()
    finally:
        await directory.stop()


def test_sweep_roots_covers_the_global_agents_folder_at_its_top_level(
        settings: Settings, roots: dict[str, Path]) -> None:
    profile = staged(roots["global_agents"] / "helper.md.tmp", STALE_STAGING_S * 2)
    nested = staged(roots["global_agents"] / "archive" / "old.md.tmp", STALE_STAGING_S * 2)
    removed = sweep_roots(settings, now=lambda: NOW)
    assert removed == [profile]
    assert not profile.exists() and nested.exists()


def test_sweep_roots_covers_both_agent_skills_roots_one_folder_down(
        settings: Settings, roots: dict[str, Path]) -> None:
    project = staged(roots["agents_skills"] / "pdf" / "SKILL.md.tmp", STALE_STAGING_S * 2)
    user = staged(roots["global_agents_skills"] / "git" / "SKILL.md.tmp", STALE_STAGING_S * 2)
    fresh = staged(roots["agents_skills"] / "csv" / "SKILL.md.tmp", STALE_STAGING_S - 1)
    deep = staged(roots["global_agents_skills"] / "git" / "vendor" / "x" / "a.md.tmp", STALE_STAGING_S * 2)
    removed = sweep_roots(settings, now=lambda: NOW)
    assert sorted(removed) == sorted([project, user])
    assert fresh.exists() and deep.exists()


def test_a_root_named_twice_is_swept_once_in_full(settings: Settings, roots: dict[str, Path]) -> None:
    same = settings.model_copy(update={"global_agents_folder": str(roots["agents"])})
    nested = staged(roots["agents"] / "team" / "helper.md.tmp", STALE_STAGING_S * 2)
    assert sweep_roots(same, now=lambda: NOW) == [nested]


@pytest.mark.anyio
async def test_the_worker_sweeps_a_killed_global_profile_update_at_start(
        directory: Directory, roots: dict[str, Path]) -> None:
    leftover = roots["global_agents"] / "helper.md.tmp"
    skill_leftover = roots["agents_skills"] / "pdf" / "SKILL.md.tmp"
    for path in (leftover, skill_leftover):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("torn")
        os.utime(path, (1_000_000.0, 1_000_000.0))  # the real clock runs here: 1970 is old
    await directory.start()
    try:
        assert not leftover.exists() and not skill_leftover.exists()
    finally:
        await directory.stop()
