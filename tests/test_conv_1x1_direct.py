"""convolution.1x1_direct (csrc/kernels/x86/convolution_1x1.c, issue #10) at layer level: MobileNet-style pointwise
convolutions + bias (+ residual add) + activation, built with timing, with a timing cache forged so that kernel
selection keeps convolution.1x1_direct (the engine inspector shows it ran), and at optimization level 0 (reference
kernels), each compared with float64 numpy, NaN included.  Pixel counts: 49 (three vectors + one extra column),
196 (four extra columns), 90 (a masked vector), batch 2; ReLU6 (in registers) and sigmoid (the row pass).  Also the
AVX2 variant (TRTL_CPU_MASK without AVX-512, in a subprocess) and another input size than the opt shape."""
import os

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close
import test_conv_pixel_gemm as pg

KERNEL = "convolution.1x1_direct"


def _case(rng, N, C, K, H, W, act, residual, stride=1):
    """Network maker and float64 reference of a 1x1 convolution (stride `stride`) + bias (+ skip), then act
    (test_conv_1x1_block.py's cases too)."""
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    # the last pixel the stride reads (stride 1: the last pixel, an extra column on 7x7 / 14x14 maps)
    x[N - 1, C // 2, H - 1 - (H - 1) % stride, W - 1 - (W - 1) % stride] = np.nan
    w = (rng.standard_normal((K, C, 1, 1)) / np.sqrt(C)).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    xs = x[:, :, ::stride, ::stride].astype(np.float64)
    y = np.einsum("kc,nchw->nkhw", w[:, :, 0, 0].astype(np.float64), xs) + b[:, None, None]
    skip = rng.standard_normal(y.shape).astype(np.float32)
    if residual:
        y = y + skip
    if act == "relu6":
        want = np.where(y < 0, 0.0, np.where(y > 6, 6.0, y))
    else:
        want = 1.0 / (1.0 + np.exp(-y))
    want[np.isnan(y)] = np.nan

    def make(network):
        t = network.add_input("x", trt.float32, x.shape)
        layer = network.add_convolution_nd(t, K, (1, 1), w, b)
        layer.stride_nd = (stride, stride)
        pg._residual_act_output(network, layer.get_output(0), skip.shape if residual else None, act)

    return make, ({"x": x, "s": skip} if residual else {"x": x}), want


_build, _run = pg._build, pg._run


def _forced(make, profile=None):
    """The layer built with this file's kernel forced through the timing cache (test_conv_pixel_gemm._forced)."""
    return pg._forced(make, KERNEL, profile)


SHAPES = [  # N, C, K, H, W, act, residual
    (1, 256, 37, 7, 7, "relu6", True),    # 49 = 3 x 16 + 1: an extra column; K tail past panels of 8
    (1, 24, 64, 14, 14, "sigmoid", True),  # 196 = 12 x 16 + 4: four extra columns; the row pass activation
    (2, 19, 12, 9, 10, "relu6", False),   # 90 = 5 x 16 + 10: a masked vector; batch 2
]


@pytest.mark.parametrize("shape", SHAPES)
def test_1x1_direct_layer(shape, rng):
    """Timed, forced and reference builds all match float64 numpy; the forced one ran convolution.1x1_direct."""
    make, inputs, want = _case(rng, *shape)
    pg._check_timed_ref_forced(make, inputs, want, KERNEL)


def test_1x1_direct_layer_avx2_variant():
    """The AVX2 variant (4-channel x 24-pixel tiles, masked last vector), forced the same way, in a subprocess with
    AVX-512 (and AMX) masked off by TRTL_CPU_MASK; on a CPU without AVX-512 this is the same run as above."""
    code = (
        "import sys, numpy as np; sys.path.insert(0, %r); import test_conv_1x1_direct as t\n"
        "from conftest import assert_close\n"
        "make, inputs, want = t._case(np.random.default_rng(3), 2, 33, 21, 9, 9, 'relu6', True)\n"
        "forced = t._forced(make)\n"
        "if forced is None: print('ok'); sys.exit(0)\n"
        "engine, kernels, _ = forced\n"
        "assert t.KERNEL in kernels, kernels\n"
        "assert_close(t._run(engine, inputs), want)\n"
        "print('ok')\n" % os.path.dirname(os.path.abspath(__file__)))
    pg.run_without_avx512(code)


def test_1x1_direct_other_input_size(rng):
    """Built with dynamic H/W (opt 10x10), forced, run at 7x7, 5x13, 40x40 (past the maps applies() takes at build
    time) and 1x1: every map size is the same kernel (a 1x1 stride-1 convolution stays one at any size) and matches
    numpy."""
    C, K = 16, 24
    w = (rng.standard_normal((K, C, 1, 1)) / 4).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)

    def make(network):
        t = network.add_input("x", trt.float32, (1, C, -1, -1))
        layer = network.add_convolution_nd(t, K, (1, 1), w, b)
        out = network.add_activation(layer.get_output(0), trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    forced = _forced(make, profile=("x", (1, C, 1, 1), (1, C, 10, 10), (1, C, 40, 40)))
    if forced is None:
        pytest.skip("convolution.1x1_direct is no candidate on this CPU")
    engine, kernels, _ = forced
    assert KERNEL in kernels, kernels
    for h, wd in ((7, 7), (5, 13), (40, 40), (1, 1)):
        x = rng.standard_normal((1, C, h, wd)).astype(np.float32)
        y = np.einsum("kc,nchw->nkhw", w[:, :, 0, 0].astype(np.float64), x.astype(np.float64)) + b[:, None, None]
        assert_close(_run(engine, {"x": x}), np.maximum(y, 0))
