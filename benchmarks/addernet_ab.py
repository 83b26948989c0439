#!/usr/bin/env python3
"""AdderNet (examples/precision_mnist.py's network and checkpoint) FP32 vs INT8, one thread, thread CPU time.

Builds the FP32 engine and INT8 engines (calibrated as precision_mnist does) with and without the builder passes
named in --off-variants, then times one inference per engine at batch 64 and batch 1 with time.thread_time(),
engines alternating in one process (A/B interleaved, so machine load hits all alike), minimum and median of
--reps rounds; and per-layer profiler times (minimum over rounds).  Accuracy on --limit test images per engine.

    python benchmarks/addernet_ab.py --reps 25 --off fuse_adder_int8
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import precision_mnist as pm  # noqa: E402
import fashion_mnist  # noqa: E402

trt = pm.trt


class MinProfiler(trt.IProfiler):
    """Keeps each step's minimum time over the runs it saw."""

    def __init__(self):
        super().__init__()
        self.best = {}

    def report_layer_time(self, layer_name, ms):
        """Record the step's time (minimum kept)."""
        self.best[layer_name] = min(ms, self.best.get(layer_name, 1e30))


def build(precision, weights, calib, off):
    """(engine, infer) for AdderNet at `precision` with builder passes `off` disabled (env switch)."""
    old = os.environ.get("TRTLITE_DISABLE_PASSES")
    if off:
        os.environ["TRTLITE_DISABLE_PASSES"] = off
    else:
        os.environ.pop("TRTLITE_DISABLE_PASSES", None)
    try:
        engine, _ = pm.build_addernet(weights, precision, calib)
    finally:
        if old is None:
            os.environ.pop("TRTLITE_DISABLE_PASSES", None)
        else:
            os.environ["TRTLITE_DISABLE_PASSES"] = old
    runner = pm.adder_demo.AdderNetEngine(engine)
    runner.context.num_threads = 1
    return engine, runner


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=25)
    p.add_argument("--limit", type=int, default=1000)
    p.add_argument("--calib", type=int, default=512)
    p.add_argument("--off", default="", help="comma-separated passes: an extra INT8 engine built with them off")
    p.add_argument("--layers", action="store_true", help="per-layer profile (minimum over rounds)")
    a = p.parse_args()
    weights = pm.common.load_example("addernet").load_weights(pm.adder_demo.addernet.CHECKPOINT)
    x_test, y_test = fashion_mnist.load("test", limit=a.limit)
    x_train, _ = fashion_mnist.load("train", limit=a.calib)
    variants = [("FP32", "FP32", ""), ("INT8", "INT8", "")]
    if a.off:
        variants.append(("INT8-off", "INT8", a.off))
    eng = {}
    for name, prec, off in variants:
        engine, runner = build(prec, weights, x_train, off)
        pred = np.concatenate([runner.infer(x_test[i:i + 64]) for i in range(0, len(x_test), 64)])
        acc = float((pred.argmax(1) == y_test).mean())
        eng[name] = (engine, runner, acc)
        print("%-9s accuracy %.2f%%" % (name, 100 * acc))
    for batch in (64, 1):
        xb = np.ascontiguousarray(np.resize(x_test, (batch,) + x_test.shape[1:]))
        bufs = {}
        for name, (engine, runner, _) in eng.items():
            x, out, bindings = runner.buffers(batch)
            x[...] = xb
            bufs[name] = (runner.context, bindings, x, out)  # arrays kept alive: bindings are their addresses
            for _ in range(3):
                runner.context.execute(batch_size=batch, bindings=bindings)
        times = {n: [] for n in eng}
        reps = a.reps if batch == 64 else a.reps * 8
        for _ in range(reps):
            for name, (ctx, bindings, _x, _o) in bufs.items():
                t0 = time.thread_time()
                ctx.execute(batch_size=batch, bindings=bindings)
                times[name].append(time.thread_time() - t0)
        print("batch %d (one thread, thread CPU time of execute, %d rounds, load %.1f):" % (batch, reps,
                                                                                           os.getloadavg()[0]))
        base = min(times["FP32"])
        for name, t in times.items():
            print("  %-9s min %7.3f ms  median %7.3f ms   FP32/this %.2fx (min)  %.2fx (median)"
                  % (name, 1e3 * min(t), 1e3 * float(np.median(t)), base / min(t),
                     float(np.median(times["FP32"])) / float(np.median(t))))
        if a.layers:
            for name, (ctx, bindings, _x, _o) in bufs.items():
                prof = MinProfiler()
                ctx.profiler = prof
                for _ in range(max(5, reps // 2)):
                    ctx.execute(batch_size=batch, bindings=bindings)
                ctx.profiler = None
                print("  %s per step (profiler minimum, ms): " % name
                      + ", ".join("%s %.3f" % (k, v) for k, v in prof.best.items()))


if __name__ == "__main__":
    main()
