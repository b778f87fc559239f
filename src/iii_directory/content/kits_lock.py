"""`kits.lock` as data, and its two readers (docs/rules/kits.md §3).

* `read_lock(project_root)` — **lenient**: never raises; a missing, empty, unreadable or
  unparsable file reads as an empty lock. For views that only need to know which kits exist
  (skill visibility, agent `source`, skill downloads skipping kit-owned profiles).
* `load_lock(project_root)` — **strict**: the kit flows use it and propagate its errors
  (`<path>: kits.lock version 2 is not supported (expected 1)`, `<path>: invalid kits.lock: …`).

Scalars are read as strings (YAML's implicit typing is not applied), so `1.3`, dates and `true`
survive a round trip exactly. The file lives in the project root next to the skills, and the
content views read it, so it sits in `content`; the kits subsystem writes it (`kits.lock`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..config_base import project_root as default_project_root
from ..errors import DirectoryError

LOCK_FILE = "kits.lock"
COMPOSE_FILE = "worker-compose.yaml"
"""The compose file's name in the project root when `III_COMPOSE_FILE` is not set."""


def compose_file_path() -> Path:
    """`III_COMPOSE_FILE` (absolute), else `COMPOSE_FILE` in the project root."""
    explicit = os.environ.get("III_COMPOSE_FILE", "").strip()
    if explicit:
        return Path(os.path.abspath(explicit))
    return default_project_root() / COMPOSE_FILE


def kit_root() -> Path:
    """Project root for kit state (where `kits.lock` lives): the compose file's directory.
    Here rather than in `kits.compose`, so that reading the lock (the scheduled update check
    of a worker whose lock lists no kit) imports none of the kit flows."""
    return compose_file_path().parent

_STRING_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
"""Every scalar is read as a string (libyaml when available)."""
_TRUE = frozenset({"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})


@dataclass
class LockedFile:
    """A file a kit installed: `sha256` is the kit's content at the locked version (the base
    of the next three-way merge); `skipped` means the kit does not write this path."""

    sha256: str
    skipped: bool = False


@dataclass
class LockedKit:
    requested: str
    version: str
    installed_at: str
    workers: dict[str, str] = field(default_factory=dict)
    files: dict[str, LockedFile] = field(default_factory=dict)
    ignored_versions: list[str] = field(default_factory=list)


@dataclass
class Lock:
    kits: dict[str, LockedKit] = field(default_factory=dict)

    def get(self, kit: str) -> LockedKit | None:
        return self.kits.get(kit)

    def owner_of(self, install_path: str) -> str | None:
        """The first kit (by id) holding a non-skipped entry for the path."""
        for kit in sorted(self.kits):
            entry = self.kits[kit].files.get(install_path)
            if entry is not None and not entry.skipped:
                return kit
        return None

    def owned_agents(self) -> dict[str, str]:
        """Agent id → kit, for non-skipped `agents/<id>.md` entries (first kit by id wins)."""
        owned: dict[str, str] = {}
        for kit in sorted(self.kits):
            for path, entry in sorted(self.kits[kit].files.items()):
                if entry.skipped or not path.startswith("agents/") or not path.endswith(".md"):
                    continue
                owned.setdefault(path[len("agents/"):-3], kit)
        return owned

    def namespaces(self) -> list[str]:
        """Skill namespaces of installed kits (`<handle>/<kit>`), sorted."""
        return sorted(self.kits)

    def declaring(self, worker: str, *, excluding: str | None = None) -> list[str]:
        """Installed kits whose `workers` map names `worker` (sorted)."""
        return sorted(
            kit for kit, entry in self.kits.items() if kit != excluding and worker in entry.workers
        )


def lock_path(project_root: Path | None = None) -> Path:
    return (project_root or default_project_root()) / LOCK_FILE


# ---------------------------------------------------------------------------------------------
# Reading


class LockError(DirectoryError):
    """An unreadable or unsupported `kits.lock`; the message starts with the file path."""

    def __init__(self, message: str) -> None:
        super().__init__("invocation_failed", message)


def _text(value: Any, default: str = "") -> str:
    if value is None:
        return default
    if isinstance(value, str):
        return value
    raise ValueError(f"expected a string, found {type(value).__name__}")


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a mapping")
    return value


def _parse_kit(raw: Any, kit: str) -> LockedKit:
    body = _mapping(raw, f"kits.{kit}")
    files: dict[str, LockedFile] = {}
    for path, entry in _mapping(body.get("files"), f"kits.{kit}.files").items():
        if isinstance(entry, str):
            files[path] = LockedFile(sha256=entry)
            continue
        data = _mapping(entry, f"kits.{kit}.files.{path}")
        files[path] = LockedFile(
            sha256=_text(data.get("sha256")),
            skipped=_text(data.get("skipped"), "false") in _TRUE,
        )
    workers = {
        name: _text(rng) for name, rng in _mapping(body.get("workers"), f"kits.{kit}.workers").items()
    }
    ignored_raw = body.get("ignored_versions")
    if ignored_raw is None or ignored_raw == "":
        ignored: list[str] = []
    elif isinstance(ignored_raw, list):
        ignored = [_text(v) for v in ignored_raw]
    else:
        raise ValueError(f"kits.{kit}.ignored_versions must be a list")
    return LockedKit(
        requested=_text(body.get("requested"), "latest") or "latest",
        version=_text(body.get("version")),
        installed_at=_text(body.get("installed_at")),
        workers=workers,
        files=files,
        ignored_versions=ignored,
    )


def parse_lock(text: str) -> Lock:
    """Parse lock text; raise ValueError with the reason (no path prefix)."""
    if not text.strip():
        return Lock()
    try:
        data = yaml.load(text, Loader=_STRING_LOADER)  # noqa: S506 - builds only str/list/dict
    except yaml.YAMLError as exc:
        raise ValueError(f"invalid kits.lock: {exc}") from None
    if data is None:
        return Lock()
    if not isinstance(data, dict):
        raise ValueError("invalid kits.lock: the document must be a mapping")
    version = data.get("version")
    if version != "1":
        shown = version if isinstance(version, str) else "(missing)"
        raise ValueError(f"kits.lock version {shown} is not supported (expected 1)")
    try:
        kits = {kit: _parse_kit(raw, kit) for kit, raw in _mapping(data.get("kits"), "kits").items()}
    except ValueError as exc:
        raise ValueError(f"invalid kits.lock: {exc}") from None
    return Lock(kits=kits)


def load_lock(project_root: Path | None = None) -> Lock:
    """Strict reader: a missing file is an empty lock; anything else unreadable raises
    `LockError("<path>: <reason>")`."""
    path = lock_path(project_root)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Lock()
    except (OSError, UnicodeDecodeError) as exc:
        raise LockError(f"{path}: read failed: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return parse_lock(text)
    except ValueError as exc:
        raise LockError(f"{path}: {exc}") from None


def read_lock(project_root: Path | None = None) -> Lock:
    """Lenient reader: never raises; an unreadable lock counts as no kits."""
    try:
        return load_lock(project_root)
    except LockError:
        return Lock()
