"""Rewrite only the `functions` key of a profile's frontmatter; every other byte stays
(docs/rules/surfaces.md §11.3).

* The file must open with a frontmatter block. Line ending for new lines: CRLF when the file
  starts with `---\\r\\n`, else LF. Existing lines keep their own endings.
* The field header is a line at column 0 made of `functions`, optional spaces, then `:`
  (`functions_extra:` does not match).
* The field's extent is the header plus the following lines that are blank, start with a space
  or a tab, or are items of an indentless block sequence (`- x` at column 0), minus trailing
  blank lines — so block lists and wrapped flow lists are both replaced.
* The replacement is `functions:` and one `  - <item>` line per id; an empty list removes the
  field; an absent field is appended at the end of the frontmatter. A repeated key is replaced at
  its first occurrence and its later occurrences are removed.
* An item is written bare when it is non-empty, made only of ASCII letters, digits and
  `_ - . / :`, does not start with `-`, `.`, `:` or `/`, does not end with `:`, and YAML reads
  it back as the same string; otherwise as a JSON double-quoted string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import yaml

from .markdown import split_frontmatter

_HEADER = re.compile(r"^functions *:(?:\s|$)")
_BARE = re.compile(r"^[A-Za-z0-9_\-./:]+\Z")


class NoFrontmatter(ValueError):
    """The file has no frontmatter block to edit."""


def yaml_item(item: str) -> str:
    """The YAML scalar for one function id: bare when safe, else JSON double-quoted."""
    if (
        _BARE.match(item)
        and item[0] not in "-.:/"
        and not item.endswith(":")
        and _reads_back(item)
    ):
        return item
    return json.dumps(item, ensure_ascii=False)


def _reads_back(item: str) -> bool:
    try:
        return yaml.safe_load(item) == item
    except yaml.YAMLError:
        return False


def _is_continuation(line: str) -> bool:
    return line.strip() == "" or line[:1] in (" ", "\t") or line == "-" or line.startswith("- ")


def _extents(lines: Sequence[str]) -> list[tuple[int, int]]:
    """`[start, end)` line ranges of every `functions` field in the frontmatter lines."""
    found = []
    index = 0
    while index < len(lines):
        if _HEADER.match(lines[index].rstrip("\r")):
            end = index + 1
            while end < len(lines) and _is_continuation(lines[end].rstrip("\r")):
                end += 1
            while end > index + 1 and lines[end - 1].strip() == "":
                end -= 1
            found.append((index, end))
            index = end
        else:
            index += 1
    return found


def rewrite_functions(raw: str, functions: Sequence[str]) -> str:
    """`raw` with its `functions` field replaced by `functions` (removed when empty)."""
    split = split_frontmatter(raw)
    if split.frontmatter is None:
        raise NoFrontmatter("missing YAML frontmatter (expected --- ... --- block at file start)")
    opener = 5 if raw.startswith("---\r\n") else 4
    cr = "\r" if opener == 5 else ""
    front = split.frontmatter
    after = raw[opener + len(front):]
    lines = front.split("\n") if front else []

    replacement = [f"functions:{cr}"] + [f"  - {yaml_item(item)}{cr}" for item in functions]
    if not functions:
        replacement = []
    extents = _extents(lines)
    if extents:
        new_lines: list[str] = []
        cursor = 0
        for number, (start, end) in enumerate(extents):
            new_lines.extend(lines[cursor:start])
            if number == 0:
                new_lines.extend(replacement)
            cursor = end
        new_lines.extend(lines[cursor:])
    else:
        new_lines = lines + replacement

    if front:
        new_front = "\n".join(new_lines)
    else:
        # The block closed right after its opener (`---\n---\n`): the closing fence follows
        # directly, so the new lines need their own terminator.
        new_front = "".join(line + "\n" for line in new_lines)
    return raw[:opener] + new_front + after
