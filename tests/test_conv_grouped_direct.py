"""convolution.grouped_direct (csrc/kernels/x86/convolution_grouped.c, issue #10) at layer level: grouped
convolutions with few channels per group (RegNet's group width 8, stride 1 and 2) + bias + residual add +
activation, built three ways -- with timing, with a timing cache forged so that kernel selection keeps
convolution.grouped_direct (the engine inspector shows it ran), and at optimization level 0 (reference kernels) --
each compared with a float64 numpy reference, NaN included.  Also the AVX2 and portable variants (TRTL_CPU_MASK, in
subprocesses)."""
import os

import numpy as np
import pytest

import trtlite as trt

import refs
import test_conv_pixel_gemm as pg

KERNEL = "convolution.grouped_direct"


def _case(rng, N, G, Cg, Kg, H, W, stride, act):
    """Network maker and float64 reference of a grouped conv(3x3, stride, pad 1) + bias + skip, then act."""
    C, K = G * Cg, G * Kg
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    x[N - 1, C // 2, H // 2, W // 2] = np.nan
    w = (rng.standard_normal((K, Cg, 3, 3)) / np.sqrt(Cg * 9)).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    conv = refs.convolution(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), (stride, stride),
                            (1, 1), (1, 1), groups=G)
    skip = rng.standard_normal(conv.shape).astype(np.float32)
    y = conv + skip
    want = np.where(y > 0, y, 0.0) if act == "relu" else y
    want[np.isnan(y)] = np.nan

    def make(network):
        t = network.add_input("x", trt.float32, x.shape)
        s = network.add_input("s", trt.float32, skip.shape)
        layer = network.add_convolution_nd(t, K, (3, 3), w, b)
        layer.num_groups = G
        layer.stride_nd = (stride, stride)
        layer.padding_nd = (1, 1)
        out = network.add_elementwise(layer.get_output(0), s, trt.ElementWiseOperation.SUM).get_output(0)
        if act == "relu":
            out = network.add_activation(out, trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    return make, {"x": x, "s": skip}, want


def _forced(make):
    """The layer built with this file's kernel forced through the timing cache (test_conv_pixel_gemm._forced)."""
    return pg._forced(make, KERNEL)


SHAPES = [  # N, G, Cg, Kg, H, W, stride, act
    (1, 6, 8, 8, 15, 15, 2, "relu"),   # RegNet's group width, stride 2, odd map
    (2, 4, 8, 8, 14, 13, 1, "none"),   # stride 1, batch 2
    (1, 3, 5, 12, 7, 9, 1, "relu"),    # 12 output channels a group: one full and one partial block of 8
    (2, 5, 8, 8, 7, 7, 1, "relu"),     # RegNet's last stage: 7-wide rows, partial vectors stored across rows
    (2, 5, 8, 8, 14, 14, 2, "none"),   # its stride-2 entry (14 -> 7), batch 2
]


@pytest.mark.parametrize("shape", SHAPES)
def test_grouped_direct_layer(shape, rng):
    """Timed, forced and reference builds all match float64 numpy; the forced one ran the kernel."""
    make, inputs, want = _case(rng, *shape)
    pg._check_timed_ref_forced(make, inputs, want, KERNEL, required=True)  # the portable variant applies anywhere


@pytest.mark.parametrize("mask", [pg.NO_AVX512, pg.NO_SIMD], ids=["avx2", "portable"])
def test_grouped_direct_other_variants(mask):
    """The AVX2 variant (AVX-512 and AMX masked off by TRTL_CPU_MASK) and the portable one (AVX2 and FMA off too),
    forced the same way, in a subprocess."""
    code = (
        "import sys, numpy as np; sys.path.insert(0, %r); import test_conv_grouped_direct as t\n"
        "from conftest import assert_close\n"
        "make, inputs, want = t._case(np.random.default_rng(3), 1, 5, 8, 8, 11, 11, 2, 'relu')\n"
        "engine, kernels, _ = t._forced(make)\n"
        "assert t.KERNEL in kernels, kernels\n"
        "assert_close(t.pg._run(engine, inputs), want)\n"
        "print('ok')\n" % os.path.dirname(os.path.abspath(__file__)))
    pg.run_with_cpu_features_hidden(code, mask)
