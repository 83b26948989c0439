"""int64 graph inputs and outputs keep their type through the ONNX parser (issue #12 (2)), as TensorRT 10's
parser does: the engine binds INT64 tensors (numpy int64); shape-tensor inputs stay INT32.  References: numpy
and onnxruntime."""
import numpy as np
import pytest

from onnx_helpers import helper, make_model, ort_run, parse, trt_build

import trtlite as trt

DT = trt.DataType


def test_int64_input_and_output_are_int64():
    nodes = [helper.make_node("Add", ["x", "k"], ["s"]), helper.make_node("Mul", ["s", "x"], ["y"]),
             helper.make_node("Cast", ["x"], ["f"], to=1)]
    m = make_model(nodes, {"x": ((2, 3), np.int64)}, {"y": ((2, 3), np.int64), "f": ((2, 3), np.float32)},
                   {"k": np.array([[5, -7, 11]], np.int64)})
    x = np.array([[1, -2, 3], [40000, -5, 0]], np.int64)
    eng, _ = trt_build(m)
    assert eng.get_tensor_dtype("x") == DT.INT64 and eng.get_tensor_dtype("y") == DT.INT64
    assert eng.get_tensor_dtype("f") == DT.FLOAT
    out = eng.create_execution_context().infer({"x": x})
    assert out["y"].dtype == np.int64
    np.testing.assert_array_equal(out["y"], (x + [[5, -7, 11]]) * x)
    np.testing.assert_array_equal(out["y"], ort_run(m, {"x": x})["y"])
    np.testing.assert_array_equal(out["f"], x.astype(np.float32))


def test_int64_shape_input_stays_int32_shape_tensor():
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    m = make_model(nodes, {"x": ((2, 6), np.float32), "shape": ((2,), np.int64)}, {"y": None})
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = b.create_network(0)
    parser = trt.OnnxParser(net, trt.Logger(trt.Logger.ERROR))
    assert parser.parse(m.SerializeToString()), parser.get_error(0)
    assert net.get_input(1).dtype == DT.INT32 and net.get_input(1).is_shape_tensor
    assert net.get_input(0).dtype == DT.FLOAT


def test_int64_output_of_argmax():
    nodes = [helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=0)]
    m = make_model(nodes, {"x": (3, 4)}, {"y": ((3,), np.int64)})
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    eng, _ = trt_build(m)
    out = eng.create_execution_context().infer({"x": x})
    assert eng.get_tensor_dtype("y") == DT.INT64 and out["y"].dtype == np.int64
    np.testing.assert_array_equal(out["y"], np.argmax(x, 1))


# ---- int64 kept INT64 inside (session 10): where every node an int64 input reaches computes INT64 ----------------

BIG = np.array([[3_000_000_000, -2, 3, -7], [40000, -5_000_000_000, 2 ** 40, -(2 ** 35) - 1]], np.int64)


def _int_div(p, q):
    """ONNX integer Div truncates toward zero (C's division), exact for int64 (no float round trip)."""
    r = np.abs(p) // np.abs(q)
    return np.where((p < 0) != (q < 0), -r, r)


def _internal_dtypes(m):
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = b.create_network(0)
    parser = trt.OnnxParser(net, trt.Logger(trt.Logger.ERROR))
    assert parser.parse(m.SerializeToString()), parser.get_error(0)
    return {net.get_layer(i).type for i in range(net.num_layers)}, \
        [net.get_layer(i).get_output(0).dtype for i in range(net.num_layers)]


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Min", "Max"])
def test_int64_beyond_int32_elementwise(op):
    k = np.array([[5, -7, 11, -3]], np.int64)
    nodes = [helper.make_node(op, ["x", "k"], ["a"]), helper.make_node(op, ["a", "x"], ["y"])]
    m = make_model(nodes, {"x": ((2, 4), np.int64)}, {"y": ((2, 4), np.int64)}, {"k": k})
    x = BIG if op != "Mul" else BIG // 4096 + 1  # Mul: no overflow of 64 bits (BIG has no 0 divisor)
    eng, _ = trt_build(m)
    got = eng.create_execution_context().infer({"x": x})["y"]
    assert got.dtype == np.int64
    # numpy is the reference: onnxruntime 1.30's int64 Min / Max (seen on an AVX-512 Xeon) took 3e9 for less than 5
    f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Min": np.minimum, "Max": np.maximum,
         "Div": _int_div}[op]
    np.testing.assert_array_equal(got, f(f(x, k), x))
    _, dts = _internal_dtypes(m)
    assert DT.INT32 not in dts[-2:]  # computed wide, not narrowed and cast back


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"])
def test_int64_beyond_int32_reduce_and_unary(op):
    nodes = [helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Abs", ["n"], ["a"]),
             helper.make_node(op, ["a", "axes"], ["r"], keepdims=1),
             helper.make_node("Sign", ["n"], ["s"])]
    m = make_model(nodes, {"x": ((2, 4), np.int64)}, {"r": ((2, 1), np.int64), "s": ((2, 4), np.int64)},
                   {"axes": np.array([1], np.int64)}, opset=18)
    x = BIG if op != "ReduceProd" else np.array([[2 ** 20, 3, -5, 7], [2 ** 31 + 1, 1, 1, -4]], np.int64)
    eng, _ = trt_build(m)
    out = eng.create_execution_context().infer({"x": x})
    red = {"ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min, "ReduceProd": np.prod}[op]
    ref = {"r": red(np.abs(x), axis=1, keepdims=True), "s": np.sign(-x)}
    for k in ("r", "s"):
        assert out[k].dtype == np.int64
        np.testing.assert_array_equal(out[k], ref[k])


def test_int64_beyond_int32_cast_compare_identity():
    nodes = [helper.make_node("Identity", ["x"], ["i"]), helper.make_node("Cast", ["i"], ["c64"], to=7),
             helper.make_node("Add", ["c64", "x"], ["y"]), helper.make_node("Cast", ["y"], ["f"], to=11),
             helper.make_node("Cast", ["y"], ["h"], to=1), helper.make_node("Greater", ["y", "z"], ["g"]),
             helper.make_node("Equal", ["x", "z"], ["e"])]
    m = make_model(nodes, {"x": ((2, 4), np.int64), "z": ((2, 4), np.int64)},
                   {"y": ((2, 4), np.int64), "f": ((2, 4), np.float64), "h": ((2, 4), np.float32),
                    "g": ((2, 4), np.bool_), "e": ((2, 4), np.bool_)})
    z = BIG.copy()
    z[0, 0] += 1
    eng, _ = trt_build(m)
    out = eng.create_execution_context().infer({"x": BIG, "z": z})
    ref = ort_run(m, {"x": BIG, "z": z})
    np.testing.assert_array_equal(out["y"], ref["y"])
    np.testing.assert_array_equal(out["g"], ref["g"])
    np.testing.assert_array_equal(out["e"], ref["e"])
    np.testing.assert_allclose(out["h"], ref["h"], rtol=1e-7)  # float32 of values beyond 2^24: rounded alike
    np.testing.assert_allclose(out["f"], ref["f"], rtol=1e-7)  # double is carried as FLOAT


def test_int64_narrowed_where_a_consumer_needs_int32():
    # Clip does not compute INT64, nor a Concat operand computed from another source (a shape), so the input is
    # narrowed once (values within int32 stay exact)
    nodes = [helper.make_node("Add", ["x", "k"], ["a"]), helper.make_node("Clip", ["a", "lo", "hi"], ["y"])]
    m = make_model(nodes, {"x": ((1, 3), np.int64)}, {"y": ((1, 3), np.int64)},
                   {"k": np.array([1, 2, 3], np.int64), "lo": np.array(-100000, np.int64),
                    "hi": np.array(5, np.int64)})
    types, dts = _internal_dtypes(m)
    assert trt.LayerType.CAST in types and DT.INT32 in dts
    x = np.array([[1, -200000, 7]], np.int64)
    eng, _ = trt_build(m)
    np.testing.assert_array_equal(eng.create_execution_context().infer({"x": x})["y"], ort_run(m, {"x": x})["y"])
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Concat", ["x", "s"], ["y"], axis=0)]
    m2 = make_model(nodes, {"x": ((-1,), np.int64)}, {"y": ((-1,), np.int64)})
    _, dts2 = _internal_dtypes(m2)
    assert DT.INT32 in dts2


# ---- session 12: MatMul, Mod and CumSum compute INT64 (wrapping as numpy / onnxruntime) ---------------------------

I64 = np.int64

_ARITH = {
    "matmul_batched": ([helper.make_node("MatMul", ["x3", "w"], ["y"])], {"w": np.array([[3], [-2 ** 33], [5], [7]], I64)},
                       (3, 2, 4)),
    "matmul_two_inputs_vector": ([helper.make_node("MatMul", ["x2", "x2t"], ["y"])], {}, None),
    "mod_floor_and_fmod": ([helper.make_node("Mod", ["x2", "m"], ["a"]),
                            helper.make_node("Mod", ["x2", "m"], ["b"], fmod=1),
                            helper.make_node("Sub", ["a", "b"], ["y"])], {"m": np.array([7, -5, 2 ** 33, -3], I64)},
                           None),
    "cumsum_reverse_exclusive": ([helper.make_node("CumSum", ["x2", "ax"], ["c"], reverse=1, exclusive=1),
                                  helper.make_node("CumSum", ["c", "ax0"], ["y"])],
                                 {"ax": np.array(1, I64), "ax0": np.array(-2, I64)}, None),
}


@pytest.mark.parametrize("case", sorted(_ARITH))
def test_int64_matmul_mod_cumsum_beyond_int32(case, rng=np.random.default_rng(12)):
    """Values beyond int32 (and sums that wrap 64 bits in the MatMul) computed as INT64, exactly as onnxruntime."""
    nodes, inits, shape3 = _ARITH[case]
    feeds = {}
    if shape3:
        x = rng.integers(-2 ** 40, 2 ** 40, shape3, dtype=I64)
        x[0, 0, 1] = 2 ** 62  # times -2^33 wraps
        inputs, feeds = {"x3": ((-1,) + shape3[1:], I64)}, {"x3": x}
    else:
        x = rng.integers(-2 ** 45, 2 ** 45, (int(rng.integers(2, 6)), 4), dtype=I64)
        inputs, feeds = {"x2": (x.shape, I64)}, {"x2": x}
        if "x2t" in nodes[0].input:
            inputs["x2t"] = ((4,), I64)
            feeds["x2t"] = rng.integers(-2 ** 20, 2 ** 20, (4,), dtype=I64)
    m = make_model(nodes, inputs, {"y": (None, I64)}, inits, opset=14)
    eng, _ = trt_build(m, feeds)
    got = eng.create_execution_context().infer(feeds)["y"]
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, ort_run(m, feeds)["y"])
    types, dts = _internal_dtypes(m)
    assert DT.INT32 not in dts[-1:] and trt.LayerType.CAST not in types  # computed wide, not narrowed


# ---- session 11: int64 kept INT64 through the data-moving ops, and constants beyond int32 --------------------------
_MOVES = {
    "reshape_transpose_flatten_unsqueeze_squeeze": (
        [helper.make_node("Reshape", ["x", "s"], ["r"]), helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
         helper.make_node("Flatten", ["t"], ["f"], axis=1), helper.make_node("Unsqueeze", ["f", "ax"], ["u"]),
         helper.make_node("Squeeze", ["u", "ax"], ["y"])],
        {"s": np.array([4, -1], I64), "ax": np.array([0], I64)}),
    "concat": ([helper.make_node("Add", ["x", "k"], ["a"]), helper.make_node("Concat", ["a", "x"], ["y"], axis=1)],
               {"k": np.array([1, 2, 3, 4], I64)}),
    "gather": ([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], {"i": np.array([[3, 0], [1, -1]], I64)}),
    "gather_elements": ([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
                        {"i": np.array([[3, 0, 2], [1, 1, 0]], I64)}),
    "gather_nd": ([helper.make_node("GatherND", ["x", "i"], ["y"])], {"i": np.array([[1, 2], [0, 0]], I64)}),
    "slice_to_int64_max": ([helper.make_node("Slice", ["x", "st", "en", "ax"], ["y"])],
                           {"st": np.array([1], I64), "en": np.array([2 ** 63 - 1], I64), "ax": np.array([1], I64)}),
    "expand_tile": ([helper.make_node("Expand", ["x", "sh"], ["e"]), helper.make_node("Tile", ["e", "rep"], ["y"])],
                    {"sh": np.array([2, 1, 4], I64), "rep": np.array([1, 2, 1], I64)}),
    "split": ([helper.make_node("Split", ["x", "sp"], ["y", "z"], axis=1)], {"sp": np.array([1, 3], I64)}),
    "where_int64_min": ([helper.make_node("Greater", ["x", "zero"], ["c"]),
                         helper.make_node("Where", ["c", "x", "m"], ["y"])],
                        {"zero": np.array(0, I64), "m": np.array(-2 ** 63, I64)}),
    "add_constant_beyond_int32": ([helper.make_node("Add", ["x", "k"], ["y"])],
                                  {"k": np.array([1, 2 ** 33, 3, -2 ** 50], I64)}),
    "shape_of_int64": ([helper.make_node("Concat", ["x", "x"], ["c"], axis=1), helper.make_node("Shape", ["c"], ["y"])],
                       {}),
}


@pytest.mark.parametrize("case", sorted(_MOVES))
def test_int64_beyond_int32_through_data_moving_ops(case):
    """Values beyond int32 survive reshapes, concatenation, gathers, slices, expand/tile, split and Where, and
    constants beyond int32 meet them exactly (INT64 weights), with a dynamic batch where the op allows it, through
    a plan; onnxruntime is the reference."""
    nodes, inits = _MOVES[case]
    outs = ["y", "z"] if case == "split" else ["y"]
    static = case in ("expand_tile", "shape_of_int64")
    m = make_model(nodes, {"x": ((2 if static else -1, 4), I64)}, {k: (None, I64) for k in outs}, inits, opset=18)
    b, net, _ = parse(m)
    assert net.get_input(0).dtype == DT.INT64
    assert not any(net.get_layer(i).name.endswith("cast_to_int32") for i in range(net.num_layers))  # not narrowed
    cfg = b.create_builder_config()
    if not static:
        prof = b.create_optimization_profile()
        prof.set_shape("x", (2, 4), (2, 4), (8, 4))
        cfg.add_optimization_profile(prof)
    plan = b.build_serialized_network(net, cfg)
    ctx = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan).create_execution_context()
    for x in (BIG, np.concatenate([BIG, -BIG[::-1], BIG // 3])):  # batch 2, then 6
        if static and x.shape[0] != 2:
            continue
        got, ref = ctx.infer({"x": x}), ort_run(m, {"x": x})
        for k in outs:
            assert got[k].dtype == np.int64
            np.testing.assert_array_equal(got[k], ref[k])


def test_int64_constant_output_beyond_int32():
    nodes = [helper.make_node("Identity", ["x"], ["y"])]
    m = make_model(nodes, {"x": ((2,), np.float32)}, {"y": ((2,), np.float32), "k": ((3,), I64)},
                   {"k": np.array([2 ** 40, -2 ** 63, 5], I64)})
    eng, _ = trt_build(m)
    out = eng.create_execution_context().infer({"x": np.ones(2, np.float32)})
    assert out["k"].dtype == np.int64
    np.testing.assert_array_equal(out["k"], [2 ** 40, -2 ** 63, 5])


def test_weights_of_int64_values():
    """trt.Weights / add_constant of an int64 array: INT32 where every value fits (as before), INT64 weights as
    they are where one does not (it used to wrap silently through Weights); only constant layers take INT64."""
    big = np.array([[3_000_000_000, -5], [2 ** 62, -2 ** 63]], np.int64)
    assert trt.Weights(np.array([1, -2], np.int64)).dtype == DT.INT32
    assert trt.Weights(big).dtype == DT.INT64
    assert trt.Weights(DT.INT64, big.ctypes.data, 4).dtype == DT.INT64
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = b.create_network(0)
    x = net.add_input("x", DT.INT64, (2, 2))
    c1 = net.add_constant((2, 2), big)
    c2 = net.add_constant((2, 2), trt.Weights(big))
    assert c1.get_output(0).dtype == DT.INT64 and c2.get_output(0).dtype == DT.INT64
    y = net.add_elementwise(x, c2.get_output(0), trt.ElementWiseOperation.SUM).get_output(0)
    y.name = "y"
    net.mark_output(y)
    c1.get_output(0).name = "c"
    net.mark_output(c1.get_output(0))
    plan = b.build_serialized_network(net, b.create_builder_config())
    out = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan).create_execution_context().infer(
        {"x": np.ones((2, 2), np.int64)})
    np.testing.assert_array_equal(out["c"], big)
    np.testing.assert_array_equal(out["y"], big + 1)  # wraps modulo 2^64 at -2^63 + 1: no wrap here
    f = net.add_input("f", DT.FLOAT, (1, 1, 3, 3))
    with pytest.raises(trt.DTypeError, match="kernel: weights of type INT64 are not supported"):
        net.add_convolution_nd(f, 1, (1, 1), trt.Weights(big[:1, :1]), None)


class _Capture(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.msgs = []

    def log(self, severity, msg):
        self.msgs.append((severity, msg))


def test_cast_to_int64_meeting_a_constant_beyond_int32_is_computed_int64():
    """Cast(float -> int64) is carried as INT32 unless its value meets an integer constant beyond int32: then the
    cast gives INT64 and the chain computes INT64 (exact, as onnxruntime)."""
    nodes = [helper.make_node("Cast", ["x"], ["c"], to=7), helper.make_node("Min", ["c", "k"], ["m"]),
             helper.make_node("Add", ["m", "k"], ["y"]), helper.make_node("Cast", ["x2"], ["z"], to=7)]
    m = make_model(nodes, {"x": ((3,), np.float32), "x2": ((3,), np.float32)}, {"y": ((3,), I64), "z": ((3,), I64)},
                   {"k": np.array([2 ** 40, 5, -2 ** 35], I64)})
    _, net = trt_build(m)
    casts = [net.get_layer(i) for i in range(net.num_layers) if net.get_layer(i).type == trt.LayerType.CAST]
    assert sorted(str(c.get_output(0).dtype) for c in casts if c.get_input(0).name in ("x", "x2")) == \
        ["DataType.INT32", "DataType.INT64"]  # the Cast whose value meets no such constant: INT32 as before
    feeds = {"x": np.array([7.5, 9.0, -3.0e9], np.float32), "x2": np.array([1.5, -2.0, 3.0], np.float32)}
    eng, _ = trt_build(m)
    got = eng.create_execution_context().infer(feeds)
    ref = ort_run(m, feeds)
    assert got["y"].dtype == np.int64
    np.testing.assert_array_equal(got["y"], ref["y"])
    np.testing.assert_array_equal(got["z"], ref["z"])


def test_int64_constant_beyond_int32_meeting_an_int32_chain_warns():
    """Where the chain cannot compute INT64 (Clip does not), a constant beyond int32 meeting it is clamped, as
    TensorRT's parser casts INT64 weights down -- with a warning naming the node and the constant."""
    nodes = [helper.make_node("Cast", ["x"], ["c"], to=7), helper.make_node("Clip", ["c", "lo", "hi"], ["r"]),
             helper.make_node("Min", ["r", "k"], ["y"], name="mymin")]
    m = make_model(nodes, {"x": ((3,), np.float32)}, {"y": ((3,), I64)},
                   {"lo": np.array(-5, I64), "hi": np.array(8, I64), "k": np.array([2 ** 40, 5, -2 ** 35], I64)})
    log = _Capture()
    eng, _ = trt_build(m, logger=log)
    warned = [msg for sev, msg in log.msgs if sev == trt.ILogger.Severity.WARNING and "beyond int32" in msg]
    assert warned and "node 'mymin'" in warned[0] and "constant 'k'" in warned[0] and "2 of them" in warned[0]
    x = np.array([7.5, 9.0, -3.0], np.float32)
    got = eng.create_execution_context().infer({"x": x})["y"]
    r = np.clip(x.astype(np.int64), -5, 8)
    np.testing.assert_array_equal(got, np.minimum(r, np.clip([2 ** 40, 5, -2 ** 35], -2 ** 31, 2 ** 31 - 1)))
