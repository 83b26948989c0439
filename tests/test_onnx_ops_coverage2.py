"""ONNX importers added for the backend suite's coverage (issue #12): BitwiseAnd/Or/Xor/Not, BitShift over narrow
types with out-of-range amounts, BitCast between same-width integers, CumProd with a run-time axis,
QLinearMatMul and DynamicQuantizeLinear with run-time scales, CenterCropPad and AffineGrid with run-time shapes,
Pad with run-time axes, Dropout with a run-time training_mode -- every operand fed at run time, results compared
with numpy references written here (float64 where it matters); plus the INT32 layers they use (trtlite's
ElementWiseOperation BITWISE_* / SHIFT_*, UnaryOperation BITWISE_NOT, CumulativeOperation PROD) and the errors
that name the node or layer."""
import numpy as np
import pytest

import trtlite as trt

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP, helper as h  # noqa: E402

LOGGER = trt.Logger(trt.Logger.ERROR)
_NP2TP = {np.dtype(np.float32): TP.FLOAT, np.dtype(np.int64): TP.INT64, np.dtype(np.int32): TP.INT32,
          np.dtype(np.int8): TP.INT8, np.dtype(np.uint8): TP.UINT8, np.dtype(np.int16): TP.INT16,
          np.dtype(np.uint16): TP.UINT16, np.dtype(np.uint32): TP.UINT32, np.dtype(np.bool_): TP.BOOL}


def _model(nodes, feeds, outputs, opset):
    ins = [h.make_tensor_value_info(n, _NP2TP[a.dtype], list(a.shape)) for n, a in feeds.items()]
    outs = [h.make_tensor_value_info(n, TP.UNDEFINED, None) for n in outputs]
    return h.make_model(h.make_graph(nodes, "g", ins, outs), opset_imports=[h.make_opsetid("", opset)])


def parse_errors(nodes, feeds, outputs, opset=22):
    """The parser's error texts for a model that must not parse."""
    net = trt.Builder(LOGGER).create_network(0)
    parser = trt.OnnxParser(net, LOGGER)
    assert not parser.parse(_model(nodes, feeds, outputs, opset).SerializeToString())
    return " | ".join(str(parser.get_error(i)) for i in range(parser.num_errors))


def run_model(nodes, feeds, outputs, opset=22):
    """Parses, builds and runs a one-graph model over `feeds` (all graph inputs; those the network reads as shape
    tensors get their values in the profile); returns {output: array} as the engine gives them."""
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    parser = trt.OnnxParser(net, LOGGER)
    assert parser.parse(_model(nodes, feeds, outputs, opset).SerializeToString()), \
        [str(parser.get_error(i)) for i in range(parser.num_errors)]
    cfg = b.create_builder_config()
    prof = b.create_optimization_profile()
    for i in range(net.num_inputs):
        t = net.get_input(i)
        a = feeds[t.name]
        if t.is_shape_tensor:
            v = tuple(int(x) for x in a.reshape(-1))
            prof.set_shape_input(t.name, v, v, v)
        else:
            prof.set_shape(t.name, a.shape, a.shape, a.shape)
    cfg.add_optimization_profile(prof)
    eng = trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, cfg))
    ctx = eng.create_execution_context()
    keep = []
    for name, a in feeds.items():
        buf = np.array(a.astype(trt.nptype(eng.get_tensor_dtype(name))), copy=True, order="C")
        keep.append(buf)
        if not eng.is_shape_inference_io(name):
            ctx.set_input_shape(name, buf.shape)
        ctx.set_tensor_address(name, buf)
    res = {}
    for name in outputs:
        res[name] = np.zeros(tuple(ctx.get_tensor_shape(name)), trt.nptype(eng.get_tensor_dtype(name)))
        ctx.set_tensor_address(name, res[name])
    assert ctx.execute_async_v3(0)
    return res


def rand_int(rng, dt, shape):
    info = np.iinfo(dt)
    return rng.integers(info.min, int(info.max) + 1, size=shape, dtype=np.int64).astype(dt)


# ---- bitwise ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.uint16, np.int32])
def test_bitwise_binary_and_not_random(dt, rng=np.random.default_rng(1)):
    a = rand_int(rng, dt, (2, 3, 5))
    b = rand_int(rng, dt, (3, 1))  # broadcast over a lower rank
    nodes = [h.make_node("BitwiseAnd", ["a", "b"], ["y_and"]), h.make_node("BitwiseOr", ["a", "b"], ["y_or"]),
             h.make_node("BitwiseXor", ["a", "b"], ["y_xor"]), h.make_node("BitwiseNot", ["a"], ["y_not"]),
             # a consumer of the NOT result inside the network sees the value at the ONNX type's width
             h.make_node("BitwiseNot", ["y_not"], ["y_not2"])]
    out = run_model(nodes, {"a": a, "b": b}, ["y_and", "y_or", "y_xor", "y_not", "y_not2"])
    for name, ref in (("y_and", a & b), ("y_or", a | b), ("y_xor", a ^ b), ("y_not", ~a), ("y_not2", a)):
        np.testing.assert_array_equal(out[name].astype(np.int64), ref.astype(np.int64), err_msg=name)


def _shift_ref(x, s, left):
    """ONNX BitShift, element by element in Python integers: amounts outside 0..width-1 give 0 (left, and right
    of unsigned) or the sign fill (right of signed)."""
    info = np.iinfo(x.dtype)
    bits = info.bits
    xs, ss = np.broadcast_arrays(x, s)
    out = np.empty(xs.shape, np.int64)
    for i, (v, k) in enumerate(zip(xs.reshape(-1).tolist(), ss.reshape(-1).tolist())):
        if k < 0 or k >= bits:
            r = 0 if left or v >= 0 else -1
        elif left:
            r = (v << k) & ((1 << bits) - 1)
            if info.min < 0 and r >= 1 << (bits - 1):
                r -= 1 << bits
        else:
            r = v >> k
        out.reshape(-1)[i] = r
    return out


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift_random_with_out_of_range_amounts(dt, direction, rng=np.random.default_rng(2)):
    x = rand_int(rng, dt, (4, 6))
    if dt == np.uint32:
        x = (x % (1 << 31)).astype(dt)  # carried as INT32: values past 2^31 are not representable
    bits = np.iinfo(dt).bits
    s = rng.integers(-3, bits + 4, size=(1, 6)).astype(np.int32 if np.iinfo(dt).min < 0 else dt)
    if np.iinfo(dt).min == 0:
        s = rng.integers(0, bits + 4, size=(1, 6)).astype(dt)
    out = run_model([h.make_node("BitShift", ["x", "s"], ["y"], direction=direction)], {"x": x, "s": s}, ["y"])
    # uint32 is carried as INT32: compared at the ONNX type, as the backend runner casts outputs
    np.testing.assert_array_equal(out["y"].astype(dt).astype(np.int64),
                                  _shift_ref(x, s.astype(np.int64), direction == "LEFT"))


def test_uint32_right_shift_is_logical():
    x = np.array([0x7FFFFFF0, 5, 64, 1 << 30], np.uint32)
    s = np.array([4, 0, 31, 32], np.uint32)
    out = run_model([h.make_node("BitShift", ["x", "s"], ["y"], direction="RIGHT")], {"x": x, "s": s}, ["y"])
    np.testing.assert_array_equal(out["y"].astype(np.int64), [0x7FFFFFF, 5, 0, 0])


@pytest.mark.parametrize("src,dst", [(np.int8, np.uint8), (np.uint8, np.int8), (np.uint16, np.int16),
                                     (np.int16, np.uint16), (np.int32, np.uint32)])
def test_bitcast_same_width_integers(src, dst, rng=np.random.default_rng(3)):
    x = rand_int(rng, src, (3, 7))
    if dst == np.uint32:
        x = np.abs(x.astype(np.int64)).clip(0, 2 ** 31 - 1).astype(src)
    nodes = [h.make_node("BitCast", ["x"], ["y"], to=int(_NP2TP[np.dtype(dst)])),
             # compared inside the network with the value at the new type: the carried value is the new type's
             h.make_node("BitCast", ["y"], ["back"], to=int(_NP2TP[np.dtype(src)]))]
    out = run_model(nodes, {"x": x}, ["y", "back"], opset=26)
    np.testing.assert_array_equal(out["y"].astype(np.int64), x.view(dst).astype(np.int64))
    np.testing.assert_array_equal(out["back"].astype(np.int64), x.astype(np.int64))


def test_bitcast_errors_name_the_node():
    x = np.zeros((2, 2), np.int16)
    msg = parse_errors([h.make_node("BitCast", ["x"], ["y"], to=int(TP.INT32))], {"x": x}, ["y"], opset=26)
    assert "BitCast" in msg and "width" in msg
    msg = parse_errors([h.make_node("BitCast", ["x"], ["y"], to=int(TP.FLOAT))], {"x": np.zeros(3, np.int32)},
                       ["y"], opset=26)
    assert "BitCast" in msg and "floating-point" in msg


def test_bitshift_bad_direction_names_the_node():
    msg = parse_errors([h.make_node("BitShift", ["x", "s"], ["y"], direction="UP", name="shifter")],
                       {"x": np.zeros(3, np.uint8), "s": np.zeros(3, np.uint8)}, ["y"])
    assert "shifter" in msg and "direction" in msg


def test_bitwise_layers_refuse_float_naming_the_layer():
    net = trt.Builder(LOGGER).create_network(0)
    x = net.add_input("x", trt.DataType.FLOAT, (3,))
    with pytest.raises(trt.DTypeError, match=r"layer .*SHIFT_LEFT needs INT32 or INT64 inputs, got FLOAT"):
        net.add_elementwise(x, x, trt.ElementWiseOperation.SHIFT_LEFT)
    with pytest.raises(trt.DTypeError, match=r"layer .*BITWISE_NOT needs an INT32 or INT64 input, got FLOAT"):
        net.add_unary(x, trt.UnaryOperation.BITWISE_NOT)


def test_shift_layers_int32_edges():
    """The layers alone (no ONNX): shift amounts -1, 0, 31, 32, 40 on INT32, left and right."""
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    x = net.add_input("x", trt.DataType.INT32, (5,))
    s = net.add_input("s", trt.DataType.INT32, (5,))
    for name, op in (("l", trt.ElementWiseOperation.SHIFT_LEFT), ("r", trt.ElementWiseOperation.SHIFT_RIGHT)):
        t = net.add_elementwise(x, s, op).get_output(0)
        t.name = name
        net.mark_output(t)
    eng = trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, b.create_builder_config()))
    ctx = eng.create_execution_context()
    xv = np.array([-7, 3, -1, 5, -9], np.int32)
    sv = np.array([-1, 0, 31, 32, 40], np.int32)
    outs = {n: np.zeros(5, np.int32) for n in ("l", "r")}
    for n, a in (("x", xv), ("s", sv), *outs.items()):
        ctx.set_tensor_address(n, a)
    assert ctx.execute_async_v3(0)
    np.testing.assert_array_equal(outs["l"], [0, 3, np.int32(-2 ** 31), 0, 0])
    np.testing.assert_array_equal(outs["r"], [-1, 3, -1, 0, -1])


# ---- cumulative product -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumprod_runtime_axis(exclusive, reverse, rng=np.random.default_rng(4)):
    x = rng.uniform(0.5, 1.5, size=(3, 4, 5)).astype(np.float32)
    xi = rng.integers(-3, 4, size=(3, 4, 5)).astype(np.int32)
    for axis in (0, -1, 1):
        node = h.make_node("CumProd", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)
        for data in (x, xi):
            out = run_model([node], {"x": data, "axis": np.array(axis, np.int32)}, ["y"], opset=26)
            d = np.flip(data, axis) if reverse else data
            ref = np.cumprod(d.astype(np.float64), axis=axis)
            if exclusive:
                ref = np.concatenate([np.ones_like(np.take(ref, [0], axis)), np.delete(ref, -1, axis)], axis)
            ref = np.flip(ref, axis) if reverse else ref
            np.testing.assert_allclose(out["y"], ref, rtol=1e-5)


# ---- quantized ops ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("code", [np.int8, np.uint8])
@pytest.mark.parametrize("shapes", [((3, 5), (5, 4)), ((2, 3, 5), (2, 5, 4))])
def test_qlinearmatmul_runtime_scales(code, shapes, rng=np.random.default_rng(5)):
    a, b = rand_int(rng, code, shapes[0]), rand_int(rng, code, shapes[1])
    lo = np.iinfo(code).min
    f = {"a": a, "a_scale": np.array(rng.uniform(0.01, 0.05), np.float32),
         "a_zp": np.array(rng.integers(lo, lo + 255), code), "b": b,
         "b_scale": np.array(rng.uniform(0.01, 0.05), np.float32), "b_zp": np.array(rng.integers(lo, lo + 255), code),
         "y_scale": np.array(rng.uniform(1.0, 3.0), np.float32), "y_zp": np.array(rng.integers(lo, lo + 255), code)}
    node = h.make_node("QLinearMatMul", ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"], ["y"])
    out = run_model([node], f, ["y"], opset=21)
    acc = (a.astype(np.int64) - int(f["a_zp"])) @ (b.astype(np.int64) - int(f["b_zp"]))
    ref = np.rint(acc * (float(f["a_scale"]) * float(f["b_scale"]) / float(f["y_scale"])) + int(f["y_zp"]))
    ref = np.clip(ref, lo, lo + 255)
    # float32 rescaling may land on the other side of a .5 than float64: at most one code apart, rarely
    diff = np.abs(out["y"].astype(np.int64) - ref)
    assert diff.max() <= 1 and (diff > 0).mean() < 0.05


@pytest.mark.parametrize("shape,offset", [((4, 6), 0.0), ((3, 2, 5), 2.0), ((7,), -3.0)])
def test_dynamic_quantize_linear(shape, offset, rng=np.random.default_rng(6)):
    x = (rng.standard_normal(shape) * 3 + offset).astype(np.float32)
    out = run_model([h.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], {"x": x}, ["y", "s", "z"])
    hi, lo = max(0.0, float(x.max())), min(0.0, float(x.min()))
    scale = (hi - lo) / 255.0
    zp = np.rint(np.clip(-lo / scale, 0, 255))
    np.testing.assert_allclose(out["s"], scale, rtol=1e-6)
    assert int(out["z"]) == int(zp)
    ref = np.clip(np.rint(x.astype(np.float64) / scale) + zp, 0, 255)
    assert np.abs(out["y"].astype(np.int64) - ref).max() <= 1


# ---- shapes from run-time values --------------------------------------------------------------------------------

def _center_crop_pad_ref(x, shape, axes):
    out = x
    for ax, n in zip(axes, shape):
        d = out.shape[ax]
        if n <= d:
            s = (d - n) // 2
            out = np.take(out, np.arange(s, s + n), ax)
        else:
            pre = (n - d) // 2
            pw = [(0, 0)] * out.ndim
            pw[ax] = (pre, n - d - pre)
            out = np.pad(out, pw)
    return out


@pytest.mark.parametrize("xshape,target,axes", [((5, 6, 3), (3, 9), (0, 1)), ((4, 7), (6, 2), None),
                                                ((2, 5, 8), (1, 3), (-1, 0))])
def test_center_crop_pad_runtime_shape(xshape, target, axes, rng=np.random.default_rng(7)):
    x = rng.standard_normal(xshape).astype(np.float32)
    kw = {} if axes is None else {"axes": list(axes)}
    out = run_model([h.make_node("CenterCropPad", ["x", "shape"], ["y"], **kw)],
                    {"x": x, "shape": np.array(target, np.int64)}, ["y"], opset=18)
    norm = [a % x.ndim for a in (axes if axes is not None else range(x.ndim))]
    np.testing.assert_array_equal(out["y"], _center_crop_pad_ref(x, target, norm))


def test_center_crop_pad_shape_length_names_the_node():
    msg = parse_errors([h.make_node("CenterCropPad", ["x", "shape"], ["y"], axes=[0, 1], name="ccp")],
                       {"x": np.zeros((3, 4, 5), np.float32), "shape": np.array([2, 2, 2], np.int64)}, ["y"],
                       opset=18)
    assert "ccp" in msg and "3 values for 2 axes" in msg


def _affine_grid_ref(theta, size, align):
    sp = size[2:]
    axes = []
    for n in sp:
        if align:
            axes.append(np.linspace(-1.0, 1.0, n) if n > 1 else np.array([-1.0]))
        else:
            axes.append((2.0 * np.arange(n) + 1.0) / n - 1.0)
    mesh = np.meshgrid(*axes, indexing="ij")  # (D,) H, W
    coords = [m.reshape(-1) for m in mesh][::-1]  # x (W), y (H), z (D)
    base = np.stack(coords + [np.ones_like(coords[0])], axis=1)  # [P, nd + 1]
    out = np.einsum("pj,nkj->npk", base, theta.astype(np.float64))
    return out.reshape((theta.shape[0],) + tuple(sp) + (len(sp),))


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 1, 3, 2, 4)])
@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid_runtime_size(size, align, rng=np.random.default_rng(8)):
    nd = len(size) - 2
    theta = rng.standard_normal((size[0], nd, nd + 1)).astype(np.float32)
    out = run_model([h.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align)],
                    {"theta": theta, "size": np.array(size, np.int64)}, ["grid"], opset=20)
    np.testing.assert_allclose(out["grid"], _affine_grid_ref(theta, size, align), rtol=1e-5, atol=1e-6)


def test_affine_grid_bad_theta_names_the_node():
    msg = parse_errors([h.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag")],
                       {"theta": np.zeros((1, 2, 4), np.float32), "size": np.array([1, 1, 2, 2], np.int64)},
                       ["grid"], opset=20)
    assert "ag" in msg and "theta" in msg


@pytest.mark.parametrize("axes", [(1,), (-1, 0), (2, -2)])
def test_pad_runtime_axes(axes, rng=np.random.default_rng(9)):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    pads = rng.integers(0, 3, size=2 * len(axes)).astype(np.int64)
    out = run_model([h.make_node("Pad", ["x", "pads", "value", "axes"], ["y"])],
                    {"x": x, "pads": pads, "value": np.array(1.5, np.float32),
                     "axes": np.array(axes, np.int64)}, ["y"], opset=19)
    pw = [(0, 0)] * 3
    for j, ax in enumerate(axes):
        pw[ax % 3] = (int(pads[j]), int(pads[j + len(axes)]))
    np.testing.assert_array_equal(out["y"], np.pad(x, pw, constant_values=1.5))


# ---- dropout in training mode -----------------------------------------------------------------------------------

def test_dropout_runtime_training_mode(rng=np.random.default_rng(10)):
    x = rng.uniform(1.0, 2.0, size=(50, 80)).astype(np.float32)
    node = h.make_node("Dropout", ["x", "r", "t"], ["y", "mask"], seed=7)
    for ratio in (0.0, 0.25, 0.6):
        feeds = {"x": x, "r": np.array(ratio, np.float32), "t": np.array(True)}
        out = run_model([node], feeds, ["y", "mask"])
        keep = out["mask"].astype(bool)
        np.testing.assert_allclose(out["y"][keep], x[keep] / (1.0 - ratio), rtol=1e-6)
        assert (out["y"][~keep] == 0).all()
        # kept fraction of 4000 Bernoulli(1 - ratio) draws: within 5 standard deviations
        sd = np.sqrt(ratio * (1 - ratio) / keep.size)
        assert abs(keep.mean() - (1.0 - ratio)) <= 5 * sd + 1e-12
        again = run_model([node], feeds, ["y", "mask"])  # seeded: the same mask every build and run
        np.testing.assert_array_equal(again["mask"], out["mask"])
    out = run_model([node], {"x": x, "r": np.array(0.6, np.float32), "t": np.array(False)}, ["y", "mask"])
    np.testing.assert_array_equal(out["y"], x)
    assert out["mask"].all()


# ---- 8-bit integer arithmetic, integer matrix products and convolutions -----------------------------------------

@pytest.mark.parametrize("dt", [np.int8, np.uint8])
def test_int8_arithmetic_wraps_like_numpy(dt, rng=np.random.default_rng(11)):
    a, b = rand_int(rng, dt, (3, 4)), rand_int(rng, dt, (1, 4))
    b[b == 0] = 1
    ops = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Max": np.maximum, "Min": np.minimum}
    nodes = [h.make_node(op, ["a", "b"], ["y_" + op]) for op in ops]
    nodes += [h.make_node("Less", ["a", "b"], ["y_less"]), h.make_node("Clip", ["a", "lo", "hi"], ["y_clip"])]
    lo, hi = np.array(-5 if dt == np.int8 else 5, dt), np.array(60, dt)
    out = run_model(nodes, {"a": a, "b": b, "lo": lo, "hi": hi}, ["y_" + op for op in ops] + ["y_less", "y_clip"])
    with np.errstate(over="ignore"):
        for op, f in ops.items():
            np.testing.assert_array_equal(out["y_" + op].astype(np.int64), f(a, b).astype(np.int64), err_msg=op)
    np.testing.assert_array_equal(out["y_less"], a < b)
    np.testing.assert_array_equal(out["y_clip"].astype(np.int64), np.clip(a, lo, hi).astype(np.int64))


def test_maxpool_uint8(rng=np.random.default_rng(12)):
    x = rand_int(rng, np.uint8, (1, 2, 5, 6))
    out = run_model([h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])], {"x": x}, ["y"])
    ref = x[:, :, :4, :6].reshape(1, 2, 2, 2, 3, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(out["y"].astype(np.int64), ref.astype(np.int64))


def test_matmul_integer_and_conv_integer(rng=np.random.default_rng(13)):
    a, b = rand_int(rng, np.uint8, (3, 7)), rand_int(rng, np.int8, (7, 2))
    azp, bzp = np.array(12, np.uint8), np.array(-3, np.int8)
    out = run_model([h.make_node("MatMulInteger", ["a", "b", "azp", "bzp"], ["y"])],
                    {"a": a, "b": b, "azp": azp, "bzp": bzp}, ["y"], opset=21)
    ref = (a.astype(np.int64) - 12) @ (b.astype(np.int64) + 3)
    np.testing.assert_array_equal(out["y"], ref)
    x, w = rand_int(rng, np.uint8, (1, 2, 5, 5)), rand_int(rng, np.uint8, (3, 2, 3, 3))
    xzp = np.array(100, np.uint8)
    out = run_model([h.make_node("ConvInteger", ["x", "w", "xzp"], ["y"], pads=[1, 1, 1, 1])],
                    {"x": x, "w": w, "xzp": xzp}, ["y"], opset=21)
    xp = np.pad(x.astype(np.int64) - 100, [(0, 0), (0, 0), (1, 1), (1, 1)])
    ref = np.zeros((1, 3, 5, 5), np.int64)
    for i in range(5):
        for j in range(5):
            ref[0, :, i, j] = np.einsum("chw,mchw->m", xp[0, :, i:i + 3, j:j + 3], w.astype(np.int64))
    np.testing.assert_array_equal(out["y"], ref)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_window_functions_runtime_size(op, periodic):
    size = 7
    out = run_model([h.make_node(op, ["n"], ["w"], periodic=periodic)], {"n": np.array(size, np.int32)}, ["w"],
                    opset=17)
    big_n = size if periodic else size - 1
    k = 2 * np.pi * np.arange(size, dtype=np.float64) / big_n
    ref = {"HannWindow": 0.5 - 0.5 * np.cos(k), "HammingWindow": 25 / 46 - 21 / 46 * np.cos(k),
           "BlackmanWindow": 0.42 - 0.5 * np.cos(k) + 0.08 * np.cos(2 * k)}[op]
    np.testing.assert_allclose(out["w"], ref, rtol=1e-5, atol=1e-6)


def test_range_of_integers_cast_to_float():
    """Range(0.5, Cast(n), 1.5) over FLOAT: the limit is an integer fed at run time, so the length is computable
    (a FLOAT limit fed directly is still refused)."""
    nodes = [h.make_node("Cast", ["n"], ["nf"], to=int(TP.FLOAT)),
             h.make_node("Constant", [], ["s"], value=h.make_tensor("s", TP.FLOAT, [], [0.0])),
             h.make_node("Constant", [], ["d"], value=h.make_tensor("d", TP.FLOAT, [], [2.0])),
             h.make_node("Range", ["s", "nf", "d"], ["y"])]
    out = run_model(nodes, {"n": np.array(9, np.int32)}, ["y"], opset=17)
    np.testing.assert_array_equal(out["y"], np.arange(0.0, 9.0, 2.0, dtype=np.float32))
    msg = parse_errors([h.make_node("Range", ["s", "l", "d"], ["y"])],
                       {"s": np.array(0.0, np.float32), "l": np.array(3.0, np.float32),
                        "d": np.array(1.0, np.float32)}, ["y"], opset=17)
    assert "Range over FLOAT" in msg


def test_max_unpool_roundtrip_and_output_shape(rng=np.random.default_rng(14)):
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    # MaxPool 2x2 / 2 values and flat indices over the whole tensor (ONNX's Indices), computed here
    win = x.reshape(2, 3, 2, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 3, 4)
    arg = win.argmax(-1)
    vals = win.max(-1)
    n, c, i, j = np.meshgrid(*[np.arange(s) for s in (2, 3, 2, 3)], indexing="ij")
    flat = ((n * 3 + c) * 4 + (2 * i + arg // 2)) * 6 + (2 * j + arg % 2)
    node = h.make_node("MaxUnpool", ["v", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    out = run_model([node], {"v": vals, "i": flat.astype(np.int64)}, ["y"], opset=11)
    ref = np.zeros(x.size, np.float32)
    ref[flat.reshape(-1)] = vals.reshape(-1)
    np.testing.assert_array_equal(out["y"], ref.reshape(x.shape))
    node = h.make_node("MaxUnpool", ["v", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    out = run_model([node], {"v": vals, "i": flat.astype(np.int64), "s": np.array([2, 3, 5, 7], np.int64)}, ["y"],
                    opset=11)
    np.testing.assert_array_equal(out["y"], np.pad(ref.reshape(x.shape), [(0, 0), (0, 0), (0, 1), (0, 1)]))


def _col2im_ref(x, img, blk, dil, pads, strides):
    nsp = len(img)
    counts = [(img[d] + pads[d] + pads[d + nsp] - dil[d] * (blk[d] - 1) - 1) // strides[d] + 1 for d in range(nsp)]
    n, ck, ell = x.shape
    k = int(np.prod(blk))
    c = ck // k
    out = np.zeros((n, c) + tuple(img), np.float64)
    for kk in range(k):
        kd = np.unravel_index(kk, blk)
        for li in range(ell):
            ld = np.unravel_index(li, counts)
            pos = [ld[d] * strides[d] - pads[d] + kd[d] * dil[d] for d in range(nsp)]
            if all(0 <= pos[d] < img[d] for d in range(nsp)):
                out[(slice(None), slice(None)) + tuple(pos)] += x[:, [ci * k + kk for ci in range(c)], li]
    return out


@pytest.mark.parametrize("img,blk,dil,pads,strides", [((5, 6), (2, 3), (1, 1), (0, 0, 0, 0), (1, 1)),
                                                      ((6, 7), (3, 2), (2, 1), (1, 0, 1, 2), (2, 1)),
                                                      ((3, 4, 4), (2, 1, 2), (1, 1, 1), (0, 0, 1, 0, 0, 1),
                                                       (1, 2, 1))])
def test_col2im_runtime_shapes(img, blk, dil, pads, strides, rng=np.random.default_rng(15)):
    nsp = len(img)
    counts = [(img[d] + pads[d] + pads[d + nsp] - dil[d] * (blk[d] - 1) - 1) // strides[d] + 1 for d in range(nsp)]
    x = rng.standard_normal((2, 3 * int(np.prod(blk)), int(np.prod(counts)))).astype(np.float32)
    node = h.make_node("Col2Im", ["x", "img", "blk"], ["y"], dilations=list(dil), pads=list(pads),
                       strides=list(strides))
    out = run_model([node], {"x": x, "img": np.array(img, np.int64), "blk": np.array(blk, np.int64)}, ["y"],
                    opset=18)
    np.testing.assert_allclose(out["y"], _col2im_ref(x.astype(np.float64), img, blk, dil, pads, strides),
                               rtol=1e-5, atol=1e-5)


def _roi_align_ref(x, rois, bidx, oh, ow, grid, scale, half, mode):
    """ONNX RoiAlign written out per sample (float64)."""
    _, c, hh, ww = x.shape
    out = np.zeros((len(rois), c, oh, ow))
    off = 0.5 if half else 0.0
    for r, (x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        sx, sy = x1 * scale - off, y1 * scale - off
        rw, rh = x2 * scale - off - sx, y2 * scale - off - sy
        if not half:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bw, bh = rw / ow, rh / oh
        img = x[bidx[r]].astype(np.float64)
        for ph in range(oh):
            for pw in range(ow):
                vals = []
                for iy in range(grid):
                    for ix in range(grid):
                        yy = sy + ph * bh + (iy + 0.5) * bh / grid
                        xx = sx + pw * bw + (ix + 0.5) * bw / grid
                        if yy < -1 or yy > hh or xx < -1 or xx > ww:
                            vals.append(np.zeros((4, c)))
                            continue
                        yy, xx = min(max(yy, 0.0), hh - 1), min(max(xx, 0.0), ww - 1)
                        y0, x0 = int(yy), int(xx)
                        y1_, x1_ = min(y0 + 1, hh - 1), min(x0 + 1, ww - 1)
                        ly, lx = yy - y0, xx - x0
                        vals.append(np.stack([(1 - ly) * (1 - lx) * img[:, y0, x0], (1 - ly) * lx * img[:, y0, x1_],
                                              ly * (1 - lx) * img[:, y1_, x0], ly * lx * img[:, y1_, x1_]]))
                v = np.stack(vals)  # [grid^2, 4, C]
                out[r, :, ph, pw] = v.sum(1).mean(0) if mode == "avg" else v.max(1).max(0)
    return out


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
def test_roi_align_runtime_rois(mode, ctm, rng=np.random.default_rng(16)):
    x = rng.standard_normal((2, 3, 7, 9)).astype(np.float32)
    rois = np.array([[0.5, 1.0, 6.0, 5.5], [-2.0, -1.5, 3.0, 2.0], [2.0, 2.0, 2.2, 2.1], [4.0, 0.0, 11.0, 8.5]],
                    np.float32)
    bidx = np.array([0, 1, 1, 0], np.int64)
    node = h.make_node("RoiAlign", ["x", "rois", "b"], ["y"], mode=mode, coordinate_transformation_mode=ctm,
                       output_height=3, output_width=4, sampling_ratio=2, spatial_scale=0.8)
    out = run_model([node], {"x": x, "rois": rois, "b": bidx}, ["y"], opset=16)
    ref = _roi_align_ref(x, rois, bidx, 3, 4, 2, 0.8, ctm == "half_pixel", mode)
    np.testing.assert_allclose(out["y"], ref, rtol=1e-4, atol=1e-5)


def test_roi_align_adaptive_grid_is_refused_naming_the_node():
    msg = parse_errors([h.make_node("RoiAlign", ["x", "rois", "b"], ["y"], name="roi", sampling_ratio=0)],
                       {"x": np.zeros((1, 1, 4, 4), np.float32), "rois": np.zeros((2, 4), np.float32),
                        "b": np.zeros(2, np.int64)}, ["y"], opset=16)
    assert "roi" in msg and "sampling_ratio" in msg


@pytest.mark.parametrize("group,offset_group,with_mask", [(1, 1, False), (2, 2, True)])
def test_deform_conv_against_onnx_reference(group, offset_group, with_mask, rng=np.random.default_rng(17)):
    from onnx.reference import ReferenceEvaluator
    x = rng.standard_normal((2, 4, 4, 5)).astype(np.float32)
    w = rng.standard_normal((2, 4 // group, 3, 2)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    oh, ow = (4 + 2 - 3) // 2 + 1, (5 + 0 - 2 * 1 - 1) // 1 + 1  # pads (1, 0, 1, 0), strides (2, 1), dilations (1, 2)
    off = (rng.standard_normal((2, offset_group * 6 * 2, oh, ow)) * 1.5).astype(np.float32)
    feeds = {"x": x, "w": w, "off": off, "b": b}
    ins = ["x", "w", "off", "b"]
    if with_mask:
        feeds["m"] = rng.uniform(0, 1, (2, offset_group * 6, oh, ow)).astype(np.float32)
        ins.append("m")
    node = h.make_node("DeformConv", ins, ["y"], group=group, offset_group=offset_group, kernel_shape=[3, 2],
                       pads=[1, 0, 1, 0], strides=[2, 1], dilations=[1, 2])
    out = run_model([node], feeds, ["y"], opset=19)
    ref = ReferenceEvaluator(_model([node], feeds, ["y"], 19)).run(None, feeds)[0]
    np.testing.assert_allclose(out["y"], ref, rtol=1e-4, atol=1e-4)


def _two_conv_model(rng):
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    w2 = rng.standard_normal((2, 4, 1, 1)).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(b, "b"),
             onnx.numpy_helper.from_array(w2, "w2")]
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             h.make_node("Conv", ["c", "w2"], ["y"], name="conv2")]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, 3, 4, 4])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [1, 2, 4, 4])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])

    def ref(x):
        xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
        c = np.zeros((1, 4, 4, 4))
        for i in range(4):
            for j in range(4):
                c[0, :, i, j] = np.einsum("chw,ochw->o", xp[0, :, i:i + 3, j:j + 3], w) + b
        return np.einsum("nchw,oc->nohw", c, w2[:, :, 0, 0].astype(np.float64))
    return model, ref


def test_onnx_parser_refitter(tmp_path, rng=np.random.default_rng(18)):
    model, _ = _two_conv_model(rng)
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    parser = trt.OnnxParser(net, LOGGER)
    assert parser.parse(model.SerializeToString())
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.REFIT)
    eng = trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, cfg))
    model2, ref2 = _two_conv_model(rng)  # same graph, new initializers
    path = tmp_path / "v2.onnx"
    path.write_bytes(model2.SerializeToString())
    refitter = trt.Refitter(eng, LOGGER)
    pr = trt.OnnxParserRefitter(refitter, LOGGER)
    assert pr.refit_from_file(str(path)), [str(pr.get_error(i)) for i in range(pr.get_num_errors())]
    assert refitter.refit_cuda_engine()
    ctx = eng.create_execution_context()
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    y = np.zeros((1, 2, 4, 4), np.float32)
    ctx.set_tensor_address("x", x)
    ctx.set_tensor_address("y", y)
    assert ctx.execute_async_v3(0)
    np.testing.assert_allclose(y, ref2(x), rtol=1e-4, atol=1e-4)
    # a model whose weights do not fit: errors naming the weights, nothing set
    bad, _ = _two_conv_model(rng)
    bad.graph.node[0].name = "renamed"
    assert not pr.refit_from_bytes(bad.SerializeToString())
    assert pr.get_num_errors() >= 1 and "conv" in str(pr.get_error(0).desc())
    assert not pr.refit_from_file(str(tmp_path / "missing.onnx")) and pr.get_num_errors() == 1
    with pytest.raises(TypeError, match="Refitter"):
        trt.OnnxParserRefitter(eng, LOGGER)


def test_random_generators_statistics(rng=np.random.default_rng(19)):
    p_in = rng.uniform(0, 1, (40, 50)).astype(np.float32)
    nodes = [h.make_node("Bernoulli", ["p"], ["bern"], seed=3.0),
             h.make_node("RandomUniformLike", ["p"], ["uni"], low=-2.0, high=3.0, seed=1.0),
             h.make_node("RandomNormal", [], ["nrm"], shape=[60, 70], mean=1.5, scale=0.5, seed=2.0),
             h.make_node("RandomNormalLike", ["p"], ["nrm2"])]
    out = run_model(nodes, {"p": p_in}, ["bern", "uni", "nrm", "nrm2"], opset=17)
    b = out["bern"]
    assert set(np.unique(b)) <= {0.0, 1.0}
    # sum of 2000 independent Bernoulli(p_i): within 5 standard deviations of its mean
    assert abs(b.sum() - p_in.sum()) <= 5 * np.sqrt((p_in * (1 - p_in)).sum())
    assert b[p_in < 0.05].mean() < 0.2 and b[p_in > 0.95].mean() > 0.8
    u = out["uni"]
    assert u.shape == p_in.shape and u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.2
    n = out["nrm"]
    assert n.shape == (60, 70) and abs(n.mean() - 1.5) < 0.05 and abs(n.std() - 0.5) < 0.05
    assert out["nrm2"].shape == p_in.shape
    again = run_model(nodes, {"p": p_in}, ["bern", "uni", "nrm", "nrm2"], opset=17)  # seeded: reproducible
    for k in again:
        np.testing.assert_array_equal(again[k], out[k])
    msg = parse_errors([h.make_node("RandomUniform", [], ["y"], name="ru")], {"p": p_in}, ["y"], opset=17)
    assert "ru" in msg and "shape" in msg


@pytest.mark.parametrize("direction", [0, 1])
def test_scan8_batch_major(direction, rng=np.random.default_rng(20)):
    """Scan-8: states [B, 2], scan input [B, T, 2] scanned along axis 1 per batch entry."""
    body = h.make_graph([h.make_node("Add", ["s_in", "x_t"], ["s_out"]), h.make_node("Identity", ["s_out"], ["y_t"])],
                        "body", [h.make_tensor_value_info("s_in", TP.FLOAT, [2]),
                                 h.make_tensor_value_info("x_t", TP.FLOAT, [2])],
                        [h.make_tensor_value_info("s_out", TP.FLOAT, [2]),
                         h.make_tensor_value_info("y_t", TP.FLOAT, [2])])
    node = h.make_node("Scan", ["", "init", "x"], ["final", "ys"], num_scan_inputs=1, body=body,
                       directions=[direction])
    init = rng.standard_normal((3, 2)).astype(np.float32)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    out = run_model([node], {"init": init, "x": x}, ["final", "ys"], opset=8)
    xs = x[:, ::-1] if direction else x
    ys = init[:, None, :] + np.cumsum(xs.astype(np.float64), axis=1)
    np.testing.assert_allclose(out["ys"], ys, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["final"], ys[:, -1], rtol=1e-5, atol=1e-6)


def test_bit_layers_and_cumulative_prod_plan_round_trip():
    """The new enum values survive a plan (serialize, deserialize, run)."""
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    x = net.add_input("x", trt.DataType.INT32, (4,))
    s = net.add_input("s", trt.DataType.INT32, (4,))
    y = net.add_elementwise(x, s, trt.ElementWiseOperation.SHIFT_LEFT).get_output(0)
    z = net.add_unary(y, trt.UnaryOperation.BITWISE_NOT).get_output(0)
    axis = net.add_constant((), np.array(0, np.int32)).get_output(0)
    c = net.add_cumulative(z, axis, trt.CumulativeOperation.PROD, False, False).get_output(0)
    c.name = "c"
    net.mark_output(c)
    eng = trt.Runtime(LOGGER).deserialize_cuda_engine(bytes(b.build_serialized_network(net, b.create_builder_config())))
    ctx = eng.create_execution_context()
    xv, sv, out = np.array([1, 2, 3, -4], np.int32), np.array([1, 0, 40, 2], np.int32), np.zeros(4, np.int32)
    for n, a in (("x", xv), ("s", sv), ("c", out)):
        ctx.set_tensor_address(n, a)
    assert ctx.execute_async_v3(0)
    np.testing.assert_array_equal(out, np.cumprod(~np.array([2, 2, 0, -16], np.int64)))
