#!/usr/bin/env python3
"""Attention fusion A/B on one ONNX model, trtlite only: latency with the builder passes fuse_attention and
fold_transpose on ("on") and off ("off"), and the attention sub-graph's share of the profiled step time.

    python3 benchmarks/attention_ab.py build/zoo/bert_base_4l.onnx --threads 2 --rounds 5 --iters 20

Method: one engine per variant built in this process (batch --batch, the model's dynamic dims set to it), equal
threads (config and context), interleaved rounds (the variant order alternates per round), each round a warm-up
run and --iters timed runs; the median and p90 over all rounds.  The outputs of both variants are compared first.
Profile: a separate pass with context.profiler set; the attention sub-graph is every "on" step whose kernel is
attention.* and every "off" step whose name no "on" step has (the layers the two passes folded or fused).
"""
import argparse
import json
import time

import numpy as np

import trtlite as trt


class Times(trt.IProfiler):
    def __init__(self):
        trt.IProfiler.__init__(self)
        self.t = {}

    def report_layer_time(self, layer_name, ms):
        self.t[layer_name] = self.t.get(layer_name, 0.0) + ms


def build(path, batch, threads, off):
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    net = builder.create_network(0)
    parser = trt.OnnxParser(net, logger)
    assert parser.parse_from_file(path), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    config = builder.create_builder_config()
    config.num_threads = threads
    for p in off:
        config.set_pass_enabled(p, False)
    prof = builder.create_optimization_profile()
    feeds = {}
    rng = np.random.default_rng(0)
    for i in range(net.num_inputs):
        t = net.get_input(i)
        shp = tuple(batch if d < 0 else d for d in t.shape)
        prof.set_shape(t.name, shp, shp, shp)
        feeds[t.name] = rng.standard_normal(shp).astype(np.float32)
    config.add_optimization_profile(prof)
    t0 = time.perf_counter()
    engine = builder.build_engine(net, config)
    build_s = time.perf_counter() - t0
    ctx = engine.create_execution_context()
    ctx.num_threads = threads
    for n, a in feeds.items():
        ctx.set_input_shape(n, a.shape)
    layers = json.loads(engine.create_engine_inspector().get_engine_information(
        trt.LayerInformationFormat.JSON))["layers"]
    return ctx, feeds, layers, build_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    variants = {"on": (), "off": ("fuse_attention", "fold_transpose")}
    built = {k: build(a.model, a.batch, a.threads, off) for k, off in variants.items()}
    outs = {k: list(c.infer(f).values())[0] for k, (c, f, _, _) in built.items()}
    diff = float(np.abs(outs["on"] - outs["off"]).max())
    times = {k: [] for k in variants}
    for r in range(a.rounds):
        for k in (list(variants) if r % 2 == 0 else list(variants)[::-1]):
            ctx, feeds, _, _ = built[k]
            ctx.infer(feeds)
            for _ in range(a.iters):
                t0 = time.perf_counter()
                ctx.infer(feeds)
                times[k].append((time.perf_counter() - t0) * 1e3)
    res = {"model": a.model, "batch": a.batch, "threads": a.threads, "max_abs_on_vs_off": diff}
    on_names = {layer["name"] for layer in built["on"][2]}
    for k, (ctx, feeds, layers, build_s) in built.items():
        prof = Times()
        ctx.profiler = prof
        for _ in range(max(3, a.iters // 2)):
            ctx.infer(feeds)
        ctx.profiler = None
        if k == "on":
            sub = [layer["name"] for layer in layers if layer["kernel"].startswith("attention.")]
        else:
            sub = [layer["name"] for layer in layers if layer["name"] not in on_names]
        total = sum(prof.t.values())
        t = np.asarray(times[k])
        res[k] = {"median_ms": float(np.median(t)), "p90_ms": float(np.percentile(t, 90)), "steps": len(layers),
                  "attention_steps": sum(layer["kernel"].startswith("attention.") for layer in layers),
                  "build_s": build_s, "attention_subgraph_share": sum(prof.t.get(n, 0.0) for n in sub) / total,
                  "attention_subgraph_steps": len(sub)}
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
