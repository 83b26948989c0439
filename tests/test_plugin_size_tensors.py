"""trtp.size_tensor (issue #12): tensorrt.plugin plugins whose output extents are known only once they have run
(TensorRT's NonZero-style plugins).  The outputs reach the user with their real shapes through infer() and
IOutputAllocator, with fixed and dynamic input shapes and through a serialized plan; misuse (opt / upper_bound
wrong, an impl claiming more than the bound, a view disagreeing with the size tensor) is a clear exception.
References: numpy."""
from typing import Tuple

import numpy as np
import pytest

import trtlite as trt
import trtlite.plugin as trtp

LOG = trt.Logger(trt.Logger.ERROR)
MODE = {"value": "ok"}  # how the misbehaving plugin misbehaves


@trtp.register("sztest::above")
def _above_desc(x: trtp.TensorDesc, thr: float) -> Tuple[trtp.TensorDesc, trtp.TensorDesc]:
    st = trtp.size_tensor(x.shape_expr.numel() // 2, x.shape_expr.numel())
    return trtp.from_shape_expr((st.expr(),), dtype=x.dtype), st


@trtp.impl("sztest::above")
def _above_impl(x: trtp.Tensor, thr: float, outputs, stream) -> None:
    a = np.asarray(x).reshape(-1)
    v = a[a > thr]
    np.asarray(outputs[0].aliased(v.shape))[...] = v
    np.asarray(outputs[1])[...] = v.size


@trtp.register("sztest::non_zero")
def _nz_desc(x: trtp.TensorDesc) -> Tuple[trtp.TensorDesc, trtp.TensorDesc]:
    ub = x.shape_expr[0] * x.shape_expr[1]
    st = trtp.size_tensor(ub // 2, ub)
    return trtp.from_shape_expr((st.expr(), 2), dtype=trt.int32), st


@trtp.impl("sztest::non_zero")
def _nz_impl(x: trtp.Tensor, outputs, stream) -> None:
    idx = np.argwhere(np.asarray(x) != 0).astype(np.int32)
    outputs[0].aliased(idx.shape).copy_(idx)  # TensorRT's sample writes the view with copy_
    outputs[1].copy_(np.array([idx.shape[0]]))


@trtp.register("sztest::columns")
def _cols_desc(x: trtp.TensorDesc, thr: float) -> Tuple[trtp.TensorDesc, trtp.TensorDesc, trtp.TensorDesc]:
    # the data-dependent dim in the middle: [R, count, 2], plus an ordinary output
    st = trtp.size_tensor(1, x.shape_expr[1])
    return trtp.from_shape_expr((x.shape_expr[0], st.expr(), 2), dtype=x.dtype), st, x.like()


@trtp.impl("sztest::columns")
def _cols_impl(x: trtp.Tensor, thr: float, outputs, stream) -> None:
    a = np.asarray(x)
    keep = np.flatnonzero(a.max(axis=0) > thr)
    r = np.stack([a[:, keep], -a[:, keep]], axis=-1)
    mode = MODE["value"]
    shape = list(r.shape)
    if mode == "too_many":
        shape[1] = a.shape[1] + 1
    view = outputs[0].aliased(shape)
    np.asarray(view)[...] = r if mode != "too_many" else 0
    count = keep.size
    if mode == "bad_count":
        count = a.shape[1] + 3
    elif mode == "disagree":
        count = keep.size + 1 if keep.size < a.shape[1] else keep.size - 1
    np.asarray(outputs[1])[...] = count
    np.asarray(outputs[2])[...] = a * 2


def _cols_ref(a, thr):
    keep = np.flatnonzero(a.max(axis=0) > thr)
    return np.stack([a[:, keep], -a[:, keep]], axis=-1)


def _net():
    b = trt.Builder(LOG)
    return b, b.create_network(0)


def _engine(b, n, cfg=None):
    plan = b.build_serialized_network(n, cfg or b.create_builder_config())
    assert plan is not None
    return trt.Runtime(LOG).deserialize_cuda_engine(plan)  # runtime plugins: recreated from the plan's fields


def _mark(n, layer, names):
    for j, nm in enumerate(names):
        if nm:
            layer.get_output(j).name = nm
            n.mark_output(layer.get_output(j))


@pytest.mark.parametrize("thr", [0.3, 5.0, -5.0])  # some, none, all elements kept
def test_threshold_plugin_fixed_shape(thr):
    b, n = _net()
    x = n.add_input("x", trt.float32, (3, 7))
    layer = n.add_plugin(trtp.op.sztest.above(x, thr=thr))
    assert layer.num_outputs == 2
    _mark(n, layer, ["y", "count"])
    assert n.get_output(0).shape == (-1,)  # data-dependent, as TensorRT reports it
    ctx = _engine(b, n).create_execution_context()
    rng = np.random.default_rng(5)
    for _ in range(3):  # the extent changes from run to run
        xv = rng.standard_normal((3, 7)).astype(np.float32)
        out = ctx.infer({"x": xv})
        ref = xv.reshape(-1)[xv.reshape(-1) > thr]
        np.testing.assert_array_equal(out["y"], ref)
        assert out["count"].dtype == np.int64 and int(out["count"]) == ref.size


def test_non_zero_plugin_dynamic_shapes_and_output_allocator():
    b, n = _net()
    x = n.add_input("x", trt.int32, (-1, -1))
    layer = n.add_plugin(trtp.op.sztest.non_zero(x))
    _mark(n, layer, ["idx"])
    cfg = b.create_builder_config()
    prof = b.create_optimization_profile()
    prof.set_shape("x", (1, 1), (4, 5), (9, 11))
    cfg.add_optimization_profile(prof)
    eng = _engine(b, n, cfg)
    ctx = eng.create_execution_context()

    class Alloc(trt.IOutputAllocator):
        def __init__(self):
            trt.IOutputAllocator.__init__(self)
            self.buf, self.shape = None, None

        def reallocate_output(self, name, memory, size, alignment):
            self.buf = np.zeros(size, np.uint8)
            return self.buf

        def notify_shape(self, name, shape):
            self.shape = tuple(shape)

    alloc = Alloc()
    ctx.set_output_allocator("idx", alloc)
    rng = np.random.default_rng(7)
    for shape in [(9, 11), (1, 1), (4, 5), (2, 3)]:
        xv = (rng.random(shape) < 0.4).astype(np.int32) * rng.integers(1, 9, shape, dtype=np.int32)
        assert ctx.set_input_shape("x", shape)
        ctx.set_tensor_address("x", xv.ctypes.data)
        assert ctx.execute_async_v3(0)
        ref = np.argwhere(xv != 0)
        assert alloc.shape == ref.shape
        got = alloc.buf[:ref.size * 4].view(np.int32).reshape(ref.shape)
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(ctx.infer({"x": xv})["idx"], ref)


def test_data_dependent_middle_dim_and_ordinary_output():
    b, n = _net()
    x = n.add_input("x", trt.float32, (4, 6))
    layer = n.add_plugin(trtp.op.sztest.columns(x, thr=0.8))
    assert layer.num_outputs == 3
    _mark(n, layer, ["y", None, "twice"])
    layer.name = "cols"  # forwarded to the plugin layer
    ctx = _engine(b, n).create_execution_context()
    rng = np.random.default_rng(9)
    MODE["value"] = "ok"
    for _ in range(4):
        xv = rng.standard_normal((4, 6)).astype(np.float32)
        out = ctx.infer({"x": xv})
        np.testing.assert_array_equal(out["y"], _cols_ref(xv, 0.8))
        np.testing.assert_array_equal(out["twice"], xv * 2)


@pytest.mark.parametrize("mode, match", [
    ("too_many", r"sztest::columns.*output 0: aliased\(\(4, 7, 2\)\): the output holds at most \(4, 6, 2\)"),
    ("bad_count", r"sztest::columns.*size tensor \(output 1\) holds 9, outside \[0, 6\]"),
    ("disagree", r"sztest::columns.*output 0 was written through aliased.*size tensor \(output 1\) that holds"),
])
def test_impl_misuse_is_a_clear_error(mode, match):
    b, n = _net()
    x = n.add_input("x", trt.float32, (4, 6))
    layer = n.add_plugin(trtp.op.sztest.columns(x, thr=0.8))
    _mark(n, layer, ["y"])
    ctx = _engine(b, n).create_execution_context()
    xv = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    MODE["value"] = mode
    try:
        with pytest.raises(trt.PluginError, match=match):
            ctx.infer({"x": xv})
    finally:
        MODE["value"] = "ok"
    np.testing.assert_array_equal(ctx.infer({"x": xv})["y"], _cols_ref(xv, 0.8))  # the context still works


def test_size_tensor_arguments_are_checked():
    with pytest.raises(ValueError, match="opt is 9; it must lie in \\[0, upper_bound = 4\\]"):
        trtp.size_tensor(9, 4)
    with pytest.raises(ValueError, match="dimension cannot be negative"):
        trtp.size_tensor(0, -1)
    with pytest.raises(TypeError, match="upper_bound must be an int or a shape expression"):
        trtp.size_tensor(1, 2.5)
    st = trtp.size_tensor(2, 8)
    assert st.expr().is_size_tensor and not trtp.ShapeExprs([3])[0].is_size_tensor
    assert st.dtype == trt.int64 and st.ndim == 0
    with pytest.raises(ValueError, match="arithmetic on it is not supported"):
        st.expr() * 2
    with pytest.raises(ValueError, match="only an output with a size-tensor dimension"):
        trtp.Tensor(np.zeros((2, 3), np.float32), trt.float32).aliased((3, 2))


@trtp.register("sztest::orphan")
def _orphan_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    st = trtp.size_tensor(1, 4)  # used, but not returned among the outputs
    return trtp.from_shape_expr((st.expr(),), dtype=x.dtype)


@trtp.impl("sztest::orphan")
def _orphan_impl(x, outputs, stream) -> None:
    pass


def test_size_expr_without_its_size_tensor_output_is_refused():
    b, n = _net()
    x = n.add_input("x", trt.float32, (4,))
    with pytest.raises(trt.PluginError, match="sztest::orphan.*output 0 dim 0 is a size tensor's expr\\(\\)"):
        n.add_plugin(trtp.op.sztest.orphan(x))


def test_onnx_node_of_a_size_tensor_plugin():
    """An ONNX node naming the plugin (the parser's plugin fallback, session 11: was refused) gets the same
    data-dependent outputs as network.add_plugin, through a plan."""
    from onnx import TensorProto, helper
    node = helper.make_node("above", ["x"], ["y", "c"], plugin_namespace="sztest", thr=0.5)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("c", TensorProto.INT64, None)])
    b, n = _net()
    parser = trt.OnnxParser(n, LOG)
    assert parser.parse(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]).SerializeToString()), \
        parser.get_error(0)
    ctx = _engine(b, n).create_execution_context()
    rng = np.random.default_rng(12)
    for _ in range(3):
        x = rng.standard_normal((2, 5)).astype(np.float32)
        out = ctx.infer({"x": x})
        ref = x.reshape(-1)[x.reshape(-1) > 0.5]
        np.testing.assert_array_equal(out["y"], ref)
        assert int(out["c"]) == ref.size