"""Where an agent profile file came from: `source` (surfaces.md §8.2, kits.md §4).

* bundled → `{kind: "builtin"}`; a file of the user-global root → `{kind: "global"}`;
* a project file `agents/<id>.md` with a non-skipped entry in `kits.lock` (the first kit by id)
  → `{kind: "kit", kit, version: <locked version>, modified: sha256(file) ≠ locked sha}`;
* else a completion marker `<skills_folder>/<worker>/.iii-skill-complete` whose `agents` map
  lists the id (the first worker directory by name) → `{kind: "worker", worker, version,
  modified}`;
* else `{kind: "local"}`.

`kits.lock` is read leniently here (missing, unreadable, unparsable or unsupported ⇒ no kits);
this small reader can give way to the kits subsystem's lenient `read_lock` once that lands.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from .agents import Profile

COMPLETION_MARKER = ".iii-skill-complete"


@dataclass(frozen=True)
class Source:
    kind: str
    kit: str | None = None
    worker: str | None = None
    version: str | None = None
    modified: bool | None = None


@dataclass(frozen=True)
class Owner:
    """Who wrote a project profile: a kit (`kit`) or a worker's skills bundle (`worker`)."""

    kit: str | None
    worker: str | None
    version: str | None
    sha256: str | None


def kit_owned_agents(project_root: Path) -> dict[str, Owner]:
    """Agent id → the first kit (sorted by id) with a non-skipped `agents/<id>.md` entry in
    `<project root>/kits.lock`. Lenient: a missing, unreadable, unparsable or unsupported lock
    owns nothing. Scalars are read as strings so versions such as `1.10` survive."""
    try:
        text = (project_root / "kits.lock").read_text(encoding="utf-8")
        data = yaml.load(text, Loader=yaml.BaseLoader)  # noqa: S506 - strings only, no tags
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    if not isinstance(data, dict) or str(data.get("version", "")).strip() != "1":
        return {}
    kits = data.get("kits")
    owners: dict[str, Owner] = {}
    if not isinstance(kits, dict):
        return owners
    for kit in sorted(k for k in kits if isinstance(k, str)):
        entry = kits[kit]
        if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict):
            continue
        version = entry.get("version") if isinstance(entry.get("version"), str) else None
        for install_path, locked in entry["files"].items():
            if not (isinstance(install_path, str) and install_path.startswith("agents/")):
                continue
            stem = install_path[len("agents/"):]
            if "/" in stem or not stem.endswith(".md"):
                continue
            locked = locked if isinstance(locked, dict) else {}
            if str(locked.get("skipped", "false")).strip().lower() in ("true", "yes", "on"):
                continue
            sha = locked.get("sha256") if isinstance(locked.get("sha256"), str) else None
            owners.setdefault(stem[: -len(".md")], Owner(kit, None, version, sha))
    return owners


def worker_owned_agents(skills_root: Path) -> dict[str, Owner]:
    """Agent id → the first completion marker (by worker directory name) whose `agents` map
    lists it (surfaces.md §9.5). Unreadable markers are ignored."""
    owners: dict[str, Owner] = {}
    try:
        dirs = sorted(entry.name for entry in os.scandir(skills_root) if entry.is_dir())
    except OSError:
        return owners
    for name in dirs:
        try:
            marker = json.loads((skills_root / name / COMPLETION_MARKER).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if not isinstance(marker, dict) or not isinstance(marker.get("agents"), dict):
            continue
        worker = marker.get("worker") if isinstance(marker.get("worker"), str) else name
        version = marker.get("version") if isinstance(marker.get("version"), str) else None
        for agent_id, sha in marker["agents"].items():
            if isinstance(agent_id, str):
                owners.setdefault(agent_id, Owner(None, worker, version, sha if isinstance(sha, str) else None))
    return owners


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SourceLookup:
    """Reads `kits.lock` and the completion markers once per call and attributes profiles."""

    def __init__(self, project_root: Path, skills_root: Path) -> None:
        self._kits = kit_owned_agents(project_root)
        self._workers = worker_owned_agents(skills_root)

    def source(self, profile: Profile) -> Source:
        if profile.builtin:
            return Source("builtin")
        if profile.is_global:
            return Source("global")
        owner = self._kits.get(profile.id)
        if owner is not None:
            return Source("kit", kit=owner.kit, version=owner.version, modified=self._modified(profile, owner))
        owner = self._workers.get(profile.id)
        if owner is not None:
            return Source("worker", worker=owner.worker, version=owner.version,
                          modified=self._modified(profile, owner))
        return Source("local")

    @staticmethod
    def _modified(profile: Profile, owner: Owner) -> bool:
        """The file differs from what its kit or worker wrote (sha256 of the bytes)."""
        return owner.sha256 is None or sha256_hex(profile.raw) != owner.sha256.strip().lower()
