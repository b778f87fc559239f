"""`directory::agents::*` through the engine protocol: every function invoked by a test client,
error bodies with their codes, `unknown_functions` checked against the live catalog, and the
on-change fan-out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from iii_directory.port import EngineCallError
from wire_checks import own_ops

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]

ON_CHANGE = "directory::agents::on-change"
PROFILE = "---\nname: Helper\nlogo: 🧭\n# a comment\nskills: [ghost/skill]\n---\nYou help.\n"


async def test_every_function_over_the_wire(wire: Any, roots: dict[str, Path]) -> None:
    events = wire.subscribe(ON_CHANGE)
    listed = await wire.call("directory::agents::list", {})
    assert [a["id"] for a in listed["agents"]] == ["default", "iii", "iii-minimal"]

    created = await wire.call("directory::agents::create", {"id": "helper", "content": PROFILE})
    assert (created["id"], created["name"], created["logo"]) == ("helper", "Helper", "🧭")

    added = await wire.call(
        "directory::agents::functions::add",
        {"id": "helper", "functions": ["directory::skills::get", "nope::missing"]},
    )
    assert added["added"] == ["directory::skills::get", "nope::missing"]
    assert added["unchanged"] is False
    text = (roots["agents"] / "helper.md").read_text()
    assert text == PROFILE.replace(
        "---\nYou help.", "functions:\n  - directory::skills::get\n  - nope::missing\n---\nYou help."
    )

    got = await wire.call("directory::agents::get", {"id": "helper", "raw": True})
    assert got["raw"] == text
    assert got["functions"] == ["directory::skills::get", "nope::missing"]
    assert got["unknown_functions"] == ["nope::missing"]
    assert got["unknown_skills"] == ["ghost/skill"]
    assert got["system_prompt"] == "You help.\n"
    assert got["source"] == {"kind": "local"}

    removed = await wire.call(
        "directory::agents::functions::remove",
        {"id": "helper", "functions": ["directory::skills::get", "nope::missing"]},
    )
    assert (removed["removed"], removed["functions"]) == (["directory::skills::get", "nope::missing"], [])
    assert (roots["agents"] / "helper.md").read_text() == PROFILE

    updated = await wire.call(
        "directory::agents::update", {"id": "helper", "content": "---\nname: Helper 2\nextends: default\n---\n"}
    )
    assert updated["name"] == "Helper 2"
    inherited = await wire.call("directory::agents::get", {"id": "helper"})
    default = await wire.call("directory::agents::get", {"id": "default"})
    assert inherited["system_prompt"] == default["system_prompt"]

    assert await wire.call("directory::agents::delete", {"id": "helper"}) == {"id": "helper"}

    await events.wait_for(5)
    assert own_ops(events)[:5] == [
        {"op": "create", "name": "helper"},
        {"op": "update", "name": "helper"},
        {"op": "update", "name": "helper"},
        {"op": "update", "name": "helper"},
        {"op": "delete", "name": "helper"},
    ]


async def test_bundled_shadow_and_fallback(wire: Any, roots: dict[str, Path]) -> None:
    result = await wire.call("directory::agents::functions::add", {"id": "iii", "functions": ["coder::tree"]})
    assert result["functions"] == ["coder::tree"]
    assert (roots["agents"] / "iii.md").exists()
    rows = {a["id"]: a for a in (await wire.call("directory::agents::list", {}))["agents"]}
    assert rows["iii"]["builtin"] is False and rows["iii"]["function_count"] == 1
    await wire.call("directory::agents::delete", {"id": "iii"})
    rows = {a["id"]: a for a in (await wire.call("directory::agents::list", {}))["agents"]}
    assert rows["iii"]["builtin"] is True and rows["iii"]["source"] == {"kind": "builtin"}


async def test_error_bodies_keep_their_codes(wire: Any, roots: dict[str, Path]) -> None:
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::agents::get", {"id": "ghost"})
    assert caught.value.code == "D410"
    assert caught.value.message.startswith('D410 not_found: agent profile "ghost" does not exist.')

    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::agents::delete", {"id": "default"})
    assert caught.value.code == "D414"

    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::agents::functions::add", {"id": "default", "functions": ["coder tree"]})
    assert caught.value.code == "D416"

    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::agents::create", {"id": "bad-logo", "content": "---\nname: X\nlogo: ./x.png\n---\n"})
    assert caught.value.code == "invocation_failed"
    assert caught.value.message == "`logo` may not contain path separators or whitespace — emoji only"
    assert not (roots["agents"] / "bad-logo.md").exists()

    (roots["agents"]).mkdir(exist_ok=True)
    (roots["agents"] / "orphan.md").write_text("---\nname: Orphan\nextends: nope\n---\nOwn.\n")
    got = await wire.call("directory::agents::get", {"id": "orphan"})
    assert got["inheritance_error"].startswith('D415 invalid_input: agent profile "orphan" extends unknown')
    assert got["system_prompt"] == "Own.\n"


async def test_watcher_reports_external_edits_only(wire: Any, roots: dict[str, Path]) -> None:
    events = wire.subscribe(ON_CHANGE)
    await wire.call("directory::agents::create", {"id": "mine", "content": PROFILE})
    await events.wait_for(1)
    (roots["agents"] / "outside.md").write_text("---\nname: Outside\n---\n")
    (roots["agents"] / "nested").mkdir()
    (roots["agents"] / "nested" / "ignored.md").write_text("---\nname: Nested\n---\n")
    await events.wait_for(2)
    await anyio.sleep(0.8)
    assert list(events) == [{"op": "create", "name": "mine"}, {"op": "external"}]


async def test_a_blank_child_serves_its_parents_body_verbatim(wire: Any, roots: dict[str, Path]) -> None:
    """Issue 17, defect 6: only an appended body trims the previous one's trailing newline."""
    await wire.call("directory::agents::create", {"id": "base", "content": "---\nname: Base\n---\nBase body.\n\n"})
    await wire.call("directory::agents::create", {"id": "blank", "content": "---\nname: Blank\nextends: base\n---\n"})
    await wire.call("directory::agents::create",
                    {"id": "grand", "content": "---\nname: Grand\nextends: blank\n---\n\n  \n"})
    await wire.call("directory::agents::create",
                    {"id": "child", "content": "---\nname: Child\nextends: blank\n---\nChild body.\n"})
    for profile in ("base", "blank", "grand"):
        got = await wire.call("directory::agents::get", {"id": profile})
        assert got["system_prompt"] == "Base body.\n\n", profile
    child = await wire.call("directory::agents::get", {"id": "child"})
    assert child["system_prompt"] == "Base body.\n\nChild body.\n"
