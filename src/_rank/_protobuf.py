"""The protobuf wire format, as far as `_rank._graph_rewrite` needs it to edit an ONNX model.

A message is a run of fields, each a varint key `field_number << 3 | wire_type` and a payload:
wire type 0 a varint, 1 eight bytes, 2 a varint length and that many bytes, 5 four bytes.
`fields` splits a message into them, keeping each field's raw bytes so untouched fields are
written back byte for byte; the `*_field` writers encode new ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


class ProtobufError(ValueError):
    """The bytes are not a well-formed protobuf message."""


class Field(NamedTuple):
    """One field of a message: its number, wire type, value (an int for varints, the payload
    bytes otherwise) and the raw bytes of the whole field, key included."""

    number: int
    wire_type: int
    value: int | bytes
    raw: bytes


def read_varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint starting at `at` → (value, offset after it): 7 bits a byte, low group first,
    the high bit set on every byte but the last."""
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ProtobufError("truncated or overlong varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def fields(data: bytes) -> Iterator[Field]:
    """The fields of one message, in order."""
    at = 0
    while at < len(data):
        start = at
        key, at = read_varint(data, at)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("field number 0")
        value: int | bytes
        if wire_type == VARINT:
            value, at = read_varint(data, at)
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            value, at = data[at:at + size], at + size
        elif wire_type == LENGTH:
            size, at = read_varint(data, at)
            value, at = data[at:at + size], at + size
        else:
            raise ProtobufError(f"unsupported wire type {wire_type}")
        if at > len(data):
            raise ProtobufError("a field runs past the end of the message")
        yield Field(number, wire_type, value, data[start:at])


def varint(value: int) -> bytes:
    """`value` (≥ 0) as a varint."""
    if value < 0:
        raise ValueError("varints here are never negative")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def bytes_field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (strings, bytes, embedded messages)."""
    return varint(number << 3 | LENGTH) + varint(len(payload)) + payload


def int_field(number: int, value: int) -> bytes:
    """A varint field."""
    return varint(number << 3 | VARINT) + varint(value)


def ints(field: Field) -> list[int]:
    """The integers of a repeated integer field occurrence: one varint, or a packed run."""
    if field.wire_type == VARINT:
        return [int(field.value)]
    if field.wire_type != LENGTH:
        raise ProtobufError(f"field {field.number} is not an integer field")
    payload = field.value
    if not isinstance(payload, bytes):  # pragma: no cover - a LENGTH field always holds bytes
        raise ProtobufError(f"field {field.number} has no payload")
    out, at = [], 0
    while at < len(payload):
        value, at = read_varint(payload, at)
        out.append(value)
    return out
