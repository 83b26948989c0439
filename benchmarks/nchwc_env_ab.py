"""A/B of a build-time environment setting of the `nchwc` pass in one process, for loaded machines.

    python benchmarks/nchwc_env_ab.py --models yolo [--dir /path/zoo] [--runs 10] [--batch 1] [--threads 1]
        --env TRTLITE_NCHWC_DENSE=s2 [--env-b NAME=VALUE]

Builds each zoo model twice from one timing cache: A with the environment variable(s) of --env set during the build
(read by builder passes, e.g. passes/nchwc.c), B with those of --env-b (default: the --env names unset).  Both are
checked against onnxruntime, then run alternating ABBA: end to end (calling-thread CPU time, minimum and median),
then per layer under the profiler with TRTL_PROFILE_CLOCK=thread (each layer's minimum), summed by layer class
(conv KxK sS) with the kernels, and the layers whose time differs most.  Not part of CI.
"""
from __future__ import annotations

import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "zoo"))
import layers_vs_ort as lv  # noqa: E402  (build_plan, Engine, end_to_end; zoo/run.py's bench)


def with_env(pairs, fn):
    old = {k: os.environ.get(k) for k, _ in pairs}
    try:
        for k, v in pairs:
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        return fn()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def parse(s):
    return [(p.split("=", 1)[0], p.split("=", 1)[1]) for p in s.split(",") if p]


def klass(e, name):
    lay = e.layers.get(name, {})
    desc = lv.bench.node_of(name, e.nodes) or {}
    d = desc.get("desc", "")
    m = re.match(r"conv (\d+x\d+)/s(\d+)", d)
    return f"conv {m.group(1)} s{m.group(2)}" if m else (lay.get("type") or "?")


def one_model(model, args):
    import trtlite as trt
    path, shape, x, ref = lv.ab_inputs(args.dir, model, args.batch)
    env_a = parse(args.env)
    env_b = parse(args.env_b) if args.env_b else [(k, None) for k, _ in env_a]
    plan_b, cache = with_env(env_b, lambda: lv.build_plan(trt, path, shape, args.threads))
    plan_a, _ = with_env(env_a, lambda: lv.build_plan(trt, path, shape, args.threads, cache))
    nodes = lv.bench.onnx_node_info(path)
    engines, e2e = lv.ab_engines(trt, model, {"A": plan_a, "B": plan_b}, shape, x, ref, args.threads, args.runs,
                                 nodes=nodes)
    print(f"== {model} batch {args.batch} threads {args.threads}, {args.runs} runs ABBA; A: {args.env}  B: "
          f"{args.env_b or 'unset'}; load {os.getloadavg()[0]:.1f}")
    for name, (wall, cpu) in e2e.items():
        print(f"   {name} end to end: thread CPU min {min(cpu):8.3f} median {statistics.median(cpu):8.3f} ms; "
              f"sum of layers (thread CPU minima) {sum(engines[name].times.values()):8.3f} ms")
    classes = {}
    for name, e in engines.items():
        for lname, ms in e.times.items():
            c = classes.setdefault(klass(e, lname), {"A": [0.0, 0, set()], "B": [0.0, 0, set()]})[name]
            c[0] += ms
            c[1] += 1
            c[2].add(e.layers.get(lname, {}).get("kernel", "?"))
    for k, v in sorted(classes.items(), key=lambda kv: -kv[1]["B"][0]):
        print(f"   {k:16s} A {v['A'][0]:8.3f} ms x{v['A'][1]:<3d} B {v['B'][0]:8.3f} ms x{v['B'][1]:<3d}  "
              f"A {'/'.join(sorted(v['A'][2]))}  B {'/'.join(sorted(v['B'][2]))}")
    a, b = engines["A"].times, engines["B"].times
    common = sorted(set(a) & set(b), key=lambda n: a[n] - b[n])
    for n in common[:args.layers] + common[-args.layers:]:
        print(f"   {a[n]:7.3f} vs {b[n]:7.3f} ms  {engines['A'].layers.get(n, {}).get('kernel', '?'):20s} "
              f"{engines['B'].layers.get(n, {}).get('kernel', '?'):28s} {(lv.bench.node_of(n, nodes) or {}).get('desc', '')[:34]:34s} {n[:50]}")


def main(argv=None):
    ap = lv.ab_parser(__doc__, runs=10, batch=1)
    ap.add_argument("--env", required=True, help="NAME=VALUE[,NAME=VALUE]: engine A's build environment")
    ap.add_argument("--env-b", default="", help="engine B's (default: --env's names unset)")
    ap.add_argument("--layers", type=int, default=8, help="layers furthest apart each way")
    args = ap.parse_args(argv)
    for m in args.models.split(","):
        one_model(m, args)


if __name__ == "__main__":
    main()
