"""The speculative `serve` encoder preload (encoder/preload.py): when it starts, who adopts it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from search_fakes import FakeEncoder

from iii_directory.encoder import preload
from iii_directory.encoder.dense_lane import DIMENSION, DenseLane, model_key
from iii_directory.encoder.vector_cache import VectorCache


@pytest.fixture(autouse=True)
def no_pending(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(preload.PRELOAD_ENV, raising=False)
    preload.discard()
    yield
    preload.discard()


class Opener:
    """Stands in for `open_encoder`: counts calls and records the thread they ran on."""

    def __init__(self) -> None:
        self.calls: list[str | None] = []
        self.threads: list[str] = []
        self.encoder = FakeEncoder()

    def __call__(self, model_dir: str | None, cache_dir: Path | None = None) -> Any:
        self.calls.append(model_dir)
        self.threads.append(threading.current_thread().name)
        return self.encoder


def warm_cache(root: Path) -> Path:
    cache = VectorCache(model_key(None), DIMENSION, root)
    cache.store(["send an email"], FakeEncoder().encode(["send an email"]))
    assert cache.path is not None and cache.path.is_file()
    return cache.path


def test_a_cold_host_preloads_too(tmp_path: Path) -> None:
    opener = Opener()
    assert preload.start(cache_dir=tmp_path / "empty", opener=opener, installed=lambda: True)
    pending = preload.take(None)
    assert pending is not None
    thread, future = pending
    assert future.result(timeout=30) is opener.encoder and opener.calls == [None]
    assert opener.threads[0].startswith("encoder")
    thread.shutdown(wait=False)


def test_no_preload_when_the_seed_says_lexical_or_it_is_turned_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warm_cache(tmp_path)
    seed = tmp_path / "config.yaml"
    seed.write_text("function_search_mode: lexical\n", encoding="utf-8")
    opener = Opener()
    assert not preload.start(str(seed), cache_dir=tmp_path, opener=opener, installed=lambda: True)
    monkeypatch.setenv(preload.PRELOAD_ENV, "0")
    assert not preload.start(cache_dir=tmp_path, opener=opener, installed=lambda: True)
    assert not preload.start(cache_dir=tmp_path, opener=opener, installed=lambda: False)
    assert opener.calls == []


async def test_the_dense_lane_adopts_the_preloaded_encoder(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    warm_cache(tmp_path)
    opener = Opener()
    assert preload.start(cache_dir=tmp_path, opener=opener, installed=lambda: True)
    assert preload.start(cache_dir=tmp_path, opener=opener, installed=lambda: True)  # once

    def no_second_build(model_dir: str | None, cache_dir: Path | None = None) -> Any:
        raise AssertionError("the lane built a second encoder")

    monkeypatch.setattr("iii_directory.encoder.dense_lane.open_encoder", no_second_build)
    monkeypatch.setattr("iii_directory.encoder.dense_lane.dense_installed", lambda: True)
    lane = DenseLane(tmp_path)
    assert await lane.load(None)
    assert lane.encoder is opener.encoder and opener.calls == [None]
    assert opener.threads[0].startswith("encoder")  # built on the thread that will run it
    assert len(lane.cache) == 1  # the warm disk cache was read while it loaded
    assert preload.take(None) is None  # handed over once
    await lane.close()


def test_another_model_directory_discards_the_preload(tmp_path: Path) -> None:
    warm_cache(tmp_path)
    opener = Opener()
    assert preload.start(cache_dir=tmp_path, opener=opener, installed=lambda: True)
    assert preload.take(str(tmp_path / "custom")) is None
    assert preload.take(None) is None


HELD_BACK = """
import json, sys
from iii_directory.encoder import encoding, preload

class Held:
    '''An encoder thread that runs nothing until asked.'''
    def __init__(self): self.work = []
    def submit(self, fn, *args):
        from concurrent.futures import Future
        self.work.append((fn, args)); return Future()

held = Held()
encoding.encoder_thread = lambda: held
started = preload.start(cache_dir=None, opener=lambda model_dir, root: "encoder", installed=lambda: True)
lane = "iii_directory.encoder.dense_lane"
before = lane in sys.modules
fn, args = held.work[0]
print(json.dumps({"started": started, "before": before, "result": fn(*args), "after": lane in sys.modules}))
"""


def test_the_preload_imports_the_lane_on_its_own_thread(tmp_path: Path) -> None:
    """`start` (called on the event loop's thread) only hands the work to the encoder thread:
    the lane's modules and the encoder's libraries are imported there, not on the loop."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, III_DIRECTORY_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", HELD_BACK], capture_output=True, text=True,
                          check=True, env=env)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"started": True, "before": False, "result": "encoder", "after": True}
