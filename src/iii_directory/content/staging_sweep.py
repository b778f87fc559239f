"""Sweeping staging files left by killed writes (issue 17).

`atomic_write` stages `<name>.tmp` next to its target and renames it into place; a writer
killed between the two leaves the staging file behind, and nothing else would ever remove it
(the next write of the same file reuses it). At start the worker sweeps its writable roots
(`skills_folder`, `local_skills_folder`, `agents_folder`):

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
from .roots import dedupe_paths, local_skills_root, skills_root

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
                        older_than_s: float = STALE_STAGING_S) -> list[Path]:
    """Remove the stale, unlocked staging files under `root` (symlinks never followed);
    returns the removed paths. Never raises for I/O problems."""
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    moment = now()
    for folder, dirs, files in os.walk(root, followlinks=False):
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


def writable_roots(settings: Settings) -> list[Path]:
    """The roots this worker writes through staging files."""
    return dedupe_paths([skills_root(settings), local_skills_root(settings), settings.path("agents_folder")])


def sweep_roots(settings: Settings, *, now: Clock = time.time,
                older_than_s: float = STALE_STAGING_S) -> list[Path]:
    """`sweep_stale_staging` over every writable root."""
    removed: list[Path] = []
    for root in writable_roots(settings):
        removed.extend(sweep_stale_staging(root, now=now, older_than_s=older_than_s))
    return removed
