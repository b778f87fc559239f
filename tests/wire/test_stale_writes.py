"""The stale-write guard of `directory::skills::update` and `directory::agents::update` through
the engine protocol: the optional `expected_sha256` is published in both request schemas, a
matching digest writes, a stale one comes back as a coded error body and writes nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from wire_checks import failure

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def test_schemas_publish_the_optional_field(wire: Any) -> None:
    """The schema the worker registered with the engine (the published one) carries the field."""
    registered = {entry.id: entry.request_format for entry in wire.engine.functions.values()}
    for function_id in ("directory::skills::update", "directory::agents::update"):
        schema = registered[function_id]
        assert set(schema["required"]) == {"id", "content"}
        assert schema["properties"]["expected_sha256"]["description"].startswith("Optional stale-write guard")
        assert "expected_sha256" not in schema.get("required", [])


async def test_skill_update_refuses_a_stale_write(wire: Any, roots: dict[str, Path]) -> None:
    path = roots["skills"] / "notes" / "howto.md"
    path.parent.mkdir(parents=True)
    path.write_text("# Howto\n\nOne.\n")
    got = await wire.call("directory::skills::get", {"id": "notes/howto", "raw": True})
    read = got["raw"]
    path.write_text("# Howto\n\nOne.\nOutside.\n")
    stale = await failure(wire, "directory::skills::update",
                          {"id": "notes/howto", "content": read + "Mine.\n", "expected_sha256": sha(read)})
    assert stale.code == "D114"
    assert stale.message.startswith('D114 invalid_input: skill "notes/howto" changed since you read it')
    assert path.read_text() == "# Howto\n\nOne.\nOutside.\n"
    now = (await wire.call("directory::skills::get", {"id": "notes/howto", "raw": True}))["raw"]
    await wire.call("directory::skills::update", {"id": "notes/howto", "content": now + "Mine.\n", "expected_sha256": sha(now)})
    assert path.read_text() == "# Howto\n\nOne.\nOutside.\nMine.\n"


async def test_agent_update_refuses_a_stale_write(wire: Any, roots: dict[str, Path]) -> None:
    profile = "---\nname: Scribe\n---\nYou take notes.\n"
    await wire.call("directory::agents::create", {"id": "scribe", "content": profile})
    path = roots["agents"] / "scribe.md"
    path.write_text(profile + "Outside.\n")
    stale = await failure(wire, "directory::agents::update",
                          {"id": "scribe", "content": profile + "Mine.\n", "expected_sha256": sha(profile)})
    assert stale.code == "D414"
    assert "changed since you read it" in stale.message
    assert path.read_text() == profile + "Outside.\n"
    await wire.call("directory::agents::update",
                    {"id": "scribe", "content": profile + "Mine.\n", "expected_sha256": sha(profile + "Outside.\n")})
    assert path.read_text() == profile + "Mine.\n"
