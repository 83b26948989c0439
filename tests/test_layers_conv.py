"""Convolution and deconvolution layers vs tests/refs.py."""
import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close, weights_array


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def conv_make(K, w, b, api="nd", deconv=False, **attrs):
    """make(network, x) adding one (de)convolution with the given attributes set after creation."""
    def make(net, x):
        ks = tuple(w.shape[2:])
        if deconv:
            add = net.add_deconvolution_nd if api == "nd" else net.add_deconvolution
        else:
            add = net.add_convolution_nd if api == "nd" else net.add_convolution
        layer = add(input=x, num_output_maps=K, kernel_shape=ks, kernel=w, bias=b)
        for k, v in attrs.items():
            setattr(layer, k, v)
        return layer.get_output(0)
    return make


# ------------------------------------------------------------------------------------------------------------
# convolution
# ------------------------------------------------------------------------------------------------------------

CONV_CASES = [
    # id, input shape, K, kernel, stride, pre, post, dilation, groups, bias
    ("plain", (2, 3, 7, 6), 4, (3, 2), (1, 1), (0, 0), (0, 0), (1, 1), 1, True),
    ("1x1", (3, 5, 5, 7), 3, (1, 1), (1, 1), (0, 0), (0, 0), (1, 1), 1, True),
    ("stride_pad", (2, 4, 9, 8), 5, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1, False),
    ("asym_pad", (2, 3, 7, 9), 2, (3, 3), (2, 1), (2, 0), (0, 1), (1, 1), 1, True),
    ("dilation", (2, 2, 11, 10), 3, (3, 2), (1, 2), (1, 1), (1, 1), (2, 3), 1, True),
    ("groups", (2, 6, 7, 5), 4, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 2, True),
    ("depthwise", (2, 5, 8, 7), 5, (3, 3), (2, 1), (1, 0), (1, 2), (1, 1), 5, True),
    ("depthwise_mult", (1, 3, 6, 6), 6, (2, 3), (1, 1), (0, 1), (1, 1), (1, 1), 3, False),
    ("everything", (3, 6, 13, 11), 9, (3, 4), (2, 3), (2, 1), (0, 3), (2, 1), 3, True),
    ("big_kernel", (2, 2, 6, 5), 3, (6, 5), (1, 1), (0, 0), (0, 0), (1, 1), 1, True),
    ("wide", (2, 17, 5, 4), 19, (3, 1), (1, 1), (1, 0), (1, 0), (1, 1), 1, True),
]


@pytest.mark.parametrize("case", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_convolution_2d(case, rng, build_and_run):
    _, shape, K, ks, stride, pre, post, dil, g, has_b = case
    x = randn(rng, shape)
    w = randn(rng, (K, shape[1] // g) + ks)
    b = randn(rng, K) if has_b else None
    out = build_and_run(conv_make(K, w, b, stride_nd=stride, pre_padding=pre, post_padding=post, dilation_nd=dil,
                                  num_groups=g), {"x": x})
    assert_close(out, refs.convolution(x, w, b, stride, pre, post, dil, g))


# (input size, kernel, stride, pad, dilation) per mode, chosen so that SAME never needs negative padding and the
# rounding matters (round down != round up); CAFFE uses symmetric padding
MODE_CASES = [
    ((2, 3, 8, 7), (3, 2), (2, 2), (1, 0), (1, 1)),
    ((2, 2, 10, 9), (4, 3), (3, 2), (1, 1), (1, 2)),
]


@pytest.mark.parametrize("mode", refs.PADDING_MODES)
@pytest.mark.parametrize("case", MODE_CASES)
def test_convolution_padding_modes(mode, case, rng, build_and_run):
    shape, ks, stride, pad, dil = case
    x = randn(rng, shape)
    w = randn(rng, (3, shape[1]) + ks)
    b = randn(rng, 3)
    out = build_and_run(conv_make(3, w, b, stride_nd=stride, padding_nd=pad, dilation_nd=dil,
                                  padding_mode=getattr(trt.PaddingMode, mode)), {"x": x})
    assert_close(out, refs.convolution(x, w, b, stride, pad, pad, dil, 1, mode))


def test_convolution_padding_mode_overrides_explicit_padding(rng, build_and_run):
    # "padding mode takes precedence if both padding_mode and pre_padding are set"
    x = randn(rng, (2, 3, 7, 6))
    w = randn(rng, (2, 3, 3, 3))
    out = build_and_run(conv_make(2, w, None, pre_padding=(3, 3), post_padding=(2, 2),
                                  padding_mode=trt.PaddingMode.SAME_UPPER), {"x": x})
    assert_close(out, refs.convolution(x, w, None, padding_mode="SAME_UPPER"))


def test_convolution_1d_trtlite_extension(rng, build_and_run):
    """TensorRT convolves 2-D/3-D kernels only; trtlite's convolution takes 1 to 3 spatial dims."""
    x = randn(rng, (3, 4, 13))
    w = randn(rng, (6, 2, 3))
    b = randn(rng, 6)
    out = build_and_run(conv_make(6, w, b, stride_nd=(2,), pre_padding=(2,), post_padding=(1,), dilation_nd=(2,),
                                  num_groups=2), {"x": x})
    assert_close(out, refs.convolution(x, w, b, (2,), (2,), (1,), (2,), 2))


@pytest.mark.parametrize("groups", [1, 2])
def test_convolution_3d(groups, rng, build_and_run):
    x = randn(rng, (2, 4, 5, 6, 7))
    w = randn(rng, (4, 4 // groups, 3, 2, 3))
    b = randn(rng, 4)
    out = build_and_run(conv_make(4, w, b, stride_nd=(1, 2, 2), pre_padding=(1, 0, 1), post_padding=(1, 1, 0),
                                  dilation_nd=(1, 2, 1), num_groups=groups), {"x": x})
    assert_close(out, refs.convolution(x, w, b, (1, 2, 2), (1, 0, 1), (1, 1, 0), (1, 2, 1), groups))


def test_convolution_3d_same(rng, build_and_run):
    x = randn(rng, (1, 2, 5, 7, 6))
    w = randn(rng, (3, 2, 3, 3, 2))
    out = build_and_run(conv_make(3, w, None, stride_nd=(2, 2, 1), padding_mode=trt.PaddingMode.SAME_LOWER),
                        {"x": x})
    assert_close(out, refs.convolution(x, w, None, (2, 2, 1), padding_mode="SAME_LOWER"))


def test_convolution_trt7_api(rng, build_and_run):
    """TensorRT 7 add_convolution with DimsHW stride/padding/dilation."""
    x = randn(rng, (2, 3, 9, 8))
    w = randn(rng, (4, 3, 3, 2))
    b = randn(rng, 4)
    out = build_and_run(conv_make(4, w, b, api="trt7", stride=trt.DimsHW(2, 1), padding=(1, 2),
                                  dilation=trt.DimsHW(1, 2)), {"x": x})
    assert_close(out, refs.convolution(x, w, b, (2, 1), (1, 2), (1, 2), (1, 2)))


def test_convolution_implicit_batch(rng, build_and_run):
    """TensorRT 7 implicit batch: the network sees CHW, the engine runs any batch <= max_batch_size."""
    x = randn(rng, (3, 4, 7, 6))
    w = randn(rng, (6, 2, 3, 3))
    b = randn(rng, 6)

    def make(net, t):
        assert tuple(t.shape) == (4, 7, 6)
        layer = net.add_convolution(input=t, num_output_maps=6, kernel_shape=(3, 3), kernel=w, bias=b)
        layer.stride = (2, 1)
        layer.padding = (1, 1)
        layer.num_groups = 2
        assert tuple(layer.get_output(0).shape) == (6, 4, 6)
        return layer.get_output(0)

    out = build_and_run(make, {"x": x}, explicit=False, max_batch=5)
    assert_close(out, refs.convolution(x, w, b, (2, 1), (1, 1), (1, 1), None, 2))


def test_convolution_output_shape_at_definition(rng, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (2, 3, 9, 8))
    w = randn(rng, (5, 3, 3, 2))
    layer = n.network.add_convolution_nd(x, 5, (3, 2), w)
    layer.stride_nd = (2, 2)
    layer.padding_nd = (1, 1)
    assert tuple(layer.get_output(0).shape) == (2, 5, 5, 5)


def test_convolution_attributes_roundtrip(rng, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (1, 4, 9, 9))
    w = randn(rng, (2, 4, 3, 3))
    layer = n.network.add_convolution_nd(input=x, num_output_maps=2, kernel_shape=(3, 3), kernel=w)
    assert isinstance(layer, trt.IConvolutionLayer)
    assert layer.type == trt.LayerType.CONVOLUTION
    # TensorRT defaults
    assert tuple(layer.stride_nd) == (1, 1)
    assert tuple(layer.dilation_nd) == (1, 1)
    assert tuple(layer.pre_padding) == (0, 0)
    assert tuple(layer.post_padding) == (0, 0)
    assert layer.num_groups == 1
    assert layer.padding_mode == trt.PaddingMode.EXPLICIT_ROUND_DOWN
    assert layer.num_output_maps == 2
    assert tuple(layer.kernel_size_nd) == (3, 3)
    np.testing.assert_array_equal(weights_array(layer.kernel), w.ravel())
    # writes read back
    layer.stride_nd = (2, 3)
    layer.dilation_nd = trt.Dims([2, 1])
    layer.pre_padding = (1, 0)
    layer.post_padding = [0, 2]
    layer.num_groups = 2
    layer.num_output_maps = 4
    layer.kernel_size_nd = (1, 1)
    for mode in refs.PADDING_MODES:
        layer.padding_mode = getattr(trt.PaddingMode, mode)
        assert layer.padding_mode == getattr(trt.PaddingMode, mode)
    assert tuple(layer.stride_nd) == (2, 3)
    assert tuple(layer.dilation_nd) == (2, 1)
    assert tuple(layer.pre_padding) == (1, 0)
    assert tuple(layer.post_padding) == (0, 2)
    assert layer.num_groups == 2
    assert layer.num_output_maps == 4
    assert tuple(layer.kernel_size_nd) == (1, 1)
    layer.padding_nd = (3, 2)
    assert tuple(layer.padding_nd) == (3, 2)
    assert tuple(layer.pre_padding) == (3, 2) and tuple(layer.post_padding) == (3, 2)
    # TRT 7 DimsHW views
    layer.stride = (4, 5)
    assert tuple(layer.stride) == (4, 5) and tuple(layer.stride_nd) == (4, 5)
    layer.padding = trt.DimsHW(1, 1)
    assert tuple(layer.padding) == (1, 1)
    layer.dilation = (3, 3)
    assert tuple(layer.dilation_nd) == (3, 3)
    w2 = randn(rng, (4, 2, 1, 1))
    layer.kernel = w2
    np.testing.assert_array_equal(weights_array(layer.kernel), w2.ravel())
    b2 = randn(rng, 4)
    layer.bias = trt.Weights(b2)
    np.testing.assert_array_equal(weights_array(layer.bias), b2)


def test_convolution_attributes_changed_after_creation_are_used(rng, build_and_run):
    x = randn(rng, (2, 4, 9, 8))
    w0 = randn(rng, (2, 4, 3, 3))
    w = randn(rng, (6, 2, 3, 2))
    b = randn(rng, 6)

    def make(net, t):
        layer = net.add_convolution_nd(t, 2, (3, 3), w0)
        layer.num_output_maps = 6
        layer.kernel_size_nd = (3, 2)
        layer.kernel = w
        layer.bias = b
        layer.num_groups = 2
        layer.stride_nd = (2, 1)
        layer.padding_nd = (1, 1)
        return layer

    out = build_and_run(make, {"x": x})
    assert_close(out, refs.convolution(x, w, b, (2, 1), (1, 1), (1, 1), None, 2))


@pytest.mark.parametrize("form", ["weights", "float64", "flat", "keyword_none_bias"])
def test_convolution_weight_forms(form, rng, build_and_run):
    x = randn(rng, (2, 3, 6, 5))
    w = randn(rng, (4, 3, 2, 2))
    b = randn(rng, 4)
    if form == "weights":
        kw, kb = trt.Weights(w), trt.Weights(b)
    elif form == "float64":
        kw, kb = w.astype(np.float64), b.astype(np.float64)
    elif form == "flat":
        kw, kb = w.ravel(), b
    else:
        kw, kb, b = w, None, None

    def make(net, t):
        return net.add_convolution_nd(input=t, num_output_maps=4, kernel_shape=(2, 2), kernel=kw, bias=kb)

    out = build_and_run(make, {"x": x})
    assert_close(out, refs.convolution(x, w, b))


def test_convolution_dynamic_shapes(rng, build):
    w = randn(rng, (3, 2, 3, 3))
    b = randn(rng, 3)
    r = build(conv_make(3, w, b, stride_nd=(2, 2), padding_mode=trt.PaddingMode.SAME_UPPER),
              {"x": ((1, 2, 8, 8), np.float32)}, input_shapes={"x": (-1, 2, -1, -1)},
              profile={"x": ((1, 2, 4, 4), (2, 2, 8, 8), (3, 2, 16, 16))})
    for shape in [(1, 2, 4, 5), (3, 2, 9, 16), (2, 2, 8, 8), (1, 2, 4, 5)]:
        x = randn(rng, shape)
        assert_close(r.run({"x": x}), refs.convolution(x, w, b, (2, 2), padding_mode="SAME_UPPER"))


@pytest.mark.parametrize("via", ["v3", "infer", "ptr"])
def test_convolution_execution_paths(via, rng, build_and_run):
    x = randn(rng, (2, 3, 5, 6))
    w = randn(rng, (2, 3, 3, 3))
    out = build_and_run(conv_make(2, w, None, padding_nd=(1, 1)), {"x": x}, via=via)
    if isinstance(out, dict):
        out = out["out0"]
    assert_close(out, refs.convolution(x, w, None, None, (1, 1), (1, 1)))


# ---- convolution errors ---------------------------------------------------------------------------------------

def _conv_err(shape, K, ks, w_shape, b_count=None, dtype=trt.float32, **attrs):
    def make(net):
        x = net.add_input("x", dtype, shape)
        w = np.ones(w_shape, np.float32)
        b = np.ones(b_count, np.float32) if b_count is not None else None
        layer = net.add_convolution_nd(x, K, ks, w, b)
        layer.name = "bad_conv"
        for k, v in attrs.items():
            setattr(layer, k, v)
        net.mark_output(layer.get_output(0))
    return make


NAMES = ("bad_conv", "[Convolution]")


def test_convolution_error_wrong_kernel_count(expect_layer_error):
    e = expect_layer_error(_conv_err((1, 3, 8, 8), 4, (3, 3), (4 * 3 * 3 * 3 - 1,)), trt.Error, NAMES)
    assert isinstance(e, ValueError)


def test_convolution_error_wrong_bias_count(expect_layer_error):
    e = expect_layer_error(_conv_err((1, 3, 8, 8), 4, (3, 3), (4, 3, 3, 3), b_count=3), trt.Error, NAMES)
    assert isinstance(e, ValueError)


def test_convolution_error_channels_not_divisible_by_groups(expect_layer_error):
    expect_layer_error(_conv_err((1, 3, 8, 8), 4, (3, 3), (4, 1, 3, 3), num_groups=2), trt.ShapeError, NAMES)


def test_convolution_error_kernel_count_vs_groups(expect_layer_error):
    # 4 groups over 4 channels needs K * 1 * 9 weights; K * 4 * 9 given
    e = expect_layer_error(_conv_err((1, 4, 8, 8), 4, (3, 3), (4, 4, 3, 3), num_groups=4), trt.Error, NAMES)
    assert isinstance(e, ValueError)


def test_convolution_error_input_rank(expect_layer_error):
    expect_layer_error(_conv_err((3, 8, 8), 4, (3, 3), (4, 3, 3, 3)), trt.ShapeError, NAMES)


def test_convolution_error_kernel_larger_than_input(expect_layer_error):
    expect_layer_error(_conv_err((1, 3, 4, 4), 2, (5, 5), (2, 3, 5, 5)), trt.ShapeError, NAMES)


@pytest.mark.parametrize("attr,value", [("stride_nd", (0, 1)), ("dilation_nd", (1, 0)), ("num_groups", 0),
                                        ("num_output_maps", 0)])
def test_convolution_error_bad_attribute(attr, value, expect_layer_error):
    expect_layer_error(_conv_err((1, 3, 8, 8), 3, (3, 3), (3, 3, 3, 3), **{attr: value}),
                       trt.InvalidArgumentError, NAMES)


def test_convolution_error_int32_input(expect_layer_error):
    expect_layer_error(_conv_err((1, 3, 8, 8), 2, (3, 3), (2, 3, 3, 3), dtype=trt.int32), trt.DTypeError, NAMES)


def test_convolution_error_default_name(expect_layer_error):
    """An error found at add_* time names the layer by its TensorRT default name."""
    def make(net):
        net.add_input("x", trt.float32, (1, 3, 8, 8))
        net.add_identity(net.get_input(0))
        x = net.get_input(0)
        net.add_convolution_nd(x, 2, (3, 3), np.ones(5, np.float32))
        net.mark_output(net.get_layer(1).get_output(0))
    e = expect_layer_error(make, trt.Error, ("(Unnamed Layer* 1) [Convolution]",))
    assert isinstance(e, ValueError)


# ------------------------------------------------------------------------------------------------------------
# deconvolution
# ------------------------------------------------------------------------------------------------------------

DECONV_CASES = [
    # id, input shape, K, kernel, stride, pre, post, dilation, groups, bias
    ("plain", (2, 3, 4, 5), 2, (3, 3), (1, 1), (0, 0), (0, 0), (1, 1), 1, True),
    ("stride", (2, 3, 5, 4), 4, (2, 2), (2, 2), (0, 0), (0, 0), (1, 1), 1, True),
    ("stride_kernel", (2, 2, 3, 4), 3, (4, 3), (2, 3), (1, 0), (1, 1), (1, 1), 1, False),
    ("asym_crop", (1, 4, 5, 5), 2, (3, 3), (2, 2), (2, 0), (0, 1), (1, 1), 1, True),
    ("groups", (2, 4, 3, 5), 6, (3, 2), (2, 1), (1, 0), (0, 1), (1, 1), 2, True),
    ("depthwise", (2, 3, 4, 4), 3, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 3, True),
    ("dilation", (2, 2, 4, 3), 3, (2, 3), (1, 2), (0, 1), (1, 0), (2, 2), 1, True),
    ("stride_gt_kernel", (1, 2, 3, 3), 2, (2, 2), (3, 3), (0, 0), (0, 0), (1, 1), 1, True),
]


@pytest.mark.parametrize("case", DECONV_CASES, ids=[c[0] for c in DECONV_CASES])
def test_deconvolution_2d(case, rng, build_and_run):
    _, shape, K, ks, stride, pre, post, dil, g, has_b = case
    x = randn(rng, shape)
    w = randn(rng, (shape[1], K // g) + ks)
    b = randn(rng, K) if has_b else None
    out = build_and_run(conv_make(K, w, b, deconv=True, stride_nd=stride, pre_padding=pre, post_padding=post,
                                  dilation_nd=dil, num_groups=g), {"x": x})
    assert_close(out, refs.deconvolution(x, w, b, stride, pre, post, dil, g))


@pytest.mark.parametrize("mode", refs.PADDING_MODES)
@pytest.mark.parametrize("ks,stride", [((3, 4), (2, 2)), ((3, 3), (1, 2))])
def test_deconvolution_padding_modes(mode, ks, stride, rng, build_and_run):
    x = randn(rng, (2, 3, 4, 5))
    w = randn(rng, (3, 2) + ks)
    b = randn(rng, 2)
    pad = (1, 1)
    out = build_and_run(conv_make(2, w, b, deconv=True, stride_nd=stride, padding_nd=pad,
                                  padding_mode=getattr(trt.PaddingMode, mode)), {"x": x})
    assert_close(out, refs.deconvolution(x, w, b, stride, pad, pad, None, 1, mode))


def test_deconvolution_same_kernel_smaller_than_stride(rng, build_and_run):
    # O = min(I * S, (I - 1) * S + DK) = (I - 1) * S + DK when DK < S
    x = randn(rng, (2, 2, 3, 4))
    w = randn(rng, (2, 3, 2, 2))
    out = build_and_run(conv_make(3, w, None, deconv=True, stride_nd=(3, 3),
                                  padding_mode=trt.PaddingMode.SAME_UPPER), {"x": x})
    assert out.shape == (2, 3, 8, 11)
    assert_close(out, refs.deconvolution(x, w, None, (3, 3), padding_mode="SAME_UPPER"))


def test_deconvolution_1d_trtlite_extension(rng, build_and_run):
    x = randn(rng, (2, 4, 5))
    w = randn(rng, (4, 3, 3))
    b = randn(rng, 6)
    out = build_and_run(conv_make(6, w, b, deconv=True, stride_nd=(2,), pre_padding=(1,), num_groups=2), {"x": x})
    assert_close(out, refs.deconvolution(x, w, b, (2,), (1,), (0,), None, 2))


def test_deconvolution_3d(rng, build_and_run):
    x = randn(rng, (1, 2, 3, 4, 3))
    w = randn(rng, (2, 2, 2, 3, 2))
    b = randn(rng, 2)
    out = build_and_run(conv_make(2, w, b, deconv=True, stride_nd=(2, 1, 2), post_padding=(0, 1, 1)), {"x": x})
    assert_close(out, refs.deconvolution(x, w, b, (2, 1, 2), (0, 0, 0), (0, 1, 1)))


def test_deconvolution_trt7_api_and_implicit_batch(rng, build_and_run):
    x = randn(rng, (3, 2, 4, 5))
    w = randn(rng, (2, 3, 3, 3))
    b = randn(rng, 3)

    def make(net, t):
        layer = net.add_deconvolution(input=t, num_output_maps=3, kernel_shape=(3, 3), kernel=w, bias=b)
        layer.stride = trt.DimsHW(2, 2)
        layer.padding = (1, 1)
        return layer

    out = build_and_run(make, {"x": x}, explicit=False, max_batch=4)
    assert_close(out, refs.deconvolution(x, w, b, (2, 2), (1, 1), (1, 1)))


def test_deconvolution_attributes_roundtrip(rng, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (1, 4, 5, 5))
    w = randn(rng, (4, 2, 3, 3))
    layer = n.network.add_deconvolution_nd(input=x, num_output_maps=2, kernel_shape=(3, 3), kernel=w)
    assert isinstance(layer, trt.IDeconvolutionLayer)
    assert layer.type == trt.LayerType.DECONVOLUTION
    assert tuple(layer.stride_nd) == (1, 1)
    assert layer.num_groups == 1
    assert tuple(layer.get_output(0).shape) == (1, 2, 7, 7)
    layer.stride_nd = (2, 2)
    layer.pre_padding = (1, 0)
    layer.post_padding = (0, 1)
    layer.num_groups = 2
    layer.dilation_nd = (1, 2)
    layer.padding_mode = trt.PaddingMode.SAME_LOWER
    assert tuple(layer.stride_nd) == (2, 2)
    assert tuple(layer.pre_padding) == (1, 0)
    assert tuple(layer.post_padding) == (0, 1)
    assert layer.num_groups == 2
    assert tuple(layer.dilation_nd) == (1, 2)
    assert layer.padding_mode == trt.PaddingMode.SAME_LOWER


def test_deconvolution_dynamic_shapes(rng, build):
    w = randn(rng, (2, 3, 3, 2))
    b = randn(rng, 3)
    r = build(conv_make(3, w, b, deconv=True, stride_nd=(2, 2), pre_padding=(1, 0)),
              {"x": ((1, 2, 4, 4), np.float32)}, input_shapes={"x": (-1, 2, -1, 4)},
              profile={"x": ((1, 2, 2, 4), (2, 2, 4, 4), (3, 2, 7, 4))})
    for shape in [(1, 2, 2, 4), (3, 2, 7, 4), (2, 2, 5, 4)]:
        x = randn(rng, shape)
        assert_close(r.run({"x": x}), refs.deconvolution(x, w, b, (2, 2), (1, 0), (0, 0)))


DNAMES = ("bad_deconv", "[Deconvolution]")


def _deconv_err(shape, K, ks, w_count, b_count=None, dtype=trt.float32, **attrs):
    def make(net):
        x = net.add_input("x", dtype, shape)
        b = np.ones(b_count, np.float32) if b_count is not None else None
        layer = net.add_deconvolution_nd(x, K, ks, np.ones(w_count, np.float32), b)
        layer.name = "bad_deconv"
        for k, v in attrs.items():
            setattr(layer, k, v)
        net.mark_output(layer.get_output(0))
    return make


def test_deconvolution_errors(expect_layer_error):
    e = expect_layer_error(_deconv_err((1, 3, 4, 4), 2, (3, 3), 3 * 2 * 9 + 1), trt.Error, DNAMES)
    assert isinstance(e, ValueError)
    e = expect_layer_error(_deconv_err((1, 3, 4, 4), 2, (3, 3), 3 * 2 * 9, b_count=5), trt.Error, DNAMES)
    assert isinstance(e, ValueError)
    expect_layer_error(_deconv_err((1, 3, 4, 4), 2, (3, 3), 3 * 1 * 9, num_groups=2), trt.ShapeError, DNAMES)
    expect_layer_error(_deconv_err((1, 3, 4, 4), 2, (3, 3), 3 * 2 * 9, stride_nd=(0, 1)),
                       trt.InvalidArgumentError, DNAMES)
    expect_layer_error(_deconv_err((1, 3, 4, 4), 2, (3, 3), 3 * 2 * 9, dtype=trt.int32), trt.DTypeError, DNAMES)
    # padding that crops more than the whole output: (4 - 1) * 1 + 3 - (3 + 4) = -1
    expect_layer_error(_deconv_err((1, 3, 4, 4), 2, (3, 3), 3 * 2 * 9, pre_padding=(3, 0), post_padding=(4, 0)),
                       trt.ShapeError, DNAMES)
