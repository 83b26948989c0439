"""The optimized pointwise kernels (elementwise.simd, unary.simd, activation.simd, scale.simd; csrc/kernels/x86/) and
the fuse_pointwise builder pass, against numpy float64.

Every layer case runs with the optimized kernels ("opt": default level, no timing, so the first applicable optimized
kernel runs -- the case checks which) and with builder optimization level 0 ("ref": reference kernels, no passes).
Inputs are large enough for the work split over the thread pool and have tails; most hold NaN and +-Inf, and the
outputs must have NaN exactly where numpy has it and the same infinities.  test_masked_isa_paths runs the file again
in subprocesses with TRTL_CPU_MASK hiding AVX-512 (the AVX2 variants) and every SIMD feature (the portable spans).

fuse_pointwise: x * sigmoid(x), x * hard_sigmoid(x) and x * tanh(softplus(x)) (either operand order) become one
SiLU / HardSwish / Mish activation, which epilogue fusion then folds into the producing convolution; it must not
fire when an intermediate is a network output or feeds another layer.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import Net, assert_close, skip_if_mask_hides_nothing

MASKED = os.environ.get("TRTL_POINTWISE_MASKED")
E = trt.ElementWiseOperation
A = trt.ActivationType
SHAPE = (2, 3, 61, 190)  # 69540 elements: split over the pool, not a multiple of 16


def poisoned(rng, shape, scale=4.0, n_special=12):
    """normal * scale, a few values of +-30 .. +-100, and NaN, +Inf, -Inf at random positions."""
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    flat = x.reshape(-1)
    pos = rng.choice(flat.size, size=min(4 * n_special, flat.size), replace=False)
    flat[pos[:n_special]] = np.nan
    flat[pos[n_special:2 * n_special]] = np.inf
    flat[pos[2 * n_special:3 * n_special]] = -np.inf
    flat[pos[3 * n_special:]] = rng.uniform(30, 100, pos[3 * n_special:].size) * rng.choice([-1, 1])
    return x


def check(out, ref, rtol=2e-5, atol=2e-6):
    """NaN where numpy has NaN, the same infinities, finite values close (atol not scaled by the magnitude)."""
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.shape == ref.shape and out.dtype == np.float32
    nan_o, nan_r = np.isnan(out), np.isnan(ref)
    assert (nan_o == nan_r).all(), "NaN at %s, numpy at %s" % (np.argwhere(nan_o ^ nan_r)[:5].tolist(),
                                                               np.argwhere(nan_r)[:5].tolist())
    inf_r = np.isinf(ref)
    assert (np.isinf(out) == inf_r).all() and (out[inf_r] == ref[inf_r]).all(), "infinities differ"
    fin = ~(nan_r | inf_r)
    assert_close(out[fin], ref[fin].astype(np.float64), rtol=rtol, atol=atol, scale_atol=False)


def build_run(make, inputs, mode="opt", off=()):
    """Builds make(network, *inputs) (explicit batch, plan round trip), runs it; returns (outputs, layers)."""
    n = Net(explicit=True, mode=mode)
    ts = [n.network.add_input(k, trt.float32, v.shape) for k, v in inputs.items()]
    names = n.mark(make(n.network, *ts))
    for p in off:
        n.config.set_pass_enabled(p, False)
    engine = n.build()
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    out = engine.create_execution_context().infer(inputs)
    return [out[k] for k in names], info["layers"]


def kernels(layers):
    return [layer["kernel"] for layer in layers]


MODES = ["opt", "ref"]

# ---- activations ------------------------------------------------------------------------------------------------

ACT_PARAMS = {"LEAKY_RELU": (0.1, 0.0), "ELU": (0.7, 0.0), "SELU": (1.6733, 1.0507), "SOFTPLUS": (1.5, 0.8),
              "CLIP": (-0.5, 0.6), "HARD_SIGMOID": (0.2, 0.5), "SCALED_TANH": (1.7, 0.66), "THRESHOLDED_RELU": (0.3, 0)}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(A.__members__))
def test_activation(name, mode, rng):
    alpha, beta = ACT_PARAMS.get(name, (0.0, 0.0))
    x = poisoned(rng, SHAPE)

    def make(net, t):
        layer = net.add_activation(t, getattr(A, name))
        layer.alpha, layer.beta = alpha, beta
        return layer.get_output(0)
    (out,), layers = build_run(make, {"x": x}, mode)
    assert kernels(layers) == ["activation.simd" if mode == "opt" else "activation.ref"]
    with np.errstate(all="ignore"):  # inf - inf, 0 * inf: NaN, as compared
        ref = refs.activation(x, name, alpha, beta)
    # GELU_ERF: the float formula 1 + erf(z) loses the tail below z = -3 (as the reference kernel does)
    check(out, ref, atol=2e-6 if name != "GELU_ERF" else 2e-5)


@pytest.mark.parametrize("name", ["SIGMOID", "TANH", "GELU_ERF", "GELU_TANH", "SOFTPLUS", "ELU", "SELU"])
def test_activation_math_is_tight(name, rng):
    """The vector exp / tanh / erf over a dense range: relative 2e-6 of numpy float64 wherever the result is above
    1e-3 in magnitude."""
    alpha, beta = ACT_PARAMS.get(name, (1.0, 1.0))
    x = np.linspace(-20, 20, 100003).astype(np.float32)

    def make(net, t):
        layer = net.add_activation(t, getattr(A, name))
        layer.alpha, layer.beta = alpha, beta
        return layer.get_output(0)
    (out,), _ = build_run(make, {"x": x})
    ref = refs.activation(x, name, alpha, beta)
    big = np.abs(ref) > 1e-3
    rel = np.abs(out[big] - ref[big]) / np.abs(ref[big])
    assert rel.max() < 2e-6, (name, float(rel.max()), float(x[big][rel.argmax()]))


# ---- unary -------------------------------------------------------------------------------------------------------

UNARY_VEC = ["EXP", "LOG", "SQRT", "RECIP", "ABS", "NEG", "CEIL", "FLOOR", "ROUND", "ERF", "SIGN"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", UNARY_VEC + ["SIN", "ATAN"])
def test_unary(op, mode, rng):
    x = refs.unary_input(op, rng, SHAPE).astype(np.float32)
    if op in ("EXP", "ERF"):
        x *= 20  # exp over/underflow and the denormal range, erf's tails
    flat = x.reshape(-1)
    flat[:7] = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.5, 1e-40]
    (out,), layers = build_run(lambda net, t: net.add_unary(t, getattr(trt.UnaryOperation, op)).get_output(0),
                               {"x": x}, mode)
    want = "unary.simd" if mode == "opt" and op in UNARY_VEC else "unary.ref"
    assert kernels(layers) == [want]
    with np.errstate(all="ignore"):
        ref = refs.unary(x, op).astype(np.float32).astype(np.float64)  # what float32 can hold (overflow: inf)
    check(out, ref, atol=1e-30 if op == "EXP" else 2e-6)


# ---- elementwise: the broadcast patterns of real models -----------------------------------------------------------

PATTERNS = {
    "same": ((2, 3, 61, 190), (2, 3, 61, 190)),
    "scalar": ((2, 3, 61, 190), (1, 1, 1, 1)),
    "per_channel": ((2, 96, 15, 17), (1, 96, 1, 1)),   # squeeze-excitation multiply, bias add
    "se_vector": ((2, 96, 1, 1), (1, 96, 1, 1)),
    "trailing_row": ((3, 77, 769), (1, 1, 769)),       # transformer bias add
    "outer": ((257, 1), (1, 301)),
    "general": ((2, 1, 4, 1), (1, 3, 1, 5)),           # four levels: the reference's broadcast
}
EW_OPS = ["SUM", "PROD", "MAX", "MIN", "SUB", "DIV"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
@pytest.mark.parametrize("op", EW_OPS)
def test_elementwise(op, pattern, swap, mode, rng):
    sa, sb = PATTERNS[pattern]
    if swap:
        sa, sb = sb, sa
    a, b = poisoned(rng, sa, n_special=2), poisoned(rng, sb, n_special=1 if np.prod(sb) > 8 else 0)
    (out,), layers = build_run(lambda net, x, y: net.add_elementwise(x, y, getattr(E, op)).get_output(0),
                               {"a": a, "b": b}, mode)
    simd = mode == "opt" and pattern != "general"
    assert kernels(layers) == ["elementwise.simd" if simd else "elementwise.ref"]
    with np.errstate(all="ignore"):
        check(out, refs.elementwise(a, b, op))


@pytest.mark.parametrize("op", ["POW", "FLOOR_DIV"])
def test_elementwise_other_ops_keep_the_reference(op, rng):
    a, b = poisoned(rng, (3, 40), n_special=0), rng.uniform(0.5, 3, (3, 40)).astype(np.float32)
    a = np.abs(a)
    (out,), layers = build_run(lambda net, x, y: net.add_elementwise(x, y, getattr(E, op)).get_output(0),
                               {"a": a, "b": b})
    assert kernels(layers) == ["elementwise.ref"]
    assert_close(out, refs.elementwise(a, b, op) if op == "POW" else np.floor_divide(a.astype(np.float64), b))


# ---- scale -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("weights", ["scale", "shift", "both", "power"])
@pytest.mark.parametrize("smode", ["UNIFORM", "CHANNEL", "ELEMENTWISE"])
def test_scale(smode, weights, mode, rng):
    x = poisoned(rng, (2, 5, 37, 41), n_special=3)
    wshape = {"UNIFORM": (1,), "CHANNEL": (5,), "ELEMENTWISE": (5, 37, 41)}[smode]
    sc = rng.uniform(0.5, 2, wshape).astype(np.float32) if weights in ("scale", "both", "power") else None
    sh = rng.standard_normal(wshape).astype(np.float32) if weights in ("shift", "both", "power") else None
    pw = np.full(wshape, 2.0, np.float32) if weights == "power" else None
    (out,), layers = build_run(lambda net, t: net.add_scale(t, getattr(trt.ScaleMode, smode), shift=sh, scale=sc,
                                                            power=pw).get_output(0), {"x": x}, mode)
    simd = mode == "opt" and weights != "power"
    assert kernels(layers) == ["scale.simd" if simd else "scale.ref"]
    check(out, refs.scale(x, smode, sh, sc, pw))


# ---- fuse_pointwise ----------------------------------------------------------------------------------------------

def silu(net, x, swap=False):
    s = net.add_activation(x, A.SIGMOID)
    s.name = "sig"
    m = net.add_elementwise(s.get_output(0), x, E.PROD) if swap else net.add_elementwise(x, s.get_output(0), E.PROD)
    m.name = "mul"
    return m.get_output(0), s.get_output(0)


def hardswish(net, x, swap=False):
    h = net.add_activation(x, A.HARD_SIGMOID)
    h.alpha, h.beta = 1.0 / 6.0, 0.5
    h.name = "hsig"
    m = net.add_elementwise(h.get_output(0), x, E.PROD) if swap else net.add_elementwise(x, h.get_output(0), E.PROD)
    m.name = "mul"
    return m.get_output(0), h.get_output(0)


def mish(net, x, swap=False):
    sp = net.add_activation(x, A.SOFTPLUS)
    sp.alpha, sp.beta = 1.0, 1.0
    sp.name = "softplus"
    th = net.add_activation(sp.get_output(0), A.TANH)
    th.name = "tanh"
    m = net.add_elementwise(th.get_output(0), x, E.PROD) if swap else net.add_elementwise(x, th.get_output(0), E.PROD)
    m.name = "mul"
    return m.get_output(0), th.get_output(0)


def silu_ref(x):
    return refs._f64(x) * refs.activation(x, "SIGMOID")


def hardswish_ref(x):
    return refs._f64(x) * refs.activation(x, "HARD_SIGMOID", 1.0 / 6.0, 0.5)


def mish_ref(x):
    return refs._f64(x) * np.tanh(refs.activation(x, "SOFTPLUS", 1.0, 1.0))


GATED = {"silu": (silu, silu_ref, 2, 100), "hardswish": (hardswish, hardswish_ref, 2, 101),
         "mish": (mish, mish_ref, 3, 102)}


@pytest.mark.parametrize("off", [False, True])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("kind", sorted(GATED))
def test_gated_activation_fuses(kind, swap, off, rng):
    make, ref, n_layers, _ = GATED[kind]
    x = poisoned(rng, SHAPE)
    (out,), layers = build_run(lambda net, t: make(net, t, swap)[0], {"x": x},
                               off=("fuse_pointwise", "fuse_chain") if off else ())
    with np.errstate(all="ignore"):
        check(out, ref(x))
    if off:
        assert len(layers) == n_layers
    else:
        assert len(layers) == 1 and layers[0]["kernel"] == "activation.simd"
        assert layers[0]["name"] == {"silu": "sig + mul", "hardswish": "hsig + mul",
                                     "mish": "softplus + tanh + mul"}[kind]


@pytest.mark.parametrize("mode", ["opt", "opt-off", "ref"])
@pytest.mark.parametrize("kind", sorted(GATED))
def test_conv_gated_activation_is_one_step(kind, mode, rng):
    """conv -> SiLU / HardSwish / Mish: with the pass, the activation joins the convolution's epilogue (one step,
    the internal code in the inspector's "activation"); without it, three or four steps; same values."""
    make, ref, n_layers, code = GATED[kind]
    x = rng.standard_normal((1, 8, 19, 23)).astype(np.float32) * 2
    w = (rng.standard_normal((16, 8, 3, 3)) * 0.3).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)

    def net_fn(net, t):
        c = net.add_convolution_nd(t, 16, (3, 3), w, b)
        c.padding_nd = (1, 1)
        c.name = "conv"
        return make(net, c.get_output(0))[0]
    (out,), layers = build_run(net_fn, {"x": x}, "ref" if mode == "ref" else "opt",
                               off=("fuse_pointwise", "fuse_chain") if mode == "opt-off" else ())
    assert_close(out, ref(refs.convolution(x, w, b, pre_padding=(1, 1), post_padding=(1, 1))), rtol=1e-4)
    if mode == "opt":
        assert len(layers) == 1, [layer["name"] for layer in layers]
        assert layers[0]["activation"] == code and layers[0]["type"] == "CONVOLUTION"
        assert layers[0]["name"].startswith("conv + ")
    else:
        assert len(layers) == n_layers + 1


@pytest.mark.parametrize("kind", sorted(GATED))
def test_not_fused_when_the_gate_is_an_output(kind, rng):
    make, ref, n_layers, _ = GATED[kind]
    x = rng.standard_normal((3, 50)).astype(np.float32)
    (out, gate), layers = build_run(lambda net, t: list(make(net, t)), {"x": x}, off=("fuse_chain",))
    assert len(layers) == n_layers
    assert_close(out, ref(x))


def test_not_fused_when_the_gate_feeds_another_layer(rng):
    x = rng.standard_normal((3, 50)).astype(np.float32)

    def make(net, t):
        s = net.add_activation(t, A.SIGMOID).get_output(0)
        m = net.add_elementwise(t, s, E.PROD).get_output(0)
        return net.add_elementwise(m, s, E.SUM).get_output(0)
    (out,), layers = build_run(make, {"x": x}, off=("fuse_chain",))
    assert len(layers) == 3
    s = refs.activation(x, "SIGMOID")
    assert_close(out, refs._f64(x) * s + s)


def test_not_fused_for_another_operand_or_softplus_params(rng):
    """x * sigmoid(y) is no SiLU; tanh(softplus(x)) with softplus alpha != 1 is no Mish."""
    x = rng.standard_normal((3, 50)).astype(np.float32)
    y = rng.standard_normal((3, 50)).astype(np.float32)

    def make(net, t, u):
        a = net.add_elementwise(t, net.add_activation(u, A.SIGMOID).get_output(0), E.PROD).get_output(0)
        sp = net.add_activation(t, A.SOFTPLUS)
        sp.alpha, sp.beta = 2.0, 1.0
        th = net.add_activation(sp.get_output(0), A.TANH).get_output(0)
        return [a, net.add_elementwise(t, th, E.PROD).get_output(0)]
    (o1, o2), layers = build_run(make, {"x": x, "y": y}, off=("fuse_chain",))
    assert len(layers) == 5
    assert_close(o1, refs._f64(x) * refs.activation(y, "SIGMOID"))
    assert_close(o2, refs._f64(x) * np.tanh(refs.activation(x, "SOFTPLUS", 2.0, 1.0)))


def test_pass_is_listed_and_logs():
    table = {name: (lvl, desc) for name, lvl, desc in trt.builder_passes()}
    assert table["fuse_pointwise"][0] == 1 and "SiLU" in table["fuse_pointwise"][1]

    class Rec(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.msgs = []

        def log(self, severity, msg):
            self.msgs.append(msg)
    rec = Rec()
    builder = trt.Builder(rec)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, (2, 8))
    out = silu(net, x)[0]
    net.mark_output(out)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    assert builder.build_serialized_network(net, config) is not None
    assert any("pointwise fusion" in m and "SiLU" in m for m in rec.msgs), rec.msgs


def test_fused_plan_round_trip_and_corrupt_activation_type(rng):
    """A plan with the internal SiLU code loads and runs; the same plan with the code changed to one that is no
    activation is refused."""
    n = Net(explicit=True)
    x = n.network.add_input("x", trt.float32, (4, 33))
    n.mark(silu(n.network, x)[0])
    n.config.avg_timing_iterations = 0
    plan = bytes(n.builder.build_serialized_network(n.network, n.config))
    xv = rng.standard_normal((4, 33)).astype(np.float32)
    engine = trt.Runtime(n.logger).deserialize_cuda_engine(plan)
    assert_close(engine.create_execution_context().infer({"x": xv})["out0"], silu_ref(xv))
    # the activation node's params: type 100 (int32 LE) followed by alpha 0.0, beta 0.0
    key = np.array([100], "<i4").tobytes() + np.zeros(2, "<f4").tobytes()
    assert plan.count(key) == 1
    bad = bytearray(plan.replace(key, np.array([57], "<i4").tobytes() + np.zeros(2, "<f4").tobytes()))
    # the payload CRC must match for the reader to get to the nodes: recompute it as the writer does
    import zlib
    hdr = 64
    bad[24:28] = (zlib.crc32(bytes(bad[hdr:])) & 0xFFFFFFFF).to_bytes(4, "little")
    with pytest.raises(trt.Error, match="activation type 57"):
        if trt.Runtime(n.logger).deserialize_cuda_engine(bytes(bad)) is None:
            raise trt.Error("activation type 57 (None)")


# ---- NaN / Inf on every path, and the masked ISA variants ---------------------------------------------------------

@pytest.mark.parametrize("path", ["opt", "opt-off", "ref"])
@pytest.mark.parametrize("kind", sorted(GATED))
def test_gated_nan_inf_every_path(kind, path, rng):
    make, ref, _, _ = GATED[kind]
    x = poisoned(rng, (5, 1003), n_special=40)
    (out,), _ = build_run(lambda net, t: make(net, t)[0], {"x": x}, "ref" if path == "ref" else "opt",
                          off=("fuse_pointwise",) if path == "opt-off" else ())
    with np.errstate(all="ignore"):
        check(out, ref(x))


@pytest.mark.skipif(bool(MASKED), reason="already in a masked subprocess")
@pytest.mark.parametrize("mask", ["0x1f", "0x0"])
def test_masked_isa_paths(mask):
    """This file's activation, unary, elementwise, scale and fusion cases again with AVX-512 hidden (the AVX2
    variants) and with every SIMD feature hidden (the portable spans)."""
    skip_if_mask_hides_nothing(mask)
    env = dict(os.environ, TRTL_CPU_MASK=mask, TRTL_POINTWISE_MASKED="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", os.path.abspath(__file__),
                        "-k", "opt and not tight and not plan"],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


@pytest.mark.parametrize("mode", MODES)
def test_fused_activation_after_add_and_scale(mode, rng):
    """fuse_epilogue folds an activation into an elementwise or scale layer; elementwise.simd and scale.simd apply
    it themselves (one step each in "opt")."""
    x = poisoned(rng, SHAPE, n_special=5)
    bias = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    sc = rng.uniform(0.5, 2, 3).astype(np.float32)

    def make(net, t):
        b = net.add_constant(bias.shape, bias).get_output(0)
        r = net.add_activation(net.add_elementwise(t, b, E.SUM).get_output(0), A.RELU).get_output(0)
        s = net.add_scale(t, trt.ScaleMode.CHANNEL, scale=sc).get_output(0)
        return [r, net.add_activation(s, A.SIGMOID).get_output(0)]
    (r, s), layers = build_run(make, {"x": x}, mode)
    if mode == "opt":
        assert sorted(kernels(layers)) == ["elementwise.simd", "scale.simd"]
    with np.errstate(all="ignore"):
        check(r, np.maximum(refs._f64(x) + bias, 0.0))
        check(s, refs.activation(refs.scale(x, "CHANNEL", None, sc), "SIGMOID"))
