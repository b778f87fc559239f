"""`directory::system-prompts::*` through the engine protocol: every function invoked by a
test client, error bodies with their codes, and the on-change fan-out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from iii_directory.port import EngineCallError
from wire_checks import own_ops

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]

ON_CHANGE = "directory::system-prompts::on-change"
PROMPT = "---\ndescription: Reviews pull requests.\n---\nYou review pull requests.\n"


async def test_list_get_create_update_delete(wire: Any, roots: dict[str, Path]) -> None:
    events = wire.subscribe(ON_CHANGE)
    listed = await wire.call("directory::system-prompts::list", {})
    assert [(p["name"], p["builtin"], p["modified_at"]) for p in listed["prompts"]] == [("iii-minimal", True, "")]

    created = await wire.call("directory::system-prompts::create", {"name": "reviewer", "content": PROMPT})
    assert created["name"] == "reviewer"
    assert created["bytes"] == len(PROMPT)
    assert (roots["skills"] / "system-prompts" / "reviewer.md").read_text() == PROMPT

    got = await wire.call("directory::system-prompts::get", {"name": "reviewer", "raw": True})
    assert got["body"] == "You review pull requests.\n"
    assert got["raw"] == PROMPT
    assert got["builtin"] is False

    renamed = "---\nname: code-reviewer\ndescription: Reviews code.\n---\nReview.\n"
    updated = await wire.call("directory::system-prompts::update", {"name": "reviewer", "content": renamed})
    assert updated["name"] == "code-reviewer"
    assert updated["description"] == "Reviews code."

    deleted = await wire.call("directory::system-prompts::delete", {"name": "code-reviewer"})
    assert deleted == {"name": "code-reviewer"}

    await events.wait_for(3)
    assert own_ops(events)[:3] == [
        {"op": "create", "name": "reviewer"},
        {"op": "update", "name": "code-reviewer"},
        {"op": "delete", "name": "code-reviewer"},
    ]


async def test_bundled_prompt_copy_on_write_over_the_wire(wire: Any, roots: dict[str, Path]) -> None:
    bundled = await wire.call("directory::system-prompts::get", {"name": "iii-minimal", "raw": True})
    assert bundled["builtin"] is True
    assert bundled["raw"].startswith("---\nname: iii-minimal\n")
    await wire.call("directory::system-prompts::update", {"name": "iii-minimal", "content": PROMPT})
    shadow = await wire.call("directory::system-prompts::get", {"name": "iii-minimal"})
    assert (shadow["builtin"], shadow["body"]) == (False, "You review pull requests.\n")
    await wire.call("directory::system-prompts::delete", {"name": "iii-minimal"})
    back = await wire.call("directory::system-prompts::get", {"name": "iii-minimal"})
    assert back["builtin"] is True


async def test_error_bodies_keep_their_codes(wire: Any) -> None:
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::system-prompts::get", {"name": "nope"})
    assert caught.value.code == "D210"
    assert caught.value.message.startswith('D210 not_found: system prompt "nope" does not exist.')

    await wire.call("directory::system-prompts::create", {"name": "twice", "content": PROMPT})
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::system-prompts::create", {"name": "twice", "content": PROMPT})
    assert caught.value.code == "D214"

    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::system-prompts::create", {"name": "nodesc", "content": "---\nname: nodesc\n---\nB\n"})
    assert caught.value.code == "D213"

    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::system-prompts::delete", {"name": "Bad/Name"})
    assert caught.value.code == "invocation_failed"
    assert "lowercase" in caught.value.message


async def test_watcher_reports_external_prompt_edits_only(wire: Any, roots: dict[str, Path]) -> None:
    events = wire.subscribe(ON_CHANGE)
    await wire.call("directory::system-prompts::create", {"name": "mine", "content": PROMPT})
    await events.wait_for(1)
    # The directory exists already (create made it): a file in a brand-new directory can beat
    # the recursive watch being installed on that directory.
    (roots["skills"] / "system-prompts" / "outside.md").write_text(PROMPT)
    await events.wait_for(2)
    await anyio.sleep(0.8)
    assert list(events) == [{"op": "create", "name": "mine"}, {"op": "external"}]
