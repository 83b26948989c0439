"""Importers of reductions: Reduce*, ArgMax, ArgMin, TopK."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._enums import DataType, ElementWiseOperation, ReduceOperation, TopKOperation, UnaryOperation
from .constants import reduce_axes
from .context import ImporterContext
from .errors import Dynamic, ErrorCode, Fail, bound_dims_constant
from .registry import importer
from .shape_eval import axes_mask


_REDUCE = {"ReduceMean": ReduceOperation.AVG, "ReduceSum": ReduceOperation.SUM, "ReduceMax": ReduceOperation.MAX,
           "ReduceMin": ReduceOperation.MIN, "ReduceProd": ReduceOperation.PROD}


def _reduce_runtime_axes(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any, an: str) -> List[Any]:
    """Reduce* whose axes input is computed at run time: reduce layers reading the axes from a shape tensor
    (trtlite's extension of IReduceLayer, set_input(1, axes)); the axes' count must be static."""
    from .shape_tensors import shape_input
    axes = shape_input(p, an)
    k = tuple(axes.shape)
    if len(k) > 1 or (k and k[0] < 0):
        raise Dynamic("Reduce axes with a dynamic length")
    op = node.op_type
    keep = bool(int(a.get("keepdims", 1)))
    if k == (0,) and int(a.get("noop_with_empty_axes", 0)):
        return [p._L(p.network.add_identity(x))]
    E, U = ElementWiseOperation, UnaryOperation

    def red(t: Any, rop: Any, kd: bool) -> Any:
        layer = p.network.add_reduce(t, rop, 1, kd)
        layer.set_input(1, axes)
        return p._L(layer)

    if op in _REDUCE:
        return [red(x, _REDUCE[op], keep)]
    x = p._float(x)
    if op == "ReduceL1":
        return [red(p._unary(x, U.ABS), ReduceOperation.SUM, keep)]
    if op in ("ReduceL2", "ReduceSumSquare"):
        s = red(p._ew(x, x, E.PROD), ReduceOperation.SUM, keep)
        return [p._unary(s, U.SQRT) if op == "ReduceL2" else s]
    if op == "ReduceLogSum":
        return [p._unary(red(x, ReduceOperation.SUM, keep), U.LOG)]
    # ReduceLogSumExp, stable: the max kept for the shift, taken again in the output's rank
    m = red(x, ReduceOperation.MAX, True)
    s = red(p._unary(p._ew(x, m, E.SUB), U.EXP), ReduceOperation.SUM, keep)
    return [p._ew(p._unary(s, U.LOG), m if keep else red(x, ReduceOperation.MAX, False), E.SUM)]


@importer("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp",
          restrictions="axes computed at run time must have a static count (trtlite's reduce axes from a tensor)")
def _reduce(p: ImporterContext, node: Any, a: Dict[str, Any], x_in: Any = None) -> List[Any]:
    op = node.op_type
    x = p._tensor(node.input[0]) if x_in is None else x_in
    if op in ("ReduceMax", "ReduceMin") and x.dtype == DataType.BOOL:  # any / all: over 0 / 1 as INT32
        y = _reduce(p, node, a, p._L(p.network.add_cast(x, DataType.INT32)))[0]
        if op == "ReduceMax":  # an empty set's INT32_MIN is False (any), as INT32_MAX is True for Min (all)
            y = p._ew_const(y, np.int32(0), ElementWiseOperation.MAX)
        return [p._L(p.network.add_cast(y, DataType.BOOL))]
    r = len(x.shape)
    vals: List[Any] = [None]
    an = p._inp(node, 1)
    if an is not None and not p._is_const(an):
        return _reduce_runtime_axes(p, node, a, x, an)
    if an is not None:
        vals.append(p._cval(an, "axes"))
    axes = reduce_axes(p, node, a, vals, r)
    keep = bool(int(a.get("keepdims", 1)))
    if not axes:
        return [p._L(p.network.add_identity(x))]
    for ax in axes:
        if not 0 <= ax < r:
            raise Fail(ErrorCode.INVALID_NODE, "axis %d out of range for rank %d" % (ax, r))
    if not keep:
        p._set_syms(0, [k for i, k in enumerate(p._raw_keys(node.input[0])) if i not in axes])
    mask = axes_mask(axes)
    E, U = ElementWiseOperation, UnaryOperation
    if op in _REDUCE:
        return [p._L(p.network.add_reduce(x, _REDUCE[op], mask, keep))]
    x = p._float(x)
    if op == "ReduceL1":
        return [p._L(p.network.add_reduce(p._unary(x, U.ABS), ReduceOperation.SUM, mask, keep))]
    if op in ("ReduceL2", "ReduceSumSquare"):
        s = p._L(p.network.add_reduce(p._ew(x, x, E.PROD), ReduceOperation.SUM, mask, keep))
        return [p._unary(s, U.SQRT) if op == "ReduceL2" else s]
    if op == "ReduceLogSum":
        return [p._unary(p._L(p.network.add_reduce(x, ReduceOperation.SUM, mask, keep)), U.LOG)]
    # ReduceLogSumExp, stable
    m = p._L(p.network.add_reduce(x, ReduceOperation.MAX, mask, True))
    e = p._unary(p._ew(x, m, E.SUB), U.EXP)
    lse = p._unary(p._L(p.network.add_reduce(e, ReduceOperation.SUM, mask, True)), U.LOG)
    y = p._ew(lse, m, E.SUM)
    if not keep:
        y = p._squeeze(y, axes)
    return [y]


@importer("ArgMax", "ArgMin",
          restrictions="select_last_index not along a dynamic axis")
def _argmax(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    r = len(xs)
    axis = p._norm_axis(int(a.get("axis", 0)), r)
    keep = bool(int(a.get("keepdims", 1)))
    last = bool(int(a.get("select_last_index", 0)))
    op = TopKOperation.MAX if node.op_type == "ArgMax" else TopKOperation.MIN
    src = x
    if last:
        if xs[axis] < 0:
            raise Dynamic("select_last_index along a dynamic axis")
        bound_dims_constant(xs[axis], "%s's select_last_index along axis %d of %s: its reversed index table"
                            % (node.op_type, axis, xs))
        src = p._gather_axis(x, axis, np.arange(xs[axis] - 1, -1, -1))
    idx = p.network.add_topk(src, op, 1, 1 << axis)
    p._name_layer(idx)
    y = idx.get_output(1)
    if last:
        y = p._ew_const(y, np.int32(xs[axis] - 1), ElementWiseOperation.SUB, const_first=True)
    if not keep:
        p._set_syms(0, [k for i, k in enumerate(p._raw_keys(node.input[0])) if i != axis])
        y = p._squeeze(y, [axis])
    return [y]


@importer("TopK",
          restrictions="K computed at run time is a shape tensor")
def _topk(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    r = len(x.shape)
    axis = p._norm_axis(int(a.get("axis", -1)), r)
    op = TopKOperation.MAX if int(a.get("largest", 1)) else TopKOperation.MIN
    kn = p._inp(node, 1) if p._opset >= 10 else None
    if kn is not None and not p._is_const(kn):  # K computed at run time: a shape tensor (set_input(1, K))
        from .shape_tensors import shape_input
        layer = p.network.add_topk(x, op, 1, 1 << axis)
        layer.set_input(1, shape_input(p, kn))
        p._name_layer(layer)
        return [layer.get_output(0), layer.get_output(1)]
    if p._opset >= 10:
        k = int(p._cval(p._inp(node, 1), "K").reshape(-1)[0])
    else:
        k = int(a["k"])
    op = TopKOperation.MAX if int(a.get("largest", 1)) else TopKOperation.MIN
    layer = p.network.add_topk(x, op, k, 1 << axis)
    p._name_layer(layer)
    return [layer.get_output(0), layer.get_output(1)]
