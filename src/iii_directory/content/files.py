"""Reading content files: the size cap, read errors and timestamps (docs/rules/surfaces.md §1.2, §3.7).

* Maximum file size 262 144 bytes, checked on the raw file (frontmatter included); an oversized
  file reads as `file <path> is too large (N bytes; max 262144)`, an unreadable one as
  `read <path>: <error>` (bare messages).
* A body that is empty once newlines are trimmed is unreadable for skills and system prompts.
* `modified_at` is the file mtime in RFC 3339, UTC, offset written `+00:00` (fractional seconds
  when non-zero); `""` when the mtime is unavailable.

Walking roots and classifying paths is `roots.py`'s job.
"""

from __future__ import annotations

import functools
import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

from ..errors import DirectoryError

MAX_FILE_BYTES = 262_144


@functools.lru_cache(maxsize=8192)
def rfc3339(timestamp: float) -> str:
    """`2026-01-02T03:04:05.123456+00:00` (fractional seconds only when non-zero). Pure, so
    remembered: list rows format the same unchanged mtimes on every call."""
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat()


def modified_at(path: Path) -> str:
    """The mtime of `path` as RFC 3339 UTC, or `""` when it cannot be read."""
    try:
        return rfc3339(path.stat().st_mtime)
    except OSError:
        return ""


def too_large(path: Path, size: int) -> str:
    return f"file {path} is too large ({size} bytes; max {MAX_FILE_BYTES})"


def read_capped(path: Path) -> str:
    """The UTF-8 text of `path`; bare errors for an oversized or unreadable file."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
            if len(data) > MAX_FILE_BYTES:
                size = os.fstat(handle.fileno()).st_size
                raise DirectoryError.plain(too_large(path, max(size, len(data))))
    except OSError as exc:
        raise DirectoryError.plain(f"read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DirectoryError.plain(f"read {path}: stream did not contain valid UTF-8 ({exc.reason})") from None


def read_head(path: Path, limit: int = MAX_FILE_BYTES + 65_536) -> tuple[str, int] | None:
    """At most `limit` bytes of `path` decoded as UTF-8 (a split trailing character is dropped)
    and the file size; None when unreadable or not UTF-8. Scans use it to read frontmatter
    without loading an oversized file."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit)
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(data) < limit or exc.start < len(data) - 4:
            return None
        text = data[: exc.start].decode("utf-8")
    return text, size


def sha256_hex(data: bytes | str) -> str:
    """Lower-case hex SHA-256 of the bytes, a string taken as UTF-8 (`abc` → `ba7816bf…15ad`):
    how kits.lock and the completion markers name a file's content."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def body_is_empty(body: str) -> bool:
    """A body that is empty once newlines are trimmed is unreadable (§3.7)."""
    return body.strip("\r\n") == ""
