"""onnx's shape inference runs in a forked child (trtlite/onnx/isolated.py): a model on which it crashes the
process (the fuzzer found one: regressions/onnx/onnx_shape_inference_segfault.onnx) or never returns costs the
parse its symbolic dims, never the process."""
import os
import signal
import time

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import trtlite as trt  # noqa: E402
from trtlite.onnx import isolated  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def _dynamic_model():
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Shape", ["r"], ["s"]),
                           helper.make_node("Reshape", ["r", "s"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_inference_result_comes_back_from_the_child():
    out = isolated.infer_shapes(_dynamic_model(), data_prop=True)
    assert out is not None
    shapes = {vi.name: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
              for vi in out.graph.value_info}
    assert shapes["r"] == ["N", 3]


def test_a_crash_in_the_child_is_none(monkeypatch):
    from onnx import shape_inference
    monkeypatch.setattr(shape_inference, "infer_shapes", lambda *a, **k: os.kill(os.getpid(), signal.SIGSEGV))
    assert isolated.infer_shapes(_dynamic_model(), data_prop=True) is None


def test_a_hang_in_the_child_is_killed(monkeypatch):
    from onnx import shape_inference
    monkeypatch.setattr(shape_inference, "infer_shapes", lambda *a, **k: time.sleep(60))
    t = time.monotonic()
    assert isolated.infer_shapes(_dynamic_model(), data_prop=True, timeout=1.0) is None
    assert time.monotonic() - t < 10


def test_parse_survives_shape_inference_crashing(monkeypatch):
    """The parse goes on without symbolic dims and the network still runs right."""
    from onnx import shape_inference
    monkeypatch.setattr(shape_inference, "infer_shapes", lambda *a, **k: os.kill(os.getpid(), signal.SIGSEGV))
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = b.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    p = trt.OnnxParser(net, trt.Logger(trt.Logger.ERROR))
    assert p.parse(_dynamic_model().SerializeToString()), p.get_error(0)
    cfg = b.create_builder_config()
    prof = b.create_optimization_profile()
    prof.set_shape("x", (1, 3), (2, 3), (4, 3))
    cfg.add_optimization_profile(prof)
    e = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(b.build_serialized_network(net, cfg))
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.testing.assert_array_equal(e.create_execution_context().infer({"x": x})["y"], np.maximum(x, 0))


def test_the_fuzzers_segfaulting_model_parses_without_crashing():
    data = open(os.path.join(HERE, "fuzz", "regressions", "onnx", "onnx_shape_inference_segfault.onnx"), "rb").read()
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = b.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    p = trt.OnnxParser(net, trt.Logger(trt.Logger.ERROR))
    assert not p.parse(data)  # malformed: a clear parser error, and this process is still alive
    assert p.num_errors >= 1 and "RegexFullMatch" in str(p.get_error(0))
