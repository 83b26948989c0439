#!/usr/bin/env python3
"""The precision experiment on Fashion-MNIST: LeNet and AdderNet built at FP32, FP16, BF16 and INT8.

For each model (the trained checkpoints of examples/lenet and examples/addernet, their networks as the LeNet and
AdderNet demos define them) and each precision the script builds one engine (builder flags FP16 / BF16 / INT8;
INT8 calibrated with a min-max calibrator on Fashion-MNIST *training* images, TensorRT 7/8 style) and reports,
side by side:

  - test accuracy (and the change against FP32, in points),
  - the steps that compute in reduced precision (what the builder actually chose: a flag only admits kernels,
    timing decides, and a layer with no kernel of that precision stays FP32),
  - batch-1 and batch-64 throughput (images/s, median of timed runs, preallocated buffers).

INT8 must stay within 0.5 accuracy points of FP32 (exit status 1 otherwise).  On a CPU, FP16 stores weights in
fp16 and computes in fp32, and BF16 needs AVX512_BF16; see docs/ARCHITECTURE.md ("Reduced precision").
AdderNet's adder layers are the Adder2d_TRT plugin: under INT8 the builder hands it calibrated INT8 inputs (plugin
ABI version 2), and it sums |x - w| on int8 codes with one scale shared by input and weights (`vpsadbw`); the fully
connected layers run int8 as in LeNet.  The script reports AdderNet's INT8 speed-up at batch 64 next to issue #11's
target (>= 3x); what it prints is what it measured on this machine, not a pass/fail.

    python examples/precision_mnist.py              # 10k test images, 2048 calibration images
    python examples/precision_mnist.py --quick      # 1000 test images, fewer timed runs
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import demo_common as common  # noqa: E402
import fashion_mnist  # noqa: E402
from demo_common import median_latency_ms  # noqa: E402

common.import_trtlite()  # this checkout's trtlite, when none is installed
import trtlite as trt  # noqa: E402
lenet_demo = common.load_module("network_api_mnist", os.path.join(HERE, "network_api_mnist.py"))
adder_demo = common.load_module("addernet_demo", os.path.join(HERE, "addernet", "demo.py"))

PRECISIONS = ("FP32", "FP16", "BF16", "INT8")
FLAGS = {"FP16": trt.BuilderFlag.FP16, "BF16": trt.BuilderFlag.BF16, "INT8": trt.BuilderFlag.INT8}
MAX_BATCH = 64
INT8_MAX_DROP = 0.5   # accuracy points
LOGGER = adder_demo.DemoLogger(trt.Logger.ERROR)


class TrainingImagesCalibrator(trt.IInt8MinMaxCalibrator):
    """Min-max calibration (TensorRT's IInt8MinMaxCalibrator) on batches of Fashion-MNIST training images (on these
    small networks it keeps INT8 closer to FP32 than entropy calibration, which clips the activations' tails).
    get_batch returns each batch as a numpy array (trtlite also takes host addresses, as TensorRT does, where the
    input's shape is static; LeNet's batch dimension is dynamic, and an array says the batch's shape)."""

    def __init__(self, images, batch):
        super().__init__()
        self.images = np.ascontiguousarray(images, dtype=np.float32)
        self.batch = batch
        self.pos = 0

    def get_batch_size(self):
        return self.batch

    def get_batch(self, names):
        if self.pos + self.batch > len(self.images):
            return None
        self.pos += self.batch
        return [self.images[self.pos - self.batch:self.pos]]

    def read_calibration_cache(self):
        return None

    def write_calibration_cache(self, cache):
        pass


def _configure(builder, config, precision, calib_images):
    if precision in FLAGS:
        config.set_flag(FLAGS[precision])
    if precision == "INT8":
        config.int8_calibrator = TrainingImagesCalibrator(calib_images, min(MAX_BATCH, len(calib_images)))


def build_lenet(weights, precision, calib_images):
    """LeNet (examples/network_api_mnist.py's network: explicit batch, dynamic batch 1..MAX_BATCH)."""
    builder = trt.Builder(LOGGER)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    config = builder.create_builder_config()
    lenet_demo.populate_network(network, weights)
    profile = builder.create_optimization_profile()
    shape = lenet_demo.INPUT_SHAPE
    profile.set_shape(lenet_demo.INPUT_NAME, (1,) + shape, (MAX_BATCH,) + shape, (MAX_BATCH,) + shape)
    config.add_optimization_profile(profile)
    _configure(builder, config, precision, calib_images)
    plan = builder.build_serialized_network(network, config)
    engine = trt.Runtime(LOGGER).deserialize_cuda_engine(plan)
    return engine, lenet_demo.LeNetEngine(engine).run_v2


def build_addernet(weights, precision, calib_images):
    """AdderNet (examples/addernet/demo.py's network: implicit batch, the Adder2d_TRT plugin)."""
    trt.init_libnvinfer_plugins(LOGGER, "")
    builder = trt.Builder(LOGGER)
    builder.max_batch_size = MAX_BATCH
    network = builder.create_network()
    config = builder.create_builder_config()
    adder_demo.populate_network(network, weights)
    _configure(builder, config, precision, calib_images)
    engine = builder.build_engine(network, config)
    return engine, adder_demo.AdderNetEngine(engine).infer


def reduced_steps(engine):
    """(steps computing in reduced precision, all steps) per the engine inspector."""
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    precisions = [layer["precision"] for layer in info["layers"]]
    return sum(p != "FLOAT" for p in precisions), len(precisions)


def fp32_tactic_steps(engine):
    """Int8 layers whose quantized math the builder ran on an fp32 kernel because it timed faster (kernels
    "qlinear.fp32.*", builder pass int8_tactics): FLOAT steps with the int8 layers' results."""
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return sum(layer["kernel"].startswith("qlinear.fp32.") for layer in info["layers"])


def throughput(infer, x, batch, runs):
    """Images per second of infer on `batch` images (median of `runs` timed calls after a warm-up)."""
    xb = np.ascontiguousarray(np.resize(x, (batch,) + x.shape[1:]))
    ms = median_latency_ms(lambda: infer(xb), warmup=max(2, runs // 10), runs=runs)
    return 1e3 * batch / ms


def evaluate(which, weights, x_test, y_test, calib_images, runs1, runs64, precisions=PRECISIONS):
    """{precision: {"accuracy", "reduced", "steps", "b1", "b64"}} for "lenet" or "addernet"."""
    build = build_lenet if which == "lenet" else build_addernet
    results = {}
    for precision in precisions:
        engine, infer = build(weights, precision, calib_images)
        pred = np.concatenate([infer(x_test[i:i + MAX_BATCH]) for i in range(0, len(x_test), MAX_BATCH)])
        reduced, steps = reduced_steps(engine)
        results[precision] = {
            "accuracy": float((pred.argmax(1) == y_test).mean()),
            "reduced": reduced,
            "fp32_tactics": fp32_tactic_steps(engine),
            "steps": steps,
            "b1": throughput(infer, x_test, 1, runs1),
            "b64": throughput(infer, x_test, MAX_BATCH, runs64),
        }
    return results


def print_table(title, results):
    fp32 = results["FP32"]
    print()
    print(title)
    print("  %-6s %9s %8s %16s %14s %15s" % ("", "accuracy", "vs FP32", "reduced steps", "batch-1 img/s",
                                              "batch-64 img/s"))
    for precision, r in results.items():
        print("  %-6s %8.2f%% %+8.2f %10d of %-3d %14.0f %15.0f"
              % (precision, 100 * r["accuracy"], 100 * (r["accuracy"] - fp32["accuracy"]), r["reduced"], r["steps"],
                 r["b1"], r["b64"]))
    print("  speed-up vs FP32 at batch 64: " + ", ".join("%s %.2fx" % (p, r["b64"] / fp32["b64"])
                                                         for p, r in results.items() if p != "FP32"))


def main(argv=None):
    p = argparse.ArgumentParser(description="LeNet and AdderNet on Fashion-MNIST at FP32, FP16, BF16 and INT8")
    p.add_argument("--quick", action="store_true", help="1000 test images, 512 calibration images, fewer runs")
    p.add_argument("--limit", type=int, default=None, help="test images (default: all 10000; --quick 1000)")
    p.add_argument("--calib", type=int, default=None, help="training images to calibrate on (default 2048)")
    p.add_argument("--runs", type=int, default=None, help="timed batch-1 runs (batch 64: a tenth; default 300)")
    p.add_argument("--models", default="lenet,addernet", help="comma-separated: lenet, addernet")
    args = p.parse_args(argv)
    limit = args.limit or (1000 if args.quick else None)
    n_calib = args.calib or (512 if args.quick else 2048)
    runs1 = args.runs or (50 if args.quick else 300)
    runs64 = max(3, runs1 // 10)
    try:
        x_test, y_test = fashion_mnist.load("test", limit=limit)
        x_train, _ = fashion_mnist.load("train", limit=n_calib)
    except fashion_mnist.DatasetMissingError as e:
        sys.exit(str(e))
    checkpoints = {"lenet": lenet_demo.lenet.CHECKPOINT, "addernet": adder_demo.addernet.CHECKPOINT}
    failed = 0
    all_results = {}
    for which in [m.strip() for m in args.models.split(",") if m.strip()]:
        if which not in checkpoints:
            sys.exit("unknown model %r (lenet, addernet)" % which)
        weights = common.load_example(which).load_weights(checkpoints[which])
        results = evaluate(which, weights, x_test, y_test, x_train, runs1, runs64)
        all_results[which] = results
        print_table("%s / Fashion-MNIST: %d test images, INT8 calibrated on %d training images, %d thread(s) "
                    "(the machine may be shared: throughput is indicative)"
                    % ("LeNet" if which == "lenet" else "AdderNet", len(y_test), len(x_train),
                       common.available_cpus()), results)
        if which == "addernet" and "INT8" in results:
            print("  AdderNet INT8 speed-up at batch 64: %.2fx (issue #11 target: >= 3x)"
                  % (results["INT8"]["b64"] / results["FP32"]["b64"]))
        drop = 100 * (results["FP32"]["accuracy"] - results["INT8"]["accuracy"])
        if drop > INT8_MAX_DROP + 1e-9:
            print("FAIL: %s INT8 accuracy is %.2f points below FP32 (limit %.1f)" % (which, drop, INT8_MAX_DROP))
            failed = 1
    return failed, all_results


if __name__ == "__main__":
    sys.exit(main()[0])
