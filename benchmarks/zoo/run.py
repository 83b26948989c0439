#!/usr/bin/env python3
"""The model zoo: trtlite vs onnxruntime vs OpenVINO on >= 20 real architectures (what `make bench-zoo` runs).

    python3 benchmarks/zoo/run.py                               # every model, batch 1,8, threads 2,1, timed
    python3 benchmarks/zoo/run.py --check-only                  # correctness only: parse, build, agree?
    python3 benchmarks/zoo/run.py --check-only --breakdown --batch 1 --threads 2   # + trtlite op-kind shares
    python3 benchmarks/zoo/run.py --models resnet18,vit_b_16 --batch 1 --threads 2 --rounds 3
    python3 benchmarks/zoo/run.py --quick --out r.json --chart r.png --markdown

Method (benchmarks/README.md, "The model zoo"; PERF.md, "How to benchmark fairly"):
  * models come from benchmarks/zoo/models.py (torchvision definitions and the zoo's own nets, seeded random
    weights) and are exported once by benchmarks/zoo/export.py into build/zoo/ (opset 17, dynamic batch);
  * one seeded input per (model, batch); onnxruntime's output (1 thread, all optimizations) is the reference;
    every engine process checks its first output against it (rtol 1e-3, atol 1e-4 * max|ref|) before timing;
    a model that fails to parse, build or agree is reported as such, never dropped;
  * one engine per process, equal threads: trtlite config.num_threads = context.num_threads = t (plan built for
    that batch, in its own process); onnxruntime intra_op_num_threads = t, inter_op_num_threads = 1 (the worker of
    benchmarks/run.py); OpenVINO INFERENCE_NUM_THREADS = t, INFERENCE_PRECISION_HINT f32, PERFORMANCE_HINT
    LATENCY, the model reshaped to the batch;
  * --rounds r interleaved rounds: each round runs every engine (a fresh process each) for >= --iters timed runs
    after a warm-up, the engine order rotated per round; median and p90 over all rounds' runs; setup time is the
    median over rounds; peak RSS (VmHWM) the largest.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)


def _load(name, path):
    """Import ``path`` as module ``name`` (once).  benchmarks/run.py and this file are both "run", and
    benchmarks/models.py and zoo/models.py both "models", so none of them is imported through sys.path."""
    import importlib.util
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


bench = _load("trtlite_bench_run", os.path.join(BENCH, "run.py"))  # onnxruntime worker, timing loop, verify, ...

ZOO_RUN = os.path.abspath(__file__)
ENGINES = ["trtlite", "onnxruntime", "openvino"]
LABEL = {"trtlite": "trtlite", "onnxruntime": "onnxruntime", "openvino": "OpenVINO"}
DEFAULT_DIR = os.path.join(ROOT, "build", "zoo")


def _zoo_models():
    return _load("trtlite_zoo_models", os.path.join(HERE, "models.py"))


def _zoo_export():
    return _load("trtlite_zoo_export", os.path.join(HERE, "export.py"))


# ==== workers (each in its own process) ============================================================

def rss_stage(res, name):
    """Append (stage, VmRSS MiB, VmHWM MiB) of this process to res["rss_stages"] (the per-stage memory report)."""
    vals = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                vals[line.split(":")[0]] = int(line.split()[1]) / 1024
    res.setdefault("rss_stages", []).append([name, round(vals.get("VmRSS", 0), 1), round(vals.get("VmHWM", 0), 1)])


def worker_ref(spec):
    """The seeded input and onnxruntime's reference output for one (model, batch)."""
    import numpy as np
    export = _zoo_export()
    x = _zoo_models().make_input(spec["model"], spec["batch"], spec["seed"])
    np.save(spec["input"], x)
    y = export.ort_session(spec["onnx"], 1).run(None, {"input": x})[0]
    np.save(spec["ref"], y)
    bench.emit({"ok": True, "out_shape": list(y.shape)})


def worker_trtbuild(spec):
    """ONNX -> OnnxParser -> build for one batch (min = opt = max) and thread count -> plan file."""
    stages = {}
    import trtlite as trt
    import numpy as np
    rss_stage(stages, "import")
    logger = trt.Logger(trt.Logger.ERROR)
    t0 = time.perf_counter()
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    try:
        ok = parser.parse_from_file(spec["onnx"])  # as trtexec --onnx: the parser frees the file's bytes once decoded
        rss_stage(stages, "parse")
        err = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
    except Exception as e:  # noqa: BLE001 -- reported
        ok, err = False, f"{type(e).__name__}: {e}"
    if not ok:
        bench.emit({"ok": False, "stage": "parse", "error": err or "parse returned False"})
        return
    t1 = time.perf_counter()
    config = builder.create_builder_config()
    config.num_threads = spec["threads"]
    profile = builder.create_optimization_profile()
    shape = tuple(np.load(spec["input"], mmap_mode="r").shape)
    profile.set_shape("input", shape, shape, shape)
    config.add_optimization_profile(profile)
    try:
        plan = builder.build_serialized_network(network, config)
        if plan is None:
            raise RuntimeError("build_serialized_network returned None")
    except Exception as e:  # noqa: BLE001 -- reported
        bench.emit({"ok": False, "stage": "build", "error": f"{type(e).__name__}: {e}", "parse_s": t1 - t0})
        return
    t2 = time.perf_counter()
    rss_stage(stages, "build")
    with open(spec["plan"], "wb") as f:
        f.write(plan)  # IHostMemory is a buffer: no second copy of the plan
    rss_stage(stages, "plan written")
    bench.emit(dict(stages, ok=True, parse_s=t1 - t0, build_s=t2 - t1, plan_bytes=os.path.getsize(spec["plan"]),
                    layers=network.num_layers, build_peak_rss_kib=bench.peak_rss_kib()))


def _timed(res, check, run_once, spec):
    if check["ok"] and not spec.get("check_only"):
        res.update(bench.time_loop(run_once, spec))


def worker_trtlite(spec):
    """Load the plan, check the first output against onnxruntime's, time it, optionally profile it."""
    res = {}
    import numpy as np
    import trtlite as trt
    rss_stage(res, "import")
    x = np.load(spec["input"])
    ref = np.load(spec["ref"])
    logger = trt.Logger(trt.Logger.ERROR)
    t0 = time.perf_counter()
    with open(spec["plan"], "rb") as f:
        engine = trt.Runtime(logger).deserialize_cuda_engine(f.read())
    rss_stage(res, "deserialize")
    context = engine.create_execution_context()
    rss_stage(res, "context")
    context.num_threads = spec["threads"]
    context.set_input_shape("input", x.shape)
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    out_name = [n for n in names if n != "input"][0]
    out = np.empty(tuple(context.get_tensor_shape(out_name)) if hasattr(context, "get_tensor_shape")
                   else ref.shape, np.float32)
    arrays = {"input": x, out_name: out}
    ptrs = [arrays[n].ctypes.data for n in names]

    def run_once():
        context.execute_v2(ptrs)
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_once()
    first = time.perf_counter() - t0
    rss_stage(res, "first run")
    check = bench.verify(out, ref) if out.size == ref.size else {
        "ok": False, "max_abs": float("nan"), "max_rel": float("nan"), "ref_max": float(np.abs(ref).max()),
        "error": f"output shape {out.shape} vs onnxruntime's {ref.shape}"}
    res.update({"setup_s": setup, "first_s": first, "verify": check})
    _timed(res, check, run_once, spec)
    if check["ok"] and spec.get("breakdown"):
        res["breakdown"] = trt_breakdown(trt, engine, context, run_once, spec)
    res["peak_rss_kib"] = bench.peak_rss_kib()
    res["ok"] = check["ok"]
    bench.emit(res)


def onnx_ops(path):
    """({node name: op type}, {node name: [input names]}, constant tensor names, run.py's Conv/Gemm descriptions)."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    consts = {i.name for i in m.graph.initializer}
    consts |= {o for nd in m.graph.node if nd.op_type == "Constant" for o in nd.output}
    return ({nd.name: nd.op_type for nd in m.graph.node}, {nd.name: list(nd.input) for nd in m.graph.node}, consts,
            bench.onnx_node_info(path))


def op_kind(layer_name, layer_type, graph):
    """The op kind a (possibly fused) trtlite layer is charged to.  Convolutions by class (run.py's category:
    "conv 3x3 s1", "depthwise 3x3 s2", ...; with whatever bias/activation/residual was fused into them);
    MatMul/Gemm with a constant weight "fully connected", between two activations "MatMul (activations)"
    (attention); other layers by the ONNX op type of their first node, plus "+GELU" when an Erf/Tanh GELU was fused
    into them or "+<op>" for the other fused ops; layers with no ONNX node by the engine's layer type."""
    ops, inputs, consts, nodes = graph
    parts = [re.sub(r"/\d+$", "", p) if p not in ops else p for p in layer_name.split(" + ")]
    first = parts[0]
    nd = bench.node_of(layer_name, nodes)
    if nd and nd.get("op") == "Conv":
        return bench.category(nd.get("desc"))
    op = ops.get(first)
    if op in ("Gemm", "MatMul"):
        ins = inputs.get(first, [])
        return "fully connected" if len(ins) > 1 and ins[1] in consts else "MatMul (activations)"
    if not op:
        return (layer_type or "?").lower()
    rest = [ops.get(p) for p in parts[1:] if ops.get(p)]
    if "Erf" in rest or ("Tanh" in rest and "Pow" in rest):
        return op + "+GELU"
    extra = [o for o in dict.fromkeys(rest) if o != op]
    return op + "".join("+" + o for o in extra[:2]) + ("+..." if len(extra) > 2 else "")


def layer_times(trt, engine, context, run_profiled):
    """Per-layer times from context.profiler: ({layer name: inspector entry}, {layer name: [ms per run]}, what
    run_profiled() returned); run_profiled runs the engine as often as it likes while the profiler is set."""
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    layers = {lay["name"]: lay for lay in info.get("layers", [])}
    times = {}

    class Prof(trt.IProfiler):
        def report_layer_time(self, layer_name, ms):
            times.setdefault(layer_name, []).append(ms)

    prof = Prof()
    context.profiler = prof
    try:
        out = run_profiled()
    finally:
        context.profiler = None
    return layers, times, out


def trt_breakdown(trt, engine, context, run_once, spec):
    """Per-layer times from context.profiler (a separate pass), summed per op kind and per kernel."""
    import numpy as np

    def profiled_runs():
        t0, n = time.perf_counter(), 0
        while n < spec.get("profile_min_runs", 5) or (time.perf_counter() - t0 < spec.get("profile_s", 2.0)
                                                       and n < 200):
            run_once()
            n += 1
        return n

    layers, times, n = layer_times(trt, engine, context, profiled_runs)
    graph = onnx_ops(spec["onnx"])
    rows = []
    for name, v in times.items():
        lay = layers.get(name, {})
        rows.append({"name": name, "ms": float(np.median(v)), "type": lay.get("type", "?"),
                     "kernel": lay.get("kernel", "?"), "kind": op_kind(name, lay.get("type"), graph)})
    total = sum(r["ms"] for r in rows) or 1e-9
    kinds, kernels = {}, {}
    for r in rows:
        k = kinds.setdefault(r["kind"], {"ms": 0.0, "layers": 0, "kernels": {}})
        k["ms"] += r["ms"]
        k["layers"] += 1
        k["kernels"][r["kernel"]] = k["kernels"].get(r["kernel"], 0.0) + r["ms"]
        kernels[r["kernel"]] = kernels.get(r["kernel"], 0.0) + r["ms"]
    for k in kinds.values():
        k["share"] = k["ms"] / total
    ref_ms = sum(ms for kn, ms in kernels.items() if kn.endswith(".ref") or ".ref" in kn)
    rows.sort(key=lambda r: -r["ms"])
    return {"runs": n, "total_ms": total, "num_layers": len(layers),
            "kinds": dict(sorted(kinds.items(), key=lambda kv: -kv[1]["ms"])),
            "kernels": dict(sorted(kernels.items(), key=lambda kv: -kv[1])), "ref_share": ref_ms / total,
            "top_layers": rows[:10], "layers": [[r["name"], round(r["ms"], 4), r["kernel"], r["kind"]] for r in rows]}


def openvino_request(ov, onnx_path, x, threads):
    """OpenVINO's compiled model and infer request for ONNX file `onnx_path` at x's shape: CPU, fp32, `threads`
    threads, latency hint, x bound as the input (also benchmarks/small_loop.py)."""
    core = ov.Core()
    model = core.read_model(onnx_path)
    model.reshape({"input": list(x.shape)})
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                 "INFERENCE_NUM_THREADS": int(threads),
                                                 "PERFORMANCE_HINT": "LATENCY"})
    req = compiled.create_infer_request()
    req.set_input_tensor(ov.Tensor(x))
    return compiled, req


def worker_openvino(spec):
    """OpenVINO CPU: the same ONNX file reshaped to the batch, fp32, t threads, latency hint."""
    import numpy as np
    x = np.load(spec["input"])
    ref = np.load(spec["ref"])
    try:
        import openvino as ov
    except ImportError:
        bench.emit({"ok": False, "error": "not installed", "not_installed": True})
        return
    t0 = time.perf_counter()
    compiled, req = openvino_request(ov, spec["onnx"], x, spec["threads"])

    def run_once():
        req.infer()
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_once()
    first = time.perf_counter() - t0
    check = bench.verify(np.array(req.get_output_tensor(0).data), ref)
    res = {"setup_s": setup, "first_s": first, "verify": check,
           "ov_threads": int(compiled.get_property("INFERENCE_NUM_THREADS"))}
    _timed(res, check, run_once, spec)
    res["peak_rss_kib"] = bench.peak_rss_kib()
    res["ok"] = check["ok"]
    bench.emit(res)


WORKERS = {"ref": worker_ref, "trtbuild": worker_trtbuild, "trtlite": worker_trtlite, "openvino": worker_openvino}


def run_worker(kind, spec, timeout):
    """One worker process: this file's workers, or benchmarks/run.py's onnxruntime worker."""
    if kind == "onnxruntime":
        return bench.run_worker("onnxruntime", dict(spec, profile=False), timeout) if not spec.get("check_only") \
            else bench.run_worker("onnxruntime", dict(spec, profile=False, min_runs=1, min_time=0.0, warmup_runs=0,
                                                      warmup_s=0.0, max_time=0.0), timeout)
    cmd = [sys.executable, ZOO_RUN, "--worker", kind, "--spec", json.dumps(spec)]
    env = bench.worker_env(spec.get("threads", 1))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout:.0f} s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith(bench.RESULT_TAG):
            return json.loads(line[len(bench.RESULT_TAG):])
    tail = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or ["no output"])[-1]
    return {"ok": False, "error": f"exit {p.returncode}: {tail}"[:400]}


# ==== the driver ===================================================================================

def log(msg=""):
    print(msg, flush=True)


def export_all(args):
    """Export (or reuse) every requested model in one subprocess; {name: metadata or {"error"}}."""
    cmd = [sys.executable, os.path.join(HERE, "export.py"), "--json", "--out", args.dir, "--seed", str(args.seed),
           "--models", ",".join(args.models)]
    env = bench.worker_env(1)
    metas = {}
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as p:
        for line in p.stdout:
            if line.startswith("@@EXPORT "):
                m = json.loads(line[len("@@EXPORT "):])
                metas[m["model"]] = m
                if "error" in m:
                    log(f"   export {m['model']}: FAILED {m['error']}")
                else:
                    log(f"   export {m['model']}: {m['onnx_bytes'] / 2**20:.1f} MiB"
                        + (" (cached)" if m.get("cached") else f" in {m['export_s']:.1f} s"))
        err = p.stderr.read()
    for n in args.models:
        metas.setdefault(n, {"model": n, "error": "export process died: " + (err.strip().splitlines() or ["?"])[-1]})
    return metas


def summarize(runs, batch):
    """Merge the rounds of one engine: latencies pooled, setup median, RSS max."""
    import numpy as np
    ok = [r for r in runs if r.get("ok")]
    if not ok:
        return runs[-1] if runs else {"ok": False, "error": "not run"}
    out = {"ok": True, "verify": ok[0]["verify"], "rounds": len(ok),
           "setup_s": float(np.median([r["setup_s"] for r in ok])),
           "first_s": float(np.median([r["first_s"] for r in ok])),
           "peak_rss_kib": max(r["peak_rss_kib"] for r in ok),
           "foreign_cpus": float(np.mean([r.get("foreign_cpus", 0.0) for r in ok])),
           "rss_stages": max(ok, key=lambda r: r["peak_rss_kib"]).get("rss_stages")}
    lat = [x for r in ok for x in r.get("lat", [])]
    if lat:
        out["stats"] = bench.stats({"lat": lat}, batch)
        out["round_medians_ms"] = [float(np.median(r["lat"]) * 1e3) for r in ok if r.get("lat")]
    return out


def measure(args, metas):
    results = []
    work = os.path.join(args.dir, "run")
    os.makedirs(work, exist_ok=True)
    for model in args.models:
        meta = metas[model]
        if "error" in meta:
            for b in args.batch:
                for t in args.threads:
                    results.append({"model": model, "batch": b, "threads": t, "status": "export failed",
                                    "error": meta["error"], "engines": {}})
            continue
        onnx_path = os.path.join(args.dir, model + ".onnx")
        for b in args.batch:
            files = {"input": os.path.join(work, f"{model}.b{b}.input.npy"),
                     "ref": os.path.join(work, f"{model}.b{b}.ref.npy"), "onnx": onnx_path}
            ref = run_worker("ref", dict(files, model=model, batch=b, seed=args.seed), args.timeout)
            if not ref.get("ok"):
                for t in args.threads:
                    results.append({"model": model, "batch": b, "threads": t, "status": "reference failed",
                                    "error": ref.get("error"), "engines": {}})
                log(f"== {model} b={b}: onnxruntime reference FAILED: {ref.get('error')}")
                continue
            for ti, t in enumerate(args.threads):
                row = one_config(args, model, b, t, files, work, breakdown=args.breakdown and ti == 0
                                 and b == args.batch[0])
                results.append(row)
    return results


def one_config(args, model, b, t, files, work, breakdown):
    spec = dict(files, model=model, batch=b, threads=t, plan=os.path.join(work, f"{model}.b{b}.t{t}.plan"),
                warmup_runs=args.warmup_runs, warmup_s=args.warmup, min_runs=args.iters, min_time=args.min_time,
                max_time=args.max_time, check_only=args.check_only)
    row = {"model": model, "batch": b, "threads": t, "engines": {}}
    engines = list(args.engines)
    build = None
    if "trtlite" in engines:
        build = run_worker("trtbuild", spec, args.timeout)
        row["build"] = build
        if not build.get("ok"):
            row["status"] = f"{build.get('stage', 'build')} failed"
            row["error"] = build.get("error")
            log(f"== {model} b={b} t={t}: trtlite {row['status']}: {str(build.get('error'))[:300]}")
    runs = {e: [] for e in engines}
    rounds = 1 if args.check_only else args.rounds
    for rnd in range(rounds):
        order = engines[rnd % len(engines):] + engines[:rnd % len(engines)]
        for eng in order:
            if eng == "trtlite" and not (build and build.get("ok")):
                continue
            if eng == "openvino" and runs[eng] and runs[eng][-1].get("not_installed"):
                continue
            s = dict(spec, breakdown=breakdown and eng == "trtlite" and rnd == rounds - 1)
            r = run_worker(eng, s, args.timeout)
            if "breakdown" in r:
                row["breakdown"] = r.pop("breakdown")
            runs[eng].append(r)
    for eng in engines:
        if eng == "trtlite" and not (build and build.get("ok")):
            row["engines"][eng] = {"ok": False, "error": row.get("status", "not built")}
            continue
        row["engines"][eng] = summarize(runs[eng], b)
    tr = row["engines"].get("trtlite", {})
    if "status" not in row:
        if tr.get("ok"):
            row["status"] = "ok"
        elif tr.get("verify") and not tr["verify"].get("ok"):
            row["status"] = "mismatch"
        else:
            row["status"] = "run failed"
            row["error"] = tr.get("error")
    log(line_for(row))
    return row


def line_for(row):
    head = f"== {row['model']} b={row['batch']} t={row['threads']}: trtlite {row['status']}"
    tr = row["engines"].get("trtlite", {})
    bits = []
    v = tr.get("verify")
    if v:
        bits.append(f"max|diff| {v['max_abs']:.2e} (rel {v['max_rel']:.1e}, max|ref| {v['ref_max']:.2e})")
    if row.get("build", {}).get("ok"):
        bits.append(f"build {row['build']['parse_s'] + row['build']['build_s']:.1f} s")
    for eng, r in row["engines"].items():
        if r.get("stats"):
            bits.append(f"{LABEL[eng]} {bench.fmt_ms(r['stats']['median_ms'])} ms")
        elif r.get("ok") and eng != "trtlite":
            bits.append(f"{LABEL[eng]} agrees (max|diff| {r['verify']['max_abs']:.1e})")
        elif not r.get("ok") and eng != "trtlite":
            bits.append(f"{LABEL[eng]}: {str(r.get('error', 'failed'))[:80]}")
    if row.get("error") and row["status"] != "ok":
        bits.append(str(row["error"])[:300])
    if row.get("breakdown"):
        bd = row["breakdown"]
        bits.append("top: " + ", ".join(f"{k} {100 * v['share']:.0f}%" for k, v in list(bd["kinds"].items())[:4]))
    return head + ("; " + "; ".join(bits) if bits else "")


# ==== tables and chart =============================================================================

def _pretty(model):
    e = _zoo_models().ZOO.get(model)
    return e.pretty if e else model


def _ratio(peer, base):
    if not peer or not base:
        return None
    return peer / base


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _cell(r):
    if r is None:
        return "—"
    if r.get("not_installed"):
        return "not installed"
    if not r.get("ok"):
        v = r.get("verify")
        if v and not v.get("ok"):
            return f"mismatch ({v['max_abs']:.1e})"
        return "failed"
    s = r.get("stats")
    return f"{bench.fmt_ms(s['median_ms'])} / {bench.fmt_ms(s['p90_ms'])}" if s else "ok"


def speed_table(results, args):
    out = ["| model | batch | threads | trtlite median / p90 ms | onnxruntime | OpenVINO | ORT / trtlite | "
           "OV / trtlite | trtlite build | peak RSS trtlite / ORT / OV |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    ratios = {}
    for row in results:
        e = row["engines"]
        tr, o, v = e.get("trtlite"), e.get("onnxruntime"), e.get("openvino")
        base = (tr or {}).get("stats", {}).get("median_ms")
        ro = _ratio((o or {}).get("stats", {}).get("median_ms"), base)
        rv = _ratio((v or {}).get("stats", {}).get("median_ms"), base)
        key = (row["batch"], row["threads"])
        ratios.setdefault(key, {"ort": [], "ov": []})
        if ro:
            ratios[key]["ort"].append(ro)
        if rv:
            ratios[key]["ov"].append(rv)
        b = row.get("build") or {}
        build = bench.fmt_s(b["parse_s"] + b["build_s"]) if b.get("ok") else row.get("status", "—")
        rss = " / ".join(f"{r['peak_rss_kib'] / 1024:.0f}" if r and r.get("peak_rss_kib") else "—" for r in (tr, o, v))
        trc = _cell(tr) if row["status"] in ("ok", "mismatch") else row["status"]
        out.append(f"| {_pretty(row['model'])} | {row['batch']} | {row['threads']} | {trc} | {_cell(o)} | {_cell(v)} | "
                   f"{f'{ro:.2f}×' if ro else '—'} | {f'{rv:.2f}×' if rv else '—'} | {build} | {rss} MiB |")
    out.append("")
    out.append("Geometric means of the ratios (peer median / trtlite median; > 1: trtlite is faster), over the models "
               "all engines ran:")
    out.append("")
    out.append("| batch | threads | onnxruntime / trtlite | OpenVINO / trtlite | models |")
    out.append("|---|---|---|---|---|")
    for (b, t), r in sorted(ratios.items()):
        go, gv = geomean(r["ort"]), geomean(r["ov"])
        out.append(f"| {b} | {t} | {f'{go:.2f}×' if go else '—'} | {f'{gv:.2f}×' if gv else '—'} | "
                   f"{len(r['ort'])} / {len(r['ov'])} |")
    return "\n".join(out)


def correctness_table(results, metas):
    out = ["| model | family | params | ONNX | trtlite parse / build | agrees with onnxruntime? | max abs err | "
           "max rel err | max abs ref | PyTorch vs ORT (b=2) | OpenVINO vs ORT |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    seen = set()
    for row in results:
        key = (row["model"], row["batch"])
        if key in seen:
            continue
        seen.add(key)
        m = metas.get(row["model"], {})
        e = _zoo_models().ZOO.get(row["model"])
        tr = row["engines"].get("trtlite") or {}
        v = tr.get("verify") or {}
        st = row["status"]
        if st == "ok":
            pb, agree = "ok / ok", "yes"
        elif st == "mismatch":
            pb, agree = "ok / ok", "**no**"
        elif st == "parse failed":
            pb, agree = "**parse failed**: " + _short(row.get("error")), "—"
        elif st == "build failed":
            pb, agree = "ok / **build failed**: " + _short(row.get("error")), "—"
        else:
            pb, agree = f"**{st}**: " + _short(row.get("error")), "—"
        tv = m.get("torch_vs_ort_b2") or {}
        name = _pretty(row["model"]) + (f" (b={row['batch']})" if len({r['batch'] for r in results
                                                                        if r['model'] == row['model']}) > 1 else "")
        out.append(f"| {name} | {e.family if e else ''} | {m.get('params', 0) / 1e6:.1f} M | "
                   f"{m.get('onnx_bytes', 0) / 2**20:.0f} MiB | {pb} | {agree} | "
                   f"{_e(v.get('max_abs'))} | {_e(v.get('max_rel'))} | {_e(v.get('ref_max'))} | "
                   f"{_e(tv.get('max_abs'))} | {_peer_check(row['engines'].get('openvino'))} |")
    return "\n".join(out)


def _peer_check(r):
    if r is None:
        return "—"
    if r.get("not_installed"):
        return "not installed"
    v = r.get("verify")
    if r.get("ok"):
        return _e(v.get("max_abs")) if v else "ok"
    if v and not v.get("ok"):
        return f"**mismatch** {_e(v.get('max_abs'))}"
    return "failed: " + _short(r.get("error"), 60)


def _short(s, n=90):
    s = str(s or "").replace("|", "/").replace("\n", " ")
    return s if len(s) <= n else s[:n - 1] + "…"


def _e(v):
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.1e}"


def breakdown_table(results, top=5):
    out = ["| model | batch / threads | sum of layers (ms) | layers | top op kinds by share of trtlite's time | "
           "in reference kernels |", "|---|---|---|---|---|---|"]
    for row in results:
        bd = row.get("breakdown")
        if not bd:
            continue
        kinds = ", ".join(f"{k}{_ref_mark(v)} {100 * v['share']:.0f}%" for k, v in list(bd["kinds"].items())[:top])
        out.append(f"| {_pretty(row['model'])} | {row['batch']} / {row['threads']} | {bench.fmt_ms(bd['total_ms'])} | "
                   f"{bd['num_layers']} | {kinds} | {100 * bd['ref_share']:.0f}% |")
    return "\n".join(out)


def _ref_mark(kind):
    """"†" when most of an op kind's time is spent in reference kernels ("<op>.ref")."""
    ref = sum(ms for kn, ms in kind.get("kernels", {}).items() if kn.endswith(".ref"))
    return "†" if kind["ms"] > 0 and ref > 0.5 * kind["ms"] else ""


def kind_totals(results):
    """Op kinds summed over models by share (each model weighs 1): where the time goes across the zoo."""
    tot = {}
    n = 0
    for row in results:
        bd = row.get("breakdown")
        if not bd:
            continue
        n += 1
        for k, v in bd["kinds"].items():
            tot[k] = tot.get(k, 0.0) + v["share"]
    return n, sorted(((k, s / n) for k, s in tot.items()), key=lambda kv: -kv[1])


def chart(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("--chart: matplotlib is not installed (pip install matplotlib); no chart written")
        return False
    configs = sorted({(r["batch"], r["threads"]) for r in results})
    models = list(dict.fromkeys(r["model"] for r in results))
    fig, axes = plt.subplots(len(configs), 1, figsize=(max(8, 0.5 * len(models)), 3.2 * len(configs)),
                             squeeze=False)
    for ax, (b, t) in zip(axes[:, 0], configs):
        for j, (eng, color) in enumerate((("onnxruntime", "tab:blue"), ("openvino", "tab:orange"))):
            xs, ys = [], []
            for i, m in enumerate(models):
                row = next((r for r in results if r["model"] == m and r["batch"] == b and r["threads"] == t), None)
                if not row:
                    continue
                base = row["engines"].get("trtlite", {}).get("stats", {}).get("median_ms")
                peer = row["engines"].get(eng, {}).get("stats", {}).get("median_ms")
                if base and peer:
                    xs.append(i + (j - 0.5) * 0.4)
                    ys.append(peer / base)
            ax.bar(xs, [y - 1.0 for y in ys], bottom=1.0, width=0.4, color=color,  # bars grow from 1 both ways
                   label=f"{LABEL[eng]} / trtlite")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_yscale("log")
        ax.set_ylabel("latency ratio")
        ax.set_title(f"batch {b}, {t} thread{'s' if t > 1 else ''}: peer median / trtlite median (> 1: trtlite faster)")
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels([_pretty(m) for m in models], rotation=60, ha="right", fontsize=7)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def markdown(d):
    res, metas, args = d["results"], d["metas"], d["args"]
    out = [f"Run {d['started']} with `{' '.join(['benchmarks/zoo/run.py'] + args['argv'])}` "
           f"(took {d['elapsed'] / 60:.1f} min).  ",
           f"Machine: {d['machine']['cpu']}, {d['machine']['isa']}, {d['machine']['cpus']} CPUs usable.  ",
           "Versions: " + ", ".join(f"{k} {v}" for k, v in d["versions"].items()) + ".  ",
           f"Load average at start {d['load_start'][0]:.2f}, at end {d['load_end'][0]:.2f}.", ""]
    out += ["### Correctness (trtlite vs onnxruntime)", "", correctness_table(res, metas), ""]
    if not args.get("check_only"):
        out += ["### Latency", "", speed_table(res, args), ""]
    if any(r.get("breakdown") for r in res):
        out += ["### Where trtlite's time goes", "", breakdown_table(res), "",
                "Shares of the sum of per-layer times (context.profiler, median over the profiled runs); a fused "
                "layer is charged to the op kind of its first node (a convolution with its fused bias, activation "
                "and residual add counts as the convolution).  †: mostly reference kernels (\"<op>.ref\").", ""]
        n, tot = kind_totals(res)
        out.append(f"Across the {n} models (each model's shares averaged): "
                   + ", ".join(f"{k} {100 * s:.1f}%" for k, s in tot[:12]) + ".")
    return "\n".join(out)


def versions():
    """Package versions, read from the installed metadata in one subprocess (nothing heavy is imported)."""
    code = ("import json, importlib.metadata as md\n"
            "out = {}\n"
            "for k, d in (('onnxruntime', 'onnxruntime'), ('openvino', 'openvino'), ('torch', 'torch'),\n"
            "             ('torchvision', 'torchvision'), ('onnx', 'onnx'), ('numpy', 'numpy')):\n"
            "    try:\n"
            "        out[k] = md.version(d)\n"
            "    except md.PackageNotFoundError:\n"
            "        out[k] = 'not installed'\n"
            "try:\n"
            "    import trtlite\n"
            "    out = dict(trtlite=getattr(trtlite, '__version__', '?'), **out)\n"
            "except Exception as e:\n"
            "    out = dict(trtlite='import failed: %s' % e, **out)\n"
            "print(json.dumps(out))")
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env=bench.worker_env(1))
        return json.loads(p.stdout.strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001 -- informational
        return {"error": str(e)}


def parse_args(argv):
    models = _zoo_models()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=None, help="comma list (default: all): " + ",".join(models.names()))
    p.add_argument("--batch", default="1,8", help="comma list of batch sizes (default 1,8)")
    p.add_argument("--threads", default="2,1", help="comma list of thread counts (default 2,1)")
    p.add_argument("--engines", default=",".join(ENGINES), help="comma list (default: all three)")
    p.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3; --quick 1)")
    p.add_argument("--iters", type=int, default=None, help="timed runs per engine per round at least "
                                                           "(default 20; --quick 5)")
    p.add_argument("--min-time", type=float, default=None, help="timed seconds per engine per round at least "
                                                                "(default 1; --quick 0.2)")
    p.add_argument("--max-time", type=float, default=None, help="stop a round after this many seconds "
                                                                "(default 30; --quick 5)")
    p.add_argument("--warmup", type=float, default=None, help="warm-up seconds (default 0.5; --quick 0.1)")
    p.add_argument("--warmup-runs", type=int, default=None, help="warm-up runs (default 2; --quick 1)")
    p.add_argument("--quick", action="store_true", help="few iterations, one round")
    p.add_argument("--check-only", action="store_true",
                   help="correctness only: build, run once, compare with onnxruntime; no timing")
    p.add_argument("--breakdown", action="store_true",
                   help="trtlite per-op-kind share of time (context.profiler) at the first batch and thread count")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", default=DEFAULT_DIR, help="ONNX cache and work directory (default build/zoo)")
    p.add_argument("--timeout", type=float, default=900, help="seconds per worker process")
    p.add_argument("--out", metavar="FILE", help="write everything as JSON")
    p.add_argument("--chart", metavar="PNG", help="bar chart of the latency ratios (needs matplotlib)")
    p.add_argument("--markdown", action="store_true", help="print the README tables")
    p.add_argument("--from-json", metavar="FILE", help="measure nothing: re-print tables / chart from --out")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.argv = list(argv)
    if a.worker or a.from_json:
        return a
    a.models = [m.strip() for m in a.models.split(",")] if a.models else models.names()
    bad = [m for m in a.models if m not in models.ZOO]
    if bad:
        p.error(f"unknown model(s) {', '.join(bad)}; choose from {', '.join(models.names())}")
    a.engines = [e.strip() for e in a.engines.split(",")]
    if any(e not in ENGINES for e in a.engines):
        p.error(f"engines are {', '.join(ENGINES)}")
    a.batch = [int(x) for x in a.batch.split(",")]
    a.threads = [int(x) for x in a.threads.split(",")]
    q = a.quick
    a.rounds = a.rounds or (1 if q else 3)
    a.iters = a.iters or (5 if q else 20)
    a.min_time = a.min_time if a.min_time is not None else (0.2 if q else 1.0)
    a.max_time = a.max_time if a.max_time is not None else (5.0 if q else 30.0)
    a.warmup = a.warmup if a.warmup is not None else (0.1 if q else 0.5)
    a.warmup_runs = a.warmup_runs if a.warmup_runs is not None else (1 if q else 2)
    if min(a.batch + a.threads + [a.rounds, a.iters]) < 1:
        p.error("--batch, --threads, --rounds and --iters must be >= 1")
    return a


def report(d, args):
    md = markdown(d)
    if args.markdown:
        log("")
        log(md)
    if args.chart and not d["args"].get("check_only"):
        if chart(d["results"], args.chart):
            log(f"wrote {args.chart}")
    return md


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        WORKERS[args.worker](json.loads(args.spec))
        return 0
    if args.from_json:
        with open(args.from_json) as f:
            d = json.load(f)
        report(d, args)
        return 0
    started = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    t0 = time.perf_counter()
    machine, load_start = bench.machine_info(), bench.loadavg()
    vers = versions()
    log(f"trtlite model zoo, {started}; {machine['cpu']}, {machine['isa']}, {machine['cpus']} CPUs; "
        f"load {load_start[0]:.2f}")
    log("versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()))
    if load_start[0] > 0.5 and not args.check_only:
        log("WARNING: load average > 0.5: other work is running and skews the timings (shares and correctness "
            "are still meaningful)")
    log(f"models {len(args.models)}; batch {args.batch}; threads {args.threads}; engines {args.engines}; "
        + ("check only" if args.check_only else f"rounds {args.rounds} x >= {args.iters} runs / {args.min_time:g} s")
        + ("; breakdown" if args.breakdown else ""))
    metas = export_all(args)
    results = measure(args, metas)
    d = {"started": started, "elapsed": time.perf_counter() - t0, "machine": machine, "versions": vers,
         "load_start": load_start, "load_end": bench.loadavg(),
         "args": {k: v for k, v in vars(args).items() if k != "spec"}, "metas": metas, "results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(d, f, indent=1)
        log(f"wrote {args.out}")
    report(d, args)
    bad = [r for r in results if r["status"] != "ok"]
    log(f"{len(results) - len(bad)}/{len(results)} configurations built and agreed with onnxruntime"
        + (": " + ", ".join(sorted({f"{r['model']} ({r['status']})" for r in bad})) if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
