"""Directory listings reused while the directory is provably unchanged (a performance cache).

Every `skills::list`, `skills::get` and search call walks the skill roots again, so that it sees
every edit. Listing each folder (`scandir`, one `Path` per entry) was the largest share of the
worker's time in the soak. A folder's listing — its regular files and its sub-folders, by name —
changes only through an entry being added, removed or renamed, and each of those moves the
folder's own mtime and ctime. So a listing is reused while one `stat` of the folder returns the
signature (device, inode, mtime, ctime) it was read under, with the rules of `stat_cache`:

* stored only when the signature before and after the `scandir` is the same, and only when
  the folder's mtime and ctime are at least `stat_cache.settle_ns` old (2 s; 100 ms where
  the stamps show sub-second resolution), so a second change within one timestamp tick cannot
  hide behind an equal signature;
* never stored for a folder holding a symlink (whether a link's target exists or is a folder
  can change without touching the folder) or a name that is not UTF-8 (those are logged and
  skipped on every walk);
* at most `capacity` folders (least recently used dropped first).

A file's contents are not part of a listing: readers still `stat` and read the files.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from .stat_cache import SignedLRU, settle_ns

DEFAULT_CAPACITY = 4096

FolderSignature = tuple[int, int, int, int]


def folder_signature(st: os.stat_result) -> FolderSignature:
    """`(st_dev, st_ino, st_mtime_ns, st_ctime_ns)` of a folder."""
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


class Listing(NamedTuple):
    """The plain entries of one folder: regular files and sub-folders as (name, path). A
    `NamedTuple` rather than a frozen dataclass, as `ListedRow` (`skill_listing`)."""

    files: tuple[tuple[str, Path], ...]
    folders: tuple[tuple[str, Path], ...]


class ListingCache:
    """Folder path → its `Listing`, valid for one folder signature (a `SignedLRU` of
    `capacity` folders). Thread-safe.

    `clock` (nanoseconds since the epoch, default `time.time_ns`) is injectable so tests decide
    what is settled without sleeping."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY,
                 clock: Callable[[], int] = time.time_ns) -> None:
        self.clock = clock
        self.scans = 0
        """How many times a folder was actually listed (tests and benchmarks read it)."""
        self._lru: SignedLRU[FolderSignature, Listing] = SignedLRU(capacity)

    def __len__(self) -> int:
        return len(self._lru)

    @property
    def capacity(self) -> int | None:
        """The most folders held."""
        return self._lru.capacity

    def clear(self) -> None:
        self._lru.clear()

    def cached(self, folder: Path) -> Listing | None:
        """The stored listing of `folder` when its signature still matches, else None (a
        folder with no entry is not even `stat`ed)."""
        key = str(folder)
        if key not in self._lru:
            return None
        try:
            sig = folder_signature(os.stat(folder))
        except OSError:
            return None
        return self._lru.get(key, sig)

    def stored(self, folder: Path) -> tuple[FolderSignature, Listing] | None:
        """The listing stored for `folder` with the signature it was stored under (None: none
        is stored); no `stat`."""
        key = str(folder)
        sig = self._lru.signature_of(key)
        if sig is None:
            return None
        listing = self._lru.get(key, sig)
        return None if listing is None else (sig, listing)

    def scan(self, folder: Path) -> list[os.DirEntry[str]]:
        """`scandir(folder)` as a list (OSError propagates); the caller offers the plain
        listing back through `store` together with the signature read here."""
        self.scans += 1
        return list(os.scandir(folder))

    def before(self, folder: Path) -> FolderSignature | None:
        """The folder's signature ahead of a scan (None: it cannot be stat-ed)."""
        try:
            return folder_signature(os.stat(folder))
        except OSError:
            return None

    def store(self, folder: Path, before: FolderSignature | None, listing: Listing) -> bool:
        """Remember `listing` when the folder was settled and unchanged across the scan;
        returns whether it was stored."""
        if before is None or max(before[2], before[3]) > self.clock() - settle_ns(before[2], before[3]):
            return False
        try:
            after = folder_signature(os.stat(folder))
        except OSError:
            return False
        if after != before:
            return False
        self._lru.put(str(folder), before, listing)
        return True


LISTINGS = ListingCache()
"""The process-wide cache `roots.walk_markdown` uses (entries are validated on every use)."""
