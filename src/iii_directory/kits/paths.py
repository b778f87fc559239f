"""Install paths, source paths, ids and disk locations of kit files (docs/rules/kits.md §1.5).

* source path — the path inside the kit as published: `agents/<id>.md` or `skills/<rest>`;
* install path — the key used in plans and `kits.lock`: `agents/<id>.md` or
  `skills/<handle>/<kit>/<rest>`;
* on disk — `agents/<id>.md` → `<agents_folder>/<id>.md`, `skills/<rest>` →
  `<skills_folder>/<rest>`.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..config import Settings
from ..atomic import is_within
from ..content.files import sha256_hex
from ..content.ids import is_valid_name

_DRIVE = re.compile(r"^[A-Za-z]:")
BUILTIN_AGENT_IDS: frozenset[str] = frozenset({"default", "iii", "iii-minimal"})


def safe_segments(path: str) -> list[str] | None:
    """The segments of a safe relative path (`.` and empty segments dropped), or None when
    the path is absolute, climbs with `..`, carries a drive / root, or a backslash / NUL."""
    if not path or path.startswith("/") or "\\" in path or "\x00" in path or _DRIVE.match(path):
        return None
    segments = [s for s in path.split("/") if s not in ("", ".")]
    if not segments or any(s == ".." for s in segments):
        return None
    return segments


def normalize(path: str) -> str | None:
    """The safe relative form of `path`, or None."""
    segments = safe_segments(path)
    return "/".join(segments) if segments is not None else None


def install_path_for(source: str, handle: str, name: str) -> str | None:
    """Map a kit source path to its install path (None for files a kit does not install:
    READMEs, manifests, nested agents). The result is not yet checked for validity."""
    segments = safe_segments(source)
    if segments is None:
        return None
    if segments[0] == "agents":
        return "/".join(segments) if len(segments) == 2 else None
    if segments[0] == "skills" and len(segments) > 1:
        return "/".join(["skills", handle, name, *segments[1:]])
    return None


def source_path_for(install: str) -> str:
    """Inverse mapping: `agents/…` unchanged; `skills/<handle>/<kit>/<rest>` → `skills/<rest>`."""
    segments = install.split("/")
    if segments[0] == "skills" and len(segments) > 3:
        return "/".join(["skills", *segments[3:]])
    return install


def is_valid_install_path(install: str) -> bool:
    """`agents/<id>.md` (id of 1–64 `[a-z0-9_-]`) or `skills/` + at least 3 segments ending
    in `.md`, as a safe relative path."""
    segments = safe_segments(install)
    if segments is None or "/".join(segments) != install:
        return False
    if segments[0] == "agents":
        return (
            len(segments) == 2
            and segments[1].endswith(".md")
            and is_valid_name(segments[1][:-3])
        )
    if segments[0] == "skills":
        return len(segments) >= 4 and segments[-1].endswith(".md")
    return False


def kind_of(install: str) -> str:
    return "agent" if install.startswith("agents/") else "skill"


def agent_id(install: str) -> str | None:
    if not install.startswith("agents/"):
        return None
    stem = install[len("agents/"):]
    return stem[:-3] if stem.endswith(".md") else stem


def skill_id(install: str) -> str | None:
    """`skills/<handle>/<kit>/<rest>.md` → `<handle>/<kit>/<rest>`, a trailing `SKILL` or
    `SKILLS` segment read as `index`."""
    if not install.startswith("skills/") or not install.endswith(".md"):
        return None
    segments = install[len("skills/"):-3].split("/")
    if segments[-1] in ("SKILL", "SKILLS"):
        segments[-1] = "index"
    return "/".join(segments)


def file_id(install: str) -> str:
    """A plan / list row id: the agent id, else the skill id, else the path."""
    return agent_id(install) or skill_id(install) or install


def root_for(settings: Settings, install: str) -> Path:
    return settings.path("agents_folder") if install.startswith("agents/") else settings.path(
        "skills_folder"
    )


def disk_path(settings: Settings, install: str) -> Path | None:
    """Where an install path lives on disk, or None when it is unsafe or resolves (through
    symlinks) outside its root."""
    segments = safe_segments(install)
    if segments is None or len(segments) < 2 or segments[0] not in ("agents", "skills"):
        return None
    root = root_for(settings, install)
    target = root.joinpath(*segments[1:])
    if not is_within(root, target):
        return None
    return target


def read_local(settings: Settings, install: str) -> bytes | None:
    """The bytes of the file at an install path, or None (missing, unreadable, unsafe)."""
    target = disk_path(settings, install)
    if target is None:
        return None
    try:
        if not target.is_file():
            return None
        return target.read_bytes()
    except OSError:
        return None


def local_sha(settings: Settings, install: str) -> str | None:
    data = read_local(settings, install)
    return sha256_hex(data) if data is not None else None


def decode(data: bytes | None) -> str | None:
    """UTF-8 text of file bytes (invalid sequences replaced), or None."""
    return data.decode("utf-8", errors="replace") if data is not None else None
