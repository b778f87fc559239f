"""Benchmark results shared between the benchmark modules and the summary hook.

Kept in its own module so every importer sees one `ROWS` list, whatever name pytest gives
the conftest module.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def unit(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} µs"
