"""Values known only at run time as shape tensors (TensorRT 10's IShapeLayer and shape-tensor inputs): a value
that the parser could not compute -- an array holding symbols of dynamic dims (Shape of a tensor with dynamic
dims, and arithmetic on it), or a graph input / computed tensor feeding a shape position -- becomes a small INT32
tensor built from add_shape, gather, elementwise and concatenation layers, which the engine evaluates on the host
when input shapes (and shape-input values) are set, before execution."""
from __future__ import annotations

from typing import Any, Dict

import numpy as np

from .._enums import DataType, ElementWiseOperation
from .errors import Dynamic, ErrorCode, Fail
from .shape_eval import Sym

_BINARY = {"+": ElementWiseOperation.SUM, "-": ElementWiseOperation.SUB, "*": ElementWiseOperation.PROD,
           "//": ElementWiseOperation.FLOOR_DIV}


def _i32(p: Any, values: Any) -> Any:
    v = np.asarray(values, dtype=np.int64).reshape(-1)
    if v.size and (v.min() < -2 ** 31 or v.max() >= 2 ** 31):
        raise Dynamic("shape value %s does not fit INT32" % list(v))
    return p._L(p.network.add_constant((v.size,), v.astype(np.int32)))


def _shape_of(p: Any, name: str) -> Any:
    """add_shape of tensor `name` (one layer per tensor and node)."""
    cache: Dict[str, Any] = p.__dict__.setdefault("_shape_layers", {})
    key = (name, p._node_idx)
    if key not in cache:
        cache[key] = p._L(p.network.add_shape(p._tensor(name)))
    return cache[key]


def _dim(p: Any, name: str, axis: int) -> Any:
    return p._L(p.network.add_gather(_shape_of(p, name), _i32(p, [axis]), 0))


def _find_dim(p: Any, key: Any) -> Any:
    """A [1] tensor holding the dim whose symbol is `key` (a dim_param or (tensor, axis)), or None."""
    if isinstance(key, tuple) and len(key) == 3 and key[0] == "?":
        key = key[1:]
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int) \
            and key[0] in p._tensors and key[1] < len(p._tensors[key[0]].shape):
        return _dim(p, key[0], key[1])
    for name in list(p._input_names) + list(p._tensors):
        t = p._tensors.get(name)
        if t is None:
            continue
        for j, d in enumerate(tuple(t.shape)):
            if d < 0 and p._key_of(name, j) == key:
                return _dim(p, name, j)
    return None


def _key_tensor(p: Any, key: Any, depth: int = 0) -> Any:
    if depth > 64:
        raise Dynamic("a dynamic dimension expression too deep to compute at run time")
    if isinstance(key, (int, np.integer)):
        return _i32(p, [int(key)])
    if isinstance(key, tuple) and key and key[0] == "neg":
        a = _key_tensor(p, key[1], depth + 1)
        return p._L(p.network.add_elementwise(_i32(p, [0]), a, ElementWiseOperation.SUB))
    if isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], str) and key[0][1:-1] in _BINARY | {"%": 0}:
        op = key[0][1:-1]
        a = _key_tensor(p, key[1], depth + 1)
        b = _key_tensor(p, key[2], depth + 1)
        if op == "%":  # a - (a // b) * b, as numpy's mod for a divisor > 0
            q = p._L(p.network.add_elementwise(a, b, ElementWiseOperation.FLOOR_DIV))
            qb = p._L(p.network.add_elementwise(q, b, ElementWiseOperation.PROD))
            return p._L(p.network.add_elementwise(a, qb, ElementWiseOperation.SUB))
        return p._L(p.network.add_elementwise(a, b, _BINARY[op]))
    t = _find_dim(p, key)
    if t is None:
        raise Dynamic("the dynamic dimension %r cannot be read at run time (no tensor of this network has it)"
                      % (Sym(key),))
    return t


def sym_tensor(p: Any, arr: np.ndarray) -> Any:
    """An INT32 shape tensor computing `arr` (an integer array whose elements may be symbols) at run time."""
    flat = list(np.asarray(arr).reshape(-1))
    parts = []
    run: list = []
    for v in flat:
        if isinstance(v, Sym):
            if run:
                parts.append(_i32(p, run))
                run = []
            parts.append(_key_tensor(p, v.key))
        else:
            run.append(int(v))
    if run:
        parts.append(_i32(p, run))
    if len(parts) == 1:
        t = parts[0]
    else:
        layer = p.network.add_concatenation(parts)
        layer.axis = 0
        t = p._L(layer)
    shape = np.asarray(arr).shape
    if len(shape) != 1:
        t = p._reshape(t, list(shape), zero_is_placeholder=False)
    return t


# Values a run-time shape / axes / pads / starts operand may hold: 2 x 8 dims (pads), with room to spare.  A fuzzed
# Expand whose shape operand was a 2^31-element graph input made the importer build a rank-2^31 unsqueeze list
# (24 GiB before the OOM killer).  Split sizes (one value per output) pass their own, larger bound.
SHAPE_VALUES_MAX = 64


def shape_input(p: Any, name: str, max_values: int = SHAPE_VALUES_MAX) -> Any:
    """The INT32 tensor of a value computed at run time (a graph input or a layer output) used as a shape (at most
    `max_values` values along its one static dim, else INVALID_NODE)."""
    t = p._tensor(name)
    dims = tuple(t.shape)
    if len(dims) > 1 or (dims and dims[0] > max_values):
        raise Fail(ErrorCode.INVALID_NODE, "'%s' of shape %s cannot be a shape, axes or sizes operand: it must be "
                   "1-D with at most %d values" % (name, dims, max_values))
    if t.dtype != DataType.INT32:
        layer = p.network.add_cast(t, DataType.INT32)
        t = p._L(layer)
    return t


def runtime_reshape(p: Any, x: Any, shape: Any, allowzero: bool) -> Any:
    """x reshaped to the values of the shape tensor `shape` (0 copies unless allowzero, -1 infers)."""
    layer = p.network.add_shuffle(x)
    layer.set_input(1, shape)
    if allowzero:
        layer.zero_is_placeholder = False
    return p._L(layer)


def runtime_expand(p: Any, x: Any, shape: Any) -> Any:
    """ONNX Expand of x to the values of the 1-D shape tensor `shape` (bidirectional broadcast): x gets the larger
    rank, then a slice with size max(x's dims, shape) and stride 0 where x's dim is 1 (1 elsewhere)."""
    k = int(shape.shape[0])
    if k < 0:
        raise Dynamic("Expand's shape has a dynamic length")
    r = max(k, len(x.shape))
    x = p._unsqueeze_to(x, r)
    net = p.network
    xs = p._L(net.add_shape(x))
    if k < r:
        cat = net.add_concatenation([_i32(p, [1] * (r - k)), shape])
        cat.axis = 0
        shape = p._L(cat)
    size = p._L(net.add_elementwise(xs, shape, ElementWiseOperation.MAX))
    one = _i32(p, [1] * r)
    stride = p._L(net.add_elementwise(p._L(net.add_elementwise(xs, one, ElementWiseOperation.SUB)), one,
                                      ElementWiseOperation.MIN))
    layer = net.add_slice(x, [0] * r, [1] * r, [1] * r)
    layer.set_input(2, size)
    layer.set_input(3, stride)
    return p._L(layer)


def _pieces(p: Any, t: Any, idx: list) -> Any:
    return p._L(p.network.add_gather(t, _i32(p, idx), 0))


def runtime_pad(p: Any, x: Any, pads: Any, axes: list, mode: Any, fill: Any) -> Any:
    """ONNX Pad with `pads` (an INT32 tensor [2 * len(axes)]) known at run time: one slice starting at -pre with
    size dims + pre + post in `mode` (FILL with the constant `fill` tensor, CLAMP for edge, REFLECT, WRAP)."""
    r = len(x.shape)
    k = len(axes)
    net = p.network
    zero = _i32(p, [0])
    pre_parts, post_parts = [], []
    for i in range(r):
        if i in axes:
            j = axes.index(i)
            pre_parts.append(_pieces(p, pads, [j]))
            post_parts.append(_pieces(p, pads, [j + k]))
        else:
            pre_parts.append(zero)
            post_parts.append(zero)

    def cat(parts: list) -> Any:
        layer = net.add_concatenation(parts)
        layer.axis = 0
        return p._L(layer)

    pre, post = cat(pre_parts), cat(post_parts)
    xs = p._L(net.add_shape(x))
    start = p._L(net.add_elementwise(_i32(p, [0] * r), pre, ElementWiseOperation.SUB))
    size = p._L(net.add_elementwise(p._L(net.add_elementwise(xs, pre, ElementWiseOperation.SUM)), post,
                                    ElementWiseOperation.SUM))
    layer = net.add_slice(x, [0] * r, [1] * r, [1] * r)
    layer.mode = mode
    layer.set_input(1, start)
    layer.set_input(2, size)
    if fill is not None:
        layer.set_input(4, fill)
    return p._L(layer)


def runtime_tile(p: Any, x: Any, repeats: Any) -> Any:
    """ONNX Tile with `repeats` (an INT32 tensor [rank]) known at run time: a WRAP slice of size dims * repeats."""
    r = len(x.shape)
    net = p.network
    xs = p._L(net.add_shape(x))
    size = p._L(net.add_elementwise(xs, repeats, ElementWiseOperation.PROD))
    layer = net.add_slice(x, [0] * r, [1] * r, [1] * r)
    from .._enums import SampleMode
    layer.mode = SampleMode.WRAP
    layer.set_input(2, size)
    return p._L(layer)


def runtime_constant_of_shape(p: Any, shape: Any, value: np.ndarray) -> Any:
    """ONNX ConstantOfShape with `shape` (an INT32 tensor [k]) known at run time: one element, broadcast by a
    stride-0 slice of that size."""
    k = int(shape.shape[0])
    if k < 0:
        raise Dynamic("ConstantOfShape's shape has a dynamic length")
    one = p._const_tensor(np.full([1] * k, value.reshape(-1)[0], dtype=value.dtype))
    layer = p.network.add_slice(one, [0] * k, [1] * k, [0] * k)
    layer.set_input(2, shape)
    return p._L(layer)


def runtime_slice(p: Any, x: Any, starts: Any, ends: Any, axes: Any, steps: Any) -> Any:
    """ONNX Slice whose starts / ends (/ steps) are INT32 tensors known at run time (`axes` a list of axes known
    while parsing, `steps` None for all 1): ONNX's clamping computed as shape arithmetic, per sliced axis with d
    its size, s / e made non-negative by adding d, then clamped to [0, d] (step > 0) or [0, d - 1] / [-1, d - 1]
    (step < 0); size = max(ceil((e - s) / step), 0) = max(floor((e - s + step - sign(step)) / step), 0)."""
    net = p.network
    r = len(x.shape)
    E = ElementWiseOperation
    xs = p._L(net.add_shape(x))

    def ew(a: Any, b: Any, op: Any) -> Any:
        return p._L(net.add_elementwise(a, b, op))

    def sel(c: Any, a: Any, b: Any) -> Any:
        return p._L(net.add_select(c, a, b))

    zero, one = _i32(p, [0]), _i32(p, [1])
    st_parts, sz_parts, sd_parts = [], [], []
    n_axes = int(starts.shape[0])
    if not isinstance(axes, list):  # axes known at run time too: per dim, the entry whose axis it is
        ax = sel(ew(axes, _i32(p, [0] * n_axes), E.LESS), ew(axes, _i32(p, [r] * n_axes), E.SUM), axes)
    for i in range(r):
        d = _pieces(p, xs, [i])
        if isinstance(axes, list):
            if i not in axes:
                st_parts.append(zero)
                sz_parts.append(d)
                sd_parts.append(one)
                continue
            j = axes.index(i)
            s, e = _pieces(p, starts, [j]), _pieces(p, ends, [j])
            k = one if steps is None else _pieces(p, steps, [j])
        else:
            s, e, k = zero, d, one
            for j in range(n_axes):
                hit = ew(_pieces(p, ax, [j]), _i32(p, [i]), E.EQUAL)
                s = sel(hit, _pieces(p, starts, [j]), s)
                e = sel(hit, _pieces(p, ends, [j]), e)
                if steps is not None:
                    k = sel(hit, _pieces(p, steps, [j]), k)
        s = sel(ew(s, zero, E.LESS), ew(s, d, E.SUM), s)
        e = sel(ew(e, zero, E.LESS), ew(e, d, E.SUM), e)
        neg = ew(k, zero, E.LESS)
        dm1 = ew(d, one, E.SUB)
        lo_e = sel(neg, ew(zero, one, E.SUB), zero)
        hi = sel(neg, dm1, d)
        s = ew(ew(s, zero, E.MAX), hi, E.MIN)
        e = ew(ew(e, lo_e, E.MAX), hi, E.MIN)
        sign = sel(neg, ew(zero, one, E.SUB), one)
        num = ew(ew(ew(e, s, E.SUB), k, E.SUM), sign, E.SUB)
        size = ew(ew(num, k, E.FLOOR_DIV), zero, E.MAX)
        st_parts.append(s)
        sz_parts.append(size)
        sd_parts.append(k)

    def cat(parts: list) -> Any:
        layer = net.add_concatenation(parts)
        layer.axis = 0
        return p._L(layer)

    layer = net.add_slice(x, [0] * r, [1] * r, [1] * r)
    layer.set_input(1, cat(st_parts))
    layer.set_input(2, cat(sz_parts))
    layer.set_input(3, cat(sd_parts))
    return p._L(layer)


def runtime_split_sizes(p: Any, name: str, axis: int, n: int, ceil: bool) -> Any:
    """Split's sizes (an INT32 tensor [n]) along the dynamic `axis` of tensor `name` when no split is given:
    `ceil` (opset 18's num_outputs) parts of ceil(d / n), the last one d - (n - 1) * ceil(d / n), which must not be
    negative; else n equal parts d / n, d divisible by n.  Both are checked by an assertion, which fails at
    execution naming the split; until then the sizes are kept inside the axis (so shapes resolve)."""
    net = p.network

    def ew(a: Any, b: Any, op: Any) -> Any:
        return p._L(net.add_elementwise(a, b, op))

    d = _dim(p, name, axis)
    chunk = ew(ew(d, _i32(p, [n - 1]), ElementWiseOperation.SUM) if ceil else d, _i32(p, [n]),
               ElementWiseOperation.FLOOR_DIV)
    last = ew(d, ew(chunk, _i32(p, [n - 1]), ElementWiseOperation.PROD), ElementWiseOperation.SUB)
    if ceil:
        ok = ew(last, _i32(p, [-1]), ElementWiseOperation.GREATER)
        why = "Split: axis %d of '%s' is too short for num_outputs %d" % (axis, name, n)
    else:
        ok = ew(last, chunk, ElementWiseOperation.EQUAL)
        why = "Split: axis %d of '%s' is not divisible into %d equal outputs" % (axis, name, n)
    p._name_layer(net.add_assertion(ok, why))
    if n == 1:
        return d
    if ceil:  # too short an axis: parts that fit (the assertion above fails at execution)
        chunk = ew(chunk, ew(d, _i32(p, [n - 1]), ElementWiseOperation.FLOOR_DIV), ElementWiseOperation.MIN)
        last = ew(d, ew(chunk, _i32(p, [n - 1]), ElementWiseOperation.PROD), ElementWiseOperation.SUB)
    layer = net.add_concatenation([chunk] * (n - 1) + [last])
    layer.axis = 0
    return p._L(layer)


def runtime_split(p: Any, x: Any, split: Any, axis: int) -> list:
    """ONNX Split with the sizes `split` (an INT32 tensor [n]) known at run time: output i is a slice starting
    at sum(split[:i]) along `axis` with size split[i] there (x's dims elsewhere)."""
    n = int(split.shape[0]) if len(split.shape) == 1 else -1
    if n < 1:
        raise Dynamic("Split's split has a dynamic or zero length")
    r = len(x.shape)
    net = p.network
    xs = p._L(net.add_shape(x))

    def cat(parts: list) -> Any:
        if len(parts) == 1:
            return parts[0]
        layer = net.add_concatenation(parts)
        layer.axis = 0
        return p._L(layer)

    outs = []
    offset = None  # sum(split[:i]) as a [1] tensor
    for i in range(n):
        si = _pieces(p, split, [i])
        start = cat(([_i32(p, [0] * axis)] if axis else []) + [offset if offset is not None else _i32(p, [0])]
                    + ([_i32(p, [0] * (r - axis - 1))] if axis < r - 1 else []))
        size = cat(([_pieces(p, xs, list(range(axis)))] if axis else []) + [si]
                   + ([_pieces(p, xs, list(range(axis + 1, r)))] if axis < r - 1 else []))
        layer = net.add_slice(x, [0] * r, [1] * r, [1] * r)
        layer.set_input(1, start)
        layer.set_input(2, size)
        outs.append(p._L(layer))
        offset = si if offset is None else p._L(net.add_elementwise(offset, si, ElementWiseOperation.SUM))
    same = p._L(net.add_elementwise(offset, _pieces(p, xs, [axis]), ElementWiseOperation.EQUAL))
    p._name_layer(net.add_assertion(same, "Split: the split sizes must sum to the size of axis %d" % axis))
    return outs
