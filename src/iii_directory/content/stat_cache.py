"""Facts derived from a file, reused while the file is provably unchanged (a performance cache).

`skills::list` and the skills lane of `search_functions` derive a row from every visible skill
on every call; reading and parsing the same unchanged files each time was most of the worker's
time under load. A cached value is reused only while the file's identity — device, inode,
size, mtime and ctime in nanoseconds, from a `stat` that follows symlinks like the read does —
is the one it was derived from:

* every write through `atomic_write` renames a new inode into place, and any in-place edit
  moves ctime (which no user call can set back), so a changed file never matches;
* a value is stored only when the identity seen before and after deriving it is the same (a
  file replaced mid-read is not remembered), and only when the file's mtime and ctime are at
  least `SETTLE_NS` (2 s) old — 100 ms where the stamps show sub-second resolution
  (`settle_ns`) — so a second write within one timestamp tick of the first
  (same size, reused inode) cannot hide behind an equal signature ("racy" entries are re-read
  every time, as git does for its index);
* at most `capacity` entries (least recently used dropped first); the values are small.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

Value = TypeVar("Value")
Signature = tuple[int, int, int, int, int]

DEFAULT_CAPACITY = 8192
SETTLE_NS = 2_000_000_000


def signature(st: os.stat_result) -> Signature:
    """`(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`: what identifies one file state."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


FINE_SETTLE_NS = 100_000_000
"""The settle time where timestamps show sub-second resolution (see `settle_ns`)."""


def settle_ns(mtime_ns: int, ctime_ns: int) -> int:
    """How old a file's (or folder's) timestamps must be before an equal signature proves it
    unchanged: `SETTLE_NS` (2 s), or `FINE_SETTLE_NS` (100 ms) when either stamp has a
    non-zero fraction of a second. Such a file system stamps a change at its clock tick (ns to
    100 ns on ext4, XFS, btrfs, tmpfs, APFS, NTFS; 10 ms on exFAT; the kernel's coarse clock
    moves every 1–10 ms), so a change made 100 ms after the last one gets a later stamp; one
    that stores whole seconds (FAT: 2 s, HFS+, ext3) shows no fraction and keeps 2 s. Files
    written just before a burst of calls (a deploy, a soak's seeds, every write of a busy
    worker) were otherwise re-read and re-parsed by every call for 2 s."""
    if mtime_ns % 1_000_000_000 or ctime_ns % 1_000_000_000:
        return FINE_SETTLE_NS
    return SETTLE_NS


def settled(st: os.stat_result, now_ns: int) -> bool:
    """True when the file's mtime and ctime are both at least `settle_ns` before `now_ns`."""
    return max(st.st_mtime_ns, st.st_ctime_ns) <= now_ns - settle_ns(st.st_mtime_ns, st.st_ctime_ns)


class StatCache(Generic[Value]):
    """Path → value derived from the file, valid for one `signature`. Thread-safe."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, tuple[Signature, Value]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def derive(self, path: Path, st: os.stat_result, compute: Callable[[Path], Value]) -> Value:
        """The value for `path` in the state `st` (a fresh `stat` of it): the cached one when
        the signature matches, else `compute(path)` — remembered when the file was settled and
        did not change while it was computed. Exceptions of `compute` propagate (not cached)."""
        key = str(path)
        sig = signature(st)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] == sig:
                self._entries.move_to_end(key)
                return hit[1]
        value = compute(path)
        if not settled(st, time.time_ns()):
            return value
        try:
            after = signature(path.stat())
        except OSError:
            return value
        if after != sig:
            return value
        with self._lock:
            self._entries[key] = (sig, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return value
