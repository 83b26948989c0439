"""Refit of Swin's shifted-window attention (issue #12): fuse_attention folds the relative position bias and the
window mask into one new constant, which refitting either initializer cannot reach, so a BuilderFlag.REFIT build
leaves the shifted-window pattern unfused (its bias and mask stay the constants given) and both refit by their
ONNX names; the refitted engine matches onnxruntime on the model with the new initializers.  Without REFIT the
pattern still fuses into one attention step."""
import json

import numpy as np
import pytest

import trtlite as trt

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
oh = pytest.importorskip("onnx_helpers")
from onnx import numpy_helper  # noqa: E402

from test_attention_fusion import ShiftedWindowAttention  # noqa: E402

LOG = trt.Logger(trt.Logger.WARNING)


def _model():
    torch.manual_seed(3)
    x = torch.randn(8, 9, 32)
    model = oh.export_torch(ShiftedWindowAttention(shifted=True).eval(), (x,), 17)
    return model if isinstance(model, onnx.ModelProto) else onnx.load_from_string(oh.to_bytes(model)), x.numpy()


def _kernels(engine):
    doc = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return [layer["kernel"] for layer in doc["layers"]]


def _engine(model, refit):
    builder, network, _ = oh.parse(model, LOG)
    config = builder.create_builder_config()
    if refit:
        config.set_flag(trt.BuilderFlag.REFIT)
    return trt.Runtime(LOG).deserialize_cuda_engine(builder.build_serialized_network(network, config))


def test_shifted_window_bias_and_mask_refit_by_name():
    model, x = _model()
    assert sum(k.startswith("attention.") for k in _kernels(_engine(model, False))) == 1  # fused without REFIT
    engine = _engine(model, True)
    assert not any(k.startswith("attention.") for k in _kernels(engine))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    bias = next(n for n, a in inits.items() if a.shape == (1, 2, 9, 9))
    mask = next(n for n, a in inits.items() if a.ndim == 5)
    rng = np.random.default_rng(5)
    new = {bias: rng.standard_normal(inits[bias].shape).astype(np.float32),
           mask: np.where(rng.random(inits[mask].shape) < 0.3, -100.0, 0.0).astype(np.float32)}
    refitter = trt.Refitter(engine, LOG)
    for name, value in new.items():
        assert refitter.set_named_weights(name, value)
    assert refitter.refit_cuda_engine()
    changed = onnx.ModelProto()
    changed.CopyFrom(model)
    for init in changed.graph.initializer:
        if init.name in new:
            init.CopyFrom(numpy_helper.from_array(new[init.name], init.name))
    want = oh.ort_run(changed, {"x": x})
    got = engine.create_execution_context().infer({"x": x})
    before = oh.ort_run(model, {"x": x})
    assert not np.allclose(want["y"], before["y"], atol=1e-2)  # the new initializers change the answer
    oh.assert_outputs_close(got, want)
