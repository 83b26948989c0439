"""Fully connected, matrix multiply, scale, LRN, constant, identity and cast layers vs tests/refs.py, and the
layer-naming rules that error messages rely on."""
import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close, weights_array


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def const(net, arr):
    return net.add_constant(arr.shape, arr).get_output(0)


# ------------------------------------------------------------------------------------------------------------
# fully connected
# ------------------------------------------------------------------------------------------------------------

def fc_make(K, w, b):
    def make(net, x):
        layer = net.add_fully_connected(input=x, num_outputs=K, kernel=w, bias=b)
        return layer
    return make


@pytest.mark.parametrize("shape,K,has_b", [((3, 2, 3, 4), 5, True), ((2, 7, 1, 1), 3, False),
                                           ((1, 5, 3, 3), 1, True), ((4, 1, 1, 9), 6, True)])
def test_fully_connected(shape, K, has_b, rng, build_and_run):
    x = randn(rng, shape)
    w = randn(rng, (K, int(np.prod(shape[1:]))))
    b = randn(rng, K) if has_b else None
    out = build_and_run(fc_make(K, w, b), {"x": x})
    assert out.shape == (shape[0], K, 1, 1)
    assert_close(out, refs.fully_connected(x, w, b))


def test_fully_connected_implicit_batch(rng, build_and_run):
    """TensorRT 7: CHW in, {K, 1, 1} out per sample."""
    x = randn(rng, (3, 2, 3, 4))
    w = randn(rng, (5, 24))
    b = randn(rng, 5)

    def make(net, t):
        layer = net.add_fully_connected(t, 5, w, b)
        assert tuple(layer.get_output(0).shape) == (5, 1, 1)
        return layer

    out = build_and_run(make, {"x": x}, explicit=False, max_batch=4)
    assert_close(out, refs.fully_connected(x, w, b))
    out = build_and_run(make, {"x": x[:2]}, explicit=False, max_batch=4)
    assert_close(out, refs.fully_connected(x[:2], w, b))


def test_fully_connected_attributes_roundtrip_and_dynamic(rng, build, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (2, 3, 2, 2))
    w = randn(rng, (4, 12))
    layer = n.network.add_fully_connected(x, 4, w)
    assert isinstance(layer, trt.IFullyConnectedLayer)
    assert layer.type == trt.LayerType.FULLY_CONNECTED
    assert layer.num_output_channels == 4
    np.testing.assert_array_equal(weights_array(layer.kernel), w.ravel())
    w2, b2 = randn(rng, (6, 12)), randn(rng, 6)
    layer.num_output_channels = 6
    layer.kernel = w2
    layer.bias = b2
    assert layer.num_output_channels == 6
    np.testing.assert_array_equal(weights_array(layer.bias), b2)

    def make(net, t):
        lay = net.add_fully_connected(t, 4, w)
        lay.num_output_channels = 6
        lay.kernel = w2
        lay.bias = b2
        return lay

    r = build(make, {"x": ((2, 3, 2, 2), np.float32)}, input_shapes={"x": (-1, 3, 2, 2)},
              profile={"x": ((1, 3, 2, 2), (2, 3, 2, 2), (5, 3, 2, 2))})
    for nb in (1, 5, 3):
        xv = randn(rng, (nb, 3, 2, 2))
        assert_close(r.run({"x": xv}), refs.fully_connected(xv, w2, b2))


def test_fully_connected_errors(expect_layer_error):
    names = ("bad_fc", "[Fully Connected]")

    def make(net, shape=(2, 3, 2, 2), count=4 * 12, bcount=None):
        x = net.add_input("x", trt.float32, shape)
        b = np.ones(bcount, np.float32) if bcount else None
        layer = net.add_fully_connected(x, 4, np.ones(count, np.float32), b)
        layer.name = "bad_fc"
        net.mark_output(layer.get_output(0))
    e = expect_layer_error(lambda net: make(net, count=4 * 12 - 1), trt.Error, names)
    assert isinstance(e, ValueError)
    e = expect_layer_error(lambda net: make(net, bcount=3), trt.Error, names)
    assert isinstance(e, ValueError)
    expect_layer_error(lambda net: make(net, shape=(12,), count=48), trt.ShapeError, names)


# ------------------------------------------------------------------------------------------------------------
# matrix multiply
# ------------------------------------------------------------------------------------------------------------

MM_CASES = [
    # shape a, op0, shape b, op1
    ((3, 4), "NONE", (4, 5), "NONE"),
    ((4, 3), "TRANSPOSE", (4, 5), "NONE"),
    ((3, 4), "NONE", (5, 4), "TRANSPOSE"),
    ((4, 3), "TRANSPOSE", (5, 4), "TRANSPOSE"),
    ((2, 3, 7), "NONE", (2, 7, 5), "NONE"),
    ((3, 5, 2), "TRANSPOSE", (3, 5, 3), "NONE"),
    ((2, 1, 3, 4), "NONE", (1, 3, 4, 5), "NONE"),
    ((2, 3, 4), "NONE", (1, 4, 6), "NONE"),
    ((2, 3, 4), "NONE", (2, 4), "VECTOR"),
    ((2, 4), "VECTOR", (2, 4, 5), "NONE"),
    ((2, 4), "VECTOR", (2, 5, 4), "TRANSPOSE"),
    ((3, 4), "VECTOR", (3, 4), "VECTOR"),
    ((1, 3, 4), "NONE", (2, 4), "VECTOR"),
    ((1, 17), "NONE", (17, 1), "NONE"),
    ((5, 9, 13), "NONE", (5, 13, 11), "NONE"),
]


def mm_make(op0, op1):
    def make(net, a, b):
        return net.add_matrix_multiply(a, getattr(trt.MatrixOperation, op0), b, getattr(trt.MatrixOperation, op1))
    return make


@pytest.mark.parametrize("case", MM_CASES, ids=["%s%s_%s%s" % (c[0], c[1], c[2], c[3]) for c in MM_CASES])
def test_matrix_multiply(case, rng, build_and_run):
    sa, op0, sb, op1 = case
    a, b = randn(rng, sa), randn(rng, sb)
    out = build_and_run(mm_make(op0, op1), {"a": a, "b": b})
    assert_close(out, refs.matrix_multiply(a, op0, b, op1))


def test_matrix_multiply_constant_weights(rng, build_and_run):
    x = randn(rng, (3, 6))
    w = randn(rng, (5, 6))

    def make(net, t):
        return net.add_matrix_multiply(t, trt.MatrixOperation.NONE, const(net, w), trt.MatrixOperation.TRANSPOSE)

    assert_close(build_and_run(make, {"x": x}), refs.matrix_multiply(x, "NONE", w, "TRANSPOSE"))


def test_matrix_multiply_attributes_roundtrip_and_dynamic(rng, build, new_network):
    n = new_network()
    a = n.network.add_input("a", trt.float32, (2, 3))
    layer = n.network.add_matrix_multiply(a, trt.MatrixOperation.NONE, a, trt.MatrixOperation.TRANSPOSE)
    assert isinstance(layer, trt.IMatrixMultiplyLayer)
    assert layer.op0 == trt.MatrixOperation.NONE and layer.op1 == trt.MatrixOperation.TRANSPOSE
    assert tuple(layer.get_output(0).shape) == (2, 2)
    layer.op0 = trt.MatrixOperation.TRANSPOSE
    layer.op1 = trt.MatrixOperation.NONE
    assert layer.op0 == trt.MatrixOperation.TRANSPOSE and layer.op1 == trt.MatrixOperation.NONE
    assert tuple(layer.get_output(0).shape) == (3, 3)

    def make(net, x, y):
        lay = net.add_matrix_multiply(x, trt.MatrixOperation.NONE, y, trt.MatrixOperation.NONE)
        lay.op1 = trt.MatrixOperation.TRANSPOSE
        return lay

    r = build(make, {"x": ((2, 3, 4), np.float32), "y": ((2, 5, 4), np.float32)},
              input_shapes={"x": (-1, -1, 4), "y": (-1, 5, 4)},
              profile={"x": ((1, 1, 4), (2, 3, 4), (3, 6, 4)), "y": ((1, 5, 4), (2, 5, 4), (3, 5, 4))})
    for nb, m in [(1, 1), (3, 6), (2, 4)]:
        x, y = randn(rng, (nb, m, 4)), randn(rng, (nb, 5, 4))
        assert_close(r.run({"x": x, "y": y}), refs.matrix_multiply(x, "NONE", y, "TRANSPOSE"))


def test_matrix_multiply_errors(expect_layer_error):
    names = ("bad_mm", "[Matrix Multiply]")

    def make(net, sa, sb, op1=trt.MatrixOperation.NONE, dtype=trt.float32):
        a = net.add_input("a", dtype, sa)
        b = net.add_input("b", dtype, sb)
        layer = net.add_matrix_multiply(a, trt.MatrixOperation.NONE, b, op1)
        layer.name = "bad_mm"
        net.mark_output(layer.get_output(0))
    expect_layer_error(lambda net: make(net, (3, 4), (5, 6)), trt.ShapeError, names)
    expect_layer_error(lambda net: make(net, (2, 3, 4), (3, 4, 5)), trt.ShapeError, names)
    expect_layer_error(lambda net: make(net, (3, 4), (4, 5), trt.MatrixOperation.TRANSPOSE), trt.ShapeError, names)
    expect_layer_error(lambda net: make(net, (3, 4), (4, 5), dtype=trt.bool), trt.DTypeError, names)


# ------------------------------------------------------------------------------------------------------------
# scale
# ------------------------------------------------------------------------------------------------------------

def scale_make(mode, shift, scale, power, channel_axis=None, nd=False):
    def make(net, x):
        m = getattr(trt.ScaleMode, mode)
        if nd:
            layer = net.add_scale_nd(x, m, shift, scale, power, channel_axis)
        else:
            layer = net.add_scale(input=x, mode=m, shift=shift, scale=scale, power=power)
        return layer
    return make


def scale_weights(rng, count, which):
    sh = randn(rng, count) if "shift" in which else None
    sc = (rng.random(count) + 0.5).astype(np.float32) if "scale" in which else None
    pw = (rng.random(count) * 1.5 + 0.5).astype(np.float32) if "power" in which else None
    return sh, sc, pw


WHICH = [("shift",), ("scale",), ("shift", "scale"), ("shift", "scale", "power"), ("power",), ()]


@pytest.mark.parametrize("mode", ["UNIFORM", "CHANNEL", "ELEMENTWISE"])
@pytest.mark.parametrize("which", WHICH, ids=lambda w: "+".join(w) or "none")
def test_scale(mode, which, rng, build_and_run):
    shape = (2, 3, 4, 5)
    x = (rng.random(shape) + 0.2).astype(np.float32)  # positive so that (x * scale + shift) ** power is defined
    count = {"UNIFORM": 1, "CHANNEL": 3, "ELEMENTWISE": 60}[mode]
    sh, sc, pw = scale_weights(rng, count, which)
    if sh is not None and "power" in which:
        sh = np.abs(sh)
    out = build_and_run(scale_make(mode, sh, sc, pw), {"x": x})
    assert_close(out, refs.scale(x, mode, sh, sc, pw, channel_axis=1))


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_scale_nd_channel_axis(axis, rng, build_and_run):
    shape = (2, 3, 4, 5)
    x = (rng.random(shape) + 0.2).astype(np.float32)
    sh, sc, pw = scale_weights(rng, shape[axis], ("shift", "scale", "power"))
    sh = np.abs(sh)
    out = build_and_run(scale_make("CHANNEL", sh, sc, pw, axis, nd=True), {"x": x})
    assert_close(out, refs.scale(x, "CHANNEL", sh, sc, pw, channel_axis=axis))
    e_sh, e_sc, _ = scale_weights(rng, int(np.prod(shape[axis:])), ("shift", "scale"))
    out = build_and_run(scale_make("ELEMENTWISE", e_sh, e_sc, None, axis, nd=True), {"x": x})
    assert_close(out, refs.scale(x, "ELEMENTWISE", e_sh, e_sc, None, channel_axis=axis))


@pytest.mark.parametrize("mode", ["UNIFORM", "CHANNEL", "ELEMENTWISE"])
def test_scale_implicit_batch(mode, rng, build_and_run):
    """Implicit batch CHW: CHANNEL is per C (axis 0 of the network's view), ELEMENTWISE per C*H*W."""
    x = (rng.random((3, 4, 2, 5)) + 0.2).astype(np.float32)
    count = {"UNIFORM": 1, "CHANNEL": 4, "ELEMENTWISE": 40}[mode]
    sh, sc, pw = scale_weights(rng, count, ("shift", "scale", "power"))
    sh = np.abs(sh)
    out = build_and_run(scale_make(mode, sh, sc, pw), {"x": x}, explicit=False, max_batch=4)
    assert_close(out, refs.scale(x, mode, sh, sc, pw, channel_axis=1))


def test_scale_attributes_roundtrip_and_dynamic(rng, build, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (2, 3, 4, 4))
    sc = np.array([2.0, 3.0, 4.0], np.float32)
    layer = n.network.add_scale(x, trt.ScaleMode.CHANNEL, scale=sc)
    assert isinstance(layer, trt.IScaleLayer)
    assert layer.mode == trt.ScaleMode.CHANNEL
    np.testing.assert_array_equal(weights_array(layer.scale), sc)
    assert weights_array(layer.shift).size == 0 and weights_array(layer.power).size == 0
    sh = np.array([1.0, 2.0, 3.0], np.float32)
    layer.shift = sh
    np.testing.assert_array_equal(weights_array(layer.shift), sh)
    layer.mode = trt.ScaleMode.UNIFORM
    assert layer.mode == trt.ScaleMode.UNIFORM
    lay2 = n.network.add_scale_nd(x, trt.ScaleMode.CHANNEL, None, np.ones(4, np.float32), None, 2)
    assert lay2.channel_axis == 2
    lay2.channel_axis = 3
    assert lay2.channel_axis == 3

    def make(net, t):
        lay = net.add_scale(t, trt.ScaleMode.UNIFORM, scale=np.array([1.0], np.float32))
        lay.mode = trt.ScaleMode.CHANNEL
        lay.scale = sc
        lay.shift = sh
        return lay

    r = build(make, {"x": ((2, 3, 4, 4), np.float32)}, input_shapes={"x": (-1, 3, -1, -1)},
              profile={"x": ((1, 3, 1, 1), (2, 3, 4, 4), (3, 3, 8, 8))})
    for shape in [(1, 3, 1, 1), (3, 3, 8, 5)]:
        xv = randn(rng, shape)
        assert_close(r.run({"x": xv}), refs.scale(xv, "CHANNEL", sh, sc, None, channel_axis=1))


def test_scale_errors(expect_layer_error):
    names = ("bad_scale", "[Scale]")

    def make(net, mode=trt.ScaleMode.CHANNEL, count=4, dtype=trt.float32):
        x = net.add_input("x", dtype, (2, 3, 4, 4))
        layer = net.add_scale(x, mode, scale=np.ones(count, np.float32))
        layer.name = "bad_scale"
        net.mark_output(layer.get_output(0))
    e = expect_layer_error(make, trt.Error, names)
    assert isinstance(e, ValueError)
    e = expect_layer_error(lambda net: make(net, trt.ScaleMode.UNIFORM, 2), trt.Error, names)
    assert isinstance(e, ValueError)
    e = expect_layer_error(lambda net: make(net, trt.ScaleMode.ELEMENTWISE, 47), trt.Error, names)
    assert isinstance(e, ValueError)
    expect_layer_error(lambda net: make(net, count=3, dtype=trt.int32), trt.DTypeError, names)


# ------------------------------------------------------------------------------------------------------------
# LRN
# ------------------------------------------------------------------------------------------------------------

def lrn_make(window, alpha, beta, k):
    def make(net, x):
        return net.add_lrn(x, window, alpha, beta, k)
    return make


@pytest.mark.parametrize("window", [1, 3, 5, 7, 15])
@pytest.mark.parametrize("abk", [(1e-4, 0.75, 1.0), (0.5, 0.6, 2.0)])
def test_lrn(window, abk, rng, build_and_run):
    x = randn(rng, (2, 7, 4, 3), 2.0)
    out = build_and_run(lrn_make(window, *abk), {"x": x})
    assert_close(out, refs.lrn(x, window, *(np.float32(v) for v in abk)))


def test_lrn_implicit_batch_and_dynamic(rng, build_and_run, build):
    x = randn(rng, (3, 5, 3, 4))
    out = build_and_run(lrn_make(3, 0.3, 0.75, 1.5), {"x": x}, explicit=False)
    assert_close(out, refs.lrn(x, 3, np.float32(0.3), 0.75, 1.5))
    r = build(lrn_make(5, 0.3, 0.75, 1.5), {"x": ((2, 6, 3, 3), np.float32)}, input_shapes={"x": (-1, 6, -1, -1)},
              profile={"x": ((1, 6, 1, 1), (2, 6, 3, 3), (3, 6, 5, 6))})
    for shape in [(1, 6, 1, 1), (3, 6, 5, 6)]:
        xv = randn(rng, shape)
        assert_close(r.run({"x": xv}), refs.lrn(xv, 5, np.float32(0.3), 0.75, 1.5))


def test_lrn_attributes_roundtrip(new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (1, 5, 3, 3))
    layer = n.network.add_lrn(x, 3, 0.5, 0.75, 2.0)
    assert isinstance(layer, trt.ILRNLayer)
    assert layer.window_size == 3 and layer.alpha == 0.5 and layer.beta == 0.75 and layer.k == 2.0
    layer.window_size = 5
    layer.alpha = 0.25
    layer.beta = 0.5
    layer.k = 1.0
    assert layer.window_size == 5 and layer.alpha == 0.25 and layer.beta == 0.5 and layer.k == 1.0


def test_lrn_errors(expect_layer_error):
    names = ("bad_lrn", "[LRN]")

    def make(net, window=4, dtype=trt.float32):
        x = net.add_input("x", dtype, (1, 5, 3, 3))
        layer = net.add_lrn(x, window, 0.5, 0.75, 2.0)
        layer.name = "bad_lrn"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.InvalidArgumentError, names)  # even window
    expect_layer_error(lambda net: make(net, 17), trt.InvalidArgumentError, names)  # window > 15
    expect_layer_error(lambda net: make(net, 3, trt.int32), trt.DTypeError, names)


# ------------------------------------------------------------------------------------------------------------
# constant, identity, cast
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_constant(dtype, rng, build_and_run):
    c = (rng.standard_normal((2, 3, 4)) * 10).astype(dtype)
    x = (rng.standard_normal((2, 3, 4)) * 10).astype(dtype)

    def make(net, t):
        layer = net.add_constant(c.shape, c)
        assert isinstance(layer, trt.IConstantLayer)
        assert tuple(layer.get_output(0).shape) == (2, 3, 4)
        return net.add_elementwise(t, layer.get_output(0), trt.ElementWiseOperation.SUM)

    out = build_and_run(make, {"x": x})
    assert_close(out, refs.elementwise(x, refs.constant((2, 3, 4), c), "SUM"))


def test_constant_as_output_and_roundtrip(rng, build_and_run, new_network):
    c = randn(rng, (3, 5))
    x = randn(rng, (2, 2))

    def make(net, t):
        return [net.add_identity(t).get_output(0), net.add_constant((3, 5), trt.Weights(c)).get_output(0)]

    y, k = build_and_run(make, {"x": x})
    assert_close(y, x.astype(np.float64))
    assert_close(k, c.astype(np.float64))

    n = new_network()
    layer = n.network.add_constant((2, 3), np.arange(6, dtype=np.float32))
    assert tuple(layer.shape) == (2, 3)
    np.testing.assert_array_equal(weights_array(layer.weights), np.arange(6))
    layer.weights = np.ones(6, np.float32) * 2
    layer.shape = (3, 2)
    assert tuple(layer.shape) == (3, 2)
    assert tuple(layer.get_output(0).shape) == (3, 2)
    np.testing.assert_array_equal(weights_array(layer.weights), np.full(6, 2.0))


def test_constant_error_count(expect_layer_error):
    def make(net):
        layer = net.add_constant((2, 3), np.ones(5, np.float32))
        layer.name = "bad_const"
        x = net.add_input("x", trt.float32, (2, 3))
        net.mark_output(net.add_elementwise(x, layer.get_output(0), trt.ElementWiseOperation.SUM).get_output(0))
    e = expect_layer_error(make, trt.Error, ("bad_const", "[Constant]"))
    assert isinstance(e, ValueError)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_identity(dtype, rng, build_and_run):
    x = (rng.standard_normal((2, 3, 5)) * 10).astype(dtype)

    def make(net, t):
        layer = net.add_identity(t)
        assert isinstance(layer, trt.IIdentityLayer)
        return layer

    assert_close(build_and_run(make, {"x": x}), refs.identity(x) if dtype != np.float32 else x.astype(np.float64))


def test_identity_implicit_and_dynamic(rng, build_and_run, build):
    x = randn(rng, (3, 2, 4))
    assert_close(build_and_run(lambda net, t: net.add_identity(t), {"x": x}, explicit=False),
                 x.astype(np.float64))
    r = build(lambda net, t: net.add_identity(t), {"x": ((2, 3), np.float32)}, input_shapes={"x": (-1, -1)},
              profile={"x": ((1, 1), (2, 3), (4, 7))})
    for shape in [(1, 1), (4, 7)]:
        xv = randn(rng, shape)
        assert_close(r.run({"x": xv}), xv.astype(np.float64))


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.int32, np.float32), (np.bool_, np.float32),
                                     (np.float32, np.bool_)])
def test_identity_type_conversion(src, dst, rng, build_and_run):
    """TensorRT: an identity layer whose output type is set converts between types."""
    from conftest import trt_dtype
    if src == np.bool_:
        x = rng.random((2, 3, 4)) > 0.5
    else:
        x = np.round(rng.standard_normal((2, 3, 4)) * 10).astype(src)  # integral values only

    def make(net, t):
        layer = net.add_identity(t)
        layer.set_output_type(0, trt_dtype(dst))
        return layer

    ref = refs.cast(x, dst)
    assert_close(build_and_run(make, {"x": x}), ref.astype(np.float64) if ref.dtype == np.float32 else ref)


CASTS = [
    (np.float32, np.int32), (np.float32, np.bool_), (np.int32, np.float32), (np.int32, np.bool_),
    (np.bool_, np.float32), (np.bool_, np.int32), (np.float32, np.float32), (np.int32, np.int32),
]


@pytest.mark.parametrize("src,dst", CASTS, ids=["%s-%s" % (np.dtype(a).name, np.dtype(b).name) for a, b in CASTS])
def test_cast(src, dst, rng, build_and_run):
    if src == np.bool_:
        x = rng.random((2, 3, 5)) > 0.5
    elif src == np.int32:
        x = rng.integers(-20, 20, (2, 3, 5)).astype(np.int32)
    else:
        # integral values (plus zeros): rounding of fractions is not pinned down by TensorRT's documentation
        x = np.round(rng.standard_normal((2, 3, 5)) * 10).astype(np.float32)
    x.flat[0] = 0

    def make(net, t):
        from conftest import trt_dtype
        layer = net.add_cast(t, trt_dtype(dst))
        assert isinstance(layer, trt.ICastLayer)
        assert layer.to_type == trt_dtype(dst)
        assert layer.get_output(0).dtype == trt_dtype(dst)
        return layer

    out = build_and_run(make, {"x": x})
    ref = refs.cast(x, dst)
    if ref.dtype == np.float32:
        ref = ref.astype(np.float64)
    assert_close(out, ref)


def test_cast_roundtrip(new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (2, 3))
    layer = n.network.add_cast(x, trt.int32)
    layer.to_type = trt.bool
    assert layer.to_type == trt.bool
    assert layer.get_output(0).dtype == trt.bool


# ------------------------------------------------------------------------------------------------------------
# names and types that error messages rely on
# ------------------------------------------------------------------------------------------------------------

def test_default_layer_names_and_types(rng, new_network):
    n = new_network()
    net = n.network
    x = net.add_input("x", trt.float32, (1, 4, 6, 6))
    w = np.ones((4, 4, 3, 3), np.float32)
    added = [
        (net.add_convolution_nd(x, 4, (3, 3), w), "Convolution", trt.LayerType.CONVOLUTION),
        (net.add_activation(x, trt.ActivationType.RELU), "Activation", trt.LayerType.ACTIVATION),
        (net.add_pooling_nd(x, trt.PoolingType.MAX, (2, 2)), "Pooling", trt.LayerType.POOLING),
        (net.add_elementwise(x, x, trt.ElementWiseOperation.SUM), "ElementWise", trt.LayerType.ELEMENTWISE),
        (net.add_unary(x, trt.UnaryOperation.EXP), "Unary", trt.LayerType.UNARY),
        (net.add_shuffle(x), "Shuffle", trt.LayerType.SHUFFLE),
        (net.add_softmax(x), "Softmax", trt.LayerType.SOFTMAX),
        (net.add_identity(x), "Identity", trt.LayerType.IDENTITY),
        (net.add_reduce(x, trt.ReduceOperation.SUM, 2, True), "Reduce", trt.LayerType.REDUCE),
        (net.add_lrn(x, 3, 1e-4, 0.75, 1.0), "LRN", trt.LayerType.LRN),
        (net.add_concatenation([x, x]), "Concatenation", trt.LayerType.CONCATENATION),
    ]
    assert net.num_layers == len(added)
    for i, (layer, disp, ltype) in enumerate(added):
        assert layer.name == "(Unnamed Layer* %d) [%s]" % (i, disp)
        assert net.get_layer(i).name == layer.name
        if disp not in ("Activation", "Pooling"):  # their .type is the activation/pooling type
            assert layer.type == ltype
    added[0][0].name = "my_conv"
    assert added[0][0].name == "my_conv"
    assert net.get_layer(0).name == "my_conv"
    assert net.get_layer(0).num_inputs == 1 and net.get_layer(0).num_outputs == 1
