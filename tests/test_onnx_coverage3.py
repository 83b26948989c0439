"""ONNX operands given at run time (issue #12 (1)): DFT with a run-time axis.  References: numpy float64 FFT."""
import numpy as np
import pytest

from onnx_helpers import helper, make_model, trt_build

import trtlite as trt


def dft_model(shape, onesided=0):
    nodes = [helper.make_node("DFT", ["x", "", "axis"], ["y"], onesided=onesided)]
    return make_model(nodes, {"x": (shape, np.float32), "axis": ((), np.int64)}, {"y": None}, opset=20)


@pytest.mark.parametrize("axis", [1, 2, -2])
def test_dft_runtime_axis_against_numpy(axis):
    x = np.random.default_rng(5).standard_normal((2, 6, 6, 1)).astype(np.float32)
    eng, _ = trt_build(dft_model(x.shape))
    got = eng.create_execution_context().infer({"x": x, "axis": np.array(axis, np.int64)})["y"]
    ax = axis if axis >= 0 else axis + 4
    f = np.fft.fft(x[..., 0].astype(np.float64), axis=ax)
    np.testing.assert_allclose(got, np.stack([f.real, f.imag], -1), rtol=1e-4, atol=1e-4)


def test_dft_runtime_axis_value_outside_the_candidates_fails():
    # one-sided: axes 1 and 2 give different shapes, only the declared output's is built
    x = np.random.default_rng(6).standard_normal((1, 4, 5, 1)).astype(np.float32)
    m = dft_model(x.shape, onesided=1)
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info("y", 1, [1, 3, 5, 2]))
    eng, _ = trt_build(m)
    ctx = eng.create_execution_context()
    f = np.fft.rfft(x[..., 0].astype(np.float64), axis=1)
    np.testing.assert_allclose(ctx.infer({"x": x, "axis": np.array(1, np.int64)})["y"],
                               np.stack([f.real, f.imag], -1), rtol=1e-4, atol=1e-4)
    with pytest.raises(trt.Error, match="axis value must be one of"):
        ctx.infer({"x": x, "axis": np.array(2, np.int64)})


def test_onehot_runtime_depth_from_the_output_shape():
    nodes = [helper.make_node("OneHot", ["i", "depth", "v"], ["y"], axis=0)]
    m = make_model(nodes, {"i": ((3,), np.int64), "depth": ((), np.float32), "v": ((2,), np.float32)},
                   {"y": ((5, 3), np.float32)})
    eng, _ = trt_build(m)
    ctx = eng.create_execution_context()
    i = np.array([0, -1, 7], np.int64)
    got = ctx.infer({"i": i, "depth": np.array(5.0, np.float32), "v": np.array([2.0, 9.0], np.float32)})["y"]
    want = np.full((5, 3), 2.0, np.float32)
    want[0, 0] = want[4, 1] = 9.0  # -1 counts from the depth; 7 is out of range: all off
    np.testing.assert_array_equal(got, want)
    with pytest.raises(trt.Error, match="depth must be 5"):
        ctx.infer({"i": i, "depth": np.array(6.0, np.float32), "v": np.array([2.0, 9.0], np.float32)})


@pytest.mark.parametrize("mode,ctm,scales,out", [
    ("linear", "half_pixel", [1, 1, 0.6, 1.7], [1, 2, 3, 8]),
    ("cubic", "align_corners", [1, 1, 2.0, 0.8], [1, 2, 10, 4]),
    ("nearest", "asymmetric", [1, 1, 1.5, 0.5], [1, 2, 7, 2]),
])
def test_resize_runtime_scales_against_onnxruntime(mode, ctm, scales, out):
    from onnx_helpers import ort_run
    nodes = [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, coordinate_transformation_mode=ctm)]
    m = make_model(nodes, {"x": ((1, 2, 5, 5), np.float32), "scales": ((4,), np.float32)},
                   {"y": (tuple(out), np.float32)}, opset=13)
    x = np.random.default_rng(8).standard_normal((1, 2, 5, 5)).astype(np.float32)
    feeds = {"x": x, "scales": np.array(scales, np.float32)}
    eng, _ = trt_build(m)
    ctx = eng.create_execution_context()
    np.testing.assert_allclose(ctx.infer(feeds)["y"], ort_run(m, feeds)["y"], rtol=1e-4, atol=1e-5)
    bad = dict(feeds, scales=np.array([1, 1, 3.0, 3.0], np.float32))
    with pytest.raises(trt.Error, match="floor\\(input extent \\* scale\\) must equal"):
        ctx.infer(bad)


def np_unique(x, axis, sorted_):
    """numpy's unique, reordered by first occurrence when not sorted (ONNX's sorted=0)."""
    y, idx, inv, cnt = np.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx)
        remap = np.empty_like(order)
        remap[order] = np.arange(order.size)
        y, idx, cnt, inv = np.take(y, order, axis=0 if axis is None else axis), idx[order], cnt[order], remap[inv]
    return y, idx, inv, cnt


@pytest.mark.parametrize("axis,sorted_", [(None, 1), (None, 0), (1, 1), (-1, 1), (0, 0)])
def test_unique_against_numpy(axis, sorted_):
    rng = np.random.default_rng(9)
    x = rng.integers(0, 3, (4, 5, 2)).astype(np.float32)
    x[:, 3] = x[:, 1]  # repeated slices along axis 1
    kw = {"sorted": sorted_} if axis is None else {"sorted": sorted_, "axis": axis}
    nodes = [helper.make_node("Unique", ["x"], ["y", "i", "inv", "c"], **kw)]
    m = make_model(nodes, {"x": (x.shape, np.float32)},
                   {"y": None, "i": (None, np.int64), "inv": (None, np.int64), "c": (None, np.int64)}, opset=11)
    eng, _ = trt_build(m)
    got = eng.create_execution_context().infer({"x": x})
    y, idx, inv, cnt = np_unique(x, axis, sorted_)
    np.testing.assert_array_equal(got["y"], y)
    np.testing.assert_array_equal(got["i"], idx)
    np.testing.assert_array_equal(got["inv"], inv)
    np.testing.assert_array_equal(got["c"], cnt)


def tf_crop_linear_ref(x, roi, out, extrapolation):
    """float64 reference of ONNX's tf_crop_and_resize (linear) over the last two axes, from the operator's text."""
    y = x.astype(np.float64)
    outside = np.zeros(out, bool)
    for k, ax in enumerate((2, 3)):
        n_in, n_out = x.shape[ax], out[ax]
        st, en = roi[k], roi[k + 2]
        c = st * (n_in - 1) + np.arange(n_out) * (en - st) * (n_in - 1) / (n_out - 1)
        i0 = np.floor(c).astype(int)
        t = c - i0
        a = np.take(y, np.clip(i0, 0, n_in - 1), axis=ax)
        b = np.take(y, np.clip(i0 + 1, 0, n_in - 1), axis=ax)
        shape = [1, 1, 1, 1]
        shape[ax] = n_out
        y = a * (1 - t).reshape(shape) + b * t.reshape(shape)
        outside |= ((c < 0) | (c > n_in - 1)).reshape(shape)
    return np.where(outside, extrapolation, y)


def test_resize_tf_crop_and_resize_runtime_roi_against_float64():
    nodes = [helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode="linear", axes=[2, 3],
                              coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.0)]
    m = make_model(nodes, {"x": ((1, 2, 5, 5), np.float32), "roi": ((4,), np.float32), "sizes": ((2,), np.int64)},
                   {"y": ((1, 2, 3, 5), np.float32)}, opset=18)
    x = np.random.default_rng(10).standard_normal((1, 2, 5, 5)).astype(np.float32)
    roi = np.array([0.1, -0.2, 0.9, 1.1], np.float32)
    eng, _ = trt_build(m)
    got = eng.create_execution_context().infer({"x": x, "roi": roi, "sizes": np.array([3, 5], np.int64)})["y"]
    np.testing.assert_allclose(got, tf_crop_linear_ref(x, roi.astype(np.float64), (1, 2, 3, 5), 7.0),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kw,sizes,out", [
    ({"keep_aspect_ratio_policy": "not_larger"}, [3, 9], [1, 2, 3, 3]),
    ({"keep_aspect_ratio_policy": "not_smaller", "mode": "nearest"}, [3, 9], [1, 2, 9, 9]),
])
def test_resize_runtime_sizes_kept_aspect_ratio_against_onnxruntime(kw, sizes, out):
    from onnx_helpers import ort_run
    kw = dict({"mode": "linear", "axes": [2, 3]}, **kw)
    nodes = [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **kw)]
    m = make_model(nodes, {"x": ((1, 2, 5, 5), np.float32), "sizes": ((2,), np.int64)},
                   {"y": (tuple(out), np.float32)}, opset=18)
    x = np.random.default_rng(10).standard_normal((1, 2, 5, 5)).astype(np.float32)
    feeds = {"x": x, "sizes": np.array(sizes, np.int64)}
    eng, _ = trt_build(m)
    got = eng.create_execution_context().infer(feeds)["y"]
    np.testing.assert_allclose(got, ort_run(m, feeds)["y"], rtol=1e-4, atol=1e-5)


def test_range_runtime_float_values_against_numpy():
    nodes = [helper.make_node("Range", ["s", "l", "d"], ["y"])]
    m = make_model(nodes, {"s": ((), np.float32), "l": ((), np.float32), "d": ((), np.float32)},
                   {"y": ((4,), np.float32)}, opset=11)
    eng, _ = trt_build(m)
    ctx = eng.create_execution_context()
    f = {"s": np.array(1.5, np.float32), "l": np.array(-0.5, np.float32), "d": np.array(-0.6, np.float32)}
    np.testing.assert_allclose(ctx.infer(f)["y"], np.arange(1.5, -0.5, -0.6), rtol=1e-6, atol=1e-6)
    with pytest.raises(trt.Error, match="must be 4"):
        ctx.infer(dict(f, l=np.array(9.0, np.float32)))
