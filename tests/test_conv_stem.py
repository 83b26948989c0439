"""convolution.stem (csrc/kernels/x86/convolution_stem.c, issue #10) at layer level: dense convolutions with few input
channels (a network's first layer: 3x3 s2, 7x7 s2, 4x4 s4 patchify, dilated, asymmetric padding) + bias (+ residual
add) + activation, built three ways -- with timing, with a timing cache forged so that kernel selection keeps
convolution.stem (the engine inspector shows it ran), and at optimization level 0 (reference kernels) -- each compared
with a float64 numpy reference, NaN included.  Also the AVX2 and portable variants (TRTL_CPU_MASK, in subprocesses)
and a dynamic input size run at several sizes."""
import os

import numpy as np
import pytest

import trtlite as trt

import refs
import test_conv_pixel_gemm as pg
from conftest import assert_close

KERNEL = "convolution.stem"


def _case(rng, N, C, K, H, W, k, stride, pre, post, dil, act, residual):
    """Network maker and float64 reference of conv(k, stride, padding pre / post, dilation) + bias (+ skip), then act
    ("relu6": CLIP 0..6, in the kernel's registers; "sigmoid": after each band; "none")."""
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    x[N - 1, C // 2, H // 2, W // 3] = np.nan
    w = (rng.standard_normal((K, C) + k) / np.sqrt(C * k[0] * k[1])).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    y = refs.convolution(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), stride, pre, post, dil)
    skip = rng.standard_normal(y.shape).astype(np.float32) if residual else None
    if residual:
        y = y + skip
    if act == "relu6":
        want = np.clip(y, 0.0, 6.0)
    elif act == "sigmoid":
        want = 1.0 / (1.0 + np.exp(-y))
    else:
        want = y
    want[np.isnan(y)] = np.nan

    def make(network):
        t = network.add_input("x", trt.float32, x.shape)
        layer = network.add_convolution_nd(t, K, k, w, b)
        layer.stride_nd = stride
        layer.pre_padding = pre
        layer.post_padding = post
        layer.dilation_nd = dil
        out = layer.get_output(0)
        if residual:
            s = network.add_input("s", trt.float32, skip.shape)
            out = network.add_elementwise(out, s, trt.ElementWiseOperation.SUM).get_output(0)
        if act == "relu6":
            a = network.add_activation(out, trt.ActivationType.CLIP)
            a.alpha, a.beta = 0.0, 6.0
            out = a.get_output(0)
        elif act == "sigmoid":
            out = network.add_activation(out, trt.ActivationType.SIGMOID).get_output(0)
        out.name = "y"
        network.mark_output(out)

    return make, dict({"x": x}, **({"s": skip} if residual else {})), want


SHAPES = [  # N, C, K, H, W, k, stride, pre, post, dilation, act, residual
    (1, 3, 32, 33, 38, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), "relu6", False),  # MobileNet stem, odd map
    (2, 3, 20, 23, 29, (7, 7), (2, 2), (3, 3), (3, 3), (1, 1), "none", True),    # ResNet stem, K past a tile, batch 2
    (1, 3, 24, 18, 22, (4, 4), (4, 4), (0, 0), (0, 0), (1, 1), "sigmoid", False),  # ConvNeXt patchify, tails
    (3, 5, 9, 13, 27, (3, 5), (1, 3), (2, 0), (1, 2), (2, 1), "relu6", True),    # dilation, strides (1, 3), 3 images
]


@pytest.mark.parametrize("shape", SHAPES)
def test_stem_layer(shape, rng):
    """Timed, forced and reference builds all match float64 numpy; the forced one ran the kernel."""
    make, inputs, want = _case(rng, *shape)
    pg._check_timed_ref_forced(make, inputs, want, KERNEL, required=True)  # the portable variant applies anywhere


@pytest.mark.parametrize("mask", [pg.NO_AVX512, pg.NO_SIMD], ids=["avx2", "portable"])
def test_stem_other_variants(mask):
    """The AVX2 variant (AVX-512 and AMX masked off by TRTL_CPU_MASK) and the portable one (AVX2 and FMA off too),
    forced the same way, in a subprocess."""
    code = (
        "import sys, numpy as np; sys.path.insert(0, %r); import test_conv_stem as t\n"
        "from conftest import assert_close\n"
        "make, inputs, want = t._case(np.random.default_rng(3), 2, 3, 13, 21, 26, (3, 3), (2, 2), (1, 1), (1, 1),"
        " (1, 1), 'relu6', True)\n"
        "engine, kernels, _ = t.pg._forced(make, t.KERNEL)\n"
        "assert t.KERNEL in kernels, kernels\n"
        "assert_close(t.pg._run(engine, inputs), want)\n"
        "print('ok')\n" % os.path.dirname(os.path.abspath(__file__)))
    pg.run_with_cpu_features_hidden(code, mask)


def test_stem_dynamic_size(rng):
    """Built for 3 x 24 x 24 with dynamic H / W and the kernel forced, run at 24 x 24, 9 x 40 and 57 x 50 (other band
    and row-tile splits than the opt shape); all match numpy."""
    K = 16
    w = (rng.standard_normal((K, 3, 3, 3)) / 5).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)

    def make(network):
        t = network.add_input("x", trt.float32, (1, 3, -1, -1))
        layer = network.add_convolution_nd(t, K, (3, 3), w, b)
        layer.stride_nd = (2, 2)
        layer.padding_nd = (1, 1)
        out = network.add_activation(layer.get_output(0), trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    engine, kernels, _ = pg._forced(make, KERNEL, profile=("x", (1, 3, 5, 5), (1, 3, 24, 24), (1, 3, 64, 64)))
    assert KERNEL in kernels, kernels
    ctx = engine.create_execution_context()
    for hw in ((24, 24), (9, 40), (57, 50)):
        x = rng.standard_normal((1, 3) + hw).astype(np.float32)
        conv = refs.convolution(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), (2, 2), (1, 1),
                                (1, 1))
        out = ctx.infer({"x": x})
        assert_close(list(out.values())[0], np.maximum(conv, 0))
