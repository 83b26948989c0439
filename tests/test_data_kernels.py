"""topk.select, select.bcast, parametric_relu.simd, cast.simd and grid_sample.tables (csrc/kernels/x86/topk.c,
select.c, parametric_relu.c, cast.c, grid_sample.c) at layer level: one-layer networks built at the default level (the optimized kernel,
checked in the inspector) and at level 0 (the reference kernels), both equal to numpy exactly -- TopK's indices with
ties, NaN and -0 included (grid sampling: the two levels' bits equal).  The kernel-level comparisons with the reference on random shapes are
tests/c/test_kernels_data.c (tests/test_kernels_data_c.py)."""
import ctypes
import ctypes.util
import json

import numpy as np
import pytest

import trtlite as trt

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


def kernels_of(engine):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return [l["kernel"] for l in info["layers"]]


def run_levels(make, inputs, kernel):
    """{level: outputs} for the default level (whose engine must run `kernel`) and level 0."""
    res = {}
    for level in (None, 0):
        builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
        net = builder.create_network(EXPLICIT)
        ts = [net.add_input(n, trt.nptype_to_dtype(a.dtype) if hasattr(trt, "nptype_to_dtype") else DT[a.dtype.str],
                            a.shape) for n, a in inputs.items()]
        outs = make(net, *ts)
        for i, o in enumerate(outs):
            o.name = "y%d" % i
            net.mark_output(o)
        config = builder.create_builder_config()
        config.avg_timing_iterations = 0
        if level is not None:
            config.builder_optimization_level = level
        engine = builder.build_engine(net, config)
        ks = kernels_of(engine)
        kernels = kernel if isinstance(kernel, tuple) else (kernel,)  # a tuple: any of them
        if level is None:
            assert any(k in ks for k in kernels), ks
        else:
            assert not any(k in ks for k in kernels), ks
        res[level] = engine.create_execution_context().infer(dict(inputs))
    return res


DT = {"<f4": trt.float32, "<f2": trt.float16, "<i4": trt.int32, "|b1": trt.bool, "|u1": trt.uint8, "|i1": trt.int8,
      "<i8": trt.int64}


def topk_numpy(x, k, axis, largest):
    """Best first; NaN the largest value; equal values (-0 == +0) by lower index."""
    xm = np.moveaxis(x, axis, -1)
    flat = xm.reshape(-1, xm.shape[-1])
    vals = np.empty((flat.shape[0], k), x.dtype)
    idx = np.empty((flat.shape[0], k), np.int32)
    for r, row in enumerate(flat):
        def key(i):
            v = row[i]
            nan = bool(np.isnan(v)) if x.dtype.kind == "f" else False
            if largest:
                return (0 if nan else 1, 0 if nan else -float(v), i)
            return (1 if nan else 0, 0 if nan else float(v), i)
        order = sorted(range(len(row)), key=key)[:k]
        vals[r] = row[order]
        idx[r] = order
    shape = xm.shape[:-1] + (k,)
    return np.moveaxis(vals.reshape(shape), -1, axis), np.moveaxis(idx.reshape(shape), -1, axis)


@pytest.mark.parametrize("shape,axis,k", [((3, 1000), 1, 5), ((2, 37, 6), 1, 37), ((40, 9), 0, 1), ((4, 700), 1, 700),
                                          ((2, 3, 300), 2, 100)])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_topk_matches_numpy(shape, axis, k, largest, dtype):
    rng = np.random.default_rng(abs(hash((shape, axis, k, largest))) % 2**32)
    x = rng.integers(-4, 5, shape).astype(dtype)  # many ties
    if dtype == np.float32:
        x[rng.random(shape) < 0.1] = np.nan
        x[rng.random(shape) < 0.05] = np.inf
        x[rng.random(shape) < 0.05] = -np.inf
        x[(x == 0) & (rng.random(shape) < 0.5)] = -0.0
    op = trt.TopKOperation.MAX if largest else trt.TopKOperation.MIN
    res = run_levels(lambda net, t: [net.add_topk(t, op, k, 1 << axis).get_output(i) for i in range(2)], {"x": x},
                     "topk.select")
    want_v, want_i = topk_numpy(x, k, axis, largest)
    for out in res.values():
        np.testing.assert_array_equal(out["y1"], want_i)
        assert out["y0"].tobytes() == want_v.tobytes()  # -0 and NaN as the input had them


@pytest.mark.parametrize("cshape,tshape,eshape", [((2, 1, 9, 9), (2, 4, 9, 9), (1, 1, 1, 1)),
                                                  ((1, 1, 33, 33), (1, 1, 1, 1), (2, 3, 33, 33)),
                                                  ((2, 1, 1, 130), (2, 3, 7, 130), (2, 3, 7, 130)),
                                                  ((50003,), (50003,), (50003,))])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16, np.int64, np.uint8])
def test_select_matches_numpy(cshape, tshape, eshape, dtype):
    rng = np.random.default_rng(7)
    c = rng.random(cshape) < 0.5
    t = (rng.standard_normal(tshape) * 50).astype(dtype)
    e = (rng.standard_normal(eshape) * 50).astype(dtype)
    res = run_levels(lambda net, ct, tt, et: [net.add_select(ct, tt, et).get_output(0)], {"c": c, "t": t, "e": e},
                     "select.bcast")
    for out in res.values():
        assert out["y0"].tobytes() == np.where(c, t, e).tobytes()


@pytest.mark.parametrize("xshape,sshape", [((2, 16, 9, 11), (1, 16, 1, 1)), ((1, 5, 7, 33), (1, 1, 1, 33)),
                                           ((3, 70001), (1, 1)), ((2, 3, 4), (2, 3, 4))])
def test_parametric_relu_matches_numpy(xshape, sshape):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(xshape).astype(np.float32)
    x.flat[::17] = -0.0
    x.flat[::23] = np.inf
    x.flat[::29] = -np.inf
    x.flat[::31] = np.nan
    s = rng.standard_normal(sshape).astype(np.float32)

    def make(net, xt):
        st = net.add_constant(sshape, trt.Weights(s)).get_output(0)
        return [net.add_parametric_relu(xt, st).get_output(0)]
    res = run_levels(make, {"x": x}, "parametric_relu.simd")
    want = np.where(x >= 0, x, s * x).astype(np.float32)
    for out in res.values():
        assert out["y0"].tobytes() == want.tobytes()


@pytest.mark.parametrize("src,dst", [(np.float32, np.float16), (np.float16, np.float32), (np.float32, np.int32),
                                     (np.int32, np.float32), (np.bool_, np.float32), (np.uint8, np.float32),
                                     (np.int64, np.int32), (np.int32, np.int64), (np.float32, np.bool_)])
def test_cast_matches_numpy(src, dst):
    rng = np.random.default_rng(5)
    n = 40003
    if np.dtype(src).kind == "f":
        x = (rng.standard_normal(n) * 1000).astype(src)
        x[::101] = 0.5
        x[::103] = -2.5
        x[::107] = 0
        if src == np.float32:
            x[::109] = 1e5  # past half's range: inf
    elif src == np.bool_:
        x = rng.random(n) < 0.5
    else:
        x = rng.integers(np.iinfo(src).min if src != np.int64 else -2**40, np.iinfo(src).max if src != np.int64
                         else 2**40, n).astype(src)
    res = run_levels(lambda net, t: [net.add_cast(t, DT[np.dtype(dst).str]).get_output(0)], {"x": x}, "cast.simd")
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(dst)
    for out in res.values():
        np.testing.assert_array_equal(out["y0"], want)


@pytest.mark.parametrize("mode", [trt.InterpolationMode.NEAREST, trt.InterpolationMode.LINEAR,
                                  trt.InterpolationMode.CUBIC])
@pytest.mark.parametrize("pad", [trt.SampleMode.FILL, trt.SampleMode.CLAMP, trt.SampleMode.REFLECT])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_matches_reference_bits(mode, pad, align):
    """grid_sample.tables gives the reference kernel's bits (NaN grid coordinates and edges included)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 9, 13)).astype(np.float32)
    g = (rng.random((2, 17, 19, 2)) * 2.6 - 1.3).astype(np.float32)
    g.flat[::37] = np.nan
    g.flat[::41] = 1.0

    def make(net, xt, gt):
        layer = net.add_grid_sample(xt, gt)
        layer.interpolation_mode = mode
        layer.sample_mode = pad
        layer.align_corners = align
        return [layer.get_output(0)]
    res = run_levels(make, {"x": x, "g": g}, "grid_sample.tables")
    assert res[None]["y0"].tobytes() == res[0]["y0"].tobytes()
    assert np.isnan(res[None]["y0"]).any() and np.isfinite(res[None]["y0"]).mean() > 0.5


# ---- session 22 (s22-cov): slice.steps and gather.index ----------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float16, np.bool_, np.uint8])
@pytest.mark.parametrize("form", ["flip_w", "flip_cw", "expand_w", "expand_hs", "step3"])
def test_slice_steps_matches_numpy(dtype, form):
    """Flips (negative steps), Expand along the last dim (step 0) and strided steps of every element size on
    slice.steps (Expand of [N,1,1,S], last step 1: slice.rows); level 0 (the reference) and numpy give the same
    array."""
    rng = np.random.default_rng(11)
    src = {"flip_w": (2, 3, 17, 37), "flip_cw": (2, 5, 9, 35), "expand_w": (1, 16, 7, 1), "expand_hs": (3, 1, 1, 67),
           "step3": (2, 9, 70)}[form]
    x = (rng.standard_normal(src) * 50).astype(dtype) if dtype != np.bool_ else rng.random(src) < 0.5

    def make(net, t):
        if form == "flip_w":
            return [net.add_slice(t, (0, 0, 0, 36), src, (1, 1, 1, -1)).get_output(0)]
        if form == "flip_cw":
            return [net.add_slice(t, (0, 4, 0, 34), src, (1, -1, 1, -1)).get_output(0)]
        if form == "expand_w":
            return [net.add_slice(t, (0, 0, 0, 0), (2, 16, 7, 41), (0, 1, 1, 0)).get_output(0)]
        if form == "expand_hs":
            return [net.add_slice(t, (0, 0, 0, 0), (3, 4, 9, 67), (1, 0, 0, 1)).get_output(0)]
        return [net.add_slice(t, (0, 8, 1), (2, 3, 23), (1, -3, 3)).get_output(0)]
    # a last step of 1 is slice.rows' form (every type), the others slice.steps'
    res = run_levels(make, {"x": x}, "slice.rows" if form == "expand_hs" else "slice.steps")
    want = {"flip_w": lambda: x[..., ::-1], "flip_cw": lambda: x[:, ::-1, :, ::-1],
            "expand_w": lambda: np.broadcast_to(x, (2, 16, 7, 41)), "expand_hs": lambda: np.broadcast_to(x, (3, 4, 9, 67)),
            "step3": lambda: x[:, 8::-3, 1::3]}[form]()
    for out in res.values():
        assert out["y0"].dtype == want.dtype and out["y0"].tobytes() == np.ascontiguousarray(want).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float16, np.bool_])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_elements_matches_numpy(dtype, axis):
    rng = np.random.default_rng(12 + axis)
    x = (rng.standard_normal((4, 50, 37)) * 50).astype(dtype) if dtype != np.bool_ else rng.random((4, 50, 37)) < 0.5
    ishape = [3, 40, 37]
    ishape[axis] = 61
    idx = rng.integers(-x.shape[axis], x.shape[axis], ishape).astype(np.int32)

    def make(net, xt, it):
        layer = net.add_gather(xt, it, axis)
        layer.mode = trt.GatherMode.ELEMENT
        return [layer.get_output(0)]
    res = run_levels(make, {"x": x, "i": idx}, "gather.index")
    xs = x[tuple(slice(0, n) if a != axis else slice(None) for a, n in enumerate(ishape))]
    want = np.take_along_axis(xs, np.where(idx < 0, idx + x.shape[axis], idx), axis)
    for out in res.values():
        assert out["y0"].tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
@pytest.mark.parametrize("batch", [0, 1])
def test_gather_nd_matches_numpy(dtype, batch):
    rng = np.random.default_rng(13)
    x = (rng.standard_normal((3, 40, 9, 5)) * 50).astype(dtype)
    if batch:
        idx = np.stack([rng.integers(-40, 40, (3, 70)), rng.integers(0, 9, (3, 70))], -1).astype(np.int64)
        want = np.stack([x[b][idx[b, :, 0], idx[b, :, 1]] for b in range(3)])
    else:
        idx = np.stack([rng.integers(0, 3, (70,)), rng.integers(-40, 40, (70,))], -1).astype(np.int32)
        want = x[idx[:, 0], idx[:, 1]]

    def make(net, xt, it):
        layer = net.add_gather_v2(xt, it, trt.GatherMode.ND)
        layer.num_elementwise_dims = batch
        return [layer.get_output(0)]
    res = run_levels(make, {"x": x, "i": idx}, "gather.index")
    for out in res.values():
        assert out["y0"].tobytes() == want.tobytes()


@pytest.mark.parametrize("mode", ["ELEMENT", "ND"])
def test_gather_index_bad_index_is_a_clear_error(mode):
    """An index out of range is a Python exception naming the layer and the index, at both levels."""
    x = np.arange(60, dtype=np.float32).reshape(3, 20)
    idx = np.zeros((3, 20), np.int32) if mode == "ELEMENT" else np.zeros((5, 2), np.int32)
    idx.flat[6] = 25 if mode == "ELEMENT" else 3  # ND: the first component, of the dim of 3
    for level in (None, 0):
        builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
        net = builder.create_network(EXPLICIT)
        layer = net.add_gather_v2(net.add_input("x", trt.float32, x.shape), net.add_input("i", trt.int32, idx.shape),
                                  getattr(trt.GatherMode, mode))
        layer.axis = 1 if mode == "ELEMENT" else 0
        layer.name = "picky_gather"
        net.mark_output(layer.get_output(0))
        config = builder.create_builder_config()
        if level is not None:
            config.builder_optimization_level = level
        engine = builder.build_engine(net, config)
        if level is None:
            assert "gather.index" in kernels_of(engine)
        with pytest.raises(Exception, match="picky_gather.*out of range"):
            engine.create_execution_context().infer({"x": x, "i": idx})


@pytest.mark.parametrize("e", [2.0, 0.5, 0.0, 3.0, -1.0])
def test_pow_by_one_exponent_matches_numpy(e):
    """elementwise.pow vs the reference (level 0) bit for bit and numpy's float64 pow rounded to float32 (the
    reference's formula), specials included."""
    rng = np.random.default_rng(14)
    x = (rng.standard_normal((2, 7, 129)) * 30).astype(np.float32)
    x.flat[::97] = np.nan
    x.flat[::89] = -0.0
    x.flat[::83] = -np.inf
    x.flat[::79] = np.inf
    x.flat[::73] = 1e-40

    def make(net, t):
        c = net.add_constant((1, 1, 1), trt.Weights(np.array([e], np.float32))).get_output(0)
        return [net.add_elementwise(t, c, trt.ElementWiseOperation.POW).get_output(0)]
    res = run_levels(make, {"x": x}, "elementwise.pow")
    libm = ctypes.CDLL(ctypes.util.find_library("m"))  # C's pow: numpy's power takes sqrt for 0.5, whose
    libm.pow.restype = ctypes.c_double                  # pow(-inf, 0.5) is NaN, C's +inf
    libm.pow.argtypes = (ctypes.c_double, ctypes.c_double)

    def cpow(v):
        return libm.pow(v, e)
    with np.errstate(all="ignore"):
        want = np.array([cpow(float(v)) for v in x.ravel()]).astype(np.float32).reshape(x.shape)
    assert res[None]["y0"].tobytes() == res[0]["y0"].tobytes()
    np.testing.assert_array_equal(res[None]["y0"], want)


@pytest.mark.parametrize("op", ["EQUAL", "GREATER", "LESS", "AND", "OR", "XOR"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.bool_])
def test_compare_matches_numpy(op, dtype):
    logic = op in ("AND", "OR", "XOR")
    if logic != (dtype == np.bool_):
        pytest.skip("comparisons take numbers, logic ops BOOL")
    rng = np.random.default_rng(15)
    if dtype == np.bool_:
        a, b = rng.random((3, 1, 40, 67)) < 0.5, rng.random((1, 4, 40, 1)) < 0.5
    else:
        a, b = rng.integers(-3, 4, (3, 1, 40, 67)).astype(dtype), rng.integers(-3, 4, (1, 4, 40, 1)).astype(dtype)
        if dtype == np.float32:
            a.flat[::7] = np.nan
            b.flat[::5] = -0.0
    res = run_levels(lambda net, ta, tb: [net.add_elementwise(ta, tb, getattr(trt.ElementWiseOperation, op))
                                          .get_output(0)], {"a": a, "b": b}, "elementwise.compare")
    want = {"EQUAL": np.equal, "GREATER": np.greater, "LESS": np.less, "AND": np.logical_and, "OR": np.logical_or,
            "XOR": np.logical_xor}[op](a, b)
    for out in res.values():
        np.testing.assert_array_equal(out["y0"], want)


@pytest.mark.parametrize("ptype", ["MAX", "AVERAGE"])
@pytest.mark.parametrize("window,stride,pad", [((3, 3, 3), (2, 2, 2), (1, 1, 1)), ((1, 3, 3), (1, 2, 2), (0, 1, 1)),
                                               ((2, 2, 2), (2, 2, 2), (0, 0, 0))])
def test_pooling_3d_matches_reference_bits(ptype, window, stride, pad):
    """pooling.3d gives the reference's bits (level 0), +-0 ties and NaN included; MAX also equals numpy."""
    rng = np.random.default_rng(16)
    x = rng.standard_normal((2, 3, 6, 17, 19)).astype(np.float32)
    x[x < -0.5] = 0.0
    x[(x > 0) & (x < 0.3)] = -0.0
    x.flat[::211] = np.nan

    def make(net, t):
        layer = net.add_pooling_nd(t, getattr(trt.PoolingType, ptype), window)
        layer.stride_nd = stride
        layer.padding_nd = pad
        return [layer.get_output(0)]
    res = run_levels(make, {"x": x}, "pooling.3d")
    assert res[None]["y0"].tobytes() == res[0]["y0"].tobytes()
    if ptype == "MAX":
        xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad], constant_values=-np.inf)
        y = res[None]["y0"]
        for idx in np.ndindex(*y.shape[2:]):
            sl = tuple(slice(i * s, i * s + k) for i, s, k in zip(idx, stride, window))
            want = xp[(slice(None), slice(None)) + sl].reshape(2, 3, -1).max(-1)
            np.testing.assert_array_equal(y[(slice(None), slice(None)) + idx], want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("excl,rev", [(False, False), (True, False), (False, True), (True, True)])
def test_cumsum_matches_numpy(dtype, axis, excl, rev):
    """cumulative.scan vs level 0 bit for bit and numpy (float64 running sums rounded to float32, as the reference)."""
    rng = np.random.default_rng(17)
    x = (rng.standard_normal((3, 37, 41)) * 1000).astype(dtype)

    def make(net, t):
        ax = net.add_constant((), trt.Weights(np.array(axis, np.int32))).get_output(0)
        return [net.add_cumulative(t, ax, trt.CumulativeOperation.SUM, excl, rev).get_output(0)]
    res = run_levels(make, {"x": x}, "cumulative.scan")
    xs = np.flip(x, axis) if rev else x
    acc = np.cumsum(xs.astype(np.float64 if dtype == np.float32 else dtype), axis)
    if excl:
        acc = np.concatenate([np.zeros_like(np.take(acc, [0], axis)), np.delete(acc, -1, axis)], axis)
    want = (np.flip(acc, axis) if rev else acc).astype(dtype)
    assert res[None]["y0"].tobytes() == res[0]["y0"].tobytes()
    np.testing.assert_array_equal(res[None]["y0"], want)
