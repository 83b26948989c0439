"""Pooling layer vs tests/refs.py."""
import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close

POOL_TYPES = ("MAX", "AVERAGE", "MAX_AVERAGE_BLEND")


def randn(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def pool_make(ptype, window, api="nd", **attrs):
    def make(net, x):
        t = getattr(trt.PoolingType, ptype)
        layer = (net.add_pooling_nd if api == "nd" else net.add_pooling)(input=x, type=t, window_size=window)
        for k, v in attrs.items():
            setattr(layer, k, v)
        return layer.get_output(0)
    return make


POOL_CASES = [
    # id, shape, window, stride, pre, post
    ("2x2s2", (2, 3, 8, 6), (2, 2), (2, 2), (0, 0), (0, 0)),
    ("odd", (2, 3, 7, 9), (3, 3), (2, 2), (0, 0), (0, 0)),
    ("pad", (2, 2, 7, 6), (3, 2), (2, 1), (1, 1), (1, 0)),
    ("asym", (1, 3, 9, 7), (3, 3), (1, 2), (2, 0), (0, 1)),
    ("stride1", (2, 2, 5, 6), (2, 3), (1, 1), (0, 1), (1, 1)),
    ("rect", (3, 1, 6, 11), (1, 4), (1, 3), (0, 2), (0, 2)),
    ("global", (2, 3, 5, 4), (5, 4), (1, 1), (0, 0), (0, 0)),
]


@pytest.mark.parametrize("ptype", POOL_TYPES)
@pytest.mark.parametrize("case", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_pooling_2d(ptype, case, rng, build_and_run):
    _, shape, window, stride, pre, post = case
    x = randn(rng, shape)
    attrs = dict(stride_nd=stride, pre_padding=pre, post_padding=post)
    if ptype == "MAX_AVERAGE_BLEND":
        attrs["blend_factor"] = 0.3
    out = build_and_run(pool_make(ptype, window, **attrs), {"x": x})
    assert_close(out, refs.pooling(x, ptype, window, stride, pre, post, blend_factor=0.3))


@pytest.mark.parametrize("ptype", ["AVERAGE", "MAX_AVERAGE_BLEND"])
@pytest.mark.parametrize("excl", [True, False])
def test_pooling_average_count_padding(ptype, excl, rng, build_and_run):
    x = randn(rng, (2, 3, 7, 6))
    window, stride, pre, post = (3, 3), (2, 2), (1, 1), (1, 2)
    out = build_and_run(pool_make(ptype, window, stride_nd=stride, pre_padding=pre, post_padding=post,
                                  average_count_excludes_padding=excl, blend_factor=0.6), {"x": x})
    assert_close(out, refs.pooling(x, ptype, window, stride, pre, post, average_count_excludes_padding=excl,
                                   blend_factor=0.6))


@pytest.mark.parametrize("bf", [0.0, 0.25, 1.0])
def test_pooling_blend_factor(bf, rng, build_and_run):
    x = randn(rng, (2, 2, 6, 7))
    out = build_and_run(pool_make("MAX_AVERAGE_BLEND", (2, 3), stride_nd=(2, 2), blend_factor=bf), {"x": x})
    assert_close(out, refs.pooling(x, "MAX_AVERAGE_BLEND", (2, 3), (2, 2), blend_factor=bf))


# per mode: (shape, window, stride, pad) with symmetric padding; round up differs from round down, SAME needs
# no negative padding, and every Caffe window starts inside the input or its pre padding
MODE_CASES = [
    ((2, 3, 8, 7), (3, 2), (2, 2), (1, 0)),
    ((1, 2, 11, 10), (3, 3), (3, 2), (0, 1)),
]


@pytest.mark.parametrize("mode", refs.PADDING_MODES)
@pytest.mark.parametrize("ptype", POOL_TYPES)
@pytest.mark.parametrize("case", MODE_CASES)
def test_pooling_padding_modes(mode, ptype, case, rng, build_and_run):
    shape, window, stride, pad = case
    x = randn(rng, shape)
    # average over a window hanging past the post padding (EXPLICIT_ROUND_UP) is only defined here when padding
    # is excluded from the count
    excl = True
    out = build_and_run(pool_make(ptype, window, stride_nd=stride, padding_nd=pad, blend_factor=0.5,
                                  padding_mode=getattr(trt.PaddingMode, mode),
                                  average_count_excludes_padding=excl), {"x": x})
    assert_close(out, refs.pooling(x, ptype, window, stride, pad, pad, mode, excl, blend_factor=0.5))


@pytest.mark.parametrize("mode", ["CAFFE_ROUND_UP", "CAFFE_ROUND_DOWN"])
def test_pooling_caffe_average_counts_padding(mode, rng, build_and_run):
    """Caffe average pooling counts the padding inside [-pad, I + pad) and nothing beyond."""
    x = randn(rng, (2, 2, 8, 7))
    out = build_and_run(pool_make("AVERAGE", (3, 3), stride_nd=(2, 2), padding_nd=(1, 1),
                                  padding_mode=getattr(trt.PaddingMode, mode),
                                  average_count_excludes_padding=False), {"x": x})
    assert_close(out, refs.pooling(x, "AVERAGE", (3, 3), (2, 2), (1, 1), (1, 1), mode,
                                   average_count_excludes_padding=False))


def test_pooling_caffe_round_up_drops_window_in_padding(rng, build_and_run):
    # H: I = 5, F = 2, S = 2, pad 1: ceil(5 / 2) + 1 = 4, (4 - 1) * 2 = 6 >= I + B = 6 drops the last window -> 3
    # W: I = 6: ceil(6 / 2) + 1 = 4, 6 < 7 keeps it -> 4
    x = randn(rng, (1, 2, 5, 6))
    out = build_and_run(pool_make("MAX", (2, 2), stride_nd=(2, 2), padding_nd=(1, 1),
                                  padding_mode=trt.PaddingMode.CAFFE_ROUND_UP), {"x": x})
    assert out.shape == (1, 2, 3, 4)
    assert_close(out, refs.pooling(x, "MAX", (2, 2), (2, 2), (1, 1), (1, 1), "CAFFE_ROUND_UP"))


def test_pooling_default_stride_is_one(rng, build_and_run):
    x = randn(rng, (2, 3, 6, 5))

    def make(net, t):
        layer = net.add_pooling_nd(t, trt.PoolingType.MAX, (3, 2))
        assert tuple(layer.stride_nd) == (1, 1)
        return layer

    out = build_and_run(make, {"x": x})
    assert out.shape == (2, 3, 4, 4)
    assert_close(out, refs.pooling(x, "MAX", (3, 2), (1, 1)))


def test_pooling_1d_trtlite_extension(rng, build_and_run):
    """TensorRT pools 2-D/3-D windows only; trtlite's op table allows 1-D as well."""
    x = randn(rng, (2, 3, 11))
    out = build_and_run(pool_make("AVERAGE", (4,), stride_nd=(3,), pre_padding=(2,), post_padding=(1,)), {"x": x})
    assert_close(out, refs.pooling(x, "AVERAGE", (4,), (3,), (2,), (1,)))


def test_pooling_3d(rng, build_and_run):
    x = randn(rng, (1, 2, 5, 6, 7))
    out = build_and_run(pool_make("MAX", (2, 3, 3), stride_nd=(2, 2, 1), padding_nd=(1, 1, 1)), {"x": x})
    assert_close(out, refs.pooling(x, "MAX", (2, 3, 3), (2, 2, 1), (1, 1, 1), (1, 1, 1)))
    out = build_and_run(pool_make("AVERAGE", (2, 2, 2), stride_nd=(2, 2, 2),
                                  padding_mode=trt.PaddingMode.SAME_UPPER), {"x": x})
    assert_close(out, refs.pooling(x, "AVERAGE", (2, 2, 2), (2, 2, 2), padding_mode="SAME_UPPER"))


def test_pooling_trt7_api(rng, build_and_run):
    x = randn(rng, (2, 3, 9, 8))
    out = build_and_run(pool_make("MAX", trt.DimsHW(3, 3), api="trt7", stride=trt.DimsHW(2, 2), padding=(1, 1)),
                        {"x": x})
    assert_close(out, refs.pooling(x, "MAX", (3, 3), (2, 2), (1, 1), (1, 1)))


@pytest.mark.parametrize("ptype", POOL_TYPES)
def test_pooling_implicit_batch(ptype, rng, build_and_run):
    x = randn(rng, (3, 2, 7, 6))

    def make(net, t):
        layer = net.add_pooling(input=t, type=getattr(trt.PoolingType, ptype), window_size=(3, 2))
        layer.stride = (2, 2)
        layer.padding = (1, 0)
        layer.blend_factor = 0.5
        assert tuple(layer.get_output(0).shape) == (2, 4, 3)
        return layer

    out = build_and_run(make, {"x": x}, explicit=False, max_batch=4)
    assert_close(out, refs.pooling(x, ptype, (3, 2), (2, 2), (1, 0), (1, 0), blend_factor=0.5))
    # a smaller batch than the maximum
    out = build_and_run(make, {"x": x[:1]}, explicit=False, max_batch=4)
    assert_close(out, refs.pooling(x[:1], ptype, (3, 2), (2, 2), (1, 0), (1, 0), blend_factor=0.5))


def test_pooling_attributes_roundtrip(new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (1, 2, 9, 9))
    layer = n.network.add_pooling_nd(input=x, type=trt.PoolingType.AVERAGE, window_size=(3, 3))
    assert isinstance(layer, trt.IPoolingLayer)
    # IPoolingLayer.type is the pooling type (it shadows ILayer.type, as in TensorRT's Python API)
    assert layer.type == trt.PoolingType.AVERAGE
    assert tuple(layer.window_size_nd) == (3, 3)
    assert layer.average_count_excludes_padding is True or layer.average_count_excludes_padding == 1
    assert layer.blend_factor == 0.0
    assert layer.padding_mode == trt.PaddingMode.EXPLICIT_ROUND_DOWN
    assert tuple(layer.pre_padding) == (0, 0) and tuple(layer.post_padding) == (0, 0)
    layer.window_size_nd = (2, 3)
    layer.stride_nd = (2, 1)
    layer.pre_padding = (1, 0)
    layer.post_padding = (0, 1)
    layer.blend_factor = 0.75
    layer.average_count_excludes_padding = False
    layer.padding_mode = trt.PaddingMode.CAFFE_ROUND_UP
    assert tuple(layer.window_size_nd) == (2, 3)
    assert tuple(layer.stride_nd) == (2, 1)
    assert tuple(layer.pre_padding) == (1, 0)
    assert tuple(layer.post_padding) == (0, 1)
    assert abs(layer.blend_factor - 0.75) < 1e-7
    assert not layer.average_count_excludes_padding
    assert layer.padding_mode == trt.PaddingMode.CAFFE_ROUND_UP
    layer.padding_nd = (2, 2)
    assert tuple(layer.padding_nd) == (2, 2)


def test_pooling_pooling_type_change_after_creation(rng, build_and_run):
    x = randn(rng, (2, 2, 6, 6))

    def make(net, t):
        layer = net.add_pooling_nd(t, trt.PoolingType.MAX, (2, 2))
        layer.type = trt.PoolingType.AVERAGE  # IPoolingLayer.type is the pooling type in TensorRT's Python API
        layer.window_size_nd = (3, 3)
        layer.stride_nd = (3, 3)
        return layer

    out = build_and_run(make, {"x": x})
    assert_close(out, refs.pooling(x, "AVERAGE", (3, 3), (3, 3)))


def test_pooling_dynamic_shapes(rng, build):
    r = build(pool_make("MAX", (3, 3), stride_nd=(2, 2), padding_nd=(1, 1)),
              {"x": ((1, 3, 8, 8), np.float32)}, input_shapes={"x": (-1, 3, -1, -1)},
              profile={"x": ((1, 3, 3, 3), (2, 3, 8, 8), (4, 3, 17, 17))})
    for shape in [(1, 3, 3, 3), (4, 3, 17, 9), (2, 3, 8, 8)]:
        x = randn(rng, shape)
        assert_close(r.run({"x": x}), refs.pooling(x, "MAX", (3, 3), (2, 2), (1, 1), (1, 1)))


PNAMES = ("bad_pool", "[Pooling]")


def _pool_err(shape, window, dtype=trt.float32, ptype=trt.PoolingType.MAX, **attrs):
    def make(net):
        x = net.add_input("x", dtype, shape)
        layer = net.add_pooling_nd(x, ptype, window)
        layer.name = "bad_pool"
        for k, v in attrs.items():
            setattr(layer, k, v)
        net.mark_output(layer.get_output(0))
    return make


def test_pooling_error_window_larger_than_input(expect_layer_error):
    expect_layer_error(_pool_err((1, 2, 4, 4), (5, 2)), trt.ShapeError, PNAMES)


def test_pooling_error_input_rank(expect_layer_error):
    expect_layer_error(_pool_err((4, 4), (2, 2)), trt.ShapeError, PNAMES)


@pytest.mark.parametrize("attr,value", [("stride_nd", (0, 1)), ("blend_factor", 1.5), ("blend_factor", -0.1),
                                        ("window_size_nd", (0, 2))])
def test_pooling_error_bad_attribute(attr, value, expect_layer_error):
    expect_layer_error(_pool_err((1, 2, 6, 6), (2, 2), ptype=trt.PoolingType.MAX_AVERAGE_BLEND, **{attr: value}),
                       trt.InvalidArgumentError, PNAMES)


def test_pooling_error_int32_input(expect_layer_error):
    expect_layer_error(_pool_err((1, 2, 6, 6), (2, 2), dtype=trt.int32), trt.DTypeError, PNAMES)
