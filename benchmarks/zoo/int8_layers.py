"""Per-layer INT8 vs FP32 of trtlite's own engines on one zoo model, one process, runs interleaved (loaded machines).

    python benchmarks/zoo/int8_layers.py --model mobilenet_v2 --dir /work/zoo-s19 [--batch 1] [--runs 30]
        [--cache-dir DIR] [--json FILE]

Builds (one thread) the fp32 file `<dir>/<model>.onnx` and the QDQ file `<dir>/precision/<model>.qdq.onnx`, runs
the two engines alternately with a profiler on the calling thread's CPU clock (TRTL_PROFILE_CLOCK=thread) and keeps
per-layer minima.  An int8 layer is matched to the fp32 layer of its first fused name; the sums are printed by
class (MobileNetV2's torchvision names: stem, depthwise, pointwise, the int8 input quantization step, the rest).
`--cache-dir` as int8_ab.py's (the same timing caches give two builds of trtlite the same kernel choices: run this
script from each tree for an A/B).  Not part of CI.
"""
import argparse
import json
import os
import sys

os.environ["TRTL_PROFILE_CLOCK"] = "thread"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # the repository: trtlite in place
from layers_vs_ort import Engine, build_plan  # noqa: E402


def kind(name):
    if "input quantization" in name:
        return "input quantization"
    if "features.0/" in name:
        return "stem"
    if "features.18/" in name:
        return "pointwise"
    if "features.1/" in name:
        return "depthwise" if "conv.0" in name else "pointwise"
    if "conv.1/" in name:
        return "depthwise"
    if "conv.0/" in name or "conv.2/" in name:
        return "pointwise"
    return "other"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="mobilenet_v2")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--cache-dir", default="")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    import numpy as np
    import trtlite as trt
    shape = (args.batch, 3, 224, 224)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    eng = {}
    for k, path in (("fp32", os.path.join(args.dir, args.model + ".onnx")),
                    ("int8", os.path.join(args.dir, "precision", args.model + ".qdq.onnx"))):
        cf = os.path.join(args.cache_dir, f"{args.model}_b{args.batch}_t1_{k}.cache") if args.cache_dir else ""
        cache = open(cf, "rb").read() if cf and os.path.exists(cf) else b""
        plan, new = build_plan(trt, path, shape, 1, cache)
        if cf and new != cache:
            with open(cf, "wb") as f:
                f.write(new)
        eng[k] = Engine(trt, plan, shape, x, 1)
    for e in eng.values():
        e.run()
        e.attach_profiler()
    order = list(eng.values())
    for i in range(args.runs):
        for e in (order if i % 2 == 0 else order[::-1]):
            e.run()
    rows = {k: [(n, e.times.get(n, 0.0), lay.get("TacticName", "")) for n, lay in e.layers.items()]
            for k, e in eng.items()}
    by = {k: {} for k in rows}
    for k, r in rows.items():
        for n, t, _ in r:
            key = n.split(" + ")[0] + (" [input quantization]" if "input quantization" in n else "")
            by[k][key] = by[k].get(key, 0.0) + t
    sums = {}
    for key, t8 in by["int8"].items():
        s = sums.setdefault(kind(key), [0.0, 0.0])
        s[0] += t8
        s[1] += by["fp32"].get(key, 0.0)
    print(f"{args.model} b{args.batch} t1, per-layer thread-CPU minima of {args.runs} interleaved runs, "
          f"load {os.getloadavg()[0]:.1f}")
    print("| class | int8 ms | fp32 ms | int8 / fp32 |\n|---|---|---|---|")
    for k, (a, b) in sorted(sums.items()):
        print(f"| {k} | {a:.3f} | {b:.3f} | {a / b:.2f}x |" if b else f"| {k} | {a:.3f} | {b:.3f} | - |")
    print(f"| sum | {sum(by['int8'].values()):.3f} | {sum(by['fp32'].values()):.3f} | |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f)


if __name__ == "__main__":
    main()
