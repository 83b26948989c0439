"""Per-layer trtlite vs onnxruntime on zoo models, one process, alternating runs (for loaded machines).

    python benchmarks/zoo/layers_vs_ort.py --models mnasnet1_0,mobilenet_v2 [--dir /path/zoo] [--runs 30]
        [--threads 1,2] [--plans DIR] [--by class|kind] [--layers] [--json FILE] [--without KERNEL]
        [--thread-clock] [--without-pass PASS] [--batch N]

Builds each model's engine (batch `--batch`, default 1, per `--threads` count; `--plans DIR` keeps / reuses the plan files), then
  * end to end: `--runs` runs of trtlite and onnxruntime (sequential, IOBinding-free `run`) alternating ABBA, without
    profilers: median and minimum wall ms, and at one thread the minimum CPU time of the calling thread (both run on
    it), which a loaded machine inflates far less than wall time;
  * per layer: one trtlite run under context.profiler alternating with one onnxruntime run under its own profiler
    (enable_profiling), `--runs` times, each layer's / node's minimum.  `--by class` (default) joins layers to
    onnxruntime nodes as benchmarks/run.py's --profile does and sums them by layer class ("depthwise 5x5 s2",
    "conv 1x1 s1", ...; depthwise layers also by map size); `--by kind` sums both sides per op kind (zoo/run.py's
    op_kind for trtlite; onnxruntime's Conv nodes, fused or NCHWc, traced back to their ONNX Conv node for the same
    class), with each side's sum of layers beside its end-to-end minimum (the difference: per-step and thread-pool
    overhead the steps do not account for).
Both are wall clock unless `--thread-clock` (trtlite's per-layer times by the calling thread's CPU time,
TRTL_PROFILE_CLOCK=thread: one thread on a loaded machine; onnxruntime's stay wall time), so read minima over many
alternating runs.  `--without K` adds a second engine built from the first one's timing cache with kernel K made
slow, run alternately with the others: a new kernel's A/B in one process; `--without-pass P` does the same with
builder pass P off (`P1,P2`: those passes all off; the end-to-end line then also gives that engine's times).  Outputs are checked against
onnxruntime first.  At more than one thread onnxruntime's pool does not spin between runs here (its spinning
threads took the cores of the trtlite run after it: twice trtlite's time on SqueezeNet); the zoo's own runs
(run.py) keep one engine per process.  Not part of CI.
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
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # the repository: trtlite in place
import run as zr  # noqa: E402  (zoo/run.py: its op_kind / onnx_ops, benchmarks/run.py loaded as `bench`)
from run import bench, DEFAULT_DIR  # noqa: E402


def build_plan(trt, onnx_path, shape, threads, cache=b"", off=(), edit=None):
    """(serialized plan, timing cache bytes) of the ONNX model at one input shape (min = opt = max) and thread
    count, kernel timings read from / added to the timing cache `cache`, the builder passes `off` switched off;
    `edit(network)`, where given, changes the parsed network first (benchmarks/nchwc_stem_ab.py)."""
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    with open(onnx_path, "rb") as f:
        if not parser.parse(f.read()):
            raise RuntimeError("; ".join(str(parser.get_error(i)) for i in range(parser.num_errors)))
    if edit:
        edit(network)
    config = builder.create_builder_config()
    config.num_threads = threads
    for name in off:
        config.set_pass_enabled(name, False)
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
    """One built engine with its buffers; attach_profiler() keeps per-layer minima from then on."""

    def __init__(self, trt, plan, shape, x, threads):
        import numpy as np
        self.trt = trt
        self.engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
        self.context = self.engine.create_execution_context()
        self.context.num_threads = threads
        self.context.set_input_shape("input", shape)
        names = [self.engine.get_tensor_name(i) for i in range(self.engine.num_io_tensors)]
        self.out_name = [n for n in names if n != "input"][0]
        self.arrays = {"input": x,
                       self.out_name: np.empty(tuple(self.engine.get_tensor_shape(self.out_name)), np.float32)}
        self.ptrs = [self.arrays[n].ctypes.data for n in names]
        info = json.loads(self.engine.create_engine_inspector().get_engine_information(
            trt.LayerInformationFormat.JSON))
        self.layers = {lay["name"]: lay for lay in info.get("layers", [])}
        self.times = {}

    def attach_profiler(self):
        times = self.times

        class Prof(self.trt.IProfiler):
            def report_layer_time(self, layer_name, ms):
                times[layer_name] = min(ms, times.get(layer_name, 1e30))

        self.context.profiler = Prof()

    def run(self):
        self.context.execute_v2(self.ptrs)


def end_to_end(runs, fns):
    """{name: (wall ms list, calling-thread CPU ms list)} of `runs` runs of each fn, alternating ABBA."""
    import time
    out = {k: ([], []) for k in fns}
    order = list(fns)
    for i in range(runs):
        for k in (order if i % 2 == 0 else order[::-1]):
            w0, c0 = time.perf_counter(), time.thread_time()
            fns[k]()
            out[k][1].append((time.thread_time() - c0) * 1e3)
            out[k][0].append((time.perf_counter() - w0) * 1e3)
    return out


def ab_parser(doc, runs, batch):
    """The options the one-process A/B scripts share (--models, --dir, --runs, --batch, --threads)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--dir", default=DEFAULT_DIR)
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--batch", type=int, default=batch)
    ap.add_argument("--threads", type=int, default=1)
    return ap


def ab_inputs(model_dir, model, batch):
    """A zoo model's path, its input shape at `batch`, a random input and onnxruntime's output for it."""
    import numpy as np
    import onnxruntime as ort
    path = os.path.join(model_dir, model + ".onnx")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    shape = tuple(d if isinstance(d, int) else batch for d in sess.get_inputs()[0].shape)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return path, shape, x, sess.run(None, {"input": x})[0]


def ab_engines(trt, model, plans, shape, x, ref, threads, runs, nodes=None):
    """The A/B of two (or more) plans of one model in one process (benchmarks/nchwc_*_ab.py): an Engine of each of
    `plans` ({name: plan}), checked against onnxruntime's output `ref`, warmed, timed end to end alternating ABBA
    (end_to_end), then `runs` more runs each under the profiler with TRTL_PROFILE_CLOCK=thread, the order reversed
    every other run (each layer's minimum lands in engine.times).  `nodes`: onnx node info set on each engine.
    Returns (engines, end_to_end's dict)."""
    engines = {k: Engine(trt, p, shape, x, threads) for k, p in plans.items()}
    for name, e in engines.items():
        if nodes is not None:
            e.nodes = nodes
        e.run()
        check = bench.verify(e.arrays[e.out_name], ref)
        if not check["ok"]:
            raise RuntimeError(f"{model}: engine '{name}' disagrees with onnxruntime: {check}")
    for _ in range(3):
        for e in engines.values():
            e.run()
    e2e = end_to_end(runs, {k: e.run for k, e in engines.items()})
    for e in engines.values():
        e.attach_profiler()
    os.environ["TRTL_PROFILE_CLOCK"] = "thread"
    try:
        order = list(engines.values())
        for i in range(runs):
            for e in (order if i % 2 == 0 else order[::-1]):
                e.run()
    finally:
        os.environ.pop("TRTL_PROFILE_CLOCK", None)
    return engines, e2e


def one_model(model, threads, args):
    """(per-engine layer rows, onnxruntime nodes {name: {ms, op}}, end-to-end times, output check) of one model."""
    import numpy as np
    import onnxruntime as ort
    import trtlite as trt
    onnx_path = os.path.join(args.dir, model + ".onnx")
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if threads > 1:  # its pool threads spin after each run and, alternating in one process, take trtlite's cores
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")  # (SqueezeNet, 2 threads: 2x slower)
    sess0 = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    shape = tuple(d if isinstance(d, int) else args.batch for d in sess0.get_inputs()[0].shape)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    plan_path = os.path.join(args.plans, f"{model}_b{args.batch}_t{threads}.plan") if args.plans else None
    if plan_path and os.path.exists(plan_path) and not args.without and not args.without_pass:
        with open(plan_path, "rb") as f:
            plan = f.read()
    else:
        plan, cache = build_plan(trt, onnx_path, shape, threads)
        if plan_path:
            with open(plan_path, "wb") as f:
                f.write(plan)
    engines = [Engine(trt, plan, shape, x, threads)]
    if args.without:
        plan_b, _ = build_plan(trt, onnx_path, shape, threads, without_kernel(cache, args.without))
        engines.append(Engine(trt, plan_b, shape, x, threads))
    elif args.without_pass:
        plan_b, _ = build_plan(trt, onnx_path, shape, threads, cache, off=tuple(args.without_pass.split(",")))
        engines.append(Engine(trt, plan_b, shape, x, threads))
    ref = sess0.run(None, {"input": x})[0]
    engines[0].run()
    check = bench.verify(engines[0].arrays[engines[0].out_name], ref)
    fns = {"trtlite": engines[0].run, "onnxruntime": lambda: sess0.run(None, {"input": x})}
    if args.without_pass:
        engines[1].run()
        check_b = bench.verify(engines[1].arrays[engines[1].out_name], ref)
        if not check_b["ok"] and check["ok"]:  # (a QDQ file may disagree with onnxruntime's int8 kernels in both)
            raise RuntimeError(f"{model}: the engine without pass {args.without_pass} disagrees with onnxruntime")
        fns["without " + args.without_pass] = engines[1].run
    for _ in range(3):
        for f in fns.values():
            f()
    e2e = end_to_end(args.runs, fns)

    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.gettempdir(), f"layers_vs_ort_{os.getpid()}")
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    for e in engines:
        e.attach_profiler()
    if args.thread_clock:  # read at each profiled execution
        os.environ["TRTL_PROFILE_CLOCK"] = "thread"
    for _ in range(3):
        sess.run(None, {"input": x})
    for _ in range(args.runs):
        for e in engines:
            e.run()
        sess.run(None, {"input": x})
    os.environ.pop("TRTL_PROFILE_CLOCK", None)
    ot, oop = bench.ort_node_times(sess)
    ort_nodes = {k: {"ms": float(min(v)), "op": oop[k]} for k, v in ot.items()}
    nodes = bench.onnx_node_info(onnx_path)
    results = []
    for e in engines:
        rows = []
        for name, ms in e.times.items():
            lay = e.layers.get(name, {})
            nd = bench.node_of(name, nodes) or {}
            r = {"name": name, "ms": ms, "kernel": lay.get("kernel", "?"), "type": lay.get("type"),
                 "desc": nd.get("desc", ""), "out": [o.get("dims", "") for o in lay.get("outputs", [])][:1],
                 "out_name": (lay.get("outputs") or [{}])[0].get("name", "")}
            r["ort"] = bench.join_ort(r, ort_nodes)
            r["ort_ms"] = ort_nodes[r["ort"]]["ms"] if r["ort"] else 0.0
            rows.append(r)
        results.append(rows)
    return results, ort_nodes, e2e, check


def ort_conv_kinds(onnx_path, nodes, category):
    """{onnxruntime profiler node name -> op kind} resolver: fused Conv nodes keep the ONNX name, NCHWc ones are
    named after their output tensor (+ '_nchwc'), whose producer may be the Relu/Add fused into the Conv."""
    import onnx
    m = onnx.load(onnx_path, load_external_data=False)
    producer = {o: nd for nd in m.graph.node for o in nd.output}
    byname = {nd.name: nd for nd in m.graph.node}

    def kind(name):
        nd = byname.get(name) or byname.get(re.sub(r"^fused ", "", name)) or producer.get(re.sub(r"_nchwc$", "", name))
        for _ in range(6):
            if nd is None:
                return None
            if nd.op_type == "Conv":
                return category(nodes[nd.name]["desc"]) if nd.name in nodes else None
            if nd.op_type not in ("Relu", "Add", "Clip", "Sigmoid", "Mul", "LeakyRelu", "HardSigmoid", "HardSwish"):
                return None
            nd = next((producer[i] for i in nd.input if i in producer), None)
        return None
    return kind


def report_end_to_end(title, e2e, check, threads, runs):
    import numpy as np
    med = {k: float(np.median(v[0])) for k, v in e2e.items()}
    mn = {k: min(v[0]) for k, v in e2e.items()}
    cpu = {k: min(v[1]) for k, v in e2e.items()}
    print(f"\n## {title}, {threads} thread(s): agrees {check['ok']} (max abs {check['max_abs']:.1e}), "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"end to end, {runs} runs each (ABBA): wall median trtlite {med['trtlite']:.2f} ms, onnxruntime "
          f"{med['onnxruntime']:.2f} ms (ORT / trtlite {med['onnxruntime'] / med['trtlite']:.3f}); wall min "
          f"{mn['trtlite']:.2f} / {mn['onnxruntime']:.2f} ({mn['onnxruntime'] / mn['trtlite']:.3f})" +
          (f"; caller CPU min {cpu['trtlite']:.2f} / {cpu['onnxruntime']:.2f} "
           f"({cpu['onnxruntime'] / cpu['trtlite']:.3f})" if threads == 1 else ""))
    for k in [k for k in e2e if k.startswith("without ")]:
        print(f"  {k}: wall median {med[k]:.2f} ms, wall min {mn[k]:.2f} ms" +
              (f", caller CPU min {cpu[k]:.2f} ms" if threads == 1 else ""))
    return mn


def report_kinds(title, onnx_path, rows, ort_nodes, mn):
    """Both sides summed per op kind, with each side's sum of layers beside its end-to-end minimum."""
    print(f"== {title}")
    graph = zr.onnx_ops(onnx_path)
    kinds = {}
    for r in rows:
        k = kinds.setdefault(zr.op_kind(r["name"], r["type"], graph), [0, 0.0, 0, 0.0])
        k[0] += 1
        k[1] += r["ms"]
    conv_kind = ort_conv_kinds(onnx_path, graph[3], bench.category)
    for nm, v in ort_nodes.items():
        kind = (conv_kind(nm) if v["op"] in ("Conv", "FusedConv") else None) or v["op"]
        k = kinds.setdefault(kind, [0, 0.0, 0, 0.0])
        k[2] += 1
        k[3] += v["ms"]
    tt, to = sum(k[1] for k in kinds.values()), sum(k[3] for k in kinds.values())
    print(f"sum of per-layer minima: trtlite {tt:.2f} ms over {len(rows)} layers (end-to-end min - sum = "
          f"{mn['trtlite'] - tt:+.2f} ms), onnxruntime {to:.2f} ms over {len(ort_nodes)} nodes "
          f"({mn['onnxruntime'] - to:+.2f} ms)")
    print("| op kind | trtlite layers | trtlite ms | ORT nodes | ORT ms | trtlite - ORT ms |")
    print("|---|---|---|---|---|---|")
    for kind, (n1, ms1, n2, ms2) in sorted(kinds.items(), key=lambda kv: -max(kv[1][1], kv[1][3])):
        print(f"| {kind} | {n1} | {ms1:.2f} | {n2} | {ms2:.2f} | {ms1 - ms2:+.2f} |")


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
    ap.add_argument("--batch", type=int, default=1, help="batch size (the models' dynamic dimension; default 1)")
    ap.add_argument("--threads", default="1", help="comma list of thread counts (default 1)")
    ap.add_argument("--plans", default=None, help="directory to keep / reuse the built plans in")
    ap.add_argument("--by", choices=("class", "kind"), default="class",
                    help="per-layer sums by layer class (joined to onnxruntime's nodes) or by op kind")
    ap.add_argument("--layers", action="store_true", help="also list the 25 layers furthest behind onnxruntime")
    ap.add_argument("--json", default=None, help="write the per-layer rows as JSON")
    ap.add_argument("--without", default=None, metavar="KERNEL",
                    help="also build and profile (alternating) an engine whose timing cache makes KERNEL slow: "
                         "the same build without that kernel (A/B of a new kernel)")
    ap.add_argument("--without-pass", default=None, metavar="PASS",
                    help="also build and profile (alternating) the engine with builder pass PASS off (a comma list: "
                         "all of them off)")
    ap.add_argument("--thread-clock", action="store_true",
                    help="trtlite's per-layer times by the calling thread's CPU time (TRTL_PROFILE_CLOCK=thread)")
    args = ap.parse_args(argv)
    if args.plans:
        os.makedirs(args.plans, exist_ok=True)  # a new directory is made, not an error at the first write
    out = {}
    for model in args.models.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            results, ort_nodes, e2e, check = one_model(model, threads, args)
            mn = report_end_to_end(model, e2e, check, threads, args.runs)
            label_b = f" without {args.without}" if args.without else f" without pass {args.without_pass}"
            for rows, label in zip(results, ["", label_b]):
                if args.by == "kind":
                    report_kinds(model + label, os.path.join(args.dir, model + ".onnx"), rows, ort_nodes, mn)
                else:
                    report(model + label, rows, ort_nodes, args.layers)
            out[f"{model}_t{threads}"] = results
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
