"""Builder passes qlinear_bias and norm_codes (csrc/builder/passes/qlinear_bias.c, norm_codes.c): an int8 matrix
multiply's bias add after its output Q -> DQ becomes part of the int8 layer's epilogue (QLINEAR bias_after_mid: the
bias added after the mid quantization, then the add's fake quantization, the codes its readers take, or FLOAT), and
a layer norm whose readers all quantize its output writes the int8 codes itself.

Each network is built with the passes on and off: the outputs must be the same to the bit (the same floats and codes
in between), and close to a numpy float64 model of the quantized math (within an output step, plus one step where a
value next to a rounding tie of the float32 epilogue moves the mid or the layer norm's code by one).  Per-tensor and
per-channel weight scales, bias shapes [K] and [1, 1, K], rows and channels with vector tails, int8 / uint8 codes with
zero points; plans (every build goes through one) and the plan reader's checks of the new attributes; the AVX2 and
portable paths (TRTL_CPU_MASK); a two-layer BERT encoder from onnxruntime's quantize_static."""
import json
import os
import struct
import zlib

import numpy as np
import pytest

import trtlite as trt

from conftest import Net, rerun_with_cpu_mask
from test_quantize_fuse import _fq, _int8_weights

E = trt.ElementWiseOperation
PASSES = ("qlinear_bias", "norm_codes")


def _const(net, a):
    return net.add_constant(a.shape, np.ascontiguousarray(a)).get_output(0)


def _layers(eng):
    return json.loads(eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]


def _build(make, inputs, off=()):
    n = Net()
    for p in off:
        n.config.set_pass_enabled(p, False)
    ins = {k: n.network.add_input(k, trt.float32, v.shape) for k, v in inputs.items()}
    for name, t in make(n.network, ins):
        t.name = name
        n.network.mark_output(t)
    eng = n.build()  # through a plan: bias_after_mid and the normalization's codes output are stored (version 10)
    return eng, eng.create_execution_context().infer(inputs), _layers(eng)


def _q64(v, s, z, lo, hi):
    """QuantizeLinear as ONNX defines it (the float32 quotient, round half to even, saturation), in float64."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        r = np.rint((np.asarray(v, np.float32) / np.float32(s)).astype(np.float64))
    return np.clip(np.where(np.isnan(r), lo - z, r) + z, lo, hi)


def _range(t):
    return (-128, 127) if t == trt.int8 else (0, 255)


# ---- the bias add of a linear layer ---------------------------------------------------------------------------

S0, Z0 = 0.021, 131          # input (uint8)
S1 = 0.047                   # the matrix multiply's output (mid): int8 zero point -3 or uint8 zero point 120
S2 = 0.061                   # after the bias add
S3 = 0.083                   # after the int8 residual add (the "codes" tail)


def _linear_case(rng, C, K, per_channel, rank, mid_type, out_type, tail):
    q, s, w = _int8_weights(rng, (K, C), per_channel)
    b = (rng.standard_normal(K) * 0.7).astype(np.float32)
    Z1 = -3 if mid_type == trt.int8 else 120
    Z2 = 5 if out_type == trt.int8 else 97

    def make(net, ins):
        a = _fq(net, ins["x"], S0, Z0)
        lead = (1,) * (rank - 2)
        m = net.add_matrix_multiply(a, trt.MatrixOperation.NONE, _const(net, w.T.reshape(lead + (C, K)).copy()),
                                    trt.MatrixOperation.NONE).get_output(0)
        m = _fq(net, m, S1, Z1, mid_type)
        z = net.add_elementwise(m, _const(net, b.reshape(lead + (1, K))), E.SUM).get_output(0)
        if tail == "qgrid":  # the add's Q -> DQ: fold_fake_quant's QGRID epilogue
            return [("y", _fq(net, z, S2, Z2, out_type))]
        if tail == "codes":  # Q -> DQ read by an int8 residual add (BERT's proj / ff2 -> Add): a Q layer of codes
            r = _fq(net, ins["r"], S2, Z2, out_type)
            s_ = net.add_elementwise(_fq(net, z, S2, Z2, out_type), r, E.SUM).get_output(0)
            return [("y", _fq(net, s_, S3, 0, trt.int8))]
        if tail == "relu":
            return [("y", net.add_activation(z, trt.ActivationType.RELU).get_output(0))]
        return [("y", z)]  # float

    def model(x, r):
        lo0, hi0 = _range(trt.uint8)
        qx = _q64(x, S0, Z0, lo0, hi0) - Z0
        acc = qx @ q.astype(np.float64).T
        v = acc * (np.float64(np.float32(S0)) * s.astype(np.float64))
        lo1, hi1 = _range(mid_type)
        mid = (_q64(v, S1, Z1, lo1, hi1) - Z1) * np.float64(np.float32(S1))
        z = mid + b.astype(np.float64)
        lo2, hi2 = _range(out_type)
        if tail == "qgrid":
            return (_q64(z, S2, Z2, lo2, hi2) - Z2) * np.float64(np.float32(S2))
        if tail == "codes":
            fz = (_q64(z, S2, Z2, lo2, hi2) - Z2) * np.float64(np.float32(S2))
            fr = (_q64(r, S2, Z2, lo2, hi2) - Z2) * np.float64(np.float32(S2))
            return _q64(fz + fr, S3, 0, -128, 127) * np.float64(np.float32(S3))
        return np.maximum(z, 0) if tail == "relu" else z

    # the step of the output per step of the mid quantization: a tie of the float32 epilogue may move the mid code
    tol = {"qgrid": S2 + S1, "codes": S3 + 2 * S2, "relu": S1 * 1.0001, "float": S1 * 1.0001}[tail]
    return make, model, tol


@pytest.mark.parametrize("tail", ["qgrid", "codes", "float", "relu"])
@pytest.mark.parametrize("per_channel", [True, False])
@pytest.mark.parametrize("xshape,K", [((2, 5, 37), 19), ((13, 64), 40)])  # bias [1, 1, K] / [1, K]; tails
def test_bias_after_mid_quantization_exact(tail, per_channel, xshape, K):
    rng = np.random.default_rng(17)
    C = xshape[-1]
    types = (trt.int8, trt.uint8) if per_channel else (trt.uint8, trt.int8)
    make, model, tol = _linear_case(rng, C, K, per_channel, len(xshape), *types, tail)
    x = (rng.standard_normal(xshape) * 1.5).astype(np.float32)
    x.reshape(-1)[::7] = ((rng.integers(-60, 60, x.size)[::7] + 0.5) * np.float32(S0)).astype(np.float32)  # ties
    r = (rng.standard_normal(xshape[:-1] + (K,)) * 2).astype(np.float32)
    inputs = {"x": x, "r": r} if tail == "codes" else {"x": x}
    eng_on, on, layers_on = _build(make, inputs)
    eng_off, off, layers_off = _build(make, inputs, off=("qlinear_bias",))
    kinds_on = [l["type"] for l in layers_on]
    kinds_off = [l["type"] for l in layers_off]
    # the bias add is a step of its own with the pass off, part of the int8 step with it on
    assert "ELEMENTWISE" in kinds_off, kinds_off
    assert "ELEMENTWISE" not in kinds_on and kinds_on.count("QLINEAR") == kinds_off.count("QLINEAR"), kinds_on
    mm = [l for l in layers_on if l["type"] == "QLINEAR" and l["kernel"] != "qadd.int8"][0]
    if tail == "codes":  # the int8 layer writes the codes the residual add reads: its quantize step is gone (r's
        assert kinds_on.count("QUANTIZE") == kinds_off.count("QUANTIZE") - 1 == 1, (kinds_on, kinds_off)  # stays)
        assert mm["outputs"][0]["dtype"] == ("INT8" if types[1] == trt.int8 else "UINT8"), mm
    else:
        assert mm["outputs"][0]["dtype"] == "FLOAT", mm
    np.testing.assert_array_equal(on["y"].view(np.uint32), off["y"].view(np.uint32))
    ref = model(x, r)
    d = np.abs(on["y"].astype(np.float64) - ref)
    assert d.max() <= tol, (d.max(), tol)
    exact_step = {"qgrid": S2, "codes": S3}.get(tail, 1e-5 * max(1.0, float(np.abs(ref).max())))
    assert np.mean(d > exact_step * 1.0001) <= 0.02, np.mean(d > exact_step * 1.0001)


def test_bias_pass_leaves_other_layers():
    """A bias add of another shape (a full tensor: a residual), an add after a matrix multiply without its own
    output quantization, and a matrix multiply whose output has a second reader keep their steps."""
    rng = np.random.default_rng(3)
    q, s, w = _int8_weights(rng, (8, 16))
    full = rng.standard_normal((1, 4, 8)).astype(np.float32)

    def make(net, ins):
        a = _fq(net, ins["x"], S0, Z0)
        wt = _const(net, w.T.reshape(1, 16, 8).copy())
        m1 = _fq(net, net.add_matrix_multiply(a, trt.MatrixOperation.NONE, wt, trt.MatrixOperation.NONE).get_output(0),
                 S1, -3, trt.int8)
        y1 = net.add_elementwise(m1, _const(net, full), E.SUM).get_output(0)  # not a bias: [1, 4, 8]
        m2 = _fq(net, net.add_matrix_multiply(a, trt.MatrixOperation.NONE, wt, trt.MatrixOperation.NONE).get_output(0),
                 S1, -3, trt.int8)
        y2 = net.add_elementwise(m2, _const(net, np.ones((1, 1, 8), np.float32)), E.SUM).get_output(0)
        y3 = net.add_unary(m2, trt.UnaryOperation.ABS).get_output(0)  # a second reader of m2
        return [("y1", y1), ("y2", y2), ("y3", y3)]

    x = rng.standard_normal((1, 4, 16)).astype(np.float32)
    _, on, layers = _build(make, {"x": x})
    _, off, layers_off = _build(make, {"x": x}, off=PASSES)
    assert [l["type"] for l in layers] == [l["type"] for l in layers_off], layers  # (fuse_qdq takes y1 as a residual)
    assert all(not l.get("name", "").endswith("+ (Unnamed Layer* 16) [ElementWise]") for l in layers)
    for k in on:
        np.testing.assert_array_equal(on[k].view(np.uint32), off[k].view(np.uint32))


# ---- the layer norm writing codes ----------------------------------------------------------------------------

SL = 0.0309                  # the layer norm's output quantization


def _norm_block(rng, C, K, lt, zl, eps):
    """x -> LayerNorm -> Q/DQ (SL, zl) -> int8 matrix multiply (+ bias after its Q/DQ, Q/DQ) and, through a Q layer,
    the int8 residual add of the two (BERT's ln1 -> ff -> Add_2)."""
    gamma = (1 + 0.3 * rng.standard_normal(C)).astype(np.float32)
    beta = (0.2 * rng.standard_normal(C)).astype(np.float32)
    q, s, w = _int8_weights(rng, (C, C))
    b = (rng.standard_normal(C) * 0.3).astype(np.float32)

    def make(net, ins):
        ln = net.add_normalization(ins["x"], _const(net, gamma.reshape(1, 1, C)), _const(net, beta.reshape(1, 1, C)),
                                   1 << 2)
        ln.epsilon = eps
        a = _fq(net, ln.get_output(0), SL, zl, lt)
        m = _fq(net, net.add_matrix_multiply(a, trt.MatrixOperation.NONE, _const(net, w.T.reshape(1, C, C).copy()),
                                             trt.MatrixOperation.NONE).get_output(0), S1, -3, trt.int8)
        z = _fq(net, net.add_elementwise(m, _const(net, b.reshape(1, 1, C)), E.SUM).get_output(0), S2, 0, trt.int8)
        y = _fq(net, net.add_elementwise(z, a, E.SUM).get_output(0), S3, 0, trt.int8)
        return [("y", y)]

    def model(x):
        x64 = x.astype(np.float64)
        mu = x64.mean(-1, keepdims=True)
        var = ((x64 - mu) ** 2).mean(-1, keepdims=True)
        ln = (x64 - mu) / np.sqrt(var + np.float64(np.float32(eps))) * gamma + beta
        lo, hi = _range(lt)
        a = (_q64(ln, SL, zl, lo, hi) - zl) * np.float64(np.float32(SL))
        acc = (a / np.float64(np.float32(SL))).round() @ q.astype(np.float64).T
        v = acc * (np.float64(np.float32(SL)) * s.astype(np.float64))
        mid = (_q64(v, S1, -3, -128, 127) + 3) * np.float64(np.float32(S1))
        z = _q64(mid + b, S2, 0, -128, 127) * np.float64(np.float32(S2))
        return _q64(z + a, S3, 0, -128, 127) * np.float64(np.float32(S3))

    return make, model


@pytest.mark.parametrize("lt,zl", [(trt.int8, 0), (trt.int8, 9), (trt.uint8, 128), (trt.uint8, 40)])
@pytest.mark.parametrize("C,rows", [(64, (2, 7)), (37, (3, 5))])
def test_layer_norm_writes_codes_exact(lt, zl, C, rows):
    rng = np.random.default_rng(23)
    make, model = _norm_block(rng, C, C, lt, zl, 1e-5)
    x = (rng.standard_normal(rows + (C,)) * 2 + 0.5).astype(np.float32)
    _, on, layers_on = _build(make, {"x": x})
    _, off, layers_off = _build(make, {"x": x}, off=("norm_codes",))
    _, both_off, layers_both = _build(make, {"x": x}, off=PASSES)
    norm_on = [l for l in layers_on if l["type"] == "NORMALIZATION"]
    norm_off = [l for l in layers_off if l["type"] == "NORMALIZATION"]
    assert len(norm_on) == 1 and norm_on[0]["kernel"] == "normalization.rows", layers_on
    assert norm_on[0]["outputs"][0]["dtype"] == ("INT8" if lt == trt.int8 else "UINT8"), norm_on
    assert norm_off[0]["outputs"][0]["dtype"] == "FLOAT", norm_off
    kinds = [l["type"] for l in layers_on]
    assert "QUANTIZE" not in kinds and "ELEMENTWISE" not in kinds, kinds  # both passes on: no separate step left
    assert "QUANTIZE" in [l["type"] for l in layers_off], [l["type"] for l in layers_off]
    # the int8 matrix multiply reads the codes: no input conversion
    mm = [l for l in layers_on if l["type"] == "QLINEAR" and l["inputs"][0]["name"] == norm_on[0]["outputs"][0]["name"]]
    assert mm and all(not any(r.startswith("input") for r in l["reformat"]) for l in mm), mm
    for o in (off, both_off):
        np.testing.assert_array_equal(on["y"].view(np.uint32), o["y"].view(np.uint32))
    ref = model(x)
    d = np.abs(on["y"].astype(np.float64) - ref)
    # a layer-norm value next to a tie of its code (float32 vs float64 statistics) moves the code, and with it the sum
    assert d.max() <= 2 * S3 * 1.0001 + SL, d.max() / S3
    assert np.mean(d > S3 * 1.0001) <= 0.02


def test_layer_norm_with_a_float_reader_keeps_float():
    """A layer norm whose output another float layer reads (or that is a network output) keeps its float output."""
    rng = np.random.default_rng(5)
    C = 24
    gamma, beta = np.ones((1, 1, C), np.float32), np.zeros((1, 1, C), np.float32)

    def make(net, ins):
        ln = net.add_normalization(ins["x"], _const(net, gamma), _const(net, beta), 1 << 2).get_output(0)
        a = _fq(net, ln, SL, 0, trt.int8)
        y = net.add_unary(a, trt.UnaryOperation.ABS).get_output(0)
        y2 = net.add_unary(ln, trt.UnaryOperation.NEG).get_output(0)  # a float reader of the layer norm
        return [("y", y), ("y2", y2)]

    x = rng.standard_normal((2, 3, C)).astype(np.float32)
    _, on, layers = _build(make, {"x": x})
    assert [l["outputs"][0]["dtype"] for l in layers if l["type"] == "NORMALIZATION"] == ["FLOAT"], layers
    _, off, _ = _build(make, {"x": x}, off=PASSES)
    for k in on:
        np.testing.assert_array_equal(on[k].view(np.uint32), off[k].view(np.uint32))


# ---- plans ---------------------------------------------------------------------------------------------------

def _patched(plan, off, value):
    bad = bytearray(plan)
    struct.pack_into("<i", bad, off, value)
    struct.pack_into("<I", bad, 24, zlib.crc32(bytes(bad[64:])) & 0xFFFFFFFF)
    return bytes(bad)


def _one_offset(plan, pattern):
    i = plan.find(pattern)
    assert i >= 0 and plan.find(pattern, i + 1) < 0, "pattern not found once"
    return i


def test_plan_reader_refuses_corrupt_new_attributes():
    """QLINEAR's bias_after_mid (version 10) and NORMALIZATION's codes output are checked when a plan loads: a value
    other than 0 / 1, bias_after_mid without its mid quantization, a codes output of a bad type or out_quant are
    refused with a message, never run."""
    rng = np.random.default_rng(29)
    make, _ = _norm_block(rng, 16, 16, trt.int8, 0, 1e-5)
    x = rng.standard_normal((1, 3, 16)).astype(np.float32)
    eng, out, layers = _build(make, {"x": x})
    plan = bytes(eng.serialize())
    runtime = trt.Runtime(trt.Logger(trt.Logger.INTERNAL_ERROR))
    # QLINEAR, from mid_scale on: mid_scale, mid_zero_point, mid_type, res_quant, res_scale, res_zero_point,
    # res_type, pool_mode, in_grid, bias_after_mid
    mid = _one_offset(plan, struct.pack("<fi", S1, -3))
    assert struct.unpack_from("<i", plan, mid - 4)[0] == 1  # mid_quant
    assert struct.unpack_from("<i", plan, mid + 36)[0] == 1  # bias_after_mid
    for off, value, msg in ((mid + 36, 2, "bias_after_mid"), (mid - 4, 0, "bias_after_mid"),
                            (mid + 36, -1, "bias_after_mid")):
        with pytest.raises(trt.PlanError, match=msg):
            runtime.deserialize_cuda_engine(_patched(plan, off, value))
    # NORMALIZATION: epsilon, axes, num_groups, compute_precision, out_quant, out_scale, out_zero_point, out_type
    ns = _one_offset(plan, struct.pack("<ii", int(trt.float32), 2) + struct.pack("<f", SL) +
                     struct.pack("<ii", 0, int(trt.int8))) + 8  # at out_scale
    for off, value in ((ns - 4, 1), (ns - 4, 3), (ns + 4, 200), (ns + 8, int(trt.float32)), (ns - 8, int(trt.float16))):
        with pytest.raises(trt.PlanError, match="output quantization|corrupt|dtype|type"):
            runtime.deserialize_cuda_engine(_patched(plan, off, value))
    np.testing.assert_array_equal(runtime.deserialize_cuda_engine(plan).create_execution_context().infer({"x": x})["y"],
                                  out["y"])


# ---- a QDQ BERT encoder ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("act_type", ["int8", "uint8"])
def test_qdq_bert_encoder(tmp_path, act_type):
    """Two BERT layers quantized by quantize_static: every bias add of the four linear layers joins its int8 layer,
    every layer norm feeding int8 layers writes codes; outputs bit-identical to the passes off and within two output
    steps of onnxruntime on the same file."""
    pytest.importorskip("torch")
    from qdq_models import ort_run_file, output_scale, qdq_model
    from onnx_helpers import parse
    from test_quantize_onnx import check_close
    path, shape = qdq_model(tmp_path, "bert", per_channel=True, act_type=act_type, opset=17)  # LayerNormalization
    scale = output_scale(path)
    engines, layers = {}, {}
    for off in ((), PASSES):
        logger = trt.Logger(trt.Logger.ERROR)
        builder, network, _ = parse(open(path, "rb").read(), logger)
        config = builder.create_builder_config()
        for p in off:
            config.set_pass_enabled(p, False)
        engines[off] = trt.Runtime(logger).deserialize_cuda_engine(builder.build_serialized_network(network, config))
        layers[off] = _layers(engines[off])
    on = layers[()]
    linear = [l for l in on if l["type"] == "QLINEAR" and "MatMul" in l["name"]]
    assert len(linear) == 8 and all("Add" in l["name"] for l in linear), [l["name"] for l in linear]
    assert sum(l["type"] == "ELEMENTWISE" for l in layers[PASSES]) - sum(l["type"] == "ELEMENTWISE" for l in on) == 8
    norms = [l for l in on if l["type"] == "NORMALIZATION"]
    assert [l["outputs"][0]["dtype"] for l in norms] == [act_type.upper()] * 3 + ["FLOAT"], norms  # the last: output
    assert sum(l["type"] == "QUANTIZE" for l in on) == 1, [l["name"] for l in on if l["type"] == "QUANTIZE"]
    ctx = {k: e.create_execution_context() for k, e in engines.items()}
    rng = np.random.default_rng(0)
    for _ in range(2):
        x = rng.standard_normal(shape).astype(np.float32)
        got = ctx[()].infer({"x": x})["y"]
        np.testing.assert_array_equal(got.view(np.uint32), ctx[PASSES].infer({"x": x})["y"].view(np.uint32))
        check_close(got, ort_run_file(path, {"x": x})["y"], scale)


@pytest.mark.skipif(bool(os.environ.get("TRTL_CPU_MASK")), reason="runs only in the parent")
@pytest.mark.parametrize("mask", ["7", "0"])
def test_paths(mask):
    """The exact tests again where TRTL_CPU_MASK hides FMA (7: the int8 library's portable path, normalization.rows'
    C loop) and everything (0)."""
    rerun_with_cpu_mask(__file__, mask, 24, select="exact")
