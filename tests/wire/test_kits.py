"""Kits through the engine protocol: every `directory::kits::*` function and
`directory::download-kit` invoked over the wire against `iii-directory serve`, with the test
engine's fake Compose peer and the loopback MockRegistry serving the `acme/team` kit
(kits.md §8–§10, protocol.md §12)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "kits"))

from kitfake import FLOW_V1, FLOW_V2, PLANNER_V1, PLANNER_V2, KitCatalog, sha, team_v1, team_v11  # noqa: E402

from iii_directory.config import Settings  # noqa: E402
from iii_directory.kits.service import KitsService  # noqa: E402
from iii_directory.port import EngineCallError  # noqa: E402
from iii_directory.protocol.errors import EngineCallError as PeerError  # noqa: E402
from iii_directory.testing.registry import MockRegistry  # noqa: E402

pytestmark = [pytest.mark.wire, pytest.mark.timeout(90)]

KITS = "directory::kits::on-change"
FLOW = "skills/acme/team/tickets/flow.md"
LEGACY = "skills/acme/team/legacy/old.md"


@pytest.fixture
def mock_registry() -> Iterator[MockRegistry]:
    with MockRegistry() as registry:
        yield registry


@pytest.fixture
def catalog(mock_registry: MockRegistry) -> KitCatalog:
    catalog = KitCatalog(mock_registry)
    catalog.publish("acme/team", team_v1())
    return catalog


@pytest.fixture
def settings(settings: Settings, mock_registry: MockRegistry, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("III_COMPOSE_NAMESPACE", raising=False)
    return settings.model_copy(update={"registry_url": mock_registry.url})


def declare(project: Path, **workers: tuple[str, str]) -> None:
    """worker-compose.yaml (+ .lock) declaring `name: (selector, resolved)`."""
    compose = ["containers:"] + [f"  {n}:\n    version: \"{s}\"" for n, (s, _) in workers.items()]
    locked = ["containers:"] + [f"  {n}:\n    resolved:\n      version: {r}" for n, (_, r) in workers.items()]
    (project / "worker-compose.yaml").write_text("\n".join(compose) + "\n")
    (project / "worker-compose.lock").write_text("\n".join(locked) + "\n")


async def fails(wire: Any, function_id: str, data: dict[str, Any]) -> EngineCallError:
    with pytest.raises(EngineCallError) as caught:
        await wire.call(function_id, data, timeout=30)
    return caught.value


def fast(wire: Any) -> None:
    wire.directory.service(KitsService).poll_interval_s = 0.01


async def test_install_update_and_remove_over_the_wire(
    wire: Any, catalog: KitCatalog, roots: dict[str, Path]
) -> None:
    fast(wire)
    compose = wire.engine.install_compose()
    kit_events = wire.subscribe(KITS)
    agent_events = wire.subscribe("directory::agents::on-change")
    skill_events = wire.subscribe("directory::skills::on-change")

    planned = await wire.call("directory::download-kit", {"kit": "acme/team@^1"}, timeout=30)
    assert planned["status"] == "planned"
    plan = planned["plan"]
    assert {w["name"]: w["action"] for w in plan["workers"]} == {"kanban": "add"}
    await kit_events.wait_for(1)
    assert kit_events[0] == {"op": "plan", "kit": "acme/team", "plan_id": plan["plan_id"], "kind": "install"}

    read = await wire.call("directory::kits::plan", {"plan_id": plan["plan_id"], "contents": True})
    assert read["contents"]["blobs"][sha(PLANNER_V1)] == PLANNER_V1
    assert read["progress"] is None

    applied = await wire.call("directory::kits::apply", {"plan_id": plan["plan_id"]}, timeout=30)
    assert applied["status"] == "applied"
    assert applied["report"]["workers_added"] == ["kanban"]
    assert compose.calls_to("compose::add")[0]["workers"] == [{"worker": "kanban", "version": "^1.4"}]
    assert compose.calls_to("compose::add")[0]["operation_id"].startswith("kits-add-")
    assert (roots["agents"] / "planner.md").read_text() == PLANNER_V1
    assert (roots["skills"] / "acme" / "team" / "tickets" / "flow.md").read_text() == FLOW_V1
    await agent_events.wait_for(1)
    await skill_events.wait_for(1)
    assert agent_events[0] == {"op": "kit", "kit": "acme/team", "plan_id": plan["plan_id"]}
    assert skill_events[0] == agent_events[0]
    await kit_events.wait_for(3)
    ops = [e["op"] for e in kit_events]
    assert "progress" in ops and "apply" in ops
    progress = [e for e in kit_events if e["op"] == "progress"]
    assert progress[-1]["plan_id"] == plan["plan_id"] and progress[-1]["error"] is None

    listing = await wire.call("directory::kits::list", {})
    assert [k["kit"] for k in listing["kits"]] == ["acme/team"]
    assert listing["kits"][0]["requested"] == "^1"

    declare(roots["project"], kanban=("^1.4", "1.6.1"))
    catalog.publish("acme/team", team_v11())
    checked = await wire.call("directory::kits::check-updates", {}, timeout=30)
    assert checked["available"] == 1 and checked["kits"][0]["available"] == "1.1.0"

    (roots["skills"] / "acme" / "team" / "tickets" / "flow.md").write_text(FLOW_V1.replace("# Flow", "# Flow (mine)"))
    got = await wire.call("directory::kits::get", {"kit": "acme/team", "registry": True}, timeout=30)
    assert got["files"]["edited"] == 1 and got["readme"] == "# team\n"
    diff = await wire.call("directory::kits::diff", {"kit": "acme/team", "path": FLOW}, timeout=30)
    assert (diff["base"], diff["state"]) == (FLOW_V1, "edited")

    update = await wire.call("directory::kits::plan-update", {"kit": "acme/team"}, timeout=30)
    assert update["status"] == "planned"
    uplan = update["plan"]
    assert {f["path"]: f["default"] for f in uplan["files"]}[FLOW] == "merged"
    done = await wire.call("directory::kits::apply", {
        "plan_id": uplan["plan_id"], "decisions": {LEGACY: "keep"},
    }, timeout=30)
    assert done["status"] == "applied"
    assert done["report"]["files_merged"] == [FLOW]
    assert (roots["agents"] / "planner.md").read_text() == PLANNER_V2
    merged = (roots["skills"] / "acme" / "team" / "tickets" / "flow.md").read_text()
    assert merged == FLOW_V2.replace("# Flow", "# Flow (mine)")
    assert [c["workers"] for c in compose.calls_to("compose::add")][-1] == [
        {"worker": "kanban", "version": "^1.6"}, {"worker": "github", "version": "^2.0"},
    ]

    ignored = await wire.call("directory::kits::ignore", {"kit": "acme/team", "version": "9.9.9"})
    assert ignored == {"kit": "acme/team", "ignored_versions": ["9.9.9"]}

    removal = await wire.call("directory::kits::remove", {"kit": "acme/team"}, timeout=30)
    rplan = removal["plan"]
    assert {w["name"]: w["action"] for w in rplan["workers"]} == {"github": "none", "kanban": "remove"}
    gone = await wire.call("directory::kits::apply", {
        "plan_id": rplan["plan_id"], "remove_workers": ["kanban"],
    }, timeout=30)
    assert gone["status"] == "applied"
    assert compose.calls_to("compose::remove")[-1]["workers"] == ["kanban"]
    assert not (roots["agents"] / "planner.md").exists()
    assert not (roots["project"] / "kits.lock").exists()
    await wire.directory.service(KitsService).drain()


async def test_errors_over_the_wire(wire: Any, catalog: KitCatalog, roots: dict[str, Path]) -> None:
    fast(wire)
    compose = wire.engine.install_compose()
    error = await fails(wire, "directory::download-kit", {"kit": "Acme"})
    assert error.code == "D511" and error.message.startswith("D511 invalid_input:")
    error = await fails(wire, "directory::download-kit", {"kit": "acme/nope"})
    assert error.code == "D510"
    error = await fails(wire, "directory::kits::plan", {"plan_id": "kp_missing"})
    assert error.code == "D512"
    error = await fails(wire, "directory::kits::diff", {"kit": "acme/team", "path": "agents/x.md"})
    assert error.code == "D510"

    plan = (await wire.call("directory::download-kit", {"kit": "acme/team"}, timeout=30))["plan"]
    compose.failures["compose::add"] = PeerError("compose_failed", "image pull failed")
    error = await fails(wire, "directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert error.code == "D515"
    assert "compose::add failed" in error.message
    assert not (roots["agents"] / "planner.md").exists()
    assert not (roots["project"] / "kits.lock").exists()
    del compose.failures["compose::add"]
    retried = await wire.call("directory::kits::apply", {"plan_id": plan["plan_id"]}, timeout=30)
    assert retried["status"] == "applied"

    second = (await wire.call("directory::kits::remove", {"kit": "acme/team"}, timeout=30))["plan"]
    discarded = await wire.call("directory::kits::discard", {"plan_id": second["plan_id"]})
    assert discarded == {"plan_id": second["plan_id"], "discarded": True}
    error = await fails(wire, "directory::kits::apply", {"plan_id": second["plan_id"]})
    assert error.code == "D512"
    await wire.directory.service(KitsService).drain()
