"""INT8 vs FP32 of trtlite and onnxruntime on the same files, one process, alternating runs (for loaded machines).

    python benchmarks/zoo/int8_ab.py --models mobilenet_v2,resnet18 --dir /tmp/zoo [--threads 1] [--runs 60]
        [--batch 1] [--without-pass int8_float_regions] [--cache-dir DIR] [--json FILE]

Needs `<dir>/<model>.onnx` and the QDQ file `<dir>/precision/<model>.qdq.onnx` that benchmarks/zoo/precision.py
makes (quantize_static, per-channel int8 weights, symmetric int8 activations).  Engines, built in this
process (batch 1, or --batch): trtlite fp32 (the fp32 file), trtlite int8 (the QDQ file), optionally trtlite int8 with a builder pass off
(from the int8 build's timing cache, so the same kernel choices; a comma list switches all of them off), onnxruntime fp32 and int8 (same files, CPU EP).
`--runs` runs of each, alternating ABBA (layers_vs_ort.end_to_end): minimum and median wall ms and, at one thread,
the minimum / median CPU time of the calling thread (every engine runs on it at one thread), which a loaded machine
inflates far less than wall time.  Outputs: trtlite int8 vs onnxruntime int8 and vs the fp32 model (max abs
difference, top-1 agreement on the one input).  `--cache-dir DIR` reads each build's timing cache from DIR where
it is there and writes it back with what the build timed besides: runs of two builds of trtlite (an A/B across commits) then make the same kernel
choices, which timing alone on a loaded machine does not.  Not part of CI.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # the repository: trtlite in place
from layers_vs_ort import Engine, build_plan, end_to_end  # noqa: E402


def _ort(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if threads > 1:  # as layers_vs_ort: its spinning pool threads would take trtlite's cores
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def one_model(model, threads, args):
    import numpy as np
    import trtlite as trt
    fp32_path = os.path.join(args.dir, model + ".onnx")
    qdq_path = os.path.join(args.dir, "precision", model + ".qdq.onnx")
    s32, s8 = _ort(fp32_path, threads), _ort(qdq_path, threads)
    shape = tuple(d if isinstance(d, int) else 1 for d in s32.get_inputs()[0].shape)
    shape = (args.batch,) + shape[1:]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    def cached_build(path, kind):
        cf = os.path.join(args.cache_dir, f"{model}_b{args.batch}_t{threads}_{kind}.cache") if args.cache_dir else ""
        cache = open(cf, "rb").read() if cf and os.path.exists(cf) else b""
        plan, new = build_plan(trt, path, shape, threads, cache)
        if cf and new != cache:  # what this build timed besides: the next run times nothing
            with open(cf, "wb") as f:
                f.write(new)
        return plan, new

    plan32, _ = cached_build(fp32_path, "fp32")
    plan8, cache8 = cached_build(qdq_path, "int8")
    eng = {"trtlite fp32": Engine(trt, plan32, shape, x, threads), "trtlite int8": Engine(trt, plan8, shape, x, threads)}
    if args.without_pass:
        plan_b, _ = build_plan(trt, qdq_path, shape, threads, cache8, off=tuple(args.without_pass.split(",")))
        eng["trtlite int8 without " + args.without_pass] = Engine(trt, plan_b, shape, x, threads)
    ref32 = s32.run(None, {"input": x})[0]
    ref8 = s8.run(None, {"input": x})[0]
    check = {}
    for k, e in eng.items():
        e.run()
        y = e.arrays[e.out_name]
        check[k] = {"max_abs_vs_ort_int8": float(np.abs(y - ref8).max()),
                    "max_abs_vs_fp32": float(np.abs(y - ref32).max()),
                    "top1_eq_fp32": bool((y.reshape(y.shape[0], -1).argmax(1) ==
                                          ref32.reshape(ref32.shape[0], -1).argmax(1)).all())}
    kinds = {k: sum(lay.get("precision") == "INT8" for lay in e.layers.values()) for k, e in eng.items()}
    fns = {k: e.run for k, e in eng.items()}
    fns["onnxruntime fp32"] = lambda: s32.run(None, {"input": x})
    fns["onnxruntime int8"] = lambda: s8.run(None, {"input": x})
    for _ in range(3):
        for f in fns.values():
            f()
    e2e = end_to_end(args.runs, fns)
    return e2e, check, kinds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="mobilenet_v2,resnet18")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--threads", default="1")
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--without-pass", default="")
    ap.add_argument("--cache-dir", default="")
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    import numpy as np
    out = {}
    print("load average %.2f %.2f %.2f" % os.getloadavg())
    for model in args.models.split(","):
        for t in [int(v) for v in args.threads.split(",")]:
            e2e, check, kinds = one_model(model, t, args)
            rows = {}
            for k, (wall, cpu) in e2e.items():
                rows[k] = {"wall_min": min(wall), "wall_med": float(np.median(wall)),
                           "cpu_min": min(cpu), "cpu_med": float(np.median(cpu))}
            key = "cpu_min" if t == 1 else "wall_min"
            print(f"{model} b{args.batch} t{t} ({key.replace('_', ' ')} ms of {args.runs} alternating runs; "
                  f"load {os.getloadavg()[0]:.1f}):")
            for k, r in rows.items():
                print(f"  {k:40s} {r[key]:8.2f}  (median {r[key.replace('min', 'med')]:8.2f})"
                      + (f"  INT8 steps {kinds[k]}" if k in kinds else ""))
            f32, i8 = rows["trtlite fp32"][key], rows["trtlite int8"][key]
            print(f"  trtlite INT8/FP32 speed-up {f32 / i8:.2f}x; vs onnxruntime int8 "
                  f"{rows['onnxruntime int8'][key] / i8:.2f}x; onnxruntime int8/fp32 "
                  f"{rows['onnxruntime fp32'][key] / rows['onnxruntime int8'][key]:.2f}x")
            for k, c in check.items():
                print(f"  {k}: {c}")
            out[f"{model}_t{t}"] = {"rows": rows, "check": check}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
