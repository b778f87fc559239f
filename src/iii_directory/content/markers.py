"""Registry-download completion markers (docs/rules/surfaces.md §9.5).

`<skills_folder>/<worker>/.iii-skill-complete` is pretty-printed JSON written atomically after
every successful registry download (explicit or automatic):

    {"worker": "...", "source": "registry", "tag_or_version": "latest", "schema": 2,
     "version": "1.2.3", "agents": {"<id>": "<sha256 hex>"}}

`version` (the registry-reported version) and `agents` (profiles the download wrote) are omitted
when unknown or empty. Schema-1 markers (no `version`, no `agents`) still parse. A namespace
counts as present for the boot reconcile only when its marker exists. Agent-profile `source`
attribution (docs/rules/surfaces.md §8.2) reads `agents` and `version` back through `all_markers`.
The markers live in the skills roots, so this module sits in `content`, below the downloads
(`sources`) that write them and the agent and kit views that read them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import SelfWrites, atomic_write

MARKER_NAME = ".iii-skill-complete"
MARKER_SCHEMA = 2


@dataclass(frozen=True)
class CompletionMarker:
    worker: str
    tag_or_version: str
    version: str | None = None
    agents: dict[str, str] = field(default_factory=dict)
    schema: int = MARKER_SCHEMA
    source: str = "registry"

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "worker": self.worker,
            "source": self.source,
            "tag_or_version": self.tag_or_version,
            "schema": self.schema,
        }
        if self.version is not None:
            data["version"] = self.version
        if self.agents:
            data["agents"] = dict(sorted(self.agents.items()))
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def marker_path(skills_root: Path, worker: str) -> Path:
    return skills_root / worker / MARKER_NAME


def parse_marker(text: str) -> CompletionMarker | None:
    """A marker from its JSON text (schema 1 or 2); None when it is not a marker."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    worker = data.get("worker")
    tag = data.get("tag_or_version")
    schema = data.get("schema", 1)
    if not isinstance(worker, str) or not isinstance(tag, str) or not isinstance(schema, int):
        return None
    version = data.get("version")
    raw_agents = data.get("agents")
    agents = {
        k: v for k, v in raw_agents.items() if isinstance(k, str) and isinstance(v, str)
    } if isinstance(raw_agents, dict) else {}
    source = data.get("source")
    return CompletionMarker(
        worker=worker,
        tag_or_version=tag,
        version=version if isinstance(version, str) else None,
        agents=agents,
        schema=schema,
        source=source if isinstance(source, str) else "registry",
    )


def read_marker(skills_root: Path, worker: str) -> CompletionMarker | None:
    """The marker of `worker` under `skills_root`, or None when absent or unreadable."""
    try:
        text = marker_path(skills_root, worker).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return parse_marker(text)


def has_marker(skills_root: Path, worker: str) -> bool:
    """True when the marker file exists (the reconcile's "already present" test)."""
    return marker_path(skills_root, worker).is_file()


def write_marker(skills_root: Path, marker: CompletionMarker,
                 marks: SelfWrites | None = None) -> Path:
    path = marker_path(skills_root, marker.worker)
    atomic_write(path, marker.to_json(), marks)
    return path


def all_markers(skills_root: Path) -> list[CompletionMarker]:
    """Every parsable marker directly under `<skills_root>/<dir>/`, sorted by directory name."""
    try:
        children = sorted(p for p in skills_root.iterdir() if p.is_dir())
    except OSError:
        return []
    found = []
    for child in children:
        marker = read_marker(skills_root, child.name)
        if marker is not None:
            found.append(marker)
    return found
