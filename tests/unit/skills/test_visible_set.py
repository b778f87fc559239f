"""Precedence and the visible set (§3.4), lookup and display ids (§3.5)."""

from __future__ import annotations

from pathlib import Path

from iii_directory.config import Settings
from iii_directory.content.skills import Origin, build_view
from iii_directory.content.visibility import Visibility

from .helpers import write


def view_ids(settings: Settings, installed: frozenset[str] | None = None) -> dict[str, Origin]:
    return {f.id: f.origin for f in build_view(settings, installed).files}


def test_local_namespace_shadows_the_whole_skills_namespace(settings: Settings, roots: dict[str, Path]) -> None:
    write(roots["skills"], "shell/index.md")
    write(roots["skills"], "shell/exec.md")
    write(roots["skills"], "database/index.md")
    write(roots["local"], "shell/index.md")
    (roots["local"] / "database").mkdir(parents=True)
    write(roots["skills"], "index.md")
    write(roots["local"], "index.md")
    assert view_ids(settings) == {"shell/index": Origin.LOCAL, "index": Origin.LOCAL}


def test_agent_skills_precedence(settings: Settings, roots: dict[str, Path]) -> None:
    write(roots["agents_skills"], "pdf/SKILL.md")
    write(roots["agents_skills"], "taken/SKILL.md")
    write(roots["agents_skills"], "local-taken/SKILL.md")
    write(roots["global_agents_skills"], "pdf/SKILL.md")
    write(roots["global_agents_skills"], "docx/SKILL.md")
    (roots["skills"] / "taken").mkdir(parents=True)
    (roots["local"] / "local-taken").mkdir(parents=True)
    view = build_view(settings, None)
    got = {f.id: f.path for f in view.files}
    assert got == {
        "docx/index": roots["global_agents_skills"] / "docx" / "SKILL.md",
        "pdf/index": roots["agents_skills"] / "pdf" / "SKILL.md",
    }
    assert dict(view.agents_namespaces) == {
        "pdf": roots["agents_skills"], "taken": roots["agents_skills"],
        "local-taken": roots["agents_skills"], "docx": roots["global_agents_skills"],
    }


def test_filter_applies_before_agent_skills_are_appended(settings: Settings, roots: dict[str, Path]) -> None:
    for rel in ["shell/index.md", "database/index.md", "directory/index.md", "iii/index.md",
                "index.md", "pdf/copy.md", "acme/team/flow.md", "acme/other/flow.md"]:
        write(roots["skills"], rel)
    write(roots["agents_skills"], "pdf/SKILL.md")
    write(roots["agents_skills"], "ghost/SKILL.md")
    write(roots["project"], "kits.lock", "version: 1\nkits:\n  acme/team: {}\n")
    on = settings.model_copy(update={"filter_unregistered": True})
    assert sorted(view_ids(on, frozenset({"shell"}))) == [
        "acme/team/flow", "directory/index", "ghost/index", "iii/index", "index", "pdf/copy",
        "shell/index",
    ]
    assert "database/index" in view_ids(on, None)
    assert "database/index" in view_ids(settings, frozenset())


def test_kit_override_shadows_only_that_kit(settings: Settings, roots: dict[str, Path]) -> None:
    write(roots["project"], "kits.lock", "version: 1\nkits:\n  acme/a: {}\n  acme/b: {}\n")
    write(roots["skills"], "acme/a/flow.md")
    write(roots["skills"], "acme/a/other.md")
    write(roots["skills"], "acme/b/flow.md")
    write(roots["local"], "acme/a/flow.md")
    assert view_ids(settings) == {
        "acme/a/flow": Origin.LOCAL,
        "acme/b/flow": Origin.SKILLS,
    }


def test_nested_default_local_root(roots: dict[str, Path]) -> None:
    settings = Settings(skills_folder=str(roots["skills"]), local_skills_folder=str(roots["skills"] / "iii"),
                        agents_skills_folder=str(roots["agents_skills"]), filter_unregistered=False)
    write(roots["skills"], "iii/index.md")
    write(roots["skills"], "iii/shell/index.md")
    write(roots["skills"], "shell/index.md")
    write(roots["skills"], "shell/exec.md")
    assert view_ids(settings) == {
        "index": Origin.LOCAL,
        "shell/index": Origin.LOCAL,
        "iii/index": Origin.SKILLS,
        "iii/shell/index": Origin.SKILLS,
    }


def test_kit_install_dir_inside_the_local_root_is_not_an_override(roots: dict[str, Path]) -> None:
    settings = Settings(skills_folder=str(roots["skills"]), local_skills_folder=str(roots["skills"] / "iii"),
                        agents_skills_folder=str(roots["agents_skills"]), filter_unregistered=False)
    write(roots["project"], "kits.lock", "version: 1\nkits:\n  iii/team: {}\n")
    write(roots["skills"], "iii/team/flow.md")
    write(roots["skills"], "team/index.md")
    got = view_ids(settings)
    assert got == {"iii/team/flow": Origin.SKILLS, "team/index": Origin.SKILLS}


def test_lookup_and_display_ids(settings: Settings, roots: dict[str, Path]) -> None:
    for rel in ["sandbox/index.md", "resend/emails/index.md", "lit.md", "lit/index.md", "index.md",
                "solo/exec.md"]:
        write(roots["skills"], rel)
    view = build_view(settings, None)
    assert view.lookup("sandbox").id == "sandbox/index"
    assert view.lookup("sandbox/index").id == "sandbox/index"
    assert view.lookup("resend/emails").id == "resend/emails/index"
    assert view.lookup("lit").id == "lit"
    assert view.lookup("sandbox/exec") is None
    assert view.lookup("solo") is None
    assert view.display_id("sandbox/index") == "sandbox"
    assert view.display_id("lit/index") == "lit/index"
    assert view.display_id("index") == "index"
    assert view.display_id("resend/emails/index") == "resend/emails"


def test_visibility_is_reported(settings: Settings) -> None:
    view = build_view(settings.model_copy(update={"filter_unregistered": True}), frozenset({"x"}))
    assert view.visibility == Visibility(True, frozenset({"x"}), frozenset(), frozenset())
