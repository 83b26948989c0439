"""NaN and +-Inf through every layer type, on every kernel path (project issue #9, item 12).

Inputs hold NaN, +Inf and -Inf at random positions; each layer's output must have NaN exactly where numpy (float64,
the formulas of tests/refs.py) has NaN, and the same infinities with the same signs -- finite values as close as in
the other layer tests.  Rules (numpy / onnxruntime): a NaN in a max-pooling window, a max/min reduction or an
elementwise MAX/MIN gives NaN; RELU keeps NaN (numpy.maximum(x, 0)); THRESHOLDED_RELU gives 0 for NaN (x > alpha ?
x : 0, onnxruntime's ThresholdedRelu); FLOOR_DIV is numpy.floor_divide (NaN for an infinite dividend); a convolution
makes NaN/Inf only inside the receptive field of a non-finite input, whatever its kernel (Winograd included);
TopK ranks NaN above every number (torch.topk); RESIZE in LINEAR/CUBIC mode multiplies every tap of the
interpolation, weight 0 included (0 * NaN = 0 * Inf = NaN), and is compared with onnxruntime's Resize itself.

Kernel paths: every case runs with the optimized kernels at the default level ("opt"; several cases check which
optimized kernel ran) and with builder optimization level 0 ("ref": reference kernels only, no fusion).  The "opt"
cases then run again in subprocesses with TRTL_CPU_MASK hiding AVX-512 (the AVX2 variants of the packed GEMM
kernels) and hiding every SIMD feature (the portable loops).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import Net, assert_close, skip_if_mask_hides_nothing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(trt.__file__)))  # the package's root (build/asan/pkg too)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # the sources
MASKED = os.environ.get("TRTL_NAN_TEST_MASKED")  # set in the TRTL_CPU_MASK subprocesses


def poisoned(rng, shape, n_nan=2, n_pinf=2, n_ninf=2, scale=1.0):
    """float32 normal values with NaN, +Inf and -Inf at distinct random positions."""
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    flat = x.reshape(-1)
    k = min(n_nan + n_pinf + n_ninf, flat.size)
    pos = rng.choice(flat.size, size=k, replace=False)
    flat[pos[:n_nan]] = np.nan
    flat[pos[n_nan:n_nan + n_pinf]] = np.inf
    flat[pos[n_nan + n_pinf:k]] = -np.inf
    return x


def check(out, ref):
    """Same NaN positions, same infinities (sign included), finite values close."""
    out = np.asarray(out)
    ref = np.asarray(ref)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    if ref.dtype == np.bool_:
        np.testing.assert_array_equal(out, ref)
        return
    nan_o, nan_r = np.isnan(out), np.isnan(ref)
    assert (nan_o == nan_r).all(), "NaN at %s, numpy has NaN at %s" % (np.argwhere(nan_o).tolist()[:10],
                                                                      np.argwhere(nan_r).tolist()[:10])
    inf_r = np.isinf(ref)
    assert (np.isinf(out) == inf_r).all() and (out[inf_r] == ref[inf_r]).all(), \
        "infinities differ: %s vs %s" % (out[np.isinf(out) | inf_r][:10], ref[np.isinf(out) | inf_r][:10])
    fin = ~(nan_r | inf_r)
    assert_close(np.where(fin, out, 0).astype(np.float32), np.where(fin, ref, 0.0), rtol=2e-4, atol=2e-5)


def run(mode, make, inputs):
    """Builds `make(net, *input tensors)` -> output tensor(s) and runs it; returns (outputs, kernel names)."""
    n = Net(explicit=True, mode=mode)
    ts = []
    for name, arr in inputs.items():
        dt = trt.bool if arr.dtype == np.bool_ else (trt.int32 if arr.dtype == np.int32 else trt.float32)
        ts.append(n.network.add_input(name, dt, arr.shape))
    names = n.mark(make(n.network, *ts))
    engine = n.build()
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    out = engine.create_execution_context().infer(inputs)
    return [out[k] for k in names], [layer["kernel"] for layer in info["layers"]]


def layer_out(layer):
    return layer.get_output(0)


# ---- the cases: (id, inputs(rng) -> dict, make(net, *tensors), reference(*arrays), optimized kernel expected) --

CASES = []
OP_OF = {}  # case id -> layer type (ops.def name)


def case(cid, op, inputs, make, ref, kernel=None):
    OP_OF[cid] = op
    CASES.append(pytest.param(inputs, make, ref, kernel, id=cid))


ACT_PARAMS = {"LEAKY_RELU": (0.1, 0.0), "ELU": (0.7, 0.0), "SELU": (1.6733, 1.0507), "SOFTPLUS": (1.5, 0.8),
              "CLIP": (-0.5, 0.6), "HARD_SIGMOID": (0.2, 0.5), "SCALED_TANH": (1.7, 0.66), "THRESHOLDED_RELU": (0.3, 0)}


def _activation_case(name):
    alpha, beta = ACT_PARAMS.get(name, (0.0, 0.0))

    def make(net, x):
        layer = net.add_activation(x, getattr(trt.ActivationType, name))
        layer.alpha, layer.beta = alpha, beta
        return layer_out(layer)
    case("activation_" + name, "ACTIVATION", lambda r: {"x": poisoned(r, (3, 5, 7))}, make,
         lambda x: refs.activation(x, name, alpha, beta))


for _a in trt.ActivationType.__members__:
    _activation_case(_a)


def _floor_divide(a, b):
    with np.errstate(all="ignore"):
        return np.floor_divide(a.astype(np.float64), b.astype(np.float64))


def _elementwise_case(name):
    if name in ("AND", "OR", "XOR") or name.startswith(("BITWISE_", "SHIFT_")):
        return  # bool or INT32 operands: no NaN
    ref = _floor_divide if name == "FLOOR_DIV" else (lambda a, b: refs.elementwise(a, b, name))
    # POW: positive bases keep most results real; the special values are still in both operands
    base = (lambda r: np.abs(poisoned(r, (4, 6))) + 0.5) if name == "POW" else (lambda r: poisoned(r, (4, 6)))
    case("elementwise_" + name, "ELEMENTWISE", lambda r: {"a": base(r), "b": poisoned(r, (4, 6), 3, 2, 2)},
         lambda net, a, b: layer_out(net.add_elementwise(a, b, getattr(trt.ElementWiseOperation, name))), ref)


for _e in trt.ElementWiseOperation.__members__:
    _elementwise_case(_e)

case("elementwise_FLOOR_DIV_specials", "ELEMENTWISE",
     lambda r: {"a": np.array([[np.inf, -np.inf, np.nan, 1.0, -1.0, 5.0, -5.0, 0.0, 7.5, -7.5]], np.float32),
                "b": np.array([[2.0, 2.0, 2.0, np.inf, np.inf, -np.inf, -np.inf, np.inf, 0.0, 0.0]], np.float32)},
     lambda net, a, b: layer_out(net.add_elementwise(a, b, trt.ElementWiseOperation.FLOOR_DIV)), _floor_divide)


def _unary_case(name):
    if name in ("NOT", "BITWISE_NOT"):
        return  # bool or INT32 operand: no NaN
    case("unary_" + name, "UNARY", lambda r: {"x": poisoned(r, (3, 11))},
         lambda net, x: layer_out(net.add_unary(x, getattr(trt.UnaryOperation, name))),
         lambda x: refs.unary(x, name))


for _u in trt.UnaryOperation.__members__:
    _unary_case(_u)


def _reduce_case(name, axes, tag):
    mask = sum(1 << a for a in axes)
    case("reduce_%s_%s" % (name, tag), "REDUCE", lambda r: {"x": poisoned(r, (3, 4, 9))},
         lambda net, x: layer_out(net.add_reduce(x, getattr(trt.ReduceOperation, name), mask, True)),
         lambda x: refs.reduce(x, name, axes, True), kernel="reduce.inner" if tag == "inner" else "reduce.axes")


for _r in trt.ReduceOperation.__members__:
    _reduce_case(_r, (2,), "inner")
    _reduce_case(_r, (0, 1), "outer")


def _pool_case(name, window, stride, shape, kernel, tag="", n_nan=2):
    def make(net, x):
        layer = net.add_pooling_nd(x, getattr(trt.PoolingType, name), window)
        layer.stride_nd = stride
        if name == "MAX_AVERAGE_BLEND":
            layer.blend_factor = 0.4
        return layer_out(layer)
    case("pooling_%s_%dd%s" % (name, len(window), tag), "POOLING", lambda r: {"x": poisoned(r, shape, n_nan, 1, 1)},
         make,
         lambda x: refs.pooling(x, name, window, stride, blend_factor=0.4 if name == "MAX_AVERAGE_BLEND" else 0.0),
         kernel=kernel)


for _p in trt.PoolingType.__members__:
    _pool_case(_p, (3, 3), (2, 2), (2, 3, 9, 9), "pooling.2d")
    _pool_case(_p, (2, 2, 2), (1, 2, 2), (1, 2, 4, 6, 6), None)
# rows wide enough for the vector max path of pooling.2d (16 or 8 outputs a vector, strides 1 and 2)
_pool_case("MAX", (3, 3), (2, 2), (1, 2, 7, 75), "pooling.2d", "_wide_s2", 8)
_pool_case("MAX", (3, 2), (1, 1), (1, 2, 5, 70), "pooling.2d", "_wide_s1", 8)


def _weights(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 0.5


def _conv_case(cid, C, K, ks, stride, pad, groups, shape, kernel, act=None, residual=False, n_bad=(1, 1, 1)):
    w = _weights(len(CASES), (K, C // groups) + ks)
    b = _weights(len(CASES) + 1, (K,))

    def make(net, x, *res):
        conv = net.add_convolution_nd(x, K, ks, w, b)
        conv.stride_nd, conv.padding_nd, conv.num_groups = stride, pad, groups
        y = conv.get_output(0)
        if residual:
            y = net.add_elementwise(y, res[0], trt.ElementWiseOperation.SUM).get_output(0)
        if act:
            lay = net.add_activation(y, getattr(trt.ActivationType, act))
            lay.alpha, lay.beta = ACT_PARAMS.get(act, (0.0, 0.0))
            y = lay.get_output(0)
        return y

    def ref(x, *res):
        y = refs.convolution(x, w, b, stride=stride, pre_padding=pad, post_padding=pad, groups=groups)
        if residual:
            y = y + res[0]
        return refs.activation(y, act, *map(np.float32, ACT_PARAMS.get(act, (0.0, 0.0)))) if act else y

    def inputs(r):
        d = {"x": poisoned(r, shape, *n_bad)}
        if residual:
            oshape = refs.convolution(np.zeros(shape), w, b, stride=stride, pre_padding=pad, post_padding=pad,
                                      groups=groups).shape
            d["res"] = poisoned(r, oshape, 1, 1, 0)
        return d
    case(cid, "CONVOLUTION", inputs, make, ref, kernel)


# 3x3 stride 1: Winograd F(4x4, 3x3) in "opt"; several images, tiles at the edges, channel counts not multiples of 8
_conv_case("conv_3x3_winograd", 5, 7, (3, 3), (1, 1), (1, 1), 1, (2, 5, 13, 11), "convolution.winograd")
_conv_case("conv_3x3_winograd_many_bad", 4, 6, (3, 3), (1, 1), (0, 0), 1, (1, 4, 18, 18), "convolution.winograd",
           n_bad=(5, 4, 4))
_conv_case("conv_3x3_winograd_relu_residual", 6, 9, (3, 3), (1, 1), (1, 1), 1, (2, 6, 10, 12),
           "convolution.winograd", act="RELU", residual=True)
_conv_case("conv_3x3_winograd_leaky", 3, 5, (3, 3), (1, 1), (1, 1), 1, (1, 3, 9, 9), "convolution.winograd",
           act="LEAKY_RELU")
_conv_case("conv_1x1_gemm_relu", 8, 21, (1, 1), (1, 1), (0, 0), 1, (2, 8, 7, 9), "convolution.", act="RELU")
_conv_case("conv_3x3_stride2_clip", 5, 18, (3, 3), (2, 2), (1, 1), 1, (1, 5, 12, 13), "convolution.", act="CLIP")
_conv_case("conv_depthwise_relu", 12, 12, (3, 3), (1, 1), (1, 1), 12, (2, 12, 9, 10), "convolution.depthwise",
           act="RELU")
_conv_case("conv_grouped_sigmoid", 6, 4, (3, 3), (1, 1), (1, 1), 2, (1, 6, 7, 7), None, act="SIGMOID")

# 1x1 -> depthwise 3x3 -> 1x1 (+ the first's output): the nchwc pass makes them NCHWC_CONV steps with blocked tensors
# between them on AVX2 machines without AVX-512 (no kernel asserted: AVX-512 and masked runs keep CONVOLUTION)
_bw = [np.random.default_rng(41 + i).standard_normal(s).astype(np.float32) * 0.3
       for i, s in enumerate([(12, 9, 1, 1), (12, 1, 3, 3), (12, 12, 1, 1)])]
_bb = [np.random.default_rng(51 + i).standard_normal(12).astype(np.float32) for i in range(3)]


def _blocked_chain(net, x):
    h = layer_out(net.add_convolution_nd(x, 12, (1, 1), _bw[0], _bb[0]))
    d = net.add_convolution_nd(h, 12, (3, 3), _bw[1], _bb[1])
    d.padding_nd, d.num_groups = (1, 1), 12
    y = layer_out(net.add_convolution_nd(layer_out(d), 12, (1, 1), _bw[2], _bb[2]))
    return layer_out(net.add_elementwise(y, h, trt.ElementWiseOperation.SUM))


def _blocked_chain_ref(x):
    h = refs.convolution(x, _bw[0], _bb[0])
    d = refs.convolution(h, _bw[1], _bb[1], pre_padding=(1, 1), post_padding=(1, 1), groups=12)
    return refs.convolution(d, _bw[2], _bb[2]) + h


case("nchwc_chain", "NCHWC_CONV", lambda r: {"x": poisoned(r, (2, 9, 6, 7))}, _blocked_chain, _blocked_chain_ref)

# batch norm -> ReLU -> 1x1 convolution: the fuse_preact pass makes one PREACT_CONV step (the transform applied while
# the convolution packs its input); negative scales turn +Inf into -Inf, which the ReLU zeroes
_pw = np.random.default_rng(61).standard_normal((7, 11, 1, 1)).astype(np.float32) * 0.3
_pb = np.random.default_rng(62).standard_normal(7).astype(np.float32)
_ps = np.random.default_rng(63).standard_normal(11).astype(np.float32)
_pt = np.random.default_rng(64).standard_normal(11).astype(np.float32)


def _preact(net, x):
    s = net.add_scale(x, trt.ScaleMode.CHANNEL, shift=_pt, scale=_ps)
    r = net.add_activation(layer_out(s), trt.ActivationType.RELU)
    return layer_out(net.add_convolution_nd(layer_out(r), 7, (1, 1), _pw, _pb))


def _preact_ref(x):
    v = x * _ps.astype(np.float64)[None, :, None, None] + _pt.astype(np.float64)[None, :, None, None]
    return refs.convolution(np.where(v < 0, 0.0, v), _pw, _pb)


case("preact_conv", "PREACT_CONV", lambda r: {"x": poisoned(r, (2, 11, 6, 7))}, _preact, _preact_ref,
     "preact_conv." if {"avx2", "fma"} <= set(trt.cpu_features()) else None)  # fused (timing picks the kernel)


def _deconv_make(w, b):
    def make(net, x):
        layer = net.add_deconvolution_nd(x, w.shape[1], w.shape[2:], w, b)
        layer.stride_nd = (2, 2)
        return layer_out(layer)
    return make


_dw, _db = _weights(91, (3, 4, 3, 3)), _weights(92, (4,))
case("deconvolution", "DECONVOLUTION", lambda r: {"x": poisoned(r, (1, 3, 6, 5))}, _deconv_make(_dw, _db),
     lambda x: refs.deconvolution(x, _dw, _db, stride=(2, 2)))

_fw, _fb = _weights(93, (13, 3 * 4 * 5)), _weights(94, (13,))
case("fully_connected_relu", "FULLY_CONNECTED", lambda r: {"x": poisoned(r, (4, 3, 4, 5))},
     lambda net, x: layer_out(net.add_activation(layer_out(net.add_fully_connected(x, 13, _fw, _fb)),
                                                 trt.ActivationType.RELU)),
     lambda x: refs.activation(refs.fully_connected(x, _fw, _fb), "RELU"), kernel="fully_connected.")
_lw = np.random.default_rng(31).standard_normal((1, 7, 6)).astype(np.float32)
# a matrix multiply by a constant weight runs as the builder's internal LINEAR op (passes/fuse_linear.c)
case("linear", "LINEAR", lambda r: {"a": poisoned(r, (2, 5, 7))},
     lambda net, a: layer_out(net.add_matrix_multiply(a, trt.MatrixOperation.NONE,
                                                      layer_out(net.add_constant(_lw.shape, _lw)),
                                                      trt.MatrixOperation.NONE)),
     lambda a: refs.matrix_multiply(a, "NONE", _lw, "NONE"), kernel="linear.")
# a run of pointwise layers runs as the builder's internal PW_CHAIN op (passes/fuse_chain.c): |x|, tanh, * y (broadcast),
# + a per-channel constant, min with 2 (NaN and +-Inf through every op as through the separate layers)
_pc = np.random.default_rng(33).standard_normal((1, 5, 1)).astype(np.float32)


def _pw_chain(net, x, y):
    v = layer_out(net.add_activation(layer_out(net.add_unary(x, trt.UnaryOperation.ABS)), trt.ActivationType.TANH))
    v = layer_out(net.add_elementwise(v, y, trt.ElementWiseOperation.PROD))
    v = layer_out(net.add_elementwise(layer_out(net.add_constant(_pc.shape, _pc)), v, trt.ElementWiseOperation.SUM))
    two = layer_out(net.add_constant((1, 1, 1), np.full((1, 1, 1), 2.0, np.float32)))
    return layer_out(net.add_elementwise(v, two, trt.ElementWiseOperation.MIN))


case("pw_chain", "PW_CHAIN", lambda r: {"x": poisoned(r, (3, 5, 7)), "y": poisoned(r, (1, 5, 7))}, _pw_chain,
     lambda x, y: np.minimum(_pc + np.tanh(np.abs(refs._f64(x))) * refs._f64(y), 2.0), kernel="pw_chain.")
# a reduce of |a - b| runs as the builder's internal REDUCE_BINARY op (passes/fuse_reduce.c), for every reduce op
for _r in trt.ReduceOperation.__members__:
    case("reduce_binary_" + _r, "REDUCE_BINARY",
         lambda r: {"a": poisoned(r, (3, 4, 1, 9)), "b": poisoned(r, (1, 4, 5, 1))},
         lambda net, a, b, _r=_r: layer_out(net.add_reduce(
             layer_out(net.add_unary(layer_out(net.add_elementwise(a, b, trt.ElementWiseOperation.SUB)),
                                     trt.UnaryOperation.ABS)), getattr(trt.ReduceOperation, _r), 0b0101, True)),
         lambda a, b, _r=_r: refs.reduce(np.abs(a.astype(np.float64) - b), _r, (0, 2), True), kernel="reduce_binary.")
case("matrix_multiply", "MATRIX_MULTIPLY", lambda r: {"a": poisoned(r, (2, 5, 7)), "b": poisoned(r, (2, 7, 6))},
     lambda net, a, b: layer_out(net.add_matrix_multiply(a, trt.MatrixOperation.NONE, b, trt.MatrixOperation.NONE)),
     lambda a, b: refs.matrix_multiply(a, "NONE", b, "NONE"), kernel="matrix_multiply.")
case("softmax", "SOFTMAX", lambda r: {"x": poisoned(r, (4, 6, 5), 1, 1, 1)},
     lambda net, x: _softmax(net, x), lambda x: refs.softmax(x, 1))


def _softmax(net, x):
    layer = net.add_softmax(x)
    layer.axes = 1 << 1
    return layer_out(layer)


# softmax rows whose only special value is -Inf stay finite; a row of -Inf is NaN (exp(-inf - -inf))
case("softmax_minus_inf_rows", "SOFTMAX",
     lambda r: {"x": np.array([[[0.5, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [np.inf, 1.0, -np.inf]]],
                              np.float32)},
     lambda net, x: _softmax(net, x), lambda x: refs.softmax(x, 1))
case("lrn", "LRN", lambda r: {"x": poisoned(r, (1, 7, 4, 5))},
     lambda net, x: layer_out(net.add_lrn(x, 3, 0.5, 0.75, 1.5)), lambda x: refs.lrn(x, 3, 0.5, 0.75, 1.5))
_ss, _st = _weights(95, (4,)), _weights(96, (4,))
case("scale", "SCALE", lambda r: {"x": poisoned(r, (2, 4, 3, 3))},
     lambda net, x: layer_out(net.add_scale(x, trt.ScaleMode.CHANNEL, shift=_st, scale=_ss)),
     lambda x: refs.scale(x, "CHANNEL", shift=_st, scale=_ss))
case("concatenation", "CONCATENATION", lambda r: {"a": poisoned(r, (2, 3, 4)), "b": poisoned(r, (2, 2, 4))},
     lambda net, a, b: _concat(net, a, b), lambda a, b: refs.concatenation([a, b], 1))


def _concat(net, a, b):
    layer = net.add_concatenation([a, b])
    layer.axis = 1
    return layer_out(layer)


case("padding", "PADDING", lambda r: {"x": poisoned(r, (1, 2, 4, 5))},
     lambda net, x: layer_out(net.add_padding_nd(x, (1, 2), (2, 0))),
     lambda x: refs.padding(x, (1, 2), (2, 0)))
case("shuffle", "SHUFFLE", lambda r: {"x": poisoned(r, (2, 3, 4))}, lambda net, x: _shuffle(net, x),
     lambda x: refs.shuffle(x, first_transpose=(2, 0, 1), reshape=(4, 6)))


def _shuffle(net, x):
    layer = net.add_shuffle(x)
    layer.first_transpose = (2, 0, 1)
    layer.reshape_dims = (4, 6)
    return layer_out(layer)


case("slice", "SLICE", lambda r: {"x": poisoned(r, (4, 9), 3, 3, 3)},
     lambda net, x: layer_out(net.add_slice(x, (1, 0), (3, 4), (1, 2))),
     lambda x: refs.slice_(x, (1, 0), (3, 4), (1, 2)))
case("gather", "GATHER", lambda r: {"x": poisoned(r, (5, 4), 2, 2, 2), "i": np.array([4, 0, 2, 2], np.int32)},
     lambda net, x, i: layer_out(net.add_gather(x, i, 0)), lambda x, i: refs.gather(x, i, 0))
case("identity", "IDENTITY", lambda r: {"x": poisoned(r, (3, 4))}, lambda net, x: layer_out(net.add_identity(x)),
     refs.identity)
case("select", "SELECT",
     lambda r: {"c": r.random((3, 5)) < 0.5, "a": poisoned(r, (3, 5)), "b": poisoned(r, (3, 5))},
     lambda net, c, a, b: layer_out(net.add_select(c, a, b)), refs.select)
case("parametric_relu", "PARAMETRIC_RELU", lambda r: {"x": poisoned(r, (2, 3, 4)), "s": poisoned(r, (1, 3, 1), 1, 1, 0)},
     lambda net, x, s: layer_out(net.add_parametric_relu(x, s)), refs.parametric_relu)
_ns, _nb = _weights(97, (1, 3, 1, 1)), _weights(98, (1, 3, 1, 1))
case("normalization", "NORMALIZATION", lambda r: {"x": poisoned(r, (2, 3, 4, 5), 1, 1, 1)},
     lambda net, x: layer_out(net.add_normalization(x, layer_out(net.add_constant(_ns.shape, _ns)),
                                                    layer_out(net.add_constant(_nb.shape, _nb)), (1 << 2) | (1 << 3))),
     lambda x: refs.normalization(x, _ns, _nb, (2, 3)))
case("resize_nearest", "RESIZE", lambda r: {"x": poisoned(r, (1, 2, 3, 4))}, lambda net, x: _resize(net, x),
     lambda x: refs.resize(x, (1, 2, 6, 8)))


def _resize(net, x):
    layer = net.add_resize(x)
    layer.shape = (1, 2, 6, 8)
    return layer_out(layer)


ORT_COORD = {"ALIGN_CORNERS": "align_corners", "HALF_PIXEL": "half_pixel", "ASYMMETRIC": "asymmetric"}


def _ort_resize(x, sizes, mode, coord, cubic_coeff, exclude_outside):
    """onnxruntime's Resize (opset 13, sizes given) of x: the reference for NaN / Inf in LINEAR and CUBIC mode."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode.lower(),
                            coordinate_transformation_mode=ORT_COORD[coord], cubic_coeff_a=cubic_coeff,
                            exclude_outside=exclude_outside)
    graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [helper.make_tensor("sizes", TensorProto.INT64, [len(sizes)], list(sizes))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x.astype(np.float32)})[0]


def _resize_interp_case(cid, shape, sizes, mode, coord, cubic_coeff=-0.75, exclude_outside=0, n_bad=(2, 2, 2)):
    """LINEAR / CUBIC resize against onnxruntime.  Both spatial axes change (onnxruntime also interpolates an
    unchanged spatial axis, with weights 1 and 0, where trtlite copies it)."""
    def make(net, x):
        layer = net.add_resize(x)
        layer.shape = sizes
        layer.resize_mode = getattr(getattr(trt, "InterpolationMode", None) or trt.ResizeMode, mode)
        layer.coordinate_transformation = getattr(trt.ResizeCoordinateTransformation, coord)
        layer.cubic_coeff = cubic_coeff
        layer.exclude_outside = exclude_outside
        return layer_out(layer)
    case("resize_" + cid, "RESIZE", lambda r: {"x": poisoned(r, shape, *n_bad)}, make,
         lambda x: _ort_resize(x, sizes, mode, coord, cubic_coeff, exclude_outside), "resize.tables")


# align-corners 5 -> 9 and 4 -> 7 (and asymmetric 2x) hit input samples exactly: their neighbours get weight 0
_resize_interp_case("linear_align_corners", (1, 2, 5, 4), (1, 2, 9, 7), "LINEAR", "ALIGN_CORNERS")
_resize_interp_case("linear_half_pixel", (1, 2, 3, 4), (1, 2, 6, 8), "LINEAR", "HALF_PIXEL")
_resize_interp_case("linear_asymmetric", (1, 2, 3, 4), (1, 2, 6, 8), "LINEAR", "ASYMMETRIC")
_resize_interp_case("linear_half_pixel_down", (1, 2, 9, 8), (1, 2, 4, 3), "LINEAR", "HALF_PIXEL", n_bad=(1, 1, 1))
_resize_interp_case("linear_align_corners_wide", (2, 1, 3, 24), (2, 1, 5, 47), "LINEAR", "ALIGN_CORNERS")
for _c in ORT_COORD:
    for _e in (0, 1):
        _resize_interp_case("cubic_%s_excl%d" % (_c.lower(), _e), (1, 2, 5, 4), (1, 2, 9, 7), "CUBIC", _c,
                            -0.75 if _e else -0.5, _e, n_bad=(1, 1, 1))
_resize_interp_case("cubic_align_corners_wide", (1, 2, 4, 20), (1, 2, 7, 39), "CUBIC", "ALIGN_CORNERS", n_bad=(1, 1, 0))


case("cast_to_float16", "CAST", lambda r: {"x": poisoned(r, (4, 5))},
     lambda net, x: layer_out(net.add_cast(x, trt.float16)), lambda x: x.astype(np.float16))
case("topk_max", "TOPK", lambda r: {"x": poisoned(r, (3, 8), 0, 3, 3)},
     lambda net, x: layer_out(net.add_topk(x, trt.TopKOperation.MAX, 3, 1 << 1)),
     lambda x: refs.topk(x, "MAX", 3, 1)[0])

def _attention(net, q, k, v, m):
    kt = net.add_shuffle(k)
    kt.first_transpose = (0, 1, 3, 2)
    s = layer_out(net.add_matrix_multiply(q, trt.MatrixOperation.NONE, layer_out(kt), trt.MatrixOperation.NONE))
    c = net.add_constant((1, 1, 1, 1), np.full((1, 1, 1, 1), 0.25, np.float32)).get_output(0)
    s = layer_out(net.add_elementwise(s, c, trt.ElementWiseOperation.PROD))
    s = layer_out(net.add_elementwise(s, m, trt.ElementWiseOperation.SUM))
    sm = net.add_softmax(s)
    sm.axes = 1 << 3
    return layer_out(net.add_matrix_multiply(layer_out(sm), trt.MatrixOperation.NONE, v, trt.MatrixOperation.NONE))


def _attention_mask(r):
    m = np.where(r.random((2, 1, 5, 6)) < 0.3, -np.inf, 0).astype(np.float32)
    m[1, 0, 2, :] = -np.inf  # a fully masked row: NaN, as exp(-inf - -inf)
    return m


# attention (fused into one internal step by the builder in "opt" mode, the unfused layers in "ref" mode): a NaN
# or +-Inf in Q poisons its row, a NaN in V its column, -inf mask entries drop keys, a fully masked row is NaN
case("attention", "ATTENTION",
     lambda r: {"q": poisoned(r, (2, 3, 5, 4), 1, 1, 1), "k": r.standard_normal((2, 3, 6, 4)).astype(np.float32),
                "v": poisoned(r, (2, 3, 6, 7), 1, 0, 0), "m": _attention_mask(r)},
     _attention,
     lambda q, k, v, m: refs.softmax(refs._f64(q) @ np.swapaxes(refs._f64(k), -1, -2) * 0.25 + m, 3) @ refs._f64(v),
     "attention.")

# TensorRT 10 layers (issue #12): data movement keeps NaN/Inf where they land; sums propagate them as numpy does.
def _ci(net, v):
    a = np.asarray(v, np.int32)
    return net.add_constant(a.shape, a).get_output(0)


_SC_IDX = np.array([[2, 0], [1, 3], [0, 0]], np.int32)


def _scatter_ref(d, u):
    y = d.astype(np.float64).copy()
    for (i, j), v in np.ndenumerate(u):
        y[i, _SC_IDX[i, j]] += v
    return y


def _scatter_make(net, d, u):
    layer = net.add_scatter(d, _ci(net, _SC_IDX), u, trt.ScatterMode.ELEMENT)
    layer.axis = 1
    layer.reduction = trt.ScatterReduction.SUM
    return layer_out(layer)


case("scatter", "SCATTER", lambda r: {"d": poisoned(r, (3, 4)), "u": poisoned(r, (3, 2), 1, 1, 1)}, _scatter_make,
     _scatter_ref)
case("one_hot", "ONE_HOT", lambda r: {"v": np.array([np.nan, np.inf], np.float32)},
     lambda net, v: layer_out(net.add_one_hot(_ci(net, [0, 2, -1, 5]), v, _ci(net, 3), -1)),
     lambda v: np.where(np.arange(3)[None, :] == np.array([0, 2, 2, 99])[:, None], v[1], v[0]))
case("cumulative", "CUMULATIVE", lambda r: {"x": poisoned(r, (3, 5))},
     lambda net, x: layer_out(net.add_cumulative(x, _ci(net, 1), trt.CumulativeOperation.SUM, False, False)),
     lambda x: np.cumsum(x.astype(np.float64), 1))
case("reverse_sequence", "REVERSE_SEQUENCE", lambda r: {"x": poisoned(r, (4, 3))},
     lambda net, x: layer_out(net.add_reverse_sequence(x, _ci(net, [4, 2, 0]))),
     lambda x: np.stack([x[::-1, 0], np.concatenate([x[1::-1, 1], x[2:, 1]]), x[:, 2]], 1))
case("squeeze", "SQUEEZE", lambda r: {"x": poisoned(r, (3, 1, 4))},
     lambda net, x: layer_out(net.add_squeeze(x, _ci(net, [1]))), lambda x: x.reshape(3, 4))
case("unsqueeze", "UNSQUEEZE", lambda r: {"x": poisoned(r, (3, 4))},
     lambda net, x: layer_out(net.add_unsqueeze(x, _ci(net, [0, 3]))), lambda x: x.reshape(1, 3, 4, 1))
_GS_ROWS, _GS_COLS = np.array([0, 2, 1]), np.array([3, 0, 1, 2])


def _grid_make(net, x):
    g = np.stack(np.broadcast_arrays(_GS_COLS[None, :] / 3.0 * 2 - 1, _GS_ROWS[:, None] / 2.0 * 2 - 1), -1)
    layer = net.add_grid_sample(x, net.add_constant((1, 3, 4, 2), g[None].astype(np.float32)).get_output(0))
    layer.interpolation_mode = trt.InterpolationMode.NEAREST
    layer.align_corners = True
    return layer_out(layer)


case("grid_sample", "GRID_SAMPLE", lambda r: {"x": poisoned(r, (1, 2, 3, 4))}, _grid_make,
     lambda x: x[:, :, _GS_ROWS[:, None], _GS_COLS[None, :]])
case("einsum", "EINSUM", lambda r: {"a": poisoned(r, (3, 4), 1, 1, 0), "b": poisoned(r, (4, 2), 0, 0, 1)},
     lambda net, a, b: layer_out(net.add_einsum([a, b], "ij,jk->ik")),
     lambda a, b: np.einsum("ij,jk->ik", a.astype(np.float64), b.astype(np.float64)))



def _fill_make(net, a, d):
    layer = net.add_fill((2, 3), trt.FillOperation.LINSPACE, trt.float32)
    layer.set_input(1, a)
    layer.set_input(2, d)
    return layer_out(layer)


# LINSPACE with an infinite delta: inf * 0 is NaN at index 0, as numpy's a + d0 * i + d1 * j
case("fill", "FILL", lambda r: {"a": np.array(1.5, np.float32), "d": np.array([np.inf, 2.0], np.float32)},
     _fill_make, lambda a, d: a + d[0] * np.indices((2, 3))[0] + d[1] * np.indices((2, 3))[1])

# NonZero: NaN and +-Inf are non-zero, as numpy (the output's size is data-dependent: infer() cuts it)
case("non_zero", "NON_ZERO", lambda r: {"x": poisoned(r, (3, 5))},
     lambda net, x: layer_out(net.add_non_zero(x)), lambda x: np.array(np.nonzero(x)).astype(np.float64))


def _nms_make(net, boxes, scores):
    layer = net.add_nms(boxes, scores, net.add_constant((), np.array(5, np.int32)).get_output(0))
    return layer_out(layer)


# NMS: a NaN score never exceeds the threshold; a box with an infinite corner has an infinite area, so its IoU
# with a finite box is 0 and both stay
case("nms", "NMS", lambda r: {"boxes": np.array([[[0, 0, 1, 1], [0, 0, np.inf, np.inf], [5, 5, 6, 6]]], np.float32),
                              "scores": np.array([[[0.9], [0.8], [np.nan]]], np.float32)},
     _nms_make, lambda b, s: np.array([[0, 0, 0], [0, 0, 1]], np.float64))

# Layer types with no float input to poison: CONSTANT (no input), PLUGIN_V2 (the plugins' own tests).
NO_FLOAT_INPUT = {"CONSTANT", "PLUGIN_V2",
                  # NaN/Inf through Quantize (NaN -> lowest code, +-Inf saturate) and Dequantize (integer input):
                  # tests/test_quantize.py; QLINEAR is internal to the builder (tests/c/test_kernels.c)
                  "QUANTIZE", "DEQUANTIZE", "QLINEAR",
                  # SHAPE reads its input's dims, never its values (tests/test_shape_tensors.py)
                  "SHAPE",
                  "ASSERTION",  # a BOOL condition
                  # control flow moves values (copies into and out of nested engines), computing nothing on them;
                  # their layers are computed by the nested engines' own kernels (tests/test_control_flow.py)
                  "CONDITION", "CONDITIONAL_INPUT", "CONDITIONAL_OUTPUT", "TRIP_LIMIT", "RECURRENCE", "ITERATOR",
                  "LOOP_OUTPUT", "CONTROL_FLOW"}


def test_every_layer_type_has_a_case():
    ops = []
    with open(os.path.join(REPO, "csrc", "include", "trtlite", "ops.def")) as f:
        ops = [ln[len("TRTL_OP("):].split(",")[0].strip() for ln in f if ln.startswith("TRTL_OP(")]
    covered = set(OP_OF.values())
    assert set(ops) - NO_FLOAT_INPUT <= covered, sorted(set(ops) - NO_FLOAT_INPUT - covered)


@pytest.mark.parametrize("mode", ["opt"] if MASKED else ["opt", "ref"])
@pytest.mark.parametrize("inputs,make,ref,kernel", CASES)
def test_nan_inf(request, rng, mode, inputs, make, ref, kernel):
    arrays = inputs(rng)
    with np.errstate(all="ignore"):
        expected = ref(*arrays.values())
    outs, kernels = run(mode, make, arrays)
    if mode == "ref":
        assert all(k.endswith(".ref") for k in kernels), kernels
    elif kernel and not MASKED:
        assert any(k.startswith(kernel) for k in kernels), (kernel, kernels)
    out = outs[0]
    if out.dtype == np.float16:
        np.testing.assert_array_equal(out, expected)
        return
    check(out, expected)


@pytest.mark.skipif(bool(MASKED), reason="runs only in the parent")
@pytest.mark.parametrize("mask,what", [("1f", "AVX2 (no AVX-512)"), ("0", "no SIMD")])
def test_nan_inf_with_cpu_features_hidden(mask, what):
    skip_if_mask_hides_nothing(mask)
    env = dict(os.environ, TRTL_CPU_MASK=mask, TRTL_NAN_TEST_MASKED="1")
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           "--rootdir", REPO, os.path.join(REPO, "tests", "test_nan_inf.py"), "-k",
                           "test_nan_inf and not hidden"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert proc.returncode == 0 and " passed" in proc.stdout, what + ":\n" + proc.stdout[-4000:] + proc.stderr[-2000:]


def _topk_nan_ref(x, largest, k):
    """torch.topk's order (NaN ranks above every number), ties (NaN ones too) keeping the lower index first as
    the kernel documents."""
    vals, idx = [], []
    for row in x.astype(np.float64):
        key = [((0 if np.isnan(v) else 1), -v) if largest else ((1 if np.isnan(v) else 0), v) for v in row]
        order = sorted(range(len(row)), key=lambda i: (key[i][0], 0.0 if np.isnan(key[i][1]) else key[i][1], i))
        idx.append(order[:k])
        vals.append(row[order[:k]])
    return np.array(vals), np.array(idx, np.int32)


@pytest.mark.parametrize("mode", ["opt"] if MASKED else ["opt", "ref"])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_orders_nan_as_torch_does(rng, mode, largest):
    x = poisoned(rng, (5, 9), 3, 2, 2)
    x[0, :] = np.nan  # a row of NaN only
    op = trt.TopKOperation.MAX if largest else trt.TopKOperation.MIN
    (vals, idx), _ = run(mode, lambda net, t: [net.add_topk(t, op, 4, 1 << 1)], {"x": x})
    ref_vals, ref_idx = _topk_nan_ref(x, largest, 4)
    check(vals, ref_vals)
    np.testing.assert_array_equal(idx, ref_idx)
    try:
        import torch
    except ImportError:
        return
    tv, _ = torch.topk(torch.from_numpy(x), 4, 1, largest=largest)  # (torch leaves the order of NaN ties open)
    check(vals, tv.numpy())
