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


@pytest.mark.parametrize("case", sorted(CASES))
def test_maxpool_indices_with_a_dynamic_batch(case):
    """A run-time batch: padding taps read their window's first inside tap, the (n, c) offsets come from a running
    sum; one engine (batch 1..4) run at batches 1, 4 and 3 against onnxruntime, ties included (rounded inputs)."""
    import trtlite as trt
    from onnx_helpers import parse
    rng = np.random.default_rng(42)
    attrs = CASES[case]
    nsp = len(attrs["kernel_shape"])
    rest = (3,) + tuple(int(v) for v in rng.integers(5, 9, nsp))
    m = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)], {"x": ("N",) + rest},
                   {"y": None, "i": (None, I64)}, opset=12)
    builder, network, _ = parse(m)
    config = builder.create_builder_config()
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1,) + rest, (3,) + rest, (4,) + rest)
    config.add_optimization_profile(prof)
    eng = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(builder.build_serialized_network(network, config))
    ctx = eng.create_execution_context()
    for n in (1, 4, 3):
        x = rng.standard_normal((n,) + rest).astype(np.float32)
        if n == 3:
            x = np.round(x, 1)  # ties: the first maximum in scan order, as onnxruntime
        got = ctx.infer({"x": x})
        want = ort_run(m, {"x": x})
        np.testing.assert_array_equal(got["y"], want["y"])
        np.testing.assert_array_equal(got["i"].astype(I64), want["i"])


def test_maxpool_indices_with_dynamic_channels_is_refused_naming_it():
    from onnx_helpers import ParseFailed, parse
    m = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], name="pool1")],
                   {"x": ("N", "C", 4, 4)}, {"y": None, "i": (None, I64)}, opset=12)
    with pytest.raises(ParseFailed, match=r"pool1.*MaxPool's Indices output with dynamic channel or spatial dims"):
        parse(m)
