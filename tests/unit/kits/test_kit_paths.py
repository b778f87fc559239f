"""Install paths, source paths, ids (kits.md §1.5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from iii_directory.config import Settings
from iii_directory.kits.paths import (
    disk_path,
    file_id,
    install_path_for,
    is_valid_install_path,
    sha256_hex,
    skill_id,
    source_path_for,
)


@pytest.mark.parametrize(
    ("source", "install"),
    [
        ("agents/planner.md", "agents/planner.md"),
        ("skills/tickets/flow.md", "skills/acme/kanban-team/tickets/flow.md"),
        ("skills/SKILL.md", "skills/acme/kanban-team/SKILL.md"),
        ("./skills/./a/b.md", "skills/acme/kanban-team/a/b.md"),
    ],
)
def test_round_trip(source: str, install: str) -> None:
    assert install_path_for(source, "acme", "kanban-team") == install
    assert is_valid_install_path(install)
    assert source_path_for(install) == source.replace("./", "")


@pytest.mark.parametrize("source", ["README.md", "agents/x/y.md", "kit.yaml", "../skills/a.md", "/etc/passwd"])
def test_not_installable(source: str) -> None:
    assert install_path_for(source, "acme", "team") is None


@pytest.mark.parametrize(
    "install",
    ["agents/../x.md", "agents/a/b.md", "skills/acme/x.md", "/etc/passwd", "agents/Bad.md",
     "skills/acme/kit/a.txt", "skills/acme/kit/../../../x.md", "agents/x.txt", "other/a/b/c.md",
     "agents/" + "a" * 65 + ".md", "C:/skills/a/b/c.md"],
)
def test_invalid_install_paths(install: str) -> None:
    assert not is_valid_install_path(install)


def test_valid_install_paths_and_rest() -> None:
    assert is_valid_install_path("skills/acme/kit/a/b.md")
    assert source_path_for("skills/acme/kit/a/b.md") == "skills/a/b.md"
    assert is_valid_install_path("agents/" + "a" * 64 + ".md")


@pytest.mark.parametrize(
    ("install", "expected"),
    [
        ("skills/acme/kanban-team/SKILL.md", "acme/kanban-team/index"),
        ("skills/acme/kanban-team/tickets/SKILL.md", "acme/kanban-team/tickets/index"),
        ("skills/acme/kanban-team/tickets/SKILLS.md", "acme/kanban-team/tickets/index"),
        ("skills/acme/kanban-team/tickets/flow.md", "acme/kanban-team/tickets/flow"),
        ("skills/acme/kanban-team/SKILL/x.md", "acme/kanban-team/SKILL/x"),
    ],
)
def test_skill_ids(install: str, expected: str) -> None:
    assert skill_id(install) == expected
    assert file_id(install) == expected


def test_agent_id_and_sha_vector() -> None:
    assert file_id("agents/planner.md") == "planner"
    assert sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_disk_paths_stay_inside_their_roots(settings: Settings, roots: dict[str, Path]) -> None:
    assert disk_path(settings, "agents/planner.md") == roots["agents"] / "planner.md"
    assert disk_path(settings, "skills/acme/team/a.md") == roots["skills"] / "acme" / "team" / "a.md"
    assert disk_path(settings, "skills/../../etc/passwd") is None
    outside = roots["project"] / "outside"
    outside.mkdir()
    roots["skills"].mkdir(parents=True)
    (roots["skills"] / "acme").symlink_to(outside)
    assert disk_path(settings, "skills/acme/team/a.md") is None
