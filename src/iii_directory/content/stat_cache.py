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

`SignedLRU` is the store under every content cache (this one, the skill body index, the
listing rows, the folder listings): key → (signature, value), a hit only for an equal
signature, least recently used dropped first, bounded by count and by a `size` of the values.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

Value = TypeVar("Value")
Sig = TypeVar("Sig")
Signature = tuple[int, int, int, int, int]

if TYPE_CHECKING:
    from typing import Generic as Typed
else:
    class Typed:
        """`typing.Generic` to a type checker; at run time a plain base whose `Typed[...]`
        (and a subclass's `Cls[...]`) is the class itself, so defining and subscribing these
        classes costs no `typing` machinery on `iii-directory call`'s path (figures in
        docs/record/performance.md, "One signature-checked LRU")."""

        def __class_getitem__(cls, params: Any) -> type:
            return cls


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


class SignedLRU(Typed[Sig, Value]):
    """Key → (signature, value), least recently used first out. Thread-safe.

    * `get(key, sig)` is a hit only when the entry's signature equals `sig` (`==`); a hit makes
      the entry the most recently used. A changed signature is a miss that leaves the entry in
      place until a `put` replaces it, `discard` drops it or it ages out.
    * `put` makes the entry the most recently used, then drops least recently used entries while
      more than `capacity` are held or their sizes add up to more than `max_size` (`None`: no
      such limit). An entry's size is `size(value)` (0 without a `size` function), taken once
      at `put`. A value larger than `max_size` on its own is not stored, and the key's
      previous entry is dropped.
    * `None` is never stored (`get` answers a miss with it; `put` answers False).
    """

    def __init__(self, capacity: int | None = None, *, max_size: int | None = None,
                 size: Callable[[Value], int] | None = None) -> None:
        self.capacity = capacity
        self.max_size = max_size
        self._size = size
        self._entries: OrderedDict[str, tuple[Sig, Value, int]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether an entry for `key` is held, whatever its signature."""
        return key in self._entries

    @property
    def total(self) -> int:
        """The sum of the sizes of the entries held."""
        return self._total

    def get(self, key: str, sig: Sig) -> Value | None:
        """The value stored for `key` under the signature `sig`, None when there is none.
        Takes no lock: the read and the move are each one step of the C `OrderedDict` (keys
        are `str`, so no Python code runs inside them), and an entry evicted between them is
        still a hit."""
        entries = self._entries
        hit = entries.get(key)
        if hit is not None and hit[0] == sig:
            try:
                entries.move_to_end(key)
            except KeyError:  # evicted by a concurrent `put` since the read
                pass
            return hit[1]
        return None

    def signature_of(self, key: str) -> Sig | None:
        """The signature `key`'s entry was stored under (None: no entry); the entry's place in
        the order does not change."""
        hit = self._entries.get(key)
        return None if hit is None else hit[0]

    def put(self, key: str, sig: Sig, value: Value) -> bool:
        """Store `value` for `key` under `sig`, evicting as the class states; whether it was
        stored (False for `None` and for a value over `max_size`)."""
        if value is None:
            return False
        size = 0 if self._size is None else self._size(value)
        max_size = self.max_size
        if max_size is not None and size > max_size:
            self.discard(key)
            return False
        with self._lock:
            entries = self._entries
            old = entries.pop(key, None)
            if old is not None:
                self._total -= old[2]
            entries[key] = (sig, value, size)
            self._total += size
            capacity = self.capacity
            while entries and ((capacity is not None and len(entries) > capacity)
                               or (max_size is not None and self._total > max_size)):
                self._total -= entries.popitem(last=False)[1][2]
        return True

    def discard(self, key: str) -> None:
        """Drop `key`'s entry, if any."""
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._total -= old[2]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._total = 0


def unchanged(path: Path | str, sig: Signature) -> bool:
    """True when a fresh `stat` of `path` (following symlinks) still has the signature `sig`."""
    try:
        return signature(os.stat(path)) == sig
    except OSError:
        return False


class StatCache(SignedLRU[Signature, Value]):
    """Path → value derived from the file, valid for one `signature` (a `SignedLRU` of
    `capacity` entries). Thread-safe."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        super().__init__(capacity)

    def derive(self, path: Path, st: os.stat_result, compute: Callable[[Path], Value]) -> Value:
        """The value for `path` in the state `st` (a fresh `stat` of it): the cached one when
        the signature matches, else `compute(path)` — remembered when the file was settled and
        did not change while it was computed. Exceptions of `compute` propagate (not cached)."""
        key = str(path)
        sig = signature(st)
        hit = self.get(key, sig)
        if hit is not None:
            return hit
        value = compute(path)
        if settled(st, time.time_ns()) and unchanged(path, sig):
            self.put(key, sig, value)
        return value
