"""Timestamps of the kits subsystem: RFC 3339 UTC, second precision, `Z` suffix
(`2026-10-08T14:02:11Z`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]

UPDATE_INTERVAL_S = 6 * 3600.0
"""The scheduled update check's period (docs/rules/kits.md §9.1)."""
FIRST_CHECK_DELAY_S = 15.0
"""The scheduled update check's first run, after the worker starts."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def stamp(moment: datetime) -> str:
    """`2026-10-08T14:02:11Z`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_stamp(text: str | None) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime, or None when it does not parse."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
