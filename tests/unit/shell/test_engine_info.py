"""`directory::engine::functions::info` (surfaces.md §10.3), standalone and shaped."""

from __future__ import annotations

from typing import Any

import pytest

from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.functions.engine import shape_info
from iii_directory.port import StandaloneEngine
from iii_directory.standalone import standalone_engine


def test_shape_prefers_formats_and_fills_defaults() -> None:
    out = shape_info("sandbox::create", {
        "function_id": "sandbox::create", "request_format": {"a": 1}, "request_schema": {"b": 2},
        "response_schema": {"c": 3},
        "registered_triggers": [{"id": "t1", "trigger_type": "cron"}, {"id": "t2"}, {"trigger_type": "x"},
                                "junk", {"id": "t3", "trigger_type": "http", "config": {"path": "/x"}}],
    }).model_dump(mode="json")
    assert out == {
        "description": None, "function_id": "sandbox::create", "metadata": None,
        "registered_triggers": [{"config": {}, "id": "t1", "trigger_type": "cron"},
                                {"config": {"path": "/x"}, "id": "t3", "trigger_type": "http"}],
        "request_schema": {"a": 1}, "response_schema": {"c": 3}, "worker_name": "sandbox",
    }


def test_shape_keeps_engine_worker_name_and_metadata() -> None:
    out = shape_info("a::b", {"worker_name": "alpha", "description": "D", "metadata": {"internal": True}})
    assert (out.worker_name, out.description, out.metadata) == ("alpha", "D", {"internal": True})
    assert out.request_schema is None and out.response_schema is None


async def test_standalone_catalog_answers(settings: Any) -> None:
    engine = standalone_engine([{"name": "math::add", "description": "Add", "parameters": {"type": "object"}}])
    directory = Directory(settings=settings, engine=engine)
    engine.add_own_functions(directory.table)
    out = await directory.invoke("directory::engine::functions::info", {"function_id": "  math::add  "})
    assert out["function_id"] == "math::add" and out["worker_name"] == "math"
    assert out["request_schema"] == {"type": "object"} and out["registered_triggers"] == []
    own = await directory.invoke("directory::engine::functions::info", {"function_id": "directory::engine::functions::info"})
    assert own["worker_name"] == "iii-directory" and own["metadata"] == {}


async def test_errors(directory: Directory) -> None:
    with pytest.raises(DirectoryError) as empty:
        await directory.invoke("directory::engine::functions::info", {"function_id": "   "})
    assert (empty.value.code, empty.value.message) == ("invocation_failed", "function_id must be non-empty")
    with pytest.raises(DirectoryError) as missing:
        await directory.invoke("directory::engine::functions::info", {"function_id": "nope::x"})
    assert missing.value.message == "engine::functions::info proxy: NOT_FOUND: Function 'nope::x' is not registered."
    with pytest.raises(DirectoryError) as wrong:
        await directory.invoke("directory::engine::functions::info", {"function_id": 3})
    assert wrong.value.message == 'invalid request: field "function_id": expected a string'


async def test_calls_native_info_with_ten_second_timeout(directory: Directory, engine: StandaloneEngine,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, Any, float]] = []

    async def call(function_id: str, data: Any, **kwargs: Any) -> Any:
        seen.append((function_id, data, kwargs["timeout"]))
        return {"function_id": data["function_id"]}

    monkeypatch.setattr(engine, "call", call)
    await directory.invoke("directory::engine::functions::info", {"function_id": "x::y"})
    assert seen == [("engine::functions::info", {"function_id": "x::y"}, 10.0)]
