"""Reduced precision at layer level: BuilderFlag.BF16 / FP16, layer.precision and set_output_type under
OBEY/PREFER_PRECISION_CONSTRAINTS, the precision shown by the inspector, recorded in plans (version 3; version 2
plans still load) and the CPU feature a bf16 plan needs (TRTL_CPU_MASK in a subprocess).

Accuracy of the bf16 layers: outputs against a float64 reference computed from the bf16-rounded input and weights
(round to nearest even, 8-bit significand).  The kernels accumulate exact bf16 x bf16 products in fp32, so the error
bound per output element is (K + 4) * 2^-24 * sum|x_i w_i| (K: dot-product depth), which these tests widen to
4 * (K + 4) * 2^-24 * sum|x_i w_i| + 1e-6 for the epilogue.  Against the unrounded fp32 math the error is instead
at most 2^-8 * 1.01 * sum|x_i w_i| (each operand rounds by at most 2^-9 relative); the tests check both, and that
the BF16 build really rounds (it is 100x closer to the rounded math than to the unrounded one).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt

HAS_BF16 = "avx512bf16" in trt.cpu_features()
needs_bf16 = pytest.mark.skipif(not HAS_BF16, reason="CPU lacks AVX512_BF16")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NO_BF16_MASK = "%x" % (0xFFFFFFFF & ~(1 << 9))  # TRTL_CPU_MASK without TRTL_CPU_AVX512BF16


class Rec(trt.ILogger):
    """Keeps every message."""

    def __init__(self):
        trt.ILogger.__init__(self)
        self.msgs = []

    def log(self, severity, msg):
        """Records (severity, message)."""
        self.msgs.append((severity, msg))

    def text(self, severity=None):
        """Messages (of one severity) joined by newlines."""
        return "\n".join(m for s, m in self.msgs if severity is None or s == severity)


def bf16_round(a):
    """float32 -> bf16 -> float32, round to nearest even (finite inputs)."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def make_net(kind, rng, logger=None, act=True):
    """A network of one fully connected or convolution layer (+ ReLU): (builder, network, layer, weights, bias, x)."""
    b = trt.Builder(logger or trt.Logger(trt.Logger.WARNING))
    net = b.create_network(0)
    if kind == "fc":
        shape, w = (37, 300, 1, 1), rng.standard_normal((77, 300)).astype(np.float32)
        x = net.add_input("x", trt.float32, shape)
        bias = rng.standard_normal(77).astype(np.float32)
        layer = net.add_fully_connected(x, 77, w, bias)
    else:
        shape, w = (2, 24, 15, 13), rng.standard_normal((40, 24, 3, 3)).astype(np.float32)
        x = net.add_input("x", trt.float32, shape)
        bias = rng.standard_normal(40).astype(np.float32)
        layer = net.add_convolution_nd(x, 40, (3, 3), w, bias)
        layer.padding_nd = (1, 1)
    layer.name = "gemm_layer"
    out = layer.get_output(0)
    if act:
        relu = net.add_activation(out, trt.ActivationType.RELU)
        relu.name = "relu"
        out = relu.get_output(0)
    out.name = "y"
    net.mark_output(out)
    xv = rng.standard_normal(shape).astype(np.float32)
    return b, net, layer, w, bias, xv


def reference(kind, x, w, bias, act=True, absval=False):
    """float64 result of the layer on (already rounded) x and w; absval: sum |x||w| instead, no bias."""
    x = np.abs(x).astype(np.float64) if absval else x.astype(np.float64)
    w = np.abs(w).astype(np.float64) if absval else w.astype(np.float64)
    b = 0.0 if absval else bias.astype(np.float64)
    if kind == "fc":
        y = (x.reshape(x.shape[0], -1) @ w.T + b).reshape(x.shape[0], -1, 1, 1)
    else:
        N, C, H, W = x.shape
        K = w.shape[0]
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        cols = np.stack([xp[:, :, i:i + H, j:j + W] for i in range(3) for j in range(3)], axis=2)  # N,C,9,H,W
        y = np.einsum("nckhw,ock->nohw", cols, w.reshape(K, C, 9)) + (b if absval else b[None, :, None, None])
    return np.maximum(y, 0) if act and not absval else y


def depth(kind, w):
    return int(np.prod(w.shape[1:]))


def layers_of(engine):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return info["layers"]


def run(engine, x):
    return engine.create_execution_context().infer({"x": x})["y"]


def check_bf16_accuracy(kind, y, x, w, bias):
    """y within the bf16-rounded-math bound, and visibly rounded (not the fp32 result)."""
    want = reference(kind, bf16_round(x), bf16_round(w), bias)
    mag = reference(kind, bf16_round(x), bf16_round(w), bias, absval=True) + 1.0
    tol = 4 * (depth(kind, w) + 4) * 2.0 ** -24 * mag + 1e-6
    err = np.abs(y.astype(np.float64) - want)
    assert (err <= tol).all(), "max error %g over the bound (worst excess %g)" % (err.max(), (err - tol).max())
    exact = reference(kind, x, w, bias)
    assert np.abs(y - exact).max() > 100 * err.max(), "the output is not the bf16-rounded math"
    # and bf16's own accuracy against the unrounded math: each operand rounds by at most 2^-9 relative, so each
    # product by at most 2^-8 (+2^-18): |y - exact| <= 2^-8 * 1.01 * sum|x_i w_i| (+ the accumulation bound)
    assert (np.abs(y - exact) <= 2.0 ** -8 * 1.01 * mag + tol).all()


# ---- BF16 kernels at layer level --------------------------------------------------------------------------


@needs_bf16
@pytest.mark.parametrize("kind", ["fc", "conv"])
def test_layer_precision_bf16_obeyed(kind, rng):
    b, net, layer, w, bias, x = make_net(kind, rng)
    layer.precision = trt.DataType.BF16
    assert layer.precision == trt.DataType.BF16 and layer.precision_is_set
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.OBEY_PRECISION_CONSTRAINTS)
    engine = b.build_engine(net, cfg)
    layers = layers_of(engine)
    assert layers[0]["precision"] == "BF16" and layers[0]["kernel"].endswith((".bf16_gemm", ".amx_bf16")), layers
    assert "relu" in layers[0]["name"]  # the epilogue stays fused (fp32, on the accumulators)
    check_bf16_accuracy(kind, run(engine, x), x, w, bias)
    oneline = engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE)
    assert oneline.splitlines()[0].endswith(" BF16")


@needs_bf16
@pytest.mark.parametrize("kind", ["fc", "conv"])
def test_set_output_type_bf16_is_a_precision_request(kind, rng):
    b, net, layer, w, bias, x = make_net(kind, rng, act=False)
    layer.set_output_type(0, trt.DataType.BF16)
    assert layer.output_type_is_set(0)
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.OBEY_PRECISION_CONSTRAINTS)
    engine = b.build_engine(net, cfg)
    assert layers_of(engine)[0]["precision"] == "BF16"
    assert engine.get_tensor_dtype("y") == trt.DataType.FLOAT  # tensors stay fp32
    want = reference(kind, bf16_round(x), bf16_round(w), bias, act=False)
    mag = reference(kind, bf16_round(x), bf16_round(w), bias, absval=True) + 1.0
    assert (np.abs(run(engine, x) - want) <= 4 * (depth(kind, w) + 4) * 2.0 ** -24 * mag + 1e-6).all()


@needs_bf16
def test_bf16_flag_admits_bf16_kernels_and_timing_decides(rng):
    """With BuilderFlag.BF16 the bf16 kernel competes by timing; without it it is never a candidate.  Either way the
    log says, per layer, why a layer stayed fp32, and the output is within bf16 accuracy."""
    rec = Rec()
    b, net, layer, w, bias, x = make_net("fc", rng, logger=rec)
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.BF16)
    engine = b.build_engine(net, cfg)
    first = layers_of(engine)[0]
    if first["precision"] == "BF16":
        check_bf16_accuracy("fc", run(engine, x), x, w, bias)
    else:
        assert any("layer 'gemm_layer + relu': stays FLOAT: fully_connected.%s was slower" % k in rec.text()
                   for k in ("bf16_gemm", "amx_bf16")), rec.text()
    # without the flag: never bf16, and nothing logged about precision
    rec2 = Rec()
    b2, net2, _, _, _, _ = make_net("fc", np.random.default_rng(0), logger=rec2)
    engine2 = b2.build_engine(net2, b2.create_builder_config())
    assert all(L["precision"] == "FLOAT" for L in layers_of(engine2))
    assert "stays FLOAT" not in rec2.text()


@needs_bf16
def test_bf16_without_timing_takes_the_bf16_kernel(rng):
    b, net, layer, w, bias, x = make_net("conv", rng)
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.BF16)
    cfg.avg_timing_iterations = 0
    engine = b.build_engine(net, cfg)
    amx = "amx_bf16" in trt.cpu_features()  # the AMX kernel is listed first (tests/test_amx.py)
    assert layers_of(engine)[0]["kernel"] == ("convolution.amx_bf16" if amx else "convolution.bf16_gemm")
    check_bf16_accuracy("conv", run(engine, x), x, w, bias)


@needs_bf16
def test_bf16_flag_logs_layers_without_a_bf16_kernel(rng):
    rec = Rec()
    b = trt.Builder(rec)
    net = b.create_network(0)
    x = net.add_input("x", trt.float32, (1, 8, 5, 5))
    pool = net.add_pooling_nd(x, trt.PoolingType.MAX, (2, 2))
    pool.name = "pool"
    net.mark_output(pool.get_output(0))
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.BF16)
    engine = b.build_engine(net, cfg)
    assert layers_of(engine)[0]["precision"] == "FLOAT"
    assert "layer 'pool': stays FLOAT: no BF16 kernel for this POOLING layer on this CPU" in rec.text(trt.ILogger.Severity.INFO)


# ---- constraints -------------------------------------------------------------------------------------------


def test_obey_unsatisfiable_precision_is_an_error_naming_the_layer(rng):
    b, net, layer, w, bias, x = make_net("conv", rng)
    net.get_layer(1).precision = trt.DataType.BF16  # the ReLU: no bf16 activation kernel (it is fused, too)
    layer.precision = trt.DataType.HALF  # no fp16 convolution kernel
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.OBEY_PRECISION_CONSTRAINTS)
    with pytest.raises(trt.Error) as ei:
        b.build_engine(net, cfg)
    msg = str(ei.value)
    assert "gemm_layer" in msg and "HALF" in msg and "OBEY_PRECISION_CONSTRAINTS" in msg, msg


def test_prefer_unsatisfiable_precision_warns_and_falls_back(rng):
    rec = Rec()
    b, net, layer, w, bias, x = make_net("conv", rng, logger=rec)
    layer.precision = trt.DataType.HALF
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.PREFER_PRECISION_CONSTRAINTS)
    engine = b.build_engine(net, cfg)
    assert layers_of(engine)[0]["precision"] == "FLOAT"
    warn = rec.text(trt.ILogger.Severity.WARNING)
    assert "gemm_layer" in warn and "no HALF kernel" in warn and "PREFER_PRECISION_CONSTRAINTS" in warn, warn
    np.testing.assert_allclose(run(engine, x), reference("conv", x, w, bias), rtol=1e-4, atol=1e-4)


def test_precision_ignored_without_constraint_flags(rng):
    """As TensorRT: layer.precision constrains only under OBEY/PREFER_PRECISION_CONSTRAINTS."""
    b, net, layer, w, bias, x = make_net("fc", rng)
    layer.precision = trt.DataType.HALF
    engine = b.build_engine(net, b.create_builder_config())
    assert layers_of(engine)[0]["precision"] == "FLOAT"


@needs_bf16
def test_float_constraint_keeps_a_layer_fp32_under_bf16(rng):
    rec = Rec()
    b, net, layer, w, bias, x = make_net("conv", rng, logger=rec)
    layer.precision = trt.DataType.FLOAT
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.BF16)
    cfg.set_flag(trt.BuilderFlag.OBEY_PRECISION_CONSTRAINTS)
    cfg.avg_timing_iterations = 0  # would take the bf16 kernel first without the constraint
    engine = b.build_engine(net, cfg)
    assert layers_of(engine)[0]["precision"] == "FLOAT"
    assert "stays FLOAT: precision constraint FLOAT" in rec.text()
    np.testing.assert_allclose(run(engine, x), reference("conv", x, w, bias), rtol=1e-4, atol=1e-4)


def test_bf16_is_a_tensor_type_too():
    # TensorRT 10: BF16 tensors as well as the precision (tests/test_bf16.py tests them)
    b = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = b.create_network(0)
    assert net.add_input("x", trt.DataType.BF16, (1, 2)).dtype == trt.DataType.BF16


# ---- FP16 -------------------------------------------------------------------------------------------------


def f16_round(a):
    return np.asarray(a, dtype=np.float32).astype(np.float16).astype(np.float32)


@pytest.mark.skipif("avx512f" not in trt.cpu_features() or "f16c" not in trt.cpu_features(), reason="no AVX-512/F16C")
def test_half_fully_connected_stores_fp16_weights(rng):
    """fully_connected.f16_gemm: weights rounded to fp16 once, fp32 arithmetic: the output is the float64 result of
    the fp16-rounded weights and the unrounded input, within the fp32 accumulation bound."""
    b, net, layer, w, bias, x = make_net("fc", rng)
    layer.precision = trt.DataType.HALF
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.OBEY_PRECISION_CONSTRAINTS)
    engine = b.build_engine(net, cfg)
    first = layers_of(engine)[0]
    assert first["precision"] == "HALF" and first["kernel"] == "fully_connected.f16_gemm", first
    y = run(engine, x)
    want = reference("fc", x, f16_round(w), bias)
    mag = reference("fc", x, f16_round(w), bias, absval=True) + 1.0
    err = np.abs(y - want)
    assert (err <= 4 * (depth("fc", w) + 4) * 2.0 ** -24 * mag + 1e-6).all()
    assert np.abs(y - reference("fc", x, w, bias)).max() > 10 * err.max()  # the weights really are fp16


def test_fp16_flag_keeps_fp32_where_no_fp16_kernel_and_says_why(rng):
    """No fp16 arithmetic is faster than fp32 on this CPU path: FP16 only admits the fp16-weight fully connected
    kernel; other layers compute in FLOAT, the inspector says so, the log gives the reason per layer, and
    platform_has_fast_fp16 is False."""
    rec = Rec()
    b, net, layer, w, bias, x = make_net("conv", rng, logger=rec)
    assert b.platform_has_fast_fp16 is False
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.FP16)
    engine = b.build_engine(net, cfg)
    assert all(L["precision"] == "FLOAT" for L in layers_of(engine))
    assert "layer 'gemm_layer + relu': stays FLOAT: no HALF kernel" in rec.text(), rec.text()
    np.testing.assert_allclose(run(engine, x), reference("conv", x, w, bias), rtol=1e-4, atol=1e-4)


# ---- plans --------------------------------------------------------------------------------------------------


def _serialize(kind, rng, bf16):
    b, net, layer, w, bias, x = make_net(kind, rng)
    cfg = b.create_builder_config()
    if bf16:
        layer.precision = trt.DataType.BF16
        cfg.set_flag(trt.BuilderFlag.OBEY_PRECISION_CONSTRAINTS)
    return bytes(b.build_serialized_network(net, cfg)), w, bias, x


@needs_bf16
def test_bf16_plan_round_trip_keeps_precision(rng):
    plan, w, bias, x = _serialize("conv", rng, True)
    assert int.from_bytes(plan[8:12], "little") >= 3  # precision: format 3 and later
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)
    assert layers_of(engine)[0]["precision"] == "BF16"
    check_bf16_accuracy("conv", run(engine, x), x, w, bias)


_LOAD = r"""
import sys, trtlite as trt
plan = open(sys.argv[1], "rb").read()
try:
    e = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
    print("LOADED", e.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE))
except trt.PlanError as err:
    print("PLANERROR", err)
"""


def _load_masked(path, mask):
    env = dict(os.environ, TRTL_CPU_MASK=mask, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", _LOAD, path], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


@needs_bf16
def test_bf16_plan_on_a_host_without_bf16_fails_naming_the_feature(rng, tmp_path):
    """Decision: a plan keeps the kernels it was built with, so a bf16 plan refuses to load where AVX512_BF16 is
    missing (PlanError naming the feature); the other direction, a plan built where the feature is masked off, has
    fp32 kernels only and loads everywhere."""
    plan, _, _, _ = _serialize("fc", rng, True)
    path = str(tmp_path / "bf16.plan")
    open(path, "wb").write(plan)
    out = _load_masked(path, NO_BF16_MASK)
    assert out.startswith("PLANERROR") and "avx512bf16" in out and "AVX512_BF16" in out, out
    assert _load_masked(path, "ffffffff").startswith("LOADED")


_BUILD_MASKED = r"""
import sys, numpy as np, trtlite as trt
sys.path.insert(0, sys.argv[2])
import test_precision as tp
class L(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
    def log(self, sev, msg):
        if "stays FLOAT" in msg:
            print("LOG", msg)
b, net, layer, w, bias, x = tp.make_net("fc", np.random.default_rng(5), logger=L())
cfg = b.create_builder_config()
cfg.set_flag(trt.BuilderFlag.BF16)
open(sys.argv[1], "wb").write(bytes(b.build_serialized_network(net, cfg)))
"""


def test_plan_built_without_bf16_loads_on_this_host(tmp_path):
    path = str(tmp_path / "masked.plan")
    env = dict(os.environ, TRTL_CPU_MASK=NO_BF16_MASK, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", _BUILD_MASKED, path, os.path.dirname(os.path.abspath(__file__))],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "stays FLOAT: no BF16 kernel" in r.stdout and "(no AVX512_BF16)" in r.stdout, r.stdout
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(open(path, "rb").read())
    assert all(L["precision"] == "FLOAT" for L in layers_of(engine))


def test_version_4_plan_with_int8_steps_still_loads():
    """tests/data/plan_v4_qlinear.plan was written by a version-4 writer (tests/data/make_plan_v4_qlinear.py), before
    QLINEAR gained its version-5 attributes (int8 residual adds and pooling): it loads, runs its two int8 steps and
    computes the quantized math (float64 reference; within one output rounding of the fp32 epilogue)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
    try:
        import make_plan_v4_qlinear as gen
    finally:
        sys.path.pop(0)
    with open(os.path.join(ROOT, "tests/data/plan_v4_qlinear.plan"), "rb") as f:
        plan = f.read()
    assert int.from_bytes(plan[8:12], "little") == 4
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)
    assert engine is not None
    assert [L["precision"] for L in layers_of(engine)] == ["INT8", "INT8"]

    def fq(v, s):
        s = np.float64(np.float32(s))
        return np.clip(np.round(v / s), -128, 127) * s  # symmetric int8 (zero point 0), half to even

    x = np.random.default_rng(3).standard_normal((1, 3, 8, 8)).astype(np.float32)
    h = fq(x.astype(np.float64), gen.SCALES[0])
    for i, ((k, c, ks), (q, s, bias)) in enumerate(zip(gen.LAYERS, gen.params(np.random.default_rng(2026)))):
        p = ks // 2
        hp = np.pad(h, ((0, 0), (0, 0), (p, p), (p, p)))
        cols = np.stack([hp[:, :, a:a + 8, b:b + 8] for a in range(ks) for b in range(ks)], axis=2)
        w = q.astype(np.float64) * s.astype(np.float64).reshape(-1, 1, 1, 1)
        h = np.einsum("nckhw,ock->nohw", cols, w.reshape(k, c, ks * ks)) + bias.astype(np.float64)[None, :, None, None]
        if i == 0:
            h = fq(np.maximum(h, 0), gen.SCALES[1])
    got = run(engine, x)
    # a middle value whose fp32 and float64 sums straddle a rounding half may land one 0.05 step apart, moving the
    # 1x1 convolution's outputs by at most 0.05 * max|w|; everything else agrees to fp32 rounding
    w2 = gen.params(np.random.default_rng(2026))[1]
    step = 0.05 * np.abs(w2[0].astype(np.float64) * w2[1].astype(np.float64).reshape(-1, 1, 1, 1)).max()
    d = np.abs(got - h)
    assert d.max() <= step + 1e-4 and np.mean(d > 1e-4) < 0.05, (d.max(), step)


def test_version_2_plan_still_loads():
    """tests/data/plan_v2_conv_fc.plan was written by the last version-2 writer (tests/data/make_plan_v2.py, kernels
    portable): it loads, shows FLOAT precision and computes conv + ReLU + FC."""
    with open(os.path.join(ROOT, "tests/data/plan_v2_conv_fc.plan"), "rb") as f:
        plan = f.read()
    assert int.from_bytes(plan[8:12], "little") == 2
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)
    assert [L["precision"] for L in layers_of(engine)] == ["FLOAT"] * engine.num_layers
    rng = np.random.default_rng(2024)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    fw = rng.standard_normal((5, 256)).astype(np.float32)
    fb = rng.standard_normal(5).astype(np.float32)
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, :, i:i + 8, j:j + 8] for i in range(3) for j in range(3)], axis=2)
    h = np.maximum(np.einsum("nckhw,ock->nohw", cols, w.reshape(4, 3, 9)) + bias[None, :, None, None], 0)
    want = (h.reshape(1, -1) @ fw.T + fb).reshape(1, 5, 1, 1)
    np.testing.assert_allclose(run(engine, x), want, rtol=1e-4, atol=1e-4)
