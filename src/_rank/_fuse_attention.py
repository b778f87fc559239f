"""Fuse an exported BERT encoder's attention and GELU into onnxruntime's contrib ops.

The packaged MiniLM is an SDPA-style export: per layer the three projections `Q`, `K`, `V`
([B, S, H]) are reshaped to heads and transposed, K is transposed once more through a
Shape/Slice/Concat/Reshape chain, both Q and Kᵀ are multiplied by `s = d^-1/4`, then

    P = Softmax(Q·s · Kᵀ·s + mask_bias);  P = Where(IsNaN(P), 0, P);  out = P · V

with `mask_bias = Where(key_kept, 0, NEG)` built once from `attention_mask`, and the heads are
transposed and reshaped back to [B, S, H]. onnxruntime's optimizer fuses none of it, so one
pass runs ~20 small nodes a layer. `fuse_attention` replaces each such layer by

    MultiHeadAttention(Q, K, V, key_padding_mask = Cast<int32>(attention_mask))
      num_heads = H / d, scale = s², mask_filter_value = NEG

(the same softmax of the same scaled scores; masked keys get the same additive `NEG`, which
makes their weight 0 as before; the NaN guard only matters for a row with every key masked,
which a tokenized text never has: [CLS] is always kept), and each exact GELU

    Mul(x, Mul(0.5, Add(Erf(Div(x, √2)), 1)))   →   Gelu(x)

(`Gelu` of domain `com.microsoft` computes `0.5 · x · (1 + erf(x / √2))`). Nodes left without a
consumer (the mask subgraph, the K transpose chain's shape arithmetic) and initializers nothing
reads any more are dropped.

The match is structural: every intermediate must be used by the pattern alone, the constants
must have the values above, and the mask must be computed from the `attention_mask` input by
broadcasting and logic ops only (comparisons only against constants; any other graph input
read only through `Shape`). A model where some layer does not match keeps that layer as it is;
one where nothing matches is returned as None (used as it is).
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from typing import NamedTuple

import numpy as np

from ._graph_rewrite import _SUBGRAPH_OPS, _Node, _node, _payload, _tensor, _text
from ._protobuf import (
    FIXED32,
    LENGTH,
    ProtobufError,
    bytes_field,
    fields,
    int_field,
    ints,
    varint,
)

FUSE_REWRITE = "mha-gelu"
"""The fusion's identity; part of the saved graph's key when the encoder fuses."""

CONTRIB = "com.microsoft"

_MODEL_GRAPH, _MODEL_OPSET, _OPSET_DOMAIN, _OPSET_VERSION = 7, 8, 1, 2
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_INPUT, _GRAPH_OUTPUT, _VALUE_NAME = 1, 5, 11, 12, 1
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 3, 4, 5, 7
_ATTR_NAME, _ATTR_F, _ATTR_I, _ATTR_TYPE = 1, 2, 3, 20
_ATTR_FLOAT, _ATTR_INT = 1, 2
_TENSOR_FLOATS, _TENSOR_INT32S, _TENSOR_INT64S, _TENSOR_NAME, _TENSOR_RAW = 4, 5, 7, 8, 9
_FLOAT, _INT32, _INT64, _BOOL = 1, 6, 7, 9
_DTYPES = {_FLOAT: "<f4", _INT32: "<i4", _INT64: "<i8", _BOOL: "?"}

MASK_INPUT = "attention_mask"
#: ops the key-padding mask may be built with from `attention_mask` (broadcasting and logic)
_MASK_OPS = frozenset({"Cast", "And", "Or", "Not", "GatherND", "Gather", "Unsqueeze", "Squeeze",
                       "Expand", "Concat", "Max", "Shape", "Range", "Reshape", "Slice"})
_MASK_COMPARISONS = frozenset({"GreaterOrEqual", "Greater", "Equal", "Less", "LessOrEqual"})
_HUGE = 2**62  # chosen: a Slice bound at least this large means "to the end" (the export uses ±2^63)
_RTOL = 1e-6  # chosen: a constant matches its expected value within float32 rounding
_MASKED_AT_MOST = -1e4  # chosen: exp(-1e4 + any score here) is 0 in float32: a masked key weighs exactly 0
_SMALL = 64  # chosen: initializers of at most this many values are read (scalars and shape parts)
_SOFTMAX_LAST_AXIS_OPSET = 13  # spec: ONNX Softmax's default axis is -1 from opset 13 (1, flattened, before)


class _Graph(NamedTuple):
    nodes: dict[int, _Node]
    producer: dict[str, int]
    uses: Counter[str]
    constants: dict[str, np.ndarray]
    dims: dict[str, list[int]]
    inputs: set[str]


def _constant(payload: bytes) -> tuple[str, list[int], np.ndarray | None]:
    """An initializer's name, dimensions and, when it is small and held inline, its values."""
    name, tensor = _tensor(payload)
    dims, data_type, external = tensor.dims, tensor.data_type, tensor.external
    raw = None
    listed: list[int | float] = []
    for f in fields(payload):
        if f.number == _TENSOR_RAW:
            raw = _payload(f)
        elif f.number == _TENSOR_FLOATS and f.wire_type == LENGTH:
            listed += list(np.frombuffer(_payload(f), dtype="<f4"))
        elif f.number in (_TENSOR_INT32S, _TENSOR_INT64S):
            listed += [v - (1 << 64) if v >= 1 << 63 else v for v in ints(f)]
    size = math.prod(dims)
    if external or data_type not in _DTYPES or size > _SMALL:
        return name, dims, None
    if raw is not None:
        values = np.frombuffer(raw, dtype=_DTYPES[data_type])
    else:
        values = np.array(listed, dtype=_DTYPES[data_type])
    return name, dims, values.reshape(dims) if values.size == size else None


def _read_graph(entries: list) -> _Graph | None:
    nodes = {i: _node(_payload(f)) for i, f in enumerate(entries) if f.number == _GRAPH_NODE}
    constants: dict[str, np.ndarray] = {}
    dims: dict[str, list[int]] = {}
    for f in entries:
        if f.number == _GRAPH_INITIALIZER:
            name, dims[name], values = _constant(_payload(f))
            if values is not None:
                constants[name] = values
    if any(n.op_type in _SUBGRAPH_OPS for n in nodes.values()):
        return None
    outputs = Counter(_value_names(entries, _GRAPH_OUTPUT))
    uses = Counter(name for n in nodes.values() for name in n.inputs) + outputs
    producer = {out: i for i, n in nodes.items() for out in n.outputs}
    return _Graph(nodes, producer, uses, constants, dims, set(_value_names(entries, _GRAPH_INPUT)))


def _value_names(entries: list, number: int) -> list[str]:
    return [_text(part) for f in entries if f.number == number
            for part in fields(_payload(f)) if part.number == _VALUE_NAME]


def _near(value: np.ndarray | None, expected: float) -> bool:
    return (value is not None and value.size == 1
            and abs(float(value.reshape(-1)[0]) - expected) <= _RTOL * max(1.0, abs(expected)))


class _Chain:
    """Walks producers, recording every node it passes that the replacement makes dead."""

    def __init__(self, graph: _Graph) -> None:
        self.graph = graph
        self.taken: set[int] = set()

    def node(self, tensor: str, op: str, *, single_use: bool = True) -> _Node | None:
        """The node producing `tensor` when it is a default-domain `op` (and `tensor` has no
        other consumer when `single_use`)."""
        at = self.graph.producer.get(tensor)
        if at is None or (single_use and self.graph.uses[tensor] != 1):
            return None
        found = self.graph.nodes[at]
        if found.op_type != op or found.domain:
            return None
        self.taken.add(at)
        return found

    def constant(self, tensor: str) -> np.ndarray | None:
        return self.graph.constants.get(tensor)


def _heads(chain: _Chain, tensor: str, uses: int = 1) -> tuple[str, int] | None:
    """(projection [B, S, H], head size d) when `tensor` = Transpose<0,2,1,3>(Reshape(proj,
    Concat(b, s, -1, d))) and `tensor` has `uses` consumers."""
    if chain.graph.uses[tensor] != uses:
        return None
    transpose = chain.node(tensor, "Transpose", single_use=False)
    if transpose is None or transpose.attributes.get("perm") != [0, 2, 1, 3]:
        return None
    reshape = chain.node(transpose.inputs[0], "Reshape")
    if reshape is None or len(reshape.inputs) != 2:
        return None
    shape = chain.graph.nodes.get(chain.graph.producer.get(reshape.inputs[1], -1))
    if shape is None or shape.op_type != "Concat" or shape.domain or len(shape.inputs) != 4:
        return None  # the shape is shared by the layer's projections: dropped only once dead
    minus_one, size = chain.constant(shape.inputs[2]), chain.constant(shape.inputs[3])
    if not (_near(minus_one, -1) and size is not None and size.size == 1 and int(size.reshape(-1)[0]) > 0):
        return None
    return reshape.inputs[0], int(size.reshape(-1)[0])


def _slice_bounds(chain: _Chain, node: _Node, source: str) -> tuple[int, int] | None:
    if node.op_type != "Slice" or node.domain or len(node.inputs) != 3 or node.inputs[0] != source:
        return None
    start, end = chain.constant(node.inputs[1]), chain.constant(node.inputs[2])
    if start is None or end is None or start.size != 1 or end.size != 1:
        return None
    return int(start.reshape(-1)[0]), int(end.reshape(-1)[0])


def _keys_transposed(chain: _Chain, tensor: str) -> str | None:
    """The head-split K when `tensor` swaps its last two axes: Reshape(Transpose<0,2,1>(Reshape(
    K, Concat(-1, K.shape[-2], K.shape[-1]))), Concat(K.shape[:-2], K.shape[-1], K.shape[-2]))."""
    outer = chain.node(tensor, "Reshape")
    if outer is None or len(outer.inputs) != 2:
        return None
    swap = chain.node(outer.inputs[0], "Transpose")
    if swap is None or swap.attributes.get("perm") != [0, 2, 1]:
        return None
    inner = chain.node(swap.inputs[0], "Reshape")
    if inner is None or len(inner.inputs) != 2:
        return None
    keys = inner.inputs[0]
    first, second = chain.node(inner.inputs[1], "Concat"), chain.node(outer.inputs[1], "Concat")
    if first is None or second is None or len(first.inputs) != 3 or len(second.inputs) != 3:
        return None
    shape_at = None
    parts: dict[str, str] = {}
    for part in first.inputs[1:] + second.inputs:
        at = chain.graph.producer.get(part)
        if at is None:
            return None
        piece = chain.graph.nodes[at]
        source = piece.inputs[0] if piece.inputs else ""
        shape_at = chain.graph.producer.get(source) if shape_at is None else shape_at
        bounds = _slice_bounds(chain, piece, source)
        if bounds is None or chain.graph.producer.get(source) != shape_at:
            return None
        start, end = bounds
        kind = ("last" if start == -1 and end >= _HUGE else "middle" if (start, end) == (-2, -1)
                else "lead" if start <= -_HUGE and end == -2 else None)
        if kind is None or parts.setdefault(kind, part) != part:
            return None
        chain.taken.add(at)
    if shape_at is None:
        return None
    shape = chain.graph.nodes[shape_at]
    if (shape.op_type != "Shape" or shape.domain or shape.inputs != [keys]
            or shape.attributes.get("start", 0) != 0 or "end" in shape.attributes):
        return None
    chain.taken.add(shape_at)
    if (len(parts) != 3 or not _near(chain.constant(first.inputs[0]), -1)
            or first.inputs[1:] != [parts["middle"], parts["last"]]
            or second.inputs != [parts["lead"], parts["last"], parts["middle"]]):
        return None
    return keys


def _mask_from_input(graph: _Graph, condition: str) -> bool:
    """Whether `condition` is computed from `attention_mask` by `_MASK_OPS` (comparisons only
    against constants), any other graph input read only through Shape."""
    if MASK_INPUT not in graph.inputs:
        return False
    seen: set[str] = set()
    stack = [condition]
    reached = False
    while stack:
        tensor = stack.pop()
        if tensor in seen or tensor in graph.constants:
            continue
        seen.add(tensor)
        if tensor == MASK_INPUT:
            reached = True
            continue
        at = graph.producer.get(tensor)
        if at is None:
            return False  # another graph input read by value, or an opaque initializer
        node = graph.nodes[at]
        if node.domain:
            return False
        if node.op_type == "Shape":
            reached_input = node.inputs[0]
            if reached_input == MASK_INPUT or reached_input in graph.inputs:
                continue
        elif node.op_type in _MASK_COMPARISONS:
            if not any(i in graph.constants for i in node.inputs):
                return False
        elif node.op_type not in _MASK_OPS:
            return False
        stack.extend(i for i in node.inputs if i)
    return reached


class _Attention(NamedTuple):
    at: int  # the position of the head merge, the pattern's last node (every input precedes it)
    query: str
    key: str
    value: str
    output: str
    heads: int
    scale: float
    mask_filter: float


def _attention(graph: _Graph, at: int, opset: int) -> tuple[_Attention, set[int]] | None:
    """The attention layer whose Softmax is node `at` (in a model of default-domain `opset`),
    with the nodes it replaces."""
    softmax = graph.nodes[at]
    default_axis = -1 if opset >= _SOFTMAX_LAST_AXIS_OPSET else 1
    if softmax.op_type != "Softmax" or softmax.domain or softmax.attributes.get("axis", default_axis) not in (-1, 3):
        return None
    chain = _Chain(graph)
    chain.taken.add(at)
    scores = chain.node(softmax.inputs[0], "Add")
    if scores is None:
        return None
    mask_bias = None
    for product_name, bias_name in (scores.inputs, scores.inputs[::-1]):
        product = chain.node(product_name, "MatMul")
        where_at = graph.producer.get(bias_name)
        if product is not None and where_at is not None:
            mask_bias = graph.nodes[where_at]
            break
    if (product is None or mask_bias is None or mask_bias.op_type != "Where" or mask_bias.domain
            or len(mask_bias.inputs) != 3):
        return None
    neg = chain.constant(mask_bias.inputs[2])
    if not _near(chain.constant(mask_bias.inputs[1]), 0.0) or neg is None or neg.size != 1:
        return None
    if float(neg.reshape(-1)[0]) > _MASKED_AT_MOST or not _mask_from_input(graph, mask_bias.inputs[0]):
        return None  # a bias that leaves masked keys a weight, or a mask not from the input
    scaled_q, scaled_k = chain.node(product.inputs[0], "Mul"), chain.node(product.inputs[1], "Mul")
    if scaled_q is None or scaled_k is None:
        return None
    factor = chain.constant(scaled_q.inputs[1])
    if factor is None or factor.size != 1 or not _near(chain.constant(scaled_k.inputs[1]), float(factor.reshape(-1)[0])):
        return None
    query = _heads(chain, scaled_q.inputs[0])
    keys = _keys_transposed(chain, scaled_k.inputs[0])
    key = _heads(chain, keys, uses=2) if keys is not None else None  # read by the chain's Shape too
    # the weights: Softmax, optionally through the export's NaN guard Where(IsNaN(P), 0, P)
    out_uses = [n for n in graph.nodes.values() if softmax.outputs[0] in n.inputs]
    weights = softmax.outputs[0]
    if len(out_uses) == 2 and graph.uses[weights] == 2:
        isnan = next((n for n in out_uses if n.op_type == "IsNaN"), None)
        guard = next((n for n in out_uses if n.op_type == "Where"), None)
        if (isnan is None or guard is None or guard.inputs[0] != isnan.outputs[0] or guard.inputs[2] != weights
                or graph.uses[isnan.outputs[0]] != 1 or not _near(chain.constant(guard.inputs[1]), 0.0)):
            return None
        chain.taken |= {graph.producer[isnan.outputs[0]], graph.producer[guard.outputs[0]]}
        weights = guard.outputs[0]
    elif graph.uses[weights] != 1:
        return None
    mixed = _consumer(graph, weights)
    if query is None or key is None or mixed is None or graph.nodes[mixed].op_type != "MatMul":
        return None
    chain.taken.add(mixed)
    mix = graph.nodes[mixed]
    value = _heads(chain, mix.inputs[1]) if mix.inputs[0] == weights and not mix.domain else None
    back_at = _consumer(graph, mix.outputs[0])
    if value is None or back_at is None:
        return None
    back = graph.nodes[back_at]
    if back.op_type != "Transpose" or back.domain or back.attributes.get("perm") != [0, 2, 1, 3]:
        return None
    chain.taken.add(back_at)
    merge_at = _consumer(graph, back.outputs[0])
    merge = graph.nodes[merge_at] if merge_at is not None else None
    if merge is None or merge.op_type != "Reshape" or merge.domain or len(merge.inputs) != 2:
        return None
    chain.taken.add(merge_at)
    merge_shape = graph.nodes.get(graph.producer.get(merge.inputs[1], -1))
    if merge_shape is None or merge_shape.op_type != "Concat" or len(merge_shape.inputs) != 3:
        return None
    hidden = chain.constant(merge_shape.inputs[2])
    size = query[1]
    if hidden is None or hidden.size != 1 or query[1] != key[1] or key[1] != value[1]:
        return None
    width = _projection_width(graph, query[0])
    if width is None or width % size or int(hidden.reshape(-1)[0]) not in (-1, width):
        return None
    scale = float(factor.reshape(-1)[0]) ** 2
    return (_Attention(merge_at, query[0], key[0], value[0], merge.outputs[0], width // size, scale,
                       float(neg.reshape(-1)[0])), chain.taken)


def _consumer(graph: _Graph, tensor: str) -> int | None:
    """The one node reading `tensor`, when exactly one node (and no graph output) does."""
    if graph.uses[tensor] != 1:
        return None
    return next((i for i, n in graph.nodes.items() if tensor in n.inputs), None)


def _projection_width(graph: _Graph, tensor: str) -> int | None:
    """H when `tensor` = Add(·, bias) with a bias initializer of shape [H] (a linear layer)."""
    at = graph.producer.get(tensor)
    if at is None or graph.nodes[at].op_type != "Add":
        return None
    for name in graph.nodes[at].inputs:
        bias = graph.dims.get(name)
        if bias is not None and len(bias) == 1:
            return bias[0]
    return None


def _gelu(graph: _Graph, at: int) -> tuple[str, str, set[int]] | None:
    """(x, output, replaced nodes) when node `at` is the final Mul of the exact GELU."""
    outer = graph.nodes[at]
    if outer.op_type != "Mul" or outer.domain or len(outer.inputs) != 2:
        return None
    for x, half_product in (outer.inputs, outer.inputs[::-1]):
        chain = _Chain(graph)
        halved = chain.node(half_product, "Mul")
        if halved is None:
            continue
        for half, shifted_name in (halved.inputs, halved.inputs[::-1]):
            if not _near(chain.constant(half), 0.5):
                continue
            shifted = chain.node(shifted_name, "Add")
            if shifted is None:
                continue
            erf_name = next((i for i in shifted.inputs if i not in graph.constants), None)
            one = next((i for i in shifted.inputs if i in graph.constants), None)
            erf = chain.node(erf_name, "Erf") if erf_name and _near(chain.constant(one), 1.0) else None
            if erf is None:
                continue
            divided = chain.node(erf.inputs[0], "Div")
            if (divided is not None and divided.inputs[0] == x
                    and _near(chain.constant(divided.inputs[1]), math.sqrt(2.0))):
                return x, outer.outputs[0], chain.taken | {at}
    return None


def _encode_node(inputs: list[str], outputs: list[str], name: str, op_type: str, domain: str,
                 attributes: dict[str, int | float]) -> bytes:
    body = b"".join(bytes_field(_NODE_INPUT, i.encode()) for i in inputs)
    body += b"".join(bytes_field(_NODE_OUTPUT, o.encode()) for o in outputs)
    body += bytes_field(_NODE_NAME, name.encode()) + bytes_field(_NODE_OP, op_type.encode())
    for key, value in attributes.items():
        if isinstance(value, float):
            payload = struct.pack("<f", value)
            attribute = (bytes_field(_ATTR_NAME, key.encode()) + varint(_ATTR_F << 3 | FIXED32) + payload
                         + int_field(_ATTR_TYPE, _ATTR_FLOAT))
        else:
            attribute = (bytes_field(_ATTR_NAME, key.encode()) + int_field(_ATTR_I, value)
                         + int_field(_ATTR_TYPE, _ATTR_INT))
        body += bytes_field(_NODE_ATTRIBUTE, attribute)
    if domain:
        body += bytes_field(_NODE_DOMAIN, domain.encode())
    return bytes_field(_GRAPH_NODE, body)


def fuse_attention(model: bytes) -> bytes | None:
    """`model` with its attention layers and exact GELUs fused as the module doc says; None
    when nothing matched or the model cannot be parsed (the caller uses it as it is)."""
    try:
        top = list(fields(model))
        graphs = [f for f in top if f.number == _MODEL_GRAPH and f.wire_type == LENGTH]
        if len(graphs) != 1:
            return None
        opsets = {}
        for f in top:
            if f.number == _MODEL_OPSET:
                parts = {p.number: p for p in fields(_payload(f))}
                domain = _text(parts[_OPSET_DOMAIN]) if _OPSET_DOMAIN in parts else ""
                opsets[domain] = int(parts[_OPSET_VERSION].value) if _OPSET_VERSION in parts else 0
        graph = _rewrite_graph(_payload(graphs[0]), opsets.get("", opsets.get("ai.onnx", 0)))
    except (ProtobufError, UnicodeDecodeError, ValueError):
        return None
    if graph is None:
        return None
    out = b"".join(bytes_field(_MODEL_GRAPH, graph) if f is graphs[0] else f.raw for f in top)
    domains = set(opsets)
    if CONTRIB not in domains:
        out += bytes_field(_MODEL_OPSET, bytes_field(_OPSET_DOMAIN, CONTRIB.encode())
                           + int_field(_OPSET_VERSION, 1))
    return out


def _rewrite_graph(payload: bytes, opset: int) -> bytes | None:
    entries = list(fields(payload))
    graph = _read_graph(entries)
    if graph is None:
        return None
    return _replace(entries, graph, opset)


def _replace(entries: list, graph: _Graph, opset: int) -> bytes | None:
    names = set(graph.producer) | set(graph.uses) | set(graph.inputs)
    mask = f"{MASK_INPUT}/int32_key_padding"
    if mask in names:
        return None
    added: dict[int, bytes] = {}
    replaced: set[int] = set()
    for at, node in graph.nodes.items():
        if node.op_type == "Softmax":
            found = _attention(graph, at, opset)
            if found is None or found[1] & replaced:
                continue
            layer, taken = found
            added[layer.at] = _encode_node([layer.query, layer.key, layer.value, "", mask], [layer.output],
                                     f"{node.name or layer.output}/multi_head_attention",
                                     "MultiHeadAttention", CONTRIB,
                                     {"num_heads": layer.heads, "scale": layer.scale,
                                      "mask_filter_value": layer.mask_filter})
            replaced |= taken
        elif node.op_type == "Mul":
            gelu = _gelu(graph, at)
            if gelu is None or gelu[2] & replaced:
                continue
            x, output, taken = gelu
            added[at] = _encode_node([x], [output], f"{node.name or output}/gelu", "Gelu", CONTRIB, {})
            replaced |= taken
    if not added:
        return None
    attention = any(b"MultiHeadAttention" in piece for piece in added.values())
    first = min(i for i, f in enumerate(entries) if f.number == _GRAPH_NODE)
    cast = (_encode_node([MASK_INPUT], [mask], f"{mask}/cast", "Cast", "", {"to": _INT32})
            if attention else b"")
    kept = {i: f.raw for i, f in enumerate(entries) if i not in replaced or i in added}
    kept.update(added)
    kept[first] = cast + kept.get(first, b"")
    return _without_dead(entries, kept, graph)


def _without_dead(entries: list, kept: dict[int, bytes], graph: _Graph) -> bytes | None:
    """The graph of `kept` entries minus nodes no node or graph output reads (repeatedly) and
    initializers nothing reads; None when a node left would read a tensor nothing provides (a
    pattern that took a node something else needs: the model is then used as it is)."""
    outputs = set(_value_names(entries, _GRAPH_OUTPUT))
    pieces: dict[int, list[_Node]] = {}
    for i, raw in kept.items():
        if entries[i].number == _GRAPH_NODE:
            pieces[i] = [_node(_payload(f)) for f in fields(raw) if f.number == _GRAPH_NODE]
    alive = {i: list(range(len(p))) for i, p in pieces.items()}
    while True:
        read = Counter(name for i, p in pieces.items() for k in alive[i] for name in p[k].inputs)
        dead = [(i, k) for i, p in pieces.items() for k in alive[i]
                if not any(o in outputs or read[o] for o in p[k].outputs if o)]
        if not dead:
            break
        for i, k in dead:
            alive[i].remove(k)
    provided = set(graph.inputs) | set(graph.dims) | {""}
    provided |= {o for i, p in pieces.items() for k in alive[i] for o in p[k].outputs}
    if any(name not in provided for name in read) or any(name not in provided for name in outputs):
        return None
    out = []
    for i in sorted(kept):
        f = entries[i]
        if f.number == _GRAPH_NODE:
            raws = [g.raw for g in fields(kept[i]) if g.number == _GRAPH_NODE]
            out.append(b"".join(raws[k] for k in alive[i]))
        elif f.number == _GRAPH_INITIALIZER:
            name = _constant_name(f)
            out.append(f.raw if read[name] or name in outputs or name in graph.inputs else b"")
        else:
            out.append(kept[i])
    return b"".join(out)


def _constant_name(field) -> str:
    return next((_text(p) for p in fields(_payload(field)) if p.number == _TENSOR_NAME), "")
