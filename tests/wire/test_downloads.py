"""Downloads through the engine protocol, against a real loopback registry and real git
repositories served over HTTPS on loopback: every download function, its on-change fan-out,
error bodies with their codes, the `worker` binding of `directory::__on_worker_added` and the
boot reconcile."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from iii_directory.config import Settings
from iii_directory.functions.downloads import AutoDownloader
from iii_directory.port import EngineCallError
from iii_directory.testing.gitremote import GitRemote
from iii_directory.testing.registry import MockRegistry
from wire_checks import conforms, direct_loopback  # noqa: F401 - direct_loopback is autouse
from wire_checks import own_ops as own

pytestmark = [pytest.mark.wire, pytest.mark.timeout(90)]

SKILLS_EVENT = "directory::skills::on-change"
PROMPTS_EVENT = "directory::system-prompts::on-change"
AGENTS_EVENT = "directory::agents::on-change"


async def wait_until(predicate: Any, timeout: float = 15.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.05)


@pytest.fixture
def registry() -> Iterator[MockRegistry]:
    with MockRegistry() as server:
        yield server


@pytest.fixture
def remote(monkeypatch: pytest.MonkeyPatch) -> Iterator[GitRemote]:
    with GitRemote() as server:
        for key, value in server.env.items():
            monkeypatch.setenv(key, value)
        yield server


@pytest.fixture
def auto(request: pytest.FixtureRequest) -> bool:
    """Parametrise indirectly with `True` to boot the worker with `auto_download` on."""
    return bool(getattr(request, "param", False))


@pytest.fixture
def boot_delay(request: pytest.FixtureRequest) -> float:
    """Seconds before the boot reconcile starts; an hour (never, in practice) unless a test
    parametrises it indirectly."""
    return float(getattr(request, "param", 3600.0))


@pytest.fixture
def settings(settings: Settings, registry: MockRegistry, auto: bool, boot_delay: float,
             monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setattr(AutoDownloader, "RECONCILE_DELAY_S", boot_delay)
    monkeypatch.setattr(AutoDownloader, "BACKOFF_STEP_S", 0.05)
    return settings.model_copy(update={
        "registry_url": registry.url, "download_timeout_ms": 5000, "auto_download": auto})


def publish(registry: MockRegistry, name: str, **files: str) -> None:
    registry.add_worker(name, version="1.2.3", skills=files or {"skills/index.md": f"# {name}\n"})


# --- explicit downloads -----------------------------------------------------------------------


async def test_registry_download_and_fan_out(wire: Any, registry: MockRegistry,
                                             roots: dict[str, Path]) -> None:
    skills_events = wire.subscribe(SKILLS_EVENT)
    prompt_events = wire.subscribe(PROMPTS_EVENT)
    agent_events = wire.subscribe(AGENTS_EVENT)
    registry.add_worker("resend", version="1.2.3", skills={
        "skills/index.md": "router body",
        "skills/emails/send-email.md": "leaf body",
        "skills/system-prompts/mail-voice.md": "---\ndescription: Voice.\n---\nBe brief.\n",
        "agents/mailer.md": "---\nname: Mailer\ndescription: Sends mail.\n---\nYou send mail.\n",
    })
    out = await wire.call("directory::skills::download_from_registry",
                          {"worker": "resend", "version": "1.2.3"})
    conforms(wire, "directory::skills::download_from_registry", out)
    assert out == {
        "namespace": "resend",
        "skills_written": ["index.md", "emails/send-email.md"],
        "system_prompts_written": ["mail-voice"],
        "agents_written": ["mailer"],
        "agents_skipped": [],
        "source": {"kind": "registry", "worker": "resend", "version": "1.2.3"},
    }
    expected = {"op": "download", "namespace": "resend", "source": "registry"}
    for events in (skills_events, prompt_events, agent_events):
        await wait_until(lambda events=events: own(events))
    await anyio.sleep(0.5)
    assert own(skills_events) == [expected]
    assert own(prompt_events) == [expected]
    assert own(agent_events) == [expected]
    assert (roots["skills"] / "resend" / "emails" / "send-email.md").read_text() == "leaf body"
    assert (roots["agents"] / "mailer.md").is_file()
    marker = json.loads((roots["skills"] / "resend" / ".iii-skill-complete").read_text())
    assert marker["schema"] == 2 and marker["version"] == "1.2.3" and "mailer" in marker["agents"]
    # the downloaded content is served right away
    prompt = await wire.call("directory::system-prompts::get", {"name": "mail-voice"})
    assert prompt["body"] == "Be brief.\n"


async def test_flexible_download_from_the_registry_defaults_to_latest(
        wire: Any, registry: MockRegistry, roots: dict[str, Path]) -> None:
    registry.set("/w/plain/skills?version=latest",
                 json={"skills": [{"path": "skills/index.md", "content": "default-latest"}]})
    out = await wire.call("directory::skills::download", {"worker": "plain"})
    assert out["source"] == {"kind": "registry", "worker": "plain", "tag": "latest"}
    assert (roots["skills"] / "plain" / "index.md").read_text() == "default-latest"


async def test_repo_downloads(wire: Any, remote: GitRemote, roots: dict[str, Path]) -> None:
    events = wire.subscribe(SKILLS_EVENT)
    url = remote.create("skills-repo", {
        "skills/frontend-design/index.md": "# Frontend\n",
        "skills/frontend-design/components.md": "components\n",
        "skills/frontend-design/layouts/grid.md": "grid\n",
        "skills/frontend-design/prompts/ignored.md": "ignored\n",
    })
    out = await wire.call("directory::skills::download", {"repo": url, "skill": "frontend-design"})
    conforms(wire, "directory::skills::download", out)
    assert out["namespace"] == "frontend-design"
    assert sorted(out["skills_written"]) == ["components.md", "index.md", "layouts/grid.md"]
    assert out["source"] == {"kind": "repo", "repo": url, "skill": "frontend-design",
                             "branch": "main"}
    await wait_until(lambda: own(events))
    assert own(events)[0] == {"op": "download", "namespace": "frontend-design", "source": "repo"}
    remote.commit("skills-repo", {"skills/frontend-design/index.md": "# v2\n"})
    again = await wire.call("directory::skills::download_from_repo",
                            {"repo": url, "skill": "frontend-design", "branch": "main"})
    conforms(wire, "directory::skills::download_from_repo", again)
    assert again["skills_written"] == ["components.md", "index.md", "layouts/grid.md"]
    assert (roots["skills"] / "frontend-design" / "index.md").read_text() == "# v2\n"
    assert not (roots["skills"] / "frontend-design" / "prompts").exists()


async def test_repo_errors(wire: Any, remote: GitRemote, roots: dict[str, Path]) -> None:
    url = remote.create("errors-repo", {"skills/foo/index.md": "x\n"})
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::skills::download_from_repo",
                        {"repo": url, "skill": "missing-skill"})
    assert caught.value.code == "invocation_failed"
    assert "skills/missing-skill" in caught.value.message
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::skills::download",
                        {"repo": url, "skill": "foo", "branch": "no-such-branch"})
    assert caught.value.message.startswith("git clone --branch no-such-branch exited with 128")
    for dangerous in ("file:///etc", "ext::sh -c id", "--upload-pack=id", "http://127.0.0.1/x"):
        with pytest.raises(EngineCallError) as caught:
            await wire.call("directory::skills::download", {"repo": dangerous, "skill": "foo"})
        assert caught.value.code == "invocation_failed"
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::skills::download",
                        {"repo": url, "skill": "foo", "worker": "shell"})
    assert "not both" in caught.value.message
    assert not (roots["skills"] / "foo").exists()


async def test_malicious_repo_writes_nothing(wire: Any, remote: GitRemote,
                                             roots: dict[str, Path]) -> None:
    url = remote.create("evil-repo", {"skills/foo/index.md": "x\n"},
                        symlinks={"skills/foo/passwd.md": "/etc/passwd"})
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::skills::download_from_repo", {"repo": url, "skill": "foo"})
    assert "symbolic link pointing outside" in caught.value.message
    assert not (roots["skills"] / "foo").exists()


async def test_registry_errors_keep_their_codes(wire: Any, registry: MockRegistry,
                                                roots: dict[str, Path]) -> None:
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::skills::download", {"worker": "missing", "version": "1.2.3"})
    assert caught.value.code == "D310"
    assert caught.value.message.startswith(
        'D310 not_found: registry worker "missing" has no published skills bundle.')
    assert "404" not in caught.value.message and registry.url not in caught.value.message
    publish(registry, "flaky")
    registry.fail("/w/flaky/skills", "502")
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::skills::download_from_registry", {"worker": "flaky"})
    assert caught.value.code == "D320"
    assert caught.value.message == (
        "D320 registry_error: registry returned HTTP 502. Next: retry shortly.")
    registry.set("/w/evil/skills", json={"skills": [
        {"path": "skills/index.md", "content": "fine"},
        {"path": "skills/../../../escape.md", "content": "evil"}]})
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::skills::download_from_registry", {"worker": "evil"})
    assert caught.value.code == "invocation_failed"
    assert caught.value.message.startswith('invalid skill path "skills/../../../escape.md": ')
    assert not (roots["skills"] / "evil").exists() and not (roots["skills"] / "flaky").exists()


async def test_hanging_registry_answers_within_the_timeout(wire: Any, registry: MockRegistry,
                                                           settings: Settings,
                                                           roots: dict[str, Path]) -> None:
    registry.fail("/w/slow/skills", "hang")
    wire.directory.apply_settings(settings.model_copy(update={"download_timeout_ms": 400}))
    started = time.monotonic()
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::skills::download_from_registry", {"worker": "slow"})
    assert caught.value.code == "D320"
    assert time.monotonic() - started < 5.0
    assert not (roots["skills"] / "slow").exists()


# --- auto-download ----------------------------------------------------------------------------


async def test_no_worker_binding_without_auto_download(wire: Any) -> None:
    assert [b for b in wire.engine.bindings_of("worker")
            if b.function_id == "directory::__on_worker_added"] == []


@pytest.mark.parametrize("auto", [True], indirect=True)
async def test_worker_added_through_the_worker_trigger(wire: Any, registry: MockRegistry,
                                                       roots: dict[str, Path]) -> None:
    (binding,) = [b for b in wire.engine.bindings_of("worker")
                  if b.function_id == "directory::__on_worker_added"]
    assert binding.config == {"operations": ["add"], "stages": ["done"]}
    events = wire.subscribe(SKILLS_EVENT)
    publish(registry, "shell", **{"skills/index.md": "# Shell\n", "skills/exec.md": "exec\n"})
    ops = wire.engine.install_worker_ops()
    await wire_until_active(wire)
    ops.emit_add("shell", stage="started")  # filtered out by the binding config
    outcomes = await ops.emit_add("shell")
    assert outcomes == [{"ok": True}]
    assert (roots["skills"] / "shell" / "exec.md").read_text() == "exec\n"
    assert (roots["skills"] / "shell" / ".iii-skill-complete").is_file()
    assert registry.count("/w/shell/skills") == 1
    # directly, as well: unknown worker (404), invalid name, no name — all acknowledged
    for payload in ({"worker": "unknown"}, {"worker": "Bad Name"}, {}, {"worker": "shell"}):
        ack = await wire.call("directory::__on_worker_added", payload)
        assert conforms(wire, "directory::__on_worker_added", ack) == {"ok": True}
    listed = await wire.call("directory::skills::list", {"prefix": "shell/"})
    assert {row["id"] for row in listed["skills"]} >= {"shell", "shell/exec"}
    await anyio.sleep(0.5)
    assert own(events) == []  # auto-downloads fire no on-change events


async def wire_until_active(wire: Any) -> None:
    await wait_until(lambda: any(b.provider is not None for b in wire.engine.bindings_of("worker")
                                 if b.function_id == "directory::__on_worker_added"))


@pytest.mark.parametrize("auto", [True], indirect=True)
async def test_boot_reconcile(wire: Any, registry: MockRegistry, roots: dict[str, Path]) -> None:
    publish(registry, "iii", **{"skills/index.md": "# iii\n"})
    publish(registry, "shell")
    publish(registry, "database")
    publish(registry, "kept-local")
    (roots["local"] / "kept-local").mkdir(parents=True)
    compose = wire.engine.install_compose()
    compose.set_containers("shell", "database", "kept-local")
    installed = await wire.directory.service(AutoDownloader).reconcile()
    assert installed == ["iii", "database", "shell"]
    assert (roots["skills"] / "iii" / ".iii-skill-complete").is_file()
    assert not (roots["skills"] / "kept-local").exists()
    assert await wire.directory.service(AutoDownloader).reconcile() == []


@pytest.fixture
def early_registry(registry: MockRegistry) -> MockRegistry:
    """The registry with the engine bundle published before the worker boots."""
    publish(registry, "iii", **{"skills/index.md": "# iii\n", "skills/cli.md": "cli\n"})
    return registry


@pytest.mark.parametrize(("auto", "boot_delay"), [(True, 0.0)], indirect=True)
async def test_boot_reconcile_runs_by_itself_after_start(early_registry: MockRegistry,
                                                         wire: Any,
                                                         roots: dict[str, Path]) -> None:
    marker = roots["skills"] / "iii" / ".iii-skill-complete"
    await wait_until(marker.is_file)
    assert json.loads(marker.read_text())["worker"] == "iii"
    assert early_registry.requests[0].path == "/w/iii/skills"
    got = await wire.call("directory::skills::get", {"id": "iii"})
    assert got["id"] == "iii"
