"""Quantize / Dequantize layers (network.add_quantize / add_dequantize, TensorRT 10's IQuantizeLayer and
IDequantizeLayer with ONNX QuantizeLinear / DequantizeLinear semantics) against numpy float64: per-tensor and
per-channel scales, zero points, INT8 and UINT8, saturation, round-half-to-even ties, NaN/Inf; INT8 network
outputs reach the user as int8; errors name the layer and tensor; plans round-trip."""
import numpy as np
import pytest

import trtlite as trt

from conftest import Net


def np_quantize(x, scale, zp, axis, dtype):
    """ONNX QuantizeLinear: saturate(round_half_even(x / scale) + zp), the quotient in float32 (as onnxruntime),
    the rest in float64; NaN gives the lowest code."""
    x = np.asarray(x, np.float64)
    s = np.asarray(scale, np.float32).astype(np.float64)  # the network holds float32 scales
    z = np.asarray(zp, np.float64) if zp is not None else np.zeros_like(s)
    if s.size > 1:
        shape = [1] * x.ndim
        shape[axis] = -1
        s, z = s.reshape(shape), z.reshape(shape)
    else:
        s, z = s.reshape(()), z.reshape(())
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        r = np.rint((x.astype(np.float32) / s.astype(np.float32)).astype(np.float64))  # the float32 quotient
    info = np.iinfo(dtype)
    r = np.where(np.isnan(r), info.min, r + z)  # NaN: the lowest code
    return np.clip(r, info.min, info.max).astype(dtype)


def np_dequantize(q, scale, zp, axis):
    q = np.asarray(q, np.float64)
    s = np.asarray(scale, np.float32).astype(np.float64)  # the network holds float32 scales
    z = np.asarray(zp, np.float64) if zp is not None else np.zeros_like(s)
    if s.size > 1:
        shape = [1] * q.ndim
        shape[axis] = -1
        s, z = s.reshape(shape), z.reshape(shape)
    else:
        s, z = s.reshape(()), z.reshape(())
    return ((q - z) * s).astype(np.float32)


def _const(net, arr):
    arr = np.ascontiguousarray(arr)
    return net.add_constant(arr.shape, arr).get_output(0)


def _qdq_net(x_shape, scale, zp, axis, dtype, mode="opt", explicit=True, scale_shape=None):
    """x -> Q -> (out0: int), Q -> DQ -> (out1: float)."""
    n = Net(explicit, mode)
    net = n.network
    x = net.add_input("x", trt.float32, x_shape if explicit else x_shape[1:])
    s_arr = np.asarray(scale, np.float32).reshape(scale_shape if scale_shape is not None else np.shape(scale))
    s = _const(net, s_arr)
    tt = trt.int8 if dtype == np.int8 else trt.uint8
    q = net.add_quantize(x, s, tt)
    q.axis = axis
    dq = net.add_dequantize(q.get_output(0), s)
    dq.axis = axis
    if zp is not None:
        z = _const(net, np.asarray(zp, dtype).reshape(s_arr.shape))
        q.set_input(2, z)
        dq.set_input(2, z)
    q.get_output(0).name = "q"
    dq.get_output(0).name = "dq"
    net.mark_output(q.get_output(0))
    net.mark_output(dq.get_output(0))
    return n


def _run(n, x, explicit=True):
    if explicit:
        eng = n.build()
        out = eng.create_execution_context().infer({"x": x})
        return out["q"], out["dq"]
    eng = n.build(max_batch=x.shape[0])
    ctx = eng.create_execution_context()
    q = np.zeros(x.shape, np.int8)
    dq = np.zeros(x.shape, np.float32)
    ctx.execute(x.shape[0], [x, q, dq])
    return q, dq


MODES = ["opt", "ref"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_per_tensor(mode, dtype, rng):
    x = (rng.standard_normal((2, 3, 5, 7)) * 4).astype(np.float32)
    zp = 3 if dtype == np.int8 else 128
    n = _qdq_net(x.shape, [0.037], [zp], 0, dtype, mode, scale_shape=())
    q, dq = _run(n, x)
    assert q.dtype == dtype
    ref = np_quantize(x, 0.037, zp, 0, dtype)
    np.testing.assert_array_equal(q, ref)
    np.testing.assert_array_equal(dq, np_dequantize(ref, 0.037, zp, 0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("axis", [0, 1, 3, -1])
def test_per_channel(mode, axis, rng):
    x = (rng.standard_normal((2, 3, 4, 5)) * 3).astype(np.float32)
    c = x.shape[axis]
    scale = rng.uniform(0.01, 0.05, c).astype(np.float32)
    zp = rng.integers(-20, 20, c).astype(np.int8)
    n = _qdq_net(x.shape, scale, zp, axis, np.int8, mode)
    q, dq = _run(n, x)
    ref = np_quantize(x, scale, zp, axis, np.int8)
    np.testing.assert_array_equal(q, ref)
    np.testing.assert_array_equal(dq, np_dequantize(ref, scale, zp, axis))


@pytest.mark.parametrize("mode", MODES)
def test_ties_round_half_to_even_and_saturation(mode):
    # x / 0.5 = k + 0.5 exactly: ties go to the even integer; values far out saturate; NaN -> zero point.
    x = np.array([0.25, 0.75, 1.25, -0.25, -0.75, -1.25, 63.25, 63.75, 1e6, -1e6, np.inf, -np.inf, np.nan, 0.0],
                 np.float32)
    for dtype, zp in ((np.int8, 0), (np.int8, -5), (np.uint8, 10)):
        n = _qdq_net(x.shape, [0.5], [zp], 0, dtype, mode, scale_shape=(1,))
        q, dq = _run(n, x)
        ref = np_quantize(x, 0.5, zp, 0, dtype)
        np.testing.assert_array_equal(q, ref)
        np.testing.assert_array_equal(dq, np_dequantize(ref, 0.5, zp, 0))
    # the ties by hand: 0.5->0, 1.5->2, 2.5->2, -0.5->0, -1.5->-2, -2.5->-2; 126.5->126, 127.5->127 (saturated 128);
    # +-Inf saturate, NaN is the lowest code
    n = _qdq_net(x.shape, [0.5], None, 0, np.int8, mode, scale_shape=(1,))
    q, _ = _run(n, x)
    assert list(q[:10]) == [0, 2, 2, 0, -2, -2, 126, 127, 127, -128]
    assert list(q[10:]) == [127, -128, -128, 0]


def test_no_zero_point_means_zero_and_uint8_output(rng):
    x = rng.uniform(-1, 3, (4, 6)).astype(np.float32)
    x[0, 0], x[0, 1] = -1.0, 3.0
    n = _qdq_net(x.shape, [0.02], None, 0, np.uint8, scale_shape=())
    q, dq = _run(n, x)
    assert q.dtype == np.uint8
    np.testing.assert_array_equal(q, np_quantize(x, 0.02, 0, 0, np.uint8))
    assert q.min() == 0 and q.max() == 150  # negatives clamp to 0, 3/0.02 = 150


def test_implicit_batch_axis_excludes_batch(rng):
    x = (rng.standard_normal((3, 4, 2, 2)) * 2).astype(np.float32)  # N=3, user view (4, 2, 2)
    scale = np.array([0.01, 0.02, 0.03, 0.04], np.float32)
    n = _qdq_net(x.shape, scale, None, 0, np.int8, explicit=False)
    q, dq = _run(n, x, explicit=False)
    np.testing.assert_array_equal(q, np_quantize(x, scale, None, 1, np.int8))


def test_layer_attributes_and_types():
    n = Net()
    net = n.network
    x = net.add_input("x", trt.float32, (1, 4))
    s = _const(net, np.array([0.1], np.float32))
    q = net.add_quantize(x, s)
    assert isinstance(q, trt.IQuantizeLayer)
    assert q.type == trt.LayerType.QUANTIZE and q.axis == -1 and q.to_type == trt.int8
    assert q.get_output(0).dtype == trt.int8
    dq = net.add_dequantize(q.get_output(0), s)
    assert isinstance(dq, trt.IDequantizeLayer) and dq.type == trt.LayerType.DEQUANTIZE
    assert dq.get_output(0).dtype == trt.float32
    q.to_type = trt.uint8
    assert q.get_output(0).dtype == trt.uint8
    assert trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED == 1
    n.builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED))


def test_plan_round_trip(rng):
    x = (rng.standard_normal((2, 3, 4)) * 3).astype(np.float32)
    scale = np.array([0.02, 0.03, 0.05], np.float32)
    zp = np.array([1, -2, 3], np.int8)
    n = _qdq_net(x.shape, scale, zp, 1, np.int8)
    plan = n.builder.build_serialized_network(n.network, n.config)
    eng = trt.Runtime(n.logger).deserialize_cuda_engine(plan)
    out = eng.create_execution_context().infer({"x": x})
    ref = np_quantize(x, scale, zp, 1, np.int8)
    np.testing.assert_array_equal(out["q"], ref)
    np.testing.assert_array_equal(out["dq"], np_dequantize(ref, scale, zp, 1))
    assert eng.get_tensor_dtype("q") == trt.int8
    assert bytes(eng.serialize()) == bytes(plan)


# ---- errors ---------------------------------------------------------------------------------------------


def _expect(make, exc, *names):
    n = Net()
    with pytest.raises(exc) as ei:
        make(n.network)
        n.build()
    msg = str(ei.value)
    for name in names:
        assert name in msg, "%r does not name %r" % (msg, name)
    return msg


def test_error_scale_not_constant():
    def make(net):
        x = net.add_input("x", trt.float32, (2, 3))
        s = net.add_input("s", trt.float32, (1,))
        q = net.add_quantize(x, s)
        q.name = "myq"
        net.mark_output(q.get_output(0))
    msg = _expect(make, trt.InvalidArgumentError, "myq", "'s'")
    assert "constant" in msg


def test_error_zero_point_not_constant():
    def make(net):
        x = net.add_input("x", trt.int8, (2, 3))
        s = _const(net, np.array([0.5], np.float32))
        z = net.add_input("z", trt.int8, (1,))
        dq = net.add_dequantize(x, s)
        dq.name = "mydq"
        dq.set_input(2, z)
        net.mark_output(dq.get_output(0))
    _expect(make, trt.InvalidArgumentError, "mydq", "'z'", "zero point")


def test_error_axis_out_of_range():
    def make(net):
        x = net.add_input("x", trt.float32, (2, 3))
        q = net.add_quantize(x, _const(net, np.array([0.1, 0.2, 0.3], np.float32)))
        q.name = "qaxis"
        q.axis = 2
        net.mark_output(q.get_output(0))
    _expect(make, trt.InvalidArgumentError, "qaxis", "axis 2")


def test_error_scale_count_mismatch():
    def make(net):
        x = net.add_input("x", trt.float32, (2, 3))
        q = net.add_quantize(x, _const(net, np.array([0.1, 0.2], np.float32)))
        q.name = "qcount"
        q.axis = 1
        net.mark_output(q.get_output(0))
    _expect(make, trt.ShapeError, "qcount", "3 channels")


def test_error_bad_scale_values():
    def make(net):
        x = net.add_input("x", trt.float32, (2, 3))
        q = net.add_quantize(x, _const(net, np.array([0.0], np.float32)))
        q.name = "qzero"
        net.mark_output(q.get_output(0))
    _expect(make, trt.InvalidArgumentError, "qzero", "positive")


def test_error_types():
    def make_q(net):  # Quantize of an int8 tensor
        x = net.add_input("x", trt.int8, (2, 3))
        net.add_quantize(x, _const(net, np.array([0.1], np.float32)))
    _expect(make_q, trt.DTypeError, "[Quantize]", "FLOAT")

    def make_dq(net):  # Dequantize of a float tensor
        x = net.add_input("x", trt.float32, (2, 3))
        net.add_dequantize(x, _const(net, np.array([0.1], np.float32)))
    _expect(make_dq, trt.DTypeError, "[Dequantize]", "INT8 or UINT8")

    def make_zp(net):  # zero point type differs from the output type
        x = net.add_input("x", trt.float32, (2, 3))
        q = net.add_quantize(x, _const(net, np.array([0.1], np.float32)))
        q.name = "qzp"
        q.set_input(2, _const(net, np.array([3], np.uint8)))
        net.mark_output(q.get_output(0))
    _expect(make_zp, trt.DTypeError, "qzp", "UINT8")

    def make_tt(net):
        x = net.add_input("x", trt.float32, (2, 3))
        net.add_quantize(x, _const(net, np.array([0.1], np.float32)), trt.int32)
    _expect(make_tt, trt.DTypeError, "[Quantize]", "INT8 or UINT8")
