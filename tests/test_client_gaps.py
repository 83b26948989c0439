"""Gaps found by running real TensorRT clients (NVIDIA's samples, tensorrtx, torch2trt, polygraphy) on trtlite
(issue #12's proof; docs/clients.md lists each client and what stopped it).  Each test is written here in the
client's style, not copied from it, and checks numbers against numpy or PyTorch.
"""
import numpy as np
import pytest

import trtlite as trt

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


def _run(network, builder, feeds, config=None):
    config = config or builder.create_builder_config()
    plan = builder.build_serialized_network(network, config)
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
    return engine.create_execution_context().infer(feeds)


def test_dla_core_is_kept_and_unused_as_torch2trt_sets_it():
    # torch2trt sets config.DLA_core = 0 on every build (DLA or not); TensorRT accepts it on a GPU without DLA
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network(EXPLICIT)
    x = n.add_input("x", trt.float32, (2, 3))
    y = n.add_activation(x, trt.ActivationType.RELU).get_output(0)
    y.name = "y"
    n.mark_output(y)
    cfg = b.create_builder_config()
    assert cfg.DLA_core == -1
    cfg.default_device_type = trt.DeviceType.GPU
    cfg.DLA_core = 0
    assert cfg.DLA_core == 0
    assert b.create_builder_config().DLA_core == -1  # per config
    with pytest.raises(ValueError, match="DLA_core = -2"):
        cfg.DLA_core = -2
    xv = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.testing.assert_array_equal(_run(n, b, {"x": xv}, cfg)["y"], np.maximum(xv, 0))


class _AddressCalibrator(trt.IInt8MinMaxCalibrator):
    """torch2trt's style: get_batch returns the batch's host address (a CUDA pointer there)."""

    def __init__(self, batches):
        trt.IInt8MinMaxCalibrator.__init__(self)
        self.batches, self.i = batches, 0

    def get_batch_size(self):
        return self.batches[0].shape[0]

    def get_batch(self, names):
        if self.i == len(self.batches):
            return None
        self.i += 1
        return [int(self.batches[self.i - 1].ctypes.data)]

    def read_calibration_cache(self):
        return None

    def write_calibration_cache(self, cache):
        pass


def test_calibration_profile_gives_the_shapes_of_address_batches():
    # torch2trt: dynamic-shape network, a profile with min = opt = max, config.set_calibration_profile(profile)
    # and a calibrator that hands out addresses; the batches are read at the profile's opt shape
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((2, 4)).astype(np.float32) * s for s in (1.0, 3.0)]
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network(EXPLICIT)
    x = n.add_input("x", trt.float32, (-1, 4))
    r = n.add_activation(x, trt.ActivationType.RELU).get_output(0)
    r.name = "r"
    y = n.add_unary(r, trt.UnaryOperation.NEG).get_output(0)
    y.name = "y"
    n.mark_output(y)
    cfg = b.create_builder_config()
    profile = b.create_optimization_profile()
    profile.set_shape("x", (2, 4), (2, 4), (2, 4))
    cfg.add_optimization_profile(profile)
    assert cfg.get_calibration_profile() is None
    assert cfg.set_calibration_profile(profile) is True
    assert cfg.get_calibration_profile() is profile
    with pytest.raises(TypeError, match="IOptimizationProfile"):
        cfg.set_calibration_profile("x")
    cfg.set_flag(trt.BuilderFlag.INT8)
    cfg.int8_calibrator = _AddressCalibrator(batches)
    b.build_serialized_network(n, cfg)
    amax = max(np.abs(a).max() for a in batches)
    ramax = max(np.maximum(a, 0).max() for a in batches)
    np.testing.assert_allclose(x.dynamic_range, (-amax, amax), rtol=1e-6)
    np.testing.assert_allclose(r.dynamic_range, (-ramax, ramax), rtol=1e-6)


def _small_engine_and_plan():
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network(EXPLICIT)
    x = n.add_input("x", trt.float32, (1, 4))
    y = n.add_unary(x, trt.UnaryOperation.EXP).get_output(0)
    y.name = "y"
    n.mark_output(y)
    return b, n


def test_serialized_plan_is_a_context_manager_as_polygraphy_convert_uses_it():
    b, n = _small_engine_and_plan()
    with b.build_serialized_network(n, b.create_builder_config()) as plan:
        data = bytes(plan)
    assert len(data) == plan.nbytes > 0  # still valid after the block
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(data)
    xv = np.array([[0, 1, -2, 0.5]], np.float32)
    np.testing.assert_allclose(engine.create_execution_context().infer({"x": xv})["y"], np.exp(xv), rtol=1e-6)


def test_engine_answers_polygraphy_inspect_questions():
    # polygraphy inspect model: get_tensor_format(name) == TensorFormat.HWC, engine.profiling_verbosity
    b, n = _small_engine_and_plan()
    e = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(
        b.build_serialized_network(n, b.create_builder_config()))
    assert e.get_tensor_format("y") == trt.TensorFormat.LINEAR != trt.TensorFormat.HWC
    assert (int(trt.TensorFormat.CHW4), int(trt.TensorFormat.HWC), int(trt.TensorFormat.DHWC)) == (3, 8, 12)
    assert e.profiling_verbosity == trt.ProfilingVerbosity.DETAILED
    info = e.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON)
    assert "Layers" in info or "layers" in info.lower()


def test_refitter_prototype_and_location_as_tensorrt_10_samples_call_them():
    # engine_refit_onnx_bidaf's calls: get_weights_prototype(name), set_named_weights(name, w, TensorLocation.HOST)
    rng = np.random.default_rng(0)
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network(EXPLICIT)
    x = n.add_input("x", trt.float32, (1, 2, 3, 3))
    w0 = rng.standard_normal((2, 2, 1, 1)).astype(np.float32)
    conv = n.add_convolution_nd(x, 2, (1, 1), w0, np.zeros(2, np.float32))
    conv.name = "conv"
    y = conv.get_output(0)
    y.name = "y"
    n.mark_output(y)
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.REFIT)
    e = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(b.build_serialized_network(n, cfg))
    r = trt.Refitter(e, trt.Logger(trt.Logger.ERROR))
    r.weights_validation = False
    proto = r.get_weights_prototype("conv/KERNEL")
    assert proto.dtype == trt.DataType.FLOAT and proto.size == w0.size
    with pytest.raises(trt.NotFoundError, match="nope/KERNEL"):
        r.get_weights_prototype("nope/KERNEL")
    w1 = rng.standard_normal((2, 2, 1, 1)).astype(np.float32)
    assert r.set_named_weights("conv/KERNEL", w1, trt.TensorLocation.HOST)
    assert r.get_missing_weights() == [] and r.refit_cuda_engine()
    xv = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    got = e.create_execution_context().infer({"x": xv})["y"]
    np.testing.assert_allclose(got, np.einsum("oc,nchw->nohw", w1[:, :, 0, 0], xv), rtol=1e-5, atol=1e-6)
