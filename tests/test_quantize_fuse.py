"""The fuse_qdq builder pass: DQ(Q(x)) -> convolution / fully connected / matrix multiply with int8 weights (and
its bias, activation, residual, output Q -> DQ, and max pooling / shuffle between) becomes one int8 layer.
Each network is built with the pass on and off and compared with a numpy float64 simulation of the integer
math; the inspector shows which steps run int8."""
import numpy as np
import pytest

import trtlite as trt

from conftest import Net


def q_np(x, s, zp, lo, hi):
    return np.clip(np.rint(np.asarray(x, np.float64) / np.float64(np.float32(s))) + zp, lo, hi)


def fq_np(x, s, zp, lo=-128, hi=127):
    s = np.float64(np.float32(s))
    return (q_np(x, s, zp, lo, hi) - zp) * s


def conv2d_np(x, w, stride=1, pad=0):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - r) // stride + 1, (wd + 2 * pad - s) // stride + 1
    y = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(s):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            y += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j])
    return y


def _const(net, arr):
    arr = np.ascontiguousarray(arr)
    return net.add_constant(arr.shape, arr).get_output(0)


def _fq(net, t, s, zp, dtype=trt.uint8):
    st = _const(net, np.array([s], np.float32))
    zt = _const(net, np.array([zp], np.uint8 if dtype == trt.uint8 else np.int8))
    q = net.add_quantize(t, st, dtype)
    q.set_input(2, zt)
    dq = net.add_dequantize(q.get_output(0), st)
    dq.set_input(2, zt)
    return dq.get_output(0)


def _int8_weights(rng, shape, per_channel=True):
    q = rng.integers(-127, 128, shape).astype(np.int8)
    q[:, ...].reshape(shape[0], -1)[:, 0] = 127  # max |q| = 127 in every channel, as quantize_static makes them
    s = rng.uniform(0.002, 0.01, shape[0] if per_channel else 1).astype(np.float32)
    sb = s.reshape((-1,) + (1,) * (len(shape) - 1))
    return q, s, (q.astype(np.float32) * sb).astype(np.float32)


def _build(make, fuse, x, names):
    n = Net()
    if not fuse:
        n.config.set_pass_enabled("fuse_qdq", False)
    xin = n.network.add_input("x", trt.float32, x.shape)
    outs = make(n.network, xin)
    for i, t in enumerate(outs):
        t.name = names[i]
        n.network.mark_output(t)
    eng = n.build()
    info = eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE)
    return eng.create_execution_context().infer({"x": x}), info


def _check(got, ref, s, lsb=1):
    d = np.abs(got.astype(np.float64) - ref)
    assert d.max() <= lsb * s * 1.0001, "max %.3g LSB" % (d.max() / s)
    assert d.mean() <= 0.05 * s


S_IN, Z_IN, S_OUT, Z_OUT = 0.02, 128, 0.05, 0


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("per_channel", [True, False])
def test_conv_bias_residual_relu_output_fq(fuse, per_channel, rng):
    x = rng.standard_normal((2, 6, 9, 7)).astype(np.float32)
    skip = rng.standard_normal((2, 8, 9, 7)).astype(np.float32)
    q, s, w = _int8_weights(rng, (8, 6, 3, 3), per_channel)
    b = rng.standard_normal(8).astype(np.float32) * 0.1

    def make(net, xin):
        xf = _fq(net, xin, S_IN, Z_IN)
        conv = net.add_convolution_nd(xf, 8, (3, 3), w, b)
        conv.padding_nd = (1, 1)
        y = net.add_elementwise(conv.get_output(0), _const(net, skip), trt.ElementWiseOperation.SUM).get_output(0)
        y = net.add_activation(y, trt.ActivationType.RELU).get_output(0)
        return [_fq(net, y, S_OUT, Z_OUT)]
    out, info = _build(make, fuse, x, ["y"])
    assert ("qlinear" in info) == fuse, info
    xq = q_np(x, S_IN, Z_IN, 0, 255) - Z_IN
    sw = np.broadcast_to(s.astype(np.float64), (8,))
    acc = conv2d_np(xq, q.astype(np.float64), pad=1)
    y = acc * np.float64(np.float32(S_IN)) * sw.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1)
    y = np.maximum(y + skip, 0)
    ref = fq_np(y, S_OUT, Z_OUT, 0, 255)
    _check(out["y"], ref, S_OUT)


@pytest.mark.parametrize("fuse", [True, False])
def test_maxpool_between_and_chained_convs(fuse, rng):
    """DQ(Q(x)) -> max pool -> conv -> Q -> DQ -> conv: both convs int8 (the second reads the first's fake-quantized
    output), the pooling reads x."""
    x = rng.standard_normal((1, 4, 10, 10)).astype(np.float32)
    q1, s1, w1 = _int8_weights(rng, (6, 4, 3, 3))
    q2, s2, w2 = _int8_weights(rng, (5, 6, 1, 1))

    def make(net, xin):
        xf = _fq(net, xin, S_IN, Z_IN)
        p = net.add_pooling_nd(xf, trt.PoolingType.MAX, (2, 2))
        p.stride_nd = (2, 2)
        c1 = net.add_convolution_nd(p.get_output(0), 6, (3, 3), w1)
        y1 = _fq(net, c1.get_output(0), S_OUT, Z_OUT, trt.int8)
        c2 = net.add_convolution_nd(y1, 5, (1, 1), w2)
        return [c2.get_output(0)]
    out, info = _build(make, fuse, x, ["y"])
    assert info.count("qlinear") == (2 if fuse else 0), info
    xq = q_np(x, S_IN, Z_IN, 0, 255) - Z_IN
    xp = xq.reshape(1, 4, 5, 2, 5, 2).max(axis=(3, 5))
    y1 = conv2d_np(xp, q1.astype(np.float64)) * np.float64(np.float32(S_IN)) * s1.astype(np.float64).reshape(1, -1, 1, 1)
    y1q = q_np(y1, S_OUT, Z_OUT, -128, 127) - Z_OUT
    y2 = conv2d_np(y1q, q2.astype(np.float64)) * np.float64(np.float32(S_OUT)) * s2.astype(np.float64).reshape(1, -1, 1, 1)
    # no output quantization: compare relative to the first layer's output step through the 1x1 conv
    step = np.float32(S_OUT) * np.abs(q2).sum(axis=1).max() * s2.max()
    d = np.abs(out["y"] - y2)
    assert d.max() <= step, d.max() / step
    assert np.mean(d > 1e-4 * np.abs(y2).max()) < 0.05


@pytest.mark.parametrize("fuse", [True, False])
def test_fully_connected_and_matmul(fuse, rng):
    x = rng.standard_normal((3, 8, 2, 2)).astype(np.float32)
    qf, sf, wf = _int8_weights(rng, (5, 32))
    bf = rng.standard_normal(5).astype(np.float32) * 0.1
    qm, sm, wm = _int8_weights(rng, (6, 5))  # [K=6, Cin=5], used as B^T

    def make(net, xin):
        xf = _fq(net, xin, S_IN, Z_IN)
        fc = net.add_fully_connected(xf, 5, wf, bf)
        y = _fq(net, fc.get_output(0), S_OUT, Z_OUT, trt.int8)
        sh = net.add_shuffle(y)
        sh.reshape_dims = (3, 5)
        b = _const(net, np.ascontiguousarray(wm.T))  # [Cin, K]
        mm = net.add_matrix_multiply(sh.get_output(0), trt.MatrixOperation.NONE, b, trt.MatrixOperation.NONE)
        bias = _const(net, np.arange(6, dtype=np.float32).reshape(1, 6) * 0.01)
        z = net.add_elementwise(mm.get_output(0), bias, trt.ElementWiseOperation.SUM).get_output(0)
        return [y, z]
    out, info = _build(make, fuse, x, ["y", "z"])
    assert info.count("qlinear") == (2 if fuse else 0), info
    xq = (q_np(x, S_IN, Z_IN, 0, 255) - Z_IN).reshape(3, 32)
    y = xq @ qf.T.astype(np.float64) * np.float64(np.float32(S_IN)) * sf.astype(np.float64) + bf
    yq = q_np(y, S_OUT, Z_OUT, -128, 127) - Z_OUT
    _check(out["y"].reshape(3, 5), yq * np.float64(np.float32(S_OUT)), S_OUT)
    z = yq @ qm.T.astype(np.float64) * np.float64(np.float32(S_OUT)) * sm.astype(np.float64) + \
        np.arange(6) * np.float64(np.float32(0.01))
    assert np.abs(out["z"] - z).max() <= 1e-5 * np.abs(z).max() + np.float32(S_OUT) * np.abs(qm).sum(1).max() * sm.max()


def test_non_int8_weights_stay_fp32(rng):
    x = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)

    def make(net, xin):
        return [net.add_convolution_nd(_fq(net, xin, S_IN, Z_IN), 4, (3, 3), w).get_output(0)]
    out, info = _build(make, True, x, ["y"])
    assert "qlinear" not in info
    ref = conv2d_np((q_np(x, S_IN, Z_IN, 0, 255) - Z_IN) * np.float64(np.float32(S_IN)), w.astype(np.float64))
    np.testing.assert_allclose(out["y"], ref, rtol=1e-4, atol=1e-4)


def test_plan_round_trip_of_fused_layers(rng):
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    q, s, w = _int8_weights(rng, (4, 3, 3, 3))
    n = Net()
    xin = n.network.add_input("x", trt.float32, x.shape)
    c = n.network.add_convolution_nd(_fq(n.network, xin, S_IN, Z_IN), 4, (3, 3), w)
    y = _fq(n.network, c.get_output(0), S_OUT, 3, trt.int8)
    y.name = "y"
    n.network.mark_output(y)
    plan = n.builder.build_serialized_network(n.network, n.config)
    e1 = trt.Runtime(n.logger).deserialize_cuda_engine(plan)
    assert "qlinear" in e1.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE)
    out = e1.create_execution_context().infer({"x": x})["y"]
    e2 = trt.Runtime(n.logger).deserialize_cuda_engine(e1.serialize())
    np.testing.assert_array_equal(e2.create_execution_context().infer({"x": x})["y"], out)
    xq = q_np(x, S_IN, Z_IN, 0, 255) - Z_IN
    ref = fq_np(conv2d_np(xq, q.astype(np.float64)) * np.float64(np.float32(S_IN)) *
                s.astype(np.float64).reshape(1, -1, 1, 1), S_OUT, 3)
    _check(out, ref, S_OUT)
