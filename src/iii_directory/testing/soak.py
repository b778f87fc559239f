"""Soak: many concurrent callers against one worker through the in-process test engine.

What runs: a `TestEngine` on a loopback port serving a 56-function peer catalog
(`iii_directory/data/example_catalog.json`), a `MockRegistry` with a few installable workers, and
the worker — `iii-directory serve` as a subprocess (its RSS is the worker's own) or in this process
(`in_process`: RSS includes the engine and callers). Project: 15 × 9 skills, 6 agent profiles.

Each caller loops until the deadline, drawing one operation per call:
`directory::search_functions` with 1–18 capabilities (35 %), `directory::skills::get` (20 %),
`directory::skills::list` (15 %), `directory::agents::get` (10 %), and writes (20 %) walking its
own skill ids (`soak/c<caller>-<n>`) through create → update → update → delete, so writers never
collide. Every answer is checked (a write's file must hold what was sent).

The worker runs one `function_search_mode`; a lexical worker runs with
`III_DIRECTORY_PRELOAD=0`, as a host without the `dense` extra starts no encoder. Every soak
starts cold (a new worker process, an empty vector cache in the work folder) and callers start
the moment its functions are registered, so the model load and the first index fall inside the
measured window. The RSS growth baseline is read an event after the worker is ready
(`soak_report.baseline_due`), so a loaded host that loads the model late moves the baseline
instead of failing a healthy run.

`SoakSession` is also the engine of `tests/reliability/`; `benchmarks/soak.py` is its command line.
"""

from __future__ import annotations

import contextvars
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from ..config import config_id
from ..port import EngineCallError
from ..search.request_limits import CAPABILITY_MAX_CHARS, MAX_CAPABILITIES
from .client import TestClient
from .engine import TestEngine
from .registry import MockRegistry
from .soak_project import (  # noqa: F401 - the soak's face
    Project,
    example_catalog,
    installed_default_mode,
    publish_registry,
    serve_peers,
)
from .soak_report import (
    SEARCH,
    FunctionStats,
    Phase,
    SoakReport,
    baseline_due,
    cpu_of,
    ready_moment,
    rss_of,
)

WORKER_NAME = "iii-directory"
LONG_CALLER: contextvars.ContextVar[bool] = contextvars.ContextVar("long_caller", default=False)  # counted apart
DEFAULT_RSS_BOUND_MIB = 64
ENCODER_READY = b"dense lane ready"
"""The worker's log line once its encoder is loaded (`encoder/dense_lane.py`)."""
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



# ---------------------------------------------------------------------------------- workers


class SubprocessWorker:
    """`iii-directory serve` in its own process (its RSS is the worker's alone)."""

    def __init__(self, url: str, project: Project, log_path: Path, *, preload: bool = True) -> None:
        self.url, self.project, self.log_path, self.preload = url, project, log_path, preload
        self.process: subprocess.Popen[bytes] | None = None
        self.spawned_at: float | None = None
        """`time.perf_counter()` just before the process was spawned (start-up figures)."""
        self._log_read = 0
        self._encoder_loaded = False

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        keep = "III_DIRECTORY_ENCODER_WEIGHTS"  # the worker's settings stay out, but the encoder's arithmetic
        env = {k: v for k, v in os.environ.items() if not k.startswith("III_") or k == keep}
        env.update({"HOME": str(self.project.home), "OTEL_ENABLED": "false",
                    "III_DIRECTORY_CACHE_DIR": str(self.project.root / "vectors")})
        if not self.preload:
            env["III_DIRECTORY_PRELOAD"] = "0"
        with self.log_path.open("ab") as sink:
            self.spawned_at = time.perf_counter()
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
        if self.process is not None:
            await terminate(self.process)


async def terminate(process: subprocess.Popen[bytes], grace_s: float = 20.0) -> None:
    """SIGTERM `process` (a worker shuts down gracefully on it), then SIGKILL it when it has
    not exited within `grace_s`."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    with anyio.move_on_after(grace_s):
        while process.poll() is None:
            await anyio.sleep(0.05)
    if process.poll() is None:
        process.kill()
        process.wait()


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


