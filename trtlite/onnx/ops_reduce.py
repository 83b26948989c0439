"""Importers of reductions: Reduce*, ArgMax, ArgMin, TopK."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._enums import ElementWiseOperation, ReduceOperation, TopKOperation, UnaryOperation
from .constants import reduce_axes
from .context import ImporterContext
from .errors import Dynamic, ErrorCode, Fail
from .registry import importer
from .shape_eval import axes_mask


_REDUCE = {"ReduceMean": ReduceOperation.AVG, "ReduceSum": ReduceOperation.SUM, "ReduceMax": ReduceOperation.MAX,
           "ReduceMin": ReduceOperation.MIN, "ReduceProd": ReduceOperation.PROD}


@importer("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp",
          restrictions="axes must be a constant")
def _reduce(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = node.op_type
    x = p._tensor(node.input[0])
    r = len(x.shape)
    vals: List[Any] = [None]
    an = p._inp(node, 1)
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
          restrictions="K must be a constant")
def _topk(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    r = len(x.shape)
    axis = p._norm_axis(int(a.get("axis", -1)), r)
    if p._opset >= 10:
        k = int(p._cval(p._inp(node, 1), "K").reshape(-1)[0])
    else:
        k = int(a["k"])
    op = TopKOperation.MAX if int(a.get("largest", 1)) else TopKOperation.MIN
    layer = p.network.add_topk(x, op, k, 1 << axis)
    p._name_layer(layer)
    return [layer.get_output(0), layer.get_output(1)]
