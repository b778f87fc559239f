"""`Runtime.calls_in_flight`: every running handler counts once, until it answers, fails or is
cancelled (the encoder's background share reads it)."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from iii_directory.errors import DirectoryError
from iii_directory.invocation import invoke
from iii_directory.runtime import Runtime


@pytest.mark.anyio
async def test_running_handlers_are_counted_until_they_answer_or_fail(probe_runtime: Callable[..., Runtime]) -> None:
    release = anyio.Event()
    seen: list[int] = []
    runtime: Runtime

    async def handler(_ctx: object, request: object) -> None:
        seen.append(runtime.calls_in_flight)
        await release.wait()
        if len(seen) == 3:
            raise ValueError("the third call fails")

    runtime = probe_runtime(handler)
    assert runtime.calls_in_flight == 0

    async def call() -> None:
        try:
            await invoke(runtime, "probe::call", {})
        except DirectoryError:
            pass

    async with anyio.create_task_group() as group:
        for _ in range(3):
            group.start_soon(call)
        await anyio.wait_all_tasks_blocked()
        assert runtime.calls_in_flight == 3
        release.set()
    assert seen == [1, 2, 3]
    assert runtime.calls_in_flight == 0


@pytest.mark.anyio
async def test_a_cancelled_call_leaves_the_count(probe_runtime: Callable[..., Runtime]) -> None:
    async def handler(_ctx: object, request: object) -> None:
        await anyio.sleep_forever()

    runtime = probe_runtime(handler)
    async with anyio.create_task_group() as group:
        group.start_soon(invoke, runtime, "probe::call", {})
        await anyio.wait_all_tasks_blocked()
        assert runtime.calls_in_flight == 1
        group.cancel_scope.cancel()
    assert runtime.calls_in_flight == 0


@pytest.mark.anyio
async def test_a_rejected_request_is_never_counted(probe_runtime: Callable[..., Runtime]) -> None:
    async def handler(_ctx: object, request: object) -> None:
        raise AssertionError("not reached")

    runtime = probe_runtime(handler)
    with pytest.raises(DirectoryError):
        await invoke(runtime, "probe::call", {"unknown": 1})
    assert runtime.calls_in_flight == 0
