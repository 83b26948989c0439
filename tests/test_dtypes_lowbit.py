"""TensorRT 10's data types beyond 8.6 (issue #12): INT64 tensors and the low-bit storage types FP8 (e4m3fn),
INT4, FP4 (e2m1), E8M0 and trtlite's extensions FP8E5M2, FP8E4M3FNUZ, FP8E5M2FNUZ, UINT4, INT2, UINT2.

Every conversion is checked against a float64 reference written here from the formats' definitions (sign,
exponent bias, mantissa bits, special codes) -- not against ml_dtypes or onnx's reference: decoding over every
code; encoding random floats with NaN, +-Inf, overflows, ties and subnormals, saturating and not, by a
nearest-neighbour search over the decoded grid.
"""
import functools
import math

import numpy as np
import pytest

import trtlite as trt

DT = trt.DataType
LOGGER = trt.Logger(trt.Logger.ERROR)

# (exponent bits, mantissa bits, bias, has_inf, nan kind, bits): nan kind 'fn' = S.1..1.1..1, 'ieee' = exponent
# all ones with mantissa != 0, 'uz' = 0x80 only, None = no NaN
FLOATS = {
    DT.FP8: (4, 3, 7, False, "fn", 8),
    DT.FP8E5M2: (5, 2, 15, True, "ieee", 8),
    DT.FP8E4M3FNUZ: (4, 3, 8, False, "uz", 8),
    DT.FP8E5M2FNUZ: (5, 2, 16, False, "uz", 8),
    DT.FP4: (2, 1, 1, False, None, 4),
}
INTS = {DT.INT4: (4, True), DT.UINT4: (4, False), DT.INT2: (2, True), DT.UINT2: (2, False)}


def ref_decode(dt, code):
    """float64 value of `code` of storage type dt."""
    if dt == DT.E8M0:
        return math.nan if code == 255 else 2.0 ** (code - 127)
    if dt in INTS:
        bits, signed = INTS[dt]
        v = code & ((1 << bits) - 1)
        return float(v - (1 << bits) if signed and v >> (bits - 1) else v)
    eb, mb, bias, has_inf, nan, bits = FLOATS[dt]
    sign = (code >> (bits - 1)) & 1
    e = (code >> mb) & ((1 << eb) - 1)
    m = code & ((1 << mb) - 1)
    if nan == "uz" and code == 0x80:
        return math.nan
    if nan == "fn" and e == (1 << eb) - 1 and m == (1 << mb) - 1:
        return math.nan
    if nan == "ieee" and e == (1 << eb) - 1:
        return math.nan if m else (-math.inf if sign else math.inf)
    v = m * 2.0 ** (1 - bias - mb) if e == 0 else (1 + m / 2.0 ** mb) * 2.0 ** (e - bias)
    return -v if sign else v


@functools.lru_cache(maxsize=None)
def _grid(dt):
    bits = FLOATS[dt][5]
    codes = [c for c in range(1 << (bits - 1)) if math.isfinite(ref_decode(dt, c))]
    return sorted((ref_decode(dt, c), c) for c in codes)


def ref_encode_value(dt, x, saturate):
    """The float64 value (NaN / +-Inf / +-0 included) that a float format stores for x (round to nearest, ties to
    the even code; FNUZ has no -0; FP4 saturates and gives -0 for NaN)."""
    eb, mb, bias, has_inf, nan, bits = FLOATS[dt]
    if math.isnan(x):
        return -0.0 if nan is None else math.nan
    grid = _grid(dt)  # non-negative values with their codes
    top, top_code = grid[-1]
    beyond = top + (top - grid[-2][0])  # the next grid point after the largest finite value
    beyond_even = (top_code & 1) == 1  # its code would follow an odd code
    a = abs(x)
    if math.isinf(a):
        r = math.inf
    else:
        cands = grid + [(beyond, -1)]
        lo = max((g for g in cands if g[0] <= a), key=lambda g: g[0])
        hi = min((g for g in cands if g[0] >= a), key=lambda g: g[0], default=(beyond, -1))
        if a >= beyond:
            pick = (beyond, -1)
        elif a - lo[0] < hi[0] - a:
            pick = lo
        elif hi[0] - a < a - lo[0]:
            pick = hi
        else:  # a tie: the even code (the point beyond the grid is even when the largest code is odd)
            even = lambda g: beyond_even if g[1] == -1 else g[1] % 2 == 0  # noqa: E731
            pick = lo if even(lo) else hi
        r = math.inf if pick[1] == -1 else pick[0]
    if r > top:
        if saturate or nan is None:
            r = top
        elif has_inf:
            return math.copysign(math.inf, x)
        else:
            return math.nan
    if r == 0.0 and nan == "uz":
        return 0.0
    return math.copysign(r, x)


def ref_e8m0(x, saturate):
    """E8M0 value of x: the float32 exponent, rounded up unless x is a power of two; 0 gives 2^-127."""
    f = np.float32(x)
    if np.isnan(f) or (np.isinf(f) and not saturate):
        return math.nan
    if np.isinf(f):
        return 2.0 ** 127
    bits = int(f.view(np.uint32))
    e = (bits >> 23) & 0xFF
    if bits & 0x7FFFFF:
        e += 1
        if e == 0xFF:
            return 2.0 ** 127 if saturate else math.nan
    return 2.0 ** (e - 127)


def ref_int(dt, x):
    bits, signed = INTS[dt]
    v = 0 if math.isnan(x) else int(max(min(math.trunc(x) if math.isfinite(x) else math.copysign(2 ** 63, x),
                                               2 ** 63 - 1), -2 ** 63))
    v &= (1 << bits) - 1
    return float(v - (1 << bits) if signed and v >> (bits - 1) else v)


def engine(build, shapes=None):
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    build(net)
    plan = b.build_serialized_network(net, b.create_builder_config())
    return trt.Runtime(LOGGER).deserialize_cuda_engine(plan), plan


def cast_engine(src, dst, n, saturate=True):
    def build(net):
        x = net.add_input("x", src, (n,))
        c = net.add_cast(x, dst)
        if not saturate:
            c.saturate = False
        c.get_output(0).name = "y"
        net.mark_output(c.get_output(0))
    return engine(build)[0]


def run(eng, **feeds):
    """Runs through execute_v2 with code-byte (uint8) buffers for the storage types."""
    ctx = eng.create_execution_context()
    bufs = []
    out = {}
    for i in range(eng.num_io_tensors):
        name = eng.get_tensor_name(i)
        dt = eng.get_tensor_dtype(name)
        if eng.get_tensor_mode(name) == trt.TensorIOMode.INPUT:
            a = np.ascontiguousarray(feeds[name], dtype=trt.nptype(dt))
            ctx.set_input_shape(name, a.shape)
        else:
            a = np.empty(tuple(ctx.get_tensor_shape(name)), trt.nptype(dt))
            out[name] = a
        bufs.append(a)
    ctx.execute_v2(bufs)
    return out


def same(got, want):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape
    ok = (got == want) | (np.isnan(got) & np.isnan(want))
    ok &= (np.signbit(got) == np.signbit(want)) | np.isnan(want)
    bad = np.nonzero(~ok)[0]
    assert bad.size == 0, "first mismatches at %s: got %s, want %s" % (bad[:5], got[bad[:5]], want[bad[:5]])


STORAGE = list(FLOATS) + [DT.E8M0] + list(INTS)


def n_codes(dt):
    return 16 if dt in (DT.FP4, DT.INT4, DT.UINT4) else 4 if dt in (DT.INT2, DT.UINT2) else 256


@pytest.mark.parametrize("dt", STORAGE, ids=lambda d: d.name)
def test_decode_every_code(dt):
    n = n_codes(dt)
    codes = np.arange(n, dtype=np.uint8)
    want = [ref_decode(dt, c) for c in range(n)]
    same(run(cast_engine(dt, DT.FLOAT, n), x=codes)["y"], want)
    # HALF, INT32 and INT64 targets: the same values as FLOAT's, then the existing float -> int rules
    with np.errstate(over="ignore"):  # E8M0's large codes are Inf as HALF
        same(run(cast_engine(dt, DT.HALF, n), x=codes)["y"], np.asarray(want, np.float32).astype(np.float16))
    if dt in INTS:
        same(run(cast_engine(dt, DT.INT64, n), x=codes)["y"], want)
        # sign-extended bytes (an int8 view of the values) decode the same: only the low bits count
        ext = np.asarray([int(v) & 0xFF for v in want], np.uint8)
        same(run(cast_engine(dt, DT.FLOAT, n), x=ext)["y"], want)


def _samples(rng):
    x = np.concatenate([
        rng.standard_normal(300) * 4, rng.standard_normal(200) * 300, rng.standard_normal(100) * 1e5,
        rng.standard_normal(100) * 1e-3, rng.standard_normal(50) * 1e-7,
        [0.0, -0.0, np.inf, -np.inf, np.nan, 448, 449, 464, 465, 480, 240, 248, 57344, 61440, 61439, 65536,
         6.0, 5.0, 7.0, 0.25, 0.75, 2.5, 3.5, -2.5, 1e30, -1e30, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11,
         2.0 ** -17, 2.0 ** -16, 1.5 * 2.0 ** -16],
    ]).astype(np.float32)
    return x


@pytest.mark.parametrize("saturate", [True, False], ids=["sat", "nosat"])
@pytest.mark.parametrize("dt", list(FLOATS), ids=lambda d: d.name)
def test_encode_floats(dt, saturate):
    x = _samples(np.random.default_rng(int(dt)))
    codes = run(cast_engine(DT.FLOAT, dt, x.size, saturate), x=x)["y"]
    assert codes.dtype == np.uint8
    got = [ref_decode(dt, int(c)) for c in codes]
    # -0 and +0 decode differently only by sign; compare values and signs
    same(got, [ref_encode_value(dt, float(v), saturate) for v in x])
    # the codes themselves are canonical (FP4 keeps bits 4..7 clear)
    assert int(codes.max()) < (1 << FLOATS[dt][5])


@pytest.mark.parametrize("saturate", [True, False], ids=["sat", "nosat"])
def test_encode_e8m0(saturate):
    x = np.abs(_samples(np.random.default_rng(7)))
    x = np.concatenate([x, [3e38, np.float32(2.0 ** 127), 1e-40, 0.0]]).astype(np.float32)
    codes = run(cast_engine(DT.FLOAT, DT.E8M0, x.size, saturate), x=x)["y"]
    same([ref_decode(DT.E8M0, int(c)) for c in codes], [ref_e8m0(float(v), saturate) for v in x])


@pytest.mark.parametrize("dt", list(INTS), ids=lambda d: d.name)
def test_encode_ints(dt):
    x = np.concatenate([np.arange(-20, 20, 0.5), [np.nan, np.inf, -np.inf, 1e10, -1e10, -9, 15]]).astype(np.float32)
    codes = run(cast_engine(DT.FLOAT, dt, x.size), x=x)["y"]
    assert int(codes.max()) < (1 << INTS[dt][0])  # low bits only, as onnx's ml_dtypes arrays hold them
    same([ref_decode(dt, int(c)) for c in codes], [ref_int(dt, float(v)) for v in x])
    # from integers: the low bits (two's complement wrap), as every narrowing integer cast
    i = np.arange(-40, 40, dtype=np.int32)
    codes = run(cast_engine(DT.INT32, dt, i.size), x=i)["y"]
    same([ref_decode(dt, int(c)) for c in codes], [ref_int(dt, float(v)) for v in i])


def test_storage_to_storage_and_bool():
    codes = np.arange(256, dtype=np.uint8)
    got = run(cast_engine(DT.FP8E5M2, DT.FP8, 256), x=codes)["y"]
    want = [ref_encode_value(DT.FP8, ref_decode(DT.FP8E5M2, c), True) for c in range(256)]
    same([ref_decode(DT.FP8, int(c)) for c in got], want)
    b = run(cast_engine(DT.FP8, DT.BOOL, 256), x=codes)["y"]
    assert list(b) == [ref_decode(DT.FP8, c) != 0 for c in range(256)]  # NaN is true


def test_int64_round_trips():
    big = np.array([0, 1, -1, 2 ** 40 + 3, -(2 ** 53), 2 ** 62, -(2 ** 63), 2 ** 63 - 1], np.int64)

    def build(net):
        x = net.add_input("x", DT.INT64, (8,))
        i = net.add_identity(x)
        i.get_output(0).name = "same"
        net.mark_output(i.get_output(0))
        c = net.add_cast(x, DT.INT32)
        c.get_output(0).name = "narrow"
        net.mark_output(c.get_output(0))
        f = net.add_cast(net.add_cast(x, DT.FLOAT).get_output(0), DT.INT64)
        f.get_output(0).name = "via_float"
        net.mark_output(f.get_output(0))

    eng, plan = engine(build)
    assert eng.get_tensor_dtype("x") == DT.INT64 and eng.get_tensor_dtype("same") == DT.INT64
    assert DT.INT64.itemsize == 8 and trt.nptype(DT.INT64) == np.int64
    for e in (eng, trt.Runtime(LOGGER).deserialize_cuda_engine(plan)):
        ctx = e.create_execution_context()
        out = ctx.infer({"x": big})
        assert out["same"].dtype == np.int64 and np.array_equal(out["same"], big)
        assert np.array_equal(out["narrow"], big.astype(np.int32))  # low bits, as numpy
        f = [float(v) for v in big.astype(np.float32)]
        want = [2 ** 63 - 1 if v >= 2 ** 63 else -(2 ** 63) if v < -(2 ** 63) else int(v) for v in f]
        assert out["via_float"].tolist() == want  # float -> int64 truncates and saturates


def test_float_to_int64_nan_inf():
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -2.5, 2.5], np.float32)
    got = run(cast_engine(DT.FLOAT, DT.INT64, x.size), x=x)["y"]
    assert got.tolist() == [0, 2 ** 63 - 1, -(2 ** 63), 2 ** 63 - 1, -2, 2]


def _ref_quant_int(x, s, zp, lo, hi):
    return np.clip(np.rint(x.astype(np.float32) / np.float32(s)).astype(np.float64) + zp, lo, hi)


def test_quantize_dequantize_storage_types():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 4, 6)) * 20).astype(np.float32)
    x.flat[:3] = [np.inf, -np.inf, 1e6]
    scale = np.array([0.5, 1.0, 2.0, 4.0], np.float32)  # per channel, axis 1

    for dt, zp_val in [(DT.INT4, -1), (DT.UINT4, 3), (DT.INT2, 0), (DT.UINT2, 1), (DT.FP8, None),
                       (DT.FP8E5M2, None), (DT.FP4, None)]:
        def build(net, dt=dt, zp_val=zp_val):
            xi = net.add_input("x", DT.FLOAT, x.shape)
            s = net.add_constant(scale.shape, scale).get_output(0)
            q = net.add_quantize(xi, s, dt)
            q.axis = 1
            if zp_val is not None:
                code = np.full(scale.shape, zp_val & ((1 << INTS[dt][0]) - 1), np.uint8)
                w = trt.Weights(code)
                w._dtype = dt  # codes of dt (what Weights(ml_dtypes array) makes)
                q.set_input(2, net.add_constant(scale.shape, w).get_output(0))
            q.get_output(0).name = "q"
            net.mark_output(q.get_output(0))
            d = net.add_dequantize(q.get_output(0), s)
            d.axis = 1
            if zp_val is not None:
                d.set_input(2, q.get_input(2))
            d.get_output(0).name = "dq"
            net.mark_output(d.get_output(0))

        eng, plan = engine(build)
        out = run(trt.Runtime(LOGGER).deserialize_cuda_engine(plan), x=x)
        s4 = scale.reshape(1, 4, 1)
        if dt in INTS:
            bits, signed = INTS[dt]
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
            want = _ref_quant_int(x, s4, zp_val, lo, hi)
            want_dq = (want - zp_val) * s4
        else:
            r = (x / s4).astype(np.float32).reshape(-1)
            want = np.array([ref_encode_value(dt, float(v), True) for v in r]).reshape(x.shape)
            want_dq = want * s4
        got = np.array([ref_decode(dt, int(c)) for c in out["q"].reshape(-1)]).reshape(x.shape)
        same(got.reshape(-1), want.reshape(-1))
        np.testing.assert_allclose(out["dq"], want_dq.astype(np.float32), rtol=1e-6)


def test_blocked_quantization():
    x = np.arange(-12, 12, dtype=np.float32).reshape(3, 8) * 1.3
    scale = np.array([[1, 2], [0.5, 4], [3, 0.25]], np.float32)  # blocks of 4 along axis 1

    def build(net):
        xi = net.add_input("x", DT.FLOAT, x.shape)
        s = net.add_constant(scale.shape, scale).get_output(0)
        q = net.add_quantize(xi, s, DT.INT8)
        q.axis = 1
        q.get_output(0).name = "q"
        net.mark_output(q.get_output(0))

    out = run(engine(build)[0], x=x)["q"]
    want = _ref_quant_int(x, np.repeat(scale, 4, axis=1), 0, -128, 127)
    assert np.array_equal(out.astype(np.float64), want)


def test_blocked_scale_must_divide():
    def build(net):
        xi = net.add_input("x", DT.FLOAT, (3, 8))
        s = net.add_constant((3, 3), np.ones((3, 3), np.float32)).get_output(0)
        q = net.add_quantize(xi, s, DT.INT8)
        q.axis = 1
        q.name = "blk"
        net.mark_output(q.get_output(0))
    with pytest.raises(trt.ShapeError, match="blk"):
        engine(build)


def test_plan_round_trip_keeps_saturate():
    x = np.array([1000.0, -1000.0, np.inf, 1.0], np.float32)
    for sat, want in [(True, [448.0, -448.0, 448.0, 1.0]), (False, [np.nan, np.nan, np.nan, 1.0])]:
        def build(net, sat=sat):
            c = net.add_cast(net.add_input("x", DT.FLOAT, (4,)), DT.FP8)
            c.saturate = sat
            c.get_output(0).name = "y"
            net.mark_output(c.get_output(0))
        eng, plan = engine(build)
        again = trt.Runtime(LOGGER).deserialize_cuda_engine(plan)
        assert again.get_tensor_dtype("y") == DT.FP8
        codes = run(again, x=x)["y"]
        same([ref_decode(DT.FP8, int(c)) for c in codes], want)


def test_infer_takes_and_gives_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    eng = cast_engine(DT.FLOAT, DT.FP8, 4)
    out = eng.create_execution_context().infer({"x": np.array([0.3, 1.0, -2.0, 500.0], np.float32)})["y"]
    assert out.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert out.astype(np.float32).tolist() == [0.3125, 1.0, -2.0, 448.0]
    back = cast_engine(DT.INT4, DT.FLOAT, 3).create_execution_context()
    v = np.array([-8, 7, -1], dtype=ml_dtypes.int4)
    assert back.infer({"x": v})["y"].tolist() == [-8.0, 7.0, -1.0]
    with pytest.raises(TypeError, match="'x'.*INT4"):  # another ml_dtypes type is not reinterpreted
        back.infer({"x": np.zeros(3, ml_dtypes.uint4)})


def test_wrong_binding_dtype_names_the_tensor():
    eng = cast_engine(DT.FP8, DT.FLOAT, 4)
    ctx = eng.create_execution_context()
    with pytest.raises(trt.DataTypeError if hasattr(trt, "DataTypeError") else Exception, match="'x'"):
        ctx.execute_v2([np.zeros(4, np.float32), np.zeros(4, np.float32)])
    with pytest.raises(TypeError, match="'x'.*FP8"):  # numbers are no codes: casting is the network's job
        ctx.infer({"x": np.zeros(4, np.float32)})
    eng64 = cast_engine(DT.INT64, DT.FLOAT, 2)
    with pytest.raises(Exception, match="'x'.*INT64"):
        eng64.create_execution_context().execute_v2([np.zeros(2, np.int32), np.zeros(2, np.float32)])


def test_enum_values_and_itemsize():
    assert (int(DT.FP8), int(DT.BF16), int(DT.INT64), int(DT.INT4), int(DT.FP4), int(DT.E8M0)) == (6, 7, 8, 9, 10, 11)
    assert DT.FP8.itemsize == 1 and DT.INT4.itemsize == 1 and trt.nptype(DT.FP4) == np.uint8
    assert trt.nptype(DT.BF16) == np.uint16 and DT.BF16.itemsize == 2  # bit patterns (test_bf16.py)


@pytest.mark.parametrize("dt", [DT.FP8, DT.INT4, DT.INT64], ids=lambda d: d.name)
def test_moving_layers_keep_the_codes(dt):
    np_t = trt.nptype(dt)
    x = (np.arange(24).reshape(2, 3, 4) * (2 ** 35 if dt == DT.INT64 else 1) % (2 ** 62 if dt == DT.INT64 else 16))
    x = x.astype(np_t)

    def build(net):
        xi = net.add_input("x", dt, x.shape)
        outs = {}
        sh = net.add_shuffle(xi)
        sh.first_transpose = (2, 0, 1)
        outs["t"] = sh.get_output(0)
        cat = net.add_concatenation([xi, xi])
        cat.axis = 1
        outs["cat"] = cat.get_output(0)
        outs["sl"] = net.add_slice(xi, (0, 1, 1), (2, 2, 2), (1, 1, 2)).get_output(0)
        idx = net.add_constant((2,), np.array([2, 0], np.int32)).get_output(0)
        outs["g"] = net.add_gather(xi, idx, 1).get_output(0)
        outs["pad"] = net.add_padding_nd(xi, (1, 0), (0, 1)).get_output(0)
        for k, t in outs.items():
            t.name = k
            net.mark_output(t)

    out = run(engine(build)[0], x=x)
    assert np.array_equal(out["t"], x.transpose(2, 0, 1))
    assert np.array_equal(out["cat"], np.concatenate([x, x], axis=1))
    assert np.array_equal(out["sl"], x[:, 1:3, 1:4:2])
    assert np.array_equal(out["g"], x[:, [2, 0]])
    assert np.array_equal(out["pad"], np.pad(x, ((0, 0), (1, 0), (0, 1))))


def test_onnx_fp8_weights_and_qdq_vs_onnxruntime():
    """FP8 initializers (weights dequantized while parsing) and an FP8 Q/DQ pair with a constant FP8 zero point
    (Quantize / Dequantize layers of FP8, the zero point a constant of FP8 codes), against onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from onnx import TensorProto, helper, numpy_helper
    w = (np.random.default_rng(0).standard_normal((4, 3)) * 3).astype(ml_dtypes.float8_e4m3fn)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(0.5, np.float32), "s"),
             numpy_helper.from_array(np.array(0.25, np.float32), "s2"),
             numpy_helper.from_array(np.array(0, ml_dtypes.float8_e4m3fn), "zp")]
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["wf"]), helper.make_node("MatMul", ["x", "wf"], ["y0"]),
             helper.make_node("QuantizeLinear", ["y0", "s2", "zp"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s2", "zp"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()
    x = (np.random.default_rng(1).standard_normal((2, 4)) * 4).astype(np.float32)
    ref = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    parser = trt.OnnxParser(net, LOGGER)
    assert parser.parse(model), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    assert any(net.get_layer(i).type == trt.LayerType.QUANTIZE for i in range(net.num_layers))
    eng = trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, b.create_builder_config()))
    got = eng.create_execution_context().infer({"x": x})["y"]
    np.testing.assert_array_equal(got, ref)


def test_gather_int64_indices():
    """TensorRT 10 takes INT64 gather indices (DEFAULT, ELEMENT and ND modes; negative ones wrap once)."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    idx = np.array([[2, -1], [0, 1]], np.int64)

    def build(net):
        xi = net.add_input("x", DT.FLOAT, x.shape)
        ii = net.add_input("i", DT.INT64, idx.shape)
        g = net.add_gather(xi, ii, 2)
        g.get_output(0).name = "y"
        net.mark_output(g.get_output(0))
        nd = net.add_gather_v2(xi, net.add_input("j", DT.INT64, (2, 2)), trt.GatherMode.ND)
        nd.get_output(0).name = "nd"
        net.mark_output(nd.get_output(0))

    out = run(engine(build)[0], x=x, i=idx, j=np.array([[1, 2], [0, -3]], np.int64))
    assert np.array_equal(out["y"], x[:, :, [[2, 3], [0, 1]]])
    assert np.array_equal(out["nd"], np.stack([x[1, 2], x[0, 0]]))

    def bad(net):
        g = net.add_gather(net.add_input("x", DT.FLOAT, (3,)), net.add_input("i", DT.INT64, (1,)), 0)
        g.name = "g64"
        g.get_output(0).name = "y"
        net.mark_output(g.get_output(0))
    with pytest.raises(trt.InvalidArgumentError, match="g64.*index 5"):
        run(engine(bad)[0], x=np.zeros(3, np.float32), i=np.array([5], np.int64))
