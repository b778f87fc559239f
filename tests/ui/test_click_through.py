"""L3: the Directory page in headless Chromium against the real worker (console-ui.md §5.5–§5.12).

This test starts the in-process engine, the worker (`iii-directory serve` in-process, watching a
temporary copy of `ui/dist`), the fake Compose and kanban peers, the loopback kit registry and the
harness server, then runs the playwright-core scenarios (`e2e/directory.e2e.mjs`) with node.
Screenshots land in `tests/ui/artifacts/` (or `III_UI_ARTIFACTS`).
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "unit" / "kits"))
sys.path.insert(0, str(HERE))

from harness_server import HarnessServer  # noqa: E402
from kitfake import KitCatalog, team_v1, team_v11  # noqa: E402

from iii_directory.config import Settings, config_id  # noqa: E402
from iii_directory.kits.service import KitsService  # noqa: E402
from iii_directory.testing.engine import TestEngine  # noqa: E402
from iii_directory.testing.registry import MockRegistry  # noqa: E402
from iii_directory.ui.assets import WATCH_ENV, packaged_dir  # noqa: E402


def _wire_helpers() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("iii_ui_wire_conftest", HERE.parent / "wire" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_wire = _wire_helpers()
fast_worker, wait_registered = _wire.fast_worker, _wire.wait_registered

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("III_UI_ARTIFACTS") or HERE / "artifacts")


def _missing() -> list[str]:
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


def _require_prerequisites() -> None:
    missing = _missing()
    if not missing:
        return
    message = "browser prerequisites missing: " + ", ".join(missing)
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(message)
    pytest.skip(message)


SCRIBE = "---\nname: Scribe\ndescription: Takes notes\n---\nYou take notes.\n"
REVIEWER_LOCAL = "---\nname: Reviewer\ndescription: Reviews changes by hand\n---\nYou review code written in this project.\n"
HOWTO = "# Notes how-to\n\nKeep short notes in one place and link them from the tickets.\n"


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "agents").mkdir(parents=True)
    (project / "skills" / "notes").mkdir(parents=True)
    (project / "agents" / "reviewer.md").write_text(REVIEWER_LOCAL)
    (project / "agents" / "scribe.md").write_text(SCRIBE)
    (project / "skills" / "notes" / "howto.md").write_text(HOWTO)
    (project / "worker-compose.yaml").write_text("containers: {}\n")
    return project


def mirror_compose(project: Path, containers: dict[str, dict[str, Any]]) -> None:
    """Write the fake Compose's containers into the project's compose file and lock."""
    declared = ["containers:"] + [f"  {n}:\n    worker: {n}\n    version: \"{row.get('version') or '*'}\"" for n, row in sorted(containers.items())]
    resolved = {"kanban": "1.6.1", "github": "2.0.3"}
    locked = ["containers:"] + [f"  {n}:\n    resolved:\n      version: {resolved.get(n, '1.0.0')}" for n in sorted(containers)]
    (project / "worker-compose.yaml").write_text("\n".join(declared) + "\n" if containers else "containers: {}\n")
    (project / "worker-compose.lock").write_text("\n".join(locked) + "\n")


async def test_click_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _require_prerequisites()
    project = make_project(tmp_path)
    home = tmp_path / "home"
    (home / ".iii" / "agents").mkdir(parents=True)
    watched = tmp_path / "ui-watch"
    shutil.copytree(packaged_dir(), watched)
    for name in ("III_CONFIG_NAME", "III_NAMESPACE", "III_WORKER_NAME", "III_TOKEN", "III_CONFIG", "III_COMPOSE_DIR", "III_COMPOSE_NAMESPACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("III_COMPOSE_FILE", str(project / "worker-compose.yaml"))
    monkeypatch.setenv(WATCH_ENV, str(watched))
    monkeypatch.chdir(project)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    with MockRegistry() as registry:
        catalog = KitCatalog(registry)
        catalog.publish("acme/team", team_v1())
        settings = Settings(
            skills_folder=str(project / "skills"), agents_folder=str(project / "agents"),
            global_agents_folder=str(home / ".iii" / "agents"), local_skills_folder=str(project / "skills" / "iii"),
            agents_skills_folder=str(project / ".agents" / "skills"),
            filter_unregistered=False, auto_download=False, registry_url=registry.url, function_search_mode="lexical",
        )
        async with TestEngine(functions_debounce_s=0.05, namespace_grace_s=1.0) as engine:
            engine.configuration.put(config_id(), settings.model_dump(mode="json"))
            engine.install_console()
            compose = engine.install_compose()
            compose.failure_detail = "image pull failed"
            original_apply = compose.operation

            async def operation(data: Any) -> Any:
                reply = await original_apply(data)
                if reply.get("status") == "succeeded":
                    mirror_compose(project, compose.containers)
                elif reply.get("status") == "running":
                    reply["last_event"] = {"detail": "pulling"}
                return reply

            engine.add_function("compose::operation", operation, worker_name="compose")
            for fn, text in (("kanban::ticket::create", "Create a ticket on the kanban board."),
                             ("kanban::ticket::list", "List the tickets of a board column.")):
                async def handler(data: Any, fn: str = fn) -> Any:
                    return {"ok": True, "function": fn}
                engine.add_function(fn, handler, worker_name="kanban", description=text)

            async def set_compose(body: dict[str, Any]) -> Any:
                compose.outcome = "failed" if body.get("mode") == "fail" else "succeeded"
                compose.polls_until_done = int(int(body.get("delay_ms") or 0) / 100)
                return {"ok": True}

            async def publish(body: dict[str, Any]) -> Any:
                version = str(body.get("version"))
                releases = {"1.1.0": team_v11}
                catalog.publish(str(body.get("kit") or "acme/team"), releases[version]())
                return {"ok": True}

            worker = fast_worker(engine.url)
            async with anyio.create_task_group() as tg:
                tg.start_soon(worker.run)
                with anyio.fail_after(30):
                    await worker.ready.wait()
                await wait_registered(engine, worker)
                worker.directory.service(KitsService).poll_interval_s = 0.1
                server = HarnessServer(engine, project, {"compose": set_compose, "registry/publish": publish})
                await tg.start(server.run)
                with anyio.fail_after(10):
                    while len(server.assets) < 3:
                        await anyio.sleep(0.1)
                print(f"[harness] {server.url}  engine {engine.url}  registry {registry.url}")
                env = dict(os.environ, III_UI_HARNESS_URL=server.url, III_UI_ARTIFACTS=str(ARTIFACTS),
                           III_UI_PROJECT=str(project), III_UI_WATCH=str(watched))
                result = await anyio.run_process(["node", "--test", "--test-reporter=spec", str(HERE / "e2e" / "directory.e2e.mjs")],
                                                 env=env, check=False, stderr=subprocess.STDOUT)
                output = result.stdout.decode("utf-8", "replace")
                (ARTIFACTS / "node-output.log").write_text(output)
                worker.stop()
                tg.cancel_scope.cancel()
    assert result.returncode == 0, f"browser scenarios failed (artefacts in {ARTIFACTS}):\n{output[-6000:]}"
