"""Importers of indexing ops: Slice, Pad, Gather, GatherElements, GatherND."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from .._enums import DataType, ElementWiseOperation, GatherMode, ReduceOperation, SampleMode
from .constants import FOLD_LIMIT, attr_ints, clamp_slice, indices_out_of_range, slice_params
from .context import MAX_ELEMENTS, ImporterContext
from .dtypes import TRT_NP
from .errors import Dynamic, ErrorCode, Fail, bound_dims_constant, unsupported
from .registry import importer
from .shape_eval import Sym, is_static


def _resolve_bound(p: ImporterContext, v: Any, xname: str, axis: int, dim: int) -> int:
    if isinstance(v, Sym):
        if p._dim_is(v, xname, axis):
            return 2 ** 62  # "the whole dim": clamps to dim
        raise Dynamic("Slice bound %r is a dynamic dimension that is not the sliced axis' own size (e.g. "
                      "pe[:T] with T from another tensor): trtlite has no shape tensors to slice by it" % (v,))
    return int(v)


_END = 2 ** 31 - 1  # bounds at least this large mean "to the end" (exporters write INT_MAX or INT64_MAX)


def _dynamic_axis_slice(s: int, e: int, st: int) -> Tuple[str, Any]:
    """How to slice a dynamic axis (size D known at run time) from constant bounds: ("crop", (pre, post))
    for a padding layer that crops pre elements at the start and post at the end (output D - pre - post),
    or ("gather", indices) when the output size is static (negative indices count from the end, which
    trtlite's gather resolves at run time).  Raises Dynamic when the output size depends on D in a way
    neither can express.  Bounds of magnitude >= _END mean "past the end" / "before the start"."""
    if st == 1 and 0 <= s < _END and (e >= _END or -_END < e < 0):
        return "crop", (s, 0 if e >= _END else -e)  # x[s:] and x[s:-k]
    idx = None
    if abs(s) < _END and abs(e) < _END and (s >= 0) == (e >= 0):
        idx = range(s, e, st)  # x[a:b], x[-a:-b] (either direction)
    elif -_END < s < 0 and e >= _END and st > 0:
        idx = range(s, 0, st)  # x[-a:]
    elif 0 <= s < _END and e <= -_END and st < 0:
        idx = range(s, -1, st)  # x[a::-1]
    if idx is None:
        raise Dynamic("Slice (starts %d, ends %d, step %d) along a dynamic axis gives a size that depends on the "
                      "axis' run-time size in a way trtlite cannot express (it slices dynamic axes by cropping a "
                      "constant number of elements from each end, step 1, or by a constant number of indices)"
                      % (s, e, st))
    if len(idx) == 0:
        raise unsupported("Slice gives an empty tensor", ErrorCode.UNSUPPORTED_NODE_SHAPE)
    bound_dims_constant(len(idx), "Slice (starts %d, ends %d, step %d) along a dynamic axis: its gather index table"
                        % (s, e, st))
    # as many elements as the bounds say, provided the axis is long enough at run time: a shorter one fails
    # there with a gather index error (ONNX would clamp the bounds)
    return "gather", np.arange(idx.start, idx.stop, idx.step)


@importer("Slice",
          restrictions=("axes must be known while parsing; starts / ends / steps computed at run time are shape "
                        "tensors; known while parsing, along dynamic axes: x[s:] and x[s:-k] (step 1) or a constant "
                        "number of indices; no empty results"))
def _slice_op(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    try:
        return _slice_static(p, node, a)
    except Dynamic:
        # bounds computed from dynamic dims (pe[:x.shape[1]]): the same slice with shape-tensor bounds
        from .shape_eval import has_sym
        if p._opset < 10 or not any(has_sym(p._consts.get(p._inp(node, i) or "")) for i in (1, 2, 4)):
            raise
        return _slice_runtime(p, node, len(p._tensor(node.input[0]).shape))


def _slice_runtime(p: ImporterContext, node: Any, r: int) -> List[Any]:
    """Slice with starts / ends / axes / steps computed at run time (shape tensors)."""
    from .shape_tensors import runtime_slice, shape_input
    x = p._tensor(node.input[0])
    an = p._inp(node, 3)

    def as_tensor(i: int) -> Any:
        n = p._inp(node, i)
        if n is None:
            return None
        return p._const_tensor(p._consts[n], DataType.INT32) if p._is_const(n) else shape_input(p, n)

    ins = [as_tensor(i) for i in (1, 2, 4)]
    if an is None:
        axes: Any = list(range(int(ins[0].shape[0])))
    elif p._is_const(an):
        axes = [p._norm_axis(int(v), r) for v in p._cval(an, "axes").reshape(-1)]
    else:
        axes = shape_input(p, an)
    return [runtime_slice(p, x, ins[0], ins[1], axes, ins[2])]


def _slice_static(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    xname = node.input[0]
    x = p._tensor(xname)
    xs = tuple(x.shape)
    r = len(xs)
    vals: List[Any] = [None]
    if p._opset >= 10 and any(p._inp(node, i) and not p._is_const(p._inp(node, i)) for i in (1, 2, 3, 4)):
        return _slice_runtime(p, node, r)
    if p._opset >= 10:
        for i in range(1, 5):
            n = p._inp(node, i)
            vals.append(None if n is None else p._cval(n, ["", "starts", "ends", "axes", "steps"][i], allow_sym=True))
    starts, ends, axes, steps = slice_params(p, a, vals, r)
    spec = {}
    crop: Dict[int, Tuple[int, int]] = {}
    gathers: Dict[int, np.ndarray] = {}
    for s, e, ax, st in zip(starts, ends, axes, steps):
        dim = xs[ax]
        s = _resolve_bound(p, s, xname, ax, dim)
        e = _resolve_bound(p, e, xname, ax, dim)
        if dim < 0:
            if s == 0 and st == 1 and e >= _END:
                continue
            try:
                how, arg = _dynamic_axis_slice(s, e, st)
            except Fail as f:
                raise type(f)("axis %d of %s: %s" % (ax, xs, f)) if isinstance(f, Dynamic) else f
            if how == "crop":
                crop[ax] = arg
            else:
                gathers[ax] = arg
            continue
        s0, n = clamp_slice(s, e, st, dim)
        if n == 0:
            raise unsupported("Slice gives an empty tensor (axis %d of %s)" % (ax, xs),
                              ErrorCode.UNSUPPORTED_NODE_SHAPE)
        spec[ax] = (s0, n, st)
    y = p._slice(x, spec)
    if crop:
        # one padding layer crops every such axis (it pads the trailing dims from the first one on)
        first = min(crop)
        pre = [-crop[i][0] if i in crop else 0 for i in range(first, r)]
        post = [-crop[i][1] if i in crop else 0 for i in range(first, r)]
        y = p._L(p.network.add_padding_nd(y, pre, post))
    for ax, idx in sorted(gathers.items()):
        y = p._gather_axis(y, ax, idx)
    if gathers or crop:
        keys = p._raw_keys(xname)
        p._set_syms(0, [len(gathers[i]) if i in gathers else None if i in crop else k for i, k in enumerate(keys)])
    if y is x:
        y = p._L(p.network.add_identity(x))
    return [y]


def _bound_index_constants(out_shape: List[int], padded: List[int], what: str) -> None:
    """With a dynamic axis, Pad is built from one constant per padded axis as long as that axis (a mask or a
    gather index): refuse lengths past FOLD_LIMIT instead of making gigabytes of constants while parsing."""
    for i in padded:
        if out_shape[i] > FOLD_LIMIT:
            raise Fail(ErrorCode.UNSUPPORTED_NODE, "%s of an input with dynamic axes: padded axis %d would be %d "
                       "long, and its index constant is limited to %d elements" % (what, i, out_shape[i], FOLD_LIMIT))


def _runtime_pad(p: ImporterContext, node: Any, x: Any, mode: str) -> Any:
    from .shape_tensors import runtime_pad, shape_input
    r = len(x.shape)
    an = p._inp(node, 3)
    pads = shape_input(p, node.input[1])
    if an and not p._is_const(an):
        pads, axes = _pads_over_runtime_axes(p, pads, shape_input(p, an), r), list(range(r))
    else:
        axes = [p._norm_axis(int(v), r) for v in p._cval(an, "axes").reshape(-1)] if an else list(range(r))
    modes = {"constant": SampleMode.FILL, "edge": SampleMode.CLAMP, "reflect": SampleMode.REFLECT,
             "wrap": SampleMode.WRAP}
    if mode not in modes:
        raise unsupported("Pad mode '%s'" % mode)
    fill = None
    if mode == "constant" and p._inp(node, 2) and not p._is_const(p._inp(node, 2)):
        # the value known at run time: an execution tensor of x's type read by the FILL slice (input 4)
        fill = p._tensor(p._inp(node, 2))
        if fill.dtype != x.dtype:
            fill = p._L(p.network.add_cast(fill, x.dtype))
    elif mode == "constant":
        vn = p._inp(node, 2)
        value = p._cval(vn, "constant_value").reshape(-1) if vn else np.zeros(1)
        value = value[0].item() if value.size else 0
        integer = DataType(x.dtype) in (DataType.INT32, DataType.INT8, DataType.BOOL)
        f = np.array(value, np.int32 if integer and float(value).is_integer() and abs(value) < 2 ** 24
                     else np.float32).reshape(())
        fill = p._const_tensor(f, DataType.INT32 if f.dtype == np.int32 else DataType.FLOAT)
    return runtime_pad(p, x, pads, axes, modes[mode], fill)


def _pads_over_runtime_axes(p: ImporterContext, pads: Any, axes: Any, r: int) -> Any:
    """Pad's pads [2k] for the k `axes` known at run time (INT32 shape tensors) spread over all r dims: pre_i =
    sum_j pads[j] * (axes[j] mod r == i), post_i likewise from pads[k + j] (shape-tensor arithmetic)."""
    E = ElementWiseOperation
    k = int(axes.shape[0]) if len(axes.shape) == 1 else -1
    if k < 0 or tuple(pads.shape) != (2 * k,):
        raise Fail(ErrorCode.INVALID_NODE, "Pad's axes (shape %s) and pads (shape %s) must be 1-D, pads twice as long"
                   % (tuple(axes.shape), tuple(pads.shape)))
    net = p.network

    def i32(v: Any) -> Any:
        return p._const_tensor(np.asarray(v, np.int32).reshape(-1), DataType.INT32)

    wrapped = p._ew(axes, p._ew(p._cast(p._ew(axes, i32([0] * k), E.LESS), DataType.INT32), i32([r] * k), E.PROD),
                    E.SUM)
    halves = [p._L(net.add_slice(pads, [h * k], [k], [1])) for h in range(2)]
    parts = []
    for h in range(2):
        for i in range(r):
            hit = p._cast(p._ew(wrapped, i32([i] * k), E.EQUAL), DataType.INT32)
            parts.append(p._L(net.add_reduce(p._ew(hit, halves[h], E.PROD), ReduceOperation.SUM, 1, True)))
    return p._concat_layer(parts, 0)


@importer("Pad",
          restrictions=("pads, constant_value and axes constants or computed at run time; modes constant, reflect, "
                        "edge and wrap; "
                        "with constant pads, reflect, edge, wrap and non-zero constant padding not along dynamic "
                        "axes"))
def _pad(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    r = len(xs)
    mode = a.get("mode", "constant")
    if p._opset < 11:
        pads = attr_ints(a, "pads") or attr_ints(a, "paddings")
        value = float(a.get("value", 0.0))
        axes = list(range(r))
    else:
        if not p._is_const(p._inp(node, 1) or ""):  # pads computed at run time: a shape tensor
            return [_runtime_pad(p, node, x, mode)]
        if p._inp(node, 3) and not p._is_const(p._inp(node, 3)):  # axes computed at run time: shape tensors
            return [_runtime_pad(p, node, x, mode)]
        vn = p._inp(node, 2)
        if mode == "constant" and vn and not p._is_const(vn):  # the value computed at run time
            return [_runtime_pad(p, node, x, mode)]
        pads = [int(v) for v in p._cval(p._inp(node, 1), "pads").reshape(-1)]
        vn = p._inp(node, 2)
        value = p._cval(vn, "constant_value").reshape(-1) if vn else np.zeros(1)
        value = value[0].item() if value.size else 0
        an = p._inp(node, 3)
        axes = [p._norm_axis(int(v), r) for v in p._cval(an, "axes").reshape(-1)] if an else list(range(r))
    if len(pads) != 2 * len(axes):
        raise Fail(ErrorCode.INVALID_NODE, "pads %s must have %d entries" % (pads, 2 * len(axes)))
    pre, post = [0] * r, [0] * r
    for i, ax in enumerate(axes):
        pre[ax] = pads[i]
        post[ax] = pads[i + len(axes)]
    padded = [i for i in range(r) if pre[i] or post[i]]
    if not padded:
        return [p._L(p.network.add_identity(x))]
    out_shape = [xs[i] + pre[i] + post[i] if xs[i] >= 0 else -1 for i in range(r)]
    for i in padded:
        if out_shape[i] < 0 and xs[i] >= 0:
            raise Fail(ErrorCode.INVALID_NODE, "pads %s make axis %d of the %s input negative" % (pads, i, list(xs)))
    vol = 1
    for d in out_shape:
        vol *= max(d, 1)
    if vol > MAX_ELEMENTS:
        raise Fail(ErrorCode.INVALID_NODE, "pads %s make a %s output of %d elements, more than trtlite's 2^40 "
                   "bound" % (pads, out_shape, vol))
    if mode == "constant":
        if value == 0:
            first = padded[0]
            return [p._L(p.network.add_padding_nd(x, pre[first:], post[first:]))]
        for i in padded:
            if xs[i] < 0:
                raise Dynamic("constant padding with value %r along the dynamic axis %d" % (value, i))
        if is_static(xs):
            # a FILL slice: no data of the padded size is made while parsing
            layer = p.network.add_slice(x, [-v for v in pre], out_shape, [1] * r)
            layer.mode = SampleMode.FILL
            integer = DataType(x.dtype) in (DataType.INT32, DataType.INT8, DataType.BOOL)
            fill = np.array(value, np.int32 if integer and float(value).is_integer() and abs(value) < 2 ** 24
                            else np.float32).reshape(())
            layer.set_input(4, p._const_tensor(fill, DataType.INT32 if fill.dtype == np.int32 else DataType.FLOAT))
            return [p._L(layer)]
        # dynamic axes not padded: zero padding, then Select(inside, padded, value) with the inside of each padded
        # axis a 1-D boolean constant along it (memory: the padded axes' lengths, not their product)
        _bound_index_constants(out_shape, padded, "constant padding with value %r" % value)
        first = padded[0]
        y = p._L(p.network.add_padding_nd(x, pre[first:], post[first:]))
        cond = None
        for i in padded:
            inside = np.zeros(out_shape[i], np.bool_)
            inside[max(pre[i], 0):max(pre[i], 0) + xs[i] + min(pre[i], 0) + min(post[i], 0)] = True
            shape = [1] * r
            shape[i] = out_shape[i]
            c = p._const_tensor(inside.reshape(shape), DataType.BOOL)
            cond = c if cond is None else p._L(p.network.add_elementwise(cond, c, ElementWiseOperation.AND))
        v = p._const_tensor(np.full([1] * r, value, dtype=TRT_NP[DataType(x.dtype)]))
        return [p._L(p.network.add_select(cond, y, v))]
    if mode not in ("reflect", "edge", "wrap"):
        raise unsupported("Pad mode '%s'" % mode)
    slice_mode = {"reflect": SampleMode.REFLECT, "edge": SampleMode.CLAMP, "wrap": SampleMode.WRAP}[mode]
    for i in padded:
        if xs[i] < 0:
            raise Dynamic("%s padding along the dynamic axis %d" % (mode, i))
    if is_static(xs):
        layer = p.network.add_slice(x, [-v for v in pre], [xs[i] + pre[i] + post[i] for i in range(r)], [1] * r)
        layer.mode = slice_mode
        return [p._L(layer)]
    _bound_index_constants(out_shape, padded, "%s padding" % mode)
    y = x
    for i in padded:
        n = xs[i]
        idx = np.arange(-pre[i], n + post[i])
        if mode == "edge":
            idx = np.clip(idx, 0, n - 1)
        elif mode == "wrap":
            idx = np.mod(idx, n)
        else:
            period = 2 * (n - 1) if n > 1 else 1
            idx = np.abs(np.mod(idx, period)) if n > 1 else np.zeros_like(idx)
            idx = np.where(idx >= n, period - idx, idx)
        y = p._gather_axis(y, i, idx)
    return [y]


@importer("Gather",
          restrictions="none")
def _gather(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    data = p._tensor(node.input[0])
    r = len(data.shape)
    axis = p._norm_axis(int(a.get("axis", 0)), r)
    iname = node.input[1]
    if p._is_const(iname):
        idx = p._cval(iname, "indices")
        dim = data.shape[axis]
        if dim >= 0 and idx.size and (idx.max() >= dim or idx.min() < -dim):
            raise Fail(ErrorCode.INVALID_NODE, "indices out of range for axis %d of size %d" % (axis, dim))
        it = p._const_tensor(idx.astype(np.int64), DataType.INT32, iname)
    else:
        it = p._cast(p._tensor(iname), DataType.INT32)
    dk, ik = p._raw_keys(node.input[0]), p._raw_keys(iname)
    p._set_syms(0, dk[:axis] + ik + dk[axis + 1:])
    return [p._L(p.network.add_gather(data, it, axis))]


@importer("GatherElements",
          restrictions="none")
def _gather_elements(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    data = p._tensor(node.input[0])
    axis = p._norm_axis(int(a.get("axis", 0)), len(data.shape))
    if p._is_const(node.input[1]):
        why = indices_out_of_range("GatherElements", axis, 0, tuple(data.shape), p._cval(node.input[1], "indices"))
        if why:
            raise Fail(ErrorCode.INVALID_NODE, why)
    it = p._cast(p._tensor(node.input[1], DataType.INT32), DataType.INT32)
    layer = p.network.add_gather_v2(data, it, GatherMode.ELEMENT)
    layer.axis = axis
    return [p._L(layer)]


@importer("GatherND",
          restrictions="none")
def _gather_nd(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    data = p._tensor(node.input[0])
    it = p._cast(p._tensor(node.input[1], DataType.INT32), DataType.INT32)
    layer = p.network.add_gather_v2(data, it, GatherMode.ND)
    layer.num_elementwise_dims = int(a.get("batch_dims", 0))
    return [p._L(layer)]
