"""ONNX protobuf pieces for the graph-rewrite tests, written with `_rank._protobuf`'s field helpers
(ModelProto's field numbers: ValueInfoProto name 1, type 2; NodeProto input 1, output 2, op_type 4,
attribute 5)."""

from __future__ import annotations

from typing import Any

from _rank._protobuf import bytes_field, int_field


def value_info(name: str, elem_type: int, dims: list[int | str]) -> bytes:
    """A ValueInfoProto of a tensor of `elem_type` whose dimensions are numbers or named."""
    shape = b"".join(bytes_field(1, int_field(1, d) if isinstance(d, int) else bytes_field(2, d.encode()))
                     for d in dims)
    tensor_type = int_field(1, elem_type) + bytes_field(2, shape)
    return bytes_field(1, name.encode()) + bytes_field(2, bytes_field(1, tensor_type))


def node(op: str, inputs: list[str], outputs: list[str], **ints: int) -> bytes:
    """A GraphProto node field: NodeProto `op` with integer attributes."""
    body = b"".join(bytes_field(1, i.encode()) for i in inputs)
    body += b"".join(bytes_field(2, o.encode()) for o in outputs) + bytes_field(4, op.encode())
    for key, value in ints.items():
        body += bytes_field(5, bytes_field(1, key.encode()) + int_field(3, value) + int_field(20, 2))
    return bytes_field(1, body)


def tensor(name: str, array: Any, data_type: int) -> bytes:
    """A TensorProto named `name` holding `array`'s raw bytes as ONNX `data_type`."""
    dims = b"".join(int_field(1, d) for d in array.shape)
    return dims + int_field(2, data_type) + bytes_field(8, name.encode()) + bytes_field(9, array.tobytes())


def model(graph: bytes) -> bytes:
    """A ModelProto (IR version 8, default opset 17) around the GraphProto bytes `graph`."""
    opset = bytes_field(1, b"") + int_field(2, 17)
    return int_field(1, 8) + bytes_field(8, opset) + bytes_field(7, graph)
