"""Pending plans on disk (docs/rules/kits.md §6.12).

`<root>/.iii/directory/kit-plans/<plan_id>.json` = `{plan, contents, progress?}`, written
atomically. A plan id is `kp_` + ASCII letters and digits, at most 64 characters; any other id
is treated as absent (load → None, delete → False, save → error), which also keeps ids from
naming a path outside the directory. Plans live 24 hours; listing deletes expired and
unparsable records.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import ValidationError

from ..atomic import SelfWrites, atomic_delete, atomic_write
from ..errors import DirectoryError
from .clock import parse_stamp
from .records import PlanRecord

PLAN_TTL = timedelta(hours=24)
_PLAN_ID = re.compile(r"^kp_[A-Za-z0-9]{1,61}\Z")


def new_plan_id() -> str:
    """`kp_` + a UUIDv4 as 32 lower-case hex characters."""
    return "kp_" + uuid.uuid4().hex


def is_valid_plan_id(plan_id: str) -> bool:
    return bool(_PLAN_ID.match(plan_id))


def plans_dir(root: Path) -> Path:
    return root / ".iii" / "directory" / "kit-plans"


def is_expired(record: PlanRecord, now: datetime) -> bool:
    """Expired ⇔ `expires_at` ≤ now, or `expires_at` does not parse."""
    expires = parse_stamp(record.plan.expires_at)
    return expires is None or expires <= now


class PlanStore:
    def __init__(self, root: Path, marks: SelfWrites | None = None) -> None:
        self.dir = plans_dir(root)
        self._marks = marks

    def _path(self, plan_id: str) -> Path | None:
        return self.dir / f"{plan_id}.json" if is_valid_plan_id(plan_id) else None

    def save(self, record: PlanRecord) -> None:
        path = self._path(record.plan.plan_id)
        if path is None:
            raise DirectoryError.plain(f"invalid plan id {record.plan.plan_id!r}")
        text = json.dumps(record.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False)
        atomic_write(path, text + "\n", self._marks)

    def load(self, plan_id: str) -> PlanRecord | None:
        """The record, None when missing (or the id is invalid); an unparsable record raises
        `plan <id> is unreadable: …`. Expiry is not checked."""
        path = self._path(plan_id)
        if path is None:
            return None
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise DirectoryError.plain(f"plan {plan_id} is unreadable: {exc}") from None
        try:
            return PlanRecord.model_validate(json.loads(text))
        except (ValueError, ValidationError) as exc:
            raise DirectoryError.plain(f"plan {plan_id} is unreadable: {_first_line(exc)}") from None

    def delete(self, plan_id: str) -> bool:
        path = self._path(plan_id)
        if path is None or not path.exists():
            return False
        try:
            atomic_delete(path, self._marks)
        except DirectoryError:
            return False
        return True

    def list(self, now: datetime) -> list[PlanRecord]:
        """Live plans, newest first; unparsable or expired records are deleted."""
        try:
            candidates = sorted(self.dir.glob("*.json"))
        except OSError:
            return []
        records: list[PlanRecord] = []
        for path in candidates:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            try:
                record = PlanRecord.model_validate(json.loads(text))
            except (ValueError, ValidationError):
                self._remove(path)
                continue
            if is_expired(record, now):
                self._remove(path)
                continue
            records.append(record)
        records.sort(key=lambda r: r.plan.created_at, reverse=True)
        return records

    def supersede(self, kit: str, kind: str, keep: str, now: datetime) -> list[str]:
        """Delete every other pending plan of the same kit and kind; return their ids."""
        removed: list[str] = []
        for record in self.list(now):
            plan = record.plan
            if plan.kit == kit and plan.kind == kind and plan.plan_id != keep:
                if self.delete(plan.plan_id):
                    removed.append(plan.plan_id)
        return removed

    def _remove(self, path: Path) -> None:
        try:
            atomic_delete(path, self._marks)
        except DirectoryError:
            pass


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [exc.__class__.__name__])[0]
