"""ThrottledLog: the first line of a key at INFO, then one per interval with the held count."""

from __future__ import annotations

import logging

import pytest

from iii_directory.log_throttle import ThrottledLog


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_repeats_within_the_interval_go_to_debug_and_are_counted(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    throttled = ThrottledLog(logging.getLogger("probe.throttle"), interval_s=30.0, clock=clock)
    with caplog.at_level(logging.DEBUG, logger="probe.throttle"):
        for _ in range(5):
            throttled.info("k", "skipped: %s", "busy")
            clock.now += 1.0
        clock.now = 131.0
        throttled.info("k", "skipped: %s", "busy")
    levels = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert levels[0] == (logging.INFO, "skipped: busy")
    assert [lvl for lvl, _ in levels[1:5]] == [logging.DEBUG] * 4
    assert levels[5] == (logging.INFO, "skipped: busy (4 more like it in the last 31 s)")


def test_keys_are_throttled_separately(caplog: pytest.LogCaptureFixture) -> None:
    throttled = ThrottledLog(logging.getLogger("probe.throttle2"), interval_s=30.0, clock=Clock())
    with caplog.at_level(logging.INFO, logger="probe.throttle2"):
        throttled.info("a", "first %s", "a")
        throttled.info("b", "first %s", "b")
        throttled.info("a", "again %s", "a")
    assert [r.getMessage() for r in caplog.records] == ["first a", "first b"]
