"""Where an agent profile file came from: `source` (docs/rules/surfaces.md §8.2, docs/rules/kits.md §4).

* bundled → `{kind: "builtin"}`; a file of the user-global root → `{kind: "global"}`;
* a project file `agents/<id>.md` with a non-skipped entry in `kits.lock` (the first kit by id)
  → `{kind: "kit", kit, version: <locked version>, modified: sha256(file) ≠ locked sha}`;
* else a completion marker `<skills_folder>/<worker>/.iii-skill-complete` whose `agents` map
  lists the id (the first worker directory by name) → `{kind: "worker", worker, version,
  modified}`;
* else `{kind: "local"}`.

`kits.lock` is read with the kits subsystem's lenient reader (missing, unreadable, unparsable or
unsupported ⇒ no kits); the markers with `content.markers.all_markers` (unreadable ⇒ ignored).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .kits_lock import read_lock
from .markers import all_markers
from .agents import Profile
from .files import sha256_hex


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
    `<project root>/kits.lock`, with the kit's locked version and the file's locked sha256."""
    lock = read_lock(project_root)
    owners: dict[str, Owner] = {}
    for agent_id, kit in lock.owned_agents().items():
        entry = lock.kits[kit]
        sha = entry.files[f"agents/{agent_id}.md"].sha256
        owners[agent_id] = Owner(kit, None, entry.version or None, sha or None)
    return owners


def worker_owned_agents(skills_root: Path) -> dict[str, Owner]:
    """Agent id → the first completion marker (by worker directory name) whose `agents` map
    lists it (docs/rules/surfaces.md §9.5)."""
    owners: dict[str, Owner] = {}
    for marker in all_markers(skills_root):
        for agent_id, sha in marker.agents.items():
            owners.setdefault(agent_id, Owner(None, marker.worker, marker.version, sha))
    return owners


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
