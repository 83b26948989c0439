"""MaxPool's Indices output (trtlite/onnx/ops_pool.py: _maxpool_indices) against onnxruntime: 1-D to 3-D, pads,
strides, dilations, ceil_mode, SAME padding, storage_order 1, and MaxPool -> MaxUnpool as SegNet-style decoders use
it, on random shapes (random values, so no ties)."""
import numpy as np
import pytest

from onnx_helpers import helper, make_model, ort_run, trt_build

I64 = np.int64

CASES = {
    "2d_pads_strides": dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "2d_dilated": dict(kernel_shape=[2, 3], dilations=[2, 1], strides=[1, 2]),
    "2d_ceil": dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    "2d_same_upper_colmajor": dict(kernel_shape=[3, 2], auto_pad="SAME_UPPER", storage_order=1),
    "1d": dict(kernel_shape=[3], strides=[2], pads=[1, 0]),
    "3d": dict(kernel_shape=[2, 2, 2], strides=[2, 1, 2]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_maxpool_indices_match_onnxruntime(case, rng=np.random.default_rng(40)):
    attrs = CASES[case]
    nsp = len(attrs["kernel_shape"])
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) + tuple(int(v) for v in rng.integers(5, 10, nsp))
    m = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)], {"x": shape},
                   {"y": None, "i": (None, I64)}, opset=12)
    x = rng.standard_normal(shape).astype(np.float32)
    eng, _ = trt_build(m, {"x": x})
    got = eng.create_execution_context().infer({"x": x})
    want = ort_run(m, {"x": x})
    np.testing.assert_array_equal(got["y"], want["y"])
    np.testing.assert_array_equal(got["i"].astype(I64), want["i"])


def test_maxpool_then_maxunpool():
    rng = np.random.default_rng(41)
    nodes = [helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Relu", ["y"], ["r"]),
             helper.make_node("MaxUnpool", ["r", "i"], ["u"], kernel_shape=[2, 2], strides=[2, 2])]
    m = make_model(nodes, {"x": (2, 3, 6, 8)}, {"u": None}, opset=12)
    x = rng.standard_normal((2, 3, 6, 8)).astype(np.float32)
    eng, _ = trt_build(m, {"x": x})
    np.testing.assert_array_equal(eng.create_execution_context().infer({"x": x})["u"], ort_run(m, {"x": x})["u"])


def test_maxpool_indices_with_a_dynamic_batch_is_refused_naming_it():
    from onnx_helpers import ParseFailed, parse
    m = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], name="pool1")],
                   {"x": ("N", 3, 4, 4)}, {"y": None, "i": (None, I64)}, opset=12)
    with pytest.raises(ParseFailed, match=r"pool1.*MaxPool's Indices output with dynamic dims"):
        parse(m)
