"""Atomic writes and deletes, with self-write marks (surfaces.md §11.1, §12.3).

A write creates parent directories, writes the whole content to the sibling `<name>.tmp`,
fsyncs it, marks the final path as a self-write, then renames it over the destination (and
fsyncs the directory where the platform allows). A reader therefore sees the old file or the
new one, never a half-written one. Every delete marks a self-write before removing.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from ..errors import DirectoryError

SELF_WRITE_WINDOW_S = 5.0


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
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        _unlink_quietly(tmp)
        raise DirectoryError.plain(f"write {tmp}: {exc.strerror or exc}") from None
    if marks is not None:
        marks.mark(path)
    try:
        os.replace(tmp, path)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise DirectoryError.plain(f"rename {tmp} -> {path}: {exc.strerror or exc}") from None
    _fsync_dir(parent)
    return len(data)


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
