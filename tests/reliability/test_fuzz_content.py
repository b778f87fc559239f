"""Fuzzing content (issue 11): frontmatter and markdown parsing, and random ids, paths and
contents thrown at every file-backed write and read (skills, system prompts, agent profiles)
— a coded error or a valid answer, never a crash, never a byte written outside the roots,
never a staging file left behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, strategies as st
from reliability_support import fuzz_settings, tree

from iii_directory.content.markdown import FrontmatterError, first_h1, first_paragraph, load_yaml
from iii_directory.content.markdown import parse_frontmatter, split_frontmatter
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError

pytestmark = [pytest.mark.timeout(900)]

YAML_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=10)
YAML_TEXT = st.one_of(
    st.dictionaries(st.sampled_from(["name", "title", "description", "type", "function_id", "functions",
                                     "skills", "extends", "model", "logo", "color", "x"]), YAML_VALUE, max_size=6)
    .map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
    st.text(max_size=120),
    st.sampled_from([
        "a: &a [1, 2]\nb: [*a, *a]\n", "!!python/object/apply:os.system [ls]\n", "? [a, b]\n: c\n",
        "a: " + "[" * 200 + "]" * 200 + "\n", "- " * 300 + "x\n", "a: !!binary aGk=\n", "\t- x\n",
        "name: [unclosed\n", "key: 'open\n", "%YAML 1.1\n---\na: 1\n", "a: 1\n---\nb: 2\n",
        "<<: {a: 1}\n", "a: 1e400\n", "a: .nan\n", "\ufeffname: bom\n",
    ]),
)
BODY = st.one_of(st.text(max_size=200), st.sampled_from(["", "\n", "# Title\n\nBody.\n", "---\n", "\r\n\r\n"]))
DOCUMENT = st.one_of(
    st.text(max_size=300),
    st.tuples(st.sampled_from(["---\n", "---\r\n"]), YAML_TEXT, st.sampled_from(["\n---\n", "\n---\r\n", "\n---", "\n"]),
              BODY).map("".join),
)


@given(DOCUMENT)
@fuzz_settings(ci=1000)
def test_frontmatter_and_markdown_helpers_never_crash(content: str) -> None:
    split = split_frontmatter(content)
    assert split.frontmatter is None or isinstance(split.frontmatter, str)
    try:
        load_yaml(split.frontmatter or "")
    except FrontmatterError:
        pass
    try:
        meta, body = parse_frontmatter(content)
    except FrontmatterError:
        pass
    else:
        assert meta is None or isinstance(meta, dict)
        assert body == split.body
    title = first_h1(split.body)
    assert title is None or isinstance(title, str)
    paragraph = first_paragraph(split.body)
    assert paragraph is None or isinstance(paragraph, str)


SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=10)
NASTY = st.sampled_from([
    "..", ".", "/", "//", "\\", "\x00", "::", "iii://", "file://", ".md", ".md.tmp", "SKILL.md", "prompts",
    "system-prompts", "agents", "index", "~", "$HOME", " ", "\n", "é", "A", "outside", "escape",
    "../outside/secret", "/tmp", "C:\\x", "%2e%2e",
])
ANY_ID = st.one_of(
    st.lists(SEGMENT, min_size=1, max_size=4).map("/".join),
    st.text(max_size=40),
    st.lists(st.one_of(SEGMENT, NASTY), min_size=1, max_size=6).map("".join),
    st.lists(st.one_of(SEGMENT, NASTY), min_size=1, max_size=6).map("/".join),
)
OPS = st.sampled_from([
    "directory::skills::create", "directory::skills::update", "directory::skills::get", "directory::skills::delete",
    "directory::system-prompts::create", "directory::system-prompts::update", "directory::system-prompts::get",
    "directory::system-prompts::delete", "directory::agents::create", "directory::agents::update",
    "directory::agents::get", "directory::agents::delete", "directory::agents::functions::add",
    "directory::agents::functions::remove",
])
FUNCTION_IDS = st.lists(st.one_of(st.text(max_size=20), st.sampled_from(["a::b", "x::y::z", "-bad", "needs#quote"])),
                        max_size=4)


def request(op: str, ident: str, content: str, functions: list[str]) -> dict[str, Any]:
    key = "name" if "system-prompts" in op else "id"
    if op.endswith(("::create", "::update")):
        return {key: ident, "content": content}
    if op.endswith(("::add", "::remove")):
        return {"id": ident, "functions": functions}
    if op.endswith("::get"):
        return {key: ident, "raw": True}
    return {key: ident}


def roots_of(project: Path) -> tuple[Path, ...]:
    return (project / "skills", project / "agents", project / ".agents", project / "home" / ".iii")


def outside_roots(project: Path) -> dict[str, bytes]:
    skipped = roots_of(project)
    return {k: v for k, v in tree(project).items()
            if not any((project / k).is_relative_to(root) for root in skipped)}


@given(st.lists(st.tuples(OPS, ANY_ID, DOCUMENT, FUNCTION_IDS), min_size=1, max_size=6))
@fuzz_settings(ci=400)
async def test_random_edits_answer_or_refuse_and_stay_inside_the_roots(
        directory: Directory, roots: dict[str, Path], ops: list[tuple[str, str, str, list[str]]]) -> None:
    project = roots["project"]
    sentinel = project / "outside" / "secret.md"
    if not sentinel.exists():
        sentinel.parent.mkdir(parents=True, exist_ok=True)
        sentinel.write_text("# Secret\n\nKeep.\n")
    before = outside_roots(project)
    for op, ident, content, functions in ops:
        try:
            answer = await directory.invoke(op, request(op, ident, content, functions))
        except DirectoryError as exc:
            assert exc.code and exc.message, (op, ident)
            continue
        assert isinstance(answer, dict)
    assert outside_roots(project) == before, "a write left the roots"
    for root in roots_of(project):
        assert not [p for p in root.rglob("*.tmp")] if root.exists() else True
