"""L3: the Directory page in headless Chromium against the real worker (console-ui.md §5.5–§5.12).

This test starts the in-process engine, the console stand-in, the worker (`iii-directory serve`
in-process, watching a temporary copy of `ui/dist`), the fake Compose and kanban peers, the
loopback kit registry and the harness server, then runs the playwright-core scenarios
(`e2e/directory.e2e.mjs`) with node. Screenshots land in `test-artifacts/console-ui/` at the
repository root (or `III_UI_ARTIFACTS`).

Locally the test is skipped, naming what is missing, when Chromium, node or the npm packages are
absent; with `CI` set (and not `0` / `false`) a missing prerequisite fails it instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from kitfake import KitCatalog, KitVersion, team_v1, team_v11
from wire_harness import WORKER_BOOT_TIMEOUT_S, fast_worker, wait_registered

from iii_directory.config import Settings, config_id
from iii_directory.kits.service import KitsService
from iii_directory.testing.console import ConsoleStandIn
from iii_directory.testing.engine import TestEngine
from iii_directory.testing.registry import MockRegistry
from iii_directory.ui.assets import ASSETS, WATCH_ENV, packaged_dir

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from harness_server import HarnessServer  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("III_UI_ARTIFACTS") or REPO / "test-artifacts" / "console-ui")
COMPOSE_POLL_S = 0.1
"""The apply's Compose operation polling in the fixture (the worker's default is longer)."""


def missing_prerequisites() -> list[str]:
    missing = []
    if not CHROMIUM.exists():
        missing.append("/usr/bin/chromium (apt-get install -y chromium)")
    if shutil.which("node") is None:
        missing.append("node")
    if not (HERE / "node_modules" / "playwright-core").is_dir():
        missing.append("tests/ui/node_modules (bash tests/ui/setup.sh)")
    if not (HERE / "harness" / ".vendor" / "react.js").is_file():
        missing.append("tests/ui/harness/.vendor (node tests/ui/harness/build-vendor.mjs)")
    return missing


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def require_prerequisites() -> None:
    missing = missing_prerequisites()
    if not missing:
        return
    message = "browser prerequisites missing: " + ", ".join(missing)
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


# ------------------------------------------------------------------ fixtures (§5.9)

SCRIBE = "---\nname: Scribe\ndescription: Takes notes\n---\nYou take notes.\n"
REVIEWER_LOCAL = "---\nname: Reviewer\ndescription: Reviews changes by hand\n---\nYou review code written in this project.\n"
HOWTO = "# Notes how-to\n\nKeep short notes in one place and link them from the tickets.\n"
PDF = "# PDF tools\n\nRead PDF files page by page.\n"
"""A skill another tool installed in the read-only agent-skills root (issue 21 §6)."""


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "agents").mkdir(parents=True)
    (project / "skills" / "notes").mkdir(parents=True)
    (project / "agents" / "reviewer.md").write_text(REVIEWER_LOCAL)
    (project / "agents" / "scribe.md").write_text(SCRIBE)
    (project / "skills" / "notes" / "howto.md").write_text(HOWTO)
    (project / ".agents" / "skills" / "pdf").mkdir(parents=True)
    (project / ".agents" / "skills" / "pdf" / "SKILL.md").write_text(PDF)
    (project / "worker-compose.yaml").write_text("containers: {}\n")
    return project


def team_v12() -> KitVersion:
    """1.1.0 with one more line in the planner's prompt (§5.9)."""
    release = team_v11()
    release.version = "1.2.0"
    release.files["agents/planner.md"] += "You keep tickets small.\n"
    release.notes = "Smaller tickets."
    return release


RELEASES = {"1.1.0": team_v11, "1.2.0": team_v12}


def mirror_compose(project: Path, containers: dict[str, dict[str, Any]]) -> None:
    """Write the fake Compose's containers into the project's compose file and lock, so later
    plans see the workers declared (§5.9)."""
    resolved = {"kanban": "1.6.1", "github": "2.0.3"}
    declared = ["containers:"] + [f"  {n}:\n    worker: {n}\n    version: \"{row.get('version') or '*'}\""
                                  for n, row in sorted(containers.items())]
    locked = ["containers:"] + [f"  {n}:\n    resolved:\n      version: {resolved.get(n, '1.0.0')}" for n in sorted(containers)]
    (project / "worker-compose.yaml").write_text("\n".join(declared) + "\n" if containers else "containers: {}\n")
    (project / "worker-compose.lock").write_text("\n".join(locked) + "\n")


async def test_click_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_prerequisites()
    project = make_project(tmp_path)
    home = tmp_path / "home"
    (home / ".iii" / "agents").mkdir(parents=True)
    watched = tmp_path / "ui-watch"
    shutil.copytree(packaged_dir(), watched)
    for name in ("III_CONFIG_NAME", "III_NAMESPACE", "III_WORKER_NAME", "III_TOKEN", "III_CONFIG", "III_COMPOSE_DIR",
                 "III_COMPOSE_NAMESPACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("III_COMPOSE_FILE", str(project / "worker-compose.yaml"))
    monkeypatch.setenv(WATCH_ENV, str(watched))
    monkeypatch.chdir(project)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for stale in [*ARTIFACTS.glob("failure-*.png"), ARTIFACTS / "page.html", ARTIFACTS / "bridge-calls.json"]:
        stale.unlink(missing_ok=True)

    with MockRegistry() as registry:
        catalog = KitCatalog(registry)
        catalog.publish("acme/team", team_v1())
        settings = Settings(
            skills_folder=str(project / "skills"), agents_folder=str(project / "agents"),
            global_agents_folder=str(home / ".iii" / "agents"), local_skills_folder=str(project / "skills" / "iii"),
            agents_skills_folder=str(project / ".agents" / "skills"),
            filter_unregistered=False, auto_download=False, registry_url=registry.url, function_search_mode="lexical",
        )
        async with TestEngine(functions_debounce_s=0.05, namespace_grace_s=1.0) as engine, ConsoleStandIn(engine) as console:
            engine.configuration.put(config_id(), settings.model_dump(mode="json"))
            compose = engine.install_compose()
            compose.failure_detail = "image pull failed"
            original_operation = compose.operation

            async def operation(data: Any) -> Any:
                reply = await original_operation(data)
                if reply.get("status") == "succeeded":
                    mirror_compose(project, compose.containers)
                elif reply.get("status") == "running":
                    added = compose.calls_to("compose::add")[-1:]
                    names = [str(w.get("worker")) for call in added for w in call.get("workers") or []]
                    reply["last_event"] = {"detail": " ".join(["pulling", *names])}
                return reply

            engine.add_function("compose::operation", operation, worker_name="compose")
            for fn, text in (("kanban::ticket::create", "Create a ticket on the kanban board."),
                             ("kanban::ticket::list", "List the tickets of a board column.")):
                async def handler(data: Any, fn: str = fn) -> Any:
                    return {"ok": True, "function": fn}
                engine.add_function(fn, handler, worker_name="kanban", description=text)

            async def set_compose(body: dict[str, Any]) -> Any:
                compose.outcome = "failed" if body.get("mode") == "fail" else "succeeded"
                compose.polls_until_done = int(int(body.get("delay_ms") or 0) / 1000 / COMPOSE_POLL_S)
                return {"ok": True}

            async def publish(body: dict[str, Any]) -> Any:
                catalog.publish(str(body.get("kit") or "acme/team"), RELEASES[str(body.get("version"))]())
                return {"ok": True}

            worker = fast_worker(engine.url)
            async with anyio.create_task_group() as tg:
                tg.start_soon(worker.run)
                with anyio.fail_after(WORKER_BOOT_TIMEOUT_S):
                    await worker.ready.wait()
                await wait_registered(engine, worker)
                assert worker.directory is not None
                worker.directory.service(KitsService).poll_interval_s = COMPOSE_POLL_S
                await engine.wait_for(lambda: len(console.assets) == len(ASSETS), timeout=10)
                running = {"worker": worker}

                async def stop_worker(body: dict[str, Any]) -> Any:
                    running["worker"].stop()
                    await engine.wait_for(lambda: not console.assets, timeout=10)
                    return {"ok": True}

                async def start_worker(body: dict[str, Any]) -> Any:
                    again = fast_worker(engine.url)
                    tg.start_soon(again.run)
                    with anyio.fail_after(WORKER_BOOT_TIMEOUT_S):
                        await again.ready.wait()
                    await wait_registered(engine, again)
                    assert again.directory is not None
                    again.directory.service(KitsService).poll_interval_s = COMPOSE_POLL_S
                    await engine.wait_for(lambda: len(console.assets) == len(ASSETS), timeout=10)
                    running["worker"] = again
                    return {"ok": True}

                server = HarnessServer(console, project, {"compose": set_compose, "registry/publish": publish,
                                                          "worker/stop": stop_worker, "worker/start": start_worker})
                await tg.start(server.run)
                print(f"[harness] {server.url}  engine {engine.url}  registry {registry.url}  console {console.url}")
                env = dict(os.environ, III_UI_HARNESS_URL=server.url, III_UI_ARTIFACTS=str(ARTIFACTS),
                           III_UI_PROJECT=str(project), III_UI_WATCH=str(watched))
                # III_UI_SCENARIOS=<regex> runs only the matching scenarios (S1 and what they build on must match).
                only = [f"--test-name-pattern={os.environ['III_UI_SCENARIOS']}"] if os.environ.get("III_UI_SCENARIOS") else []
                result = await anyio.run_process(
                    ["node", "--test", *only, "--test-reporter=spec", str(HERE / "e2e" / "directory.e2e.mjs")],
                    env=env, check=False, stderr=subprocess.STDOUT)
                output = result.stdout.decode("utf-8", "replace")
                (ARTIFACTS / "node-output.log").write_text(output)
                print(output)
                running["worker"].stop()
                tg.cancel_scope.cancel()
    failures = sorted(p.name for p in ARTIFACTS.glob("failure-*.png"))
    assert result.returncode == 0, (
        f"browser scenarios failed; artefacts in {ARTIFACTS}: {', '.join(failures)} browser-console.log, "
        f"bridge-calls.json, page.html\n{output[-6000:]}")


@pytest.mark.parametrize(("ci", "outcome"), [("1", pytest.fail.Exception), ("true", pytest.fail.Exception),
                                             ("", pytest.skip.Exception), ("0", pytest.skip.Exception),
                                             ("false", pytest.skip.Exception)])
def test_missing_prerequisites_fail_in_ci_and_skip_locally(monkeypatch: pytest.MonkeyPatch, ci: str,
                                                           outcome: type[BaseException]) -> None:
    monkeypatch.setattr(sys.modules[__name__], "missing_prerequisites", lambda: ["/usr/bin/chromium"])
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="browser prerequisites missing: /usr/bin/chromium"):
        require_prerequisites()
