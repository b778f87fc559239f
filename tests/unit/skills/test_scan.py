"""The one-root scan (§3.3), agent-skills scan, frontmatter fallbacks (§4.2) and read invariants
(§3.7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from iii_directory.content.skills import (
    Origin,
    on_disk_id,
    parse_skill,
    read_raw_document,
    read_skill,
    scan_agent_skills_root,
    scan_root,
)
from iii_directory.errors import DirectoryError

from .helpers import write


def test_on_disk_ids() -> None:
    assert on_disk_id(("a", "b.md")) == "a/b"
    assert on_disk_id(("a", "SKILL.md")) == "a/index"
    assert on_disk_id(("a", "SKILLS.md")) == "a/index"
    assert on_disk_id(("SKILL.md",)) == "index"
    assert on_disk_id(("SKILL", "x.md")) == "SKILL/x"
    assert on_disk_id(("a", "skill.md")) == "a/skill"


def test_scan_keeps_skills_only_and_validates_ids(tmp_path: Path) -> None:
    for rel in [
        "ns/alpha.md", "ns/beta.md", "team-a/meetings/standup.md", "ns/Bad-Name.md",
        "ns/prompts/p.md", "ns/system-prompts/s.md", "ns/agents/a.md", "agents/b.md",
        "promptsx/ok.md", "ns/readme.txt", "SKILL/x.md", "ns/with space.md",
    ]:
        write(tmp_path, rel)
    found = scan_root(tmp_path, Origin.SKILLS)
    assert [f.id for f in found] == ["ns/alpha", "ns/beta", "promptsx/ok", "team-a/meetings/standup"]
    assert all(f.origin is Origin.SKILLS and f.root == tmp_path for f in found)


def test_duplicate_ids_keep_the_first_in_byte_order(tmp_path: Path) -> None:
    write(tmp_path, "ns/index.md", "# From index\n\nx\n")
    write(tmp_path, "ns/SKILLS.md", "# From SKILLS\n\nx\n")
    write(tmp_path, "ns/SKILL.md", "# From SKILL\n\nx\n")
    write(tmp_path, "dup/SKILLS.md", "# From SKILLS\n\nx\n")
    write(tmp_path, "dup/index.md", "# From index\n\nx\n")
    found = {f.id: f.path.name for f in scan_root(tmp_path, Origin.SKILLS)}
    assert found == {"ns/index": "SKILL.md", "dup/index": "SKILLS.md"}


def test_missing_root_is_empty(tmp_path: Path) -> None:
    assert scan_root(tmp_path / "nope", Origin.LOCAL) == []
    assert scan_agent_skills_root(tmp_path / "nope") == []


def test_agent_skills_scan_is_shallow(tmp_path: Path) -> None:
    write(tmp_path, "pdf/SKILL.md")
    write(tmp_path, "pdf/extra.md")
    write(tmp_path, "deep/inner/SKILL.md")
    write(tmp_path, "Bad/SKILL.md")
    write(tmp_path, "lower/skill.md")
    write(tmp_path, "SKILL.md")
    (tmp_path / "empty").mkdir()
    found = scan_agent_skills_root(tmp_path)
    assert [(f.id, f.path) for f in found] == [("pdf/index", tmp_path / "pdf" / "SKILL.md")]
    assert found[0].origin is Origin.AGENT_SKILLS


def test_title_chain_and_description() -> None:
    meta = parse_skill("---\ntitle: '  FM Title '\nname: Named\ntype: how-to\n---\n# H1\n\nPara one\nline two.\n\nNext.\n")
    assert meta.resolved_title("x") == "FM Title"
    assert meta.type == "how-to"
    assert meta.summary() == "Para one line two."
    assert parse_skill("---\nname: Named\n---\n# H1\nx\n").resolved_title("x") == "Named"
    assert parse_skill("  # Indented H1 \nx\n").resolved_title("x") == "Indented H1"
    assert parse_skill("## Not H1\nx\n").resolved_title("the/id") == "the/id"
    assert parse_skill("---\ntitle: '  '\n---\n# H\nx").resolved_title("i") == "H"


def test_description_skips_headings_and_quotes_and_prefers_frontmatter() -> None:
    body = "\n# Title\n\n> quoted\n> more\n\nFirst  text\n  second\n> stop here\nnot included\n"
    assert parse_skill(body).summary() == "First  text second"
    assert parse_skill("---\ndescription: ' From FM '\n---\nBody para.\n").summary() == "From FM"
    assert parse_skill("# Only heading\n").summary() == ""


def test_type_and_function_id_are_trimmed_or_null() -> None:
    meta = parse_skill("---\ntype: '  '\nfunction_id: ' sandbox::create '\n---\nx\n")
    assert meta.type is None
    assert meta.function_id == "sandbox::create"
    assert parse_skill("x").function_id is None


def test_disable_model_invocation_uses_the_hyphenated_key() -> None:
    assert parse_skill("---\ndisable-model-invocation: true\n---\nx\n").disable_model_invocation
    assert not parse_skill("---\ndisable_model_invocation: true\n---\nx\n").disable_model_invocation
    assert not parse_skill("---\ndisable-model-invocation: 'yes'\n---\nx\n").disable_model_invocation


def test_malformed_yaml_is_treated_as_no_frontmatter() -> None:
    meta = parse_skill("---\ntitle: [unclosed\n---\n# Heading\n\nBody.\n")
    assert meta.title is None
    assert meta.resolved_title("fallback") == "Heading"
    assert meta.body == "# Heading\n\nBody.\n"
    assert parse_skill("---\n- a list\n---\nBody\n").title is None


def test_alias_bomb_is_rejected_not_expanded() -> None:
    bomb = "---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\ntitle: Boom\n---\n# Safe\n\nBody.\n"
    meta = parse_skill(bomb)
    assert meta.title is None
    assert meta.resolved_title("x") == "Safe"


def test_read_invariants(tmp_path: Path) -> None:
    big = write(tmp_path, "big.md", "x" * 262_145)
    with pytest.raises(DirectoryError) as caught:
        read_skill(big)
    assert caught.value.message == f"file {big} is too large (262145 bytes; max 262144)"
    at_cap = write(tmp_path, "cap.md", "x" * 262_144)
    assert read_skill(at_cap).raw == "x" * 262_144
    empty = write(tmp_path, "fm-only.md", "---\ntitle: T\n---\n\n\n")
    with pytest.raises(DirectoryError) as caught:
        read_skill(empty)
    assert caught.value.message == f"file {empty} has empty body"
    assert read_raw_document(empty).raw == "---\ntitle: T\n---\n\n\n"
    bad = write(tmp_path, "bad.md", b"\xff\xfe not utf8")
    with pytest.raises(DirectoryError) as caught:
        read_skill(bad)
    assert caught.value.message.startswith(f"read {bad}: ")
    with pytest.raises(DirectoryError) as caught:
        read_skill(tmp_path / "gone.md")
    assert caught.value.message.startswith(f"read {tmp_path / 'gone.md'}: ")
