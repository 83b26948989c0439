"""TensorRT 10 layers (issue #12): scatter (ELEMENT, ND, trtlite's reduction extension), one-hot, cumulative,
reverse sequence, squeeze/unsqueeze and grid sample, against numpy float64 references written here and PyTorch's
grid_sample; each on random shapes, with both kernel modes (conftest), plus the error paths that name the layer."""
import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close


def const_i32(net, values):
    a = np.asarray(values, dtype=np.int32)
    return net.add_constant(a.shape, a).get_output(0)


def rand_shape(rng, rank, lo=1, hi=5):
    return tuple(int(v) for v in rng.integers(lo, hi + 1, size=rank))


# ------------------------------------------------------------------------------------------------------------
# scatter
# ------------------------------------------------------------------------------------------------------------

RED_NP = {trt.ScatterReduction.NONE: None, trt.ScatterReduction.SUM: np.add, trt.ScatterReduction.PROD: np.multiply,
          trt.ScatterReduction.MAX: np.maximum, trt.ScatterReduction.MIN: np.minimum}


def scatter_elements_ref(data, idx, upd, axis, red):
    out = data.astype(np.float64).copy()
    f = RED_NP[red]
    for p in np.ndindex(*idx.shape):
        t = list(p)
        v = int(idx[p])
        t[axis] = v + data.shape[axis] if v < 0 else v
        t = tuple(t)
        out[t] = upd[p] if f is None else f(out[t], upd[p])
    return out


def scatter_nd_ref(data, idx, upd, red):
    out = data.astype(np.float64).copy()
    f = RED_NP[red]
    k = idx.shape[-1]
    for j in np.ndindex(*idx.shape[:-1]):
        t = tuple(int(v) + data.shape[a] if v < 0 else int(v) for a, v in enumerate(idx[j][:k]))
        out[t] = upd[j] if f is None else f(out[t], upd[j])
    return out


@pytest.mark.parametrize("red", list(trt.ScatterReduction))
@pytest.mark.parametrize("seed", range(3))
def test_scatter_element_random(seed, red, rng, build_and_run):
    rank = int(rng.integers(1, 5))
    ds = rand_shape(rng, rank)
    axis = int(rng.integers(-rank, rank))
    ax = axis % rank
    ishape = tuple(int(rng.integers(1, d + 1)) if i != ax else int(rng.integers(1, 6)) for i, d in enumerate(ds))
    data = rng.standard_normal(ds).astype(np.float32)
    upd = rng.standard_normal(ishape).astype(np.float32)
    if red == trt.ScatterReduction.NONE:  # distinct targets along the axis: the result does not depend on order
        idx = np.zeros(ishape, np.int32)
        for p in np.ndindex(*[s for i, s in enumerate(ishape) if i != ax]):
            n = ishape[ax]
            if n > ds[ax]:
                n = ds[ax]
            perm = rng.permutation(ds[ax])[:ishape[ax]] if ishape[ax] <= ds[ax] else rng.integers(0, ds[ax], ishape[ax])
            sl = list(p)
            sl.insert(ax, slice(None))
            idx[tuple(sl)] = perm
        if ishape[ax] > ds[ax]:
            pytest.skip("duplicate targets are order-dependent without a reduction")
    else:
        idx = rng.integers(-ds[ax], ds[ax], ishape).astype(np.int32)

    def make(net, d, i, u):
        layer = net.add_scatter(d, i, u, trt.ScatterMode.ELEMENT)
        layer.axis = axis
        layer.reduction = red
        assert layer.type == trt.LayerType.SCATTER and isinstance(layer, trt.IScatterLayer)
        return layer

    out = build_and_run(make, {"d": data, "i": idx, "u": upd})
    assert out.shape == ds
    assert_close(out, scatter_elements_ref(data, idx, upd, ax, red))


@pytest.mark.parametrize("red", [trt.ScatterReduction.NONE, trt.ScatterReduction.SUM, trt.ScatterReduction.MAX])
@pytest.mark.parametrize("seed", range(3))
def test_scatter_nd_random(seed, red, rng, build_and_run):
    rank = int(rng.integers(1, 5))
    ds = rand_shape(rng, rank)
    k = int(rng.integers(1, rank + 1))
    nupd = int(np.prod(ds[:k]))
    lead = (int(rng.integers(1, min(nupd, 4) + 1)),)
    if red == trt.ScatterReduction.NONE:  # distinct positions
        flat = rng.permutation(nupd)[:lead[0]]
        idx = np.stack(np.unravel_index(flat, ds[:k]), -1).astype(np.int32).reshape(lead + (k,))
    else:
        idx = np.stack([rng.integers(-d, d, lead) for d in ds[:k]], -1).astype(np.int32)
    upd = rng.standard_normal(lead + ds[k:]).astype(np.float32)
    data = rng.standard_normal(ds).astype(np.float32)

    def make(net, d, i, u):
        layer = net.add_scatter(d, i, u, mode=trt.ScatterMode.ND)
        layer.reduction = red
        return layer

    out = build_and_run(make, {"d": data, "i": idx, "u": upd})
    assert_close(out, scatter_nd_ref(data, idx, upd, red))


def test_scatter_int32_and_duplicates_last_wins(build_and_run):
    data = np.arange(6, dtype=np.int32).reshape(2, 3)
    idx = np.array([[0, 0, 2]], np.int32)
    upd = np.array([[10, 20, 30]], np.int32)

    def make(net, d, i, u):
        layer = net.add_scatter(d, i, u, trt.ScatterMode.ELEMENT)
        layer.axis = 1
        return layer

    out = build_and_run(make, {"d": data, "i": idx, "u": upd})
    np.testing.assert_array_equal(out, [[20, 1, 30], [3, 4, 5]])


def test_scatter_index_out_of_range_names_layer(build):
    data = np.zeros((2, 3), np.float32)
    idx = np.array([[3]], np.int32)
    upd = np.ones((1, 1), np.float32)

    def make(net, d, i, u):
        layer = net.add_scatter(d, i, u, trt.ScatterMode.ELEMENT)
        layer.axis = 1
        layer.name = "my_scatter"
        return layer

    r = build(make, {"d": data, "i": idx, "u": upd})
    with pytest.raises(trt.Error, match="my_scatter.*out of range"):
        r.run({"d": data, "i": idx, "u": upd})


def test_scatter_bad_shapes_name_layer(expect_layer_error):
    def make(net):
        d = net.add_input("d", trt.float32, (2, 3))
        i = net.add_input("i", trt.int32, (2, 3, 1))
        u = net.add_input("u", trt.float32, (2, 3))
        layer = net.add_scatter(d, i, u, trt.ScatterMode.ELEMENT)
        layer.name = "sc"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.Error, "sc")


# ------------------------------------------------------------------------------------------------------------
# one-hot
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_one_hot_random(seed, rng, build_and_run):
    rank = int(rng.integers(0, 4))
    ishape = rand_shape(rng, rank)
    depth = int(rng.integers(1, 7))
    axis = int(rng.integers(-rank - 1, rank + 1))
    idx = rng.integers(-depth - 1, depth + 2, ishape).astype(np.int32)  # includes out-of-range values
    values = np.array([rng.standard_normal(), rng.standard_normal()], np.float32)

    def make(net, i, v):
        layer = net.add_one_hot(i, v, const_i32(net, depth), axis)
        assert layer.axis == axis and layer.depth == depth
        return layer

    out = build_and_run(make, {"i": idx, "v": values})
    wrapped = np.where(idx < 0, idx + depth, idx)
    hot = np.arange(depth).reshape((depth,) + (1,) * rank) == wrapped[None]
    ref = np.moveaxis(np.where(hot, values[1], values[0]), 0, axis % (rank + 1))
    assert out.shape == ref.shape
    np.testing.assert_array_equal(out, ref)


def test_one_hot_depth_must_be_constant(new_network):
    n = new_network()
    i = n.network.add_input("i", trt.int32, (3,))
    v = n.network.add_input("v", trt.float32, (2,))
    d = n.network.add_input("d", trt.int32, ())
    with pytest.raises(trt.Error, match="add_one_hot.*depth.*constant"):
        n.network.add_one_hot(i, v, d, -1)


# ------------------------------------------------------------------------------------------------------------
# cumulative
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dt", [np.float32, np.int32])
@pytest.mark.parametrize("axis_input", ["constant", "runtime"])
def test_cumulative_random(exclusive, reverse, dt, axis_input, rng, build_and_run):
    rank = int(rng.integers(1, 5))
    shape = rand_shape(rng, rank, 1, 6)
    axis = int(rng.integers(-rank, rank))
    x = (rng.standard_normal(shape) * 10).astype(dt)
    inputs = {"x": x}
    if axis_input == "runtime":  # trtlite extension: an axis fed at run time (TensorRT needs a constant)
        inputs["a"] = np.array(axis, np.int32)

    def make(net, t, a=None):
        layer = net.add_cumulative(t, a if a is not None else const_i32(net, axis), trt.CumulativeOperation.SUM,
                                   exclusive, reverse)
        assert layer.exclusive == exclusive and layer.reverse == reverse and layer.type == trt.LayerType.CUMULATIVE
        return layer

    out = build_and_run(make, inputs)
    xf = x.astype(np.float64)
    if reverse:
        xf = np.flip(xf, axis)
    ref = np.cumsum(xf, axis)
    if exclusive:
        ref = ref - xf
    if reverse:
        ref = np.flip(ref, axis)
    if dt == np.int32:
        np.testing.assert_array_equal(out, ref.astype(np.int32))
    else:
        assert_close(out, ref)


def test_cumulative_runtime_axis_out_of_range_names_layer(build):
    x = np.zeros((2, 3), np.float32)

    def make(net, t, a):
        layer = net.add_cumulative(t, a, trt.CumulativeOperation.SUM, False, False)
        layer.name = "cum"
        return layer

    r = build(make, {"x": x, "a": np.array(0, np.int32)})
    np.testing.assert_array_equal(r.run({"x": x, "a": np.array(-2, np.int32)}), x)
    with pytest.raises(trt.Error, match="cum.*axis 2"):
        r.run({"x": x, "a": np.array(2, np.int32)})


# ------------------------------------------------------------------------------------------------------------
# reverse sequence
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_reverse_sequence_random(seed, rng, build_and_run):
    rank = int(rng.integers(2, 5))
    shape = rand_shape(rng, rank, 1, 5)
    ba, sa = (int(v) for v in rng.permutation(rank)[:2])
    x = rng.standard_normal(shape).astype(np.float32)
    lens = rng.integers(0, shape[sa] + 1, shape[ba]).astype(np.int32)

    def make(net, t, s):
        layer = net.add_reverse_sequence(t, s)
        layer.batch_axis = ba
        layer.sequence_axis = sa
        return layer

    out = build_and_run(make, {"x": x, "s": lens})
    ref = x.copy()
    for b in range(shape[ba]):
        n = int(lens[b])
        src = np.take(x, [b], axis=ba)
        rev = np.concatenate([np.flip(np.take(src, range(n), axis=sa), sa), np.take(src, range(n, shape[sa]), axis=sa)],
                             axis=sa)
        idx = [slice(None)] * rank
        idx[ba] = slice(b, b + 1)
        ref[tuple(idx)] = rev
    np.testing.assert_array_equal(out, ref)


def test_reverse_sequence_bad_length_names_layer(build):
    x = np.zeros((3, 2), np.float32)
    s = np.array([1, 4], np.int32)

    def make(net, t, sl):
        layer = net.add_reverse_sequence(t, sl)
        layer.name = "revseq"
        return layer

    r = build(make, {"x": x, "s": s})
    with pytest.raises(trt.Error, match="revseq.*sequence_lens"):
        r.run({"x": x, "s": s})


# ------------------------------------------------------------------------------------------------------------
# squeeze / unsqueeze
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_squeeze_unsqueeze_random(seed, rng, build_and_run):
    rank = int(rng.integers(1, 5))
    shape = list(rand_shape(rng, rank, 2, 4))
    ones = sorted(int(a) for a in rng.choice(rank, int(rng.integers(1, rank + 1)), replace=False))
    for a in ones:
        shape[a] = 1
    shape = tuple(shape)
    axes = [a - rank if rng.integers(2) else a for a in ones]
    ins = sorted(int(a) for a in rng.choice(rank + 2, 2, replace=False))
    x = rng.standard_normal(shape).astype(np.float32)

    def make(net, t):
        sq = net.add_squeeze(t, const_i32(net, axes))
        assert sq.type == trt.LayerType.SQUEEZE
        un = net.add_unsqueeze(t, const_i32(net, ins))
        assert un.type == trt.LayerType.UNSQUEEZE
        return [sq, un]

    sq, un = build_and_run(make, {"x": x})
    np.testing.assert_array_equal(sq, np.squeeze(x, tuple(ones)))
    np.testing.assert_array_equal(un, np.expand_dims(x, tuple(ins)))


def test_squeeze_of_non_unit_dim_names_layer(expect_layer_error):
    def make(net):
        x = net.add_input("x", trt.float32, (2, 3))
        layer = net.add_squeeze(x, const_i32(net, [1]))
        layer.name = "sq"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.Error, ("sq", "[Squeeze]"))


# ------------------------------------------------------------------------------------------------------------
# grid sample (vs PyTorch's grid_sample, an independent implementation)
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("interp", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_vs_torch(interp, pad, align, rng, build_and_run):
    torch = pytest.importorskip("torch")
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    h, w, ho, wo = (int(v) for v in rng.integers(2, 6, 4))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    g = rng.uniform(-1.3, 1.3, (n, ho, wo, 2)).astype(np.float32)
    mode = {"nearest": trt.InterpolationMode.NEAREST, "bilinear": trt.InterpolationMode.LINEAR,
            "bicubic": trt.InterpolationMode.CUBIC}[interp]
    smode = {"zeros": trt.SampleMode.FILL, "border": trt.SampleMode.CLAMP, "reflection": trt.SampleMode.REFLECT}[pad]

    def make(net, t, gr):
        layer = net.add_grid_sample(t, gr)
        layer.interpolation_mode = mode
        layer.align_corners = align
        layer.sample_mode = smode
        return layer

    out = build_and_run(make, {"x": x, "g": g})
    if interp == "bicubic" and pad == "border":
        # ONNX's definition clamps the coordinate, then each tap (its reference implementation does); PyTorch and
        # onnxruntime clamp only the taps.  trtlite follows the ONNX definition: compare with its reference.
        from onnx import helper
        from onnx.reference import ReferenceEvaluator
        node = helper.make_node("GridSample", ["x", "g"], ["y"], mode="cubic", padding_mode="border",
                                align_corners=int(align))
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, x.shape),
                                                helper.make_tensor_value_info("g", 1, g.shape)],
                                  [helper.make_tensor_value_info("y", 1, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
        ref = ReferenceEvaluator(model).run(None, {"x": x.astype(np.float64).astype(np.float32), "g": g})[0]
        assert_close(out, ref, atol=1e-4)
        return
    ref = torch.nn.functional.grid_sample(torch.from_numpy(x).double(), torch.from_numpy(g).double(), mode=interp,
                                          padding_mode=pad, align_corners=align).numpy()
    if interp == "nearest":  # a coordinate exactly halfway may round either way: compare where unambiguous
        assert out.shape == ref.shape
        assert np.mean(np.isclose(out, ref, atol=1e-5)) > 0.95
    else:
        assert_close(out, ref, atol=1e-4)


def test_grid_sample_defaults_and_bad_grid(expect_layer_error, new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (1, 2, 3, 3))
    g = n.network.add_input("g", trt.float32, (1, 4, 4, 2))
    layer = n.network.add_grid_sample(x, g)
    assert layer.interpolation_mode == trt.InterpolationMode.LINEAR
    assert layer.sample_mode == trt.SampleMode.FILL and layer.align_corners is False
    assert tuple(layer.get_output(0).shape) == (1, 2, 4, 4)

    def make(net):
        x = net.add_input("x", trt.float32, (1, 2, 3, 3))
        g = net.add_input("g", trt.float32, (1, 4, 4, 3))
        layer = net.add_grid_sample(x, g)
        layer.name = "gs"
        net.mark_output(layer.get_output(0))
    expect_layer_error(make, trt.Error, ("gs", "[GridSample]"))


# ------------------------------------------------------------------------------------------------------------
# ONNX importers onto these layers: what the former decompositions refused (dynamic shapes, a run-time axis)
# ------------------------------------------------------------------------------------------------------------

def _onnx_model(node, inputs, opset=18):
    from onnx import helper
    g = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", 1, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("op,attrs", [("ScatterElements", dict(axis=1, reduction="add")),
                                      ("ScatterElements", dict(axis=-1)),
                                      ("ScatterND", dict(reduction="max")), ("ScatterND", {})])
def test_onnx_scatter_dynamic_shapes_vs_onnxruntime(op, attrs):
    from onnx import TensorProto, helper
    from onnx_helpers import ort_run, trt_run
    rng = np.random.default_rng(12)
    node = helper.make_node(op, ["d", "i", "u"], ["y"], **attrs)
    vi = helper.make_tensor_value_info
    if op == "ScatterElements":
        m = _onnx_model(node, [vi("d", TensorProto.FLOAT, ["n", 5]), vi("i", TensorProto.INT64, ["n", 2]),
                               vi("u", TensorProto.FLOAT, ["n", 2])])
        feeds_for = lambda n: {"d": rng.standard_normal((n, 5)).astype(np.float32),  # noqa: E731
                               "i": np.stack([rng.permutation(5)[:2] for _ in range(n)]).astype(np.int64),
                               "u": rng.standard_normal((n, 2)).astype(np.float32)}
    else:
        m = _onnx_model(node, [vi("d", TensorProto.FLOAT, [4, "c"]), vi("i", TensorProto.INT64, [2, 1]),
                               vi("u", TensorProto.FLOAT, [2, "c"])])
        feeds_for = lambda c: {"d": rng.standard_normal((4, c)).astype(np.float32),  # noqa: E731
                               "i": np.array([[3], [-4]], np.int64), "u": rng.standard_normal((2, c)).astype(np.float32)}
    feeds = feeds_for(3)
    got, engine = trt_run(m, feeds)
    np.testing.assert_allclose(got["y"], ort_run(m, feeds)["y"], rtol=1e-6, atol=1e-6)
    feeds = feeds_for(5)  # another shape within the profile, same engine
    got, _ = trt_run(m, feeds, engine=engine)
    np.testing.assert_allclose(got["y"], ort_run(m, feeds)["y"], rtol=1e-6, atol=1e-6)


def test_onnx_cumsum_axis_fed_at_run_time_vs_onnxruntime():
    from onnx import TensorProto, helper
    from onnx_helpers import ort_run, trt_run
    rng = np.random.default_rng(13)
    node = helper.make_node("CumSum", ["x", "a"], ["y"], exclusive=1, reverse=1)
    vi = helper.make_tensor_value_info
    m = _onnx_model(node, [vi("x", TensorProto.FLOAT, [3, 4, 2]), vi("a", TensorProto.INT32, [])], 14)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    engine = None
    for axis in (0, 1, -1):
        feeds = {"x": x, "a": np.array(axis, np.int32)}
        got, engine = trt_run(m, feeds, engine=engine)
        np.testing.assert_allclose(got["y"], ort_run(m, feeds)["y"], rtol=1e-5, atol=1e-5)


def test_onnx_reverse_sequence_dynamic_vs_onnxruntime():
    from onnx import TensorProto, helper
    from onnx_helpers import ort_run, trt_run
    rng = np.random.default_rng(14)
    node = helper.make_node("ReverseSequence", ["x", "s"], ["y"], batch_axis=0, time_axis=1)
    vi = helper.make_tensor_value_info
    m = _onnx_model(node, [vi("x", TensorProto.FLOAT, ["b", "t", 3]), vi("s", TensorProto.INT64, ["b"])], 10)
    feeds = {"x": rng.standard_normal((4, 5, 3)).astype(np.float32), "s": np.array([1, 5, 0, 3], np.int64)}
    got, _ = trt_run(m, feeds)
    np.testing.assert_array_equal(got["y"], ort_run(m, feeds)["y"])


# ------------------------------------------------------------------------------------------------------------
# einsum (vs numpy.einsum in float64)
# ------------------------------------------------------------------------------------------------------------

EINSUM_CASES = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),   # batched matmul
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),  # attention scores
    ("ij->ji", [(3, 5)]),                        # transpose
    ("ii->", [(4, 4)]),                          # trace
    ("ii->i", [(4, 4)]),                         # diagonal
    ("bii->b", [(3, 4, 4)]),                     # batched trace
    ("ij->i", [(3, 5)]),                         # reduction
    ("ijk", [(2, 3, 4)]),                        # implicit output: identity
    ("ij,jk", [(3, 4), (4, 2)]),                 # implicit output: matmul
    ("i,j->ij", [(3,), (4,)]),                   # outer product
    ("ij,ij->", [(3, 4), (3, 4)]),               # dot
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]),  # chain of three
    ("bi,bi->b", [(1, 4), (3, 4)]),              # a size-1 letter broadcasts
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum_vs_numpy(eq, shapes, rng, build_and_run):
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    names = ["x%d" % i for i in range(len(xs))]

    def make(net, *ts):
        layer = net.add_einsum(list(ts), eq)
        assert layer.equation == eq and layer.type == trt.LayerType.EINSUM and isinstance(layer, trt.IEinsumLayer)
        return layer

    out = build_and_run(make, dict(zip(names, xs)))
    ref = np.einsum(eq, *[x.astype(np.float64) for x in xs])
    assert out.shape == ref.shape
    assert_close(out, ref)


def test_einsum_bad_equations_name_layer(expect_layer_error, new_network):
    n = new_network()
    a = n.network.add_input("a", trt.float32, (2, 3))
    b = n.network.add_input("b", trt.float32, (3, 4))
    for eq, msg in [("ij,jk->ik,", "not a letter"), ("ij,jk->il", "in no input"), ("ij,jk,kl->il", "terms"),
                    ("...ij,jk->ik", "ellipsis"), ("ijk,jk->ik", "dims"), ("ij,ik->jk", "size")]:
        with pytest.raises(trt.Error, match=msg):
            n.network.add_einsum([a, b], eq)
    layer = n.network.add_einsum([a, b], "ij,jk->ik")
    with pytest.raises(trt.Error, match="at most 127"):
        layer.equation = "i" * 200
    with pytest.raises(TypeError):
        layer.equation = 3


# ------------------------------------------------------------------------------------------------------------
# assertion
# ------------------------------------------------------------------------------------------------------------

def test_assertion_fails_execution_with_its_message(build):
    x = np.array([1.0, 2.0, 3.0], np.float32)

    def make(net, t):
        zero = net.add_constant((1,), np.zeros(1, np.float32)).get_output(0)
        cond = net.add_elementwise(t, zero, trt.ElementWiseOperation.GREATER).get_output(0)
        a = net.add_assertion(cond, "x must be positive")
        a.name = "check_x"
        assert a.num_outputs == 0 and a.message == "x must be positive" and a.type == trt.LayerType.ASSERTION
        return net.add_unary(t, trt.UnaryOperation.SQRT)

    r = build(make, {"x": x})
    np.testing.assert_allclose(r.run({"x": x}), np.sqrt(x), rtol=1e-6)
    with pytest.raises(trt.Error, match="check_x.*assertion failed: x must be positive"):
        r.run({"x": np.array([1.0, -2.0, 3.0], np.float32)})


def test_assertion_needs_bool_and_message_limit(new_network):
    n = new_network()
    x = n.network.add_input("x", trt.float32, (3,))
    with pytest.raises(trt.Error, match="BOOL"):
        n.network.add_assertion(x, "m")
    c = n.network.add_input("c", trt.bool, (3,))
    layer = n.network.add_assertion(c, "ok")
    with pytest.raises(trt.Error, match="at most 255"):
        layer.message = "m" * 300
