"""The stale-write check of `update` requests (an optional `expected_sha256`).

A client that read a file (`get { raw: true }`) and later writes it back may pass the SHA-256 of
the text it read: the lowercase hex digest of its UTF-8 bytes. The write goes ahead only while
the file still holds exactly those bytes; otherwise the request is refused with the collection's
conflict code (D114 for skills, D414 for agent profiles) and nothing is written. Without the
field an update overwrites as before. The comparison reads the file just before the atomic
rename; an outside write landing between the two (a window of one read) is not detected.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from ..errors import invalid_input, quote

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
EXPECTED_SHA256_TEXT = (
    "Optional stale-write guard: the SHA-256 (64 lowercase hex characters) of the UTF-8 bytes of "
    "the file content this edit started from — the `raw` a `get { raw: true }` returned. When "
    "the file no longer holds exactly that content the update is refused with a conflict error "
    "and nothing is written; omit it to overwrite unconditionally."
)


def content_sha256(data: bytes | str) -> str:
    """Lowercase hex SHA-256 of `data` (text is hashed as UTF-8)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def check_expected(
    code: str,
    noun: str,
    entry_id: str,
    expected: str | None,
    current: bytes | str,
    *,
    next_steps: Sequence[tuple[str, str]] = (),
) -> None:
    """Nothing when `expected` is None or matches `current`; else `<code> invalid_input` naming
    both digests (a malformed digest is refused the same way, before any comparison)."""
    if expected is None:
        return
    wanted = expected.strip().lower()
    if not _HEX64.match(wanted):
        raise invalid_input(
            code, "`expected_sha256` must be 64 hexadecimal characters (the SHA-256 of the content "
            "you read); nothing was written.", next_steps=next_steps,
        )
    now = content_sha256(current)
    if now != wanted:
        raise invalid_input(
            code,
            f"{noun} {quote(entry_id)} changed since you read it (expected sha256 {wanted[:12]}…, "
            f"the file now has {now[:12]}…); nothing was written.",
            next_steps=next_steps,
        )
