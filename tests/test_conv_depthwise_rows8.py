"""convolution.depthwise_rows8 (csrc/kernels/x86/convolution_depthwise_rows8.c, issue #10: the AVX2 depthwise kernel
that reads the NCHW planes in place, edge taps masked) at layer level: depthwise convolutions + bias (+ residual add)
+ activation, built with timing, with a timing cache forged so that kernel selection keeps convolution.depthwise_rows8
(the engine inspector shows it ran), and at optimization level 0 (reference kernels), each compared with float64
numpy, NaN included (in the last input column of a plane: the right edge masks).  Shapes: 3x3
stride 1 on 14x14 with a residual and batch 2 (two masked vectors a row, partial last vectors stored whole), 5x5
stride 2 on 28x28 (the even / odd column split), 3x3 stride 2 on 112-wide rows (interior vectors), 5x5 stride 1 on
7x7 with a residual; ReLU6 (in registers) and sigmoid (the plane pass).  Also a dynamic input larger than the opt
shape."""
import pytest

import test_conv_depthwise_c8 as c8
import test_conv_depthwise_plane512 as dwp
import test_conv_pixel_gemm as pg

KERNEL = "convolution.depthwise_rows8"

SHAPES = [  # N, C, H, W, k, stride, pad, act, residual
    (2, 11, 14, 14, 3, 1, 1, "relu6", True),   # MobileNetV2 / MNASNet 14x14, residual, batch 2
    (1, 9, 28, 28, 5, 2, 2, "sigmoid", False),  # 5x5 stride 2 (MNASNet / EfficientNet), the plane pass
    (1, 6, 9, 112, 3, 2, 1, "relu6", False),   # 112-wide rows: masked first / last vectors, interior pairs
    (2, 7, 7, 7, 5, 1, 2, "sigmoid", True),    # 7x7 maps: one vector a row, every one masked
]


@pytest.mark.parametrize("shape", SHAPES)
def test_depthwise_rows8_layer(shape, rng):
    """Timed, forced and reference builds all match float64 numpy; the forced one ran convolution.depthwise_rows8."""
    make, inputs, want = dwp._case(rng, *shape)
    pg._check_timed_ref_forced(make, inputs, want, KERNEL, required=c8._cpu_has_avx2_fma())


def test_depthwise_rows8_other_input_size(rng):
    """Built with dynamic H/W (opt 10x10, max 64x64), forced, run at 7x7, 64x64 and 1x3 (staged rows only): every
    size matches numpy."""
    dwp._other_input_size(rng, KERNEL)
