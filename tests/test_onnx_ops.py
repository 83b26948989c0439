"""ONNX parser, one operator at a time: each model is parsed into trtlite, built, run, and compared with
onnxruntime (rtol 1e-3, small atol).  Opsets 11/13/17/18 (and older where an op changed) are covered where
the op's definition differs between them."""
import math
import os

import numpy as np
import pytest

from onnx_helpers import (ParseFailed, TensorProto, add_profile, assert_outputs_close, compare, helper, make_model,
                          numpy_helper, ort_run, parse, trt_run)

import trtlite as trt

F32 = np.float32
I64 = np.int64

CASES = []


def case(name, opsets=(13,)):
    """Registers f(opset, rng) -> (model, feeds[, tolerances]) for each opset."""
    def deco(f):
        for o in opsets:
            CASES.append(pytest.param(f, o, id="%s-op%d" % (name, o)))
        return f
    return deco


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(F32)


def single(op, feeds, inits=None, opset=13, outs=("y",), out_types=None, dyn=(), **attrs):
    """A one-node model: runtime inputs `feeds` (name -> array, in node-input order, then `inits`; a name
    mapped to None is an empty optional input).  dyn: names of inputs whose dim 0 is dynamic ("N")."""
    inits = dict(inits or {})
    order = list(feeds) + [k for k in inits if k not in feeds]
    if "_order" in attrs:
        order = attrs.pop("_order")
    node = helper.make_node(op, ["" if n in inits and inits[n] is None else n for n in order], list(outs), **attrs)
    inputs = {}
    for k, v in feeds.items():
        shape = tuple(v.shape)
        if k in dyn:
            shape = ("N",) + shape[1:]
        inputs[k] = (shape, v.dtype.type)
    out_types = out_types or [F32] * len(outs)
    outputs = {o: (None, t) for o, t in zip(outs, out_types)}
    real_inits = {k: v for k, v in inits.items() if v is not None}
    return make_model([node], inputs, outputs, real_inits, opset=opset)


# ------------------------------------------------------------------------------------------------------------
# convolution, deconvolution, normalization
# ------------------------------------------------------------------------------------------------------------

CONV_VARIANTS = {
    "pads": dict(pads=[1, 2, 0, 1]),
    "stride_dil": dict(strides=[2, 1], dilations=[2, 2], pads=[2, 2, 2, 2]),
    "groups": dict(group=3, pads=[1, 1, 1, 1]),
    "same_upper": dict(auto_pad="SAME_UPPER", strides=[2, 2]),
    "same_lower": dict(auto_pad="SAME_LOWER", strides=[2, 2]),
    "valid": dict(auto_pad="VALID"),
}


@pytest.mark.parametrize("variant", sorted(CONV_VARIANTS))
def test_conv(variant, rng):
    a = CONV_VARIANTS[variant]
    g = a.get("group", 1)
    x = randn(rng, 2, 6, 9, 10)
    w = randn(rng, 6, 6 // g, 3, 3)
    b = randn(rng, 6)
    compare(single("Conv", {"x": x}, {"W": w, "B": b}, **a), {"x": x})


@pytest.mark.parametrize("nsp", [1, 3])
def test_conv_1d_3d_no_bias(nsp, rng):
    x = randn(rng, 2, 3, *([7] * nsp))
    w = randn(rng, 4, 3, *([3] * nsp))
    compare(single("Conv", {"x": x}, {"W": w}, pads=[1] * (2 * nsp)), {"x": x})


def test_conv_dynamic_batch(rng):
    """One engine (profile batch 1..6) runs batches 3, 1 and 5."""
    m = single("Conv", {"x": randn(rng, 3, 3, 8, 8)}, {"W": randn(rng, 5, 3, 3, 3), "B": randn(rng, 5)}, dyn=("x",),
               pads=[1, 1, 1, 1])
    engine = None
    for n in (3, 1, 5):
        x = randn(rng, n, 3, 8, 8)
        got, engine = trt_run(m, {"x": x}, engine=engine)
        assert_outputs_close(got, ort_run(m, {"x": x}))


DECONV_VARIANTS = {
    "basic": dict(),
    "stride2_outpad": dict(strides=[2, 2], output_padding=[1, 1], pads=[1, 1, 1, 1]),
    "outpad_past_pads": dict(strides=[2, 3], output_padding=[1, 2], pads=[0, 1, 0, 1]),
    "output_shape": dict(strides=[2, 2], output_shape=[15, 16]),
    "same_upper": dict(strides=[2, 2], auto_pad="SAME_UPPER"),
    "same_lower": dict(strides=[2, 2], auto_pad="SAME_LOWER"),
    "groups_dil": dict(group=2, dilations=[2, 1], pads=[1, 0, 0, 1]),
}


@pytest.mark.parametrize("variant", sorted(DECONV_VARIANTS))
def test_conv_transpose(variant, rng):
    a = DECONV_VARIANTS[variant]
    g = a.get("group", 1)
    x = randn(rng, 2, 4, 7, 8)
    w = randn(rng, 4, 6 // g, 3, 3)
    compare(single("ConvTranspose", {"x": x}, {"W": w, "B": randn(rng, 6)}, **a), {"x": x})


def test_conv_transpose_1d(rng):
    x = randn(rng, 2, 4, 9)
    compare(single("ConvTranspose", {"x": x}, {"W": randn(rng, 4, 3, 4)}, strides=[3]), {"x": x})


@pytest.mark.parametrize("rank", [2, 3, 4])
def test_batchnorm(rank, rng):
    x = randn(rng, 3, 5, *([6] * (rank - 2)))
    inits = {"s": randn(rng, 5), "b": randn(rng, 5), "m": randn(rng, 5),
             "v": (np.abs(randn(rng, 5)) + 0.5).astype(F32)}
    compare(single("BatchNormalization", {"x": x}, inits, epsilon=1e-3), {"x": x})


def test_instance_norm(rng):
    x = randn(rng, 2, 4, 5, 6)
    compare(single("InstanceNormalization", {"x": x}, {"s": randn(rng, 4), "b": randn(rng, 4)}, epsilon=1e-4),
            {"x": x})


@pytest.mark.parametrize("axis", [-1, -2, 1])
def test_layer_norm(axis, rng):
    x = randn(rng, 2, 3, 4, 5)
    shape = x.shape[axis:]
    m = single("LayerNormalization", {"x": x}, {"s": randn(rng, *shape), "b": randn(rng, *shape)}, opset=17,
               axis=axis, epsilon=1e-5)
    compare(m, {"x": x})


@pytest.mark.parametrize("axis,s_shape,b_shape", [(1, (4,), (4,)), (1, (1, 4), (3, 1)), (0, (4,), (1, 1, 4)),
                                                  (-2, (1,), (4,))])
def test_layer_norm_broadcast_params(axis, s_shape, b_shape, rng):
    """Scale and bias broadcast numpy-style to X.shape[axis:]: a (4,) scale with axis=1 on (2, 3, 4) lies on
    the last dim (it was put on dim 1: 'scale (1, 4, 1) does not broadcast')."""
    x = randn(rng, 2, 3, 4)
    m = single("LayerNormalization", {"x": x}, {"s": randn(rng, *s_shape), "b": randn(rng, *b_shape)}, opset=17,
               axis=axis)
    compare(m, {"x": x})


def test_layer_norm_no_bias_dynamic(rng):
    x = randn(rng, 3, 7, 16)
    m = single("LayerNormalization", {"x": x}, {"s": randn(rng, 16)}, opset=17, dyn=("x",))
    compare(m, {"x": x})


def test_group_norm(rng):
    x = randn(rng, 2, 6, 4, 5)
    m = single("GroupNormalization", {"x": x}, {"s": randn(rng, 3), "b": randn(rng, 3)}, opset=18,
               num_groups=3, epsilon=1e-5)
    compare(m, {"x": x})


def test_lrn(rng):
    x = randn(rng, 2, 7, 4, 4)
    compare(single("LRN", {"x": x}, size=3, alpha=1e-3, beta=0.7, bias=1.5), {"x": x})


# ------------------------------------------------------------------------------------------------------------
# activations and elementwise
# ------------------------------------------------------------------------------------------------------------

ACTS = [("Relu", {}), ("LeakyRelu", {"alpha": 0.2}), ("LeakyRelu", {}), ("Sigmoid", {}), ("Tanh", {}),
        ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("HardSwish", {}), ("Elu", {"alpha": 0.7}), ("Selu", {}),
        ("Softplus", {}), ("Softsign", {}), ("ThresholdedRelu", {"alpha": 0.3}), ("Mish", {}),
        ("Gelu", {}), ("Gelu", {"approximate": "tanh"})]


@pytest.mark.parametrize("op,attrs", ACTS, ids=["%s%d" % (a[0], i) for i, a in enumerate(ACTS)])
def test_activation(op, attrs, rng):
    x = randn(rng, 2, 3, 4, 5) * 3
    opset = 20 if op == "Gelu" else 18 if op == "Mish" else 14 if op == "HardSwish" else 13
    compare(single(op, {"x": x}, opset=opset, **attrs), {"x": x})


@case("clip_attrs", opsets=(7, 10))
def _clip_attrs(opset, rng):
    x = randn(rng, 3, 4)
    return single("Clip", {"x": x}, opset=opset, min=-0.5, max=0.7), {"x": x}


@case("clip_inputs", opsets=(11, 13))
def _clip_inputs(opset, rng):
    x = randn(rng, 3, 4)
    return single("Clip", {"x": x}, {"lo": np.array(-0.5, F32), "hi": np.array(0.3, F32)}, opset=opset), {"x": x}


@case("clip_min_only", opsets=(13,))
def _clip_min(opset, rng):
    x = randn(rng, 3, 4)
    return single("Clip", {"x": x}, {"lo": np.array(0.0, F32)}, opset=opset), {"x": x}


@case("clip_max_only_int", opsets=(13,))
def _clip_int(opset, rng):
    x = rng.integers(-10, 10, (3, 4)).astype(np.int32)
    m = single("Clip", {"x": x}, {"hi": np.array(4, np.int32)}, opset=opset, out_types=[np.int32],
               _order=["x", "", "hi"])
    return m, {"x": x}


@case("clip_min_above_max", opsets=(11, 13))
def _clip_min_above_max(opset, rng):
    # ONNX: min(max(x, lo), hi) -- max everywhere when lo > hi (the CLIP activation alone gives lo for x <= lo)
    x = randn(rng, 3, 4)
    return single("Clip", {"x": x}, {"lo": np.array(0.5, F32), "hi": np.array(-0.5, F32)}, opset=opset), {"x": x}


@case("clip_min_above_max_int", opsets=(13,))
def _clip_min_above_max_int(opset, rng):
    x = rng.integers(-10, 10, (3, 4)).astype(np.int32)
    m = single("Clip", {"x": x}, {"lo": np.array(3, np.int32), "hi": np.array(-2, np.int32)}, opset=opset,
               out_types=[np.int32])
    return m, {"x": x}


def test_clip_attrs_min_above_max(rng):
    """Clip-6's attributes with min > max (onnxruntime refuses the model): numpy's reading of the spec."""
    x = randn(rng, 3, 4)
    got, _ = trt_run(single("Clip", {"x": x}, opset=9, min=0.5, max=-0.5), {"x": x})
    np.testing.assert_array_equal(got["y"], np.minimum(np.maximum(x, F32(0.5)), F32(-0.5)))


@case("prelu", opsets=(9, 13, 16))
def _prelu(opset, rng):
    x = randn(rng, 2, 3, 4, 5)
    return single("PRelu", {"x": x}, {"s": randn(rng, 3, 1, 1)}, opset=opset), {"x": x}


@case("prelu_scalar_slope", opsets=(13,))
def _prelu_scalar(opset, rng):
    x = randn(rng, 2, 3, 4)
    return single("PRelu", {"x": x}, {"s": np.array([0.25], F32)}, opset=opset), {"x": x}


UNARY = ["Sqrt", "Exp", "Log", "Erf", "Abs", "Neg", "Reciprocal", "Floor", "Ceil", "Sin", "Cos", "Tan", "Asin",
         "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Sign", "Round"]


@pytest.mark.parametrize("op", UNARY)
def test_unary(op, rng):
    x = randn(rng, 3, 5)
    if op in ("Sqrt", "Log", "Reciprocal"):
        x = np.abs(x) + 0.1
    elif op in ("Asin", "Acos", "Atanh"):
        x = np.tanh(x) * 0.9
    elif op == "Acosh":
        x = np.abs(x) + 1.1
    elif op == "Round":
        x = np.round(x * 4) / 2 + rng.choice([0.0, 0.1], x.shape).astype(F32)  # halves: round half to even
    x = x.astype(F32)
    compare(single(op, {"x": x}), {"x": x})


BINARY_BCAST = [((2, 3, 4), (4,)), ((2, 3, 4), (3, 1)), ((1, 3, 1), (2, 1, 4)), ((4,), (2, 3, 4)), ((), (2, 3))]


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"])
@pytest.mark.parametrize("shapes", BINARY_BCAST, ids=["bc%d" % i for i in range(len(BINARY_BCAST))])
def test_binary_broadcast(op, shapes, rng):
    a = randn(rng, *shapes[0])
    b = randn(rng, *shapes[1])
    if op == "Pow":
        a = np.abs(a) + 0.5
    if op == "Div":
        b = np.sign(b) * (np.abs(b) + 0.5)
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    compare(single(op, {"a": a, "b": b}), {"a": a, "b": b})
    compare(single(op, {"b": b}, {"a": a}, _order=["a", "b"]), {"b": b})


def test_scalar_input(rng):
    a = np.asarray(rng.standard_normal(), F32)
    b = randn(rng, 2, 3)
    compare(single("Add", {"a": a, "b": b}), {"a": a, "b": b})


@pytest.mark.parametrize("op", ["Add", "Mul", "Sub", "Div"])
def test_binary_const_operand(op, rng):
    x = randn(rng, 2, 3, 4)
    c = (np.abs(randn(rng, 3, 1)) + 0.5).astype(F32)
    compare(single(op, {"x": x}, {"c": c}), {"x": x})


def test_binary_int(rng):
    a = rng.integers(-20, 20, (3, 4)).astype(np.int64)
    b = rng.integers(1, 5, (4,)).astype(np.int64) * rng.choice([-1, 1], 4)
    for op in ("Add", "Sub", "Mul", "Div", "Max", "Min"):
        m = single(op, {"a": a, "b": b}, out_types=[np.int64])
        compare(m, {"a": a, "b": b})


def test_mod(rng):
    a = rng.integers(-20, 20, (3, 4)).astype(np.int64)
    b = rng.integers(1, 5, (4,)).astype(np.int64) * rng.choice([-1, 1], 4)
    compare(single("Mod", {"a": a, "b": b}, out_types=[np.int64]), {"a": a, "b": b})
    af, bf = randn(rng, 3, 4) * 5, (np.abs(randn(rng, 4)) + 0.5).astype(F32)
    compare(single("Mod", {"a": af, "b": bf}, fmod=1), {"a": af, "b": bf})


@pytest.mark.parametrize("op", ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"])
def test_compare(op, rng):
    a = rng.integers(-2, 3, (3, 4)).astype(F32)
    b = rng.integers(-2, 3, (4,)).astype(F32)
    compare(single(op, {"a": a, "b": b}, out_types=[np.bool_], opset=16), {"a": a, "b": b})


def test_logical(rng):
    a = rng.random((3, 4)) > 0.5
    b = rng.random((1, 4)) > 0.5
    for op in ("And", "Or", "Xor"):
        compare(single(op, {"a": a, "b": b}, out_types=[np.bool_]), {"a": a, "b": b})
    compare(single("Not", {"a": a}, out_types=[np.bool_]), {"a": a})


@pytest.mark.parametrize("op", ["Sum", "Mean", "Max", "Min"])
def test_variadic(op, rng):
    a, b, c = randn(rng, 2, 3, 4), randn(rng, 3, 1), randn(rng, 4)
    compare(single(op, {"a": a, "b": b, "c": c}), {"a": a, "b": b, "c": c})


def test_isnan_isinf(rng):
    x = randn(rng, 4, 5)
    x[0, 0], x[1, 1], x[2, 2] = np.nan, np.inf, -np.inf
    compare(single("IsNaN", {"x": x}, out_types=[np.bool_]), {"x": x})
    for neg, pos in ((1, 1), (0, 1), (1, 0)):
        compare(single("IsInf", {"x": x}, out_types=[np.bool_], detect_negative=neg, detect_positive=pos), {"x": x})


def test_where(rng):
    c = rng.random((3, 1)) > 0.5
    a, b = randn(rng, 2, 3, 4), randn(rng, 4)
    compare(single("Where", {"c": c, "a": a, "b": b}), {"c": c, "a": a, "b": b})


def test_cast(rng):
    x = randn(rng, 3, 4) * 5
    compare(single("Cast", {"x": x}, to=TensorProto.INT64, out_types=[np.int64]), {"x": x})
    xi = rng.integers(-5, 5, (3, 4)).astype(np.int64)
    compare(single("Cast", {"x": xi}, to=TensorProto.FLOAT), {"x": xi})
    compare(single("Cast", {"x": xi}, to=TensorProto.BOOL, out_types=[np.bool_]), {"x": xi})


# ------------------------------------------------------------------------------------------------------------
# matrix products
# ------------------------------------------------------------------------------------------------------------

GEMM = [dict(), dict(transB=1), dict(transA=1), dict(alpha=0.5, beta=2.0, transA=1, transB=1)]


@pytest.mark.parametrize("attrs", GEMM, ids=["gemm%d" % i for i in range(len(GEMM))])
@pytest.mark.parametrize("c_shape", [(5,), (3, 5), (1,), None])
def test_gemm(attrs, c_shape, rng):
    a = randn(rng, *((4, 3) if attrs.get("transA") else (3, 4)))
    b = randn(rng, *((5, 4) if attrs.get("transB") else (4, 5)))
    inits = {"B": b}
    if c_shape:
        inits["C"] = randn(rng, *c_shape)
    compare(single("Gemm", {"a": a}, inits, **attrs), {"a": a})


def test_gemm_dynamic_b(rng):
    a, b, c = randn(rng, 3, 4), randn(rng, 5, 4), randn(rng, 3, 5)
    compare(single("Gemm", {"a": a, "b": b, "c": c}, transB=1, alpha=2.0, beta=0.5), {"a": a, "b": b, "c": c})


MATMUL = [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((4,), (4, 5)), ((2, 3, 4), (4,)),
          ((4,), (4,)), ((7, 2, 3, 4), (7, 2, 4, 3))]


@pytest.mark.parametrize("shapes", MATMUL, ids=["mm%d" % i for i in range(len(MATMUL))])
def test_matmul(shapes, rng):
    a, b = randn(rng, *shapes[0]), randn(rng, *shapes[1])
    compare(single("MatMul", {"a": a, "b": b}), {"a": a, "b": b})
    compare(single("MatMul", {"a": a}, {"b": b}), {"a": a})


# ------------------------------------------------------------------------------------------------------------
# shapes and data movement
# ------------------------------------------------------------------------------------------------------------

RESHAPES = [((2, 3, 4), [6, -1]), ((2, 3, 4), [0, -1]), ((2, 3, 4), [0, 0, 2, 2]), ((2, 3, 4), [-1]),
            ((2, 3, 4), [4, 0, 2])]


@pytest.mark.parametrize("shape,target", RESHAPES, ids=["r%d" % i for i in range(len(RESHAPES))])
def test_reshape(shape, target, rng):
    x = randn(rng, *shape)
    compare(single("Reshape", {"x": x}, {"s": np.array(target, I64)}), {"x": x})


def test_reshape_allowzero(rng):
    x = randn(rng, 2, 3)
    compare(single("Reshape", {"x": x}, {"s": np.array([3, 2], I64)}, opset=14, allowzero=1), {"x": x})


def test_reshape_dynamic(rng):
    x = randn(rng, 3, 4, 6)
    compare(single("Reshape", {"x": x}, {"s": np.array([0, 2, -1], I64)}, dyn=("x",)), {"x": x})


@pytest.mark.parametrize("axis", [0, 1, 2, -1, 3])
def test_flatten(axis, rng):
    x = randn(rng, 2, 3, 4)
    if axis == 3:
        x = randn(rng, 2, 3, 4, 5)
    compare(single("Flatten", {"x": x}, axis=axis), {"x": x})


def test_flatten_dynamic(rng):
    x = randn(rng, 3, 4, 5)
    compare(single("Flatten", {"x": x}, dyn=("x",)), {"x": x})


def test_transpose(rng):
    x = randn(rng, 2, 3, 4, 5)
    compare(single("Transpose", {"x": x}, perm=[0, 2, 3, 1]), {"x": x})
    compare(single("Transpose", {"x": x}), {"x": x})


@case("squeeze_unsqueeze", opsets=(11, 13))
def _squeeze(opset, rng):
    x = randn(rng, 1, 3, 1, 4)
    if opset < 13:
        n1 = helper.make_node("Squeeze", ["x"], ["s"], axes=[0, -2])
        n2 = helper.make_node("Unsqueeze", ["s"], ["y"], axes=[0, 3, -1])
        inits = {}
    else:
        n1 = helper.make_node("Squeeze", ["x", "a1"], ["s"])
        n2 = helper.make_node("Unsqueeze", ["s", "a2"], ["y"])
        inits = {"a1": np.array([0, -2], I64), "a2": np.array([0, 3, -1], I64)}
    return make_model([n1, n2], {"x": x.shape}, {"y": None}, inits, opset=opset), {"x": x}


def test_squeeze_unsqueeze_dynamic(rng):
    x = randn(rng, 3, 1, 4)
    n1 = helper.make_node("Squeeze", ["x", "a1"], ["s"])
    n2 = helper.make_node("Unsqueeze", ["s", "a2"], ["y"])
    m = make_model([n1, n2], {"x": ("N", 1, 4)}, {"y": None},
                   {"a1": np.array([1], I64), "a2": np.array([0, 2], I64)})
    compare(m, {"x": x})


def test_squeeze_no_axes(rng):
    x = randn(rng, 1, 3, 1, 4)
    compare(single("Squeeze", {"x": x}), {"x": x})


def test_concat(rng):
    a, b = randn(rng, 2, 3, 4), randn(rng, 2, 5, 4)
    compare(single("Concat", {"a": a, "b": b}, {"c": randn(rng, 2, 1, 4)}, axis=1), {"a": a, "b": b})
    compare(single("Concat", {"a": a, "b": a}, axis=-1, _order=["a", "b"]), {"a": a, "b": a})


def test_concat_of_one_input_is_no_layer(rng):
    """A Concat of one input is that input (as Identity): no copy layer inside the graph (DenseNet's first layer of
    each block concatenates its input alone); as a graph output, and of a constant, it still matches onnxruntime."""
    from onnx_helpers import parse
    x = randn(rng, 2, 3, 4)
    nodes = [helper.make_node("Concat", ["x"], ["c"], axis=1), helper.make_node("Relu", ["c"], ["y"])]
    m = make_model(nodes, {"x": x.shape}, {"y": None})
    compare(m, {"x": x})
    _, net, _ = parse(m)
    assert net.num_layers == 1 and net.get_layer(0).type == trt.ActivationType.RELU  # (an activation's .type)
    compare(single("Concat", {"x": x}, axis=-1), {"x": x})  # the graph output: an identity names it
    nodes = [helper.make_node("Concat", ["k"], ["c"], axis=0), helper.make_node("Add", ["x", "c"], ["y"])]
    compare(make_model(nodes, {"x": x.shape}, {"y": None}, {"k": randn(rng, 2, 3, 4)}), {"x": x})


@pytest.mark.parametrize("n", [65, 200])
def test_concat_many_inputs(n, rng):
    """More inputs than add_concatenation takes (64): chained concatenations; with constants, and with a
    dynamic batch."""
    a, b = randn(rng, 2, 1, 3), randn(rng, 2, 2, 3)
    consts = {"c%d" % i: randn(rng, 2, 1, 3) for i in range(3)}
    names = [["a", "b", "c0", "c1", "c2"][i % 5] for i in range(n)]
    m = make_model([helper.make_node("Concat", names, ["y"], axis=1)], {"a": a.shape, "b": b.shape}, {"y": None},
                   consts, opset=13)
    compare(m, {"a": a, "b": b})
    names = [["a", "b"][i % 2] for i in range(n)]
    m = make_model([helper.make_node("Concat", names, ["y"], axis=1)], {"a": ("N", 1, 3), "b": ("N", 2, 3)},
                   {"y": None}, opset=13)
    compare(m, {"a": a, "b": b})


@case("split_attr", opsets=(11, 13, 18))
def _split(opset, rng):
    x = randn(rng, 2, 7, 3)
    if opset < 13:
        m = single("Split", {"x": x}, outs=("y1", "y2"), opset=opset, axis=1, split=[3, 4])
    else:
        m = single("Split", {"x": x}, {"s": np.array([3, 4], I64)}, outs=("y1", "y2"), opset=opset, axis=1)
    return m, {"x": x}


@case("split_equal", opsets=(11, 13))
def _split_eq(opset, rng):
    x = randn(rng, 2, 6, 3)
    return single("Split", {"x": x}, outs=("y1", "y2", "y3"), opset=opset, axis=-2), {"x": x}


@case("split_num_outputs", opsets=(18,))
def _split_n(opset, rng):
    x = randn(rng, 2, 7, 3)
    return single("Split", {"x": x}, outs=("y1", "y2", "y3"), opset=opset, axis=1, num_outputs=3), {"x": x}


SLICES = [  # starts, ends, axes, steps
    ([1], [3], [1], None),
    ([0, 1], [-1, 100], [1, 2], None),
    ([-100, 2], [2, -1], [0, 2], [1, 2]),
    ([-1], [-100], [2], [-1]),
    ([4, 3], [0, 0], [1, 2], [-2, -1]),
    ([1, 0, 0], [2, 2, 3], None, None),
    ([0], [2 ** 62], [-1], [3]),
]


@pytest.mark.parametrize("spec", SLICES, ids=["s%d" % i for i in range(len(SLICES))])
def test_slice(spec, rng):
    x = randn(rng, 3, 5, 6)
    starts, ends, axes, steps = spec
    inits = {"st": np.array(starts, I64), "en": np.array(ends, I64)}
    order = ["x", "st", "en"]
    if axes is not None or steps is not None:
        inits["ax"] = np.array(axes if axes is not None else list(range(len(starts))), I64)
        order.append("ax")
    if steps is not None:
        inits["sp"] = np.array(steps, I64)
        order.append("sp")
    compare(single("Slice", {"x": x}, inits, _order=order), {"x": x})


def test_slice_opset9(rng):
    x = randn(rng, 3, 5, 6)
    compare(single("Slice", {"x": x}, opset=9, starts=[1, -3], ends=[100, -1], axes=[1, 2]), {"x": x})


def test_slice_dynamic_batch(rng):
    x = randn(rng, 3, 5, 6)
    m = single("Slice", {"x": x}, {"st": np.array([1, 0], I64), "en": np.array([4, 6], I64),
                                   "ax": np.array([1, 2], I64), "sp": np.array([2, 2], I64)}, dyn=("x",))
    compare(m, {"x": x})


@case("pad_constant", opsets=(11, 13, 18))
def _pad_const(opset, rng):
    x = randn(rng, 2, 3, 4, 5)
    pads = np.array([0, 0, 1, 2, 0, 1, 0, 3], I64)
    return single("Pad", {"x": x}, {"p": pads, "v": np.array(0.5, F32)}, opset=opset), {"x": x}


@case("pad_attrs", opsets=(7,))
def _pad_attrs(opset, rng):
    x = randn(rng, 2, 3, 4)
    return single("Pad", {"x": x}, opset=opset, pads=[0, 1, 2, 0, 2, 1], value=-1.0), {"x": x}


@case("pad_negative", opsets=(13,))
def _pad_neg(opset, rng):
    x = randn(rng, 2, 3, 6)
    return single("Pad", {"x": x}, {"p": np.array([0, 0, -1, 0, 1, 2], I64)}), {"x": x}


@case("pad_reflect", opsets=(11, 18))
def _pad_reflect(opset, rng):
    x = randn(rng, 2, 3, 4, 5)
    return single("Pad", {"x": x}, {"p": np.array([0, 0, 2, 3, 0, 0, 3, 1], I64)}, opset=opset,
                  mode="reflect"), {"x": x}


@case("pad_edge", opsets=(13,))
def _pad_edge(opset, rng):
    x = randn(rng, 2, 3, 4, 5)
    return single("Pad", {"x": x}, {"p": np.array([0, 0, 2, 3, 0, 0, 3, 1], I64)}, opset=opset,
                  mode="edge"), {"x": x}


@case("pad_axes", opsets=(18,))
def _pad_axes(opset, rng):
    x = randn(rng, 2, 3, 4, 5)
    return single("Pad", {"x": x}, {"p": np.array([1, 2, 3, 0], I64), "v": None, "a": np.array([-1, 1], I64)},
                  opset=opset), {"x": x}


def test_pad_reflect_dynamic(rng):
    x = randn(rng, 2, 3, 5)
    compare(single("Pad", {"x": x}, {"p": np.array([0, 0, 2, 0, 0, 3], I64)}, dyn=("x",), mode="reflect"), {"x": x})


def test_expand(rng):
    x = randn(rng, 3, 1)
    compare(single("Expand", {"x": x}, {"s": np.array([2, 3, 4], I64)}), {"x": x})
    compare(single("Expand", {"x": x}, {"s": np.array([1, 1], I64)}), {"x": x})


def test_expand_dynamic(rng):
    x = randn(rng, 3, 1, 5)
    compare(single("Expand", {"x": x}, {"s": np.array([1, 4, 1], I64)}, dyn=("x",)), {"x": x})


def test_tile_past_the_index_table_bound_uses_a_wrap_slice(rng, monkeypatch):
    """Tile's per-axis gather index tables are bounded (TILE_TABLE_MAX); past the bound the importer tiles with a
    WRAP slice: forced here at a small size, the result matches onnxruntime (3 axes, a repeat of 0 among them)."""
    import trtlite.onnx.ops_shape as ops_shape
    monkeypatch.setattr(ops_shape, "TILE_TABLE_MAX", 4)
    x = randn(rng, 2, 3, 5)
    for reps in ([2, 1, 3], [1, 0, 2], [3, 2, 1]):
        compare(single("Tile", {"x": x}, {"r": np.array(reps, I64)}), {"x": x})
    # an input with a dynamic axis (repeated once): the WRAP slice's size is its run-time shape times the repeats (a
    # fuzzed [2, 3, N] Tile by 2^40 along axis 0 built a 16 TiB table before the dynamic axis was looked at)
    for reps in ([1, 3, 2], [1, 0, 4]):
        m = single("Tile", {"x": x}, {"r": np.array(reps, I64)}, dyn=("x",))
        run_shapes(m, [{"x": randn(rng, n, 3, 5)} for n in (2, 1, 3)], {"x": (1, 3, 5)}, {"x": (3, 3, 5)})
    monkeypatch.undo()
    # the same at the real bound: the output extent's int32 limit beside a dynamic axis is a clean error, and a
    # repeated dynamic axis is refused before any table is built
    _parse_fails_small(make_model([helper.make_node("Tile", ["x", "r"], ["y"])], {"x": ((2, 3, "N"), np.float32)},
                                  {"y": (None, np.float32)}, {"r": np.array([2 ** 40, 0, 1], I64)}),
                       "In node 0 .*UNSUPPORTED_NODE_SHAPE: Tile of axis 0 \\(size 2\\) by 1099511627776: an extent "
                       "of 2199023255552 beside dynamic axes")
    _parse_fails_small(make_model([helper.make_node("Tile", ["x", "r"], ["y"])], {"x": ((2, 3, "N"), np.float32)},
                                  {"y": (None, np.float32)}, {"r": np.array([2 ** 40, 0, 34], I64)}),
                       "In node 0 .*UNSUPPORTED_NODE_DYNAMIC: Tile along the dynamic axis 2")


def test_expand_dynamic_dim_to_a_huge_static_dim_allocates_nothing_big(rng):
    """x [0, N] expanded to [1, 2^31 - 1] (a fuzzing input): the broadcast carrier of the dynamic dim is a zero-stride
    slice of one element, not a 2^31-element constant (the parser held 2 GiB for an empty result); parsing stays
    small and fast, and the same construction at a sane size still computes numpy's broadcast."""
    import time
    import tracemalloc
    big = np.array([1, 2 ** 31 - 1], I64)
    models = [single("Expand", {"x": np.zeros((1, 1), np.float32)}, {"s": big}, dyn=("x",)),  # x [N, 1]
              make_model([helper.make_node("Expand", ["x", "s"], ["y"])], {"x": ((0, "N"), np.float32)},
                         {"y": (None, np.float32)}, {"s": big})]  # x [0, N]: the fuzzing input
    for m in models:
        tracemalloc.start()
        try:
            t0 = time.perf_counter()
            parse(m)
            assert time.perf_counter() - t0 < 5.0
            assert tracemalloc.get_traced_memory()[1] < 64 << 20
        finally:
            tracemalloc.stop()
    x = randn(rng, 1, 1)
    m = single("Expand", {"x": x}, {"s": np.array([1, 37], I64)}, dyn=("x",))
    run_shapes(m, [{"x": randn(rng, n, 1)} for n in (1, 3)], {"x": (1, 1)}, {"x": (3, 1)})


def _parse_fails_small(model, match):
    """Parsing `model` fails with an error matching `match`, in < 5 s and < 64 MiB of Python/numpy allocations."""
    import time
    import tracemalloc
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        with pytest.raises(ParseFailed, match=match):
            parse(model)
        assert time.perf_counter() - t0 < 5.0
        assert tracemalloc.get_traced_memory()[1] < 64 << 20
    finally:
        tracemalloc.stop()


def test_absurd_sizes_fail_cleanly_without_allocating_them():
    """Fuzzing inputs that made the importer allocate from absurd sizes (16-24 GiB, the OOM killer without a memory
    limit): a 2^31-value graph input as Expand's / ConstantOfShape's shape, Resize sizes of the wrong count for its
    input (onnx's reference folded them), Trilu and EyeLike over a 2^31-wide matrix, a Resize by run-time scales to
    an extent of 2^31 (its coordinate table), a SplitToSequence into 2^20 pieces (layers).  Each is a clean
    parse error."""
    big = 2 ** 31 - 1  # the largest dim a graph input may have (INPUT_DIM_MAX)
    _parse_fails_small(make_model([helper.make_node("Expand", ["x", "s"], ["y"])],
                                  {"x": ((2, 3), np.float32), "s": ((big,), np.int64)}, {"y": (None, np.float32)}),
                       "INVALID_NODE: 's' of shape \\(2147483647,\\) cannot be a shape")
    _parse_fails_small(make_model([helper.make_node("ConstantOfShape", ["s"], ["y"])],
                                  {"s": ((big,), np.int64)}, {"y": (None, np.float32)}),
                       "cannot be a shape, axes or sizes operand")
    sz = np.array([big, -2, 1, 2 ** 40], I64)
    _parse_fails_small(make_model([helper.make_node("Resize", ["sz", "", "", "sz"], ["y"], mode="linear")], {},
                                  {"y": (None, np.int64)}, {"sz": sz}, opset=13),
                       "INVALID_NODE: Resize sizes .* for an input of rank 1 \\(1 non-negative")
    _parse_fails_small(make_model([helper.make_node("Trilu", ["x"], ["y"])], {"x": ((2, 5, big), np.float32)},
                                  {"y": (None, np.float32)}, opset=14),
                       "UNSUPPORTED_NODE_SHAPE: Trilu over 5 x 2147483647 matrices")
    _parse_fails_small(make_model([helper.make_node("EyeLike", ["x"], ["y"])], {"x": ((big, 4), np.float32)},
                                  {"y": (None, np.float32)}),
                       "UNSUPPORTED_NODE_SHAPE: EyeLike of 2147483647 x 4")
    # Tile of a [2^31] input: the gather index table of the axis (16 GiB) -> a WRAP slice; negative repeats fail
    _parse_fails_small(make_model([helper.make_node("Tile", ["x", "r"], ["y"]), helper.make_node("Neg", ["y"], ["z"])],
                                  {"x": ((big,), np.float32)}, {"z": (None, np.float32)}, {"r": np.array([-1], I64)}),
                       "INVALID_NODE: repeats \\[-1\\] must not be negative")
    m = make_model([helper.make_node("Tile", ["x", "r"], ["y"])], {"x": ((big,), np.float32)},
                   {"y": (None, np.float32)}, {"r": np.array([0], I64)})
    import tracemalloc
    tracemalloc.start()
    try:
        parse(m)
        assert tracemalloc.get_traced_memory()[1] < 64 << 20
    finally:
        tracemalloc.stop()
    # a graph input dim past int32 (LayerNormalization / MaxPool / Hardmax importers built constants of it), a DFT of
    # length 2^20 (n x n matrices), SplitToSequence pieces counted before the list is built
    _parse_fails_small(make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": ((big + 1, 3), np.float32)},
                                  {"y": (None, np.float32)}),
                       "UNSUPPORTED_GRAPH: graph input 'x' of shape \\(2147483648, 3\\): a dim of 2147483648 is past")
    _parse_fails_small(make_model([helper.make_node("DFT", ["x"], ["y"])], {"x": ((1, 1 << 20, 1), np.float32)},
                                  {"y": (None, np.float32)}, opset=17),
                       "UNSUPPORTED_NODE_SHAPE: DFT over 1048576 samples")
    _parse_fails_small(make_model([helper.make_node("SplitToSequence", ["x", "c"], ["s"]),
                                   helper.make_node("SequenceAt", ["s", "i"], ["y"])],
                                  {"x": ((1 << 30,), np.float32)}, {"y": (None, np.float32)},
                                  {"c": np.array(2, I64), "i": np.array(0, I64)}),
                       "UNSUPPORTED_NODE_SHAPE: SplitToSequence into 536870912 pieces")
    # SplitToSequence of [2^20] into single elements: a million slice layers (minutes)
    _parse_fails_small(make_model([helper.make_node("SplitToSequence", ["x"], ["s"]),
                                   helper.make_node("SequenceAt", ["s", "i"], ["y"])],
                                  {"x": ((1 << 20,), np.float32)}, {"y": (None, np.float32)},
                                  {"i": np.array(0, I64)}),
                       "UNSUPPORTED_NODE_SHAPE: SplitToSequence into 1048576 pieces: at most 4096")
    # Resize-10 of x [1] by run-time scales x, the output's extent inferred as 2^31: an 8 GiB coordinate table
    import onnx
    here = os.path.dirname(os.path.abspath(__file__))
    _parse_fails_small(onnx.load(os.path.join(here, "fuzz", "regressions", "onnx",
                                              "resize_runtime_scales_extent_2e31_table_8gib.onnx")),
                       "UNSUPPORTED_NODE_SHAPE: Resize with run-time scales to an extent of 2147483648 on axis 0")


def _dims_constant_cases(big):
    """(model, message) of importers that build a constant from a dim of `big` (DIMS_CONSTANT_MAX's users)."""
    N = helper.make_node
    f = np.float32
    return [
        (make_model([N("Hardmax", ["x"], ["y"], axis=1)], {"x": ((1, big), f)}, {"y": (None, f)}),
         "Hardmax along axis 1 of \\(1, %d\\): its index range" % big),
        (make_model([N("ArgMax", ["x"], ["y"], axis=1, select_last_index=1)], {"x": ((1, big), f)},
                    {"y": (None, np.int64)}), "ArgMax's select_last_index along axis 1"),
        (make_model([N("OneHot", ["i", "d", "v"], ["y"])], {"i": ((2,), np.int64)}, {"y": (None, f)},
                    {"d": np.array(big, I64), "v": np.array([0, 1], f)}), "OneHot of depth %d: its class range" % big),
        (make_model([N("NegativeLogLikelihoodLoss", ["x", "t"], ["y"])], {"x": ((2, big), f), "t": ((2,), np.int64)},
                    {"y": (None, f)}), "NegativeLogLikelihoodLoss over %d classes" % big),
        (make_model([N("Slice", ["x", "s", "e", "a"], ["y"])], {"x": (("N", big), f)}, {"y": (None, f)},
                    {"s": np.array([0], I64), "e": np.array([big - 1], I64), "a": np.array([1], I64)}),
         "a slice of %d elements along axis 1 of a tensor of shape \\(-1, %d\\)" % (big - 1, big)),
        (make_model([N("Slice", ["x", "s", "e", "a"], ["y"])], {"x": ((2, "N"), f)}, {"y": (None, f)},
                    {"s": np.array([0], I64), "e": np.array([big - 1], I64), "a": np.array([1], I64)}),
         "Slice \\(starts 0, ends %d, step 1\\) along a dynamic axis: its gather index table" % (big - 1)),
        (make_model([N("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=2)],
                    {"x": ((1, big), np.int8), "s": ((1, big // 2 + 1), f)}, {"y": (None, f)}, opset=21),
         "block_size 2 along axis 1 of \\(1, %d\\)" % big),
        (make_model([N("MaxPool", ["x"], ["y", "i"], kernel_shape=[1, 1])], {"x": ((1, 1, 1, big), f)},
                    {"y": (None, f), "i": (None, np.int64)}), "MaxPool's Indices over %d windows of 1 taps" % big),
        (make_model([N("STFT", ["x", "st", "", "fl"], ["y"])], {"x": ((1, big, 1), f)}, {"y": (None, f)},
                    {"st": np.array(1, I64), "fl": np.array(1, I64)}, opset=17),
         "STFT of %d frames of 1 samples: its frame index table" % big),
        (make_model([N("DeformConv", ["x", "w", "o"], ["y"], kernel_shape=[1, 1])],
                    {"x": ((1, 1, 2, 2), f), "w": ((1, 1, 1, 1), f), "o": ((1, 2, big, 1), f)}, {"y": (None, f)},
                    opset=19), "DeformConv to %d x 1: its sampling grid's row or column" % big),
        (make_model([N("TensorScatter", ["c", "u"], ["y"], axis=1)], {"c": ((1, big, 2), f), "u": ((1, big, 2), f)},
                    {"y": (None, f)}, opset=24), "TensorScatter of %d update positions" % big),
        (make_model([N("RoiAlign", ["x", "r", "b"], ["y"], output_height=big, output_width=1, sampling_ratio=1)],
                    {"x": ((1, 1, 4, 4), f), "r": ((1, 4), f), "b": ((1,), np.int64)}, {"y": (None, f)}, opset=16),
         "RoiAlign's %d x 1 bins sampled 1 x 1: a sample position table" % big),
        (make_model([N("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1, max_gram_length=1,
                       max_skip_count=0, ngram_counts=[0], ngram_indexes=[big - 1], pool_int64s=[1])],
                    {"x": ((1, 4), np.int64)}, {"y": (None, f)}),
         "TfIdfVectorizer of 1 n-grams into %d columns" % big),
    ]


def test_rnn_steps_are_bounded_and_chain_their_concatenation(rng):
    """RNN / GRU / LSTM unroll their steps: past RNN_STEPS_MAX (1024) the importer refuses the node before building
    anything (a sequence of 2^31 - 1 steps made it allocate a 16 GiB list); below it, sequences longer than one
    concatenation's 64 inputs are chained and match onnxruntime (70 steps failed to parse before)."""
    N = helper.make_node
    w, r = np.full((1, 4, 1), 0.5, F32), np.full((1, 4, 1), -0.25, F32)
    for t in (1025, 2 ** 31 - 1):
        _parse_fails_small(make_model([N("LSTM", ["x", "w", "r"], ["y"], hidden_size=1)], {"x": ((t, 1, 1), F32)},
                                      {"y": (None, F32)}, {"w": w, "r": r}),
                           "In node 0 .*UNSUPPORTED_NODE_SHAPE: LSTM over a sequence of %d steps: the steps are "
                           "unrolled into layers, at most 1024" % t)
    x = randn(rng, 70, 2, 1)
    compare(single("LSTM", {"x": x}, {"w": w, "r": r}, hidden_size=1), {"x": x})


def test_deformconv_unrolling_is_bounded():
    """DeformConv unrolls its offset groups x kernel taps and its groups: a group of 2^31 - 1 (as many input channels)
    hung the parser; past MAX_TAP_SLICES (16384) either is refused naming the counts."""
    N = helper.make_node
    big = 2 ** 31 - 1
    _parse_fails_small(make_model([N("DeformConv", ["x", "w", "o"], ["y"], kernel_shape=[1, 1], group=big)],
                                  {"x": ((1, big, 1, 1), F32), "w": ((big, 1, 1, 1), F32), "o": ((1, 2, 1, 1), F32)},
                                  {"y": (None, F32)}, opset=19),
                       "In node 0 .*UNSUPPORTED_NODE_SHAPE: DeformConv unrolls one sampling per offset group and "
                       "kernel tap \\(1 x 1\\) and one matrix multiply per group \\(2147483647\\)")


def test_constants_from_huge_dims_fail_cleanly_without_allocating_them(monkeypatch, rng):
    """Importers that build a constant from a dim (an index table, a class range) refuse one past DIMS_CONSTANT_MAX
    (2^26 elements) before building it: with a dim of 2^31 - 1 each made 8-32 GiB while parsing (Hardmax, ArgMax's
    select_last_index, OneHot's depth, the losses' classes, Slice along a static axis of a tensor with dynamic axes
    and along a dynamic axis by constant bounds, block DequantizeLinear, MaxPool's Indices, STFT's frames,
    DeformConv's sampling grid, TensorScatter's positions, RoiAlign's sample positions, TfIdfVectorizer's n-gram
    matrix).  Each
    error names the node and the constant.  At a bound forced down to 6, the same models with a dim of 8 are refused,
    and constants of 6 elements are still built and match onnxruntime (Hardmax, OneHot, Slice of a dynamic input)."""
    for m, msg in _dims_constant_cases(2 ** 31 - 1):
        _parse_fails_small(m, "In node 0 .*UNSUPPORTED_NODE_SHAPE: " + msg + ".* would be a constant of \\d+ "
                           "elements \\(at most 67108864\\)")
    import trtlite.onnx.errors as errors
    monkeypatch.setattr(errors, "DIMS_CONSTANT_MAX", 6)
    for m, msg in _dims_constant_cases(8):
        with pytest.raises(ParseFailed, match="UNSUPPORTED_NODE_SHAPE: " + msg):
            parse(m)
    x = randn(rng, 2, 6)
    compare(single("Hardmax", {"x": x}, axis=1), {"x": x})
    i = np.array([0, 5, -1, 3], I64)
    compare(single("OneHot", {"i": i}, {"d": np.array(6, I64), "v": np.array([0.5, 2], F32)}), {"i": i})
    m = single("Slice", {"x": x}, {"s": np.array([0], I64), "e": np.array([6], I64), "a": np.array([0], I64)},
               dyn=("x",))
    run_shapes(m, [{"x": randn(rng, n, 6)} for n in (6, 7)], {"x": (6, 6)}, {"x": (8, 6)})


# ---- shapes known only at run time (dynamic dims read by Shape) --------------------------------------------

INT64_MAX = 2 ** 63 - 1
N_ = helper.make_node


def run_shapes(model, feeds_list, min_shapes, max_shapes):
    """One engine (profile min_shapes .. max_shapes, opt the first feeds) runs every feeds dict; each is
    compared with onnxruntime."""
    builder, network, _ = parse(model)
    config = builder.create_builder_config()
    add_profile(builder, config, network, {k: v.shape for k, v in feeds_list[0].items()}, min_shapes, max_shapes)
    plan = builder.build_serialized_network(network, config)
    assert plan is not None
    ctx = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan).create_execution_context()
    for feeds in feeds_list:
        assert_outputs_close(ctx.infer(feeds), ort_run(model, feeds))


def _batch_target(dims_after):
    """Nodes making tgt = [Shape(a)[0]] + dims_after."""
    nodes = [N_("Shape", ["a"], ["sa"]), N_("Gather", ["sa", "i0"], ["n"], axis=0),
             N_("Unsqueeze", ["n", "ax0"], ["nu"]), N_("Concat", ["nu", "rest"], ["tgt"], axis=0)]
    return nodes, {"i0": np.array(0, I64), "ax0": np.array([0], I64), "rest": np.array(dims_after, I64)}


@pytest.mark.parametrize("kind", ["initializer", "input", "whole_shape", "dynamic_x_static_target"])
def test_expand_to_dynamic_batch(kind, rng):
    """Expand whose target holds the batch of another tensor (cls_token.expand(x.shape[0], -1, -1)): a
    select against a carrier of that batch."""
    if kind == "whole_shape":  # Expand(x, Shape(a))
        m = make_model([N_("Shape", ["a"], ["sa"]), N_("Expand", ["x", "sa"], ["y"])],
                       {"x": (1, 4), "a": ("N", 4)}, {"y": None}, opset=13)
        feeds = [{"x": randn(rng, 1, 4), "a": randn(rng, n, 4)} for n in (3, 1, 5)]
        run_shapes(m, feeds, {"a": (1, 4)}, {"a": (6, 4)})
        return
    if kind == "dynamic_x_static_target":  # x's dynamic dim is 1 or 4 at run time
        m = single("Expand", {"x": randn(rng, 1, 3)}, {"s": np.array([4, 3], I64)}, dyn=("x",))
        run_shapes(m, [{"x": randn(rng, n, 3)} for n in (1, 4)], {"x": (1, 3)}, {"x": (4, 3)})
        return
    nodes, inits = _batch_target([-1, -1] if kind == "initializer" else [1, 4])
    nodes.append(N_("Expand", ["cls", "tgt"], ["y"]))
    inputs = {"a": ("N", 3)}
    cls = randn(rng, 1, 1, 4)
    if kind == "initializer":
        inits["cls"] = cls
        inits["rest"] = np.array([1, 4], I64)
    else:
        inputs["cls"] = (1, 1, 4)
    m = make_model(nodes, inputs, {"y": None}, inits, opset=13)
    feeds = [dict({"a": randn(rng, n, 3)}, **({} if kind == "initializer" else {"cls": cls})) for n in (2, 1, 5)]
    run_shapes(m, feeds, {"a": (1, 3)}, {"a": (6, 3)})


@pytest.mark.parametrize("value", [None, np.array([0.5], F32), np.array([7], I64)], ids=["default", "float", "int64"])
def test_constant_of_shape_dynamic_batch(value, rng):
    """torch.zeros(x.size(0), 4): ConstantOfShape of a shape holding the batch."""
    nodes, inits = _batch_target([4])
    attrs = {} if value is None else {"value": numpy_helper.from_array(value, "v")}
    nodes.append(N_("ConstantOfShape", ["tgt"], ["c"], **attrs))
    out_type = I64 if value is not None and value.dtype == I64 else F32
    m = make_model(nodes, {"a": ("N", 3)}, {"c": ((None, 4), out_type)}, inits, opset=13)
    run_shapes(m, [{"a": randn(rng, n, 3)} for n in (2, 1, 5)], {"a": (1, 3)}, {"a": (6, 3)})
    # and used as the exporter does: added to the input
    nodes, inits = _batch_target([4])
    nodes += [N_("ConstantOfShape", ["tgt"], ["c"], **attrs), N_("Add", ["a", "c"], ["y"])]
    if out_type == F32:
        m = make_model(nodes, {"a": ("N", 4)}, {"y": None}, inits, opset=13)
        run_shapes(m, [{"a": randn(rng, n, 4)} for n in (2, 1, 5)], {"a": (1, 4)}, {"a": (6, 4)})


DYN_SLICES = [  # starts, ends, axes, steps: on x of shape (N, T, 4) with N and T dynamic
    ([1], [INT64_MAX], [1], None),  # x[:, 1:]: crop at the start
    ([0], [-1], [1], None),  # x[:, :-1]: crop at the end
    ([1, 1], [-1, -1], [0, 1], None),  # both ends, two dynamic axes
    ([-2], [INT64_MAX], [1], None),  # x[:, -2:]: the last two
    ([-3], [-1], [1], None),  # x[:, -3:-1]
    ([0], [2], [1], None),  # x[:, :2] (the axis must be at least 2 long)
    ([-1], [-3], [1], [-1]),  # x[:, -1:-3:-1]
    ([2], [-INT64_MAX], [1], [-1]),  # x[:, 2::-1]
    ([1, 1], [-1, 3], [1, 2], None),  # a dynamic axis and a static one
]


@pytest.mark.parametrize("spec", DYN_SLICES, ids=["d%d" % i for i in range(len(DYN_SLICES))])
def test_slice_dynamic_axis(spec, rng):
    """Constant bounds along a dynamic axis: cropping (padding layer) or a constant number of indices
    (gather, negative ones counted from the end at run time)."""
    starts, ends, axes, steps = spec
    inits = {"st": np.array(starts, I64), "en": np.array(ends, I64), "ax": np.array(axes, I64)}
    order = ["x", "st", "en", "ax"]
    if steps is not None:
        inits["sp"] = np.array(steps, I64)
        order.append("sp")
    m = make_model([N_("Slice", order, ["y"])], {"x": ("N", "T", 4)}, {"y": None}, inits, opset=13)
    feeds = [{"x": randn(rng, n, t, 4)} for n, t in ((3, 5), (3, 3), (4, 8))]
    run_shapes(m, feeds, {"x": (3, 3, 4)}, {"x": (4, 8, 4)})


@pytest.mark.parametrize("case", ["slice_reverse", "slice_start_from_end_stop_from_start"])
def test_runtime_shapes_still_unsupported(case, rng):
    """What trtlite cannot build yet: a precise UNSUPPORTED_NODE_DYNAMIC naming the node.  (pe[:x.shape[1]] and
    (B*T, C) -> (B, T, C) are shape tensors now: tests/test_shape_tensors.py; torch.arange(x.shape[1]) is a fill
    layer: test_arange_of_a_dynamic_dim.)"""
    i64 = lambda v: np.array(v, I64)  # noqa: E731
    inputs = {"x": ("B", "T", 8)}
    if case == "range":  # torch.arange(x.shape[1])
        nodes = [N_("Shape", ["x"], ["s"]), N_("Gather", ["s", "one"], ["T"], axis=0),
                 N_("Range", ["zero", "T", "one"], ["r"], name="bad"), N_("Cast", ["r"], ["y"], to=TensorProto.FLOAT)]
        inits = {"zero": i64(0), "one": i64(1)}
        what = "dynamic dimension"
    elif case == "slice_by_other_dim":  # pe[:x.shape[1]]
        nodes = [N_("Shape", ["x"], ["s"]), N_("Slice", ["s", "one", "two"], ["T"]),
                 N_("Slice", ["pe", "zero", "T"], ["y"], name="bad")]
        inits = {"zero": i64([0]), "one": i64([1]), "two": i64([2]), "pe": randn(rng, 16, 8)}
        what = "dynamic dimension"
    elif case == "reshape_two_syms":  # (B*T, C) -> (B, T, C)
        nodes = [N_("Reshape", ["x", "flat"], ["f"]), N_("Shape", ["x"], ["s"]),
                 N_("Reshape", ["f", "s"], ["y"], name="bad")]
        inits = {"flat": i64([-1, 8])}
        what = "neither copied"
    else:
        bounds = ([-1], [-INT64_MAX], [-1]) if case == "slice_reverse" else ([-3], [2], [1])
        nodes = [N_("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="bad")]
        inits = {"st": i64(bounds[0]), "en": i64(bounds[1]), "ax": i64([1]), "sp": i64(bounds[2])}
        what = "dynamic axis"
    m = make_model(nodes, inputs, {"y": None}, inits, opset=13)
    with pytest.raises(AssertionError) as e:
        parse(m)
    msg = str(e.value)
    assert "name 'bad'" in msg and "UNSUPPORTED_NODE_DYNAMIC" in msg and what in msg, msg


def test_arange_of_a_dynamic_dim(rng):
    """torch.arange(x.shape[1]): a LINSPACE fill whose length is a shape tensor read from x's dims."""
    i64 = lambda v: np.array(v, I64)  # noqa: E731
    nodes = [N_("Shape", ["x"], ["s"]), N_("Gather", ["s", "one"], ["T"], axis=0),
             N_("Range", ["zero", "T", "one"], ["r"]), N_("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
             N_("Add", ["x", "rf"], ["y"])]
    m = make_model(nodes, {"x": ("B", "T")}, {"y": None}, {"zero": i64(0), "one": i64(1)}, opset=13)
    feeds = [{"x": randn(rng, n, t)} for n, t in ((2, 5), (1, 3), (3, 8))]
    run_shapes(m, feeds, {"x": (1, 3)}, {"x": (3, 8)})


def test_tile(rng):
    x = randn(rng, 2, 3)
    compare(single("Tile", {"x": x}, {"r": np.array([2, 3], I64)}), {"x": x})


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode, rng):
    x = randn(rng, 2, 8, 3, 4)
    compare(single("DepthToSpace", {"x": x}, blocksize=2, mode=mode), {"x": x})


def test_space_to_depth(rng):
    x = randn(rng, 2, 3, 4, 6)
    compare(single("SpaceToDepth", {"x": x}, blocksize=2), {"x": x})


GATHERS = [((5, 4), np.array(2), 0), ((5, 4), np.array([3, -1, 0]), 0), ((3, 5, 4), np.array([[1, 0], [4, 2]]), 1),
           ((3, 5, 4), np.array([-4]), -1)]


@pytest.mark.parametrize("shape,idx,axis", GATHERS, ids=["g%d" % i for i in range(len(GATHERS))])
def test_gather(shape, idx, axis, rng):
    x = randn(rng, *shape)
    compare(single("Gather", {"x": x}, {"i": idx.astype(I64)}, axis=axis), {"x": x})


def test_gather_runtime_indices(rng):
    x = randn(rng, 6, 4)
    i = rng.integers(0, 6, (2, 3)).astype(I64)
    compare(single("Gather", {"x": x, "i": i}), {"x": x, "i": i})


def test_gather_elements_nd(rng):
    x = randn(rng, 3, 4)
    i = rng.integers(0, 3, (2, 4)).astype(I64)
    compare(single("GatherElements", {"x": x, "i": i}, axis=0), {"x": x, "i": i})
    x3 = randn(rng, 2, 3, 4)
    ind = np.array([[[0, 1], [2, 3]], [[1, 0], [0, 2]]], I64)
    compare(single("GatherND", {"x": x3}, {"i": ind}, batch_dims=1), {"x": x3})


INDEX_OPS = [  # op, data shape, indices, attrs, the updates' shape (scatters)
    ("GatherElements", (3, 4), np.array([[0, 2, 1, 1], [2, 2, 0, 1]]), dict(axis=0), None),
    ("GatherElements", (3, 4), np.array([[3, -4], [-1, 0], [1, 2]]), dict(axis=-1), None),
    ("GatherND", (2, 3, 4), np.array([[[0, 1], [2, 3]], [[1, 0], [0, 2]]]), dict(batch_dims=1), None),
    ("ScatterElements", (3, 4), np.array([[2, 0, 1, -1]]), dict(axis=0), (1, 4)),
    ("ScatterND", (4, 3), np.array([[3], [0]]), {}, (2, 3)),
]


@pytest.mark.parametrize("case", INDEX_OPS, ids=lambda c: c[0] if isinstance(c, tuple) else None)
def test_indexing_ops_over_constants_fold_or_fail_on_out_of_range(case, rng):
    """Gather / scatter ops over constants are folded by onnx's reference (the result vs onnxruntime through a
    following Add); indices one past the data's axis, or 2^40 (a fuzzing input that kept onnx's reference busy
    for minutes), are INVALID_NODE at once, naming the axis and its size."""
    import time
    op, shape, idx, attrs, upd_shape = case
    data = randn(rng, *shape)
    inits = {"d": data, "i": idx.astype(I64)}
    if upd_shape:
        inits["u"] = randn(rng, *upd_shape)
    x = randn(rng, *((1, 1) if op != "GatherND" else (1,)))
    node = helper.make_node(op, list(inits), ["g"], **attrs)
    add = helper.make_node("Add", ["g", "x"], ["y"])
    compare(make_model([node, add], {"x": (x.shape, np.float32)}, {"y": (None, np.float32)}, inits), {"x": x})
    # the axis the last index addresses: the op's axis, or (ND ops) the one its last index column addresses
    axis = attrs.get("axis", 0) % len(shape) if op.endswith("Elements") else attrs.get("batch_dims", 0) + idx.shape[-1] - 1
    for bad_value in (shape[axis], 2 ** 40):
        bad = idx.astype(I64).copy()
        bad.reshape(-1)[-1] = bad_value
        model = make_model([node, add], {"x": (x.shape, np.float32)}, {"y": (None, np.float32)}, dict(inits, i=bad))
        t0 = time.perf_counter()
        with pytest.raises(ParseFailed, match="INVALID_NODE: indices out of range for axis %d of size %d"
                           % (axis, shape[axis])):
            parse(model)
        assert time.perf_counter() - t0 < 5.0


def test_gather_elements_constant_indices_out_of_range_on_runtime_data(rng):
    x = randn(rng, 3, 4)
    with pytest.raises(ParseFailed, match="indices out of range for axis 1 of size 4"):
        parse(single("GatherElements", {"x": x}, {"i": np.array([[0, 4]], I64)}, axis=1))


# ------------------------------------------------------------------------------------------------------------
# resize
# ------------------------------------------------------------------------------------------------------------

NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
COORD_MODES = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]


@pytest.mark.parametrize("coord", COORD_MODES)
@pytest.mark.parametrize("nearest", NEAREST_MODES)
@pytest.mark.parametrize("scales", [(1, 1, 2, 3), (1, 1, 0.6, 1.7), (1, 1, 1 / 3, 0.5)])
def test_resize_nearest(coord, nearest, scales, rng):
    x = randn(rng, 1, 2, 5, 6)
    m = single("Resize", {"x": x}, {"roi": None, "sc": np.array(scales, F32)}, opset=13, mode="nearest",
               coordinate_transformation_mode=coord, nearest_mode=nearest, _order=["x", "", "sc"])
    compare(m, {"x": x})


@pytest.mark.parametrize("coord", COORD_MODES)
@pytest.mark.parametrize("opset", [11, 13, 18])
def test_resize_linear_sizes(coord, opset, rng):
    x = randn(rng, 2, 3, 5, 4)
    sizes = np.array([2, 3, 9, 1], I64)
    m = single("Resize", {"x": x}, {"roi": np.array([], F32), "sc": np.array([], F32), "sz": sizes}, opset=opset,
               mode="linear", coordinate_transformation_mode=coord, _order=["x", "roi", "sc", "sz"])
    compare(m, {"x": x})


@pytest.mark.parametrize("exclude", [0, 1])
def test_resize_cubic(exclude, rng):
    x = randn(rng, 1, 2, 5, 6)
    m = single("Resize", {"x": x}, {"sc": np.array([1, 1, 1.5, 2], F32)}, opset=13, mode="cubic",
               cubic_coeff_a=-0.5, exclude_outside=exclude, _order=["x", "", "sc"])
    compare(m, {"x": x})


def test_resize_axes_opset18(rng):
    x = randn(rng, 1, 2, 5, 6)
    m = single("Resize", {"x": x}, {"sc": np.array([2, 0.5], F32)}, opset=18, mode="linear", axes=[3, 2],
               _order=["x", "", "sc"])
    compare(m, {"x": x})


@pytest.mark.parametrize("scales", [(1, 1, 2, 3), (1, 1, 0.5, 0.4)])
def test_resize_opset10(scales, rng):
    x = randn(rng, 1, 2, 5, 6)
    compare(single("Resize", {"x": x}, {"sc": np.array(scales, F32)}, opset=10, mode="nearest"), {"x": x})
    compare(single("Resize", {"x": x}, {"sc": np.array(scales, F32)}, opset=10, mode="linear"), {"x": x})


def test_upsample(rng):
    x = randn(rng, 1, 2, 3, 4)
    compare(single("Upsample", {"x": x}, {"sc": np.array([1, 1, 2, 2], F32)}, opset=9, mode="nearest"), {"x": x})
    compare(single("Upsample", {"x": x}, opset=7, scales=[1.0, 1.0, 2.0, 3.0], mode="linear"), {"x": x})


def test_resize_dynamic_batch(rng):
    x = randn(rng, 3, 2, 4, 5)
    m = single("Resize", {"x": x}, {"sc": np.array([1, 1, 2, 2], F32)}, dyn=("x",), mode="linear",
               _order=["x", "", "sc"])
    compare(m, {"x": x})


# ------------------------------------------------------------------------------------------------------------
# pooling, softmax, reductions, top-k
# ------------------------------------------------------------------------------------------------------------

POOLS = {
    "plain": dict(kernel_shape=[2, 2], strides=[2, 2]),
    "pads": dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "ceil": dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    "ceil_pads": dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], ceil_mode=1),
    "ceil_stride_gt_kernel": dict(kernel_shape=[1, 1], strides=[3, 3], ceil_mode=1),
    "same_upper": dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
    "same_lower": dict(kernel_shape=[2, 3], strides=[2, 2], auto_pad="SAME_LOWER"),
    "asym": dict(kernel_shape=[3, 1], strides=[1, 2], pads=[0, 0, 2, 0]),
}


# count_include_pad is an AveragePool attribute: MaxPool runs once per variant.
@pytest.mark.parametrize("op,count_include_pad", [("MaxPool", 0), ("AveragePool", 0), ("AveragePool", 1)])
@pytest.mark.parametrize("variant", sorted(POOLS))
def test_pool(op, variant, count_include_pad, rng):
    a = dict(POOLS[variant])
    if op == "AveragePool":
        a["count_include_pad"] = count_include_pad
    x = randn(rng, 2, 3, 7, 8)
    compare(single(op, {"x": x}, opset=13 if op == "MaxPool" else 11, **a), {"x": x})


def test_pool_1d(rng):
    x = randn(rng, 2, 3, 9)
    compare(single("MaxPool", {"x": x}, kernel_shape=[3], strides=[2]), {"x": x})
    compare(single("AveragePool", {"x": x}, kernel_shape=[4], pads=[1, 2]), {"x": x})


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pool(op, rng):
    x = randn(rng, 2, 3, 5, 4)
    compare(single(op, {"x": x}), {"x": x})


@case("softmax_axis1", opsets=(11, 13))
def _softmax_axis1(opset, rng):
    x = randn(rng, 2, 3, 4, 5)  # opset 11: softmax over the flattened 3*4*5; 13: over dim 1 only
    return single("Softmax", {"x": x}, opset=opset, axis=1), {"x": x}


@case("logsoftmax_axis1", opsets=(11, 13))
def _logsoftmax_axis1(opset, rng):
    x = randn(rng, 2, 3, 4, 5) * 4
    return single("LogSoftmax", {"x": x}, opset=opset, axis=1), {"x": x}


@case("softmax_default", opsets=(11, 13))
def _softmax_default(opset, rng):
    x = randn(rng, 2, 3, 4)
    return single("Softmax", {"x": x}, opset=opset), {"x": x}


@case("softmax_dynamic_axis2", opsets=(11, 13))
def _softmax_dyn(opset, rng):
    x = randn(rng, 2, 3, 4, 5)
    return single("Softmax", {"x": x}, opset=opset, axis=2, dyn=("x",)), {"x": x}


REDUCES = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]


@pytest.mark.parametrize("op", REDUCES)
@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce(op, opset, keepdims, rng):
    x = (randn(rng, 2, 3, 4) * 0.5 + (1.5 if op in ("ReduceLogSum", "ReduceProd") else 0)).astype(F32)
    axes = [1, -1]
    if opset >= 18 or (op == "ReduceSum" and opset >= 13):
        m = single(op, {"x": x}, {"a": np.array(axes, I64)}, opset=opset, keepdims=keepdims)
    else:
        m = single(op, {"x": x}, opset=opset, keepdims=keepdims, axes=axes)
    compare(m, {"x": x})


def test_reduce_all_axes_and_noop(rng):
    x = randn(rng, 2, 3, 4)
    compare(single("ReduceMean", {"x": x}, opset=13, keepdims=0), {"x": x})
    compare(single("ReduceSum", {"x": x}, {"a": np.array([], I64)}, opset=13, noop_with_empty_axes=1), {"x": x})


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("last", [0, 1])
def test_argmax(op, keepdims, last, rng):
    x = rng.integers(0, 3, (3, 4, 5)).astype(F32)  # ties
    compare(single(op, {"x": x}, out_types=[np.int64], axis=1, keepdims=keepdims, select_last_index=last),
            {"x": x})


@pytest.mark.parametrize("largest", [0, 1])
def test_topk(largest, rng):
    x = rng.permutation(60).reshape(3, 4, 5).astype(F32)
    m = single("TopK", {"x": x}, {"k": np.array([3], I64)}, outs=("v", "i"), out_types=[F32, np.int64],
               axis=1, largest=largest)
    compare(m, {"x": x})


def test_topk_opset1_attr(rng):
    x = rng.permutation(20).reshape(4, 5).astype(F32)
    compare(single("TopK", {"x": x}, outs=("v", "i"), out_types=[F32, np.int64], opset=9, k=2), {"x": x})


# ------------------------------------------------------------------------------------------------------------
# constants and shape computations folded while parsing
# ------------------------------------------------------------------------------------------------------------

def test_constant_and_identity(rng):
    x = randn(rng, 2, 3)
    nodes = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(randn(rng, 3), "v")),
             helper.make_node("Constant", [], ["k"], value_float=2.0),
             helper.make_node("Add", ["x", "c"], ["a"]),
             helper.make_node("Mul", ["a", "k"], ["m"]),
             helper.make_node("Dropout", ["m"], ["d"]),
             helper.make_node("Identity", ["d"], ["y"]),
             helper.make_node("Identity", ["x"], ["y2"])]
    m = make_model(nodes, {"x": x.shape}, {"y": None, "y2": None})
    compare(m, {"x": x})


def test_shape_chain_static(rng):
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape, Range, Expand, Cast: all folded."""
    x = randn(rng, 2, 3, 4)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["nu"]),
        helper.make_node("Concat", ["nu", "m1"], ["tgt"], axis=0),
        helper.make_node("Reshape", ["x", "tgt"], ["r"]),
        helper.make_node("Shape", ["r"], ["rs"]),
        helper.make_node("ConstantOfShape", ["rs"], ["ones"], value=numpy_helper.from_array(np.array([1.5], F32))),
        helper.make_node("Add", ["r", "ones"], ["y"]),
        helper.make_node("Gather", ["s", "i2"], ["w"], axis=0),
        helper.make_node("Cast", ["w"], ["wf"], to=TensorProto.FLOAT),
        helper.make_node("Range", ["z", "w", "one"], ["rg"]),
        helper.make_node("Cast", ["rg"], ["rgf"], to=TensorProto.FLOAT),
        helper.make_node("Expand", ["rgf", "s"], ["ex"]),
        helper.make_node("Mul", ["ex", "wf"], ["ex2"]),
        helper.make_node("Add", ["x", "ex2"], ["y2"]),
    ]
    inits = {"i0": np.array(0, I64), "i2": np.array(2, I64), "ax0": np.array([0], I64), "m1": np.array([-1], I64),
             "z": np.array(0, I64), "one": np.array(1, I64)}
    m = make_model(nodes, {"x": x.shape}, {"y": None, "y2": None}, inits)
    _, network, _ = parse(m)
    assert not any(network.get_layer(i).type == trt.LayerType.GATHER for i in range(network.num_layers))
    compare(m, {"x": x})


def test_shape_chain_dynamic_batch_reshape(rng):
    """x.view(x.size(0), -1) with a dynamic batch: the reshape copies the batch (reshape dim 0)."""
    x = randn(rng, 3, 4, 5)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["nu"]),
        helper.make_node("Concat", ["nu", "m1"], ["tgt"], axis=0),
        helper.make_node("Reshape", ["x", "tgt"], ["y"]),
    ]
    inits = {"i0": np.array(0, I64), "ax0": np.array([0], I64), "m1": np.array([-1], I64)}
    m = make_model(nodes, {"x": ("N", 4, 5)}, {"y": None}, inits)
    _, network, _ = parse(m)
    shuffles = [network.get_layer(i) for i in range(network.num_layers)
                if network.get_layer(i).type == trt.LayerType.SHUFFLE]
    assert len(shuffles) == 1 and tuple(shuffles[0].reshape_dims)[0] == 0
    compare(m, {"x": x})
    compare(m, {"x": randn(rng, 1, 4, 5)})


def test_shape_chain_dynamic_two_unknowns(rng):
    """reshape(x, [N, T, 2, -1]) with N and T dynamic: both copied (position matches)."""
    x = randn(rng, 2, 3, 8)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Slice", ["s", "st", "en"], ["nt"]),
        helper.make_node("Concat", ["nt", "tail"], ["tgt"], axis=0),
        helper.make_node("Reshape", ["x", "tgt"], ["y"]),
    ]
    inits = {"st": np.array([0], I64), "en": np.array([2], I64), "tail": np.array([2, -1], I64)}
    m = make_model(nodes, {"x": ("N", "T", 8)}, {"y": None}, inits)
    compare(m, {"x": x})


def test_shape_and_size_outputs_static(rng):
    x = randn(rng, 2, 3)
    nodes = [helper.make_node("Shape", ["x"], ["s"], start=1), helper.make_node("Size", ["x"], ["n"]),
             helper.make_node("Relu", ["x"], ["y"])]
    m = make_model(nodes, {"x": x.shape}, {"y": None, "s": (None, np.int64), "n": (None, np.int64)}, opset=15)
    compare(m, {"x": x})


def test_reference_fold_of_unmapped_op(rng):
    """An op without a layer mapping (Trilu) over constants is computed while parsing."""
    x = randn(rng, 4, 4)
    nodes = [helper.make_node("Trilu", ["c"], ["t"], upper=1), helper.make_node("Add", ["x", "t"], ["y"])]
    compare(make_model(nodes, {"x": x.shape}, {"y": None}, {"c": randn(rng, 4, 4)}, opset=14), {"x": x})


def _layer_kinds(network):
    """(layer class name, elementwise/unary op name or None) of each layer, in order."""
    out = []
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        op = getattr(layer, "op", None)
        out.append((type(layer).__name__, op.name if op is not None else None))
    return out


def test_gelu_erf_pattern_imported_node_by_node(rng):
    """The parser imports the Erf-GELU subgraph as its nodes (fusing it into one GELU activation is the
    builder's job); the result equals onnxruntime's."""
    x = randn(rng, 2, 8)
    C, EW, U = "IConstantLayer", "IElementWiseLayer", "IUnaryLayer"
    want = {0: [(C, None), (EW, "DIV"), (U, "ERF"), (C, None), (EW, "SUM"), (EW, "PROD"), (C, None), (EW, "PROD")],
            1: [(C, None), (EW, "PROD"), (C, None), (EW, "PROD"), (U, "ERF"), (C, None), (EW, "SUM"), (EW, "PROD")]}
    for variant in (0, 1):
        if variant == 0:  # torch's symbolic: (x * (1 + erf(x / sqrt2))) * 0.5
            nodes = [helper.make_node("Div", ["x", "sq2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
                     helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["x", "a"], ["m"]),
                     helper.make_node("Mul", ["m", "half"], ["y"])]
        else:  # (x * 0.5) * (1 + erf(x * 1/sqrt2))
            nodes = [helper.make_node("Mul", ["x", "half"], ["h"]), helper.make_node("Mul", ["x", "isq2"], ["d"]),
                     helper.make_node("Erf", ["d"], ["e"]), helper.make_node("Add", ["one", "e"], ["a"]),
                     helper.make_node("Mul", ["h", "a"], ["y"])]
        inits = {"sq2": np.array(math.sqrt(2), F32), "one": np.array(1.0, F32), "half": np.array(0.5, F32),
                 "isq2": np.array(1 / math.sqrt(2), F32)}
        m = make_model(nodes, {"x": x.shape}, {"y": None}, inits)
        _, network, _ = parse(m)
        assert _layer_kinds(network) == want[variant]
        compare(m, {"x": x})


def test_float16_io(rng):
    x = randn(rng, 2, 3).astype(np.float16)
    m = single("Relu", {"x": x}, out_types=[np.float16])
    got, ref = compare(m, {"x": x})
    assert got["y"].dtype == np.float16


def test_int64_input_output(rng):
    x = rng.integers(-5, 5, (2, 3)).astype(I64)
    got, _ = compare(single("Add", {"x": x}, {"c": np.array([1, 2, 3], I64)}, out_types=[np.int64]), {"x": x})
    assert got["y"].dtype == np.int64  # TensorRT 10 keeps int64 graph I/O INT64


@pytest.mark.parametrize("f,opset", CASES)
def test_case(f, opset, rng):
    r = f(opset, rng)
    model, feeds = r[0], r[1]
    tol = r[2] if len(r) > 2 else {}
    compare(model, feeds, **tol)


def test_where_constant_condition(rng):
    a = randn(rng, 2, 3, 4)
    c = rng.random((3, 4)) > 0.5
    compare(single("Where", {"a": a}, {"c": c, "b": randn(rng, 4)}, _order=["c", "a", "b"]), {"a": a})


def test_local_function_inlined(rng):
    """A model-local function (as newer exporters write) is expanded into its nodes."""
    fn = helper.make_function("local", "ScaledTanh", ["x"], ["y"],
                              [helper.make_node("Constant", [], ["two"], value_float=2.0),
                               helper.make_node("Tanh", ["x"], ["t"]), helper.make_node("Mul", ["t", "two"], ["y"])],
                              [helper.make_opsetid("", 13)])
    x = randn(rng, 3, 4)
    m = make_model([helper.make_node("ScaledTanh", ["x"], ["y"], domain="local")], {"x": x.shape}, {"y": None},
                   extra_opsets={"local": 1})
    m.functions.append(fn)
    compare(m, {"x": x})


def test_parse_accepts_bytes_like(rng):
    data = single("Relu", {"x": randn(rng, 2, 3)}).SerializeToString()
    for buf in (bytearray(data), memoryview(data)):
        logger = trt.Logger(trt.Logger.ERROR)
        net = trt.Builder(logger).create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
        parser = trt.OnnxParser(net, logger)
        assert parser.parse(buf) and net.num_layers == 1 and net.num_outputs == 1
        ok, groups = parser.supports_model(data)
        assert ok and groups == [([0], True)]


@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric"])
def test_resize_nearest_sizes(coord, rng):
    x = randn(rng, 1, 2, 5, 6)
    m = single("Resize", {"x": x}, {"sz": np.array([1, 2, 8, 4], I64)}, opset=13, mode="nearest",
               coordinate_transformation_mode=coord, _order=["x", "", "", "sz"])
    compare(m, {"x": x})


def test_resize_sizes_from_dynamic_shape(rng):
    """sizes = Concat(Shape(x)[:2], [10, 12]) with a dynamic batch: the batch is kept, H and W scaled."""
    x = randn(rng, 3, 2, 5, 6)
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Slice", ["s", "st", "en"], ["nc"]),
             helper.make_node("Concat", ["nc", "hw"], ["sz"], axis=0),
             helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear")]
    inits = {"st": np.array([0], I64), "en": np.array([2], I64), "hw": np.array([10, 12], I64)}
    m = make_model(nodes, {"x": ("N", 2, 5, 6)}, {"y": None}, inits)
    compare(m, {"x": x})


@pytest.mark.parametrize("fold_limit", [None, 10])
def test_dropout_mask_output_past_the_fold_budget(rng, monkeypatch, fold_limit):
    """Dropout's mask (all true in inference) is a constant when small, and one element broadcast at run time past
    the fold budget: the ONNX fuzzer's [2^31] Dropout built a 2 GB numpy array while parsing."""
    from trtlite.onnx import ops_shape
    if fold_limit is not None:
        monkeypatch.setattr(ops_shape, "FOLD_LIMIT", fold_limit)
    x = randn(rng, 2, 3, 4)
    m = single("Dropout", {"x": x}, outs=("y", "mask"), out_types=[F32, np.bool_])
    compare(m, {"x": x})
