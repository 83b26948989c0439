"""Pre-activation fusion (builder pass `fuse_preact`, csrc/builder/passes/fuse_preact.c): a batch norm and its
activation read only by 1x1 convolutions become those convolutions' input transform -- the internal op PREACT_CONV
(csrc/network/ops/preact_conv.c, reference in csrc/kernels/ref/convolution.c), run by preact_conv.packed_gemm
(csrc/kernels/x86/convolution_gemm.c), which maps the activations while it packs them.

* A small DenseNet made in the test as ONNX (stem, two dense layers BN -> act -> 1x1 conv -> BN -> ReLU -> 3x3 conv on
  the growing concatenation, a transition BN -> act -> 1x1 conv -> average pool), channel counts with tails, batch 1
  (in-place concatenations) and 2 (copying ones), a NaN in the input: trtlite with the pass on and off against
  onnxruntime; on: the three BN -> 1x1 conv pairs are PREACT_CONV steps and no scale step is left.
* A batch norm that a 3x3 convolution or a second reader also reads stays a scale step.
* The kernel forced (timing cache) on shapes with tile tails and two depth blocks, and the reference kernels
  (optimization level 0), against float64 numpy, NaN included.
The kernel against its reference on random shapes: tests/c/test_kernels.c (test_preact_conv)."""
import json

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close
from onnx_helpers import helper, make_model, ort_run, parse, assert_outputs_close
import test_conv_pixel_gemm as pg

AVX2 = {"avx2", "fma"} <= set(trt.cpu_features())
KERNEL = "preact_conv.packed_gemm"


def _densenet(rng, C0, growth, act):
    """(ONNX model, input name) of a stem, two dense layers and a transition; `act` after each leading batch norm:
    relu, relu6 (Clip 0..6), leaky or none."""
    nodes, inits = [], {}

    def const(name, a):
        inits[name] = np.asarray(a, np.float32)
        return name

    def conv(x, cin, cout, k, name):
        w = rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)
        b = rng.standard_normal(cout) * 0.1
        nodes.append(helper.make_node("Conv", [x, const(name + "_w", w), const(name + "_b", b)], [name],
                                      kernel_shape=[k, k], pads=[k // 2] * 4))
        return name

    def bn(x, c, name):
        scale = rng.standard_normal(c) * 1.5  # negative scales too
        bias = rng.standard_normal(c) * 0.5
        mean = rng.standard_normal(c) * 0.2
        var = rng.uniform(0.5, 2.0, c)
        nodes.append(helper.make_node("BatchNormalization", [x, const(name + "_s", scale), const(name + "_t", bias),
                                                             const(name + "_m", mean), const(name + "_v", var)],
                                      [name], epsilon=1e-5))
        return name

    def activation(x, kind, name):
        if kind == "none":
            return x
        if kind == "relu":
            nodes.append(helper.make_node("Relu", [x], [name]))
        elif kind == "leaky":
            nodes.append(helper.make_node("LeakyRelu", [x], [name], alpha=0.1))
        else:
            nodes.append(helper.make_node("Clip", [x, const(name + "_lo", 0.0), const(name + "_hi", 6.0)], [name]))
        return name

    h = activation(conv("x", 3, C0, 3, "stem"), "relu", "stem_act")
    c = C0
    for i in range(2):
        t = activation(bn(h, c, f"d{i}_bn1"), act, f"d{i}_a1")
        t = conv(t, c, 12, 1, f"d{i}_conv1")
        t = activation(bn(t, 12, f"d{i}_bn2"), "relu", f"d{i}_a2")
        t = conv(t, 12, growth, 3, f"d{i}_conv2")
        nodes.append(helper.make_node("Concat", [h, t], [f"d{i}_cat"], axis=1))
        h, c = f"d{i}_cat", c + growth
    t = activation(bn(h, c, "tr_bn"), act, "tr_a")
    t = conv(t, c, 10, 1, "tr_conv")
    nodes.append(helper.make_node("AveragePool", [t], ["y"], kernel_shape=[2, 2], strides=[2, 2]))
    return nodes, inits


def _build(model, off=(), threads=2):
    builder, network, _ = parse(model)
    config = builder.create_builder_config()
    config.num_threads = threads
    for p in off:
        config.set_pass_enabled(p, False)
    plan = builder.build_serialized_network(network, config)
    assert plan is not None
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return engine, info["layers"]


def _types(layers, t):
    return [lay for lay in layers if lay["type"] == t]


@pytest.mark.parametrize("act", ["relu", "relu6", "leaky", "none"])
@pytest.mark.parametrize("shape", [(1, 13, 11), (2, 9, 10)])
def test_densenet_on_and_off(act, shape):
    """Pass on and off against onnxruntime; on: the three BN -> 1x1 conv pairs are PREACT_CONV steps, no SCALE."""
    rng = np.random.default_rng(3)
    N, H, W = shape
    nodes, inits = _densenet(rng, 19, 7, act)
    model = make_model(nodes, {"x": (N, 3, H, W)}, {"y": None}, inits)
    x = rng.standard_normal((N, 3, H, W)).astype(np.float32)
    x[N - 1, 1, H // 2, W // 3] = np.nan
    want = ort_run(model, {"x": x})
    for off in ((), ("fuse_preact",)):
        engine, layers = _build(model, off)
        got = engine.create_execution_context().infer({"x": x})
        assert_outputs_close(got, want)
        pre = _types(layers, "PREACT_CONV")
        if off or not AVX2:
            assert not pre and len(_types(layers, "SCALE")) == 3, [(lay["name"], lay["type"]) for lay in layers]
        else:
            assert len(pre) == 3 and not _types(layers, "SCALE"), [(lay["name"], lay["type"]) for lay in layers]
            assert all(lay["kernel"] in (KERNEL, "preact_conv.ref") for lay in pre), pre
            assert all("BatchNormalization" in lay["name"] or "bn" in lay["name"] for lay in pre), pre


def _scale_conv(rng, N, C, K, H, W, act, k=1, second_reader=False):
    """(network maker, input, float64 reference) of a per-channel scale (no power) + act, then a k x k convolution
    (padding k // 2) + bias + ReLU; with second_reader the scaled tensor is also an output ("z")."""
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    x[N - 1, C - 1, H - 1, W // 2] = np.nan
    s = (rng.standard_normal(C) * 1.5).astype(np.float32)
    t = (rng.standard_normal(C) * 0.5).astype(np.float32)
    w = (rng.standard_normal((K, C, k, k)) / np.sqrt(C * k * k)).astype(np.float32)
    b = (rng.standard_normal(K) * 0.1).astype(np.float32)
    kinds = {"relu": (trt.ActivationType.RELU, 0.0, 0.0), "relu6": (trt.ActivationType.CLIP, 0.0, 6.0),
             "sigmoid": (trt.ActivationType.SIGMOID, 0.0, 0.0)}
    v = x.astype(np.float64) * s[None, :, None, None] + t[None, :, None, None]
    with np.errstate(invalid="ignore"):
        v = {"relu": lambda a: np.where(a < 0, 0.0, a), "relu6": lambda a: np.where(np.isnan(a), a, np.clip(a, 0, 6)),
             "sigmoid": lambda a: 1.0 / (1.0 + np.exp(-a))}[act](v)
    import refs
    y = refs.convolution(v, w.astype(np.float64), b.astype(np.float64), (1, 1), (k // 2, k // 2), (k // 2, k // 2))
    with np.errstate(invalid="ignore"):
        want = np.where(y < 0, 0.0, y)

    def make(network):
        inp = network.add_input("x", trt.float32, x.shape)
        sc = network.add_scale(inp, trt.ScaleMode.CHANNEL, t, s, np.empty(0, np.float32))
        kind, alpha, beta = kinds[act]
        a = network.add_activation(sc.get_output(0), kind)
        a.alpha, a.beta = alpha, beta
        conv = network.add_convolution_nd(a.get_output(0), K, (k, k), w, b)
        conv.padding_nd = (k // 2, k // 2)
        out = network.add_activation(conv.get_output(0), trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)
        if second_reader:
            z = a.get_output(0)
            z.name = "z"
            network.mark_output(z)

    return make, x, want


@pytest.mark.parametrize("case", [
    (1, 520, 21, 7, 7, "relu"),    # two depth blocks, 49 pixels (a one-column tile tail)
    (2, 37, 19, 9, 13, "relu6"),   # batch 2, tails everywhere
    (1, 24, 40, 14, 14, "sigmoid"),  # an activation the packing tiles do not take (row-buffer path)
])
def test_forced_kernel_and_reference(case):
    """The timed build, the reference build (optimization level 0: preact_conv.ref) and the build with
    preact_conv.packed_gemm forced all match float64 numpy (NaN included); the scale became the input transform."""
    N, C, K, H, W, act = case
    make, x, want = _scale_conv(np.random.default_rng(5), N, C, K, H, W, act)
    pg._check_timed_ref_forced(make, {"x": x}, want, KERNEL, required=AVX2)
    if AVX2:
        _, kernels, _ = pg._build(make)
        assert len(kernels) == 1 and kernels[0].startswith("preact_conv."), kernels


@pytest.mark.parametrize("k,second", [(3, False), (1, True)])
def test_not_fused(k, second):
    """A scale before a 3x3 convolution, or whose result is also a network output, stays a scale step; the result
    matches float64 numpy either way."""
    make, x, want = _scale_conv(np.random.default_rng(9), 1, 11, 6, 8, 9, "relu", k=k, second_reader=second)
    engine, kernels, _ = pg._build(make)
    assert not any(kn.startswith("preact_conv.") for kn in kernels), kernels
    ctx = engine.create_execution_context()
    out = ctx.infer({"x": x})
    assert_close(out["y"], want)


def test_pass_listed_and_switchable(monkeypatch):
    """fuse_preact is in builder_passes(); TRTLITE_DISABLE_PASSES switches it off."""
    assert "fuse_preact" in [p[0] for p in trt.builder_passes()]
    make, x, want = _scale_conv(np.random.default_rng(2), 1, 16, 8, 6, 6, "relu")
    monkeypatch.setenv("TRTLITE_DISABLE_PASSES", "fuse_preact")
    engine, kernels, _ = pg._build(make)
    assert not any(kn.startswith("preact_conv.") for kn in kernels), kernels
    assert_close(engine.create_execution_context().infer({"x": x})["y"], want)


def test_plan_round_trip_and_refit_builds():
    """A deserialized engine with PREACT_CONV steps serializes again (the packed weights written back by the kernel)
    to an engine computing the same values; a REFIT build keeps the scale (refit finds the batch norm there)."""
    make, x, want = _scale_conv(np.random.default_rng(4), 1, 40, 24, 9, 11, "relu")
    engine, kernels, _ = pg._build(make)
    again = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(bytes(engine.serialize()))
    for e in (engine, again):
        assert_close(e.create_execution_context().infer({"x": x})["y"], want)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(0)
    make(network)
    config = builder.create_builder_config()
    config.set_flag(trt.BuilderFlag.REFIT)
    refit = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(
        bytes(builder.build_serialized_network(network, config)))
    info = json.loads(refit.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    assert not _types(info["layers"], "PREACT_CONV") and _types(info["layers"], "SCALE"), info["layers"]
    assert_close(refit.create_execution_context().infer({"x": x})["y"], want)
