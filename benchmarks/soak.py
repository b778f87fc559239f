"""Soak: many concurrent callers against one worker through the in-process test engine (issue 11).

Run::

    python benchmarks/soak.py                       # 50 callers for 60 s, the installed default mode
    python benchmarks/soak.py --mode both           # lexical, then hybrid, same machine, same run
    python benchmarks/soak.py --seconds 10 --callers 20 --in-process
    python benchmarks/soak.py --capabilities both   # ordinary, then half the callers sending long ones

What runs: a `TestEngine` on a loopback port serving a 56-function peer catalog
(`iii_directory/data/example_catalog.json`), a `MockRegistry` with a few installable workers,
and the worker — `iii-directory serve` as a subprocess (default; its RSS is the worker's own) or
in this process (`--in-process`; RSS then includes the engine and the callers). Project: 15
skill namespaces × 9 documents, 6 agent profiles.

Each caller loops until the deadline, drawing one operation per call:
`directory::search_functions` with 1–18 capabilities (35 %), `directory::skills::get` (20 %),
`directory::skills::list` (15 %), `directory::agents::get` (10 %), and writes (20 %) walking its
own skill ids (`soak/c<caller>-<n>`) through create → update → update → delete, so writers never
collide. Every answer is checked (a write's file must hold what was sent).

`--mode` is the `function_search_mode` the worker runs: `lexical`, `hybrid` or `both` (one soak
each, lexical first, then the hybrid/lexical ratios); the default is the mode an installation
gets: `hybrid` where the `dense` extra is installed, else `lexical`; a lexical worker runs with
`III_DIRECTORY_PRELOAD=0`, as a host without the extra starts no encoder. Every soak starts cold: a
new worker process with an empty vector cache (`III_DIRECTORY_CACHE_DIR` in the work folder), and
callers start the moment its functions are registered, so the model load, the first index and
the first skill embeddings fall inside the measured window (`--warmup N` excludes the first N
seconds' latencies instead; their errors count either way). A cold-start phase report follows
the table: calls/s, search p50 / p99, other functions' p99, errors and RSS per phase
(`--phase-seconds`, default 10).

`--capabilities long` makes half the callers (0, 2, 4, …) send, in every search, 18 capabilities
of the maximum length (`request_limits.CAPABILITY_MAX_CHARS`), each one new; `both` runs the
ordinary soak, then that one, and prints their ratios against the issue-33 floors.

Printed: calls, throughput, p50 / p99 / max per function, errors (must be 0), how many search
answers were hybrid, lexical or judge (and when the first hybrid one came), and the worker's RSS
after boot, at the growth baseline and at the end. The baseline is read an event after the
worker is ready — `RSS_SETTLE_S` after its first search answer and, in hybrid, after its log
says the encoder is loaded — not at a share of the run, so a loaded host that loads the model
late moves the baseline instead of failing a healthy run; when the encoder never loaded,
growth is not judged (and the report says so). The run fails (exit 1) on any error or when RSS
grows by more than the stated bound after the baseline (`--rss-bound-mib`, default 64 MiB).

`SoakSession` is also the engine of the short load test and the reconnect fault test
(`tests/reliability/`), which import this file by path.
"""

from __future__ import annotations

import argparse
import contextvars
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import anyio

from iii_directory.config import Settings, config_id
from iii_directory.port import EngineCallError
from iii_directory.search.request_limits import CAPABILITY_MAX_CHARS, MAX_CAPABILITIES
from iii_directory.testing.client import TestClient
from iii_directory.testing.engine import TestEngine
from iii_directory.testing.registry import MockRegistry

WORKER_NAME = "iii-directory"
LONG_CALLER: contextvars.ContextVar[bool] = contextvars.ContextVar("long_caller", default=False)
"""Set in a long caller's task: its calls are counted apart."""
SEARCH = "directory::search_functions"
DEFAULT_RSS_BOUND_MIB = 64
RSS_SETTLE_S = 1.0
"""Seconds after the worker is ready (see `SoakSession.load`) before the growth baseline is read."""
ENCODER_READY = b"dense lane ready"
"""The worker's log line once its encoder is loaded (`search/dense_lane.py`)."""
CALL_TIMEOUT_S = 30.0
RETRY_CODES = frozenset({"invocation_stopped", "function_not_found"})
"""Answers meaning "the worker was not there" (dropped mid-call or not yet re-registered)."""

CAPABILITIES = [
    "send an email", "send an email from a template", "list inbox messages", "schedule a meeting",
    "list calendar events", "create an invoice", "refund a payment", "upload a file", "share a document",
    "forecast the weather", "open a support ticket", "close a ticket", "store a key value pair",
    "read a cached value", "translate text", "detect the language", "render a PDF", "merge PDF files",
    "create a pull request", "list repository branches", "run a SQL query", "list database tables",
    "post a chat message", "create a chat channel", "send an SMS", "scrape a web page",
    "extract links from a page", "run a job every hour", "cancel a scheduled job", "summarize a thread",
    "resize an image", "book a flight", "convert currency", "track a parcel", "transcribe audio",
    "look up a customer", "generate a QR code", "search the web", "sign a document", "count words",
]

WEIGHTS: tuple[tuple[str, int], ...] = (
    ("directory::search_functions", 35),
    ("directory::skills::get", 20),
    ("directory::skills::list", 15),
    ("directory::agents::get", 10),
    ("write", 20),
)
WRITE_STEPS = ("directory::skills::create", "directory::skills::update", "directory::skills::update",
               "directory::skills::delete")
CALLED_FUNCTIONS = frozenset({"directory::kits::list", *(fid for fid, _ in WEIGHTS if fid != "write"), *WRITE_STEPS})
"""Every function the soak calls: boot waits until the engine holds all of them (they are
registered one frame at a time, in id order, so one being there does not mean the rest are)."""


def long_capability(serial: int) -> str:
    """A capability of exactly `CAPABILITY_MAX_CHARS` characters, distinct for every `serial`:
    an ordinary request followed by the kind of detail agents paste (ids, names, values)."""
    words = [CAPABILITIES[serial % len(CAPABILITIES)], "for"]
    n = 0
    while len(" ".join(words)) < CAPABILITY_MAX_CHARS:
        words += [f"account{serial}-{n}", "in", f"region{n % 7}", "with", f"note{serial * 31 + n}"]
        n += 1
    text = " ".join(words)[:CAPABILITY_MAX_CHARS]
    return text[:-1] + "x" if text.endswith(" ") else text


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile: the value at rank ⌈q·n⌉ (1-based) of the sorted sample."""
    if not sorted_values:
        return 0.0
    rank = max(1, -(-int(q * 1000) * len(sorted_values) // 1000))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def rss_of(pid: int) -> int | None:
    """Resident set size in bytes (Linux `/proc/<pid>/status`); None elsewhere."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


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


# ---------------------------------------------------------------------------------- project


@dataclass
class Project:
    """The soak's project tree: roots, seeded skills and agent profiles."""

    root: Path

    @property
    def skills(self) -> Path:
        return self.root / "skills"

    @property
    def agents(self) -> Path:
        return self.root / "agents"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def seed(self, namespaces: list[str], pages: int = 8, agents: int = 6) -> tuple[list[str], list[str]]:
        """Write the seeded documents; returns (skill ids, agent ids)."""
        skill_ids: list[str] = []
        for ns in namespaces:
            folder = self.skills / ns
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "index.md").write_text(
                f"---\ntitle: {ns.title()}\ntype: index\n---\n# {ns.title()}\n\nHow to use the {ns} worker.\n",
                encoding="utf-8")
            skill_ids.append(ns)
            for page in range(pages):
                (folder / f"page-{page}.md").write_text(
                    f"---\ntype: how-to\n---\n# {ns} page {page}\n\n"
                    + f"Explains step {page} of working with {ns}. " * 6 + "\n", encoding="utf-8")
                skill_ids.append(f"{ns}/page-{page}")
        self.agents.mkdir(parents=True, exist_ok=True)
        agent_ids = []
        for index in range(agents):
            (self.agents / f"agent-{index}.md").write_text(
                f"---\nname: Agent {index}\ndescription: Soak profile {index}.\nfunctions:\n"
                f"  - mailer::send\n  - directory::skills::get\n---\nYou are soak agent {index}.\n",
                encoding="utf-8")
            agent_ids.append(f"agent-{index}")
        (self.root / ".agents" / "skills").mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        return skill_ids, agent_ids + ["default"]

    def settings(self, registry_url: str, mode: str = "lexical") -> Settings:
        return Settings(
            skills_folder=str(self.skills),
            local_skills_folder=str(self.skills / "iii"),
            agents_folder=str(self.agents),
            agents_skills_folder=str(self.root / ".agents" / "skills"),
            filter_unregistered=False,
            auto_download=False,
            registry_url=registry_url,
            function_search_mode=mode,
        )


def installed_default_mode() -> str:
    """The search mode an installation serves: `hybrid` with the `dense` extra, else `lexical`."""
    from iii_directory.search.dense_lane import dense_installed

    return "hybrid" if dense_installed() else "lexical"


def example_catalog() -> list[dict[str, Any]]:
    path = resources.files("iii_directory") / "data" / "example_catalog.json"
    return json.loads(path.read_text(encoding="utf-8"))


def serve_peers(engine: TestEngine, catalog: list[dict[str, Any]]) -> list[str]:
    """Register every catalog record as a peer function; returns their namespaces."""

    async def answer(data: Any) -> dict[str, Any]:
        return {"ok": True}

    for record in catalog:
        engine.add_function(record["function_id"], answer, description=record.get("description"),
                            request_format=record.get("request_schema"), metadata=record.get("metadata") or {})
    return sorted({r["function_id"].split("::", 1)[0] for r in catalog})


def publish_registry(registry: MockRegistry) -> None:
    for name, text in (("weatherly", "Forecasts and weather alerts"), ("parcel", "Track parcels and shipments"),
                       ("imagery", "Resize and convert images"), ("voice", "Transcribe audio recordings")):
        registry.add_worker(name, version="1.0.0", description=text, functions=[
            {"id": f"{name}::run", "description": f"{text}.", "request_format": {"type": "object"}}])


# ---------------------------------------------------------------------------------- workers


class SubprocessWorker:
    """`iii-directory serve` in its own process (its RSS is the worker's alone)."""

    def __init__(self, url: str, project: Project, log_path: Path, *, preload: bool = True) -> None:
        self.url, self.project, self.log_path, self.preload = url, project, log_path, preload
        self.process: subprocess.Popen[bytes] | None = None
        self._log_read = 0
        self._encoder_loaded = False

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
        env.update({"HOME": str(self.project.home), "OTEL_ENABLED": "false",
                    "III_DIRECTORY_CACHE_DIR": str(self.project.root / "vectors")})
        if not self.preload:
            env["III_DIRECTORY_PRELOAD"] = "0"
        with self.log_path.open("ab") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "iii_directory", "serve", "--url", self.url],
                stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=str(self.project.root))

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def encoder_loaded(self) -> bool:
        """The worker's log says its encoder is loaded (`ENCODER_READY`); reads only what the
        log gained since the last look."""
        if not self._encoder_loaded:
            try:
                with self.log_path.open("rb") as handle:
                    start = max(0, self._log_read - len(ENCODER_READY))  # a line cut at the last look
                    handle.seek(start)
                    chunk = handle.read()
            except OSError:
                return False
            self._log_read = start + len(chunk)
            self._encoder_loaded = ENCODER_READY in chunk
        return self._encoder_loaded

    async def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        with anyio.move_on_after(20):
            while self.process.poll() is None:
                await anyio.sleep(0.05)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class InProcessWorker:
    """The worker in this process (RSS then covers the engine and the callers too)."""

    def __init__(self, url: str) -> None:
        from iii_directory.worker import Worker

        self.worker = Worker(url, shutdown_grace_s=5.0)
        self._tg: Any = None

    @property
    def pid(self) -> int:
        return os.getpid()

    async def start(self, stack: AsyncExitStack) -> None:
        self._tg = await stack.enter_async_context(anyio.create_task_group())
        self._tg.start_soon(self.worker.run)

    def alive(self) -> bool:
        return True

    def encoder_loaded(self) -> bool:
        from iii_directory.search.service import SearchService

        directory = self.worker.directory
        return directory is not None and directory.service(SearchService).dense.ready

    async def stop(self) -> None:
        self.worker.stop()


# ---------------------------------------------------------------------------------- session


@dataclass
class WriteLane:
    """One caller's private skill ids, each walked through create → update → update → delete."""

    caller: int
    serial: int = 0
    step: int = 0
    interrupted: bool = False
    """The current step was re-sent after a drop (its first attempt may have landed)."""

    @property
    def skill_id(self) -> str:
        return f"soak/c{self.caller}-{self.serial}"

    def content(self) -> str:
        return f"# Soak {self.caller}-{self.serial} v{self.step}\n\nStep {self.step} of caller {self.caller}.\n"

    def advance(self) -> None:
        self.step += 1
        self.interrupted = False
        if self.step == len(WRITE_STEPS):
            self.step = 0
            self.serial += 1


class SoakSession:
    """Engine, registry, worker and a protocol client around one project (`async with`)."""

    def __init__(self, workdir: Path, *, in_process: bool = False, seed: int = 0,
                 keep_frames: bool = False, rss_bound_mib: int = DEFAULT_RSS_BOUND_MIB,
                 mode: str = "lexical", long_callers: int = 0) -> None:
        self.project = Project(workdir)
        self.mode = mode
        self.long_callers = long_callers
        """Callers 0, 2, 4, … below twice this send 18 distinct maximum-length capabilities."""
        self.search_modes: Counter[str] = Counter()
        self.first_answer_at: float | None = None
        self.first_hybrid_at: float | None = None
        self._long_serial = 0
        self._long_caller_calls = 0
        self.in_process = in_process
        self.rng = random.Random(seed)
        self.keep_frames = keep_frames
        self.rss_bound = rss_bound_mib * 1024 * 1024
        self.skill_ids: list[str] = []
        self.agent_ids: list[str] = []
        self.engine: TestEngine | None = None
        self.client: TestClient | None = None
        self.worker: SubprocessWorker | InProcessWorker | None = None
        self.functions: dict[str, FunctionStats] = {}
        self.drops = 0
        self._stack: AsyncExitStack | None = None
        self._measuring = False

    async def __aenter__(self) -> SoakSession:
        self._stack = AsyncExitStack()
        try:
            await self._start(self._stack)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self._stack is not None
        try:
            if self.worker is not None:
                await self.worker.stop()
        finally:
            await self._stack.aclose()

    async def _start(self, stack: AsyncExitStack) -> None:
        registry = stack.enter_context(MockRegistry())
        publish_registry(registry)
        catalog = example_catalog()
        self.engine = await stack.enter_async_context(TestEngine(functions_debounce_s=0.2))
        namespaces = serve_peers(self.engine, catalog)
        self.skill_ids, self.agent_ids = self.project.seed(namespaces)
        self.engine.configuration.put(config_id(), self.project.settings(registry.url, self.mode).model_dump(mode="json"))
        if self.in_process:
            worker = InProcessWorker(self.engine.url)
            self.worker = worker
            await worker.start(stack)
        else:
            # a lexical worker starts no encoder preload, as on a host without the dense extra
            self.worker = SubprocessWorker(self.engine.url, self.project, self.project.root / "worker.log",
                                           preload=self.mode != "lexical")
            self.worker.start()
        await self.engine.wait_for(self._registered, timeout=120)
        self.client = await stack.enter_async_context(self.engine.client("soak-client"))

    def _registered(self) -> bool:
        if self.worker is not None and not self.worker.alive():
            raise RuntimeError(f"the worker exited during boot; see {self.project.root / 'worker.log'}")
        assert self.engine is not None
        return all(self.engine.function(function_id) is not None for function_id in CALLED_FUNCTIONS)

    @property
    def worker_pid(self) -> int:
        assert self.worker is not None
        return self.worker.pid

    # -- calls --------------------------------------------------------------------------

    async def call(self, function_id: str, data: dict[str, Any], *, retry_dropped: bool,
                   deadline: float) -> tuple[Any, EngineCallError | None, bool]:
        """One logical call: (result, error, re-sent). With `retry_dropped`, answers meaning
        the worker was away (`RETRY_CODES`) are re-sent until they get a real answer."""
        assert self.client is not None
        stats = self.functions.setdefault(function_id, FunctionStats())
        resent = False
        while True:
            started = time.perf_counter()
            try:
                result = await self.client.call(function_id, data, timeout=CALL_TIMEOUT_S)
                error = None
            except EngineCallError as exc:
                result, error = None, exc
            elapsed = time.perf_counter() - started
            if error is not None and retry_dropped and error.code in RETRY_CODES \
                    and time.monotonic() < deadline + CALL_TIMEOUT_S:
                resent = True
                stats.retries += 1
                await anyio.sleep(0.02)
                continue
            if self._measuring:
                stats.latencies.append(elapsed)
                stats.finished.append(time.monotonic())
                self._long_caller_calls += LONG_CALLER.get()
            return result, error, resent

    def _fail(self, function_id: str, message: str) -> None:
        stats = self.functions.setdefault(function_id, FunctionStats())
        stats.errors.append(f"{function_id}: {message}")
        stats.failed_at.append(time.monotonic())

    def _capabilities(self, caller: int) -> list[str]:
        """A search's capabilities: 18 new maximum-length ones for a long caller, else 1–18
        ordinary ones."""
        if self._is_long(caller):
            self._long_serial += MAX_CAPABILITIES
            return [long_capability(self._long_serial - n) for n in range(MAX_CAPABILITIES)]
        return self.rng.sample(CAPABILITIES, self.rng.randint(1, MAX_CAPABILITIES))

    def _is_long(self, caller: int) -> bool:
        """Callers 0, 2, 4, … up to `long_callers` of them send long capabilities."""
        return caller % 2 == 0 and caller < 2 * self.long_callers

    def _answered(self, result: dict[str, Any]) -> None:
        """Count a search answer by its mode; note the first answer and the first hybrid one."""
        now = time.monotonic()
        mode = str(result.get("search_mode"))
        if self._measuring:
            self.search_modes[mode] += 1
        if self.first_answer_at is None:
            self.first_answer_at = now
        if mode == "hybrid" and self.first_hybrid_at is None:
            self.first_hybrid_at = now

    async def _one(self, lane: WriteLane, retry_dropped: bool, deadline: float) -> None:
        kind = self.rng.choices([w[0] for w in WEIGHTS], weights=[w[1] for w in WEIGHTS])[0]
        if kind == "directory::search_functions":
            data: dict[str, Any] = {"capabilities": self._capabilities(lane.caller)}
            result, error, _ = await self.call(kind, data, retry_dropped=retry_dropped, deadline=deadline)
            if error is None and not isinstance(result, dict):
                self._fail(kind, f"answer is not an object: {result!r:.80}")
            elif error is None:
                self._answered(result)
        elif kind == "directory::skills::get":
            skill_id = self.rng.choice(self.skill_ids)
            result, error, _ = await self.call(kind, {"id": skill_id}, retry_dropped=retry_dropped, deadline=deadline)
            if error is None and result.get("id") != skill_id:
                self._fail(kind, f"asked {skill_id}, got {result.get('id')}")
        elif kind == "directory::skills::list":
            data = self.rng.choice([{}, {"prefix": "mailer/"}, {"search": "page"}, {"include_description": False}])
            result, error, _ = await self.call(kind, data, retry_dropped=retry_dropped, deadline=deadline)
            if error is None and not result.get("skills"):
                self._fail(kind, "empty listing")
        elif kind == "directory::agents::get":
            agent_id = self.rng.choice(self.agent_ids)
            result, error, _ = await self.call(kind, {"id": agent_id}, retry_dropped=retry_dropped, deadline=deadline)
            if error is None and result.get("id") != agent_id:
                self._fail(kind, f"asked {agent_id}, got {result.get('id')}")
        else:
            await self._write(lane, retry_dropped, deadline)
            return
        if error is not None:
            self._fail(kind, f"{error.code}: {error.message[:200]}")

    async def _write(self, lane: WriteLane, retry_dropped: bool, deadline: float) -> None:
        function_id = WRITE_STEPS[lane.step]
        skill_id = lane.skill_id
        data: dict[str, Any] = {"id": skill_id}
        if function_id != "directory::skills::delete":
            data["content"] = lane.content()
        result, error, resent = await self.call(function_id, data, retry_dropped=retry_dropped, deadline=deadline)
        target = self.project.skills / f"{skill_id}.md"
        if error is not None:
            # A re-sent create / delete whose first attempt landed before the drop.
            landed = (resent or lane.interrupted) and (
                (function_id.endswith("create") and error.code == "D114")
                or (function_id.endswith("delete") and error.code == "D110"))
            if not landed:
                self._fail(function_id, f"{skill_id}: {error.code}: {error.message[:200]}")
                lane.interrupted = resent
                return
        if function_id.endswith("delete"):
            if target.exists():
                self._fail(function_id, f"{skill_id} still on disk after delete")
        elif not target.exists() or target.read_text(encoding="utf-8") != data["content"]:
            self._fail(function_id, f"{skill_id} does not hold what was written")
        lane.advance()

    async def _caller(self, index: int, deadline: float, retry_dropped: bool) -> None:
        lane = WriteLane(index)
        LONG_CALLER.set(self._is_long(index))  # this caller's task only
        while time.monotonic() < deadline:
            await self._one(lane, retry_dropped, deadline)

    async def _dropper(self, every: float, deadline: float) -> None:
        assert self.engine is not None
        while True:
            await anyio.sleep(every * self.rng.uniform(0.7, 1.3))
            if time.monotonic() >= deadline:
                return
            conn = self.engine.worker(WORKER_NAME)
            if conn is not None and not conn.closed:
                conn.ws.transport.abort()
                self.drops += 1

    async def _trim_frames(self, deadline: float) -> None:
        assert self.engine is not None
        while time.monotonic() < deadline:
            await anyio.sleep(1.0)
            self.engine.frames.clear()

    async def load(self, seconds: float, callers: int, *, warmup: float | None = None,
                   drop_every: float | None = None, on_tick: Callable[[], None] | None = None,
                   rss_warm_at: float | None = None, phase_seconds: float = 10.0) -> SoakReport:
        """Run `callers` concurrent callers for `warmup` + `seconds`; measure the last `seconds`
        (`warmup` defaults to 0: the cold start is measured). RSS is sampled at the start, for
        the growth baseline (`baseline_due`: after the worker is ready — its first search
        answer and, in a model-backed mode, its encoder loaded — or at `rss_warm_at` seconds
        when given), at every phase boundary and at the end; without a baseline (the encoder
        never loaded) growth is not judged. With `drop_every`, the engine aborts the worker's
        socket about that often (±30 %) and callers re-send calls the drop interrupted."""
        warmup = 0.0 if warmup is None else warmup
        retry = drop_every is not None
        start = time.monotonic()
        deadline = start + warmup + seconds
        rss_boot = rss_of(self.worker_pid)
        rss_warm: int | None = None
        encoder_at: float | None = None
        ready_at: float | None = None
        boundaries: list[tuple[float, int | None]] = []
        async with anyio.create_task_group() as tg:
            for index in range(callers):
                tg.start_soon(self._caller, index, deadline, retry)
            if drop_every is not None:
                tg.start_soon(self._dropper, drop_every, deadline)
            if not self.keep_frames:
                tg.start_soon(self._trim_frames, deadline)
            if warmup > 0:
                await anyio.sleep(max(0.0, start + warmup - time.monotonic()))
            self._measuring = True  # latencies from now on; errors count over the whole run
            measured_from = time.monotonic()
            cpu_from = cpu_of(self.worker_pid)
            next_phase = measured_from + phase_seconds
            while time.monotonic() < deadline:
                await anyio.sleep(min(0.25, max(0.0, deadline - time.monotonic())))
                now = time.monotonic()
                if encoder_at is None and self.mode != "lexical" and self.worker.encoder_loaded():  # type: ignore[union-attr]
                    encoder_at = now
                if ready_at is None:
                    ready_at = ready_moment(self.mode, self.first_answer_at, encoder_at)
                if rss_warm is None and baseline_due(now, start, ready_at, warmup, rss_warm_at):
                    rss_warm = rss_of(self.worker_pid)
                if now >= next_phase and now < deadline:
                    boundaries.append((now, rss_of(self.worker_pid)))
                    next_phase += phase_seconds
                if on_tick is not None:
                    on_tick()
        ended = time.monotonic()
        measured = ended - measured_from
        self._measuring = False
        rss_end = rss_of(self.worker_pid)
        cpu_to = cpu_of(self.worker_pid)
        cpu = None if cpu_from is None or cpu_to is None else cpu_to - cpu_from
        boundaries.append((ended, rss_end))
        return SoakReport(seconds=measured, callers=callers, functions=self.functions, rss_boot=rss_boot,
                          rss_warm=rss_warm, rss_end=rss_end, rss_bound=self.rss_bound,
                          in_process=self.in_process, drops=self.drops, mode=self.mode,
                          phases=self._phases(measured_from, boundaries), cpu_seconds=cpu,
                          origin=measured_from, search_modes=dict(self.search_modes),
                          ready_after=None if ready_at is None else ready_at - start,
                          first_hybrid_after=None if self.first_hybrid_at is None else self.first_hybrid_at - start,
                          long_callers=self.long_callers, long_caller_calls=self._long_caller_calls)

    def _phases(self, origin: float, boundaries: list[tuple[float, int | None]]) -> list[Phase]:
        phases = []
        begin = origin
        for end, rss in boundaries:
            search: list[float] = []
            other: list[float] = []
            calls = errors = 0
            for name, stats in self.functions.items():
                picked = [lat for lat, at in zip(stats.latencies, stats.finished) if begin <= at < end
                          or (end == boundaries[-1][0] and at == end)]
                calls += len(picked)
                (search if name == SEARCH else other).extend(picked)
                errors += sum(1 for at in stats.failed_at if begin <= at < end)
            phases.append(Phase(begin - origin, end - origin, calls, search, other, errors, rss))
            begin = end
        return phases


async def run_soak(seconds: float, callers: int, workdir: Path, **options: Any) -> SoakReport:
    """One soak run in `workdir` (see `SoakSession` and `SoakSession.load`)."""
    session_options = {k: options.pop(k) for k in ("in_process", "seed", "rss_bound_mib", "mode", "long_callers")
                       if k in options}
    async with SoakSession(workdir, **session_options) as session:
        return await session.load(seconds, callers, **options)


def compare(lexical: SoakReport, hybrid: SoakReport) -> str:
    """The issue's ratios of a hybrid soak against the lexical soak of the same run."""
    lex_rate, hyb_rate = lexical.calls / lexical.seconds, hybrid.calls / hybrid.seconds
    lines = [f"hybrid / lexical (same run): calls/s {hyb_rate:.1f} / {lex_rate:.1f} = "
             f"{hyb_rate / max(lex_rate, 1e-9):.0%} (floor ≥ 50 %)"]
    for name in sorted(set(lexical.functions) | set(hybrid.functions)):
        if name == SEARCH:
            continue
        lex = percentile(sorted(lexical.functions.get(name, FunctionStats()).latencies), 0.99)
        hyb = percentile(sorted(hybrid.functions.get(name, FunctionStats()).latencies), 0.99)
        lines.append(f"  {name:<30} p99 {hyb * 1e3:7.0f} ms / {lex * 1e3:7.0f} ms = "
                     f"{hyb / max(lex, 1e-9):.2f}× (floor ≤ 1.5×)")
    search = sorted(hybrid.functions.get(SEARCH, FunctionStats()).latencies)
    lines.append(f"  hybrid search p99 {percentile(search, 0.99) * 1e3:.0f} ms (floor ≤ 3000 ms)")
    if hybrid.cpu_ms_per_call is not None and lexical.cpu_ms_per_call is not None:
        lines.append(f"  worker CPU per call {hybrid.cpu_ms_per_call:.2f} ms / "
                     f"{lexical.cpu_ms_per_call:.2f} ms = "
                     f"{hybrid.cpu_ms_per_call / max(lexical.cpu_ms_per_call, 1e-9):.2f}×")
    return "\n".join(lines)


def compare_long(ordinary: SoakReport, long: SoakReport) -> str:
    """The issue-33 floors of a soak whose half of the callers send maximum-length
    capabilities against the ordinary soak of the same mode and run."""
    rate, long_rate = ordinary.calls / ordinary.seconds, long.calls / long.seconds
    get = percentile(sorted(long.functions.get("directory::skills::get", FunctionStats()).latencies), 0.99)
    lines = [f"{long.mode}, long / ordinary capabilities (same run): calls/s {long_rate:.1f} / {rate:.1f} = "
             f"{long_rate / max(rate, 1e-9):.0%} (floor ≥ 50 %)",
             f"  skills::get p99 with long capabilities {get * 1e3:.0f} ms (floor ≤ 1000 ms)"]
    if ordinary.rss_end and long.rss_end:
        lines.append(f"  worker RSS at the end {long.rss_end / 2**20:.1f} / {ordinary.rss_end / 2**20:.1f} MiB = "
                     f"{long.rss_end / ordinary.rss_end:.2f}× (floor ≤ 1.3×)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measured duration (default 60)")
    parser.add_argument("--callers", type=int, default=50, help="concurrent callers (default 50)")
    parser.add_argument("--mode", choices=("lexical", "hybrid", "both"), default=None,
                        help="search mode of the worker (default: the installed default, "
                             f"here {installed_default_mode()}); both = lexical then hybrid")
    parser.add_argument("--warmup", type=float, default=None,
                        help="unmeasured seconds at the start (default 0: the cold start is measured)")
    parser.add_argument("--rss-warm-at", type=float, default=None,
                        help="seconds after the start of the RSS sample growth is counted from "
                             f"(default: {RSS_SETTLE_S:.0f} s after the worker is ready — its first search "
                             "answer and, in hybrid, its encoder loaded)")
    parser.add_argument("--capabilities", choices=("ordinary", "long", "both"), default="ordinary",
                        help="long: half the callers send 18 distinct maximum-length capabilities per "
                             "search; both = ordinary then long, with their ratios")
    parser.add_argument("--phase-seconds", type=float, default=10.0, help="cold-start phase length")
    parser.add_argument("--in-process", action="store_true", help="run the worker in this process")
    parser.add_argument("--rss-bound-mib", type=int, default=DEFAULT_RSS_BOUND_MIB,
                        help="allowed RSS growth after warm-up (default %(default)s MiB)")
    parser.add_argument("--drop-every", type=float, default=None, help="abort the worker's socket about every N s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the report(s) as JSON to this path")
    parser.add_argument("--workdir", help="keep the projects and worker.log in this (new) folder")
    args = parser.parse_args(argv)
    mode = args.mode or installed_default_mode()
    modes = ["lexical", "hybrid"] if mode == "both" else [mode]
    kinds = ["ordinary", "long"] if args.capabilities == "both" else [args.capabilities]
    reports: dict[str, SoakReport] = {}
    with tempfile.TemporaryDirectory(prefix="iii-soak-") as tmp:
        base = Path(args.workdir) if args.workdir else Path(tmp)
        for name in modes:
            for kind in kinds:
                key = name if kind == "ordinary" else f"{name}/long"
                workdir = base / key.replace("/", "-")
                workdir.mkdir(parents=True, exist_ok=True)
                long_callers = args.callers // 2 if kind == "long" else 0
                reports[key] = anyio.run(lambda: run_soak(
                    args.seconds, args.callers, workdir, in_process=args.in_process, seed=args.seed,
                    rss_bound_mib=args.rss_bound_mib, warmup=args.warmup, drop_every=args.drop_every,
                    mode=name, rss_warm_at=args.rss_warm_at, phase_seconds=args.phase_seconds,
                    long_callers=long_callers))
                print(reports[key].table())
                print()
    if "lexical" in reports and "hybrid" in reports:
        print(compare(reports["lexical"], reports["hybrid"]))
    for name in modes:
        if name in reports and f"{name}/long" in reports:
            print(compare_long(reports[name], reports[f"{name}/long"]))
    if args.json:
        payload = {name: report.to_json() for name, report in reports.items()}
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0 if all(report.ok for report in reports.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
