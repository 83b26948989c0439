"""BF16 (bfloat16) tensors, as TensorRT 10 has them (issue #12): network inputs / outputs, constants, cast
layers to and from BF16, compute layers through float32 (casts around them, as for HALF), host buffers as
uint16 bit patterns, plans, and the ONNX parser's BFLOAT16.  Conversions are checked bit for bit against a
float64 reference of round-to-nearest-even written from the format (8 significant bits, float32's exponent)."""
import math

import numpy as np
import pytest

import trtlite as trt
from trtlite import _bf16

LOGGER = trt.Logger(trt.Logger.ERROR)
DT = trt.DataType


def ref_bits(x):
    """float64 -> bfloat16 bit pattern, rounded once to nearest even (NaN: any NaN of the same sign)."""
    out = np.zeros(np.shape(x), np.uint16)
    for i, v in np.ndenumerate(np.asarray(x, np.float64)):
        sign = 0x8000 if math.copysign(1.0, v) < 0 else 0
        a = abs(v)
        if math.isnan(v):
            out[i] = sign | 0x7FC0
            continue
        if math.isinf(a):
            out[i] = sign | 0x7F80
            continue
        if a == 0:
            out[i] = sign
            continue
        _, e = math.frexp(a)                       # a = m * 2^e, m in [0.5, 1)
        q = math.ldexp(1.0, max(e, -125) - 8)      # 8 significant bits; subnormals: quantum 2^-133
        r = round(a / q) * q                       # Python's round: half to even, a / q exact
        if r >= 2.0 ** 128:
            out[i] = sign | 0x7F80
            continue
        out[i] = sign | int(np.float32(r).view(np.uint32) >> 16)
    return out


def bits_to_f64(b):
    return (np.asarray(b, np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def build(make, cfg_fn=None):
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    make(net)
    cfg = b.create_builder_config()
    cfg.avg_timing_iterations = 0
    if cfg_fn:
        cfg_fn(cfg)
    plan = b.build_serialized_network(net, cfg)
    return trt.Runtime(LOGGER).deserialize_cuda_engine(plan), plan


def special_floats():
    f = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 3.3895313892515355e38, 3.4e38, -3.4e38,
         1e-40, -1e-40, 9.2e-41, 1.17549435e-38, 2.0 ** -133, 2.0 ** -134, 3 * 2.0 ** -134, 65504.0, 1e-45]
    # ties: 1 + k/256 + 1/512 for even and odd k, and just above / below them
    for k in range(4):
        t = 1 + k / 128 + 1 / 256
        f += [t, -t, np.nextafter(np.float32(t), np.float32(2)), np.nextafter(np.float32(t), np.float32(0))]
    return np.array(f, np.float32)


def test_cast_float_to_bf16_and_back_bit_exact():
    rng = np.random.default_rng(0)
    x = np.concatenate([special_floats(), (rng.standard_normal(2000) * 10.0 ** rng.integers(-40, 38, 2000))
                        .astype(np.float32), rng.integers(0, 2 ** 32, 1000, dtype=np.uint64).astype(np.uint32)
                        .view(np.float32)])

    def make(net):
        t = net.add_input("x", DT.FLOAT, x.shape)
        c = net.add_cast(t, DT.BF16)
        assert c.get_output(0).dtype == DT.BF16
        c.get_output(0).name = "b"
        net.mark_output(c.get_output(0))
        f = net.add_cast(c.get_output(0), DT.FLOAT)
        f.get_output(0).name = "f"
        net.mark_output(f.get_output(0))

    eng, _ = build(make)
    out = eng.create_execution_context().infer({"x": x})
    got = out["b"].view(np.uint16) if out["b"].dtype != np.uint16 else out["b"]
    with np.errstate(invalid="ignore"):
        want = ref_bits(x.astype(np.float64))
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert np.all((got[nan] & 0x7F80) == 0x7F80) and np.all(got[nan] & 0x7F)  # still NaN
    np.testing.assert_array_equal(got[nan] & 0x8000, (x[nan].view(np.uint32) >> 16) & 0x8000)  # sign kept
    np.testing.assert_array_equal(out["f"][~nan], bits_to_f64(want[~nan]).astype(np.float32))  # widening exact
    assert np.all(np.isnan(out["f"][nan]))
    # the binding's own conversion (infer() numbers -> bits) rounds the same way, from float64 too
    x64 = rng.standard_normal(500) * 1e3
    x64 = np.concatenate([x64, [1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -8 - 2 ** -40, 1 + 3 * 2 ** -8 + 2 ** -35]])
    np.testing.assert_array_equal(_bf16.bits_from_float(x64), ref_bits(x64))


def test_cast_int_and_half_to_bf16_round_once():
    # int32 ties of the bf16 grid that a float32 step would round twice (2^24 + 2^16 + 1 is above a tie)
    i = np.array([0, 1, -7, 255, 257, 2 ** 24 + 2 ** 16, 2 ** 24 + 2 ** 16 + 1, 2 ** 24 + 3 * 2 ** 16 - 1,
                  -(2 ** 24 + 2 ** 16 + 1), 2 ** 31 - 1, -2 ** 31], np.int32)
    h = np.array([1.0, 0.1, 65504, -6.1e-5, 5.96e-8, np.inf, np.nan], np.float16)

    def make(net):
        for name, arr, dt in (("i", i, DT.INT32), ("h", h, DT.HALF)):
            c = net.add_cast(net.add_input(name, dt, arr.shape), DT.BF16)
            c.get_output(0).name = name + "_b"
            net.mark_output(c.get_output(0))
        back = net.add_cast(net.get_layer(0).get_output(0), DT.INT32)  # bf16 -> int32 truncates
        back.get_output(0).name = "i_back"
        net.mark_output(back.get_output(0))

    eng, _ = build(make)
    ctx = eng.create_execution_context()
    bufs = {n: np.zeros(eng.get_tensor_shape(n), trt.nptype(eng.get_tensor_dtype(n)))
            for n in ("i_b", "h_b", "i_back")}
    assert bufs["i_b"].dtype == np.uint16
    ctx.execute_v2([{"i": i, "h": h}.get(eng.get_tensor_name(k), bufs.get(eng.get_tensor_name(k)))
                    for k in range(eng.num_io_tensors)])
    np.testing.assert_array_equal(bufs["i_b"], ref_bits(i.astype(np.float64)))
    fin = ~np.isnan(h)
    np.testing.assert_array_equal(bufs["h_b"][fin], ref_bits(h[fin].astype(np.float64)))
    assert (bufs["h_b"][~fin] & 0x7FFF) > 0x7F80
    want_back = np.clip(bits_to_f64(ref_bits(i.astype(np.float64))), -2 ** 31, 2 ** 31 - 1).astype(np.int64)
    np.testing.assert_array_equal(bufs["i_back"], want_back.astype(np.int32))


def test_bf16_io_on_compute_layers_and_plan_round_trip():
    ml = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5)).astype(ml.bfloat16)
    w = rng.standard_normal((5, 4)).astype(ml.bfloat16)
    ptr_w = rng.standard_normal((1, 4)).astype(ml.bfloat16).view(np.uint16)

    def make(net):
        t = net.add_input("x", DT.BF16, (3, 5))
        cw = net.add_constant((5, 4), trt.Weights(w))
        cb = net.add_constant((1, 4), trt.Weights(DT.BF16, ptr_w.ctypes.data, ptr_w.size))
        mm = net.add_matrix_multiply(t, trt.MatrixOperation.NONE, cw.get_output(0), trt.MatrixOperation.NONE)
        assert mm.get_output(0).dtype == DT.BF16  # promoted: float32 math, stored as BF16
        s = net.add_elementwise(mm.get_output(0), cb.get_output(0), trt.ElementWiseOperation.SUM)
        r = net.add_activation(s.get_output(0), trt.ActivationType.RELU)
        r.get_output(0).name = "y"
        net.mark_output(r.get_output(0))
        red = net.add_reduce(s.get_output(0), trt.ReduceOperation.SUM, 1 << 1, False)
        red.get_output(0).name = "sum"
        red.get_output(0).dtype = DT.FLOAT  # a promoted layer's output stored as asked
        net.mark_output(red.get_output(0))

    eng, plan = build(make)
    eng2 = trt.Runtime(LOGGER).deserialize_cuda_engine(bytes(plan))
    assert [eng2.get_tensor_dtype(n) for n in ("x", "y", "sum")] == [DT.BF16, DT.BF16, DT.FLOAT]
    out = eng2.create_execution_context().infer({"x": x})
    assert out["y"].dtype == ml.bfloat16
    mm = x.astype(np.float64) @ w.astype(np.float64)
    # each promoted layer's output is stored as BF16: the product, the sum (then relu keeps the values)
    sb = bits_to_f64(ref_bits(bits_to_f64(ref_bits(mm)) + bits_to_f64(ptr_w)))
    # float32 accumulation may move a rounding by one bf16 step of the product, and so the sum's
    step = 2 ** -7 * (np.abs(mm) + np.abs(sb)) + 1e-6
    assert np.all(np.abs(out["y"].astype(np.float64) - np.maximum(sb, 0)) <= step)
    assert np.all(np.abs(out["sum"] - sb.sum(1)) <= step.sum(1))
    # the same engine through bindings: uint16 bit patterns in and out
    y = np.zeros((3, 4), np.uint16)
    sm = np.zeros(3, np.float32)
    eng2.create_execution_context().execute_v2([x.view(np.uint16), y, sm])
    np.testing.assert_array_equal(y, out["y"].view(np.uint16))


def test_bf16_binding_and_infer_errors_name_the_tensor():
    def make(net):
        c = net.add_cast(net.add_input("xb", DT.BF16, (4,)), DT.FLOAT)
        net.mark_output(c.get_output(0))

    eng, _ = build(make)
    ctx = eng.create_execution_context()
    with pytest.raises(Exception, match="'xb'"):
        ctx.execute_v2([np.zeros(4, np.float32), np.zeros(4, np.float32)])
    with pytest.raises(TypeError, match="'xb'.*BF16"):
        ctx.infer({"xb": np.array(["a", "b", "c", "d"])})
    # numbers are rounded to nearest even by infer(); uint16 are taken as bit patterns
    got = ctx.infer({"xb": np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.5, 1e39])})
    np.testing.assert_array_equal(list(got.values())[0], [1.0, 1 + 2 ** -6, -2.5, np.inf])
    got = ctx.infer({"xb": np.array([0x3F80, 0xC020, 0x7F80, 0x0001], np.uint16)})
    np.testing.assert_array_equal(list(got.values())[0], [1.0, -2.5, np.inf, 2.0 ** -133])


def test_bf16_weights_of_the_wrong_width_are_refused():
    wt = trt.Weights(DT.BF16)
    wt._trtl_array = np.zeros(3, np.float32)  # not bit patterns
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    with pytest.raises(Exception, match="BF16 weights"):
        net.add_constant((3,), wt)


def test_onnx_bfloat16_io_and_cast_rounding():
    onnx = pytest.importorskip("onnx")
    ml = pytest.importorskip("ml_dtypes")
    from onnx import TensorProto, helper, numpy_helper
    w = np.array([1.5, -2.0, 3.0078125], ml.bfloat16)
    g = helper.make_graph([
        helper.make_node("Cast", ["w"], ["wf"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["xf", "wf"], ["s"]),
        helper.make_node("Cast", ["s"], ["z"], to=TensorProto.BFLOAT16),
        helper.make_node("Cast", ["y"], ["yb"], to=TensorProto.BFLOAT16),
        helper.make_node("Cast", ["yb"], ["yr"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["y"], ["yh"], to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["yh"], ["yhr"], to=TensorProto.FLOAT),
    ], "g", [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [2, 3]),
             helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("z", TensorProto.BFLOAT16, [2, 3]),
         helper.make_tensor_value_info("yr", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("yhr", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    p = trt.OnnxParser(net, LOGGER)
    assert p.parse(m.SerializeToString()), [p.get_error(i).desc() for i in range(p.num_errors)]
    assert net.get_input(0).dtype == DT.BF16
    eng = trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, b.create_builder_config()))
    assert eng.get_tensor_dtype("z") == DT.BF16
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3)).astype(ml.bfloat16)
    y = (rng.standard_normal((2, 3)) * 1e3).astype(np.float32)
    out = eng.create_execution_context().infer({"x": x, "y": y})
    s = x.astype(np.float64) + w.astype(np.float64)
    np.testing.assert_array_equal(out["z"].view(np.uint16), ref_bits(s.astype(np.float32).astype(np.float64)))
    np.testing.assert_array_equal(out["yr"], bits_to_f64(ref_bits(y.astype(np.float64))))  # rounded, not kept
    np.testing.assert_array_equal(out["yhr"], y)  # Cast to FLOAT16 inside a float graph keeps the values
