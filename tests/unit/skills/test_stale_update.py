"""The optional stale-write guard of `directory::skills::update` (`expected_sha256`): a write
goes ahead only while the file still holds the content the caller read; otherwise D114 and
nothing changes."""

from __future__ import annotations

import hashlib
from pathlib import Path

from iii_directory.content.stale import content_sha256
from iii_directory.directory import Directory

from .helpers import call, error, write

UPDATE = "directory::skills::update"
ORIGINAL = "# Howto\n\nKeep notes.\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_digest_is_sha256_of_the_utf8_bytes() -> None:
    assert content_sha256("é\n") == hashlib.sha256("é\n".encode()).hexdigest()
    assert content_sha256(b"x") == hashlib.sha256(b"x").hexdigest()


async def test_a_matching_hash_writes(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"], "notes/howto.md", ORIGINAL)
    got = await call(directory, UPDATE, {"id": "notes/howto", "content": "# Howto\n\nMine.\n",
                                         "expected_sha256": sha(ORIGINAL).upper()})
    assert got["id"] == "notes/howto"
    assert path.read_text() == "# Howto\n\nMine.\n"


async def test_a_changed_file_is_refused_and_kept(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"], "notes/howto.md", ORIGINAL)
    path.write_text(ORIGINAL + "Edited outside.\n")
    failure = await error(directory, UPDATE, {"id": "notes/howto", "content": "# Howto\n\nMine.\n",
                                              "expected_sha256": sha(ORIGINAL)})
    assert failure.code == "D114"
    assert failure.message == (
        f'D114 invalid_input: skill "notes/howto" changed since you read it (expected sha256 '
        f"{sha(ORIGINAL)[:12]}…, the file now has {sha(ORIGINAL + 'Edited outside.' + chr(10))[:12]}…); "
        "nothing was written. Next: call directory::skills::get to read the current content (raw: true) "
        "and redo the edit on it.")
    assert path.read_text() == ORIGINAL + "Edited outside.\n"
    assert directory.engine.emitted == []


async def test_a_malformed_hash_is_refused(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"], "notes/howto.md", ORIGINAL)
    failure = await error(directory, UPDATE, {"id": "notes/howto", "content": "# New\n\nx\n", "expected_sha256": "abc"})
    assert failure.code == "D114" and "must be 64 hexadecimal characters" in failure.message
    assert path.read_text() == ORIGINAL


async def test_without_the_field_update_overwrites_as_before(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"], "notes/howto.md", ORIGINAL)
    path.write_text("changed\n")
    await call(directory, UPDATE, {"id": "notes/howto", "content": "# New\n\nx\n"})
    assert path.read_text() == "# New\n\nx\n"
    await call(directory, UPDATE, {"id": "notes/howto", "content": "# Newer\n\nx\n", "expected_sha256": ""})
    assert path.read_text() == "# Newer\n\nx\n"


async def test_earlier_checks_win(directory: Directory, roots: dict[str, Path]) -> None:
    failure = await error(directory, UPDATE, {"id": "missing/x", "content": "# x\n\nx\n", "expected_sha256": sha("x")})
    assert failure.code == "D110"
    failure = await error(directory, UPDATE, {"id": "missing/x", "content": "---\na: 1\n---\n", "expected_sha256": sha("x")})
    assert failure.code == "D113"
