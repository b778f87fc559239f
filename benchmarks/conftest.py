"""Benchmark helpers: a ratio table printed after the pytest-benchmark tables.

Each benchmark calls `report(benchmark, group, implementation, items)` (from `_report`) after
it ran: `items` is how many queries (or documents) one timed call processed, so the table can
show the time per item and the speed-up of `_rank` over every other implementation measured
in the same run. With `RANK_BENCH_MARKDOWN=path` the table is also written there as Markdown
(for the README).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _report import BASELINES, ROWS, SUBJECTS, Row, unit  # noqa: E402


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
            line = f"{group:<28} {row.implementation:<16} {unit(row.per_item):>11} {1.0 / row.per_item:>12,.0f}"
            for base in BASELINES:
                other = by_name.get(base)
                cell = ""
                if row.implementation in SUBJECTS and other is not None:
                    cell = f"{other.per_item / row.per_item:.1f}x"
                line += f" {cell:>15}"
            if row.note:
                line += f"  {row.note}"
            write(line)
    target = os.environ.get("RANK_BENCH_MARKDOWN")
    if target:
        Path(target).write_text(markdown(groups), encoding="utf-8")
        write(f"(markdown table written to {target})")


def markdown(groups: dict[str, list[Row]]) -> str:
    """The summary as a Markdown table: one row per implementation, ratio columns for the
    measured subject against each baseline present in its group."""
    lines = [
        "| benchmark | implementation | per item | items/s | speed-up |",
        "|---|---|---:|---:|---|",
    ]
    for group, rows in groups.items():
        by_name = {r.implementation: r for r in rows}
        for row in rows:
            ratios = []
            if row.implementation in SUBJECTS:
                ratios = [
                    f"{by_name[b].per_item / row.per_item:.1f}x vs {b}"
                    for b in BASELINES
                    if b in by_name and b != row.implementation
                ]
            extra = ", ".join(ratios + ([row.note] if row.note else []))
            lines.append(
                f"| {group} | {row.implementation} | {unit(row.per_item)} | "
                f"{1.0 / row.per_item:,.0f} | {extra} |"
            )
    return "\n".join(lines) + "\n"
