"""Back-to-back inferences of small zoo models: trtlite vs onnxruntime, one engine per process, rounds alternating.

    python benchmarks/small_loop.py --models lenet --batch 8 --threads 2 [--dir DIR] [--plans DIR] [--rounds 4]
        [--seconds 2] [--engines trtlite,onnxruntime,openvino] [--lib A=/path/to/worktree,...]

Each round starts one process per engine in turn (the order reversed every other round: ABBA), each process times
back-to-back inferences for `--seconds` after a warm-up, as benchmarks/zoo/run.py does (trtlite: execute_v2 on
preallocated buffers; onnxruntime: run on its default session with spinning threads; openvino: infer() with the
latency hint; as the zoo runs them), and
reports the median and minimum wall ms of one inference, the process's CPU seconds per inference (how much the
pool's spinning costs) and how many CPUs other processes kept busy meanwhile (/proc/stat); the rounds where that was
below `--quiet` are summarized apart.  `--hog` runs a busy loop beside each timed process: the regime of a
loaded machine, reproducibly (a 2-thread run on a 2-CPU machine takes the one-thread time as soon as
another process holds a CPU).  `--lib NAME=PATH[@VAR=VALUE]` adds a trtlite engine imported from another tree (PATH on sys.path),
optionally with an environment variable set (e.g. `own=$PWD@TRTL_POOL_YIELD=0`): the A/B of a runtime change on
the same plan file.  Small networks only: the point is the fixed per-inference and
per-step costs (thread wake-ups, barriers), which per-layer profiles do not show.  Not part of CI.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_DIR = os.path.join(ROOT, "build", "zoo")  # benchmarks/zoo/run.py's (exported models there)


def build_plan(onnx_path, shape, threads, plan_path):
    """Builds (or reuses) the plan of the model at one static input shape (zoo/layers_vs_ort.py's build)."""
    if os.path.exists(plan_path):
        return
    sys.path.insert(0, os.path.join(HERE, "zoo"))
    sys.path.insert(0, ROOT)
    import layers_vs_ort
    import trtlite as trt
    plan, _ = layers_vs_ort.build_plan(trt, onnx_path, tuple(shape), threads)
    with open(plan_path, "wb") as f:
        f.write(plan)


def worker(spec):
    """One engine's timed loop; prints one JSON line."""
    import time
    import numpy as np
    x = np.random.default_rng(0).random(spec["shape"], dtype=np.float32)
    if spec["engine"] == "onnxruntime":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = spec["threads"]
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(spec["onnx"], so, providers=["CPUExecutionProvider"])
        feed = {"input": x}

        def run_once():
            sess.run(None, feed)
    elif spec["engine"] == "openvino":
        import openvino as ov
        sys.path.insert(0, os.path.join(HERE, "zoo"))
        import run as zoo_run
        _, req = zoo_run.openvino_request(ov, spec["onnx"], x, spec["threads"])

        def run_once():
            req.infer()
    else:
        lib, _, env = spec["lib"].partition("@")
        if env:
            k, _, v = env.partition("=")
            os.environ[k] = v
        sys.path.insert(0, lib)
        import trtlite as trt
        engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(open(spec["plan"], "rb").read())
        context = engine.create_execution_context()
        context.num_threads = spec["threads"]
        context.set_input_shape("input", tuple(spec["shape"]))
        names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
        arrays = {n: (x if n == "input" else np.empty(tuple(context.get_tensor_shape(n)), np.float32))
                  for n in names}
        ptrs = [arrays[n].ctypes.data for n in names]

        def run_once():
            context.execute_v2(ptrs)
    pc = time.perf_counter
    t0 = pc()
    while pc() - t0 < 0.3:
        run_once()
    lat = []
    busy0, c0, start = busy_s(), time.process_time(), pc()
    while pc() - start < spec["seconds"]:
        a = pc()
        run_once()
        lat.append(pc() - a)
    cpu, wall = time.process_time() - c0, pc() - start
    foreign = max(0.0, (busy_s() - busy0 - cpu) / wall)
    lat.sort()
    print(json.dumps({"median": lat[len(lat) // 2] * 1e3, "min": lat[0] * 1e3, "n": len(lat),
                      "cpu_per_run": cpu / len(lat) * 1e3, "foreign": foreign}))


def wait_quiet(limit, most_s):
    """Waits (up to most_s seconds) until the other processes keep fewer than `limit` CPUs busy over 0.5 s."""
    import time
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < most_s:
        b0 = busy_s()
        time.sleep(0.5)
        if (busy_s() - b0) / 0.5 < limit:
            return


def busy_s():
    """CPU seconds all CPUs spent busy (user, nice, system, irq, softirq, steal) since boot."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(json.loads(sys.argv[2]))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="lenet")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--dir", default=DEFAULT_DIR)
    ap.add_argument("--plans", default="/tmp/small_loop_plans")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--engines", default="trtlite,onnxruntime")
    ap.add_argument("--quiet", type=float, default=0.15,
                    help="a round is quiet when other processes kept fewer CPUs than this busy")
    ap.add_argument("--wait-quiet", type=float, default=0.0,
                    help="before each round, wait up to this many seconds for the machine to be quiet")
    ap.add_argument("--hog", action="store_true",
                    help="run one busy-looping process beside each timed one (another program holding a CPU)")
    ap.add_argument("--lib", default="", help="NAME=PATH[@VAR=VALUE],...: more trtlite trees (or the same with an "
                    "environment variable set) to A/B on the same plan")
    args = ap.parse_args()
    os.makedirs(args.plans, exist_ok=True)
    libs = {"trtlite": ROOT}
    for item in filter(None, args.lib.split(",")):
        k, v = item.split("=", 1)
        libs[k] = v
    for model in args.models.split(","):
        onnx_path = os.path.join(args.dir, model + ".onnx")
        import onnx
        dims = [d.dim_value for d in onnx.load(onnx_path, load_external_data=False).graph.input[0].type.tensor_type.shape.dim]
        shape = [args.batch] + dims[1:]
        for t in (int(v) for v in args.threads.split(",")):
            plan = os.path.join(args.plans, f"{model}_b{args.batch}_t{t}.plan")
            build_plan(onnx_path, shape, t, plan)
            engines = [e for e in args.engines.split(",") if e != "trtlite"] + list(libs)
            engines = [e for e in engines if e in libs or e in ("onnxruntime", "openvino")]
            res = {e: [] for e in engines}
            for r in range(args.rounds):
                if args.wait_quiet:
                    wait_quiet(args.quiet, args.wait_quiet)
                for e in (engines if r % 2 == 0 else engines[::-1]):
                    spec = {"engine": e if e in ("onnxruntime", "openvino") else "trtlite", "lib": libs.get(e, ROOT),
                            "onnx": onnx_path, "plan": plan, "shape": shape, "threads": t, "seconds": args.seconds}
                    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.hog else None
                    try:
                        out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)],
                                             capture_output=True, text=True, check=True).stdout
                    finally:
                        if hog:
                            hog.kill()
                            hog.wait()
                    res[e].append(json.loads(out.strip().splitlines()[-1]))
            load = os.getloadavg()[0]
            print(f"{model} b{args.batch} t{t} (load {load:.1f}, {args.rounds} rounds x {args.seconds} s each):")
            for e, rs in res.items():
                quiet = [x for x in rs if x["foreign"] < args.quiet]
                if args.hog:
                    quiet = []
                print(f"  {e:14s} {len(quiet)} of {len(rs)} rounds quiet (other processes < {args.quiet} CPUs): "
                      + (f"median of their medians {sorted(x['median'] for x in quiet)[len(quiet) // 2]:.4f} ms"
                         if quiet else "none"))
                med = sorted(x["median"] for x in rs)
                print(f"  {e:14s} median of round medians {med[len(med) // 2]:.4f} ms (rounds "
                      f"{' '.join(f'{x[0]:.3f}/{x[1]:.2f}' for x in sorted((x['median'], x['foreign']) for x in rs))}: "
                      f"median ms / other CPUs), min {min(x['min'] for x in rs):.4f} ms, "
                      f"CPU/run {sorted(x['cpu_per_run'] for x in rs)[len(rs) // 2]:.4f} ms")


if __name__ == "__main__":
    main()
