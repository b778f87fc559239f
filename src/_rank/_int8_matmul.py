"""Keep an int8 weight matrix int8 at run time: `MatMul(X, Mul(Cast(Q), S))` → one integer-weight op.

The packaged MiniLM stores each of its 36 weight matrices as int8 `Q` (K × N) with one float32
scale per output column `S` (1 × N), dequantized by `Mul(Cast(Q), S)` in front of a `MatMul`.
onnxruntime's constant folding turns every one into a float32 matrix (≈ 42 MB in all, 4 × the
int8 bytes), which the session then holds packed on its heap. `int8_matmuls` rewrites the
pattern to one of onnxruntime's CPU contrib ops (domain `com.microsoft`) that holds the weights
as 8-bit integers:

* `"nbits"`: `MatMulNBits(X, B, scales)` with `bits = 8`, `block_size = BLOCK`, `B[n, b, i] =
  Q[b · BLOCK + i, n] + 128` (uint8, default zero point 128) and `scales[n, b] = S[0, n]`, so the
  dequantized weight `(B − 128) · scale` is exactly `float(Q) · S`. `accuracy_level` picks the
  arithmetic: 0 dequantizes to float32 (the same products as the float graph, slower), 4
  quantizes each block of `BLOCK` activations to int8 and multiplies in integers (faster, the
  vectors move slightly).
* `"dynamic"`: `DynamicQuantizeMatMul(X, Q, S')` with `S'` = `S` as a vector of N: the
  activations quantized per tensor to uint8 (asymmetric) and multiplied by `Q` in integers.

Either changes the arithmetic of the encoder, hence its vectors (docs/record/performance.md,
"int8 weight matrices": "nbits" at `INT8_ACCURACY`, `INT8_BLOCK` is the one `_rank.dense` uses;
"dynamic" moved the vectors ten times as far). A model without the pattern, with external weights, subgraphs, or a
`K` not a multiple of `BLOCK` (for `"nbits"`) keeps that MatMul as it is.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

import numpy as np

from ._graph_rewrite import (
    _SUBGRAPH_OPS,
    _Node,
    _node,
    _payload,
    _Tensor,
    _tensor,
    _text,
)
from ._protobuf import LENGTH, ProtobufError, bytes_field, fields, int_field

MODES = ("nbits", "dynamic")
BLOCK = 32  # chosen: MatMulNBits' block (a power of two ≥ 16) dividing both K = 384 and 1536

WEIGHTS = ("float", "int8")
"""How `_rank.dense.Encoder` holds the model's int8-stored weight matrices at run time: "float"
folds them into float32 (the vectors of the model as published); "int8" keeps them int8 in
`MatMulNBits` (`INT8_ACCURACY`, `INT8_BLOCK`): ≈ 30 MiB less resident, slightly different
vectors (docs/record/performance.md, "int8 weight matrices")."""

INT8_ACCURACY = 4  # chosen: integer products, activations quantized per block (level 0 is ~3× slower)
INT8_BLOCK = 16  # chosen: MatMulNBits' smallest block, the activations' closest quantization
INT8_REWRITE = f"matmul-nbits8-a{INT8_ACCURACY}-b{INT8_BLOCK}"
"""The int8 rewrite's identity; part of the saved graph's key for int8 weights."""

_MODEL_GRAPH, _MODEL_OPSET = 7, 8
_OPSET_DOMAIN, _OPSET_VERSION = 1, 2
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_OUTPUT, _VALUE_NAME = 1, 5, 12, 1
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 3, 4, 5, 7
_ATTR_NAME, _ATTR_I, _ATTR_TYPE, _ATTR_INT = 1, 3, 20, 2
_TENSOR_DIMS, _TENSOR_TYPE, _TENSOR_NAME, _TENSOR_RAW = 1, 2, 8, 9
_FLOAT, _UINT8, _INT8 = 1, 2, 3  # TensorProto.DataType
CONTRIB = "com.microsoft"


class _Match(NamedTuple):
    matmul: int
    cast: int
    mul: int
    table: str
    scale: str


def _node_bytes(inputs: list[str], outputs: list[str], name: str, op_type: str,
                attributes: dict[str, int], domain: str = "") -> bytes:
    body = b"".join(bytes_field(_NODE_INPUT, i.encode()) for i in inputs)
    body += b"".join(bytes_field(_NODE_OUTPUT, o.encode()) for o in outputs)
    body += bytes_field(_NODE_NAME, name.encode()) + bytes_field(_NODE_OP, op_type.encode())
    for key, value in attributes.items():
        attribute = bytes_field(_ATTR_NAME, key.encode()) + int_field(_ATTR_I, value)
        body += bytes_field(_NODE_ATTRIBUTE, attribute + int_field(_ATTR_TYPE, _ATTR_INT))
    if domain:
        body += bytes_field(_NODE_DOMAIN, domain.encode())
    return bytes_field(_GRAPH_NODE, body)


def _tensor_bytes(name: str, array: np.ndarray, data_type: int) -> bytes:
    body = b"".join(int_field(_TENSOR_DIMS, d) for d in array.shape)
    body += int_field(_TENSOR_TYPE, data_type) + bytes_field(_TENSOR_NAME, name.encode())
    body += bytes_field(_TENSOR_RAW, np.ascontiguousarray(array).tobytes())
    return bytes_field(_GRAPH_INITIALIZER, body)


def _raw(payload: bytes) -> bytes | None:
    raw = [f.value for f in fields(payload) if f.number == _TENSOR_RAW]
    return raw[0] if len(raw) == 1 and isinstance(raw[0], bytes) else None


def int8_matmuls(model: bytes, mode: str, accuracy_level: int = 0, block: int = BLOCK) -> bytes | None:
    """`model` with every int8-dequantizing MatMul rewritten as `mode` says (see the module
    doc); None when nothing matched or the model cannot be parsed (used as it is then)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    try:
        top = list(fields(model))
        graphs = [f for f in top if f.number == _MODEL_GRAPH and f.wire_type == LENGTH]
        if len(graphs) != 1:
            return None
        graph = _rewrite_graph(_payload(graphs[0]), mode, accuracy_level, block)
    except (ProtobufError, UnicodeDecodeError):
        return None
    if graph is None:
        return None
    out = b"".join(bytes_field(_MODEL_GRAPH, graph) if f is graphs[0] else f.raw for f in top)
    domains = {_text(p) for f in top if f.number == _MODEL_OPSET
               for p in fields(_payload(f)) if p.number == _OPSET_DOMAIN}
    if CONTRIB not in domains:
        out += bytes_field(_MODEL_OPSET, bytes_field(_OPSET_DOMAIN, CONTRIB.encode())
                           + int_field(_OPSET_VERSION, 1))
    return out


def int8_weights(model: bytes) -> bytes | None:
    """`int8_matmuls(model, "nbits", INT8_ACCURACY, INT8_BLOCK)`: the rewrite `weights="int8"` uses."""
    return int8_matmuls(model, "nbits", INT8_ACCURACY, INT8_BLOCK)


def _rewrite_graph(payload: bytes, mode: str, accuracy_level: int, block: int) -> bytes | None:
    entries = list(fields(payload))
    nodes = {i: _node(_payload(f)) for i, f in enumerate(entries) if f.number == _GRAPH_NODE}
    initializers: dict[str, tuple[int, _Tensor]] = {}
    for i, f in enumerate(entries):
        if f.number == _GRAPH_INITIALIZER:
            name, tensor = _tensor(_payload(f))
            initializers[name] = (i, tensor)
    if (any(t.external for _, t in initializers.values())
            or any(n.op_type in _SUBGRAPH_OPS for n in nodes.values())):
        return None
    graph_outputs = Counter(_text(part) for f in entries if f.number == _GRAPH_OUTPUT
                            for part in fields(_payload(f)) if part.number == _VALUE_NAME)
    uses = Counter(name for n in nodes.values() for name in n.inputs) + graph_outputs
    producer = {out: i for i, n in nodes.items() for out in n.outputs}
    names = set(producer) | set(initializers) | set(uses)
    replaced: dict[int, bytes] = {}
    dropped: set[int] = set()
    for position, node in nodes.items():
        match = _match(position, node, nodes, producer, initializers, uses)
        if match is None:
            continue
        q_at, q_tensor = initializers[match.table]
        s_at, _ = initializers[match.scale]
        q_raw, s_raw = _raw(_payload(entries[q_at])), _raw(_payload(entries[s_at]))
        k, n = q_tensor.dims
        if q_raw is None or s_raw is None or len(q_raw) != k * n or len(s_raw) != 4 * n:
            continue
        if q_tensor.data_type != _INT8 or (mode == "nbits" and k % block):
            continue
        q = np.frombuffer(q_raw, dtype=np.int8).reshape(k, n)
        scale = np.frombuffer(s_raw, dtype="<f4")
        base = node.outputs[0]
        x = node.inputs[0]
        if mode == "nbits":
            blocks = (q.T.astype(np.int16) + 128).astype(np.uint8).reshape(n, k // block, block)
            scales = np.repeat(scale.reshape(n, 1), k // block, axis=1).astype("<f4")
            b_name, s_name = f"{base}/nbits_weight", f"{base}/nbits_scales"
            if {b_name, s_name} & names:
                continue
            new = (_tensor_bytes(b_name, blocks, _UINT8) + _tensor_bytes(s_name, scales, _FLOAT)
                   + _node_bytes([x, b_name, s_name], node.outputs, f"{node.name}/nbits", "MatMulNBits",
                                 {"K": k, "N": n, "bits": 8, "block_size": block,
                                  "accuracy_level": accuracy_level}, CONTRIB))
            dropped |= {q_at, s_at}
        else:
            s_name = f"{base}/column_scales"
            if s_name in names:
                continue
            new = (_tensor_bytes(s_name, scale.astype("<f4"), _FLOAT)
                   + _node_bytes([x, match.table, s_name], node.outputs, f"{node.name}/dynamic",
                                 "DynamicQuantizeMatMul", {}, CONTRIB))
            dropped.add(s_at)
        replaced[position] = new
        dropped |= {match.cast, match.mul}
    if not replaced:
        return None
    return b"".join(replaced.get(i, b"" if i in dropped else f.raw) for i, f in enumerate(entries))


def _match(position: int, node: _Node, nodes: dict[int, _Node], producer: dict[str, int],
           initializers: dict[str, tuple[int, _Tensor]], uses: Counter[str]) -> _Match | None:
    """The pattern of the module doc at the MatMul `node`, with every intermediate and both
    initializers used by it alone, else None."""
    if node.op_type != "MatMul" or node.domain or len(node.inputs) != 2 or len(node.outputs) != 1:
        return None
    weight = node.inputs[1]
    mul_at = producer.get(weight)
    if mul_at is None or uses[weight] != 1:
        return None
    mul = nodes[mul_at]
    if mul.op_type != "Mul" or mul.domain or len(mul.inputs) != 2:
        return None
    for cast_out, scale in (mul.inputs, mul.inputs[::-1]):
        cast_at = producer.get(cast_out)
        if cast_at is None or scale not in initializers or uses[cast_out] != 1 or uses[scale] != 1:
            continue
        cast = nodes[cast_at]
        if cast.op_type != "Cast" or cast.domain or cast.attributes.get("to") != _FLOAT:
            continue
        if len(cast.inputs) != 1 or cast.inputs[0] not in initializers or uses[cast.inputs[0]] != 1:
            continue
        table = initializers[cast.inputs[0]][1]
        column_scale = initializers[scale][1]
        if (table.data_type == _INT8 and len(table.dims) == 2
                and column_scale.data_type == _FLOAT and column_scale.dims == [1, table.dims[1]]):
            return _Match(position, cast_at, mul_at, cast.inputs[0], scale)
    return None


def runs_here(session: Any) -> bool:
    """Whether the onnxruntime `session` encodes `[CLS] [SEP]` without an error (an
    onnxruntime without an 8-bit `MatMulNBits` kernel for this CPU refuses it at run time,
    not when the session is built)."""
    ids = np.array([[101, 102]], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    names = {i.name for i in session.get_inputs()}
    try:
        session.run(None, {name: value for name, value in feeds.items() if name in names})
    except Exception:  # noqa: BLE001 - any failure means this arithmetic is unusable here
        return False
    return True
