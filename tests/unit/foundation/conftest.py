"""Fixtures of the foundation tests: a runtime serving one probe function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from iii_directory.models import Request
from iii_directory.runtime import Runtime
from iii_directory.table import FunctionSpec, FunctionTable, Surface


class Empty(Request):
    """A request with no fields."""


ProbeRuntime = Callable[..., Runtime]


@pytest.fixture
def probe_runtime() -> ProbeRuntime:
    """`probe_runtime(handler, function_id="probe::call")`: a runtime whose table holds one
    function, `function_id`, served by `handler` with an empty request and no response model."""

    def make(handler: Any, function_id: str = "probe::call") -> Runtime:
        spec = FunctionSpec(id=function_id, description="a probe", request=Empty,
                            response=None, handler=handler)  # type: ignore[arg-type]
        return Runtime(table=FunctionTable.merge([Surface(functions=(spec,))]))

    return make
