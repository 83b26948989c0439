"""convolution.tapwise (csrc/kernels/x86/convolution_tapwise.c, issue #10) at layer level: dilated convolutions
whose off-centre taps read padding over part or all of the map (DeepLabV3's ASPP) + bias + residual add +
activation, built three ways -- with timing, with a timing cache forged so that kernel selection keeps
convolution.tapwise (the engine inspector shows it ran), and at optimization level 0 (reference kernels) -- each
compared with a float64 numpy reference, NaN included (a NaN input, and a NaN weight on a tap that only reads
padding, which numpy's zero padding turns into a NaN channel).  Also the AVX2 variant (TRTL_CPU_MASK without
AVX-512, in a subprocess), the ASPP's own shape (chosen by timing), and a run at another input size than the opt
shape (more taps live)."""
import os

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close
import test_conv_pixel_gemm as pg

KERNEL = "convolution.tapwise"


def _case(rng, N, C, K, H, W, d, act, nan_w=None):
    """Network maker and float64 reference of conv(3x3, dilation = padding = d) + bias + skip, then act.
    nan_w: (k, c, kh, kw) of a weight set to NaN."""
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    x[N - 1, C // 2, H // 2, W // 2] = np.nan
    w = (rng.standard_normal((K, C, 3, 3)) / np.sqrt(C * 9)).astype(np.float32)
    if nan_w is not None:
        w[nan_w] = np.nan
    b = rng.standard_normal(K).astype(np.float32)
    conv = refs.convolution(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), (1, 1), (d, d),
                            (d, d), dilation=(d, d))
    skip = rng.standard_normal(conv.shape).astype(np.float32)
    y = conv + skip
    want = np.where(y > 0, y, 0.0) if act == "relu" else y
    want[np.isnan(y)] = np.nan

    def make(network):
        t = network.add_input("x", trt.float32, x.shape)
        s = network.add_input("s", trt.float32, skip.shape)
        layer = network.add_convolution_nd(t, K, (3, 3), w, b)
        layer.padding_nd = (d, d)
        layer.dilation_nd = (d, d)
        out = network.add_elementwise(layer.get_output(0), s, trt.ElementWiseOperation.SUM).get_output(0)
        if act == "relu":
            out = network.add_activation(out, trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    return make, {"x": x, "s": skip}, want


def _forced(make):
    """The layer built with this file's kernel forced through the timing cache (test_conv_pixel_gemm._forced)."""
    return pg._forced(make, KERNEL)


SHAPES = [  # N, C, K, H, W, d, act, nan_w
    (1, 24, 40, 9, 9, 6, "relu", None),           # off-centre taps partial: 3-row / 3-column bands, 3x3 corners
    (2, 16, 20, 6, 7, 8, "none", None),           # every off-centre tap dead: a 1x1 convolution, batch 2
    (1, 8, 12, 6, 6, 7, "none", (5, 3, 0, 0)),    # NaN weight on a dead tap: channel 5 all NaN
    (1, 8, 12, 9, 9, 6, "relu", (2, 1, 2, 1)),    # NaN weight on a partial tap: channel 2 all NaN
]


@pytest.mark.parametrize("shape", SHAPES)
def test_tapwise_layer(shape, rng):
    """Timed, forced and reference builds all match float64 numpy; the forced one ran convolution.tapwise."""
    make, inputs, want = _case(rng, *shape)
    pg._check_timed_ref_forced(make, inputs, want, KERNEL)


def test_tapwise_chosen_for_aspp(rng):
    """DeepLabV3's ASPP branch at 224x224 (960 -> 256 channels, 14x14 map, dilation 24: only the centre tap
    reads the image) is timed fastest as convolution.tapwise and matches numpy."""
    make, inputs, want = _case(rng, 1, 960, 256, 14, 14, 24, "relu")
    engine, kernels, _ = pg._build(make)
    if KERNEL not in kernels and _forced(make) is None:
        pytest.skip("convolution.tapwise is no candidate on this CPU")
    assert KERNEL in kernels, kernels
    assert_close(pg._run(engine, inputs), want)


def test_tapwise_layer_avx2_variant():
    """The AVX2 variant (6 x 16 tiles), forced the same way, in a subprocess with AVX-512 (and AMX) masked off by
    TRTL_CPU_MASK; on a CPU without AVX-512 this is the same run as above."""
    code = (
        "import sys, numpy as np; sys.path.insert(0, %r); import test_conv_tapwise as t\n"
        "from conftest import assert_close\n"
        "make, inputs, want = t._case(np.random.default_rng(3), 1, 20, 30, 9, 9, 6, 'relu', (4, 2, 0, 2))\n"
        "forced = t._forced(make)\n"
        "if forced is None: print('ok'); sys.exit(0)\n"
        "engine, kernels, _ = forced\n"
        "assert t.KERNEL in kernels, kernels\n"
        "assert_close(t.pg._run(engine, inputs), want)\n"
        "print('ok')\n" % os.path.dirname(os.path.abspath(__file__)))
    pg.run_without_avx512(code)


def test_tapwise_other_input_size(rng):
    """Built for 7x7 with dynamic H/W (dilation 8: only the centre tap live), run at 7x7 and at 12x12 (the
    off-centre taps now read the image over bands); both match numpy."""
    K, C, d = 24, 16, 8
    w = (rng.standard_normal((K, C, 3, 3)) / 12).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)

    def make(network):
        t = network.add_input("x", trt.float32, (1, C, -1, -1))
        layer = network.add_convolution_nd(t, K, (3, 3), w, b)
        layer.padding_nd = (d, d)
        layer.dilation_nd = (d, d)
        out = network.add_activation(layer.get_output(0), trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(0)
    make(network)
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, C, 5, 5), (1, C, 7, 7), (1, C, 12, 12))
    config.add_optimization_profile(profile)
    tc = config.create_timing_cache(b"")
    config.set_timing_cache(tc, False)
    assert builder.build_serialized_network(network, config) is not None
    cpus, entries = pg._parse(bytes(tc.serialize()))
    if not any(e[2].startswith(KERNEL + "|") for e in entries):
        pytest.skip("convolution.tapwise does not apply on this CPU")
    for e in entries:
        if e[2].startswith("convolution."):
            e[3] = 1e-6 if e[2].startswith(KERNEL + "|") else 1e3
    config = builder.create_builder_config()
    config.add_optimization_profile(profile)
    config.set_timing_cache(config.create_timing_cache(pg._write(cpus, entries)), False)
    plan = builder.build_serialized_network(network, config)
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(bytes(plan))
    import json
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    assert KERNEL in [layer["kernel"] for layer in info["layers"]], info
    ctx = engine.create_execution_context()
    for hw in (7, 12):
        x = rng.standard_normal((1, C, hw, hw)).astype(np.float32)
        conv = refs.convolution(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), (1, 1), (d, d),
                                (d, d), dilation=(d, d))
        out = ctx.infer({"x": x})
        assert_close(list(out.values())[0], np.maximum(conv, 0))
