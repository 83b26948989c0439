#!/usr/bin/env python3
"""AdderNet on Fashion-MNIST through trtlite, written as TensorRT 7 users write it.

AdderNet (Chen et al., CVPR 2020) replaces each convolution by an adder layer, Y = -sum |X - W| over each
window.  TensorRT has no such layer, so it runs as the Adder2d_TRT plugin.  The script uses the TensorRT 7
Python API (``import trtlite as trt``, implicit batch):

  1. load the trained weights (examples/addernet/addernet_fashion_mnist.npz),
  2. register the built-in plugins (``trt.init_libnvinfer_plugins``), find the Adder2d_TRT creator in
     ``plugin_creator_list`` and create one plugin per adder layer from a PluginFieldCollection,
  3. populate an implicit-batch network: adder (plugin) -> batch norm (scale) -> max pool, twice, then
     fully connected -> ReLU -> fully connected -> softmax,
  4. build it with ``builder.build_cuda_engine`` (max batch 128), serialize the engine to a file and
     deserialize it with a Runtime,
  5. run the test set with ``context.execute(batch_size, bindings)`` in batches of 64 and compare accuracy,
     predictions and batch-1 / batch-64 latency with the PyTorch reference model (examples/addernet/model.py).

    python examples/addernet/demo.py            # full 10k test set
    python examples/addernet/demo.py --quick    # 1000 test images
    python examples/addernet/demo.py --limit 200 --runs 5 --runs64 2 --threads 1   # a smoke test (tests/)
"""

import os
import re
import sys
import time
from typing import Mapping, Optional, Sequence

import numpy as np
import numpy.typing as npt

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)
if EXAMPLES not in sys.path:
    sys.path.insert(0, EXAMPLES)

import demo_common as common  # noqa: E402
from demo_common import available_cpus, median_latency_ms, predict_batched  # noqa: E402

common.import_trtlite()  # this checkout's trtlite, when none is installed
import trtlite as trt  # noqa: E402
addernet = common.load_example("addernet")

INPUT_NAME = "data"
OUTPUT_NAME = "prob"
INPUT_SHAPE = (1, 28, 28)        # C, H, W (implicit batch: N is not part of the network's shapes)
NUM_CLASSES = 10
MAX_BATCH = 128                  # builder.max_batch_size
BATCH = 64                       # batch size of the trtlite accuracy pass
TORCH_BATCH = 256                # batch size of the PyTorch accuracy pass
DEFAULT_PLAN = os.path.join(HERE, "addernet_fashion_mnist.plan")


class DemoLogger(trt.ILogger):
    """Prints messages at or above ``min_severity`` in TensorRT's format, on stdout so that they stay in order
    with the demo's own output.  A warning repeated for another layer (the same text once the layer name is
    taken out) is printed once."""

    _TAG = {trt.Logger.INTERNAL_ERROR: "F", trt.Logger.ERROR: "E", trt.Logger.WARNING: "W",
            trt.Logger.INFO: "I", trt.Logger.VERBOSE: "V"}

    def __init__(self, min_severity: trt.Severity = trt.Logger.WARNING) -> None:
        super().__init__()
        self.min_severity = min_severity
        self._seen: set[str] = set()

    def log(self, severity: trt.Severity, msg: str) -> None:
        if int(severity) > int(self.min_severity):
            return
        key = re.sub(r"\(layer '[^']*'\)", "(layer ...)", msg)
        if severity == trt.Logger.WARNING:
            if key in self._seen:
                return
            self._seen.add(key)
        print("[TRT] [%s] %s" % (self._TAG.get(severity, "?"), msg), flush=True)


TRT_LOGGER = DemoLogger(trt.Logger.WARNING)


# ----------------------------------------------------------------------------------------------
# Network definition
# ----------------------------------------------------------------------------------------------

def get_adder_creator() -> trt.IPluginCreator:
    """The Adder2d_TRT creator of the plugin registry (register the built-ins first)."""
    for creator in trt.get_plugin_registry().plugin_creator_list:
        if creator.name == "Adder2d_TRT":
            return creator
    raise RuntimeError("Adder2d_TRT is not registered: call trt.init_libnvinfer_plugins(logger, '') first")


def add_adder2d(network: trt.INetworkDefinition, input: trt.ITensor, weight: npt.NDArray[np.float32], stride: int = 1,
                padding: int = 0, name: str = "adder") -> trt.IPluginV2Layer:
    """Add an adder layer (Adder2d_TRT plugin) for a (F, C, k, k) weight; returns the plugin layer.

    input is an implicit-batch (C, H, W) tensor.  nInputHeight / nInputWidth are passed as older AdderNet
    scripts do; the plugin takes H and W from its input tensor, so its creator ignores them with a warning.
    """
    n_filters, n_channels, k, _ = weight.shape
    c, h, w = tuple(input.shape)
    fields = [
        trt.PluginField("weights", np.array(weight.flatten(), np.float32), trt.PluginFieldType.FLOAT32),
        trt.PluginField("nbWeights", np.array([weight.size], np.int32), trt.PluginFieldType.INT32),
        trt.PluginField("nbInputChannels", np.array([n_channels], np.int32), trt.PluginFieldType.INT32),
        trt.PluginField("nInputHeight", np.array([h], np.int32), trt.PluginFieldType.INT32),
        trt.PluginField("nInputWidth", np.array([w], np.int32), trt.PluginFieldType.INT32),
        trt.PluginField("filterSize", np.array([k], np.int32), trt.PluginFieldType.INT32),
        trt.PluginField("nbFilters", np.array([n_filters], np.int32), trt.PluginFieldType.INT32),
        trt.PluginField("stride", np.array([stride], np.int32), trt.PluginFieldType.INT32),
        trt.PluginField("padding", np.array([padding], np.int32), trt.PluginFieldType.INT32),
    ]
    field_collection = trt.PluginFieldCollection(fields)
    plugin = get_adder_creator().create_plugin(name=name, field_collection=field_collection)
    layer = network.add_plugin_v2(inputs=[input], plugin=plugin)
    layer.name = name
    return layer


def add_batch_norm(network: trt.INetworkDefinition, input: trt.ITensor, weights: Mapping[str, npt.NDArray[np.float32]],
                   prefix: str) -> trt.IScaleLayer:
    """Inference BatchNorm as a per-channel scale layer: y = x * scale + shift (power 1)."""
    scale, shift = addernet.bn_as_scale(weights, prefix)
    power = np.ones_like(scale)
    layer = network.add_scale(input, trt.ScaleMode.CHANNEL, shift, scale, power)
    layer.name = prefix
    return layer


def add_max_pool(network: trt.INetworkDefinition, input: trt.ITensor, name: str) -> trt.IPoolingLayer:
    layer = network.add_pooling(input=input, type=trt.PoolingType.MAX, window_size=(2, 2))
    layer.stride = (2, 2)
    layer.name = name
    return layer


def populate_network(network: trt.INetworkDefinition, weights: Mapping[str, npt.NDArray[np.float32]]) -> None:
    """Add AdderNetMnist's layers to an implicit-batch network (input "data" (1, 28, 28), output "prob")."""
    data = network.add_input(name=INPUT_NAME, dtype=trt.float32, shape=INPUT_SHAPE)

    adder1 = add_adder2d(network, data, weights["adder1.weight"], name="adder1")             # 20 x 24 x 24
    bn1 = add_batch_norm(network, adder1.get_output(0), weights, "bn1")
    pool1 = add_max_pool(network, bn1.get_output(0), "pool1")                                # 20 x 12 x 12

    adder2 = add_adder2d(network, pool1.get_output(0), weights["adder2.weight"], name="adder2")  # 50 x 8 x 8
    bn2 = add_batch_norm(network, adder2.get_output(0), weights, "bn2")
    pool2 = add_max_pool(network, bn2.get_output(0), "pool2")                                # 50 x 4 x 4

    fc1 = network.add_fully_connected(input=pool2.get_output(0), num_outputs=500,
                                      kernel=weights["fc1.weight"], bias=weights["fc1.bias"])
    relu1 = network.add_activation(input=fc1.get_output(0), type=trt.ActivationType.RELU)
    fc2 = network.add_fully_connected(input=relu1.get_output(0), num_outputs=NUM_CLASSES,
                                      kernel=weights["fc2.weight"], bias=weights["fc2.bias"])

    softmax = network.add_softmax(input=fc2.get_output(0))          # over C of (10, 1, 1)
    softmax.get_output(0).name = OUTPUT_NAME
    network.mark_output(tensor=softmax.get_output(0))


def build_engine(weights: Mapping[str, npt.NDArray[np.float32]], max_batch: int = MAX_BATCH) -> trt.ICudaEngine:
    """TensorRT 7 build: implicit-batch network, builder.max_batch_size, build_cuda_engine."""
    with trt.Builder(TRT_LOGGER) as builder, builder.create_network() as network:
        builder.max_batch_size = max_batch
        builder.max_workspace_size = 1 << 28
        populate_network(network, weights)
        engine = builder.build_cuda_engine(network)
        if engine is None:
            raise RuntimeError("build_cuda_engine failed (see the log above)")
        return engine


# ----------------------------------------------------------------------------------------------
# Inference
# ----------------------------------------------------------------------------------------------

class AdderNetEngine:
    """Runs an implicit-batch AdderNet engine on host (numpy) buffers with context.execute."""

    def __init__(self, engine: trt.ICudaEngine) -> None:
        self.engine = engine
        self.context = engine.create_execution_context()
        self.input_index = engine.get_binding_index(INPUT_NAME)
        self.output_index = engine.get_binding_index(OUTPUT_NAME)
        assert engine.binding_is_input(self.input_index) and not engine.binding_is_input(self.output_index)
        self.out_shape = tuple(engine.get_binding_shape(self.output_index))        # (10, 1, 1)
        self.max_batch_size = engine.max_batch_size

    def buffers(self, batch_size: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], list[int]]:
        """Preallocated input/output arrays and the bindings list (host addresses in binding order)."""
        x = np.zeros((batch_size,) + INPUT_SHAPE, dtype=np.float32)
        out = np.empty((batch_size,) + self.out_shape, dtype=np.float32)
        bindings = [0] * self.engine.num_bindings
        bindings[self.input_index] = x.ctypes.data
        bindings[self.output_index] = out.ctypes.data
        return x, out, bindings

    def infer(self, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Class probabilities (N, 10) for images x (N, 1, 28, 28), N <= max_batch_size."""
        n = len(x)
        if n > self.max_batch_size:
            raise ValueError("batch %d > max_batch_size %d" % (n, self.max_batch_size))
        xb, out, bindings = self.buffers(n)
        xb[...] = x
        if not self.context.execute(batch_size=n, bindings=bindings):
            raise RuntimeError("execute failed")
        return out.reshape(n, NUM_CLASSES)


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = common.demo_arg_parser("AdderNet/Fashion-MNIST through trtlite (TensorRT 7 API, Adder2d_TRT)", "AdderNet",
                               addernet.CHECKPOINT, DEFAULT_PLAN)
    p.add_argument("--limit", type=int, default=None, help="evaluate on the first N test images")
    p.add_argument("--runs", type=int, default=200, help="timed batch-1 runs (default 200)")
    p.add_argument("--runs64", type=int, default=20, help="timed batch-64 runs (default 20)")
    p.add_argument("--threads", type=int, default=None,
                   help="threads of PyTorch and of the trtlite context (default: the CPUs available, as trtlite)")
    args = p.parse_args(argv)
    runs1, runs64 = max(1, args.runs), max(1, args.runs64)
    threads = args.threads or available_cpus()
    limit = args.limit or (1000 if args.quick else None)

    import torch
    torch.set_num_threads(threads)

    x_test, y_test, weights = common.load_test_set_and_weights("addernet", args.weights, limit=limit)

    # The built-in plugins (Adder2d_TRT among them) must be registered before the network is populated
    # and before a plan that uses them is deserialized.
    trt.init_libnvinfer_plugins(TRT_LOGGER, "")

    runtime, engine, build_s = common.build_save_and_load(lambda: build_engine(weights), args.plan, TRT_LOGGER)
    runner = AdderNetEngine(engine)
    if args.threads:
        runner.context.num_threads = threads
    print("built engine in %.2fs: %d layers, max batch %d; plan %s (%.1f KB) loaded with trt.Runtime"
          % (build_s, engine.num_layers, engine.max_batch_size, os.path.relpath(args.plan),
             os.path.getsize(args.plan) / 1024))

    # Accuracy on the test images: PyTorch reference in batches of 256, trtlite in batches of 64.
    model = addernet.model_from_weights(weights)
    t0 = time.perf_counter()
    p_torch = predict_batched(lambda b: common.torch_predict(model, b), x_test, TORCH_BATCH)
    torch_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    p_trt = predict_batched(runner.infer, x_test, BATCH)
    trt_s = time.perf_counter() - t0
    acc_torch, acc_trt, same_pred, max_diff = common.compare_predictions(p_torch, p_trt, y_test)

    # Latency: preallocated buffers, same thread count, median over the timed runs.
    lat = {}
    for b, runs in ((1, runs1), (BATCH, runs64)):
        images = np.ascontiguousarray(x_test[np.arange(b) % len(x_test)])
        xb, _, bindings = runner.buffers(b)
        xb[...] = images
        lat["trtlite", b] = median_latency_ms(lambda: runner.context.execute(batch_size=b, bindings=bindings),
                                              warmup=max(3, runs // 10), runs=runs)
        tb = torch.from_numpy(images)
        with torch.inference_mode():
            lat["torch", b] = median_latency_ms(lambda: model(tb), warmup=max(3, runs // 10), runs=runs)

    n = len(y_test)
    common.print_report(
        "AdderNet / Fashion-MNIST: %d test images, %d thread(s); latency = median of %d (batch 1) / %d (batch %d) "
        "runs" % (n, threads, runs1, runs64, BATCH),
        "  %-16s %10s %17s %18s %15s" % ("", "accuracy", "batch-1 latency", "batch-64 latency", "accuracy pass"),
        "  %-16s %9.2f%% %14.3f ms %15.2f ms %13.1f s  (batches of %d)",
        (100 * acc_torch, lat["torch", 1], lat["torch", BATCH], torch_s, TORCH_BATCH),
        (100 * acc_trt, lat["trtlite", 1], lat["trtlite", BATCH], trt_s, BATCH),
        "  speed-up %.1fx (batch 1), %.1fx (batch %d) | same prediction on %d/%d images | max |prob diff| %.1e"
        % (lat["torch", 1] / lat["trtlite", 1], lat["torch", BATCH] / lat["trtlite", BATCH], BATCH,
           same_pred, n, max_diff))

    if abs(acc_torch - acc_trt) > 0.001:
        print("FAIL: accuracies differ by more than 0.1%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
