"""Run-time shape operands (issue #12): layers whose axes / K / sizes come from shape tensors fed at run time --
reduce axes (trtlite's extension), TopK's K (TensorRT 10's set_input(1, k)) -- checked against numpy, through a
plan round trip, with the errors for bad values naming the layer."""
import numpy as np
import pytest

import trtlite as trt

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
LOGGER = trt.Logger(trt.Logger.ERROR)


def build(b, net, shapes=None, values=None):
    """shapes: {input: (min, opt, max)}; values: {shape input: (min, opt, max)}."""
    cfg = b.create_builder_config()
    if not shapes and not values:
        return trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, cfg))
    p = b.create_optimization_profile()
    for name, (mn, op, mx) in (shapes or {}).items():
        p.set_shape(name, mn, op, mx)
    for name, (mn, op, mx) in (values or {}).items():
        p.set_shape_input(name, mn, op, mx)
    cfg.add_optimization_profile(p)
    plan = b.build_serialized_network(net, cfg)
    return trt.Runtime(LOGGER).deserialize_cuda_engine(plan)


def run(ctx, feeds, outputs):
    for name, a in feeds.items():
        if not ctx.engine.is_shape_inference_io(name):
            ctx.set_input_shape(name, a.shape)
        ctx.set_tensor_address(name, a)
    res = {}
    for name in outputs:
        shape = tuple(ctx.get_tensor_shape(name))
        res[name] = np.zeros(shape, dtype=trt.nptype(ctx.engine.get_tensor_dtype(name)))
        ctx.set_tensor_address(name, res[name])
    assert ctx.execute_async_v3(0)
    return res


# ---- reduce with run-time axes ------------------------------------------------------------------------------------

_NP = {trt.ReduceOperation.SUM: np.sum, trt.ReduceOperation.MAX: np.max, trt.ReduceOperation.MIN: np.min,
       trt.ReduceOperation.AVG: np.mean, trt.ReduceOperation.PROD: np.prod}


def reduce_net(op, keep, k, xshape=(2, 3, 4)):
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, xshape)
    axes = net.add_input("axes", trt.int32, (k,))
    layer = net.add_reduce(x, op, 1, keep)
    layer.name = "red"
    layer.set_input(1, axes)
    y = layer.get_output(0)
    y.name = "y"
    net.mark_output(y)
    return b, net, layer


@pytest.mark.parametrize("op", list(_NP))
@pytest.mark.parametrize("keep", [True, False])
def test_reduce_runtime_axes_matches_numpy(op, keep):
    b, net, layer = reduce_net(op, keep, 2)
    assert net.get_input(1).is_shape_tensor and not net.get_input(1).is_execution_tensor
    y = layer.get_output(0)
    assert len(y.shape) == (3 if keep else 1) and all(d == -1 for d in y.shape)
    eng = build(b, net, values={"axes": ((-3, -3), (0, 1), (2, 2))})
    ctx = eng.create_execution_context()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for ax in [(0, 2), (2, 1), (-1, 0), (1, -3)]:
        a = np.array(ax, np.int32)
        out = run(ctx, {"x": x, "axes": a}, ["y"])["y"]
        ref = _NP[op](x.astype(np.float64), axis=tuple(int(v) % 3 for v in ax), keepdims=keep)
        assert out.shape == ref.shape
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_reduce_runtime_axes_empty_reduces_all():
    b, net, _ = reduce_net(trt.ReduceOperation.SUM, False, 0)
    eng = build(b, net, values={"axes": ((), (), ())})
    ctx = eng.create_execution_context()
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = run(ctx, {"x": x, "axes": np.zeros(0, np.int32)}, ["y"])["y"]
    assert out.shape == () and out == x.sum()


def test_reduce_runtime_axes_int32_and_computed_axes():
    """Axes computed from a shape tensor network input by elementwise layers (a shape-tensor expression)."""
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    x = net.add_input("x", trt.int32, (3, 4, 5))
    a = net.add_input("a", trt.int32, (1,))
    one = net.add_constant((1,), np.array([1], np.int32)).get_output(0)
    a1 = net.add_elementwise(a, one, trt.ElementWiseOperation.SUM).get_output(0)
    layer = net.add_reduce(x, trt.ReduceOperation.MAX, 1, True)
    layer.set_input(1, a1)
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    eng = build(b, net, values={"a": ((-1,), (0,), (1,))})
    ctx = eng.create_execution_context()
    x = np.random.default_rng(1).integers(-100, 100, (3, 4, 5)).astype(np.int32)
    for v in (0, 1, -1):
        out = run(ctx, {"x": x, "a": np.array([v], np.int32)}, ["y"])["y"]
        np.testing.assert_array_equal(out, x.max(axis=v + 1, keepdims=True))


@pytest.mark.parametrize("ax,msg", [((0, 3), "axis 3 .*out of range"), ((1, -2), "axis 1 is repeated")])
def test_reduce_runtime_axes_bad_values_name_the_layer(ax, msg):
    b, net, _ = reduce_net(trt.ReduceOperation.SUM, True, 2)
    eng = build(b, net, values={"axes": ((-3, -3), (0, 1), (3, 3))})
    ctx = eng.create_execution_context()
    ctx.set_tensor_address("axes", np.array(ax, np.int32))
    with pytest.raises(trt.ShapeError, match="layer 'red'.*reduce axes.*" + msg):
        ctx.get_tensor_shape("y")


def test_reduce_runtime_axes_bad_tensor():
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (2, 3))
    axes = net.add_input("axes", trt.int32, (3,))
    layer = net.add_reduce(x, trt.ReduceOperation.SUM, 1, True)
    layer.name = "red"
    layer.set_input(1, axes)
    with pytest.raises(trt.ShapeError, match="layer 'red'.*at most 2 values"):
        layer.get_output(0).shape


# ---- TopK with K from a tensor ------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [trt.TopKOperation.MAX, trt.TopKOperation.MIN])
def test_topk_runtime_k_matches_numpy(op):
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (3, 7))
    k = net.add_input("k", trt.int32, (1,))
    layer = net.add_topk(x, op, 1, 1 << 1)
    layer.set_input(1, k)
    assert tuple(layer.get_output(0).shape) == (3, -1)
    layer.get_output(0).name = "v"
    layer.get_output(1).name = "i"
    net.mark_output(layer.get_output(0))
    net.mark_output(layer.get_output(1))
    eng = build(b, net, values={"k": ((0,), (3,), (7,))})
    ctx = eng.create_execution_context()
    x = np.random.default_rng(2).permutation(21).reshape(3, 7).astype(np.float32)
    for kv in (1, 4, 7, 0):
        out = run(ctx, {"x": x, "k": np.array([kv], np.int32)}, ["v", "i"])
        order = np.argsort(-x if op == trt.TopKOperation.MAX else x, axis=1, kind="stable")[:, :kv]
        np.testing.assert_array_equal(out["i"], order)
        np.testing.assert_array_equal(out["v"], np.take_along_axis(x, order, 1))


def test_topk_runtime_k_too_large_names_layer():
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (3, 7))
    k = net.add_input("k", trt.int32, ())
    layer = net.add_topk(x, trt.TopKOperation.MAX, 1, 1 << 1)
    layer.name = "tk"
    layer.set_input(1, k)
    net.mark_output(layer.get_output(0))
    layer.get_output(0).name = "v"
    eng = build(b, net, values={"k": ((1,), (3,), (9,))})
    ctx = eng.create_execution_context()
    ctx.set_tensor_address("k", np.array(8, np.int32))
    with pytest.raises(trt.ShapeError, match="layer 'tk'.*k = 8 exceeds"):
        ctx.get_tensor_shape("v")


# ---- squeeze / unsqueeze with run-time axes -----------------------------------------------------------------------

def _axes_layer_net(add, xshape, k):
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, xshape)
    axes = net.add_input("axes", trt.int32, (k,))
    layer = add(net)(x, axes)
    layer.name = "sq"
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    return b, net, layer


def test_unsqueeze_runtime_axes_matches_numpy():
    b, net, layer = _axes_layer_net(lambda n: n.add_unsqueeze, (2, 3), 2)
    assert tuple(layer.get_output(0).shape) == (-1, -1, -1, -1)
    eng = build(b, net, values={"axes": ((-4, -4), (0, 1), (3, 3))})
    ctx = eng.create_execution_context()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for ax in [(0, 1), (3, 0), (-1, 1), (2, -4)]:
        out = run(ctx, {"x": x, "axes": np.array(ax, np.int32)}, ["y"])["y"]
        ref = np.expand_dims(x, tuple(ax))
        assert out.shape == ref.shape
        np.testing.assert_array_equal(out, ref)


def test_squeeze_runtime_axes_matches_numpy_and_errors():
    b, net, layer = _axes_layer_net(lambda n: n.add_squeeze, (1, 3, 1, 2), 1)
    assert tuple(layer.get_output(0).shape) == (-1, -1, -1)
    eng = build(b, net, values={"axes": ((-4,), (0,), (3,))})
    ctx = eng.create_execution_context()
    x = np.arange(6, dtype=np.float32).reshape(1, 3, 1, 2)
    for ax in [(0,), (2,), (-2,), (-4,)]:
        out = run(ctx, {"x": x, "axes": np.array(ax, np.int32)}, ["y"])["y"]
        np.testing.assert_array_equal(out, np.squeeze(x, ax))
    ctx.set_tensor_address("axes", np.array([1], np.int32))
    with pytest.raises(trt.ShapeError, match="layer 'sq'.*cannot squeeze dimension 1"):
        ctx.get_tensor_shape("y")


def test_squeeze_constant_axes_keep_static_shapes():
    """A constant axes tensor still gives static dims (the builder declares nothing dynamic)."""
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (1, 3, 1))
    axes = net.add_constant((2,), np.array([0, -1], np.int32)).get_output(0)
    y = net.add_squeeze(x, axes).get_output(0)
    y.name = "y"
    net.mark_output(y)
    assert tuple(y.shape) == (3,)
    eng = build(b, net)
    assert tuple(eng.get_tensor_shape("y")) == (3,)


# ---- slice FILL value as an execution tensor (input 4) -----------------------------------------------------------

@pytest.mark.parametrize("dt,npdt", [(trt.float32, np.float32), (trt.int32, np.int32)])
def test_slice_fill_value_from_execution_tensor(dt, npdt):
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    x = net.add_input("x", dt, (2, 3))
    v = net.add_input("v", dt, ())
    layer = net.add_slice(x, (-1, -2), (4, 6), (1, 1))
    layer.mode = trt.SampleMode.FILL
    layer.set_input(4, v)
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    assert layer.num_inputs == 5 and v.is_execution_tensor and not v.is_shape_tensor
    eng = build(b, net)
    ctx = eng.create_execution_context()
    x = np.arange(6).reshape(2, 3).astype(npdt)
    for fill in (7, -3):
        out = run(ctx, {"x": x, "v": np.array(fill, npdt)}, ["y"])["y"]
        np.testing.assert_array_equal(out, np.pad(x, ((1, 1), (2, 1)), constant_values=fill))


def test_slice_fill_value_tensor_errors():
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (2, 3))
    v = net.add_input("v", trt.int32, (1,))
    layer = net.add_slice(x, (0, 0), (2, 3), (1, 1))
    layer.name = "sl"
    layer.set_input(4, v)
    with pytest.raises(trt.InvalidArgumentError, match="layer 'sl'.*fill value \\(input 4\\) needs mode FILL"):
        layer.get_output(0).shape
    layer.mode = trt.SampleMode.FILL
    with pytest.raises(trt.ShapeError, match="layer 'sl'.*must be one FLOAT element.*got INT32"):
        layer.get_output(0).shape


# ---- IFillLayer ---------------------------------------------------------------------------------------------------

def test_fill_linspace_attributes_static_shape():
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    f = net.add_fill((2, 3), trt.FillOperation.LINSPACE, trt.float32)
    assert isinstance(f, trt.IFillLayer) and f.type == trt.LayerType.FILL
    f.alpha, f.beta = 1.5, 0.25
    f.get_output(0).name = "y"
    net.mark_output(f.get_output(0))
    eng = build(b, net)
    out = run(eng.create_execution_context(), {}, ["y"])["y"]
    i, j = np.indices((2, 3))
    np.testing.assert_allclose(out, 1.5 + 0.25 * i + 0.25 * j, rtol=0, atol=1e-7)


@pytest.mark.parametrize("dt,npdt", [(trt.int32, np.int32), (trt.float32, np.float32)])
def test_fill_linspace_runtime_shape_alpha_beta(dt, npdt):
    """numpy's arange / an affine grid, the length a shape tensor input, start and deltas execution tensors."""
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    shape = net.add_input("shape", trt.int32, (2,))
    start = net.add_input("start", dt, ())
    delta = net.add_input("delta", dt, (2,))
    f = net.add_fill((0, 0), trt.FillOperation.LINSPACE, dt)
    f.name = "fill"
    f.set_input(0, shape)
    f.set_input(1, start)
    f.set_input(2, delta)
    assert shape.is_shape_tensor and tuple(f.get_output(0).shape) == (-1, -1)
    f.get_output(0).name = "y"
    net.mark_output(f.get_output(0))
    eng = build(b, net, values={"shape": ((0, 0), (2, 3), (4, 5))})
    ctx = eng.create_execution_context()
    for dims, s0, d in [((2, 3), 7, (10, -2)), ((4, 5), -3, (1, 3)), ((0, 2), 1, (1, 1))]:
        out = run(ctx, {"shape": np.array(dims, np.int32), "start": np.array(s0, npdt),
                        "delta": np.array(d, npdt)}, ["y"])["y"]
        i, j = np.indices(dims)
        np.testing.assert_array_equal(out, (s0 + d[0] * i + d[1] * j).astype(npdt))
    ctx.set_tensor_address("shape", np.array([-1, 2], np.int32))
    with pytest.raises(trt.ShapeError, match="outside optimization profile"):
        ctx.get_tensor_shape("y")


def test_fill_only_alpha_given_and_errors():
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    start = net.add_input("start", trt.int32, ())
    f = net.add_fill((4,), trt.FillOperation.LINSPACE, trt.int32)
    f.name = "fill"
    f.beta = 3
    f.set_input(1, start)  # input 0 left unset: the shape attribute (the builder makes it a constant)
    f.get_output(0).name = "y"
    net.mark_output(f.get_output(0))
    eng = build(b, net)
    out = run(eng.create_execution_context(), {"start": np.array(5, np.int32)}, ["y"])["y"]
    np.testing.assert_array_equal(out, [5, 8, 11, 14])
    with pytest.raises(trt.DTypeError, match=r"layer '.*\[Fill\]'.*INT32.*random operations FLOAT"):
        net.add_fill((2,), trt.FillOperation.RANDOM_UNIFORM, trt.int32)
    g = net.add_fill((2,), trt.FillOperation.LINSPACE, trt.float32)
    g.name = "bad"
    g.set_input(2, start)
    with pytest.raises(trt.ShapeError, match="layer 'bad'.*beta \\(input 2\\) must be a 1-D FLOAT tensor"):
        g.get_output(0).shape


@pytest.mark.parametrize("op", [trt.FillOperation.RANDOM_UNIFORM, trt.FillOperation.RANDOM_NORMAL])
def test_fill_random_statistics_and_determinism(op):
    b = trt.Builder(LOGGER)
    net = b.create_network(EXPLICIT)
    f = net.add_fill((100, 100), op, trt.float32)
    f.alpha, f.beta = (-2.0, 3.0) if op == trt.FillOperation.RANDOM_UNIFORM else (1.0, 2.0)
    f.get_output(0).name = "y"
    net.mark_output(f.get_output(0))
    eng = build(b, net)
    y1 = run(eng.create_execution_context(), {}, ["y"])["y"]
    y2 = run(eng.create_execution_context(), {}, ["y"])["y"]
    np.testing.assert_array_equal(y1, y2)
    if op == trt.FillOperation.RANDOM_UNIFORM:
        assert y1.min() >= -2.0 and y1.max() < 3.0
        assert abs(y1.mean() - 0.5) < 0.05 and abs(y1.std() - 5 / np.sqrt(12)) < 0.05
    else:
        assert abs(y1.mean() - 1.0) < 0.05 and abs(y1.std() - 2.0) < 0.05
    assert len(np.unique(y1)) > 9900
