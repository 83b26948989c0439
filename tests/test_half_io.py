"""16-bit float tensors on compute layers (issue #12 (4)): network inputs / outputs of DataType.HALF feeding
convolution, matrix multiply, elementwise, activation, reduce and softmax, as TensorRT accepts them.  trtlite
computes in float32 between casts; the references are numpy float64 of the float16 inputs, rounded to float16."""
import numpy as np
import pytest

import trtlite as trt

LOGGER = trt.Logger(trt.Logger.ERROR)
DT = trt.DataType


def run(build, feeds, level=None):
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    build(net)
    cfg = b.create_builder_config()
    if level is not None:
        cfg.builder_optimization_level = level
    cfg.avg_timing_iterations = 0
    eng = trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, cfg))
    return eng, eng.create_execution_context().infer(feeds)


def conv2d_f64(x, w, b):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    out = np.zeros((n, k, h - r + 1, wd - s + 1))
    for i in range(r):
        for j in range(s):
            out += np.einsum("nchw,kc->nkhw", x[:, :, i:i + h - r + 1, j:j + wd - s + 1], w[:, :, i, j])
    return out + b[None, :, None, None]


def close16(got, want):
    """got is float16; want float64: within one float16 rounding (plus fp32 accumulation slack)."""
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("level", [None, 0])
def test_half_input_conv_relu_add_gives_half_output(level):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float16)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)

    def build(net):
        t = net.add_input("x", DT.HALF, (2, 3, 7, 6))
        c = net.add_convolution_nd(t, 4, (3, 3), trt.Weights(w), trt.Weights(bias))
        assert c.get_output(0).dtype == DT.HALF
        r = net.add_activation(c.get_output(0), trt.ActivationType.RELU)
        e = net.add_elementwise(r.get_output(0), c.get_output(0), trt.ElementWiseOperation.SUM)
        e.get_output(0).name = "y"
        net.mark_output(e.get_output(0))

    eng, out = run(build, {"x": x}, level)
    assert eng.get_tensor_dtype("x") == DT.HALF and eng.get_tensor_dtype("y") == DT.HALF
    c = conv2d_f64(x.astype(np.float64), w.astype(np.float64), bias.astype(np.float64))
    close16(out["y"], np.maximum(c, 0) + c)


def test_half_matmul_with_float_constant_and_softmax_reduce():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 5)).astype(np.float16)
    bw = rng.standard_normal((5, 4)).astype(np.float16)  # fp16 weights, as torch2trt's half models give

    def build(net):
        t = net.add_input("a", DT.HALF, (3, 5))
        k = net.add_constant((5, 4), trt.Weights(bw))
        m = net.add_matrix_multiply(t, trt.MatrixOperation.NONE, k.get_output(0), trt.MatrixOperation.NONE)
        s = net.add_softmax(m.get_output(0))
        s.axes = 1 << 1
        s.get_output(0).name = "s"
        red = net.add_reduce(m.get_output(0), trt.ReduceOperation.SUM, 1 << 1, True)
        red.get_output(0).name = "r"
        net.mark_output(s.get_output(0))
        net.mark_output(red.get_output(0))

    _, out = run(build, {"a": a})
    mm = a.astype(np.float64) @ bw.astype(np.float64)
    e = np.exp(mm - mm.max(1, keepdims=True))
    close16(out["s"], e / e.sum(1, keepdims=True))
    close16(out["r"], mm.sum(1, keepdims=True))


def test_float_network_with_half_output_type_requested():
    """tensor.dtype = HALF on a float layer's network output: computed in float32, stored as float16."""
    x = np.array([[1.0, -2.5, 3.14159, 65504.0, 1e-3]], np.float32)

    def build(net):
        t = net.add_input("x", DT.FLOAT, (1, 5))
        u = net.add_unary(t, trt.UnaryOperation.ABS)
        u.get_output(0).name = "y"
        net.mark_output(u.get_output(0))
        u.get_output(0).dtype = DT.HALF

    eng, out = run(build, {"x": x})
    assert eng.get_tensor_dtype("y") == DT.HALF
    assert out["y"].dtype == np.float16
    np.testing.assert_array_equal(out["y"], np.abs(x).astype(np.float16))


def test_half_input_float_output_requested():
    x = np.array([[0.1, 2.0, -3.0]], np.float16)

    def build(net):
        t = net.add_input("x", DT.HALF, (1, 3))
        u = net.add_activation(t, trt.ActivationType.SIGMOID)
        u.get_output(0).name = "y"
        net.mark_output(u.get_output(0))
        u.get_output(0).dtype = DT.FLOAT

    _, out = run(build, {"x": x})
    assert out["y"].dtype == np.float32
    np.testing.assert_allclose(out["y"], 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)


def test_half_on_a_float_layer_output_type_of_an_int_output_refused():
    def build(net):
        t = net.add_input("x", DT.HALF, (2, 3))
        k = net.add_topk(t, trt.TopKOperation.MAX, 1, 1 << 1)
        assert k.get_output(0).dtype == DT.HALF and k.get_output(1).dtype == DT.INT32
        with pytest.raises(trt.DTypeError, match="only network inputs"):
            k.get_output(1).dtype = DT.HALF
        net.mark_output(k.get_output(0))
        net.mark_output(k.get_output(1))

    x = np.array([[1, 5, 2], [7, -1, 0.5]], np.float16)
    _, out = run(build, {"x": x})
    vals = [o for o in out.values() if o.dtype == np.float16][0]
    np.testing.assert_array_equal(vals.ravel(), np.array([5, 7], np.float16))
