"""int8 end to end around the layers between int8 convolutions (issue #11): the residual add fused into the int8
convolution producing one operand (the other read as codes in the epilogue), the standalone int8 add, average and
global average pooling on codes (builder pass fuse_qdq; kernels qlinear.int8, qadd.int8, qpool.int8).  Each network
is written with add_quantize / add_dequantize as quantize_static places them, checked against a numpy float64 model
of the quantized math (within one output step: float32 rounding ties), against the same network with fuse_qdq off
(the fp32 simulation of the Q/DQ layers), and through the inspector (no ELEMENTWISE / POOLING / Q / DQ step left,
int8 tensors between the steps).  The AVX2 and portable paths run again in a subprocess with TRTL_CPU_MASK."""
import json
import os

import numpy as np
import pytest

import trtlite as trt

from conftest import Net, rerun_with_cpu_mask
from test_quantize_fuse import _fq, _int8_weights, conv2d_np, q_np

F = lambda v: np.float64(np.float32(v))  # noqa: E731  (a float32 parameter, exactly, in float64)


def _build(make, inputs, fuse=True):
    n = Net()
    if not fuse:
        n.config.set_pass_enabled("fuse_qdq", False)
    ins = [n.network.add_input(k, trt.float32, v.shape) for k, v in inputs.items()]
    out = make(n.network, *ins)
    out.name = "y"
    n.network.mark_output(out)
    eng = n.build()
    layers = json.loads(eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]
    return eng.create_execution_context().infer(inputs)["y"], layers


def _types(layers):
    return [l["type"] for l in layers]


def _lims(t):
    return (0, 255) if t == trt.uint8 else (-128, 127)


def _check(got, ref, step, name=""):
    d = np.abs(got.astype(np.float64) - ref)
    assert d.max() <= step * 1.0001 + 1e-6, "%s: max difference %.3g steps" % (name, d.max() / step)
    assert np.mean(d > 1e-6 + 1e-5 * np.abs(ref)) < 0.02, name  # nearly all agree to float rounding


# ---- residual add fused into the int8 convolution --------------------------------------------------------------

@pytest.mark.parametrize("act_type", [trt.uint8, trt.int8])
@pytest.mark.parametrize("relu", [False, True])
def test_residual_add_fused_into_int8_conv(act_type, relu, rng):
    """x -> Q/DQ -> conv(3x3) -> Q/DQ (sa) -> add(., Q/DQ'd x) [-> relu] -> Q/DQ (so) -> conv(1x1): the add (and the
    relu) become part of the first convolution's int8 step, which reads the skip's codes and writes codes that the
    second convolution reads."""
    C, K = 5, 5
    x = (rng.standard_normal((2, C, 9, 7)) * 1.2).astype(np.float32)
    q1, s1, w1 = _int8_weights(rng, (K, C, 3, 3))
    q2, s2, w2 = _int8_weights(rng, (3, K, 1, 1))
    lo, hi = _lims(act_type)
    z0, za, zo = (120, 110, 0 if relu else 100) if act_type == trt.uint8 else (0, 0, 0)
    S0, Sa, So = 0.025, 0.04, 0.045

    def make(net, xin):
        xq = _fq(net, xin, S0, z0, act_type)
        c1 = net.add_convolution_nd(xq, K, (3, 3), w1)
        c1.padding_nd = (1, 1)
        a = _fq(net, c1.get_output(0), Sa, za, act_type)
        s = net.add_elementwise(a, xq, trt.ElementWiseOperation.SUM).get_output(0)
        if relu:
            s = net.add_activation(s, trt.ActivationType.RELU).get_output(0)
        y = _fq(net, s, So, zo, act_type)
        return net.add_convolution_nd(y, 3, (1, 1), w2).get_output(0)

    def model(x):
        cx = q_np(x, S0, z0, lo, hi) - z0
        acc = conv2d_np(cx, q1.astype(np.float64), pad=1)
        v = acc * F(S0) * s1.astype(np.float64).reshape(1, -1, 1, 1)
        va = (q_np(v, Sa, za, lo, hi) - za) * F(Sa)
        v = va + cx * F(S0)
        if relu:
            v = np.maximum(v, 0)
        co = q_np(v, So, zo, lo, hi) - zo
        return conv2d_np(co, q2.astype(np.float64)) * F(So) * s2.astype(np.float64).reshape(1, -1, 1, 1)

    got, layers = _build(make, {"x": x})
    off, _ = _build(make, {"x": x}, fuse=False)
    # the network input's Q stays (its codes are the skip), the add and relu are in the first int8 step
    assert _types(layers) == ["QUANTIZE", "QLINEAR", "QLINEAR"], [(l["name"], l["type"]) for l in layers]
    first = layers[1]
    assert first["kernel"] in ("qlinear.int8", "qlinear.amx_int8") and "[ElementWise]" in first["name"], first["name"]
    assert not relu or "[Activation]" in first["name"], first["name"]
    t = trt.DataType(act_type).name
    assert [i["dtype"] for i in first["inputs"]] == ["FLOAT", t], first["inputs"]  # the skip read as codes
    assert first["outputs"][0]["dtype"] == t, first["outputs"]  # the second convolution reads codes
    assert [r for l in layers for r in l["reformat"]] == ["input FLOAT->%s" % t, "input FLOAT->%s" % t,
                                                          "output INT32->FLOAT"], [l["reformat"] for l in layers]
    step = F(So) * np.abs(q2).reshape(3, -1).sum(1).max() * s2.max()  # one output step of the add through conv2
    ref = model(x)
    _check(got, ref, step, "fused")
    _check(off, ref, step, "fp32 simulation")


# ---- an activation between two Q/DQ pairs -----------------------------------------------------------------------

@pytest.mark.parametrize("same", [False, True])
def test_activation_between_two_quantizations(same, rng):
    """conv -> Q/DQ (s1) -> relu -> Q/DQ (s2) (int8 symmetric, as quantize_static keeps the ReLU): one int8 step
    that quantizes with s1 before the activation and with s2 after it."""
    x = rng.standard_normal((1, 4, 8, 7)).astype(np.float32)
    q1, s1, w1 = _int8_weights(rng, (6, 4, 3, 3))
    S0, Sa, So = 0.02, 0.03, 0.03 if same else 0.017

    def make(net, xin):
        c = net.add_convolution_nd(_fq(net, xin, S0, 0, trt.int8), 6, (3, 3), w1)
        a = _fq(net, c.get_output(0), Sa, 0, trt.int8)
        r = net.add_activation(a, trt.ActivationType.RELU).get_output(0)
        return _fq(net, r, So, 0, trt.int8)

    v = conv2d_np(q_np(x, S0, 0, -128, 127), q1.astype(np.float64)) * F(S0) * s1.astype(np.float64).reshape(1, -1, 1, 1)
    v = np.maximum((q_np(v, Sa, 0, -128, 127)) * F(Sa), 0)
    ref = q_np(v, So, 0, -128, 127) * F(So)
    got, layers = _build(make, {"x": x})
    assert [l["type"] for l in layers] == ["QLINEAR"] and "[Activation]" in layers[0]["name"], layers
    _check(got, ref, F(So), "fused activation")


# ---- standalone int8 add ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("act_type", [trt.uint8, trt.int8])
@pytest.mark.parametrize("relu", [False, True])
def test_standalone_int8_add(act_type, relu, rng):
    """DQ(Q(x1)) + DQ(Q(x2)) [-> relu] -> Q -> DQ with no int8 layer producing an operand: one qadd.int8 step reading
    both operands' codes (a shape with a tail after the 16- and 8-lane vectors)."""
    shape = (2, 3, 7, 5)
    x1 = (rng.standard_normal(shape) * 2).astype(np.float32)
    x2 = (rng.standard_normal(shape) * 1.5).astype(np.float32)
    lo, hi = _lims(act_type)
    z1, z2, zo = (130, 90, 0 if relu else 120) if act_type == trt.uint8 else (3, -5, 0 if relu else -2)
    S1, S2, So = 0.021, 0.017, 0.033

    def make(net, a, b):
        s = net.add_elementwise(_fq(net, a, S1, z1, act_type), _fq(net, b, S2, z2, act_type),
                                trt.ElementWiseOperation.SUM).get_output(0)
        if relu:
            s = net.add_activation(s, trt.ActivationType.RELU).get_output(0)
        return _fq(net, s, So, zo, act_type)

    v = (q_np(x1, S1, z1, lo, hi) - z1) * F(S1) + (q_np(x2, S2, z2, lo, hi) - z2) * F(S2)
    if relu:
        v = np.maximum(v, 0)
    ref = (q_np(v, So, zo, lo, hi) - zo) * F(So)
    got, layers = _build(make, {"x1": x1, "x2": x2})
    off, _ = _build(make, {"x1": x1, "x2": x2}, fuse=False)
    assert _types(layers) == ["QUANTIZE", "QUANTIZE", "QLINEAR"], [(l["name"], l["type"]) for l in layers]
    t = trt.DataType(act_type).name
    add = layers[2]
    assert add["kernel"] == "qadd.int8" and add["precision"] == "INT8", add
    assert [i["dtype"] for i in add["inputs"]] == [t, t] and add["outputs"][0]["dtype"] == "FLOAT"
    _check(got, ref, F(So), "int8 add")
    _check(off, ref, F(So), "fp32 simulation")


# ---- average pooling on codes -----------------------------------------------------------------------------------

def _pool_np(v, k, s, p, exclude):
    n, c, h, w = v.shape
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s - p, j * s - p
            win = v[:, :, max(h0, 0):min(h0 + k, h), max(w0, 0):min(w0 + k, w)]
            cnt = win.shape[2] * win.shape[3] if exclude else k * k
            out[:, :, i, j] = win.sum((2, 3)) / cnt
    return out


@pytest.mark.parametrize("act_type", [trt.uint8, trt.int8])
@pytest.mark.parametrize("kind", ["global", "global_flat", "avg_incl", "avg_excl"])
def test_average_pooling_on_codes(act_type, kind, rng):
    """DQ(Q(x)) -> average pooling (3x3 stride 2 pad 1, padding counted or not) or a mean over H, W (global average
    pooling; kept dims or dropped) -> Q -> DQ: one qpool.int8 step summing codes in integers."""
    x = (rng.standard_normal((2, 4, 11, 9)) * 1.3).astype(np.float32)
    lo, hi = _lims(act_type)
    z0, zo = (128, 100) if act_type == trt.uint8 else (-3, 4)
    S0, So = 0.019, 0.0071 if kind.startswith("global") else 0.013

    def make(net, xin):
        xq = _fq(net, xin, S0, z0, act_type)
        if kind.startswith("global"):
            p = net.add_reduce(xq, trt.ReduceOperation.AVG, (1 << 2) | (1 << 3), kind == "global").get_output(0)
        else:
            pl = net.add_pooling_nd(xq, trt.PoolingType.AVERAGE, (3, 3))
            pl.stride_nd = (2, 2)
            pl.padding_nd = (1, 1)
            pl.average_count_excludes_padding = kind == "avg_excl"
            p = pl.get_output(0)
        return _fq(net, p, So, zo, act_type)

    v = (q_np(x, S0, z0, lo, hi) - z0) * F(S0)
    if kind.startswith("global"):
        m = v.mean((2, 3), keepdims=kind == "global")
    else:
        m = _pool_np(v, 3, 2, 1, kind == "avg_excl")
    ref = (q_np(m, So, zo, lo, hi) - zo) * F(So)
    got, layers = _build(make, {"x": x})
    off, _ = _build(make, {"x": x}, fuse=False)
    assert [l["kernel"] for l in layers] == ["qpool.int8"], [(l["name"], l["kernel"]) for l in layers]
    assert layers[0]["precision"] == "INT8"
    assert got.shape == ref.shape
    _check(got, ref, F(So), "int8 pooling")
    _check(off, ref, F(So), "fp32 simulation")


@pytest.mark.skipif(bool(os.environ.get("TRTL_CPU_MASK")), reason="runs only in the parent")
@pytest.mark.parametrize("mask", ["1f", "0"])
def test_on_avx2_and_portable_paths(mask):
    """This file's tests again in a process whose TRTL_CPU_MASK hides AVX-512 and VNNI (1f: AVX2) or every feature
    (0: the portable loops); the features are read once per process."""
    rerun_with_cpu_mask(__file__, mask, 19)


# ---- implicit INT8: calibrated ranges give the same int8 chains -------------------------------------------------

def test_implicit_int8_resnet_runs_int8_end_to_end(tmp_path, rng):
    """A ResNet-like fp32 ONNX model (torch, random weights) with BuilderFlag.INT8 and tensor.dynamic_range set from
    the fp32 activations (min-max over random inputs, as a calibrator would): the ranges become the same Q/DQ placement
    as quantize_static's (inputs of convolutions, residual adds, poolings, the classifier's flatten), so every step is
    int8 and the only reformats are the network's input and output; top-1 agrees with fp32."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    torch = pytest.importorskip("torch")
    from qdq_models import TinyResNet, randomize
    from onnx_helpers import export_torch, parse
    torch.manual_seed(0)
    shape = (1, 3, 32, 32)
    data = export_torch(randomize(TinyResNet(), 0), (torch.randn(*shape),), 13)
    m = onnx.load_from_string(data)
    del m.graph.output[:]
    for nm in [o for n in m.graph.node for o in n.output]:
        m.graph.output.append(onnx.helper.make_empty_tensor_value_info(nm))
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    r = {"x": 4.5}
    for _ in range(8):
        for nm, v in zip(names, sess.run(None, {"x": rng.standard_normal(shape).astype(np.float32)})):
            r[nm] = max(r.get(nm, 0.0), float(np.abs(v).max()))
    logger = trt.Logger(trt.Logger.ERROR)
    builder, network, _ = parse(data, logger)
    tensors = [network.get_input(0)] + [network.get_layer(i).get_output(j) for i in range(network.num_layers)
                                        for j in range(network.get_layer(i).num_outputs)]
    for t in tensors:
        if t.name in r:
            t.dynamic_range = (-r[t.name], r[t.name])
    config = builder.create_builder_config()
    config.set_flag(trt.BuilderFlag.INT8)
    config.set_pass_enabled("int8_tactics", False)  # the int8 kernels (test_int8_tactics.py: the fp32 ones)
    eng = trt.Runtime(logger).deserialize_cuda_engine(builder.build_serialized_network(network, config))
    layers = json.loads(eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]
    assert all(l["precision"] == "INT8" for l in layers), [(l["name"], l["precision"]) for l in layers]
    assert sum(l["kernel"] in ("qlinear.int8", "qlinear.amx_int8") for l in layers) == 11  # 10 convolutions and the classifier
    assert any(l["kernel"] == "qpool.int8" for l in layers)
    reformats = [r for l in layers for r in l["reformat"]]
    assert reformats == ["input FLOAT->INT8", "output INT32->FLOAT"], reformats
    fp32 = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    ctx = eng.create_execution_context()
    xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(16)]
    got = np.array([ctx.infer({"x": x})["y"].ravel() for x in xs])
    ref = np.array([fp32.run(None, {"x": x})[0].ravel() for x in xs])
    assert np.mean(got.argmax(1) == ref.argmax(1)) >= 0.9
    assert np.abs(got - ref).max() <= 0.1 * np.abs(ref).max(), np.abs(got - ref).max() / np.abs(ref).max()
    assert np.abs(got - ref).max() > 0  # it did quantize
