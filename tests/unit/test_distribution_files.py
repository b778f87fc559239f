"""Every file MANIFEST.in names exists, and the licence the metadata declares ships as text."""

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
