#!/usr/bin/env python3
"""trtlite vs onnxruntime vs PyTorch, side by side, on CPU (what `make bench` runs).

    python3 benchmarks/run.py                      # all models, batch 1, threads 2 then 1
    python3 benchmarks/run.py --quick              # smoke run: LeNet + ResNet-18, few runs (< 2 min)
    python3 benchmarks/run.py --models resnet18,vgg16 --threads 2 --rounds 3
    python3 benchmarks/run.py --profile 8          # + trtlite's top layers per model (kernel, shape, time)
    python3 benchmarks/run.py --write-readme       # replace the results section of benchmarks/README.md

Method (PERF.md, "How to benchmark fairly"; details in benchmarks/README.md):
  * models are chosen and seeded in benchmarks/models.py (networks from tests/onnx_torch_models.py and
    examples/lenet/model.py; random seeded weights), exported with torch.onnx.export(dynamo=False) into a
    temporary directory; nothing is downloaded;
  * every engine runs in its own subprocess (one engine per process; peak RSS is that process's);
    trtlite builds its plan in one more process and the timed process only deserializes it;
  * one seeded input for all; each process checks its first output against onnxruntime's reference
    (|got - ref| <= rtol*|ref| + atol*max|ref|, rtol 1e-3, atol 1e-4) before any timing;
  * warm-up, then timed runs until both --min-runs and --min-time are reached (cap --max-time);
  * onnxruntime: CPU EP, ORT_ENABLE_ALL, intra_op_num_threads=t, inter_op_num_threads=1, sequential,
    I/O bound once (IOBinding); PyTorch: eval(), torch.inference_mode(), set_num_threads(t),
    set_num_interop_threads(1); trtlite: config.num_threads = context.num_threads = t, BLAS
    single-threaded (it sets that itself; OPENBLAS_NUM_THREADS=1 is exported to every worker).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
README = os.path.join(HERE, "README.md")
BEGIN_MARK = "<!-- BEGIN RESULTS: written by `benchmarks/run.py --write-readme`; edits here are overwritten -->"
END_MARK = "<!-- END RESULTS -->"
RESULT_TAG = "@@RESULT "

ALL_MODELS = ["lenet", "mobilenetv2", "resnet18", "resnet50", "vgg16"]
QUICK_MODELS = ["lenet", "resnet18"]
ENGINES = ["trtlite", "onnxruntime", "torch"]
ENGINE_LABEL = {"trtlite": "trtlite", "onnxruntime": "onnxruntime", "torch": "PyTorch"}
INPUT_SHAPES = {"lenet": (1, 28, 28), "mobilenetv2": (3, 224, 224), "resnet18": (3, 224, 224),
                "resnet50": (3, 224, 224), "vgg16": (3, 224, 224)}  # per sample; the batch is prepended
PRETTY = {"lenet": "LeNet 28²", "mobilenetv2": "MobileNetV2 224²", "resnet18": "ResNet-18 224²",
          "resnet50": "ResNet-50 224²", "vgg16": "VGG-16 224²"}
# PERF.md: onnxruntime 1.30 and PyTorch 1.13, batch 1, 2 threads, median ms, on the same machine type.
PERF_REF = {"lenet": (0.13, 0.22), "mobilenetv2": (3.8, 18.0), "resnet18": (17.9, 27.6),
            "resnet50": (38.3, 58.3), "vgg16": (151.0, 273.0)}
RTOL, ATOL = 1e-3, 1e-4


# ==== measurements shared by the workers ===========================================================

def rss_now_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def peak_rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def cpu_stat():
    """(busy, steal, total) jiffies over all CPUs from /proc/stat (the VM's view)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    v += [0] * (10 - len(v))
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    busy = user + nice + system + irq + softirq
    return busy, steal, sum(v[:8])


def own_cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def verify(got, ref, chunk=1 << 20):
    """got vs ref (RTOL, ATOL scaled by max |ref|), in float64 over slices of `chunk` elements: the float64 copies
    of a whole segmentation output at batch 8 (34 MB of floats) made this check the largest allocation of every
    worker, and the peak RSS it reports is the engine's, not the check's."""
    import numpy as np
    got = np.asarray(got).reshape(ref.shape).reshape(-1)
    ref = np.asarray(ref).reshape(-1)
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    scale = scale or 1.0
    ok, max_abs, rel = True, 0.0, 0.0
    for i in range(0, ref.size, chunk):
        g = got[i:i + chunk].astype(np.float64)
        r = ref[i:i + chunk].astype(np.float64)
        diff = np.abs(g - r)
        ok = ok and bool(np.all(diff <= RTOL * np.abs(r) + ATOL * scale)) and bool(np.all(np.isfinite(g)))
        if diff.size:
            max_abs = max(max_abs, float(diff.max()))
            rel = max(rel, float((diff / np.maximum(np.abs(r), 1e-6 * scale)).max()))
    return {"ok": ok, "max_abs": max_abs, "max_rel": rel, "ref_max": scale}


def time_loop(run_once, spec):
    """Warm-up, then timed runs until >= min_runs and >= min_time (or max_time with >= 10 runs)."""
    pc = time.perf_counter
    t0, n = pc(), 0
    while n < spec["warmup_runs"] or pc() - t0 < spec["warmup_s"]:
        run_once()
        n += 1
    lat = []
    stat0, cpu0 = cpu_stat(), own_cpu_s()
    start = pc()
    while True:
        a = pc()
        run_once()
        b = pc()
        lat.append(b - a)
        el = b - start
        if len(lat) >= spec["min_runs"] and el >= spec["min_time"]:
            break
        if el >= spec["max_time"] and len(lat) >= min(10, spec["min_runs"]):
            break
    wall = pc() - start
    stat1, cpu1 = cpu_stat(), own_cpu_s()
    hz = os.sysconf("SC_CLK_TCK")
    d_busy, d_steal, d_total = (stat1[i] - stat0[i] for i in range(3))
    foreign = max(0.0, (d_busy / hz - (cpu1 - cpu0)) / wall)  # CPUs kept busy by other processes
    return {"lat": lat, "wall": wall, "foreign_cpus": foreign, "own_cpus": (cpu1 - cpu0) / wall,
            "steal": d_steal / d_total if d_total else 0.0}


def emit(result):
    sys.stdout.flush()
    print(RESULT_TAG + json.dumps(result), flush=True)


# ==== workers (each runs in its own process) =======================================================

def worker_export(spec):
    """Export the model to ONNX, save its weights for the PyTorch worker, write the reference output."""
    import warnings
    import numpy as np
    import torch
    sys.path.insert(0, HERE)
    import models
    torch.set_num_threads(1)
    model = models.build(spec["model"], seed=spec["seed"])
    x = np.load(spec["input"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(model, (torch.from_numpy(x),), spec["onnx"], opset_version=spec["opset"], dynamo=False,
                              input_names=["input"], output_names=["output"], do_constant_folding=True)
    torch.save(model.state_dict(), spec["weights"])
    with open(spec["nodes"], "w") as f:
        json.dump(onnx_node_info(spec["onnx"]), f)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(spec["onnx"], so, providers=["CPUExecutionProvider"])
    ref = sess.run(None, {"input": x})[0]
    np.save(spec["ref"], ref)
    with torch.inference_mode():
        tref = model(torch.from_numpy(x)).numpy()
    emit({"ok": True, "onnx_bytes": os.path.getsize(spec["onnx"]), "out_shape": list(ref.shape),
          "torch_vs_ort_max_abs": float(np.abs(tref - ref).max())})


def onnx_node_info(path):
    """{node name: {"op", "desc", "flops"}} for Conv/Gemm/MatMul nodes (multiply-adds count 2)."""
    import onnx
    from onnx import numpy_helper, shape_inference
    m = shape_inference.infer_shapes(onnx.load(path))
    shapes = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        shapes[vi.name] = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    for init in m.graph.initializer:
        shapes[init.name] = list(init.dims)
    info = {}
    for nd in m.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in nd.attribute}
        out = shapes.get(nd.output[0])
        if nd.op_type == "Conv" and out and nd.input[1] in shapes:
            k, cg, kh, kw = shapes[nd.input[1]]
            g = attrs.get("group", 1)
            st = attrs.get("strides", [1, 1])
            cin = shapes.get(nd.input[0], [0, cg * g])[1]
            desc = f"conv {kh}x{kw}/s{st[0]} {cin}->{k}" + (f" g{g}" if g > 1 else "")
            info[nd.name] = {"op": "Conv", "desc": desc, "flops": 2 * out[0] * k * out[2] * out[3] * cg * kh * kw}
        elif nd.op_type in ("Gemm", "MatMul") and out and nd.input[1] in shapes:
            w = shapes[nd.input[1]]
            kdim = w[1] if (nd.op_type == "Gemm" and attrs.get("transB", 0)) else w[0]
            info[nd.name] = {"op": nd.op_type, "desc": f"fc {kdim}->{out[-1]}",
                             "flops": 2 * out[0] * out[-1] * kdim}
        elif nd.op_type in ("MaxPool", "AveragePool"):
            ks, st = attrs.get("kernel_shape", []), attrs.get("strides", [1, 1])
            info[nd.name] = {"op": nd.op_type, "desc": f"{nd.op_type} {'x'.join(map(str, ks))}/s{st[0]}", "flops": 0}
        elif nd.op_type in ("GlobalAveragePool", "ReduceMean"):
            info[nd.name] = {"op": nd.op_type, "desc": nd.op_type, "flops": 0}
    return info


def node_of(layer_name, nodes):
    """The ONNX node behind an engine layer: the first fused part, less a '/<n>' suffix the parser adds; where that
    part has no entry (a batch norm and its activation fused before a convolution: builder pass fuse_preact), the
    first Conv among the other parts."""
    found = [nodes.get(p) or nodes.get(re.sub(r"/\d+$", "", p)) for p in layer_name.split(" + ")]
    if found[0] is None:
        return next((nd for nd in found[1:] if nd and nd.get("op") == "Conv"), None)
    return found[0]


def worker_trtbuild(spec):
    """ONNX -> OnnxParser -> build -> serialized plan (in its own process: the builder's memory is
    not charged to the timed process)."""
    import trtlite as trt
    logger = trt.Logger(trt.Logger.WARNING)
    t0 = time.perf_counter()
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    with open(spec["onnx"], "rb") as f:
        data = f.read()
    if not parser.parse(data):
        emit({"ok": False, "error": "parse failed: " + "; ".join(str(parser.get_error(i))
                                                                for i in range(parser.num_errors))})
        return
    t1 = time.perf_counter()
    config = builder.create_builder_config()
    config.num_threads = spec["threads"]
    plan = builder.build_serialized_network(network, config)
    t2 = time.perf_counter()
    with open(spec["plan"], "wb") as f:
        f.write(bytes(plan))
    emit({"ok": True, "parse_s": t1 - t0, "build_s": t2 - t1, "plan_bytes": os.path.getsize(spec["plan"]),
          "build_peak_rss_kib": peak_rss_kib()})


def worker_trtlite(spec):
    import numpy as np
    import trtlite as trt
    x = np.load(spec["input"])
    ref = np.load(spec["ref"])
    base = rss_now_kib()
    logger = trt.Logger(trt.Logger.WARNING)
    t0 = time.perf_counter()
    with open(spec["plan"], "rb") as f:
        engine = trt.Runtime(logger).deserialize_cuda_engine(f.read())
    context = engine.create_execution_context()
    context.num_threads = spec["threads"]
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    out_name = [n for n in names if n != "input"][0]
    out = np.empty(tuple(engine.get_tensor_shape(out_name)), np.float32)
    arrays = {"input": x, out_name: out}
    ptrs = [arrays[n].ctypes.data for n in names]  # raw addresses: no per-call buffer checks

    def run_once():
        context.execute_v2(ptrs)
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_once()
    first = time.perf_counter() - t0
    check = verify(out, ref)
    res = {"setup_s": setup, "first_s": first, "verify": check, "base_rss_kib": base}
    if check["ok"]:
        res.update(time_loop(run_once, spec))
        if spec.get("profile"):
            res["profile"] = trt_profile(trt, engine, context, run_once, spec)
    res["peak_rss_kib"] = peak_rss_kib()
    res["ok"] = check["ok"]
    emit(res)


def trt_profile(trt, engine, context, run_once, spec):
    """Per-layer times (a separate pass after timing) joined with the engine inspector's kernels."""
    import numpy as np
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    layers = {lay["name"]: lay for lay in info.get("layers", [])}
    times = {}

    class Prof(trt.IProfiler if hasattr(trt, "IProfiler") else object):
        def report_layer_time(self, layer_name, ms):
            times.setdefault(layer_name, []).append(ms)

    prof = Prof()
    context.profiler = prof
    t0, n = time.perf_counter(), 0
    while n < 5 or (time.perf_counter() - t0 < 2.0 and n < 200):
        run_once()
        n += 1
    context.profiler = None
    nodes = {}
    if spec.get("nodes") and os.path.exists(spec["nodes"]):
        with open(spec["nodes"]) as f:
            nodes = json.load(f)
    rows = []
    for name, v in times.items():
        lay = layers.get(name, {})
        nd = node_of(name, nodes) or {}
        rows.append({"name": name, "ms": float(np.median(v)), "kernel": lay.get("kernel", "?"),
                     "type": lay.get("type", "?"), "desc": nd.get("desc", ""), "flops": nd.get("flops", 0),
                     "in": [i.get("dims", "") for i in lay.get("inputs", []) if i.get("kind") != "weights"][:2],
                     "out": [o.get("dims", "") for o in lay.get("outputs", [])][:1],
                     "out_name": (lay.get("outputs") or [{}])[0].get("name", "")})
    rows.sort(key=lambda r: -r["ms"])
    return {"runs": len(next(iter(times.values()), [])), "layers": rows, "num_layers": len(layers)}


def worker_onnxruntime(spec):
    import numpy as np
    import onnxruntime as ort
    x = np.load(spec["input"])
    ref = np.load(spec["ref"])
    base = rss_now_kib()
    t0 = time.perf_counter()
    so = ort.SessionOptions()
    so.intra_op_num_threads = spec["threads"]
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(spec["onnx"], so, providers=["CPUExecutionProvider"])
    setup = time.perf_counter() - t0
    out_name = sess.get_outputs()[0].name
    out = np.empty(ref.shape, np.float32)
    binding = sess.io_binding()  # bound once: the loop measures the session, not numpy allocation
    binding.bind_cpu_input("input", x)
    binding.bind_output(out_name, "cpu", 0, np.float32, list(out.shape), out.ctypes.data)

    def run_once():
        sess.run_with_iobinding(binding)
    t0 = time.perf_counter()
    run_once()
    first = time.perf_counter() - t0
    check = verify(out, ref)
    res = {"setup_s": setup, "first_s": first, "verify": check, "base_rss_kib": base}
    if check["ok"]:
        res.update(time_loop(run_once, spec))
    res["peak_rss_kib"] = peak_rss_kib()
    res["ok"] = check["ok"]
    if check["ok"] and spec.get("profile"):
        del binding, sess
        res["profile"] = ort_profile(ort, so, spec, x)
    emit(res)


def ort_node_times(sess):
    """Ends a profiling onnxruntime session: ({node name: [ms per run]}, {node name: op type}) from its profile
    file's per-node kernel times (the file is removed)."""
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    times, ops = {}, {}
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            name = e["name"][:-len("_kernel_time")]
            times.setdefault(name, []).append(e["dur"] / 1000.0)
            ops[name] = e.get("args", {}).get("op_name", "?")
    return times, ops

def ort_profile(ort, so, spec, x):
    """onnxruntime's per-node times (its own profiler, a second session, after timing)."""
    import numpy as np
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(os.path.dirname(spec["onnx"]), "ort_profile")
    sess = ort.InferenceSession(spec["onnx"], so, providers=["CPUExecutionProvider"])
    t0, n = time.perf_counter(), 0
    while n < 5 or (time.perf_counter() - t0 < 2.0 and n < 200):
        sess.run(None, {"input": x})
        n += 1
    times, ops = ort_node_times(sess)
    return {"runs": n, "nodes": {k: {"ms": float(np.median(v)), "op": ops[k]} for k, v in times.items()}}


def worker_torch(spec):
    import numpy as np
    import torch
    sys.path.insert(0, HERE)
    import models
    torch.set_num_threads(spec["threads"])
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    x = torch.from_numpy(np.load(spec["input"]))
    ref = np.load(spec["ref"])
    base = rss_now_kib()
    t0 = time.perf_counter()
    model = models.CONSTRUCTORS[spec["model"]]()
    model.load_state_dict(torch.load(spec["weights"], weights_only=True))
    model.eval()
    setup = time.perf_counter() - t0
    holder = {}

    def run_once():
        with torch.inference_mode():
            holder["y"] = model(x)
    t0 = time.perf_counter()
    run_once()
    first = time.perf_counter() - t0
    check = verify(holder["y"].numpy(), ref)
    res = {"setup_s": setup, "first_s": first, "verify": check, "base_rss_kib": base,
           "torch_threads": torch.get_num_threads()}
    if check["ok"]:
        res.update(time_loop(run_once, spec))
    res["peak_rss_kib"] = peak_rss_kib()
    res["ok"] = check["ok"]
    emit(res)


WORKERS = {"export": worker_export, "trtbuild": worker_trtbuild, "trtlite": worker_trtlite,
           "onnxruntime": worker_onnxruntime, "torch": worker_torch}


# ==== the driver ===================================================================================

def machine_info():
    model, flags = "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        m = re.search(r"^model name\s*:\s*(.*)$", text, re.M)
        model = m.group(1).strip() if m else model
        fam = re.search(r"^cpu family\s*:\s*(\d+)$", text, re.M)
        mod = re.search(r"^model\s*:\s*(\d+)$", text, re.M)
        if fam and mod:
            model += f" (family {fam.group(1)}, model {mod.group(1)})"
        fl = re.search(r"^flags\s*:\s*(.*)$", text, re.M)
        flags = set(fl.group(1).split()) if fl else set()
    except OSError:
        pass
    isa = "AVX-512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "SSE")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": model, "isa": isa, "cpus": cpus, "host_cpus": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version()}


def versions():
    code = ("import json, numpy, onnxruntime, torch, onnx\n"
            "import trtlite\n"
            "print(json.dumps({'trtlite': getattr(trtlite, 'trtlite_version', '?'), 'onnxruntime': onnxruntime.__version__,"
            " 'torch': torch.__version__, 'onnx': onnx.__version__, 'numpy': numpy.__version__}))")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=worker_env(1),
                             timeout=120)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001 -- informational only
        return {"error": str(e)}


def worker_env(threads):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["OPENBLAS_NUM_THREADS"] = "1"  # numpy's BLAS is not timed; trtlite keeps its BLAS single-threaded
    env.pop("OMP_NUM_THREADS", None)   # torch gets set_num_threads(t); onnxruntime its own pool
    env["PYTHONWARNINGS"] = "ignore"
    return env


def run_worker(kind, spec, timeout):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, "--spec", json.dumps(spec)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=worker_env(spec.get("threads", 1)),
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout} s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])
    tail = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or ["no output"])[-1]
    return {"ok": False, "error": f"exit {p.returncode}: {tail}"}


def stats(res, batch):
    import numpy as np
    lat = np.asarray(res["lat"]) * 1e3
    return {"median_ms": float(np.median(lat)), "p90_ms": float(np.percentile(lat, 90)),
            "mean_ms": float(lat.mean()), "min_ms": float(lat.min()), "runs": int(lat.size),
            "throughput": batch * lat.size / (lat.sum() / 1e3)}


def loadavg():
    try:
        return os.getloadavg()
    except OSError:
        return (0.0, 0.0, 0.0)


def fmt_ms(v):
    if v is None:
        return "—"
    return f"{v:.3f}" if v < 1 else (f"{v:.2f}" if v < 10 else (f"{v:.1f}" if v < 100 else f"{v:.0f}"))


def fmt_s(v):
    if v is None:
        return "—"
    return f"{v * 1e3:.0f} ms" if v < 1 else f"{v:.1f} s"


def fmt_ratio(peer, base):
    if not peer or not base:
        return "—"
    return f"{peer / base:.2f}×"


def log(msg=""):
    print(msg, flush=True)


def measure(args, tmp, machine):
    import numpy as np
    results = []  # one dict per (model, threads, engine)
    profiles = {}
    for model in args.models:
        shape = (args.batch,) + INPUT_SHAPES[model]
        rng = np.random.default_rng(args.seed)
        if model == "lenet":
            x = rng.random(shape, dtype=np.float32)  # image-like [0, 1)
        else:
            x = rng.standard_normal(shape).astype(np.float32)
        files = {k: os.path.join(tmp, f"{model}.{ext}") for k, ext in
                 (("input", "input.npy"), ("onnx", "onnx"), ("weights", "pt"), ("ref", "ref.npy"),
                  ("nodes", "nodes.json"))}
        np.save(files["input"], x)
        t0 = time.perf_counter()
        ex = run_worker("export", dict(files, model=model, seed=args.seed, opset=args.opset), args.timeout)
        if not ex.get("ok"):
            log(f"== {PRETTY[model]}: export failed: {ex.get('error')}")
            continue
        log(f"== {PRETTY[model]}: input {'x'.join(map(str, shape))}, ONNX {ex['onnx_bytes'] / 2**20:.1f} MiB, "
            f"output {ex['out_shape']}, exported in {time.perf_counter() - t0:.1f} s "
            f"(PyTorch vs onnxruntime max |diff| {ex['torch_vs_ort_max_abs']:.2e})")
        for t in args.threads:
            plan = os.path.join(tmp, f"{model}.t{t}.plan")
            spec = dict(files, model=model, threads=t, plan=plan, warmup_runs=args.warmup_runs,
                        warmup_s=args.warmup, min_runs=args.min_runs, min_time=args.min_time,
                        max_time=args.max_time)
            build = None
            if "trtlite" in args.engines:
                build = run_worker("trtbuild", spec, args.timeout)
                if not build.get("ok"):
                    log(f"   t={t} trtlite build failed: {build.get('error')}")
            best = {}
            for rnd in range(args.rounds):
                for eng in args.engines:
                    if eng == "trtlite" and not (build and build.get("ok")):
                        best.setdefault(eng, {"ok": False, "error": (build or {}).get("error", "no build")})
                        continue
                    la = loadavg()[0]
                    s = dict(spec, profile=bool(args.profile) and eng in ("trtlite", "onnxruntime")
                             and rnd == args.rounds - 1 and t == args.threads[0])
                    r = run_worker(eng, s, args.timeout)
                    r["load1"] = la
                    if "profile" in r:
                        profiles.setdefault(model, {})[eng] = r.pop("profile")
                    if r.get("ok"):
                        r["stats"] = stats(r, args.batch)
                        del r["lat"]
                        if not best.get(eng, {}).get("ok") or \
                                r["stats"]["median_ms"] < best[eng]["stats"]["median_ms"]:
                            best[eng] = r
                    elif not best.get(eng, {}).get("ok"):
                        best[eng] = r
            base = best.get("trtlite", {}).get("stats", {}).get("median_ms")
            for eng in args.engines:
                r = best.get(eng, {"ok": False, "error": "not run"})
                row = {"model": model, "threads": t, "engine": eng, "batch": args.batch, "ok": bool(r.get("ok")),
                       "result": r}
                if eng == "trtlite" and build and build.get("ok"):
                    row["build"] = build
                results.append(row)
                log("   " + line_for(row, base))
        if args.profile and "trtlite" in profiles.get(model, {}):
            print_profile(model, profiles[model], args.profile)
    return results, profiles


def line_for(row, base):
    r = row["result"]
    head = f"t={row['threads']} {ENGINE_LABEL[row['engine']]:<11}"
    if not row["ok"]:
        v = r.get("verify")
        if v and not v["ok"]:
            return (f"{head} OUTPUT MISMATCH vs onnxruntime: max |diff| {v['max_abs']:.3e} "
                    f"(max |ref| {v['ref_max']:.3e}), not timed")
        return f"{head} FAILED: {r.get('error')}"
    s = r["stats"]
    setup = r["setup_s"] + (row["build"]["parse_s"] + row["build"]["build_s"] if "build" in row else 0.0)
    ratio = "" if row["engine"] == "trtlite" else f"  {fmt_ratio(s['median_ms'], base)} trtlite"
    return (f"{head} median {fmt_ms(s['median_ms']):>7} ms  p90 {fmt_ms(s['p90_ms']):>7} ms  "
            f"{s['throughput']:8.1f} img/s  setup {fmt_s(setup):>7}  first {fmt_ms(r['first_s'] * 1e3):>7} ms  "
            f"RSS {r['peak_rss_kib'] / 1024:6.0f} MiB  runs {s['runs']:4d}  "
            f"load {r['load1']:.2f}, others {r['foreign_cpus']:.2f} CPU"
            f"{', steal %.0f%%' % (100 * r['steal']) if r.get('steal', 0) > 0.02 else ''}{ratio}  "
            f"(max|diff| {r['verify']['max_abs']:.1e})")


def category(desc):
    """Coarse layer class from the ONNX node description (for the per-class comparison)."""
    m = re.match(r"conv (\d+)x(\d+)/s(\d+) (\d+)->(\d+)( g(\d+))?", desc or "")
    if m:
        kh, kw, s, g = int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(7) or 1)
        if g > 1:
            return f"depthwise {kh}x{kw} s{s}" if g == int(m.group(4)) else f"grouped conv {kh}x{kw} s{s}"
        return f"conv {kh}x{kw} s{s}"  # both sizes: Inception's 1x7 and 7x1 are neither 1x1 nor 7x7
    if (desc or "").startswith("fc"):
        return "fully connected"
    return (desc or "other").split(" ")[0]


def join_ort(layer, ort_nodes):
    """onnxruntime's node for a trtlite layer: same output tensor (its NCHWc nodes are named after the
    output with '_nchwc'), or the same ONNX node name (fused ones: 'fused <name>')."""
    keys = [layer.get("out_name", "") + "_nchwc", layer.get("out_name", "")]
    for part in layer["name"].split(" + "):  # onnxruntime may name a fused node after any of the parts
        base = re.sub(r"/\d+$", "", part)
        keys += [part + "_output_0_nchwc", base + "_output_0_nchwc", part, base, "fused " + base]
    for key in keys:
        if key and key in ort_nodes:
            return key
    return None


def print_profile(model, profs, top):
    prof, ortp = profs["trtlite"], profs.get("onnxruntime")
    ort_nodes = ortp["nodes"] if ortp else {}
    log(f"   trtlite per-layer profile of {PRETTY[model]} ({prof['runs']} profiled runs, "
        f"{prof['num_layers']} engine layers" + (f"; onnxruntime profiler {ortp['runs']} runs" if ortp else "")
        + f"), top {top}:")
    total = sum(r["ms"] for r in prof["layers"]) or 1.0
    used = set()
    for r in prof["layers"]:
        r["ort"] = join_ort(r, ort_nodes)
        if r["ort"]:
            used.add(r["ort"])
    for r in prof["layers"][:top]:
        shape = (r["in"][0] if r["in"] else "") + " -> " + (r["out"][0] if r["out"] else "")
        rate = f"{r['flops'] / r['ms'] / 1e6:5.1f} GF/s" if r.get("flops") and r["ms"] > 0 else " " * 10
        o = ort_nodes.get(r["ort"]) if r["ort"] else None
        ortc = f"ORT {o['ms']:7.3f} ms ({r['ms'] / o['ms']:5.1f}×)" if o and o["ms"] > 0 else " " * 25
        log(f"     {r['ms']:8.3f} ms {100 * r['ms'] / total:5.1f}%  {rate}  {ortc}  {r['kernel']:<26} "
            f"{r.get('desc', ''):<24} {shape:<38} {r['name'][:48]}")
    by_kernel = {}
    for r in prof["layers"]:
        k = by_kernel.setdefault(r["kernel"], [0, 0.0])
        k[0] += 1
        k[1] += r["ms"]
    log("     by kernel: " + ", ".join(f"{k} ×{n} {ms:.2f} ms ({100 * ms / total:.0f}%)"
                                     for k, (n, ms) in sorted(by_kernel.items(), key=lambda kv: -kv[1][1])))
    flops = sum(r.get("flops", 0) for r in prof["layers"])
    conv_ms = sum(r["ms"] for r in prof["layers"] if r.get("flops"))
    log(f"     sum of layer medians {total:.3f} ms; {flops / 1e9:.2f} GFLOP in conv/fc layers taking {conv_ms:.2f} ms "
        f"= {flops / max(conv_ms, 1e-9) / 1e6:.1f} GFLOP/s")
    if ortp:
        cats = {}
        for r in prof["layers"]:
            c = cats.setdefault(category(r.get("desc")), [0, 0.0, 0.0, 0])
            c[0] += 1
            c[1] += r["ms"]
            c[2] += ort_nodes[r["ort"]]["ms"] if r["ort"] else 0.0
            c[3] += r.get("flops", 0)
        rest = sum(v["ms"] for k, v in ort_nodes.items() if k not in used)
        ort_total = sum(v["ms"] for v in ort_nodes.values())
        log(f"     by layer class, trtlite vs onnxruntime (sums of per-layer medians; ORT total {ort_total:.3f} ms, "
            f"of which {rest:.3f} ms in nodes trtlite has no counterpart for, e.g. layout reorders):")
        for name, (n, ms, oms, fl) in sorted(cats.items(), key=lambda kv: -(kv[1][1] - kv[1][2])):
            rates = f"  {fl / ms / 1e6:6.1f} vs {fl / oms / 1e6:6.1f} GF/s" if fl and ms > 0 and oms > 0 else ""
            log(f"       {name:<20} ×{n:<3} trtlite {ms:8.3f} ms  ORT {oms:8.3f} ms  gap {ms - oms:+8.3f} ms{rates}")


def get(results, model, t, eng):
    for row in results:
        if row["model"] == model and row["threads"] == t and row["engine"] == eng:
            return row
    return None


def markdown(results, args, machine, vers, load_start, load_end, started, elapsed):
    out = []
    out.append(f"Run {started} with `{' '.join(['benchmarks/run.py'] + args.argv)}` "
               f"(took {elapsed / 60:.1f} min).  ")
    out.append(f"Machine: {machine['cpu']}, {machine['isa']}, {machine['cpus']} CPUs usable "
               f"({machine['host_cpus']} online), Linux {machine['kernel']}, Python {machine['python']}.  ")
    out.append("Versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()) + ".  ")
    out.append(f"Load average (1/5/15 min) at start {load_start[0]:.2f}/{load_start[1]:.2f}/{load_start[2]:.2f}, "
               f"at end {load_end[0]:.2f}/{load_end[1]:.2f}/{load_end[2]:.2f}"
               + ("  **(> 0.5 at start: other work, or the previous benchmark, was running)**" if load_start[0] > 0.5
                  else "") + ".  ")
    others = [r["result"]["foreign_cpus"] for r in results if r["ok"] and "foreign_cpus" in r["result"]]
    if others:
        worst = max(others)
        out.append(f"Other processes kept {sum(others) / len(others):.2f} CPUs busy on average during the timed loops, "
                   f"{worst:.2f} at most" + ("  **(> 0.25: some figures are skewed; see the last column)**"
                                             if worst > 0.25 else " (a quiet machine)") + ".")
    out.append("")
    out.append(f"Batch {args.batch}; latency in ms; \"vs trtlite\" is the peer's median divided by trtlite's "
               "median measured in the same run (> 1: trtlite is faster).  Setup: trtlite parse + build "
               "(+ plan load), onnxruntime session creation, PyTorch module construction + state-dict load.  "
               "\"others\": CPUs kept busy by other processes during the timed loop (from /proc/stat).")
    out.append("")
    out.append("| model | threads | engine | median | p90 | img/s | vs trtlite | setup | first run | peak RSS | "
               "runs | load / others |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for model in args.models:
        for t in args.threads:
            base_row = get(results, model, t, "trtlite")
            base = base_row["result"]["stats"]["median_ms"] if base_row and base_row["ok"] else None
            for eng in args.engines:
                row = get(results, model, t, eng)
                if row is None:
                    continue
                r = row["result"]
                if not row["ok"]:
                    v = r.get("verify")
                    why = (f"output mismatch (max abs diff {v['max_abs']:.2e})" if v and not v["ok"]
                           else str(r.get("error", "failed"))[:80].replace("|", "/"))
                    out.append(f"| {PRETTY[model]} | {t} | {ENGINE_LABEL[eng]} | {why} | | | | | | | | |")
                    continue
                s = r["stats"]
                setup = r["setup_s"]
                if "build" in row:
                    setup = f"{fmt_s(row['build']['parse_s'] + row['build']['build_s'])} + {fmt_s(r['setup_s'])}"
                else:
                    setup = fmt_s(setup)
                ratio = "1" if eng == "trtlite" else fmt_ratio(s["median_ms"], base)
                name = f"**{ENGINE_LABEL[eng]}**" if eng == "trtlite" else ENGINE_LABEL[eng]
                out.append(f"| {PRETTY[model]} | {t} | {name} | {fmt_ms(s['median_ms'])} | {fmt_ms(s['p90_ms'])} | "
                           f"{s['throughput']:.1f} | {ratio} | {setup} | {fmt_ms(r['first_s'] * 1e3)} ms | "
                           f"{r['peak_rss_kib'] / 1024:.0f} MiB | {s['runs']} | "
                           f"{r['load1']:.2f} / {r['foreign_cpus']:.2f} |")
    if 2 in args.threads and args.batch == 1:
        out.append("")
        out.append("Next to PERF.md's reference figures (onnxruntime 1.30 and PyTorch 1.13 on the same machine "
                   "type, batch 1, 2 threads, median ms):")
        out.append("")
        out.append("| model | trtlite | onnxruntime (here) | PyTorch (here) | onnxruntime (PERF.md) | "
                   "PyTorch (PERF.md) |")
        out.append("|---|---|---|---|---|---|")
        for model in args.models:
            cells = []
            for eng in ENGINES:
                row = get(results, model, 2, eng)
                cells.append(fmt_ms(row["result"]["stats"]["median_ms"]) if row and row["ok"] else "—")
            ro, rt = PERF_REF[model]
            out.append(f"| {PRETTY[model]} | {' | '.join(cells)} | {fmt_ms(ro)} | {fmt_ms(rt)} |")
    return "\n".join(out)


def write_readme(section):
    with open(README) as f:
        text = f.read()
    i, j = text.find(BEGIN_MARK), text.find(END_MARK)
    if i < 0 or j < i:
        text = text.rstrip("\n") + "\n\n## Latest results\n\n" + BEGIN_MARK + "\n" + END_MARK + "\n"
        i, j = text.find(BEGIN_MARK), text.find(END_MARK)
    text = text[:i + len(BEGIN_MARK)] + "\n" + section.rstrip("\n") + "\n" + text[j:]
    with open(README, "w") as f:
        f.write(text)


def replay(args):
    with open(args.from_json) as f:
        d = json.load(f)
    saved = argparse.Namespace(**d["args"])
    for m in saved.models:
        if m in d["profiles"] and "trtlite" in d["profiles"][m]:
            print_profile(m, d["profiles"][m], args.profile or 10)
    md = markdown(d["results"], saved, d["machine"], d["versions"], d["load_start"], d["load_end"], d["started"],
                  d.get("elapsed", 0.0))
    log(md)
    if args.write_readme:
        write_readme(md)
        log(f"updated {os.path.relpath(README)}")
    return 0


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=None, help=f"comma list from {','.join(ALL_MODELS)} (default: all; "
                                                  f"--quick: {','.join(QUICK_MODELS)})")
    p.add_argument("--threads", default="2,1", help="comma list of thread counts (default 2,1)")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--engines", default=",".join(ENGINES), help="comma list (default: all three)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: LeNet + ResNet-18, >= 10 runs / 0.5 s each (< 2 min)")
    p.add_argument("--min-runs", type=int, default=None, help="timed runs at least (default 30; --quick 10)")
    p.add_argument("--min-time", type=float, default=None, help="timed seconds at least (default 5; --quick 0.5)")
    p.add_argument("--max-time", type=float, default=None,
                   help="stop after this many seconds even below --min-runs (>= 10 runs; default 60)")
    p.add_argument("--warmup", type=float, default=None, help="warm-up seconds (default 1; --quick 0.2)")
    p.add_argument("--warmup-runs", type=int, default=None, help="warm-up runs at least (default 3; --quick 2)")
    p.add_argument("--rounds", type=int, default=1,
                   help="repeat each (model, threads) group of engines N times, interleaved, and keep each "
                        "engine's round with the lowest median (for noisy machines)")
    p.add_argument("--profile", type=int, nargs="?", const=8, default=0, metavar="TOP",
                   help="also profile trtlite and onnxruntime per layer (first thread count only) and print "
                        "trtlite's TOP slowest layers next to onnxruntime's, and a per-layer-class comparison")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--timeout", type=float, default=600, help="seconds per worker process")
    p.add_argument("--json", metavar="FILE", help="write all results (and profiles) as JSON")
    p.add_argument("--write-readme", action="store_true", help="replace the results section of benchmarks/README.md")
    p.add_argument("--keep", metavar="DIR", help="keep the ONNX files, plans and inputs in DIR")
    p.add_argument("--from-json", metavar="FILE",
                   help="measure nothing: print (and with --write-readme write) the tables and profiles of a "
                        "--json file")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.argv = list(argv)
    if a.worker:
        return a
    q = a.quick
    a.models = [m.strip() for m in a.models.split(",")] if a.models else (QUICK_MODELS if q else ALL_MODELS)
    bad = [m for m in a.models if m not in ALL_MODELS]
    if bad:
        p.error(f"unknown model(s) {', '.join(bad)}; choose from {', '.join(ALL_MODELS)}")
    a.engines = [e.strip() for e in a.engines.split(",")]
    bad = [e for e in a.engines if e not in ENGINES]
    if bad:
        p.error(f"unknown engine(s) {', '.join(bad)}; choose from {', '.join(ENGINES)}")
    a.threads = [int(t) for t in a.threads.split(",")]
    if any(t < 1 for t in a.threads) or a.batch < 1 or a.rounds < 1:
        p.error("--threads, --batch and --rounds must be >= 1")
    a.min_runs = a.min_runs if a.min_runs is not None else (10 if q else 30)
    a.min_time = a.min_time if a.min_time is not None else (0.5 if q else 5.0)
    a.max_time = a.max_time if a.max_time is not None else (10.0 if q else 60.0)
    a.warmup = a.warmup if a.warmup is not None else (0.2 if q else 1.0)
    a.warmup_runs = a.warmup_runs if a.warmup_runs is not None else (2 if q else 3)
    return a


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        WORKERS[args.worker](json.loads(args.spec))
        return 0
    if args.from_json:
        return replay(args)
    started = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    t_start = time.perf_counter()
    machine = machine_info()
    load_start = loadavg()
    log(f"trtlite benchmark, {started}")
    log(f"machine: {machine['cpu']}, {machine['isa']}, {machine['cpus']} CPUs usable ({machine['host_cpus']} online)")
    log(f"load average at start: {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}")
    if load_start[0] > 0.5:
        log("WARNING: load average > 0.5 -- other work is running on this machine and will skew the figures "
            "(see 'others' per measurement; re-run when idle, or use --rounds 3)")
    vers = versions()
    log("versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()))
    log(f"models {','.join(args.models)}; threads {','.join(map(str, args.threads))}; batch {args.batch}; "
        f">= {args.min_runs} runs and >= {args.min_time:g} s per measurement (cap {args.max_time:g} s); "
        f"warm-up {args.warmup:g} s / {args.warmup_runs} runs; rounds {args.rounds}")
    tmp = args.keep or tempfile.mkdtemp(prefix="trtlite-bench-")
    os.makedirs(tmp, exist_ok=True)
    try:
        results, profiles = measure(args, tmp, machine)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    load_end = loadavg()
    elapsed = time.perf_counter() - t_start
    md = markdown(results, args, machine, vers, load_start, load_end, started, elapsed)
    log("")
    log(md)
    log("")
    log(f"load average at end: {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}; total {elapsed:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"started": started, "elapsed": elapsed, "machine": machine, "versions": vers,
                       "load_start": load_start,
                       "load_end": load_end, "args": {k: v for k, v in vars(args).items() if k != "spec"},
                       "results": results, "profiles": profiles}, f, indent=1)
        log(f"wrote {args.json}")
    if args.write_readme:
        write_readme(md)
        log(f"updated {os.path.relpath(README)}")
    failed = [r for r in results if not r["ok"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
