"""Code cites the rules in `docs/rules/`, and every cited rule exists.

A citation is `docs/rules/<file>.md` followed by sections such as `§7.2`, `§3.3–§3.5` or
`§3.6, §9`; each section must be a heading of that file (`## §7 …`, `### §7.2 …`). No file in
`src/` may point at a specification outside the repository: a bare `search.md`, `surfaces.md`,
`protocol.md`, `kits.md`, `console-ui.md` or `DESIGN.md`, or a path into the team's shared folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
RULES = ROOT / "docs" / "rules"

TEXT_SUFFIXES = frozenset({".py", ".pyi", ".pyx", ".pxd", ".js", ".mjs", ".css", ".html", ".md",
                           ".toml", ".cfg", ".txt", ".yaml", ".yml"})
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})

SECTION = r"§\s*\d+(?:\.\d+)*"
SEPARATOR = r"\s*(?:,|–|—|-|/|\band\b|\bor\b)\s*"
CITATION = re.compile(
    rf"docs/rules/(?P<file>[a-z0-9-]+)\.md(?P<sections>\s*{SECTION}(?:{SEPARATOR}{SECTION})*)?"
)
SECTION_NUMBER = re.compile(r"§\s*(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#{2,6}\s+§(\d+(?:\.\d+)*)\b", re.MULTILINE)

SPEC_NAMES = r"(?:search|surfaces|protocol|kits|console-ui|DESIGN)\.md"
BARE_SPEC = re.compile(rf"(?<![\w./-]){SPEC_NAMES}")
SPEC_PATH = re.compile(rf"[\w.-]*(?:/[\w.-]+)*/{SPEC_NAMES}")
SHARED_FOLDER = re.compile(r"(?:\.\./)+shared\b|/work/|\bshared/(?:spec|seeds|eval|hooks)\b")


def source_files(root: Path) -> Iterator[Path]:
    """Text files under `root`, without build output (`*.egg-info`, caches, generated C)."""
    for path in sorted(root.rglob("*")):
        parts = set(path.relative_to(root).parts)
        if parts & SKIPPED_DIRS or any(p.endswith(".egg-info") for p in parts):
            continue
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            yield path


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def headings(rule_file: Path) -> set[str]:
    return set(HEADING.findall(rule_file.read_text(encoding="utf-8")))


def citations(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """(line, rule file name, cited section numbers) of each citation in `path`."""
    text = path.read_text(encoding="utf-8", errors="replace")
    for match in CITATION.finditer(text):
        sections = SECTION_NUMBER.findall(match.group("sections") or "")
        yield line_of(text, match.start()), match.group("file"), sections


def dangling(paths: Iterator[Path]) -> list[str]:
    """Citations whose rule file or section heading does not exist."""
    known: dict[str, set[str] | None] = {}
    problems: list[str] = []
    for path in paths:
        for line, name, sections in citations(path):
            if name not in known:
                rule_file = RULES / f"{name}.md"
                known[name] = headings(rule_file) if rule_file.is_file() else None
            where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}"
            if known[name] is None:
                problems.append(f"{where}: docs/rules/{name}.md does not exist")
                continue
            problems += [f"{where}: docs/rules/{name}.md has no heading §{s}"
                         for s in sections if s not in known[name]]
    return problems


def test_every_rule_cited_in_src_exists() -> None:
    found = [c for path in source_files(SRC) for c in citations(path)]
    assert found, "src/ cites no docs/rules/ file at all; the citation pattern is broken"
    assert dangling(source_files(SRC)) == []


def test_docs_cite_only_existing_rules() -> None:
    assert dangling(iter(sorted((ROOT / "docs").rglob("*.md")))) == []


def outside_references(text: str, where: str) -> list[str]:
    """Mentions in `text` of a specification file or folder outside the repository."""
    problems = [f"{where}:{line_of(text, m.start())}: {m.group(0)!r} is not a file of this repository"
                for m in BARE_SPEC.finditer(text)]
    for match in SPEC_PATH.finditer(text):
        cited = match.group(0)
        if not (cited.startswith("docs/") and (ROOT / cited).is_file()):
            problems.append(f"{where}:{line_of(text, match.start())}: {cited!r} is not a file of "
                            "this repository")
    problems += [f"{where}:{line_of(text, m.start())}: {m.group(0)!r} points outside the repository"
                 for m in SHARED_FOLDER.finditer(text)]
    return problems


def test_src_cites_no_specification_outside_the_repository() -> None:
    problems = [p for path in source_files(SRC)
                for p in outside_references(path.read_text(encoding="utf-8", errors="replace"),
                                            str(path.relative_to(ROOT)))]
    assert problems == []


@pytest.mark.parametrize("text, expected", [
    ("(docs/rules/search.md §7.2)", [("search", ["7.2"])]),
    ("docs/rules/surfaces.md §3.3–§3.5, §9", [("surfaces", ["3.3", "3.5", "9"])]),
    ("docs/rules/console.md §1.5–§1.7,\n§5.4)", [("console", ["1.5", "1.7", "5.4"])]),
    ("docs/rules/search.md §4, step 3", [("search", ["4"])]),
    ("docs/rules/design.md §2 and §4", [("design", ["2", "4"])]),
    ("the engine wire protocol (docs/rules/protocol.md): frames", [("protocol", [])]),
])
def test_citation_pattern(tmp_path: Path, text: str, expected: list[tuple[str, list[str]]]) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(text, encoding="utf-8")
    assert [(name, sections) for _, name, sections in citations(sample)] == expected


@pytest.mark.parametrize("text, flagged", [
    ("(search.md §7.2)", True),
    ("see ../shared/spec/kits.md", True),
    ("(DESIGN.md rule 8)", True),
    ("/work/shared/spec/console-ui.md", True),
    ("figures in docs/search.md", False),
    ("(docs/rules/kits.md §3)", False),
    ("a skill's SKILL.md or index.md", False),
])
def test_outside_reference_pattern(text: str, flagged: bool) -> None:
    assert bool(outside_references(text, "sample.py")) is flagged


def test_dangling_citations_are_reported(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("docs/rules/search.md §7.2\ndocs/rules/search.md §99\n"
                      "docs/rules/nowhere.md §1\n", encoding="utf-8")
    problems = dangling(iter([sample]))
    assert [p.split(": ", 1)[1] for p in problems] == [
        "docs/rules/search.md has no heading §99", "docs/rules/nowhere.md does not exist"]
