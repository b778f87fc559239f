"""`iii-directory::ui-content` and the console asset bindings through the engine protocol
(console-ui.md §1.2–§1.4, §1.9, §5.2 items 2, 3 and 5)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from iii_directory.port import EngineCallError
from iii_directory.ui.assets import ASSETS, WATCH_ENV, packaged_dir, read_packaged

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]

FUNCTION_ID = "iii-directory::ui-content"


def ui_bindings(wire: Any) -> list[Any]:
    return sorted((b for b in wire.engine.bindings.values() if b.function_id == FUNCTION_ID),
                  key=lambda b: b.config["path"])


async def test_content_through_the_protocol(wire: Any) -> None:
    for asset in ASSETS:
        result = await wire.call(FUNCTION_ID, {"path": asset.path})
        assert result == {"content": read_packaged(asset), "content_type": asset.content_type}


async def test_unknown_path(wire: Any) -> None:
    with pytest.raises(EngineCallError) as info:
        await wire.call(FUNCTION_ID, {"path": "nope.js"})
    assert info.value.code == "invocation_failed"
    known = sorted(asset.path for asset in ASSETS)
    assert {"iii-directory/module.js", "iii-directory/page.js", "iii-directory/styles.css"} <= set(known)
    assert info.value.message == (
        "UNKNOWN_UI_ASSET: 'nope.js' is not one of this worker's ui assets (expected one of: "
        + ", ".join(known) + ")"
    )


async def test_internal_metadata_hides_it_from_the_plain_listing(wire: Any) -> None:
    plain = await wire.call("engine::functions::list", {})
    listed = {row["function_id"] for row in plain["functions"]}
    assert FUNCTION_ID not in listed
    everything = await wire.call("engine::functions::list", {"include_internal": True})
    assert FUNCTION_ID in {row["function_id"] for row in everything["functions"]}
    info = await wire.call("engine::functions::info", {"function_id": FUNCTION_ID})
    assert info["metadata"] == {"internal": True}
    assert info["description"].startswith("Serve the iii-directory worker's injected console UI assets")


async def test_one_connection_owned_binding_per_asset(wire: Any) -> None:
    bindings = ui_bindings(wire)
    expected = sorted(((a.trigger_type, {"path": a.path}) for a in ASSETS), key=lambda pair: pair[1]["path"])
    assert [(b.trigger_type, b.config) for b in bindings] == expected
    assert ("console:script", {"path": "iii-directory/page.js"}) in expected
    assert ("console:style", {"path": "iii-directory/styles.css"}) in expected
    assert all(b.owner is not None for b in bindings)
    ids = {b.id for b in bindings}

    console = wire.engine.install_console()  # parked bindings go live when the console arrives
    fetched = await console.fetch("console:style", "iii-directory/styles.css")
    assert fetched["content_type"] == "text/css; charset=utf-8"

    await wire.engine.drop_connections()
    await wire.engine.wait_for(lambda: len(ui_bindings(wire)) == len(ASSETS) and all(not b.owner.closed for b in ui_bindings(wire)),
                               timeout=15)
    assert {b.id for b in ui_bindings(wire)} == ids  # replayed with the same ids


@pytest.fixture
def ui_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ui-watch"
    shutil.copytree(packaged_dir(), folder)
    monkeypatch.setenv(WATCH_ENV, str(folder))
    return folder


@pytest.fixture
async def watched_wire(ui_copy: Path, wire: Any) -> Any:
    return wire


async def test_hot_reload_rebinds_new_before_old(watched_wire: Any, ui_copy: Path) -> None:
    wire = watched_wire
    wire.engine.install_console()
    before = {b.config["path"]: b.id for b in ui_bindings(wire)}
    (ui_copy / "page.js").write_text(read_packaged(ASSETS[0]).replace("PAGE_VERSION = '", "PAGE_VERSION = 'x"))

    with anyio.fail_after(5):
        while True:
            result = await wire.call(FUNCTION_ID, {"path": "iii-directory/page.js"})
            if "PAGE_VERSION = 'x" in result["content"]:
                break
            await anyio.sleep(0.1)
    await wire.engine.wait_for(lambda: before["iii-directory/page.js"] not in {b.id for b in ui_bindings(wire)})

    worker_id = wire.engine.worker("iii-directory").worker_id
    frames = [f for f in wire.engine.frames_of(worker_id)
              if f["type"] in ("registertrigger", "unregistertrigger") and f.get("trigger_type") == "console:script"]
    old_id = before["iii-directory/page.js"]
    new = [i for i, f in enumerate(frames) if f["type"] == "registertrigger" and f["id"] != old_id]
    gone = [i for i, f in enumerate(frames) if f["type"] == "unregistertrigger" and f["id"] == old_id]
    assert new and gone and new[0] < gone[0]

    bindings = ui_bindings(wire)
    assert sorted(b.config["path"] for b in bindings) == sorted(a.path for a in ASSETS)  # one per path
    assert {b.config["path"]: b.id for b in bindings if b.config["path"] != "iii-directory/page.js"} == {
        p: i for p, i in before.items() if p != "iii-directory/page.js"}
    console_fetch = await wire.engine.invoke(FUNCTION_ID, {"path": "iii-directory/page.js"})
    assert "PAGE_VERSION = 'x" in console_fetch["content"]
