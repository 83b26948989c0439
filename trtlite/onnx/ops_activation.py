"""Importers of activations: Relu & co. (one activation layer each), HardSwish, Mish, Gelu, Clip, PRelu,
Softmax, LogSoftmax."""
from __future__ import annotations

import math
from typing import Any, Dict, List

import numpy as np

from .._enums import ActivationType, DataType, ElementWiseOperation, ReduceOperation, UnaryOperation
from .context import ImporterContext
from .dtypes import TRT_NP
from .errors import Dynamic, ErrorCode, Fail, unsupported
from .registry import importer
from .shape_eval import is_static


_ACTIVATIONS = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "Elu", "Selu", "Softplus", "Softsign",
                "ThresholdedRelu"}


@importer(*_ACTIVATIONS,
          restrictions="floating-point input")
def _act(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = node.op_type
    x = p._float(p._tensor(node.input[0]))
    A = ActivationType
    if op == "Relu":
        return [p._activation(x, A.RELU)]
    if op == "LeakyRelu":
        return [p._activation(x, A.LEAKY_RELU, a.get("alpha", 0.01))]
    if op == "Sigmoid":
        return [p._activation(x, A.SIGMOID)]
    if op == "Tanh":
        return [p._activation(x, A.TANH)]
    if op == "HardSigmoid":
        return [p._activation(x, A.HARD_SIGMOID, a.get("alpha", 0.2), a.get("beta", 0.5))]
    if op == "Elu":
        return [p._activation(x, A.ELU, a.get("alpha", 1.0))]
    if op == "Selu":
        return [p._activation(x, A.SELU, a.get("alpha", 1.67326319217681884765625),
                              a.get("gamma", 1.05070102214813232421875))]
    if op == "Softplus":
        return [p._activation(x, A.SOFTPLUS, 1.0, 1.0)]
    if op == "Softsign":
        return [p._activation(x, A.SOFTSIGN)]
    if op == "ThresholdedRelu":
        return [p._activation(x, A.THRESHOLDED_RELU, a.get("alpha", 1.0))]
    raise KeyError(op)


@importer("HardSwish",
          restrictions="floating-point input")
def _hardswish(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    hs = p._activation(x, ActivationType.HARD_SIGMOID, 1.0 / 6.0, 0.5)
    return [p._ew(x, hs, ElementWiseOperation.PROD)]


@importer("Mish",
          restrictions="floating-point input")
def _mish(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    sp = p._activation(x, ActivationType.SOFTPLUS, 1.0, 1.0)
    return [p._ew(x, p._activation(sp, ActivationType.TANH), ElementWiseOperation.PROD)]


@importer("Gelu",
          restrictions="floating-point input; approximate 'none' or 'tanh'")
def _gelu(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    approx = a.get("approximate", "none")
    if approx == "none":
        return [p._activation(x, ActivationType.GELU_ERF)]
    if approx == "tanh":
        return [p._activation(x, ActivationType.GELU_TANH)]
    raise unsupported("Gelu approximate='%s'" % approx)


@importer("Clip",
          restrictions="none (min and max may be constants or tensors)")
def _clip(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    if x.dtype in (DataType.INT8, DataType.UINT8):  # computed as the INT32 that carries other integers
        x = p._cast(x, DataType.INT32)
    if p._opset < 11:
        lo, hi = a.get("min", -math.inf), a.get("max", math.inf)
        lo_n = hi_n = None
    else:
        lo_n, hi_n = p._inp(node, 1), p._inp(node, 2)
        lo = float(p._cval(lo_n, "min").reshape(-1)[0]) if lo_n and p._is_const(lo_n) else (None if lo_n else -math.inf)
        hi = float(p._cval(hi_n, "max").reshape(-1)[0]) if hi_n and p._is_const(hi_n) else (None if hi_n else math.inf)
    if lo is not None and hi is not None and lo > hi:
        # ONNX: y = min(max(x, min), max), so min > max gives max everywhere; trtlite's CLIP activation
        # would give min where x <= min.  With min lowered to max both agree.
        lo = hi
    if x.dtype == DataType.FLOAT and lo is not None and hi is not None:
        if lo == 0.0 and hi == math.inf:
            return [p._activation(x, ActivationType.RELU)]
        return [p._activation(x, ActivationType.CLIP, lo, hi)]
    y = x
    for bound, name, op in ((lo, lo_n, ElementWiseOperation.MAX), (hi, hi_n, ElementWiseOperation.MIN)):
        if bound is None:
            b = p._tensor(name)
            y = p._ew(y, p._cast(b, DataType.INT32) if b.dtype in (DataType.INT8, DataType.UINT8) else b, op)
        elif math.isfinite(bound):
            y = p._ew_const(y, np.array(bound).astype(TRT_NP[DataType(x.dtype)]), op)
    return [y]


@importer("PRelu",
          restrictions=("floating-point input; the slope broadcasts to the input (unidirectionally; before opset 7 "
                        "a slope vector is per channel)"))
def _prelu(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    sn = node.input[1]
    # PRelu before opset 7: a slope vector is per channel (axis 1), not aligned with the last dim
    legacy = p._opset < 7 and r > 2
    if p._is_const(sn):
        s = p._cval(sn).astype(np.float32)
        if legacy and s.ndim == 1 and s.size == x.shape[1]:
            s = s.reshape((1, s.size) + (1,) * (r - 2))
        if s.ndim > r:
            raise Fail(ErrorCode.INVALID_NODE, "slope of shape %s has more dims than the input %s"
                       % (s.shape, tuple(x.shape)))
        s = s.reshape((1,) * (r - s.ndim) + s.shape)
        st = p._const_tensor(s, DataType.FLOAT)
    else:
        st = p._float(p._tensor(sn))
        if legacy and len(st.shape) == 1 and st.shape[0] == x.shape[1] and x.shape[1] > 1:
            st = p._reshape(st, [1, -1] + [1] * (r - 2), zero_is_placeholder=False)
        st = p._unsqueeze_to(st, r)
    return [p._L(p.network.add_parametric_relu(x, st))]


def _softmax_core(p: ImporterContext, x: Any, axis: int, log: bool) -> Any:
    if not log:
        layer = p.network.add_softmax(x)
        layer.axes = 1 << axis
        return p._L(layer)
    # log-softmax, stable: (x - max) - log(sum(exp(x - max)))
    m = p._L(p.network.add_reduce(x, ReduceOperation.MAX, 1 << axis, True))
    s = p._ew(x, m, ElementWiseOperation.SUB)
    e = p._unary(s, UnaryOperation.EXP)
    lse = p._unary(p._L(p.network.add_reduce(e, ReduceOperation.SUM, 1 << axis, True)), UnaryOperation.LOG)
    return p._ew(s, lse, ElementWiseOperation.SUB)


@importer("Softmax", "LogSoftmax",
          restrictions="opset < 13 (softmax over the input flattened at axis): at most one dynamic dim")
def _softmax(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    xs = tuple(x.shape)
    r = len(xs)
    log = node.op_type == "LogSoftmax"
    if r == 0:
        raise Fail(ErrorCode.INVALID_NODE, "softmax of a scalar")
    if p._opset >= 13:
        axis = p._norm_axis(int(a.get("axis", -1)), r)
        return [_softmax_core(p, x, axis, log)]
    # opset < 13: the input is flattened to 2-D at `axis`, softmax runs over the second dim
    axis = p._norm_axis(int(a.get("axis", 1)), r)
    if axis == r - 1:
        return [_softmax_core(p, x, axis, log)]
    flat = p._reshape_2d(x, axis)
    y = _softmax_core(p, flat, 1, log)
    if is_static(xs):
        return [p._reshape(y, xs, zero_is_placeholder=False)]
    unknown = [i for i, d in enumerate(xs) if d < 0]
    if len(unknown) == 1:
        return [p._reshape(y, [(-1 if d < 0 else d) for d in xs], zero_is_placeholder=False)]
    raise Dynamic("Softmax-%d over a flattened shape %s with several dynamic dims" % (p._opset, xs))
