"""Every file MANIFEST.in names exists, the licence the metadata declares ships as text, and the
test extra needs no compiler."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def manifest_includes() -> list[str]:
    names: list[str] = []
    for line in (REPO / "MANIFEST.in").read_text(encoding="utf-8").splitlines():
        words = line.split()
        if words and words[0] == "include":
            names.extend(words[1:])
    return names


def test_every_file_manifest_in_includes_exists() -> None:
    names = manifest_includes()
    assert "LICENSE" in names
    assert [n for n in names if not (REPO / n).is_file()] == []


def test_the_declared_licence_ships_as_its_text() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    assert "LICENSE" in project["license-files"] and "NOTICE" in project["license-files"]
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text


def setup_list(name: str) -> list[str]:
    """A module-level list of requirement strings in setup.py, read without running it."""
    import ast

    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]  # type: ignore[attr-defined]
    raise AssertionError(f"setup.py has no list {name}")


def test_the_test_extra_installs_from_binary_wheels_alone() -> None:
    """hnswlib compiles C++ at install, so it stays behind its own `hnsw` extra; `.ci/run` adds it
    to test the HNSW path."""
    names = [r.split(">")[0].split("=")[0].split("<")[0].strip().lower() for r in setup_list("TEST")]
    assert "hnswlib" not in names
    assert any(r.startswith("hnswlib") for r in setup_list("HNSW"))
    assert "hnswlib" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
