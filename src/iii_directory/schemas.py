"""Writes and checks the published registration frames (`data/schemas.json`, read by
`published.py`) from the function table.

    python -m iii_directory.schemas --write    # after changing a model, a description or metadata
    python -m iii_directory.schemas --check    # exit 1 when the shipped file is stale

Every frame is `FunctionSpec.registration()` of the table's spec, so the file is derived from the
models, never edited by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from .functions import SURFACE_MODULES, surface
from .published import GENERATOR, SCHEMAS_PATH


def generate() -> dict[str, Any]:
    """The document of `data/schemas.json`: every function of every surface, sorted by id."""
    entries: dict[str, dict[str, Any]] = {}
    for name in SURFACE_MODULES:
        for spec in surface(name).functions:
            if spec.id in entries:
                raise ValueError(f"function id declared twice: {spec.id}")
            entries[spec.id] = {"surface": name, "registration": spec.registration()}
    return {
        "generated_by": GENERATOR,
        "functions": dict(sorted(entries.items())),
    }


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def write(path: Path = SCHEMAS_PATH) -> bool:
    """Write the document atomically when it changed; whether it did."""
    text = render(generate())
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=".schemas-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # package data: world-readable, as the build copies it
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True


def is_current(path: Path = SCHEMAS_PATH) -> bool:
    """Whether the file holds exactly what the models produce now."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(stored == generate())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m iii_directory.schemas", description=__doc__.split("\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help=f"(re)write {SCHEMAS_PATH.name}")
    action.add_argument("--check", action="store_true", help="exit 1 when the shipped file is stale")
    args = parser.parse_args(argv)
    if args.write:
        changed = write(SCHEMAS_PATH)
        print(f"{SCHEMAS_PATH}: {'written' if changed else 'unchanged'}")
        return 0
    if is_current(SCHEMAS_PATH):
        print(f"{SCHEMAS_PATH}: current")
        return 0
    print(f"{SCHEMAS_PATH} is stale: run `{GENERATOR}`", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
