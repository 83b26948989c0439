"""How reproducible is kernel selection?  Builds one ONNX model several times (cold: a fresh, empty timing cache per
build), reads each build's verbose log (every candidate's timing, the kernel kept) and reports:

  * layers whose kept kernel differs between builds (of the layers with two or more timed candidates);
  * the cost of each build's choices: per layer, the kept kernel's time over the best candidate's, both taken as the
    minimum over *all* builds of that candidate's logged time (the best estimate of its cost this run has);
    "misses" are layers more than 3% / 20% over the best, "lost" is the sum over layers of (kept - best) in ms;
  * each build's wall and CPU time (process CPU time: both threads of a 2-thread build) and selection time.

usage: python benchmarks/tune_stability.py MODEL.onnx [--builds 4] [--threads 2] [--batch 1] [--warm] [--json F]

The machine may be loaded (other processes): say so with the numbers.  Used for issue #10's build-time and
reproducibility item (session 11)."""
import argparse
import collections
import json
import re
import time

import numpy as np

import trtlite as trt

CAND = re.compile(r"layer '(.+)': kernel (\S+) (-?[0-9.]+) ms")
USING = re.compile(r"layer '(.+)': using kernel (\S+)")
SUMMARY = re.compile(r"kernel selection: .*")


class Capture(trt.ILogger):
    """Keeps every message of a build."""

    def __init__(self):
        trt.ILogger.__init__(self)
        self.msgs = []

    def log(self, severity, msg):
        """Stores the message."""
        self.msgs.append(msg)


def build_once(path, threads, batch, cache=None):
    """Parses and builds `path` once with `cache` (None: a new, empty timing cache); returns (timings, kept, wall_s,
    cpu_s, summary, cache)."""
    log = Capture()
    builder = trt.Builder(log)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, log)
    with open(path, "rb") as f:
        assert parser.parse(f.read()), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    config = builder.create_builder_config()
    config.num_threads = threads
    cache = cache or config.create_timing_cache(b"")
    config.set_timing_cache(cache, False)
    inp = network.get_input(0)
    shape = (batch,) + tuple(inp.shape)[1:]
    profile = builder.create_optimization_profile()
    profile.set_shape(inp.name, shape, shape, shape)
    config.add_optimization_profile(profile)
    del log.msgs[:]
    w0, c0 = time.perf_counter(), time.process_time()
    plan = builder.build_serialized_network(network, config)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    assert plan is not None
    timings = collections.defaultdict(dict)
    kept = {}
    summary = ""
    for m in log.msgs:
        g = CAND.search(m)
        if g:
            timings[g.group(1)][g.group(2)] = float(g.group(3))
            continue
        g = USING.search(m)
        if g:
            kept[g.group(1)] = g.group(2)
        elif SUMMARY.search(m):
            summary = m
    return timings, kept, wall, cpu, summary, cache


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--builds", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--warm", action="store_true", help="then build once more with the last build's timing cache")
    ap.add_argument("--json", help="also write every build's timings and kept kernels to this JSON file")
    a = ap.parse_args()
    runs = [build_once(a.model, a.threads, a.batch) for _ in range(a.builds)]
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"timings": r[0], "kept": r[1], "wall_s": r[2], "cpu_s": r[3]} for r in runs], f)
    if a.warm:
        _, kept, wall, cpu, summary, _ = build_once(a.model, a.threads, a.batch, runs[-1][5])
        same = sum(kept.get(n) == runs[-1][1].get(n) for n in kept)
        print(f"warm build (the last cold build's cache): wall {wall:.2f} s, cpu {cpu:.2f} s; kept the same kernel on "
              f"{same} of {len(kept)} layers\n    {summary}")
    layers = [name for name, t in runs[0][0].items() if len(t) > 1]
    best_of = {}
    for name in layers:
        est = {}
        for timings, *_ in runs:
            for k, ms in timings.get(name, {}).items():
                if ms >= 0:
                    est[k] = min(est.get(k, ms), ms)
        best_of[name] = est
    differ = [n for n in layers if len({r[1].get(n) for r in runs}) > 1]
    print(f"{a.model}: {a.builds} cold builds, {a.threads} threads, batch {a.batch}; "
          f"{len(layers)} layers with 2+ timed candidates; choices differ between builds on {len(differ)}")
    for i, (timings, kept, wall, cpu, summary, _) in enumerate(runs):
        over = []
        lost = 0.0
        for n in layers:
            est = best_of[n]
            if kept.get(n) not in est:
                continue
            best = min(est.values())
            over.append(est[kept[n]] / best - 1.0)
            lost += est[kept[n]] - best
        over = np.array(over)
        print(f"  build {i}: wall {wall:.2f} s, cpu {cpu:.2f} s; misses >3%: {int((over > 0.03).sum())}, "
              f">20%: {int((over > 0.20).sum())}, worst {100 * over.max():.0f}%, lost {lost:.3f} ms "
              f"of {sum(min(best_of[n].values()) for n in layers):.3f}")
        print("    " + summary)
    for n in differ[:40]:
        est = best_of[n]
        best = min(est.values())
        picks = ", ".join(f"{r[1].get(n)}(+{100 * (est.get(r[1].get(n), best) / best - 1):.0f}%)" for r in runs)
        print(f"    {n}: {picks}")


if __name__ == "__main__":
    main()
