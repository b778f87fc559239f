"""Benchmark helpers: a ratio table printed after the pytest-benchmark tables.

Each benchmark calls `report(benchmark, group, implementation, items)` after it ran: `items`
is how many queries (or documents) one timed call processed, so the table can show the time
per item and the speed-up of `_rank` over every other implementation measured in the same run.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

#: implementations the ratio columns compare against, in column order
BASELINES = ("bm25s", "bm25s-scores", "rank_bm25", "reference", "exact")
#: the rows that get ratio cells (the thing being measured against the baselines)
SUBJECTS = ("_rank", "hnsw")


@dataclass
class Row:
    group: str
    implementation: str
    seconds: float  # median seconds per timed call
    items: int
    note: str = ""

    @property
    def per_item(self) -> float:
        return self.seconds / self.items


ROWS: list[Row] = []


def report(benchmark: object, group: str, implementation: str, items: int, note: str = "") -> None:
    """Record one measured implementation for the summary table."""
    stats = getattr(benchmark, "stats", None)
    if stats is None:  # --benchmark-disable
        return
    ROWS.append(Row(group, implementation, stats.stats.median, items, note))


def _unit(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} µs"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not ROWS:
        return
    write = terminalreporter.write_line
    write("")
    write("_rank benchmark summary (median per item; ratio = baseline time / _rank time)")
    groups: dict[str, list[Row]] = {}
    for row in ROWS:
        groups.setdefault(row.group, []).append(row)
    header = f"{'group':<28} {'implementation':<16} {'per item':>11} {'items/s':>12}"
    for base in BASELINES:
        header += f" {'vs ' + base:>15}"
    write(header)
    for group, rows in groups.items():
        by_name = {r.implementation: r for r in rows}
        for row in rows:
            line = f"{group:<28} {row.implementation:<16} {_unit(row.per_item):>11} {1.0 / row.per_item:>12,.0f}"
            for base in BASELINES:
                other = by_name.get(base)
                cell = ""
                if row.implementation in SUBJECTS and other is not None:
                    cell = f"{other.per_item / row.per_item:.1f}x"
                line += f" {cell:>15}"
            if row.note:
                line += f"  {row.note}"
            write(line)
