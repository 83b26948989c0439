"""Shape tensors (TensorRT 10 style): IShapeLayer, shape arithmetic evaluated on the host when input shapes are set,
shape-tensor inputs of shuffle (dynamic reshape), slice and resize, shape-tensor network inputs with profile value
ranges, and the errors.  Every output is compared with numpy; engines go through a plan round trip (the plan carries
the shape-input flags and value ranges, format 4)."""
import numpy as np
import pytest

import trtlite as trt

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
LOGGER = trt.Logger(trt.Logger.ERROR)


def new_net():
    b = trt.Builder(LOGGER)
    return b, b.create_network(EXPLICIT)


def const_i32(net, values):
    v = np.asarray(values, dtype=np.int32).reshape(-1)
    return net.add_constant((v.size,), v).get_output(0)


def gather(net, t, idx):
    return net.add_gather(t, const_i32(net, idx), 0).get_output(0)


def concat(net, ts):
    c = net.add_concatenation(ts)
    c.axis = 0
    return c.get_output(0)


def ew(net, a, b, op):
    return net.add_elementwise(a, b, op).get_output(0)


def build(b, net, profiles, values=None):
    """profiles: list of {input: (min, opt, max)}; values: list of {shape input: (min, opt, max)} (same length)."""
    cfg = b.create_builder_config()
    for k, shapes in enumerate(profiles):
        p = b.create_optimization_profile()
        for name, (mn, op, mx) in shapes.items():
            p.set_shape(name, mn, op, mx)
        for name, (mn, op, mx) in (values[k] if values else {}).items():
            p.set_shape_input(name, mn, op, mx)
        cfg.add_optimization_profile(p)
    plan = b.build_serialized_network(net, cfg)
    return trt.Runtime(LOGGER).deserialize_cuda_engine(plan)


def run(ctx, feeds, outputs):
    """set_input_shape + set_tensor_address + execute_async_v3, outputs sized from get_tensor_shape."""
    for name, a in feeds.items():
        if not ctx.engine.is_shape_inference_io(name):
            ctx.set_input_shape(name, a.shape)
        ctx.set_tensor_address(name, a)
    res = {}
    for name in outputs:
        shape = tuple(ctx.get_tensor_shape(name))
        dt = trt.nptype(ctx.engine.get_tensor_dtype(name))
        res[name] = np.zeros(shape, dtype=dt)
        ctx.set_tensor_address(name, res[name])
    assert ctx.execute_async_v3(0)
    return res


# ---- IShapeLayer and roles ----------------------------------------------------------------------------------------

def test_add_shape_output_and_roles():
    b, net = new_net()
    x = net.add_input("x", trt.float32, (-1, 3, -1))
    layer = net.add_shape(x)
    assert isinstance(layer, trt.IShapeLayer) and layer.type == trt.LayerType.SHAPE
    s = layer.get_output(0)
    assert s.dtype == trt.int32 and tuple(s.shape) == (3,)
    assert not s.is_shape_tensor and not s.is_execution_tensor  # nothing reads it yet
    s.name = "dims"
    net.mark_output(s)
    assert s.is_execution_tensor and not s.is_shape_tensor
    eng = build(b, net, [{"x": ((1, 3, 1), (2, 3, 5), (4, 3, 9))}])
    ctx = eng.create_execution_context()
    for shape in [(1, 3, 1), (4, 3, 9), (2, 3, 7)]:
        out = run(ctx, {"x": np.zeros(shape, np.float32)}, ["dims"])["dims"]
        np.testing.assert_array_equal(out, np.array(shape, np.int32))


def test_roles_through_shape_arithmetic():
    b, net = new_net()
    x = net.add_input("x", trt.float32, (-1, 4, 6))
    s = net.add_shape(x).get_output(0)
    n = gather(net, s, [0])
    target = concat(net, [n, const_i32(net, [-1])])
    sh = net.add_shuffle(x)
    sh.set_input(1, target)
    y = sh.get_output(0)
    net.mark_output(y)
    assert s.is_shape_tensor and not s.is_execution_tensor
    assert n.is_shape_tensor and target.is_shape_tensor
    assert x.is_execution_tensor and not x.is_shape_tensor
    assert y.is_execution_tensor and not y.is_shape_tensor
    assert tuple(y.shape) == (-1, -1)  # the values are known only once x's batch is


# ---- dynamic reshape --------------------------------------------------------------------------------------------

def test_dynamic_reshape_two_profiles_changing_shapes():
    """y = x.reshape(N * 2, C * H * W / 2) built from add_shape + gather + elementwise + concat; two profiles; one
    context, shapes changing between runs."""
    b, net = new_net()
    x = net.add_input("x", trt.float32, (-1, 2, -1, 3))
    s = net.add_shape(x).get_output(0)
    n2 = ew(net, gather(net, s, [0]), const_i32(net, [2]), trt.ElementWiseOperation.PROD)
    chw = net.add_reduce(gather(net, s, [1, 2, 3]), trt.ReduceOperation.PROD, 1, True).get_output(0)
    half = ew(net, chw, const_i32(net, [2]), trt.ElementWiseOperation.FLOOR_DIV)
    sh = net.add_shuffle(x)
    sh.set_input(1, concat(net, [n2, half]))
    y = sh.get_output(0)
    y.name = "y"
    net.mark_output(y)
    # also the reshaped tensor's shape as an output (a shape tensor that is an execution tensor too)
    ys = net.add_shape(y).get_output(0)
    ys.name = "y_shape"
    net.mark_output(ys)
    eng = build(b, net, [{"x": ((1, 2, 1, 3), (2, 2, 4, 3), (3, 2, 8, 3))},
                         {"x": ((4, 2, 2, 3), (5, 2, 4, 3), (6, 2, 10, 3))}])
    assert eng.num_optimization_profiles == 2
    ctx = eng.create_execution_context()
    rng = np.random.default_rng(0)
    for prof, shape in [(0, (1, 2, 1, 3)), (0, (3, 2, 8, 3)), (0, (2, 2, 5, 3)), (1, (6, 2, 10, 3)), (1, (4, 2, 3, 3)),
                        (0, (2, 2, 2, 3))]:
        ctx.set_optimization_profile_async(prof, 0)
        a = rng.standard_normal(shape).astype(np.float32)
        out = run(ctx, {"x": a}, ["y", "y_shape"])
        ref = a.astype(np.float64).reshape(shape[0] * 2, -1)
        np.testing.assert_array_equal(out["y"], ref.astype(np.float32))
        np.testing.assert_array_equal(out["y_shape"], np.array(ref.shape, np.int32))


def test_dynamic_reshape_zero_copies_and_infer_dim_with_infer():
    b, net = new_net()
    x = net.add_input("x", trt.float32, (-1, 6))
    s = net.add_shape(x).get_output(0)
    sh = net.add_shuffle(x)
    # [0, 2, -1]: 0 copies N (zero_is_placeholder), -1 infers 3
    sh.set_input(1, const_i32(net, [0, 2, -1]))
    net.mark_output(sh.get_output(0))
    del s
    eng = build(b, net, [{"x": ((1, 6), (2, 6), (5, 6))}])
    ctx = eng.create_execution_context()
    for n in (1, 5, 3):
        a = np.arange(n * 6, dtype=np.float32).reshape(n, 6)
        got = ctx.infer({"x": a})
        np.testing.assert_array_equal(list(got.values())[0], a.reshape(n, 2, 3))


def test_dynamic_reshape_volume_mismatch_is_a_clear_error():
    b, net = new_net()
    x = net.add_input("x", trt.float32, (-1, 6))
    s = net.add_shape(x).get_output(0)
    # [N + 1, 6]: never the input's volume
    n1 = ew(net, gather(net, s, [0]), const_i32(net, [1]), trt.ElementWiseOperation.SUM)
    sh = net.add_shuffle(x)
    sh.name = "bad_reshape"
    sh.set_input(1, concat(net, [n1, const_i32(net, [6])]))
    net.mark_output(sh.get_output(0))
    cfg = b.create_builder_config()
    p = b.create_optimization_profile()
    p.set_shape("x", (1, 6), (2, 6), (3, 6))
    cfg.add_optimization_profile(p)
    with pytest.raises(trt.ShapeError, match="bad_reshape.*volumes"):
        b.build_serialized_network(net, cfg)


def test_shape_tensor_from_execution_data_is_refused():
    """Reshape dims computed from an input's *values* (not a shape input: it has a dynamic shape) cannot be known
    before execution."""
    b, net = new_net()
    x = net.add_input("x", trt.float32, (-1, 6))
    d = net.add_input("d", trt.int32, (-1,))
    sh = net.add_shuffle(x)
    sh.name = "data_reshape"
    sh.set_input(1, net.add_elementwise(d, const_i32(net, [0, 0]), trt.ElementWiseOperation.SUM).get_output(0))
    net.mark_output(sh.get_output(0))
    cfg = b.create_builder_config()
    p = b.create_optimization_profile()
    p.set_shape("x", (1, 6), (2, 6), (3, 6))
    p.set_shape("d", (2,), (2,), (2,))
    cfg.add_optimization_profile(p)
    with pytest.raises(trt.ShapeError, match="'d' is a shape tensor"):
        b.build_serialized_network(net, cfg)


# ---- shape-tensor network inputs ----------------------------------------------------------------------------------

def shape_input_net():
    b, net = new_net()
    x = net.add_input("x", trt.float32, (12,))
    s = net.add_input("s", trt.int32, (2,))
    sh = net.add_shuffle(x)
    sh.name = "reshape_to_s"
    sh.set_input(1, s)
    y = sh.get_output(0)
    y.name = "y"
    net.mark_output(y)
    return b, net, s


def test_shape_input_values_from_tensor_address():
    b, net, s = shape_input_net()
    assert s.is_shape_tensor and not s.is_execution_tensor
    eng = build(b, net, [{}], [{"s": ((1, 1), (3, 4), (12, 12))}])
    assert eng.is_shape_inference_io("s") and not eng.is_shape_inference_io("x")
    assert [list(v) for v in eng.get_tensor_profile_values(0, "s")] == [[1, 1], [3, 4], [12, 12]]
    ctx = eng.create_execution_context()
    a = np.arange(12, dtype=np.float32)
    for vals in ([3, 4], [2, 6], [12, 1], [1, 12]):
        sv = np.array(vals, np.int32)
        out = run(ctx, {"x": a, "s": sv}, ["y"])["y"]
        np.testing.assert_array_equal(out, a.reshape(vals))
    # in-place change of the bound array is seen at the next execution, as TensorRT reads the address then
    sv = np.array([4, 3], np.int32)
    ctx.set_tensor_address("s", sv)
    sv[:] = [6, 2]
    assert tuple(ctx.get_tensor_shape("y")) == (6, 2)
    # the numpy convenience takes shape-input values like any input
    got = ctx.infer({"x": a, "s": np.array([2, 6], np.int32)})
    np.testing.assert_array_equal(got["y"], a.reshape(2, 6))


def test_shape_input_errors():
    b, net, s = shape_input_net()
    cfg = b.create_builder_config()
    with pytest.raises(trt.ShapeError, match="'s' is a shape tensor.*set_shape_input"):
        b.build_serialized_network(net, cfg)
    p = b.create_optimization_profile()
    with pytest.raises(trt.InvalidArgumentError, match="min <= opt <= max"):
        p.set_shape_input("s", (2, 2), (1, 1), (3, 3))
    eng = build(b, net, [{}], [{"s": ((1, 1), (3, 4), (12, 12))}])
    ctx = eng.create_execution_context()
    a = np.arange(12, dtype=np.float32)
    ctx.set_tensor_address("x", a)
    ctx.set_tensor_address("y", np.zeros(12, np.float32))
    with pytest.raises(trt.StateError, match="'s' is a shape tensor and has no values"):
        ctx.execute_async_v3(0)
    ctx.set_tensor_address("s", np.array([13, 1], np.int32))
    with pytest.raises(trt.ShapeError, match="'s'.*outside optimization profile 0"):
        ctx.execute_async_v3(0)
    ctx.set_tensor_address("s", np.array([5, 2], np.int32))
    with pytest.raises(trt.ShapeError, match="reshape_to_s.*volumes"):
        ctx.execute_async_v3(0)
    # values for an input that no shape position reads
    b2, net2 = new_net()
    x = net2.add_input("x", trt.int32, (2,))
    net2.mark_output(net2.add_identity(x).get_output(0))
    cfg2 = b2.create_builder_config()
    p2 = b2.create_optimization_profile()
    p2.set_shape_input("x", (1, 1), (1, 1), (2, 2))
    cfg2.add_optimization_profile(p2)
    with pytest.raises(trt.InvalidArgumentError, match="'x'.*not a shape tensor"):
        b2.build_serialized_network(net2, cfg2)


def test_shape_layer_needs_explicit_batch():
    b = trt.Builder(LOGGER)
    net = b.create_network()  # implicit batch (TensorRT 7)
    x = net.add_input("x", trt.float32, (3, 4))
    with pytest.raises(trt.UnsupportedError, match="Shape.*explicit-batch"):
        net.add_shape(x)


# ---- slice and resize with shape-tensor inputs ----------------------------------------------------------------

def test_slice_with_shape_inputs():
    """y = x[:, 1:1+T] with T the length of a second input (set_input(2, size) only: start/stride stay attributes),
    and z = x[:, ::2] reversed through start/size/stride all from shape tensors."""
    b, net = new_net()
    x = net.add_input("x", trt.float32, (2, -1))
    t = net.add_input("t", trt.float32, (-1,))
    st = net.add_shape(t).get_output(0)
    sl = net.add_slice(x, (0, 1), (0, 0), (1, 1))
    sl.set_input(2, concat(net, [const_i32(net, [2]), st]))
    y = sl.get_output(0)
    y.name = "y"
    net.mark_output(y)
    sx = net.add_shape(x).get_output(0)
    w = gather(net, sx, [1])
    last = ew(net, w, const_i32(net, [1]), trt.ElementWiseOperation.SUB)
    half = ew(net, ew(net, w, const_i32(net, [1]), trt.ElementWiseOperation.SUM), const_i32(net, [2]),
              trt.ElementWiseOperation.FLOOR_DIV)
    sl2 = net.add_slice(x, (0, 0), (2, 1), (1, 1))
    sl2.set_input(1, concat(net, [const_i32(net, [0]), last]))
    sl2.set_input(2, concat(net, [const_i32(net, [2]), half]))
    sl2.set_input(3, const_i32(net, [1, -2]))
    z = sl2.get_output(0)
    z.name = "z"
    net.mark_output(z)
    eng = build(b, net, [{"x": ((2, 4), (2, 8), (2, 16)), "t": ((1,), (2,), (3,))}])
    ctx = eng.create_execution_context()
    rng = np.random.default_rng(1)
    for w_, t_ in [(4, 1), (16, 3), (7, 2)]:
        a = rng.standard_normal((2, w_)).astype(np.float32)
        out = run(ctx, {"x": a, "t": np.zeros(t_, np.float32)}, ["y", "z"])
        np.testing.assert_array_equal(out["y"], a[:, 1:1 + t_])
        np.testing.assert_array_equal(out["z"], a[:, ::-2])


def test_slice_shape_input_out_of_bounds_names_layer():
    b, net = new_net()
    x = net.add_input("x", trt.float32, (-1,))
    s = net.add_shape(x).get_output(0)
    sl = net.add_slice(x, (0,), (0,), (1,))
    sl.name = "too_long"
    sl.set_input(2, ew(net, s, const_i32(net, [1]), trt.ElementWiseOperation.SUM))  # N + 1 elements of N
    net.mark_output(sl.get_output(0))
    cfg = b.create_builder_config()
    p = b.create_optimization_profile()
    p.set_shape("x", (1,), (2,), (3,))
    cfg.add_optimization_profile(p)
    with pytest.raises(trt.ShapeError, match="too_long.*out of bounds"):
        b.build_serialized_network(net, cfg)


def test_resize_to_shape_tensor():
    """Nearest resize of x (1, 1, h, w) to the spatial size of a second input."""
    b, net = new_net()
    x = net.add_input("x", trt.float32, (1, 1, 3, 4))
    ref = net.add_input("ref", trt.float32, (1, 1, -1, -1))
    r = net.add_resize(x)
    r.resize_mode = trt.InterpolationMode.NEAREST
    r.coordinate_transformation = trt.ResizeCoordinateTransformation.ASYMMETRIC
    r.nearest_rounding = trt.ResizeRoundMode.FLOOR
    r.set_input(1, net.add_shape(ref).get_output(0))
    y = r.get_output(0)
    y.name = "y"
    net.mark_output(y)
    eng = build(b, net, [{"ref": ((1, 1, 1, 1), (1, 1, 6, 8), (1, 1, 9, 12))}])
    ctx = eng.create_execution_context()
    a = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    for h, w in [(6, 8), (9, 12), (3, 2), (1, 1)]:
        out = run(ctx, {"x": a, "ref": np.zeros((1, 1, h, w), np.float32)}, ["y"])["y"]
        rows = np.floor(np.arange(h) * (3 / h)).astype(int)
        cols = np.floor(np.arange(w) * (4 / w)).astype(int)
        np.testing.assert_array_equal(out, a[:, :, rows][:, :, :, cols])


# ---- ONNX models with shapes computed at run time, against onnxruntime ----------------------------------------

def _onnx_run(model, feeds, profile_shapes, shape_values=None):
    """Parses `model` (onnx.ModelProto), builds with one profile and runs through a plan round trip."""
    b, net = new_net()
    parser = trt.OnnxParser(net, LOGGER)
    assert parser.parse(model.SerializeToString()), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    eng = build(b, net, [profile_shapes], [shape_values or {}])
    ctx = eng.create_execution_context()
    return [ctx.infer(f) for f in feeds]


def _ort(model, feed):
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


def test_onnx_reshape_from_dynamic_dims_and_graph_input():
    """y = x.reshape(B * T, C) with B, T dynamic (two dims from Shape multiplied: no static form), z = x reshaped
    to a shape given as a graph input (an int64 shape-tensor input)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    nodes = [
        helper.make_node("Shape", ["x"], ["sx"]),
        helper.make_node("Gather", ["sx", "i0"], ["b"], axis=0),
        helper.make_node("Gather", ["sx", "i1"], ["t"], axis=0),
        helper.make_node("Gather", ["sx", "i2"], ["c"], axis=0),
        helper.make_node("Mul", ["b", "t"], ["bt"]),
        helper.make_node("Concat", ["bt", "c"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
        helper.make_node("Reshape", ["x", "s"], ["z"]),
    ]
    inits = [helper.make_tensor(n, TensorProto.INT64, [1], [v]) for n, v in (("i0", 0), ("i1", 1), ("i2", 2))]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T", 4]),
                                       helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    rng = np.random.default_rng(3)
    feeds = [{"x": rng.standard_normal((b_, t_, 4)).astype(np.float32), "s": np.array(s_, np.int64)}
             for b_, t_, s_ in ((2, 3, [4, 6]), (1, 5, [-1, 2]), (3, 1, [0, 4]))]
    got = _onnx_run(model, feeds, {"x": ((1, 1, 4), (2, 3, 4), (3, 5, 4))}, {"s": ((-1, -1), (4, 6), (12, 20))})
    for f, g_ in zip(feeds, got):
        ry, rz = _ort(model, f)
        np.testing.assert_array_equal(g_["y"], ry)
        np.testing.assert_array_equal(g_["z"], rz)


def test_onnx_expand_and_resize_sizes_at_run_time():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Expand", ["x", "shape"], ["y"]),
             helper.make_node("Resize", ["img", "", "", "sizes"], ["r"], mode="nearest",
                              coordinate_transformation_mode="asymmetric", nearest_mode="floor")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1]),
                                       helper.make_tensor_value_info("shape", TensorProto.INT64, [3]),
                                       helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 1, 2, 3]),
                                       helper.make_tensor_value_info("sizes", TensorProto.INT64, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("r", TensorProto.FLOAT, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    x = np.array([[1.0], [2.0], [3.0]], np.float32)
    img = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    feeds = [{"x": x, "shape": np.array(sh, np.int64), "img": img, "sizes": np.array(sz, np.int64)}
             for sh, sz in (([2, 1, 6], [1, 1, 4, 6]), ([1, 3, 1], [1, 1, 3, 2]), ([4, 3, 5], [1, 1, 1, 1]))]
    got = _onnx_run(model, feeds, {}, {"shape": ((1, 1, 1), (2, 1, 6), (4, 3, 6)),
                                       "sizes": ((1, 1, 1, 1), (1, 1, 4, 6), (1, 1, 8, 8))})
    for f, g_ in zip(feeds, got):
        ry, rr = _ort(model, f)
        np.testing.assert_array_equal(g_["y"], ry)
        np.testing.assert_array_equal(g_["r"], rr)


def test_onnx_pad_tile_constant_of_shape_at_run_time():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Pad", ["x", "pads"], ["p"], mode="reflect"),
             helper.make_node("Pad", ["x", "pads", "cv"], ["pc"], mode="constant"),
             helper.make_node("Tile", ["x", "reps"], ["t"]),
             helper.make_node("ConstantOfShape", ["cs"], ["c"],
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [2.5]))]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4]),
                                       helper.make_tensor_value_info("pads", TensorProto.INT64, [4]),
                                       helper.make_tensor_value_info("reps", TensorProto.INT64, [2]),
                                       helper.make_tensor_value_info("cs", TensorProto.INT64, [3])],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("p", "pc", "t", "c")],
                          [helper.make_tensor("cv", TensorProto.FLOAT, [], [-1.5])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    feeds = [{"x": x, "pads": np.array(pd, np.int64), "reps": np.array(rp, np.int64), "cs": np.array(cs, np.int64)}
             for pd, rp, cs in (([1, 2, 0, 1], [2, 1], [2, 1, 3]), ([0, 0, 2, 3], [1, 3], [1, 1, 1]),
                                ([2, -1, 1, 0], [3, 2], [4, 2, 0]))]
    got = _onnx_run(model, feeds, {}, {"pads": ((-1, -1, 0, 0), (1, 2, 0, 1), (2, 3, 2, 3)),
                                       "reps": ((1, 1), (2, 1), (3, 3)), "cs": ((1, 1, 0), (2, 1, 3), (4, 2, 3))})
    for f, g_ in zip(feeds, got):
        for name, ref in zip(("p", "pc", "t", "c"), _ort(model, f)):
            np.testing.assert_array_equal(g_[name], ref, err_msg=name)


def test_onnx_slice_bounds_axes_and_steps_at_run_time():
    """Slice with starts / ends / axes / steps all graph inputs: ONNX's clamping of out-of-range bounds, negative
    axes and steps, computed as shape arithmetic.  The profile holds negative values below -1 (a plan round trip
    must keep them)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])] +
                          [helper.make_tensor_value_info(n, TensorProto.INT64, [2])
                           for n in ("starts", "ends", "axes", "steps")],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    cases = [([0, 1], [3, 5], [0, 1], [1, 2]), ([-1, 5], [-5, 0], [0, -1], [-1, -2]), ([1, -100], [100, 100],
             [-1, 0], [3, 1]), ([2, 0], [2, 6], [0, 1], [1, 1])]
    feeds = [{"x": x, **{k: np.array(v, np.int64) for k, v in zip(("starts", "ends", "axes", "steps"), c)}}
             for c in cases]
    lo, hi = (-100, -100), (100, 100)
    got = _onnx_run(model, feeds, {}, {"starts": (lo, (0, 1), hi), "ends": (lo, (3, 5), hi),
                                       "axes": ((-2, -2), (0, 1), (1, 1)), "steps": ((-3, -3), (1, 2), (3, 3))})
    for f, g_ in zip(feeds, got):
        np.testing.assert_array_equal(g_["y"], _ort(model, f)[0])


def test_onnx_positional_slice_to_a_dynamic_length():
    """x + pe[:, :T] with T = x.shape[1] dynamic (a transformer's positional table): the slice's end holds a dynamic
    dim, computed at run time from a shape layer."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    pe = np.random.default_rng(5).standard_normal((1, 16, 4)).astype(np.float32)
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "one"], ["t"], axis=0),
             helper.make_node("Slice", ["pe", "zero", "t", "one"], ["pes"]), helper.make_node("Add", ["x", "pes"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "T", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [helper.make_tensor("one", TensorProto.INT64, [1], [1]),
                           helper.make_tensor("zero", TensorProto.INT64, [1], [0]), numpy_helper.from_array(pe, "pe")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    rng = np.random.default_rng(6)
    feeds = [{"x": rng.standard_normal((1, t, 4)).astype(np.float32)} for t in (1, 7, 16)]
    got = _onnx_run(model, feeds, {"x": ((1, 1, 4), (1, 5, 4), (1, 16, 4))})
    for f, g_ in zip(feeds, got):
        np.testing.assert_array_equal(g_["y"], _ort(model, f)[0])


def test_onnx_reshape_back_to_two_dynamic_dims():
    """(B*T, C) -> (B, T, C) with the target Shape(x) itself (two dynamic dims): once refused, now a shape
    tensor."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Reshape", ["x", "flat"], ["f"]), helper.make_node("Relu", ["f"], ["g"]),
             helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Reshape", ["g", "s"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T", 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [helper.make_tensor("flat", TensorProto.INT64, [2], [-1, 8])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    rng = np.random.default_rng(8)
    feeds = [{"x": rng.standard_normal(s).astype(np.float32)} for s in ((1, 1, 8), (2, 5, 8), (3, 2, 8))]
    got = _onnx_run(model, feeds, {"x": ((1, 1, 8), (2, 3, 8), (3, 5, 8))})
    for f, g_ in zip(feeds, got):
        np.testing.assert_array_equal(g_["y"], _ort(model, f)[0])
