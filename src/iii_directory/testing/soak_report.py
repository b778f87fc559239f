"""The soak's report (`testing/soak.py`): latencies, errors and retries per function, the
worker's RSS and CPU, the cold-start phases, and when the RSS growth baseline is read — an event
after the worker is ready, not a share of the run."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from ..search.request_limits import CAPABILITY_MAX_CHARS, MAX_CAPABILITIES

SEARCH = "directory::search_functions"
RSS_SETTLE_S = 1.0
"""Seconds after the worker is ready (see `SoakSession.load`) before the growth baseline is read."""


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile: the value at rank ⌈q·n⌉ (1-based) of the sorted sample."""
    if not sorted_values:
        return 0.0
    rank = max(1, -(-int(q * 1000) * len(sorted_values) // 1000))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def status_bytes(pid: int, key: str) -> int | None:
    """A kB figure of Linux `/proc/<pid>/status` (`VmRSS`, `VmHWM`, …) in bytes; None elsewhere."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(f"{key}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def rss_of(pid: int) -> int | None:
    """Resident set size in bytes (`VmRSS`); None where it cannot be read."""
    return status_bytes(pid, "VmRSS")


def cpu_of(pid: int) -> float | None:
    """CPU seconds (user + system) the process has used (Linux `/proc/<pid>/stat`); None
    elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ----------------------------------------------------------------------------------- report


def ready_moment(mode: str, first_answer_at: float | None, encoder_at: float | None) -> float | None:
    """When the worker is ready to be measured: its first search answer (registration, boot
    snapshot and first-call imports are behind it), and in a model-backed mode not before its
    encoder is loaded; None until then."""
    if first_answer_at is None or (mode != "lexical" and encoder_at is None):
        return None
    return first_answer_at if mode == "lexical" else max(first_answer_at, encoder_at)  # type: ignore[type-var]


def baseline_due(now: float, start: float, ready_at: float | None, warmup: float,
                 rss_warm_at: float | None, settle: float = RSS_SETTLE_S) -> bool:
    """Whether the RSS growth baseline is read now: `rss_warm_at` seconds after the start when
    given; else `settle` seconds after the worker is ready, and not before the warm-up ends —
    an event, not a share of the run, so a slow host delays the baseline instead of reading
    it in the middle of the model load."""
    if rss_warm_at is not None:
        return now >= start + rss_warm_at
    return ready_at is not None and now >= max(ready_at + settle, start + warmup)


@dataclass
class FunctionStats:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    retries: int = 0
    finished: list[float] = field(default_factory=list)
    """When each measured call ended (monotonic), beside `latencies`."""
    failed_at: list[float] = field(default_factory=list)


@dataclass
class Phase:
    """One slice of the run: [start, end) seconds after the callers started."""

    start: float
    end: float
    calls: int
    search: list[float]
    other: list[float]
    errors: int
    rss: int | None


@dataclass
class SoakReport:
    seconds: float
    callers: int
    functions: dict[str, FunctionStats]
    rss_boot: int | None
    rss_warm: int | None
    rss_end: int | None
    rss_bound: int
    in_process: bool
    drops: int = 0
    mode: str = "lexical"
    phases: list[Phase] = field(default_factory=list)
    cpu_seconds: float | None = None
    """Worker CPU (user + system) over the measured window."""
    origin: float = 0.0
    """When the measured window began (monotonic): `tail` times are seconds after it."""
    search_modes: dict[str, int] = field(default_factory=dict)
    """Measured search answers by their `search_mode`."""
    ready_after: float | None = None
    """Seconds after the callers started when the worker was ready (hybrid: encoder loaded)."""
    first_hybrid_after: float | None = None
    """Seconds after the callers started of the first hybrid search answer."""
    long_callers: int = 0
    """Callers whose searches send 18 distinct maximum-length capabilities."""
    long_caller_calls: int = 0
    """Measured calls made by the long callers (the rest by the ordinary ones)."""

    def tail(self, name: str, share: float = 0.01) -> list[tuple[float, float]]:
        """The slowest `share` of `name`'s calls (at least one) as (seconds after the start of
        the window when it ended, latency in seconds), slowest first: where a p99 was made."""
        stats = self.functions.get(name)
        if stats is None or not stats.latencies:
            return []
        rows = sorted(zip(stats.latencies, stats.finished), reverse=True)
        keep = max(1, math.ceil(len(rows) * share))
        return [(round(at - self.origin, 3), lat) for lat, at in rows[:keep]]

    @property
    def cpu_ms_per_call(self) -> float | None:
        return None if self.cpu_seconds is None or not self.calls else self.cpu_seconds * 1e3 / self.calls

    @property
    def calls(self) -> int:
        return sum(len(s.latencies) for s in self.functions.values())

    @property
    def errors(self) -> list[str]:
        return [e for s in self.functions.values() for e in s.errors]

    @property
    def retries(self) -> int:
        return sum(s.retries for s in self.functions.values())

    @property
    def hybrid_share(self) -> float | None:
        """Share of measured search answers given in hybrid (None without search answers)."""
        answered = sum(self.search_modes.values())
        return None if not answered else self.search_modes.get("hybrid", 0) / answered

    def modes_line(self) -> str:
        answered = sum(self.search_modes.values())
        parts = [f"{mode} {self.search_modes.get(mode, 0)} ({self.search_modes.get(mode, 0) / max(answered, 1):.0%})"
                 for mode in ("hybrid", "lexical", "judge") if mode in self.search_modes or mode != "judge"]
        first = "never" if self.first_hybrid_after is None else f"{self.first_hybrid_after:.1f} s"
        return f"search answers: {', '.join(parts)}; first hybrid answer after {first}"

    @property
    def rss_growth(self) -> int | None:
        if self.rss_warm is None or self.rss_end is None:
            return None
        return self.rss_end - self.rss_warm

    @property
    def ok(self) -> bool:
        growth = self.rss_growth
        return not self.errors and (growth is None or growth <= self.rss_bound)

    def table(self) -> str:
        mib = 1024 * 1024
        lines = [
            f"soak ({self.mode}): {self.callers} callers × {self.seconds:.0f} s measured, worker "
            f"{'in-process' if self.in_process else 'subprocess'}"
            + (f", {self.long_callers} callers sending {MAX_CAPABILITIES} × {CAPABILITY_MAX_CHARS}-character "
               "capabilities" if self.long_callers else "")
            + (f", {self.drops} connection drops" if self.drops else ""),
            f"{'function':<30} {'calls':>8} {'calls/s':>9} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9} {'errors':>7}",
        ]
        for name in sorted(self.functions):
            stats = self.functions[name]
            values = sorted(stats.latencies)
            lines.append(
                f"{name:<30} {len(values):>8} {len(values) / self.seconds:>9.1f} "
                f"{percentile(values, 0.50) * 1e3:>9.1f} {percentile(values, 0.99) * 1e3:>9.1f} "
                f"{(values[-1] if values else 0.0) * 1e3:>9.1f} {len(stats.errors):>7}")
        everything = sorted(v for s in self.functions.values() for v in s.latencies)
        lines.append(
            f"{'all':<30} {len(everything):>8} {len(everything) / self.seconds:>9.1f} "
            f"{percentile(everything, 0.50) * 1e3:>9.1f} {percentile(everything, 0.99) * 1e3:>9.1f} "
            f"{(everything[-1] if everything else 0.0) * 1e3:>9.1f} {len(self.errors):>7}")
        if self.retries:
            lines.append(f"re-sent after a drop: {self.retries}")

        def fmt(value: int | None) -> str:
            return "n/a" if value is None else f"{value / mib:.1f} MiB"

        growth = self.rss_growth
        ready = "never ready" if self.ready_after is None else f"ready after {self.ready_after:.1f} s"
        lines.append(
            f"worker RSS: boot {fmt(self.rss_boot)}, baseline {fmt(self.rss_warm)} ({ready}), end "
            f"{fmt(self.rss_end)} (growth {fmt(growth)}; bound {self.rss_bound / mib:.0f} MiB after the baseline"
            + ("; not judged: no baseline" if growth is None else "") + ")")
        lines.append(self.modes_line())
        if self.long_callers:
            ordinary = self.calls - self.long_caller_calls
            lines.append(f"calls by the {self.callers - self.long_callers} ordinary callers {ordinary} "
                         f"({ordinary / self.seconds:.1f}/s), by the {self.long_callers} long callers "
                         f"{self.long_caller_calls} ({self.long_caller_calls / self.seconds:.1f}/s)")
        if self.cpu_seconds is not None and not self.in_process:
            lines.append(f"worker CPU: {self.cpu_seconds:.1f} s over {self.seconds:.0f} s "
                         f"({self.cpu_seconds / self.seconds:.2f} cores), "
                         f"{self.cpu_ms_per_call:.2f} ms per call")
        lines.append(f"errors: {len(self.errors)}" + ("" if not self.errors else f" — first: {self.errors[0]}"))
        if self.phases:
            lines.append("cold-start phases (seconds after the callers started):")
            lines.append(f"  {'phase':<12} {'calls/s':>8} {'search p50':>11} {'search p99':>11} "
                         f"{'other p99':>10} {'errors':>7} {'RSS':>10}")
            for phase in self.phases:
                search, other = sorted(phase.search), sorted(phase.other)
                span = max(phase.end - phase.start, 1e-9)
                lines.append(
                    f"  {f'{phase.start:.0f}–{phase.end:.0f} s':<12} {phase.calls / span:>8.1f} "
                    f"{percentile(search, 0.5) * 1e3:>9.0f}ms {percentile(search, 0.99) * 1e3:>9.0f}ms "
                    f"{percentile(other, 0.99) * 1e3:>8.0f}ms {phase.errors:>7} {fmt(phase.rss):>10}")
        lines.append("result: " + ("PASS" if self.ok else "FAIL"))
        return "\n".join(lines)

    def p99(self, other: bool) -> float:
        """p99 of search calls (`other=False`) or of every other function (`other=True`)."""
        values = sorted(v for name, s in self.functions.items()
                        if (name != SEARCH) == other for v in s.latencies)
        return percentile(values, 0.99)

    def to_json(self) -> dict[str, Any]:
        rows = {}
        for name, stats in self.functions.items():
            values = sorted(stats.latencies)
            rows[name] = {"calls": len(values), "p50_ms": percentile(values, 0.5) * 1e3,
                          "p99_ms": percentile(values, 0.99) * 1e3, "errors": len(stats.errors),
                          "tail": [[at, lat * 1e3] for at, lat in self.tail(name)]}
        phases = [{"start": p.start, "end": p.end, "calls": p.calls, "errors": p.errors, "rss": p.rss,
                   "search_p50_ms": percentile(sorted(p.search), 0.5) * 1e3,
                   "search_p99_ms": percentile(sorted(p.search), 0.99) * 1e3,
                   "other_p99_ms": percentile(sorted(p.other), 0.99) * 1e3} for p in self.phases]
        return {"mode": self.mode, "seconds": self.seconds, "callers": self.callers, "calls": self.calls,
                "throughput": self.calls / self.seconds, "functions": rows, "errors": self.errors[:20],
                "rss_boot": self.rss_boot, "rss_warm": self.rss_warm, "rss_end": self.rss_end,
                "rss_bound": self.rss_bound, "drops": self.drops, "ok": self.ok, "phases": phases,
                "cpu_seconds": self.cpu_seconds, "search_modes": self.search_modes,
                "hybrid_share": self.hybrid_share, "ready_after": self.ready_after,
                "first_hybrid_after": self.first_hybrid_after, "long_callers": self.long_callers,
                "long_caller_calls": self.long_caller_calls}
