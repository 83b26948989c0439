"""Builder pass fold_fake_quant (csrc/builder/passes/fold_fake_quant.c): a Q -> DQ pair left on a float tensor becomes
one fake-quantize step (the producing elementwise layer's / matrix multiply's epilogue, else one activation layer).
The values must be those of the two layers bit for bit: checked against an exact numpy model of QuantizeLinear /
DequantizeLinear (float32 quotient, round half to even, saturation, NaN to the lowest code) and against the same
network built with the pass off, on NaN / Inf / ties, int8 and uint8 with zero points, after a plan round trip, on
the AVX2 and the portable paths (TRTL_CPU_MASK), and on an ONNX QDQ chain as onnxruntime's quantize_static writes
it (bias add, erf GELU)."""
import math

import numpy as np
import pytest

import trtlite as trt

from conftest import rerun_with_cpu_mask

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
E = trt.ElementWiseOperation


def fq_ref(v, scale, dtype=np.int8, zp=0):
    """DequantizeLinear(QuantizeLinear(v)) in float32 exactly as ONNX defines them."""
    v = np.asarray(v, np.float32)
    s = np.float32(scale)
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        r = np.rint(v / s).astype(np.float64)
    r = np.where(np.isnan(r), info.min - zp, r)
    q = np.clip(r + zp, info.min, info.max)
    return ((q - zp) * np.float64(s)).astype(np.float32)


def _qdq(net, v, scale, dtype, zp):
    s = net.add_constant((1,), np.array([scale], np.float32)).get_output(0)
    q = net.add_quantize(v, s, trt.int8 if dtype == np.int8 else trt.uint8)
    dq = net.add_dequantize(q.get_output(0), s)
    if zp:
        z = net.add_constant((1,), np.array([zp], dtype)).get_output(0)
        q.set_input(2, z)
        dq.set_input(2, z)
    return dq.get_output(0)


def _build(make, off=False, plan_trip=False):
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    net = builder.create_network(EXPLICIT)
    make(net)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    config.set_pass_enabled("fuse_chain", False)  # the steps this pass leaves, as it leaves them (not one chain)
    if off:
        config.set_pass_enabled("fold_fake_quant", False)
    if plan_trip:
        plan = builder.build_serialized_network(net, config)
        engine = trt.Runtime(logger).deserialize_cuda_engine(plan)
    else:
        engine = builder.build_engine(net, config)
    import json
    layers = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return engine, [l["type"] for l in layers["layers"]]


def _special(rng, shape, scale):
    """Random values with ties (k + 0.5) * scale, NaN, +-Inf and values far past saturation."""
    x = (rng.standard_normal(shape) * 40 * scale).astype(np.float32)
    flat = x.reshape(-1)
    k = rng.integers(-130, 130, flat.size // 4)
    flat[: k.size] = ((k + 0.5) * np.float32(scale)).astype(np.float32)
    flat[-4:] = [np.nan, np.inf, -np.inf, 1e30]
    rng.shuffle(flat)
    return x


@pytest.mark.parametrize("dtype,zp", [(np.int8, 0), (np.int8, -7), (np.uint8, 128), (np.uint8, 3)])
@pytest.mark.parametrize("plan_trip", [False, True])
def test_epilogue_and_activation_step_are_exact(dtype, zp, plan_trip, rng=None):
    rng = np.random.default_rng(7)
    scale = 0.0371
    x = _special(rng, (2, 3, 33), scale)
    c = (rng.standard_normal((1, 1, 33)) * scale).astype(np.float32)

    def make(net):
        t = net.add_input("x", trt.float32, x.shape)
        a = net.add_elementwise(t, net.add_constant(c.shape, c).get_output(0), E.SUM).get_output(0)
        y1 = _qdq(net, a, scale, dtype, zp)  # the add's epilogue
        y2 = _qdq(net, net.add_unary(t, trt.UnaryOperation.NEG).get_output(0), scale, dtype, zp)  # an activation step
        y1.name, y2.name = "y1", "y2"
        net.mark_output(y1)
        net.mark_output(y2)

    outs = {}
    for off in (False, True):
        engine, types = _build(make, off, plan_trip)
        if off:
            assert types.count("QUANTIZE") == 2 and types.count("DEQUANTIZE") == 2, types
        else:
            assert "QUANTIZE" not in types and "DEQUANTIZE" not in types, types
            assert types == ["ELEMENTWISE", "UNARY", "ACTIVATION"], types
        outs[off] = engine.create_execution_context().infer({"x": x})
    r1 = fq_ref((x + c).astype(np.float32), scale, dtype, zp)
    r2 = fq_ref(-x, scale, dtype, zp)
    for off in (False, True):
        np.testing.assert_array_equal(outs[off]["y1"], r1)
        np.testing.assert_array_equal(outs[off]["y2"], r2)
    assert np.array_equal(outs[False]["y1"].view(np.uint32), outs[True]["y1"].view(np.uint32))


@pytest.mark.parametrize("scale,folds", [
    (2.0**-100, True), (2.0**100, True), (float.fromhex("0x1.fffffep99"), True),  # trtl_act_qgrid_scale_ok's range, both ends
    (1e-40, False), (2.0**-127, False), (2.0**-101, False), (2.0**101, False), (3e38, False),  # outside: kept
])
def test_extreme_scales(scale, folds):
    """The vector fake-quantize steps divide by one Markstein step from the reciprocal, exact for scales in
    [2^-100, 2^100]; a pair of another scale stays Q / DQ (the reference's division).  A denormal scale (1e-40) made the
    folded step write -128 * scale for a zero before the range check."""
    rng = np.random.default_rng(11)
    s32 = float(np.float32(scale))
    x = _special(rng, (4, 40), s32)
    with np.errstate(over="ignore"):
        x[0, :8] = np.array([0.0, -0.0, 1e-45, -1e-45, 0.5 * s32, -0.5 * s32, 1.5 * s32, 127.5 * s32], np.float32)

    def make(net):
        t = net.add_input("x", trt.float32, x.shape)
        y = _qdq(net, net.add_unary(t, trt.UnaryOperation.NEG).get_output(0), s32, np.int8, 0)
        y.name = "y"
        net.mark_output(y)

    engine, types = _build(make)
    assert ("QUANTIZE" not in types) == folds, types
    out = engine.create_execution_context().infer({"x": x})["y"]
    np.testing.assert_array_equal(out.view(np.uint32), fq_ref(-x, s32).view(np.uint32))


def test_matmul_epilogue_and_shared_codes():
    """A matrix multiply's epilogue takes the pair; two DQs of one Q become one tensor; a Q whose codes another
    reader takes (a DQ of another scale) stays."""
    rng = np.random.default_rng(3)
    a = (rng.integers(-20, 20, (2, 4, 8)) * 0.125).astype(np.float32)  # exact products and sums
    b = (rng.integers(-20, 20, (2, 8, 5)) * 0.25).astype(np.float32)

    def make(net):
        ta = net.add_input("a", trt.float32, a.shape)
        tb = net.add_input("b", trt.float32, b.shape)
        m = net.add_matrix_multiply(ta, trt.MatrixOperation.NONE, tb, trt.MatrixOperation.NONE).get_output(0)
        s = net.add_constant((1,), np.array([0.5], np.float32)).get_output(0)
        q = net.add_quantize(m, s).get_output(0)
        d1 = net.add_dequantize(q, s).get_output(0)
        d2 = net.add_dequantize(q, s).get_output(0)
        y = d1  # a network output: the fused step writes it
        y2 = net.add_unary(d2, trt.UnaryOperation.ABS).get_output(0)
        e = net.add_elementwise(ta, ta, E.SUM).get_output(0)
        s2 = net.add_constant((1,), np.array([0.25], np.float32)).get_output(0)
        s3 = net.add_constant((1,), np.array([0.75], np.float32)).get_output(0)
        qe = net.add_quantize(e, s2).get_output(0)
        ye = net.add_dequantize(qe, s2).get_output(0)
        yo = net.add_dequantize(qe, s3).get_output(0)  # another scale: the pair stays
        for t, n in ((y, "y"), (y2, "y2"), (ye, "ye"), (yo, "yo")):
            t.name = n
            net.mark_output(t)

    engine, types = _build(make)
    assert types.count("QUANTIZE") == 1 and types.count("DEQUANTIZE") == 2, types
    assert types[0] == "MATRIX_MULTIPLY", types
    out = engine.create_execution_context().infer({"a": a, "b": b})
    fm = fq_ref(a @ b, 0.5)
    np.testing.assert_array_equal(out["y"], fm)
    np.testing.assert_array_equal(out["y2"], np.abs(fm))
    codes = np.clip(np.rint((a + a) / np.float32(0.25)), -128, 127)
    np.testing.assert_array_equal(out["ye"], (codes * 0.25).astype(np.float32))
    np.testing.assert_array_equal(out["yo"], (codes * 0.75).astype(np.float32))


def test_onnx_qdq_gelu_chain_bit_exact():
    """MatMul -> Q/DQ -> Add(bias) -> Q/DQ -> Div -> Erf -> Q/DQ -> Add -> Q/DQ -> Mul -> Q/DQ -> Mul, as
    quantize_static writes a BERT feed-forward block: every pair folds, the outputs are those of the layers."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((16, 24)) * 0.2).astype(np.float32)
    bias = (rng.standard_normal(24) * 0.1).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "bias")]
    nodes, cur = [], "x"
    for i, sc in enumerate((0.02, 0.03, 0.01, 0.015, 0.025)):
        inits += [numpy_helper.from_array(np.array(sc, np.float32), f"s{i}"),
                  numpy_helper.from_array(np.array(0, np.int8), f"z{i}")]

    def qdq(src, i):
        nodes.append(helper.make_node("QuantizeLinear", [src, f"s{i}", f"z{i}"], [f"q{i}"]))
        nodes.append(helper.make_node("DequantizeLinear", [f"q{i}", f"s{i}", f"z{i}"], [f"d{i}"]))
        return f"d{i}"

    for name, v in (("sqrt2", math.sqrt(2.0)), ("one", 1.0), ("half", 0.5)):
        inits.append(numpy_helper.from_array(np.array(v, np.float32), name))
    nodes.append(helper.make_node("MatMul", ["x", "w"], ["mm"]))
    m = qdq("mm", 0)
    nodes.append(helper.make_node("Add", ["bias", m], ["ba"]))
    h = qdq("ba", 1)
    nodes += [helper.make_node("Div", [h, "sqrt2"], ["dv"]), helper.make_node("Erf", ["dv"], ["er"])]
    e = qdq("er", 2)
    nodes.append(helper.make_node("Add", [e, "one"], ["a1"]))
    a1 = qdq("a1", 3)
    nodes.append(helper.make_node("Mul", [h, a1], ["m1"]))
    m1 = qdq("m1", 4)
    nodes.append(helper.make_node("Mul", [m1, "half"], ["y"]))
    graph = helper.make_graph(nodes, "ff", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 24])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = (rng.standard_normal((3, 16))).astype(np.float32)
    parsers = []  # (kept alive until the builds are done)

    def make(net):
        parser = trt.OnnxParser(net, trt.Logger(trt.Logger.WARNING))
        parsers.append(parser)
        assert parser.parse(model.SerializeToString()), [str(parser.get_error(i)) for i in range(parser.num_errors)]

    outs, kinds = [], []
    for off in (False, True):
        engine, types = _build(make, off)
        kinds.append(types)
        outs.append(engine.create_execution_context().infer({"x": x})["y"])
    assert "QUANTIZE" not in kinds[0] and "DEQUANTIZE" not in kinds[0], kinds[0]
    assert kinds[1].count("QUANTIZE") == 5, kinds[1]
    assert len(kinds[0]) < len(kinds[1]) - 5, kinds
    np.testing.assert_array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32))


@pytest.mark.parametrize("mask", ["7", "0"])
def test_paths(mask):
    """The exact tests again on the AVX2 (7 hides FMA, so the SSE / portable activation paths) and the portable paths."""
    rerun_with_cpu_mask(__file__, mask, 8, select="exact and not onnx")
