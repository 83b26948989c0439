"""Deliberate mistakes that `mypy --strict` must flag (tests/test_typing.py; this file is never run).

Each line marked `# E: <code>` must get exactly an error with that mypy error code, and no other line may get
one: the test matches mypy's output against these markers.
"""
from __future__ import annotations

import numpy as np

import trtlite as trt

logger = trt.Logger(trt.Logger.WARNING)
no_logger = trt.Builder()  # E: call-arg
bad_severity = trt.Logger("WARNING")  # E: arg-type
builder = trt.Builder(logger)
network = builder.create_network(0)
x = network.add_input("x", trt.float32, (1, 3, 8, 8))
str_shape = network.add_input("s", trt.float32, "1x3x8x8")  # E: arg-type
numpy_dtype = network.add_input("n", np.float32, (1, 3))  # E: arg-type
conv = network.add_convolution_nd(x, 4, (3, 3), np.ones((4, 3, 3, 3), np.float32))
conv.strides = (2, 2)  # E: attr-defined
conv.num_output_maps = "4"  # E: assignment
conv.stride_nd = 2  # E: assignment
act = network.add_activation(conv.get_output(0), trt.PoolingType.MAX)  # E: arg-type
network.mark_output(act)  # E: arg-type
act.precision = "fp16"  # E: assignment
pool = network.add_pooling_nd(x, trt.ActivationType.RELU, (2, 2))  # E: arg-type
ew = network.add_elementwise(x, x, trt.UnaryOperation.EXP)  # E: arg-type
network.num_layers = 3  # E: misc
config = builder.create_builder_config()
config.set_flag(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)  # E: arg-type
config.max_workspace_size = "1GB"  # E: assignment
profile = builder.create_optimization_profile()
profile.set_shape(x, (1, 3, 8, 8), (1, 3, 8, 8), (1, 3, 8, 8))  # E: arg-type
plan = builder.build_engine_v2(network, config)  # E: attr-defined
serialized = builder.build_serialized_network(config, network)  # E: arg-type
runtime = trt.Runtime(logger)
engine = runtime.deserialize_cuda_engine("model.plan")  # E: arg-type
engine.num_layers = 2  # E: misc
count: str = engine.num_io_tensors  # E: assignment
context = engine.create_execution_context()
buffer = np.zeros((1, 3, 8, 8), np.float32)
context.execute_v2(buffer)  # E: arg-type
context.set_input_shape(0, (1, 3, 8, 8))  # E: arg-type
name: int = engine.get_tensor_name(0)  # E: assignment
