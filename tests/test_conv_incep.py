"""Inception-V3's asymmetric convolutions and average pooling (issue #10, session 17).

- convolution.packed_gemm on kx1 windows (7x1 / 3x1 / 5x1): weights packed tap-major, each tap's depth block read
  straight from the panel's input window where W has no padding, tap-major im2col rows otherwise
  (csrc/kernels/x86/convolution_gemm.c).  Layer networks, timed, reference (optimization level 0) and with a timing
  cache forged so that packed_gemm runs, against float64 numpy; also the AVX2 variant in a subprocess (AVX-512
  masked off).
- pooling.2d's average small-plane path (csrc/kernels/x86/pooling_2d.c: column sums per output row, reciprocal
  counts): an Inception-style block in ONNX (1x1 / 7x1 / 1x7 / 5x5 branches, 3x3 s1 average pool with and without
  count_include_pad, concatenation) against onnxruntime.
"""
import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close
import test_conv_pixel_gemm as pg

KERNEL = "convolution.packed_gemm"


def _conv_ref(x, w, b, pads):
    """float64 convolution, stride 1, pads (top, bottom, left, right), then ReLU."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pads[:2], pads[2:]))
    K, C, kh, kw = w.shape
    H, W = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    y = np.zeros((x.shape[0], K, H, W))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("kc,nchw->nkhw", w[:, :, i, j].astype(np.float64), xp[:, :, i:i + H, j:j + W])
    return np.maximum(y + b[None, :, None, None], 0.0)


def _case(rng, N, C, K, H, W, kh, pads):
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = (rng.standard_normal((K, C, kh, 1)) / np.sqrt(C * kh)).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)

    def make(net):
        c = net.add_convolution_nd(net.add_input("x", trt.float32, x.shape), K, (kh, 1), w, b)
        c.pre_padding = (pads[0], pads[2])
        c.post_padding = (pads[1], pads[3])
        out = net.add_activation(c.get_output(0), trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        net.mark_output(out)
    return make, {"x": x}, _conv_ref(x, w, b, pads)


SHAPES = [  # N, C, K, H, W, kh, (top, bottom, left, right)
    (1, 48, 40, 17, 17, 7, (3, 3, 0, 0)),   # Inception's 7x1 on a 17x17 map (smaller channels)
    (2, 20, 13, 23, 19, 3, (1, 1, 0, 0)),   # batch 2, row and pixel tails
    (1, 600, 8, 5, 6, 3, (1, 1, 0, 0)),     # two depth blocks a tap (600 channels > 512)
    (1, 16, 12, 9, 7, 5, (4, 1, 0, 0)),     # asymmetric vertical padding: rows of padding only
    (1, 9, 8, 8, 7, 3, (1, 1, 1, 1)),       # padding along W: the tap-major im2col rows
]


@pytest.mark.parametrize("shape", SHAPES)
def test_kx1_packed_gemm_layer(shape, rng):
    """Timed, reference and packed_gemm-forced builds match float64 numpy."""
    make, inputs, want = _case(rng, *shape)
    pg._check_timed_ref_forced(make, inputs, want, KERNEL)


def test_kx1_packed_gemm_plan_round_trip():
    """A deserialized engine serialized again writes the kx1 weights back from their tap-major packing (cg_unpack):
    the reloaded engine computes bit for bit the same."""
    for shape in SHAPES[:2]:
        make, inputs, want = _case(np.random.default_rng(5), *shape)
        forced = pg._forced(make, KERNEL)
        if forced is None:
            pytest.skip("no AVX2 + FMA")
        engine, kernels, _ = forced
        assert KERNEL in kernels, kernels
        again = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(bytes(engine.serialize()))
        np.testing.assert_array_equal(pg._run(again, inputs), pg._run(engine, inputs))


def test_kx1_packed_gemm_avx2_variant():
    """The AVX2 variant (6x16 tiles), forced the same way, in a subprocess with AVX-512 masked off; on a CPU without
    AVX-512 this is the same run as above."""
    pg.check_forced_without_avx512("test_conv_incep", SHAPES[:3], 5)


def _inception_block(rng, count_include_pad, C=24, H=17):
    from onnx import helper
    from onnx_helpers import make_model

    def wb(name, k, c, kh, kw):
        return {"W_" + name: (rng.standard_normal((k, c, kh, kw)) / np.sqrt(c * kh * kw)).astype(np.float32),
                "B_" + name: rng.standard_normal(k).astype(np.float32)}
    init = {}
    for name, k, c, kh, kw in [("1", 16, C, 1, 1), ("71", 12, C, 1, 1), ("72", 12, 12, 1, 7), ("73", 16, 12, 7, 1),
                               ("51", 8, C, 1, 1), ("52", 16, 8, 5, 5), ("p", 8, C, 1, 1)]:
        init.update(wb(name, k, c, kh, kw))

    def conv(name, x, y, pads):
        return [helper.make_node("Conv", [x, "W_" + name, "B_" + name], [y + "_c"], pads=pads),
                helper.make_node("Relu", [y + "_c"], [y])]
    nodes = (conv("1", "x", "a", [0, 0, 0, 0]) + conv("71", "x", "b1", [0, 0, 0, 0]) +
             conv("72", "b1", "b2", [0, 3, 0, 3]) + conv("73", "b2", "b", [3, 0, 3, 0]) +
             conv("51", "x", "c1", [0, 0, 0, 0]) + conv("52", "c1", "c", [2, 2, 2, 2]) +
             [helper.make_node("AveragePool", ["x"], ["p0"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
                               count_include_pad=count_include_pad)] +
             conv("p", "p0", "d", [0, 0, 0, 0]) +
             [helper.make_node("Concat", ["a", "b", "c", "d", "p0"], ["y"], axis=1)])
    return make_model(nodes, {"x": (1, C, H, H)}, {"y": None}, init)


@pytest.mark.parametrize("count_include_pad,H", [(1, 17), (0, 17), (1, 35), (1, 8)])
def test_inception_block_vs_onnxruntime(count_include_pad, H, rng):
    """A mini Inception-V3 block (17x17, 35x35 or 8x8 map) agrees with onnxruntime; the average pool (a network
    output too) ran pooling.2d where AVX2 is present."""
    from onnx_helpers import compare
    model = _inception_block(rng, count_include_pad, H=H)
    x = rng.standard_normal((1, 24, H, H)).astype(np.float32)
    compare(model, {"x": x})


def test_avgpool_layer_vs_numpy(rng):
    """3x3 s1 pad 1 average pooling on Inception's three maps through the layer API, count with and without the
    padding, NaN planted: float64 numpy."""
    for H in (35, 17, 8):
        for excl in (False, True):
            x = rng.standard_normal((2, 5, H, H)).astype(np.float32)
            x[1, 2, H // 2, 3] = np.nan

            def make(net):
                p = net.add_pooling_nd(net.add_input("x", trt.float32, x.shape), trt.PoolingType.AVERAGE, (3, 3))
                p.padding_nd = (1, 1)
                p.average_count_excludes_padding = excl
                p.get_output(0).name = "y"
                net.mark_output(p.get_output(0))
            xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
            s = sum(xp[:, :, i:i + H, j:j + H] for i in range(3) for j in range(3))
            ones = np.pad(np.ones((H, H)), 1)
            cnt = sum(ones[i:i + H, j:j + H] for i in range(3) for j in range(3)) if excl else 9.0
            engine, kernels, _ = pg._build(make)
            if trt_has_avx2():
                assert "pooling.2d" in kernels, kernels
            assert_close(pg._run(engine, {"x": x}), s / cnt)


def trt_has_avx2():
    """Whether this CPU (as masked) has AVX2: pooling.2d's vector paths need it (it applies everywhere)."""
    import os
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return " avx2" in flags and not os.environ.get("TRTL_CPU_MASK")
