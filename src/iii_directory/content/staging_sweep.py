"""Sweeping staging files left by killed writes (issue 17).

`atomic_write` stages `<name>.tmp` next to its target and renames it into place; a writer
killed between the two leaves the staging file behind, and nothing else would ever remove it
(the next write of the same file reuses it). At start the worker sweeps every root a write can
land in (`sweep_targets`): the skill roots and `agents_folder` in full; `global_agents_folder`
(an update writes a global profile in place) only at its top level, where profiles live; and
the agent-skills roots (`.agents/skills`, `~/.agents/skills`, shared with their owning tools)
only at their `<dir>/` level, where `SKILL.md` lives — a depth limit keeps a sweep of a folder
in the user's home from walking whatever else is stored under it:

* a candidate is a regular file (never a symlink, never followed) named `<stem>.<ext>.tmp`,
  the staging name of a file with an extension (`doc.md.tmp`, `.dl-marker.json.tmp`); a bare
  `notes.tmp` is not a staging file and stays;
* it is removed only when its mtime is at least `STALE_STAGING_S` (5 minutes) before `now()`
  (injectable) and, on POSIX, the sweep takes its exclusive `flock` without waiting, re-checks
  that the path still names the locked file and that it is still old, and unlinks it while
  holding the lock — a live writer holds that lock from before it truncates until after its
  rename, so its file is never touched. A writer that opened the file just before the sweep
  removed it finds, once it gets the lock, that the path names another file and opens again.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import time
from collections.abc import Callable
from pathlib import Path

from ..config import Settings
from .roots import agent_skills_roots, dedupe_paths, local_skills_root, same_path, skills_root

try:
    import fcntl
except ImportError:  # Windows: no staging locks; age alone decides
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

STALE_STAGING_S = 300.0
"""A staging file untouched this long (seconds) belongs to a write that will never finish."""
_STAGING_NAME = re.compile(r"^.+\.[A-Za-z0-9_-]{1,16}\.tmp$")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

Clock = Callable[[], float]


def is_staging_name(name: str) -> bool:
    """True for `<stem>.<ext>.tmp`, the staging name `atomic_write` gives a file with an
    extension."""
    return bool(_STAGING_NAME.match(name))


def _old(mtime: float, now: float, older_than_s: float) -> bool:
    return now - mtime >= older_than_s


def _remove_if_stale(path: Path, now: float, older_than_s: float) -> bool:
    """Remove one candidate under its staging lock; False when it is fresh, busy or gone."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except OSError:
        return False
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False  # a live writer holds it
        held = os.fstat(fd)
        try:
            current = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if (current.st_ino, current.st_dev) != (held.st_ino, held.st_dev):
            return False
        if not stat.S_ISREG(held.st_mode) or not _old(held.st_mtime, now, older_than_s):
            return False
        if fcntl is None:
            os.close(fd)
            fd = -1
        path.unlink()
        return True
    except OSError:
        return False
    finally:
        if fd >= 0:
            os.close(fd)


def sweep_stale_staging(root: Path, *, now: Clock = time.time,
                        older_than_s: float = STALE_STAGING_S,
                        max_depth: int | None = None) -> list[Path]:
    """Remove the stale, unlocked staging files under `root` (symlinks never followed), no
    deeper than `max_depth` folders below it (`None`: any depth; 0: the root's own files);
    returns the removed paths. Never raises for I/O problems."""
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    moment = now()
    for folder, dirs, files in os.walk(root, followlinks=False):
        if max_depth is not None and _depth(root, folder) >= max_depth:
            dirs.clear()
        for name in files:
            if not is_staging_name(name):
                continue
            path = Path(folder) / name
            try:
                info = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode) or not _old(info.st_mtime, moment, older_than_s):
                continue
            if _remove_if_stale(path, moment, older_than_s):
                removed.append(path)
    if removed:
        log.info("removed %d stale staging file(s) under %s", len(removed), root)
    return removed


def _depth(root: Path, folder: str) -> int:
    """How many folders `folder` lies below `root` (0 for the root itself)."""
    rel = os.path.relpath(folder, root)
    return 0 if rel == os.curdir else rel.count(os.sep) + 1


def writable_roots(settings: Settings) -> list[Path]:
    """The roots this worker writes through staging files."""
    return dedupe_paths([skills_root(settings), local_skills_root(settings), settings.path("agents_folder")])


def sweep_targets(settings: Settings) -> list[tuple[Path, int | None]]:
    """Every root a staging file can be left in, with how deep to look (`None`: any depth):
    the writable roots in full, `global_agents_folder` at its top level (profiles are direct
    `<id>.md` children) and each agent-skills root one folder down (`<dir>/SKILL.md`)."""
    targets: list[tuple[Path, int | None]] = [(root, None) for root in writable_roots(settings)]
    shallow = [(settings.path("global_agents_folder"), 0)]
    shallow += [(root, 1) for root in agent_skills_roots(settings)]
    for root, depth in shallow:
        if not any(same_path(root, seen) for seen, _ in targets):
            targets.append((root, depth))
    return targets


def sweep_roots(settings: Settings, *, now: Clock = time.time,
                older_than_s: float = STALE_STAGING_S) -> list[Path]:
    """`sweep_stale_staging` over every root of `sweep_targets`."""
    removed: list[Path] = []
    for root, depth in sweep_targets(settings):
        removed.extend(sweep_stale_staging(root, now=now, older_than_s=older_than_s, max_depth=depth))
    return removed
