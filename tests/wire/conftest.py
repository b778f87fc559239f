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

import anyio
import pytest

from iii_directory.config import Settings, config_id
from iii_directory.testing.engine import TestEngine
from wire_harness import WORKER_BOOT_TIMEOUT_S, Wire, fast_worker, wait_registered

__all__ = ["Wire", "fast_worker", "wait_registered"]


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
