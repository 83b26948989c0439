"""int8 concatenation (issue #11): a concatenation of int8 layers' outputs read by int8 layers concatenates codes
(builder pass qdq_int8_io): each producer writes the codes of the concatenation's quantization into its part,
requantizing from its own output quantization in its epilogue when the scales differ (as quantize_static writes
GoogLeNet / Inception: one scale per branch, the concatenation's the largest), and the concatenation moves bytes (or
nothing, when elided).  Checked against a numpy float64 model of the quantized math (within one output step: float32
rounding ties), against the fp32 simulation with fuse_qdq off, and through the inspector (int8 tensors around the
concatenation, no reformat inside the network)."""
import json

import numpy as np
import pytest

import trtlite as trt

from conftest import Net
from test_quantize_fuse import _fq, _int8_weights, conv2d_np, q_np

F = lambda v: np.float64(np.float32(v))  # noqa: E731  (a float32 parameter, exactly, in float64)


def _build(make, x, fuse=True, int8=False):
    n = Net()
    if not fuse:
        n.config.set_pass_enabled("fuse_qdq", False)
    xin = n.network.add_input("x", trt.float32, x.shape)
    out = make(n.network, xin)
    out.name = "y"
    n.network.mark_output(out)
    eng = n.build()
    layers = json.loads(eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]
    return eng.create_execution_context().infer({"x": x})["y"], layers


def _check(got, ref, step, name):
    d = np.abs(got.astype(np.float64) - ref)
    assert d.max() <= step * 1.0001 + 1e-6, "%s: max difference %.3g steps" % (name, d.max() / step)
    assert np.mean(d > 1e-6 + 1e-5 * np.abs(ref)) < 0.02, name  # nearly all agree to float rounding


@pytest.mark.parametrize("act_type", [trt.int8, trt.uint8])
@pytest.mark.parametrize("same", [False, True])
def test_concat_of_int8_layers(same, act_type, rng):
    """x -> Q/DQ -> {conv 1x1 -> Q/DQ (sa) -> relu -> Q/DQ (sa); conv 3x3 -> Q/DQ (sb)} -> concat -> Q/DQ (sc) ->
    conv 1x1: the branches write the concatenation's codes (requantized from sa / sb in their epilogues unless
    the scales agree), the last convolution reads them."""
    C, Ka, Kb = 3, 4, 5
    x = (rng.standard_normal((2, C, 7, 11)) * 1.3).astype(np.float32)
    qa, sa_w, wa = _int8_weights(rng, (Ka, C, 1, 1))
    qb, sb_w, wb = _int8_weights(rng, (Kb, C, 3, 3))
    q2, s2, w2 = _int8_weights(rng, (2, Ka + Kb, 1, 1))
    lo, hi = (-128, 127) if act_type == trt.int8 else (0, 255)
    S0 = 0.0213
    Sa, Sb, Sc = (0.0367, 0.0367, 0.0367) if same else (0.0291, 0.0433, 0.0517)
    z0, za, zb, zc = (0, 0, 0, 0) if act_type == trt.int8 else (121, 0 if same else 17, 0 if same else 133,
                                                                   0 if same else 119)

    def make(net, xin):
        xq = _fq(net, xin, S0, z0, act_type)
        a = _fq(net, net.add_convolution_nd(xq, Ka, (1, 1), wa).get_output(0), Sa, za, act_type)
        a = _fq(net, net.add_activation(a, trt.ActivationType.RELU).get_output(0), Sa, za, act_type)
        cb = net.add_convolution_nd(xq, Kb, (3, 3), wb)
        cb.padding_nd = (1, 1)
        b = _fq(net, cb.get_output(0), Sb, zb, act_type)
        cat = net.add_concatenation([a, b])
        cat.axis = 1
        c = _fq(net, cat.get_output(0), Sc, zc, act_type)
        return net.add_convolution_nd(c, 2, (1, 1), w2).get_output(0)

    def model(x):
        cx = q_np(x, S0, z0, lo, hi) - z0
        va = conv2d_np(cx, qa.astype(np.float64)) * F(S0) * sa_w.astype(np.float64).reshape(1, -1, 1, 1)
        va = np.maximum((q_np(va, Sa, za, lo, hi) - za) * F(Sa), 0)
        va = (q_np(va, Sa, za, lo, hi) - za) * F(Sa)
        vb = conv2d_np(cx, qb.astype(np.float64), pad=1) * F(S0) * sb_w.astype(np.float64).reshape(1, -1, 1, 1)
        vb = (q_np(vb, Sb, zb, lo, hi) - zb) * F(Sb)
        cc = q_np(np.concatenate([va, vb], axis=1), Sc, zc, lo, hi) - zc
        return conv2d_np(cc, q2.astype(np.float64)) * F(Sc) * s2.astype(np.float64).reshape(1, -1, 1, 1)

    got, layers = _build(make, x)
    off, _ = _build(make, x, fuse=False)
    t = trt.DataType(act_type).name
    types = [l["type"] for l in layers]
    assert types.count("QLINEAR") == 3 and "QUANTIZE" not in types and "DEQUANTIZE" not in types, layers
    cat = [l for l in layers if l["type"] == "CONCATENATION"]
    assert len(cat) == 1, types
    assert [i["dtype"] for i in cat[0]["inputs"]] == [t, t] and cat[0]["outputs"][0]["dtype"] == t, cat[0]
    # the only reformats: each branch quantizes the network input, the last layer's float output
    assert sorted(r for l in layers for r in l["reformat"]) == ["input FLOAT->%s" % t] * 2 + ["output INT32->FLOAT"], \
        [(l["name"], l["reformat"]) for l in layers]
    ref = model(x)
    step = F(Sc) * np.abs(q2).reshape(2, -1).sum(1).max() * s2.max()  # one step of the concatenation, through conv2
    _check(got, ref, step, "int8 concat")
    _check(off, ref, step, "fp32 simulation")


def test_concat_with_a_float_reader_stays_float(rng):
    """A concatenation that is also a network output keeps its float tensor (and gives the fake-quantized values)."""
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    qa, sa_w, wa = _int8_weights(rng, (3, 2, 1, 1))

    def make(net, xin):
        xq = _fq(net, xin, 0.02, 0, trt.int8)
        a = _fq(net, net.add_convolution_nd(xq, 3, (1, 1), wa).get_output(0), 0.03, 0, trt.int8)
        b = _fq(net, net.add_convolution_nd(xq, 3, (1, 1), wa).get_output(0), 0.05, 0, trt.int8)
        cat = net.add_concatenation([a, b])
        cat.axis = 1
        return cat.get_output(0)

    got, layers = _build(make, x)
    cx = q_np(x, 0.02, 0, -128, 127)
    v = conv2d_np(cx, qa.astype(np.float64)) * F(0.02) * sa_w.astype(np.float64).reshape(1, -1, 1, 1)
    ref = np.concatenate([q_np(v, 0.03, 0, -128, 127) * F(0.03), q_np(v, 0.05, 0, -128, 127) * F(0.05)], axis=1)
    assert [l["outputs"][0]["dtype"] for l in layers if l["type"] == "CONCATENATION"] in ([], ["FLOAT"]), layers
    _check(got, ref, F(0.05), "float concat")


def test_implicit_int8_concat_writes_codes(rng):
    """BuilderFlag.INT8 with dynamic ranges: the branches' float outputs are quantized by the reader of the
    concatenation; with the pass they write those codes themselves (out_quant 0 -> codes), the same integers as
    with qdq_int8_io off (the float concatenation quantized by the reader)."""
    x = rng.standard_normal((1, 3, 6, 9)).astype(np.float32)
    wa = rng.standard_normal((4, 3, 1, 1)).astype(np.float32) * 0.5
    wb = rng.standard_normal((2, 3, 3, 3)).astype(np.float32) * 0.3
    w2 = rng.standard_normal((3, 6, 1, 1)).astype(np.float32) * 0.4

    def build(io_pass):
        n = Net()
        n.config.set_flag(trt.BuilderFlag.INT8)
        n.config.set_pass_enabled("qdq_int8_io", io_pass)
        xin = n.network.add_input("x", trt.float32, x.shape)
        xin.dynamic_range = (-3.0, 3.0)
        a = n.network.add_convolution_nd(xin, 4, (1, 1), wa).get_output(0)
        cb = n.network.add_convolution_nd(xin, 2, (3, 3), wb)
        cb.padding_nd = (1, 1)
        cat = n.network.add_concatenation([a, cb.get_output(0)])
        cat.axis = 1
        c = cat.get_output(0)
        c.dynamic_range = (-4.0, 4.0)
        y = n.network.add_convolution_nd(c, 3, (1, 1), w2).get_output(0)
        y.name = "y"
        n.network.mark_output(y)
        eng = n.build()
        info = eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON)
        return eng.create_execution_context().infer({"x": x})["y"], json.loads(info)["layers"]

    got, layers = build(True)
    off, layers_off = build(False)
    cat = [l for l in layers if l["type"] == "CONCATENATION"]
    assert len(cat) == 1 and cat[0]["outputs"][0]["dtype"] == "INT8", [(l["type"], l["outputs"]) for l in layers]
    assert [l["outputs"][0]["dtype"] for l in layers_off if l["type"] == "CONCATENATION"] == ["FLOAT"], layers_off
    np.testing.assert_allclose(got, off, rtol=1e-6, atol=1e-6)


def test_concat_read_through_a_max_pooling(rng):
    """GoogLeNet's inception3b -> maxpool3: concat -> Q/DQ (sc) -> max pool -> Q/DQ (sc) -> conv; the concatenation
    writes codes, the max pooling pools them (the kept DQ after the concatenation is removed) and the convolution
    reads the pooled codes: no float tensor between the concatenation and the convolution."""
    x = rng.standard_normal((1, 3, 8, 10)).astype(np.float32)
    qa, sa_w, wa = _int8_weights(rng, (4, 3, 1, 1))
    qb, sb_w, wb = _int8_weights(rng, (2, 3, 1, 1))
    q2, s2, w2 = _int8_weights(rng, (3, 6, 1, 1))
    S0, Sa, Sb, Sc = 0.0213, 0.0291, 0.0433, 0.0517

    def make(net, xin):
        xq = _fq(net, xin, S0, 0, trt.int8)
        a = _fq(net, net.add_convolution_nd(xq, 4, (1, 1), wa).get_output(0), Sa, 0, trt.int8)
        b = _fq(net, net.add_convolution_nd(xq, 2, (1, 1), wb).get_output(0), Sb, 0, trt.int8)
        cat = net.add_concatenation([a, b])
        cat.axis = 1
        p = net.add_pooling_nd(_fq(net, cat.get_output(0), Sc, 0, trt.int8), trt.PoolingType.MAX, (2, 2))
        p.stride_nd = (2, 2)
        return net.add_convolution_nd(_fq(net, p.get_output(0), Sc, 0, trt.int8), 3, (1, 1), w2).get_output(0)

    cx = q_np(x, S0, 0, -128, 127)
    va = q_np(conv2d_np(cx, qa.astype(np.float64)) * F(S0) * sa_w.astype(np.float64).reshape(1, -1, 1, 1), Sa, 0,
              -128, 127) * F(Sa)
    vb = q_np(conv2d_np(cx, qb.astype(np.float64)) * F(S0) * sb_w.astype(np.float64).reshape(1, -1, 1, 1), Sb, 0,
              -128, 127) * F(Sb)
    cc = q_np(np.concatenate([va, vb], axis=1), Sc, 0, -128, 127)
    pc = cc.reshape(1, 6, 4, 2, 5, 2).max(axis=(3, 5))
    ref = conv2d_np(pc, q2.astype(np.float64)) * F(Sc) * s2.astype(np.float64).reshape(1, -1, 1, 1)
    got, layers = _build(make, x)
    off, _ = _build(make, x, fuse=False)
    cat = [l for l in layers if l["type"] == "CONCATENATION"]
    assert len(cat) == 1 and cat[0]["outputs"][0]["dtype"] == "INT8", [(l["type"], l["outputs"]) for l in layers]
    pool = [l for l in layers if l["type"] == "POOLING"]
    assert len(pool) == 1 and pool[0]["precision"] == "INT8", pool
    assert pool[0]["inputs"][0]["dtype"] == pool[0]["outputs"][0]["dtype"] == "INT8", pool
    assert not [l for l in layers if l["type"] == "DEQUANTIZE"], [l["type"] for l in layers]
    assert layers[-1]["reformat"] == ["output INT32->FLOAT"], layers[-1]
    step = F(Sc) * np.abs(q2).reshape(3, -1).sum(1).max() * s2.max()
    _check(got, ref, step, "int8 concat + max pool")
    _check(off, ref, step, "fp32 simulation")
