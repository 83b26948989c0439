"""trt.Weights(type, ptr, count) from a raw address (TensorRT's form; issue #12 (5)): a convolution built with
such weights against numpy float64, and the refusals."""
import numpy as np
import pytest

import trtlite as trt

DT = trt.DataType


def test_weights_from_address_build_a_convolution():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((2, 1, 3, 3)).astype(np.float32)
    bias = np.array([0.5, -1.0], np.float32)
    x = rng.standard_normal((1, 1, 5, 5)).astype(np.float32)
    kw = trt.Weights(DT.FLOAT, w.ctypes.data, w.size)
    assert kw.dtype == DT.FLOAT and kw.size == 18 and kw.nbytes == 72
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = b.create_network(0)
    t = net.add_input("x", DT.FLOAT, x.shape)
    c = net.add_convolution_nd(t, 2, (3, 3), kw, trt.Weights(DT.FLOAT, bias.ctypes.data, 2))
    c.get_output(0).name = "y"
    net.mark_output(c.get_output(0))
    eng = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(
        b.build_serialized_network(net, b.create_builder_config()))
    got = eng.create_execution_context().infer({"x": x})["y"]
    want = np.zeros((1, 2, 3, 3))
    for i in range(3):
        for j in range(3):
            want += np.einsum("nchw,kc->nkhw", x[:, :, i:i + 3, j:j + 3].astype(np.float64), w[:, :, i, j])
    want += bias[None, :, None, None]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_weights_from_address_half_and_empty():
    h = np.array([1.5, -2.0, 65504.0], np.float16)
    wt = trt.Weights(DT.HALF, h.ctypes.data, 3)
    np.testing.assert_array_equal(wt.numpy(), h)
    assert trt.Weights(DT.FLOAT, 0, 0).size == 0
    i = np.array([3, -4], np.int64)
    wi = trt.Weights(DT.INT64, i.ctypes.data, 2)
    assert wi.dtype == DT.INT32 and wi.numpy().tolist() == [3, -4]


@pytest.mark.parametrize("args,exc,msg", [
    ((DT.FLOAT, 0, 4), ValueError, "NULL"),
    ((DT.FLOAT, "0x10", 4), TypeError, "ptr must be an int"),
    ((DT.FLOAT, 4096, -1), ValueError, "count must be >= 0"),
])
def test_weights_from_address_refusals(args, exc, msg):
    with pytest.raises(exc, match=msg):
        trt.Weights(*args)
