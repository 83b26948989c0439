#!/usr/bin/env python3
"""LeNet on Fashion-MNIST, defined layer by layer with trtlite's network-definition API.

The script is written against the TensorRT 8/10 Python API (``import trtlite as trt``):

  1. load the trained PyTorch weights (examples/lenet/lenet_fashion_mnist.npz; trained first if missing),
  2. populate an explicit-batch network with convolution, pooling, shuffle + constant + matrix multiply
     + elementwise (the fully connected layers), activation and softmax layers,
  3. build a serialized engine (dynamic batch dimension, one optimization profile), write the plan to a
     file, deserialize it with a Runtime,
  4. run it on the test set with ``execute_v2`` (and check ``set_tensor_address`` + ``execute_async_v3``
     gives the same answers), and compare accuracy and batch-1 latency with PyTorch.

    python examples/network_api_mnist.py            # full 10k test set
    python examples/network_api_mnist.py --quick    # 1000 test images, fewer timing runs
"""

import os
import sys
from typing import Mapping, Optional, Sequence

import numpy as np
import numpy.typing as npt

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import demo_common as common  # noqa: E402
from demo_common import available_cpus, median_latency_ms, predict_batched  # noqa: E402

common.import_trtlite()  # this checkout's trtlite, when none is installed
import trtlite as trt  # noqa: E402
lenet = common.load_example("lenet")

INPUT_NAME = "data"
OUTPUT_NAME = "prob"
INPUT_SHAPE = (1, 28, 28)        # C, H, W
NUM_CLASSES = 10
MAX_BATCH = 500                  # largest batch of the optimization profile
DEFAULT_PLAN = os.path.join(HERE, "lenet", "lenet_fashion_mnist.plan")

TRT_LOGGER = trt.Logger(trt.Logger.WARNING)


# ----------------------------------------------------------------------------------------------
# Network definition
# ----------------------------------------------------------------------------------------------

def add_fully_connected(network: trt.INetworkDefinition, x: trt.ITensor, weight: npt.NDArray[np.float32],
                        bias: npt.NDArray[np.float32]) -> trt.ITensor:
    """y = flatten(x) @ weight.T + bias, built from shuffle, constant, matrix multiply and elementwise.

    x: (N, ...) tensor; weight: (n_out, k) array with k = product of x's non-batch dims; bias: (n_out,).
    Returns a (N, n_out) tensor.
    """
    n_out, k = weight.shape
    if int(np.prod(x.shape[1:])) != k:
        raise ValueError("FC weight %s does not match input shape %s" % (weight.shape, tuple(x.shape)))

    flatten = network.add_shuffle(x)
    flatten.reshape_dims = (0, k)          # 0 copies the (dynamic) batch dimension

    w = network.add_constant((n_out, k), trt.Weights(weight))
    matmul = network.add_matrix_multiply(flatten.get_output(0), trt.MatrixOperation.NONE,
                                         w.get_output(0), trt.MatrixOperation.TRANSPOSE)

    b = network.add_constant((1, n_out), trt.Weights(bias))      # broadcast over the batch
    add_bias = network.add_elementwise(matmul.get_output(0), b.get_output(0), trt.ElementWiseOperation.SUM)
    return add_bias.get_output(0)


def populate_network(network: trt.INetworkDefinition, weights: Mapping[str, npt.NDArray[np.float32]],
                     batch: int = -1) -> None:
    """Add LeNet's layers to an explicit-batch network. ``batch=-1`` makes the batch dimension dynamic."""
    data = network.add_input(name=INPUT_NAME, dtype=trt.float32, shape=(batch,) + INPUT_SHAPE)

    conv1 = network.add_convolution_nd(input=data, num_output_maps=20, kernel_shape=(5, 5),
                                       kernel=weights["conv1.weight"], bias=weights["conv1.bias"])
    conv1.stride_nd = (1, 1)

    pool1 = network.add_pooling_nd(input=conv1.get_output(0), type=trt.PoolingType.MAX, window_size=(2, 2))
    pool1.stride_nd = trt.Dims2(2, 2)

    conv2 = network.add_convolution_nd(input=pool1.get_output(0), num_output_maps=50, kernel_shape=(5, 5),
                                       kernel=weights["conv2.weight"], bias=weights["conv2.bias"])
    conv2.stride_nd = (1, 1)

    pool2 = network.add_pooling_nd(input=conv2.get_output(0), type=trt.PoolingType.MAX, window_size=(2, 2))
    pool2.stride_nd = trt.Dims2(2, 2)

    fc1 = add_fully_connected(network, pool2.get_output(0), weights["fc1.weight"], weights["fc1.bias"])
    relu1 = network.add_activation(input=fc1, type=trt.ActivationType.RELU)

    fc2 = add_fully_connected(network, relu1.get_output(0), weights["fc2.weight"], weights["fc2.bias"])

    softmax = network.add_softmax(input=fc2)
    softmax.axes = 1 << 1                   # the class axis of (N, 10)
    softmax.get_output(0).name = OUTPUT_NAME
    network.mark_output(tensor=softmax.get_output(0))


def build_serialized_engine(weights: Mapping[str, npt.NDArray[np.float32]], max_batch: int = MAX_BATCH) -> trt.IHostMemory:
    """Return the serialized engine (IHostMemory) for LeNet with a dynamic batch of 1..max_batch."""
    with trt.Builder(TRT_LOGGER) as builder, \
            builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)) as network, \
            builder.create_builder_config() as config:
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 30)
        populate_network(network, weights)

        profile = builder.create_optimization_profile()
        profile.set_shape(INPUT_NAME, (1,) + INPUT_SHAPE, (1,) + INPUT_SHAPE, (max_batch,) + INPUT_SHAPE)
        config.add_optimization_profile(profile)

        plan = builder.build_serialized_network(network, config)
        if plan is None:
            raise RuntimeError("build_serialized_network failed (see the log above)")
        return plan


# ----------------------------------------------------------------------------------------------
# Inference
# ----------------------------------------------------------------------------------------------

class LeNetEngine:
    """Runs a LeNet engine on host (numpy) buffers."""

    def __init__(self, engine: trt.ICudaEngine) -> None:
        self.engine = engine
        self.context = engine.create_execution_context()
        # Binding order of execute_v2 = I/O tensor order of the engine.
        self.io_names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
        modes = {n: engine.get_tensor_mode(n) for n in self.io_names}
        assert modes[INPUT_NAME] == trt.TensorIOMode.INPUT and modes[OUTPUT_NAME] == trt.TensorIOMode.OUTPUT
        self.out_dims = tuple(engine.get_tensor_shape(OUTPUT_NAME))[1:]      # (10,); dim 0 is dynamic

    def _prepare(self, x: npt.ArrayLike) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        xf = np.ascontiguousarray(x, dtype=np.float32)
        self.context.set_input_shape(INPUT_NAME, xf.shape)
        out = np.empty((xf.shape[0],) + self.out_dims, dtype=np.float32)
        return xf, out

    def run_v2(self, x: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """execute_v2 with a list of host addresses, one per I/O tensor."""
        xf, out = self._prepare(x)
        buffers = {INPUT_NAME: xf, OUTPUT_NAME: out}
        if not self.context.execute_v2([buffers[n].ctypes.data for n in self.io_names]):
            raise RuntimeError("execute_v2 failed")
        return out

    def run_v3(self, x: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """TensorRT 10 style: set_tensor_address per named tensor, then execute_async_v3 (stream 0)."""
        xf, out = self._prepare(x)
        self.context.set_tensor_address(INPUT_NAME, xf.ctypes.data)
        self.context.set_tensor_address(OUTPUT_NAME, out.ctypes.data)
        if not self.context.execute_async_v3(0):
            raise RuntimeError("execute_async_v3 failed")
        return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = common.demo_arg_parser("LeNet/Fashion-MNIST through trtlite's network API", "LeNet", lenet.CHECKPOINT,
                               DEFAULT_PLAN)
    p.add_argument("--batch", type=int, default=MAX_BATCH, help="batch size for the accuracy pass")
    p.add_argument("--runs", type=int, default=None, help="timed batch-1 runs (default 1000, --quick 200)")
    p.add_argument("--threads", type=int, default=available_cpus(), help="PyTorch threads (default: as trtlite)")
    args = p.parse_args(argv)
    runs = args.runs or (200 if args.quick else 1000)
    batch = max(1, min(args.batch, MAX_BATCH))

    import torch
    torch.set_num_threads(args.threads)

    x_test, y_test, weights = common.load_test_set_and_weights("lenet", args.weights, limit=1000 if args.quick else None,
                                                               train_if_missing=True)

    runtime, engine, build_s = common.build_save_and_load(lambda: build_serialized_engine(weights), args.plan,
                                                          TRT_LOGGER)
    runner = LeNetEngine(engine)
    print("built engine in %.2fs: %d layers, plan %s (%.1f KB)"
          % (build_s, engine.num_layers, os.path.relpath(args.plan), os.path.getsize(args.plan) / 1024))

    # Accuracy on the test images.
    model = lenet.model_from_weights(weights)
    p_torch = predict_batched(lambda b: common.torch_predict(model, b), x_test, batch)
    p_trt = predict_batched(runner.run_v2, x_test, batch)
    p_v3 = predict_batched(runner.run_v3, x_test[:batch], batch)
    acc_torch, acc_trt, same_pred, max_diff = common.compare_predictions(p_torch, p_trt, y_test)
    v3_diff = float(np.abs(p_v3 - p_trt[:len(p_v3)]).max())

    # Batch-1 latency (one image, preallocated buffers, same thread count).
    x1 = np.ascontiguousarray(x_test[:1])
    out1 = np.empty((1, NUM_CLASSES), dtype=np.float32)
    runner.context.set_input_shape(INPUT_NAME, x1.shape)
    addresses = {INPUT_NAME: x1.ctypes.data, OUTPUT_NAME: out1.ctypes.data}
    bindings = [addresses[n] for n in runner.io_names]
    lat_trt = median_latency_ms(lambda: runner.context.execute_v2(bindings), warmup=50, runs=runs)
    t1 = torch.from_numpy(x1)
    with torch.inference_mode():
        lat_torch = median_latency_ms(lambda: model(t1), warmup=50, runs=runs)

    n = len(y_test)
    common.print_report(
        "LeNet / Fashion-MNIST: %d test images, %d thread(s), batch-1 latency = median of %d runs"
        % (n, args.threads, runs),
        "  %-18s %9s %16s" % ("", "accuracy", "batch-1 latency"),
        "  %-18s %8.2f%% %13.3f ms", (100 * acc_torch, lat_torch), (100 * acc_trt, lat_trt),
        "  speed-up %.2fx | same prediction on %d/%d images | max |prob diff| %.1e | "
        "execute_async_v3 vs execute_v2 max diff %.1e" % (lat_torch / lat_trt, same_pred, n, max_diff, v3_diff))

    if abs(acc_torch - acc_trt) > 0.001:
        print("FAIL: accuracies differ by more than 0.1%")
        return 1
    if v3_diff > 1e-6:
        print("FAIL: execute_async_v3 and execute_v2 disagree")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
