"""Data-dependent output shapes (issue #12): INonZeroLayer, INMSLayer, trt.IOutputAllocator, ONNX NonZero /
NonMaxSuppression.  References: numpy (np.nonzero) and a float64 NMS written here; onnxruntime for ONNX."""
import numpy as np
import pytest

import trtlite as trt

LOGGER = trt.Logger(trt.Logger.ERROR)


class NumpyAllocator(trt.IOutputAllocator):
    """Allocates a fresh numpy buffer per call and records the shapes it is told."""

    def __init__(self, dtype=np.int32):
        trt.IOutputAllocator.__init__(self)
        self.dtype = np.dtype(dtype)
        self.buffers = {}
        self.shapes = {}
        self.sizes = []

    def reallocate_output(self, tensor_name, memory, size, alignment):
        self.sizes.append(size)
        buf = np.empty(-(-size // self.dtype.itemsize), self.dtype)
        self.buffers[tensor_name] = buf
        return buf

    def notify_shape(self, tensor_name, shape):
        self.shapes[tensor_name] = tuple(shape)

    def result(self, name):
        shape = self.shapes[name]
        return self.buffers[name][:int(np.prod(shape))].reshape(shape)


def build(net, builder, profile=None):
    cfg = builder.create_builder_config()
    if profile is not None:
        cfg.add_optimization_profile(profile)
    plan = builder.build_serialized_network(net, cfg)
    return trt.Runtime(LOGGER).deserialize_cuda_engine(plan)  # every engine goes through its plan


def run(engine, inputs, outputs, ctx=None):
    """Runs with an allocator per output; returns {name: array}."""
    ctx = ctx or engine.create_execution_context()
    allocs = {}
    for name, arr in inputs.items():
        if -1 in tuple(engine.get_tensor_shape(name)):
            ctx.set_input_shape(name, arr.shape)
        ctx.set_tensor_address(name, arr)
    for name, dt in outputs.items():
        allocs[name] = NumpyAllocator(dt)
        ctx.set_output_allocator(name, allocs[name])
    assert ctx.execute_async_v3(0)
    res = {name: a.result(name) for name, a in allocs.items()}
    for name in outputs:
        assert tuple(ctx.get_tensor_shape(name)) == res[name].shape
    return res


def nonzero_net(dtype, shape):
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    x = net.add_input("x", dtype, shape)
    layer = net.add_non_zero(x)
    out = layer.get_output(0)
    out.name = "idx"
    net.mark_output(out)
    return b, net, layer


@pytest.mark.parametrize("dtype", [trt.float32, trt.int32, trt.bool])
def test_non_zero_random_shapes(dtype):
    rng = np.random.default_rng(0)
    b, net, layer = nonzero_net(dtype, (-1, -1, -1))
    assert layer.type == trt.LayerType.NON_ZERO and isinstance(layer, trt.INonZeroLayer)
    assert tuple(layer.get_output(0).shape) == (3, -1)
    prof = b.create_optimization_profile()
    prof.set_shape("x", (1, 1, 1), (2, 3, 4), (3, 5, 7))
    engine = build(net, b, prof)
    assert tuple(engine.get_tensor_shape("idx")) == (3, -1)
    ctx = engine.create_execution_context()
    for shape in [(3, 5, 7), (1, 1, 1), (2, 3, 4), (3, 1, 6)]:
        x = rng.random(shape) < 0.4
        if dtype != trt.bool:
            x = x * rng.integers(-3, 4, shape)
        x = x.astype(trt.nptype(dtype))
        got = run(engine, {"x": np.ascontiguousarray(x)}, {"idx": np.int32}, ctx)["idx"]
        np.testing.assert_array_equal(got, np.array(np.nonzero(x)))


def test_non_zero_empty_and_shapes_before_execution():
    b, net, _ = nonzero_net(trt.float32, (4, 3))
    engine = build(net, b)
    ctx = engine.create_execution_context()
    x = np.zeros((4, 3), np.float32)
    ctx.set_tensor_address("x", x)
    assert tuple(ctx.get_tensor_shape("idx")) == (2, -1)  # unknown before execution
    assert ctx.get_max_output_size("idx") == 2 * 12 * 4
    alloc = NumpyAllocator()
    ctx.set_output_allocator("idx", alloc)
    assert ctx.get_output_allocator("idx") is alloc
    ctx.execute_async_v3(0)
    assert alloc.shapes["idx"] == (2, 0) and alloc.sizes == [1]  # TensorRT: size >= 1 even when empty
    assert tuple(ctx.get_tensor_shape("idx")) == (2, 0)
    x[1, 2] = -0.5  # NaN and negative values count, as numpy
    x[3, 0] = np.nan
    ctx.execute_async_v3(0)
    np.testing.assert_array_equal(alloc.result("idx"), np.array(np.nonzero(x)))
    assert tuple(ctx.get_tensor_shape("idx")) == (2, 2)


def test_non_zero_bound_buffer_without_allocator():
    """TensorRT-like: no allocator but a bound buffer of get_max_output_size() bytes works; neither is an error."""
    b, net, _ = nonzero_net(trt.float32, (5,))
    engine = build(net, b)
    ctx = engine.create_execution_context()
    x = np.array([0, 3, 0, 1, 2], np.float32)
    ctx.set_tensor_address("x", x)
    with pytest.raises(trt.StateError, match="data-dependent shape.*set_output_allocator"):
        ctx.execute_async_v3(0)
    out = np.full(ctx.get_max_output_size("idx") // 4, -7, np.int32)
    ctx.set_tensor_address("idx", out)
    ctx.execute_async_v3(0)
    assert tuple(ctx.get_tensor_shape("idx")) == (1, 3)
    np.testing.assert_array_equal(out[:3], [1, 3, 4])
    # execute_v2 with bindings, and infer() cutting the buffer to the real shape
    out[:] = -7
    ctx.execute_v2([x, out])
    np.testing.assert_array_equal(out[:3], [1, 3, 4])
    np.testing.assert_array_equal(ctx.infer({"x": x})["idx"], [[1, 3, 4]])


def test_non_zero_consumers_gather_shuffle_elementwise_shape():
    """x[x != 0] through shuffle + gather, indices * 2 + 1 through cast / elementwise, and the count via add_shape."""
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    x = net.add_input("x", trt.float32, (-1,))
    nz = net.add_non_zero(x).get_output(0)                      # [1, count]
    flat = net.add_shuffle(nz)
    flat.reshape_dims = (-1,)                                   # [count]
    vals = net.add_gather(x, flat.get_output(0), 0).get_output(0)
    vals.name = "vals"
    f = net.add_cast(nz, trt.float32).get_output(0)
    two = net.add_constant((1, 1), np.array([[2.0]], np.float32)).get_output(0)
    one = net.add_constant((1, 1), np.array([[1.0]], np.float32)).get_output(0)
    y = net.add_elementwise(net.add_elementwise(f, two, trt.ElementWiseOperation.PROD).get_output(0), one,
                            trt.ElementWiseOperation.SUM).get_output(0)
    t = net.add_shuffle(y)
    t.first_transpose = (1, 0)                                  # [count, 1]
    t.get_output(0).name = "affine"
    shp = net.add_shape(nz).get_output(0)
    shp.name = "count"
    for o in (vals, t.get_output(0), shp):
        net.mark_output(o)
    prof = b.create_optimization_profile()
    prof.set_shape("x", (1,), (8,), (16,))
    engine = build(net, b, prof)
    assert tuple(engine.get_tensor_shape("vals")) == (-1,)
    assert tuple(engine.get_tensor_shape("count")) == (2,)
    ctx = engine.create_execution_context()
    rng = np.random.default_rng(1)
    for n in (16, 5, 1):
        xv = (rng.standard_normal(n) * (rng.random(n) < 0.5)).astype(np.float32)
        count = np.zeros(2, np.int32)
        ctx.set_tensor_address("count", count)  # static shape: an ordinary buffer
        ctx.set_input_shape("x", (n,))
        ctx.set_tensor_address("x", xv)
        allocs = {k: NumpyAllocator(np.float32) for k in ("vals", "affine")}
        for k, a in allocs.items():
            ctx.set_output_allocator(k, a)
        ctx.execute_async_v3(0)
        idx = np.nonzero(xv)[0]
        np.testing.assert_array_equal(allocs["vals"].result("vals"), xv[idx])
        np.testing.assert_array_equal(allocs["affine"].result("affine"), (idx * 2.0 + 1.0)[:, None])
        np.testing.assert_array_equal(count, [1, len(idx)])


def nms_reference(boxes, scores, max_out, iou_thr, score_thr, center, limit=None):
    """float64 NMS with INMSLayer's semantics: boxes [B, N, 4] or [B, N, C, 4], scores [B, N, C]."""
    B, N, C = scores.shape
    rows = []

    def corners(b):
        b = b.astype(np.float64)
        if center:
            return np.array([b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2])
        return np.array([min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])])

    def iou(p, q):
        p, q = corners(p), corners(q)
        ap, aq = (p[2] - p[0]) * (p[3] - p[1]), (q[2] - q[0]) * (q[3] - q[1])
        if ap <= 0 or aq <= 0:
            return 0.0
        w, h = min(p[2], q[2]) - max(p[0], q[0]), min(p[3], q[3]) - max(p[1], q[1])
        if w <= 0 or h <= 0:
            return 0.0
        return w * h / (ap + aq - w * h)

    for b in range(B):
        cands = sorted(((-float(scores[b, n, c]), n, c) for n in range(N) for c in range(C)
                        if scores[b, n, c] > score_thr))
        if limit is not None:
            cands = cands[:limit]
        for c in range(C):
            sel = []
            for _, n, cc in cands:
                if cc != c or len(sel) >= max_out:
                    continue
                box = (lambda k: boxes[b, k, c] if boxes.ndim == 4 else boxes[b, k])
                if all(iou(box(n), box(k)) <= iou_thr for k in sel):
                    sel.append(n)
                    rows.append((b, c, n))
    return np.array(rows, np.int32).reshape(-1, 3)


def nms_engine(B, N, C, per_class=False, fmt=trt.BoundingBoxFormat.CORNER_PAIRS, limit=None, thresholds=True):
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    boxes = net.add_input("boxes", trt.float32, (B, N, C, 4) if per_class else (B, N, 4))
    scores = net.add_input("scores", trt.float32, (B, N, C))
    mo = net.add_input("max_out", trt.int32, ())
    layer = net.add_nms(boxes, scores, mo)
    assert isinstance(layer, trt.INMSLayer) and layer.type == trt.LayerType.NMS
    assert layer.bounding_box_format == trt.BoundingBoxFormat.CORNER_PAIRS and layer.topk_box_limit == 5000
    layer.bounding_box_format = fmt
    if limit is not None:
        layer.topk_box_limit = limit
    if thresholds:
        layer.set_input(3, net.add_input("iou", trt.float32, ()))
        layer.set_input(4, net.add_input("score_thr", trt.float32, ()))
    layer.get_output(0).name = "selected"
    layer.get_output(1).name = "num"
    assert tuple(layer.get_output(0).shape) == (-1, 3)
    net.mark_output(layer.get_output(0))
    net.mark_output(layer.get_output(1))
    return build(net, b)


@pytest.mark.parametrize("per_class,fmt,limit", [(False, trt.BoundingBoxFormat.CORNER_PAIRS, None),
                                                 (True, trt.BoundingBoxFormat.CENTER_SIZES, None),
                                                 (False, trt.BoundingBoxFormat.CENTER_SIZES, 7)])
def test_nms_random(per_class, fmt, limit):
    rng = np.random.default_rng(2)
    B, N, C = 2, 13, 3
    engine = nms_engine(B, N, C, per_class, fmt, limit)
    ctx = engine.create_execution_context()
    for trial, (max_out, iou_thr, score_thr) in enumerate([(4, 0.3, 0.2), (100, 0.6, -1.0), (0, 0.5, 0.0),
                                                           (3, 0.0, 0.95)]):
        xy = rng.random((B, N, C, 2) if per_class else (B, N, 2)) * 10
        wh = rng.random(xy.shape) * 5 + 0.5
        raw = np.concatenate([xy, wh], -1) if fmt == trt.BoundingBoxFormat.CENTER_SIZES else \
            np.concatenate([xy, xy + wh * np.where(rng.random(wh.shape) < 0.5, -1, 1)], -1)
        boxes = raw.astype(np.float32)
        scores = rng.random((B, N, C)).astype(np.float32)
        num = np.zeros((), np.int32)
        ctx.set_tensor_address("num", num)
        res = run(engine, {"boxes": boxes, "scores": scores, "max_out": np.array(max_out, np.int32),
                           "iou": np.array(iou_thr, np.float32), "score_thr": np.array(score_thr, np.float32)},
                  {"selected": np.int32}, ctx)
        ref = nms_reference(boxes, scores, max_out, iou_thr, score_thr,
                            fmt == trt.BoundingBoxFormat.CENTER_SIZES, limit)
        np.testing.assert_array_equal(res["selected"], ref)
        assert int(num) == len(ref)
    assert engine.get_tensor_shape("selected")[0] == -1


def test_nms_default_thresholds_and_bad_iou():
    """Without inputs 3 / 4 the thresholds are 0 (scores must exceed 0); an IoU threshold outside [0, 1] fails."""
    engine = nms_engine(1, 3, 1, thresholds=False)
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 1], [5, 5, 6, 6]]], np.float32)
    scores = np.array([[[0.5], [0.9], [0.0]]], np.float32)
    ctx = engine.create_execution_context()
    ctx.set_tensor_address("num", np.zeros((), np.int32))
    res = run(engine, {"boxes": boxes, "scores": scores, "max_out": np.array(5, np.int32)}, {"selected": np.int32},
              ctx)
    np.testing.assert_array_equal(res["selected"], [[0, 0, 1]])  # box 0 suppressed (IoU 1 > 0), box 2 score 0
    engine = nms_engine(1, 3, 1)
    ctx = engine.create_execution_context()
    ctx.set_tensor_address("num", np.zeros((), np.int32))
    with pytest.raises(trt.InvalidArgumentError, match="iou_threshold 1.5 is outside"):
        run(engine, {"boxes": boxes, "scores": scores, "max_out": np.array(5, np.int32),
                     "iou": np.array(1.5, np.float32), "score_thr": np.array(0, np.float32)}, {"selected": np.int32},
            ctx)


def test_nms_bad_inputs_are_named():
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    boxes = net.add_input("boxes", trt.float32, (1, 4, 4))
    scores = net.add_input("scores", trt.float32, (1, 5, 2))
    mo = net.add_input("max_out", trt.int32, ())
    with pytest.raises(trt.ShapeError, match=r"NMS\]': boxes \(input 0\) \(1, 4, 4\) must be"):
        net.add_nms(boxes, scores, mo)
    scores2 = net.add_input("scores2", trt.float32, (1, 4, 2))
    with pytest.raises(trt.DTypeError, match="max_output_boxes_per_class \\(input 2\\) must be INT32"):
        net.add_nms(boxes, scores2, scores2)


class BadAllocator(NumpyAllocator):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def reallocate_output(self, tensor_name, memory, size, alignment):
        if self.mode == "small":
            return np.empty(max(size // 4 - 1, 0), np.int32)
        if self.mode == "none":
            return None
        raise ValueError("no memory for " + tensor_name)


def test_allocator_errors():
    b, net, _ = nonzero_net(trt.float32, (6,))
    engine = build(net, b)
    ctx = engine.create_execution_context()
    ctx.set_tensor_address("x", np.arange(6, dtype=np.float32))
    ctx.set_output_allocator("idx", BadAllocator("small"))
    with pytest.raises(trt.StateError, match="output 'idx'.*buffer of 16 bytes, 20 needed"):
        ctx.execute_async_v3(0)
    ctx.set_output_allocator("idx", BadAllocator("none"))
    with pytest.raises(trt.StateError, match="output 'idx'.*returned None"):
        ctx.execute_async_v3(0)
    ctx.set_output_allocator("idx", BadAllocator("raise"))
    with pytest.raises(ValueError, match="no memory for idx"):
        ctx.execute_async_v3(0)
    with pytest.raises(TypeError, match="IOutputAllocator"):
        ctx.set_output_allocator("idx", object())
    with pytest.raises(trt.InvalidArgumentError, match="'x' is an input"):
        ctx.set_output_allocator("x", NumpyAllocator())
    ctx.set_output_allocator("idx", None)
    assert ctx.get_output_allocator("idx") is None
    # an allocator that works after the failures
    ok = NumpyAllocator()
    ctx.set_output_allocator("idx", ok)
    ctx.execute_async_v3(0)
    np.testing.assert_array_equal(ok.result("idx"), [[1, 2, 3, 4, 5]])


def test_data_dependent_in_loop_is_a_build_error():
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    x = net.add_input("x", trt.float32, (4,))
    loop = net.add_loop()
    loop.add_trip_limit(net.add_constant((), np.array(2, np.int32)).get_output(0), trt.TripLimit.COUNT)
    rec = loop.add_recurrence(x)
    nz = net.add_non_zero(rec.get_output(0))
    nz.name = "nz_in_loop"
    rec.set_input(1, net.add_identity(rec.get_output(0)).get_output(0))
    out = loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE)
    net.mark_output(out.get_output(0))
    with pytest.raises(trt.UnsupportedError, match="'nz_in_loop': data-dependent layers .* inside a loop"):
        b.build_serialized_network(net, b.create_builder_config())


def onnx_case(make):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    model, feeds = make(onnx)
    data = model.SerializeToString()
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    parser = trt.OnnxParser(net, LOGGER)
    assert parser.parse(data), [parser.get_error(i) for i in range(parser.num_errors)]
    engine = build(net, b)
    ctx = engine.create_execution_context()
    got = ctx.infer(feeds)
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    return got, want


def test_onnx_non_zero_vs_onnxruntime():
    def make(onnx):
        h = onnx.helper
        g = h.make_graph([h.make_node("NonZero", ["x"], ["y"])], "g",
                         [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3, 4])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.INT64, [2, None])])
        x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
        x[x < 0.2] = 0
        return h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), {"x": x}
    got, want = onnx_case(make)
    np.testing.assert_array_equal(got["y"], want[0])


@pytest.mark.parametrize("center", [0, 1])
def test_onnx_nms_vs_onnxruntime(center):
    def make(onnx):
        h = onnx.helper
        B, N, C = 2, 12, 2
        rng = np.random.default_rng(4 + center)
        xy = rng.random((B, N, 2)) * 6
        wh = rng.random((B, N, 2)) * 3 + 0.5
        boxes = (np.concatenate([xy, wh], -1) if center else np.concatenate([xy, xy + wh], -1)).astype(np.float32)
        scores = rng.random((B, C, N)).astype(np.float32)
        inits = [h.make_tensor("mo", onnx.TensorProto.INT64, [1], [3]),
                 h.make_tensor("iou", onnx.TensorProto.FLOAT, [1], [0.3]),
                 h.make_tensor("st", onnx.TensorProto.FLOAT, [1], [0.2])]
        node = h.make_node("NonMaxSuppression", ["boxes", "scores", "mo", "iou", "st"], ["sel"],
                           center_point_box=center)
        g = h.make_graph([node], "g",
                         [h.make_tensor_value_info("boxes", onnx.TensorProto.FLOAT, [B, N, 4]),
                          h.make_tensor_value_info("scores", onnx.TensorProto.FLOAT, [B, C, N])],
                         [h.make_tensor_value_info("sel", onnx.TensorProto.INT64, [None, 3])], inits)
        return h.make_model(g, opset_imports=[h.make_opsetid("", 11)]), {"boxes": boxes, "scores": scores}
    got, want = onnx_case(make)
    assert len(want[0]) > 0
    np.testing.assert_array_equal(got["sel"], want[0])


def test_onnx_compress_runtime_condition_vs_onnxruntime():
    def make(onnx):
        h = onnx.helper
        g = h.make_graph([h.make_node("Compress", ["x", "c"], ["y"], axis=1)], "g",
                         [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 5]),
                          h.make_tensor_value_info("c", onnx.TensorProto.BOOL, [4])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, None])])
        x = np.arange(10, dtype=np.float32).reshape(2, 5)
        return h.make_model(g, opset_imports=[h.make_opsetid("", 11)]), {"x": x, "c": np.array([1, 0, 1, 1], bool)}
    got, want = onnx_case(make)
    np.testing.assert_array_equal(got["y"], want[0])
