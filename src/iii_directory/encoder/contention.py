"""Whether the host has a core to spare for a second encoder thread, learned from the encoder's
own capability runs.

A lone call's few capability texts (a capability and its action-and-object text) finish in the
time of the longer one when each runs on its own thread, but only while a second core is idle:
on a host whose cores are taken by other processes the two runs are time-sliced and the split
costs more than one batch (docs/record/performance.md, "A call's two texts on two cores"). The
load average cannot tell: a worker answering one agent's calls back to back keeps it near one
on its own. So the encoder threads report each capability run's thread CPU time and wall time
(background runs pause by design and are not counted); a run whose wall time exceeds
`STARVED_RATIO` × its CPU time + `STARVED_SLACK_S` waited for a core. While at least
`STARVED_OF_RECENT` of the last `RECENT_RUNS` runs did, the host counts as contended and small
splits stay off; the one-thread runs made meanwhile keep measuring, so splits resume once the
other processes are gone. One slow run (a collection, a page fault) changes nothing.
"""

from __future__ import annotations

import os
import threading
from collections import deque

STARVED_RATIO = 1.5  # chosen: a run sharing its core half the time is well above it
"""Wall time over thread CPU time from which a run counts as having waited for a core."""
STARVED_SLACK_S = 0.001  # chosen: a thread wake-up and the Python around a short run
"""Absolute slack added to the ratio, so a sub-millisecond run never counts as starved."""
RECENT_RUNS = 4  # chosen: a few calls of one agent
"""Capability runs the decision looks back on."""
STARVED_OF_RECENT = 2  # chosen: two, so one outlier is not enough
"""Starved runs among the recent ones from which the host counts as contended."""


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform has one)."""
    getter = getattr(os, "sched_getaffinity", None)
    if getter is not None:
        try:
            return len(getter(0))
        except OSError:
            pass
    return os.cpu_count() or 1


class CoreContention:
    """What the encoder runs say about the host's cores (see the module docstring).

    `record(cpu_s, wall_s)` is called by an encoder thread after each capability run; `spare()`
    says whether a second thread may take half of a lone call's texts."""

    def __init__(self, cores: int | None = None) -> None:
        self.cores = available_cores() if cores is None else cores
        self.starved_runs = 0
        self._recent: deque[bool] = deque(maxlen=RECENT_RUNS)
        self._lock = threading.Lock()

    def record(self, cpu_s: float, wall_s: float) -> None:
        """Note one run: whether it waited for a core."""
        starved = wall_s > cpu_s * STARVED_RATIO + STARVED_SLACK_S
        with self._lock:
            self.starved_runs += starved
            self._recent.append(starved)

    def spare(self) -> bool:
        """Whether a second core is likely idle: the process may use two or more, and fewer
        than `STARVED_OF_RECENT` of the last `RECENT_RUNS` runs waited for one."""
        with self._lock:
            return self.cores >= 2 and sum(self._recent) < STARVED_OF_RECENT
