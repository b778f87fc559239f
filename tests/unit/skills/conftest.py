"""Fixtures for the skills tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.port import StandaloneEngine

from .helpers import PeerEngine


@pytest.fixture
def roots(roots: dict[str, Path]) -> dict[str, Path]:
    """The shared roots with the local override root beside `skills_folder` instead of inside
    it, so each test sees one copy of a local file (the nested default has its own test)."""
    roots["local"] = roots["project"] / "local-skills"
    return roots


@pytest.fixture
def peer() -> PeerEngine:
    return PeerEngine()


@pytest.fixture
def make_directory(settings: Settings) -> Callable[..., Directory]:
    """A Directory over the test roots with some settings overridden and an engine of choice."""

    def make(engine: Any = None, **overrides: Any) -> Directory:
        return Directory(
            settings=settings.model_copy(update=overrides), engine=engine or StandaloneEngine()
        )

    return make
