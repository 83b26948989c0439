"""int8 tactics (issue #11): an int8 convolution (QLINEAR) may run its quantized math on an fp32 convolution kernel
(kernels/x86/qlinear_fp32.c, "qlinear.fp32.<kernel>"), timed by kernel selection against the int8 kernels; the pass
int8_tactics admits those candidates.  Whichever kernel runs, the outputs match a numpy float64 model of the quantized
math within one output step.  Each choice is forced: layer.precision FLOAT under OBEY_PRECISION_CONSTRAINTS keeps
the fp32 tactics only, INT8 the int8 kernels only, the pass off the int8 kernels only; the AVX2 and portable paths run
again in a subprocess with TRTL_CPU_MASK (the fp32 tactics there: im2col_sgemm / grouped_direct and the scalar
epilogue)."""
import json
import os
import re

import numpy as np
import pytest

import trtlite as trt
import trtlite._C as _C

from conftest import Net, rerun_with_cpu_mask
from test_quantize_fuse import _fq, _int8_weights, conv2d_np, q_np

F = lambda v: np.float64(np.float32(v))  # noqa: E731


def _lims(t):
    return (0, 255) if t == trt.uint8 else (-128, 127)


def _check(got, ref, step, name):
    d = np.abs(got.astype(np.float64) - ref)
    assert d.max() <= step * 1.0001 + 1e-6, "%s: max difference %.3g steps" % (name, d.max() / step)
    assert np.mean(d > 1e-6 + 1e-5 * np.abs(ref)) < 0.02, name


def _dw_np(x, w, pad):
    """Depthwise convolution, float64: x [N, C, H, W], w [C, 1, R, S]."""
    return np.concatenate([conv2d_np(x[:, c:c + 1], w[c:c + 1], pad=pad) for c in range(x.shape[1])], axis=1)


def _case(rng, act_type, H, W):
    """x -> Q/DQ -> conv 3x3 -> Q/DQ (mid) + skip codes -> relu -> Q/DQ (codes) -> depthwise 3x3 + ReLU6 -> Q/DQ
    (codes) -> conv 1x1 -> float: float and codes in, mid quantization, residual codes, codes and float out."""
    C = 12  # the depthwise layer: one block of 8 channels and a tail of 4 (qlinear.fp32.depthwise*)
    x = (rng.standard_normal((2, C, H, W)) * 1.2).astype(np.float32)
    q1, s1, w1 = _int8_weights(rng, (C, C, 3, 3))
    q2, s2, w2 = _int8_weights(rng, (C, 1, 3, 3))
    b2 = (rng.standard_normal(C) * 0.5).astype(np.float32)
    q3, s3, w3 = _int8_weights(rng, (4, C, 1, 1))
    lo, hi = _lims(act_type)
    z0, za, zo, zd = (120, 110, 30, 0) if act_type == trt.uint8 else (0, 0, 0, 0)
    S0, Sa, So, Sd = 0.025, 0.04, 0.045, 0.03

    def make(net, xin, precision):
        convs = []
        xq = _fq(net, xin, S0, z0, act_type)
        c1 = net.add_convolution_nd(xq, C, (3, 3), w1)
        c1.padding_nd = (1, 1)
        a = _fq(net, c1.get_output(0), Sa, za, act_type)
        s = net.add_elementwise(a, xq, trt.ElementWiseOperation.SUM).get_output(0)
        s = net.add_activation(s, trt.ActivationType.RELU).get_output(0)
        y = _fq(net, s, So, zo, act_type)
        c2 = net.add_convolution_nd(y, C, (3, 3), w2, b2)
        c2.num_groups = C
        c2.padding_nd = (1, 1)
        r6 = net.add_activation(c2.get_output(0), trt.ActivationType.CLIP)
        r6.alpha, r6.beta = 0.0, 6.0
        d = _fq(net, r6.get_output(0), Sd, zd, act_type)
        c3 = net.add_convolution_nd(d, 4, (1, 1), w3)
        convs = [c1, c2, c3]
        if precision is not None:  # one for all, or one a convolution
            for c, p in zip(convs, precision if isinstance(precision, (list, tuple)) else [precision] * 3):
                c.precision = p
        return c3.get_output(0)

    def model(x):
        cx = q_np(x, S0, z0, lo, hi) - z0
        v = conv2d_np(cx, q1.astype(np.float64), pad=1) * F(S0) * s1.astype(np.float64).reshape(1, -1, 1, 1)
        v = (q_np(v, Sa, za, lo, hi) - za) * F(Sa) + cx * F(S0)
        co = q_np(np.maximum(v, 0), So, zo, lo, hi) - zo
        v = _dw_np(co, q2.astype(np.float64), 1) * F(So) * s2.astype(np.float64).reshape(1, -1, 1, 1)
        v = v + b2.astype(np.float64).reshape(1, -1, 1, 1)
        cd = q_np(np.clip(v, 0, 6), Sd, zd, lo, hi) - zd
        return conv2d_np(cd, q3.astype(np.float64)) * F(Sd) * s3.astype(np.float64).reshape(1, -1, 1, 1)

    step = F(Sd) * np.abs(q3).reshape(4, -1).sum(1).max() * s3.max()  # one step of the last Q/DQ through conv 3
    return x, make, model, step


def _build(make, x, precision=None, tactics=True, timing=True, regions=True):
    n = Net()
    n.config.avg_timing_iterations = 2 if timing else 0
    n.config.set_flag(trt.BuilderFlag.DISABLE_TIMING_CACHE)
    if precision is not None:
        n.config.set_flag(trt.BuilderFlag.OBEY_PRECISION_CONSTRAINTS)
    if not tactics:
        n.config.set_pass_enabled("int8_tactics", False)
    if not regions:
        n.config.set_pass_enabled("int8_float_regions", False)
    xin = n.network.add_input("x", trt.float32, x.shape)
    out = make(n.network, xin, precision)
    out.name = "y"
    n.network.mark_output(out)
    eng = n.build()  # through a plan (QLINEAR's in_grid is stored: plan version 8)
    layers = json.loads(eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]
    return eng.create_execution_context().infer({"x": x})["y"], [l for l in layers if l["type"] == "QLINEAR"]


@pytest.mark.parametrize("act_type", [trt.uint8, trt.int8])
@pytest.mark.parametrize("shape", [(9, 7), (14, 13), (8, 8)])
def test_each_choice_matches_the_quantized_math(act_type, shape, rng):
    x, make, model, step = _case(rng, act_type, *shape)
    ref = model(x)
    fp32, lf = _build(make, x, precision=trt.float32)
    assert len(lf) == 3 and all(l["kernel"].startswith("qlinear.fp32.") and l["precision"] == "FLOAT" for l in lf), \
        [(l["kernel"], l["precision"]) for l in lf]
    # Which fp32 kernel the depthwise layer gets is the timing's choice (im2col_sgemm won it once under a loaded
    # xdist run): every qlinear.fp32.* kernel, the depthwise ones in channel blocks included, is compared with
    # qlinear.ref in tests/c/test_kernels.c; here the answer must be right whichever ran.
    int8, li = _build(make, x, precision=trt.int8)
    assert all(l["kernel"] in ("qlinear.int8", "qlinear.amx_int8") and l["precision"] == "INT8" for l in li), li
    off, lo = _build(make, x, tactics=False)
    assert all(l["precision"] == "INT8" for l in lo), [(l["kernel"], l["precision"]) for l in lo]
    timed, lt = _build(make, x)  # whichever timing keeps
    assert all(l["kernel"].startswith(("qlinear.fp32.", "qlinear.int8", "qlinear.amx_int8")) for l in lt), lt
    # the int8 tensors between the steps are the same whichever kernel runs them (without float regions)
    nr, lnr = _build(make, x, precision=trt.float32, regions=False)
    assert [o["dtype"] for l in lnr for o in l["outputs"]] == [o["dtype"] for l in li for o in l["outputs"]]
    _check(nr, ref, step, "fp32 tactics, codes between")
    for got, name in ((fp32, "fp32 tactics"), (int8, "int8 kernels"), (off, "pass off"), (timed, "timed")):
        _check(got, ref, step, name)
    # same codes: the fp32 tactics' accumulators are exact integers here, so the outputs agree to float rounding
    np.testing.assert_allclose(fp32, int8, rtol=1e-5, atol=step * 1.0001)


@pytest.mark.parametrize("act_type", [trt.uint8, trt.int8])
@pytest.mark.parametrize("shape", [(9, 7), (14, 13)])
def test_float_regions_between_fp32_tactics(act_type, shape, rng):
    """Pass int8_float_regions: a tensor between two int8 layers that both run on fp32 tactics stays FLOAT (the
    producer fake-quantizes it in its epilogue, the reader takes it without a conversion: in_grid); between an fp32
    tactic and an int8 kernel it stays codes.  Every variant matches the float64 model of the quantized math within
    one output step (built through a plan: in_grid is stored); the pass off keeps the codes."""
    x, make, model, step = _case(rng, act_type, *shape)
    ref = model(x)
    codes = "UINT8" if act_type == trt.uint8 else "INT8"
    F32, I8 = trt.float32, trt.int8
    for prec, between in (((F32, F32, F32), ["FLOAT", "FLOAT"]),   # conv1 -> dw -> conv3: both tensors FLOAT
                          ((F32, F32, I8), ["FLOAT", codes]),      # dw -> int8 conv3: codes
                          ((I8, F32, F32), [codes, "FLOAT"]),      # int8 conv1 -> dw: codes
                          ((F32, I8, F32), [codes, codes])):
        for regions in (True, False):
            got, ls = _build(make, x, precision=prec, regions=regions)
            assert [l["precision"] for l in ls] == ["FLOAT" if p == F32 else "INT8" for p in prec], ls
            want = between if regions else [codes, codes]
            assert [ls[0]["outputs"][0]["dtype"], ls[1]["outputs"][0]["dtype"]] == want, (prec, regions, ls)
            # a reader on its grid converts nothing; one quantizing a FLOAT input says so
            for i in (1, 2):
                inp = [r for r in ls[i]["reformat"] if r.startswith("input")]
                assert inp == ([] if want[i - 1] != "FLOAT" or prec[i] == F32 else ["input FLOAT->" + codes]), \
                    (prec, regions, i, ls[i]["reformat"])
            _check(got, ref, step, "regions %s, precisions %s" % (regions, prec))


def _residual_case(rng, act_type, H, W):
    """MobileNetV2's inverted residual: x -> Q/DQ -> conv A 3x3 -> Q/DQ (y) -> conv B 1x1 -> Q/DQ -> ReLU6 -> Q/DQ
    -> conv C 3x3 -> Q/DQ (mid) + y -> Q/DQ -> conv D 1x1 -> float.  y has two readers: B (input 0) and C (its
    residual); B's two Q/DQ pairs have the same parameters (quantize_static's, fused into B's epilogue on fp32
    tactics: the quantization of the clipped value equals that of the clipped quantization)."""
    C, E = 6, 11
    x = (rng.standard_normal((2, C, H, W)) * 1.2).astype(np.float32)
    qa, sa, wa = _int8_weights(rng, (C, C, 3, 3))
    ba = (rng.standard_normal(C) * 0.3).astype(np.float32)
    qb, sb, wb = _int8_weights(rng, (E, C, 1, 1))
    qc, sc, wc = _int8_weights(rng, (C, E, 3, 3))
    qd, sd, wd = _int8_weights(rng, (3, C, 1, 1))
    lo, hi = _lims(act_type)
    z0, zy, zb, zm, zo = (120, 100, 0, 128, 90) if act_type == trt.uint8 else (0, 0, 0, 0, 0)
    S0, Sy, Sb, Sm, So = 0.025, 0.05, 0.03, 0.04, 0.07  # (4a + 5b) / 7: m + y never on a rounding tie

    def make(net, xin, precision):
        xq = _fq(net, xin, S0, z0, act_type)
        ca = net.add_convolution_nd(xq, C, (3, 3), wa, ba)
        ca.padding_nd = (1, 1)
        y = _fq(net, ca.get_output(0), Sy, zy, act_type)
        cb = net.add_convolution_nd(y, E, (1, 1), wb)  # Q/DQ, Clip, Q/DQ of the same parameters, as quantize_static
        r6 = net.add_activation(_fq(net, cb.get_output(0), Sb, zb, act_type), trt.ActivationType.CLIP)
        r6.alpha, r6.beta = 0.0, 6.0
        b = _fq(net, r6.get_output(0), Sb, zb, act_type)
        cc = net.add_convolution_nd(b, C, (3, 3), wc)
        cc.padding_nd = (1, 1)
        m = _fq(net, cc.get_output(0), Sm, zm, act_type)
        s = _fq(net, net.add_elementwise(m, y, trt.ElementWiseOperation.SUM).get_output(0), So, zo, act_type)
        cd = net.add_convolution_nd(s, 3, (1, 1), wd)
        convs = [ca, cb, cc, cd]
        if precision is not None:
            for c, p in zip(convs, precision if isinstance(precision, (list, tuple)) else [precision] * 4):
                c.precision = p
        return cd.get_output(0)

    def model(x):
        per = lambda s: s.astype(np.float64).reshape(1, -1, 1, 1)  # noqa: E731
        cx = q_np(x, S0, z0, lo, hi) - z0
        v = conv2d_np(cx, qa.astype(np.float64), pad=1) * F(S0) * per(sa) + per(ba)
        cy = q_np(v, Sy, zy, lo, hi) - zy
        v = conv2d_np(cy, qb.astype(np.float64)) * F(Sy) * per(sb)
        cb = q_np(np.clip(v, 0, 6), Sb, zb, lo, hi) - zb
        v = conv2d_np(cb, qc.astype(np.float64), pad=1) * F(Sb) * per(sc)
        v = (q_np(v, Sm, zm, lo, hi) - zm) * F(Sm) + cy * F(Sy)
        co = q_np(v, So, zo, lo, hi) - zo
        return conv2d_np(co, qd.astype(np.float64)) * F(So) * per(sd)

    step = F(So) * np.abs(qd).reshape(3, -1).sum(1).max() * sd.max()
    return x, make, model, step


@pytest.mark.parametrize("act_type", [trt.uint8, trt.int8])
@pytest.mark.parametrize("shape", [(9, 7), (12, 12)])
def test_float_regions_across_residual_readers(act_type, shape, rng):
    """A tensor read by an int8 layer's input 0 and by another one's residual (the inverted residual block) stays
    FLOAT when its producer and both readers run on fp32 tactics: the residual reader takes it as a float residual
    (the same values (q - z) * s).  A residual reader on an int8 kernel keeps the codes.  Pass on and off, against the
    float64 model of the quantized math within one output step."""
    x, make, model, step = _residual_case(rng, act_type, *shape)
    ref = model(x)
    codes = "UINT8" if act_type == trt.uint8 else "INT8"
    F32, I8 = trt.float32, trt.int8
    for prec, y_type in (((F32, F32, F32, F32), "FLOAT"), ((F32, F32, I8, F32), codes), ((F32, I8, F32, F32), codes)):
        for regions in (True, False):
            got, ls = _build(make, x, precision=prec, regions=regions)
            assert [l["precision"] for l in ls] == ["FLOAT" if p == F32 else "INT8" for p in prec], ls
            assert ls[0]["outputs"][0]["dtype"] == (y_type if regions else codes), (prec, regions, ls[0])
            assert [i["dtype"] for i in ls[2]["inputs"]][1] == (y_type if regions else codes), (prec, regions, ls[2])
            _check(got, ref, step, "regions %s, precisions %s" % (regions, prec))


def test_untimed_build_keeps_int8_and_the_log_says_why(rng):
    """Without timing the int8 kernel comes first; with timing the build log names both candidates' times."""
    x, make, _, _ = _case(rng, trt.int8, 8, 8)
    _, layers = _build(make, x, timing=False)
    assert all(l["precision"] == "INT8" for l in layers), layers
    msgs = []

    class Log(trt.ILogger):
        def log(self, severity, msg):
            msgs.append(msg)

    builder = trt.Builder(Log())
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    cfg = builder.create_builder_config()
    cfg.avg_timing_iterations = 2
    cfg.set_flag(trt.BuilderFlag.DISABLE_TIMING_CACHE)
    cfg.set_pass_enabled("int8_nchwc", False)  # (else the blocked layers are NCHWC_CONV, not timed against int8)
    out = make(net, net.add_input("x", trt.float32, x.shape), None)
    net.mark_output(out)
    assert builder.build_serialized_network(net, cfg) is not None
    lines = [m for m in msgs if "runs its int8 math on an fp32 kernel" in m or "stays INT8" in m]
    # the fastest int8 kernel first (qlinear.int8, or qlinear.amx_int8 where the CPU has AMX), then the fastest fp32 one
    pat = re.compile(r": (stays INT8|runs its int8 math on an fp32 kernel): qlinear\.(?!fp32\.)\S+ [\d.]+ ms, "
                     r"qlinear\.fp32\.\S+ [\d.]+ ms$")
    assert len(lines) == 3 and all(pat.search(m) for m in lines), lines
    assert any(m.startswith("int8 tactics") for m in msgs), msgs[:40]


def test_tactic_kernels_need_what_their_fp32_kernels_need():
    """cpu_features of each qlinear.fp32.<k> repeat convolution.<k>'s (a plan records them; the loader checks)."""
    ks = {k[0]: k for k in _C.kernels()}
    wrappers = [n for n in ks if n.startswith("qlinear.fp32.")]
    assert len(wrappers) >= 10
    for n in wrappers:
        inner = "convolution." + n[len("qlinear.fp32."):]
        assert inner in ks, inner
        assert sorted(ks[n][2]) == sorted(ks[inner][2]) and ks[n][3] == ks[inner][3], (ks[n], ks[inner])


@pytest.mark.skipif(bool(os.environ.get("TRTL_CPU_MASK")), reason="runs only in the parent")
@pytest.mark.parametrize("mask", ["1f", "0"])
def test_on_avx2_and_portable_paths(mask):
    """This file's tests again where TRTL_CPU_MASK hides AVX-512 (1f) or every feature (0: fp32 tactics on the BLAS
    im2col / grouped kernels, scalar epilogue; int8 on the portable loops)."""
    rerun_with_cpu_mask(__file__, mask, 16)
