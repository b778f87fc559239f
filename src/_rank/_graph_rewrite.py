"""Keep an int8 embedding table int8 in an ONNX graph: gather the rows, then dequantize them.

The packaged MiniLM stores its word-embedding table as int8 rows with one float32 scale a row,
dequantized by `Gather(Mul(Cast(Q), S), ids)`. onnxruntime's constant folding turns `Mul(Cast(Q),
S)` into a 30522 × 384 float32 table (≈ 45 MiB, 4 × the int8 one). `keep_int8_rows` rewrites the
pattern to

    Mul(Cast(Gather(Q, ids)), Gather(S, ids))

which computes the same float32 products `float(q) · s` element by element (vectors bit for bit
the same) while only the gathered rows are ever float. See docs/record/performance.md,
"Hybrid worker memory".
"""

from __future__ import annotations

import struct
from collections import Counter
from typing import NamedTuple

from ._protobuf import FIXED32, LENGTH, Field, ProtobufError, bytes_field, fields, int_field, ints

# ONNX field numbers (onnx.proto) and enum values used here
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_OUTPUT = 1, 5, 12
_VALUE_NAME = 1
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 3, 4, 5, 7
_ATTR_NAME, _ATTR_F, _ATTR_I, _ATTR_INTS, _ATTR_TYPE, _ATTR_INT = 1, 2, 3, 8, 20, 2
_TENSOR_DIMS, _TENSOR_TYPE, _TENSOR_NAME, _TENSOR_LOCATION = 1, 2, 8, 14
_FLOAT, _UINT8, _INT8, _EXTERNAL = 1, 2, 3, 1
_SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan"})


class _Node(NamedTuple):
    inputs: list[str]
    outputs: list[str]
    name: str
    op_type: str
    domain: str
    attributes: dict[str, int | float | list[int]]


class _Tensor(NamedTuple):
    dims: list[int]
    data_type: int
    external: bool


def _payload(field: Field) -> bytes:
    if not isinstance(field.value, bytes):
        raise ProtobufError(f"field {field.number} is not length-delimited")
    return field.value


def _text(field: Field) -> str:
    return _payload(field).decode("utf-8")


def _node(payload: bytes) -> _Node:
    """A NodeProto's inputs, outputs, name, type, domain and its int, float and ints attributes."""
    inputs, outputs, attributes = [], [], {}
    name = op_type = domain = ""
    for f in fields(payload):
        if f.number == _NODE_INPUT:
            inputs.append(_text(f))
        elif f.number == _NODE_OUTPUT:
            outputs.append(_text(f))
        elif f.number == _NODE_NAME:
            name = _text(f)
        elif f.number == _NODE_OP:
            op_type = _text(f)
        elif f.number == _NODE_DOMAIN:
            domain = _text(f)
        elif f.number == _NODE_ATTRIBUTE:
            key, value, listed = "", None, []
            for a in fields(_payload(f)):
                if a.number == _ATTR_NAME:
                    key = _text(a)
                elif a.number == _ATTR_I:
                    value = int(a.value)
                    value = value - (1 << 64) if value >= 1 << 63 else value
                elif a.number == _ATTR_F and a.wire_type == FIXED32:
                    value = struct.unpack("<f", _payload(a))[0]
                elif a.number == _ATTR_INTS:
                    listed += [v - (1 << 64) if v >= 1 << 63 else v for v in ints(a)]
            attributes[key] = listed if value is None and listed else value
    return _Node(inputs, outputs, name, op_type, domain, attributes)


def _tensor(payload: bytes) -> tuple[str, _Tensor]:
    dims: list[int] = []
    name, data_type, external = "", 0, False
    for f in fields(payload):
        if f.number == _TENSOR_DIMS:
            dims.extend(ints(f))
        elif f.number == _TENSOR_TYPE:
            data_type = int(f.value)
        elif f.number == _TENSOR_NAME:
            name = _text(f)
        elif f.number == _TENSOR_LOCATION:
            external = int(f.value) == _EXTERNAL
    return name, _Tensor(dims, data_type, external)


def _encode_node(inputs: list[str], outputs: list[str], name: str, op_type: str,
                 int_attributes: dict[str, int] | None = None) -> bytes:
    body = b"".join(bytes_field(_NODE_INPUT, i.encode()) for i in inputs)
    body += b"".join(bytes_field(_NODE_OUTPUT, o.encode()) for o in outputs)
    body += bytes_field(_NODE_NAME, name.encode()) + bytes_field(_NODE_OP, op_type.encode())
    for key, value in (int_attributes or {}).items():
        attribute = bytes_field(_ATTR_NAME, key.encode()) + int_field(_ATTR_I, value)
        body += bytes_field(_NODE_ATTRIBUTE, attribute + int_field(_ATTR_TYPE, _ATTR_INT))
    return bytes_field(_GRAPH_NODE, body)


def keep_int8_rows(model: bytes) -> bytes | None:
    """`model` with every `Gather(Mul(Cast(Q), S), ids)` over an int8/uint8 table Q (rows × d)
    and a float32 row scale S (rows × 1) rewritten to gather first (see the module doc); None
    when the model holds no such pattern, keeps weights in external files, has subgraphs, or
    cannot be parsed (the caller then uses the model as it is)."""
    try:
        top = list(fields(model))
        graphs = [f for f in top if f.number == _MODEL_GRAPH and f.wire_type == LENGTH]
        if len(graphs) != 1:
            return None
        graph = _rewrite_graph(_payload(graphs[0]))
    except (ProtobufError, UnicodeDecodeError):
        return None
    if graph is None:
        return None
    return b"".join(bytes_field(_MODEL_GRAPH, graph) if f is graphs[0] else f.raw for f in top)


def _rewrite_graph(payload: bytes) -> bytes | None:
    entries = list(fields(payload))
    nodes = {i: _node(_payload(f)) for i, f in enumerate(entries) if f.number == _GRAPH_NODE}
    tensors = dict(_tensor(_payload(f)) for f in entries if f.number == _GRAPH_INITIALIZER)
    if any(t.external for t in tensors.values()) or any(n.op_type in _SUBGRAPH_OPS for n in nodes.values()):
        return None
    graph_outputs = {_text(part) for f in entries if f.number == _GRAPH_OUTPUT
                     for part in fields(_payload(f)) if part.number == _VALUE_NAME}
    uses = Counter(name for n in nodes.values() for name in n.inputs) + Counter(graph_outputs)
    producer = {out: i for i, n in nodes.items() for out in n.outputs}
    names = set(producer) | set(tensors) | set(uses)
    replaced: dict[int, bytes] = {}
    dropped: set[int] = set()
    for position, gather in nodes.items():
        match = _match(gather, nodes, producer, tensors, uses)
        if match is None:
            continue
        cast_at, mul_at, table, scale = match
        base = nodes[mul_at].outputs[0]
        rows, row_scales, floats = (f"{base}/int8_rows", f"{base}/row_scales", f"{base}/float_rows")
        if {rows, row_scales, floats} & names:
            continue
        ids, name = gather.inputs[1], gather.name or base
        replaced[position] = b"".join((
            _encode_node([table, ids], [rows], f"{name}/gather_int8", "Gather", {"axis": 0}),
            _encode_node([scale, ids], [row_scales], f"{name}/gather_scales", "Gather", {"axis": 0}),
            _encode_node([rows], [floats], f"{name}/cast_rows", "Cast", {"to": _FLOAT}),
            _encode_node([floats, row_scales], gather.outputs, f"{name}/scale_rows", "Mul"),
        ))
        dropped |= {cast_at, mul_at}
    if not replaced:
        return None
    return b"".join(replaced.get(i, b"" if i in dropped else f.raw) for i, f in enumerate(entries))


def _match(gather: _Node, nodes: dict[int, _Node], producer: dict[str, int],
           tensors: dict[str, _Tensor], uses: Counter[str]) -> tuple[int, int, str, str] | None:
    """(Cast position, Mul position, table name, scale name) when `gather` reads a dequantized
    int8 table as described in `keep_int8_rows`, else None."""
    if gather.op_type != "Gather" or gather.domain or gather.attributes.get("axis", 0) != 0:
        return None
    if len(gather.inputs) != 2 or gather.inputs[0] not in producer or uses[gather.inputs[0]] != 1:
        return None
    mul_at = producer[gather.inputs[0]]
    mul = nodes[mul_at]
    if mul.op_type != "Mul" or mul.domain or len(mul.inputs) != 2:
        return None
    for cast_out, scale in (mul.inputs, mul.inputs[::-1]):
        cast_at = producer.get(cast_out)
        if cast_at is None or scale not in tensors or uses[cast_out] != 1:
            continue
        cast = nodes[cast_at]
        if cast.op_type != "Cast" or cast.domain or cast.attributes.get("to") != _FLOAT:
            continue
        table = tensors.get(cast.inputs[0]) if len(cast.inputs) == 1 else None
        row_scale = tensors[scale]
        if (table is not None and table.data_type in (_INT8, _UINT8) and len(table.dims) == 2
                and row_scale.data_type == _FLOAT and row_scale.dims == [table.dims[0], 1]):
            return cast_at, mul_at, cast.inputs[0], scale
    return None
