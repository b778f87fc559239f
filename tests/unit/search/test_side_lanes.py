

def test_scan_cost_runs_quick_scans_inline() -> None:
    import time as _time

    from iii_directory.search.side_lanes import INLINE_SCAN_S, ScanCost

    cost = ScanCost()
    assert not cost.inline  # unknown: the first scan goes to a thread
    assert cost.timed(lambda: 7) == 7
    assert cost.inline and cost.seconds is not None and cost.seconds < INLINE_SCAN_S
    cost.timed(lambda: _time.sleep(INLINE_SCAN_S * 2))
    assert not cost.inline  # a slow scan goes back to the thread
    try:
        cost.timed(lambda: 1 / 0)
    except ZeroDivisionError:
        pass
    assert cost.seconds is not None  # a failing scan is timed too
