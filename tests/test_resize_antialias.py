"""ONNX Resize-18 antialias=1 (linear and cubic downsampling; issue #12): scales / sizes known while parsing
(a constant resampling matrix per axis) and given at run time (weighted gathers), against onnx's own reference
evaluator (onnx.reference) in float64."""
import numpy as np
import pytest

import trtlite as trt

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

LOGGER = trt.Logger(trt.Logger.ERROR)


def model(xshape, yshape, mode, ctm, scales=None, sizes=None, runtime=False, axes=None, excl=0):
    inits, ins = [], [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)]
    name, val = ("scales", np.array(scales, np.float32)) if scales is not None else ("sizes", np.array(sizes, np.int64))
    if runtime:
        ins.append(helper.make_tensor_value_info(name, TensorProto.FLOAT if scales is not None else TensorProto.INT64,
                                                 [len(val)]))
    else:
        inits.append(numpy_helper.from_array(val, name))
    extra = {"axes": axes} if axes is not None else {}
    node = helper.make_node("Resize", ["x", "", "scales" if scales is not None else "", "sizes" if sizes is not None
                                       else ""], ["y"], mode=mode, antialias=1, coordinate_transformation_mode=ctm,
                            exclude_outside=excl, **extra)
    g = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, yshape)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), name, val


def run_trt(m, feed):
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    p = trt.OnnxParser(net, LOGGER)
    assert p.parse(m.SerializeToString()), [p.get_error(i).desc() for i in range(p.num_errors)]
    cfg = b.create_builder_config()
    cfg.avg_timing_iterations = 0
    eng = trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, cfg))
    return eng.create_execution_context().infer(feed)["y"]


CASES = [  # xshape, mode, ctm, scales / sizes, axes, exclude_outside
    ((1, 1, 9, 7), "linear", "half_pixel", dict(scales=[1, 1, 0.5, 0.6]), None, 0),
    ((1, 2, 10, 8), "cubic", "half_pixel", dict(sizes=[1, 2, 3, 5]), None, 0),
    ((2, 11, 6), "cubic", "align_corners", dict(scales=[0.35, 1.5]), [1, 2], 1),
    ((1, 1, 12, 5), "linear", "asymmetric", dict(sizes=[4, 5]), [2, 3], 0),
    ((1, 3, 8, 8), "cubic", "pytorch_half_pixel", dict(scales=[1, 1, 0.25, 0.75]), None, 1),
    ((1, 1, 9, 9), "linear", "half_pixel_symmetric", dict(scales=[1, 1, 0.45, 0.8]), None, 0),
    ((13,), "cubic", "half_pixel", dict(sizes=[4]), None, 0),
]


@pytest.mark.parametrize("runtime", [False, True], ids=["parse_time", "run_time"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "%s_%s_%d" % (c[1], c[2], len(c[0])))
def test_antialias_matches_onnx_reference(case, runtime):
    xshape, mode, ctm, sv, axes, excl = case
    rng = np.random.default_rng(len(xshape) * 7 + xshape[-1])
    x = rng.standard_normal(xshape).astype(np.float32)
    m0, name, val = model(xshape, None, mode, ctm, axes=axes, excl=excl, **sv)
    want = ReferenceEvaluator(m0).run(None, {"x": x.astype(np.float64).astype(np.float32)})[0]
    m, name, val = model(xshape, list(want.shape), mode, ctm, runtime=runtime, axes=axes, excl=excl, **sv)
    feed = {"x": x}
    if runtime:
        feed[name] = val
    got = run_trt(m, feed)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_antialias_refusals_name_the_node():
    m, _, _ = model((1, 1, 8, 8), [1, 1, 4, 4], "linear", "tf_crop_and_resize", scales=[1, 1, 0.5, 0.5])
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    p = trt.OnnxParser(net, LOGGER)
    assert not p.parse(m.SerializeToString())
    assert "antialias=1 and coordinate_transformation_mode 'tf_crop_and_resize'" in p.get_error(0).desc()
