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
