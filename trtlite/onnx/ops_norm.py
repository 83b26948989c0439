"""Importers of normalizations: BatchNormalization, InstanceNormalization, LayerNormalization,
GroupNormalization, LRN."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .._enums import DataType, ElementWiseOperation, ReduceOperation, ScaleMode, UnaryOperation
from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported
from .registry import importer
from .shape_eval import axes_mask


@importer("BatchNormalization",
          restrictions=("inference only (training_mode 0, one output); scale, B, input_mean and input_var "
                        "computed at run time become elementwise layers (constants fold into one scale layer)"))
def _batchnorm(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    if int(a.get("training_mode", 0)) or len([o for o in node.output if o]) > 1:
        raise unsupported("BatchNormalization in training mode (running statistics outputs)")
    x = p._float(p._tensor(node.input[0]))
    names = ["scale", "B", "input_mean", "input_var"]
    eps = float(a.get("epsilon", 1e-5))
    if len(x.shape) >= 2 and not all(p._is_const(p._inp(node, i + 1) or "") for i in range(4)):
        # parameters computed at run time: (x - mean) / sqrt(var + eps) * scale + B, each a vector along dim 1
        r = len(x.shape)
        E, U = ElementWiseOperation, UnaryOperation
        g, b, mean, var = (_param_tensor(p, p._inp(node, i + 1), r, [1], 0.0, None) for i in range(4))
        den = p._unary(p._ew(var, p._const_tensor(np.full((1,) * r, eps, np.float32), DataType.FLOAT), E.SUM),
                       U.SQRT)
        return [p._ew(p._ew(p._ew(p._ew(x, mean, E.SUB), den, E.DIV), g, E.PROD), b, E.SUM)]
    vals = [p._cval(p._inp(node, i + 1), names[i]).astype(np.float64).reshape(-1) for i in range(4)]
    gamma, beta, mean, var = vals
    scale = gamma / np.sqrt(var + eps)
    shift = beta - mean * scale
    if len(x.shape) < 2:
        raise Fail(ErrorCode.INVALID_NODE, "input of shape %s has no channel dim" % (tuple(x.shape),))
    layer = p.network.add_scale(x, ScaleMode.CHANNEL, np.ascontiguousarray(shift, np.float32),
                                np.ascontiguousarray(scale, np.float32), None)
    return [p._L(layer)]


def _param_tensor(p: ImporterContext, name: Optional[str], rank: int, shape_at: Sequence[int], fill: float,
                  count: Optional[int] = None, trailing: bool = False) -> Any:
    """A scale/bias input reshaped to `rank` with its values along dims `shape_at` (the rest 1).
    trailing: the input broadcasts numpy-style against the last dims (LayerNormalization's scale and bias
    broadcast to X.shape[axis:], so a (4,) scale of a (2, 3, 4) input with axis=1 lies on the last dim)."""
    if name is None:
        shape = [1] * rank
        for i in shape_at:
            shape[i] = count
        return p._const_tensor(np.full(shape, fill, np.float32), DataType.FLOAT)
    if p._is_const(name):
        v = p._cval(name).astype(np.float32)
        shape = [1] * rank
        src = list(v.shape)
        if trailing:
            if v.ndim > len(shape_at):
                raise Fail(ErrorCode.INVALID_NODE, "parameter '%s' of shape %s has more dims than the %d normalized "
                           "ones" % (name, v.shape, len(shape_at)))
            return p._const_tensor(v.reshape((1,) * (rank - v.ndim) + v.shape), DataType.FLOAT)
        if len(src) == len(shape_at):
            for i, d in zip(shape_at, src):
                shape[i] = d
        else:
            if v.size != (count or v.size):
                raise Fail(ErrorCode.INVALID_NODE, "parameter '%s' has %d values, expected %s" % (name, v.size, count))
            shape[shape_at[0]] = v.size
        return p._const_tensor(v.reshape(shape), DataType.FLOAT)
    t = p._float(p._tensor(name), "parameter '%s'" % name)
    if trailing:
        return p._unsqueeze_to(t, rank)
    # a run-time per-channel (or per-group) vector: its values go along dim shape_at[0], not the last dim
    if len(t.shape) != 1 or len(shape_at) != 1:
        raise Fail(ErrorCode.INVALID_NODE, "parameter '%s' of shape %s must be a vector" % (name, tuple(t.shape)))
    n = int(t.shape[0])
    if count is not None and n >= 0 and count >= 0 and n != count:
        raise Fail(ErrorCode.INVALID_NODE, "parameter '%s' has %d values, expected %d" % (name, n, count))
    shape = [1] * rank
    shape[shape_at[0]] = n if n >= 0 else -1
    return p._reshape(t, shape, zero_is_placeholder=False)


@importer("InstanceNormalization",
          restrictions="input of rank 3 or more")
def _instance_norm(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    if r < 3:
        raise Fail(ErrorCode.INVALID_NODE, "input of shape %s needs spatial dims" % (tuple(x.shape),))
    c = x.shape[1]
    s = _param_tensor(p, p._inp(node, 1), r, [1], 1.0, c)
    b = _param_tensor(p, p._inp(node, 2), r, [1], 0.0, c)
    layer = p.network.add_normalization(x, s, b, axes_mask(range(2, r)))
    layer.epsilon = float(a.get("epsilon", 1e-5))
    return [p._L(layer)]


@importer("LayerNormalization",
          restrictions="none")
def _layer_norm(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    axis = p._norm_axis(int(a.get("axis", -1)), r)
    axes = list(range(axis, r))
    s = _param_tensor(p, p._inp(node, 1), r, axes, 1.0, trailing=True)
    bname = p._inp(node, 2)
    if bname is None:
        shape = [1] * r
        for i in axes:
            shape[i] = x.shape[i] if x.shape[i] > 0 else 1
        b = p._const_tensor(np.zeros(shape, np.float32), DataType.FLOAT)
    else:
        b = _param_tensor(p, bname, r, axes, 0.0, trailing=True)
    layer = p.network.add_normalization(x, s, b, axes_mask(axes))
    layer.epsilon = float(a.get("epsilon", 1e-5))
    y = p._L(layer)
    if not any(node.output[1:]):
        return [y]
    # the optional Mean and InvStdDev outputs (shape X.shape[:axis] + [1] * (r - axis)), from reductions beside
    # the normalization layer: mean = E[x], inv_std = 1 / sqrt(E[(x - mean)^2] + epsilon)
    E, R, U = ElementWiseOperation, ReduceOperation, UnaryOperation
    mean = p._L(p.network.add_reduce(x, R.AVG, axes_mask(axes), True))
    d = p._ew(x, mean, E.SUB)
    var = p._L(p.network.add_reduce(p._ew(d, d, E.PROD), R.AVG, axes_mask(axes), True))
    eps = p._const_tensor(np.full((1,) * r, a.get("epsilon", 1e-5), np.float32), DataType.FLOAT)
    inv = p._unary(p._unary(p._ew(var, eps, E.SUM), U.SQRT), U.RECIP)
    return [y, mean, inv]


@importer("GroupNormalization",
          restrictions="none")
def _group_norm(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    g = int(a["num_groups"])
    # opset 18: scale and bias per group; opset 21: per channel
    s = _param_tensor(p, p._inp(node, 1), r, [1], 1.0)
    b = _param_tensor(p, p._inp(node, 2), r, [1], 0.0)
    layer = p.network.add_normalization(x, s, b, axes_mask(range(2, r)))
    layer.num_groups = g
    layer.epsilon = float(a.get("epsilon", 1e-5))
    return [p._L(layer)]


@importer("LRN",
          restrictions="odd size only (trtlite's window is symmetric)")
def _lrn(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    size = int(a["size"])
    if size % 2 == 0:
        raise unsupported("LRN with an even size %d (trtlite's window is symmetric)" % size)
    layer = p.network.add_lrn(x, size, float(a.get("alpha", 1e-4)), float(a.get("beta", 0.75)),
                              float(a.get("bias", 1.0)))
    return [p._L(layer)]
