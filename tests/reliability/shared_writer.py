"""A writer process for the shared-file tests: `python shared_writer.py PATH LETTER COUNT SIZE`.

Writes `COUNT` times, through `atomic_write`, a whole file made of `SIZE` copies of `LETTER`
(ending in a newline), then prints `{"ok": n, "errors": [messages]}` as JSON. Only
`DirectoryError` is caught: anything else crashes the process and fails the test."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from iii_directory.atomic import SelfWrites, atomic_write
from iii_directory.errors import DirectoryError


def content(letter: str, size: int) -> bytes:
    return (letter * size + "\n").encode("ascii")


def main(argv: list[str]) -> int:
    path, letter, count, size = Path(argv[0]), argv[1], int(argv[2]), int(argv[3])
    data = content(letter, size)
    marks = SelfWrites()
    ok, errors = 0, []
    for _ in range(count):
        try:
            atomic_write(path, data, marks)
            ok += 1
        except DirectoryError as exc:
            errors.append(str(exc))
    print(json.dumps({"ok": ok, "errors": errors[:20]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
