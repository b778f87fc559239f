"""The function table's registration frames, shipped as package data (`data/schemas.json`).

For every function id the file holds the surface module that declares it (`functions.<name>`)
and its `registerfunction` frame — description, draft-07 request and response schemas, metadata —
exactly as `FunctionSpec.registration()` produces it. `python -m iii_directory.schemas --write`
writes it from the table, and a unit test fails when it differs from what the models produce, so
the table stays the one source of ids and schemas. `serve`, `call` and `schema` read the file
instead of generating 84 JSON Schemas, which was most of a start's CPU (docs/startup.md).

A missing or unreadable file only means generating the frames, as before it existed.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a type only: the file-backed `call` path reads the frames without the models
    from .table import FunctionSpec

log = logging.getLogger(__name__)

SCHEMAS_PATH = Path(__file__).resolve().parent / "data" / "schemas.json"
GENERATOR = "python -m iii_directory.schemas --write"


@dataclass(frozen=True)
class Published:
    """Frames and surface names by function id (both empty when nothing is published)."""

    frames: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    surfaces: Mapping[str, str] = field(default_factory=dict)

    def frame(self, spec: FunctionSpec) -> dict[str, Any] | None:
        """A copy of the published frame of `spec`, or None when there is none or its
        description or metadata differ from the spec's (a cheap guard against a stale file)."""
        frame = self.frames.get(spec.id)
        if frame is None or frame.get("description") != spec.description:
            return None
        if frame.get("metadata") != dict(spec.metadata):
            return None
        return dict(frame)


def parse(document: Any) -> Published:
    """The `Published` view of the file's JSON document; ValueError on a wrong shape."""
    entries = document.get("functions") if isinstance(document, dict) else None
    if not isinstance(entries, dict):
        raise ValueError("no `functions` object")
    frames: dict[str, dict[str, Any]] = {}
    surfaces: dict[str, str] = {}
    for function_id, entry in entries.items():
        frame = entry.get("registration") if isinstance(entry, dict) else None
        surface = entry.get("surface") if isinstance(entry, dict) else None
        if not isinstance(frame, dict) or frame.get("id") != function_id or not isinstance(surface, str):
            raise ValueError(f"entry {function_id!r} is not a surface name and its frame")
        frames[function_id] = frame
        surfaces[function_id] = surface
    return Published(frames, surfaces)


@functools.cache
def published(path: Path = SCHEMAS_PATH) -> Published:
    """The published frames of this package (read once per process)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return parse(json.load(handle))
    except (OSError, ValueError) as exc:
        log.debug("no published schemas (%s): %s", path, exc)
        return Published()


def registration(spec: FunctionSpec) -> dict[str, Any]:
    """The `registerfunction` frame of `spec`: the published one, else generated."""
    return published().frame(spec) or spec.registration()


def own_records(functions: Mapping[str, FunctionSpec]) -> list[dict[str, Any]]:
    """The registration frame of every id of `functions`, published frames first: an id with a
    published frame does not look its spec up, so a deferred table imports no surface."""
    records = []
    frames = published().frames
    for function_id in functions:
        frame = frames.get(function_id)
        records.append(dict(frame) if frame is not None else registration(functions[function_id]))
    return records
