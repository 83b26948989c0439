"""Per-layer trtlite vs onnxruntime on zoo models, one process, alternating runs (for loaded machines).

    python benchmarks/zoo/layers_vs_ort.py --models mnasnet1_0,mobilenet_v2 [--dir /path/zoo] [--runs 30]
        [--threads 1] [--plans DIR] [--layers] [--json FILE] [--without KERNEL]

Builds each model's engine (batch 1, `--threads`; `--plans DIR` keeps / reuses the plan files), then alternates
one trtlite run under context.profiler with one onnxruntime run under its own profiler (enable_profiling), `--runs`
times, and keeps each layer's / node's minimum.  Layers are joined to onnxruntime nodes as benchmarks/run.py's
--profile does and summed by layer class ("depthwise 5x5 s2", "conv 1x1 s1", ...) and, for depthwise layers, by
class and map size.  The trtlite figures are the profiler's per-layer times, onnxruntime's its node kernel times;
both are wall clock, so the minimum over many alternating runs is what a shared machine can compare.  --without K
adds a second engine built from the first one's timing cache with kernel K made slow, run alternately with the
others: a new kernel's A/B in one process.  Not part of CI.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import bench, DEFAULT_DIR  # noqa: E402  (zoo/run.py: benchmarks/run.py loaded as `bench`)


def build_plan(trt, onnx_path, shape, threads, cache=b""):
    """(serialized plan, timing cache bytes) of the ONNX model at one input shape (min = opt = max) and thread
    count, kernel timings read from / added to the timing cache `cache`."""
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    with open(onnx_path, "rb") as f:
        if not parser.parse(f.read()):
            raise RuntimeError("; ".join(str(parser.get_error(i)) for i in range(parser.num_errors)))
    config = builder.create_builder_config()
    config.num_threads = threads
    profile = builder.create_optimization_profile()
    profile.set_shape("input", shape, shape, shape)
    config.add_optimization_profile(profile)
    tc = config.create_timing_cache(cache)
    config.set_timing_cache(tc, False)
    return bytes(builder.build_serialized_network(network, config)), bytes(tc.serialize())


def without_kernel(cache, kernel):
    """The timing cache with every timing of `kernel` made 1 s, so that a build from it picks what it would pick
    without that kernel (the A/B baseline of a new kernel; the timing cache layout as tests/test_conv_pixel_gemm.py
    reads it)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests"))
    import test_conv_pixel_gemm as pg
    cpus, entries = pg._parse(cache)
    for e in entries:
        if e[2].startswith(kernel + "|"):
            e[3] = 1e3
    return pg._write(cpus, entries)


class Engine:
    """One built engine with its buffers and a profiler keeping per-layer minima."""

    def __init__(self, trt, plan, shape, x, threads):
        import numpy as np
        self.engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
        self.context = self.engine.create_execution_context()
        self.context.num_threads = threads
        self.context.set_input_shape("input", shape)
        names = [self.engine.get_tensor_name(i) for i in range(self.engine.num_io_tensors)]
        out_name = [n for n in names if n != "input"][0]
        self.arrays = {"input": x, out_name: np.empty(tuple(self.engine.get_tensor_shape(out_name)), np.float32)}
        self.ptrs = [self.arrays[n].ctypes.data for n in names]
        info = json.loads(self.engine.create_engine_inspector().get_engine_information(
            trt.LayerInformationFormat.JSON))
        self.layers = {lay["name"]: lay for lay in info.get("layers", [])}
        self.times = {}
        times = self.times

        class Prof(trt.IProfiler):
            def report_layer_time(self, layer_name, ms):
                times[layer_name] = min(ms, times.get(layer_name, 1e30))

        self.context.profiler = Prof()

    def run(self):
        self.context.execute_v2(self.ptrs)


def one_model(model, args):
    import numpy as np
    import onnxruntime as ort
    import trtlite as trt
    onnx_path = os.path.join(args.dir, model + ".onnx")
    sess0 = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    shape = tuple(d if isinstance(d, int) else 1 for d in sess0.get_inputs()[0].shape)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    plan_path = os.path.join(args.plans, f"{model}_t{args.threads}.plan") if args.plans else None
    if plan_path and os.path.exists(plan_path) and not args.without:
        with open(plan_path, "rb") as f:
            plan = f.read()
    else:
        plan, cache = build_plan(trt, onnx_path, shape, args.threads)
        if plan_path:
            with open(plan_path, "wb") as f:
                f.write(plan)
    engines = [Engine(trt, plan, shape, x, args.threads)]
    if args.without:
        plan_b, _ = build_plan(trt, onnx_path, shape, args.threads, without_kernel(cache, args.without))
        engines.append(Engine(trt, plan_b, shape, x, args.threads))
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.gettempdir(), f"layers_vs_ort_{os.getpid()}")
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    for _ in range(3):
        sess.run(None, {"input": x})
    for _ in range(args.runs):
        for e in engines:
            e.run()
        sess.run(None, {"input": x})
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    ort_nodes = {}
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            name = e["name"][:-len("_kernel_time")]
            ms = e["dur"] / 1000.0
            if name not in ort_nodes or ms < ort_nodes[name]["ms"]:
                ort_nodes[name] = {"ms": ms, "op": e.get("args", {}).get("op_name", "?")}
    nodes = bench.onnx_node_info(onnx_path)
    results = []
    for e in engines:
        rows = []
        for name, ms in e.times.items():
            lay = e.layers.get(name, {})
            nd = bench.node_of(name, nodes) or {}
            r = {"name": name, "ms": ms, "kernel": lay.get("kernel", "?"), "desc": nd.get("desc", ""),
                 "out": [o.get("dims", "") for o in lay.get("outputs", [])][:1],
                 "out_name": (lay.get("outputs") or [{}])[0].get("name", "")}
            r["ort"] = bench.join_ort(r, ort_nodes)
            r["ort_ms"] = ort_nodes[r["ort"]]["ms"] if r["ort"] else 0.0
            rows.append(r)
        results.append(rows)
    return results, ort_nodes


def out_map(r):
    """The output map size of a layer ("14x14"), from the inspector's dims."""
    m = re.findall(r"\d+", str(r["out"][0])) if r["out"] else []
    return f"{m[-2]}x{m[-1]}" if len(m) >= 2 else "?"


def report(model, rows, ort_nodes, show_layers):
    used = {r["ort"] for r in rows if r["ort"]}
    total, ort_total = sum(r["ms"] for r in rows), sum(v["ms"] for v in ort_nodes.values())
    rest = sum(v["ms"] for k, v in ort_nodes.items() if k not in used)
    print(f"== {model}: trtlite layers {total:.3f} ms, onnxruntime nodes {ort_total:.3f} ms "
          f"({rest:.3f} ms in nodes without a trtlite counterpart: reorders, ...)")
    groups = {}
    for r in rows:
        cat = bench.category(r["desc"])
        keys = [cat] + ([f"  {cat} {out_map(r)}"] if cat.startswith("depthwise") else [])
        for key in keys:
            g = groups.setdefault(key, [0, 0.0, 0.0, {}])
            g[0] += 1
            g[1] += r["ms"]
            g[2] += r["ort_ms"]
            g[3][r["kernel"]] = g[3].get(r["kernel"], 0) + 1
    order = sorted((k for k in groups if not k.startswith(" ")), key=lambda k: -(groups[k][1] - groups[k][2]))
    for k in order:
        subs = sorted((s for s in groups if s.startswith("  " + k + " ")), key=lambda s: s)
        for key in [k] + subs:
            n, ms, oms, kern = groups[key]
            kn = ", ".join(f"{a.replace('convolution.', '')} x{b}"
                           for a, b in sorted(kern.items(), key=lambda kv: -kv[1]))
            print(f"  {key:<30} x{n:<3} trtlite {ms:7.3f} ms  ORT {oms:7.3f} ms  gap {ms - oms:+7.3f}  "
                  f"({ms / oms if oms else float('nan'):4.2f}x)  {kn}")
    if show_layers:
        for r in sorted(rows, key=lambda r: -(r["ms"] - r["ort_ms"]))[:25]:
            print(f"    {r['ms']:7.3f} vs {r['ort_ms']:7.3f} ms  {r['kernel']:<34} {r['desc']:<26} {out_map(r):<8} "
                  f"{r['name'][:50]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--dir", default=DEFAULT_DIR)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--plans", default=None, help="directory to keep / reuse the built plans in")
    ap.add_argument("--layers", action="store_true", help="also list the 25 layers furthest behind onnxruntime")
    ap.add_argument("--json", default=None, help="write the per-layer rows as JSON")
    ap.add_argument("--without", default=None, metavar="KERNEL",
                    help="also build and profile (alternating) an engine whose timing cache makes KERNEL slow: "
                         "the same build without that kernel (A/B of a new kernel)")
    args = ap.parse_args(argv)
    out = {}
    for model in args.models.split(","):
        results, ort_nodes = one_model(model, args)
        for rows, label in zip(results, ["", f" without {args.without}"]):
            report(model + label, rows, ort_nodes, args.layers)
        out[model] = results
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
