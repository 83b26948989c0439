"""ONNX If / Loop / Scan (issue #12) imported onto IIfConditional / ILoop, checked against onnxruntime."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_helpers as oh

F = TensorProto.FLOAT


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const_node(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name))


def if_model():
    """y = x * 2 + outer_bias if c else tanh(x) - 1; z = x + w (then) / x (else): outer-scope names in both."""
    then_g = helper.make_graph(
        [const_node("two", np.array(2.0, np.float32)), helper.make_node("Mul", ["x", "two"], ["t0"]),
         helper.make_node("Add", ["t0", "bias"], ["ty"]), helper.make_node("Add", ["x", "w"], ["tz"])],
        "then", [], [vi("ty", F, [2, 3]), vi("tz", F, [2, 3])])
    else_g = helper.make_graph(
        [helper.make_node("Tanh", ["x"], ["e0"]), const_node("one", np.array(1.0, np.float32)),
         helper.make_node("Sub", ["e0", "one"], ["ey"]), helper.make_node("Identity", ["x"], ["ez"])],
        "else", [], [vi("ey", F, [2, 3]), vi("ez", F, [2, 3])])
    node = helper.make_node("If", ["c"], ["y", "z"], then_branch=then_g, else_branch=else_g)
    return oh.make_model([node], {"c": ((), np.bool_), "x": (2, 3), "w": (2, 3)}, {"y": (2, 3), "z": (2, 3)},
                         initializers={"bias": np.array([0.5, -1.0, 2.0], np.float32)})


@pytest.mark.parametrize("c", [True, False])
def test_onnx_if(c):
    rng = np.random.default_rng(1)
    feeds = {"c": np.array(c), "x": rng.standard_normal((2, 3)).astype(np.float32),
             "w": rng.standard_normal((2, 3)).astype(np.float32)}
    oh.compare(if_model(), feeds)


def test_onnx_if_constant_condition_imports_one_branch():
    m = if_model()
    m.graph.input.pop(0)  # c becomes an initializer
    m.graph.initializer.append(numpy_helper.from_array(np.array(False), "c"))
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((2, 3)).astype(np.float32), "w": rng.standard_normal((2, 3)).astype(np.float32)}
    oh.compare(m, feeds)
    _, network, _ = oh.parse(m)
    types = {str(network.get_layer(i).type) for i in range(network.num_layers)}
    assert not any("CONDITION" in t for t in types), types


def loop_model(trip=5):
    """Loop with a constant trip count and a condition computed in the body (stops when the sum passes 20):
    carried y (y = y * 1.5 + x[i % 3]) and the iteration number; scan outputs y and i * 2."""
    body = helper.make_graph(
        [const_node("k", np.array(1.5, np.float32)),
         helper.make_node("Mul", ["y_in", "k"], ["ym"]),
         helper.make_node("Add", ["ym", "x"], ["y_out"]),
         helper.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0),
         const_node("lim", np.array(20.0, np.float32)),
         helper.make_node("Less", ["s", "lim"], ["cond_out"]),
         const_node("two", np.array(2, np.int64)),
         helper.make_node("Mul", ["i", "two"], ["i2"]),
         helper.make_node("Identity", ["y_out"], ["scan_y"])],
        "body", [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("y_in", F, [3])],
        [vi("cond_out", TensorProto.BOOL, []), vi("y_out", F, [3]), vi("scan_y", F, [None, 3]),
         vi("i2", TensorProto.INT64, [])])
    node = helper.make_node("Loop", ["M", "cond", "y0"], ["y_final", "ys", "is"], body=body)
    return oh.make_model([node], {"cond": ((), np.bool_), "y0": (3,), "x": (3,)},
                         {"y_final": (3,), "ys": (None, 3), "is": ((None,), np.int64)},
                         initializers={"M": np.array(trip, np.int64)})


@pytest.mark.parametrize("x", [[0.1, 0.2, 0.3], [1.0, 2.0, 3.0], [5.0, 5.0, 5.0]])
def test_onnx_loop_while_and_count(x):
    """The scan outputs are as long as the trip count (trtlite fills the iterations the condition skipped with 0,
    where onnxruntime stops early): compare the final value, and the scan rows that ran."""
    feeds = {"cond": np.array(True), "y0": np.zeros(3, np.float32), "x": np.array(x, np.float32)}
    ref = oh.ort_run(loop_model(), feeds)
    got, _ = oh.trt_run(loop_model(), feeds)
    n = ref["ys"].shape[0]
    np.testing.assert_allclose(got["y_final"], ref["y_final"], rtol=1e-5)
    np.testing.assert_allclose(got["ys"][:n], ref["ys"], rtol=1e-5)
    np.testing.assert_array_equal(got["is"][:n], ref["is"])
    assert not got["ys"][n:].any()


def test_onnx_loop_count_only():
    """Condition carried unchanged (Identity): a plain counted loop whose scan outputs match onnxruntime exactly."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Add", ["acc_in", "fi"], ["acc_out"]),
         helper.make_node("Mul", ["acc_out", "x"], ["sc"])],
        "body", [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("acc_in", F, [2])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", F, [2]), vi("sc", F, [2])])
    node = helper.make_node("Loop", ["M", "", "acc0"], ["acc", "scan"], body=body)
    m = oh.make_model([node], {"acc0": (2,), "x": (2,)}, {"acc": (2,), "scan": (None, 2)},
                      initializers={"M": np.array(4, np.int64)})
    oh.compare(m, {"acc0": np.array([1.0, -1.0], np.float32), "x": np.array([0.5, 2.0], np.float32)})


def scan_model():
    """Scan-9: running sum state over axis 1 of a (2, 4) input read backwards; scan output along axis 1, reversed."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xi"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "xi"], ["o"])],
        "body", [vi("s_in", F, [2]), vi("xi", F, [2])], [vi("s_out", F, [2]), vi("o", F, [2])])
    node = helper.make_node("Scan", ["s0", "x"], ["s", "y"], body=body, num_scan_inputs=1,
                            scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1],
                            scan_output_directions=[1])
    return oh.make_model([node], {"s0": (2,), "x": (2, 4)}, {"s": (2,), "y": (2, 4)}, opset=11)


def test_onnx_scan_axes_and_directions():
    rng = np.random.default_rng(3)
    oh.compare(scan_model(), {"s0": rng.standard_normal(2).astype(np.float32),
                              "x": rng.standard_normal((2, 4)).astype(np.float32)})


def test_onnx_if_inside_loop():
    """A Loop body holding an If on the carried value (nested conditional in a loop)."""
    then_g = helper.make_graph([helper.make_node("Add", ["a_in", "x"], ["t"])], "then", [], [vi("t", F, [2])])
    else_g = helper.make_graph([helper.make_node("Sub", ["a_in", "x"], ["e"])], "else", [], [vi("e", F, [2])])
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["a_in"], ["s"], keepdims=0),
         const_node("z", np.array(0.0, np.float32)),
         helper.make_node("Less", ["s", "z"], ["neg"]),
         helper.make_node("If", ["neg"], ["a_out"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("a_in", F, [2])],
        [vi("cond_out", TensorProto.BOOL, []), vi("a_out", F, [2])])
    node = helper.make_node("Loop", ["M", "", "a0"], ["a"], body=body)
    m = oh.make_model([node], {"a0": (2,), "x": (2,)}, {"a": (2,)}, initializers={"M": np.array(7, np.int64)})
    oh.compare(m, {"a0": np.array([0.3, -0.1], np.float32), "x": np.array([0.25, 0.5], np.float32)})
