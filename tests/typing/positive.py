"""A correct TensorRT-style script: `mypy --strict` must accept it as it is (tests/test_typing.py), and it runs.

It uses the API the way TensorRT 8/10 scripts do: a logger subclass, builder, network with layer attribute
assignments (tuples where TensorRT takes Dims), enums and flags, a dynamic-shape profile, context managers, a
profiler, a progress monitor, an INT8 calibrator, build, serialize, deserialize, and run with numpy buffers.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import numpy.typing as npt

import trtlite as trt


class PrintLogger(trt.ILogger):
    def __init__(self) -> None:
        trt.ILogger.__init__(self)
        self.messages: list[str] = []

    def log(self, severity: trt.ILogger.Severity, msg: str) -> None:
        if severity <= trt.Logger.WARNING:
            self.messages.append(f"{severity}: {msg}")


class LayerTimes(trt.IProfiler):
    def __init__(self) -> None:
        trt.IProfiler.__init__(self)
        self.total_ms = 0.0

    def report_layer_time(self, layer_name: str, ms: float) -> None:
        self.total_ms += ms


class Steps(trt.IProgressMonitor):
    def __init__(self) -> None:
        trt.IProgressMonitor.__init__(self)
        self.phases: list[str] = []

    def phase_start(self, phase_name: str, parent_phase: Optional[str], num_steps: int) -> None:
        self.phases.append(phase_name)

    def step_complete(self, phase_name: str, step: int) -> bool:
        return True

    def phase_finish(self, phase_name: str) -> None:
        pass


class Calibrator(trt.IInt8EntropyCalibrator2):
    def __init__(self, batches: list[npt.NDArray[np.float32]]) -> None:
        trt.IInt8EntropyCalibrator2.__init__(self)
        self.batches = batches

    def get_batch_size(self) -> int:
        return 1

    def get_batch(self, names: list[str]) -> Optional[Sequence[npt.NDArray[np.float32]]]:
        return [self.batches.pop()] if self.batches else None

    def read_calibration_cache(self) -> Optional[bytes]:
        return None

    def write_calibration_cache(self, cache: memoryview) -> None:
        pass


def weights(*shape: int) -> npt.NDArray[np.float32]:
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def build_network(builder: trt.Builder) -> trt.INetworkDefinition:
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = network.add_input("x", trt.float32, (-1, 3, 16, 16))
    conv = network.add_convolution_nd(x, 8, (3, 3), weights(8, 3, 3, 3), trt.Weights(weights(8)))
    conv.stride_nd = (1, 1)
    conv.padding_nd = trt.DimsHW(1, 1)
    conv.num_groups = 1
    conv.name = "conv1"
    relu = network.add_activation(conv.get_output(0), trt.ActivationType.RELU)
    pool = network.add_pooling_nd(relu.get_output(0), trt.PoolingType.MAX, (2, 2))
    pool.stride_nd = [2, 2]
    shuffle = network.add_shuffle(pool.get_output(0))
    shuffle.reshape_dims = (-1, 8 * 8 * 8)
    shuffle.first_transpose = trt.Permutation([0, 1, 2, 3])
    fc_w = network.add_constant((8 * 8 * 8, 4), trt.Weights(weights(8 * 8 * 8, 4)))
    mm = network.add_matrix_multiply(shuffle.get_output(0), trt.MatrixOperation.NONE, fc_w.get_output(0),
                                     trt.MatrixOperation.NONE)
    bias = network.add_constant((1, 4), weights(1, 4))
    add = network.add_elementwise(mm.get_output(0), bias.get_output(0), trt.ElementWiseOperation.SUM)
    softmax = network.add_softmax(add.get_output(0))
    softmax.axes = 1 << 1
    out = softmax.get_output(0)
    out.name = "y"
    network.mark_output(out)
    for i in range(network.num_layers):
        layer: trt.ILayer = network.get_layer(i)
        if layer.type == trt.LayerType.CONVOLUTION:
            layer.precision = trt.DataType.FLOAT
    return network


def main() -> None:
    logger = PrintLogger()
    with trt.Builder(logger) as builder:
        network = build_network(builder)
        config = builder.create_builder_config()
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 26)
        config.set_flag(trt.BuilderFlag.FP16)
        config.clear_flag(trt.BuilderFlag.FP16)
        config.builder_optimization_level = 3
        config.progress_monitor = Steps()
        profile = builder.create_optimization_profile()
        profile.set_shape("x", (1, 3, 16, 16), (2, 3, 16, 16), (4, 3, 16, 16))
        index: int = config.add_optimization_profile(profile)
        assert index == 0
        if builder.platform_has_fast_int8:
            config.int8_calibrator = Calibrator([weights(1, 3, 16, 16)])
        plan = builder.build_serialized_network(network, config)
    with open("model.plan", "wb") as f:
        f.write(plan)
    runtime = trt.Runtime(logger)
    with open("model.plan", "rb") as f:
        engine = runtime.deserialize_cuda_engine(f.read())
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    inputs = [n for n in names if engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT]
    shape: trt.Dims = engine.get_tensor_shape("y")
    dtype: trt.DataType = engine.get_tensor_dtype("x")
    assert inputs == ["x"] and len(shape) == 2 and dtype == trt.float32
    with engine.create_execution_context() as context:
        context.profiler = LayerTimes()
        context.set_input_shape("x", (2, 3, 16, 16))
        x = weights(2, 3, 16, 16)
        y = np.empty(tuple(context.get_tensor_shape("y")), dtype=trt.nptype(trt.float32))
        ok: bool = context.execute_v2([x, y])
        assert ok and np.allclose(y.sum(axis=1), 1.0, atol=1e-4)
        results = context.infer({"x": x})
        assert np.allclose(results["y"], y, atol=1e-5)
    inspector = engine.create_engine_inspector()
    info: str = inspector.get_engine_information(trt.LayerInformationFormat.ONELINE)
    assert "conv1" in info


if __name__ == "__main__":
    main()
