"""Builder passes (csrc/builder/passes/): the pass table, its switches (IBuilderConfig.set_pass_enabled,
disabled_passes, TRTLITE_DISABLE_PASSES) and the GELU fusion.

The main test builds a set of networks with every pass on, with each pass off in turn, and at
builder_optimization_level 0 (reference kernels, no fusion), and compares every engine with a numpy float64
reference (tests/refs.py).  Each network names the passes that must shrink it, which test_pass_fires checks by
counting engine steps with the pass on and off.
"""
import json
import math

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close

PASSES = [name for name, _, _ in trt.builder_passes()]
E = trt.ElementWiseOperation
EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def scalar(net, v, rank):
    """A one-element FLOAT constant of the given rank (broadcasts against any tensor of that rank)."""
    return net.add_constant((1,) * rank, np.array([v], np.float32).reshape((1,) * rank)).get_output(0)


def ew(net, a, b, op, name=None):
    layer = net.add_elementwise(a, b, op)
    if name:
        layer.name = name
    return layer.get_output(0)


def gelu_erf_ref(x):
    x = np.asarray(x, np.float64)
    return 0.5 * x * (1.0 + refs._erf(x / math.sqrt(2.0)))


def gelu_tanh_ref(x):
    x = np.asarray(x, np.float64)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(net, x, rank, scale="div", half="pre", swap=False, half_div=False, prefix="g"):
    """x * 0.5 * (1 + erf(x / sqrt(2))) as elementwise layers, in one of the forms exporters write.
    scale: "div" (x / sqrt(2)) or "mul" (x * (1/sqrt(2))); half: "pre" ((x*0.5) * a), "post" ((x*a) * 0.5),
    "inner" (x * (a*0.5)); swap: the other operand order everywhere; half_div: 0.5 as a division by 2."""
    def op2(a, b, op, name):
        return ew(net, b, a, op, prefix + name) if swap and op != E.DIV else ew(net, a, b, op, prefix + name)

    def halve(t, name):
        if half_div:
            return ew(net, t, scalar(net, 2.0, rank), E.DIV, prefix + name)
        return op2(t, scalar(net, 0.5, rank), E.PROD, name)

    if scale == "div":
        d = ew(net, x, scalar(net, math.sqrt(2.0), rank), E.DIV, prefix + "_div")
    else:
        d = op2(x, scalar(net, 1.0 / math.sqrt(2.0), rank), E.PROD, "_div")
    erf = net.add_unary(d, trt.UnaryOperation.ERF)
    erf.name = prefix + "_erf"
    a = op2(erf.get_output(0), scalar(net, 1.0, rank), E.SUM, "_add")
    if half == "pre":
        return op2(halve(x, "_half"), a, E.PROD, "_mul")
    if half == "post":
        return halve(op2(x, a, E.PROD, "_mul"), "_half")
    return op2(x, halve(a, "_half"), E.PROD, "_mul")


def gelu_tanh(net, x, rank, cube="pow", half="post", swap=False, prefix="g"):
    """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))); cube: "pow", "x*(x*x)" or "(x*x)*x"."""
    def op2(a, b, op, name):
        return ew(net, b, a, op, prefix + name) if swap else ew(net, a, b, op, prefix + name)

    if cube == "pow":
        c = ew(net, x, scalar(net, 3.0, rank), E.POW, prefix + "_pow")
    elif cube == "x*(x*x)":
        c = ew(net, x, ew(net, x, x, E.PROD, prefix + "_sq"), E.PROD, prefix + "_cube")
    else:
        c = ew(net, ew(net, x, x, E.PROD, prefix + "_sq"), x, E.PROD, prefix + "_cube")
    inner = op2(x, op2(scalar(net, 0.044715, rank), c, E.PROD, "_kappa"), E.SUM, "_sum")
    u = op2(scalar(net, math.sqrt(2.0 / math.pi), rank), inner, E.PROD, "_beta")
    th = net.add_activation(u, trt.ActivationType.TANH)
    th.name = prefix + "_tanh"
    a = op2(th.get_output(0), scalar(net, 1.0, rank), E.SUM, "_add")
    if half == "pre":
        return op2(op2(scalar(net, 0.5, rank), x, E.PROD, "_half"), a, E.PROD, "_mul")
    if half == "post":
        return op2(op2(x, a, E.PROD, "_mul"), scalar(net, 0.5, rank), E.PROD, "_half")
    return op2(x, op2(a, scalar(net, 0.5, rank), E.PROD, "_half"), E.PROD, "_mul")


# ------------------------------------------------------------------------------------------------------------
# the networks: make(network, rng) -> (inputs {name: array}, outputs [tensor], references [float64 array])
# implicit-batch networks get inputs with the batch first and declare them without it
# ------------------------------------------------------------------------------------------------------------

CASES = {}


def case(name, explicit=True, fires=()):
    def reg(fn):
        CASES[name] = (fn, explicit, tuple(fires))
        return fn
    return reg


def _conv(net, t, w, b, pad, explicit):
    if explicit:
        layer = net.add_convolution_nd(t, w.shape[0], tuple(w.shape[2:]), w, b)
        layer.padding_nd = pad
    else:  # TensorRT 7's 2D API, on CHW
        layer = net.add_convolution(t, w.shape[0], tuple(w.shape[2:]), w, b)
        layer.padding = pad
    return layer.get_output(0)


def _conv_bn_relu_residual(net, rng, explicit):
    n = 2 if explicit else 3
    x = randn(rng, (n, 3, 9, 7))
    w1, b1 = randn(rng, (4, 3, 3, 3), 0.4), randn(rng, 4)
    w2, b2 = randn(rng, (4, 3, 1, 1), 0.4), randn(rng, 4)
    sc, sh = (rng.uniform(0.5, 1.5, 4)).astype(np.float32), randn(rng, 4)
    t = net.add_input("x", trt.float32, x.shape if explicit else x.shape[1:])
    c1 = _conv(net, t, w1, b1, (1, 1), explicit)
    bn = net.add_scale(c1, trt.ScaleMode.CHANNEL, shift=sh, scale=sc).get_output(0)
    skip = _conv(net, t, w2, b2, (0, 0), explicit)
    y = net.add_activation(ew(net, bn, skip, E.SUM), trt.ActivationType.RELU).get_output(0)
    r1 = refs.scale(refs.convolution(x, w1, b1, None, (1, 1), (1, 1)), "CHANNEL", sh, sc)
    ref = np.maximum(r1 + refs.convolution(x, w2, b2), 0.0)
    return {"x": x}, [y], [ref]


@case("conv_bn_relu_residual", fires=("fold_scale", "fuse_epilogue"))
def _cbr_explicit(net, rng):
    return _conv_bn_relu_residual(net, rng, True)


@case("conv_bn_relu_residual_implicit", explicit=False, fires=("fold_scale", "fuse_epilogue"))
def _cbr_implicit(net, rng):
    return _conv_bn_relu_residual(net, rng, False)


@case("fc_scale_implicit", explicit=False, fires=("fold_scale", "fuse_epilogue"))
def _fc_scale(net, rng):
    x = randn(rng, (3, 5, 2, 2))
    w, b = randn(rng, (6, 20), 0.3), randn(rng, 6)
    sc, sh = (rng.uniform(0.5, 1.5, 6)).astype(np.float32), randn(rng, 6)
    t = net.add_input("x", trt.float32, x.shape[1:])
    f = net.add_fully_connected(t, 6, w, b).get_output(0)
    s = net.add_scale(f, trt.ScaleMode.CHANNEL, shift=sh, scale=sc).get_output(0)
    y = net.add_activation(s, trt.ActivationType.SIGMOID).get_output(0)
    ref = refs.scale(refs.fully_connected(x, w, b), "CHANNEL", sh, sc)
    return {"x": x}, [y], [1.0 / (1.0 + np.exp(-ref))]


@case("bn_relu_conv1x1", fires=("fuse_preact",))
def _bn_relu_conv1x1(net, rng):
    """A batch norm + ReLU read only by a 1x1 convolution (DenseNet's pre-activation): its input transform."""
    x = randn(rng, (2, 13, 5, 6))
    w, b = randn(rng, (7, 13, 1, 1), 0.3), randn(rng, 7)
    sc, sh = randn(rng, 13), randn(rng, 13)
    t = net.add_input("x", trt.float32, x.shape)
    s = net.add_scale(t, trt.ScaleMode.CHANNEL, shift=sh, scale=sc).get_output(0)
    r = net.add_activation(s, trt.ActivationType.RELU).get_output(0)
    y = _conv(net, r, w, b, (0, 0), True)
    ref = refs.convolution(np.maximum(refs.scale(x, "CHANNEL", sh, sc), 0.0), w, b)
    return {"x": x}, [y], [ref]


@case("conv_silu_hardswish_mish", fires=("fuse_pointwise", "fuse_epilogue"))
def _conv_gated(net, rng):
    x = randn(rng, (1, 3, 9, 10))
    w1, b1 = randn(rng, (5, 3, 3, 3), 0.4), randn(rng, 5)
    w2, b2 = randn(rng, (4, 5, 1, 1), 0.4), randn(rng, 4)
    t = net.add_input("x", trt.float32, x.shape)
    c1 = _conv(net, t, w1, b1, (1, 1), True)
    y1 = ew(net, c1, net.add_activation(c1, trt.ActivationType.SIGMOID).get_output(0), E.PROD)
    c2 = _conv(net, y1, w2, b2, (0, 0), True)
    hs = net.add_activation(c2, trt.ActivationType.HARD_SIGMOID)
    hs.alpha, hs.beta = 1.0 / 6.0, 0.5
    y2 = ew(net, hs.get_output(0), c2, E.PROD)
    sp = net.add_activation(y2, trt.ActivationType.SOFTPLUS)
    sp.alpha, sp.beta = 1.0, 1.0
    y3 = ew(net, y2, net.add_activation(sp.get_output(0), trt.ActivationType.TANH).get_output(0), E.PROD)
    r1 = refs.convolution(x, w1, b1, None, (1, 1), (1, 1))
    r1 = r1 * refs.activation(r1, "SIGMOID")
    r2 = refs.convolution(r1, w2, b2)
    r2 = r2 * refs.activation(r2, "HARD_SIGMOID", 1.0 / 6.0, 0.5)
    return {"x": x}, [y3], [r2 * np.tanh(refs.activation(r2, "SOFTPLUS", 1.0, 1.0))]


@case("constant_subgraph", fires=("constant_fold",))
def _constants(net, rng):
    x = randn(rng, (2, 3, 4))
    c1, c2 = randn(rng, (1, 3, 4)), randn(rng, (1, 12))
    t = net.add_input("x", trt.float32, x.shape)
    k1 = net.add_constant(c1.shape, c1).get_output(0)
    k2 = net.add_constant(c2.shape, c2).get_output(0)
    sh = net.add_shuffle(k2)
    sh.reshape_dims = (1, 3, 4)
    k = ew(net, net.add_unary(ew(net, k1, sh.get_output(0), E.PROD), trt.UnaryOperation.ABS).get_output(0), k1,
           E.SUM)
    y = ew(net, t, k, E.PROD)
    kr = np.abs(c1.astype(np.float64) * c2.reshape(1, 3, 4)) + c1
    return {"x": x}, [y], [x * kr]


@case("identities", fires=("drop_identity", "fuse_epilogue"))
def _identities(net, rng):
    # conv -> identity -> relu: the ReLU joins the convolution only once the copy is gone; an identity on the
    # network input, one whose output is a network output (kept: its buffer must hold the value) and one that
    # converts to half (kept: not a no-op) around it
    x = randn(rng, (1, 3, 6, 5))
    w, b = randn(rng, (4, 3, 3, 3), 0.4), randn(rng, 4)
    t = net.add_input("x", trt.float32, x.shape)
    t0 = net.add_identity(t).get_output(0)
    c = _conv(net, t0, w, b, (1, 1), True)
    i1 = net.add_identity(net.add_identity(c).get_output(0)).get_output(0)
    y = net.add_activation(i1, trt.ActivationType.RELU).get_output(0)
    y_out = net.add_identity(y).get_output(0)
    h = net.add_identity(t)
    h.set_output_type(0, trt.float16)
    h.precision = trt.float16
    a = net.add_unary(net.add_identity(h.get_output(0)).get_output(0), trt.UnaryOperation.ABS).get_output(0)
    back = net.add_identity(a)
    back.set_output_type(0, trt.float32)
    y2 = back.get_output(0)
    r = refs.convolution(x, w, b, None, (1, 1), (1, 1))
    return {"x": x}, [y_out, y, y2], [np.maximum(r, 0.0), np.maximum(r, 0.0), np.abs(x.astype(np.float16)).astype(np.float64)]


@case("dead_branch", fires=("dead_layers",))
def _dead(net, rng):
    x = randn(rng, (2, 5))
    t = net.add_input("x", trt.float32, x.shape)
    y = net.add_activation(t, trt.ActivationType.RELU).get_output(0)
    dead = net.add_activation(t, trt.ActivationType.SIGMOID).get_output(0)
    net.add_unary(dead, trt.UnaryOperation.EXP)  # never reaches an output
    return {"x": x}, [y], [np.maximum(x, 0.0)]


def _gelu_case(name, make, ref, **kw):
    @case(name, fires=("fuse_gelu",))
    def _c(net, rng):
        x = randn(rng, (2, 3, 5), 2.0)
        t = net.add_input("x", trt.float32, x.shape)
        return {"x": x}, [make(net, t, 3, **kw)], [ref(x)]


_gelu_case("gelu_erf_div_pre", gelu_erf, gelu_erf_ref)                       # the form the ONNX parser matched
_gelu_case("gelu_erf_mul_post_swapped", gelu_erf, gelu_erf_ref, scale="mul", half="post", swap=True)
_gelu_case("gelu_erf_div_inner_half_div", gelu_erf, gelu_erf_ref, half="inner", half_div=True)
_gelu_case("gelu_erf_mul_pre_swapped_half_div", gelu_erf, gelu_erf_ref, scale="mul", half="pre", swap=True,
           half_div=True)
_gelu_case("gelu_tanh_pow_post", gelu_tanh, gelu_tanh_ref)                   # torch.nn.GELU(approximate="tanh")
_gelu_case("gelu_tanh_cube_pre_swapped", gelu_tanh, gelu_tanh_ref, cube="x*(x*x)", half="pre", swap=True)
_gelu_case("gelu_tanh_sqcube_inner", gelu_tanh, gelu_tanh_ref, cube="(x*x)*x", half="inner")


def layernorm_ref(x, axes, eps, gamma=None, beta=None):
    x = np.asarray(x, np.float64)
    m = x.mean(axis=axes, keepdims=True)
    y = (x - m) / np.sqrt(((x - m) ** 2).mean(axis=axes, keepdims=True) + eps)
    return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)


def layernorm(net, x, rank, axes, eps, gamma=None, beta=None, square="pow", div="div", swap=False, prefix="ln"):
    """LayerNorm as PyTorch exports it at opsets 11-16 (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul,
    Add); square: "pow" or "mul" (d * d); div: "div" or "recip" (d * Reciprocal(std)); swap: other operand orders."""
    mask = sum(1 << a for a in axes)

    def mean(t, name):
        layer = net.add_reduce(t, trt.ReduceOperation.AVG, mask, True)
        layer.name = prefix + name
        return layer.get_output(0)

    def op2(a, b, op, name):
        return ew(net, b, a, op, prefix + name) if swap else ew(net, a, b, op, prefix + name)

    d = ew(net, x, mean(x, "_mean"), E.SUB, prefix + "_sub")
    sq = ew(net, d, scalar(net, 2.0, rank), E.POW, prefix + "_pow") if square == "pow" else ew(net, d, d, E.PROD,
                                                                                             prefix + "_sq")
    v = op2(mean(sq, "_var"), scalar(net, eps, rank), E.SUM, "_addeps")
    sd = net.add_unary(v, trt.UnaryOperation.SQRT)
    sd.name = prefix + "_sqrt"
    if div == "div":
        n = ew(net, d, sd.get_output(0), E.DIV, prefix + "_div")
    else:
        r = net.add_unary(sd.get_output(0), trt.UnaryOperation.RECIP)
        r.name = prefix + "_recip"
        n = op2(d, r.get_output(0), E.PROD, "_norm")
    if gamma is not None:
        n = op2(n, net.add_constant(gamma.shape, gamma).get_output(0), E.PROD, "_gamma")
    if beta is not None:
        n = op2(n, net.add_constant(beta.shape, beta).get_output(0), E.SUM, "_beta")
    return n


def _layernorm_case(name, shape, axes, affine=True, explicit=True, **kw):
    @case(name, explicit=explicit, fires=("fuse_layernorm",))
    def _c(net, rng):
        x = randn(rng, shape, 2.0) + 3.0
        pshape = tuple(shape[a] if a in axes else 1 for a in range(len(shape)))
        gamma = randn(rng, pshape) if affine else None
        beta = randn(rng, pshape) if affine else None
        t = net.add_input("x", trt.float32, shape if explicit else shape[1:])
        r = len(shape) if explicit else len(shape) - 1
        sh = (lambda a: a) if explicit else (lambda a: a.reshape(a.shape[1:]))
        net_axes = axes if explicit else tuple(a - 1 for a in axes)
        y = layernorm(net, t, r, net_axes, 1e-5, None if gamma is None else sh(gamma), None if beta is None
                      else sh(beta), **kw)
        return {"x": x}, [y], [layernorm_ref(x, axes, 1e-5, gamma, beta)]


_layernorm_case("layernorm_pow_div", (2, 7, 48), (2,))                       # torch.nn.LayerNorm at opset 11-16
_layernorm_case("layernorm_mul_recip_swapped", (3, 5, 33), (2,), square="mul", div="recip", swap=True)
_layernorm_case("layernorm_two_axes_no_affine", (2, 3, 4, 9), (2, 3), affine=False)
_layernorm_case("layernorm_implicit", (3, 6, 20), (2,), explicit=False)


@case("layernorm_output_is_also_output")
def _ln_out(net, rng):
    """The variance is a network output too: no fusion, both outputs right."""
    x = randn(rng, (2, 4, 16))
    t = net.add_input("x", trt.float32, x.shape)
    y = layernorm(net, t, 3, (2,), 1e-5)
    var = next(net.get_layer(i) for i in range(net.num_layers) if net.get_layer(i).name == "ln_var")
    xm = x.astype(np.float64) - x.mean(axis=2, keepdims=True)
    return {"x": x}, [y, var.get_output(0)], [layernorm_ref(x, (2,), 1e-5), (xm ** 2).mean(axis=2, keepdims=True)]


@case("matmul_gelu", fires=("fuse_gelu", "fuse_epilogue"))
def _mm_gelu(net, rng):
    """A transformer MLP: x @ W then GELU; the fused GELU joins the matrix multiply's epilogue."""
    x, w = randn(rng, (4, 6)), randn(rng, (6, 8), 0.5)
    t = net.add_input("x", trt.float32, x.shape)
    k = net.add_constant(w.shape, w).get_output(0)
    m = net.add_matrix_multiply(t, trt.MatrixOperation.NONE, k, trt.MatrixOperation.NONE).get_output(0)
    return {"x": x}, [gelu_erf(net, m, 2)], [gelu_erf_ref(x.astype(np.float64) @ w)]


@case("gelu_erf_implicit", explicit=False, fires=("fuse_gelu",))
def _gelu_implicit(net, rng):
    x = randn(rng, (3, 4, 5), 2.0)
    t = net.add_input("x", trt.float32, x.shape[1:])
    return {"x": x}, [gelu_erf(net, t, 2, half="post")], [gelu_erf_ref(x)]


@case("gelu_two_in_a_row", fires=("fuse_gelu",))
def _gelu_twice(net, rng):
    x = randn(rng, (3, 7))
    t = net.add_input("x", trt.float32, x.shape)
    y = gelu_tanh(net, gelu_erf(net, t, 2, prefix="a"), 2, prefix="b")
    return {"x": x}, [y], [gelu_tanh_ref(gelu_erf_ref(x))]


@case("gelu_erf_output_is_also_output")
def _gelu_erf_out(net, rng):
    """The erf result is a network output too: no fusion (it must keep its value), both outputs right."""
    x = randn(rng, (2, 6))
    t = net.add_input("x", trt.float32, x.shape)
    y = gelu_erf(net, t, 2)
    erf = next(net.get_layer(i) for i in range(net.num_layers) if net.get_layer(i).name == "g_erf")
    return {"x": x}, [y, erf.get_output(0)], [gelu_erf_ref(x), refs._erf(x / math.sqrt(2.0))]


@case("gelu_erf_intermediate_shared")
def _gelu_shared(net, rng):
    """1 + erf(...) also feeds another layer: no fusion."""
    x = randn(rng, (2, 6))
    t = net.add_input("x", trt.float32, x.shape)
    y = gelu_erf(net, t, 2)
    add = next(net.get_layer(i) for i in range(net.num_layers) if net.get_layer(i).name == "g_add")
    z = ew(net, add.get_output(0), add.get_output(0), E.PROD)
    a = 1.0 + refs._erf(x / math.sqrt(2.0))
    return {"x": x}, [y, z], [gelu_erf_ref(x), a * a]


@case("gelu_erf_broadcasting_constant")
def _gelu_broadcast(net, rng):
    """sqrt(2) is a [2, 1] constant: the result is [2, 3], not x's [1, 3], so it is not a GELU of x."""
    x = randn(rng, (1, 3))
    t = net.add_input("x", trt.float32, x.shape)
    s2 = net.add_constant((2, 1), np.full((2, 1), math.sqrt(2.0), np.float32)).get_output(0)
    d = ew(net, t, s2, E.DIV)
    a = ew(net, net.add_unary(d, trt.UnaryOperation.ERF).get_output(0), scalar(net, 1.0, 2), E.SUM)
    y = ew(net, ew(net, t, scalar(net, 0.5, 2), E.PROD), a, E.PROD)
    return {"x": x}, [y], [np.broadcast_to(gelu_erf_ref(x), (2, 3))]


@case("gelu_erf_wrong_half")
def _gelu_wrong_half(net, rng):
    """0.45 instead of 0.5 is not GELU: no fusion, the layers compute what they say."""
    x = randn(rng, (2, 6))
    t = net.add_input("x", trt.float32, x.shape)
    d = ew(net, t, scalar(net, math.sqrt(2.0), 2), E.DIV)
    a = ew(net, net.add_unary(d, trt.UnaryOperation.ERF).get_output(0), scalar(net, 1.0, 2), E.SUM)
    y = ew(net, ew(net, t, scalar(net, 0.45, 2), E.PROD), a, E.PROD)
    return {"x": x}, [y], [0.45 * x * (1.0 + refs._erf(x / math.sqrt(2.0)))]


def _transpose(net, t, perm):
    layer = net.add_shuffle(t)
    layer.first_transpose = perm
    return layer.get_output(0)


@case("attention_masked", fires=("fuse_attention",))
def _attention_masked(net, rng):
    """softmax(Q K^T / sqrt(d) + mask) V with K^T as a transpose layer, a broadcast mask: one attention step."""
    q, k, v = randn(rng, (2, 3, 7, 16)), randn(rng, (2, 3, 9, 16)), randn(rng, (2, 3, 9, 5))
    m = np.where(rng.random((2, 1, 1, 9)) < 0.2, -1e4, 0).astype(np.float32)
    tq, tk, tv, tm = (net.add_input(n, trt.float32, a.shape) for n, a in (("q", q), ("k", k), ("v", v), ("m", m)))
    s = net.add_matrix_multiply(tq, trt.MatrixOperation.NONE, _transpose(net, tk, (0, 1, 3, 2)),
                                trt.MatrixOperation.NONE).get_output(0)
    s = ew(net, ew(net, s, scalar(net, 4.0, 4), E.DIV), tm, E.SUM)
    sm = net.add_softmax(s)
    sm.axes = 1 << 3
    y = net.add_matrix_multiply(sm.get_output(0), trt.MatrixOperation.NONE, tv, trt.MatrixOperation.NONE)
    ref = refs.softmax(q.astype(np.float64) @ np.swapaxes(k, 2, 3) / 4.0 + m, 3) @ v
    return {"q": q, "k": k, "v": v, "m": m}, [y.get_output(0)], [ref]


@case("linear_bias_gelu", fires=("fuse_linear",))
def _linear_bias_gelu(net, rng):
    """x @ W + b -> GELU with a constant W [1, K, N] and bias [1, 1, N]: one linear step (fuse_linear)."""
    x, w, b = randn(rng, (1, 6, 10)), randn(rng, (1, 10, 7), 0.3), randn(rng, (1, 1, 7), 0.1)
    tx = net.add_input("x", trt.float32, x.shape)
    y = net.add_matrix_multiply(tx, trt.MatrixOperation.NONE, net.add_constant(w.shape, w).get_output(0),
                                trt.MatrixOperation.NONE).get_output(0)
    y = ew(net, y, net.add_constant(b.shape, b).get_output(0), E.SUM)
    y = net.add_activation(y, trt.ActivationType.GELU_ERF).get_output(0)
    return {"x": x}, [y], [gelu_erf_ref(x.astype(np.float64) @ w[0] + b)]


@case("transpose_fold", fires=("fold_transpose",))
def _transpose_fold(net, rng):
    """x @ w^T with w^T a transpose layer (folded into op1), and two transposes of y that compose into one."""
    x, w = randn(rng, (2, 5, 6)), randn(rng, (2, 4, 6))
    tx, tw = net.add_input("x", trt.float32, x.shape), net.add_input("w", trt.float32, w.shape)
    y = net.add_matrix_multiply(tx, trt.MatrixOperation.NONE, _transpose(net, tw, (0, 2, 1)),
                                trt.MatrixOperation.NONE).get_output(0)
    z = _transpose(net, _transpose(net, y, (1, 0, 2)), (0, 2, 1))
    ref = x.astype(np.float64) @ np.swapaxes(w, 1, 2)
    return {"x": x, "w": w}, [z], [np.transpose(np.transpose(ref, (1, 0, 2)), (0, 2, 1))]


@case("transpose_cancel", fires=("fold_transpose",))
def _transpose_cancel(net, rng):
    """Two transposes that cancel out vanish: relu reads x."""
    x = randn(rng, (3, 4, 5))
    t = net.add_input("x", trt.float32, x.shape)
    y = _transpose(net, _transpose(net, t, (2, 0, 1)), (1, 2, 0))
    return {"x": x}, [net.add_activation(y, trt.ActivationType.RELU).get_output(0)], [np.maximum(x, 0)]


@case("qdq_conv_relu", fires=("fuse_qdq",))
def _qdq_conv_relu(net, rng):
    """DQ(Q(x)) -> convolution with int8-grid weights -> ReLU: one int8 layer (tests/test_quantize_fuse.py has more)."""
    x = randn(rng, (2, 3, 7, 6))
    q = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.float64)
    q[:, 0, 0, 0] = 127
    sw = rng.uniform(0.005, 0.02, 4)
    w = (q * sw.reshape(-1, 1, 1, 1)).astype(np.float32)
    b = randn(rng, 4)
    t = net.add_input("x", trt.float32, x.shape)
    s = net.add_constant((1,), np.array([0.03], np.float32)).get_output(0)
    dq = net.add_dequantize(net.add_quantize(t, s).get_output(0), s).get_output(0)
    y = net.add_activation(_conv(net, dq, w, b, (1, 1), True), trt.ActivationType.RELU).get_output(0)
    sx = np.float64(np.float32(0.03))
    xf = np.clip(np.rint(x.astype(np.float64) / sx), -128, 127) * sx
    return {"x": x}, [y], [np.maximum(refs.convolution(xf, w.astype(np.float64), b, None, (1, 1), (1, 1)), 0.0)]


@case("fake_quant_of_quantized", fires=("drop_fake_quant",))
def _fake_quant_of_quantized(net, rng):
    """Q -> DQ pairs of one scale after a reshape + transpose, a gather and a concatenation of dequantized codes of
    that scale give back their input: removed; a pair of another scale and one after an elementwise sum stay."""
    x = randn(rng, (2, 3, 4, 5)) * 3.0
    t = net.add_input("x", trt.float32, x.shape)
    consts = {}

    def fq(v, sc):
        if sc not in consts:
            consts[sc] = net.add_constant((1,), np.array([sc], np.float32)).get_output(0)
        return net.add_dequantize(net.add_quantize(v, consts[sc]).get_output(0), consts[sc]).get_output(0)

    def fq_ref(v, sc):
        sx = np.float64(np.float32(sc))
        return np.clip(np.rint(v / sx), -128, 127) * sx

    sh = net.add_shuffle(fq(t, 0.05))
    sh.reshape_dims = (2, 3, 20)
    sh.second_transpose = (0, 2, 1)
    b = fq(sh.get_output(0), 0.05)  # removed
    idx = net.add_constant((2,), np.array([4, 0], np.int32)).get_output(0)
    c = fq(net.add_gather(b, idx, 1).get_output(0), 0.05)  # removed
    cat = net.add_concatenation([c, c])
    cat.axis = 2
    d = fq(cat.get_output(0), 0.05)  # removed
    e = fq(d, 0.07)  # another grid: stays
    f = fq(ew(net, d, d, E.SUM), 0.05)  # an elementwise result: stays
    rb = fq_ref(x.astype(np.float64), 0.05).reshape(2, 3, 20).transpose(0, 2, 1)[:, [4, 0], :]
    rd = np.concatenate([rb, rb], axis=2)
    return {"x": x}, [e, f], [fq_ref(rd, 0.07), fq_ref(rd + rd, 0.05)]


@case("fake_quant_folded", fires=("fold_fake_quant",))
def _fake_quant_folded(net, rng):
    """Q -> DQ pairs left on float tensors (onnxruntime's quantize_static writes one after every operator): after an
    elementwise add and a matrix multiply they become the producer's epilogue, after a unary layer one activation
    step; uint8 with a zero point; a pair whose codes another dequantization reads stays.  Power-of-two scales keep
    every product and sum exact in float32, so the reference is exact."""
    x = randn(rng, (2, 3, 4, 5)) * 3.0
    bias = randn(rng, (1, 1, 1, 5))
    t = net.add_input("x", trt.float32, x.shape)

    def q_dq(v, sc, zp=None):
        s = net.add_constant((1,), np.array([sc], np.float32)).get_output(0)
        q = net.add_quantize(v, s, trt.uint8 if zp is not None else trt.int8)
        dq = net.add_dequantize(q.get_output(0), s)
        if zp is not None:
            z = net.add_constant((1,), np.array([zp], np.uint8)).get_output(0)
            q.set_input(2, z)
            dq.set_input(2, z)
        return q.get_output(0), dq.get_output(0)

    def fq_ref(v, sc, lo=-128, hi=127, zp=0):
        return (np.clip(np.rint(v / sc) + zp, lo, hi) - zp) * sc

    a = q_dq(ew(net, t, net.add_constant(bias.shape, bias).get_output(0), E.SUM), 0.0625)[1]  # elementwise epilogue
    tr = net.add_shuffle(a)
    tr.first_transpose = (0, 1, 3, 2)
    mm = net.add_matrix_multiply(a, trt.MatrixOperation.NONE, tr.get_output(0), trt.MatrixOperation.NONE)
    m = q_dq(mm.get_output(0), 0.5)[1]  # matrix multiply epilogue
    u = q_dq(net.add_unary(m, trt.UnaryOperation.ABS).get_output(0), 0.25, zp=100)[1]  # one activation step
    codes, kept = q_dq(ew(net, m, m, E.SUM), 2.0)  # its codes have another reader: the pair stays
    s4 = net.add_constant((1,), np.array([4.0], np.float32)).get_output(0)
    other = net.add_dequantize(codes, s4).get_output(0)
    ra = fq_ref((x + bias).astype(np.float32).astype(np.float64), 0.0625)  # x + bias rounded to float32 first
    rm = fq_ref(ra @ ra.transpose(0, 1, 3, 2), 0.5)
    ru = fq_ref(np.abs(rm), 0.25, 0, 255, 100)
    rk = fq_ref(rm + rm, 2.0)
    return {"x": x}, [u, kept, other], [ru, rk, rk * 2.0]


@case("int8_bias_and_norm_codes", fires=("qlinear_bias", "norm_codes"))
def _int8_bias_and_norm_codes(net, rng):
    """BERT's int8 linear layer as quantize_static writes it: LayerNorm -> Q/DQ -> MatMul (int8 weights) -> Q/DQ ->
    Add(bias) -> Q/DQ, added to the layer norm's Q/DQ output (an int8 residual add) -> Q/DQ.  qlinear_bias takes the
    bias add (and the Q layer of its codes) into the int8 layer, norm_codes makes the layer norm write the codes that
    layer and the residual add read.  Rows of +-2^k with zero mean, epsilon 0, power-of-two scales and weights of
    1/128 steps keep every value exact in float32, so the float64 reference is exact."""
    R, C = 6, 8
    signs = np.array([rng.permutation([1.0] * 4 + [-1.0] * 4) for _ in range(R)])
    x = (signs * 2.0 ** rng.integers(-2, 3, (R, 1))).reshape(1, R, C).astype(np.float32)
    gamma = (2.0 ** rng.integers(-1, 2, C)).astype(np.float32)
    beta = (rng.integers(-4, 5, C) / 4.0).astype(np.float32)
    wq = rng.integers(-127, 128, (C, C))
    wq[0, :] = 127  # |q| reaches 127 in every output channel: the weights' scale is 1/128 exactly
    w = (wq / 128.0).astype(np.float32)
    bias = (rng.integers(-16, 17, C) / 8.0).astype(np.float32)
    t = net.add_input("x", trt.float32, x.shape)

    def const(a):
        return net.add_constant(a.shape, np.ascontiguousarray(a)).get_output(0)

    def fq(v, sc):
        s = const(np.array([sc], np.float32))
        return net.add_dequantize(net.add_quantize(v, s, trt.int8).get_output(0), s).get_output(0)

    def fq_ref(v, sc):
        return np.clip(np.rint(v / sc), -128, 127) * sc

    ln = net.add_normalization(t, const(gamma.reshape(1, 1, C)), const(beta.reshape(1, 1, C)), 1 << 2)
    ln.epsilon = 0.0
    a = fq(ln.get_output(0), 0.0625)
    m = fq(net.add_matrix_multiply(a, trt.MatrixOperation.NONE, const(w.reshape(1, C, C)),
                                   trt.MatrixOperation.NONE).get_output(0), 0.25)
    z = fq(ew(net, m, const(bias.reshape(1, 1, C)), E.SUM), 0.25)
    y = fq(ew(net, z, a, E.SUM), 0.5)
    x64 = x.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    ra = fq_ref((x64 - mu) / np.sqrt(((x64 - mu) ** 2).mean(-1, keepdims=True)) * gamma + beta, 0.0625)
    rz = fq_ref(fq_ref(ra @ w.astype(np.float64), 0.25) + bias, 0.25)
    return {"x": x}, [y], [fq_ref(rz + ra, 0.5)]


@case("qdq_conv_chain", fires=("fuse_qdq", "qdq_int8_io"))
def _qdq_conv_chain(net, rng):
    """DQ(Q(x)) -> conv -> Q -> DQ -> conv: two int8 layers joined by an int8 tensor (test_quantize_int8_io.py has
    more)."""
    x = randn(rng, (1, 3, 6, 5))
    ws = []
    for shape in ((4, 3, 3, 3), (2, 4, 1, 1)):
        q = rng.integers(-127, 128, shape).astype(np.float64)
        q[:, 0, 0, 0] = 127
        ws.append((q * rng.uniform(0.005, 0.02, shape[0]).reshape(-1, 1, 1, 1)).astype(np.float32))
    t = net.add_input("x", trt.float32, x.shape)

    def fq(t, v):
        s = net.add_constant((1,), np.array([v], np.float32)).get_output(0)
        return net.add_dequantize(net.add_quantize(t, s).get_output(0), s).get_output(0)
    zero = np.zeros(4, np.float32)
    y1 = fq(_conv(net, fq(t, 0.03), ws[0], zero, (1, 1), True), 0.01)
    y = _conv(net, y1, ws[1], np.zeros(2, np.float32), (0, 0), True)

    def fq_np(v, s):
        s = np.float64(np.float32(s))
        return np.clip(np.rint(v / s), -128, 127) * s
    r1 = fq_np(refs.convolution(fq_np(x.astype(np.float64), 0.03), ws[0].astype(np.float64), zero, None, (1, 1),
                                (1, 1)), 0.01)
    return {"x": x}, [y], [refs.convolution(r1, ws[1].astype(np.float64), np.zeros(2), None, (0, 0), (0, 0))]


# ------------------------------------------------------------------------------------------------------------
# building and running
# ------------------------------------------------------------------------------------------------------------

class RecordingLogger(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.messages = []

    def log(self, severity, msg):
        self.messages.append((int(severity), msg))

    def at(self, severity):
        return [m for s, m in self.messages if s == int(severity)]


def build(name, seed=0, level=None, off=(), logger=None):
    """Builds case `name`; returns (engine, inputs, references, layer list of the inspector)."""
    fn, explicit, _ = CASES[name]
    builder = trt.Builder(logger or trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT) if explicit else builder.create_network()
    inputs, outs, ref = fn(net, np.random.default_rng(seed))
    for i, o in enumerate(outs):
        o.name = "out%d" % i
        net.mark_output(o)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if level is not None:
        config.builder_optimization_level = level
    for p in off:
        config.set_pass_enabled(p, False)
    if not explicit:
        builder.max_batch_size = next(iter(inputs.values())).shape[0] + 1
    engine = builder.build_engine(net, config)
    assert engine is not None
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return engine, inputs, ref, info["layers"]


def run(engine, inputs, n_out):
    outs = engine.create_execution_context().infer(inputs)
    return [outs["out%d" % i] for i in range(n_out)]


@case("adder_reduce", fires=("fuse_reduce",))
def _adder_reduce(net, rng):
    """AdderNet: |x - w| broadcast over filters, summed over input channels (one REDUCE_BINARY step, fuse_reduce),
    and a product's mean over two separated axes without an Abs (also one step)."""
    x, w = randn(rng, (1, 1, 6, 5, 7)), randn(rng, (1, 4, 6, 1, 1))
    a, b = randn(rng, (3, 4, 1, 9)), randn(rng, (1, 4, 5, 9))
    tx, ta, tb = (net.add_input(n, trt.float32, v.shape) for n, v in (("x", x), ("a", a), ("b", b)))
    d = ew(net, tx, net.add_constant(w.shape, w).get_output(0), E.SUB)
    y = net.add_reduce(net.add_unary(d, trt.UnaryOperation.ABS).get_output(0), trt.ReduceOperation.SUM, 1 << 2,
                       False).get_output(0)
    z = net.add_reduce(ew(net, ta, tb, E.PROD), trt.ReduceOperation.AVG, 0b101, True).get_output(0)
    return ({"x": x, "a": a, "b": b}, [y, z],
            [np.abs(x.astype(np.float64) - w).sum(axis=2), (a.astype(np.float64) * b).mean(axis=(0, 2), keepdims=True)])


@case("pointwise_chain", fires=("fuse_chain",))
def _pointwise_chain(net, rng):
    """A run of pointwise steps (fuse_chain: one PW_CHAIN step): x * per-channel scale, + bias along the last axis,
    ReLU, Q -> DQ (a QGRID step), - another input y broadcast over dim 0, |.|, min with a scalar, divided by 4.  Power
    of two constants and the fake quantization keep every value exact in float32, so the reference is exact."""
    x = np.round(randn(rng, (2, 3, 4, 7)) * 16.0) / 16.0
    y = np.round(randn(rng, (1, 3, 4, 7)) * 8.0) / 8.0
    sc = np.array([0.5, 2.0, -1.0], np.float32).reshape(1, 3, 1, 1)
    b = (np.arange(7, dtype=np.float32) / 4.0 - 1.0).reshape(1, 1, 1, 7)
    tx, ty = net.add_input("x", trt.float32, x.shape), net.add_input("y", trt.float32, y.shape)
    v = ew(net, tx, net.add_constant(sc.shape, sc).get_output(0), E.PROD)
    v = ew(net, v, net.add_constant(b.shape, b).get_output(0), E.SUM)
    v = net.add_activation(v, trt.ActivationType.RELU).get_output(0)
    s = net.add_constant((1,), np.array([0.125], np.float32)).get_output(0)
    v = net.add_dequantize(net.add_quantize(v, s, trt.int8).get_output(0), s).get_output(0)
    v = net.add_unary(ew(net, ty, v, E.SUB), trt.UnaryOperation.ABS).get_output(0)
    v = ew(net, ew(net, v, scalar(net, 3.0, 4), E.MIN), scalar(net, 4.0, 4), E.DIV)
    r = np.maximum(x.astype(np.float64) * sc + b, 0.0)
    r = np.clip(np.rint(r / 0.125), -128, 127) * 0.125
    r = np.minimum(np.abs(y - r), 3.0) / 4.0
    return {"x": x, "y": y}, [v], [r]


MODES = ["all"] + ["off:" + p for p in PASSES] + ["level0", "level0-off:dead_layers"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_network_matches_reference(name, mode):
    """Every network with all passes, with each pass off in turn and at level 0 computes the float64 reference."""
    level, off = None, ()
    if mode.startswith("level0"):
        level = 0
    if "off:" in mode:
        off = (mode.split("off:")[1],)
    engine, inputs, ref, _ = build(name, level=level, off=off)
    for out, r in zip(run(engine, inputs, len(ref)), ref):
        assert_close(out, r)


FIRES = [(name, p) for name, (_, _, fires) in sorted(CASES.items()) for p in fires]


@pytest.mark.parametrize("name,pass_name", FIRES)
def test_pass_fires(name, pass_name):
    """The pass shrinks the network it is for: fewer engine steps with it on than off (with fuse_chain off in both
    builds for the other passes: it would make one step of the pointwise layers a pass leaves)."""
    chain_off = ("fuse_chain",) if pass_name != "fuse_chain" else ()
    on = build(name, off=chain_off)[3]
    off = build(name, off=(pass_name,) + chain_off)[3]
    if pass_name == "qdq_int8_io":  # retypes tensors between int8 steps, the step count stays
        def int8_outputs(layers):
            return sum(o["dtype"] in ("INT8", "UINT8") for l in layers for o in l["outputs"])
        assert int8_outputs(on) > int8_outputs(off) == 0, (on, off)
        return
    assert len(on) < len(off), (pass_name, [l["name"] for l in on], [l["name"] for l in off])


# Passes that keep the step count (they change kernels or the memory plan): exercised in their own files.
FIRES_ELSEWHERE = {"sink_concat": "test_sink_concat.py",  # adds poolings: more steps, smaller copies
                   "fold_padding": "test_passes_fusion2.py", "fuse_siblings": "test_passes_fusion2.py", "elide_slice": "test_passes_fusion2.py",
                   "gather_slice": "test_passes_fusion2.py",  # same steps, slices instead of gathers
                   "elide_concat": "test_passes_fusion2.py", "elide_reshape": "test_reshape_view.py",
                   "plugin_int8_out": "test_adder_int8_out.py",  # INT8 builds with calibrated plugin inputs
                   "int8_tactics": "test_int8_tactics.py",  # kernel candidates only
                   "int8_float_regions": "test_int8_tactics.py",  # tensor types after kernel selection
                   "int8_nchwc": "test_int8_nchwc.py",  # int8 layers in blocked regions (timed builds)
                   "nchwc": "test_nchwc.py"}  # changes layouts, not the step count


def test_every_pass_is_exercised():
    assert set(PASSES) == {p for _, p in FIRES} | set(FIRES_ELSEWHERE)


# ------------------------------------------------------------------------------------------------------------
# GELU fusion details
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in sorted(CASES) if n.startswith("gelu_erf_") or n.startswith("gelu_tanh_")])
def test_gelu_becomes_one_activation(name):
    layers = build(name, off=("fuse_chain",))[3]  # (fuse_chain would make the unfused ones' layers one chain)
    fused = name not in ("gelu_erf_output_is_also_output", "gelu_erf_intermediate_shared",
                         "gelu_erf_broadcasting_constant", "gelu_erf_wrong_half")
    types = [l["type"] for l in layers]
    if fused:
        assert types == ["ACTIVATION"], layers
        # the step is named after every layer it replaced
        assert all(part in layers[0]["name"] for part in ("g_erf" if "erf" in name else "g_tanh", "g_add", "g_mul"))
    else:
        assert "UNARY" in types and "ACTIVATION" not in types, layers


def test_gelu_joins_the_matmul_epilogue():
    layers = build("matmul_gelu")[3]
    assert len(layers) == 1 and layers[0]["type"] == "LINEAR", layers  # a constant weight: fuse_linear
    assert layers[0]["activation"] == int(trt.ActivationType.GELU_ERF)
    layers = build("gelu_two_in_a_row", off=("fuse_chain",))[3]
    assert [l["type"] for l in layers] == ["ACTIVATION", "ACTIVATION"], layers
    layers = build("gelu_two_in_a_row")[3]  # fuse_chain: the two activations are one program
    assert [l["type"] for l in layers] == ["PW_CHAIN"] and layers[0]["program"] == "gelu_erf(0) gelu_tanh(0)", layers


@pytest.mark.parametrize("const,op,fused", [
    (1.4142, "DIV", True), (1.4135, "DIV", True), (1.4160, "DIV", False), (1.4120, "DIV", False),
    (0.7071, "PROD", True), (0.7065, "PROD", True), (0.7090, "PROD", False), (0.7050, "PROD", False),
])
def test_gelu_erf_constant_tolerance(const, op, fused):
    """sqrt(2) (or 1/sqrt(2)) rounded as exporters write it fuses, within the ONNX parser's former 1e-3; farther
    off it is left alone."""
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    t = net.add_input("x", trt.float32, (3, 5))
    d = ew(net, t, scalar(net, const, 2), getattr(E, op))
    a = ew(net, net.add_unary(d, trt.UnaryOperation.ERF).get_output(0), scalar(net, 1.0, 2), E.SUM)
    y = ew(net, ew(net, t, scalar(net, 0.5, 2), E.PROD), a, E.PROD)
    net.mark_output(y)
    config = builder.create_builder_config()
    config.set_pass_enabled("fuse_chain", False)  # (it would make the five unfused layers one chain)
    engine = builder.build_engine(net, config)
    assert engine.num_layers == (1 if fused else 5)
    x = randn(np.random.default_rng(2), (3, 5), 2.0)
    out = engine.create_execution_context().infer({"x": x})[y.name]
    if fused:  # the exact GELU
        assert_close(out, gelu_erf_ref(x))
    else:  # what the layers say
        x = x.astype(np.float64)
        arg = x / np.float32(const) if op == "DIV" else x * np.float32(const)
        assert_close(out, 0.5 * x * (1.0 + refs._erf(arg)))


def test_gelu_off_keeps_the_elementwise_layers():
    layers = build("gelu_erf_div_pre", off=("fuse_gelu", "fuse_chain"))[3]
    assert "UNARY" in [l["type"] for l in layers] and len(layers) == 5, layers


def test_parsed_onnx_gelu_is_one_step():
    """A GELU as an ONNX exporter writes it (Div, Erf, Add, Mul, Mul) builds into one step."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    c = {n: helper.make_tensor(n, TensorProto.FLOAT, [], [v]) for n, v in
         (("sqrt2", math.sqrt(2.0)), ("one", 1.0), ("half", 0.5))}
    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["x", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    graph = helper.make_graph(nodes, "gelu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])], list(c.values()))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    parser = trt.OnnxParser(net, trt.Logger(trt.Logger.WARNING))
    assert parser.parse(model.SerializeToString()), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    engine = builder.build_engine(net, builder.create_builder_config())
    assert engine.num_layers == 1
    x = randn(np.random.default_rng(1), (2, 3, 4), 2.0)
    assert_close(engine.create_execution_context().infer({"x": x})["y"], gelu_erf_ref(x))


# ------------------------------------------------------------------------------------------------------------
# switches, names, logs, errors
# ------------------------------------------------------------------------------------------------------------

def test_builder_passes_lists_the_table():
    table = trt.builder_passes()
    assert [p[0] for p in table] == ["dead_layers", "drop_identity", "constant_fold", "fuse_gelu", "fuse_layernorm", "fuse_pointwise",
                                     "fold_transpose", "fuse_attention", "fold_scale", "fuse_epilogue", "fuse_qdq",
                                     "qdq_int8_io", "drop_fake_quant", "fold_fake_quant", "qlinear_bias", "norm_codes",
                                     "fold_padding", "fuse_siblings", "sink_concat", "gather_slice",
                                     "elide_slice", "elide_concat",
                                     "fuse_linear", "fuse_reduce", "elide_reshape", "plugin_int8_out",
                                     "int8_tactics", "int8_float_regions", "fuse_preact", "fuse_chain", "int8_nchwc", "nchwc"]
    assert dict((n, lvl) for n, lvl, _ in table) == {"dead_layers": 0, "drop_identity": 1, "constant_fold": 1, "fuse_gelu": 1,
                                                     "fuse_layernorm": 1, "fuse_pointwise": 1, "fold_transpose": 1,
                                                     "fuse_attention": 1, "fold_scale": 1, "fuse_epilogue": 1,
                                                     "fuse_qdq": 1, "qdq_int8_io": 1, "drop_fake_quant": 1, "fold_fake_quant": 1,
                                                     "qlinear_bias": 1, "norm_codes": 1,
                                                     "fold_padding": 1,
                                                     "fuse_siblings": 1, "sink_concat": 1, "gather_slice": 1, "elide_slice": 1,
                                                     "elide_concat": 1,
                                                     "fuse_linear": 1, "fuse_reduce": 1, "elide_reshape": 1,
                                                     "plugin_int8_out": 1, "int8_tactics": 1,
                                                     "int8_float_regions": 1, "fuse_preact": 1, "fuse_chain": 1, "int8_nchwc": 1,
                                                     "nchwc": 1}
    assert all(isinstance(d, str) and d for _, _, d in table)


def test_config_switches():
    config = trt.Builder(trt.Logger()).create_builder_config()
    assert config.disabled_passes == []
    assert all(config.get_pass_enabled(p) for p in PASSES)
    config.set_pass_enabled("fuse_gelu", False)
    config.set_pass_enabled(name="fold_scale", enabled=False)
    assert config.disabled_passes == ["fuse_gelu", "fold_scale"]
    assert not config.get_pass_enabled("fuse_gelu")
    config.set_pass_enabled("fuse_gelu", True)
    assert config.disabled_passes == ["fold_scale"]
    config.disabled_passes = ["dead_layers", "fuse_epilogue"]
    assert config.disabled_passes == ["dead_layers", "fuse_epilogue"]
    config.disabled_passes = []
    assert config.disabled_passes == []


def test_unknown_pass_names_are_refused():
    config = trt.Builder(trt.Logger()).create_builder_config()
    for call in (lambda: config.set_pass_enabled("fuse_gleu", False), lambda: config.get_pass_enabled("fuse_gleu")):
        with pytest.raises(trt.NotFoundError) as ei:
            call()
        msg = str(ei.value)
        assert "'fuse_gleu' is not a builder pass" in msg and all(p in msg for p in PASSES), msg
    with pytest.raises(trt.NotFoundError, match="''"):
        config.get_pass_enabled("")
    config.set_pass_enabled("fuse_gelu", False)
    with pytest.raises(trt.NotFoundError, match="nope"):
        config.disabled_passes = ["fold_scale", "nope"]
    assert config.disabled_passes == ["fuse_gelu"]  # unchanged: names are checked before anything is switched
    with pytest.raises(TypeError):
        config.get_pass_enabled(2)
    with pytest.raises(TypeError):
        config.set_pass_enabled(None, False)
    with pytest.raises(TypeError):
        config.disabled_passes = "fuse_gelu"
    with pytest.raises(TypeError):
        config.disabled_passes = [3]
    with pytest.raises(TypeError):
        del config.disabled_passes
    with pytest.raises(ValueError, match="NUL"):
        config.set_pass_enabled("fuse_gelu\0x", False)
    assert config.disabled_passes == ["fuse_gelu"]


def test_passes_log_what_they_did():
    logger = RecordingLogger()
    build("matmul_gelu", logger=logger)
    info = logger.at(trt.ILogger.Severity.INFO)
    assert any(m.startswith("GELU fusion: 1 rewrite:") and "tensor" in m for m in info), info
    assert any(m.startswith("epilogue fusion: 1 rewrite:") and "g_mul" in m for m in info), info
    verbose = logger.at(trt.ILogger.Severity.VERBOSE)
    assert "running builder pass 'fuse_gelu'" in verbose
    assert any(m.startswith("GELU fusion: fused 5 layers computing GELU (erf)") for m in verbose), verbose

    logger = RecordingLogger()
    build("gelu_erf_div_pre", off=("fuse_gelu",), logger=logger)
    assert "builder pass 'fuse_gelu' disabled by the builder config" in logger.at(trt.ILogger.Severity.INFO)
    assert not any("GELU fusion" in m for _, m in logger.messages)

    logger = RecordingLogger()
    build("gelu_erf_div_pre", level=0, logger=logger)
    assert "builder pass 'fuse_gelu' skipped: builder_optimization_level 0 is below its 1" in \
        logger.at(trt.ILogger.Severity.VERBOSE)


def test_many_rewrites_are_counted_and_the_first_named():
    logger = RecordingLogger()
    builder = trt.Builder(logger)
    net = builder.create_network(EXPLICIT)
    t = net.add_input("x", trt.float32, (2, 3))
    for i in range(6):
        t = gelu_erf(net, t, 2, prefix="l%d" % i)
    net.mark_output(t)
    config = builder.create_builder_config()
    config.set_pass_enabled("fuse_chain", False)  # (it would make the six activations one chain)
    engine = builder.build_engine(net, config)
    assert engine.num_layers == 6
    msg = [m for m in logger.at(trt.ILogger.Severity.INFO) if m.startswith("GELU fusion")]
    assert len(msg) == 1 and msg[0].startswith("GELU fusion: 6 rewrites:") and msg[0].endswith("; ..."), msg
    assert "l0_erf" in msg[0] and "l5_erf" not in msg[0]


def test_env_var_disables_passes(monkeypatch):
    monkeypatch.setenv("TRTLITE_DISABLE_PASSES", " fuse_gelu, ,fold_scale,fuse_chain")
    logger = RecordingLogger()
    engine, inputs, ref, layers = build("gelu_erf_div_pre", logger=logger)
    assert len(layers) == 5
    assert_close(run(engine, inputs, 1)[0], ref[0])
    info = logger.at(trt.ILogger.Severity.INFO)
    assert "builder pass 'fuse_gelu' disabled by TRTLITE_DISABLE_PASSES" in info
    assert "builder pass 'fold_scale' disabled by TRTLITE_DISABLE_PASSES" in info
    conv_steps_without_fold = len(build("conv_bn_relu_residual")[3])
    # the config does not see the variable: it is read at each build
    config = trt.Builder(trt.Logger()).create_builder_config()
    assert config.get_pass_enabled("fuse_gelu") and config.disabled_passes == []
    monkeypatch.setenv("TRTLITE_DISABLE_PASSES", "")
    assert len(build("gelu_erf_div_pre")[3]) == 1
    monkeypatch.delenv("TRTLITE_DISABLE_PASSES")
    assert len(build("gelu_erf_div_pre")[3]) == 1
    assert len(build("conv_bn_relu_residual")[3]) < conv_steps_without_fold


def test_env_var_with_an_unknown_name_fails_the_build(monkeypatch):
    monkeypatch.setenv("TRTLITE_DISABLE_PASSES", "fuse_gelu,constant_folding")
    with pytest.raises(trt.InvalidArgumentError) as ei:
        build("gelu_erf_div_pre")
    msg = str(ei.value)
    assert "TRTLITE_DISABLE_PASSES" in msg and "'constant_folding' is not a builder pass" in msg
    assert all(p in msg for p in PASSES), msg
