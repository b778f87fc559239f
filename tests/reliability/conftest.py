"""Reliability tests (issue 11): load, faults, crash safety and fuzzing.

The helpers next to this file (`reliability_support`, `crash_driver`, `shared_writer`) are
imported by module name, so this folder goes on `sys.path` (any pytest import mode).

Fixture `live`: the test engine on a loopback port with the worker (`Worker`, in-process, test
back-off) registered against it and a protocol client — the `wire` harness, for this folder.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from wire_harness import Wire, running_worker  # noqa: E402

from iii_directory.config import Settings  # noqa: E402


@pytest.fixture
async def live(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Wire]:
    async with running_worker(settings, monkeypatch) as (engine, worker, client):
        yield Wire(engine=engine, worker=worker, client=client)
