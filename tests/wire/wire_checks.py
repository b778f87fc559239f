"""Helpers the surface tests share (wire tests, and unit tests that talk to loopback servers).

* `own_ops(events)` — the on-change events a test's own calls caused: the file watcher may add
  `{op: "external"}` doorbells for the same writes;
* `conforms(wire, function_id, value)` — `value`, checked against the function's published
  response schema;
* `failure(wire, function_id, data)` — the EngineCallError a call must end with;
* `direct_loopback` — an autouse fixture to import into a module or conftest: loopback servers
  are reached directly, whatever proxy the host configures.
"""

from __future__ import annotations

from typing import Any

import pytest

from iii_directory.port import EngineCallError
from iii_directory.testing.schema_check import first_error

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def own_ops(events: list[Any]) -> list[Any]:
    return [e for e in events if e.get("op") != "external"]


def conforms(wire: Any, function_id: str, value: Any) -> Any:
    schema = wire.directory.table.functions[function_id].response_schema()
    assert first_error(value, schema) is None, first_error(value, schema)
    return value


async def failure(wire: Any, function_id: str, data: Any) -> EngineCallError:
    with pytest.raises(EngineCallError) as caught:
        await wire.call(function_id, data)
    return caught.value


@pytest.fixture(autouse=True)
def direct_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
