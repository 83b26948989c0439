#!/usr/bin/env python3
"""Adder2d_TRT fp32 against an equal-shape convolution (trtlite's own kernel choice, Winograd included), one thread.

One-layer engines (explicit batch, FLOAT), alternating in one process; thread CPU time of execute_v2, minimum and
median of --reps rounds.  Shapes: AdderNet's two adder layers at batch 64 and 1, and a ResNet-style 3x3 layer.

    python benchmarks/adder_vs_conv.py --reps 15
"""
import argparse
import json
import os
import time

import numpy as np

import trtlite as trt

LOGGER = trt.Logger(trt.Logger.ERROR)
# (name, N, C, H, W, F, k, pad)
SHAPES = [("adder1 b64", 64, 1, 28, 28, 20, 5, 0), ("adder2 b64", 64, 20, 12, 12, 50, 5, 0),
          ("adder1 b1", 1, 1, 28, 28, 20, 5, 0), ("adder2 b1", 1, 20, 12, 12, 50, 5, 0),
          ("resnet 64->64 3x3 28x28 b4", 4, 64, 28, 28, 64, 3, 1)]


def engine(kind, N, C, H, W, F, k, pad, rng):
    builder = trt.Builder(LOGGER)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, (N, C, H, W))
    w = rng.uniform(-1, 1, (F, C, k, k)).astype(np.float32)
    if kind == "adder":
        trt.init_libnvinfer_plugins(LOGGER, "")
        fields = [trt.PluginField("weights", w.ravel(), trt.PluginFieldType.FLOAT32),
                  trt.PluginField("nbFilters", np.array([F], np.int32), trt.PluginFieldType.INT32),
                  trt.PluginField("nbInputChannels", np.array([C], np.int32), trt.PluginFieldType.INT32),
                  trt.PluginField("filterSize", np.array([k], np.int32), trt.PluginFieldType.INT32),
                  trt.PluginField("padding", np.array([pad], np.int32), trt.PluginFieldType.INT32)]
        c = trt.get_plugin_registry().get_plugin_creator("Adder2d_TRT", "1", "")
        layer = net.add_plugin_v2([x], c.create_plugin("adder", trt.PluginFieldCollection(fields)))
    else:
        layer = net.add_convolution_nd(x, F, (k, k), w, np.zeros(F, np.float32))
        layer.padding_nd = (pad, pad)
    layer.name = kind
    net.mark_output(layer.get_output(0))
    e = builder.build_engine(net, builder.create_builder_config())
    info = json.loads(e.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    kern = info["layers"][0].get("kernel", info["layers"][0].get("tactic", "?"))
    ctx = e.create_execution_context()
    ctx.num_threads = 1
    out = np.empty(tuple(e.get_binding_shape(1)), np.float32)
    return ctx, kern, out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=15)
    a = p.parse_args()
    rng = np.random.default_rng(0)
    print("one thread, thread CPU time, %d rounds alternating, load %.1f" % (a.reps, os.getloadavg()[0]))
    for name, N, C, H, W, F, k, pad in SHAPES:
        x = rng.uniform(-1, 1, (N, C, H, W)).astype(np.float32)
        res = {}
        ctxs = {kind: engine(kind, N, C, H, W, F, k, pad, rng) for kind in ("adder", "conv")}
        t = {kind: [] for kind in ctxs}
        for _ in range(2):
            for kind, (ctx, _, out) in ctxs.items():
                ctx.execute_v2([x.ctypes.data, out.ctypes.data])
        reps = a.reps if N > 1 else a.reps * 10
        for _ in range(reps):
            for kind, (ctx, _, out) in ctxs.items():
                bindings = [x.ctypes.data, out.ctypes.data]  # preallocated buffers (x and out stay alive)
                t0 = time.thread_time()
                ctx.execute_v2(bindings)
                t[kind].append(time.thread_time() - t0)
        for kind in ctxs:
            res[kind] = (1e3 * min(t[kind]), 1e3 * float(np.median(t[kind])))
        print("  %-28s adder %7.3f / %7.3f ms   conv (%s) %7.3f / %7.3f ms   adder/conv %.2fx (min) %.2fx (median)"
              % (name, res["adder"][0], res["adder"][1], ctxs["conv"][1], res["conv"][0], res["conv"][1],
                 res["adder"][0] / res["conv"][0], res["adder"][1] / res["conv"][1]))


if __name__ == "__main__":
    main()
