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
