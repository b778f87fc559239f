"""Where a project agent profile came from (docs/rules/kits.md §4, docs/rules/surfaces.md §8.2).

For a file `<agents_folder>/<id>.md`: a non-skipped `kits.lock` entry `agents/<id>.md` (first
kit by id) → `kit` (with the locked version; `modified` = the file's sha differs from the
locked sha, a missing file counting as modified); else a worker completion marker
(`<skills_folder>/<worker>/.iii-skill-complete`) whose `agents` map lists the id → `worker`
(marker version; `modified` against the recorded sha); else `local`. A kit entry wins over a
marker listing the same id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import Settings
from ..content.markers import CompletionMarker, all_markers
from .lock import Lock
from .paths import local_sha


@dataclass(frozen=True)
class Origin:
    kind: str  # kit | worker | local
    kit: str | None = None
    worker: str | None = None
    version: str | None = None
    modified: bool | None = None

    def as_source(self) -> dict[str, Any]:
        """The `source` object of agents list / get (absent keys omitted)."""
        out: dict[str, Any] = {"kind": self.kind}
        for key in ("kit", "worker", "version", "modified"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


def agent_origin(
    settings: Settings,
    lock: Lock,
    agent_id: str,
    *,
    sha: str | None | bool = False,
    markers: list[CompletionMarker] | None = None,
) -> Origin:
    """Classify the project profile `agents/<id>.md`. `sha` = the file's current sha256
    (None when missing); by default it is read from disk."""
    current = local_sha(settings, f"agents/{agent_id}.md") if sha is False else sha
    path = f"agents/{agent_id}.md"
    kit = lock.owner_of(path)
    if kit is not None:
        entry = lock.kits[kit]
        return Origin("kit", kit=kit, version=entry.version, modified=current != entry.files[path].sha256)
    for marker in markers if markers is not None else all_markers(settings.path("skills_folder")):
        recorded = marker.agents.get(agent_id)
        if recorded is not None:
            return Origin("worker", worker=marker.worker, version=marker.version, modified=current != recorded)
    return Origin("local")
