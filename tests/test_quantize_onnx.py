"""ONNX QuantizeLinear / DequantizeLinear: QDQ models made with onnxruntime.quantization.quantize_static (QDQ
format, calibrated on random data; per-tensor and per-channel weights; uint8 asymmetric and int8 symmetric
activations) from a small torch CNN and an MLP/attention-like matmul model, run by trtlite and by onnxruntime
from the same files; hand-made nodes for opsets 10-21, zero points, axis and the refusals.

Tolerance: 2 LSB of the model's output scale (the scale of the DequantizeLinear producing the output), and a mean
difference below 0.25 LSB.  Both runtimes quantize every activation, so they agree exactly except where a value
lands within float rounding of a rounding tie: onnxruntime's int8 kernels requantize the int32 accumulator with a
float multiplier, trtlite's simulation dequantizes and computes in float, so such a value may round to the
neighbouring integer (1 LSB), and that can move a later tensor by an LSB too."""
import numpy as np
import pytest

from onnx_helpers import make_model, ort_run, parse, trt_run, ParseFailed  # noqa: F401
from qdq_models import onnx, ort_run_file, output_scale, qdq_model
from onnx import TensorProto, helper

import trtlite as trt

CASES = [("cnn", False, "uint8"), ("cnn", True, "uint8"), ("cnn", True, "int8"), ("cnn", False, "int8"),
         ("matmul", False, "uint8"), ("matmul", True, "uint8"), ("matmul", True, "int8")]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("qdq")
    cache = {}

    def get(which, pc, act, opset=13):
        key = (which, pc, act, opset)
        if key not in cache:
            cache[key] = qdq_model(d, which, pc, act, opset)
        return cache[key]
    return get


def check_close(got, ref, scale, lsb=2.0):
    assert got.shape == ref.shape
    d = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    assert d.max() <= lsb * scale * (1 + 1e-5), "max difference %.3g LSB" % (d.max() / scale)
    assert d.mean() <= 0.25 * scale, "mean difference %.3g LSB" % (d.mean() / scale)


def _build(path, disabled=()):
    logger = trt.Logger(trt.Logger.ERROR)
    builder, network, _ = parse(open(path, "rb").read(), logger)
    config = builder.create_builder_config()
    for p in disabled:
        config.set_pass_enabled(p, False)
    plan = builder.build_serialized_network(network, config)
    return trt.Runtime(logger).deserialize_cuda_engine(plan)


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("which,pc,act", CASES)
def test_quantize_static_models_match_onnxruntime(models, which, pc, act, fuse, rng):
    """With fuse_qdq on, every convolution / Gemm / MatMul with weights runs int8 (the inspector says so); off,
    the Q/DQ layers simulate the same math in fp32; both agree with onnxruntime."""
    path, shape = models(which, pc, act)
    m = onnx.load(path)
    ops = {n.op_type for n in m.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    scale = output_scale(path)
    assert scale is not None
    eng = _build(path, ("int8_tactics",) if fuse else ("fuse_qdq",))  # int8 kernels (test_int8_tactics.py: fp32 ones)
    info = eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE)
    n_int8 = (info.count("[qlinear.int8]") + info.count("[qlinear.amx_int8]"))
    if fuse:  # cnn: 7 convs + the Gemm; matmul: 6 Linear (MatMul with constant weights)
        assert n_int8 == (8 if which == "cnn" else 6), info
        assert "[convolution." not in info
    else:
        assert n_int8 == 0
    ctx = eng.create_execution_context()
    for _ in range(3):
        x = rng.standard_normal(shape).astype(np.float32)
        ref = ort_run_file(path, {"x": x})["y"]
        got = ctx.infer({"x": x})["y"]
        check_close(got, ref, scale)


def test_quantize_static_opset17(models, rng):
    path, shape = models("cnn", True, "uint8", 17)
    x = rng.standard_normal(shape).astype(np.float32)
    got = _build(path).create_execution_context().infer({"x": x})["y"]
    check_close(got, ort_run_file(path, {"x": x})["y"], output_scale(path))


# ---- hand-made nodes ------------------------------------------------------------------------------------


def _qdq_graph(opset, scale, zp, axis=None, shape=(2, 3, 4), zp_type=np.uint8, q_attrs=None):
    inits = {"s": np.asarray(scale, np.float32)}
    q_in, dq_in = ["x", "s"], ["q", "s"]
    if zp is not None:
        inits["z"] = np.asarray(zp, zp_type)
        q_in.append("z")
        dq_in.append("z")
    attrs = {} if axis is None else {"axis": axis}
    nodes = [helper.make_node("QuantizeLinear", q_in, ["q"], **attrs, **(q_attrs or {})),
             helper.make_node("DequantizeLinear", dq_in, ["y"], **attrs)]
    return make_model(nodes, {"x": shape}, {"y": shape}, inits, opset=opset)


@pytest.mark.parametrize("opset", [10, 13, 19, 21])
def test_per_tensor_opsets(opset, rng):
    x = (rng.standard_normal((2, 3, 4)) * 3).astype(np.float32)
    m = _qdq_graph(opset, 0.05, 120)
    got, _ = trt_run(m, {"x": x})
    np.testing.assert_array_equal(got["y"], ort_run(m, {"x": x})["y"])


@pytest.mark.parametrize("axis", [1, -2, 2, 0])
def test_per_channel_axis_and_zero_points(axis, rng):
    x = (rng.standard_normal((2, 3, 4)) * 3).astype(np.float32)
    c = x.shape[axis]
    s = rng.uniform(0.01, 0.04, c).astype(np.float32)
    z = rng.integers(-10, 10, c).astype(np.int8)
    m = _qdq_graph(13, s, z, axis=axis, zp_type=np.int8)
    got, _ = trt_run(m, {"x": x})
    np.testing.assert_array_equal(got["y"], ort_run(m, {"x": x})["y"])


def test_quantize_output_is_int(rng):
    """A graph whose output is the QuantizeLinear result gives the user uint8 / int8 values."""
    x = (rng.standard_normal((2, 5)) * 3).astype(np.float32)
    for zt in (np.uint8, np.int8):
        m = make_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])], {"x": (2, 5)},
                       {"q": ((2, 5), zt)}, {"s": np.float32(0.03), "z": np.asarray(7, zt)}, opset=13)
        got, _ = trt_run(m, {"x": x})
        assert got["q"].dtype == zt
        np.testing.assert_array_equal(got["q"], ort_run(m, {"x": x})["q"])


def test_no_zero_point_gives_uint8(rng):
    x = (rng.standard_normal((2, 5)) * 3).astype(np.float32)
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s"], ["q"])], {"x": (2, 5)},
                   {"q": ((2, 5), np.uint8)}, {"s": np.float32(0.03)}, opset=13)
    got, _ = trt_run(m, {"x": x})
    assert got["q"].dtype == np.uint8
    np.testing.assert_array_equal(got["q"], ort_run(m, {"x": x})["q"])


def test_dequantize_of_int8_graph_input(rng):
    q = rng.integers(-128, 128, (3, 4)).astype(np.int8)
    m = make_model([helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])], {"q": ((3, 4), np.int8)},
                   {"y": (3, 4)}, {"s": np.float32(0.1), "z": np.int8(-3)}, opset=13)
    got, _ = trt_run(m, {"q": q})
    np.testing.assert_array_equal(got["y"], ort_run(m, {"q": q})["y"])


def test_refusals():
    # blocked quantization whose blocks do not split the axis evenly (4 values, 2 blocks of 3)
    m = _qdq_graph(21, np.full((2, 3, 2), 0.1, np.float32), None, axis=2, q_attrs={"block_size": 3})
    with pytest.raises(ParseFailed, match="block_size 3 over a dim of 4"):
        parse(m)
    # a scale computed at run time is no longer refused: the parser lowers the pair to plain layers
    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], ["q"]), helper.make_node("DequantizeLinear", ["q", "s"], ["y"])]
    m = make_model(nodes, {"x": (2, 3), "s": ()}, {"y": (2, 3)}, opset=13)
    feeds = {"x": np.linspace(-3, 3, 6, dtype=np.float32).reshape(2, 3), "s": np.array(0.05, np.float32)}
    np.testing.assert_array_equal(trt_run(m, feeds)[0]["y"], ort_run(m, feeds)["y"])
    # per-channel scale of the wrong length
    m = _qdq_graph(13, [0.1, 0.2], None, axis=1)
    with pytest.raises(ParseFailed, match="QuantizeLinear"):
        trt_run(m, {"x": np.zeros((2, 3, 4), np.float32)})
    # int16 zero point
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])], {"x": (2, 5)},
                   {"q": None}, {"s": np.float32(0.03), "z": np.int16(0)}, opset=21)
    with pytest.raises(ParseFailed, match="int16"):
        parse(m)
