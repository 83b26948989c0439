"""Layers in the combinations the builder rewrites (bias/activation/residual epilogues, scale folding) and at
sizes that reach the optimized kernels and the thread pool, vs compositions of tests/refs.py.

Run in both builder modes (see conftest): "opt" applies the fusion passes and optimized kernels, "ref" runs the
same network unfused on reference kernels.
"""
import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def conv(net, t, w, b=None, stride=(1, 1), pad=(0, 0), groups=1):
    layer = net.add_convolution_nd(t, w.shape[0], tuple(w.shape[2:]), w, b)
    layer.stride_nd = stride
    layer.padding_nd = pad
    layer.num_groups = groups
    return layer.get_output(0)


def act(net, t, name, alpha=0.0, beta=0.0):
    layer = net.add_activation(t, getattr(trt.ActivationType, name))
    layer.alpha = alpha
    layer.beta = beta
    return layer.get_output(0)


def ew(net, a, b, op):
    return net.add_elementwise(a, b, getattr(trt.ElementWiseOperation, op)).get_output(0)


def const(net, arr):
    return net.add_constant(arr.shape, arr).get_output(0)


# ------------------------------------------------------------------------------------------------------------
# sizes that reach the optimized kernels (odd channel counts, tails, work split across threads)
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,K,ks,stride,pad,groups", [
    ((2, 19, 15, 13), 37, (3, 3), (1, 1), (1, 1), 1),
    ((2, 64, 9, 9), 48, (1, 1), (1, 1), (0, 0), 1),
    ((1, 33, 20, 17), 17, (5, 3), (2, 1), (2, 1), 1),
    ((2, 24, 17, 15), 24, (3, 3), (2, 2), (1, 1), 24),
    ((3, 13, 11, 16), 13, (3, 3), (1, 1), (1, 1), 13),
    ((1, 16, 12, 12), 32, (3, 3), (1, 2), (0, 1), 4),
    ((2, 9, 28, 28), 8, (7, 7), (1, 1), (3, 3), 1),
])
def test_convolution_medium(shape, K, ks, stride, pad, groups, rng, build_and_run):
    x = randn(rng, shape)
    w = randn(rng, (K, shape[1] // groups) + ks, 0.3)
    b = randn(rng, K)

    def make(net, t):
        layer = net.add_convolution_nd(t, K, ks, w, b)
        layer.stride_nd = stride
        layer.padding_nd = pad
        layer.num_groups = groups
        return layer

    assert_close(build_and_run(make, {"x": x}), refs.convolution(x, w, b, stride, pad, pad, None, groups))


def test_deconvolution_medium(rng, build_and_run):
    x = randn(rng, (2, 21, 9, 7))
    w = randn(rng, (21, 13, 4, 4), 0.3)
    b = randn(rng, 13)

    def make(net, t):
        layer = net.add_deconvolution_nd(t, 13, (4, 4), w, b)
        layer.stride_nd = (2, 2)
        layer.padding_nd = (1, 1)
        return layer

    assert_close(build_and_run(make, {"x": x}), refs.deconvolution(x, w, b, (2, 2), (1, 1), (1, 1)))


@pytest.mark.parametrize("shape,K", [((3, 130, 1, 1), 257), ((2, 7, 5, 5), 100), ((17, 3, 4, 5), 9)])
def test_fully_connected_medium(shape, K, rng, build_and_run):
    x = randn(rng, shape)
    w = randn(rng, (K, int(np.prod(shape[1:]))), 0.2)
    b = randn(rng, K)
    assert_close(build_and_run(lambda net, t: net.add_fully_connected(t, K, w, b), {"x": x}),
                 refs.fully_connected(x, w, b))


@pytest.mark.parametrize("sa,op0,sb,op1", [
    ((3, 65, 130), "NONE", (3, 130, 33), "NONE"),
    ((2, 130, 65), "TRANSPOSE", (1, 33, 130), "TRANSPOSE"),
    ((257, 129), "NONE", (129, 31), "NONE"),
    ((4, 100), "VECTOR", (4, 100, 70), "NONE"),
])
def test_matrix_multiply_medium(sa, op0, sb, op1, rng, build_and_run):
    a, b = randn(rng, sa), randn(rng, sb)

    def make(net, x, y):
        return net.add_matrix_multiply(x, getattr(trt.MatrixOperation, op0), y, getattr(trt.MatrixOperation, op1))

    assert_close(build_and_run(make, {"a": a, "b": b}), refs.matrix_multiply(a, op0, b, op1))


def test_pooling_and_elementwise_medium(rng, build_and_run):
    x = randn(rng, (2, 37, 31, 29))
    y = randn(rng, (1, 37, 1, 29))

    def make(net, t, u):
        p = net.add_pooling_nd(t, trt.PoolingType.AVERAGE, (3, 3))
        p.stride_nd = (2, 2)
        p.padding_nd = (1, 1)
        return [p.get_output(0), ew(net, t, u, "PROD")]

    pool, prod = build_and_run(make, {"x": x, "y": y})
    assert_close(pool, refs.pooling(x, "AVERAGE", (3, 3), (2, 2), (1, 1), (1, 1)))
    assert_close(prod, x.astype(np.float64) * y)


# ------------------------------------------------------------------------------------------------------------
# epilogue fusion: bias + activation (+ residual) into conv / deconv / fc / matmul / elementwise / scale
# ------------------------------------------------------------------------------------------------------------

FUSABLE_ACTS = [("RELU", 0, 0), ("LEAKY_RELU", 0.1, 0), ("CLIP", -0.5, 0.8), ("SIGMOID", 0, 0),
                ("GELU_ERF", 0, 0), ("ELU", 0.7, 0), ("HARD_SIGMOID", 0.2, 0.5), ("SELU", 1.67, 1.05)]


@pytest.mark.parametrize("name,alpha,beta", FUSABLE_ACTS)
def test_conv_bias_activation(name, alpha, beta, rng, build_and_run):
    x = randn(rng, (2, 5, 9, 8))
    w = randn(rng, (7, 5, 3, 3), 0.5)
    b = randn(rng, 7)
    out = build_and_run(lambda net, t: act(net, conv(net, t, w, b, pad=(1, 1)), name, alpha, beta), {"x": x})
    ref = refs.activation(refs.convolution(x, w, b, None, (1, 1), (1, 1)), name, np.float32(alpha), np.float32(beta))
    assert_close(out, ref)


@pytest.mark.parametrize("skip_first", [True, False])
def test_conv_residual_relu(skip_first, rng, build_and_run):
    """relu(conv(x) + x) and relu(x + conv(x)): the residual may be either operand."""
    x = randn(rng, (2, 6, 7, 9))
    w = randn(rng, (6, 6, 3, 3), 0.4)
    b = randn(rng, 6)

    def make(net, t):
        c = conv(net, t, w, b, pad=(1, 1))
        s = ew(net, t, c, "SUM") if skip_first else ew(net, c, t, "SUM")
        return act(net, s, "RELU")

    ref = np.maximum(refs.convolution(x, w, b, None, (1, 1), (1, 1)) + x, 0)
    assert_close(build_and_run(make, {"x": x}), ref)


def test_residual_block_two_convs(rng, build_and_run):
    """ResNet basic block: relu(bn(conv(relu(bn(conv(x))))) + x)."""
    x = randn(rng, (2, 8, 10, 9))
    w1, w2 = randn(rng, (8, 8, 3, 3), 0.3), randn(rng, (8, 8, 3, 3), 0.3)
    s1, t1 = (rng.random(8) + 0.5).astype(np.float32), randn(rng, 8)
    s2, t2 = (rng.random(8) + 0.5).astype(np.float32), randn(rng, 8)

    def make(net, t):
        c1 = conv(net, t, w1, None, pad=(1, 1))
        bn1 = net.add_scale(c1, trt.ScaleMode.CHANNEL, shift=t1, scale=s1).get_output(0)
        r1 = act(net, bn1, "RELU")
        c2 = conv(net, r1, w2, None, pad=(1, 1))
        bn2 = net.add_scale(c2, trt.ScaleMode.CHANNEL, shift=t2, scale=s2).get_output(0)
        return act(net, ew(net, bn2, t, "SUM"), "RELU")

    h = np.maximum(refs.scale(refs.convolution(x, w1, None, None, (1, 1), (1, 1)), "CHANNEL", t1, s1), 0)
    y = refs.scale(refs.convolution(h, w2, None, None, (1, 1), (1, 1)), "CHANNEL", t2, s2)
    assert_close(build_and_run(make, {"x": x}), np.maximum(y + x, 0))


def test_sum_of_two_convs(rng, build_and_run):
    x = randn(rng, (2, 4, 8, 8))
    w1, w2 = randn(rng, (5, 4, 3, 3), 0.4), randn(rng, (5, 4, 1, 1))
    b1, b2 = randn(rng, 5), randn(rng, 5)

    def make(net, t):
        return act(net, ew(net, conv(net, t, w1, b1, pad=(1, 1)), conv(net, t, w2, b2), "SUM"), "TANH")

    ref = np.tanh(refs.convolution(x, w1, b1, None, (1, 1), (1, 1)) + refs.convolution(x, w2, b2))
    assert_close(build_and_run(make, {"x": x}), ref)


@pytest.mark.parametrize("mode,power", [("CHANNEL", False), ("UNIFORM", False), ("CHANNEL", True)])
def test_conv_then_scale(mode, power, rng, build_and_run):
    """A following scale folds into the conv weights when it has no power (batch norm)."""
    x = randn(rng, (2, 3, 8, 7))
    w = randn(rng, (4, 3, 3, 3), 0.4)
    b = randn(rng, 4)
    n = 4 if mode == "CHANNEL" else 1
    sc, sh = (rng.random(n) + 0.5).astype(np.float32), randn(rng, n)
    pw = np.full(n, 2.0, np.float32) if power else None

    def make(net, t):
        c = conv(net, t, w, b)
        return net.add_scale(c, getattr(trt.ScaleMode, mode), shift=sh, scale=sc, power=pw)

    ref = refs.scale(refs.convolution(x, w, b), mode, sh, sc, pw, channel_axis=1)
    assert_close(build_and_run(make, {"x": x}), ref)


def test_fc_scale_relu(rng, build_and_run):
    x = randn(rng, (3, 4, 2, 3))
    w, b = randn(rng, (6, 24), 0.3), randn(rng, 6)
    sc, sh = (rng.random(6) + 0.5).astype(np.float32), randn(rng, 6)

    def make(net, t):
        f = net.add_fully_connected(t, 6, w, b).get_output(0)
        s = net.add_scale(f, trt.ScaleMode.CHANNEL, shift=sh, scale=sc).get_output(0)
        return act(net, s, "RELU")

    ref = np.maximum(refs.scale(refs.fully_connected(x, w, b), "CHANNEL", sh, sc, channel_axis=1), 0)
    assert_close(build_and_run(make, {"x": x}), ref)


def test_matmul_bias_activation_residual(rng, build_and_run):
    a = randn(rng, (2, 5, 7))
    wt = randn(rng, (1, 7, 9), 0.4)
    bias = randn(rng, (1, 1, 9))
    skip = randn(rng, (2, 5, 9))

    def make(net, x, s):
        m = net.add_matrix_multiply(x, trt.MatrixOperation.NONE, const(net, wt), trt.MatrixOperation.NONE)
        y = ew(net, m.get_output(0), const(net, bias), "SUM")
        return act(net, ew(net, y, s, "SUM"), "GELU_TANH")

    ref = refs.activation(refs.matrix_multiply(a, "NONE", wt, "NONE") + bias + skip, "GELU_TANH")
    assert_close(build_and_run(make, {"a": a, "s": skip}), ref)


def test_deconv_residual_activation(rng, build_and_run):
    x = randn(rng, (2, 3, 4, 5))
    skip = randn(rng, (2, 2, 8, 10))
    w, b = randn(rng, (3, 2, 2, 2)), randn(rng, 2)

    def make(net, t, s):
        d = net.add_deconvolution_nd(t, 2, (2, 2), w, b)
        d.stride_nd = (2, 2)
        return act(net, ew(net, d.get_output(0), s, "SUM"), "LEAKY_RELU", 0.2)

    ref = refs.activation(refs.deconvolution(x, w, b, (2, 2)) + skip, "LEAKY_RELU", np.float32(0.2))
    assert_close(build_and_run(make, {"x": x, "s": skip}), ref)


def test_elementwise_and_scale_then_activation(rng, build_and_run):
    a, c = randn(rng, (2, 3, 4, 5)), randn(rng, (2, 3, 4, 5))
    sc = (rng.random(3) + 0.5).astype(np.float32)

    def make(net, x, y):
        p = act(net, ew(net, x, y, "PROD"), "SIGMOID")
        s = net.add_scale(x, trt.ScaleMode.CHANNEL, scale=sc).get_output(0)
        return [p, act(net, s, "CLIP", -0.3, 0.4)]

    p, s = build_and_run(make, {"a": a, "c": c})
    assert_close(p, refs.activation(a.astype(np.float64) * c, "SIGMOID"))
    assert_close(s, refs.activation(refs.scale(a, "CHANNEL", None, sc), "CLIP", np.float32(-0.3), np.float32(0.4)))


# ------------------------------------------------------------------------------------------------------------
# where fusion must not change what the user sees
# ------------------------------------------------------------------------------------------------------------

def test_intermediate_marked_as_output(rng, build_and_run):
    """conv -> relu with the conv result also a network output: both values must be exact."""
    x = randn(rng, (2, 3, 6, 6))
    w, b = randn(rng, (4, 3, 3, 3)), randn(rng, 4)

    def make(net, t):
        c = conv(net, t, w, b)
        return [c, act(net, c, "RELU")]

    c, r = build_and_run(make, {"x": x})
    ref = refs.convolution(x, w, b)
    assert_close(c, ref)
    assert_close(r, np.maximum(ref, 0))


def test_intermediate_with_two_consumers(rng, build_and_run):
    x = randn(rng, (2, 3, 6, 6))
    w, b = randn(rng, (4, 3, 3, 3)), randn(rng, 4)
    sc = (rng.random(4) + 0.5).astype(np.float32)

    def make(net, t):
        c = conv(net, t, w, b)
        r = act(net, c, "RELU")
        s = net.add_scale(c, trt.ScaleMode.CHANNEL, scale=sc).get_output(0)
        return [r, s, ew(net, c, c, "SUM")]

    r, s, d = build_and_run(make, {"x": x})
    ref = refs.convolution(x, w, b)
    assert_close(r, np.maximum(ref, 0))
    assert_close(s, refs.scale(ref, "CHANNEL", None, sc))
    assert_close(d, 2 * ref)


def test_residual_that_is_a_network_input_and_output(rng, build_and_run):
    x = randn(rng, (2, 4, 5, 5))
    w = randn(rng, (4, 4, 1, 1))

    def make(net, t):
        c = conv(net, t, w)
        idt = net.add_identity(t).get_output(0)
        return [act(net, ew(net, c, t, "SUM"), "RELU"), idt]

    y, idt = build_and_run(make, {"x": x})
    assert_close(y, np.maximum(refs.convolution(x, w) + x, 0))
    assert_close(idt, x.astype(np.float64))


def test_constant_folding(rng, build_and_run):
    """Layers whose inputs are all constants (folded at build time) next to the same math on an input."""
    c1, c2 = randn(rng, (1, 3, 1, 1)), randn(rng, (1, 3, 1, 1))
    x = randn(rng, (2, 3, 4, 4))

    def make(net, t):
        k = act(net, ew(net, const(net, c1), const(net, c2), "PROD"), "TANH")
        return ew(net, t, k, "SUM")

    assert_close(build_and_run(make, {"x": x}), x + np.tanh(c1.astype(np.float64) * c2))


def test_same_engine_many_runs_and_two_contexts(rng, build):
    """Results do not depend on the previous run (no state left in buffers) or on the context."""
    w, b = randn(rng, (5, 3, 3, 3)), randn(rng, 5)

    def make(net, t):
        return act(net, conv(net, t, w, b, pad=(1, 1)), "RELU")

    r = build(make, {"x": ((2, 3, 7, 7), np.float32)})
    ctx2 = r.engine.create_execution_context()
    xs = [randn(rng, (2, 3, 7, 7)) for _ in range(3)]
    for x in xs + xs[::-1]:
        assert_close(r.run({"x": x}), np.maximum(refs.convolution(x, w, b, None, (1, 1), (1, 1)), 0))
    out = np.empty((2, 5, 7, 7), np.float32)
    ctx2.execute_v2([xs[1], out])
    assert_close(out, np.maximum(refs.convolution(xs[1], w, b, None, (1, 1), (1, 1)), 0))


# ------------------------------------------------------------------------------------------------------------
# dynamic shapes beyond the optimization profile's opt point; buffers that are not 64-byte aligned
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["im2col", "depthwise", "fc", "matmul"])
def test_dynamic_shapes_larger_than_opt(kind, rng, build):
    """Kernels (and their scratch buffers) are chosen at the profile's opt shape; runs go up to max."""
    if kind == "im2col":
        w, b = randn(rng, (12, 5, 3, 3), 0.3), randn(rng, 12)
        make = lambda net, t: act(net, conv(net, t, w, b, pad=(1, 1)), "RELU")
        shapes = ((1, 5, 3, 3), (1, 5, 4, 4), (3, 5, 33, 31))
        runs = [(3, 5, 33, 31), (1, 5, 3, 3), (2, 5, 20, 7)]
        ref = lambda x: np.maximum(refs.convolution(x, w, b, None, (1, 1), (1, 1)), 0)
    elif kind == "depthwise":
        w, b = randn(rng, (5, 1, 3, 3)), randn(rng, 5)
        make = lambda net, t: conv(net, t, w, b, stride=(2, 2), pad=(1, 1), groups=5)
        shapes = ((1, 5, 3, 3), (1, 5, 4, 4), (3, 5, 33, 31))
        runs = [(3, 5, 33, 31), (1, 5, 3, 3), (2, 5, 20, 7)]
        ref = lambda x: refs.convolution(x, w, b, (2, 2), (1, 1), (1, 1), None, 5)
    elif kind == "fc":
        w, b = randn(rng, (40, 60), 0.2), randn(rng, 40)
        make = lambda net, t: net.add_fully_connected(t, 40, w, b)
        shapes = ((1, 60, 1, 1), (1, 60, 1, 1), (37, 60, 1, 1))
        runs = [(37, 60, 1, 1), (1, 60, 1, 1), (5, 60, 1, 1)]
        ref = lambda x: refs.fully_connected(x, w, b)
    else:
        wt = randn(rng, (1, 50, 30), 0.2)
        make = lambda net, t: net.add_matrix_multiply(t, trt.MatrixOperation.NONE, const(net, wt),
                                                      trt.MatrixOperation.NONE)
        shapes = ((1, 1, 50), (1, 2, 50), (4, 70, 50))
        runs = [(4, 70, 50), (1, 1, 50), (3, 9, 50)]
        ref = lambda x: refs.matrix_multiply(x, "NONE", wt, "NONE")
    dyn = {"im2col": (-1, 5, -1, -1), "depthwise": (-1, 5, -1, -1), "fc": (-1, 60, 1, 1), "matmul": (-1, -1, 50)}[kind]
    r = build(make, {"x": (shapes[1], np.float32)}, input_shapes={"x": dyn}, profile={"x": shapes})
    for shape in runs:
        x = randn(rng, shape)
        assert_close(r.run({"x": x}), ref(x))


def _unaligned(a):
    """A copy of a whose data starts 4 bytes past a 64-byte boundary."""
    raw = np.empty(a.nbytes + 128, np.uint8)
    off = (-raw.ctypes.data) % 64 + 4
    view = raw[off:off + a.nbytes].view(a.dtype).reshape(a.shape)
    view[...] = a
    assert view.ctypes.data % 64 == 4
    return view


@pytest.mark.parametrize("kind", ["conv", "depthwise", "fc", "elementwise", "pool"])
def test_unaligned_buffers(kind, rng, build):
    x = randn(rng, (2, 8, 9, 9))
    w, b = randn(rng, (8, 8, 3, 3), 0.3), randn(rng, 8)
    wd = randn(rng, (8, 1, 3, 3))
    wf = randn(rng, (10, 8 * 81), 0.1)
    if kind == "conv":
        make, ref = (lambda net, t: conv(net, t, w, b, pad=(1, 1))), refs.convolution(x, w, b, None, (1, 1), (1, 1))
    elif kind == "depthwise":
        make = lambda net, t: conv(net, t, wd, None, pad=(1, 1), groups=8)
        ref = refs.convolution(x, wd, None, None, (1, 1), (1, 1), None, 8)
    elif kind == "fc":
        make, ref = (lambda net, t: net.add_fully_connected(t, 10, wf)), refs.fully_connected(x, wf)
    elif kind == "elementwise":
        make, ref = (lambda net, t: act(net, ew(net, t, t, "PROD"), "RELU")), x.astype(np.float64) ** 2
    else:
        make = lambda net, t: net.add_pooling_nd(t, trt.PoolingType.MAX, (2, 2))
        ref = refs.pooling(x, "MAX", (2, 2), (1, 1))
    r = build(make, {"x": x})
    xin = _unaligned(x)
    out = _unaligned(np.full(ref.shape, 77, np.float32))
    r.context.execute_v2([xin, out])
    assert_close(out, ref)
    np.testing.assert_array_equal(xin, x)  # the input is not written
