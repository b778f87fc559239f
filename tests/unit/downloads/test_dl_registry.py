"""Registry downloads through the function table (surfaces.md §9.1, §9.3–9.5; §15.2 registry
download scenarios) against a real loopback registry."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.port import StandaloneEngine
from iii_directory.testing.registry import MockRegistry

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

Tree = Callable[[Path], dict[str, str]]


def publish_resend(registry: MockRegistry, version: str = "1.2.3") -> None:
    registry.add_worker("resend", version=version, skills={
        "skills/index.md": "router body",
        "skills/emails/send-email.md": "leaf body",
    }, prompts=[{"path": "prompts/send-email.md", "content": "ignored"}])


async def test_registry_download_writes_files_marker_and_events(
        dl_directory: Directory, dl_engine: StandaloneEngine, registry: MockRegistry,
        roots: dict[str, Path], tree: Tree) -> None:
    publish_resend(registry)
    out = await dl_directory.invoke("directory::skills::download",
                                    {"worker": "resend", "version": "1.2.3"})
    assert out == {
        "namespace": "resend",
        "skills_written": ["index.md", "emails/send-email.md"],
        "system_prompts_written": [],
        "agents_written": [],
        "agents_skipped": [],
        "source": {"kind": "registry", "worker": "resend", "version": "1.2.3"},
    }
    assert registry.requests[-1].path == "/w/resend/skills"
    assert registry.requests[-1].query == {"version": "1.2.3"}
    assert registry.requests[-1].headers["user-agent"].startswith("iii-directory/")
    files = tree(roots["skills"] / "resend")
    assert files["index.md"] == "router body"
    assert files["emails/send-email.md"] == "leaf body"
    assert not (roots["skills"] / "resend" / "prompts").exists()
    marker = json.loads(files[".iii-skill-complete"])
    assert marker == {"worker": "resend", "source": "registry", "tag_or_version": "1.2.3",
                      "schema": 2, "version": "1.2.3"}
    assert dl_engine.emitted == [("directory::skills::on-change",
                                  {"op": "download", "namespace": "resend", "source": "registry"})]


async def test_tag_and_default_latest_travel_as_version(dl_directory: Directory,
                                                        registry: MockRegistry,
                                                        roots: dict[str, Path]) -> None:
    registry.set("/w/tagged/skills?version=latest",
                 json={"skills": [{"path": "skills/index.md", "content": "tagged"}]})
    out = await dl_directory.invoke("directory::skills::download_from_registry",
                                    {"worker": "tagged", "tag": "latest"})
    assert out["source"] == {"kind": "registry", "worker": "tagged", "tag": "latest"}
    assert (roots["skills"] / "tagged" / "index.md").read_text() == "tagged"
    registry.set("/w/plain/skills?version=latest",
                 json={"skills": [{"path": "skills/index.md", "content": "default-latest"}]})
    out = await dl_directory.invoke("directory::skills::download_from_registry",
                                    {"worker": "plain"})
    assert out["source"] == {"kind": "registry", "worker": "plain", "tag": "latest"}
    assert (roots["skills"] / "plain" / "index.md").read_text() == "default-latest"
    marker = json.loads((roots["skills"] / "plain" / ".iii-skill-complete").read_text())
    assert marker["tag_or_version"] == "latest" and "version" not in marker


async def test_repull_overwrites_file_by_file_and_keeps_siblings(
        dl_directory: Directory, registry: MockRegistry, roots: dict[str, Path]) -> None:
    publish_resend(registry)
    await dl_directory.invoke("directory::skills::download_from_registry", {"worker": "resend"})
    mine = roots["skills"] / "resend" / "my-notes.md"
    mine.write_text("mine")
    registry.add_worker("resend", version="1.3.0",
                        skills={"skills/index.md": "router v2"})
    await dl_directory.invoke("directory::skills::download_from_registry", {"worker": "resend"})
    assert (roots["skills"] / "resend" / "index.md").read_text() == "router v2"
    assert (roots["skills"] / "resend" / "emails" / "send-email.md").read_text() == "leaf body"
    assert mine.read_text() == "mine"


async def test_agents_and_system_prompts(dl_directory: Directory, dl_engine: StandaloneEngine,
                                         registry: MockRegistry, roots: dict[str, Path]) -> None:
    profile = "---\nname: Mailer\ndescription: sends\n---\nYou send mail.\n"
    registry.add_worker("mailer", skills={
        "skills/index.md": "# Mailer",
        "skills/system-prompts/mail-voice.md": "---\ndescription: voice\n---\nBe brief.\n",
        "agents/mail-bot.md": profile,
        "agents/owned.md": "kit owns me",
    })
    (roots["project"] / "kits.lock").write_text(
        "# kits.lock\nversion: 1\nkits:\n  acme/team:\n    requested: latest\n    version: 1.0.0\n"
        "    installed_at: 2026-01-01T00:00:00Z\n    files:\n      agents/owned.md:\n"
        "        sha256: abc\n")
    out = await dl_directory.invoke("directory::skills::download", {"worker": "mailer"})
    assert out["skills_written"] == ["index.md"]
    assert out["system_prompts_written"] == ["mail-voice"]
    assert out["agents_written"] == ["mail-bot"]
    assert out["agents_skipped"] == [{"id": "owned", "owned_by": "acme/team"}]
    assert (roots["agents"] / "mail-bot.md").read_text() == profile
    assert not (roots["agents"] / "owned.md").exists()
    marker = json.loads((roots["skills"] / "mailer" / ".iii-skill-complete").read_text())
    assert marker["agents"] == {"mail-bot": hashlib.sha256(profile.encode()).hexdigest()}
    assert [event for event, _ in dl_engine.emitted] == [
        "directory::skills::on-change", "directory::system-prompts::on-change",
        "directory::agents::on-change"]


async def test_404_is_d310_without_url_or_status(dl_directory: Directory, registry: MockRegistry,
                                                 roots: dict[str, Path]) -> None:
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download",
                                  {"worker": "missing", "version": "1.2.3"})
    assert info.value.code == "D310"
    assert info.value.message == (
        'D310 not_found: registry worker "missing" has no published skills bundle. Next: call '
        "directory::registry::workers::list to browse worker names.")
    assert "404" not in info.value.message and registry.url not in info.value.message
    assert roots["skills"].is_dir()  # created first
    assert list(roots["skills"].iterdir()) == []


@pytest.mark.parametrize(("mode", "text"), [
    ("500", "D320 registry_error: registry returned HTTP 500. Next: retry shortly."),
    ("malformed", "D320 registry_error: could not decode the registry response."),
    ("truncated", "D320 registry_error: could not reach the registry. Next: retry shortly."),
    ("reset", "D320 registry_error: could not reach the registry. Next: retry shortly."),
])
async def test_registry_failures_write_nothing(dl_directory: Directory, registry: MockRegistry,
                                               roots: dict[str, Path], mode: str,
                                               text: str) -> None:
    publish_resend(registry)
    registry.fail("/w/resend/skills", mode)
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download_from_registry",
                                  {"worker": "resend"})
    assert info.value.code == "D320"
    assert info.value.message == text
    assert not (roots["skills"] / "resend").exists()


async def test_hanging_registry_times_out_within_the_bound(dl_directory: Directory,
                                                           dl_settings: Settings,
                                                           registry: MockRegistry,
                                                           roots: dict[str, Path]) -> None:
    registry.fail("/w/slow/skills", "hang")
    dl_directory.apply_settings(dl_settings.model_copy(update={"download_timeout_ms": 300}))
    started = time.monotonic()
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download_from_registry", {"worker": "slow"})
    assert info.value.code == "D320"
    assert time.monotonic() - started < 3.0
    assert not (roots["skills"] / "slow").exists()


@pytest.mark.parametrize("evil", [
    {"path": "skills/../../outside.md", "content": "x"},
    {"path": "/etc/cron.d/evil", "content": "x"},
    {"path": "skills/big.md", "content": "x" * 300_000},
])
async def test_malicious_bundle_writes_nothing(dl_directory: Directory, registry: MockRegistry,
                                               roots: dict[str, Path],
                                               evil: dict[str, str]) -> None:
    registry.set("/w/evil/skills", json={"skills": [
        {"path": "skills/index.md", "content": "looks fine"}, evil]})
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download", {"worker": "evil"})
    assert info.value.code == "invocation_failed"
    assert info.value.message.startswith(f'invalid skill path "{evil["path"]}": ')
    assert not (roots["skills"] / "evil").exists()
    assert not (roots["project"] / "outside.md").exists()


async def test_name_mismatch_and_bad_names(dl_directory: Directory,
                                           registry: MockRegistry) -> None:
    registry.add_worker("alias", bundle_name="other", skills={"skills/index.md": "x"})
    with pytest.raises(DirectoryError,
                       match='registry returned worker name "other", expected "alias"'):
        await dl_directory.invoke("directory::skills::download", {"worker": "alias"})
    registry.reset_requests()
    for name, message in [
        ("Shell", 'worker name must start with a lowercase ASCII letter or digit: "Shell"'),
        ("a/../b", "worker name may only contain lowercase letters, digits, '-', '_': \"a/../b\""),
        ("  ", "specify either {repo, skill, branch?} OR {worker, version?|tag?}"),
    ]:
        with pytest.raises(DirectoryError) as info:
            await dl_directory.invoke("directory::skills::download_from_registry",
                                      {"worker": name})
        assert info.value.message == message
    assert registry.requests == []


async def test_request_shape_errors(dl_directory: Directory) -> None:
    with pytest.raises(DirectoryError, match='field "worker": is required'):
        await dl_directory.invoke("directory::skills::download_from_registry", {})
    with pytest.raises(DirectoryError, match='field "worker": expected a string'):
        await dl_directory.invoke("directory::skills::download", {"worker": 5})
    with pytest.raises(DirectoryError, match="not both"):
        await dl_directory.invoke("directory::skills::download",
                                  {"repo": "https://h/r", "skill": "s", "worker": "w"})
