"""Convolution weights held once (engine/weights.c, kernel->unpack; issue #10): the convolution kernels that
pack their weights in prepare() -- convolution.packed_gemm (A panels), .pixel_gemm (B tiles),
.grouped_direct (8-channel blocks), .tapwise (A panels per tap), .1x1_direct and .1x1_block (8-channel panels),
.stem (4 / 8-channel blocks)
-- keep only the packed copy; the engine frees the plain one, built in process or loaded from a plan, and the plan
writer rebuilds the values from the packed state.  Checked
through the inspector's "plain_weight_bytes" (a byte count, not a noisy RSS), outputs against float64 numpy,
the plan's weight bytes against the original numpy weights, and plan -> engine -> plan bit-identical.
Refittable engines keep the plain copy."""
import json

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close
from test_conv_pixel_gemm import _build, _parse, _run, _write

# kernel, (N, C, K, H, W, k, stride, pad, groups[, dilation])
CASES = [
    ("convolution.packed_gemm", (1, 20, 30, 11, 9, 3, 2, 1, 1)),  # K not a multiple of mr, stride 2
    ("convolution.pixel_gemm", (1, 24, 40, 7, 7, 3, 1, 1, 1)),    # K past one 32-wide tile
    ("convolution.grouped_direct", (1, 32, 48, 9, 9, 3, 1, 1, 4)),  # 8 in, 12 out per group
    ("convolution.tapwise", (1, 20, 27, 7, 6, 3, 1, 4, 1, 4)),     # dilation 4: off-centre taps partial
    ("convolution.1x1_direct", (1, 24, 21, 9, 9, 1, 1, 0, 1)),     # 1x1: panels of 8 output channels, a K tail
    ("convolution.1x1_block", (1, 20, 30, 11, 9, 1, 2, 0, 1)),     # 1x1 stride 2 over pixel blocks, same panels
    ("convolution.stem", (1, 3, 13, 11, 9, 3, 2, 1, 1)),            # 3 input channels: 4 / 8-channel blocks, a K tail
]


def _case(rng, N, C, K, H, W, k, stride, pad, groups, dilation=1):
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = (rng.standard_normal((K, C // groups, k, k)) / np.sqrt(C // groups * k * k)).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    xs = np.split(x.astype(np.float64), groups, axis=1)
    ws = np.split(w.astype(np.float64), groups, axis=0)
    bs = np.split(b.astype(np.float64), groups)
    want = np.concatenate([refs.convolution(xg, wg, bg, (stride, stride), (pad, pad), (pad, pad),
                                            (dilation, dilation))
                           for xg, wg, bg in zip(xs, ws, bs)], axis=1)

    def make(network):
        t = network.add_input("x", trt.float32, x.shape)
        layer = network.add_convolution_nd(t, K, (k, k), w, b)
        layer.stride_nd = (stride, stride)
        layer.padding_nd = (pad, pad)
        layer.num_groups = groups
        layer.dilation_nd = (dilation, dilation)
        out = network.add_activation(layer.get_output(0), trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    make.bias = b
    return make, {"x": x}, np.maximum(want, 0), w


def _cache_forcing(make, kernel):
    """A timing cache in which every convolution kernel but `kernel` is slow; None where it is no candidate."""
    _, _, data = _build(make)
    cpus, entries = _parse(data)
    if not any(e[2].startswith(kernel + "|") for e in entries):
        return None
    for e in entries:
        if e[2].startswith("convolution."):
            e[3] = 1e-6 if e[2].startswith(kernel + "|") else 1e3
    return _write(cpus, entries)


def _engine(make, cache, refit=False):
    """An engine built in process (builder.build_engine) with the forged timing cache."""
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(0)
    make(network)
    config = builder.create_builder_config()
    config.num_threads = 2
    config.set_timing_cache(config.create_timing_cache(cache), False)
    if refit:
        config.set_flag(trt.BuilderFlag.REFIT)
    engine = builder.build_engine(network, config)
    assert engine is not None
    return engine


def _info(engine):
    return json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))


def _assert_held_packed(doc, kernel, w):
    """The engine's only layer runs `kernel` and holds weights w packed only: its plain copy freed (only the bias
    stays plain), the packed copy counted instead (padded panels / tiles: at least the weights, at most twice)."""
    assert [layer["kernel"] for layer in doc["layers"]] == [kernel], doc["layers"]
    assert doc["plain_weight_bytes"] < w.nbytes, (doc["plain_weight_bytes"], w.nbytes)
    assert w.nbytes <= doc["packed_weight_bytes"] <= 2 * w.nbytes + 4096, (doc["packed_weight_bytes"], w.nbytes)


@pytest.mark.parametrize("kernel,shape", CASES, ids=[c[0].split(".")[1] for c in CASES])
def test_conv_weights_held_once(kernel, shape, rng):
    """Built in process and loaded from its plan, the layer's plain weights are freed (only the bias stays
    plain); the plan holds the original weights bit for bit, re-serializes to the same bytes, and every engine
    computes the float64 reference (the loaded one bit-equal to the built one)."""
    make, inputs, want, w = _case(rng, *shape)
    cache = _cache_forcing(make, kernel)
    if cache is None:
        pytest.skip("%s is no candidate on this CPU" % kernel)
    engine = _engine(make, cache)
    doc = _info(engine)
    _assert_held_packed(doc, kernel, w)
    out = _run(engine, inputs)
    assert_close(out, want)
    plan = bytes(engine.serialize())
    assert w.tobytes() in plan  # the plan writer rebuilt the plain weights exactly
    loaded = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)
    assert _info(loaded)["plain_weight_bytes"] == doc["plain_weight_bytes"]
    assert _info(loaded)["packed_weight_bytes"] == doc["packed_weight_bytes"]
    np.testing.assert_array_equal(_run(loaded, inputs), out)
    assert bytes(loaded.serialize()) == plan


@pytest.mark.parametrize("kernel,tile", [("convolution.winograd_f23", 4), ("convolution.winograd_f43", 6)])
def test_winograd_weights_held_once(kernel, tile, rng):
    """Winograd holds the transformed weights and one byte per weight that gives the plain ones back bit for bit
    (winograd_exact.c), so the engine frees the plain copy: the inspector counts the transforms (tile x tile per
    3x3 kernel, output channels rounded up to the register block) plus about a quarter of the weights; the plan
    holds the original weights exactly, re-serializes to the same bytes, and built and loaded engines compute the
    float64 reference -- also with NaN / Inf in the input, where tiles run the direct convolution from the rebuilt
    weights (a zero weight times Inf is NaN there, as in numpy)."""
    make, inputs, want, w = _case(rng, 1, 16, 24, 16, 15, 3, 1, 1, 1)  # 16 tiles of 4x4: F43 is a candidate
    w[3, 2] = 0.0  # a whole zero 3x3 kernel and single zero / negative-zero taps
    w[5, 1, 1, 1] = 0.0
    w[7, 0, 0, 2] = -0.0
    w[9, 4, 2, 0] = 1e-30  # far below its neighbours: no int8 difference reaches it
    x = inputs["x"]  # make() reads w when the network is built, so the edits above count
    want = np.maximum(refs.convolution(x.astype(np.float64), w.astype(np.float64), make.bias.astype(np.float64), (1, 1), (1, 1),
                                       (1, 1)), 0)
    cache = _cache_forcing(make, kernel)
    if cache is None:
        pytest.skip("%s is no candidate on this CPU" % kernel)
    engine = _engine(make, cache)
    doc = _info(engine)
    assert [layer["kernel"] for layer in doc["layers"]] == [kernel], doc["layers"]
    assert doc["plain_weight_bytes"] < w.nbytes // 8, (doc["plain_weight_bytes"], w.nbytes)
    transformed = w.nbytes // 9 * tile * tile
    held = transformed + w.nbytes // 4
    assert held <= doc["packed_weight_bytes"] <= held + transformed // 2 + 4096, (doc["packed_weight_bytes"], held)
    out = _run(engine, inputs)
    assert_close(out, want)
    plan = bytes(engine.serialize())
    assert w.tobytes() in plan  # rebuilt bit for bit (the -0.0 and 1e-30 included)
    loaded = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)
    assert _info(loaded)["plain_weight_bytes"] == doc["plain_weight_bytes"]
    np.testing.assert_array_equal(_run(loaded, inputs), out)
    assert bytes(loaded.serialize()) == plan
    # non-finite inputs: the direct fallback reads the rebuilt weights
    bad = x.copy()
    bad[0, 2, 5, 6] = np.inf
    bad[0, 3, 0, 14] = np.nan
    bad[0, 0, 9, 1] = -np.inf
    with np.errstate(invalid="ignore", over="ignore"):
        want_bad = refs.convolution(bad.astype(np.float64), w.astype(np.float64), make.bias.astype(np.float64), (1, 1), (1, 1), (1, 1))
    want_bad = np.where(np.isnan(want_bad), np.nan, np.maximum(want_bad, 0))
    got = _run(loaded, {"x": bad})
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want_bad))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want_bad))
    fin = np.isfinite(want_bad)
    assert_close(got[fin], want_bad[fin])


def test_deconvolution_weights_held_once(rng):
    """deconvolution.packed_gemm frees the plain weights once packed (the packing only moves floats): plain bytes
    below the weights', the plan holds them bit for bit and re-serializes to the same bytes, float64 results."""
    N, C, K, H, W = 1, 24, 20, 9, 11
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = (rng.standard_normal((C, K, 2, 2)) / np.sqrt(C * 4)).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    want = refs.deconvolution(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), (2, 2))

    def make(network):
        t = network.add_input("x", trt.float32, x.shape)
        layer = network.add_deconvolution_nd(t, K, (2, 2), w, b)
        layer.stride_nd = (2, 2)
        out = layer.get_output(0)
        out.name = "y"
        network.mark_output(out)

    kernel = "deconvolution.packed_gemm"
    _, kernels, cache = _build(make)  # its only candidate here, chosen without timing
    if kernels != [kernel]:
        pytest.skip("%s is no candidate on this CPU" % kernel)
    engine = _engine(make, cache)
    doc = _info(engine)
    _assert_held_packed(doc, kernel, w)
    out = _run(engine, {"x": x})
    assert_close(out, want)
    plan = bytes(engine.serialize())
    assert w.tobytes() in plan
    loaded = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)
    assert _info(loaded)["plain_weight_bytes"] == doc["plain_weight_bytes"]
    np.testing.assert_array_equal(_run(loaded, {"x": x}), out)
    assert bytes(loaded.serialize()) == plan
    refit = _engine(make, cache, refit=True)
    assert _info(refit)["plain_weight_bytes"] >= w.nbytes
    assert_close(_run(refit, {"x": x}), want)


def test_conv_refittable_keeps_plain_weights(rng):
    """A refittable engine keeps the plain copy beside the packed one (refit writes there and packs again)."""
    kernel, shape = CASES[0]
    make, inputs, want, w = _case(rng, *shape)
    cache = _cache_forcing(make, kernel)
    if cache is None:
        pytest.skip("%s is no candidate on this CPU" % kernel)
    engine = _engine(make, cache, refit=True)
    assert _info(engine)["layers"][0]["kernel"] == kernel
    assert _info(engine)["plain_weight_bytes"] >= w.nbytes
    assert_close(_run(engine, inputs), want)
