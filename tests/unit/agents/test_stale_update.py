"""The optional stale-write guard of `directory::agents::update` (`expected_sha256`): D414 when
the profile's file (or, for a bundled profile, its bundled text) is not the content the caller
read; nothing is written."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError

PROFILE = "---\nname: Scribe\ndescription: Takes notes\n---\nYou take notes.\n"
EDITED = PROFILE.replace("Takes notes", "Takes careful notes")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def update(directory: Directory, data: dict[str, Any]) -> dict[str, Any]:
    return await directory.invoke("directory::agents::update", data)


async def refused(directory: Directory, data: dict[str, Any]) -> DirectoryError:
    with pytest.raises(DirectoryError) as caught:
        await update(directory, data)
    return caught.value


async def test_matching_hash_writes(directory: Directory, roots: dict[str, Path]) -> None:
    path = roots["agents"] / "scribe.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PROFILE)
    got = await update(directory, {"id": "scribe", "content": EDITED, "expected_sha256": sha(PROFILE)})
    assert got["description"] == "Takes careful notes"
    assert path.read_text() == EDITED


async def test_changed_file_is_refused(directory: Directory, roots: dict[str, Path]) -> None:
    path = roots["agents"] / "scribe.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PROFILE + "Outside.\n")
    failure = await refused(directory, {"id": "scribe", "content": EDITED, "expected_sha256": sha(PROFILE)})
    assert failure.code == "D414"
    assert failure.message.startswith('D414 invalid_input: agent profile "scribe" changed since you read it (expected sha256 ')
    assert failure.message.endswith("nothing was written. Next: call directory::agents::get to read the current content "
                                    "(raw: true) and redo the edit on it.")
    assert path.read_text() == PROFILE + "Outside.\n"
    assert directory.engine.emitted == []


async def test_bundled_profile_compares_the_bundled_text(directory: Directory, roots: dict[str, Path]) -> None:
    got = await directory.invoke("directory::agents::get", {"id": "default", "raw": True})
    bundled = got["raw"]
    shadow = roots["agents"] / "default.md"
    failure = await refused(directory, {"id": "default", "content": bundled + "More.\n", "expected_sha256": sha("other")})
    assert failure.code == "D414" and not shadow.exists()
    await update(directory, {"id": "default", "content": bundled + "More.\n", "expected_sha256": sha(bundled)})
    assert shadow.read_text() == bundled + "More.\n"


async def test_invalid_content_is_reported_before_the_hash(directory: Directory, roots: dict[str, Path]) -> None:
    path = roots["agents"] / "scribe.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PROFILE)
    failure = await refused(directory, {"id": "scribe", "content": "---\ndescription: x\n---\n", "expected_sha256": sha("x")})
    assert failure.code != "D414"
    assert path.read_text() == PROFILE
