"""Reduce, TopK, softmax and normalization layers vs tests/refs.py."""
import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def mask(axes):
    m = 0
    for a in axes:
        m |= 1 << a
    return m


def const(net, arr):
    return net.add_constant(arr.shape, arr).get_output(0)


# ------------------------------------------------------------------------------------------------------------
# reduce
# ------------------------------------------------------------------------------------------------------------

def reduce_make(op, axes, keep):
    def make(net, x):
        return net.add_reduce(x, getattr(trt.ReduceOperation, op), mask(axes), keep)
    return make


@pytest.mark.parametrize("op", refs.REDUCE_OPS)
@pytest.mark.parametrize("axes", [(0,), (1,), (3,), (2, 3), (0, 2), (1, 2, 3), (0, 1, 2, 3)])
@pytest.mark.parametrize("keep", [True, False])
def test_reduce(op, axes, keep, rng, build_and_run):
    x = randn(rng, (2, 3, 5, 7))
    if op == "PROD":
        x = (rng.random((2, 3, 5, 7)) + 0.5).astype(np.float32)  # keep products of up to 210 terms finite
    out = build_and_run(reduce_make(op, axes, keep), {"x": x})
    assert_close(out, refs.reduce(x, op, axes, keep), rtol=3e-4)


@pytest.mark.parametrize("op", ["SUM", "MAX", "MIN", "PROD"])
def test_reduce_int32(op, rng, build_and_run):
    x = rng.integers(-5, 6, (2, 3, 4)).astype(np.int32)
    out = build_and_run(reduce_make(op, (1, 2) if op != "PROD" else (2,), False), {"x": x})
    assert_close(out, refs.reduce(x, op, (1, 2) if op != "PROD" else (2,), False))


@pytest.mark.parametrize("axes,keep", [((0,), True), ((0,), False), ((1, 2), False), ((0, 1, 2), True)])
def test_reduce_implicit_batch(axes, keep, rng, build_and_run):
    """Implicit batch: axes count from C (bit 0 = C), never the batch dim."""
    x = randn(rng, (3, 2, 5, 4))
    out = build_and_run(reduce_make("AVG", axes, keep), {"x": x}, explicit=False, max_batch=4)
    assert_close(out, refs.reduce(x, "AVG", tuple(a + 1 for a in axes), keep))


def test_reduce_attributes_roundtrip(rng, build_and_run, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (2, 3, 4))
    layer = n.network.add_reduce(x, trt.ReduceOperation.SUM, mask((1,)), True)
    assert isinstance(layer, trt.IReduceLayer)
    assert layer.op == trt.ReduceOperation.SUM
    assert layer.axes == 2
    assert layer.keep_dims
    assert tuple(layer.get_output(0).shape) == (2, 1, 4)
    for op in refs.REDUCE_OPS:
        layer.op = getattr(trt.ReduceOperation, op)
        assert layer.op == getattr(trt.ReduceOperation, op)
    layer.axes = mask((0, 2))
    layer.keep_dims = False
    assert layer.axes == 5 and not layer.keep_dims
    assert tuple(layer.get_output(0).shape) == (3,)
    xv = randn(rng, (2, 3, 4))

    def make(net, t):
        lay = net.add_reduce(t, trt.ReduceOperation.SUM, 1, True)
        lay.op = trt.ReduceOperation.MAX
        lay.axes = mask((2,))
        lay.keep_dims = False
        return lay

    assert_close(build_and_run(make, {"x": xv}), refs.reduce(xv, "MAX", (2,), False))


def test_reduce_dynamic_shapes(rng, build):
    r = build(reduce_make("SUM", (1, 2), False), {"x": ((2, 3, 4), np.float32)}, input_shapes={"x": (-1, -1, 4)},
              profile={"x": ((1, 1, 4), (2, 3, 4), (4, 9, 4))})
    for shape in [(1, 1, 4), (4, 9, 4), (3, 5, 4)]:
        x = randn(rng, shape)
        assert_close(r.run({"x": x}), refs.reduce(x, "SUM", (1, 2), False))


def test_reduce_errors(expect_layer_error):
    names = ("bad_reduce", "[Reduce]")

    def make(net):
        x = net.add_input("x", trt.float32, (2, 3))
        layer = net.add_reduce(x, trt.ReduceOperation.SUM, mask((2,)), False)
        layer.name = "bad_reduce"
        net.mark_output(layer.get_output(0))
    e = expect_layer_error(make, trt.Error, names)
    assert isinstance(e, ValueError)

    def make2(net):
        x = net.add_input("x", trt.bool, (2, 3))
        layer = net.add_reduce(x, trt.ReduceOperation.SUM, 1, False)
        layer.name = "bad_reduce"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make2, trt.DTypeError, names)


# ------------------------------------------------------------------------------------------------------------
# topk
# ------------------------------------------------------------------------------------------------------------

def distinct(rng, shape):
    """Values with no ties (so the index output is unique)."""
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float32) / 7.0 - n / 14.0).reshape(shape)


def topk_make(op, k, axis):
    def make(net, x):
        layer = net.add_topk(x, getattr(trt.TopKOperation, op), k, 1 << axis)
        return [layer.get_output(0), layer.get_output(1)]
    return make


@pytest.mark.parametrize("op", ["MAX", "MIN"])
@pytest.mark.parametrize("axis,k", [(0, 1), (0, 2), (1, 2), (2, 5), (3, 1), (3, 3), (3, 7)])
def test_topk(op, axis, k, rng, build_and_run):
    x = distinct(rng, (2, 3, 5, 7))
    vals, idx = build_and_run(topk_make(op, k, axis), {"x": x})
    rv, ri = refs.topk(x, op, k, axis)
    assert_close(vals, rv)
    assert_close(idx, ri)


def test_topk_int32_values(rng, build_and_run):
    x = (rng.permutation(60) - 30).astype(np.int32).reshape(3, 20)
    vals, idx = build_and_run(topk_make("MAX", 4, 1), {"x": x})
    rv, ri = refs.topk(x, "MAX", 4, 1)
    assert_close(vals, rv)
    assert_close(idx, ri)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_topk_implicit_batch(axis, rng, build_and_run):
    x = distinct(rng, (3, 4, 5, 6))
    vals, idx = build_and_run(topk_make("MIN", 2, axis), {"x": x}, explicit=False, max_batch=3)
    rv, ri = refs.topk(x, "MIN", 2, axis + 1)
    assert_close(vals, rv)
    assert_close(idx, ri)


def test_topk_attributes_roundtrip_and_dynamic(rng, build, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (2, 9))
    layer = n.network.add_topk(x, trt.TopKOperation.MAX, 3, 2)
    assert isinstance(layer, trt.ITopKLayer)
    assert layer.num_outputs == 2
    assert layer.op == trt.TopKOperation.MAX and layer.k == 3 and layer.axes == 2
    assert tuple(layer.get_output(0).shape) == (2, 3)
    assert layer.get_output(1).dtype == trt.int32
    layer.op = trt.TopKOperation.MIN
    layer.k = 5
    assert layer.op == trt.TopKOperation.MIN and layer.k == 5
    assert tuple(layer.get_output(1).shape) == (2, 5)
    layer.axes = 1
    assert layer.axes == 1

    r = build(topk_make("MAX", 3, 1), {"x": ((2, 8), np.float32)}, input_shapes={"x": (-1, 8)},
              profile={"x": ((1, 8), (2, 8), (5, 8))})
    for nb in (1, 5):
        xv = distinct(rng, (nb, 8))
        vals, idx = r.run({"x": xv})
        rv, ri = refs.topk(xv, "MAX", 3, 1)
        assert_close(vals, rv)
        assert_close(idx, ri)


def test_topk_errors(expect_layer_error):
    names = ("bad_topk", "[TopK]")

    def make(net, k=10, axes=2):
        x = net.add_input("x", trt.float32, (2, 9))
        layer = net.add_topk(x, trt.TopKOperation.MAX, k, axes)
        layer.name = "bad_topk"
        net.mark_output(layer.get_output(0))
        net.mark_output(layer.get_output(1))
    e = expect_layer_error(make, trt.Error, names)  # k larger than the dim
    assert isinstance(e, ValueError)
    e = expect_layer_error(lambda net: make(net, 2, 3), trt.Error, names)  # two axes
    assert isinstance(e, ValueError)
    e = expect_layer_error(lambda net: make(net, 2, 4), trt.Error, names)  # axis out of range
    assert isinstance(e, ValueError)


# ------------------------------------------------------------------------------------------------------------
# softmax
# ------------------------------------------------------------------------------------------------------------

def softmax_make(axes=None, check_default=None):
    def make(net, x):
        layer = net.add_softmax(x)
        if check_default is not None:
            assert layer.axes == check_default, "default axes %r, expected %r" % (layer.axes, check_default)
        if axes is not None:
            layer.axes = axes
        return layer
    return make


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_softmax_axes(axis, rng, build_and_run):
    x = randn(rng, (2, 3, 5, 7), 3.0)
    assert_close(build_and_run(softmax_make(1 << axis), {"x": x}), refs.softmax(x, axis))


def test_softmax_default_axis_explicit(rng, build_and_run):
    """Explicit batch NCHW: the default axis is 1 (C)."""
    x = randn(rng, (2, 5, 3, 4), 3.0)
    assert_close(build_and_run(softmax_make(check_default=1 << 1), {"x": x}), refs.softmax(x, 1))


def test_softmax_default_axis_implicit(rng, build_and_run):
    """Implicit batch CHW: the default axis is C (bit 0), dim 1 of the full tensor."""
    x = randn(rng, (3, 5, 3, 4), 3.0)
    out = build_and_run(softmax_make(check_default=1 << 0), {"x": x}, explicit=False, max_batch=4)
    assert_close(out, refs.softmax(x, 1))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_softmax_implicit_batch_axes(axis, rng, build_and_run):
    x = randn(rng, (2, 3, 4, 5), 3.0)
    out = build_and_run(softmax_make(1 << axis), {"x": x}, explicit=False)
    assert_close(out, refs.softmax(x, axis + 1))


def test_softmax_2d_and_large_values(rng, build_and_run):
    x = randn(rng, (3, 11), 3.0)
    x[0, :3] = [80.0, 85.0, -90.0]  # exp overflows in float32 without max subtraction
    assert_close(build_and_run(softmax_make(1 << 1), {"x": x}), refs.softmax(x, 1))


def test_softmax_dynamic_shapes(rng, build):
    r = build(softmax_make(1 << 2), {"x": ((2, 3, 4), np.float32)}, input_shapes={"x": (-1, 3, -1)},
              profile={"x": ((1, 3, 1), (2, 3, 4), (3, 3, 17))})
    for shape in [(1, 3, 1), (3, 3, 17), (2, 3, 6)]:
        x = randn(rng, shape, 3.0)
        assert_close(r.run({"x": x}), refs.softmax(x, 2))


def test_softmax_errors(expect_layer_error):
    names = ("bad_softmax", "[Softmax]")

    def make(net, axes=6, dtype=trt.float32):
        x = net.add_input("x", dtype, (2, 3, 4))
        layer = net.add_softmax(x)
        layer.name = "bad_softmax"
        layer.axes = axes
        net.mark_output(layer.get_output(0))
    e = expect_layer_error(make, trt.Error, names)  # two axes
    assert isinstance(e, ValueError)
    e = expect_layer_error(lambda net: make(net, 1 << 3), trt.Error, names)  # out of range
    assert isinstance(e, ValueError)
    expect_layer_error(lambda net: make(net, 2, trt.int32), trt.DTypeError, names)


# ------------------------------------------------------------------------------------------------------------
# normalization
# ------------------------------------------------------------------------------------------------------------

def norm_make(scale, bias, axes, eps=None, groups=None):
    def make(net, x):
        layer = net.add_normalization(x, const(net, scale), const(net, bias), mask(axes))
        if eps is not None:
            layer.epsilon = eps
        if groups is not None:
            layer.num_groups = groups
        return layer
    return make


@pytest.mark.parametrize("axes,sshape", [((3,), (1, 1, 1, 7)), ((2, 3), (1, 1, 5, 7)), ((1, 2, 3), (1, 3, 5, 7)),
                                         ((2, 3), (1, 3, 1, 1))])
@pytest.mark.parametrize("eps", [1e-5, 0.1])
def test_normalization(axes, sshape, eps, rng, build_and_run):
    x = randn(rng, (2, 3, 5, 7), 2.0) + 1.0
    s, b = randn(rng, sshape), randn(rng, sshape)
    out = build_and_run(norm_make(s, b, axes, eps), {"x": x})
    assert_close(out, refs.normalization(x, s, b, axes, np.float32(eps)))


@pytest.mark.parametrize("groups", [2, 3, 6])
def test_group_normalization(groups, rng, build_and_run):
    """TensorRT documents group-norm scale and bias of shape [1, G, 1, 1] (one value per group)."""
    x = randn(rng, (2, 6, 4, 5), 2.0)
    s, b = randn(rng, (1, groups, 1, 1)), randn(rng, (1, groups, 1, 1))
    out = build_and_run(norm_make(s, b, (2, 3), 1e-5, groups), {"x": x})
    assert_close(out, refs.normalization(x, s, b, (2, 3), np.float32(1e-5), num_groups=groups))


def test_normalization_scale_bias_as_inputs_and_dynamic(rng, build):
    def make(net, x, s, b):
        return net.add_normalization(x, s, b, mask((2,)))

    r = build(make, {"x": ((2, 3, 8), np.float32), "s": ((1, 1, 8), np.float32), "b": ((1, 1, 8), np.float32)},
              input_shapes={"x": (-1, -1, 8)}, profile={"x": ((1, 1, 8), (2, 3, 8), (4, 5, 8))})
    s, b = randn(rng, (1, 1, 8)), randn(rng, (1, 1, 8))
    for shape in [(1, 1, 8), (4, 5, 8)]:
        x = randn(rng, shape)
        assert_close(r.run({"x": x, "s": s, "b": b}), refs.normalization(x, s, b, (2,), np.float32(1e-5)))


def test_normalization_attributes_roundtrip(new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (2, 4, 3, 3))
    s = n.network.add_constant((1, 4, 1, 1), np.ones(4, np.float32)).get_output(0)
    layer = n.network.add_normalization(x, s, s, mask((2, 3)))
    assert isinstance(layer, trt.INormalizationLayer)
    assert abs(layer.epsilon - 1e-5) < 1e-10
    assert layer.axes == mask((2, 3))
    assert layer.num_groups == 1
    layer.epsilon = 1e-3
    layer.axes = mask((1, 2, 3))
    layer.num_groups = 2
    assert abs(layer.epsilon - 1e-3) < 1e-9
    assert layer.axes == mask((1, 2, 3))
    assert layer.num_groups == 2


def test_normalization_errors(expect_layer_error):
    names = ("bad_norm", "[Normalization]")

    def make(net, sshape=(1, 4, 1, 1), groups=None):
        x = net.add_input("x", trt.float32, (2, 4, 3, 3))
        s = net.add_constant(sshape, np.ones(int(np.prod(sshape)), np.float32)).get_output(0)
        layer = net.add_normalization(x, s, s, mask((2, 3)))
        layer.name = "bad_norm"
        if groups:
            layer.num_groups = groups
        net.mark_output(layer.get_output(0))
    expect_layer_error(lambda net: make(net, (1, 3, 1, 1)), trt.ShapeError, names)  # scale not broadcastable
    e = expect_layer_error(lambda net: make(net, groups=3), trt.Error, names)  # 3 groups do not divide 4 channels
    assert isinstance(e, ValueError)
