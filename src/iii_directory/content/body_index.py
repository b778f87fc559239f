"""The lowercased markdown bodies of the skills, kept in memory for `skills::list` with
`search_body: true` (a performance index; docs/console-page.md, "first row").

A body search reads and parses every skill whose id, title and summary missed: at 5,000 skills
that is 5,000 file reads per keystroke. The index keeps each file's body, lowercased once, and a
search is one `needle in body` per row. Disk stays the source of truth:

* an entry is valid for one file signature (`stat_cache.signature`: device, inode, size,
  mtime, ctime); every lookup is given a fresh `stat` of the file, and a changed file
  (an edit, a rename over it, a `touch`) is read again whatever told or did not tell the
  index — another process writing without the watcher included;
* an entry is stored only when the file was settled (`stat_cache.settled`) and unchanged
  across the read, the rule of the row-facts cache;
* at most `max_bytes` of body text (UTF-8 length of the lowercased body; least recently used
  dropped first), so a huge tree costs reads, not unbounded memory.

The watcher keeps it current ahead of the calls (`refresh` for the paths of a change window)
and builds it once at start (`build`), so the first search after an edit or after boot does
not pay the reads.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import DirectoryError
from .skills import read_skill
from .stat_cache import Signature, SignedLRU, settled, signature, unchanged

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
"""64 MiB of lowercased bodies: 5,000 skills of ~1 KiB take ~5 MiB."""

BodyReader = Callable[[Path], str]


def _skill_body(path: Path) -> str:
    return read_skill(path).meta.body


def utf8_length(text: str) -> int:
    """The UTF-8 length of `text` (lone surrogates count 3 bytes each): a body's size."""
    return len(text.encode("utf-8", "surrogatepass"))


class BodyIndex:
    """File path → its lowercased skill body, valid for one file signature (a `SignedLRU`
    bounded by `max_bytes` of `utf8_length`). Thread-safe.

    `clock` (ns since the epoch) decides what is settled; `reader` reads one body (raising
    `DirectoryError` for a file that is not a readable skill). Both are injectable for tests."""

    def __init__(self, directory: object | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 clock: Callable[[], int] = time.time_ns,
                 reader: BodyReader = _skill_body) -> None:
        self.clock = clock
        self.reader = reader
        self.reads = 0
        """Bodies read from disk so far (tests and benchmarks read it)."""
        self._lru: SignedLRU[Signature, str] = SignedLRU(max_size=max_bytes, size=utf8_length)
        self._max_bytes = max_bytes

    def __len__(self) -> int:
        return len(self._lru)

    def __contains__(self, path: object) -> bool:
        """Whether an entry for `path` is held (whatever its state)."""
        return str(path) in self._lru

    @property
    def max_bytes(self) -> int:
        """The most UTF-8 bytes of bodies held."""
        return self._max_bytes

    @max_bytes.setter
    def max_bytes(self, limit: int) -> None:
        self._max_bytes = self._lru.max_size = limit

    @property
    def bytes(self) -> int:
        """UTF-8 bytes of the bodies held now."""
        return self._lru.total

    def body(self, path: Path, st: os.stat_result | None) -> str | None:
        """The lowercased body of the skill at `path` in the state `st` (a fresh `stat`; None
        when it could not be taken), None when the file is not a readable skill."""
        if st is not None:
            hit = self._lru.get(str(path), signature(st))
            if hit is not None:
                return hit
        return self._read(path, st)

    def contains(self, path: Path, st: os.stat_result | None, needle: str) -> bool:
        """Whether the body contains the lowercase `needle`; an unreadable file contains nothing."""
        body = self.body(path, st)
        return body is not None and needle in body

    def _read(self, path: Path, st: os.stat_result | None) -> str | None:
        key = str(path)
        try:
            self.reads += 1
            lowered = self.reader(path).lower()
        except (DirectoryError, OSError):
            self._lru.discard(key)
            return None
        if st is None or not settled(st, self.clock()):
            self._lru.discard(key)
            return lowered
        sig = signature(st)
        if not unchanged(path, sig):
            self._lru.discard(key)
            return lowered
        self._lru.put(key, sig, lowered)
        return lowered

    def forget(self, path: Path | str) -> None:
        """Drop the entry of one file (if any)."""
        self._lru.discard(str(path))

    def refresh(self, paths: Iterable[Path]) -> list[Path]:
        """Bring the entries of `paths` up to date with disk (the watcher's change window):
        a gone file is dropped, a changed one read again. Returns the paths read but too fresh
        to keep (not yet settled), for the caller to refresh again later."""
        fresh = []
        for path in paths:
            try:
                st = os.stat(path)
            except OSError:
                self.forget(path)
                continue
            if self._lru.signature_of(str(path)) == signature(st):
                continue
            if self._read(path, st) is not None and not settled(st, self.clock()):
                fresh.append(path)
        return fresh

    def build(self, paths: Iterable[Path]) -> int:
        """Index every file of `paths` not yet held (the watcher's start); returns how many
        entries the index holds after it. Stops once `max_bytes` are held: past that an
        entry would only push out another."""
        for path in paths:
            if self._lru.total >= self.max_bytes:
                break
            self.refresh((path,))
        return len(self)

    def clear(self) -> None:
        self._lru.clear()
