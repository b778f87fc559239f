"""The kits test checklist (kits.md §12, items 1–18), driven through `Directory.invoke` with a
scripted Compose engine, the loopback MockRegistry and a fixed clock."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kitenv import FLOW, LEGACY_PATH, KitEnv, by_path
from kitfake import (
    FLOW_V1,
    FLOW_V2,
    LEGACY,
    PLANNER_V1,
    PLANNER_V2,
    REVIEWER_V2,
    TRIAGE,
    KitVersion,
    sha,
    team_v1,
    team_v2,
    team_v11,
)

from iii_directory.errors import DirectoryError
from iii_directory.kits.lock import Lock, LockedFile, LockedKit, write_lock
from iii_directory.kits.store import PlanStore

TRIAGE_PATH = "skills/acme/team/tickets/triage.md"
WORKER_REVIEWER = "---\nname: Reviewer\ndescription: From the kanban worker.\n---\nWorker review.\n"


def workers(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {w["name"]: w for w in plan["workers"]}


def worker_owned_reviewer(kits: KitEnv) -> None:
    kits.write("agents/reviewer.md", WORKER_REVIEWER)
    kits.marker("kanban", "1.6.1", {"reviewer": sha(WORKER_REVIEWER)})


# 1 -------------------------------------------------------------------------------------------


async def test_install_plan_classifies_collisions_and_workers(kits: KitEnv) -> None:
    worker_owned_reviewer(kits)
    kits.declare(kanban=("^1.4", "1.5.2"))
    out = await kits.call("directory::download-kit", {"kit": "acme/team"})
    assert out["status"] == "planned"
    plan = out["plan"]
    files = by_path(plan)
    assert [f["path"] for f in plan["files"]] == [
        "agents/planner.md", "agents/reviewer.md", LEGACY_PATH, FLOW,
    ]
    assert all(f["change"] == "added" for f in plan["files"])
    reviewer = files["agents/reviewer.md"]
    assert reviewer["collision"] == {
        "owner": "worker", "worker": "kanban", "version": "1.6.1",
        "sha256": sha(WORKER_REVIEWER), "modified": False,
    }
    assert (reviewer["local"], reviewer["default"], reviewer["options"]) == ("occupied", "overwrite", ["overwrite", "keep"])
    assert reviewer["note"] == "came from worker kanban 1.6.1"
    assert reviewer["ours"] == sha(WORKER_REVIEWER)
    assert [w["code"] for w in plan["warnings"]] == ["agent_overwrite"]
    assert "worker kanban 1.6.1" in plan["warnings"][0]["message"]
    assert plan["warnings"][0]["path"] == "agents/reviewer.md"
    flow = files[FLOW]
    assert (flow["id"], flow["local"], flow["kind"], flow["source"]) == (
        "acme/team/tickets/flow", "absent", "skill", "skills/tickets/flow.md"
    )
    assert "collision" not in flow and flow["theirs"] == sha(FLOW_V1) and "base" not in flow
    assert flow["skill"]["path"] == "skills/tickets/flow.md"
    assert files["agents/planner.md"]["agent"]["model"] == "sonnet"
    kanban = workers(plan)["kanban"]
    assert (kanban["action"], kanban["installed"], kanban["declared"], kanban["range"], kanban["to"]) == (
        "none", "1.5.2", "^1.4", "^1.4", "1.6.1"
    )
    assert kanban["registry_url"].endswith("/workers/kanban")
    assert plan["blocking"] == []
    assert len(plan["functions"]) == 1
    assert plan["capabilities"]["functions_added"] == [{"agent": "planner", "function": "kanban::ticket::create"}]
    assert plan["capabilities"]["models_changed"] == [{"agent": "planner", "from": None, "to": "sonnet"}]
    assert plan["capabilities"]["workers_added"] == []
    counts = plan["counts"]
    assert (counts["agents"], counts["skills"], counts["collisions"], counts["added"], counts["workers"],
            counts["functions"], counts["decisions_required"]) == (2, 2, 1, 4, 1, 1, 0)
    assert (plan["requested"], plan["to"], plan["from"], plan["major"], plan["kind"]) == (
        "latest", "1.0.0", None, False, "install"
    )
    assert "bump" not in plan
    assert plan["registry_url"].endswith("/kits/acme/team")
    assert plan["author"] == {"handle": "acme", "name": "Acme", "verified": True}
    assert plan["notes"] == "First release."
    assert plan["created_at"] == "2026-10-08T14:02:11Z" and plan["expires_at"] == "2026-10-09T14:02:11Z"
    assert plan["review"] == (
        "Review it in the ADE (Directory → Kits) or apply it with "
        f"`iii trigger directory::kits::apply plan_id={plan['plan_id']}`."
    )
    assert out["message"] == (
        f"Install acme/team 1.0.0 is planned (1 warning). Review it in the ADE: Directory → Kits, "
        f"or apply it with `iii trigger directory::kits::apply plan_id={plan['plan_id']}`."
    )
    stored = await kits.call("directory::kits::plan", {"plan_id": plan["plan_id"], "contents": True})
    assert stored["contents"]["blobs"][sha(PLANNER_V1)] == PLANNER_V1
    assert stored["contents"]["ours"]["agents/reviewer.md"] == WORKER_REVIEWER
    assert stored["progress"] is None
    plain = await kits.call("directory::kits::plan", {"plan_id": plan["plan_id"]})
    assert "contents" not in plain
    assert kits.catalog.downloads() == []
    assert kits.engine.events("directory::kits::on-change")[-1] == {
        "op": "plan", "kit": "acme/team", "plan_id": plan["plan_id"], "kind": "install"
    }


# 2 -------------------------------------------------------------------------------------------


async def test_local_global_and_builtin_collisions(kits: KitEnv) -> None:
    same = "---\nname: Same\ndescription: d\n---\nSame.\n"
    kits.catalog.publish("acme/profiles", KitVersion(version="1.0.0", files={
        "agents/mine.md": "---\nname: Mine\ndescription: d\n---\nKit.\n",
        "agents/glob.md": "---\nname: Glob\ndescription: d\n---\nKit.\n",
        "agents/default.md": "---\nname: Default\ndescription: d\n---\nKit.\n",
        "agents/same.md": same,
    }))
    kits.write("agents/mine.md", "---\nname: Mine\ndescription: hand made\n---\nMine.\n")
    kits.write("agents/same.md", same)
    glob = kits.roots["global_agents"] / "glob.md"
    glob.parent.mkdir(parents=True)
    glob.write_text("---\nname: Glob\ndescription: g\n---\nGlobal.\n")
    plan = (await kits.call("directory::download-kit", {"kit": "acme/profiles"}))["plan"]
    files = by_path(plan)
    assert files["agents/mine.md"]["collision"]["owner"] == "local"
    assert files["agents/mine.md"]["local"] == "occupied"
    assert files["agents/glob.md"]["collision"] == {"owner": "global", "sha256": sha(glob.read_text())}
    assert files["agents/glob.md"]["local"] == "absent"
    assert files["agents/default.md"]["collision"] == {"owner": "builtin"}
    assert files["agents/default.md"]["note"] == "built-in profile"
    assert "collision" not in files["agents/same.md"]
    assert (files["agents/same.md"]["local"], files["agents/same.md"]["options"],
            files["agents/same.md"]["note"]) == ("intact", ["overwrite"], "already identical on disk")
    assert [w["code"] for w in plan["warnings"]] == [
        "builtin_override", "agent_shadows_global", "agent_overwrite_local",
    ]
    assert plan["workers"] == []


# 3 -------------------------------------------------------------------------------------------


async def test_blocks_without_compose_and_when_deprecated(kits: KitEnv) -> None:
    kits.engine.up = False
    out = await kits.call("directory::download-kit", {"kit": "acme/team", "apply": True})
    assert out["status"] == "planned"
    assert out["message"].startswith("Not applied automatically: the plan needs review. Install acme/team 1.0.0 is planned (blocked: ")
    plan = out["plan"]
    assert workers(plan)["kanban"]["action"] == "add"
    assert workers(plan)["kanban"]["installed"] is None
    assert [b["code"] for b in plan["blocking"]] == ["compose_not_running"]
    error = await kits.fails("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert error.code == "D514"
    assert error.message.startswith("D514 invalid_input: the plan is blocked: This kit adds or moves workers")
    kits.engine.up = True
    release = team_v1()
    release.deprecation = {"message": "Use the new one", "replaced_by": "acme/team2"}
    kits.catalog.publish("acme/team", release)
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    assert [b["code"] for b in plan["blocking"]] == ["kit_deprecated"]
    assert plan["blocking"][0]["message"] == "acme/team is deprecated: Use the new one. Install acme/team2 instead."
    assert plan["deprecation"] == {"message": "Use the new one", "replaced_by": "acme/team2"}
    error = await kits.fails("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert error.message.startswith("D514 invalid_input: the plan is blocked: acme/team is deprecated")


async def test_compose_back_up_replans_a_blocked_plan(kits: KitEnv) -> None:
    kits.engine.up = False
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    kits.engine.up = True
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert out["status"] == "replanned"
    assert out["message"].startswith("Not applied: the Compose daemon is running now. Install acme/team 1.0.0 is planned")
    assert out["plan"]["blocking"] == []


# 4 -------------------------------------------------------------------------------------------


async def test_apply_install_runs_workers_then_files_then_lock(kits: KitEnv) -> None:
    worker_owned_reviewer(kits)
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    seen_at_add: list[tuple[list[str], bool, bool]] = []

    def at_add(function_id: str, _data: Any) -> None:
        if function_id == "compose::add":
            seen_at_add.append((kits.catalog.downloads(), (kits.project / "kits.lock").exists(),
                                kits.path("agents/planner.md").exists()))

    kits.engine.on_call.append(at_add)
    before = len(kits.engine.events("directory::kits::on-change"))
    out = await kits.call("directory::kits::apply", {
        "plan_id": plan["plan_id"], "decisions": {"agents/reviewer.md": "keep"},
    })
    assert out["status"] == "applied"
    assert seen_at_add == [(["download 1.0.0 ci=false"], False, False)]
    assert kits.engine.log == ['compose::add [{"version":"^1.4","worker":"kanban"}]']
    add_call = next(data for fid, data in kits.engine.calls if fid == "compose::add")
    assert add_call["operation_id"].startswith(f"kits-add-{plan['plan_id'][3:]}-")
    report = out["report"]
    assert report["workers_added"] == ["kanban"]
    assert [(s["id"], s["state"]) for s in report["steps"]] == [("workers", "done"), ("files", "done"), ("lock", "done")]
    assert report["steps"][0]["label"] == "Workers (1)"
    assert report["steps"][1]["label"] == "Files (4)"
    assert kits.read("agents/planner.md") == PLANNER_V1
    assert kits.read(FLOW) == FLOW_V1
    assert kits.read("agents/reviewer.md") == WORKER_REVIEWER
    lock = kits.lock().kits["acme/team"]
    assert (lock.version, lock.requested, lock.workers) == ("1.0.0", "latest", {"kanban": "^1.4"})
    assert lock.installed_at == "2026-10-08T14:02:11Z"
    assert lock.files["agents/reviewer.md"].skipped is True
    assert lock.files["agents/planner.md"].skipped is False
    assert lock.files[FLOW].sha256 == sha(FLOW_V1)
    assert PlanStore(kits.project).load(plan["plan_id"]) is None
    assert report["agents"] == ["planner"]
    assert report["files_kept"] == ["agents/reviewer.md"]
    assert report["files_written"] == ["agents/planner.md", LEGACY_PATH, FLOW]
    assert (report["agents_changed"], report["skills_changed"]) == (True, True)
    assert out["message"] == "Installed acme/team 1.0.0: 3 files written, 1 kept, 1 worker added or updated."
    progress = kits.engine.events("directory::kits::on-change")[before:]
    kinds = [e["op"] for e in progress]
    assert kinds.count("progress") >= 4 and kinds[-1] == "apply"
    assert progress[-1] == {"op": "apply", "kit": "acme/team", "plan_id": plan["plan_id"], "kind": "install"}
    assert any(e["op"] == "progress" and e["steps"][0].get("detail", "").startswith("compose::add kanban@^1.4") for e in progress)
    payload = {"op": "kit", "kit": "acme/team", "plan_id": plan["plan_id"]}
    assert kits.engine.events("directory::agents::on-change") == [payload]
    assert kits.engine.events("directory::skills::on-change") == [payload]
    again = await kits.call("directory::download-kit", {"kit": "acme/team"})
    assert again == {"status": "up_to_date", "kit": "acme/team", "message": "acme/team 1.0.0 is already installed."}
    await kits.service.drain()


# 5 -------------------------------------------------------------------------------------------


async def test_failed_compose_aborts_before_files_and_retry_converges(kits: KitEnv) -> None:
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    kits.engine.fail["compose::add"] = "image pull failed"
    error = await kits.fails("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert error.code == "D515"
    assert error.message == "D515 compose_error: compose::add failed: image pull failed"
    assert not kits.path("agents/planner.md").exists()
    assert not (kits.project / "kits.lock").exists()
    stored = await kits.call("directory::kits::plan", {"plan_id": plan["plan_id"]})
    steps = {s["id"]: s for s in stored["progress"]["steps"]}
    assert steps["workers"]["state"] == "failed" and steps["files"]["state"] == "pending"
    assert stored["progress"]["error"] == error.message
    del kits.engine.fail["compose::add"]
    kits.engine.outcome = "failed"
    error = await kits.fails("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert error.message == (
        "D515 compose_error: compose::add did not finish: pulled. Nothing was written; fix the worker "
        "and retry the apply."
    )
    kits.engine.outcome = "succeeded"
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert out["status"] == "applied"
    assert kits.lock().kits["acme/team"].version == "1.0.0"


async def test_compose_gone_at_apply_is_d514(kits: KitEnv) -> None:
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    kits.engine.up = False
    error = await kits.fails("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert error.code == "D514"
    assert error.message.startswith("D514 compose_not_running: the Compose daemon did not answer (")
    assert error.message.endswith("Start the project with `iii compose --up` and retry the apply.")
    assert not (kits.project / "kits.lock").exists()


# 6 -------------------------------------------------------------------------------------------


async def test_journaled_writes_do_not_make_a_retry_stale(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    store = PlanStore(kits.project)
    record = store.load(plan["plan_id"])
    assert record is not None
    kits.write("agents/planner.md", PLANNER_V1)
    from iii_directory.kits.apply import new_progress

    record.progress = new_progress(record)
    record.progress.written["agents/planner.md"] = sha(PLANNER_V1)
    store.save(record)
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert out["status"] == "applied"


async def test_a_write_failing_midway_leaves_a_state_the_retry_converges_from(
    kits: KitEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    import iii_directory.kits.apply as apply_module

    kits.declare(kanban=("^1.4", "1.6.1"))
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    real = apply_module.atomic_write
    writes: list[str] = []

    def flaky(path: Any, content: Any, marks: Any = None) -> int:
        writes.append(str(path))
        if len(writes) == 2:
            raise DirectoryError.plain(f"write {path}.tmp: No space left on device")
        return real(path, content, marks)

    monkeypatch.setattr(apply_module, "atomic_write", flaky)
    error = await kits.fails("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert "No space left on device" in error.message
    assert kits.read("agents/planner.md") == PLANNER_V1
    assert not kits.path("agents/reviewer.md").exists()
    assert not (kits.project / "kits.lock").exists()
    assert not list(kits.roots["agents"].glob("*.tmp"))
    stored = (await kits.call("directory::kits::plan", {"plan_id": plan["plan_id"]}))["progress"]
    assert stored["written"] == {"agents/planner.md": sha(PLANNER_V1)}
    assert {s["id"]: s["state"] for s in stored["steps"]}["files"] == "failed"
    monkeypatch.setattr(apply_module, "atomic_write", real)
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert out["status"] == "applied"
    lock = kits.lock().kits["acme/team"]
    for path, entry in lock.files.items():
        assert sha(kits.read(path) or "") == entry.sha256


async def test_a_crash_before_the_journal_flush_replans_then_converges(
    kits: KitEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash (the process dies: no error handling, no journal flush) after one write makes the
    written file look changed; the retry replans, and the fresh plan applies cleanly."""
    import iii_directory.kits.apply as apply_module

    class Crash(BaseException):
        pass

    kits.declare(kanban=("^1.4", "1.6.1"))
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    real = apply_module.atomic_write
    count = 0

    def crash_on_second(path: Any, content: Any, marks: Any = None) -> int:
        nonlocal count
        count += 1
        if count == 2:
            raise Crash()
        return real(path, content, marks)

    monkeypatch.setattr(apply_module, "atomic_write", crash_on_second)
    with pytest.raises(Crash):
        await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    monkeypatch.setattr(apply_module, "atomic_write", real)
    assert not (kits.project / "kits.lock").exists()
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert out["status"] == "replanned"
    assert "agents/planner.md changed on disk after the plan was made" in out["message"]
    fresh = by_path(out["plan"])["agents/planner.md"]
    assert fresh["local"] == "intact"
    done = await kits.call("directory::kits::apply", {"plan_id": out["plan"]["plan_id"]})
    assert done["status"] == "applied"
    assert kits.lock().kits["acme/team"].files["agents/planner.md"].sha256 == sha(PLANNER_V1)


# 7 -------------------------------------------------------------------------------------------


async def test_a_local_change_after_planning_replans(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    kits.write("agents/reviewer.md", "---\nname: R\ndescription: mine\n---\nMine.\n")
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert out["status"] == "replanned"
    assert "agents/reviewer.md changed on disk" in out["message"]
    assert out["message"].startswith("Not applied: agents/reviewer.md changed on disk after the plan was made. Install")
    assert out["plan"]["plan_id"] != plan["plan_id"]
    assert by_path(out["plan"])["agents/reviewer.md"]["collision"]["owner"] == "local"
    assert not (kits.project / "kits.lock").exists()
    assert PlanStore(kits.project).load(plan["plan_id"]) is None
    assert kits.catalog.downloads() == []


# 8 -------------------------------------------------------------------------------------------


async def test_apply_true_installs_only_a_plan_without_warnings(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    out = await kits.call("directory::download-kit", {"kit": "acme/team@1.0.0", "apply": True})
    assert out["status"] == "applied"
    assert kits.lock().kits["acme/team"].requested == "^1.0.0"
    progress = kits.engine.events("directory::kits::on-change")
    assert any(e["op"] == "progress" and e["plan_id"] == "" and e["kit"] == "acme/team@1.0.0" for e in progress)


async def test_apply_true_with_a_warning_waits(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    worker_owned_reviewer(kits)
    out = await kits.call("directory::download-kit", {"kit": "acme/team@1.0.0", "apply": True})
    assert out["status"] == "planned"
    assert out["message"].startswith("Not applied automatically")
    assert not (kits.project / "kits.lock").exists()


# 9 -------------------------------------------------------------------------------------------


async def test_unknown_kits_and_versions(kits: KitEnv) -> None:
    assert (await kits.fails("directory::download-kit", {"kit": "acme/nope"})).code == "D510"
    error = await kits.fails("directory::download-kit", {"kit": "acme/team@9.0.0"})
    assert error.code == "D510" and "no version or tag" in error.message
    error = await kits.fails("directory::download-kit", {"kit": "acme/team@^3"})
    assert error.code == "D510" and "satisfies" in error.message
    error = await kits.fails("directory::download-kit", {"kit": "Acme"})
    assert error.code == "D511"
    assert error.message == (
        'D511 invalid_input: "Acme" is not <author>/<kit>. Use kit=<author>/<kit>[@<version|tag|range>].'
    )
    error = await kits.fails("directory::kits::plan-update", {"kit": "acme/team@1.0.0"})
    assert error.code == "D511" and "must not carry a version here" in error.message
    error = await kits.fails("directory::kits::plan-update", {"kit": "acme/team"})
    assert error.message == (
        'D510 not_found: kit "acme/team" is not installed in this project. '
        "Next: call directory::kits::list to see installed kits."
    )
    assert (await kits.fails("directory::kits::remove", {"kit": "acme/team"})).code == "D510"


# 10 ------------------------------------------------------------------------------------------


async def test_update_plan_merges_edits_and_flags_conflicts(kits: KitEnv) -> None:
    await kits.install_v1()
    kits.catalog.publish("acme/team", team_v11())
    kits.write(FLOW, FLOW_V1.replace("Step two.", "Step two (mine)."))
    kits.write(LEGACY_PATH, LEGACY + "My notes.\n")
    out = await kits.call("directory::kits::plan-update", {"kit": "acme/team"})
    assert out["status"] == "planned"
    plan = out["plan"]
    assert (plan["kind"], plan["from"], plan["to"], plan["bump"], plan["major"], plan["requested"]) == (
        "update", "1.0.0", "1.1.0", "minor", False, "^1"
    )
    assert plan["notes"] == "Planner opens pull requests."
    files = by_path(plan)
    planner = files["agents/planner.md"]
    assert (planner["change"], planner["local"], planner["default"], planner["options"]) == (
        "modified", "intact", "kit", ["kit"]
    )
    assert (planner["base"], planner["theirs"]) == (sha(PLANNER_V1), sha(PLANNER_V2))
    assert planner["agent_changes"] == {"fields": {"model": ["sonnet", "opus"]},
                                        "functions_added": ["github::pr::create"]}
    assert planner["body_changed"] is True
    flow = files[FLOW]
    assert (flow["local"], flow["merge"], flow["default"], flow["options"], flow["conflicts"]) == (
        "edited", "conflicts", None, ["kit", "mine", "merged"], 1
    )
    assert files[TRIAGE_PATH]["change"] == "added"
    legacy = files[LEGACY_PATH]
    assert (legacy["change"], legacy["local"], legacy["default"], legacy["options"]) == (
        "removed", "edited", "keep", ["remove", "keep"]
    )
    assert "agents/reviewer.md" not in files
    counts = plan["counts"]
    assert (counts["unchanged"], counts["conflicts"], counts["decisions_required"], counts["agents"],
            counts["skills"], counts["modified"], counts["added"], counts["removed"]) == (1, 1, 1, 2, 2, 2, 1, 1)
    w = workers(plan)
    assert (w["kanban"]["action"], w["kanban"]["range_from"], w["kanban"]["range"]) == ("redeclare", "^1.4", "^1.6")
    assert w["github"]["action"] == "add"
    assert plan["capabilities"]["workers_added"] == ["github"]
    assert plan["capabilities"]["models_changed"][0] == {"agent": "planner", "from": "sonnet", "to": "opus"}
    assert plan["capabilities"]["functions_added"] == [{"agent": "planner", "function": "github::pr::create"}]
    assert [x["code"] for x in plan["warnings"]] == ["merge_conflict"]
    assert plan["warnings"][0]["message"] == (
        f"{FLOW} was edited here and changed in the kit; 1 conflict needs a decision."
    )
    assert "1 decision required" in out["message"] and "1 warning" in out["message"]
    contents = (await kits.call("directory::kits::plan", {"plan_id": plan["plan_id"], "contents": True}))["contents"]
    assert "<<<<<<< yours" in contents["merged"][FLOW]
    assert contents["blobs"][sha(FLOW_V1)] == FLOW_V1

    pid = plan["plan_id"]
    error = await kits.fails("directory::kits::apply", {"plan_id": pid})
    assert error.code == "D513" and f"{FLOW} needs a decision (kit | mine | merged)" in error.message
    assert error.message.endswith(f"Next: call directory::kits::plan plan_id={pid} to see each file's options.")
    error = await kits.fails("directory::kits::apply", {"plan_id": pid, "decisions": {FLOW: "merged"}})
    assert "has conflicts: pass the resolved text" in error.message
    error = await kits.fails("directory::kits::apply", {
        "plan_id": pid, "decisions": {FLOW: {"choice": "merged", "content": contents["merged"][FLOW]}},
    })
    assert "conflict markers" in error.message
    error = await kits.fails("directory::kits::apply", {
        "plan_id": pid, "decisions": {FLOW: "overwrite", "agents/nope.md": "keep"},
    })
    assert f'{FLOW} cannot take "overwrite"; choose kit | mine | merged' in error.message
    assert f"agents/nope.md is not part of plan {pid}" in error.message
    assert kits.catalog.downloads() == ["download 1.0.0 ci=false"]

    resolved = "# Flow\n\nStep one.\nStep two (mine, and the kit's).\nStep three.\n"
    out = await kits.call("directory::kits::apply", {
        "plan_id": pid, "decisions": {FLOW: {"choice": "merged", "content": resolved}},
    })
    assert out["status"] == "applied", out
    report = out["report"]
    assert report["files_merged"] == [FLOW]
    assert kits.read(FLOW) == resolved
    assert kits.read("agents/planner.md") == PLANNER_V2
    assert kits.read(LEGACY_PATH) == LEGACY + "My notes.\n"
    assert kits.read(TRIAGE_PATH) == TRIAGE
    assert kits.catalog.downloads() == ["download 1.0.0 ci=false", "download 1.1.0 ci=false"]
    adds = [entry for entry in kits.engine.log if entry.startswith("compose::add")]
    assert adds == ['compose::add [{"version":"^1.6","worker":"kanban"},{"version":"^2.0","worker":"github"}]']
    assert (report["workers_added"], report["workers_updated"]) == (["github"], ["kanban"])
    lock = kits.lock().kits["acme/team"]
    assert (lock.version, lock.workers["kanban"], lock.workers["github"]) == ("1.1.0", "^1.6", "^2.0")
    assert lock.files[FLOW].sha256 == sha(FLOW_V2)
    assert LEGACY_PATH not in lock.files
    listing = await kits.call("directory::kits::list")
    assert listing["kits"][0]["files"]["edited"] == 1
    await kits.service.drain()


# 11 ------------------------------------------------------------------------------------------


async def test_clean_merges_are_the_default_and_removed_intact_files_go(kits: KitEnv) -> None:
    await kits.install_v1()
    kits.catalog.publish("acme/team", team_v11())
    kits.write(FLOW, FLOW_V1.replace("# Flow", "# Flow (mine)"))
    plan = (await kits.call("directory::kits::plan-update", {"kit": "acme/team"}))["plan"]
    files = by_path(plan)
    assert (files[FLOW]["merge"], files[FLOW]["default"]) == ("clean", "merged")
    assert files[FLOW]["note"] == "edited by you and changed in the kit; the changes merge cleanly"
    assert [w["code"] for w in plan["warnings"]] == ["local_edits_merged"]
    assert (files[LEGACY_PATH]["local"], files[LEGACY_PATH]["default"]) == ("intact", "remove")
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert out["status"] == "applied"
    assert kits.read(FLOW) == "# Flow (mine)\n\nStep one.\nStep two (kit).\nStep three.\n"
    assert not kits.path(LEGACY_PATH).exists()
    assert not kits.path(LEGACY_PATH).parent.exists()
    assert kits.path(FLOW).parent.exists()
    assert out["report"]["files_removed"] == [LEGACY_PATH]
    assert out["message"] == "Updated acme/team 1.0.0 → 1.1.0: 3 files written, 1 removed, 2 workers added or updated."


# 12 ------------------------------------------------------------------------------------------


async def test_skipped_files_stay_skipped_across_updates(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    worker_owned_reviewer(kits)
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"], "decisions": {"agents/reviewer.md": "keep"}})
    kits.catalog.publish("acme/team", team_v11(reviewer=REVIEWER_V2))
    update = (await kits.call("directory::kits::plan-update", {"kit": "acme/team"}))["plan"]
    reviewer = by_path(update)["agents/reviewer.md"]
    assert (reviewer["change"], reviewer["skipped"], reviewer["default"], reviewer["options"], reviewer["local"]) == (
        "kept", True, "keep", ["keep", "overwrite"], "occupied"
    )
    assert reviewer["note"] == "you kept the existing file at install; the kit's version changed"
    assert "merge" not in reviewer and "body_changed" not in reviewer
    out = await kits.call("directory::kits::apply", {"plan_id": update["plan_id"]})
    assert out["status"] == "applied"
    assert kits.read("agents/reviewer.md") == WORKER_REVIEWER
    entry = kits.lock().kits["acme/team"].files["agents/reviewer.md"]
    assert entry.skipped is True and entry.sha256 == sha(REVIEWER_V2)


# 13 ------------------------------------------------------------------------------------------


async def test_taking_a_profile_from_another_kit_marks_it_skipped_there(kits: KitEnv) -> None:
    kits.declare(kanban=("^1.4", "1.6.1"))
    theirs = "---\nname: Planner\ndescription: other kit\n---\nOther.\n"
    kits.write("agents/planner.md", theirs)
    write_lock(kits.project, Lock(kits={"other/kit": LockedKit(
        requested="latest", version="0.3.0", installed_at="2026-10-01T00:00:00Z",
        files={"agents/planner.md": LockedFile(sha(theirs))},
    )}))
    plan = (await kits.call("directory::download-kit", {"kit": "acme/team"}))["plan"]
    planner = by_path(plan)["agents/planner.md"]
    assert planner["collision"] == {"owner": "kit", "kit": "other/kit", "version": "0.3.0",
                                    "sha256": sha(theirs), "modified": False}
    assert plan["warnings"][0]["code"] == "agent_overwrite_kit"
    assert plan["warnings"][0]["message"] == (
        "agents/planner.md belongs to kit other/kit 0.3.0; replacing it moves the file to this kit."
    )
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"]})
    assert out["status"] == "applied"
    lock = kits.lock()
    assert lock.kits["other/kit"].files["agents/planner.md"].skipped is True
    assert lock.kits["acme/team"].files["agents/planner.md"].skipped is False
    assert lock.owner_of("agents/planner.md") == "acme/team"


# 14 ------------------------------------------------------------------------------------------


async def test_major_jumps_are_flagged_and_out_of_range_workers_update(kits: KitEnv) -> None:
    await kits.install_v1()
    kits.catalog.publish("acme/team", team_v2(), latest=False)
    plan = (await kits.call("directory::kits::plan-update", {"kit": "acme/team", "version": "2.0.0"}))["plan"]
    assert (plan["major"], plan["bump"], plan["requested"]) == (True, "major", "^2.0.0")
    assert plan["warnings"][0] == {"code": "major_update",
                                   "message": "1.0.0 → 2.0.0 is a major version: expect breaking changes."}
    kanban = workers(plan)["kanban"]
    assert (kanban["installed"], kanban["range"], kanban["action"], kanban["to"]) == ("1.6.1", "^2.0", "update", "2.1.0")
    same = await kits.call("directory::kits::plan-update", {"kit": "acme/team", "version": "1.0.0"})
    assert same == {"status": "up_to_date", "kit": "acme/team",
                    "message": 'acme/team 1.0.0 is up to date for "^1.0.0".'}
    default = await kits.call("directory::kits::plan-update", {"kit": "acme/team"})
    assert default["status"] == "up_to_date"


# 15 ------------------------------------------------------------------------------------------


async def test_removal_deletes_intact_files_keeps_edited_ones_and_drops_the_lock(kits: KitEnv) -> None:
    await kits.install_v1()
    kits.write(FLOW, "# Flow edited\n")
    kits.engine.up = False
    out = await kits.call("directory::kits::remove", {"kit": "acme/team"})
    assert out["message"].startswith("Remove acme/team 1.0.0 is planned (1 warning)")
    plan = out["plan"]
    assert (plan["kind"], plan["from"], plan["to"], plan["requested"], plan["blocking"]) == (
        "remove", "1.0.0", None, "^1", []
    )
    assert "author" not in plan and plan["functions"] == []
    files = by_path(plan)
    assert (files[FLOW]["default"], files[FLOW]["note"], files[FLOW]["local"]) == ("keep", "edited by you", "edited")
    assert files["agents/planner.md"]["default"] == "remove"
    assert plan["warnings"][0]["code"] == "edited_file_kept"
    kanban = workers(plan)["kanban"]
    assert (kanban["action"], kanban["range_from"]) == ("remove", "^1.4")
    assert "range" not in kanban
    assert plan["counts"]["agents"] == 0 and plan["counts"]["removed"] == 4
    error = await kits.fails("directory::kits::apply", {"plan_id": plan["plan_id"], "remove_workers": ["github"]})
    assert error.code == "D513" and 'worker "github" is not one this plan can remove' in error.message
    error = await kits.fails("directory::kits::apply", {"plan_id": plan["plan_id"], "remove_workers": ["kanban"]})
    assert error.code == "D514"
    kits.engine.up = True
    out = await kits.call("directory::kits::apply", {"plan_id": plan["plan_id"], "remove_workers": ["kanban"]})
    assert out["status"] == "applied"
    assert out["report"]["workers_removed"] == ["kanban"]
    assert "compose::remove kanban" in kits.engine.log
    assert not kits.path("agents/planner.md").exists()
    assert kits.read(FLOW) == "# Flow edited\n"
    assert not (kits.project / "kits.lock").exists()
    assert not kits.path(LEGACY_PATH).parent.exists()
    assert out["message"] == "Removed acme/team: 0 files written, 3 removed, 1 kept."


# 16 ------------------------------------------------------------------------------------------


async def test_check_updates_honours_ignored_versions_and_list_counts_attention(kits: KitEnv) -> None:
    await kits.install_v1()
    await kits.service.drain()
    kits.catalog.publish("acme/team", team_v11())
    events = kits.engine.events("directory::kits::on-change")
    before = len(events)
    out = await kits.call("directory::kits::check-updates")
    assert out["available"] == 1
    assert out["kits"] == [{"kit": "acme/team", "current": "1.0.0", "available": "1.1.0", "latest": "1.1.0",
                            "major": False}]
    assert out["checked_at"] == "2026-10-08T14:02:11Z" and out["error"] is None
    assert kits.engine.events("directory::kits::on-change")[before:] == [{"op": "updates"}]
    listing = await kits.call("directory::kits::list")
    assert listing["attention"] == 1
    assert listing["kits"][0]["files"]["agents"] == 2
    assert listing["kits"][0]["update"]["available"] == "1.1.0"
    assert listing["updates_checked_at"] == "2026-10-08T14:02:11Z"
    ignored = await kits.call("directory::kits::ignore", {"kit": "acme/team", "version": "1.1.0"})
    assert ignored == {"kit": "acme/team", "ignored_versions": ["1.1.0"]}
    assert kits.engine.events("directory::kits::on-change")[-1] == {"op": "updates", "kit": "acme/team"}
    listing = await kits.call("directory::kits::list")
    assert listing["attention"] == 0
    assert listing["kits"][0]["update"]["available"] is None
    assert listing["kits"][0]["update"]["ignored"] == "1.1.0"
    assert "ignored_versions" in (kits.project / "kits.lock").read_text()
    again = await kits.call("directory::kits::check-updates")
    assert again["available"] == 0
    assert again["kits"][0]["ignored"] == "1.1.0" and again["kits"][0]["available"] is None
    cache = json.loads((kits.project / ".iii" / "directory" / "kit-updates.json").read_text())
    assert cache["kits"]["acme/team"] == {"current": "1.0.0", "available": None, "latest": "1.1.0",
                                          "major": False, "ignored": "1.1.0"}
    back = await kits.call("directory::kits::ignore", {"kit": "acme/team", "version": "1.1.0", "ignore": False})
    assert back["ignored_versions"] == []
    assert (await kits.call("directory::kits::list"))["attention"] == 1
    assert "ignored_versions" not in (kits.project / "kits.lock").read_text()


async def test_check_updates_errors_are_cached(kits: KitEnv) -> None:
    await kits.install_v1()
    await kits.service.drain()
    kits.registry.fail("/k/updates", 503, method="POST")
    error = await kits.fails("directory::kits::check-updates", {})
    assert error.code == "D520"
    listing = await kits.call("directory::kits::list")
    assert listing["updates_error"] == error.message
    assert (await kits.fails("directory::kits::check-updates", {"kit": "acme/other"})).code == "D510"


# 17 ------------------------------------------------------------------------------------------


async def test_get_reports_file_states_and_diff_serves_both_sides(kits: KitEnv) -> None:
    await kits.install_v1()
    kits.write(FLOW, "# Flow edited\n")
    kits.path("agents/reviewer.md").unlink()
    got = await kits.call("directory::kits::get", {"kit": "acme/team", "registry": True})
    assert (got["files"]["edited"], got["files"]["missing"], got["files"]["intact"]) == (1, 1, 2)
    assert got["readme"] == "# team\n"
    assert got["detail"]["version"] == "1.0.0"
    rows = {row["path"]: row for row in got["file_list"]}
    assert rows[FLOW]["id"] == "acme/team/tickets/flow"
    assert (rows[FLOW]["state"], rows[FLOW]["sha256"], rows[FLOW]["local_sha256"]) == (
        "edited", sha(FLOW_V1), sha("# Flow edited\n")
    )
    assert rows["agents/reviewer.md"]["local_sha256"] is None
    assert got["worker_status"] == [{"name": "kanban", "range": "^1.4", "declared": "^1.4", "installed": "1.6.1",
                                     "satisfied": True, "path": False,
                                     "registry_url": got["registry_url"].replace("/kits/acme/team", "/workers/kanban")}]
    plain = await kits.call("directory::kits::get", {"kit": "acme/team"})
    assert "detail" not in plain and "readme" not in plain
    diff = await kits.call("directory::kits::diff", {"kit": "acme/team", "path": FLOW})
    assert diff == {"kit": "acme/team", "path": FLOW, "base": FLOW_V1, "local": "# Flow edited\n", "state": "edited"}
    gone = await kits.call("directory::kits::diff", {"kit": "acme/team", "path": "agents/reviewer.md"})
    assert (gone["local"], gone["state"]) == (None, "missing")
    error = await kits.fails("directory::kits::diff", {"kit": "acme/team", "path": "agents/none.md"})
    assert error.message == "D510 not_found: agents/none.md is not a file of acme/team."


# 18 ------------------------------------------------------------------------------------------


async def test_lock_origins_feed_agent_sources(kits: KitEnv) -> None:
    if "directory::agents::get" not in kits.directory.table.functions:
        pytest.skip("agents surface not present")
    await kits.install_v1()
    got = await kits.call("directory::agents::get", {"id": "planner"})
    assert got["source"]["kind"] == "kit" and got["source"]["version"] == "1.0.0"
    assert got["source"]["kit"] == "acme/team" and got["source"]["modified"] is False
    kits.write("agents/planner.md", PLANNER_V1 + "Edited.\n")
    got = await kits.call("directory::agents::get", {"id": "planner"})
    assert got["source"]["modified"] is True
