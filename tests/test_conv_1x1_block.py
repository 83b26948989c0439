"""convolution.1x1_block (csrc/kernels/x86/convolution_1x1_block.c, issue #10) at layer level: pointwise convolutions
+ bias (+ residual add) + activation on maps of several pixel blocks and with strides (ResNet's 1x1/s2 shortcuts),
built with timing, with a timing cache forged so that kernel selection keeps convolution.1x1_block (the engine
inspector shows it ran), and at optimization level 0 (reference kernels), each compared with float64 numpy, NaN
included.  Also the AVX2 variant (TRTL_CPU_MASK without AVX-512, in a subprocess) and other input sizes than the opt
shape."""

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close
import test_conv_pixel_gemm as pg
import test_conv_1x1_direct as pw

KERNEL = "convolution.1x1_block"


def _case(rng, N, C, K, H, W, stride, act, residual):
    """Network maker and float64 reference of a 1x1 convolution (stride `stride`) + bias (+ skip), then act."""
    return pw._case(rng, N, C, K, H, W, act, residual, stride)


SHAPES = [  # N, C, K, H, W, stride, act, residual
    (1, 64, 37, 45, 44, 1, "relu6", True),     # 1980 pixels: blocks of 504 (AVX2) / 480 (AVX-512), a short last one
    (1, 40, 24, 29, 31, 2, "sigmoid", False),  # stride 2, odd input sizes: 15 x 16 outputs; the row pass activation
    (2, 300, 12, 9, 10, 1, "relu6", True),     # a deep input: blocks of one chunk; batch 2
    (1, 16, 20, 12, 17, 3, "relu6", False),    # stride 3: the scalar gather
    # stride 2 from 112 x 112, deep input: blocks of 48 pixels end inside 56-pixel output rows, where the vector
    # gather of a row once ran past the block's last pixel into the next channel's row (wrong outputs in ResNet-50)
    (1, 512, 8, 112, 112, 2, "relu6", True),
    # batch of whole 7x7 maps at stride 2 (RegNetY's shortcuts at batch 8): blocks of several images
    (8, 48, 20, 13, 13, 2, "relu", True),
    # C >= 1024: blocks of one chunk with dense rows; 9x9 maps (AVX-512: an extra pixel past 2 vectors), 2 images
    (2, 1024, 12, 9, 9, 1, "relu6", True),
]


@pytest.mark.parametrize("shape", SHAPES)
def test_1x1_block_layer(shape, rng):
    """Timed, forced and reference builds all match float64 numpy; the forced one ran convolution.1x1_block."""
    make, inputs, want = _case(rng, *shape)
    pg._check_timed_ref_forced(make, inputs, want, KERNEL)


@pytest.mark.parametrize("post", [(1, 1), (0, 1), (1, 0)])
def test_1x1_block_refuses_post_padding(post, rng):
    """A 1x1 convolution with padding after the input that adds outputs past the input's last row (stride 1 x 2) is
    no candidate for convolution.1x1_block (it once was, and read past the input: garbage outputs); the timed build,
    and the forced one where 1x1_block applies, match float64 numpy."""
    x = rng.standard_normal((3, 12, 8, 5)).astype(np.float32)
    w = rng.standard_normal((10, 12, 1, 1)).astype(np.float32)

    def make(net):
        c = net.add_convolution_nd(net.add_input("x", trt.float32, x.shape), 10, (1, 1), w)
        c.stride_nd = (1, 2)
        c.post_padding = post
        c.get_output(0).name = "y"
        net.mark_output(c.get_output(0))
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (0, post[0]), (0, post[1])))[:, :, :, ::2]
    want = np.einsum("nchw,kc->nkhw", xp, w[:, :, 0, 0].astype(np.float64))
    forced = pg._forced(make, KERNEL)
    # a post padding the stride skips (width 5 + 1, stride 2: the last output reads column 4) reads no padding
    assert (forced is None) == (post[0] == 1), post
    for engine, kernels, _ in [pg._build(make)] + ([forced] if forced else []):
        assert_close(pg._run(engine, {"x": x}), want)


def test_1x1_block_layer_avx2_variant():
    """The AVX2 variant (4-channel x 24-pixel tiles), forced the same way, in a subprocess with AVX-512 (and AMX)
    masked off by TRTL_CPU_MASK; on a CPU without AVX-512 this is the same run as above."""
    pg.check_forced_without_avx512("test_conv_1x1_block", [(2, 33, 21, 30, 29, 1, 'relu6', True),
                                                          (1, 20, 9, 23, 22, 2, 'relu6', True)], 3)


def test_1x1_block_other_input_size(rng):
    """Built with dynamic H/W (opt 20x20), stride 2, forced, run at 7x7, 5x13, 64x64 and 1x1: the scratch is sized
    per run shape and every map size matches numpy."""
    C, K = 16, 24
    w = (rng.standard_normal((K, C, 1, 1)) / 4).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)

    def make(network):
        t = network.add_input("x", trt.float32, (1, C, -1, -1))
        layer = network.add_convolution_nd(t, K, (1, 1), w, b)
        layer.stride_nd = (2, 2)
        out = network.add_activation(layer.get_output(0), trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    forced = pg._forced(make, KERNEL, profile=("x", (1, C, 1, 1), (1, C, 20, 20), (1, C, 64, 64)))
    if forced is None:
        pytest.skip("convolution.1x1_block is no candidate on this CPU")
    engine, kernels, _ = forced
    assert KERNEL in kernels, kernels
    for h, wd in ((7, 7), (5, 13), (64, 64), (1, 1)):
        x = rng.standard_normal((1, C, h, wd)).astype(np.float32)
        y = np.einsum("kc,nchw->nkhw", w[:, :, 0, 0].astype(np.float64), x[:, :, ::2, ::2].astype(np.float64))
        assert_close(pg._run(engine, {"x": x}), np.maximum(y + b[:, None, None], 0))
