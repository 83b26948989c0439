"""Refit by ONNX initializer name (issue #12 (5)): after trt.OnnxParser, ``Refitter.set_named_weights(
"conv1.weight", ...)`` as TensorRT names a parsed engine's weights; checked against onnxruntime running the model
with the new weights."""
import numpy as np
import pytest

from onnx_helpers import helper, make_model, numpy_helper, ort_run

import trtlite as trt

LOGGER = trt.Logger(trt.Logger.ERROR)


def model(w1, b1, w2):
    nodes = [helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["h"], pads=[1, 1, 1, 1], name="c1"),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Conv", ["r", "conv2.weight"], ["y"], name="c2")]
    return make_model(nodes, {"x": (1, 2, 6, 6)}, {"y": None},
                      {"conv1.weight": w1, "conv1.bias": b1, "conv2.weight": w2})


def weights(seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((3, 2, 3, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32),
            rng.standard_normal((4, 3, 1, 1)).astype(np.float32))


@pytest.fixture(scope="module")
def plan():
    """A refittable plan of the model with weights(1), parsed and built once for the module."""
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    parser = trt.OnnxParser(net, LOGGER)
    assert parser.parse(model(*weights(1)).SerializeToString())
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.REFIT)
    return bytes(b.build_serialized_network(net, cfg))


def test_refit_by_initializer_names_matches_onnxruntime(plan):
    old, new = weights(1), weights(2)
    engine = trt.Runtime(LOGGER).deserialize_cuda_engine(plan)
    x = np.random.default_rng(3).standard_normal((1, 2, 6, 6)).astype(np.float32)
    refitter = trt.Refitter(engine, LOGGER)
    assert refitter.get_weights_prototype("conv1.weight").size == 54
    for name, arr in zip(["conv1.weight", "conv1.bias", "conv2.weight"], new):
        assert refitter.set_named_weights(name, arr)
    assert refitter.refit_cuda_engine()
    got = engine.create_execution_context().infer({"x": x})["y"]
    want = ort_run(model(*new), {"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert not np.allclose(want, ort_run(model(*old), {"x": x})["y"], atol=1e-2)  # the refit changed something
    with pytest.raises(ValueError, match="nor the name of an ONNX initializer"):
        refitter.set_named_weights("conv3.weight", new[0])
    with pytest.raises(trt.InvalidArgumentError, match="layer .c1. KERNEL weights: 5 values"):
        refitter.set_named_weights("conv1.weight", np.zeros(5, np.float32))


def test_refit_names_survive_the_plan(plan, monkeypatch):
    """The initializer names are stored in the plan (version 7): a deserialized engine, in a process that never
    parsed the model (the parser's in-process record cleared), refits by them."""
    from trtlite import refit
    new = weights(2)
    monkeypatch.setattr(refit, "_ONNX_WEIGHT_NAMES", {})
    engine = trt.Runtime(LOGGER).deserialize_cuda_engine(plan)
    engine = trt.Runtime(LOGGER).deserialize_cuda_engine(engine.serialize())  # and written again
    refitter = trt.Refitter(engine, LOGGER)
    assert {"conv1.weight", "conv1.bias", "conv2.weight"} <= set(refitter.get_all_weights())
    assert refitter.get_missing_weights() == []
    for name, arr in zip(["conv1.weight", "conv1.bias", "conv2.weight"], new):
        assert refitter.set_named_weights(name, arr)
    assert refitter.refit_cuda_engine()
    x = np.random.default_rng(3).standard_normal((1, 2, 6, 6)).astype(np.float32)
    got = engine.create_execution_context().infer({"x": x})["y"]
    np.testing.assert_allclose(got, ort_run(model(*new), {"x": x})["y"], rtol=1e-4, atol=1e-4)
