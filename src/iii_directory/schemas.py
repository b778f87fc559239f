"""Writes and checks the package's generated data files: the published registration frames
(`data/schemas.json`, read by `published.py`) from the function table, and the plain settings
table (`data/settings.json`, read by `plain_settings.py`) from the `config.Settings` model
(`settings_table.py`).

    python -m iii_directory.schemas --write    # after changing a model, a description or metadata
    python -m iii_directory.schemas --check    # exit 1 when a shipped file is stale

Every frame is `FunctionSpec.registration()` of the table's spec and every settings row is read
off the model's field, so the files are derived from the models, never edited by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import settings_table
from .functions import SURFACE_MODULES, surface
from .plain_settings import SETTINGS_PATH
from .published import GENERATOR, SCHEMAS_PATH

Producer = Callable[[], dict[str, Any]]
Renderer = Callable[[dict[str, Any]], str]


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


def documents() -> list[tuple[Path, Producer, Renderer]]:
    """Every generated file, the function that produces its document and the one that writes
    it as text."""
    return [(SCHEMAS_PATH, generate, render), (SETTINGS_PATH, settings_table.generate, settings_table.render)]


def write(path: Path = SCHEMAS_PATH, produce: Producer = generate, as_text: Renderer = render) -> bool:
    """Write `produce()`'s document to `path` (as `as_text` words it) atomically when it
    changed; whether it did."""
    text = as_text(produce())
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
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


def is_current(path: Path = SCHEMAS_PATH, produce: Producer = generate) -> bool:
    """Whether the file holds exactly what `produce()` makes of the models now."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(stored == produce())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m iii_directory.schemas", description=__doc__.split("\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    names = " and ".join(path.name for path, _, _ in documents())
    action.add_argument("--write", action="store_true", help=f"(re)write {names}")
    action.add_argument("--check", action="store_true", help="exit 1 when a shipped file is stale")
    args = parser.parse_args(argv)
    if args.write:
        for path, produce, as_text in documents():
            changed = write(path, produce, as_text)
            print(f"{path}: {'written' if changed else 'unchanged'}")
        return 0
    stale = 0
    for path, produce, _ in documents():
        if is_current(path, produce):
            print(f"{path}: current")
        else:
            print(f"{path} is stale: run `{GENERATOR}`", file=sys.stderr)
            stale += 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
