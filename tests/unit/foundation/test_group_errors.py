"""A failure inside a task group reaches the caller as the error it wraps, code kept."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from iii_directory.errors import INVOCATION_FAILED, DirectoryError, from_exception, innermost
from iii_directory.invocation import invoke
from iii_directory.runtime import Runtime


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


async def _in_group(failure: BaseException) -> None:
    async def fail() -> None:
        raise failure

    async with anyio.create_task_group() as group:
        group.start_soon(fail)


@pytest.mark.anyio
async def test_invoke_keeps_the_code_of_an_error_raised_in_a_task_group(probe_runtime: Callable[..., Runtime]) -> None:
    async def handler(_ctx: object, _request: object) -> None:
        await _in_group(DirectoryError("D110", "skill x does not exist"))

    with pytest.raises(DirectoryError) as raised:
        await invoke(probe_runtime(handler), "probe::call", {})
    assert (raised.value.code, raised.value.message) == ("D110", "skill x does not exist")


@pytest.mark.anyio
async def test_invoke_reports_a_timeout_in_a_task_group_as_timeout(probe_runtime: Callable[..., Runtime]) -> None:
    async def handler(_ctx: object, _request: object) -> None:
        await _in_group(TimeoutError())

    with pytest.raises(DirectoryError) as raised:
        await invoke(probe_runtime(handler), "probe::call", {})
    assert raised.value.code == "TIMEOUT"
