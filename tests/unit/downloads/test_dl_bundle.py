"""Routing and staging of registry bundles and repo trees (surfaces.md §9.2–9.3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iii_directory.content.roots import Kind
from iii_directory.errors import DirectoryError
from iii_directory.sources import bundle
from iii_directory.sources.bundle import (
    DownloadResult,
    apply_plan,
    plan_registry_bundle,
    plan_repo_tree,
)
from iii_directory.content.markers import (
    CompletionMarker,
    all_markers,
    has_marker,
    parse_marker,
    read_marker,
    write_marker,
)


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    return tmp_path / "skills"


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    return tmp_path / "agents"


def entries(files: dict[str, str]) -> dict[str, object]:
    return {"skills": [{"path": p, "content": c} for p, c in files.items()]}


def plan(payload: object, skills: Path, agents: Path, owned: dict[str, str] | None = None,
         worker: str = "resend") -> bundle.DownloadPlan:
    return plan_registry_bundle(payload, worker, skills, agents, owned or {})


def test_registry_routing_table(skills: Path, agents: Path) -> None:
    payload = {"name": "resend", "version": "1.2.3", "skills": [
        {"path": "skills/index.md", "content": "router body"},
        {"path": "skills/emails/send-email.md", "content": "leaf body"},
        {"path": "skills/emails/diagram.png", "content": "png?"},
        {"path": "skills/system-prompts/mailer.md", "content": "---\ndescription: m\n---\nB"},
        {"path": "skills/prompts/old.md", "content": "ignored"},
        {"path": "agents/mailer.md", "content": "---\nname: Mailer\n---\n"},
        {"path": "agents/Bad-Id.md", "content": "skipped silently"},
        {"path": "agents/deep/nested.md", "content": "nested agents are skipped"},
        {"path": "notes/agents/x.md", "content": "agent-classified, skipped"},
        {"path": "skills/skills/double.md", "content": "one prefix only"},
    ], "prompts": [{"path": "x.md", "content": "ignored array"}]}
    planned = plan(payload, skills, agents)
    result = DownloadResult.from_plan(planned, {"kind": "registry", "worker": "resend",
                                                "tag": "latest"})
    assert result.skills_written == ["index.md", "emails/send-email.md", "emails/diagram.png",
                                     "skills/double.md"]
    assert result.system_prompts_written == ["mailer"]
    assert result.agents_written == ["mailer"]
    assert result.agents_skipped == []
    targets = {f.target for f in planned.files}
    assert skills / "resend" / "index.md" in targets
    assert skills / "resend" / "skills" / "double.md" in targets
    assert agents / "mailer.md" in targets
    assert not skills.exists()  # planning writes nothing
    apply_plan(planned, None)
    assert (skills / "resend" / "emails" / "send-email.md").read_text() == "leaf body"
    assert (agents / "mailer.md").read_text().startswith("---\nname: Mailer")
    assert not (skills / "resend" / "prompts").exists()
    assert not (skills / "resend" / "agents").exists()


def test_skill_md_drops_stale_index(skills: Path, agents: Path) -> None:
    planned = plan(entries({"skills/SKILL.md": "new", "skills/index.md": "stale",
                            "skills/a/index.md": "kept"}), skills, agents)
    assert [f.report for f in planned.files] == ["SKILL.md", "a/index.md"]


def test_kit_owned_agents_are_skipped(skills: Path, agents: Path) -> None:
    planned = plan(entries({"agents/reviewer.md": "r", "agents/pm.md": "p"}), skills, agents,
                   owned={"reviewer": "acme/team"})
    assert planned.reported(Kind.AGENT) == ["pm"]
    assert planned.agents_skipped == [{"id": "reviewer", "owned_by": "acme/team"}]
    assert set(planned.agent_hashes) == {"pm"}


@pytest.mark.parametrize(("path", "reason"), [
    ("skills/../../etc/passwd", "path may not contain '..'"),
    ("/etc/passwd", "path may not be absolute"),
    ("skills/C:/x.md", "prefix or root"),
    ("", "path must be non-empty"),
    ("skills/.", "path resolved to empty"),
])
def test_malicious_paths_refuse_the_whole_bundle(skills: Path, agents: Path, path: str,
                                                 reason: str) -> None:
    payload = {"skills": [{"path": "skills/index.md", "content": "fine"},
                          {"path": path, "content": "evil"}]}
    with pytest.raises(DirectoryError) as info:
        plan(payload, skills, agents)
    assert info.value.message.startswith(f'invalid skill path "{path}": ')
    assert reason in info.value.message


def test_oversized_and_too_many_files(skills: Path, agents: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    big = "x" * (bundle.MAX_MARKDOWN_BYTES + 1)
    with pytest.raises(DirectoryError, match=r"file is too large \(262145 bytes; max 262144\)"):
        plan(entries({"skills/big.md": big}), skills, agents)
    # a non-markdown file has the larger cap
    assert plan(entries({"skills/big.txt": big}), skills, agents).files
    monkeypatch.setattr(bundle, "MAX_FILES", 3)
    many = {"skills": [{"path": f"skills/f{i}.md", "content": "x"} for i in range(4)]}
    with pytest.raises(DirectoryError, match="too many files"):
        plan(many, skills, agents)


def test_destination_symlink_out_of_the_root_is_refused(skills: Path, agents: Path,
                                                        tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (skills / "resend").mkdir(parents=True)
    os.symlink(outside, skills / "resend" / "emails")
    with pytest.raises(DirectoryError, match="resolves outside"):
        plan(entries({"skills/emails/send.md": "x"}), skills, agents)
    assert list(outside.iterdir()) == []


def test_file_directory_clash_is_refused(skills: Path, agents: Path) -> None:
    (skills / "resend" / "emails").mkdir(parents=True)
    with pytest.raises(DirectoryError, match="is a directory"):
        plan(entries({"skills/emails": "x"}), skills, agents)
    (skills / "resend" / "file").write_text("x")
    with pytest.raises(DirectoryError, match="is not a directory"):
        plan(entries({"skills/file/below.md": "x"}), skills, agents)


def test_name_mismatch_and_shapes(skills: Path, agents: Path) -> None:
    with pytest.raises(DirectoryError) as info:
        plan({"name": "other", "skills": []}, skills, agents)
    assert info.value.message == 'registry returned worker name "other", expected "resend"'
    for bad in ([], {"skills": "nope"}, {"skills": [{"content": "x"}]},
                {"skills": [{"path": "a.md", "content": 5}]}):
        with pytest.raises(DirectoryError) as info:
            plan(bad, skills, agents)
        assert info.value.code == "D320"
    empty = plan({"skills": None}, skills, agents)
    assert empty.files == []


def test_events_one_per_kind() -> None:
    result = DownloadResult("ns", ["a.md"], [], ["x"], [], {"kind": "repo"})
    assert result.events() == [
        ("directory::skills::on-change", {"op": "download", "namespace": "ns", "source": "repo"}),
        ("directory::agents::on-change", {"op": "download", "namespace": "ns", "source": "repo"}),
    ]
    assert DownloadResult("ns", [], [], [], [], {"kind": "registry"}).events() == []


# -- repo trees ------------------------------------------------------------------------------


def make_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_repo_tree_routing(tmp_path: Path, skills: Path) -> None:
    source = tmp_path / "clone" / "skills" / "fe"
    make_tree(source, {
        "index.md": "i", "components.md": "c", "layouts/grid.md": "g", "logo.svg": "<svg/>",
        "prompts/p.md": "ignored", "agents/a.md": "ignored", "system-prompts/sp.md": "sp",
        ".hidden/x.md": "hidden", ".dotfile": "hidden",
    })
    os.symlink(source / "index.md", source / "alias.md")  # inside: skipped, not followed
    planned = plan_repo_tree(source, "fe", skills, "https://h/r")
    assert sorted(planned.reported(Kind.SKILL)) == [
        "components.md", "index.md", "layouts/grid.md", "logo.svg"]
    assert planned.reported(Kind.SYSTEM_PROMPT) == ["sp"]
    assert planned.reported(Kind.AGENT) == []


def test_repo_tree_symlink_out_refuses(tmp_path: Path, skills: Path) -> None:
    source = tmp_path / "clone" / "skills" / "fe"
    make_tree(source, {"index.md": "i"})
    os.symlink("/etc/passwd", source / "evil.md")
    with pytest.raises(DirectoryError, match="evil.md is a symbolic link pointing outside"):
        plan_repo_tree(source, "fe", skills, "https://h/r")


def test_repo_tree_oversized_file_refuses(tmp_path: Path, skills: Path) -> None:
    source = tmp_path / "clone" / "skills" / "fe"
    make_tree(source, {"index.md": "i", "huge.md": "x" * (bundle.MAX_MARKDOWN_BYTES + 10)})
    with pytest.raises(DirectoryError, match=r"huge.md is too large \(262154 bytes"):
        plan_repo_tree(source, "fe", skills, "https://h/r")


# -- markers ---------------------------------------------------------------------------------


def test_marker_schema_2_round_trip(skills: Path) -> None:
    marker = CompletionMarker("resend", "latest", version="1.2.3", agents={"mailer": "ab" * 32})
    path = write_marker(skills, marker)
    assert path == skills / "resend" / ".iii-skill-complete"
    text = path.read_text()
    assert text.startswith('{\n  "worker": "resend",\n  "source": "registry",\n'
                           '  "tag_or_version": "latest",\n  "schema": 2,\n  "version": "1.2.3"')
    assert read_marker(skills, "resend") == marker
    assert has_marker(skills, "resend")
    bare = CompletionMarker("x", "1.0.0")
    assert '"version"' not in bare.to_json() and '"agents"' not in bare.to_json()


def test_marker_schema_1_parses(skills: Path) -> None:
    old = parse_marker('{"worker":"old","source":"registry","tag_or_version":"latest","schema":1}')
    assert old == CompletionMarker("old", "latest", schema=1)
    assert parse_marker("not json") is None
    assert parse_marker('{"worker": 1}') is None
    write_marker(skills, CompletionMarker("b", "latest"))
    write_marker(skills, CompletionMarker("a", "1.0.0"))
    (skills / "c").mkdir()
    assert [m.worker for m in all_markers(skills)] == ["a", "b"]
    assert all_markers(skills / "missing") == []
