"""Path classification (§3.2), root helpers (§2.2) and the safe walk (§3.3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iii_directory.config import Settings
from iii_directory.content.roots import (
    EscapesRoot,
    Kind,
    agent_profile_roots,
    agent_skills_roots,
    classify,
    classify_path,
    contained_target,
    relative_parts,
    top_level_dirs,
    walk_markdown,
    watch_roots,
)


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        ("ns/a.md", Kind.SKILL),
        ("ns/system-prompts/a.md", Kind.SYSTEM_PROMPT),
        ("system-prompts/a.md", Kind.SYSTEM_PROMPT),
        ("ns/prompts/system-prompts/a.md", Kind.SYSTEM_PROMPT),
        ("ns/prompts/a.md", Kind.IGNORED),
        ("prompts/agents/a.md", Kind.IGNORED),
        ("ns/agents/a.md", Kind.AGENT),
        ("agents/a.md", Kind.AGENT),
        ("promptsx/a.md", Kind.SKILL),
        ("prompts-extra/a.md", Kind.SKILL),
        ("agentsx/a.md", Kind.SKILL),
        ("agents-extra/a.md", Kind.SKILL),
        ("ns/system-promptsx/a.md", Kind.SKILL),
    ],
)
def test_classification_uses_exact_segments(rel: str, kind: Kind) -> None:
    assert classify_path(rel) is kind
    assert classify(tuple(rel.split("/"))) is kind


def test_root_lists_are_deduplicated(roots: dict[str, Path]) -> None:
    same = str(roots["agents_skills"])
    settings = Settings(agents_skills_folder=same, global_agents_skills_folder=same,
                        agents_folder=str(roots["agents"]), global_agents_folder=str(roots["agents"]))
    assert agent_skills_roots(settings) == [roots["agents_skills"]]
    assert agent_profile_roots(settings) == [roots["agents"]]


def test_default_global_roots_resolve_against_home(roots: dict[str, Path]) -> None:
    settings = Settings()
    assert agent_skills_roots(settings) == [
        roots["project"] / ".agents" / "skills",
        roots["home"] / ".agents" / "skills",
    ]


def test_watch_roots(settings: Settings, roots: dict[str, Path]) -> None:
    listed = {(w.path, w.role, w.create) for w in watch_roots(settings)}
    assert (roots["skills"], "skills", True) in listed
    assert (roots["local"], "skills", True) in listed
    assert (roots["agents"], "agents", True) in listed
    assert (roots["global_agents"], "agents", False) in listed
    assert (roots["agents_skills"], "agent_skills", False) in listed


def test_walk_is_sorted_bytewise_and_skips_non_markdown(tmp_path: Path) -> None:
    for rel in ["b/x.md", "a-c.md", "a/b.md", "A.md", "SKILLS.md", "SKILL.md", "index.md", "c.txt"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    rels = [f.rel for f in walk_markdown(tmp_path)]
    assert rels == ["A.md", "SKILL.md", "SKILLS.md", "a-c.md", "a/b.md", "b/x.md", "index.md"]
    assert walk_markdown(tmp_path / "missing") == []


def test_walk_never_follows_symlinks_out_of_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    root = tmp_path / "root"
    (root / "ns").mkdir(parents=True)
    (root / "ns" / "ok.md").write_text("ok")
    os.symlink(outside, root / "escape")
    os.symlink(outside / "secret.md", root / "ns" / "leak.md")
    os.symlink(root / "ns" / "ok.md", root / "ns" / "alias.md")
    os.symlink(root, root / "ns" / "loop")
    rels = [f.rel for f in walk_markdown(root)]
    assert rels == ["ns/alias.md", "ns/ok.md"]


def test_walk_follows_links_inside_the_root_but_never_loops(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "ns").mkdir(parents=True)
    (root / "ns" / "ok.md").write_text("ok")
    (root / "a").mkdir()
    (root / "a" / "x.md").write_text("x")
    os.symlink("ns", root / "alias")
    os.symlink("ns", root / "alias2")
    os.symlink("..", root / "ns" / "up")
    os.symlink(".", root / "a" / "self")
    rels = [f.rel for f in walk_markdown(root)]
    assert rels == ["a/x.md", "alias/ok.md", "alias2/ok.md", "ns/ok.md"]
    assert walk_markdown(root / "alias")[0].path == root / "alias" / "ok.md"


def test_contained_target_refuses_escapes(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "link")
    assert contained_target(root, "ns/a.md") == root / "ns" / "a.md"
    for bad in ["", "/etc/passwd", "../x.md", "a/../../x.md", "a//b.md", "a\\b.md", "a\0.md",
                "./a.md", "link/x.md"]:
        with pytest.raises(EscapesRoot):
            contained_target(root, bad)


def test_relative_parts_and_top_level_dirs(tmp_path: Path) -> None:
    (tmp_path / "r" / "a" / "b").mkdir(parents=True)
    (tmp_path / "r" / "f.md").write_text("x")
    assert relative_parts(tmp_path / "r", tmp_path / "r" / "a" / "b") == ("a", "b")
    assert relative_parts(tmp_path / "r", tmp_path / "other") is None
    assert relative_parts(tmp_path / "r", tmp_path / "r") == ()
    assert top_level_dirs(tmp_path / "r") == frozenset({"a"})
    assert top_level_dirs(tmp_path / "missing") == frozenset()
