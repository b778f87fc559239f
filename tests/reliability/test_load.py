"""The soak in small (issue 11): 10 concurrent callers for 3 s against `iii-directory serve`
through the test engine — zero errors, every write's file holds what was sent, no staging
file left, and bounded RSS growth after warm-up (`benchmarks/soak.py` runs the full size)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from iii_directory.testing import soak

pytestmark = [pytest.mark.wire, pytest.mark.timeout(120),
              pytest.mark.skipif(sys.platform == "win32", reason="POSIX worker subprocess")]


async def test_short_soak_has_no_errors_and_bounded_memory(tmp_path: Path) -> None:
    async with soak.SoakSession(tmp_path, seed=11) as session:
        report = await session.load(3.0, 10, warmup=1.0)
        alive = session.worker.alive()
    print(report.table())
    assert alive
    assert report.errors == []
    assert report.calls >= 30
    assert {"directory::search_functions", "directory::skills::get", "directory::skills::list",
            "directory::agents::get", "directory::skills::create"} <= set(report.functions)
    searches = report.functions["directory::search_functions"].latencies
    assert report.search_modes == {"lexical": len(searches)}  # every measured answer counted by mode
    assert report.ready_after is not None and report.rss_warm is not None
    if report.rss_growth is not None:
        assert report.rss_growth <= report.rss_bound, report.table()
    assert not list((tmp_path / "skills").rglob("*.tmp"))
