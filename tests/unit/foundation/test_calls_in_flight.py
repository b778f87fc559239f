"""`Runtime.calls_in_flight`: every running handler counts once, until it answers, fails or is
cancelled (the encoder's background share reads it)."""

from __future__ import annotations

import anyio
import pytest

from iii_directory.errors import DirectoryError
from iii_directory.invocation import invoke
from iii_directory.models import Request
from iii_directory.runtime import Runtime
from iii_directory.table import FunctionSpec, FunctionTable, Surface


class Empty(Request):
    pass


def runtime_with(handler: object) -> Runtime:
    spec = FunctionSpec(id="probe::hold", description="holds until released", request=Empty,
                        response=None, handler=handler)  # type: ignore[arg-type]
    return Runtime(table=FunctionTable.merge([Surface(functions=(spec,))]))


@pytest.mark.anyio
async def test_running_handlers_are_counted_until_they_answer_or_fail() -> None:
    release = anyio.Event()
    seen: list[int] = []
    runtime: Runtime

    async def handler(_ctx: object, request: Empty) -> None:
        seen.append(runtime.calls_in_flight)
        await release.wait()
        if len(seen) == 3:
            raise ValueError("the third call fails")

    runtime = runtime_with(handler)
    assert runtime.calls_in_flight == 0

    async def call() -> None:
        try:
            await invoke(runtime, "probe::hold", {})
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
async def test_a_cancelled_call_leaves_the_count() -> None:
    async def handler(_ctx: object, request: Empty) -> None:
        await anyio.sleep_forever()

    runtime = runtime_with(handler)
    async with anyio.create_task_group() as group:
        group.start_soon(invoke, runtime, "probe::hold", {})
        await anyio.wait_all_tasks_blocked()
        assert runtime.calls_in_flight == 1
        group.cancel_scope.cancel()
    assert runtime.calls_in_flight == 0


@pytest.mark.anyio
async def test_a_rejected_request_is_never_counted() -> None:
    async def handler(_ctx: object, request: Empty) -> None:
        raise AssertionError("not reached")

    runtime = runtime_with(handler)
    with pytest.raises(DirectoryError):
        await invoke(runtime, "probe::hold", {"unknown": 1})
    assert runtime.calls_in_flight == 0
