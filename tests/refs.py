"""Reference implementations of every trtlite layer, in numpy float64.

Written from the TensorRT 8.6 documentation of each layer (formulas quoted in the docstrings), independently of
trtlite's C kernels and of torch/onnxruntime.  tests/test_refs.py checks them against torch and onnxruntime where
those have the op; tests/test_layers_*.py check trtlite against them.

Conventions: enum-like arguments are the TensorRT member names as strings ("SAME_UPPER", "MAX", ...); spatial
attributes are tuples over the trailing spatial dims; axes are plain integers (not bitmasks) unless noted.
Float results are float64; integer and bool results keep their dtype (topk indices are int32).
"""
import math

import numpy as np

PADDING_MODES = ("EXPLICIT_ROUND_DOWN", "EXPLICIT_ROUND_UP", "SAME_UPPER", "SAME_LOWER",
                 "CAFFE_ROUND_DOWN", "CAFFE_ROUND_UP")

ACTIVATIONS = ("RELU", "SIGMOID", "TANH", "LEAKY_RELU", "ELU", "SELU", "SOFTSIGN", "SOFTPLUS", "CLIP",
               "HARD_SIGMOID", "SCALED_TANH", "THRESHOLDED_RELU", "GELU_ERF", "GELU_TANH")

ELEMENTWISE_OPS = ("SUM", "PROD", "MAX", "MIN", "SUB", "DIV", "POW", "FLOOR_DIV", "AND", "OR", "XOR", "EQUAL",
                   "GREATER", "LESS")

UNARY_OPS = ("EXP", "LOG", "SQRT", "RECIP", "ABS", "NEG", "SIN", "COS", "TAN", "SINH", "COSH", "ASIN", "ACOS",
             "ATAN", "ASINH", "ACOSH", "ATANH", "CEIL", "FLOOR", "ERF", "NOT", "SIGN", "ROUND", "ISINF")

REDUCE_OPS = ("SUM", "PROD", "MAX", "MIN", "AVG")


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def _erf(x):
    x = _f64(x)
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.copy()


def _ceil_div(a, b):
    return -((-a) // b)


# ----------------------------------------------------------------------------------------------------------------
# Convolution / deconvolution / pooling output sizes (TensorRT PaddingMode formulas)
#   I input size, B pre padding, A post padding, M = I + B + A, S stride, DK = 1 + D * (F - 1)
# ----------------------------------------------------------------------------------------------------------------

def conv_out_size(I, DK, S, B, A, mode):
    """Convolution output size and the (pre, post) padding actually applied at the front/back.

    EXPLICIT_ROUND_DOWN / CAFFE_ROUND_DOWN: O = floor((M - DK) / S) + 1
    EXPLICIT_ROUND_UP / CAFFE_ROUND_UP:     O = ceil((M - DK) / S) + 1
    SAME_UPPER: O = ceil(I / S), P = floor((I - 1) / S) * S + DK - I, B = floor(P / 2), A = P - B
    SAME_LOWER: same O and P, A = floor(P / 2), B = P - A
    (P is clamped at 0: the formula goes negative when the stride exceeds the window; TensorRT is silent there.)
    Returns (O, B, A) where A is the post padding as given (windows running past it read zeros).
    """
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        O = _ceil_div(I, S)
        # P < 0 (stride larger than the window) would mean negative padding; like ONNX, use none
        P = max(((I - 1) // S) * S + DK - I, 0)
        if mode == "SAME_UPPER":
            B = P // 2
            A = P - B
        else:
            A = P // 2
            B = P - A
        return O, B, A
    M = I + B + A
    if mode in ("EXPLICIT_ROUND_DOWN", "CAFFE_ROUND_DOWN"):
        O = (M - DK) // S + 1
    elif mode in ("EXPLICIT_ROUND_UP", "CAFFE_ROUND_UP"):
        O = _ceil_div(M - DK, S) + 1
    else:
        raise ValueError(mode)
    return O, B, A


def pool_out_size(I, F, S, B, A, mode):
    """Pooling output size: as convolution (DK = F) except the Caffe modes, which drop a last window that would
    start inside the post padding: O = EXPLICIT_x - ((EXPLICIT_x - 1) * S >= I + B)."""
    if mode in ("CAFFE_ROUND_DOWN", "CAFFE_ROUND_UP"):
        O, B, A = conv_out_size(I, F, S, B, A, mode.replace("CAFFE", "EXPLICIT"))
        if (O - 1) * S >= I + B:
            O -= 1
        return O, B, A
    return conv_out_size(I, F, S, B, A, mode)


def deconv_out_size(I, DK, S, B, A, mode):
    """Deconvolution output size and the cropping (pre, post) of the full (I - 1) * S + DK result.

    EXPLICIT_* / CAFFE_*: O = (I - 1) * S + DK - (B + A)
    SAME_UPPER: O = min(I * S, (I - 1) * S + DK), P = max(DK - S, 0), B = floor(P / 2), A = P - B
    SAME_LOWER: same O and P, A = floor(P / 2), B = P - A
    """
    full = (I - 1) * S + DK
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        O = min(I * S, full)
        P = max(DK - S, 0)
        if mode == "SAME_UPPER":
            B = P // 2
            A = P - B
        else:
            A = P // 2
            B = P - A
        return O, B, A
    return full - (B + A), B, A


def _spatial_params(nsp, stride, pre, post, dilation):
    stride = tuple(stride) if stride is not None else (1,) * nsp
    pre = tuple(pre) if pre is not None else (0,) * nsp
    post = tuple(post) if post is not None else (0,) * nsp
    dilation = tuple(dilation) if dilation is not None else (1,) * nsp
    assert len(stride) == len(pre) == len(post) == len(dilation) == nsp
    return stride, pre, post, dilation


def _window_view(xp, offs, step, count):
    """xp[..., offs[i] : offs[i] + (count[i]-1)*step[i] + 1 : step[i]] over the trailing len(offs) dims."""
    nsp = len(offs)
    sl = [slice(None)] * (xp.ndim - nsp)
    for o, s, c in zip(offs, step, count):
        sl.append(slice(o, o + (c - 1) * s + 1, s))
    return xp[tuple(sl)]


def convolution(x, w, b=None, stride=None, pre_padding=None, post_padding=None, dilation=None, groups=1,
                padding_mode="EXPLICIT_ROUND_DOWN"):
    """Grouped, dilated N-d cross-correlation.  x [N, C, *I], w [K, C/groups, *F] (KCRS), b [K] or None.

    y[n, k, o] = b[k] + sum_{c in group(k), f} x[n, c, o * S - B + f * D] * w[k, c, f], with x = 0 outside the
    input (explicit/same padding, and past the post padding when rounding up).
    """
    x = _f64(x)
    w = _f64(w)
    nsp = w.ndim - 2
    assert x.ndim == nsp + 2
    N, C = x.shape[:2]
    K = w.shape[0]
    G = groups
    assert C % G == 0 and K % G == 0 and w.shape[1] == C // G
    ks = w.shape[2:]
    stride, pre, post, dil = _spatial_params(nsp, stride, pre_padding, post_padding, dilation)
    outs, pads = [], []
    for i in range(nsp):
        I = x.shape[2 + i]
        DK = dil[i] * (ks[i] - 1) + 1
        O, B, A = conv_out_size(I, DK, stride[i], pre[i], post[i], padding_mode)
        assert O >= 1, "empty convolution output"
        need = (O - 1) * stride[i] + DK  # padded length the windows read
        tail = max(need - I - B, 0)
        outs.append(O)
        pads.append((B, tail))
    # zero-pad (a negative pre padding would crop; not needed here)
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    Cg, Kg = C // G, K // G
    xg = xp.reshape((N, G, Cg) + xp.shape[2:])
    wg = w.reshape((G, Kg, Cg) + tuple(ks))
    y = np.zeros((N, G, Kg) + tuple(outs))
    for f in np.ndindex(*ks):
        offs = [f[i] * dil[i] for i in range(nsp)]
        xv = _window_view(xg, offs, stride, outs)  # [N, G, Cg, *O]
        wf = wg[(slice(None), slice(None), slice(None)) + tuple(f)]  # [G, Kg, Cg]
        y += np.einsum("ngc...,gkc->ngk...", xv, wf)
    y = y.reshape((N, K) + tuple(outs))
    if b is not None:
        y += _f64(b).reshape((1, K) + (1,) * nsp)
    return y


def deconvolution(x, w, b=None, stride=None, pre_padding=None, post_padding=None, dilation=None, groups=1,
                  padding_mode="EXPLICIT_ROUND_DOWN"):
    """Transposed convolution.  x [N, C, *I], w [C, K/groups, *F] (TensorRT's deconvolution layout), b [K].

    full[n, k, i * S + f * D] += x[n, c, i] * w[c, k, f] (c in group(k)), full length (I - 1) * S + DK; the
    output is full[B : B + O] (zeros past the end of full), plus bias.
    """
    x = _f64(x)
    w = _f64(w)
    nsp = w.ndim - 2
    N, C = x.shape[:2]
    G = groups
    assert C % G == 0 and w.shape[0] == C
    Cg, Kg = C // G, w.shape[1]
    K = Kg * G
    ks = w.shape[2:]
    stride, pre, post, dil = _spatial_params(nsp, stride, pre_padding, post_padding, dilation)
    ins = x.shape[2:]
    fulls, outs, crops = [], [], []
    for i in range(nsp):
        DK = dil[i] * (ks[i] - 1) + 1
        O, B, A = deconv_out_size(ins[i], DK, stride[i], pre[i], post[i], padding_mode)
        assert O >= 1
        fulls.append((ins[i] - 1) * stride[i] + DK)
        outs.append(O)
        crops.append(B)
    xg = x.reshape((N, G, Cg) + tuple(ins))
    wg = w.reshape((G, Cg, Kg) + tuple(ks))
    full = np.zeros((N, G, Kg) + tuple(fulls))
    for f in np.ndindex(*ks):
        offs = [f[i] * dil[i] for i in range(nsp)]
        wf = wg[(slice(None), slice(None), slice(None)) + tuple(f)]  # [G, Cg, Kg]
        contrib = np.einsum("ngc...,gck->ngk...", xg, wf)
        view = _window_view(full, offs, stride, ins)
        view += contrib
    full = full.reshape((N, K) + tuple(fulls))
    y = np.zeros((N, K) + tuple(outs))
    src = [slice(None), slice(None)]
    dst = [slice(None), slice(None)]
    for i in range(nsp):
        lo = crops[i]
        hi = min(lo + outs[i], fulls[i])
        src.append(slice(lo, hi))
        dst.append(slice(0, hi - lo))
    y[tuple(dst)] = full[tuple(src)]
    if b is not None:
        y += _f64(b).reshape((1, K) + (1,) * nsp)
    return y


def pooling(x, type, window, stride=None, pre_padding=None, post_padding=None, padding_mode="EXPLICIT_ROUND_DOWN",
            average_count_excludes_padding=True, blend_factor=0.0):
    """Max / average / blended pooling over the trailing len(window) dims.

    A window covers [o * S - B, o * S - B + F).  MAX ignores padding.  AVERAGE divides by the number of real input
    elements in the window when average_count_excludes_padding, else by the number of positions inside the padded
    extent [-B, I + A) (the full window when it lies inside).  MAX_AVERAGE_BLEND:
    (1 - blend_factor) * max + blend_factor * average.
    """
    x = _f64(x)
    nsp = len(window)
    stride = tuple(stride) if stride is not None else (1,) * nsp
    stride, pre, post, _ = _spatial_params(nsp, stride, pre_padding, post_padding, None)
    lead = x.ndim - nsp
    ins = x.shape[lead:]
    outs, pads, extents = [], [], []
    for i in range(nsp):
        O, B, A = pool_out_size(ins[i], window[i], stride[i], pre[i], post[i], padding_mode)
        assert O >= 1
        need = (O - 1) * stride[i] + window[i]
        tail = max(need - ins[i] - B, 0)
        outs.append(O)
        pads.append((B, tail))
        extents.append((B, A))
    padw = [(0, 0)] * lead + pads
    xmax = np.pad(x, padw, constant_values=-np.inf)
    xsum = np.pad(x, padw)
    real = np.pad(np.ones(ins), pads)
    # positions inside the padded extent [-B, I + A)
    inpad = np.ones(1)
    for i in range(nsp):
        B, A = extents[i]
        tot = ins[i] + pads[i][0] + pads[i][1]
        v = np.zeros(tot)
        v[:min(B + ins[i] + A, tot)] = 1.0
        inpad = np.multiply.outer(inpad, v) if i else v
    mx = np.full(x.shape[:lead] + tuple(outs), -np.inf)
    sm = np.zeros(x.shape[:lead] + tuple(outs))
    cnt_real = np.zeros(tuple(outs))
    cnt_pad = np.zeros(tuple(outs))
    for f in np.ndindex(*window):
        mx = np.maximum(mx, _window_view(xmax, f, stride, outs))
        sm += _window_view(xsum, f, stride, outs)
        cnt_real += _window_view(real, f, stride, outs)
        cnt_pad += _window_view(inpad, f, stride, outs)
    avg = sm / (cnt_real if average_count_excludes_padding else cnt_pad)
    if type == "MAX":
        return mx
    if type == "AVERAGE":
        return avg
    if type == "MAX_AVERAGE_BLEND":
        return (1.0 - blend_factor) * mx + blend_factor * avg
    raise ValueError(type)


# ----------------------------------------------------------------------------------------------------------------
# Pointwise
# ----------------------------------------------------------------------------------------------------------------

def activation(x, type, alpha=0.0, beta=0.0):
    """TensorRT ActivationType formulas."""
    x = _f64(x)
    a, b = float(alpha), float(beta)
    if type == "RELU":
        return np.maximum(x, 0.0)
    if type == "SIGMOID":
        return 1.0 / (1.0 + np.exp(-x))
    if type == "TANH":
        return np.tanh(x)
    if type == "LEAKY_RELU":
        return np.where(x >= 0, x, a * x)
    if type == "ELU":
        return np.where(x >= 0, x, a * (np.exp(np.minimum(x, 0)) - 1.0))
    if type == "SELU":
        return np.where(x > 0, b * x, b * (a * np.exp(np.minimum(x, 0)) - a))
    if type == "SOFTSIGN":
        return x / (1.0 + np.abs(x))
    if type == "SOFTPLUS":
        t = b * x
        return a * (np.maximum(t, 0) + np.log1p(np.exp(-np.abs(t))))
    if type == "CLIP":
        return np.maximum(a, np.minimum(b, x))
    if type == "HARD_SIGMOID":
        return np.maximum(0.0, np.minimum(1.0, a * x + b))
    if type == "SCALED_TANH":
        return a * np.tanh(b * x)
    if type == "THRESHOLDED_RELU":
        return np.where(x > a, x, 0.0)
    if type == "GELU_ERF":
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
    if type == "GELU_TANH":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    raise ValueError(type)


def broadcast_shape(a, b):
    """TensorRT broadcasting: equal ranks, each dim equal or one of them 1."""
    if len(a) != len(b):
        raise ValueError("ranks differ: %s vs %s" % (a, b))
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ValueError("cannot broadcast %s with %s" % (a, b))
    return tuple(out)


def elementwise(a, b, op):
    """TensorRT ElementWiseOperation.  Float inputs -> float64; int32 inputs keep int; logic ops on bool; the
    comparisons return bool.  DIV on integers truncates toward zero; FLOOR_DIV floors."""
    a = np.asarray(a)
    b = np.asarray(b)
    broadcast_shape(a.shape, b.shape)
    if op in ("AND", "OR", "XOR"):
        assert a.dtype == np.bool_ and b.dtype == np.bool_
        return {"AND": np.logical_and, "OR": np.logical_or, "XOR": np.logical_xor}[op](a, b)
    isint = np.issubdtype(a.dtype, np.integer)
    if not isint:
        a = _f64(a)
        b = _f64(b)
    else:
        a = a.astype(np.int64)
        b = b.astype(np.int64)
    if op == "EQUAL":
        return a == b
    if op == "GREATER":
        return a > b
    if op == "LESS":
        return a < b
    if op == "SUM":
        r = a + b
    elif op == "PROD":
        r = a * b
    elif op == "MAX":
        r = np.maximum(a, b)
    elif op == "MIN":
        r = np.minimum(a, b)
    elif op == "SUB":
        r = a - b
    elif op == "DIV":
        if isint:
            q = np.abs(a) // np.abs(b)
            r = np.where((a < 0) != (b < 0), -q, q)
        else:
            r = a / b
    elif op == "POW":
        r = np.power(a, b)
    elif op == "FLOOR_DIV":
        r = np.floor_divide(a, b) if isint else np.floor(a / b)
    else:
        raise ValueError(op)
    return r.astype(np.int32) if isint else r


def unary(x, op):
    """TensorRT UnaryOperation.  ROUND rounds half to even; NOT takes bool; ISINF returns bool."""
    x = np.asarray(x)
    if op == "NOT":
        assert x.dtype == np.bool_
        return np.logical_not(x)
    if np.issubdtype(x.dtype, np.integer):
        if op == "ABS":
            return np.abs(x)
        if op == "NEG":
            return -x
        if op == "SIGN":
            return np.sign(x)
        x = _f64(x)
    x = _f64(x)
    fns = {
        "EXP": np.exp, "LOG": np.log, "SQRT": np.sqrt, "RECIP": lambda v: 1.0 / v, "ABS": np.abs,
        "NEG": np.negative, "SIN": np.sin, "COS": np.cos, "TAN": np.tan, "SINH": np.sinh, "COSH": np.cosh,
        "ASIN": np.arcsin, "ACOS": np.arccos, "ATAN": np.arctan, "ASINH": np.arcsinh, "ACOSH": np.arccosh,
        "ATANH": np.arctanh, "CEIL": np.ceil, "FLOOR": np.floor, "ERF": _erf, "SIGN": np.sign,
        "ROUND": np.round, "ISINF": np.isinf,
    }
    return fns[op](x)


def unary_input(op, rng, shape):
    """Inputs inside each op's domain (shared with the layer tests)."""
    if op == "NOT":
        return rng.random(shape) > 0.5
    if op in ("LOG", "SQRT", "RECIP"):
        return rng.random(shape) * 3 + 0.1
    if op in ("ASIN", "ACOS", "ATANH"):
        return rng.uniform(-0.95, 0.95, shape)
    if op == "ACOSH":
        return rng.random(shape) * 3 + 1.05
    if op == "TAN":
        return rng.uniform(-1.3, 1.3, shape)
    if op in ("ROUND", "CEIL", "FLOOR", "SIGN"):
        x = np.round(rng.standard_normal(shape) * 4, 1)
        x.flat[:6] = [0.5, 1.5, 2.5, -0.5, -2.5, 0.0][: x.size]
        return x
    if op == "ISINF":
        x = rng.standard_normal(shape)
        x.flat[:3] = [np.inf, -np.inf, np.nan][: x.size]
        return x
    return rng.standard_normal(shape) * 2


def parametric_relu(x, slopes):
    """y = x if x >= 0 else slope * x, slopes broadcast to x (same rank)."""
    x = _f64(x)
    s = _f64(slopes)
    broadcast_shape(x.shape, s.shape)
    return np.where(x >= 0, x, s * x)


def select(cond, a, b):
    """ISelectLayer: cond ? a : b with broadcasting over all three (same rank)."""
    cond = np.asarray(cond)
    assert cond.dtype == np.bool_
    a = np.asarray(a)
    b = np.asarray(b)
    broadcast_shape(broadcast_shape(cond.shape, a.shape), b.shape)
    if np.issubdtype(a.dtype, np.floating):
        a, b = _f64(a), _f64(b)
    return np.where(cond, a, b)


def scale(x, mode, shift=None, scale=None, power=None, channel_axis=1):
    """IScaleLayer: y = (x * scale + shift) ** power.

    UNIFORM: one coefficient; CHANNEL: one per channel along channel_axis; ELEMENTWISE: one per element of
    x.shape[channel_axis:].  Missing weights mean shift 0, scale 1, power 1.
    """
    x = _f64(x)
    if mode == "UNIFORM":
        cshape = ()
    elif mode == "CHANNEL":
        cshape = (x.shape[channel_axis],) + (1,) * (x.ndim - channel_axis - 1)
    elif mode == "ELEMENTWISE":
        cshape = x.shape[channel_axis:]
    else:
        raise ValueError(mode)

    def coef(v, default):
        if v is None or np.asarray(v).size == 0:
            return default
        return _f64(v).reshape(cshape)

    return (x * coef(scale, 1.0) + coef(shift, 0.0)) ** coef(power, 1.0)


def lrn(x, window, alpha, beta, k):
    """ILRNLayer, across channels (dim -3):
    y[c] = x[c] / (k + alpha / window * sum_{|c' - c| <= window // 2} x[c']^2) ** beta."""
    x = _f64(x)
    ax = x.ndim - 3
    C = x.shape[ax]
    h = window // 2
    sq = np.moveaxis(x * x, ax, 0)
    acc = np.zeros_like(sq)
    for c in range(C):
        acc[c] = sq[max(0, c - h):min(C, c + h + 1)].sum(axis=0)
    acc = np.moveaxis(acc, 0, ax)
    return x / (k + alpha / window * acc) ** beta


def cast(x, to):
    """ICastLayer.  to: numpy dtype.  float -> int truncates toward zero; -> bool is x != 0."""
    x = np.asarray(x)
    to = np.dtype(to)
    if to == np.bool_:
        return x != 0
    if np.issubdtype(to, np.integer) and np.issubdtype(x.dtype, np.floating):
        return np.trunc(x).astype(to)
    return x.astype(to)


def identity(x):
    return np.array(x, copy=True)


def constant(shape, weights):
    return np.asarray(weights).reshape(tuple(shape)).copy()


# ----------------------------------------------------------------------------------------------------------------
# Linear algebra
# ----------------------------------------------------------------------------------------------------------------

def fully_connected(x, w, b=None):
    """IFullyConnectedLayer: flattens the last 3 dims (C, H, W) -> K = w.shape[0]; output [..., K, 1, 1]."""
    x = _f64(x)
    lead = x.shape[:-3]
    flat = x.reshape(lead + (-1,))
    w = _f64(w).reshape(-1, flat.shape[-1])
    y = flat @ w.T
    if b is not None:
        y = y + _f64(b)
    return y.reshape(lead + (w.shape[0], 1, 1))


def matrix_multiply(a, op0, b, op1):
    """IMatrixMultiplyLayer.  op: NONE, TRANSPOSE (swap the last two dims) or VECTOR (the last dim is a vector,
    the rest are batch dims).  Batch dims broadcast (same count on both sides)."""
    a = _f64(a)
    b = _f64(b)
    if op0 == "TRANSPOSE":
        a = np.swapaxes(a, -1, -2)
    if op1 == "TRANSPOSE":
        b = np.swapaxes(b, -1, -2)
    if op0 == "VECTOR":
        a = a[..., None, :]
    if op1 == "VECTOR":
        b = b[..., :, None]
    assert a.ndim == b.ndim, "batch ranks differ"
    broadcast_shape(a.shape[:-2], b.shape[:-2])
    assert a.shape[-1] == b.shape[-2], "inner dims differ"
    # explicit sum over the shared dim (no BLAS): y[..., m, n] = sum_k a[..., m, k] * b[..., k, n]
    y = (a[..., :, :, None] * b[..., None, :, :]).sum(axis=-2)
    if op1 == "VECTOR":
        y = y[..., 0]
    if op0 == "VECTOR":
        y = y[..., 0] if op1 == "VECTOR" else y[..., 0, :]
    return y


# ----------------------------------------------------------------------------------------------------------------
# Softmax, reductions, normalization
# ----------------------------------------------------------------------------------------------------------------

def softmax(x, axis):
    x = _f64(x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def reduce(x, op, axes, keep_dims):
    """IReduceLayer over the given axes (a tuple of ints)."""
    axes = tuple(sorted(axes))
    isint = np.issubdtype(np.asarray(x).dtype, np.integer)
    x = np.asarray(x).astype(np.int64) if isint else _f64(x)
    fn = {"SUM": np.sum, "PROD": np.prod, "MAX": np.max, "MIN": np.min, "AVG": np.mean}[op]
    r = fn(x, axis=axes, keepdims=bool(keep_dims))
    return r.astype(np.int32) if isint and op != "AVG" else r


def topk(x, op, k, axis):
    """ITopKLayer: the k largest (MAX, descending) or smallest (MIN, ascending) along axis; indices int32.
    Equal values keep the lower index first."""
    x = np.asarray(x)
    key = -_f64(x) if op == "MAX" else _f64(x)
    order = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    vals = np.take_along_axis(x, idx, axis=axis)
    return (_f64(vals) if np.issubdtype(x.dtype, np.floating) else vals), idx.astype(np.int32)


def normalization(x, scale, bias, axes, epsilon=1e-5, num_groups=1):
    """INormalizationLayer: Y = (X - Mean(X, axes)) / sqrt(Var(X, axes) + eps) * S + B (biased variance).

    num_groups > 1 (group norm): the channel dim (1) is split into num_groups groups and each group is normalized
    over its channels and the axes after the channel dim.  TensorRT documents scale and bias of shape
    [1, G, 1, ...] for group norm: one value per group, applied to every channel of the group.  (A [1, C, 1, ...]
    per-channel scale is applied per channel.)"""
    x = _f64(x)
    axes = tuple(sorted(axes))
    if num_groups == 1:
        m = x.mean(axis=axes, keepdims=True)
        v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
        y = (x - m) / np.sqrt(v + epsilon)
    else:
        N, C = x.shape[:2]
        G = num_groups
        assert C % G == 0
        xg = x.reshape((N, G, C // G) + x.shape[2:])
        red = tuple(range(2, xg.ndim))
        m = xg.mean(axis=red, keepdims=True)
        v = ((xg - m) ** 2).mean(axis=red, keepdims=True)
        yg = (xg - m) / np.sqrt(v + epsilon)
        s, b = _f64(scale), _f64(bias)
        if s.ndim == x.ndim and s.shape[1] == G and G != C:
            per_group = lambda t: t.reshape((t.shape[0], G, 1) + t.shape[2:])
            return (yg * per_group(s) + per_group(b)).reshape(x.shape)
        y = yg.reshape(x.shape)
    return y * _f64(scale) + _f64(bias)


# ----------------------------------------------------------------------------------------------------------------
# Shape and data-movement layers
# ----------------------------------------------------------------------------------------------------------------

def concatenation(xs, axis):
    xs = [np.asarray(x) for x in xs]
    out_shape = list(xs[0].shape)
    out_shape[axis] = sum(x.shape[axis] for x in xs)
    out = np.empty(out_shape, dtype=xs[0].dtype)
    pos = 0
    for x in xs:
        sl = [slice(None)] * x.ndim
        sl[axis] = slice(pos, pos + x.shape[axis])
        out[tuple(sl)] = x
        pos += x.shape[axis]
    return out


def reshape_dims(in_shape, dims, zero_is_placeholder=True):
    """TensorRT reshape dims: 0 copies the input dim at that index (when zero_is_placeholder), -1 is inferred."""
    out = []
    for i, d in enumerate(dims):
        if d == 0 and zero_is_placeholder:
            out.append(in_shape[i])
        else:
            out.append(d)
    if -1 in out:
        known = 1
        for d in out:
            if d != -1:
                known *= d
        total = int(np.prod(in_shape))
        assert known and total % known == 0
        out[out.index(-1)] = total // known
    assert int(np.prod(out)) == int(np.prod(in_shape)), (in_shape, dims)
    return tuple(out)


def shuffle(x, first_transpose=None, reshape=None, second_transpose=None, zero_is_placeholder=True):
    """IShuffleLayer: transpose -> reshape -> transpose.  out.dim[i] = in.dim[perm[i]]."""
    y = np.asarray(x)
    if first_transpose is not None:
        y = np.transpose(y, first_transpose)
    if reshape is not None:
        y = y.reshape(reshape_dims(y.shape, reshape, zero_is_placeholder))
    if second_transpose is not None:
        y = np.transpose(y, second_transpose)
    return np.ascontiguousarray(y)


def slice_indices(n, start, size, stride, mode):
    """Source indices of one sliced dim, and a mask of those that are in range (FILL)."""
    idx = start + stride * np.arange(size)
    if mode in ("DEFAULT", "STRICT_BOUNDS"):
        if size and (idx.min() < 0 or idx.max() >= n):
            raise IndexError("slice out of bounds")
        return idx, np.ones(size, bool)
    if mode == "WRAP":
        return np.mod(idx, n), np.ones(size, bool)
    if mode == "CLAMP":
        return np.clip(idx, 0, n - 1), np.ones(size, bool)
    if mode == "FILL":
        ok = (idx >= 0) & (idx < n)
        return np.where(ok, idx, 0), ok
    if mode == "REFLECT":
        if n == 1:
            return np.zeros(size, dtype=np.int64), np.ones(size, bool)
        period = 2 * (n - 1)
        m = np.mod(idx, period)
        return np.where(m < n, m, period - m), np.ones(size, bool)
    raise ValueError(mode)


def slice_(x, start, shape, stride, mode="DEFAULT", fill=0.0):
    """ISliceLayer: out[i] = in[start + i * stride] per dim, out-of-range handled by mode."""
    x = np.asarray(x)
    idxs, oks = [], []
    for d in range(x.ndim):
        i, ok = slice_indices(x.shape[d], start[d], shape[d], stride[d], mode)
        idxs.append(i)
        oks.append(ok)
    out = x[np.ix_(*idxs)] if x.ndim else x.copy()
    if mode == "FILL":
        mask = np.ones(tuple(shape), bool)
        for d, ok in enumerate(oks):
            sh = [1] * x.ndim
            sh[d] = len(ok)
            mask = mask & ok.reshape(sh)
        out = np.where(mask, out, np.asarray(fill, dtype=x.dtype))
    return out


def padding(x, pre, post):
    """IPaddingLayer on the trailing len(pre) dims: positive values add zeros, negative values crop."""
    x = np.asarray(x)
    nsp = len(pre)
    lead = x.ndim - nsp
    sl = [slice(None)] * x.ndim
    widths = [(0, 0)] * x.ndim
    for i in range(nsp):
        d = lead + i
        n = x.shape[d]
        lo = -pre[i] if pre[i] < 0 else 0
        hi = n + post[i] if post[i] < 0 else n
        sl[d] = slice(lo, hi)
        widths[d] = (max(pre[i], 0), max(post[i], 0))
    return np.pad(x[tuple(sl)], widths)


def gather(data, indices, axis, num_elementwise_dims=0):
    """IGatherLayer DEFAULT mode.  Negative indices count from the end.
    out shape = data.shape[:axis] + indices.shape[num_elementwise_dims:] + data.shape[axis + 1:]; with
    num_elementwise_dims == 1 the leading dim is shared: out[b] = gather(data[b], indices[b], axis - 1)."""
    data = np.asarray(data)
    indices = np.asarray(indices).astype(np.int64)
    n = data.shape[axis]
    indices = np.where(indices < 0, indices + n, indices)
    assert indices.size == 0 or (indices.min() >= 0 and indices.max() < n)
    if num_elementwise_dims == 0:
        sl = (slice(None),) * axis + (indices,)
        return data[sl]
    assert num_elementwise_dims == 1 and axis >= 1 and data.shape[0] == indices.shape[0]
    return np.stack([gather(data[b], indices[b], axis - 1) for b in range(data.shape[0])])


def gather_elements(data, indices, axis):
    """IGatherLayer ELEMENT mode: out[i..] = data[i.. with dim axis replaced by indices[i..]]; out shape =
    indices shape."""
    data = np.asarray(data)
    indices = np.asarray(indices).astype(np.int64)
    n = data.shape[axis]
    indices = np.where(indices < 0, indices + n, indices)
    grid = list(np.indices(indices.shape, sparse=True))
    grid[axis] = indices
    return data[tuple(grid)]


def gather_nd(data, indices, num_elementwise_dims=0):
    """IGatherLayer ND mode: the last dim of indices (q) holds coordinates into data after the first
    num_elementwise_dims (shared batch) dims.  out shape = indices.shape[:-1] + data.shape[nb + q:]."""
    data = np.asarray(data)
    indices = np.asarray(indices).astype(np.int64)
    nb = num_elementwise_dims
    q = indices.shape[-1]
    assert data.shape[:nb] == indices.shape[:nb]
    B = int(np.prod(data.shape[:nb], dtype=np.int64))
    db = data.reshape((B,) + data.shape[nb:])
    ib = indices.reshape(B, -1, q)
    rows = []
    for b in range(B):
        rows.append([db[b][tuple(ib[b, j])] for j in range(ib.shape[1])])
    tail = data.shape[nb + q:]
    out = np.array(rows, dtype=data.dtype).reshape(indices.shape[:-1] + tail)
    return out


# ----------------------------------------------------------------------------------------------------------------
# Resize
# ----------------------------------------------------------------------------------------------------------------

def resize_coord(o, in_size, out_size, coord, selector="FORMULA", scale=None):
    """Input coordinate of output index o (array) for one dim.  scale defaults to out_size / in_size."""
    o = _f64(o)
    if out_size == 1 and selector == "UPPER":
        return np.zeros_like(o)
    s = float(scale) if scale is not None else out_size / in_size
    if coord == "ALIGN_CORNERS":
        if out_size == 1:
            return np.zeros_like(o)
        return o * (in_size - 1) / (out_size - 1)
    if coord == "ASYMMETRIC":
        return o / s
    if coord == "HALF_PIXEL":
        return (o + 0.5) / s - 0.5
    raise ValueError(coord)


def _nearest_round(c, rounding):
    if rounding == "HALF_UP":
        return np.floor(c + 0.5)
    if rounding == "HALF_DOWN":
        return np.ceil(c - 0.5)
    if rounding == "FLOOR":
        return np.floor(c)
    if rounding == "CEIL":
        return np.ceil(c)
    raise ValueError(rounding)


def resize(x, out_shape, mode="NEAREST", coord="ASYMMETRIC", selector="FORMULA", rounding="FLOOR", scales=None,
           cubic_coeff=-0.75, exclude_outside=False):
    """IResizeLayer, NEAREST or LINEAR, every dim independently (multi-linear interpolation is separable).

    NEAREST: index = clamp(round(coord(o)), 0, in - 1) with the given rounding.
    LINEAR: c = clamp(coord(o), 0, in - 1); y = (1 - t) * x[floor(c)] + t * x[min(floor(c) + 1, in - 1)].
    CUBIC: Keys cubic over 4 taps around the unclamped coord(o) (see _cubic_axis).
    Dims whose size does not change and whose coordinate map is the identity are left alone.
    """
    y = _f64(x)
    for d in range(y.ndim):
        I, O = y.shape[d], out_shape[d]
        sc = scales[d] if scales is not None else None
        if I == O and (sc is None or sc == 1):
            continue
        c = resize_coord(np.arange(O), I, O, coord, selector, sc)
        if mode == "NEAREST":
            idx = np.clip(_nearest_round(c, rounding), 0, I - 1).astype(np.int64)
            y = np.take(y, idx, axis=d)
        elif mode == "LINEAR":
            c = np.clip(c, 0, I - 1)
            lo = np.floor(c).astype(np.int64)
            hi = np.minimum(lo + 1, I - 1)
            t = c - lo
            sh = [1] * y.ndim
            sh[d] = O
            t = t.reshape(sh)
            y = np.take(y, lo, axis=d) * (1 - t) + np.take(y, hi, axis=d) * t
        elif mode == "CUBIC":
            y = _cubic_axis(y, d, c, cubic_coeff, exclude_outside)
        else:
            raise ValueError(mode)
    return y


def _cubic_kernel(dist, A):
    """Keys cubic convolution kernel with coefficient A (TensorRT's cubic_coeff, default -0.75)."""
    x = np.abs(dist)
    return np.where(x <= 1, ((A + 2) * x - (A + 3)) * x * x + 1,
                    np.where(x < 2, ((A * x - 5 * A) * x + 8 * A) * x - 4 * A, 0.0))


def _cubic_axis(y, d, c, A, exclude_outside):
    """Cubic interpolation of y along axis d at (unclamped) coordinates c: taps floor(c) - 1 .. floor(c) + 2,
    indices clamped to the edge; with exclude_outside the taps outside the input get weight 0 and the rest are
    renormalized."""
    n = y.shape[d]
    base = np.floor(c).astype(np.int64)
    t = c - base
    out = 0.0
    wsum = 0.0
    taps = []
    for k in (-1, 0, 1, 2):
        idx = base + k
        w = _cubic_kernel(t - k, A)
        if exclude_outside:
            w = np.where((idx >= 0) & (idx < n), w, 0.0)
        taps.append((np.clip(idx, 0, n - 1), w))
        wsum = wsum + w
    sh = [1] * y.ndim
    sh[d] = len(c)
    for idx, w in taps:
        if exclude_outside:
            w = w / wsum
        out = out + np.take(y, idx, axis=d) * w.reshape(sh)
    return out


def resize_out_shape(in_shape, scales):
    """Output shape for given scales: floor(in * scale)."""
    return tuple(int(math.floor(i * s)) for i, s in zip(in_shape, scales))
