"""int8 depthwise convolutions (issue #11): Q/DQ around a depthwise convolution (groups = channels, channel
multiplier 1 or 2) becomes one int8 step (qlinear.int8) that runs the int8 library's depthwise kernel
(AVX512-VNNI / AVX-VNNI vpdpbusd, AVX2 vpmaddwd, or the portable loops), codes in and out between int8 steps.  Each
network is checked against a numpy float64 model of the quantized math (within one output step: float32 rounding
ties) and against the fp32 simulation with fuse_qdq off; the AVX2 path runs again in a subprocess with
TRTL_CPU_MASK.  The kernels themselves are checked bit-exactly in tests/c/test_qconv.c."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt

from conftest import Net
from test_quantize_fuse import _fq, _int8_weights, q_np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
F = lambda v: np.float64(np.float32(v))  # noqa: E731  (a float32 parameter, exactly, in float64)


def dwconv_np(x, w, stride, pad, dil):
    """Grouped convolution with one input channel a group (w: [C*m, 1, R, S]), float64."""
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    m = k // c
    (pt, pl, pb, pr), (sh, sw), (dh, dw) = pad, stride, dil
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - dh * (r - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (s - 1) - 1) // sw + 1
    xr = np.repeat(xp, m, axis=1)  # output channel k reads input channel k // m
    y = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(s):
            patch = xr[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
            y += patch * w[:, 0, i, j].reshape(1, -1, 1, 1)
    return y


def _build(make, x, fuse=True):
    n = Net()
    n.config.set_pass_enabled("int8_nchwc", False)  # the int8 depthwise kernels' tests (tests/test_int8_nchwc.py: blocked)
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


# (kernel, stride, padding t/l/b/r, dilation, channel multiplier, H, W): MobileNet's 3x3 / 5x5 at strides 1 and 2,
# widths with tails past 16 and 8 lanes, asymmetric padding, dilation, a multiplier of 2
GEOMS = [
    ((3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, 9, 37),
    ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, 12, 35),
    ((5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 1, 7, 19),
    ((5, 5), (2, 2), (2, 1, 2, 2), (1, 1), 2, 11, 23),
    ((3, 3), (1, 2), (2, 0, 2, 1), (2, 2), 1, 8, 41),
]


@pytest.mark.parametrize("act_type", [trt.int8, trt.uint8])
@pytest.mark.parametrize("geom", range(len(GEOMS)))
def test_depthwise_int8_chain(geom, act_type, rng):
    """x -> Q/DQ -> conv 1x1 -> Q/DQ -> depthwise [+ clip 0..6] -> Q/DQ -> conv 1x1: three int8 steps, the depthwise one
    reading and writing codes."""
    (r, s), stride, pad, dil, mult, H, W = GEOMS[geom]
    relu6 = geom % 2 == 0
    C0, C = 3, 6
    K = C * mult
    x = (rng.standard_normal((2, C0, H, W)) * 1.5).astype(np.float32)
    q1, s1, w1 = _int8_weights(rng, (C, C0, 1, 1))
    qd, sd, wd = _int8_weights(rng, (K, 1, r, s))
    q2, s2, w2 = _int8_weights(rng, (4, K, 1, 1))
    lo, hi = (-128, 127) if act_type == trt.int8 else (0, 255)
    z0, za, zb = (0, 0, 0) if act_type == trt.int8 else (118, 125, 0 if relu6 else 131)
    S0, Sa, Sb = 0.03, 0.02, 0.025

    def make(net, xin):
        c1 = net.add_convolution_nd(_fq(net, xin, S0, z0, act_type), C, (1, 1), w1)
        dw = net.add_convolution_nd(_fq(net, c1.get_output(0), Sa, za, act_type), K, (r, s), wd)
        dw.num_groups = C
        dw.stride_nd = stride
        dw.pre_padding = pad[:2]
        dw.post_padding = pad[2:]
        dw.dilation_nd = dil
        t = dw.get_output(0)
        if relu6:
            a = net.add_activation(t, trt.ActivationType.CLIP)
            a.alpha, a.beta = 0.0, 6.0
            t = a.get_output(0)
        return net.add_convolution_nd(_fq(net, t, Sb, zb, act_type), 4, (1, 1), w2).get_output(0)

    def model(x):
        cx = q_np(x, S0, z0, lo, hi) - z0
        v = np.einsum("nchw,kc->nkhw", cx, q1[:, :, 0, 0].astype(np.float64)) * F(S0) * s1.reshape(1, -1, 1, 1)
        ca = q_np(v, Sa, za, lo, hi) - za
        v = dwconv_np(ca, qd.astype(np.float64), stride, pad, dil) * F(Sa) * sd.astype(np.float64).reshape(1, -1, 1, 1)
        if relu6:
            v = np.clip(v, 0.0, 6.0)
        cb = q_np(v, Sb, zb, lo, hi) - zb
        return np.einsum("nchw,kc->nkhw", cb, q2[:, :, 0, 0].astype(np.float64)) * F(Sb) * s2.reshape(1, -1, 1, 1)

    got, layers = _build(make, x)
    off, _ = _build(make, x, fuse=False)
    assert [l["type"] for l in layers] == ["QLINEAR"] * 3, [(l["name"], l["type"]) for l in layers]
    dwl = layers[1]
    assert dwl["kernel"] in ("qlinear.int8", "qlinear.amx_int8"), dwl["kernel"]
    t = trt.DataType(act_type).name
    assert dwl["inputs"][0]["dtype"] == t and dwl["outputs"][0]["dtype"] == t, (dwl["inputs"], dwl["outputs"])
    ref = model(x)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    step = F(Sb) * np.abs(q2).reshape(4, -1).sum(1).max() * s2.max()  # one step of the depthwise output, through conv2
    _check(got, ref, step, "int8")
    _check(off, ref, step, "fp32 simulation")


def test_depthwise_int8_float_in_and_out(rng):
    """A depthwise step alone (float input quantized in the kernel, fake-quantized float output) with a residual add
    fused into its epilogue: x -> Q/DQ -> dw 3x3 -> Q/DQ -> + Q/DQ(x) -> Q/DQ."""
    C, H, W = 5, 6, 21
    x = rng.standard_normal((1, C, H, W)).astype(np.float32)
    qd, sd, wd = _int8_weights(rng, (C, 1, 3, 3))
    S0, Sa, So = 0.0211, 0.0313, 0.0407  # not commensurate: few float32 rounding ties

    def make(net, xin):
        xq = _fq(net, xin, S0, 0, trt.int8)
        dw = net.add_convolution_nd(xq, C, (3, 3), wd)
        dw.num_groups = C
        dw.padding_nd = (1, 1)
        a = _fq(net, dw.get_output(0), Sa, 0, trt.int8)
        return _fq(net, net.add_elementwise(a, xq, trt.ElementWiseOperation.SUM).get_output(0), So, 0, trt.int8)

    cx = q_np(x, S0, 0, -128, 127)
    v = dwconv_np(cx, qd.astype(np.float64), (1, 1), (1, 1, 1, 1), (1, 1)) * F(S0) * sd.astype(np.float64).reshape(
        1, -1, 1, 1)
    v = q_np(v, Sa, 0, -128, 127) * F(Sa) + cx * F(S0)
    ref = q_np(v, So, 0, -128, 127) * F(So)
    got, layers = _build(make, x)
    assert "QLINEAR" in [l["type"] for l in layers] and "ELEMENTWISE" not in [l["type"] for l in layers], layers
    _check(got, ref, F(So), "depthwise + residual")


@pytest.mark.skipif(bool(os.environ.get("TRTL_CPU_MASK")), reason="runs only in the parent")
def test_depthwise_on_the_avx2_path():
    """The chain tests again in a process whose TRTL_CPU_MASK hides AVX-512 and AVX-VNNI (1f: the AVX2 kernel, what
    CPUs without VNNI run); the AVX-VNNI and portable paths are checked bit-exactly by tests/c/test_qconv.c."""
    env = dict(os.environ, TRTL_CPU_MASK="1f")
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--rootdir", ROOT,
                           os.path.abspath(__file__), "-k", "chain"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "10 passed" in proc.stdout, proc.stdout[-2000:]
