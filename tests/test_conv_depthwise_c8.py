"""convolution.depthwise_c8 (csrc/kernels/x86/convolution_depthwise_c8.c, issue #10: the AVX2 channel-block
depthwise kernel for small maps) at layer level: depthwise convolutions + bias (+ residual add) + activation on
MNASNet / EfficientNet small-map shapes, built with timing, with a timing cache forged so that kernel selection keeps
convolution.depthwise_c8 (the engine inspector shows it ran), and at optimization level 0 (reference kernels), each
compared with float64 numpy, NaN included.  Shapes: 5x5 stride 1 on 7x7 (49 pixels: a partial 8-pixel group) with a
residual and batch 2, 5x5 stride 2 on 14x14 with channels past a block of 8, 3x3 stride 2 on 28x28; ReLU6 (in
registers) and sigmoid (the plane pass).  Also a dynamic input larger than the opt shape."""
import pytest

import test_conv_depthwise_plane512 as dwp
import test_conv_pixel_gemm as pg

KERNEL = "convolution.depthwise_c8"


def _cpu_has_avx2_fma():
    """Whether /proc/cpuinfo lists AVX2 and FMA (then the kernel must be a candidate: convolution has more kernels
    than the builder's candidate list once held, which dropped the last registered ones silently)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), [])
    except OSError:
        return False
    return "avx2" in flags and "fma" in flags

SHAPES = [  # N, C, H, W, k, stride, pad, act, residual
    (2, 20, 7, 7, 5, 1, 2, "sigmoid", True),   # 49 pixels, C = 2 blocks + 4, residual added in the scatter
    (1, 13, 14, 14, 5, 2, 2, "relu6", False),  # stride 2, 7x7 output, one full block + 5 channels
    (1, 9, 28, 28, 3, 2, 1, "relu6", True),    # 28x28 stride 2 (padded plane 29x29 <= 1600 pixels)
]


@pytest.mark.parametrize("shape", SHAPES)
def test_depthwise_c8_layer(shape, rng):
    """Timed, forced and reference builds all match float64 numpy; the forced one ran convolution.depthwise_c8."""
    make, inputs, want = dwp._case(rng, *shape)
    pg._check_timed_ref_forced(make, inputs, want, KERNEL, required=_cpu_has_avx2_fma())


def test_depthwise_c8_other_input_size(rng):
    """Built with dynamic H/W (opt 10x10, max 64x64), forced, run at 7x7, 64x64 (a larger padded plane than the
    opt shape's, past what applies() takes) and 1x3: every size matches numpy."""
    dwp._other_input_size(rng, KERNEL)
