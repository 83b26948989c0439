"""convolution.depthwise_plane512 (csrc/kernels/x86/convolution_depthwise_plane512.c, issue #10) at layer level:
MobileNet-style depthwise convolutions + bias (+ residual add) + activation, built with timing, with a timing cache
forged so that kernel selection keeps convolution.depthwise_plane512 (the engine inspector shows it ran), and at
optimization level 0 (reference kernels), each compared with float64 numpy, NaN included.  Shapes: 3x3 stride 2 on
112-wide rows (the de-interleaved copy, odd pad), 5x5 stride 2 pad 2, 3x3 stride 1 on 14x14 with a residual and
batch 2; ReLU6 (in registers) and sigmoid (the plane pass).  Also a dynamic input larger than the opt shape (the
scratch is sized for the profile's largest)."""
import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close
import test_conv_pixel_gemm as pg

KERNEL = "convolution.depthwise_plane512"


def _depthwise64(x, w, b, stride, pad):
    """float64 depthwise convolution, symmetric zero padding."""
    N, C, H, W = x.shape
    k = w.shape[2]
    xp = np.zeros((N, C, H + 2 * pad, W + 2 * pad))
    xp[:, :, pad:pad + H, pad:pad + W] = x
    OH, OW = (H + 2 * pad - k) // stride + 1, (W + 2 * pad - k) // stride + 1
    y = np.zeros((N, C, OH, OW)) + b[None, :, None, None]
    for kh in range(k):
        for kw in range(k):
            win = xp[:, :, kh:kh + stride * (OH - 1) + 1:stride, kw:kw + stride * (OW - 1) + 1:stride]
            y += win * w[None, :, 0, kh, kw, None, None]
    return y


def _act(y, act):
    if act == "relu6":
        out = np.where(y < 0, 0.0, np.where(y > 6, 6.0, y))
    else:
        out = 1.0 / (1.0 + np.exp(-y))
    out[np.isnan(y)] = np.nan
    return out


def _case(rng, N, C, H, W, k, stride, pad, act, residual):
    """Network maker and float64 reference of a depthwise convolution + bias (+ skip), then act."""
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    x[N - 1, C // 2, H - 1, W - 1] = np.nan  # the last input column: the masked tail of the copy
    w = (rng.standard_normal((C, 1, k, k)) / k).astype(np.float32)
    b = rng.standard_normal(C).astype(np.float32)
    y = _depthwise64(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), stride, pad)
    skip = rng.standard_normal(y.shape).astype(np.float32)
    if residual:
        y = y + skip
    want = _act(y, act)

    def make(network):
        t = network.add_input("x", trt.float32, x.shape)
        layer = network.add_convolution_nd(t, C, (k, k), w, b)
        layer.num_groups = C
        layer.stride_nd = (stride, stride)
        layer.padding_nd = (pad, pad)
        pg._residual_act_output(network, layer.get_output(0), skip.shape if residual else None, act)

    return make, ({"x": x, "s": skip} if residual else {"x": x}), want


SHAPES = [  # N, C, H, W, k, stride, pad, act, residual
    (1, 6, 9, 112, 3, 2, 1, "relu6", False),   # 112-wide rows split by parity, 56 outputs: 2 + 2 masked vectors
    (1, 5, 15, 21, 5, 2, 2, "sigmoid", False),  # 5x5 stride 2, odd map, the plane pass activation
    (2, 20, 14, 14, 3, 1, 1, "relu6", True),   # batch 2, residual, 14-wide rows: one masked vector
]


@pytest.mark.parametrize("shape", SHAPES)
def test_depthwise_plane512_layer(shape, rng):
    """Timed, forced and reference builds all match float64 numpy; the forced one ran convolution.depthwise_plane512."""
    make, inputs, want = _case(rng, *shape)
    pg._check_timed_ref_forced(make, inputs, want, KERNEL)


def test_depthwise_plane512_other_input_size(rng):
    """Built with dynamic H/W (opt 10x10, max 64x64), forced, run at 7x7, 64x64 (a larger padded plane than the opt
    shape's) and 1x3: every size matches numpy."""
    _other_input_size(rng, KERNEL)


def _other_input_size(rng, kernel):
    """The dynamic-size check of `kernel` (also used by test_conv_depthwise_c8.py)."""
    C = 8
    w = (rng.standard_normal((C, 1, 3, 3)) / 3).astype(np.float32)
    b = rng.standard_normal(C).astype(np.float32)

    def make(network):
        t = network.add_input("x", trt.float32, (1, C, -1, -1))
        layer = network.add_convolution_nd(t, C, (3, 3), w, b)
        layer.num_groups = C
        layer.stride_nd = (2, 2)
        layer.padding_nd = (1, 1)
        out = network.add_activation(layer.get_output(0), trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    forced = pg._forced(make, kernel, profile=("x", (1, C, 1, 1), (1, C, 10, 10), (1, C, 64, 64)))
    if forced is None:
        pytest.skip(f"{kernel} is no candidate on this CPU")
    engine, kernels, _ = forced
    assert kernel in kernels, kernels
    for h, wd in ((7, 7), (64, 64), (1, 3)):
        x = rng.standard_normal((1, C, h, wd)).astype(np.float32)
        y = _depthwise64(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), 2, 1)
        assert_close(pg._run(engine, {"x": x}), np.maximum(y, 0))
