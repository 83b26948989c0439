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
