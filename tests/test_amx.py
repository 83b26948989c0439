"""Intel AMX kernels (issue #11): the int8 layers of a QDQ network run on "qlinear.amx_int8" (tdpbsud / tdpbusd tiles)
where the CPU has AMX-INT8, and match a float64 numpy model of the quantized math; with the AMX bits masked off
(TRTL_CPU_MASK, in a subprocess) the same network runs on "qlinear.int8" with the same results; a plan that used
AMX refuses to load on a host without it, naming the feature.  The AMX tests skip on CPUs without AMX."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt

from conftest import Net
from test_quantize_fuse import _fq, _int8_weights, conv2d_np, q_np

ROOT = os.path.dirname(os.path.abspath(__file__))
FEATS = trt.cpu_features()
HAS_AMX_INT8 = "amx_int8" in FEATS and "avx512vnni" in FEATS
needs_amx_int8 = pytest.mark.skipif(not HAS_AMX_INT8, reason="CPU lacks AMX-INT8 (or the OS refused the tile state)")
AMX_BITS = (1 << 10) | (1 << 11) | (1 << 12)  # TRTL_CPU_AMX_TILE, _BF16, _INT8
NO_AMX_MASK = "%x" % (0xFFFFFFFF & ~AMX_BITS)
S_IN, Z_IN = 0.02, 128


def _int8_net(rng):
    """x -> Q/DQ -> {3x3 stride-2 padded conv (37 maps, bias), 1x1 conv (40 maps)} and a fully connected layer
    (MatMul with constant weights) on the flattened 1x1 output; float outputs, no output quantization."""
    x = (rng.standard_normal((2, 19, 9, 11)) * 1.3).astype(np.float32)
    q1, s1, w1 = _int8_weights(rng, (37, 19, 3, 3))
    q2, s2, w2 = _int8_weights(rng, (40, 19, 1, 1), per_channel=False)
    b1 = (rng.standard_normal(37) * 0.2).astype(np.float32)

    def make(net, xin):
        xf = _fq(net, xin, S_IN, Z_IN)
        c1 = net.add_convolution_nd(xf, 37, (3, 3), w1, b1)
        c1.padding_nd = (1, 1)
        c1.stride_nd = (2, 2)
        c2 = net.add_convolution_nd(xf, 40, (1, 1), w2)
        return [("y1", c1.get_output(0)), ("y2", c2.get_output(0))]

    xq = q_np(x, S_IN, Z_IN, 0, 255) - Z_IN
    s_in = np.float64(np.float32(S_IN))
    y1 = conv2d_np(xq, q1.astype(np.float64), stride=2, pad=1) * s_in * s1.astype(np.float64).reshape(1, -1, 1, 1)
    y1 += b1.reshape(1, -1, 1, 1)
    y2 = conv2d_np(xq, q2.astype(np.float64)) * s_in * np.float64(s2[0])
    return x, make, {"y1": y1, "y2": y2}


def _build(make, x):
    n = Net()  # avg_timing_iterations = 0: the first candidate that applies (AMX is listed first)
    xin = n.network.add_input("x", trt.float32, x.shape)
    for name, t in make(n.network, xin):
        t.name = name
        n.network.mark_output(t)
    plan = n.builder.build_serialized_network(n.network, n.config)
    assert plan is not None
    eng = trt.Runtime(n.logger).deserialize_cuda_engine(plan)
    layers = json.loads(eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]
    return bytes(plan), layers, eng.create_execution_context().infer({"x": x})


def test_int8_convolutions_on_the_best_int8_kernel_match_float64(rng):
    """On AMX hosts the two convolutions run on qlinear.amx_int8, elsewhere (or masked) on qlinear.int8; either way
    the outputs equal the float64 model up to float rounding of the scales (the int32 sums are exact)."""
    x, make, want = _int8_net(rng)
    _, layers, out = _build(make, x)
    kernel = "qlinear.amx_int8" if HAS_AMX_INT8 else "qlinear.int8"
    assert [l["kernel"] for l in layers] == [kernel, kernel], layers
    for name, ref in want.items():
        got = out[name].astype(np.float64)
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=2e-6, atol=2e-6 * np.abs(ref).max())


@needs_amx_int8
def test_masked_amx_runs_the_vnni_kernel_with_the_same_results():
    """The same test in a subprocess with the AMX bits of TRTL_CPU_MASK cleared: qlinear.int8 runs, same model."""
    env = dict(os.environ, TRTL_CPU_MASK=NO_AMX_MASK)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        __file__ + "::test_int8_convolutions_on_the_best_int8_kernel_match_float64"],
                       capture_output=True, text=True, timeout=300, env=env, cwd=os.path.dirname(ROOT))
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]


def test_cpu_mask_of_the_fuzzers_clears_amx():
    """TRTL_CPU_MASK=2FF (the fuzzers' mask) hides every AMX bit."""
    env = dict(os.environ, TRTL_CPU_MASK="2FF")
    r = subprocess.run([sys.executable, "-c", "import trtlite as t; print(t.cpu_features())"], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "amx" not in r.stdout, r.stdout


_LOAD = r"""
import sys, trtlite as trt
plan = open(sys.argv[1], "rb").read()
try:
    e = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
    print("LOADED")
except trt.PlanError as err:
    print("PLANERROR", err)
"""


@needs_amx_int8
def test_amx_plan_on_a_host_without_amx_fails_naming_the_feature(rng, tmp_path):
    """As for bf16 plans: a plan keeps its kernels, so one with qlinear.amx_int8 refuses to load where AMX is
    missing (PlanError naming it) and loads where it is present."""
    x, make, _ = _int8_net(rng)
    plan, layers, _ = _build(make, x)
    assert "qlinear.amx_int8" in [l["kernel"] for l in layers]
    path = str(tmp_path / "amx.plan")
    open(path, "wb").write(plan)

    def load(mask):
        env = dict(os.environ, TRTL_CPU_MASK=mask)
        r = subprocess.run([sys.executable, "-c", _LOAD, path], capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        return r.stdout

    out = load(NO_AMX_MASK)
    assert out.startswith("PLANERROR") and "amx_tile" in out and "amx_int8" in out, out
    assert load("ffffffff").startswith("LOADED")


# ---- bf16 ------------------------------------------------------------------------------------------------------

HAS_AMX_BF16 = "amx_bf16" in FEATS and "avx512bf16" in FEATS
needs_amx_bf16 = pytest.mark.skipif(not HAS_AMX_BF16, reason="CPU lacks AMX-BF16 (or the OS refused the tile state)")


def _bf16_round(a):
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("geom", [(35, 70, 3, 2, 1), (64, 33, 1, 1, 0)])  # C, K, kernel, stride, pad
def test_bf16_convolution_on_the_best_bf16_kernel_matches_float64(geom, rng):
    """BuilderFlag.BF16 without timing: the first bf16 kernel, convolution.amx_bf16 on AMX hosts (else
    convolution.bf16_gemm, or fp32 without AVX512_BF16), within the bf16-rounded-math bound of a float64 model."""
    C, K, k, s, p = geom
    x = rng.standard_normal((2, C, 11, 13)).astype(np.float32)
    w = rng.standard_normal((K, C, k, k)).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    n = Net()
    n.config.set_flag(trt.BuilderFlag.BF16)
    xin = n.network.add_input("x", trt.float32, x.shape)
    conv = n.network.add_convolution_nd(xin, K, (k, k), w, b)
    conv.stride_nd = (s, s)
    conv.padding_nd = (p, p)
    y = n.network.add_activation(conv.get_output(0), trt.ActivationType.RELU).get_output(0)
    y.name = "y"
    n.network.mark_output(y)
    eng = n.build()
    layers = json.loads(eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]
    got = eng.create_execution_context().infer({"x": x})["y"].astype(np.float64)
    if HAS_AMX_BF16:
        assert layers[0]["kernel"] == "convolution.amx_bf16" and layers[0]["precision"] == "BF16", layers
    rounded = layers[0]["precision"] == "BF16"
    xr, wr = (_bf16_round(x), _bf16_round(w)) if rounded else (x, w)
    want = np.maximum(conv2d_np(xr.astype(np.float64), wr.astype(np.float64), stride=s, pad=p) +
                      b.reshape(1, -1, 1, 1), 0)
    mag = conv2d_np(np.abs(xr).astype(np.float64), np.abs(wr).astype(np.float64), stride=s, pad=p) + 1.0
    tol = 4 * (C * k * k + 4) * 2.0 ** -24 * mag + 1e-6
    assert got.shape == want.shape
    assert (np.abs(got - want) <= tol).all(), np.abs(got - want).max()


@needs_amx_bf16
def test_masked_amx_bf16_runs_the_avx512_bf16_kernel():
    """With the AMX bits masked off the same test picks convolution.bf16_gemm (the subprocess sees no AMX)."""
    env = dict(os.environ, TRTL_CPU_MASK=NO_AMX_MASK)
    code = ("import trtlite as t, json, numpy as np\n"
            "b = t.Builder(t.Logger(t.Logger.WARNING)); n = b.create_network(0); c = b.create_builder_config()\n"
            "c.set_flag(t.BuilderFlag.BF16); c.avg_timing_iterations = 0\n"
            "x = n.add_input('x', t.float32, (1, 16, 7, 7))\n"
            "w = np.ones((8, 16, 3, 3), np.float32)\n"
            "l = n.add_convolution_nd(x, 8, (3, 3), w, np.zeros(8, np.float32)); n.mark_output(l.get_output(0))\n"
            "e = b.build_engine(n, c)\n"
            "L = json.loads(e.create_engine_inspector().get_engine_information(t.LayerInformationFormat.JSON))\n"
            "y = e.create_execution_context().infer({'x': np.ones((1, 16, 7, 7), np.float32)})\n"
            "print(L['layers'][0]['kernel'], float(list(y.values())[0][0, 0, 3, 3]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["convolution.bf16_gemm", "144.0"], r.stdout


@pytest.mark.parametrize("rows", [37, 1])
def test_bf16_fully_connected_on_the_best_bf16_kernel_matches_float64(rows, rng):
    """BuilderFlag.BF16 without timing: fully_connected.amx_bf16 on AMX hosts where the rows fill a tile (37), the
    AVX512-BF16 kernel for one row (a GEMV); within the bf16-rounded-math bound of a float64 model."""
    D, K = 300, 77
    x = rng.standard_normal((rows, D, 1, 1)).astype(np.float32)
    w = rng.standard_normal((K, D)).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    n = Net()
    n.config.set_flag(trt.BuilderFlag.BF16)
    xin = n.network.add_input("x", trt.float32, x.shape)
    fc = n.network.add_fully_connected(xin, K, w, b)
    y = fc.get_output(0)
    y.name = "y"
    n.network.mark_output(y)
    eng = n.build()
    layers = json.loads(eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]
    got = eng.create_execution_context().infer({"x": x})["y"].astype(np.float64).reshape(rows, K)
    if HAS_AMX_BF16:
        want_kernel = "fully_connected.amx_bf16" if rows >= 16 else "fully_connected.bf16_gemm"
        assert layers[0]["kernel"] == want_kernel and layers[0]["precision"] == "BF16", layers
    rounded = layers[0]["precision"] == "BF16"
    xr, wr = (_bf16_round(x), _bf16_round(w)) if rounded else (x, w)
    x2 = xr.reshape(rows, D).astype(np.float64)
    want = x2 @ wr.astype(np.float64).T + b
    mag = np.abs(x2) @ np.abs(wr.astype(np.float64)).T + 1.0
    tol = 4 * (D + 4) * 2.0 ** -24 * mag + 1e-6
    assert (np.abs(got - want) <= tol).all(), np.abs(got - want).max()
