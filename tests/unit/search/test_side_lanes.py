"""When the skills side lane scans on the event loop and when in a worker thread."""

from __future__ import annotations

import time

import pytest

from iii_directory.search.side_lanes import INLINE_SCAN_S, ScanCost


def test_scan_cost_runs_quick_scans_inline() -> None:
    cost = ScanCost()
    assert not cost.inline  # unknown: the first scan goes to a thread
    assert cost.timed(lambda: 7) == 7
    assert cost.inline and cost.seconds is not None and cost.seconds < INLINE_SCAN_S
    cost.timed(lambda: time.sleep(INLINE_SCAN_S * 2))
    assert cost.inline  # one slow scan moves the average by a quarter only
    for _ in range(6):
        cost.timed(lambda: time.sleep(INLINE_SCAN_S * 2))
    assert not cost.inline  # scans that keep being slow go back to the thread


def test_a_failing_scan_is_timed_too() -> None:
    cost = ScanCost()
    with pytest.raises(ZeroDivisionError):
        cost.timed(lambda: 1 / 0)
    assert cost.seconds is not None
