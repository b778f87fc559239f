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

import pytest

from iii_directory.config import Settings
from wire_harness import Wire, fast_worker, running_worker, wait_registered

__all__ = ["Wire", "fast_worker", "wait_registered"]


@pytest.fixture
async def wire(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Wire]:
    async with running_worker(settings, monkeypatch) as (engine, worker, client):
        yield Wire(engine=engine, worker=worker, client=client)
