"""Hybrid search under load through the engine protocol (issue 16): 50 concurrent hybrid searches
against a cold worker all answer, and file-backed functions keep answering while the encoder is
busy. Assertions are counts, never timings."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from search_fakes import ExactIndex, FakeEncoder, hold_skills_fetch

from iii_directory.config import Settings
from iii_directory.port import EngineCallError
from iii_directory.search.service import SearchService
from wire_harness import Wire, running_worker

pytestmark = [pytest.mark.wire, pytest.mark.timeout(120)]

SEARCH = "directory::search_functions"
CAPABILITIES = ["send an sms text message", "weather forecast for a city", "store a key value pair",
                "schedule a meeting", "list skills", "translate text", "resize an image",
                "track a parcel", "post a chat message", "run a job every hour"]


async def echo(data: Any) -> Any:
    return data


def seed(roots: dict[str, Path], skills: int = 30) -> None:
    for i in range(skills):
        folder = roots["skills"] / f"team{i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"page-{i}.md").write_text(
            f"---\ntitle: Page {i}\n---\n# Page {i}\n\nHow to send weather report {i}.\n",
            encoding="utf-8")


def add_peers(wire: Wire) -> None:
    for function_id, description in (
            ("weather::forecast", "Get the weather forecast for a city."),
            ("sms::send", "Send an SMS text message to a phone number."),
            ("kv::set", "Store a value under a key."), ("calendar::create", "Schedule a meeting."),
            ("image::resize", "Resize an image."), ("parcel::track", "Track a parcel.")):
        wire.engine.add_function(function_id, echo, description=description)


class Tally:
    def __init__(self) -> None:
        self.answered: dict[str, int] = {}
        self.errors: list[str] = []
        self.modes: list[str] = []

    async def call(self, wire: Wire, function_id: str, data: dict[str, Any]) -> Any:
        try:
            result = await wire.call(function_id, data, timeout=60.0)
        except EngineCallError as exc:
            self.errors.append(f"{function_id}: {exc.code}: {exc.message}")
            return None
        self.answered[function_id] = self.answered.get(function_id, 0) + 1
        if function_id == SEARCH:
            self.modes.append(result["search_mode"])
        return result


async def fifty_searches_and_file_calls(wire: Wire, tally: Tally) -> None:
    async with anyio.create_task_group() as group:
        for index in range(50):
            picked = [CAPABILITIES[(index + j) % len(CAPABILITIES)] for j in range(1 + index % 6)]
            group.start_soon(tally.call, wire, SEARCH, {"capabilities": picked})
            if index % 2 == 0:
                group.start_soon(tally.call, wire, "directory::skills::list", {})


@pytest.mark.dense
async def test_fifty_concurrent_hybrid_searches_against_a_cold_worker(
        settings: Settings, roots: dict[str, Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The real model, an empty vector cache: the worker boots, and 50 hybrid searches arrive at
    once with 25 skills listings among them."""
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("III_DIRECTORY_CACHE_DIR", str(tmp_path / "vectors"))
    seed(roots)
    hybrid = settings.model_copy(update={"function_search_mode": "hybrid"})
    async with running_worker(hybrid, monkeypatch) as (engine, worker, client):
        wire = Wire(engine=engine, worker=worker, client=client)
        add_peers(wire)
        tally = Tally()
        await fifty_searches_and_file_calls(wire, tally)
        assert tally.errors == []
        assert tally.answered == {SEARCH: 50, "directory::skills::list": 25}
        assert set(tally.modes) <= {"lexical", "hybrid"}  # cold: what was ready, and it says so
        service = wire.directory.service(SearchService)
        await service.settle()
        pipeline = service.dense.pipeline
        assert pipeline is not None
        with anyio.fail_after(60):
            while pipeline.pending():
                await anyio.sleep(0.05)
        again = Tally()
        await fifty_searches_and_file_calls(wire, again)
        assert again.errors == [] and again.answered[SEARCH] == 50
        assert set(again.modes) == {"hybrid"}


class HeldEncoder(FakeEncoder):
    """Every batch waits until the test opens `gate`."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.entered = threading.Event()

    def encode(self, texts: list[str]) -> np.ndarray:
        self.entered.set()
        if not self.gate.wait(timeout=90):
            raise RuntimeError("the test never opened the gate")
        return super().encode(texts)


async def test_file_backed_functions_answer_while_the_encoder_is_busy(
        settings: Settings, roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    seed(roots)
    # few file-work threads: an encoder borrowing them would starve the skills handlers
    default = anyio.to_thread.current_default_thread_limiter()
    monkeypatch.setattr(default, "total_tokens", 4)
    async with running_worker(settings, monkeypatch) as (engine, worker, client):
        wire = Wire(engine=engine, worker=worker, client=client)
        add_peers(wire)
        encoder = HeldEncoder()
        service = wire.directory.service(SearchService)
        service.use_encoder(encoder, index_factory=ExactIndex, persist=False)
        current = wire.directory.settings.model_dump(mode="json")
        await engine.set_config({**current, "function_search_mode": "hybrid"})
        with anyio.fail_after(10):
            while wire.directory.settings.function_search_mode != "hybrid":
                await anyio.sleep(0.02)
        while not encoder.entered.is_set():  # the catalog index build holds the encoder
            await anyio.to_thread.run_sync(encoder.entered.wait, 0.05)

        file_calls = Tally()
        async with anyio.create_task_group() as group:
            for index in range(20):
                group.start_soon(file_calls.call, wire, "directory::skills::list", {})
                group.start_soon(file_calls.call, wire, "directory::skills::get",
                                 {"id": f"team{index % 5}/page-{index}"})
        assert not encoder.gate.is_set()  # every answer came while the encoder was held
        assert file_calls.errors == []
        assert file_calls.answered == {"directory::skills::list": 20, "directory::skills::get": 20}

        searches = Tally()
        async with anyio.create_task_group() as group:
            group.start_soon(fifty_searches_and_file_calls, wire, searches)
            with anyio.fail_after(30):
                while service.in_flight < 10:  # searches are waiting on the held encoder
                    await anyio.sleep(0.01)
            encoder.gate.set()
        assert searches.errors == []
        assert searches.answered == {SEARCH: 50, "directory::skills::list": 25}


async def test_searches_queue_for_their_slots_while_file_calls_answer(
        settings: Settings, roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Two search slots (`III_DIRECTORY_SEARCH_SLOTS=2`): the two searches holding them are kept
    inside their skills fetch, the other 18 queue, skills calls answer meanwhile, and then every
    search answers. A call whose slot wait is over gets a coded TIMEOUT."""
    from iii_directory.search.slots import SearchSlots

    seed(roots)
    monkeypatch.setenv("III_DIRECTORY_SEARCH_SLOTS", "2")
    gate = hold_skills_fetch(monkeypatch)
    async with running_worker(settings, monkeypatch) as (engine, worker, client):
        wire = Wire(engine=engine, worker=worker, client=client)
        add_peers(wire)
        service = wire.directory.service(SearchService)
        assert service.slots.count == 2
        searches, file_calls = Tally(), Tally()
        async with anyio.create_task_group() as group:
            for index in range(20):
                group.start_soon(searches.call, wire, SEARCH,
                                 {"capabilities": [CAPABILITIES[index % len(CAPABILITIES)]]})
            with anyio.fail_after(30):  # a guard against a hang, not a measurement
                while service.slots.waiting < 18:
                    await anyio.sleep(0.01)
            for index in range(10):
                await file_calls.call(wire, "directory::skills::get",
                                      {"id": f"team{index % 5}/page-{index}"})
                await file_calls.call(wire, "directory::skills::list", {})
            assert file_calls.errors == []
            assert (service.slots.busy, service.slots.waiting) == (2, 18)  # still queued

            service.slots.wait_s = 0  # the next arrival finds no slot and no wait budget
            await searches.call(wire, SEARCH, {"capabilities": ["track a parcel"]})
            assert [e.split(": ")[1] for e in searches.errors] == ["TIMEOUT"]
            service.slots.wait_s = SearchSlots().wait_s
            gate.set()
        assert searches.answered == {SEARCH: 20}
        assert (service.slots.peak, service.slots.busy, service.slots.waiting) == (2, 0, 0)
