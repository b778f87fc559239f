"""`--write` and `--check` of the fit scripts: the fitted numbers against
`src/iii_directory/search/ranking/data/fitted.json` (`iii_directory.search.ranking.fitted`)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from iii_directory.search.ranking import fitted

ROOT = Path(__file__).resolve().parents[1]


def rounded(values: Iterable[float], digits: int) -> list[float]:
    """`values` as the file holds them: plain floats rounded to `digits` places."""
    return [round(float(v), digits) for v in values]


def commit() -> str:
    """The commit the fit ran on; marked when the tree had uncommitted changes."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()

    head = git("rev-parse", "HEAD")
    return head + (" with uncommitted changes" if git("status", "--porcelain", "--", "src",
                                                      "benchmarks") else "")


def add_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """`--write`, `--check` and `--file` of a fit script that fits `what`."""
    parser.add_argument("--write", action="store_true",
                        help=f"write {what} to --file "
                             "(src/iii_directory/search/ranking/data/fitted.json)")
    parser.add_argument("--check", action="store_true",
                        help=f"re-run the fit of {what}; exit 1 when --file no longer matches it")
    parser.add_argument("--file", type=Path, default=fitted.FITTED_PATH,
                        help="the fitted-numbers file (default: the package's)")


def apply(found: dict[str, dict[str, Any]], args: argparse.Namespace) -> None:
    """Write (`args.write`) or compare (`args.check`) each entry's fitted fields (`values`, and
    `bias` / `threshold` where given) in `args.file`; a check exits 1 naming every entry that no
    longer matches."""
    path, write, check = args.file, args.write, args.check
    document = json.loads(path.read_text(encoding="utf-8"))
    entries = document["fitted"]
    if check:
        stale = [name for name, fields in found.items()
                 if any(entries[name].get(key) != value for key, value in fields.items())]
        for name in stale:
            print(f"{name}: the file holds {entries[name]['values']}, the fit gives "
                  f"{found[name]['values']}", file=sys.stderr)
        if stale:
            print(f"{path.name} no longer matches the fit: re-run {entries[stale[0]]['script']} "
                  "--write and commit", file=sys.stderr)
            sys.exit(1)
        print(f"{path.name}: {', '.join(found)} match the fit")
    if write:
        stamp = commit()
        for name, fields in found.items():
            if any(entries[name].get(key) != value for key, value in fields.items()):
                entries[name].update(fields, commit=stamp)
        path.write_text(fitted.render(document), encoding="utf-8")
        print(f"wrote {', '.join(found)} to {path}")
