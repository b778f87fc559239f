"""A capability the worker has not seen is answered as soon as the encoder can embed it, over the
engine protocol (issue 32): it is not queued behind background embedding. The background thread
is held inside a batch by the test, so nothing here is timed."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import numpy as np
import pytest
from search_fakes import ExactIndex, FakeEncoder

from iii_directory.config import Settings
from iii_directory.search.service import SearchService

pytestmark = [pytest.mark.wire, pytest.mark.dense, pytest.mark.timeout(60)]

SEARCH = "directory::search_functions"
HELD = "held background document"


class HoldingEncoder(FakeEncoder):
    """Blocks any batch holding `HELD` until `release` is set (`holding` tells it is inside)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.holding = threading.Event()

    def encode(self, texts: list[str]) -> np.ndarray:
        if HELD in texts:
            self.holding.set()
            if not self.release.wait(timeout=50):
                raise RuntimeError("the test never released the background batch")
        return super().encode(texts)


async def echo(data: Any) -> Any:
    return data


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"registry_search": False, "function_search_mode": "hybrid"})


async def test_a_fresh_capability_is_not_queued_behind_a_background_batch(wire: Any) -> None:
    wire.engine.add_function("sms::send", echo, description="Send an SMS text message to a phone number.")
    wire.engine.add_function("weather::forecast", echo, description="Get the weather forecast for a city.")
    service = wire.directory.service(SearchService)
    encoder = HoldingEncoder()
    service.use_encoder(encoder, index_factory=ExactIndex, persist=False)
    with anyio.fail_after(20):
        while not (service.dense.has_index(service.corpus.fingerprint)
                   and "sms::send" in service.corpus.raw_ids):
            await wire.call(SEARCH, {"capabilities": ["warm the worker up"]})
            await anyio.sleep(0.05)
    pipeline = service.dense.pipeline
    assert pipeline is not None
    pipeline.wall = lambda: 42.0  # the wall clock stands still: any wait recorded is queueing
    try:
        pipeline.warm([HELD])
        while not encoder.holding.is_set():
            await anyio.to_thread.run_sync(encoder.holding.wait, 0.05)
        response = await wire.call(SEARCH, {"capabilities": ["text my phone a short message"]})
        assert not encoder.release.is_set()  # answered while the background batch still runs
        assert response["search_mode"] == "hybrid"
        assert "text my phone a short message" in encoder.texts
        assert pipeline.stats.query_waits[-1] == 0.0
    finally:
        encoder.release.set()
