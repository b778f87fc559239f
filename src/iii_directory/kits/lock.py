"""`kits.lock`: the kits installed in a project (docs/rules/kits.md §3) — the writer, and the lock model
and readers of `content.kits_lock` re-exported for the kit flows.

`write_lock` renders the canonical file (three comment lines, then YAML with maps sorted by
key) atomically; a lock with no kits deletes the file. Scalars are written so that the string
reader (`content.kits_lock`) reads each back exactly.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import yaml

from ..atomic import SelfWrites, atomic_delete, atomic_write
from ..content.kits_lock import (
    LOCK_FILE,
    Lock,
    LockedFile,
    LockedKit,
    LockError,
    load_lock,
    lock_path,
    parse_lock,
    read_lock,
)

__all__ = [
    "LOCK_FILE",
    "LOCK_HEADER",
    "Lock",
    "LockError",
    "LockedFile",
    "LockedKit",
    "file_state",
    "load_lock",
    "lock_path",
    "parse_lock",
    "read_lock",
    "render_lock",
    "write_lock",
]

LOCK_HEADER = (
    "# kits.lock — kits installed in this project by iii-directory.\n"
    "# Commit this file. Edit kits with `iii trigger directory::download-kit` or the\n"
    "# ADE (Directory → Kits), not by hand.\n"
)
_PLAIN = re.compile(r"^[A-Za-z0-9^~.][A-Za-z0-9^~._+/=<>-]*\Z")


def file_state(entry: LockedFile, local_sha: str | None, *, ignore_skip: bool = False) -> str:
    """`skipped` (entry skipped, unless ignored) › `missing` (no local file) › `intact`
    (local sha equals the entry's) › `edited`."""
    if entry.skipped and not ignore_skip:
        return "skipped"
    if local_sha is None:
        return "missing"
    return "intact" if local_sha == entry.sha256 else "edited"


# ---------------------------------------------------------------------------------------------
# Writing


_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"


def _scalar(value: str) -> str:
    """Plain when a YAML reader resolves it back to the same string (no number, bool, null or
    date look-alike), else a JSON (double-quoted, valid YAML) string."""
    if _PLAIN.match(value) and _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR_TAG:
        return value
    return json.dumps(value, ensure_ascii=False)


def render_lock(lock: Lock) -> str:
    """The canonical text: header, `version: 1`, kits sorted, fields in spec order."""
    lines = ["version: 1", "kits:"]
    for kit in sorted(lock.kits):
        entry = lock.kits[kit]
        lines.append(f"  {_scalar(kit)}:")
        lines.append(f"    requested: {_scalar(entry.requested)}")
        lines.append(f"    version: {_scalar(entry.version)}")
        lines.append(f"    installed_at: {_scalar(entry.installed_at)}")
        if entry.workers:
            lines.append("    workers:")
            for name in sorted(entry.workers):
                lines.append(f"      {_scalar(name)}: {_scalar(entry.workers[name])}")
        else:
            lines.append("    workers: {}")
        if entry.files:
            lines.append("    files:")
            for path in sorted(entry.files):
                locked = entry.files[path]
                lines.append(f"      {_scalar(path)}:")
                lines.append(f"        sha256: {_scalar(locked.sha256)}")
                if locked.skipped:
                    lines.append("        skipped: true")
        else:
            lines.append("    files: {}")
        if entry.ignored_versions:
            items = ", ".join(_scalar(v) for v in entry.ignored_versions)
            lines.append(f"    ignored_versions: [{items}]")
    return LOCK_HEADER + "\n".join(lines) + "\n"


def write_lock(project_root: Path | None, lock: Lock, marks: SelfWrites | None = None) -> Path:
    """Write the lock atomically; with no kits, delete the file (a missing file is fine)."""
    path = lock_path(project_root)
    if not lock.kits:
        if os.path.lexists(path):
            atomic_delete(path, marks)
        return path
    atomic_write(path, render_lock(lock), marks)
    return path
