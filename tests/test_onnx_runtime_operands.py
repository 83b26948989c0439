"""ONNX ops whose operands are graph inputs fed at run time (issue #12): Reduce* axes, TopK K, Squeeze/Unsqueeze
axes, Split sizes, Pad constant_value and integer Range -- parsed into layers reading shape tensors (or, for Pad's
value, an execution tensor), run and compared with numpy."""
import numpy as np
import pytest

import trtlite as trt

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP, helper as h  # noqa: E402

LOGGER = trt.Logger(trt.Logger.ERROR)
_NP2TP = {np.dtype(np.float32): TP.FLOAT, np.dtype(np.int64): TP.INT64, np.dtype(np.int32): TP.INT32}


def run_model(nodes, feeds, outputs, opset=18):
    """Builds a one-graph model over `feeds` (name -> array; int64 scalars/vectors become shape inputs), parses it,
    gives shape inputs their fed values in the profile and runs it; returns {output: array}."""
    ins = [h.make_tensor_value_info(n, _NP2TP[a.dtype], list(a.shape)) for n, a in feeds.items()]
    outs = [h.make_tensor_value_info(n, TP.UNDEFINED, None) for n in outputs]
    model = h.make_model(h.make_graph(nodes, "g", ins, outs), opset_imports=[h.make_opsetid("", opset)])
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    parser = trt.OnnxParser(net, LOGGER)
    assert parser.parse(model.SerializeToString()), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    cfg = b.create_builder_config()
    prof = b.create_optimization_profile()
    shape_inputs = []
    for i in range(net.num_inputs):
        t = net.get_input(i)
        a = feeds[t.name]
        if t.is_shape_tensor:
            v = tuple(int(x) for x in a.reshape(-1))
            prof.set_shape_input(t.name, v, v, v)
            shape_inputs.append(t.name)
        else:
            prof.set_shape(t.name, a.shape, a.shape, a.shape)
    cfg.add_optimization_profile(prof)
    eng = trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, cfg))
    ctx = eng.create_execution_context()
    keep = []
    for name, a in feeds.items():
        buf = np.array(a.astype(np.int32) if a.dtype == np.int64 else a, copy=True, order="C")
        keep.append(buf)
        if name not in shape_inputs:
            ctx.set_input_shape(name, buf.shape)
        ctx.set_tensor_address(name, buf)
    res = {}
    for name in outputs:
        res[name] = np.zeros(tuple(ctx.get_tensor_shape(name)), trt.nptype(eng.get_tensor_dtype(name)))
        ctx.set_tensor_address(name, res[name])
    assert ctx.execute_async_v3(0)
    return res


X = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("op,ref", [("ReduceSum", lambda x, ax, k: x.sum(ax, keepdims=k)),
                                    ("ReduceLogSumExp", lambda x, ax, k: np.log(np.exp(x).sum(ax, keepdims=k))),
                                    ("ReduceL2", lambda x, ax, k: np.sqrt((x * x).sum(ax, keepdims=k)))])
@pytest.mark.parametrize("keep", [0, 1])
def test_reduce_axes_fed_at_run_time(op, ref, keep):
    axes = np.array([2, -3], np.int64)
    out = run_model([h.make_node(op, ["x", "axes"], ["y"], keepdims=keep)], {"x": X, "axes": axes}, ["y"])["y"]
    want = ref(X.astype(np.float64), (2, 0), bool(keep))
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_topk_k_fed_at_run_time():
    res = run_model([h.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1)], {"x": X, "k": np.array([2], np.int64)},
                    ["v", "i"])
    order = np.argsort(-X, axis=-1, kind="stable")[..., :2]
    np.testing.assert_array_equal(res["i"], order)
    np.testing.assert_array_equal(res["v"], np.take_along_axis(X, order, -1))


def test_unsqueeze_then_squeeze_axes_fed_at_run_time():
    res = run_model([h.make_node("Unsqueeze", ["x", "ua"], ["u"]), h.make_node("Squeeze", ["u", "sa"], ["y"])],
                    {"x": X, "ua": np.array([1, -1], np.int64), "sa": np.array([4], np.int64)}, ["u", "y"])
    np.testing.assert_array_equal(res["u"], X[:, None, :, :, None])
    np.testing.assert_array_equal(res["y"], X[:, None])


def test_split_sizes_fed_at_run_time_and_bad_sum():
    feeds = {"x": X, "s": np.array([1, 2], np.int64)}
    res = run_model([h.make_node("Split", ["x", "s"], ["a", "b"], axis=1)], feeds, ["a", "b"])
    np.testing.assert_array_equal(res["a"], X[:, :1])
    np.testing.assert_array_equal(res["b"], X[:, 1:])
    with pytest.raises(trt.StateError, match="assertion failed: Split: the split sizes must sum"):
        run_model([h.make_node("Split", ["x", "s"], ["a", "b"], axis=1)], {"x": X, "s": np.array([1, 1], np.int64)},
                  ["a", "b"])


def test_pad_constant_value_fed_at_run_time():
    feeds = {"x": X, "pads": np.array([0, 1, 2, 0, 0, 1], np.int64), "v": np.array(2.5, np.float32)}
    out = run_model([h.make_node("Pad", ["x", "pads", "v"], ["y"])], feeds, ["y"])["y"]
    np.testing.assert_array_equal(out, np.pad(X, ((0, 0), (1, 0), (2, 1)), constant_values=2.5))


@pytest.mark.parametrize("start,limit,delta", [(3, 17, 4), (10, -3, -3), (5, 5, 1), (5, 2, 1)])
def test_integer_range_fed_at_run_time(start, limit, delta):
    feeds = {"s": np.array(start, np.int64), "l": np.array(limit, np.int64), "d": np.array(delta, np.int64)}
    out = run_model([h.make_node("Range", ["s", "l", "d"], ["y"])], feeds, ["y"])["y"]
    np.testing.assert_array_equal(out, np.arange(start, limit, delta))


def _dynamic_split_engine(opset, attrs, n_out):
    """Split of x [2, D] along its dynamic axis 1 into `n_out` outputs with no split sizes (equal parts, or
    opset 18's num_outputs with a smaller last part): the sizes are computed at run time from D."""
    outs = ["y%d" % i for i in range(n_out)]
    node = h.make_node("Split", ["x"], outs, axis=1, **attrs)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", TP.FLOAT, [2, "D"])],
                     [h.make_tensor_value_info(o, TP.FLOAT, None) for o in outs])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    parser = trt.OnnxParser(net, LOGGER)
    assert parser.parse(model.SerializeToString()), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    cfg = b.create_builder_config()
    prof = b.create_optimization_profile()
    prof.set_shape("x", (2, 1), (2, 7), (2, 16))
    cfg.add_optimization_profile(prof)
    return trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, cfg)), outs


def _run_split(eng, outs, x):
    ctx = eng.create_execution_context()
    ctx.set_input_shape("x", x.shape)
    ctx.set_tensor_address("x", x)
    res = [np.full(tuple(ctx.get_tensor_shape(o)), np.nan, np.float32) for o in outs]
    for o, r in zip(outs, res):
        ctx.set_tensor_address(o, r)
    assert ctx.execute_async_v3(0)
    return res


@pytest.mark.parametrize("opset,attrs,n_out", [(13, {}, 3), (18, {"num_outputs": 3}, 3), (18, {"num_outputs": 4}, 4),
                                               (11, {}, 2)])
def test_split_of_a_dynamic_axis_into_equal_parts(opset, attrs, n_out):
    eng, outs = _dynamic_split_engine(opset, attrs, n_out)
    rng = np.random.default_rng(1)
    for d in range(1, 17):
        x = rng.standard_normal((2, d)).astype(np.float32)
        if "num_outputs" in attrs:
            chunk = -(-d // n_out)
            sizes = [chunk] * (n_out - 1) + [d - chunk * (n_out - 1)]
        else:
            sizes = [d // n_out] * n_out if d % n_out == 0 else None
        if sizes is None or sizes[-1] < 0:
            with pytest.raises(trt.StateError, match="Split: axis 1 of 'x' is"):
                _run_split(eng, outs, x)
            continue
        got = _run_split(eng, outs, x)
        want = np.split(x, np.cumsum(sizes)[:-1], axis=1)
        assert [g.shape for g in got] == [w.shape for w in want], d
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
