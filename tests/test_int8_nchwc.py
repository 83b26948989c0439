"""int8 layers in blocked regions (issue #11, session 19: passes int8_nchwc / nchwc, builder/passes/nchwc.c).  On CPUs
without VNNI / AMX an int8 pointwise / depthwise convolution whose input is on its grid becomes an fp32 NCHWC_CONV of
the same quantized math (int8 weights times their scales, bias, float residual, mid quantization before the residual,
activation and output fake quantization in the epilogue), inside the blocked layout of the fp32 model.  A
MobileNetV2-like and a ResNet-like QDQ network (Q/DQ layers as quantize_static writes them), pass on and off: the
inspector shows the blocked layers, and the outputs match a float64 model of the quantized math within one output
step (a rounding tie may move a code) and each other.  On a host with VNNI / AMX the pass leaves the layers int8 (the
rule); the AVX2 and portable paths run again under TRTL_CPU_MASK (1f hides AVX-512, VNNI and AMX: the rule holds on
every host; 0: no AVX2, so the nchwc pass does not run and the layers stay QLINEAR)."""
import json
import os

import numpy as np
import pytest

import trtlite as trt

from conftest import Net, rerun_with_cpu_mask
from test_int8_tactics import _check, _dw_np, _lims
from test_quantize_fuse import _fq, _int8_weights, conv2d_np, q_np

F = lambda v: np.float64(np.float32(v))  # noqa: E731
FAST_INT8 = bool({"avx512vnni", "avxvnni", "amx_int8"} & set(trt.cpu_features()))
BLOCKED = not FAST_INT8 and {"avx2", "fma"} <= set(trt.cpu_features())


def _per(s):
    return s.astype(np.float64).reshape(1, -1, 1, 1)


def _mnv2_case(rng, act_type, H, W):
    """stem 3x3 s1 (3 -> C, ReLU6) -> block A (expand 1x1 C -> E, ReLU6; depthwise 3x3, ReLU6; project E -> C, mid
    Q/DQ + the stem's output, Q/DQ) -> block B (expand C -> E2, ReLU6; depthwise 3x3 s2 with a channel tail;
    project E2 -> K2, Q/DQ) -> 1x1 K2 -> 5, float out.  ReLU6 as quantize_static writes it: Q/DQ, Clip, Q/DQ of the
    same parameters."""
    C, E, E2, K2 = 8, 20, 36, 12
    x = (rng.standard_normal((2, 3, H, W)) * 1.2).astype(np.float32)
    q0, s0, w0 = _int8_weights(rng, (C, 3, 3, 3))
    b0 = (rng.standard_normal(C) * 0.3).astype(np.float32)
    q1, s1, w1 = _int8_weights(rng, (E, C, 1, 1))
    q2, s2, w2 = _int8_weights(rng, (E, 1, 3, 3))
    b2 = (rng.standard_normal(E) * 0.3).astype(np.float32)
    q3, s3, w3 = _int8_weights(rng, (C, E, 1, 1))
    q4, s4, w4 = _int8_weights(rng, (E2, C, 1, 1))
    q5, s5, w5 = _int8_weights(rng, (E2, 1, 3, 3))
    q6, s6, w6 = _int8_weights(rng, (K2, E2, 1, 1))
    b6 = (rng.standard_normal(K2) * 0.2).astype(np.float32)
    q7, s7, w7 = _int8_weights(rng, (5, K2, 1, 1))
    lo, hi = _lims(act_type)
    u = act_type == trt.uint8
    S = dict(x=0.025, y=0.05, a=0.03, d=0.035, m=0.04, o=0.07, e=0.03, f=0.035, p=0.05)  # m + y: (4a + 5b) / 7, no tie
    Z = dict(x=120, y=0, a=0, d=0, m=128, o=90, e=0, f=0, p=100) if u else {k: 0 for k in S}

    def make(net, xin, precision):
        def relu6(t, k):
            r = net.add_activation(_fq(net, t, S[k], Z[k], act_type), trt.ActivationType.CLIP)
            r.alpha, r.beta = 0.0, 6.0
            return _fq(net, r.get_output(0), S[k], Z[k], act_type)

        def conv(t, k, ks, w, b=None, groups=1, stride=1):
            c = net.add_convolution_nd(t, k, (ks, ks), w, b) if b is not None else net.add_convolution_nd(t, k, (ks, ks), w)
            c.num_groups = groups
            c.stride_nd = (stride, stride)
            c.padding_nd = (ks // 2, ks // 2)
            if precision is not None:
                c.precision = precision
            return c.get_output(0)

        xq = _fq(net, xin, S["x"], Z["x"], act_type)
        y = relu6(conv(xq, C, 3, w0, b0), "y")
        a = relu6(conv(y, E, 1, w1), "a")
        d = relu6(conv(a, E, 3, w2, b2, groups=E), "d")
        m = _fq(net, conv(d, C, 1, w3), S["m"], Z["m"], act_type)
        o = _fq(net, net.add_elementwise(m, y, trt.ElementWiseOperation.SUM).get_output(0), S["o"], Z["o"], act_type)
        e = relu6(conv(o, E2, 1, w4), "e")
        f = relu6(conv(e, E2, 3, w5, groups=E2, stride=2), "f")
        p = _fq(net, conv(f, K2, 1, w6, b6), S["p"], Z["p"], act_type)
        return conv(p, 5, 1, w7)

    def model(x):
        def q(v, k):
            return q_np(v, S[k], Z[k], lo, hi) - Z[k]

        cx = q(x, "x")
        cy = q(np.clip(conv2d_np(cx, q0.astype(np.float64), pad=1) * F(S["x"]) * _per(s0) + _per(b0), 0, 6), "y")
        ca = q(np.clip(conv2d_np(cy, q1.astype(np.float64)) * F(S["y"]) * _per(s1), 0, 6), "a")
        cd = q(np.clip(_dw_np(ca, q2.astype(np.float64), 1) * F(S["a"]) * _per(s2) + _per(b2), 0, 6), "d")
        v = conv2d_np(cd, q3.astype(np.float64)) * F(S["d"]) * _per(s3)
        co = q(q(v, "m") * F(S["m"]) + cy * F(S["y"]), "o")
        ce = q(np.clip(conv2d_np(co, q4.astype(np.float64)) * F(S["o"]) * _per(s4), 0, 6), "e")
        v = np.concatenate([conv2d_np(ce[:, c:c + 1], q5[c:c + 1].astype(np.float64), stride=2, pad=1)
                            for c in range(E2)], axis=1)
        cf = q(np.clip(v * F(S["e"]) * _per(s5), 0, 6), "f")
        cp = q(conv2d_np(cf, q6.astype(np.float64)) * F(S["f"]) * _per(s6) + _per(b6), "p")
        return conv2d_np(cp, q7.astype(np.float64)) * F(S["p"]) * _per(s7)

    step = F(S["p"]) * np.abs(q7).reshape(5, -1).sum(1).max() * s7.max()
    # all eight blocked: the stem (its input fake-quantized by an ACTIVATION step first), the last one (its blocked
    # input; float output)
    return x, make, model, step, 8


def _resnet_case(rng, act_type, H, W):
    """ResNet's 1x1 chains: stem 3x3 (3 -> C, ReLU) -> 1x1 C -> E, ReLU -> 1x1 E -> C, mid Q/DQ + the stem's output,
    ReLU after the add, Q/DQ (the residual's codes make a NaN impossible, so the ReLU folds into the output bounds) ->
    1x1 C -> 4, float out."""
    C, E = 16, 24
    x = (rng.standard_normal((2, 3, H, W)) * 1.2).astype(np.float32)
    q0, s0, w0 = _int8_weights(rng, (C, 3, 3, 3))
    q1, s1, w1 = _int8_weights(rng, (E, C, 1, 1))
    b1 = (rng.standard_normal(E) * 0.3).astype(np.float32)
    q2, s2, w2 = _int8_weights(rng, (C, E, 1, 1))
    q3, s3, w3 = _int8_weights(rng, (4, C, 1, 1))
    lo, hi = _lims(act_type)
    u = act_type == trt.uint8
    S = dict(x=0.025, y=0.05, a=0.03, m=0.04, o=0.07)
    Z = dict(x=120, y=0, a=0, m=128, o=0) if u else {k: 0 for k in S}

    def make(net, xin, precision):
        def conv(t, k, ks, w, b=None):
            c = net.add_convolution_nd(t, k, (ks, ks), w, b) if b is not None else net.add_convolution_nd(t, k, (ks, ks), w)
            c.padding_nd = (ks // 2, ks // 2)
            if precision is not None:
                c.precision = precision
            return c.get_output(0)

        def relu(t):
            return net.add_activation(t, trt.ActivationType.RELU).get_output(0)

        xq = _fq(net, xin, S["x"], Z["x"], act_type)
        y = _fq(net, relu(conv(xq, C, 3, w0)), S["y"], Z["y"], act_type)
        a = _fq(net, relu(conv(y, E, 1, w1, b1)), S["a"], Z["a"], act_type)
        m = _fq(net, conv(a, C, 1, w2), S["m"], Z["m"], act_type)
        o = _fq(net, relu(net.add_elementwise(m, y, trt.ElementWiseOperation.SUM).get_output(0)), S["o"], Z["o"],
                act_type)
        return conv(o, 4, 1, w3)

    def model(x):
        def q(v, k):
            return q_np(v, S[k], Z[k], lo, hi) - Z[k]

        cx = q(x, "x")
        cy = q(np.maximum(conv2d_np(cx, q0.astype(np.float64), pad=1) * F(S["x"]) * _per(s0), 0), "y")
        ca = q(np.maximum(conv2d_np(cy, q1.astype(np.float64)) * F(S["y"]) * _per(s1) + _per(b1), 0), "a")
        v = conv2d_np(ca, q2.astype(np.float64)) * F(S["a"]) * _per(s2)
        co = q(np.maximum(q(v, "m") * F(S["m"]) + cy * F(S["y"]), 0), "o")
        return conv2d_np(co, q3.astype(np.float64)) * F(S["o"]) * _per(s3)

    step = F(S["o"]) * np.abs(q3).reshape(4, -1).sum(1).max() * s3.max()
    return x, make, model, step, 4


def _build(make, x, off=(), precision=None):
    n = Net()
    n.config.avg_timing_iterations = 1
    n.config.set_flag(trt.BuilderFlag.DISABLE_TIMING_CACHE)
    for p in off:
        n.config.set_pass_enabled(p, False)
    if precision is not None:
        n.config.set_flag(trt.BuilderFlag.OBEY_PRECISION_CONSTRAINTS)
    xin = n.network.add_input("x", trt.float32, x.shape)
    out = make(n.network, xin, precision)
    out.name = "y"
    n.network.mark_output(out)
    eng = n.build()  # through a plan: NCHWC_CONV's mid activation is stored (plan version 9)
    layers = json.loads(eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]
    return eng.create_execution_context().infer({"x": x})["y"], layers


def _types(layers):
    return [l["type"] for l in layers if l["type"] in ("QLINEAR", "NCHWC_CONV")]


@pytest.mark.parametrize("act_type", [trt.uint8, trt.int8])
@pytest.mark.parametrize("case,shape", [(_mnv2_case, (12, 11)), (_mnv2_case, (9, 16)), (_resnet_case, (8, 7))])
def test_int8_layers_blocked_match_the_quantized_math(case, shape, act_type, rng):
    x, make, model, step, n_blocked = case(rng, act_type, *shape)
    ref = model(x)
    on, lon = _build(make, x)
    off, loff = _build(make, x, off=("int8_nchwc",))
    assert "NCHWC_CONV" not in _types(loff), _types(loff)
    if BLOCKED:
        types = [l["type"] for l in lon]
        # the network input fake-quantized (ACTIVATION, the stem's input quantization), every convolution blocked
        assert types[0] == "ACTIVATION" and types.count("NCHWC_CONV") == n_blocked and "QLINEAR" not in types, types
        blocked = [l for l in lon if l["type"] == "NCHWC_CONV"]
        assert all(l["precision"] == "FLOAT" and l["kernel"].startswith("nchwc_conv.") for l in blocked), blocked
        assert all(o["dtype"] == "FLOAT" for l in blocked for o in l["outputs"]), blocked
    else:
        assert "NCHWC_CONV" not in _types(lon), _types(lon)
    _check(on, ref, step, "int8_nchwc on")
    _check(off, ref, step, "int8_nchwc off")
    np.testing.assert_allclose(on, off, rtol=0, atol=step * 1.0001)


@pytest.mark.parametrize("act_type", [trt.uint8, trt.int8])
def test_precision_constraints_and_the_nchwc_switch_keep_qlinear(act_type, rng):
    """A layer with a precision of its own (OBEY_PRECISION_CONSTRAINTS) keeps its kernels' choice, so does every
    layer with int8_tactics or nchwc off; the results stay those of the quantized math."""
    x, make, model, step, _ = _mnv2_case(rng, act_type, 10, 10)
    ref = model(x)
    for off, prec in (((), trt.int8), (("int8_tactics",), None), (("nchwc",), None)):
        got, ls = _build(make, x, off=off, precision=prec)
        assert "NCHWC_CONV" not in _types(ls), (off, _types(ls))
        _check(got, ref, step, str(off))


def test_the_pass_is_listed():
    names = [p[0] for p in trt.builder_passes()]
    assert names.index("int8_nchwc") == names.index("nchwc") - 1, names


@pytest.mark.skipif(bool(os.environ.get("TRTL_CPU_MASK")), reason="runs only in the parent")
@pytest.mark.parametrize("mask", ["1f", "0"])
def test_on_avx2_and_portable_paths(mask):
    """This file's tests again where TRTL_CPU_MASK hides AVX-512, VNNI and AMX (1f: the rule holds, the AVX2 blocked
    kernels run) or every feature (0: no blocked layout)."""
    rerun_with_cpu_mask(__file__, mask, 9)
