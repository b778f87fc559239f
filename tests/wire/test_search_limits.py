"""Size limits of `directory::search_functions` through the engine protocol (issue 33, item 1):
the schema the worker registers with the engine carries `maxItems` and `items.maxLength`; an
over-long capability or too many capabilities come back as a D610 error body, and the same
session goes on answering searches at the limit."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from iii_directory.config import Settings
from iii_directory.search.request_limits import CAPABILITY_MAX_CHARS, REQUEST_MAX_CAPABILITIES
from wire_checks import conforms, failure

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]

SEARCH = "directory::search_functions"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"registry_search": False})


def long_capability(length: int) -> str:
    text = "download skills from the workers registry"
    filler = " ".join(f"note{i}" for i in range(length))
    return (text + " " + filler)[:length]


async def test_the_registered_schema_publishes_the_limits(wire: Any) -> None:
    registered = {entry.id: entry.request_format for entry in wire.engine.functions.values()}
    capabilities = registered[SEARCH]["properties"]["capabilities"]
    assert capabilities["maxItems"] == REQUEST_MAX_CAPABILITIES
    assert capabilities["items"]["maxLength"] == CAPABILITY_MAX_CHARS


async def test_over_the_limits_is_a_coded_error_and_the_session_goes_on(wire: Any) -> None:
    too_long = await failure(wire, SEARCH, {"capabilities": [long_capability(100_000)]})
    assert too_long.code == "D610"
    assert too_long.message.startswith("D610 invalid_input: capability 1 is 100,000 characters long")
    too_many = await failure(wire, SEARCH, {"capabilities": [f"need {i}" for i in range(65)]})
    assert too_many.code == "D610" and "at most 64 per request" in too_many.message
    at_limit = await wire.call(SEARCH, {"capabilities": [long_capability(CAPABILITY_MAX_CHARS)] * 2})
    conforms(wire, SEARCH, at_limit)
    found = [f["function_id"] for w in at_limit["workers"] for f in w["functions"]]
    assert "directory::skills::download_from_registry" in found


async def test_a_maximum_size_search_gives_way_between_capabilities(
        wire: Any, roots: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the protocol (worker, engine and this test share one event loop): with the slice
    budget forced to zero, a task of the worker's loop runs between the query-building of every
    capability of an 18 × 512-character search, and a `skills::get` sent beside it answers."""
    from iii_directory import timeslice
    from iii_directory.search import sliced_queries as query_module

    page = roots["skills"] / "notes" / "howto.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("# Howto\n\nOne.\n")
    monkeypatch.setattr(timeslice, "SLICE_S", 0.0)
    turns = 0
    marks: list[int] = []
    real = query_module.make_query

    def counted(capability: str) -> Any:
        marks.append(turns)
        return real(capability)

    monkeypatch.setattr(query_module, "make_query", counted)
    done = False

    async def loop_turns() -> None:
        nonlocal turns
        while not done:
            turns += 1
            await anyio.lowlevel.checkpoint()

    capabilities = [f"{n} " + long_capability(CAPABILITY_MAX_CHARS)[: CAPABILITY_MAX_CHARS - 4] for n in range(18)]
    got: dict[str, Any] = {}

    async def get_skill() -> None:
        got["skill"] = await wire.call("directory::skills::get", {"id": "notes/howto"})

    async with anyio.create_task_group() as group:
        group.start_soon(loop_turns)
        group.start_soon(get_skill)
        answer = await wire.call(SEARCH, {"capabilities": capabilities}, timeout=30)
        done = True
    conforms(wire, SEARCH, answer)
    assert got["skill"]["id"] == "notes/howto"
    assert len(marks) == 18 and all(b > a for a, b in zip(marks, marks[1:])), marks
