"""Checks the numpy references (tests/refs.py) against torch and onnxruntime, where those have the op.

This is how we know the references that the layer tests trust are right.  It does not need trtlite.
"""
import itertools
import math

import numpy as np
import pytest

import refs

torch = pytest.importorskip("torch")
F = torch.nn.functional

RTOL = 1e-9
ATOL = 1e-9


def T(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def close(ours, theirs, rtol=RTOL, atol=ATOL):
    theirs = theirs.numpy() if hasattr(theirs, "numpy") else np.asarray(theirs)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


@pytest.fixture
def rng(request):
    import zlib
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


# ------------------------------------------------------------------------------------------------------------
# onnxruntime helper
# ------------------------------------------------------------------------------------------------------------

def run_onnx(op, inputs, attrs=None, n_outputs=1, opset=18, const_inputs=None):
    """Run a single ONNX node with onnxruntime.  inputs: list of arrays (fed) ; const_inputs: dict position ->
    array baked in as initializers (e.g. Resize sizes)."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import helper, numpy_helper, TensorProto

    const_inputs = const_inputs or {}
    total = len(inputs) + len(const_inputs)
    names, graph_inputs, inits, feeds = [], [], [], {}
    it = iter(inputs)
    for i in range(total):
        if i in const_inputs:
            v = const_inputs[i]
            if v is None:
                names.append("")
                continue
            nm = "c%d" % i
            inits.append(numpy_helper.from_array(np.asarray(v), nm))
            names.append(nm)
        else:
            v = next(it)
            nm = "i%d" % i
            names.append(nm)
            elem = helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype)
            graph_inputs.append(helper.make_tensor_value_info(nm, elem, list(np.asarray(v).shape)))
            feeds[nm] = np.asarray(v)
    outs = ["o%d" % i for i in range(n_outputs)]
    node = helper.make_node(op, names, outs, **(attrs or {}))
    graph = helper.make_graph([node], "g", graph_inputs,
                              [helper.make_empty_tensor_value_info(o) for o in outs],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    res = sess.run(outs, feeds)
    return res if n_outputs > 1 else res[0]


# ------------------------------------------------------------------------------------------------------------
# convolution
# ------------------------------------------------------------------------------------------------------------

def torch_conv(x, w, b, stride, pre, post, dil, groups):
    nsp = w.ndim - 2
    pad = []
    for i in reversed(range(nsp)):
        pad += [pre[i], post[i]]
    xt = F.pad(T(x), pad)
    fn = [F.conv1d, F.conv2d, F.conv3d][nsp - 1]
    return fn(xt, T(w), None if b is None else T(b), stride=stride, dilation=dil, groups=groups)


CONV_CASES = [
    # shape, K, kernel, stride, pre, post, dilation, groups
    ((2, 3, 7, 6), 4, (3, 2), (1, 1), (0, 0), (0, 0), (1, 1), 1),
    ((2, 4, 9, 8), 6, (3, 3), (2, 1), (1, 2), (2, 0), (1, 2), 2),
    ((1, 6, 8, 7), 6, (1, 3), (1, 2), (0, 1), (0, 1), (1, 1), 6),
    ((3, 2, 5, 5), 3, (5, 5), (1, 1), (2, 2), (2, 2), (1, 1), 1),
    ((2, 3, 11), 5, (3,), (2,), (1,), (0,), (3,), 1),
    ((2, 4, 5, 6, 7), 4, (3, 2, 3), (2, 1, 2), (1, 0, 1), (0, 1, 1), (1, 2, 1), 2),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_convolution_vs_torch(case, rng):
    shape, K, ks, stride, pre, post, dil, g = case
    x = rng.standard_normal(shape)
    w = rng.standard_normal((K, shape[1] // g) + ks)
    b = rng.standard_normal(K)
    ours = refs.convolution(x, w, b, stride, pre, post, dil, g)
    close(ours, torch_conv(x, w, b, stride, pre, post, dil, g))


@pytest.mark.parametrize("mode", ["EXPLICIT_ROUND_UP", "CAFFE_ROUND_UP"])
def test_convolution_round_up_is_zero_extension(mode, rng):
    # rounding up reads zeros past the post padding: same as explicit padding extended by the overhang
    x = rng.standard_normal((2, 3, 8, 7))
    w = rng.standard_normal((2, 3, 3, 2))
    stride, pre, post = (3, 2), (1, 1), (1, 1)
    ours = refs.convolution(x, w, None, stride, pre, post, padding_mode=mode)
    # H: M = 10, DK = 3 -> O = ceil(7/3) + 1 = 4, reads up to 3*3+3 = 12 -> 2 extra zeros
    # W: M = 9, DK = 2 -> O = ceil(7/2) + 1 = 5, reads up to 4*2+2 = 10 -> 1 extra zero
    assert ours.shape == (2, 2, 4, 5)
    close(ours, torch_conv(x, w, None, stride, (1, 1), (3, 2), (1, 1), 1))


@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("shape,ks,stride,dil", [
    ((2, 3, 7, 8), (3, 4), (1, 1), (1, 1)),
    ((2, 3, 9, 6), (3, 2), (2, 3), (2, 1)),
    ((1, 2, 5, 10), (4, 5), (2, 2), (1, 1)),
])
def test_convolution_same_vs_onnxruntime(mode, shape, ks, stride, dil, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((3, shape[1]) + ks).astype(np.float32)
    ours = refs.convolution(x, w, None, stride, dilation=dil, padding_mode=mode)
    # onnxruntime has no dilation with SAME: materialize the dilated kernel (zeros between taps) instead
    wd = np.zeros(w.shape[:2] + tuple(d * (k - 1) + 1 for k, d in zip(ks, dil)), np.float32)
    wd[:, :, ::dil[0], ::dil[1]] = w
    theirs = run_onnx("Conv", [x, wd], dict(auto_pad=mode, strides=list(stride), kernel_shape=list(wd.shape[2:])))
    close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_conv_out_size_formulas():
    # TensorRT PaddingMode formulas, spot values
    assert refs.conv_out_size(7, 3, 2, 1, 1, "EXPLICIT_ROUND_DOWN") == (4, 1, 1)
    assert refs.conv_out_size(8, 3, 2, 1, 1, "EXPLICIT_ROUND_DOWN") == (4, 1, 1)
    assert refs.conv_out_size(8, 3, 2, 1, 1, "EXPLICIT_ROUND_UP") == (5, 1, 1)
    assert refs.conv_out_size(8, 3, 2, 0, 0, "CAFFE_ROUND_UP") == (4, 0, 0)
    assert refs.conv_out_size(10, 3, 3, 0, 0, "SAME_UPPER") == (4, 1, 1)  # P = 9 + 3 - 10 = 2
    O, B, A = refs.conv_out_size(10, 4, 3, 0, 0, "SAME_UPPER")
    assert (O, B, A) == (4, 1, 2)  # P = 9 + 4 - 10 = 3
    assert refs.conv_out_size(10, 4, 3, 0, 0, "SAME_LOWER") == (4, 2, 1)
    assert refs.pool_out_size(5, 2, 2, 0, 0, "CAFFE_ROUND_UP") == (3, 0, 0)
    assert refs.pool_out_size(5, 2, 2, 1, 1, "CAFFE_ROUND_UP") == (3, 1, 1)  # ceil(5/2)+1 = 4 -> 3*2 >= 6 -> 3
    assert refs.deconv_out_size(4, 3, 2, 1, 0, "EXPLICIT_ROUND_DOWN") == (8, 1, 0)
    assert refs.deconv_out_size(4, 3, 2, 0, 0, "SAME_UPPER") == (8, 0, 1)
    assert refs.deconv_out_size(4, 2, 3, 0, 0, "SAME_UPPER") == (11, 0, 0)


# ------------------------------------------------------------------------------------------------------------
# deconvolution
# ------------------------------------------------------------------------------------------------------------

DECONV_CASES = [
    # shape, K, kernel, stride, pre, post, dilation, groups
    ((2, 3, 4, 5), 2, (3, 3), (1, 1), (0, 0), (0, 0), (1, 1), 1),
    ((2, 4, 5, 3), 6, (3, 2), (2, 3), (1, 0), (0, 1), (1, 1), 2),
    ((1, 3, 4, 4), 3, (2, 3), (2, 2), (0, 1), (1, 1), (2, 1), 3),
    ((2, 2, 6), 3, (4,), (3,), (1,), (2,), (1,), 1),
    ((1, 2, 3, 4, 3), 4, (2, 2, 3), (2, 1, 2), (0, 1, 1), (1, 0, 0), (1, 1, 1), 2),
]


@pytest.mark.parametrize("case", DECONV_CASES)
def test_deconvolution_vs_torch(case, rng):
    shape, K, ks, stride, pre, post, dil, g = case
    x = rng.standard_normal(shape)
    w = rng.standard_normal((shape[1], K // g) + ks)
    b = rng.standard_normal(K)
    ours = refs.deconvolution(x, w, b, stride, pre, post, dil, g)
    nsp = len(ks)
    fn = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][nsp - 1]
    full = fn(T(x), T(w), T(b), stride=stride, dilation=dil, groups=g).numpy()
    sl = (slice(None), slice(None)) + tuple(slice(pre[i], full.shape[2 + i] - post[i]) for i in range(nsp))
    close(ours, full[sl])


@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("ks,stride", [((3, 4), (2, 2)), ((4, 5), (2, 3)), ((2, 3), (1, 1))])
def test_deconvolution_same_vs_onnxruntime(mode, ks, stride, rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2) + ks).astype(np.float32)
    ours = refs.deconvolution(x, w, None, stride, padding_mode=mode)
    # ONNX ConvTranspose auto_pad SAME_*: output = input * stride, total padding = full - output
    theirs = run_onnx("ConvTranspose", [x, w], dict(auto_pad=mode, strides=list(stride), kernel_shape=list(ks)))
    close(ours, theirs, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------------------------------------
# pooling
# ------------------------------------------------------------------------------------------------------------

POOL_CASES = [
    # shape, window, stride, pad(sym)
    ((2, 3, 7, 6), (3, 2), (2, 2), (1, 0)),
    ((2, 2, 9, 9), (3, 3), (2, 3), (1, 1)),
    ((1, 3, 8, 5), (2, 2), (2, 2), (0, 0)),
    ((2, 2, 11), (4,), (3,), (2,)),
    ((1, 2, 5, 6, 7), (2, 3, 3), (2, 2, 1), (1, 1, 1)),
]


def _torch_pool(x, kind, window, stride, pad, ceil, count_include_pad=True):
    nsp = len(window)
    if kind == "MAX":
        fn = [F.max_pool1d, F.max_pool2d, F.max_pool3d][nsp - 1]
        return fn(T(x), window, stride, pad, ceil_mode=ceil)
    fn = [F.avg_pool1d, F.avg_pool2d, F.avg_pool3d][nsp - 1]
    return fn(T(x), window, stride, pad, ceil_mode=ceil, count_include_pad=count_include_pad)


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("mode", ["EXPLICIT_ROUND_DOWN", "CAFFE_ROUND_DOWN", "CAFFE_ROUND_UP"])
def test_pooling_vs_torch(case, mode, rng):
    shape, window, stride, pad = case
    x = rng.standard_normal(shape)
    ceil = mode == "CAFFE_ROUND_UP"
    for kind, excl in [("MAX", True), ("AVERAGE", True), ("AVERAGE", False)]:
        ours = refs.pooling(x, kind, window, stride, pad, pad, mode, average_count_excludes_padding=excl)
        close(ours, _torch_pool(x, kind, window, stride, pad, ceil, count_include_pad=not excl))


def test_pooling_blend(rng):
    x = rng.standard_normal((2, 3, 7, 6))
    args = ((3, 2), (2, 2), (1, 1), (1, 1))
    mx = refs.pooling(x, "MAX", *args)
    av = refs.pooling(x, "AVERAGE", *args)
    for bf in (0.0, 0.3, 1.0):
        close(refs.pooling(x, "MAX_AVERAGE_BLEND", *args, blend_factor=bf), (1 - bf) * mx + bf * av)
    close(av, _torch_pool(x, "AVERAGE", (3, 2), (2, 2), (1, 1), False, count_include_pad=False))


@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("kind", ["MAX", "AVERAGE"])
def test_pooling_same_vs_onnxruntime(mode, kind, rng):
    x = rng.standard_normal((2, 3, 7, 8)).astype(np.float32)
    op = "MaxPool" if kind == "MAX" else "AveragePool"
    attrs = dict(auto_pad=mode, kernel_shape=[3, 4], strides=[2, 3])
    if kind == "AVERAGE":
        attrs["count_include_pad"] = 0
    theirs = run_onnx(op, [x], attrs)
    ours = refs.pooling(x, kind, (3, 4), (2, 3), padding_mode=mode)
    close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_pooling_asymmetric_padding_vs_torch(rng):
    x = rng.standard_normal((2, 2, 7, 6))
    pre, post = (2, 0), (0, 1)
    ours = refs.pooling(x, "AVERAGE", (3, 3), (1, 2), pre, post, average_count_excludes_padding=False)
    xp = F.pad(T(x), [pre[1], post[1], pre[0], post[0]])
    close(ours, F.avg_pool2d(xp, (3, 3), (1, 2)))
    ours = refs.pooling(x, "MAX", (3, 3), (1, 2), pre, post)
    xp = F.pad(T(x), [pre[1], post[1], pre[0], post[0]], value=-np.inf)
    close(ours, F.max_pool2d(xp, (3, 3), (1, 2)))


# ------------------------------------------------------------------------------------------------------------
# activation
# ------------------------------------------------------------------------------------------------------------

ACT_TORCH = {
    "RELU": (0, 0, lambda t: F.relu(t)),
    "SIGMOID": (0, 0, torch.sigmoid),
    "TANH": (0, 0, torch.tanh),
    "LEAKY_RELU": (0.1, 0, lambda t: F.leaky_relu(t, 0.1)),
    "ELU": (0.7, 0, lambda t: F.elu(t, 0.7)),
    "SELU": (1.6732632423543772, 1.0507009873554805, F.selu),
    "SOFTSIGN": (0, 0, F.softsign),
    "SOFTPLUS": (0.5, 2.0, lambda t: F.softplus(t, beta=2.0)),  # alpha * log1p(exp(beta x)) = 1/beta * ...
    "CLIP": (-0.5, 0.75, lambda t: F.hardtanh(t, -0.5, 0.75)),
    "HARD_SIGMOID": (1 / 6, 0.5, F.hardsigmoid),
    "SCALED_TANH": (1.7, 0.6, lambda t: 1.7 * torch.tanh(0.6 * t)),
    "THRESHOLDED_RELU": (0.3, 0, lambda t: F.threshold(t, 0.3, 0.0)),
    "GELU_ERF": (0, 0, lambda t: F.gelu(t)),
    "GELU_TANH": (0, 0, lambda t: F.gelu(t, approximate="tanh")),
}


@pytest.mark.parametrize("name", refs.ACTIVATIONS)
def test_activation_vs_torch(name, rng):
    a, b, fn = ACT_TORCH[name]
    x = rng.standard_normal((3, 5, 7)) * 3
    x[0, 0, :4] = [0.0, -0.0, 0.3, -1e-3]
    close(refs.activation(x, name, a, b), fn(T(x)), rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------------------------------------------------
# elementwise / unary / prelu / select
# ------------------------------------------------------------------------------------------------------------

EW_TORCH = {
    "SUM": torch.add, "PROD": torch.mul, "MAX": torch.maximum, "MIN": torch.minimum, "SUB": torch.sub,
    "DIV": torch.div, "POW": torch.pow, "FLOOR_DIV": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "AND": torch.logical_and, "OR": torch.logical_or, "XOR": torch.logical_xor, "EQUAL": torch.eq,
    "GREATER": torch.gt, "LESS": torch.lt,
}


@pytest.mark.parametrize("op", refs.ELEMENTWISE_OPS)
@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 3, 4)), ((2, 1, 4), (1, 3, 1)), ((3, 5), (1, 5))])
def test_elementwise_vs_torch(op, shapes, rng):
    sa, sb = shapes
    if op in ("AND", "OR", "XOR"):
        a, b = rng.random(sa) > 0.5, rng.random(sb) > 0.5
    elif op == "POW":
        a, b = rng.random(sa) + 0.2, rng.standard_normal(sb)
    elif op in ("EQUAL", "GREATER", "LESS"):
        a, b = rng.integers(-2, 3, sa).astype(np.float64), rng.integers(-2, 3, sb).astype(np.float64)
    else:
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        b = np.where(np.abs(b) < 0.1, 0.5, b)
    close(refs.elementwise(a, b, op), EW_TORCH[op](T(a), T(b)))


@pytest.mark.parametrize("op", ["SUM", "PROD", "MAX", "MIN", "SUB", "DIV", "FLOOR_DIV", "EQUAL", "GREATER", "LESS"])
def test_elementwise_int32_vs_torch(op, rng):
    a = rng.integers(-20, 20, (3, 4)).astype(np.int32)
    b = rng.integers(1, 6, (3, 4)).astype(np.int32) * rng.choice([-1, 1], (3, 4)).astype(np.int32)
    if op == "DIV":
        theirs = torch.div(T(a), T(b), rounding_mode="trunc")
    else:
        theirs = EW_TORCH[op](T(a), T(b))
    ours = refs.elementwise(a, b, op)
    assert ours.dtype == theirs.numpy().dtype
    close(ours, theirs)


def test_broadcast_rules():
    assert refs.broadcast_shape((2, 1, 4), (1, 3, 1)) == (2, 3, 4)
    with pytest.raises(ValueError):
        refs.broadcast_shape((2, 3), (3, 3))
    with pytest.raises(ValueError):
        refs.broadcast_shape((3,), (2, 3))


UNARY_TORCH = {
    "EXP": torch.exp, "LOG": torch.log, "SQRT": torch.sqrt, "RECIP": torch.reciprocal, "ABS": torch.abs,
    "NEG": torch.neg, "SIN": torch.sin, "COS": torch.cos, "TAN": torch.tan, "SINH": torch.sinh, "COSH": torch.cosh,
    "ASIN": torch.asin, "ACOS": torch.acos, "ATAN": torch.atan, "ASINH": torch.asinh, "ACOSH": torch.acosh,
    "ATANH": torch.atanh, "CEIL": torch.ceil, "FLOOR": torch.floor, "ERF": torch.erf, "NOT": torch.logical_not,
    "SIGN": torch.sign, "ROUND": torch.round, "ISINF": torch.isinf,
}


@pytest.mark.parametrize("op", refs.UNARY_OPS)
def test_unary_vs_torch(op, rng):
    x = refs.unary_input(op, rng, (3, 4, 5))
    close(refs.unary(x, op), UNARY_TORCH[op](T(x)), rtol=1e-12, atol=1e-14)


def test_prelu_and_select_vs_torch(rng):
    x = rng.standard_normal((2, 3, 4, 5))
    s = rng.standard_normal((1, 3, 1, 1))
    close(refs.parametric_relu(x, s), F.prelu(T(x), T(s.reshape(3))))
    s2 = rng.standard_normal((1, 3, 4, 1))
    close(refs.parametric_relu(x, s2), torch.where(T(x) >= 0, T(x), T(x) * T(s2)))
    c = rng.random((2, 1, 4, 5)) > 0.5
    b = rng.standard_normal((1, 3, 1, 5))
    close(refs.select(c, x, b), torch.where(T(c), T(x), T(b)))


# ------------------------------------------------------------------------------------------------------------
# scale, LRN, cast
# ------------------------------------------------------------------------------------------------------------

def test_scale_vs_torch(rng):
    x = rng.random((2, 3, 4, 5)) + 0.1
    sc, sh, pw = rng.random(3) + 0.5, rng.random(3), rng.random(3) + 0.5
    ours = refs.scale(x, "CHANNEL", sh, sc, pw, channel_axis=1)
    r = lambda v: T(v.reshape(1, 3, 1, 1))
    close(ours, torch.pow(T(x) * r(sc) + r(sh), r(pw)))
    ours = refs.scale(x, "UNIFORM", np.array([0.5]), np.array([2.0]), np.array([1.5]))
    close(ours, torch.pow(T(x) * 2 + 0.5, 1.5))
    e_sc = rng.random((3, 4, 5))
    ours = refs.scale(x, "ELEMENTWISE", None, e_sc.ravel(), None, channel_axis=1)
    close(ours, T(x) * T(e_sc)[None])
    # implicit batch view: CHW with channel axis 0 == NCHW with channel axis 1
    close(refs.scale(x[0], "CHANNEL", sh, sc, pw, channel_axis=0),
          refs.scale(x, "CHANNEL", sh, sc, pw, channel_axis=1)[0])


@pytest.mark.parametrize("window", [1, 3, 5])
def test_lrn_vs_torch(window, rng):
    x = rng.standard_normal((2, 7, 4, 3))
    alpha, beta, k = 1e-1, 0.75, 2.0
    close(refs.lrn(x, window, alpha, beta, k), F.local_response_norm(T(x), window, alpha, beta, k))


def test_lrn_vs_onnxruntime(rng):
    x = rng.standard_normal((2, 6, 3, 4)).astype(np.float32)
    theirs = run_onnx("LRN", [x], dict(size=3, alpha=0.2, beta=0.6, bias=1.5))
    close(refs.lrn(x, 3, 0.2, 0.6, 1.5), theirs, rtol=1e-5, atol=1e-6)


def test_cast_vs_torch(rng):
    x = rng.standard_normal((3, 4)) * 5
    x[0, :3] = [0.0, -0.0, 2.0]
    close(refs.cast(x, np.int32), T(x).to(torch.int32))
    close(refs.cast(x, np.bool_), T(x).to(torch.bool))
    i = rng.integers(-5, 5, (3, 4)).astype(np.int32)
    close(refs.cast(i, np.float32), T(i).to(torch.float32))
    close(refs.cast(i, np.bool_), T(i).to(torch.bool))
    bb = rng.random((3, 4)) > 0.5
    close(refs.cast(bb, np.float32), T(bb).to(torch.float32))


# ------------------------------------------------------------------------------------------------------------
# fully connected, matrix multiply
# ------------------------------------------------------------------------------------------------------------

def test_fully_connected_vs_torch(rng):
    x = rng.standard_normal((3, 2, 3, 4))
    w = rng.standard_normal((5, 24))
    b = rng.standard_normal(5)
    close(refs.fully_connected(x, w, b), F.linear(T(x).reshape(3, 24), T(w), T(b)).reshape(3, 5, 1, 1))
    close(refs.fully_connected(x[0], w), F.linear(T(x[0]).reshape(24), T(w)).reshape(5, 1, 1))


MM_CASES = [
    # shape a, op0, shape b, op1
    ((3, 4), "NONE", (4, 5), "NONE"),
    ((4, 3), "TRANSPOSE", (4, 5), "NONE"),
    ((3, 4), "NONE", (5, 4), "TRANSPOSE"),
    ((4, 3), "TRANSPOSE", (5, 4), "TRANSPOSE"),
    ((2, 3, 4), "NONE", (2, 4, 5), "NONE"),
    ((2, 1, 3, 4), "NONE", (1, 3, 4, 5), "NONE"),
    ((2, 3, 4), "NONE", (2, 4), "VECTOR"),
    ((2, 4), "VECTOR", (2, 4, 5), "NONE"),
    ((2, 4), "VECTOR", (2, 5, 4), "TRANSPOSE"),
    ((3, 4), "VECTOR", (3, 4), "VECTOR"),
    ((1, 3, 4), "NONE", (2, 4), "VECTOR"),
]


@pytest.mark.parametrize("case", MM_CASES)
def test_matrix_multiply_vs_torch(case, rng):
    sa, op0, sb, op1 = case
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    ta, tb = T(a), T(b)
    if op0 == "TRANSPOSE":
        ta = ta.transpose(-1, -2)
    if op1 == "TRANSPOSE":
        tb = tb.transpose(-1, -2)
    if op0 == "VECTOR":
        ta = ta.unsqueeze(-2)
    if op1 == "VECTOR":
        tb = tb.unsqueeze(-1)
    r = torch.matmul(ta, tb)
    if op1 == "VECTOR":
        r = r.squeeze(-1)
    if op0 == "VECTOR":
        r = r.squeeze(-1) if op1 == "VECTOR" else r.squeeze(-2)
    close(refs.matrix_multiply(a, op0, b, op1), r)


# ------------------------------------------------------------------------------------------------------------
# softmax, reduce, topk, normalization
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_softmax_vs_torch(axis, rng):
    x = rng.standard_normal((2, 3, 4, 5)) * 4
    close(refs.softmax(x, axis), torch.softmax(T(x), axis))


@pytest.mark.parametrize("op", refs.REDUCE_OPS)
@pytest.mark.parametrize("axes", [(0,), (1,), (2, 3), (0, 2), (0, 1, 2, 3)])
@pytest.mark.parametrize("keep", [True, False])
def test_reduce_vs_torch(op, axes, keep, rng):
    x = rng.standard_normal((2, 3, 4, 5))
    t = T(x)
    if op == "SUM":
        r = torch.sum(t, axes, keepdim=keep)
    elif op == "AVG":
        r = torch.mean(t, axes, keepdim=keep)
    elif op == "MAX":
        r = torch.amax(t, axes, keepdim=keep)
    elif op == "MIN":
        r = torch.amin(t, axes, keepdim=keep)
    else:
        r = t
        for a in sorted(axes, reverse=True):
            r = torch.prod(r, a, keepdim=True)
        if not keep:
            r = r.reshape([s for i, s in enumerate(x.shape) if i not in axes])
    close(refs.reduce(x, op, axes, keep), r)


@pytest.mark.parametrize("op", ["MAX", "MIN"])
@pytest.mark.parametrize("axis,k", [(0, 2), (1, 3), (2, 1), (3, 5)])
def test_topk_vs_torch(op, axis, k, rng):
    x = rng.permutation(2 * 3 * 4 * 5).reshape(2, 3, 4, 5).astype(np.float64)
    v, i = refs.topk(x, op, k, axis)
    tv, ti = torch.topk(T(x), k, dim=axis, largest=op == "MAX", sorted=True)
    close(v, tv)
    assert i.dtype == np.int32
    close(i.astype(np.int64), ti)


def test_layer_norm_vs_torch(rng):
    x = rng.standard_normal((2, 3, 4, 5))
    s, b = rng.standard_normal((1, 1, 4, 5)), rng.standard_normal((1, 1, 4, 5))
    close(refs.normalization(x, s, b, (2, 3), 1e-5),
          F.layer_norm(T(x), (4, 5), T(s.reshape(4, 5)), T(b.reshape(4, 5)), 1e-5))
    s1, b1 = rng.standard_normal((1, 1, 1, 5)), rng.standard_normal((1, 1, 1, 5))
    close(refs.normalization(x, s1, b1, (3,), 1e-3),
          F.layer_norm(T(x), (5,), T(s1.reshape(5)), T(b1.reshape(5)), 1e-3))


def test_instance_norm_vs_torch(rng):
    x = rng.standard_normal((2, 3, 4, 5))
    s, b = rng.standard_normal((1, 3, 1, 1)), rng.standard_normal((1, 3, 1, 1))
    close(refs.normalization(x, s, b, (2, 3), 1e-5),
          F.instance_norm(T(x), weight=T(s.reshape(3)), bias=T(b.reshape(3)), eps=1e-5))


@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_group_norm_vs_torch(groups, rng):
    x = rng.standard_normal((2, 6, 4, 3))
    s, b = rng.standard_normal((1, 6, 1, 1)), rng.standard_normal((1, 6, 1, 1))
    ours = refs.normalization(x, s, b, (2, 3), 1e-5, num_groups=groups)
    if groups == 1:  # plain normalization over (2, 3) is instance-norm-like; group norm with G=1 is over (1, 2, 3)
        ours = refs.normalization(x, s, b, (1, 2, 3), 1e-5)
    close(ours, F.group_norm(T(x), groups, T(s.reshape(6)), T(b.reshape(6)), 1e-5))
    # TensorRT's documented group-norm form: scale and bias [1, G, 1, 1], one value per group
    sg, bg = rng.standard_normal((1, groups, 1, 1)), rng.standard_normal((1, groups, 1, 1))
    ours = refs.normalization(x, sg, bg, (2, 3), 1e-5, num_groups=groups)
    if groups == 1:
        ours = refs.normalization(x, sg, bg, (1, 2, 3), 1e-5)
    per_channel = lambda v: T(np.repeat(v.reshape(groups), 6 // groups))
    close(ours, F.group_norm(T(x), groups, per_channel(sg), per_channel(bg), 1e-5))


# ------------------------------------------------------------------------------------------------------------
# shape layers
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2])
def test_concatenation_vs_torch(axis, rng):
    xs = []
    for n in (1, 3, 2):
        shape = [2, 3, 4]
        shape[axis] = n
        xs.append(rng.standard_normal(shape))
    close(refs.concatenation(xs, axis), torch.cat([T(x) for x in xs], axis))


def test_shuffle_vs_torch(rng):
    x = rng.standard_normal((2, 3, 4, 5))
    close(refs.shuffle(x, (0, 2, 3, 1)), T(x).permute(0, 2, 3, 1))
    close(refs.shuffle(x, None, (0, -1, 5)), T(x).reshape(2, 12, 5))
    close(refs.shuffle(x, (0, 3, 1, 2), (0, 0, -1), (2, 0, 1)),
          T(x).permute(0, 3, 1, 2).reshape(2, 5, 12).permute(2, 0, 1))
    close(refs.shuffle(x, None, (4, 0, -1)), T(x).reshape(4, 3, 10))


def test_shuffle_placeholders():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
    # 0 copies the dim at the same index, -1 is inferred
    assert refs.shuffle(x, None, (0, 0, -1)).shape == (2, 3, 20)
    assert refs.shuffle(x, None, (-1, 0, 20)).shape == (2, 3, 20)
    assert refs.shuffle(x, (0, 3, 1, 2), (0, 0, -1)).shape == (2, 5, 12)
    close(refs.shuffle(x, (0, 3, 1, 2), (0, 0, -1)), T(x).permute(0, 3, 1, 2).reshape(2, 5, 12))


SLICE_DEFAULT_CASES = [
    # shape, start, size, stride
    ((2, 5, 7), (0, 1, 0), (2, 3, 4), (1, 1, 2)),
    ((3, 6, 5), (2, 5, 4), (2, 3, 5), (-1, -2, -1)),
    ((2, 4, 9), (1, 0, 8), (1, 2, 3), (1, 3, -4)),
]


@pytest.mark.parametrize("case", SLICE_DEFAULT_CASES)
def test_slice_default_vs_onnxruntime(case, rng):
    shape, start, size, stride = case
    x = rng.standard_normal(shape).astype(np.float32)
    ends = []
    for s, n, st in zip(start, size, stride):
        e = s + n * st
        ends.append(e if e >= 0 else -(2 ** 31))  # ONNX: a negative end would wrap; use "before the start"
    theirs = run_onnx("Slice", [x], const_inputs={1: np.array(start, np.int64), 2: np.array(ends, np.int64),
                                                  3: np.arange(len(shape), dtype=np.int64),
                                                  4: np.array(stride, np.int64)})
    close(refs.slice_(x, start, size, stride), theirs)


def test_slice_modes_vs_torch_pad(rng):
    x = rng.standard_normal((2, 3, 5, 6))
    start = (0, 0, -2, -3)
    size = (2, 3, 5 + 2 + 1, 6 + 3 + 2)
    stride = (1, 1, 1, 1)
    pad = [3, 2, 2, 1]
    close(refs.slice_(x, start, size, stride, "WRAP"), F.pad(T(x), pad, mode="circular"))
    close(refs.slice_(x, start, size, stride, "CLAMP"), F.pad(T(x), pad, mode="replicate"))
    close(refs.slice_(x, start, size, stride, "REFLECT"), F.pad(T(x), pad, mode="reflect"))
    close(refs.slice_(x, start, size, stride, "FILL", fill=1.5), F.pad(T(x), pad, value=1.5))
    # reflection is repeated indefinitely: period 2 * (n - 1)
    v = np.arange(4.0)
    np.testing.assert_array_equal(refs.slice_(v, (-7,), (16,), (1,), "REFLECT"),
                                  [1, 0, 1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2])
    np.testing.assert_array_equal(refs.slice_(v, (5,), (4,), (-2,), "WRAP"), [1, 3, 1, 3])
    with pytest.raises(IndexError):
        refs.slice_(v, (2,), (3,), (1,), "DEFAULT")


@pytest.mark.parametrize("pre,post", [((1, 2), (0, 3)), ((-1, 0), (2, -2)), ((-2, -1), (-1, -3)), ((0, 0), (0, 0))])
def test_padding_vs_torch(pre, post, rng):
    x = rng.standard_normal((2, 3, 5, 6))
    close(refs.padding(x, pre, post), F.pad(T(x), [pre[1], post[1], pre[0], post[0]]))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_vs_torch(axis, rng):
    x = rng.standard_normal((3, 4, 5))
    idx = rng.integers(0, x.shape[axis], (2, 3))
    theirs = torch.index_select(T(x), axis, T(idx.ravel())).reshape(x.shape[:axis] + (2, 3) + x.shape[axis + 1:])
    close(refs.gather(x, idx, axis), theirs)
    close(refs.gather(x, idx, axis),
          run_onnx("Gather", [x.astype(np.float32), idx.astype(np.int32)], dict(axis=axis)), rtol=1e-6, atol=1e-6)


def test_gather_elementwise_dims(rng):
    x = rng.standard_normal((3, 4, 5))
    idx = rng.integers(0, 5, (3, 2))
    ours = refs.gather(x, idx, 2, num_elementwise_dims=1)
    assert ours.shape == (3, 4, 2)
    theirs = torch.stack([torch.index_select(T(x[b]), 1, T(idx[b])) for b in range(3)])
    close(ours, theirs)
    idx = rng.integers(0, 4, (3, 2, 2))
    ours = refs.gather(x, idx, 1, num_elementwise_dims=1)
    assert ours.shape == (3, 2, 2, 5)
    close(ours, np.stack([x[b][idx[b]] for b in range(3)]))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_elements_vs_torch(axis, rng):
    x = rng.standard_normal((3, 4, 5))
    ishape = list(x.shape)
    ishape[axis] = 2
    idx = rng.integers(0, x.shape[axis], ishape)
    close(refs.gather_elements(x, idx, axis), torch.gather(T(x), axis, T(idx)))


@pytest.mark.parametrize("nb,ishape", [(0, (2, 3, 2)), (0, (4, 3)), (1, (3, 2, 1)), (1, (3, 2))])
def test_gather_nd_vs_onnxruntime(nb, ishape, rng):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    q = ishape[-1]
    idx = np.stack([rng.integers(0, x.shape[nb + j], ishape[:-1]) for j in range(q)], -1).astype(np.int64)
    theirs = run_onnx("GatherND", [x, idx], dict(batch_dims=nb))
    close(refs.gather_nd(x, idx, nb), theirs)


# ------------------------------------------------------------------------------------------------------------
# resize
# ------------------------------------------------------------------------------------------------------------

ORT_COORD = {"ALIGN_CORNERS": "align_corners", "ASYMMETRIC": "asymmetric", "HALF_PIXEL": "half_pixel"}
ORT_ROUND = {"HALF_UP": "round_prefer_ceil", "HALF_DOWN": "round_prefer_floor", "FLOOR": "floor", "CEIL": "ceil"}


@pytest.mark.parametrize("coord", ["ALIGN_CORNERS", "ASYMMETRIC", "HALF_PIXEL"])
@pytest.mark.parametrize("rounding", ["HALF_UP", "HALF_DOWN", "FLOOR", "CEIL"])
@pytest.mark.parametrize("out_hw", [(7, 9), (3, 2), (8, 12)])
def test_resize_nearest_vs_onnxruntime(coord, rounding, out_hw, rng):
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    out = (2, 3) + out_hw
    theirs = run_onnx("Resize", [x], dict(mode="nearest", coordinate_transformation_mode=ORT_COORD[coord],
                                          nearest_mode=ORT_ROUND[rounding]),
                      const_inputs={1: None, 2: None, 3: np.array(out, np.int64)})
    close(refs.resize(x, out, "NEAREST", coord, rounding=rounding), theirs)


@pytest.mark.parametrize("coord", ["ALIGN_CORNERS", "ASYMMETRIC", "HALF_PIXEL"])
@pytest.mark.parametrize("out_hw", [(7, 9), (3, 2), (8, 12), (4, 1)])
def test_resize_linear_vs_onnxruntime(coord, out_hw, rng):
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    out = (2, 3) + out_hw
    theirs = run_onnx("Resize", [x], dict(mode="linear", coordinate_transformation_mode=ORT_COORD[coord]),
                      const_inputs={1: None, 2: None, 3: np.array(out, np.int64)})
    close(refs.resize(x, out, "LINEAR", coord), theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("align", [True, False])
def test_resize_linear_vs_torch(align, rng):
    x = rng.standard_normal((2, 3, 5, 4))
    for out in [(9, 7), (3, 2), (10, 8)]:
        theirs = F.interpolate(T(x), size=out, mode="bilinear", align_corners=align)
        close(refs.resize(x, (2, 3) + out, "LINEAR", "ALIGN_CORNERS" if align else "HALF_PIXEL"), theirs)
    x3 = rng.standard_normal((1, 2, 3, 4, 5))
    theirs = F.interpolate(T(x3), size=(5, 3, 7), mode="trilinear", align_corners=align)
    close(refs.resize(x3, (1, 2, 5, 3, 7), "LINEAR", "ALIGN_CORNERS" if align else "HALF_PIXEL"), theirs)


def test_resize_nearest_vs_torch(rng):
    x = rng.standard_normal((2, 3, 5, 4))
    for out in [(10, 8), (7, 9), (2, 3)]:
        # torch "nearest" = asymmetric + floor, "nearest-exact" = half_pixel + round half up
        close(refs.resize(x, (2, 3) + out, "NEAREST", "ASYMMETRIC", rounding="FLOOR"),
              F.interpolate(T(x), size=out, mode="nearest"))
        close(refs.resize(x, (2, 3) + out, "NEAREST", "HALF_PIXEL", rounding="HALF_UP"),
              F.interpolate(T(x), size=out, mode="nearest-exact"))


def test_resize_scales_and_single_pixel(rng):
    x = rng.standard_normal((1, 2, 4, 6))
    scales = (1, 1, 1.5, 0.5)
    out = refs.resize_out_shape(x.shape, scales)
    assert out == (1, 2, 6, 3)
    theirs = run_onnx("Resize", [x.astype(np.float32)], dict(mode="linear", coordinate_transformation_mode="half_pixel"),
                      const_inputs={1: None, 2: np.array(scales, np.float32)})
    close(refs.resize(x, out, "LINEAR", "HALF_PIXEL", scales=scales), theirs, rtol=1e-5, atol=1e-5)
    # one output pixel: FORMULA samples the centre with half_pixel, UPPER takes the first pixel
    y = refs.resize(x, (1, 2, 1, 1), "LINEAR", "HALF_PIXEL", selector="FORMULA")
    close(y, x[:, :, 1:3, 2:4].mean(axis=(2, 3), keepdims=True))
    y = refs.resize(x, (1, 2, 1, 1), "LINEAR", "HALF_PIXEL", selector="UPPER")
    close(y, x[:, :, :1, :1])


@pytest.mark.parametrize("coord", ["ALIGN_CORNERS", "ASYMMETRIC", "HALF_PIXEL"])
@pytest.mark.parametrize("out_hw", [(7, 9), (3, 2), (8, 12)])
@pytest.mark.parametrize("coeff,exclude", [(-0.75, False), (-0.5, True), (-0.5, False)])
def test_resize_cubic_vs_onnxruntime(coord, out_hw, coeff, exclude, rng):
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    out = (2, 3) + out_hw
    theirs = run_onnx("Resize", [x], dict(mode="cubic", coordinate_transformation_mode=ORT_COORD[coord],
                                          cubic_coeff_a=coeff, exclude_outside=int(exclude)),
                      const_inputs={1: None, 2: None, 3: np.array(out, np.int64)})
    close(refs.resize(x, out, "CUBIC", coord, cubic_coeff=coeff, exclude_outside=exclude), theirs,
          rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("align", [True, False])
def test_resize_cubic_vs_torch(align, rng):
    x = rng.standard_normal((2, 3, 5, 4))
    for out in [(9, 7), (3, 2), (10, 8)]:
        theirs = F.interpolate(T(x), size=out, mode="bicubic", align_corners=align)
        close(refs.resize(x, (2, 3) + out, "CUBIC", "ALIGN_CORNERS" if align else "HALF_PIXEL"), theirs)


def test_lrn_matches_tensorrt_documented_example():
    """The worked example of TensorRT's LRN operator page: window 3, alpha 1, beta 1, k 0.1 over channels 0..4
    (alpha is divided by the window size)."""
    x = np.broadcast_to(np.arange(5.0).reshape(1, 5, 1, 1), (1, 5, 2, 2))
    expected = np.array([0.0, 0.56603765, 0.4195804, 0.3071672, 0.47430828])
    close(refs.lrn(x, 3, 1.0, 1.0, 0.1)[0, :, 0, 0], expected, rtol=1e-6, atol=1e-7)


def test_slice_reflect_matches_tensorrt_formula():
    """TensorRT: z = 2d - 2 - c if c >= d else c, where c = mod(|x|, 2d - 2)."""
    for d in (2, 3, 5):
        xs = np.arange(-13, 14)
        c = np.mod(np.abs(xs), 2 * d - 2)
        z = np.where(c >= d, 2 * d - 2 - c, c)
        idx, _ = refs.slice_indices(d, -13, 27, 1, "REFLECT")
        np.testing.assert_array_equal(idx, z)
