"""The start-up sweep of staging files through the engine protocol (issue 33, item 4): a worker
served against the test engine removes the stale `<name>.<ext>.tmp` files a killed write left in
the global agents folder and in the agent-skills roots, keeps fresh ones, and still serves the
profile and the skill beside them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iii_directory.config import Settings
from iii_directory.testing.client import TestClient
from wire_harness import running_worker

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]

ANCIENT = 1_000_000.0
"""An mtime in 1970: older than any staging age threshold on the real clock."""


def plant(path: Path, content: str, *, stale: bool) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    if stale:
        os.utime(path, (ANCIENT, ANCIENT))
    return path


async def test_serve_sweeps_global_agent_and_agent_skill_staging_files(
        settings: Settings, roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    profile = "---\nname: Scribe\ndescription: Takes notes.\n---\nYou take notes.\n"
    plant(roots["global_agents"] / "scribe.md", profile, stale=False)
    skill = "---\nname: pdf\ndescription: Read PDF files.\n---\n# PDF\n\nUse a reader.\n"
    plant(roots["agents_skills"] / "pdf" / "SKILL.md", skill, stale=False)
    torn_profile = plant(roots["global_agents"] / "scribe.md.tmp", "---\nname: Scr", stale=True)
    torn_skill = plant(roots["agents_skills"] / "pdf" / "SKILL.md.tmp", "# PD", stale=True)
    torn_user_skill = plant(roots["global_agents_skills"] / "git" / "SKILL.md.tmp", "# G", stale=True)
    fresh = plant(roots["global_agents"] / "other.md.tmp", "being written", stale=False)

    async with running_worker(settings, monkeypatch) as (_engine, _worker, client):
        assert isinstance(client, TestClient)
        got = await client.call("directory::agents::get", {"id": "scribe"}, timeout=10.0)
        assert got["name"] == "Scribe"
        listed = await client.call("directory::skills::list", {}, timeout=10.0)
        assert "pdf" in str(listed)

    assert not torn_profile.exists() and not torn_skill.exists() and not torn_user_skill.exists()
    assert fresh.exists()
    assert (roots["global_agents"] / "scribe.md").read_text() == profile
