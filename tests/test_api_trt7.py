"""TensorRT 7 implicit-batch scripts through ``import trtlite as trt``, against numpy float64 references.

``builder.create_network()`` without flags gives an implicit-batch network: inputs are declared without N, the
builder's ``max_batch_size`` / ``max_workspace_size`` drive ``build_cuda_engine(network)``, and
``context.execute(batch_size, bindings)`` runs any batch up to the maximum on buffers allocated for the maximum.
Layer defaults (softmax / concatenation axis, scale channel axis) and axis bitmasks count the non-batch dims only.
"""
import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

C, H, W = 3, 8, 8
K = 4
CLASSES = 10
MAX_BATCH = 8


# ------------------------------------------------------------------------------------------------------------
# float64 references (batch first)
# ------------------------------------------------------------------------------------------------------------

def ref_conv2d(x, w, b=None, pad=(0, 0)):
    x = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    w = np.asarray(w, np.float64)
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    oh, ow = h - r + 1, wd - s + 1
    out = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(s):
            out += np.einsum("nchw,kc->nkhw", x[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    if b is not None:
        out += np.asarray(b, np.float64).reshape(1, -1, 1, 1)
    return out


def ref_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


class Params:
    def __init__(self, seed=2):
        rng = np.random.default_rng(seed)
        self.conv_w = (rng.standard_normal((K, C, 3, 3)) * 0.5).astype(np.float32)
        self.conv_b = rng.standard_normal(K).astype(np.float32)
        self.scale = rng.uniform(0.5, 2.0, K).astype(np.float32)
        self.shift = rng.standard_normal(K).astype(np.float32)
        self.fc_w = (rng.standard_normal((CLASSES, K * (H // 2) * (W // 2))) * 0.3).astype(np.float32)
        self.fc_b = rng.standard_normal(CLASSES).astype(np.float32)

    def reference(self, x):
        """x: (batch, C, H, W) -> (batch, CLASSES, 1, 1)"""
        y = ref_conv2d(x, self.conv_w, self.conv_b, pad=(1, 1))
        y = y * self.scale.reshape(1, -1, 1, 1).astype(np.float64) + self.shift.reshape(1, -1, 1, 1)
        y = np.maximum(y, 0.0)
        n = y.shape[0]
        y = y.reshape(n, K, H // 2, 2, W // 2, 2).max(axis=(3, 5))
        y = y.reshape(n, -1) @ self.fc_w.T.astype(np.float64) + self.fc_b
        return ref_softmax(y, axis=1).reshape(n, CLASSES, 1, 1)


P = Params()


def define(network, params=P):
    data = network.add_input("data", trt.float32, (C, H, W))
    conv = network.add_convolution(input=data, num_output_maps=K, kernel_shape=(3, 3), kernel=params.conv_w,
                                   bias=params.conv_b)
    conv.stride = (1, 1)
    conv.padding = (1, 1)
    scale = network.add_scale(conv.get_output(0), trt.ScaleMode.CHANNEL, shift=params.shift, scale=params.scale)
    relu = network.add_activation(scale.get_output(0), trt.ActivationType.RELU)
    pool = network.add_pooling(relu.get_output(0), trt.PoolingType.MAX, (2, 2))
    pool.stride = (2, 2)
    fc = network.add_fully_connected(pool.get_output(0), CLASSES, params.fc_w, params.fc_b)
    sm = network.add_softmax(fc.get_output(0))
    sm.get_output(0).name = "prob"
    network.mark_output(sm.get_output(0))
    return dict(data=data, conv=conv, scale=scale, relu=relu, pool=pool, fc=fc, sm=sm)


def build_engine(make, max_batch=MAX_BATCH, logger=None):
    builder = trt.Builder(logger or trt.Logger(trt.Logger.WARNING))
    network = builder.create_network()
    assert network.has_implicit_batch_dimension
    make(network)
    builder.max_batch_size = max_batch
    builder.max_workspace_size = 1 << 20
    engine = builder.build_cuda_engine(network)
    assert engine is not None
    return engine


@pytest.fixture(scope="module")
def engine():
    return build_engine(define)


def batch(n, seed=0):
    return np.random.default_rng(seed).standard_normal((n, C, H, W)).astype(np.float32)


# ------------------------------------------------------------------------------------------------------------

def test_create_network_without_flags_is_implicit_batch():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    assert builder.create_network().has_implicit_batch_dimension is True
    assert builder.max_batch_size == 1
    builder.max_batch_size = 32
    assert builder.max_batch_size == 32
    builder.max_workspace_size = 1 << 25
    assert builder.max_workspace_size == 1 << 25
    with pytest.raises(ValueError):
        builder.max_batch_size = 0


def test_layer_shapes_exclude_the_batch():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network()
    L = define(network)
    assert L["data"].shape == (C, H, W)
    assert L["conv"].get_output(0).shape == (K, H, W)
    assert L["conv"].stride == (1, 1) and L["conv"].padding == (1, 1)
    assert L["conv"].stride_nd == (1, 1)
    assert L["pool"].get_output(0).shape == (K, H // 2, W // 2)
    assert L["pool"].stride == (2, 2)
    assert L["fc"].get_output(0).shape == (CLASSES, 1, 1)
    assert L["sm"].axes == 1                       # bit 0 = C of CHW
    assert L["sm"].get_output(0).shape == (CLASSES, 1, 1)
    # a convolution of its own: changing the stride of the one above would invalidate the FC after it
    conv2 = network.add_convolution(L["data"], 2, (3, 3), np.ones((2, C, 3, 3), np.float32))
    conv2.stride = trt.DimsHW(2, 2)
    conv2.padding = (1, 1)
    assert conv2.stride == (2, 2) and conv2.padding_nd == (1, 1)
    assert conv2.get_output(0).shape == (2, H // 2, W // 2)


def test_engine_queries(engine):
    assert engine.has_implicit_batch_dimension is True
    assert engine.max_batch_size == MAX_BATCH
    assert engine.num_bindings == 2
    assert engine.get_binding_name(0) == "data" and engine.binding_is_input(0)
    assert engine.get_binding_shape(0) == (C, H, W)          # without the batch
    assert engine.get_binding_shape(1) == (CLASSES, 1, 1)
    assert engine.get_binding_dtype(1) == trt.float32
    assert engine.get_binding_index("prob") == 1


@pytest.mark.parametrize("bs", [1, 5, MAX_BATCH])
def test_execute_batches_on_max_batch_buffers(engine, bs):
    context = engine.create_execution_context()
    x = batch(MAX_BATCH, seed=bs)
    y = np.full((MAX_BATCH, CLASSES, 1, 1), -7.0, np.float32)
    assert context.execute(batch_size=bs, bindings=[x, y])
    assert_close(y[:bs], P.reference(x[:bs]))
    np.testing.assert_array_equal(y[bs:], -7.0)              # beyond the batch: untouched
    # the same with int addresses and execute_async
    y2 = np.full_like(y, -7.0)
    assert context.execute_async(bs, [x.ctypes.data, y2.ctypes.data], 0)
    np.testing.assert_array_equal(y2[:bs], y[:bs])
    np.testing.assert_array_equal(y2[bs:], -7.0)


def test_one_context_alternating_batch_sizes(engine):
    context = engine.create_execution_context()
    x = batch(MAX_BATCH, seed=11)
    ref = P.reference(x)
    y = np.empty((MAX_BATCH, CLASSES, 1, 1), np.float32)
    for bs in (MAX_BATCH, 1, 5, 2, MAX_BATCH, 3):
        y[...] = np.nan
        context.execute(bs, [x, y])
        assert_close(y[:bs], ref[:bs])
        assert np.isnan(y[bs:]).all()
        assert context.get_tensor_shape("prob") == (CLASSES, 1, 1)


def test_exact_size_buffers_for_small_batch(engine):
    context = engine.create_execution_context()
    x = batch(3, seed=12)
    y = np.empty((3, CLASSES, 1, 1), np.float32)
    context.execute(3, [x, y])
    assert_close(y, P.reference(x))
    with pytest.raises(trt.ShapeError, match="data"):
        context.execute(4, [x, np.empty((4, CLASSES, 1, 1), np.float32)])


def test_infer_with_implicit_batch(engine):
    context = engine.create_execution_context()
    for bs in (1, 6):
        x = batch(bs, seed=20 + bs)
        out = context.infer({"data": x})["prob"]
        assert out.shape == (bs, CLASSES, 1, 1)
        assert_close(out, P.reference(x))


def test_serialized_implicit_engine_round_trip(engine):
    again = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(engine.serialize())
    assert again.has_implicit_batch_dimension and again.max_batch_size == MAX_BATCH
    x = batch(5, seed=30)
    a = engine.create_execution_context().infer({"data": x})["prob"]
    b = again.create_execution_context().infer({"data": x})["prob"]
    np.testing.assert_array_equal(a, b)


def test_builder_modes_still_build_correct_engines():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network()
    define(network)
    builder.max_batch_size = 2
    builder.fp16_mode = True
    builder.strict_type_constraints = True
    assert builder.fp16_mode is True
    engine = builder.build_cuda_engine(network)
    assert engine.max_batch_size == 2
    x = batch(2, seed=31)
    assert_close(engine.create_execution_context().infer({"data": x})["prob"], P.reference(x), rtol=2e-3,
                 atol=1e-3)


def test_inspector_shows_scale_and_activation_folded_into_convolution(engine):
    text = engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE)
    first = text.splitlines()[0]
    assert "[Convolution]" in first and "[Scale]" in first and "[Activation]" in first


# ------------------------------------------------------------------------------------------------------------
# layer defaults and axes in implicit-batch mode
# ------------------------------------------------------------------------------------------------------------

def run_implicit(make, feeds, max_batch=None):
    names = []

    def wrapped(network):
        tensors = [network.add_input(n, trt.float32, a.shape[1:]) for n, a in feeds.items()]
        outs = make(network, *tensors)
        for i, t in enumerate(outs):
            t.name = "out%d" % i
            network.mark_output(t)
            names.append(t.name)

    bs = next(iter(feeds.values())).shape[0]
    engine = build_engine(wrapped, max_batch=max_batch or bs)
    out = engine.create_execution_context().infer(feeds)
    return [out[n] for n in names]


def test_softmax_default_axis_is_channel(rng):
    x = rng.standard_normal((3, 4, 2, 5)).astype(np.float32)
    (y,) = run_implicit(lambda net, t: [net.add_softmax(t).get_output(0)], {"x": x})
    assert_close(y, ref_softmax(x.astype(np.float64), axis=1))
    # rank-1 input (C only): still the channel axis
    v = rng.standard_normal((2, 7)).astype(np.float32)
    (y,) = run_implicit(lambda net, t: [net.add_softmax(t).get_output(0)], {"v": v})
    assert_close(y, ref_softmax(v.astype(np.float64), axis=1))


def test_softmax_axes_bitmask_counts_non_batch_dims(rng):
    x = rng.standard_normal((2, 4, 3, 5)).astype(np.float32)

    def make(net, t):
        sm = net.add_softmax(t)
        sm.axes = 1 << 2                      # W of CHW
        return [sm.get_output(0)]

    (y,) = run_implicit(make, {"x": x})
    assert_close(y, ref_softmax(x.astype(np.float64), axis=3))


def test_scale_modes_on_network_input(rng):
    x = rng.uniform(0.5, 2.0, (3, 4, 2, 3)).astype(np.float32)
    sc = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    sh = rng.uniform(0.0, 0.5, 4).astype(np.float32)
    pw = np.full(4, 2.0, np.float32)
    u = np.array([3.0], np.float32)
    e = rng.uniform(0.5, 1.5, (4, 2, 3)).astype(np.float32)

    def make(net, t):
        ch = net.add_scale(t, trt.ScaleMode.CHANNEL, shift=sh, scale=sc, power=pw)
        un = net.add_scale(t, trt.ScaleMode.UNIFORM, scale=u)
        el = net.add_scale(t, trt.ScaleMode.ELEMENTWISE, shift=e.ravel())
        assert ch.channel_axis == 0            # C of CHW
        return [ch.get_output(0), un.get_output(0), el.get_output(0)]

    ych, yun, yel = run_implicit(make, {"x": x})
    x64 = x.astype(np.float64)
    assert_close(ych, (x64 * sc.reshape(1, -1, 1, 1) + sh.reshape(1, -1, 1, 1)) ** 2)
    assert_close(yun, x64 * 3.0)
    assert_close(yel, x64 + e[None])


def test_fully_connected_flattens_chw(rng):
    x = rng.standard_normal((4, 3, 2, 5)).astype(np.float32)
    w = rng.standard_normal((6, 30)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)

    def make(net, t):
        fc = net.add_fully_connected(input=t, num_outputs=6, kernel=w, bias=b)
        assert fc.get_output(0).shape == (6, 1, 1)
        nobias = net.add_fully_connected(t, 6, trt.Weights(w))
        return [fc.get_output(0), nobias.get_output(0)]

    y, y0 = run_implicit(make, {"x": x})
    ref = x.reshape(4, -1).astype(np.float64) @ w.T.astype(np.float64)
    assert_close(y, (ref + b).reshape(4, 6, 1, 1))
    assert_close(y0, ref.reshape(4, 6, 1, 1))


def test_constants_broadcast_over_batch(rng):
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    full = rng.standard_normal((2, 3)).astype(np.float32)
    row = rng.standard_normal((1, 3)).astype(np.float32)

    def make(net, t):
        cf = net.add_constant((2, 3), full)
        assert cf.get_output(0).shape == (2, 3)
        cr = net.add_constant((1, 3), row)
        a = net.add_elementwise(t, cf.get_output(0), trt.ElementWiseOperation.SUM)
        m = net.add_elementwise(t, cr.get_output(0), trt.ElementWiseOperation.PROD)
        both = net.add_elementwise(cf.get_output(0), cr.get_output(0), trt.ElementWiseOperation.SUB)
        return [a.get_output(0), m.get_output(0), both.get_output(0)]

    for max_batch, bs in ((5, 5), (8, 1)):
        feeds = {"x": x[:bs]}
        a, m, both = run_implicit(make, feeds, max_batch=max_batch)
        assert_close(a, x[:bs].astype(np.float64) + full)
        assert_close(m, x[:bs].astype(np.float64) * row)
        assert both.shape == (bs, 2, 3)


def test_constant_only_outputs_are_repeated_per_sample(rng):
    x = rng.standard_normal((3, 2, 3)).astype(np.float32)
    full = rng.standard_normal((2, 3)).astype(np.float32)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network()
    t = network.add_input("x", trt.float32, (2, 3))
    const = network.add_constant((2, 3), full)
    neg = network.add_unary(const.get_output(0), trt.UnaryOperation.NEG)
    relu = network.add_activation(t, trt.ActivationType.RELU)
    for name, layer in (("neg", neg), ("relu", relu)):
        layer.get_output(0).name = name
        network.mark_output(layer.get_output(0))
    builder.max_batch_size = 4
    engine = builder.build_cuda_engine(network)
    outs = {n: np.full((3, 2, 3), np.nan, np.float32) for n in ("neg", "relu")}
    bindings = [x] + [outs[engine.get_binding_name(i)] for i in range(1, engine.num_bindings)]
    engine.create_execution_context().execute(3, bindings)
    assert_close(outs["relu"], np.maximum(x, 0).astype(np.float64))
    assert_close(outs["neg"], np.broadcast_to(-full.astype(np.float64), (3, 2, 3)))


def test_concatenation_default_and_explicit_axis(rng):
    a = rng.standard_normal((3, 2, 4, 5)).astype(np.float32)
    b = rng.standard_normal((3, 3, 4, 5)).astype(np.float32)
    c = rng.standard_normal((3, 2, 4, 1)).astype(np.float32)

    def make(net, ta, tb, tc):
        cat = net.add_concatenation([ta, tb])
        assert cat.axis == 0                    # C of CHW
        cat_w = net.add_concatenation([ta, tc])
        cat_w.axis = 2
        return [cat.get_output(0), cat_w.get_output(0)]

    y, yw = run_implicit(make, {"a": a, "b": b, "c": c})
    np.testing.assert_array_equal(y, np.concatenate([a, b], axis=1))
    np.testing.assert_array_equal(yw, np.concatenate([a, c], axis=3))


def test_reduce_axes_count_non_batch_dims(rng):
    x = rng.standard_normal((4, 3, 5, 2)).astype(np.float32)

    def make(net, t):
        r1 = net.add_reduce(t, trt.ReduceOperation.SUM, 1 << 1, False)   # H
        r2 = net.add_reduce(t, trt.ReduceOperation.MAX, (1 << 0) | (1 << 2), True)   # C and W
        assert r1.get_output(0).shape == (3, 2)
        assert r2.get_output(0).shape == (1, 5, 1)
        return [r1.get_output(0), r2.get_output(0)]

    y1, y2 = run_implicit(make, {"x": x})
    x64 = x.astype(np.float64)
    assert_close(y1, x64.sum(axis=2))
    assert_close(y2, x64.max(axis=(1, 3), keepdims=True))


def test_shuffle_in_implicit_mode(rng):
    x = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)

    def make(net, t):
        tr = net.add_shuffle(t)
        tr.first_transpose = (2, 0, 1)        # CHW -> WCH; the batch stays first
        rs = net.add_shuffle(t)
        rs.reshape_dims = (0, -1)              # 0 copies C; -1 infers H*W
        both = net.add_shuffle(t)
        both.first_transpose = (1, 2, 0)
        both.reshape_dims = (12, 2)
        both.second_transpose = (1, 0)
        assert tr.get_output(0).shape == (4, 2, 3)
        assert rs.get_output(0).shape == (2, 12)
        assert both.get_output(0).shape == (2, 12)
        return [tr.get_output(0), rs.get_output(0), both.get_output(0)]

    tr, rs, both = run_implicit(make, {"x": x})
    np.testing.assert_array_equal(tr, x.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(rs, x.reshape(3, 2, 12))
    np.testing.assert_array_equal(both, x.transpose(0, 2, 3, 1).reshape(3, 12, 2).transpose(0, 2, 1))


def test_matrix_multiply_batched_over_implicit_batch(rng):
    a = rng.standard_normal((3, 2, 4)).astype(np.float32)
    b = rng.standard_normal((3, 5, 4)).astype(np.float32)

    def make(net, ta, tb):
        mm = net.add_matrix_multiply(ta, trt.MatrixOperation.NONE, tb, trt.MatrixOperation.TRANSPOSE)
        return [mm.get_output(0)]

    (y,) = run_implicit(make, {"a": a, "b": b})
    assert_close(y, a.astype(np.float64) @ b.astype(np.float64).transpose(0, 2, 1))


def test_dynamic_dims_need_explicit_batch():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network()
    with pytest.raises(trt.Error, match="'img'"):
        network.add_input("img", trt.float32, (3, -1, -1))
