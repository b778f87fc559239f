"""Frontmatter splitting and bounded, safe YAML parsing (docs/rules/surfaces.md §4.1).

A frontmatter block exists only when the content starts at byte 0 with `---\\n` (or
`---\\r\\n`). It ends at the first `\\n---\\n` (or `\\n---\\r\\n`), or the remainder ends with
`\\n---` / `\\n---\\r` (the body is then empty). Without a closing fence the whole content is the
body. The body is everything after the closing fence line, byte for byte.

YAML is parsed with a safe loader that builds only plain data (no tags), refuses aliases
altogether (so an alias bomb is rejected, never expanded), and bounds size and nesting.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_DEPTH = 32


class FrontmatterError(ValueError):
    """Frontmatter YAML that is malformed, too large, too deep, or uses aliases or tags."""


@dataclass(frozen=True)
class Split:
    """`frontmatter` is the YAML text between the fences (None when there is no block)."""

    frontmatter: str | None
    body: str


def split_frontmatter(content: str) -> Split:
    if content.startswith("---\n"):
        start = 4
    elif content.startswith("---\r\n"):
        start = 5
    else:
        return Split(None, content)
    rest = content[start:]
    # The fence may close immediately: `---\n---\n`.
    for opener in ("---\n", "---\r\n"):
        if rest.startswith(opener):
            return Split("", rest[len(opener):])
    if rest in ("---", "---\r"):
        return Split("", "")
    candidates = []
    for fence in ("\n---\n", "\n---\r\n"):
        at = rest.find(fence)
        if at != -1:
            candidates.append((at, fence))
    if candidates:
        at, fence = min(candidates)
        return Split(rest[:at], rest[at + len(fence):])
    for tail in ("\n---", "\n---\r"):
        if rest.endswith(tail):
            return Split(rest[: -len(tail)], "")
    return Split(None, content)


class _BoundedSafeLoader(yaml.SafeLoader):
    """SafeLoader that rejects aliases, explicit non-core tags and deep nesting."""

    def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise FrontmatterError(
                f"YAML aliases are not allowed (line {event.start_mark.line + 1})"
            )
        depth = getattr(self, "_depth", 0) + 1
        if depth > MAX_DEPTH:
            raise FrontmatterError(f"YAML nesting deeper than {MAX_DEPTH} levels")
        self._depth = depth
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth = depth - 1


_CSafeLoader: Any = getattr(yaml, "CSafeLoader", None)


def _alias_line(text: str) -> int:
    """Line (1-based) of the first alias in `text` (only called once one was detected)."""
    for event in yaml.parse(text, Loader=_CSafeLoader):
        if isinstance(event, yaml.AliasEvent):
            return int(event.start_mark.line) + 1
    return 0


def _check_graph(root: Any, text: str) -> None:
    """Reject aliases (a node reached twice: the composer shares aliased nodes) and nesting
    deeper than MAX_DEPTH, without ever expanding the graph."""
    seen: set[int] = set()
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            raise FrontmatterError(f"YAML aliases are not allowed (line {_alias_line(text)})")
        seen.add(id(node))
        if depth > MAX_DEPTH:
            raise FrontmatterError(f"YAML nesting deeper than {MAX_DEPTH} levels")
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))


def _load_with_libyaml(text: str) -> Any:
    """libyaml composes the node graph, which is checked before the safe constructor runs."""
    loader = _CSafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_graph(node, text)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def load_yaml(text: str, *, max_bytes: int = MAX_FRONTMATTER_BYTES) -> Any:
    """Parse one YAML document of plain data; raise FrontmatterError with a readable reason.

    With libyaml available (its parser caps nesting at 1000 levels, so its recursive composer
    stays bounded) the C composer builds the node graph, which is checked for aliases and
    depth before the safe constructor runs — about ten times faster on frontmatter-sized
    blocks; otherwise the bounded pure-Python loader does both in one pass. Both refuse
    aliases, unknown tags and deep nesting alike and build the same data; on malformed syntax
    libyaml is the more lenient one (some tab placements PyYAML's scanner rejects)."""
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise FrontmatterError(f"YAML block too large (max {max_bytes} bytes)")
    try:
        if _CSafeLoader is not None:
            return _load_with_libyaml(text)
        return yaml.load(text, Loader=_BoundedSafeLoader)  # noqa: S506 - bounded safe loader
    except FrontmatterError:
        raise
    except yaml.YAMLError as exc:
        raise FrontmatterError(" ".join(str(exc).split())) from None
    except RecursionError:
        raise FrontmatterError("YAML nesting too deep") from None


def parse_frontmatter(content: str) -> tuple[dict[str, Any] | None, str]:
    """Split and parse. Returns `(mapping or None, body)`; a block that is not a mapping
    (e.g. empty) yields `{}`. Raises FrontmatterError for malformed YAML."""
    split = split_frontmatter(content)
    if split.frontmatter is None:
        return None, split.body
    data = load_yaml(split.frontmatter)
    if data is None:
        return {}, split.body
    if not isinstance(data, dict):
        raise FrontmatterError("frontmatter must be a YAML mapping")
    return data, split.body


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def _fence(line: str) -> tuple[str, str] | None:
    """(marker run, rest of the line) when `line` is a code fence line, else None."""
    match = _FENCE.match(line)
    return (match.group(1), match.group(2)) if match else None


def prose_lines(body: str) -> Iterator[str | None]:
    """The lines of `body`, each line of a fenced code block (its fences included) given as
    None: code is never a heading or paragraph text. A fence (CommonMark §4.5) opens with at
    least three backticks or tildes indented up to three spaces (a backtick fence's info string
    holds no backtick) and closes with a run of the same character at least as long and nothing
    else; an unclosed fence runs to the end of the body."""
    opened: str | None = None
    for line in body.splitlines():
        fence = _fence(line)
        if opened is None:
            if fence and not (fence[0][0] == "`" and "`" in fence[1]):
                opened = fence[0]
                yield None
            else:
                yield line
            continue
        if fence and fence[0][0] == opened[0] and len(fence[0]) >= len(opened) and not fence[1].strip():
            opened = None
        yield None


def first_h1(body: str) -> str | None:
    """The first line outside fenced code whose left-trimmed text starts with `# `, the rest
    trimmed; None if none (a `# comment` in a code sample is not a title)."""
    for line in prose_lines(body):
        if line is None:
            continue
        text = line.lstrip()
        if text.startswith("# "):
            title = text[2:].strip()
            if title:
                return title
    return None


def first_paragraph(body: str) -> str:
    """Skip leading blanks, headings (`#…`), blockquotes (`>…`) and fenced code blocks; join
    the following text lines with single spaces; stop at a blank line, heading, blockquote or
    code fence. `""` when none."""
    collected: list[str] = []
    for raw in prose_lines(body):
        line = raw.strip() if raw is not None else None
        stop = line is None or not line or line.startswith("#") or line.startswith(">")
        if not collected:
            if not stop:
                collected.append(line or "")
            continue
        if stop:
            break
        collected.append(line or "")
    return " ".join(collected)
