"""Per-layer trtlite vs onnxruntime on zoo models, one process, alternating runs (for loaded machines).

    python benchmarks/zoo/layers_vs_ort.py --models mnasnet1_0,mobilenet_v2 [--dir /path/zoo] [--runs 30]
        [--threads 1] [--plans DIR] [--layers] [--json FILE]

Builds each model's engine (batch 1, `--threads`; `--plans DIR` keeps / reuses the plan files), then alternates
one trtlite run under context.profiler with one onnxruntime run under its own profiler (enable_profiling), `--runs`
times, and keeps each layer's / node's minimum.  Layers are joined to onnxruntime nodes as benchmarks/run.py's
--profile does and summed by layer class ("depthwise 5x5 s2", "conv 1x1 s1", ...) and, for depthwise layers, by
class and map size.  The trtlite figures are the profiler's per-layer times, onnxruntime's its node kernel times;
both are wall clock, so the minimum over many alternating runs is what a shared machine can compare.  Not part of CI.
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


def build_plan(trt, onnx_path, shape, threads):
    """Serialized plan of the ONNX model at one input shape (min = opt = max) and thread count."""
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
    return bytes(builder.build_serialized_network(network, config))


def one_model(model, args):
    import numpy as np
    import onnxruntime as ort
    import trtlite as trt
    onnx_path = os.path.join(args.dir, model + ".onnx")
    sess0 = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    shape = tuple(d if isinstance(d, int) else 1 for d in sess0.get_inputs()[0].shape)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    plan_path = os.path.join(args.plans, f"{model}_t{args.threads}.plan") if args.plans else None
    if plan_path and os.path.exists(plan_path):
        with open(plan_path, "rb") as f:
            plan = f.read()
    else:
        plan = build_plan(trt, onnx_path, shape, args.threads)
        if plan_path:
            with open(plan_path, "wb") as f:
                f.write(plan)
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
    context = engine.create_execution_context()
    context.num_threads = args.threads
    context.set_input_shape("input", shape)
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    out_name = [n for n in names if n != "input"][0]
    out = np.empty(tuple(engine.get_tensor_shape(out_name)), np.float32)
    arrays = {"input": x, out_name: out}
    ptrs = [arrays[n].ctypes.data for n in names]
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    layers = {lay["name"]: lay for lay in info.get("layers", [])}
    times = {}

    class Prof(trt.IProfiler):
        def report_layer_time(self, layer_name, ms):
            times[layer_name] = min(ms, times.get(layer_name, 1e30))

    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.gettempdir(), f"layers_vs_ort_{os.getpid()}")
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    context.profiler = Prof()
    for _ in range(3):
        sess.run(None, {"input": x})
    for _ in range(args.runs):
        context.execute_v2(ptrs)
        sess.run(None, {"input": x})
    context.profiler = None
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
    rows = []
    for name, ms in times.items():
        lay = layers.get(name, {})
        nd = bench.node_of(name, nodes) or {}
        r = {"name": name, "ms": ms, "kernel": lay.get("kernel", "?"), "desc": nd.get("desc", ""),
             "out": [o.get("dims", "") for o in lay.get("outputs", [])][:1],
             "out_name": (lay.get("outputs") or [{}])[0].get("name", "")}
        r["ort"] = bench.join_ort(r, ort_nodes)
        r["ort_ms"] = ort_nodes[r["ort"]]["ms"] if r["ort"] else 0.0
        rows.append(r)
    return rows, ort_nodes


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
            kn = ", ".join(f"{a.replace('convolution.', '')} x{b}" for a, b in sorted(kern.items(), key=lambda kv: -kv[1]))
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
    args = ap.parse_args(argv)
    out = {}
    for model in args.models.split(","):
        rows, ort_nodes = one_model(model, args)
        report(model, rows, ort_nodes, args.layers)
        out[model] = rows
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
