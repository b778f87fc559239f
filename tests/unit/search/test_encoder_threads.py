"""`III_DIRECTORY_ENCODER_THREADS`: the encoder session's intra-op threads, 1 unless a valid
count is configured, and `open_encoder` passes it to `_rank.dense.Encoder`."""

from __future__ import annotations

import logging
import sys
import types
from typing import Any

import pytest

import _rank

from iii_directory.encoder import dense_lane
from iii_directory.encoder.dense_lane import THREADS_ENV, encoder_threads


@pytest.fixture(autouse=True)
def four_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dense_lane.os, "cpu_count", lambda: 4)


def test_unset_or_blank_is_one_thread() -> None:
    assert encoder_threads({}) == 1
    assert encoder_threads({THREADS_ENV: "  "}) == 1


@pytest.mark.parametrize("raw, expected", [("1", 1), ("2", 2), (" 4 ", 4)])
def test_a_count_within_the_cores_is_used(raw: str, expected: int) -> None:
    assert encoder_threads({THREADS_ENV: raw}) == expected


@pytest.mark.parametrize("raw", ["0", "-2", "5", "two", "1.5", "2x"])
def test_anything_else_warns_and_uses_one(raw: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=dense_lane.__name__):
        assert encoder_threads({THREADS_ENV: raw}) == 1
    assert THREADS_ENV in caplog.text and repr(raw) in caplog.text


def test_open_encoder_builds_the_session_with_the_configured_threads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs without the `dense` extra too: `_rank.dense` is replaced by a recorder module."""
    seen: dict[str, Any] = {}

    class Recorder:
        def __init__(self, model_dir: Any, **options: Any) -> None:
            seen.update(options, model_dir=model_dir)

    fake = types.ModuleType("_rank.dense")
    fake.Encoder = Recorder  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "_rank.dense", fake)
    monkeypatch.setattr(_rank, "dense", fake, raising=False)
    monkeypatch.setenv(THREADS_ENV, "3")
    dense_lane.open_encoder(None)
    assert seen["threads"] == 3 and seen["model_dir"] is None
    monkeypatch.delenv(THREADS_ENV)
    dense_lane.open_encoder(None)
    assert seen["threads"] == 1
