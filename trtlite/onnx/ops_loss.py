"""Importers of the loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (inference of the loss value,
as onnx's backend cases and exported evaluation graphs use them).

Both pick, for every position (n, d1, ...), the value of the target's class along the class axis 1.  trtlite has no
element-wise gather, so the pick is a one-hot select: target == arange(C) (broadcast along axis 1) chooses the
input (and the class weight) at the target's class, and a sum over axis 1 keeps it.  The class count C must be
static; the target and the weights may be computed at run time.

    loss[n, d] = -input[n, target[n, d], d] * w[target[n, d]]      (w = 1 without weights)
    loss[n, d] = 0, with weight 0, where target[n, d] == ignore_index
    reduction: none -> loss; sum -> sum(loss); mean -> sum(loss) / sum(weights picked)
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from .._enums import DataType, ElementWiseOperation, ReduceOperation, UnaryOperation
from .context import ImporterContext
from .errors import ErrorCode, Fail, bound_dims_constant, unsupported
from .ops_activation import _softmax_core
from .registry import importer
from .shape_eval import axes_mask


def _pick_loss(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any, target_name: str,
               weight_name: Optional[str]) -> Any:
    """The loss of log-probabilities `x` (N, C, d...) against the target, reduced as `a` says."""
    E = ElementWiseOperation
    xs = tuple(x.shape)
    r = len(xs)
    if r < 2:
        raise Fail(ErrorCode.INVALID_NODE, "input of shape %s has no class axis (it needs rank 2 or more)" % (xs,))
    c = xs[1]
    if c < 0:
        raise unsupported("%s with a dynamic class count (axis 1 of %s)" % (node.op_type, xs),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    t = p._tensor(target_name)
    if t.dtype != DataType.INT32:
        raise Fail(ErrorCode.INVALID_NODE, "target '%s' must be an integer tensor" % target_name)
    if len(t.shape) != r - 1:
        raise Fail(ErrorCode.INVALID_NODE, "target '%s' of shape %s does not match input %s (it lacks axis 1)"
                   % (target_name, tuple(t.shape), xs))
    bound_dims_constant(c, "%s over %d classes: its class range" % (node.op_type, c))
    tu = p._unsqueeze(t, [1])  # (N, 1, d...)
    classes = p._const_tensor(np.arange(c, dtype=np.int32).reshape((1, c) + (1,) * (r - 2)), DataType.INT32)
    onehot = p._ew(tu, classes, E.EQUAL)  # (N, C, d...)
    zero = p._const_tensor(np.zeros((1,) * r, np.float32), DataType.FLOAT)
    picked = p._L(p.network.add_reduce(p._L(p.network.add_select(onehot, x, zero)), ReduceOperation.SUM,
                                       axes_mask([1]), False))  # (N, d...)
    w: Optional[Any] = None
    if weight_name is not None:
        wt = p._float(p._tensor(weight_name), "weight '%s'" % weight_name)
        if len(wt.shape) != 1:
            raise Fail(ErrorCode.INVALID_NODE, "weight '%s' must be a vector of C values" % weight_name)
        wt = p._reshape(wt, [1, c] + [1] * (r - 2), zero_is_placeholder=False)
        w = p._L(p.network.add_reduce(p._L(p.network.add_select(onehot, wt, zero)), ReduceOperation.SUM,
                                      axes_mask([1]), False))
    if "ignore_index" in a:
        ii = p._const_tensor(np.full((1,) * (r - 1), int(a["ignore_index"]), np.int32), DataType.INT32)
        keep = p._unary(p._ew(t, ii, E.EQUAL), UnaryOperation.NOT)
        zr = p._const_tensor(np.zeros((1,) * (r - 1), np.float32), DataType.FLOAT)
        one = p._const_tensor(np.ones((1,) * (r - 1), np.float32), DataType.FLOAT)
        w = p._L(p.network.add_select(keep, w if w is not None else one, zr))
    loss = p._unary(picked, UnaryOperation.NEG)
    if w is not None:
        loss = p._ew(loss, w, E.PROD)
    red = a.get("reduction", "mean")
    if red == "none":
        return loss
    all_axes = axes_mask(range(r - 1))
    total = p._L(p.network.add_reduce(loss, ReduceOperation.SUM, all_axes, False))
    if red == "sum":
        return total
    if red != "mean":
        raise Fail(ErrorCode.INVALID_NODE, "reduction '%s' (expected none, sum or mean)" % red)
    if w is None:
        return p._L(p.network.add_reduce(loss, ReduceOperation.AVG, all_axes, False))
    return p._ew(total, p._L(p.network.add_reduce(w, ReduceOperation.SUM, all_axes, False)), E.DIV)


@importer("NegativeLogLikelihoodLoss",
          restrictions="static class count (input dim 1)")
def _nll(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    return [_pick_loss(p, node, a, x, node.input[1], p._inp(node, 2))]


@importer("SoftmaxCrossEntropyLoss",
          restrictions="static class count (scores dim 1)")
def _sce(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    if len(x.shape) < 2:
        raise Fail(ErrorCode.INVALID_NODE, "scores of shape %s have no class axis" % (tuple(x.shape),))
    logp = _softmax_core(p, x, 1, True)
    loss = _pick_loss(p, node, a, logp, node.input[1], p._inp(node, 2))
    return [loss, logp] if len(node.output) > 1 and node.output[1] else [loss]
