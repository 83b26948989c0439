"""Precision rows of the model zoo (project issue #11): fp32, BF16 and INT8 of trtlite beside onnxruntime and
OpenVINO, from the same files.

    python3 benchmarks/zoo/precision.py                                # resnet18,resnet50,mobilenet_v2,bert_base_4l
    python3 benchmarks/zoo/precision.py --models resnet18 --quick      # few iterations, one round
    python3 benchmarks/zoo/precision.py --check-only                   # agreement only, nothing timed
    python3 benchmarks/zoo/precision.py --out p.json --markdown

For each model the zoo's fp32 ONNX file (benchmarks/zoo/export.py, cached in --dir) is quantized once with
onnxruntime's ``quantize_static`` (QDQ format, per-channel int8 weights, symmetric int8 activations -- the form
TensorRT accepts -- calibrated with MinMax on --calib seeded random inputs) into ``<model>.qdq.onnx``.  Engines,
each in its own process, one engine per process, equal threads, rounds interleaved:

  trtlite fp32        the fp32 file, no precision flag
  trtlite bf16        the fp32 file, BuilderFlag.BF16
  trtlite int8        the QDQ file (explicit quantization)
  onnxruntime fp32 / int8     the fp32 / QDQ file (CPU EP, all optimizations)
  OpenVINO fp32 / bf16 / int8 the fp32 file (INFERENCE_PRECISION_HINT f32 / bf16) / the QDQ file

Agreement (before timing, not timed): every engine runs --agree seeded random inputs and is compared with the fp32
model under onnxruntime: top-1 agreement for classifiers, the mean cosine similarity of the outputs for the BERT
encoder.  An engine whose output is not finite or whose agreement is below --min-agree is reported, not timed.
The inputs are the same for every batch size: chunks of --agree-batch samples, each made from its own seed, so the
reference is computed once per model (in chunks, on the row's threads) and shared by the batch-1 and batch-8 rows;
onnxruntime runs whole chunks (its batch dimension is dynamic), the fixed-shape engines (trtlite, OpenVINO) the
chunks cut into pieces of the row's batch size (the last piece padded).
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as zoo  # noqa: E402  (benchmarks/zoo/run.py: export, the bench helpers)

bench = zoo.bench
SELF = os.path.abspath(__file__)
DEFAULT_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "bert_base_4l"]
ENGINES = ["trtlite:fp32", "trtlite:bf16", "trtlite:int8", "onnxruntime:fp32", "onnxruntime:int8",
           "openvino:fp32", "openvino:bf16", "openvino:int8"]


# ==== workers (each in its own process) ============================================================

def _chunks(spec):
    """The agreement inputs: --agree samples as chunks of --agree-batch, chunk i made from seed + 1000 + i (the
    same samples for every row batch size); the last chunk holds only what is left."""
    m = zoo._zoo_models()
    n, ab = spec["agree"], max(1, spec.get("agree_batch", 50))
    for i in range((n + ab - 1) // ab):
        yield m.make_input(spec["model"], min(ab, n - i * ab), spec["seed"] + 1000 + i)


def _pieces(chunk, b):
    """A chunk cut into inputs of exactly b samples (the last one padded with zeros) and their valid counts."""
    import numpy as np
    for s in range(0, chunk.shape[0], b):
        x = chunk[s:s + b]
        n = x.shape[0]
        if n < b:
            x = np.concatenate([x, np.zeros((b - n,) + x.shape[1:], x.dtype)])
        yield x, n


def worker_qdq(spec):
    """fp32 ONNX -> QDQ ONNX with onnxruntime.quantization.quantize_static."""
    from onnxruntime import quantization as oq
    m = zoo._zoo_models()

    class Reader(oq.CalibrationDataReader):
        def __init__(self):
            self.left = [{"input": m.make_input(spec["model"], 1, spec["seed"] + 500 + i)}
                         for i in range(spec["calib"])]

        def get_next(self):
            return self.left.pop() if self.left else None
    t0 = time.perf_counter()
    oq.quantize_static(spec["onnx"], spec["qdq"], Reader(), quant_format=oq.QuantFormat.QDQ, per_channel=True,
                       activation_type=oq.QuantType.QInt8, weight_type=oq.QuantType.QInt8,
                       calibrate_method=oq.CalibrationMethod.MinMax, extra_options={"ActivationSymmetric": True})
    bench.emit({"ok": True, "quantize_s": time.perf_counter() - t0})


def worker_agree_ref(spec):
    """The fp32 model's outputs on the agreement inputs (onnxruntime, 1 thread)."""
    import numpy as np
    t0 = time.perf_counter()
    sess = zoo._zoo_export().ort_session(spec["onnx"], spec.get("threads", 1))
    outs = [sess.run(None, {"input": x})[0] for x in _chunks(spec)]
    np.save(spec["agree_ref"], np.concatenate(outs)[:spec["agree"]])
    bench.emit({"ok": True, "ref_s": time.perf_counter() - t0})


def agreement(got, ref):
    """{"kind": "top-1" | "cosine", "value": ...}: top-1 agreement of classifier logits, else mean cosine."""
    import numpy as np
    got = got.reshape(got.shape[0], -1).astype(np.float64)
    ref = ref.reshape(ref.shape[0], -1).astype(np.float64)
    if not np.isfinite(got).all():
        return {"kind": "finite", "value": 0.0}
    if ref.shape[1] <= 1000 and ref.shape[1] > 1:  # logits of a classifier
        return {"kind": "top-1", "value": float((got.argmax(1) == ref.argmax(1)).mean())}
    cos = (got * ref).sum(1) / np.maximum(np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1), 1e-30)
    return {"kind": "cosine", "value": float(cos.mean())}


def _finish(spec, t_setup, run_once, set_input, get_output, run_chunk=None):
    """Agreement over the agreement inputs (run_chunk(x) -> outputs for a whole chunk where the engine takes any
    batch size, else pieces of the row's batch through set_input / run_once / get_output), then (unless
    --check-only) the timed loop on the first piece."""
    import numpy as np
    b = spec["batch"]
    outs, first = [], None
    t0 = time.perf_counter()
    for chunk in _chunks(spec):
        if run_chunk is not None:
            outs.append(np.array(run_chunk(chunk), copy=True))
            if first is None:
                first = next(_pieces(chunk, b))[0]
            continue
        for x, n in _pieces(chunk, b):
            first = x if first is None else first
            set_input(x)
            run_once()
            outs.append(np.array(get_output(), copy=True)[:n])
    agree_s = time.perf_counter() - t0
    ref = np.load(spec["agree_ref"])
    ag = agreement(np.concatenate(outs)[:spec["agree"]], ref)
    res = {"setup_s": t_setup, "agree": ag, "agree_s": agree_s}
    res["ok"] = ag["value"] >= spec["min_agree"]
    if res["ok"] and not spec.get("check_only"):
        set_input(first)
        res.update(bench.time_loop(run_once, spec))
    res["peak_rss_kib"] = bench.peak_rss_kib()
    bench.emit(res)


def worker_trtbuild(spec):
    import trtlite as trt
    logger = trt.Logger(trt.Logger.ERROR)
    t0 = time.perf_counter()
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(open(spec["file"], "rb").read()):
        bench.emit({"ok": False, "stage": "parse",
                    "error": "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))})
        return
    config = builder.create_builder_config()
    config.num_threads = spec["threads"]
    if spec["precision"] == "bf16":
        config.set_flag(trt.BuilderFlag.BF16)
    shape = (spec["batch"],) + tuple(zoo._zoo_models().ZOO[spec["model"]].shape)
    profile = builder.create_optimization_profile()
    profile.set_shape("input", shape, shape, shape)
    config.add_optimization_profile(profile)
    try:
        plan = builder.build_serialized_network(network, config)
    except Exception as e:  # noqa: BLE001 -- reported
        bench.emit({"ok": False, "stage": "build", "error": f"{type(e).__name__}: {e}"})
        return
    with open(spec["plan"], "wb") as f:
        f.write(bytes(plan))
    engine = trt.Runtime(logger).deserialize_cuda_engine(bytes(plan))
    info = engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON)
    layers = json.loads(info)["layers"]
    prec = {}
    for layer in layers:
        prec[layer.get("precision", "?")] = prec.get(layer.get("precision", "?"), 0) + 1
    bench.emit({"ok": True, "build_s": time.perf_counter() - t0, "layer_precisions": prec})


def worker_trtlite(spec):
    import numpy as np
    import trtlite as trt
    t0 = time.perf_counter()
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(open(spec["plan"], "rb").read())
    ctx = engine.create_execution_context()
    ctx.num_threads = spec["threads"]
    shape = (spec["batch"],) + tuple(zoo._zoo_models().ZOO[spec["model"]].shape)
    ctx.set_input_shape("input", shape)
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    out_name = [n for n in names if n != "input"][0]
    x = np.zeros(shape, np.float32)
    out = np.empty(tuple(ctx.get_tensor_shape(out_name)), np.float32)
    ptrs = [x.ctypes.data if n == "input" else out.ctypes.data for n in names]
    _finish(spec, time.perf_counter() - t0, lambda: ctx.execute_v2(ptrs), lambda v: np.copyto(x, v), lambda: out)


def worker_onnxruntime(spec):
    import numpy as np
    t0 = time.perf_counter()
    sess = zoo._zoo_export().ort_session(spec["file"], spec["threads"])
    out_meta = sess.get_outputs()[0]
    x = np.zeros((spec["batch"],) + tuple(zoo._zoo_models().ZOO[spec["model"]].shape), np.float32)
    y = sess.run(None, {"input": x})[0]
    out = np.empty(y.shape, np.float32)
    binding = sess.io_binding()
    binding.bind_cpu_input("input", x)
    binding.bind_output(out_meta.name, "cpu", 0, np.float32, list(out.shape), out.ctypes.data)
    _finish(spec, time.perf_counter() - t0, lambda: sess.run_with_iobinding(binding), lambda v: np.copyto(x, v),
            lambda: out, run_chunk=lambda c: sess.run(None, {"input": c})[0])


def worker_openvino(spec):
    import numpy as np
    try:
        import openvino as ov
    except ImportError:
        bench.emit({"ok": False, "error": "not installed", "not_installed": True})
        return
    t0 = time.perf_counter()
    core = ov.Core()
    model = core.read_model(spec["file"])
    shape = (spec["batch"],) + tuple(zoo._zoo_models().ZOO[spec["model"]].shape)
    model.reshape({"input": list(shape)})
    hint = {"fp32": "f32", "bf16": "bf16", "int8": "f32"}[spec["precision"]]  # int8 comes from the QDQ file
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint,
                                                 "INFERENCE_NUM_THREADS": int(spec["threads"]),
                                                 "PERFORMANCE_HINT": "LATENCY"})
    req = compiled.create_infer_request()
    x = np.zeros(shape, np.float32)
    req.set_input_tensor(ov.Tensor(x, shared_memory=True))
    _finish(spec, time.perf_counter() - t0, req.infer, lambda v: np.copyto(x, v),
            lambda: req.get_output_tensor(0).data)


WORKERS = {"qdq": worker_qdq, "agree_ref": worker_agree_ref, "trtbuild": worker_trtbuild, "trtlite": worker_trtlite,
           "onnxruntime": worker_onnxruntime, "openvino": worker_openvino}


def run_worker(kind, spec, timeout):
    cmd = [sys.executable, SELF, "--worker", kind, "--spec", json.dumps(spec)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=bench.worker_env(spec.get("threads", 1)),
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout:.0f} s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith(bench.RESULT_TAG):
            return json.loads(line[len(bench.RESULT_TAG):])
    tail = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or ["no output"])[-1]
    return {"ok": False, "error": f"exit {p.returncode}: {tail}"[:400]}


# ==== the driver ===================================================================================

def one_row(args, model, b, t, files):
    import numpy as np
    row = {"model": model, "batch": b, "threads": t, "engines": {}, "builds": {}}
    base = dict(model=model, batch=b, threads=t, seed=args.seed, agree=args.agree, agree_batch=args.agree_batch,
                min_agree=args.min_agree, agree_ref=files["agree_ref"], warmup_runs=args.warmup_runs, warmup_s=args.warmup,
                min_runs=args.iters, min_time=args.min_time, max_time=args.max_time, check_only=args.check_only)
    specs = {}
    for eng in args.engines:
        kind, prec = eng.split(":")
        s = dict(base, precision=prec, file=files["qdq"] if prec == "int8" else files["onnx"])
        if kind == "trtlite":
            s["plan"] = os.path.join(files["work"], f"{model}.{prec}.b{b}.t{t}.plan")
            build = run_worker("trtbuild", s, args.timeout)
            row["builds"][prec] = build
            if not build.get("ok"):
                row["engines"][eng] = {"ok": False, "error": f"{build.get('stage', 'build')}: {build.get('error')}"}
                zoo.log(f"   {model} b={b} t={t} {eng}: {row['engines'][eng]['error'][:300]}")
                continue
        specs[eng] = s
    runs = {e: [] for e in specs}
    order0 = list(specs)
    for rnd in range(1 if args.check_only else args.rounds):
        order = order0[rnd % len(order0):] + order0[:rnd % len(order0)]
        for eng in order:
            if runs[eng] and (runs[eng][-1].get("not_installed") or not runs[eng][-1].get("ok")):
                continue
            t0 = time.time()
            r = run_worker(eng.split(":")[0], specs[eng], args.timeout)
            runs[eng].append(r)
            ag = r.get("agree") or {}
            zoo.log(f"   {model} b={b} t={t} round {rnd + 1} {eng}: "
                    + (f"{ag.get('kind')} {ag.get('value', 0):.3f}" if ag else str(r.get("error"))[:200])
                    + (f", median {np.median(r['lat']) * 1e3:.3g} ms" if r.get("lat") else "")
                    + f" ({time.time() - t0:.0f} s)")
    for eng, rs in runs.items():
        ok = [r for r in rs if r.get("ok")]
        if not ok:
            row["engines"][eng] = rs[-1] if rs else {"ok": False, "error": "not run"}
            continue
        e = {"ok": True, "agree": ok[0]["agree"], "peak_rss_kib": max(r["peak_rss_kib"] for r in ok)}
        lat = [x for r in ok for x in r.get("lat", [])]
        if lat:
            e["median_ms"] = float(np.median(lat) * 1e3)
            e["p90_ms"] = float(np.percentile(lat, 90) * 1e3)
            e["foreign_cpus"] = float(np.mean([r.get("foreign_cpus", 0.0) for r in ok]))
        row["engines"][eng] = e
    zoo.log(line_for(row))
    return row


def _med(row, eng):
    e = row["engines"].get(eng, {})
    return e.get("median_ms") if e.get("ok") else None


def _ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def line_for(row):
    parts = [f"{row['model']} b={row['batch']} t={row['threads']}:"]
    for eng, e in row["engines"].items():
        if e.get("ok"):
            ag = e["agree"]
            parts.append(f"{eng} {e.get('median_ms', float('nan')):.3g} ms ({ag['kind']} {ag['value']:.3f})")
        else:
            parts.append(f"{eng} FAILED ({str(e.get('error') or e.get('agree'))[:80]})")
    return "  ".join(parts)


def markdown(rows):
    engs = ENGINES
    out = ["| model | batch | threads | " + " | ".join(e.replace(":", " ") + " ms" for e in engs)
           + " | INT8 / FP32 (trtlite) | BF16 / FP32 (trtlite) | ORT int8 / trtlite int8 | OV int8 / trtlite int8 |",
           "|" + "---|" * (3 + len(engs) + 4)]
    agree = ["| model | batch | " + " | ".join(e.replace(":", " ") for e in engs) + " |",
             "|" + "---|" * (2 + len(engs))]
    for r in rows:
        cells = []
        for e in engs:
            v = r["engines"].get(e)
            cells.append(f"{v['median_ms']:.3g}" if v and v.get("ok") and v.get("median_ms") else
                         ("-" if not v else ("n/a" if v.get("not_installed") else "failed")))
        out.append(f"| {r['model']} | {r['batch']} | {r['threads']} | " + " | ".join(cells) + " | "
                   + " | ".join([_ratio(_med(r, "trtlite:fp32"), _med(r, "trtlite:int8")),
                                 _ratio(_med(r, "trtlite:fp32"), _med(r, "trtlite:bf16")),
                                 _ratio(_med(r, "onnxruntime:int8"), _med(r, "trtlite:int8")),
                                 _ratio(_med(r, "openvino:int8"), _med(r, "trtlite:int8"))]) + " |")
        ac = []
        for e in engs:
            v = r["engines"].get(e)
            ag = (v or {}).get("agree")
            ac.append(f"{ag['kind']} {ag['value']:.3f}" if ag else "-")
        agree.append(f"| {r['model']} | {r['batch']} | " + " | ".join(ac) + " |")
    return ("Latency medians; ratios are FP32 (or peer) median over INT8/BF16 median: above 1 means faster.\n\n"
            + "\n".join(out) + "\n\nAgreement with the fp32 model under onnxruntime:\n\n" + "\n".join(agree))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(DEFAULT_MODELS))
    p.add_argument("--batch", default="1,8")
    p.add_argument("--threads", default="2")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--min-time", type=float, default=1.0)
    p.add_argument("--max-time", type=float, default=30.0)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--warmup-runs", type=int, default=2)
    p.add_argument("--agree", type=int, default=1000, help="agreement inputs (default 1000; BERT: 64)")
    p.add_argument("--agree-batch", type=int, default=50,
                   help="agreement inputs a chunk (the reference's and onnxruntime's batch; default 50)")
    p.add_argument("--min-agree", type=float, default=0.5, help="below this an engine is reported, not timed")
    p.add_argument("--calib", type=int, default=16, help="calibration inputs for quantize_static")
    p.add_argument("--quick", action="store_true", help="one round, few iterations, 64 agreement inputs")
    p.add_argument("--check-only", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", default=zoo.DEFAULT_DIR)
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--out", metavar="FILE")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker:
        return a
    a.models = [m for m in a.models.split(",") if m]
    a.batch = [int(x) for x in a.batch.split(",")]
    a.threads = [int(x) for x in a.threads.split(",")]
    a.engines = [e for e in a.engines.split(",") if e]
    bad = [e for e in a.engines if e not in ENGINES]
    if bad:
        p.error(f"unknown engines {bad}; known: {ENGINES}")
    if a.quick:
        a.rounds, a.iters, a.min_time, a.max_time, a.warmup, a.warmup_runs = 1, 5, 0.2, 5.0, 0.1, 1
        a.agree = min(a.agree, 64)
    return a


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        WORKERS[args.worker](json.loads(args.spec))
        return 0
    started = time.time()
    zoo.log(f"precision rows: {args.models}, batch {args.batch}, threads {args.threads}, "
            f"load average {os.getloadavg()[0]:.2f}")
    metas = zoo.export_all(argparse.Namespace(dir=args.dir, seed=args.seed, models=args.models))
    work = os.path.join(args.dir, "precision")
    os.makedirs(work, exist_ok=True)
    rows, failed = [], False
    for model in args.models:
        if "error" in metas[model]:
            failed = True
            continue
        onnx_path = os.path.join(args.dir, model + ".onnx")
        files = {"onnx": onnx_path, "qdq": os.path.join(work, f"{model}.qdq.onnx"), "work": work}
        if not os.path.exists(files["qdq"]) or os.path.getmtime(files["qdq"]) < os.path.getmtime(onnx_path):
            q = run_worker("qdq", dict(model=model, onnx=onnx_path, qdq=files["qdq"], seed=args.seed,
                                       calib=args.calib), args.timeout)
            if not q.get("ok"):
                zoo.log(f"   {model}: quantize_static FAILED: {q.get('error')}")
                failed = True
                continue
            zoo.log(f"   {model}: quantized in {q['quantize_s']:.1f} s")
        agree_n = args.agree if not model.startswith("bert") else min(args.agree, 64)
        agree_b = args.agree_batch if not model.startswith("bert") else min(args.agree_batch, 8)
        # one reference per model: the agreement inputs do not depend on the row's batch size
        files["agree_ref"] = os.path.join(work, f"{model}.agree_ref.npy")
        r = run_worker("agree_ref", dict(model=model, onnx=onnx_path, seed=args.seed, agree=agree_n,
                                         agree_batch=agree_b, threads=max(args.threads),
                                         agree_ref=files["agree_ref"]), args.timeout)
        if not r.get("ok"):
            zoo.log(f"   {model}: reference FAILED: {r.get('error')}")
            failed = True
            continue
        zoo.log(f"   {model}: reference outputs of {agree_n} inputs in {r.get('ref_s', 0):.1f} s")
        for b in args.batch:
            for t in args.threads:
                a = argparse.Namespace(**vars(args))
                a.agree = agree_n
                a.agree_batch = agree_b
                row = one_row(a, model, b, t, files)
                failed |= not all(e.get("ok") or e.get("not_installed") for e in row["engines"].values())
                rows.append(row)
    d = {"rows": rows, "args": {k: v for k, v in vars(args).items() if k not in ("worker", "spec")},
         "machine": bench.machine_info(), "elapsed_s": time.time() - started,
         "load_end": os.getloadavg()[0]}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(d, f, indent=1)
    if args.markdown:
        print(markdown(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
