"""`III_DIRECTORY_ENCODER_WEIGHTS`: int8 unless `float` is configured; `open_encoder` passes it to
`_rank.dense.Encoder` and the vector cache's model key tells the two apart."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from iii_directory.encoder import dense_lane
from iii_directory.encoder.dense_lane import WEIGHTS_ENV, encoder_weights, model_key


@pytest.mark.parametrize("raw, expected", [("", "int8"), (" float ", "float"), ("int8", "int8"),
                                           ("FLOAT", "float")])
def test_the_configured_weights_are_read(raw: str, expected: str) -> None:
    assert encoder_weights({WEIGHTS_ENV: raw}) == expected
    assert encoder_weights({}) == "int8"


@pytest.mark.parametrize("raw", ["fp16", "8", "int4"])
def test_anything_else_warns_and_uses_int8(raw: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=dense_lane.__name__):
        assert encoder_weights({WEIGHTS_ENV: raw}) == "int8"
    assert WEIGHTS_ENV in caplog.text


def test_int8_vectors_are_cached_under_their_own_key(tmp_path: Any) -> None:
    assert model_key(None, "float") != model_key(None, "int8")
    assert model_key(None, "int8").endswith("-int8")
    assert model_key(str(tmp_path), "float") != model_key(str(tmp_path), "int8")


def test_open_encoder_passes_the_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorder class stands in for `_rank.dense.Encoder` (`open_encoder`'s `encoder_class`):
    no attribute of the real module is patched while an encoder thread may be using it."""
    seen: dict[str, Any] = {}

    class Recorder:
        def __init__(self, model_dir: Any, **options: Any) -> None:
            seen.update(options)

    monkeypatch.setenv(WEIGHTS_ENV, "float")
    dense_lane.open_encoder(None, encoder_class=Recorder)
    assert seen["weights"] == "float"
    assert not model_key(None).endswith("-int8")
    monkeypatch.delenv(WEIGHTS_ENV)
    dense_lane.open_encoder(None, encoder_class=Recorder)
    assert seen["weights"] == "int8"
    assert model_key(None).endswith("-int8")
