"""The `wire` fixture: the worker as users run it, against the in-process test engine.

`wire` starts `iii_directory.testing.engine.TestEngine` on a loopback port, seeds its
configuration store with the `settings` fixture under the config id, runs the worker
(`iii-directory serve`, in-process) against it and connects a protocol test client:

* `await wire.call(function_id, data, *, baggage=None, timeout=10.0)` → result, or raises
  `iii_directory.port.EngineCallError` (`.code`, `.message`);
* `wire.subscribe(trigger_type)` → a list collecting every payload fanned out for that type
  (`await events.wait_for(n)` waits for `n` of them);
* `wire.engine` (the TestEngine), `wire.worker`, `wire.directory`, `wire.client`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from iii_directory.config import Settings, config_id
from iii_directory.config_boot import RetryPolicy
from iii_directory.directory import Directory
from iii_directory.protocol.backoff import Backoff
from iii_directory.testing.client import EventLog, TestClient
from iii_directory.testing.engine import TestEngine
from iii_directory.worker import Worker

WORKER_BOOT_TIMEOUT_S = 30.0


@dataclass
class Wire:
    engine: TestEngine
    worker: Worker
    client: TestClient

    @property
    def directory(self) -> Directory:
        assert self.worker.directory is not None
        return self.worker.directory

    async def call(self, function_id: str, data: Any = None, *, baggage: str | None = None,
                   timeout: float = 10.0) -> Any:
        """Invoke a function through the engine, as another worker would."""
        return await self.client.call(function_id, {} if data is None else data, baggage=baggage, timeout=timeout)

    def subscribe(self, trigger_type: str) -> EventLog:
        return self.client.subscribe(trigger_type)


def fast_worker(url: str, **overrides: Any) -> Worker:
    """A worker with test-speed back-off, retries and shutdown grace (defaults untouched)."""
    options: dict[str, Any] = {
        "backoff": Backoff(base=0.05, cap=0.5),
        "retry": RetryPolicy(attempts=3, timeout_s=2.0, sleep_s=0.05),
        "shutdown_grace_s": 2.0,
        "ping_interval": None,
    }
    options.update(overrides)
    return Worker(url, **options)


async def wait_registered(engine: TestEngine, worker: Worker) -> None:
    """Wait until the engine holds every function of the worker's table."""
    ids = set(worker.table.functions)
    await engine.wait_for(lambda: ids <= {fid for (_ns, fid), e in engine.functions.items() if e.owner is not None},
                          timeout=10)


@pytest.fixture
async def wire(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Wire]:
    for name in ("III_CONFIG_NAME", "III_NAMESPACE", "III_WORKER_NAME", "III_TOKEN", "III_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    async with TestEngine(functions_debounce_s=0.05, namespace_grace_s=1.0) as engine:
        engine.configuration.put(config_id(), settings.model_dump(mode="json"))
        worker = fast_worker(engine.url)
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker.run)
            with anyio.fail_after(WORKER_BOOT_TIMEOUT_S):
                await worker.ready.wait()
            await wait_registered(engine, worker)
            async with engine.client() as client:
                yield Wire(engine=engine, worker=worker, client=client)
            worker.stop()
