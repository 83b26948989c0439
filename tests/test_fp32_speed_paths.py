"""fp32 speed paths of issue #10 (helper s5-fp32speed) at layer level: convolution.gemv (a convolution whose window
is its whole input, as squeeze-and-excitation's 1x1 convolutions on a pooled 1x1 map) inside an SE block, and the
max pooling of GoogLeNet's Inception branches (3x3 stride 1 pad 1 on 14x14 / 7x7 maps, ceil-mode stride 2), each
built optimized (kernel timing on, so the fastest kernel runs) and at optimization level 0 (reference kernels),
compared with float64 numpy (tests/refs.py).  The kernels themselves are compared with their reference kernels on
random shapes, AVX-512 and AVX2, in tests/c/test_kernels.c."""
import json

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import Net, assert_close


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def run(make, inputs, mode, profile=None, run_shapes=None):
    """Builds make(network, *inputs) in `mode` ("opt" with kernel timing on, or "ref"); returns (outputs, kernels)."""
    net = Net(True, "ref" if mode == "ref" else None)
    tensors = []
    for k, v in inputs.items():
        shape = v.shape if profile is None else tuple(-1 if a != b else a for a, b in zip(profile[k][0], profile[k][2]))
        tensors.append(net.network.add_input(k, trt.float32, shape))
    names = net.mark(make(net.network, *tensors))
    engine = net.build(profile=profile)
    ctx = engine.create_execution_context()
    outs = {}
    for shapes in run_shapes or [None]:
        arrays = dict(inputs) if shapes is None else {k: v[shapes[k]] for k, v in inputs.items()}
        for k, v in arrays.items():
            ctx.set_input_shape(k, v.shape)
        out = {k: np.full(tuple(ctx.get_tensor_shape(k)), 77, np.float32) for k in names}
        arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
        arrays.update(out)
        bindings = [arrays[engine.get_tensor_name(i)] for i in range(engine.num_io_tensors)]
        assert ctx.execute_v2(bindings)
        outs[len(outs)] = out[names[0]]
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return outs, {layer["name"]: layer["kernel"] for layer in info["layers"]}


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def se_make(C, R, w1, b1, w2, b2):
    def make(net, x):
        pooled = net.add_reduce(x, trt.ReduceOperation.AVG, 0b1100, True).get_output(0)
        c1 = net.add_convolution_nd(pooled, R, (1, 1), w1, b1).get_output(0)
        a1 = net.add_activation(c1, trt.ActivationType.RELU).get_output(0)
        c2 = net.add_convolution_nd(a1, C, (1, 1), w2, b2).get_output(0)
        a2 = net.add_activation(c2, trt.ActivationType.SIGMOID).get_output(0)
        return net.add_elementwise(x, a2, trt.ElementWiseOperation.PROD).get_output(0)
    return make


@pytest.mark.parametrize("N,C,R,H,W", [(1, 24, 6, 7, 9), (3, 67, 5, 4, 4), (2, 480, 20, 3, 5)])
def test_squeeze_excite_block(N, C, R, H, W, rng):
    x = randn(rng, (N, C, H, W))
    x[0, 1, 2, 3] = np.nan  # poisons image 0's pooled vector, hence every gate of image 0, and nothing else
    w1, b1 = randn(rng, (R, C, 1, 1), 0.3), randn(rng, R)
    w2, b2 = randn(rng, (C, R, 1, 1), 0.3), randn(rng, C)
    x64 = x.astype(np.float64)
    pooled = x64.mean(axis=(2, 3))
    hidden = np.maximum(pooled @ w1.reshape(R, C).T.astype(np.float64) + b1, 0)
    hidden[np.isnan(pooled @ w1.reshape(R, C).T.astype(np.float64))] = np.nan  # maximum() keeps NaN too
    gate = sigmoid(hidden @ w2.reshape(C, R).T.astype(np.float64) + b2)
    want = x64 * gate[:, :, None, None]
    assert np.isnan(want[0]).all() and not np.isnan(want[1:]).any()
    for mode in ("opt", "ref"):
        outs, kernels = run(se_make(C, R, w1, b1, w2, b2), {"x": x}, mode)
        assert_close(list(outs.values())[0], want)
        if mode == "ref":
            assert all(k.endswith(".ref") for k in kernels.values()), kernels
        else:  # the 1x1 convolutions on one pixel: an optimized kernel (timing picks gemv or a tile GEMM: on the
            # Xeon the batch-3 gate took pixel_gemm), never the reference (tests/c/test_kernels.c checks gemv itself)
            assert not any(k.endswith(".ref") for n, k in kernels.items() if "Convolution" in n), kernels


def test_whole_window_convolution_other_input_size(rng):
    """A 3x3 convolution built for 3x3 inputs (whole window) and run on 5x6 too: convolution.gemv, when timing
    picks it, computes other sizes by the reference path; both sizes match the float64 reference."""
    x = randn(rng, (2, 11, 5, 6))
    w, b = randn(rng, (13, 11, 3, 3)), randn(rng, 13)

    def make(net, t):
        c = net.add_convolution_nd(t, 13, (3, 3), w, b).get_output(0)
        return net.add_activation(c, trt.ActivationType.SIGMOID).get_output(0)

    profile = {"x": ((2, 11, 3, 3), (2, 11, 3, 3), (2, 11, 5, 6))}
    small = (slice(None), slice(None), slice(0, 3), slice(0, 3))
    full = (slice(None), slice(None), slice(None), slice(None))
    for mode in ("opt", "ref"):
        outs, kernels = run(make, {"x": x}, mode, profile=profile, run_shapes=[{"x": small}, {"x": full}])
        if mode == "opt":
            assert list(kernels.values()) == ["convolution.gemv"], kernels
        else:
            assert all(k.endswith(".ref") for k in kernels.values()), kernels
        got = list(outs.values())
        for xs, g in zip((x[small], x), got):
            want = sigmoid(refs.convolution(xs.astype(np.float64), w.astype(np.float64), b.astype(np.float64)))
            assert_close(g, want)


@pytest.mark.parametrize("C,H,stride,pad,ceil", [(9, 14, 1, 1, False), (5, 7, 1, 1, False), (4, 28, 2, 0, True),
                                                 (3, 13, 2, 0, True), (6, 28, 1, 1, False)])
def test_inception_max_pooling(C, H, stride, pad, ceil, rng):
    x = randn(rng, (2, C, H, H))
    x[1, 2, H - 1, H - 2] = np.nan  # in a row tail: the masked vector path keeps it
    x[0, 0, 3, H - 1] = np.inf

    def make(net, t):
        layer = net.add_pooling_nd(t, trt.PoolingType.MAX, (3, 3))
        layer.stride_nd = (stride, stride)
        layer.padding_nd = (pad, pad)
        if ceil:
            layer.padding_mode = trt.PaddingMode.EXPLICIT_ROUND_UP
        return layer.get_output(0)

    mode = "EXPLICIT_ROUND_UP" if ceil else "EXPLICIT_ROUND_DOWN"
    want = refs.pooling(x.astype(np.float64), "MAX", (3, 3), (stride, stride), (pad, pad), (pad, pad), mode)
    assert np.isnan(want).any()
    for m in ("opt", "ref"):
        outs, kernels = run(make, {"x": x}, m)
        assert_close(list(outs.values())[0], want)
        if m == "opt":
            assert "pooling.2d" in kernels.values(), kernels


@pytest.mark.parametrize("C,H,W,k,stride,pad", [(96, 7, 7, 3, 1, 1), (40, 14, 14, 5, 2, 2), (35, 9, 11, 7, 1, 3),
                                                (17, 28, 28, 3, 2, 1)])
def test_depthwise_small_maps(C, H, W, k, stride, pad, rng):
    """MobileNet / EfficientNet small-map depthwise convolutions + ReLU6 (+ residual): convolution.depthwise_c16
    (channel-blocked, AVX-512) is picked by timing where the CPU has AVX-512 (on 7x7 maps it is about twice as
    fast as the row kernels); optimized and reference builds match float64 numpy, NaN included."""
    x = randn(rng, (2, C, H, W))
    x[1, C - 1, H // 2, W // 2] = np.nan
    w, b = randn(rng, (C, 1, k, k)), randn(rng, C)
    conv = refs.convolution(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), (stride, stride),
                            (pad, pad), (pad, pad), None, C)
    skip = randn(rng, conv.shape)
    want = np.clip(conv + skip, 0, 6)
    want[np.isnan(conv)] = np.nan
    assert np.isnan(want).any()

    def make(net, t, s):
        layer = net.add_convolution_nd(t, C, (k, k), w, b)
        layer.num_groups = C
        layer.stride_nd = (stride, stride)
        layer.padding_nd = (pad, pad)
        y = net.add_elementwise(layer.get_output(0), s, trt.ElementWiseOperation.SUM).get_output(0)
        act = net.add_activation(y, trt.ActivationType.CLIP)
        act.alpha, act.beta = 0.0, 6.0
        return act.get_output(0)

    for mode in ("opt", "ref"):
        outs, kernels = run(make, {"x": x, "s": skip}, mode)
        assert_close(list(outs.values())[0], want)
        # which depthwise kernel the builder's timing keeps is not asserted here (a 2-3x margin is not
        # safe on a loaded machine); tests/c/test_kernels.c's test_depthwise_c16 checks that kernel itself
        assert all(not k.endswith(".ref") for k in kernels.values()) or mode == "ref", kernels
