"""Squeeze-and-excitation inside the blocked channel layout (issue #10; passes/nchwc.c: se_fold, kernels/nchwc.h):
EfficientNet / MobileNetV3-style blocks (1x1 expand + act, depthwise + act, global average pool -> 1x1 -> act ->
1x1 -> sigmoid / hard sigmoid -> channel multiply, 1x1 project (+ residual)) built on the network API, compared with
float64 numpy with the pass on and off, at 1-3 threads, batch 1-3 (the scale differs per image), channel counts with
tails past 8, dynamic shapes and a plan round trip.  With the pass on (AVX2 + FMA without AVX-512) the pool and the
multiply disappear: the depthwise NCHWC_CONV computes the pool as a second output and the projection takes the
scale as a second input.  Patterns that must not fold (the product also a network output, a pool over other axes)
still compute the right values.  The kernel itself against the reference kernel: tests/c/test_kernels.c
(test_nchwc, the in-scale / out-means cases)."""

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close
from test_nchwc import _build  # (make, off=passes, profile=, threads=) -> engine, its layers

AVX2 = {"avx2", "fma"} <= set(trt.cpu_features())  # AVX-512 hosts too (session 16): the pass needs AVX2 + FMA
BLOCKED_KERNELS = ("nchwc_conv.avx2", "nchwc_conv.avx512")  # the pointwise layers time both where AVX-512 is


def _sig(v):
    return 1.0 / (1.0 + np.exp(-v))


ACTS = {  # name: (float64 numpy, network builder)
    "relu": (lambda v: np.maximum(v, 0.0), lambda net, t: net.add_activation(t, trt.ActivationType.RELU).get_output(0)),
    # x * sigmoid(x) as exported: sigmoid + multiply, which pointwise fusion makes one SiLU epilogue
    "silu": (lambda v: v * _sig(v), lambda net, t: net.add_elementwise(
        t, net.add_activation(t, trt.ActivationType.SIGMOID).get_output(0), trt.ElementWiseOperation.PROD).get_output(0)),
    "sigmoid": (_sig, lambda net, t: net.add_activation(t, trt.ActivationType.SIGMOID).get_output(0)),
    "hsig": (lambda v: np.clip(v / 6.0 + 0.5, 0.0, 1.0), None),
    "none": (lambda v: v, lambda net, t: t),
}


def _hard_sigmoid(net, t):
    a = net.add_activation(t, trt.ActivationType.HARD_SIGMOID)
    a.alpha, a.beta = 1.0 / 6.0, 0.5
    return a.get_output(0)


ACTS["hsig"] = (ACTS["hsig"][0], _hard_sigmoid)


class _Se:
    """An SE block chain on the network and its float64 reference."""

    def __init__(self, net, rng, x, dynamic):
        self.net, self.rng = net, rng
        self.t = net.add_input("x", trt.float32, (-1, x.shape[1], -1, -1) if dynamic else x.shape)
        self.ref = x.astype(np.float64)

    def conv(self, t, ref, K, k, stride, groups, act):
        C = ref.shape[1]
        w = (self.rng.standard_normal((K, C // groups, k, k)) / np.sqrt(C // groups * k * k)).astype(np.float32)
        b = (self.rng.standard_normal(K) * 0.1).astype(np.float32)
        layer = self.net.add_convolution_nd(t, K, (k, k), w, b)
        layer.stride_nd = (stride, stride)
        layer.padding_nd = (k // 2, k // 2)
        layer.num_groups = groups
        out = refs.convolution(ref, w.astype(np.float64), b.astype(np.float64), (stride, stride), (k // 2, k // 2),
                               (k // 2, k // 2), groups=groups)
        f, make = ACTS[act]
        return make(self.net, layer.get_output(0)), f(out)

    def block(self, E, Cout, k, stride, act, gate="sigmoid", scale_first=False, pool_axes=(2, 3), extra_out=False):
        """expand, depthwise, squeeze-and-excitation (pool over pool_axes), project (+ the block input)."""
        t, ref = self.t, self.ref
        C = ref.shape[1]
        h, hr = self.conv(t, ref, E, 1, 1, 1, act)
        h, hr = self.conv(h, hr, E, k, stride, E, act)
        mask = sum(1 << a for a in pool_axes)
        pool = self.net.add_reduce(h, trt.ReduceOperation.AVG, mask, True).get_output(0)
        pr = hr.mean(axis=pool_axes, keepdims=True)
        s, sr = self.conv(pool, pr, max(2, E // 4), 1, 1, 1, "relu")
        s, sr = self.conv(s, sr, E if pool_axes == (2, 3) else 1, 1, 1, 1, gate)
        a, b = (s, h) if scale_first else (h, s)
        m = self.net.add_elementwise(a, b, trt.ElementWiseOperation.PROD).get_output(0)
        mr = hr * sr
        if extra_out:
            m.name = "m"
            self.net.mark_output(m)
            self.m_ref = mr
        h, hr = self.conv(m, mr, Cout, 1, 1, 1, "none")
        if stride == 1 and Cout == C:
            h = self.net.add_elementwise(h, t, trt.ElementWiseOperation.SUM).get_output(0)
            hr = hr + ref
        self.t, self.ref = h, hr

    def head(self):
        self.t.name = "y"
        self.net.mark_output(self.t)


def _chain(N, C, H, W, act="silu", gate="sigmoid", dynamic=False, seed=0, **kw):
    x = np.random.default_rng(seed).standard_normal((N, C, H, W)).astype(np.float32)
    holder = {}

    def make(net):
        m = _Se(net, np.random.default_rng(seed + 7), x, dynamic)
        m.block(3 * C, C, 3, 1, act, gate, **kw)
        m.block(2 * C + 5, C + 3, 5, 2, act, gate, scale_first=True)
        m.block(4 * C, C + 3, 3, 1, act, gate)
        m.head()
        holder["ref"] = m.ref
        holder["m"] = getattr(m, "m_ref", None)

    make(trt.Builder(trt.Logger(trt.Logger.WARNING)).create_network(0))
    return make, x, holder


def _run(engine, x, names=("y",)):
    ctx = engine.create_execution_context()
    ctx.set_input_shape("x", x.shape)
    arrays = {"x": x}
    for n in names:
        arrays[n] = np.full(tuple(ctx.get_tensor_shape(n)), 77, np.float32)
    assert ctx.execute_v2([arrays[engine.get_tensor_name(i)] for i in range(engine.num_io_tensors)])
    return [arrays[n] for n in names]


def _types(layers):
    return [lay["type"] for lay in layers]


@pytest.mark.parametrize("shape,act,gate,threads", [
    ((1, 8, 14, 14), "silu", "sigmoid", 1),
    ((2, 13, 9, 11), "relu", "hsig", 2),
    ((3, 6, 17, 16), "silu", "hsig", 3),
    ((1, 20, 28, 28), "sigmoid", "sigmoid", 2),
])
def test_se_chain_on_and_off(shape, act, gate, threads):
    """Pass on and off match float64 numpy; on AVX2 + FMA the pools and multiplies are folded into the blocked
    convolutions (no REDUCE / ELEMENTWISE layer left, each depthwise layer has the pool as its second output)."""
    make, x, h = _chain(*shape, act=act, gate=gate)
    on, layers_on = _build(make, threads=threads)
    off, layers_off = _build(make, off=("nchwc",), threads=threads)
    assert_close(_run(on, x)[0], h["ref"])
    assert_close(_run(off, x)[0], h["ref"])
    assert "NCHWC_CONV" not in _types(layers_off)
    assert _types(layers_off).count("REDUCE") == 3
    if AVX2:
        types = _types(layers_on)
        assert "REDUCE" not in types and "ELEMENTWISE" not in types, types
        blocked = [lay for lay in layers_on if lay["type"] == "NCHWC_CONV"]
        assert len(blocked) == 9 and all(lay["kernel"] in BLOCKED_KERNELS for lay in blocked), layers_on
        assert sum(len(lay["outputs"]) == 2 for lay in blocked) == 3, blocked
        assert sum(len(lay["inputs"]) >= 2 and lay["inputs"][1]["dims"].endswith(", 1, 1)")
                   for lay in blocked) == 3, blocked
    else:
        assert "NCHWC_CONV" not in _types(layers_on)


def test_se_dynamic_batch_and_maps_and_plan_round_trip():
    """Dynamic batch and map (opt 2 x 16 x 16): 1 x 7 x 9, 2 x 16 x 16 and 3 x 21 x 20 match numpy (the scale and
    the pool per image); a plan round trip computes the same bits."""
    C = 11
    make, _, _ = _chain(1, C, 8, 8, dynamic=True)
    engine, layers = _build(make, profile=("x", (1, C, 5, 5), (2, C, 16, 16), (3, C, 24, 24)))
    again = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(bytes(engine.serialize()))
    for N, H, W in ((1, 7, 9), (2, 16, 16), (3, 21, 20)):
        _, x, h = _chain(N, C, H, W, dynamic=True)
        got = _run(engine, x)[0]
        assert_close(got, h["ref"])
        np.testing.assert_array_equal(_run(again, x)[0], got)


def test_se_not_folded_where_the_pattern_breaks():
    """The product is also a network output, or the pool runs over channels too: no fold there (REDUCE stays), and
    both outputs still match numpy with the pass on."""
    make, x, h = _chain(2, 10, 12, 12, extra_out=True)
    engine, layers = _build(make)
    y, m = _run(engine, x, ("y", "m"))
    assert_close(y, h["ref"])
    assert_close(m, h["m"])
    assert _types(layers).count("REDUCE") == (1 if AVX2 else 3)
    make, x, h = _chain(1, 9, 12, 12, pool_axes=(1, 2, 3))
    engine, layers = _build(make)
    assert_close(_run(engine, x)[0], h["ref"])
    assert _types(layers).count("REDUCE") == (1 if AVX2 else 3)


def test_se_avx2_path_on_avx512_hosts():
    """With AVX-512 masked off (a subprocess; on an AVX2-only CPU the same as above) the SE chain is folded and
    matches numpy."""
    import os
    import test_conv_pixel_gemm as pg
    if not {"avx2", "fma"} <= set(trt.cpu_features()):
        pytest.skip("no AVX2 + FMA")
    pg.run_without_avx512(
        "import sys; sys.path.insert(0, %r); import test_nchwc_se as t\n"
        "from conftest import assert_close\n"
        "make, x, h = t._chain(2, 12, 10, 9)\n"
        "engine, layers = t._build(make)\n"
        "assert 'REDUCE' not in t._types(layers), layers\n"
        "assert_close(t._run(engine, x)[0], h['ref'])\n"
        "print('ok')\n" % os.path.dirname(os.path.abspath(__file__)))


def test_se_in_passes_of_whole_images():
    """A plain edge stages at most 8 MiB of images a pass: at batch 6 over 24 x 128 x 128 maps the block's project
    convolution (SE input scale, plain output) runs as passes of 5 and 1 images, each reading its own images' SE
    scale; against float64 numpy with the pass on and off."""
    x = np.random.default_rng(5).standard_normal((6, 24, 128, 128)).astype(np.float32)
    holder = {}

    def make(net):
        m = _Se(net, np.random.default_rng(12), x, False)
        m.block(48, 24, 3, 1, "silu", "sigmoid")
        m.head()
        holder["ref"] = m.ref

    on, layers_on = _build(make, threads=2)
    off, _ = _build(make, off=("nchwc",), threads=2)
    assert_close(_run(on, x)[0], holder["ref"])
    assert_close(_run(off, x)[0], holder["ref"])
    if AVX2:
        blocked = [lay for lay in layers_on if lay["type"] == "NCHWC_CONV"]
        assert any(len(lay["inputs"]) >= 2 and lay["inputs"][1]["dims"].endswith(", 1, 1)") for lay in blocked), blocked
