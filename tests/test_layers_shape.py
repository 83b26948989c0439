"""Shape and data-movement layers (shuffle, slice, padding, concatenation, gather, resize) vs tests/refs.py."""
import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close


def randn(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def const(net, arr):
    return net.add_constant(arr.shape, arr).get_output(0)


def enum_member(class_names, name, aliases=()):
    """A member of the first enum class that exists (TensorRT renamed some across versions)."""
    for cn in class_names:
        cls = getattr(trt, cn, None)
        if cls is None:
            continue
        for n in (name,) + tuple(aliases):
            if hasattr(cls, n):
                return getattr(cls, n)
    raise AttributeError("trt has no %s.%s" % ("/".join(class_names), name))


def slice_mode(name):
    # TensorRT 8.6: trt.SliceMode (DEFAULT, WRAP, CLAMP, FILL, REFLECT); later trt.SampleMode (STRICT_BOUNDS, ...)
    return enum_member(("SliceMode", "SampleMode"), name, ("STRICT_BOUNDS",) if name == "DEFAULT" else ())


def resize_mode(name):
    return enum_member(("ResizeMode", "InterpolationMode"), name)


# ------------------------------------------------------------------------------------------------------------
# shuffle
# ------------------------------------------------------------------------------------------------------------

SHUFFLE_CASES = [
    # id, shape, first_transpose, reshape, second_transpose
    ("transpose", (2, 3, 4, 5), (0, 2, 3, 1), None, None),
    ("transpose_rev", (2, 3, 4, 5), (3, 2, 1, 0), None, None),
    ("reshape", (2, 3, 4, 5), None, (2, 12, 5), None),
    ("reshape_placeholders", (2, 3, 4, 5), None, (0, 0, -1), None),
    ("reshape_infer_first", (2, 3, 4, 5), None, (-1, 0, 20), None),
    ("flatten", (3, 5, 2, 7), None, (0, -1), None),
    ("unsqueeze", (2, 3, 5), None, (0, 1, 3, -1, 1), None),
    ("all_three", (2, 3, 4, 5), (0, 3, 1, 2), (0, 0, -1), (2, 0, 1)),
    ("second_only", (3, 4, 5), None, None, (1, 2, 0)),
    ("transpose_reshape", (2, 7, 3), (2, 0, 1), (3, 14), None),
    ("pixel_shuffle", (1, 8, 3, 5), None, (1, 2, 2, 2, 3, 5), (0, 1, 4, 2, 5, 3)),
]


def shuffle_make(first=None, reshape=None, second=None, zero_is_placeholder=None):
    def make(net, x):
        layer = net.add_shuffle(x)
        if first is not None:
            layer.first_transpose = first
        if reshape is not None:
            layer.reshape_dims = reshape
        if second is not None:
            layer.second_transpose = second
        if zero_is_placeholder is not None:
            layer.zero_is_placeholder = zero_is_placeholder
        return layer
    return make


@pytest.mark.parametrize("case", SHUFFLE_CASES, ids=[c[0] for c in SHUFFLE_CASES])
def test_shuffle(case, rng, build_and_run):
    _, shape, first, reshape, second = case
    x = randn(rng, shape)
    out = build_and_run(shuffle_make(first, reshape, second), {"x": x})
    assert_close(out, refs.shuffle(x, first, reshape, second))


def test_shuffle_int32_and_bool(rng, build_and_run):
    x = rng.integers(-100, 100, (2, 3, 4)).astype(np.int32)
    assert_close(build_and_run(shuffle_make((2, 0, 1), (4, 6)), {"x": x}), refs.shuffle(x, (2, 0, 1), (4, 6)))
    b = rng.random((2, 3, 4)) > 0.5
    assert_close(build_and_run(shuffle_make((1, 2, 0)), {"x": b}), refs.shuffle(b, (1, 2, 0)))


def test_shuffle_zero_is_placeholder_false(rng, build_and_run):
    # with zero_is_placeholder False a 0 means a zero-size dim; here none is used, the flag only has to be honoured
    x = randn(rng, (2, 3, 4))
    out = build_and_run(shuffle_make(None, (4, 6), None, zero_is_placeholder=False), {"x": x})
    assert_close(out, refs.shuffle(x, None, (4, 6)))


@pytest.mark.parametrize("case", [
    ((3, 4, 5), (1, 2, 0), None, None),
    ((3, 4, 5), None, (0, -1), None),
    ((3, 4, 5), (2, 0, 1), (0, 2, -1), (0, 2, 1)),
    ((6, 2, 2), None, (3, 0, -1), None),
])
def test_shuffle_implicit_batch(case, rng, build_and_run):
    """Implicit batch: permutations and reshape dims exclude the batch dim, which is untouched."""
    shape, first, reshape, second = case
    x = randn(rng, (3,) + shape)
    out = build_and_run(shuffle_make(first, reshape, second), {"x": x}, explicit=False, max_batch=4)
    ref = np.stack([refs.shuffle(x[i], first, reshape, second) for i in range(3)])
    assert_close(out, ref)


def test_shuffle_dynamic_shapes(rng, build):
    r = build(shuffle_make((0, 2, 1), (0, -1)), {"x": ((2, 3, 4), np.float32)}, input_shapes={"x": (-1, 3, -1)},
              profile={"x": ((1, 3, 1), (2, 3, 4), (4, 3, 7))})
    for shape in [(1, 3, 1), (4, 3, 7), (3, 3, 5)]:
        x = randn(rng, shape)
        out = r.run({"x": x})
        assert tuple(r.context.get_tensor_shape("out0")) == (shape[0], 3 * shape[2])
        assert_close(out, refs.shuffle(x, (0, 2, 1), (0, -1)))


def test_shuffle_attributes_roundtrip(new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (2, 3, 4))
    layer = n.network.add_shuffle(x)
    assert isinstance(layer, trt.IShuffleLayer)
    assert layer.zero_is_placeholder
    assert tuple(layer.first_transpose)[:3] == (0, 1, 2)
    assert tuple(layer.second_transpose)[:3] == (0, 1, 2)
    layer.first_transpose = trt.Permutation([2, 0, 1])
    layer.reshape_dims = (0, -1)
    layer.second_transpose = (1, 0)
    layer.zero_is_placeholder = False
    assert tuple(layer.first_transpose)[:3] == (2, 0, 1)
    assert tuple(layer.reshape_dims) == (0, -1)
    assert tuple(layer.second_transpose)[:2] == (1, 0)
    assert not layer.zero_is_placeholder
    layer.zero_is_placeholder = True
    # (2, 3, 4) -> transpose (4, 2, 3) -> reshape (4, 6) -> transpose (6, 4)
    assert tuple(layer.get_output(0).shape) == (6, 4)


SNAMES = ("bad_shuffle", "[Shuffle]")


def _shuffle_err(shape, **attrs):
    def make(net):
        x = net.add_input("x", trt.float32, shape)
        layer = net.add_shuffle(x)
        layer.name = "bad_shuffle"
        for k, v in attrs.items():
            setattr(layer, k, v)
        net.mark_output(layer.get_output(0))
    return make


def test_shuffle_error_volume_mismatch(expect_layer_error):
    expect_layer_error(_shuffle_err((2, 3, 4), reshape_dims=(5, 5)), trt.ShapeError, SNAMES)


def test_shuffle_error_two_inferred_dims(expect_layer_error):
    e = expect_layer_error(_shuffle_err((2, 3, 4), reshape_dims=(-1, -1)), trt.Error, SNAMES)
    assert isinstance(e, ValueError)


def test_shuffle_error_bad_permutation(expect_layer_error):
    e = expect_layer_error(_shuffle_err((2, 3, 4), first_transpose=(0, 0, 1)), trt.Error, SNAMES)
    assert isinstance(e, ValueError)


def test_shuffle_error_inferred_dim_not_integral(expect_layer_error):
    expect_layer_error(_shuffle_err((2, 3, 4), reshape_dims=(5, -1)), trt.ShapeError, SNAMES)


# ------------------------------------------------------------------------------------------------------------
# slice
# ------------------------------------------------------------------------------------------------------------

SLICE_CASES = [
    # id, shape, start, size, stride
    ("identity", (2, 3, 4), (0, 0, 0), (2, 3, 4), (1, 1, 1)),
    ("crop", (2, 5, 7), (1, 1, 2), (1, 3, 4), (1, 1, 1)),
    ("strided", (3, 7, 9), (0, 1, 0), (3, 3, 5), (1, 2, 2)),
    ("negative", (2, 6, 5), (1, 5, 4), (2, 3, 5), (-1, -2, -1)),
    ("mixed", (4, 5, 9), (3, 0, 8), (2, 2, 3), (-2, 3, -4)),
    ("4d", (2, 3, 5, 7), (0, 1, 1, 6), (2, 2, 2, 4), (1, 1, 3, -2)),
]


def slice_make(start, size, stride, mode=None, fill=None):
    def make(net, x):
        layer = net.add_slice(x, start=start, shape=size, stride=stride)
        if mode is not None:
            layer.mode = slice_mode(mode)
        if fill is not None:
            layer.set_input(4, const(net, np.array([fill], np.float32).reshape(())))
        return layer
    return make


@pytest.mark.parametrize("case", SLICE_CASES, ids=[c[0] for c in SLICE_CASES])
def test_slice_default(case, rng, build_and_run):
    _, shape, start, size, stride = case
    x = randn(rng, shape)
    out = build_and_run(slice_make(start, size, stride), {"x": x})
    assert_close(out, refs.slice_(x, start, size, stride))


@pytest.mark.parametrize("mode", ["WRAP", "CLAMP", "FILL", "REFLECT"])
@pytest.mark.parametrize("case", [
    ((2, 3, 5, 6), (0, 0, -2, -3), (2, 3, 8, 11), (1, 1, 1, 1)),
    ((2, 3, 5, 6), (1, -1, 7, 4), (2, 5, 4, 9), (-1, 1, -3, 2)),
    ((1, 2, 4), (0, 0, -9), (1, 2, 20), (1, 1, 1)),
])
def test_slice_modes(mode, case, rng, build_and_run):
    shape, start, size, stride = case
    x = randn(rng, shape)
    out = build_and_run(slice_make(start, size, stride, mode), {"x": x})
    assert_close(out, refs.slice_(x, start, size, stride, mode))


def test_slice_fill_value(rng, build_and_run):
    x = randn(rng, (2, 3, 4))
    out = build_and_run(slice_make((0, -1, -2), (2, 5, 8), (1, 1, 1), "FILL", fill=2.5), {"x": x})
    assert_close(out, refs.slice_(x, (0, -1, -2), (2, 5, 8), (1, 1, 1), "FILL", fill=2.5))


def test_slice_int32(rng, build_and_run):
    x = rng.integers(-100, 100, (3, 4, 5)).astype(np.int32)
    out = build_and_run(slice_make((2, 0, 1), (2, 2, 2), (-1, 3, 2)), {"x": x})
    assert_close(out, refs.slice_(x, (2, 0, 1), (2, 2, 2), (-1, 3, 2)))


def test_slice_implicit_batch(rng, build_and_run):
    x = randn(rng, (3, 4, 6, 5))
    start, size, stride = (1, 5, 0), (2, 3, 3), (2, -2, 2)
    out = build_and_run(slice_make(start, size, stride), {"x": x}, explicit=False, max_batch=3)
    assert_close(out, np.stack([refs.slice_(x[i], start, size, stride) for i in range(3)]))


def test_slice_attributes_roundtrip(rng, build_and_run, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (4, 5, 6))
    layer = n.network.add_slice(x, (0, 0, 0), (2, 2, 2), (1, 1, 1))
    assert isinstance(layer, trt.ISliceLayer)
    assert layer.mode == slice_mode("DEFAULT")
    layer.start = (1, 2, 3)
    layer.shape = (3, 2, 1)
    layer.stride = (1, 1, 2)
    assert tuple(layer.start) == (1, 2, 3)
    assert tuple(layer.shape) == (3, 2, 1)
    assert tuple(layer.stride) == (1, 1, 2)
    assert tuple(layer.get_output(0).shape) == (3, 2, 1)
    for m in ("WRAP", "CLAMP", "FILL", "REFLECT", "DEFAULT"):
        layer.mode = slice_mode(m)
        assert layer.mode == slice_mode(m)
    xv = randn(rng, (4, 5, 6))

    def make(net, t):
        lay = net.add_slice(t, (0, 0, 0), (1, 1, 1), (1, 1, 1))
        lay.start = (3, 0, 5)
        lay.shape = (2, 5, 3)
        lay.stride = (-2, 1, -2)
        return lay

    assert_close(build_and_run(make, {"x": xv}), refs.slice_(xv, (3, 0, 5), (2, 5, 3), (-2, 1, -2)))


LNAMES = ("bad_slice", "[Slice]")


def _slice_err(shape, start, size, stride, mode=None):
    def make(net):
        x = net.add_input("x", trt.float32, shape)
        layer = net.add_slice(x, start, size, stride)
        layer.name = "bad_slice"
        if mode:
            layer.mode = slice_mode(mode)
        net.mark_output(layer.get_output(0))
    return make


def test_slice_error_out_of_bounds(expect_layer_error):
    e = expect_layer_error(_slice_err((2, 3, 4), (0, 0, 2), (2, 3, 3), (1, 1, 1)), trt.Error, LNAMES)
    assert isinstance(e, ValueError)
    # negative stride running below 0: indices 2, 0, -2
    e = expect_layer_error(_slice_err((2, 3, 4), (0, 2, 0), (2, 3, 4), (1, -2, 1)), trt.Error, LNAMES)
    assert isinstance(e, ValueError)


def test_slice_error_rank_mismatch(expect_layer_error):
    e = expect_layer_error(_slice_err((2, 3, 4), (0, 0), (1, 1), (1, 1)), trt.Error, LNAMES)
    assert isinstance(e, ValueError)


# ------------------------------------------------------------------------------------------------------------
# padding
# ------------------------------------------------------------------------------------------------------------

PAD_CASES = [((1, 2), (0, 3)), ((0, 0), (2, 1)), ((-1, 0), (2, -2)), ((-2, -1), (-1, -3)), ((3, -2), (-1, 2)),
             ((0, 0), (0, 0))]


def padding_make(pre, post):
    def make(net, x):
        return net.add_padding_nd(x, pre_padding=pre, post_padding=post)
    return make


@pytest.mark.parametrize("pre,post", PAD_CASES)
def test_padding(pre, post, rng, build_and_run):
    x = randn(rng, (2, 3, 5, 7))
    assert_close(build_and_run(padding_make(pre, post), {"x": x}), refs.padding(x, pre, post))


def test_padding_implicit_batch(rng, build_and_run):
    x = randn(rng, (3, 2, 5, 6))
    out = build_and_run(padding_make((1, -1), (-2, 2)), {"x": x}, explicit=False)
    assert_close(out, refs.padding(x, (1, -1), (-2, 2)))


def test_padding_attributes_roundtrip_and_dynamic(rng, build, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (1, 2, 5, 5))
    layer = n.network.add_padding_nd(x, (1, 1), (2, 2))
    assert isinstance(layer, trt.IPaddingLayer)
    assert tuple(layer.pre_padding_nd) == (1, 1) and tuple(layer.post_padding_nd) == (2, 2)
    layer.pre_padding_nd = (0, -1)
    layer.post_padding_nd = (3, 0)
    assert tuple(layer.pre_padding_nd) == (0, -1) and tuple(layer.post_padding_nd) == (3, 0)
    assert tuple(layer.get_output(0).shape) == (1, 2, 8, 4)

    def make(net, t):
        lay = net.add_padding_nd(t, (0, 0), (0, 0))
        lay.pre_padding_nd = (2, -1)
        lay.post_padding_nd = (-1, 1)
        return lay

    r = build(make, {"x": ((2, 3, 4, 4), np.float32)}, input_shapes={"x": (-1, 3, -1, -1)},
              profile={"x": ((1, 3, 2, 2), (2, 3, 4, 4), (3, 3, 9, 9))})
    for shape in [(1, 3, 2, 2), (3, 3, 9, 7)]:
        xv = randn(rng, shape)
        assert_close(r.run({"x": xv}), refs.padding(xv, (2, -1), (-1, 1)))


def test_padding_error_crops_everything(expect_layer_error):
    def make(net):
        x = net.add_input("x", trt.float32, (1, 2, 4, 4))
        layer = net.add_padding_nd(x, (-3, 0), (-2, 0))  # 4 - 3 - 2 < 0
        layer.name = "bad_pad"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.ShapeError, ("bad_pad", "[Padding]"))


# ------------------------------------------------------------------------------------------------------------
# concatenation
# ------------------------------------------------------------------------------------------------------------

def concat_inputs(rng, base, axis, sizes, dtype=np.float32):
    xs = {}
    for i, n in enumerate(sizes):
        s = list(base)
        s[axis] = n
        if dtype == np.int32:
            xs["x%d" % i] = rng.integers(-99, 99, s).astype(np.int32)
        else:
            xs["x%d" % i] = randn(rng, s)
    return xs


def concat_make(axis=None):
    def make(net, *ts):
        layer = net.add_concatenation(list(ts))
        if axis is not None:
            layer.axis = axis
        return layer
    return make


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_concatenation_axes(axis, rng, build_and_run):
    xs = concat_inputs(rng, (2, 3, 4, 5), axis, (1, 3, 2))
    assert_close(build_and_run(concat_make(axis), xs), refs.concatenation(list(xs.values()), axis))


def test_concatenation_default_axis_explicit(rng, build_and_run):
    """Explicit batch NCHW: the default axis is 1 (C)."""
    xs = concat_inputs(rng, (2, 3, 4, 5), 1, (2, 1, 3))

    def make(net, *ts):
        layer = net.add_concatenation(list(ts))
        assert layer.axis == 1
        return layer

    assert_close(build_and_run(make, xs), refs.concatenation(list(xs.values()), 1))


def test_concatenation_default_axis_implicit(rng, build_and_run):
    """Implicit batch CHW: the default axis is 0 (C), i.e. dim 1 of the full tensor."""
    xs = concat_inputs(rng, (3, 2, 4, 5), 1, (2, 1, 3))

    def make(net, *ts):
        layer = net.add_concatenation(list(ts))
        assert layer.axis == 0
        return layer

    assert_close(build_and_run(make, xs, explicit=False, max_batch=4), refs.concatenation(list(xs.values()), 1))


@pytest.mark.parametrize("axis", [1, 2])
def test_concatenation_implicit_axis(axis, rng, build_and_run):
    xs = concat_inputs(rng, (2, 3, 4, 5), axis + 1, (2, 3))
    out = build_and_run(concat_make(axis), xs, explicit=False)
    assert_close(out, refs.concatenation(list(xs.values()), axis + 1))


def test_concatenation_single_and_many_inputs(rng, build_and_run):
    xs = concat_inputs(rng, (2, 3, 4), 2, (3,))
    assert_close(build_and_run(concat_make(2), xs), xs["x0"].astype(np.float64))
    xs = concat_inputs(rng, (2, 3, 4), 2, (1, 2, 3, 1, 2, 1, 4))
    assert_close(build_and_run(concat_make(2), xs), refs.concatenation(list(xs.values()), 2))


def test_concatenation_int32_and_constant(rng, build_and_run):
    xs = concat_inputs(rng, (2, 3, 4), 1, (2, 1), dtype=np.int32)
    c = rng.integers(-9, 9, (2, 2, 4)).astype(np.int32)

    def make(net, a, b):
        layer = net.add_concatenation([a, const(net, c), b])
        layer.axis = 1
        return layer

    assert_close(build_and_run(make, xs), refs.concatenation([xs["x0"], c, xs["x1"]], 1))


def test_concatenation_dynamic_shapes(rng, build):
    r = build(concat_make(1), {"a": ((2, 2, 3), np.float32), "b": ((2, 3, 3), np.float32)},
              input_shapes={"a": (-1, 2, -1), "b": (-1, 3, -1)},
              profile={"a": ((1, 2, 1), (2, 2, 3), (3, 2, 6)), "b": ((1, 3, 1), (2, 3, 3), (3, 3, 6))})
    for n, w in [(1, 1), (3, 6), (2, 4)]:
        a, b = randn(rng, (n, 2, w)), randn(rng, (n, 3, w))
        assert_close(r.run({"a": a, "b": b}), refs.concatenation([a, b], 1))


def test_concatenation_errors(expect_layer_error):
    names = ("bad_concat", "[Concatenation]")

    def make(net):
        a = net.add_input("a", trt.float32, (2, 3, 4))
        b = net.add_input("b", trt.float32, (2, 3, 5))
        layer = net.add_concatenation([a, b])
        layer.name = "bad_concat"
        layer.axis = 1
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.ShapeError, names)

    def make2(net):
        a = net.add_input("a", trt.float32, (2, 3, 4))
        b = net.add_input("b", trt.int32, (2, 3, 4))
        layer = net.add_concatenation([a, b])
        layer.name = "bad_concat"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make2, trt.DTypeError, names)

    def make3(net):
        a = net.add_input("a", trt.float32, (2, 3, 4))
        layer = net.add_concatenation([a, a])
        layer.name = "bad_concat"
        layer.axis = 3
        net.mark_output(layer.get_output(0))
    e = expect_layer_error(make3, trt.Error, names)
    assert isinstance(e, ValueError)

    def make4(net):
        a = net.add_input("a", trt.float32, (2, 3, 4))
        b = net.add_input("b", trt.float32, (2, 3))
        layer = net.add_concatenation([a, b])
        layer.name = "bad_concat"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make4, trt.ShapeError, names)


# ------------------------------------------------------------------------------------------------------------
# gather
# ------------------------------------------------------------------------------------------------------------

def gather_make(axis, mode=None, nb_elementwise=None):
    def make(net, data, idx):
        layer = net.add_gather(data, idx, axis)
        if mode is not None:
            layer.mode = getattr(trt.GatherMode, mode)
        if nb_elementwise is not None:
            layer.num_elementwise_dims = nb_elementwise
        return layer
    return make


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
@pytest.mark.parametrize("ishape", [(4,), (2, 3), (1,)])
def test_gather_default(axis, ishape, rng, build_and_run):
    x = randn(rng, (3, 4, 5, 2))
    idx = rng.integers(0, x.shape[axis], ishape).astype(np.int32)
    assert_close(build_and_run(gather_make(axis), {"x": x, "i": idx}), refs.gather(x, idx, axis))


def test_gather_scalar_index(rng, build_and_run):
    x = randn(rng, (3, 4, 5))
    idx = np.array(2, np.int32)
    assert_close(build_and_run(gather_make(1), {"x": x, "i": idx}), refs.gather(x, idx, 1))


def test_gather_constant_indices_and_int32_data(rng, build_and_run):
    x = rng.integers(-50, 50, (4, 6)).astype(np.int32)
    idx = np.array([[5, 0], [3, 3], [1, 2]], np.int32)

    def make(net, t):
        return net.add_gather(t, const(net, idx), 1)

    assert_close(build_and_run(make, {"x": x}), refs.gather(x, idx, 1))


@pytest.mark.parametrize("axis,ishape", [(1, (3, 2)), (2, (3, 4)), (1, (3, 2, 2)), (3, (3, 1))])
def test_gather_elementwise_dims(axis, ishape, rng, build_and_run):
    x = randn(rng, (3, 4, 5, 2))
    idx = rng.integers(0, x.shape[axis], ishape).astype(np.int32)
    out = build_and_run(gather_make(axis, nb_elementwise=1), {"x": x, "i": idx})
    assert_close(out, refs.gather(x, idx, axis, num_elementwise_dims=1))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_element_mode(axis, rng, build_and_run):
    x = randn(rng, (3, 4, 5))
    ishape = list(x.shape)
    ishape[axis] = 2 + axis
    idx = rng.integers(0, x.shape[axis], ishape).astype(np.int32)
    out = build_and_run(gather_make(axis, mode="ELEMENT"), {"x": x, "i": idx})
    assert_close(out, refs.gather_elements(x, idx, axis))


@pytest.mark.parametrize("nb,ishape", [(0, (2, 3, 2)), (0, (4, 3)), (0, (5, 1)), (1, (3, 2, 1)), (1, (3, 4, 2))])
def test_gather_nd_mode(nb, ishape, rng, build_and_run):
    x = randn(rng, (3, 4, 5))
    q = ishape[-1]
    idx = np.stack([rng.integers(0, x.shape[nb + j], ishape[:-1]) for j in range(q)], -1).astype(np.int32)
    out = build_and_run(gather_make(0, mode="ND", nb_elementwise=nb), {"x": x, "i": idx})
    assert_close(out, refs.gather_nd(x, idx, nb))


def test_gather_attributes_roundtrip_and_dynamic(rng, build, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (3, 4))
    i = n.network.add_input("i", trt.int32, (2,))
    layer = n.network.add_gather(x, i, 1)
    assert isinstance(layer, trt.IGatherLayer)
    assert layer.axis == 1
    assert layer.num_elementwise_dims == 0
    assert layer.mode == trt.GatherMode.DEFAULT
    assert tuple(layer.get_output(0).shape) == (3, 2)
    layer.axis = 0
    assert layer.axis == 0
    assert tuple(layer.get_output(0).shape) == (2, 4)
    for m in ("ELEMENT", "ND", "DEFAULT"):
        layer.mode = getattr(trt.GatherMode, m)
        assert layer.mode == getattr(trt.GatherMode, m)

    r = build(gather_make(1), {"x": ((2, 5, 3), np.float32), "i": ((4,), np.int32)},
              input_shapes={"x": (-1, 5, -1)}, profile={"x": ((1, 5, 1), (2, 5, 3), (4, 5, 6))})
    idx = np.array([4, 0, 2, 2], np.int32)
    for shape in [(1, 5, 1), (4, 5, 6)]:
        xv = randn(rng, shape)
        assert_close(r.run({"x": xv, "i": idx}), refs.gather(xv, idx, 1))


def test_gather_errors(expect_layer_error):
    names = ("bad_gather", "[Gather]")

    def make(net):
        x = net.add_input("x", trt.float32, (3, 4))
        i = net.add_input("i", trt.float32, (2,))
        layer = net.add_gather(x, i, 0)
        layer.name = "bad_gather"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.DTypeError, names)

    def make2(net):
        x = net.add_input("x", trt.float32, (3, 4))
        i = net.add_input("i", trt.int32, (2,))
        layer = net.add_gather(x, i, 0)
        layer.name = "bad_gather"
        layer.axis = 2
        net.mark_output(layer.get_output(0))
    e = expect_layer_error(make2, trt.Error, names)
    assert isinstance(e, ValueError)

    def make3(net):
        x = net.add_input("x", trt.float32, (3, 4))
        i = net.add_input("i", trt.int32, (3,))
        layer = net.add_gather(x, i, 0)
        layer.name = "bad_gather"
        layer.mode = trt.GatherMode.ELEMENT  # needs indices of the data's rank
        net.mark_output(layer.get_output(0))
    expect_layer_error(make3, trt.ShapeError, names)


# ------------------------------------------------------------------------------------------------------------
# resize
# ------------------------------------------------------------------------------------------------------------

COORDS = ("ALIGN_CORNERS", "ASYMMETRIC", "HALF_PIXEL")
ROUNDINGS = ("HALF_UP", "HALF_DOWN", "FLOOR", "CEIL")
# (4, 6) -> these output sizes; checked to have no rounding ties that float32 evaluation order could flip
RESIZE_OUTS = [(8, 12), (2, 3), (7, 9), (3, 4)]


def resize_make(shape=None, scales=None, mode=None, coord=None, rounding=None, selector=None):
    def make(net, x):
        layer = net.add_resize(x)
        if shape is not None:
            layer.shape = shape
        if scales is not None:
            layer.scales = scales
        if mode is not None:
            layer.resize_mode = resize_mode(mode)
        if coord is not None:
            layer.coordinate_transformation = getattr(trt.ResizeCoordinateTransformation, coord)
        if rounding is not None:
            layer.nearest_rounding = getattr(trt.ResizeRoundMode, rounding)
        if selector is not None:
            layer.selector_for_single_pixel = getattr(trt.ResizeSelector, selector)
        return layer
    return make


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("out_hw", RESIZE_OUTS)
def test_resize_nearest(coord, rounding, out_hw, rng, build_and_run):
    x = randn(rng, (2, 3, 4, 6))
    out_shape = (2, 3) + out_hw
    out = build_and_run(resize_make(out_shape, mode="NEAREST", coord=coord, rounding=rounding), {"x": x})
    assert_close(out, refs.resize(x, out_shape, "NEAREST", coord, rounding=rounding))


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("out_hw", RESIZE_OUTS + [(4, 6)])
def test_resize_linear(coord, out_hw, rng, build_and_run):
    x = randn(rng, (2, 3, 4, 6))
    out_shape = (2, 3) + out_hw
    out = build_and_run(resize_make(out_shape, mode="LINEAR", coord=coord), {"x": x})
    assert_close(out, refs.resize(x, out_shape, "LINEAR", coord))


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("coeff,exclude", [(None, None), (-0.5, True), (-0.5, False)])
def test_resize_cubic(coord, coeff, exclude, rng, build_and_run):
    x = randn(rng, (2, 3, 4, 6))
    out_shape = (2, 3, 7, 9)

    def make(net, t):
        layer = resize_make(out_shape, mode="CUBIC", coord=coord)(net, t)
        assert abs(layer.cubic_coeff - (-0.75)) < 1e-7  # TensorRT's default
        assert not layer.exclude_outside
        if coeff is not None:
            layer.cubic_coeff = coeff
            layer.exclude_outside = exclude
            assert layer.cubic_coeff == coeff and bool(layer.exclude_outside) == exclude
        return layer

    out = build_and_run(make, {"x": x})
    assert_close(out, refs.resize(x, out_shape, "CUBIC", coord, cubic_coeff=-0.75 if coeff is None else coeff,
                                  exclude_outside=bool(exclude)))


def test_resize_defaults(rng, build_and_run, new_network):
    """TensorRT defaults: NEAREST, ASYMMETRIC coordinates, FLOOR rounding, FORMULA selector."""
    n = new_network()
    t = n.network.add_input("x", trt.float32, (2, 3, 4, 6))
    layer = n.network.add_resize(t)
    assert isinstance(layer, trt.IResizeLayer)
    assert layer.resize_mode == resize_mode("NEAREST")
    assert layer.coordinate_transformation == trt.ResizeCoordinateTransformation.ASYMMETRIC
    assert layer.nearest_rounding == trt.ResizeRoundMode.FLOOR
    assert layer.selector_for_single_pixel == trt.ResizeSelector.FORMULA
    x = randn(rng, (2, 3, 4, 6))
    out = build_and_run(resize_make((2, 3, 7, 9)), {"x": x})
    assert_close(out, refs.resize(x, (2, 3, 7, 9), "NEAREST", "ASYMMETRIC", rounding="FLOOR"))


def test_resize_all_dims_nearest(rng, build_and_run):
    x = randn(rng, (2, 3, 4, 5))
    out_shape = (3, 6, 2, 5)
    out = build_and_run(resize_make(out_shape, mode="NEAREST", coord="HALF_PIXEL", rounding="HALF_DOWN"), {"x": x})
    assert_close(out, refs.resize(x, out_shape, "NEAREST", "HALF_PIXEL", rounding="HALF_DOWN"))


def test_resize_linear_3d(rng, build_and_run):
    x = randn(rng, (1, 2, 3, 4, 5))
    for coord in COORDS:
        out = build_and_run(resize_make((1, 2, 6, 3, 7), mode="LINEAR", coord=coord), {"x": x})
        assert_close(out, refs.resize(x, (1, 2, 6, 3, 7), "LINEAR", coord))


@pytest.mark.parametrize("mode", ["NEAREST", "LINEAR"])
@pytest.mark.parametrize("scales", [(1.0, 1.0, 2.0, 1.5), (1.0, 1.0, 0.5, 0.5), (1.0, 1.0, 3.0, 1.0)])
def test_resize_scales(mode, scales, rng, build_and_run):
    x = randn(rng, (2, 3, 4, 6))
    out_shape = refs.resize_out_shape(x.shape, scales)
    out = build_and_run(resize_make(scales=scales, mode=mode, coord="HALF_PIXEL", rounding="HALF_UP"), {"x": x})
    assert_close(out, refs.resize(x, out_shape, mode, "HALF_PIXEL", rounding="HALF_UP", scales=scales))


@pytest.mark.parametrize("selector", ["FORMULA", "UPPER"])
@pytest.mark.parametrize("mode", ["NEAREST", "LINEAR"])
def test_resize_single_pixel_selector(selector, mode, rng, build_and_run):
    x = randn(rng, (2, 3, 5, 6))
    out_shape = (2, 3, 1, 1)
    out = build_and_run(resize_make(out_shape, mode=mode, coord="HALF_PIXEL", rounding="HALF_DOWN",
                                    selector=selector), {"x": x})
    assert_close(out, refs.resize(x, out_shape, mode, "HALF_PIXEL", selector, "HALF_DOWN"))


def test_resize_implicit_batch(rng, build_and_run):
    x = randn(rng, (3, 2, 4, 6))
    out = build_and_run(resize_make((2, 8, 9), mode="LINEAR", coord="ALIGN_CORNERS"), {"x": x}, explicit=False)
    assert_close(out, refs.resize(x, (3, 2, 8, 9), "LINEAR", "ALIGN_CORNERS"))
    out = build_and_run(resize_make(scales=(1.0, 2.0, 0.5), mode="NEAREST"), {"x": x}, explicit=False)
    assert_close(out, refs.resize(x, (3, 2, 8, 3), "NEAREST", scales=(1, 1, 2, 0.5)))


def test_resize_attributes_roundtrip_and_dynamic(rng, build, new_network):
    n = new_network()
    t = n.network.add_input("x", trt.float32, (2, 3, 4, 6))
    layer = n.network.add_resize(t)
    layer.shape = (2, 3, 8, 12)
    assert tuple(layer.shape) == (2, 3, 8, 12)
    assert tuple(layer.get_output(0).shape) == (2, 3, 8, 12)
    layer.scales = [1.0, 1.0, 0.5, 2.0]
    assert tuple(layer.scales) == (1.0, 1.0, 0.5, 2.0)
    for m in ("NEAREST", "LINEAR", "CUBIC"):
        layer.resize_mode = resize_mode(m)
        assert layer.resize_mode == resize_mode(m)
    for c in COORDS:
        layer.coordinate_transformation = getattr(trt.ResizeCoordinateTransformation, c)
        assert layer.coordinate_transformation == getattr(trt.ResizeCoordinateTransformation, c)
    for r in ROUNDINGS:
        layer.nearest_rounding = getattr(trt.ResizeRoundMode, r)
        assert layer.nearest_rounding == getattr(trt.ResizeRoundMode, r)
    for s in ("FORMULA", "UPPER"):
        layer.selector_for_single_pixel = getattr(trt.ResizeSelector, s)
        assert layer.selector_for_single_pixel == getattr(trt.ResizeSelector, s)

    r = build(resize_make(scales=(1.0, 1.0, 2.0, 2.0), mode="LINEAR", coord="HALF_PIXEL"),
              {"x": ((1, 2, 3, 3), np.float32)}, input_shapes={"x": (-1, 2, -1, -1)},
              profile={"x": ((1, 2, 1, 1), (1, 2, 3, 3), (3, 2, 6, 7))})
    for shape in [(1, 2, 1, 1), (3, 2, 6, 7), (2, 2, 3, 5)]:
        xv = randn(rng, shape)
        out_shape = refs.resize_out_shape(shape, (1, 1, 2, 2))
        assert_close(r.run({"x": xv}), refs.resize(xv, out_shape, "LINEAR", "HALF_PIXEL", scales=(1, 1, 2, 2)))


def test_resize_errors(expect_layer_error):
    names = ("bad_resize", "[Resize]")

    def make(net):
        x = net.add_input("x", trt.float32, (2, 3, 4, 6))
        layer = net.add_resize(x)
        layer.name = "bad_resize"
        layer.shape = (2, 3, 8)
        net.mark_output(layer.get_output(0))
    e = expect_layer_error(make, trt.Error, names)
    assert isinstance(e, ValueError)

    def make2(net):
        x = net.add_input("x", trt.float32, (2, 3, 4, 6))
        layer = net.add_resize(x)
        layer.name = "bad_resize"
        layer.scales = [1.0, 2.0]
        net.mark_output(layer.get_output(0))
    e = expect_layer_error(make2, trt.Error, names)
    assert isinstance(e, ValueError)
