"""A small CSS scanner for the stylesheet checks of console-ui.md §3.6 / §3.7.

It strips comments, walks the rule blocks (descending into `@media` / `@supports` / `@container`
/ `@layer` blocks) and reports every selector that is not scoped under the page's quoted scope
attribute, every `@keyframes` whose name lacks the `iii-directory-` prefix, and any `@font-face`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SCOPE = '[data-iii-ui="iii-directory"]'
KEYFRAMES_PREFIX = "iii-directory-"
GROUPING_AT_RULES = ("@media", "@supports", "@container", "@layer")


@dataclass
class CssReport:
    unscoped: list[str] = field(default_factory=list)
    keyframes: list[str] = field(default_factory=list)
    bad_keyframes: list[str] = field(default_factory=list)
    font_faces: int = 0
    rules: int = 0


def _split_selectors(prelude: str) -> list[str]:
    """Split a selector list on top-level commas (commas inside parentheses or brackets stay)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(prelude):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(prelude[start:index])
            start = index + 1
    parts.append(prelude[start:])
    return [p.strip() for p in parts if p.strip()]


def _blocks(text: str) -> list[tuple[str, str]]:
    """Top-level `(prelude, body)` pairs of a CSS text (strings are not expected in selectors)."""
    out: list[tuple[str, str]] = []
    index, length = 0, len(text)
    while index < length:
        open_at = text.find("{", index)
        if open_at < 0:
            break
        prelude = text[index:open_at].strip()
        depth, cursor = 1, open_at + 1
        while cursor < length and depth:
            if text[cursor] == "{":
                depth += 1
            elif text[cursor] == "}":
                depth -= 1
            cursor += 1
        out.append((prelude, text[open_at + 1:cursor - 1]))
        index = cursor
    return out


def scan(css: str, report: CssReport | None = None) -> CssReport:
    report = report or CssReport()
    text = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    for prelude, body in _blocks(text):
        # statement at-rules (`@import …;`) before a block end with a semicolon
        prelude = prelude.rsplit(";", 1)[-1].strip()
        lowered = prelude.lower()
        if lowered.startswith("@font-face"):
            report.font_faces += 1
        elif lowered.startswith(("@keyframes", "@-webkit-keyframes")):
            name = prelude.split(None, 1)[1].strip() if " " in prelude else ""
            report.keyframes.append(name)
            if not name.startswith(KEYFRAMES_PREFIX):
                report.bad_keyframes.append(name)
        elif lowered.startswith(GROUPING_AT_RULES):
            scan(body, report)
        else:
            report.rules += 1
            for selector in _split_selectors(prelude):
                if not selector.startswith(SCOPE):
                    report.unscoped.append(selector)
    return report
