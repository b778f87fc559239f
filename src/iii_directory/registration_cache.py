"""The registration frames of the function table, kept on disk between starts.

Generating the JSON Schemas of every request and response model was ~0.6 s of `serve`'s start
on a 2-core host, and pydantic builds each model's validator only for it (the models are
`defer_build`). The frames depend on nothing but the code, so they are stored once per code
state and read back by later starts:

* the file is `registration-<fingerprint>.json` in the vector cache folder (`default_cache_dir`:
  `$III_DIRECTORY_CACHE_DIR`, else `$XDG_CACHE_HOME/iii-directory`, else
  `~/.cache/iii-directory`);
* the fingerprint is the SHA-256 of the Python and pydantic versions and of the relative path,
  size and mtime (ns) of every `.py` file of the `iii_directory` package, so any change of the
  code (an upgrade, an edit of a source tree) reads as a different, empty cache;
* a stored set is used only when it holds a frame for every function of the table, else every
  frame is generated and the set is written again (atomically: temporary file, then rename);
* an unreadable or unwritable cache only means generating the frames, as without it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
DISABLE_ENV = "III_DIRECTORY_REGISTRATION_CACHE"
"""`0` turns the cache off (every start generates the frames)."""


def fingerprint(package_dir: Path = PACKAGE_DIR, extra: Iterable[str] = ()) -> str:
    """Hex SHA-256 over the interpreter and pydantic versions, `extra`, and (path, size,
    mtime_ns) of every `.py` file under `package_dir`, in sorted order."""
    import pydantic

    digest = hashlib.sha256()
    for part in (sys.version, pydantic.VERSION, *extra):
        digest.update(part.encode("utf-8") + b"\0")
    files: list[tuple[str, int, int]] = []
    for folder, dirs, names in os.walk(package_dir):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                files.append((os.path.relpath(path, package_dir), st.st_size, st.st_mtime_ns))
    for rel, size, mtime in sorted(files):
        digest.update(f"{rel}\0{size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


class RegistrationCache:
    """Frames by function id for one code state, in `directory` (None: no cache)."""

    def __init__(self, directory: Path | None, key: str) -> None:
        self.directory = directory
        self.key = key

    @property
    def path(self) -> Path | None:
        if self.directory is None:
            return None
        return self.directory / f"registration-{self.key[:32]}.json"

    def load(self) -> dict[str, dict[str, Any]] | None:
        """The stored frames, or None when there are none for this code state."""
        path = self.path
        if path is None:
            return None
        try:
            with open(path, encoding="utf-8") as handle:
                stored = json.load(handle)
        except (OSError, ValueError):
            return None
        if not isinstance(stored, dict) or stored.get("key") != self.key:
            return None
        frames = stored.get("functions")
        return frames if isinstance(frames, dict) else None

    def save(self, frames: Mapping[str, dict[str, Any]]) -> None:
        """Write the frames atomically; failures are logged at debug level only."""
        path = self.path
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".registration-", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump({"key": self.key, "functions": frames}, handle, separators=(",", ":"))
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError as exc:
            log.debug("registration cache not written (%s): %s", path, exc)


def default_cache() -> RegistrationCache:
    """The cache for this process's code, in the vector cache folder (off with `DISABLE_ENV=0`)."""
    if os.environ.get(DISABLE_ENV, "").strip() == "0":
        return RegistrationCache(None, "")
    from .search.vector_cache import default_cache_dir

    try:
        key = fingerprint()
    except Exception as exc:  # noqa: BLE001 - no fingerprint only means no cache
        log.debug("registration cache off: %s", exc)
        return RegistrationCache(None, "")
    return RegistrationCache(default_cache_dir(), key)


def cached_frames(ids: Iterable[str], generate: Callable[[str], dict[str, Any]],
                  cache: RegistrationCache) -> dict[str, dict[str, Any]]:
    """The frame of every id in `ids`: all from `cache` when it holds each of them, else all
    from `generate(id)` (then stored)."""
    wanted = list(ids)
    stored = cache.load()
    if stored is not None and all(isinstance(stored.get(i), dict) for i in wanted):
        return {i: stored[i] for i in wanted}
    frames = {i: generate(i) for i in wanted}
    cache.save(frames)
    return frames
