"""Refit of implicitly quantized INT8 layers (issue #12): BuilderFlag.INT8 with dynamic ranges puts a layer's
weights on the per-output-channel int8 grid (s_k = max|W_k| / 127, W = round(W / s) * s; builder/quantize_implicit.c),
and a refit now rounds the new weights the same way (engine/int8_grid.c: it wrote them unrounded), so the refitted
engine computes exactly what a fresh INT8 build with those weights computes, and the float64 reference of the
quantized input times the rounded weights."""
import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

LOG = trt.Logger(trt.Logger.WARNING)
EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
R = 3.0  # the input's dynamic range


def _grid(w, col):
    """The int8 grid per output channel (axis 1 of B [n, K] when col, else axis 0 of W [K, ...]), float64."""
    w = w.astype(np.float64)
    m = np.abs(w).max(axis=0 if col else tuple(range(1, w.ndim)), keepdims=True)
    s = (m / 127.0).astype(np.float32).astype(np.float64)
    return np.where(m > 0, np.rint(w / np.where(m > 0, s, 1)) * s, w)


def _qx(x):
    s = np.float64(np.float32(R / 127.0))
    return np.clip(np.rint(x.astype(np.float64) / s), -127, 127) * s


def _matmul_net(w, transpose):
    def make(net):
        x = net.add_input("x", trt.float32, (5, 16))
        x.dynamic_range = (-R, R)
        c = net.add_constant(w.shape, w)
        c.name = "W"
        op = trt.MatrixOperation.TRANSPOSE if transpose else trt.MatrixOperation.NONE
        y = net.add_matrix_multiply(x, trt.MatrixOperation.NONE, c.get_output(0), op).get_output(0)
        y.name = "y"
        net.mark_output(y)
    return make


def _conv_net(w):
    def make(net):
        x = net.add_input("x", trt.float32, (1, 4, 7, 6))
        x.dynamic_range = (-R, R)
        conv = net.add_convolution_nd(x, w.shape[0], (3, 3), w, np.zeros(w.shape[0], np.float32))
        conv.name = "conv"
        conv.padding_nd = (1, 1)
        y = conv.get_output(0)
        y.name = "y"
        net.mark_output(y)
    return make


def _build(make):
    b = trt.Builder(LOG)
    net = b.create_network(EXPLICIT)
    make(net)
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.INT8)
    cfg.set_flag(trt.BuilderFlag.REFIT)
    engine = b.build_engine(net, cfg)
    assert engine is not None
    return engine


def _run(engine, x):
    return engine.create_execution_context().infer({"x": x})["y"]


@pytest.mark.parametrize("transpose", [False, True])
def test_int8_matmul_constant_refit_rounds(transpose):
    rng = np.random.default_rng(3)
    shape = (12, 16) if transpose else (16, 12)
    w0, w1 = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    x = rng.uniform(-R, R, (5, 16)).astype(np.float32)
    engine = _build(_matmul_net(w0, transpose))
    refitter = trt.Refitter(engine, LOG)
    assert refitter.set_named_weights("W", w1)
    assert refitter.refit_cuda_engine()
    got = _run(engine, x)
    np.testing.assert_array_equal(got, _run(_build(_matmul_net(w1, transpose)), x))
    wq = _grid(w1.T if transpose else w1, col=True)
    assert_close(got, _qx(x) @ wq)
    assert not np.allclose(got, _qx(x) @ (w1.T if transpose else w1).astype(np.float64), rtol=1e-6, atol=1e-6)


def test_int8_convolution_refit_rounds():
    rng = np.random.default_rng(4)
    w0, w1 = (rng.standard_normal((6, 4, 3, 3)).astype(np.float32) for _ in range(2))
    x = rng.uniform(-R, R, (1, 4, 7, 6)).astype(np.float32)
    engine = _build(_conv_net(w0))
    refitter = trt.Refitter(engine, LOG)
    assert refitter.set_weights("conv", trt.WeightsRole.KERNEL, w1)
    assert refitter.refit_cuda_engine()
    got = _run(engine, x)
    np.testing.assert_array_equal(got, _run(_build(_conv_net(w1)), x))
    import refs
    assert_close(got, refs.convolution(_qx(x), _grid(w1, col=False), np.zeros(6), pre_padding=(1, 1),
                                       post_padding=(1, 1)))
