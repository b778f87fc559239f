"""Vector cache, dense lane lifecycle and the optional reranker stage (search.md §5.3, §5.5.3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from search_fakes import ExactIndex, FakeEncoder

from iii_directory.encoder.dense_lane import DenseLane, DenseUnavailable, top_ranking
from iii_directory.search.rerank import apply_scores, rerank_head
from iii_directory.encoder.vector_cache import LruVectors, VectorCache, default_cache_dir


def vectors(n: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_cache_round_trip_through_disk(tmp_path: Path) -> None:
    cache = VectorCache("m1", 384, tmp_path)
    data = vectors(3)
    cache.store(["a", "b", "c"], data)
    reopened = VectorCache("m1", 384, tmp_path)
    found = reopened.lookup(["b", "zzz", "a"])
    assert found[1] is None
    np.testing.assert_array_equal(found[0], data[1])
    np.testing.assert_array_equal(found[2], data[0])
    assert len(reopened) == 3


def test_torn_tail_is_ignored_and_repaired(tmp_path: Path) -> None:
    cache = VectorCache("m1", 384, tmp_path)
    cache.store(["a", "b"], vectors(2))
    assert cache.path is not None
    with cache.path.open("ab") as handle:
        handle.write(b"\x01" * 100)  # an interrupted append
    reopened = VectorCache("m1", 384, tmp_path)
    assert len(reopened) == 2
    reopened.store(["c"], vectors(1, 1))
    assert len(VectorCache("m1", 384, tmp_path)) == 3


def test_foreign_file_is_rewritten(tmp_path: Path) -> None:
    (tmp_path / "vectors-m1.bin").write_bytes(b"something else entirely")
    cache = VectorCache("m1", 384, tmp_path)
    assert len(cache) == 0
    cache.store(["a"], vectors(1))
    assert len(VectorCache("m1", 384, tmp_path)) == 1


def test_models_do_not_share_vectors(tmp_path: Path) -> None:
    VectorCache("m1", 384, tmp_path).store(["a"], vectors(1))
    assert VectorCache("m2", 384, tmp_path).lookup(["a"]) == [None]


def test_cache_dir_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("III_DIRECTORY_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("III_DIRECTORY_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "iii-directory"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "iii-directory"


def test_lru_capacity() -> None:
    lru = LruVectors(capacity=2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1
    lru.put("c", 3)
    assert lru.get("b") is None and lru.get("a") == 1 and len(lru) == 2


def test_top_ranking_orders_by_cosine_then_id() -> None:
    assert top_ranking(["b", "a", "c"], [0, 1, 2], [0.5, 0.5, 0.9]) == [("c", 0.9), ("a", 0.5), ("b", 0.5)]


async def test_only_the_latest_fingerprint_publishes(tmp_path: Path) -> None:
    lane = DenseLane(tmp_path, index_factory=ExactIndex)
    lane.install(FakeEncoder())
    lane.requested = "new"
    assert not await lane.rebuild_if_current("old", ["a::x"], ["a x"])
    assert await lane.rebuild("new", ["a::x"], ["a x"])
    assert lane.has_index("new")
    with pytest.raises(DenseUnavailable):
        lane.rank("old", np.zeros((1, 384), dtype=np.float32))


async def test_documents_embed_once_per_text(tmp_path: Path) -> None:
    encoder = FakeEncoder()
    lane = DenseLane(tmp_path, index_factory=ExactIndex)
    lane.install(encoder)
    await lane.rebuild("fp1", ["a::x", "b::y"], ["alpha x", "beta y"])
    await lane.rebuild("fp2", ["a::x", "b::y", "c::z"], ["alpha x", "beta y", "gamma z"])
    assert lane.encoded_documents == 3
    ranking = lane.rank("fp2", encoder.encode(["gamma z"]))[0]
    assert ranking[0] == ("c::z", pytest.approx(1.0))


async def test_adhoc_ranking_uses_the_lru(tmp_path: Path) -> None:
    encoder = FakeEncoder()
    lane = DenseLane(tmp_path, persist=False)
    lane.install(encoder)
    query = encoder.encode(["send email"])
    first = await lane.rank_adhoc(["t1", "t2"], ["cron send email", "http hook"], query)
    calls = encoder.calls
    again = await lane.rank_adhoc(["t1", "t2"], ["cron send email", "http hook"], query)
    assert encoder.calls == calls and first == again
    assert first[0][0][0] == "t1"


async def test_unavailable_model(tmp_path: Path) -> None:
    lane = DenseLane(tmp_path)
    with pytest.raises(DenseUnavailable):
        await lane.encode_queries(["x"])
    assert not await lane.rebuild("fp", ["a::x"], ["a x"])


def test_reranker_output_rules() -> None:
    retrieval = [("a", 0.03), ("b", 0.02), ("c", 0.01)]
    head = rerank_head(retrieval)
    assert head == ["a", "b", "c"]
    assert apply_scores(retrieval, head, [1.0, 2.0]) is None  # wrong count
    assert apply_scores(retrieval, head, [1.0, float("nan"), 0.0]) is None
    dropped = apply_scores(retrieval, head, [0.0, 5.0, -20.0])
    assert dropped is not None
    assert [i for i, _ in dropped] == ["a", "b"]  # c sits more than 12 logits behind the leader
    reordered = apply_scores(retrieval, head, [0.0, 5.0, 4.0])
    assert reordered is not None
    assert [i for i, _ in reordered] == ["b", "a", "c"]


def test_lru_keeps_a_short_digest_not_the_text() -> None:
    lru = LruVectors(capacity=8)
    long = "send an invoice to the customer " * 16
    lru.put(long, 1)
    assert lru.get(long) == 1 and lru.get(long + " ") is None
    assert all(isinstance(key, bytes) and len(key) == 16 for key in lru._items)
