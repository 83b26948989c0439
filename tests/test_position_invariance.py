"""Every output element is summed in the same order wherever it falls in a kernel's tiles (register tiles, channel
tails, thread splits): equal rows of weights give bitwise equal outputs.  onnx's light_squeezenet case needs it
(constant weights, logits ~1e10 tied exactly, softmax of them: one ulp between channels is a one-hot answer); CI's
Zen 4 once picked OpenBLAS for its last convolution by timing, and OpenBLAS's tails round differently.  OpenBLAS is
now a fallback (trtl_kernel.fallback, builder/select.c): these tests force each of trtlite's own candidates in turn
and check that no OpenBLAS kernel is timed where an own kernel applies.  The AVX2 and portable variants run again
with CPU features hidden (on an AVX-512 CPU; here they are the same run)."""
import json
import os
import sys

import numpy as np
import pytest

import trtlite as trt

from conftest import rerun_with_cpu_mask
from test_conv_pixel_gemm import NO_AVX512, NO_SIMD, _build, _parse, _write

# N, C, K, H, W, k, stride, pad: channel counts with tails for 8-, 16- and 32-wide tiles, odd pixel counts
CONV_SHAPES = [(1, 40, 70, 13, 13, 1, 1, 0),    # 1x1, 13x13 (light_squeezenet's last layer, smaller)
               (2, 19, 37, 9, 11, 3, 1, 1),     # 3x3 (winograd, tapwise, pixel GEMM ...)
               (1, 3, 45, 17, 17, 3, 2, 1),     # a stem: 3 input channels, stride 2
               (1, 64, 100, 5, 5, 1, 1, 0)]     # a small map, deep


def _equal_rows_case(rng, N, C, K, H, W, k, stride, pad):
    x = (rng.standard_normal((N, C, H, W)) * 1e3).astype(np.float32)
    w = np.repeat(rng.standard_normal((1, C, k, k)).astype(np.float32), K, axis=0)  # every output channel alike
    b = np.full(K, 0.37, np.float32)

    def make(network):
        t = network.add_input("x", trt.float32, x.shape)
        layer = network.add_convolution_nd(t, K, (k, k), w, b)
        layer.stride_nd = (stride, stride)
        layer.padding_nd = (pad, pad)
        out = network.add_activation(layer.get_output(0), trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)
    return make, x


def _own_gemm_kernels():
    """Whether trtlite's own GEMM kernels can run here (they need AVX2 and FMA)."""
    return {"avx2", "fma"} <= set(trt.cpu_features())


def _run(engine, x):
    ctx = engine.create_execution_context()
    out = np.full(tuple(ctx.get_tensor_shape("y")), 77, np.float32)
    assert ctx.execute_v2([x, out])
    return out


def _assert_channels_equal(y, what):
    ref = y[:, :1]
    bad = np.nonzero((y != ref).reshape(y.shape[0], y.shape[1], -1).any(axis=(0, 2)))[0]
    assert bad.size == 0, "%s: output channels %s differ from channel 0 (max diff %g)" % (
        what, bad[:12].tolist(), float(np.abs(y - ref).max()))


@pytest.mark.parametrize("shape", CONV_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_every_own_convolution_kernel_sums_each_channel_alike(shape, rng):
    make, x = _equal_rows_case(rng, *shape)
    _, kernels, data = _build(make)
    cpus, entries = _parse(data)
    timed = sorted({e[2].split("|")[0] for e in entries if e[2].startswith("convolution.")})
    assert not [k for k in timed if "sgemm" in k], timed  # OpenBLAS is no candidate where own kernels apply
    if kernels[0] == "convolution.im2col_sgemm":
        # the fallback: none of trtlite's own kernels applies (the portable rerun: no AVX2), so nothing was timed
        assert not timed and not _own_gemm_kernels(), timed
        return
    assert kernels[0].startswith("convolution."), kernels
    candidates = timed or [kernels[0]]
    for kern in candidates:
        forced = [list(e) for e in entries]
        for e in forced:
            e[3] = 1e-6 if e[2].startswith(kern + "|") else 1e3
        engine, ks, _ = _build(make, cache=_write(cpus, forced)) if timed else _build(make)
        assert kern in ks, (kern, ks)
        y = _run(engine, x)
        assert np.isfinite(y).all() and (y > 0).any()
        _assert_channels_equal(y, kern)


@pytest.mark.parametrize("rows", [1, 3, 29])
def test_linear_and_fully_connected_sum_each_output_alike(rows, rng):
    """A matrix multiply by a constant (LINEAR after fuse_linear) and TensorRT 7's fully connected layer, 77 outputs
    (tails of every tile width) from equal weight rows."""
    D, N = 150, 77
    x = (rng.standard_normal((rows, D)) * 1e3).astype(np.float32)
    wrow = rng.standard_normal(D).astype(np.float32)
    for kind in ("linear", "fully_connected"):
        builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
        network = builder.create_network(0)
        if kind == "linear":
            t = network.add_input("x", trt.float32, (rows, D))
            wc = network.add_constant((D, N), np.ascontiguousarray(np.repeat(wrow[:, None], N, axis=1))).get_output(0)
            y = network.add_matrix_multiply(t, trt.MatrixOperation.NONE, wc, trt.MatrixOperation.NONE).get_output(0)
        else:
            t = network.add_input("x", trt.float32, (rows, D, 1, 1))
            y = network.add_fully_connected(t, N, np.repeat(wrow[None, :], N, axis=0), np.zeros(N, np.float32))
            y = y.get_output(0)
        y.name = "y"
        network.mark_output(y)
        config = builder.create_builder_config()
        config.num_threads = 2
        engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(
            bytes(builder.build_serialized_network(network, config)))
        info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
        used = [layer["kernel"] for layer in info["layers"]]
        if any("sgemm" in k for k in used):  # the fallback where no own kernel applies: the portable rerun
            assert not _own_gemm_kernels(), used
            continue
        xin = x if kind == "linear" else x.reshape(rows, D, 1, 1)
        out = np.full((rows, N) if kind == "linear" else (rows, N, 1, 1), 77, np.float32)
        ctx = engine.create_execution_context()
        assert ctx.execute_v2([xin, out])
        out = out.reshape(rows, N)
        want = x.astype(np.float64) @ wrow.astype(np.float64)
        np.testing.assert_allclose(out[:, 0], want, rtol=1e-4, atol=1e-2 * np.abs(x).max())
        bad = np.nonzero((out != out[:, :1]).any(axis=0))[0]
        assert bad.size == 0, "%s (%s): outputs %s differ from output 0" % (kind, used, bad[:12].tolist())


@pytest.mark.parametrize("mask", [NO_AVX512, NO_SIMD], ids=["avx2", "portable"])
def test_variants_with_cpu_features_hidden(mask):
    rerun_with_cpu_mask(__file__, "%x" % (0xFFFFFFFF & ~mask), passed=len(CONV_SHAPES) + 3,
                        select="not hidden")
