"""A/B of blocked dilated depthwise convolutions (nchwc_conv.avx2, session 19) in one process, for loaded machines.

    python benchmarks/nchwc_dilated_ab.py --models lraspp_mobilenet_v3,deeplabv3_mobilenet_v3 [--dir /path/zoo]
        [--runs 10] [--batch 8] [--threads 1]

Builds each zoo model twice from one timing cache: A as the builder makes it (the `nchwc` pass takes the dilated
depthwise convolutions, so MobileNetV3's dilated last stage stays blocked), B with every dilated convolution's
precision set to FLOAT (a layer with a precision constraint is no `nchwc` candidate: it stays NCHW as before session
19, its neighbours reorder at the region's edges and its squeeze-and-excitation keeps the pool and the multiply).
Both are checked against onnxruntime, then run alternating ABBA: end to end (calling-thread CPU time, minimum and
median), then per layer under the profiler with TRTL_PROFILE_CLOCK=thread (each layer's minimum): the sum of all
layers and of the layers of the blocks holding a dilated convolution (names under the same block prefix).  Not
part of CI.
"""
from __future__ import annotations

import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "zoo"))
import layers_vs_ort as lv  # noqa: E402  (build_plan, Engine, end_to_end; zoo/run.py's bench)


def dilated_plain(trt, prefixes):
    """The network edit of engine B: dilated convolutions get a precision constraint (FLOAT); their block prefixes
    (the name up to '/block/') are added to `prefixes`."""
    def edit(network):
        for i in range(network.num_layers):
            layer = network.get_layer(i)
            if layer.type == trt.LayerType.CONVOLUTION and max(tuple(layer.dilation_nd)) > 1:
                layer.precision = trt.float32
                prefixes.add(layer.name.split("/block/")[0] + "/")
    return edit


def one_model(model, args):
    import trtlite as trt
    path, shape, x, ref = lv.ab_inputs(args.dir, model, args.batch)
    prefixes = set()
    plan_a, cache = lv.build_plan(trt, path, shape, args.threads)
    plan_b, _ = lv.build_plan(trt, path, shape, args.threads, cache, edit=dilated_plain(trt, prefixes))
    engines, e2e = lv.ab_engines(trt, model, {"blocked": plan_a, "NCHW": plan_b}, shape, x, ref, args.threads,
                                 args.runs)
    print(f"== {model} batch {args.batch} threads {args.threads}, {args.runs} runs ABBA, load "
          f"{os.getloadavg()[0]:.1f}; dilated blocks {sorted(prefixes)}")
    for name, (wall, cpu) in e2e.items():
        e = engines[name]
        blk = {k: v for k, v in e.times.items() if any(p in k for p in prefixes)}
        print(f"   {name:8s} end to end: thread CPU min {min(cpu):8.3f} median {statistics.median(cpu):8.3f} ms; "
              f"wall min {min(wall):8.3f} ms; sum of layers {sum(e.times.values()):8.3f} ms "
              f"({len(e.times)}), dilated blocks' layers {sum(blk.values()):7.3f} ms ({len(blk)})")
    if args.layers:
        for name, e in engines.items():
            for lname, t in e.times.items():
                if any(p in lname for p in prefixes):
                    lay = e.layers.get(lname, {})
                    print(f"   {name:8s} {t:7.3f} ms  {lay.get('kernel', '?'):28s} {lname[:90]}")


def main(argv=None):
    ap = lv.ab_parser(__doc__, runs=10, batch=8)
    ap.add_argument("--layers", action="store_true", help="list the dilated blocks' layers")
    args = ap.parse_args(argv)
    for m in args.models.split(","):
        one_model(m, args)


if __name__ == "__main__":
    main()
