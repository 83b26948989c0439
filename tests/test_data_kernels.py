"""topk.select, select.bcast, parametric_relu.simd, cast.simd and grid_sample.tables (csrc/kernels/x86/topk.c,
select.c, parametric_relu.c, cast.c, grid_sample.c) at layer level: one-layer networks built at the default level (the optimized kernel,
checked in the inspector) and at level 0 (the reference kernels), both equal to numpy exactly -- TopK's indices with
ties, NaN and -0 included (grid sampling: the two levels' bits equal).  The kernel-level comparisons with the reference on random shapes are
tests/c/test_kernels_data.c (tests/test_kernels_data_c.py)."""
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
        if level is None:
            assert kernel in ks, ks
        else:
            assert kernel not in ks, ks
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
