"""Adder2d_TRT writing INT8 codes (issue #11 item 6) and the builder pass plugin_int8_out.

Plugin level: fields outputScale / outputChannelScale / outputChannelShift make the int8 adder's output the codes
saturate(round_half_even((a_f * Y + b_f) / outputScale)) of its float result Y = -s * sum |qx - qw|; checked against
a float64 model of that math on every shape of test_adder2d_int8 (both word layouts, the vdbpsadbw shapes, strides,
padding, tails, batch 1 and N), AVX2 and portable again under TRTL_CPU_MASK.  A code may differ from the float64
model only where the float64 value is within float32 rounding of a half (counted, and required to be rare).

Builder level: under BuilderFlag.INT8, adder -> batch norm (scale) -> max pooling -> int8 reader (the next adder,
or an int8 fully connected layer) becomes adder writing codes -> max pooling of codes -> reader; engines with the
pass on and off (config.set_pass_enabled) against a float64 model of the quantized math and each other."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt
from test_adder2d_int8 import SHAPES, adder_plugin, reference, shared_scale

LOGGER = trt.Logger(trt.Logger.ERROR)
EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
PASS = "plugin_int8_out"


def codes64(v, s_out):
    """float64 codes of v / s_out (half to even, saturated) and a mask of values within float32 rounding of a
    half (where the kernel's float32 fused multiply-add may round the other way)."""
    t = v / float(s_out)
    frac = np.abs(t - np.floor(t) - 0.5)
    near = (frac < 1e-5 * np.maximum(1.0, np.abs(t))) & (t > -128.5) & (t < 127.5)
    return np.clip(np.rint(t), -128, 127), near


def check_codes_shape(C, F, k, s, p, H, W, N, seed=0):
    rng = np.random.default_rng(seed + 100)
    w = rng.uniform(-1.5, 1.5, (F, C, k, k)).astype(np.float32)
    x = rng.uniform(-2.5, 2.5, (N, C, H, W)).astype(np.float32)
    s_in = shared_scale(w, 2.0)
    a = rng.uniform(-0.05, 0.05, F).astype(np.float32)  # mixed signs; results spread over the code range
    b = rng.uniform(-3, 3, F).astype(np.float32)
    y64 = reference(x, w, s, p, s_in)
    z64 = a[None, :, None, None].astype(np.float64) * y64.astype(np.float32) + b[None, :, None, None]
    s_out = np.float32(np.quantile(np.abs(z64), 0.9) / 127)  # a tenth of the codes saturate
    builder = trt.Builder(LOGGER)
    net = builder.create_network(EXPLICIT)
    xi = net.add_input("x", trt.float32, x.shape)
    q = net.add_quantize(xi, net.add_constant((1,), np.array([s_in], np.float32)).get_output(0), trt.int8)
    pl = adder_plugin(w, s, p, int8Scale=s_in, outputScale=s_out, outputChannelScale=a, outputChannelShift=b)
    layer = net.add_plugin_v2([q.get_output(0)], pl)
    layer.name = "adder"
    assert layer.get_output(0).dtype == trt.int8
    dq = net.add_dequantize(layer.get_output(0), net.add_constant((1,), np.array([s_out], np.float32)).get_output(0))
    dq.get_output(0).name = "y"
    net.mark_output(dq.get_output(0))
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    assert plan is not None
    e = trt.Runtime(LOGGER).deserialize_cuda_engine(plan)
    got = e.create_execution_context().infer({"x": x})["y"].astype(np.float64) / float(s_out)
    want, near = codes64(z64, s_out)
    assert np.abs(np.rint(got) - got).max() < 1e-4  # dequantized codes: code * s_out
    got = np.rint(got)
    bad = (got != want) & ~near
    assert not bad.any(), (np.argwhere(bad)[:5], got[bad][:5], want[bad][:5])
    assert np.abs(got - want).max() <= 1 and near.mean() < 1e-2  # the exemption stays rare
    assert (np.abs(want) >= 127).any()  # saturation exercised


@pytest.mark.parametrize("shape", SHAPES)
def test_int8_output_codes_match_float64(shape):
    check_codes_shape(*shape)


@pytest.mark.parametrize("mask", ["1f", "0"])
def test_int8_output_codes_avx2_and_portable(mask):
    code = ("import sys; sys.path.insert(0, %r); import test_adder_int8_out as t\n"
            "for s in t.SHAPES: t.check_codes_shape(*s)\n" % os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TRTL_CPU_MASK=mask)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_output_fields_are_checked():
    w = np.ones((3, 2, 3, 3), np.float32)
    with pytest.raises(trt.PluginError, match="outputScale.*needs 'int8Scale'"):
        adder_plugin(w, 1, 0, outputScale=0.1)
    with pytest.raises(trt.PluginError, match="outputScale.*positive finite"):
        adder_plugin(w, 1, 0, int8Scale=0.1, outputScale=-1.0)
    with pytest.raises(trt.PluginError, match="outputChannelScale.*exactly 3"):
        adder_plugin(w, 1, 0, int8Scale=0.1, outputScale=0.1, outputChannelScale=np.ones(2, np.float32))
    with pytest.raises(trt.PluginError, match="outputChannelShift.*not finite"):
        adder_plugin(w, 1, 0, int8Scale=0.1, outputScale=0.1,
                     outputChannelShift=np.array([0, np.inf, 0], np.float32))
    with pytest.raises(trt.PluginError, match="need 'outputScale'"):
        adder_plugin(w, 1, 0, int8Scale=0.1, outputChannelShift=np.zeros(3, np.float32))
    # codes out need codes in
    builder = trt.Builder(LOGGER)
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (1, 2, 5, 5))
    with pytest.raises(trt.PluginError, match="writes INT8 codes.*input 0 is FLOAT"):
        net.add_plugin_v2([x], adder_plugin(w, 1, 0, int8Scale=0.1, outputScale=0.1))


# ---- the builder pass -------------------------------------------------------------------------------------

def net_adder_bn_pool(rng, N, C, H, W, F1, F2, k1, k2, reader="adder", with_scale=True, with_pool=True):
    """Weights and an engine factory for x -> adder1 -> [scale] -> [max pool 2x2] -> adder2 / int8 FC -> y."""
    w1 = rng.uniform(-1, 1, (F1, C, k1, k1)).astype(np.float32)
    w2 = rng.uniform(-1, 1, (F2, F1, k2, k2)).astype(np.float32)
    a = rng.uniform(-0.06, 0.08, F1).astype(np.float32)
    b = rng.uniform(-1, 1, F1).astype(np.float32)
    x = rng.uniform(-2, 2, (N, C, H, W)).astype(np.float32)
    r1 = 2.0
    return dict(x=x, w1=w1, w2=w2, a=a, b=b, r1=r1, k1=k1, k2=k2, reader=reader, with_scale=with_scale,
                with_pool=with_pool)


def model64(m, r2):
    """float64 model of the quantized math: adder1 on codes, scale, max pool, codes of scale s2, then adder2 on
    codes; also the mask of near-half codes and s2."""
    s1 = shared_scale(m["w1"], m["r1"])
    y1 = reference(m["x"], m["w1"], 1, 0, s1).astype(np.float32).astype(np.float64)
    z = y1
    if m["with_scale"]:
        z = m["a"][None, :, None, None].astype(np.float64) * y1 + m["b"][None, :, None, None]
    if m["with_pool"]:
        N, F, H, W = z.shape
        z = z[:, :, :H // 2 * 2, :W // 2 * 2].reshape(N, F, H // 2, 2, W // 2, 2).max(axis=(3, 5))
    s2 = shared_scale(m["w2"], r2)
    q2, near = codes64(z, s2)
    return -s2 * adder_sums(q2, m["w2"], s2), near, s2


def adder_sums(q, w, s):
    qw = np.clip(np.rint(w.astype(np.float32) / np.float32(s)), -127, 127).astype(np.int64)
    N, C, H, W = q.shape
    F, _, k, _ = w.shape
    OH, OW = H - k + 1, W - k + 1
    acc = np.zeros((N, F, OH, OW), np.int64)
    q = q.astype(np.int64)
    for i in range(k):
        for j in range(k):
            acc += np.abs(q[:, None, :, i:i + OH, j:j + OW] - qw[None, :, :, i, j, None, None]).sum(2)
    return acc.astype(np.float64)


def build_net(m, r2, pass_on, wfc=None, rfc=None):
    builder = trt.Builder(LOGGER)
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, m["x"].shape)
    x.dynamic_range = (-m["r1"], m["r1"])
    l1 = net.add_plugin_v2([x], adder_plugin(m["w1"], 1, 0))
    l1.name = "adder1"
    t = l1.get_output(0)
    if m["with_scale"]:
        sc = net.add_scale(t, trt.ScaleMode.CHANNEL, m["b"], m["a"], np.ones_like(m["a"]))
        sc.name = "bn1"
        t = sc.get_output(0)
    if m["with_pool"]:
        pool = net.add_pooling(t, trt.PoolingType.MAX, (2, 2))
        pool.stride = (2, 2)
        pool.name = "pool1"
        t = pool.get_output(0)
    t.dynamic_range = (-r2, r2)
    if m["reader"] == "adder":
        l2 = net.add_plugin_v2([t], adder_plugin(m["w2"], 1, 0))
        l2.name = "adder2"
        out = l2.get_output(0)
    else:
        fc = net.add_fully_connected(t, wfc.shape[0], wfc, np.zeros(wfc.shape[0], np.float32))
        fc.name = "fc"
        out = fc.get_output(0)
    out.name = "y"
    net.mark_output(out)
    cfg = builder.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.INT8)
    cfg.set_pass_enabled(PASS, pass_on)
    plan = builder.build_serialized_network(net, cfg)
    assert plan is not None
    return trt.Runtime(LOGGER).deserialize_cuda_engine(plan)


def layers(engine):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return info["layers"]


# (N, C, H, W, F1, F2, k1, k2): AdderNet's first block at batch 3 and 1, odd maps (pool drops a row/column)
NETS = [
    (3, 1, 28, 28, 20, 50, 5, 5),
    (1, 1, 28, 28, 20, 50, 5, 5),
    (2, 3, 13, 15, 9, 5, 3, 3),
]


@pytest.mark.parametrize("shape", NETS)
@pytest.mark.parametrize("variant", ["scale_pool", "pool_only", "scale_only"])
def test_pass_on_and_off_against_float64(shape, variant):
    N, C, H, W, F1, F2, k1, k2 = shape
    rng = np.random.default_rng(sum(shape) + len(variant))
    m = net_adder_bn_pool(rng, N, C, H, W, F1, F2, k1, k2, with_scale=variant != "pool_only",
                          with_pool=variant != "scale_only")
    # r2 from the float64 intermediate: the range the calibrator would see
    s1 = shared_scale(m["w1"], m["r1"])
    y1 = reference(m["x"], m["w1"], 1, 0, s1)
    z = m["a"][None, :, None, None] * y1 + m["b"][None, :, None, None] if m["with_scale"] else y1
    r2 = float(np.abs(z).max()) * 0.9  # a little saturation
    want, near, s2 = model64(m, r2)
    outs = {}
    for on in (True, False):
        e = build_net(m, r2, on)
        names = [layer["name"] for layer in layers(e)]
        has_q = any("Quantize for adder2" in n for n in names)
        assert has_q != on, names  # on: adder1 writes the codes adder2 reads; off: the quantize step stays
        if on and m["with_scale"]:
            assert any(n.startswith("adder1 + bn1") for n in names), names
        y = e.create_execution_context().infer({"x": m["x"]})["y"]
        # a code that rounds the other way near a half moves each sum it enters by at most 1
        tol = s2 * (near.reshape(near.shape[0], -1).sum(1)[:, None, None, None] * m["k2"] ** 2 + 1e-3)
        assert np.all(np.abs(y - want) <= tol + 1e-6 * np.abs(want).max()), (on, np.abs(y - want).max(), s2)
        outs[on] = y
    np.testing.assert_allclose(outs[True], outs[False], atol=s2 * (near.sum() * k2 * k2 + 1e-3))


def test_pass_feeds_int8_fully_connected():
    rng = np.random.default_rng(7)
    m = net_adder_bn_pool(rng, 4, 1, 14, 14, 6, 0, 3, 1, reader="fc")
    wfc = rng.uniform(-0.2, 0.2, (10, 6 * 6 * 6)).astype(np.float32)
    s1 = shared_scale(m["w1"], m["r1"])
    z = m["a"][None, :, None, None] * reference(m["x"], m["w1"], 1, 0, s1) + m["b"][None, :, None, None]
    r2 = float(np.abs(z).max())
    ys = {}
    for on in (True, False):
        e = build_net(m, r2, on, wfc=wfc)
        names = [layer["name"] for layer in layers(e)]
        assert any(n.startswith("adder1 + bn1") for n in names) == on, names
        ys[on] = e.create_execution_context().infer({"x": m["x"]})["y"].reshape(4, 10)
    # float64: pooled z quantized with s2 = r2 / 127, FC on the dequantized codes (the int8 FC's weights add their
    # own rounding: compared at that tolerance)
    zp = z.reshape(4, 6, 6, 2, 6, 2).max(axis=(3, 5))
    s2 = np.float32(r2) / np.float32(127)
    xq = np.clip(np.rint(zp / s2), -128, 127) * s2
    want = xq.reshape(4, -1) @ wfc.T.astype(np.float64)
    scale = np.abs(want).max()
    np.testing.assert_allclose(ys[True], want, atol=0.02 * scale)
    np.testing.assert_allclose(ys[True], ys[False], atol=1e-3 * scale + 2 * float(s2) * np.abs(wfc).max())


def test_pass_listed_and_plan_keeps_codes(tmp_path):
    assert PASS in [p[0] for p in trt.builder_passes()]
    rng = np.random.default_rng(3)
    m = net_adder_bn_pool(rng, 2, 1, 12, 12, 4, 3, 3, 3)
    e = build_net(m, 1.0, True)
    y = e.create_execution_context().infer({"x": m["x"]})["y"]
    e2 = trt.Runtime(LOGGER).deserialize_cuda_engine(e.serialize())
    np.testing.assert_array_equal(e2.create_execution_context().infer({"x": m["x"]})["y"], y)
