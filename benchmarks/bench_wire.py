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
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from iii_directory.config import Settings, config_id
from iii_directory.config_boot import RetryPolicy
from iii_directory.protocol.backoff import Backoff
from iii_directory.testing.client import TestClient
from iii_directory.testing.engine import TestEngine
from iii_directory.worker import Worker

PAYLOAD = {"function_id": "directory::on-config-change"}


class Rig:
    """Engine, worker and client living in one task of the portal's loop (task groups must be
    entered and left by the same task)."""

    def __init__(self) -> None:
        self.client: TestClient | None = None
        self.done: anyio.Event | None = None

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        root = tempfile.mkdtemp(prefix="wire-bench-")
        settings = Settings(skills_folder=os.path.join(root, "skills"), local_skills_folder=os.path.join(root, "local"),
                            agents_folder=os.path.join(root, "agents"), auto_download=False,
                            filter_unregistered=False, function_search_mode="lexical",
                            registry_url="http://127.0.0.1:9")
        self.done = anyio.Event()
        async with TestEngine() as engine:
            engine.configuration.put(config_id(), settings.model_dump(mode="json"))
            worker = Worker(engine.url, backoff=Backoff(base=0.05, cap=0.5), retry=RetryPolicy(sleep_s=0.05),
                            shutdown_grace_s=1.0, ping_interval=None)
            async with anyio.create_task_group() as tg:
                tg.start_soon(worker.run)
                await worker.ready.wait()
                await engine.wait_for(lambda: all(engine.function(i) is not None for i in worker.table.functions))
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

    async def burst(self, count: int) -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(count):
                tg.start_soon(self.call, "directory::engine::functions::info", PAYLOAD)


@pytest.fixture(scope="module")
def rig() -> Iterator[tuple[BlockingPortal, Rig]]:
    with start_blocking_portal() as portal:
        rig = Rig()
        future, _ = portal.start_task(rig.serve)
        try:
            yield portal, rig
        finally:
            portal.call(rig.stop)
            future.result(timeout=30)


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
