"""Every kits function publishes typed draft-07 schemas with the seed's field names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.functions import build_table
from iii_directory.kits.lock import Lock, LockedFile, LockedKit
from iii_directory.kits.origins import agent_origin

KIT_FUNCTIONS = {
    "directory::download-kit": ({"kit", "message", "status"}, {"Download kit"}),
    "directory::kits::apply": ({"kit", "message", "status"}, {"Apply kit plan"}),
    "directory::kits::plan-update": ({"kit", "message", "status"}, {"Plan kit update"}),
    "directory::kits::remove": ({"kit", "message", "status"}, {"Plan kit removal"}),
    "directory::kits::discard": ({"plan_id", "discarded"}, {"Discard kit plan"}),
    "directory::kits::ignore": ({"kit", "ignored_versions"}, {"Ignore kit version"}),
    "directory::kits::check-updates": ({"available", "kits"}, set()),
    "directory::kits::list": ({"attention", "kits", "lock_path", "pending"}, set()),
    "directory::kits::get": ({"file_list", "files", "installed_at", "kit", "pending", "registry_url",
                              "requested", "version", "worker_status", "workers"}, set()),
    "directory::kits::plan": ({"plan"}, set()),
    "directory::kits::diff": ({"kit", "path", "state"}, set()),
}

PLAN_REQUIRED = {"blocking", "capabilities", "counts", "created_at", "expires_at", "files", "functions",
                 "kind", "kit", "major", "plan_id", "registry_url", "requested", "review", "warnings",
                 "workers"}


def definitions(schema: dict[str, Any]) -> dict[str, Any]:
    return schema.get("definitions", {})


@pytest.mark.parametrize("function_id", sorted(KIT_FUNCTIONS))
def test_schemas_are_typed(function_id: str) -> None:
    spec = build_table().functions[function_id]
    required, labels = KIT_FUNCTIONS[function_id]
    response = spec.response_schema()
    assert response is not None
    assert response["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert response["type"] == "object" and response["properties"]
    assert set(response.get("required", [])) == required
    request = spec.request_schema()
    assert request.get("additionalProperties") is not False
    if labels:
        assert spec.metadata == {"tool": {"label": next(iter(labels))}}
    else:
        assert spec.metadata == {}


def test_plan_shape_matches_the_seed() -> None:
    schema = build_table().functions["directory::kits::plan"].response_schema()
    assert schema is not None
    defs = definitions(schema)
    assert set(defs["Plan"]["required"]) == PLAN_REQUIRED
    assert set(defs["PlanFile"]["required"]) == {"change", "id", "kind", "local", "options", "path", "source"}
    assert set(defs["PlanWorker"]["required"]) == {"action", "name", "registry_url"}
    assert set(defs["PlanCounts"]["required"]) == {
        "added", "agents", "collisions", "conflicts", "decisions_required", "functions", "modified",
        "removed", "skills", "unchanged", "workers"}
    assert set(defs["Step"]["required"]) == {"id", "label", "state"}
    assert defs["Step"]["properties"]["state"]["enum"] == ["pending", "running", "done", "failed", "skipped"]
    assert "from" in defs["Plan"]["properties"] and "from_" not in defs["Plan"]["properties"]
    decisions = build_table().functions["directory::kits::apply"].request_schema()["properties"]["decisions"]
    assert "anyOf" in decisions


def test_trigger_type_is_declared() -> None:
    from iii_directory.functions.kits import SURFACE

    assert [t.id for t in SURFACE.trigger_types] == ["directory::kits::on-change"]


def test_origins_kit_beats_worker_beats_local(settings: Settings, roots: dict[str, Path]) -> None:
    from iii_directory.content.markers import CompletionMarker

    from iii_directory.kits.paths import sha256_hex

    roots["agents"].mkdir(parents=True)
    (roots["agents"] / "a.md").write_text("A")
    markers = [CompletionMarker(worker="kanban", tag_or_version="latest", version="1.6.1",
                                agents={"a": sha256_hex("A"), "b": "00"})]
    lock = Lock(kits={"acme/team": LockedKit("latest", "1.0.0", "t", files={
        "agents/a.md": LockedFile(sha256_hex("A")), "agents/c.md": LockedFile("11", skipped=True)})})
    kit = agent_origin(settings, lock, "a", markers=markers)
    assert kit.as_source() == {"kind": "kit", "kit": "acme/team", "version": "1.0.0", "modified": False}
    worker = agent_origin(settings, lock, "b", markers=markers)
    assert worker.as_source() == {"kind": "worker", "worker": "kanban", "version": "1.6.1", "modified": True}
    assert agent_origin(settings, lock, "c", markers=markers).kind == "local"
