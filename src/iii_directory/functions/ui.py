"""`iii-directory::ui-content` and the console asset bindings (docs/rules/console.md §1, §3.7).

* The content function answers `{path}` with `{content, content_type}` from memory: the texts
  are read once when the surface starts (never on the request path, the console allows 3 s).
* Three connection-owned bindings — `console:script`, `console:style`, `console:module` — each
  with config exactly `{"path": <asset path>}` and the content function as target.
* Hot reload (`III_III_DIRECTORY_UI_WATCH`, §1.9): one asyncio task polls the watched folder
  every second; when a file's text differs from the last text seen it swaps the served text,
  binds a fresh binding (new id) for the same path and type, and only then unbinds the old one,
  so open tabs never see a `delete` and the replay list keeps one binding per path. Missing or
  unreadable files are skipped silently.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from ..context import Context
from ..runtime import Runtime
from ..errors import DirectoryError
from ..models import Request, Response
from ..table import BindingSpec, FunctionSpec, Surface
from ..ui.assets import ASSETS, UiAsset, read_packaged, read_text, unknown_asset_message, watch_dir_from_env

log = logging.getLogger("iii_directory.ui")

FUNCTION_ID = "iii-directory::ui-content"
DESCRIPTION = (
    "Serve the iii-directory worker's injected console UI assets (content function for its "
    "console:script / console:style / console:module triggers)."
)
POLL_INTERVAL_S = 1.0


class UiContentInput(Request):
    path: str = Field(description="The asset path from the trigger config (e.g. `state/page.js`).")


class UiContentOutput(Response):
    content: str = Field(description="The asset source, verbatim.")
    content_type: str = Field(description="MIME type the console should serve the asset with.")


@dataclass
class _Served:
    """What one path serves now and which binding currently carries it."""

    asset: UiAsset
    text: str
    binding_key: str
    last_seen: str


@dataclass
class UiAssets:
    """The served texts, the watched folder and the watcher task (one per `Directory`)."""

    directory: Runtime
    watch: Path | None = None
    served: dict[str, _Served] = field(default_factory=dict)
    generation: int = 0
    poll_interval_s: float = POLL_INTERVAL_S
    _task: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        self.watch = watch_dir_from_env() if self.watch is None else self.watch
        for asset in ASSETS:
            watched = read_text(self.watch, asset) if self.watch is not None else None
            text = watched if watched is not None else read_packaged(asset)
            self.served[asset.path] = _Served(asset, text, asset.binding_key, text)

    def content(self, path: str) -> UiContentOutput:
        entry = self.served.get(path)
        if entry is None:
            raise DirectoryError.plain(unknown_asset_message(path))
        return UiContentOutput(content=entry.text, content_type=entry.asset.content_type)

    def binding_keys(self) -> dict[str, str]:
        """Asset path → the key of the binding that carries it now."""
        return {path: entry.binding_key for path, entry in self.served.items()}

    async def poll_once(self) -> list[str]:
        """Compare every watched file with the last text seen; swap and rebind the changed ones.
        Returns the paths that changed."""
        if self.watch is None:
            return []
        changed: list[str] = []
        for path, entry in self.served.items():
            text = read_text(self.watch, entry.asset)
            if text is None or text == entry.last_seen:
                continue
            entry.text = entry.last_seen = text
            self.generation += 1
            old_key, new_key = entry.binding_key, f"{entry.asset.binding_key}#{self.generation}"
            engine = self.directory.engine
            config = {"path": path}
            await engine.set_binding(new_key, entry.asset.trigger_type, FUNCTION_ID, config, True)
            await engine.set_binding(old_key, entry.asset.trigger_type, FUNCTION_ID, config, False)
            entry.binding_key = new_key
            changed.append(path)
            log.info("ui asset %s reloaded from %s", path, self.watch)
        return changed

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.poll_interval_s)
            try:
                await self.poll_once()
            except Exception:  # noqa: BLE001 - the watcher must outlive one bad poll
                log.exception("ui asset watcher poll failed")

    def start(self) -> None:
        if self.watch is not None and (self._task is None or self._task.done()):
            log.info("watching %s for ui asset changes", self.watch)
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass


def ui_assets(directory: Runtime) -> UiAssets:
    return directory.service(UiAssets)


async def ui_content(ctx: Context, req: UiContentInput) -> UiContentOutput:
    return ui_assets(ctx.directory).content(req.path)


async def start_ui(directory: Runtime) -> None:
    """Read the texts (already done if the console fetched first) and start the watcher."""
    ui_assets(directory).start()


async def stop_ui(directory: Runtime) -> None:
    await ui_assets(directory).stop()


def _binding(asset: UiAsset) -> BindingSpec:
    return BindingSpec(
        key=asset.binding_key,
        trigger_type=asset.trigger_type,
        function_id=FUNCTION_ID,
        config=lambda _settings, path=asset.path: {"path": path},
    )


SURFACE = Surface(
    functions=(
        FunctionSpec(
            id=FUNCTION_ID,
            description=DESCRIPTION,
            request=UiContentInput,
            response=UiContentOutput,
            handler=ui_content,
            metadata={"internal": True},
        ),
    ),
    bindings=tuple(_binding(asset) for asset in ASSETS),
    on_start=(start_ui,),
    on_stop=(stop_ui,),
)
