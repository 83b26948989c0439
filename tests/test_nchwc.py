"""The blocked channel layout (issue #10): builder pass `nchwc` (csrc/builder/passes/nchwc.c), the internal op
NCHWC_CONV (csrc/network/ops/nchwc_conv.c, reference csrc/kernels/ref/nchwc_conv.c) and its AVX2 kernel
nchwc_conv.avx2 (csrc/kernels/x86/nchwc_conv.c) at network level: MobileNetV2-style inverted residual blocks (1x1
expand, depthwise 3x3 / 5x5 stride 1 / 2, 1x1 project + residual, channel counts with tails past 8), every fused
activation, batch 2, NaN in the input, dynamic shapes, a plan round trip, built with the pass on and off, each
compared with float64 numpy; MobileNetV2 and a ResNet bottleneck from torchvision against onnxruntime with the pass
on and off.  The kernel itself against the reference kernel on random shapes: tests/c/test_kernels.c
(test_nchwc)."""
import json

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close

ACTS = {  # name: (trtlite activation, alpha, beta, float64 numpy)
    "relu6": (trt.ActivationType.CLIP, 0.0, 6.0, lambda v: np.clip(v, 0.0, 6.0)),
    "relu": (trt.ActivationType.RELU, 0.0, 0.0, lambda v: np.maximum(v, 0.0)),
    "sigmoid": (trt.ActivationType.SIGMOID, 0.0, 0.0, lambda v: 1.0 / (1.0 + np.exp(-v))),
    "leaky": (trt.ActivationType.LEAKY_RELU, 0.1, 0.0, lambda v: np.where(v >= 0, v, 0.1 * v)),
    "none": (None, 0.0, 0.0, lambda v: v),
}


def _nan_keep(f):
    def g(v):
        out = f(v)
        out[np.isnan(v)] = np.nan
        return out
    return g


class _Net:
    """Builds a chain of inverted residual blocks on the network and the float64 reference beside it."""

    def __init__(self, network, rng, x, dynamic):
        self.net, self.rng = network, rng
        shape = (-1, x.shape[1], -1, -1) if dynamic else x.shape
        self.t = network.add_input("x", trt.float32, shape)
        self.ref = x.astype(np.float64)

    def conv(self, t, ref, K, k, stride, groups, act, dilation=1):
        C = ref.shape[1]
        w = (self.rng.standard_normal((K, C // groups, k, k)) / np.sqrt(C // groups * k * k)).astype(np.float32)
        b = self.rng.standard_normal(K).astype(np.float32) * 0.1
        layer = self.net.add_convolution_nd(t, K, (k, k), w, b)
        layer.stride_nd = (stride, stride)
        pad = dilation * (k // 2)
        layer.padding_nd = (pad, pad)
        layer.dilation_nd = (dilation, dilation)
        layer.num_groups = groups
        out = refs.convolution(ref, w.astype(np.float64), b.astype(np.float64), (stride, stride), (pad, pad),
                               (pad, pad), (dilation, dilation), groups=groups)
        return self.act(layer.get_output(0), out, act)

    def act(self, t, ref, act):
        kind, alpha, beta, f = ACTS[act]
        if kind is None:
            return t, ref
        layer = self.net.add_activation(t, kind)
        layer.alpha, layer.beta = alpha, beta
        return layer.get_output(0), _nan_keep(f)(ref)

    def block(self, E, Cout, k, stride, act, act_out="none", dilation=1):
        """1x1 expand to E + act, depthwise k x k / stride (/ dilation) + act, 1x1 project to Cout (+ the block input
        where the shapes allow), then act_out."""
        t, ref = self.t, self.ref
        C = ref.shape[1]
        h, hr = self.conv(t, ref, E, 1, 1, 1, act)
        h, hr = self.conv(h, hr, E, k, stride, E, act, dilation)
        h, hr = self.conv(h, hr, Cout, 1, 1, 1, "none")
        if stride == 1 and Cout == C:
            h = self.net.add_elementwise(h, t, trt.ElementWiseOperation.SUM).get_output(0)
            hr = hr + ref
        self.t, self.ref = self.act(h, hr, act_out)

    def head(self, K, act):
        self.t, self.ref = self.conv(self.t, self.ref, K, 1, 1, 1, act)
        self.t.name = "y"
        self.net.mark_output(self.t)


def _chain(rng, N, C, H, W, acts=("relu6", "relu6", "sigmoid"), dynamic=False):
    """(network maker, input, float64 reference) of three blocks (the second's input a blocked residual) and a head."""
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    x[N - 1, C // 2, H // 2, W // 2] = np.nan
    holder = {}

    def make(network):
        m = _Net(network, np.random.default_rng(7), x, dynamic)
        m.block(3 * C, C, 3, 1, acts[0])
        m.block(2 * C + 3, C, 5, 1, acts[1], "leaky")
        m.block(4 * C, C + 5, 3, 2, acts[2])
        m.head(2 * C + 1, "relu")
        holder["ref"] = m.ref

    make(trt.Builder(trt.Logger(trt.Logger.WARNING)).create_network(0))  # fills the reference once
    return make, x, holder["ref"]


def _build(make, off=(), profile=None, serialize=True, threads=2, flags=()):
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(0)
    make(network)
    config = builder.create_builder_config()
    config.num_threads = threads
    for f in flags:
        config.set_flag(f)
    for p in off:
        config.set_pass_enabled(p, False)
    if profile:
        pr = builder.create_optimization_profile()
        pr.set_shape(*profile)
        config.add_optimization_profile(pr)
    plan = builder.build_serialized_network(network, config)
    assert plan is not None
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(bytes(plan))
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return engine, info["layers"]


def _run(engine, x):
    ctx = engine.create_execution_context()
    ctx.set_input_shape("x", x.shape)
    out = np.full(tuple(ctx.get_tensor_shape("y")), 77, np.float32)
    arrays = {"x": x, "y": out}
    assert ctx.execute_v2([arrays[engine.get_tensor_name(i)] for i in range(engine.num_io_tensors)])
    return out


# where the pass blocks: AVX2 + FMA (passes/nchwc.c); test_avx2_path_on_avx512_hosts masks AVX-512
AVX2 = {"avx2", "fma"} <= set(trt.cpu_features())  # AVX-512 hosts too (session 16): the pass needs AVX2 + FMA
BLOCKED_KERNELS = ("nchwc_conv.avx2", "nchwc_conv.avx512")  # pointwise / stride-1 depthwise layers time both (AVX-512)


def _blocked(layers):
    return [lay for lay in layers if lay["type"] == "NCHWC_CONV"]


@pytest.mark.parametrize("shape", [(1, 8, 14, 14), (2, 13, 9, 11), (1, 24, 28, 28)])
@pytest.mark.parametrize("acts", [("relu6", "relu6", "sigmoid"), ("relu", "leaky", "relu6")])
def test_chain_on_and_off(shape, acts):
    """Pass on: every convolution but none of the plain ones is NCHWC_CONV on AVX2 + FMA machines; on and off both
    match float64 numpy (NaN included)."""
    make, x, want = _chain(np.random.default_rng(1), *shape, acts=acts)
    on, layers_on = _build(make)
    off, layers_off = _build(make, off=("nchwc",))
    assert not _blocked(layers_off)
    assert_close(_run(on, x), want)
    assert_close(_run(off, x), want)
    blocked = _blocked(layers_on)
    if AVX2:  # the 3 x 3 block convolutions and the head; the residual adds fused into the projections
        assert len(blocked) == 10 and len(layers_on) == 10, [(lay["name"], lay["type"]) for lay in layers_on]
        assert all(lay["kernel"] in BLOCKED_KERNELS for lay in blocked), blocked
    else:  # no blocked kernel for the ISA: the pass leaves the network alone
        assert not blocked


@pytest.mark.parametrize("shape", [(1, 16, 14, 14), (2, 13, 9, 11), (1, 12, 30, 23)])
def test_dilated_depthwise_stays_blocked(shape):
    """Session 19: depthwise convolutions of dilation 2 (LR-ASPP / DeepLabV3's last MobileNetV3 stage: 5x5, 14 x 14;
    also 3x3 stride 2) are blocked like the others; pass on and off match float64 numpy (NaN included)."""
    N, C, H, W = shape
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    x[N - 1, C // 2, H // 2, W // 2] = np.nan
    holder = {}

    def make(network):
        m = _Net(network, np.random.default_rng(9), x, False)
        m.block(3 * C, C, 5, 1, "relu6", dilation=2)
        m.block(2 * C + 3, C, 3, 1, "sigmoid", "leaky", dilation=2)
        m.block(4 * C, C + 5, 3, 2, "relu", dilation=2)
        m.head(2 * C + 1, "relu")
        holder["ref"] = m.ref

    on, layers_on = _build(make)
    off, layers_off = _build(make, off=("nchwc",))
    assert not _blocked(layers_off)
    assert_close(_run(on, x), holder["ref"])
    assert_close(_run(off, x), holder["ref"])
    if AVX2:  # every convolution blocked, the dilated depthwise ones on the 8-lane kernel only
        blocked = _blocked(layers_on)
        assert len(blocked) == 10 and len(layers_on) == 10, [(lay["name"], lay["type"]) for lay in layers_on]
        assert all(lay["kernel"] in BLOCKED_KERNELS for lay in blocked), blocked


def _stem_chain(rng, N, C, H, W, K, k, stride, act, residual, lead=0, dynamic=False):
    """(network maker, input, float64 reference) of a stem (dense k x k / stride, C -> K channels, act), a depthwise
    3 x 3 + act, a 1x1 projection (back to K plus the stem's output as its residual where `residual`) and a 1x1
    head; `lead` > 0 puts a 1x1 convolution C -> lead before the stem (a blocked candidate feeding a dense one)."""
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    x[N - 1, C - 1, H // 2, W // 3] = np.nan
    holder = {}

    def make(network):
        m = _Net(network, np.random.default_rng(8), x, dynamic)
        t, ref = m.t, m.ref
        if lead:
            t, ref = m.conv(t, ref, lead, 1, 1, 1, "relu")
        s, sr = m.conv(t, ref, K, k, stride, 1, act)
        h, hr = m.conv(s, sr, K, 3, 1, K, act)
        h, hr = m.conv(h, hr, K if residual else K + 3, 1, 1, 1, "none")
        if residual:
            h = network.add_elementwise(h, s, trt.ElementWiseOperation.SUM).get_output(0)
            hr = hr + sr
        m.t, m.ref = h, hr
        m.head(K + 1, "relu")
        holder["ref"] = m.ref

    make(trt.Builder(trt.Logger(trt.Logger.WARNING)).create_network(0))
    return make, x, holder["ref"]


@pytest.mark.parametrize("case", [
    (1, 3, 32, 30, 32, 3, 2, "relu6", False),   # MobileNetV2 / MNASNet stem, odd map
    (2, 3, 13, 17, 16, 3, 2, "sigmoid", True),  # MobileNetV3-like: the stem's output also the residual
    (1, 3, 19, 21, 21, 3, 1, "leaky", False),   # stride 1, K tail
    (1, 4, 23, 18, 40, 5, 2, "relu", True),     # 5x5, K 40 (two register-tile groups), 4 channels (RGBA)
    (1, 2, 25, 24, 9, 7, 2, "none", False),     # 7x7, K 9
])
def test_stem_writes_blocked_output(case):
    """The stem (a dense convolution of few input channels) becomes NCHWC_CONV reading the plain input and writing
    the blocked layout that the depthwise layer after it reads directly (no plain tensor, no layer between); pass on
    and off match float64 numpy, NaN included."""
    N, C, H, W, K, k, stride, act, residual = case
    make, x, want = _stem_chain(np.random.default_rng(11), N, C, H, W, K, k, stride, act, residual)
    on, layers = _build(make)
    off, layers_off = _build(make, off=("nchwc",))
    assert_close(_run(on, x), want)
    assert_close(_run(off, x), want)
    assert layers_off[0]["type"] == "CONVOLUTION"
    if AVX2:
        stem, dw = layers[0], layers[1]
        assert [lay["type"] for lay in layers] == ["NCHWC_CONV"] * 4, [(lay["name"], lay["type"]) for lay in layers]
        assert stem["kernel"] == "nchwc_conv.avx2" and stem["inputs"][0]["name"] == "x"
        assert stem["inputs"][0]["dims"] == str((N, C, H, W))
        assert stem["outputs"][0]["dims"].count(",") == 4 and stem["outputs"][0]["dims"].endswith(", 8)")
        assert dw["inputs"][0]["name"] == stem["outputs"][0]["name"]
        assert dw["inputs"][0]["dims"] == stem["outputs"][0]["dims"]
        if residual:  # the projection takes the blocked stem output as its residual
            assert layers[2]["residual"] and stem["outputs"][0]["name"] in [i["name"] for i in layers[2]["inputs"]]
    else:
        assert not _blocked(layers)


def test_dense_node_input_stays_plain():
    """A dense candidate fed by a blocked-capable convolution (1x1 3 -> 4, then a 3 x 3 stride 2 4 -> 16): the
    tensor between them stays plain (the dense path reads NCHW only), the dense node still writes blocks."""
    make, x, want = _stem_chain(np.random.default_rng(12), 1, 3, 16, 20, 16, 3, 2, "relu6", False, lead=4)
    on, layers = _build(make)
    assert_close(_run(on, x), want)
    if AVX2:
        lead, stem = layers[0], layers[1]
        assert lead["type"] == "CONVOLUTION", (lead["name"], lead["type"])
        assert stem["type"] == "NCHWC_CONV" and stem["inputs"][0]["dims"] == "(1, 4, 16, 20)"
        assert stem["outputs"][0]["dims"] == "(1, 2, 8, 10, 8)"


def test_dense_layers_past_four_channels_keep_their_timed_kernel():
    """The pass takes dense convolutions of 1-4 input channels only (stems; the dense path was measured there): a
    3 x 3 convolution of 12 input channels before a depthwise layer stays CONVOLUTION, its output plain."""
    make, x, want = _stem_chain(np.random.default_rng(13), 1, 12, 16, 20, 16, 3, 2, "relu6", False)
    on, layers = _build(make)
    assert_close(_run(on, x), want)
    assert layers[0]["type"] == "CONVOLUTION", (layers[0]["name"], layers[0]["type"])


def test_stem_dynamic_shapes_plan_round_trip():
    """The blocked stem built at opt 2 x 3 x 32 x 32 runs at other batches and map sizes (odd, smaller than opt) and
    after a plan round trip, matching numpy."""
    engine = None
    for N, H, W in ((2, 32, 32), (1, 17, 23), (3, 40, 9)):
        make, x, want = _stem_chain(np.random.default_rng(N), N, 3, H, W, 24, 3, 2, "relu6", True, dynamic=True)
        if engine is None:
            engine, layers = _build(make, profile=("x", (1, 3, 8, 8), (2, 3, 32, 32), (3, 3, 48, 48)))
            assert layers[0]["type"] == ("NCHWC_CONV" if AVX2 else "CONVOLUTION")
            engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(bytes(engine.serialize()))
        assert_close(_run(engine, x), want)


def test_stem_avx2_path_on_avx512_hosts():
    """With AVX-512 masked off (a subprocess) the stem writes blocks on any AVX2 host and matches numpy."""
    import os
    import test_conv_pixel_gemm as pg
    if not {"avx2", "fma"} <= set(trt.cpu_features()):
        pytest.skip("no AVX2 + FMA")
    pg.run_without_avx512(
        "import sys, numpy as np; sys.path.insert(0, %r); import test_nchwc as t\n"
        "from conftest import assert_close\n"
        "make, x, want = t._stem_chain(np.random.default_rng(9), 2, 3, 21, 19, 32, 3, 2, 'relu6', True)\n"
        "engine, layers = t._build(make)\n"
        "assert [lay['type'] for lay in layers] == ['NCHWC_CONV'] * 4, layers\n"
        "assert layers[1]['inputs'][0]['name'] == layers[0]['outputs'][0]['name'], layers\n"
        "assert_close(t._run(engine, x), want)\n"
        "print('ok')\n" % os.path.dirname(os.path.abspath(__file__)))


def _forced_chain(kernel, seed, C, H, W):
    """(engine, kernels, input, float64 reference) of a batch-2 chain of C channels at H x W with `kernel` forced
    through a forged timing cache (skips where it is no candidate on this CPU)."""
    import test_conv_pixel_gemm as pg
    make, x, want = _chain(np.random.default_rng(seed), 2, C, H, W)
    forced = pg._forced(make, kernel, family="nchwc_conv.")
    if forced is None:
        pytest.skip(f"{kernel} is no candidate on this CPU")
    engine, kernels, _ = forced
    assert kernel in kernels, kernels
    return engine, kernels, x, want


@pytest.mark.parametrize("kernel", BLOCKED_KERNELS)
def test_blocked_pointwise_kernel_forced(kernel):
    """Each blocked kernel forced through a forged timing cache (nchwc_conv.avx512 is a candidate on AVX-512 hosts
    only: skipped elsewhere) computes the chain as float64 numpy; 13 channels make 39 / 29 / 52 / 27 output
    channels, so the 32-channel groups of the wide tiles end in 1-3 real blocks; the 3x3 and 5x5 stride-1 depthwise
    layers run nchwc_conv.avx512's two-pixel rows (9 and 7 interior columns: tiles of 8 / 4 / 2 pixels and a half
    vector), the stride-2 one stays nchwc_conv.avx2."""
    engine, kernels, x, want = _forced_chain(kernel, 11, 13, 9, 11)
    if kernel == "nchwc_conv.avx512":  # every pointwise and stride-1 depthwise layer; the stride-2 one cannot
        blocked = [k for k in kernels if k.startswith("nchwc_conv.")]
        assert len(blocked) == 10 and blocked.count("nchwc_conv.avx2") == 1, kernels
    assert_close(_run(engine, x), want)


@pytest.mark.parametrize("kernel", BLOCKED_KERNELS)
def test_blocked_pointwise_depth_blocks_forced(kernel):
    """Past 192 input channels the pointwise tiles go in depth blocks of 128 (partial sums through the output): 70
    channels make the 210 -> 70 and 280 -> 75 projections (last depth blocks of 82 / 24 channels, 82 a partial channel
    block; 75 outputs: AVX2 groups of 3 + 3 + 3 + 1 blocks, wide groups of 4 + 4 + 2) over 7 x 9 pixels (a tail of 3
    after 4-pixel tiles), each kernel forced, against float64 numpy."""
    engine, kernels, x, want = _forced_chain(kernel, 12, 70, 7, 9)
    assert_close(_run(engine, x), want)


def test_dynamic_shapes_and_other_sizes():
    """Dynamic batch and map (opt 2 x 16 x 16): runs at 1 x 7 x 9, 2 x 16 x 16 and 3 x 21 x 20 match numpy."""
    C = 11
    for N, H, W in ((1, 7, 9), (2, 16, 16), (3, 21, 20)):
        make, x, want = _chain(np.random.default_rng(N), N, C, H, W, dynamic=True)
        engine, layers = _build(make, profile=("x", (1, C, 5, 5), (2, C, 16, 16), (3, C, 24, 24)))
        assert_close(_run(engine, x), want)


def test_plan_round_trip_keeps_the_blocked_layers():
    """A plan with NCHWC_CONV layers deserializes (shape inference re-run on the blocked dims) and computes the same."""
    make, x, want = _chain(np.random.default_rng(3), 1, 16, 12, 12)
    engine, layers = _build(make)
    assert len(_blocked(layers)) == (10 if AVX2 else 0)
    plan = engine.serialize()
    again = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(bytes(plan))
    assert_close(_run(again, x), want)
    np.testing.assert_array_equal(_run(again, x), _run(engine, x))


def test_network_cannot_add_the_internal_op():
    assert not hasattr(trt.INetworkDefinition, "add_nchwc_conv")


def test_portable_machine_keeps_nchw():
    """With every SIMD feature masked (TRTL_CPU_MASK=0, in a subprocess) the pass logs that it is skipped and the
    network computes the same: no blocked kernel, no blocked layer."""
    import os
    import subprocess
    import sys
    code = ("import sys, numpy as np; sys.path.insert(0, %r); import test_nchwc as t\n"
            "from conftest import assert_close\n"
            "make, x, want = t._chain(np.random.default_rng(5), 1, 9, 10, 10)\n"
            "engine, layers = t._build(make)\n"
            "assert not t._blocked(layers), layers\n"
            "assert_close(t._run(engine, x), want)\n"
            "print('ok')\n" % os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, TRTL_CPU_MASK="0"))
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]


def test_avx2_path_on_avx512_hosts():
    """With AVX-512 masked off (a subprocess; on an AVX2-only CPU the same run as above) the chain is blocked and
    matches numpy."""
    import os
    import test_conv_pixel_gemm as pg
    if not {"avx2", "fma"} <= set(trt.cpu_features()):
        pytest.skip("no AVX2 + FMA")
    pg.run_without_avx512(
        "import sys, numpy as np; sys.path.insert(0, %r); import test_nchwc as t\n"
        "from conftest import assert_close\n"
        "make, x, want = t._chain(np.random.default_rng(6), 2, 21, 9, 8)\n"
        "engine, layers = t._build(make)\n"
        "assert len(t._blocked(layers)) == 10, layers\n"
        "assert_close(t._run(engine, x), want)\n"
        "print('ok')\n" % os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(not AVX2, reason="the pass needs AVX2 + FMA")
@pytest.mark.parametrize("flag", ["FP16", "BF16", "INT8"])
def test_reduced_precision_flags(flag):
    """FP16 keeps the blocked layout (no convolution has a HALF kernel), BF16 keeps it only where the CPU lacks
    AVX512_BF16 (else convolution.bf16_gemm must stay a timed candidate), INT8 builds stay NCHW; the results match
    numpy either way."""
    make, x, want = _chain(np.random.default_rng(7), 1, 16, 12, 12)
    engine, layers = _build(make, flags=(getattr(trt.BuilderFlag, flag),))
    blocked = {"FP16": True, "BF16": "avx512bf16" not in trt.cpu_features(), "INT8": False}[flag]
    assert bool(_blocked(layers)) == blocked, [(lay["name"], lay["kernel"]) for lay in layers]
    tol = dict(rtol=3e-2, atol=3e-2) if flag == "BF16" and not blocked else {}  # bf16 products where they won
    assert_close(_run(engine, x), want, **tol)


def test_pass_is_listed_and_switchable(monkeypatch):
    assert "nchwc" in [p[0] for p in trt.builder_passes()]
    make, x, want = _chain(np.random.default_rng(4), 1, 8, 8, 8)
    monkeypatch.setenv("TRTLITE_DISABLE_PASSES", "nchwc")
    engine, layers = _build(make)
    assert not _blocked(layers)
    assert_close(_run(engine, x), want)


@pytest.mark.parametrize("model", ["mobilenet_v2", "resnet50"])
def test_onnx_models_on_and_off_vs_onnxruntime(model, tmp_path):
    """MobileNetV2 and ResNet-50 (tests/onnx_torch_models.py, random weights, non-trivial batch norms) through the
    ONNX parser at 64 x 64, pass on and off, against onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    torch = pytest.importorskip("torch")
    import onnx_torch_models as tm
    torch.manual_seed(0)
    m = getattr(tm, model)()
    shape = (1, 3, 64, 64)
    path = str(tmp_path / "m.onnx")
    torch.onnx.export(m, torch.zeros(shape), path, input_names=["x"], output_names=["y"], opset_version=13,
                      dynamo=False)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for off in ((), ("nchwc",)):
        engine, _ = _onnx_engine(path, off)  # (through a plan: its round trip too)
        out = _run(engine, x)
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())))


def _yolo_like(tmp_path, shape):
    """A YOLO-style detector in miniature (tests/onnx export of torch modules, SiLU everywhere): a 3 -> 16 stem, the
    3 x 3 stride-2 downsamples 16 -> 32 and 32 -> 40 (dense, multiples of 8 channels: the blocked grouped path with
    one group, passes/nchwc.c DENSE_MAX_DEPTH), CSP blocks (two 1x1 branches, a 1x1 + 3x3 bottleneck with its
    shortcut, a concat, a 1x1), a nearest 2x upsample cropped to an odd map and concatenated, a 1x1 head.  Returns
    the ONNX path."""
    torch = pytest.importorskip("torch")
    nn = torch.nn

    class CBS(nn.Sequential):
        def __init__(self, c, k, kk=1, st=1):
            super().__init__(nn.Conv2d(c, k, kk, st, kk // 2), nn.SiLU())

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            h = c // 2
            self.cv1, self.cv2, self.m1, self.m2 = CBS(c, h), CBS(c, h), CBS(h, h), CBS(h, h, 3)
            self.cv3 = CBS(2 * h, c)

        def forward(self, x):
            a = self.cv1(x)
            a = a + self.m2(self.m1(a))
            return self.cv3(torch.cat([a, self.cv2(x)], 1))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem, self.d1, self.b1 = CBS(3, 16, 3, 2), CBS(16, 32, 3, 2), Block(32)
            self.d2, self.b2 = CBS(32, 40, 3, 2), Block(40)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.head = nn.Conv2d(40 + 32, 24, 1)

        def forward(self, x):
            y1 = self.b1(self.d1(self.stem(x)))
            y2 = self.up(self.b2(self.d2(y1)))
            return self.head(torch.cat([y2[:, :, :y1.shape[2], :y1.shape[3]], y1], 1))

    torch.manual_seed(0)
    path = str(tmp_path / "yolo_like.onnx")
    torch.onnx.export(Net().eval(), torch.zeros(shape), path, input_names=["x"], output_names=["y"],
                      opset_version=13, dynamo=False)
    return path


def _onnx_engine(path, off=()):
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, trt.Logger(trt.Logger.WARNING))
    with open(path, "rb") as f:
        assert parser.parse(f.read())
    config = builder.create_builder_config()
    for p in off:
        config.set_pass_enabled(p, False)
    plan = builder.build_serialized_network(network, config)
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(bytes(plan))
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return engine, info["layers"]


def _dense3x3_blocked(layers):
    """The blocked layers whose input is blocked and whose packed weights are 3 x 3 dense: the downsamples."""
    return [lay for lay in _blocked(layers) if "/d1/" in lay["name"] or "/d2/" in lay["name"]]


@pytest.mark.parametrize("shape", [(2, 3, 70, 54), (1, 3, 37, 45)])
def test_yolo_like_dense_downsamples_blocked_vs_onnxruntime(shape, tmp_path, monkeypatch):
    """The YOLO-like net (batch 2 and 1, odd maps) with the pass on, with the dense candidates kept out
    (TRTLITE_NCHWC_DENSE=0) and with the pass off, against onnxruntime.  Pass on, AVX2: both stride-2 downsamples
    (16 -> 32: 144 products an output, 32 -> 40: 288) are NCHWC_CONV, the first reading the stem's blocked output;
    with the variable set neither is."""
    ort = pytest.importorskip("onnxruntime")
    path = _yolo_like(tmp_path, shape)
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    tol = dict(rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())))
    engine, layers = _onnx_engine(path)
    np.testing.assert_allclose(_run(engine, x), want, **tol)
    down = _dense3x3_blocked(layers)
    if AVX2 and "avx512f" not in trt.cpu_features():  # (AVX-512 hosts: the test below)
        assert len(down) == 2, [(lay["name"], lay["type"]) for lay in layers]
        d1 = [lay for lay in down if "/d1/" in lay["name"]][0]
        stem = [lay for lay in layers if "/stem/" in lay["name"]][0]
        assert stem["type"] == "NCHWC_CONV" and d1["inputs"][0]["name"] == stem["outputs"][0]["name"]
        assert d1["inputs"][0]["dims"].count(",") == 4  # blocked [N, 2, H, W, 8]
    else:
        assert not down
    monkeypatch.setenv("TRTLITE_NCHWC_DENSE", "0")
    engine, layers = _onnx_engine(path)
    assert not _dense3x3_blocked(layers)
    np.testing.assert_allclose(_run(engine, x), want, **tol)
    monkeypatch.delenv("TRTLITE_NCHWC_DENSE")
    engine, layers = _onnx_engine(path, off=("nchwc",))
    assert not _blocked(layers)
    np.testing.assert_allclose(_run(engine, x), want, **tol)


def test_yolo_like_dense_downsamples_on_avx512_hosts(tmp_path):
    """On AVX-512 hosts the pass leaves the dense downsamples to convolution.packed_gemm's 16-lane tiles (faster there
    than the blocked path's AVX2 tiles: the lent Xeon, session 20); with AVX-512 hidden (a subprocess) it blocks both,
    the first reading the stem's blocked output, and matches onnxruntime."""
    import os
    import test_conv_pixel_gemm as pg
    if not AVX2 or "avx512f" not in trt.cpu_features():
        pytest.skip("an AVX-512 host's rule")
    ort = pytest.importorskip("onnxruntime")
    path = _yolo_like(tmp_path, (1, 3, 37, 45))
    x = np.random.default_rng(4).standard_normal((1, 3, 37, 45)).astype(np.float32)
    np.save(str(tmp_path / "x.npy"), x)
    np.save(str(tmp_path / "want.npy"), ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0])
    engine, layers = _onnx_engine(path)
    assert not _dense3x3_blocked(layers), [(lay["name"], lay["type"]) for lay in layers]
    pg.run_without_avx512(
        "import sys, numpy as np; sys.path.insert(0, %r); import test_nchwc as t\n"
        "engine, layers = t._onnx_engine(%r)\n"
        "down = t._dense3x3_blocked(layers)\n"
        "assert len(down) == 2, [(lay['name'], lay['type']) for lay in layers]\n"
        "x, want = np.load(%r), np.load(%r)\n"
        "np.testing.assert_allclose(t._run(engine, x), want, rtol=1e-4, atol=1e-4 * max(1.0, float(abs(want).max())))\n"
        "print('ok')\n" % (os.path.dirname(os.path.abspath(__file__)), path, str(tmp_path / "x.npy"),
                           str(tmp_path / "want.npy")))


def test_dense_layers_past_the_depth_limit_keep_their_timed_kernel(tmp_path):
    """Dense 3 x 3 convolutions of multiples of 8 channels past DENSE_MAX_DEPTH (C * 9 > 288) or at stride 1 stay
    CONVOLUTION (packed_gemm / Winograd measured faster there): the bottlenecks' 3 x 3 layers of the YOLO-like net."""
    path = _yolo_like(tmp_path, (1, 3, 40, 40))
    engine, layers = _onnx_engine(path)
    m2 = [lay for lay in layers if "/m2/" in lay["name"] and "Conv" in lay["name"]]
    assert m2 and all(lay["type"] == "CONVOLUTION" for lay in m2), [(lay["name"], lay["type"]) for lay in m2]


@pytest.mark.parametrize("k", [1, 3])
def test_pointwise_stride2_projection_stays_plain(k):
    """Dense stride-2 convolutions of multiples of 8 channels join a blocked region (passes/nchwc.c dense8_shape) only
    with a window past 1x1: a 1x1 stride-2 projection 16 -> 24 (RegNetY's / ResNet-50's shortcut shape, 16 products
    an output) before a 1x1 layer stays CONVOLUTION, and so does the 1x1 layer (session 21: blocking the projections
    put the next blocks' 1x1 layers on the blocked tiles with a plain output, slower at batch 8); the same chain with
    a 3x3 stride-2 convolution blocks both on AVX2 hosts without AVX-512.  Pass on and off vs float64 numpy."""
    x = np.random.default_rng(2).standard_normal((2, 16, 21, 19)).astype(np.float32)
    holder = {}

    def make(network):
        m = _Net(network, np.random.default_rng(5), x, False)
        m.t, m.ref = m.conv(m.t, m.ref, 24, k, 2, 1, "relu")
        m.head(32, "none")
        holder["ref"] = m.ref

    make(trt.Builder(trt.Logger(trt.Logger.WARNING)).create_network(0))
    on, layers = _build(make)
    off, layers_off = _build(make, off=("nchwc",))
    assert_close(_run(on, x), holder["ref"])
    assert_close(_run(off, x), holder["ref"])
    assert not _blocked(layers_off)
    dense8 = AVX2 and "avx512f" not in trt.cpu_features()
    want = 2 if k == 3 and dense8 else 0
    assert len(_blocked(layers)) == want, [(lay["name"], lay["type"]) for lay in layers]
