"""Document vectors cached by the SHA-256 of their text, in memory and on disk (docs/rules/search.md §5.3).

A catalog refresh or a worker restart embeds only documents whose text is new. The disk file is
append-only: a header line naming the model key and dimension, then fixed-size records of
`sha256 digest (32 bytes) + dimension × float32 (little endian)`. A torn tail record (a crash
mid-append) is ignored on load; a file for another model or dimension is never read (its name
carries the model key).

The cache directory is `$III_DIRECTORY_CACHE_DIR`, else `$XDG_CACHE_HOME/iii-directory`, else
`~/.cache/iii-directory`.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CACHE_ENV = "III_DIRECTORY_CACHE_DIR"
MAGIC = b"iii-directory-vectors v1"
TEXT_KEYS = 8192  # chosen: bounds memory of the key memo
"""Texts whose SHA-256 key stays remembered (`text_key`)."""


def default_cache_dir() -> Path:
    """`$III_DIRECTORY_CACHE_DIR`, else `$XDG_CACHE_HOME/iii-directory`, else
    `~/.cache/iii-directory`."""
    explicit = os.environ.get(CACHE_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg:
        return Path(xdg).expanduser() / "iii-directory"
    return Path("~/.cache/iii-directory").expanduser()


@functools.lru_cache(maxsize=TEXT_KEYS)
def text_key(text: str) -> bytes:
    """The cache key of a document: SHA-256 of its UTF-8 text. Remembered for the last
    `TEXT_KEYS` texts: every search call looks up the vectors of every visible skill, trigger
    and registry document, and hashing them all again was a tenth of a hybrid call's time."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class VectorCache:
    """text digest → float32 vector. `directory=None` keeps it in memory only.

    `lookup(texts)` returns the cached vectors (None where missing); `store(texts, vectors)` adds
    new ones and appends them to the disk file. Thread-safe (embedding runs in worker threads).
    """

    def __init__(self, model_key: str, dimension: int, directory: Path | None) -> None:
        self.model_key = model_key
        self.dimension = dimension
        self.path = None if directory is None else directory / f"vectors-{model_key}.bin"
        self._vectors: dict[bytes, Any] = {}
        self._lock = threading.Lock()
        self._loaded = False
        self._file_ok = False

    @property
    def record_size(self) -> int:
        return 32 + 4 * self.dimension

    def _header(self) -> bytes:
        return MAGIC + f" {self.model_key} {self.dimension}\n".encode("ascii")

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.path is None or not self.path.is_file():
            return
        import numpy as np

        try:
            data = self.path.read_bytes()
        except OSError as exc:
            log.warning("vector cache %s unreadable: %s", self.path, exc)
            return
        header = self._header()
        if not data.startswith(header):
            log.warning("vector cache %s has a foreign header; it will be rewritten", self.path)
            return
        self._file_ok = True
        body = memoryview(data)[len(header):]
        whole = len(body) - len(body) % self.record_size
        for offset in range(0, whole, self.record_size):
            digest = bytes(body[offset:offset + 32])
            vector = np.frombuffer(body[offset + 32:offset + self.record_size], dtype="<f4")
            if np.all(np.isfinite(vector)):
                self._vectors[digest] = vector.astype(np.float32)

    def __len__(self) -> int:
        with self._lock:
            self._load()
            return len(self._vectors)

    def lookup(self, texts: Sequence[str]) -> list[Any]:
        with self._lock:
            self._load()
            return [self._vectors.get(text_key(text)) for text in texts]

    def store(self, texts: Sequence[str], vectors: Any) -> None:
        import numpy as np

        records = bytearray()
        with self._lock:
            self._load()
            for text, vector in zip(texts, vectors):
                digest = text_key(text)
                if digest in self._vectors:
                    continue
                row = np.asarray(vector, dtype="<f4").reshape(-1)
                if row.shape[0] != self.dimension:
                    raise ValueError(f"vector of dimension {row.shape[0]}, expected {self.dimension}")
                self._vectors[digest] = row.astype(np.float32)
                records += digest + row.tobytes()
            if records and self.path is not None:
                self._append(bytes(records))

    def _append(self, records: bytes) -> None:
        assert self.path is not None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self._file_ok:
                with self.path.open("wb") as handle:
                    handle.write(self._header() + records)
                self._file_ok = True
                return
            with self.path.open("r+b") as handle:
                end = handle.seek(0, os.SEEK_END)
                tail = (end - len(self._header())) % self.record_size
                if tail:  # drop a torn record left by an interrupted append
                    end = handle.truncate(end - tail)
                handle.seek(end)
                handle.write(records)
        except OSError as exc:
            log.warning("vector cache %s not written: %s", self.path, exc)


def short_key(text: str) -> bytes:
    """A 16-byte BLAKE2b digest of `text`: what an in-memory map keeps instead of the text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class LruVectors:
    """A bounded text → vector map (capabilities, ad-hoc documents), keyed by `short_key`, so
    an entry holds the same bytes however long its text is."""

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._items: OrderedDict[bytes, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> Any:
        key = short_key(text)
        with self._lock:
            vector = self._items.get(key)
            if vector is not None:
                self._items.move_to_end(key)
            return vector

    def put(self, text: str, vector: Any) -> None:
        key = short_key(text)
        with self._lock:
            self._items[key] = vector
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
