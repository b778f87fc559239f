"""`III_DIRECTORY_ENCODER_THREADS`: the encoder session's intra-op threads, 1 unless a valid
count is configured, and `open_encoder` passes it to `_rank.dense.Encoder`."""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest

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
    """Runs without the `dense` extra too: a recorder class stands in for `_rank.dense.Encoder`
    through `open_encoder`'s `encoder_class`, so neither `sys.modules` nor the `_rank` package is
    touched (an encoder thread importing `_rank.dense` meanwhile sees the real module)."""
    seen: dict[str, Any] = {}

    class Recorder:
        def __init__(self, model_dir: Any, **options: Any) -> None:
            seen.update(options, model_dir=model_dir)

    monkeypatch.setenv(THREADS_ENV, "3")
    dense_lane.open_encoder(None, encoder_class=Recorder)
    assert seen["threads"] == 3 and seen["model_dir"] is None
    monkeypatch.delenv(THREADS_ENV)
    dense_lane.open_encoder(None, encoder_class=Recorder)
    assert seen["threads"] == 1


def test_open_encoder_with_a_stand_in_imports_no_dense_module(tmp_path: Any) -> None:
    """A subprocess (its own `sys.modules`): `encoder_class` builds without `_rank.dense`."""
    import json
    import os
    import subprocess

    code = ("import json, sys\n"
            "from iii_directory.encoder import dense_lane\n"
            "built = dense_lane.open_encoder(None, encoder_class=lambda model_dir, **options: options)\n"
            "print(json.dumps({'threads': built['threads'], 'dense': '_rank.dense' in sys.modules}))")
    env = dict(os.environ, III_DIRECTORY_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=env)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"threads": 1, "dense": False}
