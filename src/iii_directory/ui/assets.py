"""The console asset table and its rules (docs/rules/console.md §1.3, §1.9, §3.7).

One table — three rows, one per asset — is the single source for the content function, the
trigger bindings, the hot-reload watcher and the tests. The path rules are the console's: a path
the console would refuse is refused here at startup, with the console's own text, so a broken
table is a programming error caught by a unit test rather than a binding rejected in the field.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .. import WORKER_NAME

MAX_PATH_BYTES = 512
"""The console's limit on an asset path (§1.3)."""

CONTENT_TYPES: Mapping[str, str] = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}

TRIGGER_EXTENSIONS: Mapping[str, str] = {
    "console:script": ".js",
    "console:module": ".js",
    "console:style": ".css",
}
"""The extension each asset trigger type requires."""

TRIGGER_KINDS: Mapping[str, str] = {
    "console:script": "script",
    "console:module": "module",
    "console:style": "style",
}

_SEGMENT_START = re.compile(r"[a-z0-9]")
_SEGMENT_CHARS = re.compile(r"[a-z0-9._-]*")


@dataclass(frozen=True)
class UiAsset:
    """One asset: its path (the `{path}` binding config), the trigger type that carries it."""

    path: str
    trigger_type: str

    @property
    def kind(self) -> str:
        """`script`, `style` or `module` — the name the console uses in pushes and manifests."""
        return TRIGGER_KINDS[self.trigger_type]

    @property
    def file_name(self) -> str:
        """The path's last segment: the file read from the packaged or the watched folder."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def content_type(self) -> str:
        """`text/javascript; charset=utf-8` for `.js`, `text/css; charset=utf-8` for `.css`."""
        return CONTENT_TYPES[Path(self.path).suffix]

    @property
    def binding_key(self) -> str:
        """The key of the boot binding (the watcher's later bindings add a generation)."""
        return f"ui-asset:{self.path}"


PAGE_MODULES: tuple[str, ...] = (
    "rules.js", "frontmatter.js", "diff.js", "markdown.js", "plans.js", "entries.js",
    "ui.js", "list.js", "browser.js", "kits.js", "cards.js",
)
"""The page's own modules, imported by `page.js`'s setup through `host.importModule` (the order of
its `PAGE_MODULES`; docs/rules/console.md §3.3)."""

ASSETS: tuple[UiAsset, ...] = (
    UiAsset("iii-directory/page.js", "console:script"),
    UiAsset("iii-directory/styles.css", "console:style"),
    UiAsset("iii-directory/module.js", "console:module"),
    *(UiAsset(f"iii-directory/{name}", "console:module") for name in PAGE_MODULES),
)


def path_problem(path: str, trigger_type: str) -> str | None:
    """The console's rejection text for `path` bound under `trigger_type`, or None when valid.

    Rules in the console's order: non-empty; at most 512 bytes; no backslash; no leading slash;
    no empty segment; no dot-only segment; each segment starts with `[a-z0-9]` and uses only
    `[a-z0-9._-]`; the extension matches the type (`.js` script / module, `.css` style).
    """
    if not path:
        return "path must not be empty"
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        return f"path is over {MAX_PATH_BYTES} characters"
    if "\\" in path:
        return f"path '{path}' must not contain backslashes"
    if path.startswith("/"):
        return f"path '{path}' must not start with a slash"
    segments = path.split("/")
    if any(segment == "" for segment in segments):
        return f"path '{path}' has an empty segment"
    if any(set(segment) == {"."} for segment in segments):
        return f"path '{path}' has a dot-only segment"
    for segment in segments:
        if not _SEGMENT_START.match(segment):
            return f"path segment '{segment}' must start with a lowercase letter or digit"
        if not _SEGMENT_CHARS.fullmatch(segment):
            return f"path segment '{segment}' has characters outside [a-z0-9._-]"
    extension = TRIGGER_EXTENSIONS.get(trigger_type)
    if extension is None:
        return f"trigger type '{trigger_type}' is not a console asset type"
    if not path.endswith(extension):
        return f"path '{path}' must end in '{extension}' for a {TRIGGER_KINDS[trigger_type]} asset"
    return None


def validate_table(assets: Iterable[UiAsset], worker: str = WORKER_NAME) -> None:
    """Raise ValueError when an entry breaks a console path rule, two entries share a path, or
    a path does not start with `<worker>/` (the worker refuses to start; §1.3)."""
    seen: set[str] = set()
    for asset in assets:
        problem = path_problem(asset.path, asset.trigger_type)
        if problem is not None:
            raise ValueError(problem)
        if asset.path in seen:
            raise ValueError(f"duplicate ui asset path '{asset.path}'")
        seen.add(asset.path)
        if not asset.path.startswith(f"{worker}/"):
            raise ValueError(f"ui asset path '{asset.path}' must start with '{worker}/'")


def unknown_asset_message(path: str, assets: Iterable[UiAsset] = ASSETS) -> str:
    """`UNKNOWN_UI_ASSET: '<path>' is not one of this worker's ui assets (expected one of: …)`."""
    known = ", ".join(sorted(asset.path for asset in assets))
    return f"UNKNOWN_UI_ASSET: '{path}' is not one of this worker's ui assets (expected one of: {known})"


def watch_env_name(worker: str = WORKER_NAME) -> str:
    """`III_` + the worker name upper-cased, every non-alphanumeric character as `_`, + `_UI_WATCH`."""
    return "III_" + re.sub(r"[^A-Za-z0-9]", "_", worker).upper() + "_UI_WATCH"


WATCH_ENV = watch_env_name()


def packaged_dir() -> Path:
    """The package's own asset folder, `iii_directory/ui/dist`."""
    return Path(str(resources.files("iii_directory.ui").joinpath("dist")))


def watch_dir(value: str | None, cwd: Path | None = None) -> Path | None:
    """The folder `III_III_DIRECTORY_UI_WATCH` asks to watch, or None when watching is off.

    unset, empty, `0`, `false` (any case) → off; `1`, `true` → the packaged `ui/dist`; a path
    ending in `.js` → its parent directory; anything else → that directory, relative paths
    resolved against `cwd` (the process working directory by default).
    """
    text = (value or "").strip()
    if text.lower() in ("", "0", "false"):
        return None
    if text.lower() in ("1", "true"):
        return packaged_dir()
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    if path.name.endswith(".js"):
        return path.parent
    return path


def watch_dir_from_env(environ: Mapping[str, str] | None = None) -> Path | None:
    return watch_dir((os.environ if environ is None else environ).get(WATCH_ENV))


def read_text(folder: Path, asset: UiAsset) -> str | None:
    """The asset's file in `folder` as UTF-8 text; None when missing, unreadable or blank (an
    asset is never blank, but a file being rewritten is empty for a moment: skipped, not served)."""
    try:
        text = (folder / asset.file_name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if text.strip() else None


def read_packaged(asset: UiAsset) -> str:
    """The packaged text of an asset (raises when the package data is missing)."""
    return resources.files("iii_directory.ui").joinpath("dist", asset.file_name).read_text(encoding="utf-8")


validate_table(ASSETS)
