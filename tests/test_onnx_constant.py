"""ONNX Constant (and ConstantOfShape's value): every value attribute ONNX defines, checked against
onnxruntime, and malformed ones reported as INVALID_NODE naming the node and the attribute (issue #9 item 14:
a `value` that is not a tensor used to be an INTERNAL_ERROR)."""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

import trtlite as trt  # noqa: E402
from onnx_helpers import compare, make_model, to_bytes  # noqa: E402

F32 = np.float32


def new_parser():
    logger = trt.Logger(trt.Logger.INTERNAL_ERROR)
    network = trt.Builder(logger).create_network(0)
    return trt.OnnxParser(network, logger), network


def _const_plus_x(const_node, x_shape, x_dtype=np.float32, opset=13):
    """y = x + the constant (a constant alone would be folded into a constant output; this runs it)."""
    nodes = [const_node, helper.make_node("Add", ["x", "c"], ["y"], name="add")]
    return make_model(nodes, {"x": (x_shape, x_dtype)}, {"y": (None, x_dtype)}, opset=opset)


@pytest.mark.parametrize("attr,value,dtype,shape", [
    ("value_float", 2.5, np.float32, (2, 3)),
    ("value_floats", [1.5, -2.0, 0.25], np.float32, (2, 3)),
    ("value_int", 7, np.int64, (2, 3)),
    ("value_ints", [1, -2, 3], np.int64, (2, 3)),
])
def test_constant_value_forms(attr, value, dtype, shape):
    """value_float(s) and value_int(s) (opset 12+) give float32 / int64 values of rank 0 (one) or 1 (list)."""
    node = helper.make_node("Constant", [], ["c"], name="k", **{attr: value})
    m = _const_plus_x(node, shape, dtype)
    x = (np.arange(6).reshape(shape) - 2).astype(dtype)
    compare(m, {"x": x})


def test_constant_tensor_value():
    t = helper.make_tensor("t", TensorProto.FLOAT, [3], [0.5, 1.0, -4.0])
    m = _const_plus_x(helper.make_node("Constant", [], ["c"], name="k", value=t), (2, 3))
    compare(m, {"x": np.ones((2, 3), F32)})


def _parse_error(m):
    parser, _ = new_parser()
    assert parser.parse(to_bytes(m)) is False
    assert parser.num_errors == 1
    return parser.get_error(0)


def _constant_with(*attrs, name="k"):
    node = helper.make_node("Constant", [], ["c"], name=name)
    node.attribute.extend(attrs)
    return node


@pytest.mark.parametrize("attr,code,words", [
    (helper.make_attribute("value_string", "hello"), trt.ErrorCode.UNSUPPORTED_NODE_DATATYPE, "value_string"),
    (helper.make_attribute("value_strings", ["a", "b"]), trt.ErrorCode.UNSUPPORTED_NODE_DATATYPE, "value_strings"),
    (helper.make_attribute("sparse_value", helper.make_sparse_tensor(
        helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]), helper.make_tensor("i", TensorProto.INT64, [1], [0]),
        [3])), trt.ErrorCode.UNSUPPORTED_NODE_ATTR, "sparse_value"),
], ids=["value_string", "value_strings", "sparse_value"])
def test_constant_unsupported_forms(attr, code, words):
    """Legitimate but unsupported: string values (trtlite has no string tensors) and sparse tensors."""
    err = _parse_error(_const_plus_x(_constant_with(attr), (2, 3)))
    assert err.code() == code, str(err)
    assert err.node_name() == "k" and err.node_operator() == "Constant"
    assert words in err.desc()


@pytest.mark.parametrize("attr,want", [
    (helper.make_attribute("value", 2.0), "TENSOR"),                 # a float where a tensor belongs
    (helper.make_attribute("value", [1, 2]), "TENSOR"),              # ints
    (helper.make_attribute("value", "text"), "TENSOR"),              # a string
    (helper.make_attribute("value_float", [1.0, 2.0]), "FLOAT"),     # floats where one float belongs
    (helper.make_attribute("value_floats", 1.0), "FLOATS"),
    (helper.make_attribute("value_int", 3.0), "INT"),
    (helper.make_attribute("value_ints", helper.make_tensor("t", TensorProto.INT64, [1], [1])), "INTS"),
], ids=["value_float", "value_ints", "value_string", "value_float_list", "value_floats_scalar", "value_int_float",
        "value_ints_tensor"])
def test_constant_malformed_value(attr, want):
    """An attribute of the wrong type is INVALID_NODE naming the node and the attribute (was INTERNAL_ERROR for
    `value`, or silently a wrong shape for value_float given a list)."""
    err = _parse_error(_const_plus_x(_constant_with(attr), (2, 3)))
    assert err.code() == trt.ErrorCode.INVALID_NODE, str(err)
    assert err.node_name() == "k" and err.node_operator() == "Constant" and err.node() == 0
    assert "'%s'" % attr.name in err.desc() and want in err.desc(), err.desc()


def test_constant_value_count():
    """Exactly one value attribute (ONNX's rule): none, or two, is INVALID_NODE."""
    err = _parse_error(_const_plus_x(_constant_with(), (2, 3)))
    assert err.code() == trt.ErrorCode.INVALID_NODE and "exactly one" in err.desc(), str(err)
    two = _constant_with(helper.make_attribute("value_float", 1.0), helper.make_attribute("value_int", 1))
    err = _parse_error(_const_plus_x(two, (2, 3)))
    assert err.code() == trt.ErrorCode.INVALID_NODE, str(err)
    assert "value_float" in err.desc() and "value_int" in err.desc()


def test_constant_tensor_that_cannot_be_decoded():
    """A `value` tensor whose data does not match its dims, or of strings: an error naming the attribute."""
    bad = helper.make_tensor("t", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    del bad.float_data[:]
    bad.float_data.extend([1.0])  # 1 value for 4 elements
    err = _parse_error(_const_plus_x(_constant_with(helper.make_attribute("value", bad)), (2, 4)))
    assert err.code() == trt.ErrorCode.INVALID_NODE and "'value'" in err.desc(), str(err)
    s = helper.make_tensor("s", TensorProto.STRING, [1], [b"x"])
    err = _parse_error(_const_plus_x(_constant_with(helper.make_attribute("value", s)), (2, 4)))
    assert err.code() == trt.ErrorCode.UNSUPPORTED_NODE_DATATYPE and "'value'" in err.desc(), str(err)


@pytest.mark.parametrize("dynamic", [False, True], ids=["folded", "dynamic_shape"])
def test_constant_of_shape_malformed_value(dynamic):
    """ConstantOfShape's `value` must be a one-element tensor: a float attribute is INVALID_NODE naming it, whether
    the node is computed while parsing (static shape) or imported (a shape holding a dynamic dim)."""
    if dynamic:
        nodes = [helper.make_node("Shape", ["x"], ["s"]),
                 helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos", value=2.0),
                 helper.make_node("Add", ["x", "c"], ["y"])]
        m = make_model(nodes, {"x": ("N", 3)}, {"y": None})
    else:
        nodes = [helper.make_node("ConstantOfShape", ["shape"], ["c"], name="cos", value=2.0),
                 helper.make_node("Add", ["x", "c"], ["y"])]
        m = make_model(nodes, {"x": (2, 3)}, {"y": None}, {"shape": np.array([2, 3], np.int64)})
    err = _parse_error(m)
    assert err.code() == trt.ErrorCode.INVALID_NODE, str(err)
    assert err.node_name() == "cos" and "'value'" in err.desc() and "TENSOR" in err.desc(), err.desc()


def test_constant_of_shape_value_forms():
    """The legitimate value: a one-element tensor (its type is the output's); absent: float32 zeros."""
    v = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.5])
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["c"], value=v), helper.make_node("Add", ["x", "c"], ["y"])]
    compare(make_model(nodes, {"x": (2, 3)}, {"y": None}, {"shape": np.array([2, 3], np.int64)}),
            {"x": np.ones((2, 3), F32)})
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("ConstantOfShape", ["s"], ["c"], value=v),
             helper.make_node("Add", ["x", "c"], ["y"])]
    compare(make_model(nodes, {"x": ("N", 3)}, {"y": None}), {"x": np.arange(12, dtype=F32).reshape(4, 3)})


@pytest.mark.parametrize("x,reps", [(np.array(1, np.int64), [1, 379499456, 1]),
                                    (np.ones((2, 2), np.float32), [2]),
                                    (np.ones((2,), np.float32), [-1])])
def test_constant_tile_with_malformed_repeats(x, reps):
    """Folding Tile checks that repeats match the input's rank (np.tile would pad the rank and tile anyway: the
    fuzzer's scalar tiled 379M times ran for minutes) and are not negative."""
    nodes = [helper.make_node("Tile", ["x", "r"], ["t"], name="tile"),
             helper.make_node("Identity", ["t"], ["y"])]
    m = make_model(nodes, {}, {"y": None}, {"x": x, "r": np.array(reps, np.int64)}, opset=13)
    err = _parse_error(m)
    assert "tile" in str(err) and "repeats" in str(err) and "rank %d" % x.ndim in str(err), str(err)
