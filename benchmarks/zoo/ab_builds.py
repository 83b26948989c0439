"""A/B of two trtlite builds on zoo models, end to end, for a loaded machine.

Each build (a source tree whose `trtlite` package is built in place) builds its own plan of each model in a
subprocess (its own kernel choice), then the two builds' processes alternate for --rounds rounds; each process
loads its plan, runs once untimed, then --runs inferences timed by process CPU time (at one thread that is the
inference's CPU, little disturbed by other processes' load).  Reported: min and median per build over all runs,
ratio new / old (< 1: new faster), and the two outputs' max abs difference.

    python benchmarks/zoo/ab_builds.py --old /tmp/oldtree --models swin_t,convnext_tiny --dir /work/wt/zoo/build/zoo
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NEW = os.path.dirname(os.path.dirname(HERE))

WORKER = r'''
import json, sys, time
import numpy as np
import trtlite as trt
mode, onnx_path, plan_path, threads, runs, x_path, out_path = sys.argv[1:8]
threads, runs = int(threads), int(runs)
logger = trt.Logger(trt.Logger.ERROR)
x = np.load(x_path)
if mode == "build":
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    assert parser.parse_from_file(onnx_path), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    config = builder.create_builder_config()
    config.num_threads = threads
    profile = builder.create_optimization_profile()
    name = network.get_input(0).name
    profile.set_shape(name, x.shape, x.shape, x.shape)
    config.add_optimization_profile(profile)
    plan = builder.build_serialized_network(network, config)
    with open(plan_path, "wb") as f:
        f.write(plan)
    sys.exit(0)
with open(plan_path, "rb") as f:
    engine = trt.Runtime(logger).deserialize_cuda_engine(f.read())
ctx = engine.create_execution_context()
ctx.num_threads = threads
names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
inp = [n for n in names if engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT][0]
ctx.set_input_shape(inp, x.shape)
outn = [n for n in names if n != inp][0]
out = np.empty(tuple(ctx.get_tensor_shape(outn)), np.float32)
arrays = {inp: x, outn: out}
ptrs = [arrays[n].ctypes.data for n in names]
ctx.execute_v2(ptrs)
ts = []
for _ in range(runs):
    t0 = time.process_time()
    ctx.execute_v2(ptrs)
    ts.append(time.process_time() - t0)
np.save(out_path, out)
print(json.dumps(ts))
'''


def input_shape(onnx_path, batch):
    import onnx
    m = onnx.load(onnx_path, load_external_data=False)
    dims = m.graph.input[0].type.tensor_type.shape.dim
    return tuple(batch if i == 0 else (d.dim_value or 1) for i, d in enumerate(dims)), m.graph.input[0].type.tensor_type.elem_type


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", required=True, help="root of the old build's tree (its trtlite package built)")
    ap.add_argument("--new", default=NEW, help="root of the new build's tree (default: this tree)")
    ap.add_argument("--models", required=True)
    ap.add_argument("--dir", default="/work/wt/zoo/build/zoo")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    import numpy as np
    tmp = tempfile.mkdtemp(prefix="ab_builds_")
    trees = {"old": args.old, "new": args.new}
    for model in args.models.split(","):
        onnx_path = os.path.join(args.dir, model + ".onnx")
        shape, et = input_shape(onnx_path, args.batch)
        rng = np.random.default_rng(0)
        x = (rng.integers(0, 1000, shape) if et == 7 else rng.standard_normal(shape)).astype(
            np.int64 if et == 7 else np.float32)
        x_path = os.path.join(tmp, model + "_x.npy")
        np.save(x_path, x)

        def call(side, mode):
            env = dict(os.environ, PYTHONPATH=trees[side])
            plan = os.path.join(tmp, f"{model}_{side}_t{args.threads}.plan")
            outp = os.path.join(tmp, f"{model}_{side}_out.npy")
            r = subprocess.run([sys.executable, "-c", WORKER, mode, onnx_path, plan, str(args.threads), str(args.runs),
                                x_path, outp], env=env, capture_output=True, text=True, cwd=tmp)
            if r.returncode:
                raise SystemExit(f"{model} {side} {mode} failed:\n{r.stderr[-3000:]}")
            return json.loads(r.stdout) if mode == "run" else None
        for side in trees:
            call(side, "build")
        ts = {"old": [], "new": []}
        for rnd in range(args.rounds):
            for side in (("old", "new") if rnd % 2 == 0 else ("new", "old")):
                ts[side] += call(side, "run")
        o, n = (np.load(os.path.join(tmp, f"{model}_{s}_out.npy")) for s in ("old", "new"))
        mo, mn = min(ts["old"]) * 1e3, min(ts["new"]) * 1e3
        do, dn = statistics.median(ts["old"]) * 1e3, statistics.median(ts["new"]) * 1e3
        print(f"{model} b{args.batch} t{args.threads}: old min {mo:.1f} med {do:.1f} ms, new min {mn:.1f} med {dn:.1f} ms;"
              f" new/old min {mn / mo:.3f} med {dn / do:.3f}; outputs max |diff| {float(np.abs(o - n).max()):.2e}",
              flush=True)


if __name__ == "__main__":
    main()
