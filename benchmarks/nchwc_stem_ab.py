"""A/B of the blocked stem (nchwc_conv.avx2's dense path, x86/nchwc_dense.c) in one process, for loaded machines.

    python benchmarks/nchwc_stem_ab.py --models mnasnet1_0,mobilenet_v2 [--dir /path/zoo] [--runs 20] [--batch 1]
        [--threads 1]

Builds each zoo model twice from one timing cache: A as the builder makes it (the `nchwc` pass writes the stem's
output blocked where its reader is a blocked convolution), B with the first convolution's precision set to FLOAT
(a layer with a precision constraint is no `nchwc` candidate: the stem stays NCHW on convolution.stem and the first
depthwise blocks its plain input itself, as before the dense path).  Both are checked against onnxruntime, then
run alternating ABBA: end to end (calling-thread CPU time and wall, minimum and median), then per layer under the
profiler with TRTL_PROFILE_CLOCK=thread (each layer's minimum): the first layers (stem, first depthwise) and the sum
of all layers.  Not part of CI.
"""
from __future__ import annotations

import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "zoo"))
import layers_vs_ort as lv  # noqa: E402  (build_plan, Engine, end_to_end; zoo/run.py's bench)


def stem_plain(trt):
    """The network edit of engine B: the first convolution gets a precision constraint (FLOAT)."""
    def edit(network):
        for i in range(network.num_layers):
            layer = network.get_layer(i)
            if layer.type == trt.LayerType.CONVOLUTION:
                layer.precision = trt.float32
                return
    return edit


def one_model(model, args):
    """Prints model's A/B."""
    import trtlite as trt
    path, shape, x, ref = lv.ab_inputs(args.dir, model, args.batch)
    plan_a, cache = lv.build_plan(trt, path, shape, args.threads)
    plan_b, _ = lv.build_plan(trt, path, shape, args.threads, cache, edit=stem_plain(trt))
    engines, e2e = lv.ab_engines(trt, model, {"blocked stem": plan_a, "NCHW stem": plan_b}, shape, x, ref,
                                 args.threads, args.runs)
    print(f"== {model} batch {args.batch} threads {args.threads}, {args.runs} runs ABBA")
    for name, (wall, cpu) in e2e.items():
        print(f"   {name:13s} end to end: thread CPU min {min(cpu):7.3f} median {statistics.median(cpu):7.3f} ms; "
              f"wall min {min(wall):7.3f} median {statistics.median(wall):7.3f} ms; "
              f"sum of layers (thread CPU minima) {sum(engines[name].times.values()):7.3f} ms")
    for name, e in engines.items():
        for lname in list(e.times)[:3]:
            lay = e.layers.get(lname, {})
            print(f"   {name:13s} {e.times[lname]:7.3f} ms  {lay.get('type', '?'):12s} {lay.get('kernel', '?'):30s} "
                  f"{lname[:70]}")


def main(argv=None):
    ap = lv.ab_parser(__doc__, runs=20, batch=1)
    args = ap.parse_args(argv)
    for m in args.models.split(","):
        one_model(m, args)


if __name__ == "__main__":
    main()
