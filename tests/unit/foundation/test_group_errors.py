"""A failure inside a task group reaches the caller as the error it wraps, code kept."""

from __future__ import annotations

import anyio
import pytest

from iii_directory.errors import INVOCATION_FAILED, DirectoryError, from_exception, innermost
from iii_directory.invocation import invoke
from iii_directory.models import Request
from iii_directory.runtime import Runtime
from iii_directory.table import FunctionSpec, FunctionTable, Surface


def test_innermost_unwraps_nested_groups_of_one() -> None:
    leaf = KeyError("k")
    group = ExceptionGroup("outer", [ExceptionGroup("inner", [leaf])])
    assert innermost(group) is leaf
    assert innermost(leaf) is leaf


def test_innermost_prefers_a_coded_error_in_a_larger_group() -> None:
    coded = DirectoryError("D110", "skill missing")
    group = ExceptionGroup("two", [RuntimeError("other"), ExceptionGroup("g", [coded])])
    assert innermost(group) is coded
    assert from_exception(group) is coded


def test_from_exception_of_a_plain_group_names_the_wrapped_failure() -> None:
    error = from_exception(ExceptionGroup("unhandled errors in a TaskGroup", [RuntimeError("lane broke")]))
    assert error.code == INVOCATION_FAILED
    assert error.message == "lane broke"


class Empty(Request):
    pass


def runtime_with(handler: object) -> Runtime:
    spec = FunctionSpec(id="probe::fail", description="fails in a task group", request=Empty,
                        response=None, handler=handler)  # type: ignore[arg-type]
    return Runtime(table=FunctionTable.merge([Surface(functions=(spec,))]))


async def _in_group(failure: BaseException) -> None:
    async def fail() -> None:
        raise failure

    async with anyio.create_task_group() as group:
        group.start_soon(fail)


@pytest.mark.anyio
async def test_invoke_keeps_the_code_of_an_error_raised_in_a_task_group() -> None:
    async def handler(_ctx: object, _request: object) -> None:
        await _in_group(DirectoryError("D110", "skill x does not exist"))

    with pytest.raises(DirectoryError) as raised:
        await invoke(runtime_with(handler), "probe::fail", {})
    assert (raised.value.code, raised.value.message) == ("D110", "skill x does not exist")


@pytest.mark.anyio
async def test_invoke_reports_a_timeout_in_a_task_group_as_timeout() -> None:
    async def handler(_ctx: object, _request: object) -> None:
        await _in_group(TimeoutError())

    with pytest.raises(DirectoryError) as raised:
        await invoke(runtime_with(handler), "probe::fail", {})
    assert raised.value.code == "TIMEOUT"
