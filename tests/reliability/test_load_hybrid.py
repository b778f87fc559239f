"""The soak in small in hybrid, the mode an installation with the `dense` extra runs (issue 16):
20 concurrent callers for 5 s against a cold `iii-directory serve` (model loading, empty vector
cache) — every call answers without an error and the worker does not collapse (a count of
answered calls, not a speed). The speed figures are `benchmarks/soak.py` output in the README."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from iii_directory.testing import soak

pytestmark = [pytest.mark.wire, pytest.mark.dense, pytest.mark.timeout(120),
              pytest.mark.skipif(sys.platform == "win32", reason="POSIX worker subprocess")]


async def test_short_hybrid_soak_from_a_cold_start_answers_every_call(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    async with soak.SoakSession(tmp_path, seed=16, mode="hybrid", rss_bound_mib=256) as session:
        report = await session.load(5.0, 20)
        alive = session.worker.alive()
    print(report.table())
    assert alive
    assert report.errors == []
    searches = report.functions["directory::search_functions"].latencies
    others = [v for name, s in report.functions.items() if name != "directory::search_functions"
              for v in s.latencies]
    assert len(searches) >= 5 and len(others) >= 10  # searches and file work both kept answering
    assert sum(report.search_modes.values()) == len(searches)  # every answer's mode is counted
    assert "search answers:" in report.table()
    assert not list((tmp_path / "skills").rglob("*.tmp"))
