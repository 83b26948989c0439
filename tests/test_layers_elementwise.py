"""Activation, elementwise, unary, parametric ReLU and select layers vs tests/refs.py."""
import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def const(net, arr):
    """A constant tensor holding arr (its own shape)."""
    return net.add_constant(arr.shape, arr).get_output(0)


# ------------------------------------------------------------------------------------------------------------
# activation
# ------------------------------------------------------------------------------------------------------------

# alpha, beta per type; types that take no parameter get values that must be ignored
ACT_PARAMS = {
    "RELU": (0.37, 0.61), "SIGMOID": (0.37, 0.61), "TANH": (0.37, 0.61), "LEAKY_RELU": (0.1, 0.0),
    "ELU": (0.7, 0.0), "SELU": (1.6732632, 1.0507010), "SOFTSIGN": (0.37, 0.61), "SOFTPLUS": (0.5, 2.0),
    "CLIP": (-0.5, 0.75), "HARD_SIGMOID": (0.2, 0.5), "SCALED_TANH": (1.7, 0.6), "THRESHOLDED_RELU": (0.3, 0.0),
    "GELU_ERF": (0.37, 0.61), "GELU_TANH": (0.37, 0.61),
}


def act_make(name, alpha, beta):
    def make(net, x):
        layer = net.add_activation(input=x, type=getattr(trt.ActivationType, name))
        layer.alpha = alpha
        layer.beta = beta
        return layer
    return make


@pytest.mark.parametrize("name", refs.ACTIVATIONS)
@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (3, 11)])
def test_activation(name, shape, rng, build_and_run):
    a, b = ACT_PARAMS[name]
    x = randn(rng, shape, 3.0)
    x.flat[:4] = [0.0, 0.3, -1e-3, 0.75]
    out = build_and_run(act_make(name, a, b), {"x": x})
    assert_close(out, refs.activation(x, name, np.float32(a), np.float32(b)))


@pytest.mark.parametrize("name,alpha,beta", [("LEAKY_RELU", -0.3, 0), ("ELU", 2.0, 0), ("CLIP", 0.0, 6.0),
                                             ("SOFTPLUS", 1.0, 1.0), ("SCALED_TANH", 0.5, 3.0),
                                             ("HARD_SIGMOID", 1 / 6, 0.5), ("THRESHOLDED_RELU", -0.5, 0)])
def test_activation_other_parameters(name, alpha, beta, rng, build_and_run):
    x = randn(rng, (2, 4, 3, 5), 4.0)
    out = build_and_run(act_make(name, alpha, beta), {"x": x})
    assert_close(out, refs.activation(x, name, np.float32(alpha), np.float32(beta)))


def test_activation_large_inputs_do_not_overflow(build_and_run):
    x = np.array([[-100.0, -30.0, -1.0, 0.0, 1.0, 30.0, 100.0]], np.float32)
    for name in ("SIGMOID", "TANH", "SOFTPLUS", "ELU", "SELU", "GELU_ERF", "GELU_TANH", "SOFTSIGN"):
        a, b = ACT_PARAMS[name]
        if name == "SOFTPLUS":
            a, b = 1.0, 1.0
        out = build_and_run(act_make(name, a, b), {"x": x})
        assert np.all(np.isfinite(out)), name
        assert_close(out, refs.activation(x, name, np.float32(a), np.float32(b)))


def test_activation_attributes_roundtrip(rng, build_and_run, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (2, 3))
    layer = n.network.add_activation(x, trt.ActivationType.RELU)
    assert isinstance(layer, trt.IActivationLayer)
    assert layer.type == trt.ActivationType.RELU  # IActivationLayer.type is the activation type
    for name in refs.ACTIVATIONS:
        layer.type = getattr(trt.ActivationType, name)
        assert layer.type == getattr(trt.ActivationType, name)
    layer.alpha = 0.25
    layer.beta = -1.5
    assert layer.alpha == 0.25 and layer.beta == -1.5
    # the type changed after creation is the one that runs
    xv = randn(rng, (2, 3, 4))

    def make(net, t):
        lay = net.add_activation(t, trt.ActivationType.RELU)
        lay.type = trt.ActivationType.LEAKY_RELU
        lay.alpha = 0.2
        return lay

    assert_close(build_and_run(make, {"x": xv}), refs.activation(xv, "LEAKY_RELU", np.float32(0.2)))


# Defaults when alpha / beta are not set (ONNX's operator defaults; TensorRT documents none, and
# torch2trt / NVIDIA's Caffe BNLL mapping add SOFTPLUS without either and expect log(1 + e^x)).
ACT_DEFAULTS = {"LEAKY_RELU": (0.01, 0.0), "ELU": (1.0, 0.0), "SELU": (1.67326319217681884765625,
                1.05070102214813232421875), "SOFTPLUS": (1.0, 1.0), "SCALED_TANH": (1.0, 1.0),
                "HARD_SIGMOID": (0.2, 0.5), "THRESHOLDED_RELU": (1.0, 0.0), "CLIP": (0.0, 0.0), "RELU": (0.0, 0.0)}


@pytest.mark.parametrize("name", sorted(ACT_DEFAULTS))
def test_activation_defaults_per_type(name, rng, build_and_run, new_network):
    a, b = ACT_DEFAULTS[name]
    n = new_network()
    layer = n.network.add_activation(n.network.add_input("x", trt.float32, (2, 3)), getattr(trt.ActivationType, name))
    assert (layer.alpha, layer.beta) == (np.float32(a), np.float32(b))
    x = randn(rng, (2, 3, 4, 5), 3.0)
    out = build_and_run(lambda net, t: net.add_activation(t, getattr(trt.ActivationType, name)), {"x": x})
    assert_close(out, refs.activation(x, name, np.float32(a), np.float32(b)))


def test_activation_defaults_follow_type_but_keep_set_values(new_network):
    n = new_network()
    layer = n.network.add_activation(n.network.add_input("x", trt.float32, (2, 3)), trt.ActivationType.RELU)
    layer.type = trt.ActivationType.SOFTPLUS           # untouched parameters follow the type
    assert (layer.alpha, layer.beta) == (1.0, 1.0)
    layer.alpha = 0.5                                  # a value the user set is kept ...
    layer.type = trt.ActivationType.HARD_SIGMOID
    assert (layer.alpha, layer.beta) == (0.5, 0.5)     # ... while beta, still at a default, follows
    layer.type = trt.ActivationType.RELU
    assert (layer.alpha, layer.beta) == (0.5, 0.0)


def test_activation_implicit_batch_and_dynamic(rng, build_and_run, build):
    x = randn(rng, (3, 2, 5))
    assert_close(build_and_run(act_make("TANH", 0, 0), {"x": x}, explicit=False), np.tanh(x.astype(np.float64)))
    r = build(act_make("SELU", 1.5, 1.1), {"x": ((2, 3), np.float32)}, input_shapes={"x": (-1, -1)},
              profile={"x": ((1, 1), (2, 3), (5, 9))})
    for shape in [(1, 1), (5, 9), (2, 7)]:
        x = randn(rng, shape)
        assert_close(r.run({"x": x}), refs.activation(x, "SELU", np.float32(1.5), np.float32(1.1)))


def test_activation_error_int32(expect_layer_error):
    def make(net):
        x = net.add_input("x", trt.int32, (2, 3))
        layer = net.add_activation(x, trt.ActivationType.RELU)
        layer.name = "bad_act"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.DTypeError, ("bad_act", "[Activation]"))


# ------------------------------------------------------------------------------------------------------------
# elementwise
# ------------------------------------------------------------------------------------------------------------

EW_SHAPES = [
    ((2, 3, 4, 5), (2, 3, 4, 5)),
    ((2, 1, 4, 1), (1, 3, 1, 5)),
    ((2, 3, 5, 7), (1, 1, 1, 1)),
    ((1, 3, 1, 7), (2, 3, 5, 7)),
    ((3, 1, 5), (3, 4, 1)),
]


def ew_inputs(op, rng, sa, sb):
    if op in ("AND", "OR", "XOR"):
        return rng.random(sa) > 0.5, rng.random(sb) > 0.5
    if op == "POW":
        return (rng.random(sa) * 2 + 0.2).astype(np.float32), randn(rng, sb)
    if op in ("EQUAL", "GREATER", "LESS"):
        return rng.integers(-2, 3, sa).astype(np.float32), rng.integers(-2, 3, sb).astype(np.float32)
    a, b = randn(rng, sa), randn(rng, sb)
    if op in ("DIV", "FLOOR_DIV"):
        b = np.where(np.abs(b) < 0.2, np.float32(0.7), b)
    return a, b


def ew_make(op):
    def make(net, a, b):
        return net.add_elementwise(input1=a, input2=b, op=getattr(trt.ElementWiseOperation, op))
    return make


@pytest.mark.parametrize("op", refs.ELEMENTWISE_OPS)
@pytest.mark.parametrize("shapes", EW_SHAPES, ids=["same", "bcast_both", "scalar_like", "bcast_first", "3d"])
def test_elementwise(op, shapes, rng, build_and_run):
    a, b = ew_inputs(op, rng, *shapes)
    out = build_and_run(ew_make(op), {"a": a, "b": b})
    assert_close(out, refs.elementwise(a, b, op))


@pytest.mark.parametrize("op", ["SUM", "PROD", "MAX", "MIN", "SUB", "DIV", "FLOOR_DIV", "EQUAL", "GREATER",
                                "LESS"])
def test_elementwise_int32(op, rng, build_and_run):
    a = rng.integers(-50, 50, (2, 3, 5)).astype(np.int32)
    b = rng.integers(1, 7, (2, 1, 5)).astype(np.int32)
    if op in ("FLOOR_DIV", "SUB", "SUM", "PROD", "MAX", "MIN", "EQUAL", "GREATER", "LESS"):
        b = b * rng.choice(np.array([-1, 1], np.int32), b.shape)
    if op == "DIV":
        a = np.abs(a)  # integer DIV of negative operands: truncation vs floor is not pinned down by TensorRT's docs
    out = build_and_run(ew_make(op), {"a": a, "b": b})
    assert_close(out, refs.elementwise(a, b, op))


def test_elementwise_with_constant_operand(rng, build_and_run):
    x = randn(rng, (2, 3, 4, 5))
    c = randn(rng, (1, 3, 1, 1))
    d = randn(rng, (1, 1, 4, 5))

    def make(net, t):
        s = net.add_elementwise(t, const(net, c), trt.ElementWiseOperation.PROD).get_output(0)
        return net.add_elementwise(const(net, d), s, trt.ElementWiseOperation.SUB)

    assert_close(build_and_run(make, {"x": x}), d.astype(np.float64) - x.astype(np.float64) * c)


def test_elementwise_same_tensor_twice(rng, build_and_run):
    x = randn(rng, (3, 4))
    out = build_and_run(lambda net, t: net.add_elementwise(t, t, trt.ElementWiseOperation.PROD), {"x": x})
    assert_close(out, x.astype(np.float64) ** 2)


def test_elementwise_implicit_batch_with_constant(rng, build_and_run):
    # implicit batch: a constant has no batch dim and applies to every sample
    x = randn(rng, (3, 2, 4, 5))
    c = randn(rng, (2, 1, 5))

    def make(net, t):
        return net.add_elementwise(t, const(net, c), trt.ElementWiseOperation.SUM)

    assert_close(build_and_run(make, {"x": x}, explicit=False), x.astype(np.float64) + c)


def test_elementwise_dynamic_shapes(rng, build):
    r = build(ew_make("SUB"), {"a": ((2, 3, 4), np.float32), "b": ((1, 3, 1), np.float32)},
              input_shapes={"a": (-1, 3, -1)}, profile={"a": ((1, 3, 1), (2, 3, 4), (4, 3, 9))})
    b = randn(rng, (1, 3, 1))
    for shape in [(1, 3, 1), (4, 3, 9), (3, 3, 2)]:
        a = randn(rng, shape)
        assert_close(r.run({"a": a, "b": b}), refs.elementwise(a, b, "SUB"))


def test_elementwise_attributes_roundtrip(rng, build_and_run, new_network):
    n = new_network()
    a = n.network.add_input("a", trt.float32, (2, 3))
    layer = n.network.add_elementwise(a, a, trt.ElementWiseOperation.SUM)
    assert isinstance(layer, trt.IElementWiseLayer)
    assert layer.type == trt.LayerType.ELEMENTWISE
    for op in refs.ELEMENTWISE_OPS:
        layer.op = getattr(trt.ElementWiseOperation, op)
        assert layer.op == getattr(trt.ElementWiseOperation, op)
    x, y = randn(rng, (2, 3)), randn(rng, (2, 3))

    def make(net, t, u):
        lay = net.add_elementwise(t, u, trt.ElementWiseOperation.SUM)
        lay.op = trt.ElementWiseOperation.MAX
        return lay

    assert_close(build_and_run(make, {"x": x, "y": y}), np.maximum(x, y).astype(np.float64))


EWNAMES = ("bad_ew", "[ElementWise]")


def _ew_err(sa, sb, ta=trt.float32, tb=trt.float32, op=trt.ElementWiseOperation.SUM):
    def make(net):
        a = net.add_input("a", ta, sa)
        b = net.add_input("b", tb, sb)
        layer = net.add_elementwise(a, b, op)
        layer.name = "bad_ew"
        net.mark_output(layer.get_output(0))
    return make


def test_elementwise_error_incompatible_shapes(expect_layer_error):
    expect_layer_error(_ew_err((2, 3, 4), (2, 5, 4)), trt.ShapeError, EWNAMES)


def test_elementwise_error_rank_mismatch(expect_layer_error):
    expect_layer_error(_ew_err((2, 3, 4), (3, 4)), trt.ShapeError, EWNAMES)


def test_elementwise_error_dtype_mismatch(expect_layer_error):
    expect_layer_error(_ew_err((2, 3), (2, 3), tb=trt.int32), trt.DTypeError, EWNAMES)


def test_elementwise_error_logic_on_float(expect_layer_error):
    expect_layer_error(_ew_err((2, 3), (2, 3), op=trt.ElementWiseOperation.AND), trt.DTypeError, EWNAMES)


def test_elementwise_error_arithmetic_on_bool(expect_layer_error):
    expect_layer_error(_ew_err((2, 3), (2, 3), trt.bool, trt.bool, op=trt.ElementWiseOperation.SUM), trt.DTypeError,
                       EWNAMES)


# ------------------------------------------------------------------------------------------------------------
# unary
# ------------------------------------------------------------------------------------------------------------

def unary_make(op):
    def make(net, x):
        return net.add_unary(input=x, op=getattr(trt.UnaryOperation, op))
    return make


@pytest.mark.parametrize("op", refs.UNARY_OPS)
def test_unary(op, rng, build_and_run):
    x = refs.unary_input(op, rng, (2, 3, 5, 7))
    if x.dtype != np.bool_:
        x = x.astype(np.float32)
    out = build_and_run(unary_make(op), {"x": x})
    assert_close(out, refs.unary(x, op))


@pytest.mark.parametrize("op", ["ABS", "NEG", "SIGN"])
def test_unary_int32(op, rng, build_and_run):
    x = rng.integers(-9, 10, (3, 7)).astype(np.int32)
    x.flat[0] = 0
    assert_close(build_and_run(unary_make(op), {"x": x}), refs.unary(x, op))


def test_unary_attributes_roundtrip_and_dynamic(rng, build, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (2, 3))
    layer = n.network.add_unary(x, trt.UnaryOperation.EXP)
    assert isinstance(layer, trt.IUnaryLayer)
    for op in refs.UNARY_OPS:
        layer.op = getattr(trt.UnaryOperation, op)
        assert layer.op == getattr(trt.UnaryOperation, op)

    def make(net, t):
        lay = net.add_unary(t, trt.UnaryOperation.EXP)
        lay.op = trt.UnaryOperation.ABS
        return lay

    r = build(make, {"x": ((2, 3), np.float32)}, input_shapes={"x": (2, -1)},
              profile={"x": ((2, 1), (2, 3), (2, 8))})
    for shape in [(2, 1), (2, 8)]:
        xv = randn(rng, shape)
        assert_close(r.run({"x": xv}), np.abs(xv).astype(np.float64))


def test_unary_errors(expect_layer_error):
    def make(net):
        x = net.add_input("x", trt.float32, (2, 3))
        layer = net.add_unary(x, trt.UnaryOperation.NOT)
        layer.name = "bad_unary"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.DTypeError, ("bad_unary", "[Unary]"))

    def make2(net):
        x = net.add_input("x", trt.bool, (2, 3))
        layer = net.add_unary(x, trt.UnaryOperation.EXP)
        layer.name = "bad_unary"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make2, trt.DTypeError, ("bad_unary", "[Unary]"))


# ------------------------------------------------------------------------------------------------------------
# parametric ReLU
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sshape", [(1, 3, 1, 1), (1, 3, 4, 5), (2, 3, 4, 5), (1, 1, 1, 5)])
def test_parametric_relu_constant_slopes(sshape, rng, build_and_run):
    x = randn(rng, (2, 3, 4, 5))
    s = randn(rng, sshape)

    def make(net, t):
        layer = net.add_parametric_relu(t, const(net, s))
        assert isinstance(layer, trt.IParametricReLULayer)
        return layer

    assert_close(build_and_run(make, {"x": x}), refs.parametric_relu(x, s))


def test_parametric_relu_input_slopes_dynamic(rng, build):
    r = build(lambda net, t, s: net.add_parametric_relu(t, s),
              {"x": ((2, 3, 5), np.float32), "s": ((1, 3, 1), np.float32)},
              input_shapes={"x": (-1, 3, -1)}, profile={"x": ((1, 3, 1), (2, 3, 5), (3, 3, 8))})
    s = randn(rng, (1, 3, 1))
    for shape in [(1, 3, 1), (3, 3, 8)]:
        x = randn(rng, shape)
        assert_close(r.run({"x": x, "s": s}), refs.parametric_relu(x, s))


def test_parametric_relu_error_shapes(expect_layer_error):
    def make(net):
        x = net.add_input("x", trt.float32, (2, 3, 4))
        s = net.add_constant((1, 2, 1), np.ones(2, np.float32)).get_output(0)
        layer = net.add_parametric_relu(x, s)
        layer.name = "bad_prelu"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.ShapeError, ("bad_prelu", "[Parametric ReLU]"))


# ------------------------------------------------------------------------------------------------------------
# select
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 3, 4), (2, 3, 4)), ((2, 1, 4), (1, 3, 4), (2, 3, 1)),
                                    ((1, 1, 1), (2, 3, 4), (2, 3, 4))])
def test_select(shapes, rng, build_and_run):
    sc, sa, sb = shapes
    c = rng.random(sc) > 0.5
    a, b = randn(rng, sa), randn(rng, sb)

    def make(net, ct, at, bt):
        layer = net.add_select(ct, at, bt)
        assert isinstance(layer, trt.ISelectLayer)
        return layer

    assert_close(build_and_run(make, {"c": c, "a": a, "b": b}), refs.select(c, a, b))


def test_select_int32_and_from_comparison(rng, build_and_run):
    a = rng.integers(-9, 9, (3, 5)).astype(np.int32)
    b = rng.integers(-9, 9, (3, 5)).astype(np.int32)

    def make(net, at, bt):
        c = net.add_elementwise(at, bt, trt.ElementWiseOperation.GREATER).get_output(0)
        return net.add_select(c, at, bt)  # max(a, b)

    assert_close(build_and_run(make, {"a": a, "b": b}), np.maximum(a, b))


def test_select_errors(expect_layer_error):
    def make(net):
        c = net.add_input("c", trt.float32, (2, 3))
        a = net.add_input("a", trt.float32, (2, 3))
        layer = net.add_select(c, a, a)
        layer.name = "bad_select"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.DTypeError, ("bad_select", "[Select]"))

    def make2(net):
        c = net.add_input("c", trt.bool, (2, 3))
        a = net.add_input("a", trt.float32, (2, 4))
        layer = net.add_select(c, a, a)
        layer.name = "bad_select"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make2, trt.ShapeError, ("bad_select", "[Select]"))

    def make3(net):
        c = net.add_input("c", trt.bool, (2, 3))
        a = net.add_input("a", trt.float32, (2, 3))
        b = net.add_input("b", trt.int32, (2, 3))
        layer = net.add_select(c, a, b)
        layer.name = "bad_select"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make3, trt.DTypeError, ("bad_select", "[Select]"))
