"""Wire round trips through the in-process test engine (protocol.md §5).

Run: `python -m pytest benchmarks/bench_wire.py --benchmark-only`.

Setup: the test engine on loopback, the worker (`Worker`, in-process, the full function table)
and a protocol test client, all on one event loop in a background thread (an anyio blocking
portal); each timed call is issued from the benchmark thread.

* `engine_builtin` — client → engine → `engine::functions::info` (in-process) → client: the
  cost of the transport alone.
* `worker_proxy` — client → engine → worker `directory::engine::functions::info` → nested call
  back to the engine → worker → engine → client: two routed hops and one handler.
* `worker_proxy_x16` — sixteen of those in flight at once (concurrent dispatch).
* `search_first_call[1|18]` / `search_repeated_call[1|18]` — `directory::search_functions` over
  the wire from a hybrid worker (packaged MiniLM, the eval catalog as peer functions, the index
  and the fusion's views embedded first): **first calls** carry capability texts no call has
  used before (so no per-text cache holds them; an agent's new wording), **repeated calls** the
  same texts every round; `search_first_call_during_background_embedding` makes first calls
  while 32 new skill documents are being embedded in the background (a worker whose skills are
  being rewritten). The first-call rows also print the encoder's own query-batch wait
  (`PipelineStats.query_waits`), which is what a first call queued for.
* `search_first_call_worker_process[1|18]` — the same first calls to a worker in its own process
  (`iii-directory serve`, the configuration users run): the test engine and the client stay on
  this process's loop, so the worker's loop no longer carries their work.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from iii_directory.config import Settings, config_id
from iii_directory.config_boot import RetryPolicy
from iii_directory.protocol.backoff import Backoff
from iii_directory.testing.client import TestClient
from iii_directory.testing.engine import TestEngine
from iii_directory.testing.soak import terminate
from iii_directory.worker import Worker

from _phrasings import PHRASINGS, catalog, fresh

PAYLOAD = {"function_id": "directory::on-config-change"}


class Rig:
    """Engine, worker and client living in one task of the portal's loop (task groups must be
    entered and left by the same task)."""

    mode = "lexical"

    def __init__(self) -> None:
        self.client: TestClient | None = None
        self.done: anyio.Event | None = None
        self.worker: Worker | None = None

    def add_peers(self, engine: TestEngine) -> None:
        """Peer functions the engine serves besides the worker's (none here)."""

    async def ready(self, worker: Worker) -> None:
        """Wait until the worker is ready for the timed calls."""

    def settings(self, root: str) -> Settings:
        """The worker's settings: folders under `root`, no downloads, no registry lane."""
        return Settings(skills_folder=os.path.join(root, "skills"), local_skills_folder=os.path.join(root, "local"),
                        agents_folder=os.path.join(root, "agents"), auto_download=False,
                        filter_unregistered=False, function_search_mode=self.mode,
                        registry_url="http://127.0.0.1:9", registry_search=False)

    @asynccontextmanager
    async def engine(self) -> AsyncIterator[tuple[TestEngine, str]]:
        """The test engine with this rig's peers and the worker's settings under a new scratch
        folder (yielded beside the engine)."""
        root = tempfile.mkdtemp(prefix="wire-bench-")
        self.done = anyio.Event()
        async with TestEngine() as engine:
            self.add_peers(engine)
            engine.configuration.put(config_id(), self.settings(root).model_dump(mode="json"))
            yield engine, root

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        async with self.engine() as (engine, _):
            worker = Worker(engine.url, backoff=Backoff(base=0.05, cap=0.5), retry=RetryPolicy(sleep_s=0.05),
                            shutdown_grace_s=1.0, ping_interval=None)
            self.worker = worker
            async with anyio.create_task_group() as tg:
                tg.start_soon(worker.run)
                await worker.ready.wait()
                await engine.wait_for(lambda: all(engine.function(i) is not None for i in worker.table.functions))
                await self.ready(worker)
                async with engine.client() as client:
                    self.client = client
                    task_status.started()
                    await self.done.wait()
                worker.stop()

    async def stop(self) -> None:
        assert self.done is not None
        self.done.set()

    async def call(self, function_id: str, data: Any) -> Any:
        assert self.client is not None
        return await self.client.call(function_id, data)

    async def search(self, capabilities: list[str]) -> Any:
        return await self.call("directory::search_functions", {"capabilities": capabilities})

    async def burst(self, count: int) -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(count):
                tg.start_soon(self.call, "directory::engine::functions::info", PAYLOAD)


RigT = TypeVar("RigT", bound=Rig)


def serving(rig: RigT) -> Iterator[tuple[BlockingPortal, RigT]]:
    """`rig` served in a blocking portal for the timed calls; stopped and awaited after them."""
    with start_blocking_portal() as portal:
        future, _ = portal.start_task(rig.serve)
        try:
            yield portal, rig
        finally:
            portal.call(rig.stop)
            future.result(timeout=30)


@pytest.fixture(scope="module")
def rig() -> Iterator[tuple[BlockingPortal, Rig]]:
    yield from serving(Rig())


def test_engine_builtin(benchmark: Any, rig: tuple[BlockingPortal, Rig]) -> None:
    portal, r = rig
    result = benchmark(portal.call, r.call, "engine::functions::info", PAYLOAD)
    assert result["function_id"] == PAYLOAD["function_id"]


def test_worker_proxy(benchmark: Any, rig: tuple[BlockingPortal, Rig]) -> None:
    portal, r = rig
    result = benchmark(portal.call, r.call, "directory::engine::functions::info", PAYLOAD)
    assert result["worker_name"] == "iii-directory"


def test_worker_proxy_x16(benchmark: Any, rig: tuple[BlockingPortal, Rig]) -> None:
    portal, r = rig
    benchmark(portal.call, r.burst, 16)




class HybridRig(Rig):
    """A hybrid worker (packaged model; vector cache in a scratch folder) over the eval catalog
    (the shipped example catalog when the eval set is not on this machine)."""

    mode = "hybrid"

    def add_peers(self, engine: TestEngine) -> None:
        async def answer(data: Any) -> Any:
            return {"ok": True}

        for record in catalog():
            if record["function_id"].split("::", 1)[0] in ("directory", "engine"):
                continue  # the worker's own and the engine's functions are already there
            engine.add_function(record["function_id"], answer, description=record.get("description"),
                                request_format=record.get("request_schema"),
                                metadata=record.get("metadata") or {})

    async def ready(self, worker: Worker) -> None:
        from iii_directory.search.service import SearchService

        service = worker.directory.service(SearchService)
        with anyio.fail_after(600):
            while not (service.dense.ready and service.dense.has_index(service.corpus.fingerprint)
                       and service.dense.pipeline is not None and not service.dense.pipeline.pending()
                       and service.corpus.views.views is not None):
                if service.dense.has_index(service.corpus.fingerprint):
                    service.corpus.views.get(service.dense.pipeline)  # queue the fusion's views
                await anyio.sleep(0.2)

    def query_waits(self) -> list[float]:
        from iii_directory.search.service import SearchService

        assert self.worker is not None
        pipeline = self.worker.directory.service(SearchService).dense.pipeline
        return list(getattr(pipeline.stats, "query_waits", [])) if pipeline is not None else []

    async def background(self, count: int) -> None:
        """Queue `count` new ad-hoc documents for background embedding (as rewritten skills are)."""
        from iii_directory.search.service import SearchService

        assert self.worker is not None
        pipeline = self.worker.directory.service(SearchService).dense.pipeline
        assert pipeline is not None
        serial = next(_SERIALS)
        pipeline.warm([f"Skill page {serial}-{i}: how to {PHRASINGS[i % len(PHRASINGS)]} step by step"
                       for i in range(count)])
        await anyio.sleep(0.02)  # the call arrives while that work is under way


class ProcessHybridRig(HybridRig):
    """The hybrid rig with the worker as users run it: `iii-directory serve` in its own process
    (the engine and the client stay in this one), so the worker's loop and GIL carry none of the
    test engine's or the client's work. Ready once a search answers `hybrid` and
    `PROCESS_WARMUP` more searches have run (the fusion's views embed in the background)."""

    def __init__(self, scratch: str) -> None:
        super().__init__()
        self.scratch = scratch
        self.process: subprocess.Popen[bytes] | None = None

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        async with self.engine() as (engine, root):
            env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
            env.update({"HOME": root, "OTEL_ENABLED": "false", "III_DIRECTORY_CACHE_DIR": self.scratch})
            with open(os.path.join(root, "worker.log"), "ab") as sink:
                self.process = subprocess.Popen([sys.executable, "-m", "iii_directory", "serve", "--url", engine.url],
                                                stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=root)
            try:
                await engine.wait_for(lambda: engine.function("directory::search_functions") is not None,
                                      timeout=120)
                async with engine.client() as client:
                    self.client = client
                    with anyio.fail_after(600):
                        while (await self.search(new_texts(1)))["search_mode"] != "hybrid":
                            await anyio.sleep(0.2)
                    for _ in range(PROCESS_WARMUP):
                        await self.search(new_texts(1))
                    await self.quiet()
                    task_status.started()
                    await self.done.wait()
            finally:
                await terminate(self.process)


    async def quiet(self, *, timeout: float = 300.0) -> None:
        """Wait until the worker's background work is done (the index, the fusion's views): its
        process CPU time grows by less than `QUIET_CPU_S` in a second."""
        assert self.process is not None
        ticks = os.sysconf("SC_CLK_TCK")

        def cpu() -> float:
            with open(f"/proc/{self.process.pid}/stat") as handle:  # type: ignore[union-attr]
                fields = handle.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / ticks

        with anyio.fail_after(timeout):
            before = cpu()
            while True:
                await anyio.sleep(1.0)
                now = cpu()
                if now - before < QUIET_CPU_S:
                    return
                before = now


QUIET_CPU_S = 0.02  # chosen: an idle worker's loop and pings, well under a batch of documents
"""Worker CPU seconds in one second below which the process rig counts the worker as idle."""
PROCESS_WARMUP = 20  # chosen: the views and a few first calls before the timed ones
"""Searches the process rig runs after its first hybrid answer, before it is ready."""


@pytest.fixture(scope="module")
def process_rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BlockingPortal, HybridRig]]:
    pytest.importorskip("onnxruntime")
    yield from serving(ProcessHybridRig(str(tmp_path_factory.mktemp("vectors"))))


@pytest.fixture(scope="module")
def hybrid_rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BlockingPortal, HybridRig]]:
    pytest.importorskip("onnxruntime")
    saved = os.environ.get("III_DIRECTORY_CACHE_DIR")
    os.environ["III_DIRECTORY_CACHE_DIR"] = str(tmp_path_factory.mktemp("vectors"))
    try:
        yield from serving(HybridRig())
    finally:
        if saved is None:
            os.environ.pop("III_DIRECTORY_CACHE_DIR", None)
        else:
            os.environ["III_DIRECTORY_CACHE_DIR"] = saved


_SERIALS = itertools.count(1)


def new_texts(count: int) -> list[str]:
    """`count` capability texts no call has used: the phrasings with a new order number."""
    return fresh(count, next(_SERIALS))


def _waits_note(rig: HybridRig, before: int) -> None:
    waits = sorted(rig.query_waits()[before:])
    if waits:
        print(f"\n  encoder query-batch wait: p50 {waits[len(waits) // 2] * 1e3:.2f} ms, "
              f"max {waits[-1] * 1e3:.2f} ms over {len(waits)} batches")


def _first_calls(benchmark: Any, hybrid_rig: tuple[BlockingPortal, HybridRig], count: int,
                 rounds: int, background: int = 0) -> None:
    """Time `rounds` searches of `count` texts no call has used, each after `background` new
    skill documents were handed to the encoder (0: an idle encoder)."""
    portal, rig = hybrid_rig
    before = len(rig.query_waits())

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        if background:
            portal.call(rig.background, background)
        return (rig.search, new_texts(count)), {}

    benchmark.group = f"wire-search-{count}-caps"
    result = benchmark.pedantic(portal.call, setup=setup, rounds=rounds, warmup_rounds=1)
    assert result["search_mode"] == "hybrid"
    _waits_note(rig, before)


@pytest.mark.parametrize("count", [1, 18])
def test_search_first_call(benchmark: Any, hybrid_rig: tuple[BlockingPortal, HybridRig], count: int) -> None:
    _first_calls(benchmark, hybrid_rig, count, rounds=40)


@pytest.mark.parametrize("count", [1, 18])
def test_search_first_call_worker_process(benchmark: Any, process_rig: tuple[BlockingPortal, HybridRig],
                                          count: int) -> None:
    """First calls to a worker in its own process (`iii-directory serve`), as users run it."""
    portal, rig = process_rig
    benchmark.group = f"wire-search-{count}-caps"
    result = benchmark.pedantic(portal.call, setup=lambda: ((rig.search, new_texts(count)), {}),
                                rounds=40, warmup_rounds=1)
    assert result["search_mode"] == "hybrid"


@pytest.mark.parametrize("count", [1, 18])
def test_search_first_call_during_background_embedding(
        benchmark: Any, hybrid_rig: tuple[BlockingPortal, HybridRig], count: int) -> None:
    """First calls while 32 new skill documents are being embedded in the background."""
    _first_calls(benchmark, hybrid_rig, count, rounds=30, background=32)


@pytest.mark.parametrize("count", [1, 18])
def test_search_repeated_call(benchmark: Any, hybrid_rig: tuple[BlockingPortal, HybridRig], count: int) -> None:
    portal, rig = hybrid_rig
    capabilities = PHRASINGS[:count]
    portal.call(rig.search, capabilities)
    benchmark.group = f"wire-search-{count}-caps"
    result = benchmark(portal.call, rig.search, capabilities)
    assert result["search_mode"] == "hybrid"
