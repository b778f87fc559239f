"""`Worker(after_registration=...)` (what `serve` starts its encoder preload from) runs once per
boot, after every registration frame has been handed to the socket and before the directory's
start hooks: the frames are not held behind the callback's work."""

from __future__ import annotations

from typing import Any

import pytest
from wire_harness import running_worker

from iii_directory.config import Settings
from iii_directory.protocol import frames as fr

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]


async def test_after_registration_runs_once_after_the_frames_are_sent(
        settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    holder: dict[str, Any] = {}

    def after(given: Settings) -> None:
        worker = holder["worker"]
        assert given == settings
        queued = [f for f in worker.connection._outbox
                  if f.get("type") in (fr.REGISTER_FUNCTION, fr.REGISTER_TRIGGER_TYPE)]
        seen.append({"queued": len(queued), "ready": worker.ready.is_set(),
                     "functions": len(worker.connection._functions)})

    import iii_directory.worker as worker_module

    original = worker_module.Worker.__init__

    def remember(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        holder["worker"] = self

    monkeypatch.setattr(worker_module.Worker, "__init__", remember)
    async with running_worker(settings, monkeypatch, after_registration=after) as (_engine, worker, _client):
        assert worker.ready.is_set()
    assert seen == [{"queued": 0, "ready": False, "functions": len(worker.table.functions)}]


async def test_a_failing_after_registration_does_not_stop_the_boot(
        settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def after(_settings: Settings) -> None:
        raise RuntimeError("no encoder today")

    async with running_worker(settings, monkeypatch, after_registration=after) as (_engine, worker, client):
        assert worker.ready.is_set()
        answer = await client.call("directory::skills::list", {}, timeout=10.0)
        assert isinstance(answer["skills"], list)  # the worker serves calls
    assert "after-registration callback failed" in caplog.text
