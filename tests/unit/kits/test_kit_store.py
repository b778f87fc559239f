"""Pending plans on disk (kits.md §6.12)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from iii_directory.errors import DirectoryError
from iii_directory.kits.clock import stamp
from iii_directory.kits.records import Capabilities, Plan, PlanContents, PlanCounts, PlanRecord
from iii_directory.kits.store import PLAN_TTL, PlanStore, is_valid_plan_id, new_plan_id

NOW = datetime(2026, 10, 8, 14, 2, 11, tzinfo=UTC)


def record(kit: str = "acme/team", kind: str = "install", created: datetime = NOW) -> PlanRecord:
    plan_id = new_plan_id()
    plan = Plan(
        plan_id=plan_id, kind=kind, kit=kit, requested="latest", registry_url="u",  # type: ignore[arg-type]
        created_at=stamp(created), expires_at=stamp(created + PLAN_TTL), review="r", major=False,
        workers=[], files=[], capabilities=Capabilities(), functions=[], warnings=[], blocking=[],
        counts=PlanCounts(agents=0, skills=0, workers=0, functions=0, added=0, modified=0, removed=0,
                          unchanged=0, collisions=0, conflicts=0, decisions_required=0),
    )
    return PlanRecord(plan=plan, contents=PlanContents(blobs={"ab": "text"}, ours={"agents/x.md": "mine"}))


def test_ids() -> None:
    plan_id = new_plan_id()
    assert plan_id.startswith("kp_") and len(plan_id) == 35
    assert all(c in "0123456789abcdef" for c in plan_id[3:])
    assert is_valid_plan_id(plan_id)
    for bad in ("../etc/passwd", "kp_../../x", "kp_", "kp_" + "a" * 62, "xx_abc", "kp_a-b"):
        assert not is_valid_plan_id(bad)


def test_round_trip_delete_and_traversal(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    rec = record()
    store.save(rec)
    path = tmp_path / ".iii" / "directory" / "kit-plans" / f"{rec.plan.plan_id}.json"
    assert path.is_file()
    loaded = store.load(rec.plan.plan_id)
    assert loaded == rec
    assert store.delete(rec.plan.plan_id) is True
    assert store.delete(rec.plan.plan_id) is False
    assert store.load(rec.plan.plan_id) is None
    assert store.load("../etc/passwd") is None
    assert store.load("kp_../../x") is None
    assert store.delete("kp_../../x") is False
    bad = record()
    bad.plan.plan_id = "kp_../../x"
    with pytest.raises(DirectoryError, match="invalid plan id"):
        store.save(bad)


def test_unreadable_record(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    store.dir.mkdir(parents=True)
    (store.dir / "kp_abc.json").write_text("{not json")
    with pytest.raises(DirectoryError, match="plan kp_abc is unreadable"):
        store.load("kp_abc")


def test_listing_cleans_expired_and_unparsable(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    old = record(created=NOW - timedelta(hours=25))
    fresh = record(created=NOW - timedelta(hours=1))
    newest = record(created=NOW)
    for rec in (old, fresh, newest):
        store.save(rec)
    (store.dir / "kp_broken.json").write_text("[]")
    listed = store.list(NOW)
    assert [r.plan.plan_id for r in listed] == [newest.plan.plan_id, fresh.plan.plan_id]
    assert not (store.dir / f"{old.plan.plan_id}.json").exists()
    assert not (store.dir / "kp_broken.json").exists()


def test_supersede_same_kit_and_kind(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    first, second = record(), record()
    other_kind = record(kind="remove")
    other_kit = record(kit="acme/other")
    for rec in (first, second, other_kind, other_kit):
        store.save(rec)
    removed = store.supersede("acme/team", "install", second.plan.plan_id, NOW)
    assert removed == [first.plan.plan_id]
    assert {r.plan.plan_id for r in store.list(NOW)} == {
        second.plan.plan_id, other_kind.plan.plan_id, other_kit.plan.plan_id
    }
