"""Helpers shared by the wire tests (the `Wire` handle, a test-speed worker, registration wait).

Kept out of conftest.py so test modules can import them by a unique module name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
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
    def worker_id(self) -> str:
        worker_id = self.worker.connection.worker_id
        assert worker_id
        return worker_id

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


ENGINE_ENV = ("III_CONFIG_NAME", "III_NAMESPACE", "III_WORKER_NAME", "III_TOKEN", "III_CONFIG")


@asynccontextmanager
async def running_worker(settings: Settings, monkeypatch: pytest.MonkeyPatch, **worker_options: Any
                         ) -> AsyncIterator[tuple[TestEngine, Worker, TestClient]]:
    """A TestEngine whose configuration store holds `settings`, a test-speed worker serving
    against it (registered; `worker_options` go to `fast_worker`), and a protocol client;
    everything stops on exit."""
    for name in ENGINE_ENV:
        monkeypatch.delenv(name, raising=False)
    async with TestEngine(functions_debounce_s=0.05, namespace_grace_s=1.0) as engine:
        engine.configuration.put(config_id(), settings.model_dump(mode="json"))
        worker = fast_worker(engine.url, **worker_options)
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker.run)
            with anyio.fail_after(WORKER_BOOT_TIMEOUT_S):
                await worker.ready.wait()
            await wait_registered(engine, worker)
            async with engine.client() as client:
                yield engine, worker, client
            worker.stop()


def serve_env(home: Path) -> dict[str, str]:
    """The environment of a `serve` subprocess: ours without `III_*`, `home` as HOME, info logs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
    env.update({"HOME": str(home), "LOG_LEVEL": "info", "OTEL_ENABLED": "false"})
    return env


@asynccontextmanager
async def serve_subprocess(url: str, home: Path, cwd: Path, log: Path) -> AsyncIterator[anyio.abc.Process]:
    """`iii-directory serve --url URL` as users run it, its output in `log`; killed on the way out
    when it is still running."""
    with log.open("wb") as sink:
        process = await anyio.open_process([sys.executable, "-m", "iii_directory", "serve", "--url", url],
                                           stdout=sink, stderr=subprocess.STDOUT, env=serve_env(home),
                                           cwd=str(cwd))
        try:
            yield process
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
