"""Importers of ops expressed with a few existing layers: Trilu, EyeLike, Hardmax, LpNormalization, Celu, Swish,
Shrink, MeanVarianceNormalization, RMSNormalization, CumSum, CumProd, SwiGLU, OneHot, ReverseSequence."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._enums import (ActivationType, CumulativeOperation, DataType, ElementWiseOperation, ReduceOperation,
                      TopKOperation, UnaryOperation)
from .context import ImporterContext
from .dtypes import ONNX_TO_NP, TRT_NP, onnx_to_trt
from .errors import ErrorCode, Fail, bound_dims_constant, unsupported
from .registry import importer
from .shape_eval import axes_mask, is_static

E, U, R = ElementWiseOperation, UnaryOperation, ReduceOperation


def _zeros_like_rank(p: ImporterContext, rank: int, dtype: DataType) -> Any:
    return p._const_tensor(np.zeros((1,) * rank, TRT_NP[DataType(dtype)]), dtype)


def _select(p: ImporterContext, c: Any, t: Any, e: Any) -> Any:
    r = max(len(c.shape), len(t.shape), len(e.shape))
    c, t, e = (p._unsqueeze_to(v, r) if len(v.shape) < r else v for v in (c, t, e))
    return p._L(p.network.add_select(c, t, e))


@importer("Trilu",
          restrictions="the last two dims static")
def _trilu(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    if len(xs) < 2 or not is_static(xs[-2:]):
        raise unsupported("Trilu needs rank >= 2 with static last two dims, got %s" % (xs,),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    r = len(xs)
    n, m = xs[-2:]
    # (a fuzzed [2, 5, 2^31] input made the importer fill a 16 GiB arange before failing)
    bound_dims_constant(n * m, "Trilu over %d x %d matrices: its mask" % (n, m))
    diff = (np.arange(m)[None, :] - np.arange(n)[:, None]).reshape((1,) * (r - 2) + (n, m))  # j - i
    upper = bool(int(a.get("upper", 1)))
    kn = p._inp(node, 1)
    if kn is None or p._is_const(kn):
        k = int(np.asarray(p._cval(kn, "k")).reshape(-1)[0]) if kn else 0
        mask = p._const_tensor((diff >= k) if upper else (diff <= k), DataType.BOOL)
    else:  # k computed at run time: compare j - i against it
        kt = p._tensor(kn)
        if kt.dtype != DataType.INT32 or any(d != 1 for d in kt.shape):
            raise Fail(ErrorCode.INVALID_NODE, "k '%s' must be an integer scalar" % kn)
        kt = p._reshape(kt, [1] * r, zero_is_placeholder=False)
        dt = p._const_tensor(diff.astype(np.int32), DataType.INT32)
        # upper: keep j - i >= k, i.e. not (j - i < k); lower: keep j - i <= k, i.e. not (j - i > k)
        mask = p._unary(p._ew(dt, kt, E.LESS if upper else E.GREATER), U.NOT)
    return [_select(p, mask, x, _zeros_like_rank(p, r, x.dtype))]


@importer("EyeLike",
          restrictions="static input shape (the output is a constant)")
def _eyelike(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    if len(xs) != 2 or not is_static(xs):
        raise unsupported("EyeLike needs a 2-D input of static shape, got %s" % (xs,), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if "dtype" in a:
        t = int(a["dtype"])
        if onnx_to_trt(t) is None or t not in ONNX_TO_NP:
            raise unsupported("EyeLike to ONNX type %d" % t, ErrorCode.UNSUPPORTED_NODE_DATATYPE)
        np_t = ONNX_TO_NP[t]
    else:
        np_t = TRT_NP[DataType(x.dtype)]
    bound_dims_constant(xs[0] * xs[1], "EyeLike of %d x %d: the output" % (xs[0], xs[1]))
    return [np.eye(xs[0], xs[1], int(a.get("k", 0)), dtype=np_t)]


@importer("Hardmax",
          restrictions="opset < 13: input of rank 2 or axis the last dim")
def _hardmax(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    xs = tuple(x.shape)
    r = len(xs)
    axis = p._norm_axis(int(a.get("axis", -1 if p._opset >= 13 else 1)), r)
    if p._opset < 13 and axis != r - 1:
        raise unsupported("Hardmax-%d over the input flattened at axis %d (only the last axis)" % (p._opset, axis))
    if xs[axis] < 0:
        raise unsupported("Hardmax along a dynamic axis", ErrorCode.UNSUPPORTED_NODE_SHAPE)
    layer = p.network.add_topk(x, TopKOperation.MAX, 1, 1 << axis)
    p._name_layer(layer)
    idx = layer.get_output(1)  # the first of equal maxima, as ONNX's Hardmax takes
    bound_dims_constant(xs[axis], "Hardmax along axis %d of %s: its index range" % (axis, xs))
    shape = [1] * r
    shape[axis] = xs[axis]
    ar = p._const_tensor(np.arange(xs[axis], dtype=np.int32).reshape(shape), DataType.INT32)
    return [p._cast(p._ew(idx, ar, E.EQUAL), DataType.FLOAT)]


@importer("LpNormalization",
          restrictions="p 1 or 2")
def _lpnorm(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    axis = p._norm_axis(int(a.get("axis", -1)), r)
    order = int(a.get("p", 2))
    if order not in (1, 2):
        raise Fail(ErrorCode.INVALID_NODE, "LpNormalization's p must be 1 or 2, got %d" % order)
    if order == 1:
        norm = p._L(p.network.add_reduce(p._unary(x, U.ABS), R.SUM, 1 << axis, True))
    else:
        norm = p._unary(p._L(p.network.add_reduce(p._ew(x, x, E.PROD), R.SUM, 1 << axis, True)), U.SQRT)
    y = p._ew(x, norm, E.DIV)
    zero = _zeros_like_rank(p, r, DataType.FLOAT)
    return [_select(p, p._ew(norm, zero, E.EQUAL), zero, y)]  # a zero vector stays zero (ONNX's reference)


@importer("Celu", "Swish", "Shrink",
          restrictions="floating-point input")
def _pointwise(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    if node.op_type == "Celu":  # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
        alpha = float(a.get("alpha", 1.0))
        e = p._ew_const(p._unary(p._ew_const(x, np.float32(1.0 / alpha), E.PROD), U.EXP), np.float32(1.0), E.SUB)
        neg = p._ew_const(p._ew_const(e, np.float32(alpha), E.PROD), np.float32(0.0), E.MIN)
        return [p._ew(p._activation(x, ActivationType.RELU), neg, E.SUM)]
    if node.op_type == "Swish":  # x * sigmoid(alpha * x)
        s = p._activation(p._ew_const(x, np.float32(a.get("alpha", 1.0)), E.PROD), ActivationType.SIGMOID)
        return [p._ew(x, s, E.PROD)]
    lambd, bias = float(a.get("lambd", 0.5)), float(a.get("bias", 0.0))
    lo = p._ew_const(x, np.float32(-lambd), E.LESS)
    hi = p._ew_const(x, np.float32(lambd), E.GREATER)
    zero = _zeros_like_rank(p, r, DataType.FLOAT)
    y = _select(p, hi, p._ew_const(x, np.float32(bias), E.SUB), zero)
    return [_select(p, lo, p._ew_const(x, np.float32(bias), E.SUM), y)]


@importer("MeanVarianceNormalization",
          restrictions="none")
def _mvn(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    axes = [p._norm_axis(v, r) for v in a.get("axes", [0, 2, 3])]
    mask = axes_mask(axes)
    mean = p._L(p.network.add_reduce(x, R.AVG, mask, True))
    sq_mean = p._L(p.network.add_reduce(p._ew(x, x, E.PROD), R.AVG, mask, True))
    var = p._ew(sq_mean, p._ew(mean, mean, E.PROD), E.SUB)  # as ONNX's function body: E[x^2] - E[x]^2
    den = p._ew_const(p._unary(var, U.SQRT), np.float32(1e-9), E.SUM)
    return [p._ew(p._ew(x, mean, E.SUB), den, E.DIV)]


@importer("RMSNormalization",
          restrictions="none")
def _rms_norm(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    axis = p._norm_axis(int(a.get("axis", -1)), r)
    mask = axes_mask(range(axis, r))
    ms = p._L(p.network.add_reduce(p._ew(x, x, E.PROD), R.AVG, mask, True))
    rms = p._unary(p._ew_const(ms, np.float32(a.get("epsilon", 1e-5)), E.SUM), U.SQRT)
    y = p._ew(x, rms, E.DIV)
    s = p._float(p._tensor(node.input[1]), "scale")
    return [p._ew(y, s, E.PROD)]  # scale broadcasts numpy-style against X.shape[axis:]


@importer("CumSum", "CumProd",
          restrictions=("FLOAT, INT32 or INT64 sums / products (INT64 where the int64 chain is kept wide; other "
                        "types are computed as FLOAT); the axis may be fed at run time"))
def _cumulative(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """ICumulativeLayer SUM (CumSum) or PROD (CumProd, trtlite's extension): the axis is its input 1, read at run
    time (a trtlite extension of TensorRT's layer)."""
    x = p._tensor(node.input[0])
    if x.dtype not in (DataType.FLOAT, DataType.INT32, DataType.INT64):
        x = p._cast(x, DataType.INT32) if x.dtype in (DataType.INT8, DataType.UINT8) else p._float(x)
    axis = p._tensor(node.input[1])
    if axis.dtype != DataType.INT32:
        axis = p._cast(axis, DataType.INT32)
    if len(axis.shape) != 0:
        axis = p._reshape(axis, [], zero_is_placeholder=False)
    rev, excl = bool(int(a.get("reverse", 0))), bool(int(a.get("exclusive", 0)))
    op = CumulativeOperation.SUM if node.op_type == "CumSum" else CumulativeOperation.PROD
    return [p._L(p.network.add_cumulative(x, axis, op, excl, rev))]


@importer("SwiGLU",
          restrictions="floating-point inputs")
def _swiglu(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Y = A * sigmoid(alpha * A) * B."""
    g = p._float(p._tensor(node.input[0]), "A")
    b = p._float(p._tensor(node.input[1]), "B")
    s = p._activation(p._ew_const(g, np.float32(a.get("alpha", 1.0)), E.PROD), ActivationType.SIGMOID)
    return [p._ew(p._ew(g, s, E.PROD), b, E.PROD)]


def _onehot_runtime_depth(p: ImporterContext, node: Any, r: int, axis: int) -> int:
    """A depth given at run time: its value decides the output's shape, so it is taken from the output's static
    shape (declared, or ONNX shape inference's) and the run-time value is asserted to equal it."""
    want = p._sym_dims(node.output[0])
    if want is None or len(want) != r or not isinstance(want[axis], int) or want[axis] <= 0:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_INPUT, "depth '%s' must be a constant (an initializer or computed "
                   "from static shapes), or the output's shape static along axis %d, but it is computed at run time"
                   % (node.input[1], axis))
    depth = int(want[axis])
    d = p._tensor(node.input[1])
    d = p._reshape(d, [], zero_is_placeholder=False) if len(d.shape) else d
    if d.dtype != DataType.INT32:  # ONNX casts a non-integer depth to int64 (truncation)
        d = p._cast(d, DataType.INT32)
    ok = p._ew_const(d, np.int32(depth), E.EQUAL)
    assertion = p.network.add_assertion(ok, "OneHot '%s': depth must be %d (the output's shape along axis %d)"
                                        % (node.name, depth, axis))
    p._name_layer(assertion, "assert")
    return depth


@importer("OneHot",
          restrictions="depth a constant, or the output's shape static along the one-hot axis (the run-time value "
                       "is asserted to equal it)")
def _onehot(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """out = (index == arange(depth) along the new axis) ? on : off; negative indices count from depth, others
    out of range match nothing (all off), as ONNX specifies."""
    idx = p._tensor(node.input[0])
    if idx.dtype != DataType.INT32:
        idx = p._cast(idx, DataType.INT32)  # float indices: ONNX casts them to integers
    r = len(idx.shape) + 1
    axis = p._norm_axis(int(a.get("axis", -1)), r)
    if p._is_const(node.input[1]):
        depth = int(np.asarray(p._cval(node.input[1], "depth")).reshape(-1)[0])
    else:
        depth = _onehot_runtime_depth(p, node, r, axis)
    if depth <= 0:
        raise Fail(ErrorCode.INVALID_NODE, "depth %d must be positive" % depth)
    bound_dims_constant(depth, "OneHot of depth %d: its class range" % depth)
    idx = _select(p, p._ew_const(idx, np.int32(0), E.LESS), p._ew_const(idx, np.int32(depth), E.SUM), idx)
    shape = [1] * r
    shape[axis] = depth
    classes = p._const_tensor(np.arange(depth, dtype=np.int32).reshape(shape), DataType.INT32)
    hit = p._ew(p._unsqueeze(idx, [axis]), classes, E.EQUAL)
    vals = p._tensor(node.input[2])
    off = p._reshape(p._gather_axis(vals, 0, np.array([0])), [1] * r, zero_is_placeholder=False)
    on = p._reshape(p._gather_axis(vals, 0, np.array([1])), [1] * r, zero_is_placeholder=False)
    return [_select(p, hit, on, off)]


@importer("ReverseSequence",
          restrictions="none")
def _reverse_sequence(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """IReverseSequenceLayer: each batch entry's first sequence_lens[b] steps along time_axis reversed."""
    x = p._tensor(node.input[0])
    lens = p._tensor(node.input[1])
    if lens.dtype != DataType.INT32:
        lens = p._cast(lens, DataType.INT32)
    layer = p.network.add_reverse_sequence(x, lens)
    layer.batch_axis = int(a.get("batch_axis", 1))
    layer.sequence_axis = int(a.get("time_axis", 0))
    return [p._L(layer)]
