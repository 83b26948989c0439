#!/usr/bin/env python3
"""Per-op-kind time of trtlite beside onnxruntime's on zoo models (issue #10: where a model-level gap comes from).

    python3 benchmarks/zoo/layer_compare.py --models resnet50,inception_v3,yolo --batch 1 --threads 1,2
    python3 benchmarks/zoo/layer_compare.py --models resnet50 --threads 1 --layers     # + every layer, slowest first

For each (model, threads): a plan is built for the batch in this process (cached in --work), then trtlite and
onnxruntime (ORT_ENABLE_ALL, intra_op_num_threads = t, sequential, IOBinding) run the same seeded input, interleaved
run by run (ABBA), and print
  * end to end: median and minimum wall ms, and at one thread the minimum CPU time of the calling thread (both run
    on it), which a loaded machine inflates far less than wall time;
  * per layer: trtlite's context.profiler and onnxruntime's own profiler (a second session), the minimum over
    --runs runs of each layer, summed per op kind (benchmarks/zoo/run.py's op_kind for trtlite; onnxruntime's Conv
    nodes, fused or NCHWc, are traced back to their ONNX Conv node for the same class), with the sum of layers
    beside the end-to-end minimum: the difference is what the steps themselves do not account for (per-step and
    thread-pool overhead, profiler callbacks).
The per-layer minima are wall time: read them on a quiet machine, or at one thread only, where a minimum over
enough runs mostly misses preemption.  Both engines' outputs are checked against each other first.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))


def _zoo_run():
    import importlib.util
    name = "trtlite_zoo_run"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "run.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def build_plan(zr, onnx_path, x, threads, plan):
    """Builds (or reuses) the plan of onnx_path for x's shape and a thread count, with run.py's build worker."""
    if os.path.exists(plan):
        return
    import contextlib
    import io
    import numpy as np
    np.save(plan + ".input.npy", x)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        zr.worker_trtbuild({"onnx": onnx_path, "input": plan + ".input.npy", "threads": threads, "plan": plan})
    res = json.loads(out.getvalue().split(zr.bench.RESULT_TAG)[-1])
    if not res.get("ok"):
        raise RuntimeError(f"{onnx_path}: {res.get('stage')} failed: {res.get('error')}")


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


def compare(args, model, threads, work):
    import numpy as np
    import onnxruntime as ort
    import trtlite as trt
    zr = _zoo_run()
    bench = zr.bench
    onnx_path = os.path.join(args.dir, model + ".onnx")
    x = zr._zoo_models().make_input(model, args.batch, 0)
    plan = os.path.join(work, f"{model}_b{args.batch}_t{threads}.plan")
    t0 = time.perf_counter()
    build_plan(zr, onnx_path, x, threads, plan)
    build_s = time.perf_counter() - t0
    logger = trt.Logger(trt.Logger.ERROR)
    with open(plan, "rb") as f:
        engine = trt.Runtime(logger).deserialize_cuda_engine(f.read())
    ctx = engine.create_execution_context()
    ctx.num_threads = threads
    ctx.set_input_shape("input", x.shape)
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    out_name = [n for n in names if n != "input"][0]
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    ref = sess.run(None, {"input": x})[0]
    out, oo = np.empty(ref.shape, np.float32), np.empty(ref.shape, np.float32)
    ptrs = [{"input": x, out_name: out}[n].ctypes.data for n in names]
    binding = sess.io_binding()
    binding.bind_cpu_input("input", x)
    binding.bind_output(sess.get_outputs()[0].name, "cpu", 0, np.float32, list(ref.shape), oo.ctypes.data)
    engines = {"trtlite": lambda: ctx.execute_v2(ptrs), "onnxruntime": lambda: sess.run_with_iobinding(binding)}
    engines["trtlite"]()
    check = bench.verify(out, ref)
    for _ in range(args.warmup):
        for f in engines.values():
            f()
    wall = {k: [] for k in engines}
    cpu = {k: [] for k in engines}
    order = list(engines)
    for i in range(args.runs):
        for k in (order if i % 2 == 0 else order[::-1]):
            w0, c0 = time.perf_counter(), time.thread_time()
            engines[k]()
            cpu[k].append((time.thread_time() - c0) * 1e3)
            wall[k].append((time.perf_counter() - w0) * 1e3)

    # trtlite per layer
    if args.thread_clock:  # read at each profiled execution
        os.environ["TRTL_PROFILE_CLOCK"] = "thread"
    layers, times, _ = zr.layer_times(trt, engine, ctx, lambda: [engines["trtlite"]() for _ in range(args.runs)])
    os.environ.pop("TRTL_PROFILE_CLOCK", None)
    graph = zr.onnx_ops(onnx_path)
    kinds, rows = {}, []
    for name, v in times.items():
        lay = layers.get(name, {})
        kind, ms = zr.op_kind(name, lay.get("type"), graph), float(min(v))
        k = kinds.setdefault(kind, [0, 0.0, 0, 0.0])
        k[0] += 1
        k[1] += ms
        rows.append((ms, name, lay.get("kernel", "?"), kind))

    # onnxruntime per node (its profiler, a second session)
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(work, "ort_profile")
    s2 = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    for _ in range(args.runs):
        s2.run(None, {"input": x})
    ot, oop = bench.ort_node_times(s2)
    conv_kind = ort_conv_kinds(onnx_path, graph[3], bench.category)
    for nm, v in ot.items():
        kind = (conv_kind(nm) if oop[nm] in ("Conv", "FusedConv") else None) or oop[nm]
        k = kinds.setdefault(kind, [0, 0.0, 0, 0.0])
        k[2] += 1
        k[3] += float(min(v))

    tt, to = sum(k[1] for k in kinds.values()), sum(k[3] for k in kinds.values())
    med = {k: float(np.median(v)) for k, v in wall.items()}
    mn = {k: min(v) for k, v in wall.items()}
    la = os.getloadavg()[0]
    print(f"\n## {model} batch {args.batch}, {threads} thread(s): agrees {check['ok']} (max abs {check['max_abs']:.1e}),"
          f" build {build_s:.1f} s, load {la:.1f}")
    print(f"end to end, {args.runs} runs each (ABBA): wall median trtlite {med['trtlite']:.2f} ms, onnxruntime "
          f"{med['onnxruntime']:.2f} ms (ORT / trtlite {med['onnxruntime'] / med['trtlite']:.3f}); wall min "
          f"{mn['trtlite']:.2f} / {mn['onnxruntime']:.2f} ({mn['onnxruntime'] / mn['trtlite']:.3f})" +
          (f"; caller CPU min {min(cpu['trtlite']):.2f} / {min(cpu['onnxruntime']):.2f} "
           f"({min(cpu['onnxruntime']) / min(cpu['trtlite']):.3f})" if threads == 1 else ""))
    print(("trtlite per layer by thread CPU time; " if args.thread_clock else "") +
          f"sum of per-layer minima: trtlite {tt:.2f} ms over {len(times)} layers (end-to-end min - sum = "
          f"{mn['trtlite'] - tt:+.2f} ms), onnxruntime {to:.2f} ms over {len(ot)} nodes "
          f"({mn['onnxruntime'] - to:+.2f} ms)")
    print("| op kind | trtlite layers | trtlite ms | ORT nodes | ORT ms | trtlite - ORT ms |")
    print("|---|---|---|---|---|---|")
    for kind, (n1, ms1, n2, ms2) in sorted(kinds.items(), key=lambda kv: -max(kv[1][1], kv[1][3])):
        print(f"| {kind} | {n1} | {ms1:.2f} | {n2} | {ms2:.2f} | {ms1 - ms2:+.2f} |")
    if args.layers:
        for ms, name, kern, kind in sorted(rows, reverse=True):
            nd = bench.node_of(name, graph[3]) or {}
            rate = f"{nd['flops'] / ms / 1e6:6.1f} GF/s" if nd.get("flops") and ms > 0 else " " * 11
            print(f"    {ms:8.3f} ms {rate}  {kern:<28} {nd.get('desc', kind):<26} {name[:80]}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="resnet50,inception_v3,yolo")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", default="1,2", help="comma list (default 1,2)")
    p.add_argument("--runs", type=int, default=20, help="timed runs per engine and per profile (default 20)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--dir", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "zoo"),
                   help="folder of the exported zoo models (benchmarks/zoo/export.py)")
    p.add_argument("--work", default=None, help="folder for plans and profiles (default: a temporary one)")
    p.add_argument("--layers", action="store_true", help="also list trtlite's layers, slowest first")
    p.add_argument("--thread-clock", action="store_true",
                   help="trtlite's per-layer times by the calling thread's CPU time (TRTL_PROFILE_CLOCK=thread: "
                        "one thread on a loaded machine; onnxruntime's stay wall time)")
    args = p.parse_args(argv)
    work = args.work or tempfile.mkdtemp(prefix="layer_compare_")
    os.makedirs(work, exist_ok=True)
    for model in args.models.split(","):
        for t in (int(v) for v in args.threads.split(",")):
            compare(args, model.strip(), t, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
