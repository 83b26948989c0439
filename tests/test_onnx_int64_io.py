"""int64 graph inputs and outputs keep their type through the ONNX parser (issue #12 (2)), as TensorRT 10's
parser does: the engine binds INT64 tensors (numpy int64); shape-tensor inputs stay INT32.  References: numpy
and onnxruntime."""
import numpy as np
import pytest

from onnx_helpers import helper, make_model, ort_run, trt_build

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
    np.testing.assert_array_equal(got, ort_run(m, {"x": x})["y"])
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
    ref = ort_run(m, {"x": x})
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
    # Concat (no INT64 kernel) and a constant beyond int32 keep the narrowing (values within int32 stay exact)
    nodes = [helper.make_node("Add", ["x", "k"], ["a"]), helper.make_node("Concat", ["a", "x"], ["y"], axis=0)]
    m = make_model(nodes, {"x": ((1, 3), np.int64)}, {"y": ((2, 3), np.int64)}, {"k": np.array([1, 2, 3], np.int64)})
    types, dts = _internal_dtypes(m)
    assert trt.LayerType.CAST in types and DT.INT32 in dts
    x = np.array([[1, -200000, 7]], np.int64)
    eng, _ = trt_build(m)
    np.testing.assert_array_equal(eng.create_execution_context().infer({"x": x})["y"], ort_run(m, {"x": x})["y"])
    m2 = make_model([helper.make_node("Add", ["x", "k"], ["y"])], {"x": ((1, 3), np.int64)},
                    {"y": ((1, 3), np.int64)}, {"k": np.array([1, 2 ** 33, 3], np.int64)})
    _, dts2 = _internal_dtypes(m2)
    assert DT.INT32 in dts2
