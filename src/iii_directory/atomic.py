"""Atomic writes and deletes, with self-write marks (docs/rules/surfaces.md §11.1, §12.3).

A write creates parent directories, writes the whole content to the sibling `<name>.tmp`,
fsyncs it, marks the final path as a self-write, then renames it over the destination (and
fsyncs the directory where the platform allows). A reader therefore sees the old file or the
new one, never a half-written one. Every delete marks a self-write before removing.

Several writers of one file (two workers sharing a `skills_folder`) share the staging name, so
on POSIX a writer holds an exclusive `flock` on the staging file from before it truncates it
until after the rename, and re-checks after locking that the locked file is still the one
named `<name>.tmp` (the previous holder may have renamed it into place meanwhile). Each write
therefore lands whole or fails with `write <tmp>: …`. The staging file is opened without
following symlinks, so a planted `<name>.tmp` link never redirects a write out of its root.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

from .errors import DirectoryError

try:
    import fcntl
except ImportError:  # Windows: one writer per file is assumed
    fcntl = None  # type: ignore[assignment]

SELF_WRITE_WINDOW_S = 5.0
STAGING_LOCK_WAIT_S = 10.0
"""How long a writer waits for another writer of the same file before failing clearly."""
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class SelfWrites:
    """Paths this worker wrote or deleted recently; the watcher consumes a mark on first sight."""

    def __init__(self, window_s: float = SELF_WRITE_WINDOW_S) -> None:
        self._window = window_s
        self._marks: dict[str, float] = {}
        self._lock = threading.Lock()

    def mark(self, path: Path | str) -> None:
        key = os.path.abspath(os.fspath(path))
        with self._lock:
            self._marks[key] = time.monotonic()

    def consume(self, path: Path | str) -> bool:
        """True (and forget the mark) when `path` was marked within the window."""
        key = os.path.abspath(os.fspath(path))
        now = time.monotonic()
        with self._lock:
            for stale in [k for k, t in self._marks.items() if now - t > self._window]:
                del self._marks[stale]
            return self._marks.pop(key, None) is not None


def _fsync_dir(directory: Path) -> None:
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, content: str | bytes, marks: SelfWrites | None = None) -> int:
    """Write `content` to `path` atomically; return the number of bytes written."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DirectoryError.plain(f"create_dir_all {parent}: {exc.strerror or exc}") from None
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = _open_staging(tmp)
    except OSError as exc:
        raise DirectoryError.plain(f"write {tmp}: {exc.strerror or exc}") from None
    try:
        try:
            os.ftruncate(fd, 0)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as exc:
            fd = _close_unlocked(fd)
            _unlink_quietly(tmp)
            raise DirectoryError.plain(f"write {tmp}: {exc.strerror or exc}") from None
        if marks is not None:
            marks.mark(path)
        fd = _close_unlocked(fd)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            _unlink_quietly(tmp)
            raise DirectoryError.plain(f"rename {tmp} -> {path}: {exc.strerror or exc}") from None
    finally:
        if fd >= 0:
            os.close(fd)  # releases the staging lock, after the rename
    _fsync_dir(parent)
    return len(data)


def _close_unlocked(fd: int) -> int:
    """Without staging locks (Windows) close before renaming or removing, which an open file
    would block there; returns the descriptor still open (-1 when closed)."""
    if fcntl is None:
        os.close(fd)
        return -1
    return fd


def _open_staging(tmp: Path) -> int:
    """Open (creating) the staging file for writing, holding it exclusively on POSIX.

    Loop: open without following symlinks (a symlink there is removed and the open retried),
    take the lock, then keep the descriptor only if `tmp` still names the locked file."""
    deadline = time.monotonic() + STAGING_LOCK_WAIT_S
    while True:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC | _BINARY, 0o666)
        except OSError as exc:
            if exc.errno == errno.ELOOP and tmp.is_symlink():
                tmp.unlink()
                continue
            raise
        if fcntl is None:
            return fd
        try:
            if _lock_until(fd, deadline) and _names(tmp, fd):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        if time.monotonic() >= deadline:
            raise OSError(errno.EBUSY, f"another writer held {tmp.name} for {STAGING_LOCK_WAIT_S:.0f}s")


def _lock_until(fd: int, deadline: float) -> bool:
    """Take an exclusive lock on `fd`, polling until `deadline`; False when it stayed busy."""
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.05)


def _names(tmp: Path, fd: int) -> bool:
    """True when the path `tmp` currently names the file open as `fd`."""
    try:
        current = os.stat(tmp, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (current.st_ino, current.st_dev) == (held.st_ino, held.st_dev)


def atomic_delete(path: Path, marks: SelfWrites | None = None) -> None:
    """Remove `path` after marking it as a self-write."""
    if marks is not None:
        marks.mark(path)
    try:
        path.unlink()
    except OSError as exc:
        raise DirectoryError.plain(f"remove {path}: {exc.strerror or exc}") from None
    _fsync_dir(path.parent)


def _unlink_quietly(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def is_within(root: Path, candidate: Path) -> bool:
    """True when `candidate`, with symlinks resolved, lies inside `root` (also resolved)."""
    try:
        real_root = root.resolve()
        real = candidate.resolve()
    except (OSError, RuntimeError):
        return False
    return real == real_root or real_root in real.parents
