"""`iii-directory::ui-content` through `Directory.invoke`, and the hot-reload watcher against a
recording engine port (console-ui.md §1.4, §1.9, §5.2 items 2 and 5)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.functions.ui import DESCRIPTION, FUNCTION_ID, SURFACE, UiAssets, ui_assets
from iii_directory.port import StandaloneEngine
from iii_directory.ui.assets import ASSETS, PAGE_MODULES, WATCH_ENV, packaged_dir, read_packaged


class RecordingEngine(StandaloneEngine):
    """A standalone port that also keeps the order of every bind / unbind."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, str, str, dict[str, Any]]] = []

    async def set_binding(self, key: str, trigger_type: str, function_id: str,
                          config: Mapping[str, Any], active: bool) -> None:
        self.log.append(("bind" if active else "unbind", key, trigger_type, dict(config)))
        await super().set_binding(key, trigger_type, function_id, config, active)


@pytest.fixture
def watched(tmp_path: Path) -> Path:
    folder = tmp_path / "ui-copy"
    shutil.copytree(packaged_dir(), folder)
    return folder


@pytest.mark.parametrize("asset", ASSETS, ids=lambda a: a.path)
async def test_serves_the_packaged_text_verbatim(directory: Directory, asset: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WATCH_ENV, raising=False)
    result = await directory.invoke(FUNCTION_ID, {"path": asset.path})
    assert result == {"content": read_packaged(asset), "content_type": asset.content_type}


async def test_unknown_path_error(directory: Directory) -> None:
    with pytest.raises(DirectoryError) as info:
        await directory.invoke(FUNCTION_ID, {"path": "nope.js"})
    assert info.value.code == "invocation_failed"
    assert info.value.message == (
        "UNKNOWN_UI_ASSET: 'nope.js' is not one of this worker's ui assets (expected one of: "
        + ", ".join(sorted(asset.path for asset in ASSETS)) + ")"
    )
    assert "iii-directory/page.js, iii-directory/plans.js" in info.value.message


async def test_missing_path_is_a_request_error(directory: Directory) -> None:
    with pytest.raises(DirectoryError, match='field "path"'):
        await directory.invoke(FUNCTION_ID, {})


def test_table_entry() -> None:
    (spec,) = SURFACE.functions
    assert spec.metadata == {"internal": True}
    assert spec.description == DESCRIPTION
    assert spec.registration()["response_format"]["required"] == ["content", "content_type"]
    assert [(b.trigger_type, b.function_id, b.config(None)) for b in SURFACE.bindings] == [  # type: ignore[arg-type]
        ("console:script", FUNCTION_ID, {"path": "iii-directory/page.js"}),
        ("console:style", FUNCTION_ID, {"path": "iii-directory/styles.css"}),
        ("console:module", FUNCTION_ID, {"path": "iii-directory/module.js"}),
        *(("console:module", FUNCTION_ID, {"path": f"iii-directory/{name}"}) for name in PAGE_MODULES),
    ]


async def test_startup_serves_the_watched_copy_when_readable(settings: Any, watched: Path) -> None:
    (watched / "page.js").write_text("export default function setup() {}\n// watched\n")
    (watched / "styles.css").unlink()
    directory = Directory(settings=settings, engine=RecordingEngine())
    assets = UiAssets(directory, watch=watched)
    assert assets.content("iii-directory/page.js").content.endswith("// watched\n")
    assert assets.content("iii-directory/styles.css").content == read_packaged(ASSETS[1])


async def test_watch_env_picks_the_folder(settings: Any, watched: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WATCH_ENV, str(watched / "page.js"))
    directory = Directory(settings=settings, engine=RecordingEngine())
    assert ui_assets(directory).watch == watched


async def test_poll_swaps_text_and_binds_new_before_unbinding_old(settings: Any, watched: Path) -> None:
    engine = RecordingEngine()
    directory = Directory(settings=settings, engine=engine)
    assets = UiAssets(directory, watch=watched)
    assert await assets.poll_once() == []
    assert engine.log == []

    (watched / "page.js").write_text("export default function setup() {}\n// v2\n")
    assert await assets.poll_once() == ["iii-directory/page.js"]
    assert assets.content("iii-directory/page.js").content.endswith("// v2\n")
    config = {"path": "iii-directory/page.js"}
    assert engine.log == [
        ("bind", "ui-asset:iii-directory/page.js#1", "console:script", config),
        ("unbind", "ui-asset:iii-directory/page.js", "console:script", config),
    ]
    # unchanged text: three polls add nothing
    for _ in range(3):
        assert await assets.poll_once() == []
    assert len(engine.log) == 2

    (watched / "page.js").write_text("export default function setup() {}\n// v3\n")
    await assets.poll_once()
    assert engine.log[2:] == [
        ("bind", "ui-asset:iii-directory/page.js#2", "console:script", config),
        ("unbind", "ui-asset:iii-directory/page.js#1", "console:script", config),
    ]
    assert assets.binding_keys()["iii-directory/page.js"] == "ui-asset:iii-directory/page.js#2"


async def test_missing_or_unreadable_files_change_nothing(settings: Any, watched: Path) -> None:
    engine = RecordingEngine()
    directory = Directory(settings=settings, engine=engine)
    assets = UiAssets(directory, watch=watched)
    before = assets.content("iii-directory/styles.css").content
    (watched / "styles.css").unlink()
    (watched / "module.js").write_bytes(b"\xff\xfe not utf-8 \xff")
    assert await assets.poll_once() == []
    assert engine.log == []
    assert assets.content("iii-directory/styles.css").content == before


async def test_watcher_task_polls_and_stops(settings: Any, watched: Path) -> None:
    import anyio

    engine = RecordingEngine()
    directory = Directory(settings=settings, engine=engine)
    assets = UiAssets(directory, watch=watched, poll_interval_s=0.05)
    assets.start()
    (watched / "styles.css").write_text('[data-iii-ui="iii-directory"] .x { color: red }\n')
    with anyio.fail_after(3):
        while not engine.log:
            await anyio.sleep(0.02)
    await assets.stop()
    assert engine.log[0][:3] == ("bind", "ui-asset:iii-directory/styles.css#1", "console:style")
