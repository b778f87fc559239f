"""Edge behaviours (kits.md §11) and the smaller functions: discard, plan, expiry, supersede,
integrity, path workers, and lock errors."""

from __future__ import annotations

import pytest
from kitenv import FLOW, LEGACY_PATH, KitEnv, by_path
from kitfake import FLOW_V1, LEGACY, PLANNER_V1, REVIEWER, KitVersion, sha, team_v1, team_v11

from iii_directory.kits.store import PlanStore


async def test_identical_files_are_still_written(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    kits.write("agents/planner.md", PLANNER_V1)
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    assert by_path(plan)["agents/planner.md"]["local"] == "intact"
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert "agents/planner.md" in out["report"]["files_written"]


async def test_unchanged_paths_are_never_touched_by_an_update(kits: KitEnv) -> None:
    await kits.install_v1()
    edited = REVIEWER + "Local line.\n"
    kits.write("agents/reviewer.md", edited)
    kits.catalog.publish("acme/team", team_v11())
    plan = (await kits.call("directory::kits::plan-update", {"kit": "acme/team"}))["plan"]
    assert "agents/reviewer.md" not in by_path(plan)
    before = kits.lock().kits["acme/team"].files["agents/reviewer.md"]
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert out["status"] == "applied"
    assert kits.read("agents/reviewer.md") == edited
    assert kits.lock().kits["acme/team"].files["agents/reviewer.md"] == before


async def test_skipped_file_dropped_by_the_kit_vanishes_from_the_lock(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    kits.write(LEGACY_PATH, "# Mine\n")
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    legacy = by_path(plan)[LEGACY_PATH]
    assert legacy["collision"] == {"owner": "local", "sha256": sha("# Mine\n")}
    assert plan["warnings"][0]["code"] == "file_overwrite_local"
    await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"], "decisions": {LEGACY_PATH: "keep"}})
    assert kits.lock().kits["acme/team"].files[LEGACY_PATH].skipped is True
    kits.catalog.publish("acme/team", team_v11())
    update = (await kits.call("directory::kits::plan-update", {"kit": "acme/team"}))["plan"]
    assert LEGACY_PATH not in by_path(update)
    await kits.call("directory::kits::apply", {
        "plan_id": update["plan_id"], "decisions": {FLOW: "kit"},
    })
    assert LEGACY_PATH not in kits.lock().kits["acme/team"].files
    assert kits.read(LEGACY_PATH) == "# Mine\n"


async def test_a_removed_file_the_user_deleted_is_forgotten(kits: KitEnv) -> None:
    await kits.install_v1()
    kits.path(LEGACY_PATH).unlink()
    kits.catalog.publish("acme/team", team_v11())
    plan = (await kits.call("directory::kits::plan-update", {"kit": "acme/team"}))["plan"]
    assert LEGACY_PATH not in by_path(plan)
    await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert LEGACY_PATH not in kits.lock().kits["acme/team"].files


async def test_deleted_file_is_restored_unless_kept_deleted(kits: KitEnv) -> None:
    await kits.install_v1()
    kits.path(FLOW).unlink()
    kits.catalog.publish("acme/team", team_v11())
    plan = (await kits.call("directory::kits::plan-update", {"kit": "acme/team"}))["plan"]
    flow = by_path(plan)[FLOW]
    assert (flow["local"], flow["default"], flow["options"]) == ("missing", "kit", ["kit", "mine"])
    assert "ours" not in flow
    await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"], "decisions": {FLOW: "mine"}})
    assert not kits.path(FLOW).exists()
    listing = await kits.call("directory::kits::list")
    assert listing["kits"][0]["files"]["missing"] == 1


async def test_path_workers_are_never_managed(kits: KitEnv) -> None:
    (kits.project / "worker-compose.yaml").write_text("containers:\n  kanban:\n    worker: path://./kanban\n")
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    kanban = plan["workers"][0]
    assert (kanban["action"], kanban["path"]) == ("none", True)
    assert plan["blocking"] == []
    await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    removal = (await kits.call("directory::kits::remove", {"kit": "acme/team"}))["plan"]
    assert removal["workers"][0]["action"] == "none"
    error = await kits.fails("directory::kits::apply", {"plan_id": removal["plan_id"], "remove_workers": ["kanban"]})
    assert error.code == "D513"
    assert kits.engine.log == []


async def test_served_invalid_paths_enter_the_lock(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    release = team_v1()
    release.files["skills/tickets/diagram.png"] = "not markdown"
    release.files["agents/nested/x.md"] = "nested"
    kits.catalog.publish("acme/team", release)
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    assert "skills/acme/team/tickets/diagram.png" not in by_path(plan)
    await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    files = kits.lock().kits["acme/team"].files
    assert files["skills/acme/team/tickets/diagram.png"].sha256 == sha("not markdown")
    assert "agents/nested/x.md" not in files
    assert not kits.path("skills/acme/team/tickets/diagram.png").exists()


async def test_integrity_mismatch_is_d516_and_writes_nothing(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    kits.catalog.tampered[("acme/team", "agents/planner.md")] = "tampered"
    error = await kits.fails("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert error.code == "D516"
    assert error.message == (
        "D516 integrity: the registry served different content for agents/planner.md than the plan "
        "reviewed. Next: call directory::download-kit kit=acme/team to review the current version."
    )
    assert not kits.path("agents/planner.md").exists()
    assert PlanStore(kits.project).load(plan["plan_id"]) is not None


async def test_a_blob_with_the_wrong_hash_is_refused(kits: KitEnv) -> None:
    await kits.install_v1()
    kits.catalog.wrong_blobs[sha(FLOW_V1)] = "# Not the base\n"
    kits.write(FLOW, FLOW_V1 + "Mine.\n")
    kits.catalog.publish("acme/team", team_v11())
    plan = (await kits.call("directory::kits::plan-update", {"kit": "acme/team"}))["plan"]
    flow = by_path(plan)[FLOW]
    assert (flow["merge"], flow["default"], flow["options"]) == ("conflicts", None, ["kit", "mine"])
    assert "conflicts" not in flow
    assert flow["note"] == (
        "edited by you; the installed version is no longer in the registry, so it cannot be merged"
    )
    assert plan["warnings"][0]["message"] == (
        f"{FLOW} was edited here and its base is unavailable; choose the kit's version or yours."
    )
    diff = await kits.call("directory::kits::diff", {"kit": "acme/team", "path": FLOW})
    assert diff["base"] is None


async def test_plan_missing_expired_and_discard(kits: KitEnv) -> None:
    error = await kits.fails("directory::kits::apply", {"plan_id": "kp_nothing"})
    assert error.message == (
        'D512 not_found: plan "kp_nothing" does not exist (applied, discarded or expired). '
        "Next: call directory::kits::list to see pending plans."
    )
    assert (await kits.fails("directory::kits::plan", {"plan_id": "../etc/passwd"})).code == "D512"
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    kits.advance(hours=24)
    error = await kits.fails("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert error.message == (
        f"D512 invalid_input: plan {plan['plan_id']} expired at {plan['expires_at']}. "
        "Next: call directory::download-kit kit=acme/team to plan again."
    )
    assert (await kits.call("directory::kits::plan", {"plan_id": plan["plan_id"]}))["plan"]["plan_id"] == plan["plan_id"]
    out = await kits.call("directory::kits::discard", {"plan_id": plan["plan_id"]})
    assert out == {"plan_id": plan["plan_id"], "discarded": True}
    assert kits.engine.events("directory::kits::on-change")[-1] == {
        "op": "discard", "plan_id": plan["plan_id"], "kit": "acme/team"
    }
    assert (await kits.call("directory::kits::discard", {"plan_id": plan["plan_id"]}))["discarded"] is False


async def test_a_new_plan_supersedes_older_plans_of_the_same_kit_and_kind(kits: KitEnv) -> None:
    first = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    kits.advance(seconds=1)
    second = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    listing = await kits.call("directory::kits::list")
    assert [p["plan_id"] for p in listing["pending"]] == [second["plan_id"]]
    assert listing["attention"] == 1
    summary = listing["pending"][0]
    assert summary == {
        "plan_id": second["plan_id"], "kind": "install", "kit": "acme/team", "from": None, "to": "1.0.0",
        "major": False, "counts": second["counts"], "warnings": 0, "blocking": 0,
        "created_at": second["created_at"], "expires_at": second["expires_at"],
    }
    assert PlanStore(kits.project).load(first["plan_id"]) is None
    kits.advance(hours=25)
    assert (await kits.call("directory::kits::list"))["pending"] == []


async def test_ci_downloads_are_tagged(kits: KitEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    kits.declare(kanban=("^1.4", "1.6.1"))
    await kits.call("directory::download-kit", {"kit": "acme/team", "apply": True})
    assert kits.catalog.downloads() == ["download 1.0.0 ci=true"]


async def test_an_install_plan_goes_stale_when_the_kit_gets_installed(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    first = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    store = PlanStore(kits.project)
    record = store.load(first["plan_id"])
    assert record is not None
    await kits.call("directory::kits::apply", {"plan_id": first["plan_id"]})
    store.save(record)  # a copy of the same install plan, now stale
    out = await kits.call("directory::kits::apply", {"plan_id": first["plan_id"]})
    assert out["status"] == "up_to_date"
    assert out["message"] == (
        "Not applied: acme/team was installed after this plan was made. acme/team 1.0.0 is already installed."
    )


async def test_a_removal_plan_goes_stale_when_the_version_moves(kits: KitEnv) -> None:
    await kits.install_v1()
    removal = (await kits.call("directory::kits::remove", {"kit": "acme/team"}))["plan"]
    kits.catalog.publish("acme/team", team_v11())
    update = (await kits.call("directory::kits::plan-update", {"kit": "acme/team"}))["plan"]
    await kits.call("directory::kits::apply", {"plan_id": update["plan_id"]})
    out = await kits.call("directory::kits::apply", {"plan_id": removal["plan_id"]})
    assert out["status"] == "replanned"
    assert out["message"].startswith("Not applied: kits.lock now has acme/team 1.1.0, not 1.0.0. Remove acme/team 1.1.0")
    assert out["plan"]["kind"] == "remove"


async def test_ignoring_a_version_drops_its_pending_update_plans(kits: KitEnv) -> None:
    await kits.install_v1()
    kits.catalog.publish("acme/team", team_v11())
    plan = (await kits.call("directory::kits::plan-update", {"kit": "acme/team"}))["plan"]
    discards = len([e for e in kits.engine.events("directory::kits::on-change") if e["op"] == "discard"])
    await kits.call("directory::kits::ignore", {"kit": "acme/team", "version": "1.1.0"})
    assert PlanStore(kits.project).load(plan["plan_id"]) is None
    assert len([e for e in kits.engine.events("directory::kits::on-change") if e["op"] == "discard"]) == discards
    error = await kits.fails("directory::kits::ignore", {"kit": "acme/other", "version": "1.0.0"})
    assert error.message == 'D510 not_found: kit "acme/other" is not installed in this project.'


async def test_kit_flows_propagate_an_unreadable_lock(kits: KitEnv) -> None:
    (kits.project / "kits.lock").write_text("version: 7\nkits: {}\n")
    for function_id, data in (
        ("directory::kits::list", {}),
        ("directory::download-kit", {"kit": "acme/team"}),
        ("directory::kits::check-updates", {}),
    ):
        error = await kits.fails(function_id, data)
        assert "kits.lock version 7 is not supported (expected 1)" in error.message


async def test_a_removal_skips_skipped_and_missing_files(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    kits.write("agents/reviewer.md", "---\nname: R\ndescription: local\n---\nMine.\n")
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"], "decisions": {"agents/reviewer.md": "keep"}})
    kits.path(LEGACY_PATH).unlink()
    removal = (await kits.call("directory::kits::remove", {"kit": "acme/team"}))["plan"]
    assert sorted(by_path(removal)) == ["agents/planner.md", FLOW]
    out = await kits.call("directory::kits::apply", {"plan_id": removal["plan_id"]})
    assert out["report"]["workers_removed"] == []
    assert kits.read("agents/reviewer.md") is not None
    assert kits.engine.log == []


async def test_update_to_an_older_version_is_a_downgrade_plan(kits: KitEnv) -> None:
    kits.catalog.publish("acme/team", team_v11())
    kits.declare(kanban=("^1.6", "1.6.1"), github=("^2.0", "2.0.3"))
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    down = (await kits.call("directory::kits::plan-update", {"kit": "acme/team", "version": "1.0.0"}))["plan"]
    assert (down["from"], down["to"], down["bump"]) == ("1.1.0", "1.0.0", "minor")
    github = next(w for w in down["workers"] if w["name"] == "github")
    assert (github["action"], github["range_from"]) == ("remove", "^2.0")
    assert by_path(down)[LEGACY_PATH]["change"] == "added"
    assert kits.read(LEGACY_PATH) is None
    await kits.call("directory::kits::apply", {"plan_id": down["plan_id"]})
    assert kits.read(LEGACY_PATH) == LEGACY


async def test_a_kit_installs_skills_under_its_own_namespace(kits: KitEnv) -> None:
    kits.catalog.publish("other/kit", KitVersion(version="0.1.0", files={"skills/SKILL.md": "# Other\n"}))
    plan = (await kits.call("directory::download-kit", {"kit": "other/kit"}))["plan"]
    entry = plan["files"][0]
    assert (entry["path"], entry["id"], entry["source"]) == ("skills/other/kit/SKILL.md", "other/kit/index", "skills/SKILL.md")
    assert plan["counts"]["workers"] == 0
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert out["report"]["steps"][0] == {"id": "workers", "label": "Workers", "state": "skipped",
                                         "detail": "no worker changes"}
    assert (kits.roots["skills"] / "other" / "kit" / "SKILL.md").read_text() == "# Other\n"


async def test_the_update_schedule_checks_installed_kits(kits: KitEnv) -> None:
    import anyio

    from iii_directory.functions.kits import start_update_checks, stop

    cache = await kits.update_pending()
    await start_update_checks(kits.directory)
    with anyio.fail_after(10):
        while not cache.exists():
            await anyio.sleep(0.02)
    assert {"op": "updates"} in kits.engine.events("directory::kits::on-change")
    await stop(kits.directory)
