"""API that real TensorRT clients (NVIDIA's samples, torch2trt, polygraphy) call before they get to the network:
version checks, device placement, tensor locations, `with trt.Logger()`, engine iteration (issue #12's first list).
"""
import numpy as np
import pytest

import trtlite as trt


def _identity_engine():
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = n.add_input("x", trt.float32, (1, 3))
    y = n.add_activation(x, trt.ActivationType.RELU).get_output(0)
    y.name = "y"
    n.mark_output(y)
    return b, n, trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(
        b.build_serialized_network(n, b.create_builder_config()))


def test_version_is_the_tensorrt_api_level_and_trtlite_has_its_own():
    major = int(trt.__version__.split(".")[0])
    assert major == 10  # clients take TensorRT 10's name-based paths, which trtlite implements
    assert trt.trtlite_version == trt._C.__version__ != trt.__version__


def test_engine_iterates_its_bindings_as_tensorrt_7():
    _, _, e = _identity_engine()
    assert list(e) == ["x", "y"]
    assert len(e) == 2 and e[0] == "x" and e["y"] == 1
    assert [e.binding_is_input(name) for name in e] == [True, False]


def test_logger_is_a_context_manager():
    with trt.Logger(trt.Logger.WARNING) as logger:
        assert isinstance(logger, trt.ILogger)
        b = trt.Builder(logger)
        assert b is not None


def test_tensor_location_is_writable_and_checked():
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = n.add_input("x", trt.float32, (2,))
    x.location = trt.TensorLocation.DEVICE
    x.location = trt.TensorLocation.HOST
    assert x.location == trt.TensorLocation.HOST
    with pytest.raises(ValueError, match="tensor 'x'"):
        x.location = 7
    with pytest.raises(TypeError, match="tensor 'x'"):
        x.location = "gpu"


def test_device_placement_reports_gpu_and_refuses_dla():
    b, n, _ = _identity_engine()
    cfg = b.create_builder_config()
    layer = n.get_layer(0)
    assert cfg.default_device_type == trt.DeviceType.GPU
    cfg.default_device_type = trt.DeviceType.GPU
    assert cfg.DLA_core == -1
    cfg.DLA_core = -1
    assert b.num_DLA_cores == 0
    assert not cfg.can_run_on_DLA(layer)
    cfg.set_device_type(layer, trt.DeviceType.GPU)
    assert cfg.get_device_type(layer) == trt.DeviceType.GPU
    assert not cfg.is_device_type_set(layer)
    cfg.reset_device_type(layer)
    with pytest.raises(trt.UnsupportedError, match="no DLA"):
        cfg.default_device_type = trt.DeviceType.DLA
    with pytest.raises(trt.UnsupportedError, match="no DLA"):
        cfg.set_device_type(layer, trt.DeviceType.DLA)
    with pytest.raises(TypeError, match="ILayer"):
        cfg.can_run_on_DLA("relu")
    # the config still builds and the engine runs after all of it
    out = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(
        b.build_serialized_network(n, cfg)).create_execution_context().infer({"x": np.array([[-1, 0, 2]], np.float32)})
    np.testing.assert_array_equal(out["y"], [[0, 0, 2]])
