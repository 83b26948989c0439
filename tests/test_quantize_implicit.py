"""Implicit INT8 (TensorRT 7/8 scripts): BuilderFlag.INT8 with tensor.dynamic_range set by hand quantizes each
convolution / fully connected / matrix multiply input with range / 127 and its weights per output channel, so
the same int8 layers run as for explicit Q/DQ; checked against a numpy float64 simulation.  A missing range is a
warning (the layer stays fp32), or an error naming the tensor when the layer must run int8."""
import numpy as np
import pytest

import trtlite as trt

from conftest import Net


class Log(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.msgs = []

    def log(self, severity, msg):
        self.msgs.append((int(severity), msg))


def fq(v, s):
    s = np.float64(np.float32(s))
    return np.clip(np.rint(np.asarray(v, np.float64) / s), -128, 127) * s


def wq(w):
    s = (np.abs(w.reshape(len(w), -1)).max(1) / 127).astype(np.float32).astype(np.float64)
    s = s.reshape((-1,) + (1,) * (w.ndim - 1))
    return np.rint(w.astype(np.float64) / s) * s


def _net(rng, set_ranges=True, log=None):
    x = rng.standard_normal((2, 5)).astype(np.float32) * 2
    w1 = rng.standard_normal((7, 5)).astype(np.float32)   # matmul B^T
    w2 = rng.standard_normal((3, 7)).astype(np.float32)
    n = Net()
    if log is not None:
        n.builder = trt.Builder(log)
        n.network = n.builder.create_network(1)
        n.config = n.builder.create_builder_config()
    net = n.network
    t = net.add_input("x", trt.float32, x.shape)
    b1 = net.add_constant((5, 7), np.ascontiguousarray(w1.T)).get_output(0)
    mm = net.add_matrix_multiply(t, trt.MatrixOperation.NONE, b1, trt.MatrixOperation.NONE)
    mm.name = "mm1"
    h = net.add_activation(mm.get_output(0), trt.ActivationType.RELU).get_output(0)
    h.name = "h"
    b2 = net.add_constant((3, 7), w2).get_output(0)
    mm2 = net.add_matrix_multiply(h, trt.MatrixOperation.NONE, b2, trt.MatrixOperation.TRANSPOSE)
    mm2.name = "mm2"
    y = mm2.get_output(0)
    y.name = "y"
    net.mark_output(y)
    if set_ranges:
        t.dynamic_range = (-4.0, 4.0)
        h.dynamic_range = (-6.0, 5.0)
    n.config.set_flag(trt.BuilderFlag.INT8)
    return n, x, w1, w2, mm


@pytest.mark.parametrize("fuse", [True, False])
def test_dynamic_ranges_quantize_layers(fuse, rng):
    n, x, w1, w2, _ = _net(rng)
    if not fuse:
        n.config.set_pass_enabled("fuse_qdq", False)
    eng = n.build()
    info = eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE)
    assert (info.count("[qlinear.int8]") + info.count("[qlinear.amx_int8]")) == (2 if fuse else 0), info
    got = eng.create_execution_context().infer({"x": x})["y"]
    h = np.maximum(fq(x, 4.0 / 127) @ wq(w1).T, 0)
    ref = fq(h, 6.0 / 127) @ wq(w2).T
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    fp32 = np.maximum(x.astype(np.float64) @ w1.T, 0) @ w2.T
    assert np.abs(got - fp32).max() > 1e-4  # it did quantize


def test_missing_range_warns_and_keeps_fp32(rng):
    log = Log()
    n, x, w1, w2, _ = _net(rng, set_ranges=False, log=log)
    n.network.get_input(0).dynamic_range = (-4.0, 4.0)  # mm1 int8, mm2's input 'h' has no range
    eng = n.builder.build_engine(n.network, n.config)
    info = eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE)
    assert (info.count("[qlinear.int8]") + info.count("[qlinear.amx_int8]")) == 1
    warn = [m for s, m in log.msgs if s == int(trt.Logger.WARNING)]
    assert any("'h'" in m and "mm2" in m and "fp32" in m for m in warn), warn
    got = eng.create_execution_context().infer({"x": x})["y"]
    ref = np.maximum(fq(x, 4.0 / 127) @ wq(w1).T, 0) @ w2.T.astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_missing_range_is_an_error_when_int8_is_required(rng):
    n, x, w1, w2, mm = _net(rng, set_ranges=False)
    mm.precision = trt.int8
    n.config.set_flag(trt.BuilderFlag.OBEY_PRECISION_CONSTRAINTS)
    with pytest.raises(trt.InvalidArgumentError) as ei:
        n.build()
    assert "'x'" in str(ei.value) and "mm1" in str(ei.value) and "dynamic range" in str(ei.value)


def test_no_int8_flag_no_quantization(rng):
    n, x, w1, w2, _ = _net(rng)
    n.config.clear_flag(trt.BuilderFlag.INT8)
    eng = n.build()
    got = eng.create_execution_context().infer({"x": x})["y"]
    fp32 = np.maximum(x.astype(np.float64) @ w1.T, 0) @ w2.T
    np.testing.assert_allclose(got, fp32, rtol=1e-4, atol=1e-4)


def test_platform_has_fast_int8_tells_the_truth():
    b = trt.Builder(trt.Logger())
    assert b.platform_has_fast_int8 is ("avx512vnni" in trt.cpu_features())
