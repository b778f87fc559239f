"""Catalog fetch (search.md §3.1)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from iii_directory.port import EngineCallError
from iii_directory.search.catalog import CatalogFetchError, fetch_corpus, listed_ids


class FakeEngine:
    def __init__(self, listing: Any, details: dict[str, Any], fail_chunks: int = 0) -> None:
        self.listing = listing
        self.details = details
        self.fail_chunks = fail_chunks
        self.info_calls: list[list[str]] = []
        self.list_calls: list[Any] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def call(self, function_id: str, data: Any, *, timeout: float) -> Any:
        assert timeout == 5.0
        if function_id == "engine::functions::list":
            self.list_calls.append(data)
            if isinstance(self.listing, Exception):
                raise self.listing
            return self.listing
        assert function_id == "engine::functions::info"
        ids = data["function_ids"]
        assert 1 <= len(ids) <= 32
        self.info_calls.append(ids)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await anyio.sleep(0.01)
        self.in_flight -= 1
        if self.fail_chunks:
            self.fail_chunks -= 1
            raise EngineCallError("TIMEOUT", "chunk timed out")
        return {"functions": [self.details.get(i, {"function_id": i, "error": "not_found"}) for i in ids]}


def detail(function_id: str, **extra: Any) -> dict[str, Any]:
    return {"function_id": function_id, "description": f"Do {function_id}.",
            "request_schema": {"type": "object", "properties": {"x": {}}}, **extra}


@pytest.mark.parametrize("shape", ["array", "functions", "items"])
def test_listed_ids_shapes(shape: str) -> None:
    rows = ["a::1", {"function_id": "b::1"}, {"id": "c::1"}, {"name": "d::1"}, "a::1", {"x": 1}]
    value = rows if shape == "array" else {shape: rows}
    assert listed_ids(value) == ["a::1", "b::1", "c::1", "d::1"]


def test_listed_ids_rejects_garbage() -> None:
    with pytest.raises(CatalogFetchError):
        listed_ids({"nothing": True})


async def test_fetch_builds_the_canonical_corpus_concurrently() -> None:
    ids = [f"ns{i % 5}::f{i:03d}" for i in range(70)]
    listing = {"functions": [{"function_id": i} for i in ids] + [
        {"function_id": "engine::functions::list"}, {"function_id": "directory::search_functions"},
        {"function_id": "judge::evaluate"}, {"function_id": "mail::hook"}]}
    details = {i: detail(i) for i in ids}
    details["mail::hook"] = detail("mail::hook", metadata={"internal": True})
    engine = FakeEngine(listing, details)
    corpus = await fetch_corpus(engine.call)
    assert engine.list_calls == [{"include_internal": True}]
    assert [len(c) for c in engine.info_calls] == [32, 32, 8]
    assert engine.max_in_flight == 3
    assert len(corpus) == 70  # judge::evaluate has no detail; the hook is internal
    assert "engine::functions::list" in corpus.raw_ids and "judge::evaluate" in corpus.raw_ids
    assert all(not c.startswith("engine::") for chunk in engine.info_calls for c in chunk)
    assert corpus.tools[0].parameters == {"properties": {"x": {}}, "type": "object"}


async def test_failed_chunk_only_drops_its_functions() -> None:
    ids = [f"a::f{i:03d}" for i in range(40)]
    engine = FakeEngine(ids, {i: detail(i) for i in ids}, fail_chunks=1)
    corpus = await fetch_corpus(engine.call)
    assert len(corpus) in (8, 32)


async def test_parameters_fallbacks() -> None:
    engine = FakeEngine(["a::p", "a::r", "a::n"], {
        "a::p": {"function_id": "a::p", "parameters": {"properties": {"p": {}}}},
        "a::r": {"id": "a::r", "request_format": {"properties": {"r": {}}}},
        "a::n": {"name": "a::n"},
    })
    corpus = await fetch_corpus(engine.call)
    assert {t.name: t.parameter_names for t in corpus.tools} == {"a::n": [], "a::p": ["p"], "a::r": ["r"]}
    assert corpus.by_id["a::n"].description == ""


async def test_listed_but_empty_is_an_error() -> None:
    engine = FakeEngine(["a::1", "a::2"], {}, fail_chunks=1)
    with pytest.raises(CatalogFetchError):
        await fetch_corpus(engine.call)


async def test_list_failure_is_an_error() -> None:
    engine = FakeEngine(EngineCallError("TIMEOUT", "slow"), {})
    with pytest.raises(CatalogFetchError):
        await fetch_corpus(engine.call)


async def test_only_excluded_ids_give_an_empty_corpus() -> None:
    engine = FakeEngine(["engine::functions::list"], {})
    corpus = await fetch_corpus(engine.call)
    assert len(corpus) == 0
    assert engine.info_calls == []
