#!/usr/bin/env python3
"""Single-layer linear (MatMul by a constant weight + bias [+ GELU]) A/B: trtlite vs onnxruntime in one process.

    python3 benchmarks/linear_vs_ort.py [--threads 1] [--shapes bert,vit] [--rounds 5] [--iters 10]

Each shape is one ONNX model y = X[B, M, K] x W[K, N] + b (as torch exports nn.Linear), built by trtlite's
OnnxParser and by onnxruntime (intra_op_num_threads = --threads, no spinning).  Rounds alternate the two
engines; each round is a warm-up run and --iters timed runs; the figure is the minimum per-run process CPU
time over rounds (time.process_time: all threads of the process, so a loaded machine's preemption does not
count), with GFLOP/s from it.  Outputs are compared to float64 numpy first.
"""
import argparse
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import onnxruntime as ort

import trtlite as trt

SHAPES = {
    "bert": [(b, 128, k, n) for b in (1, 8) for k, n in ((768, 768), (768, 2304), (768, 3072), (3072, 768))],
    "vit": [(b, 197, k, n) for b in (1, 8) for k, n in ((768, 768), (768, 2304), (768, 3072), (3072, 768))],
    "convnext": [(b, m, k, n) for b in (1, 8) for m, c in ((3136, 96), (784, 192), (196, 384), (49, 768))
                 for k, n in ((c, 4 * c), (4 * c, c))],
}


def model(b, m, k, n, gelu, rng):
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Add", ["mm", "b"], ["y0" if gelu else "y"])]
    if gelu:
        nodes += [helper.make_node("Gelu", ["y0"], ["y"], domain="")]
    g = helper.make_graph(nodes, "lin", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [b, m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [b, m, n])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")])
    mo = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    mo.ir_version = 9
    return mo.SerializeToString(), w, bias


def build_trt(buf, shape, threads, off=()):
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    net = builder.create_network(0)
    parser = trt.OnnxParser(net, logger)
    assert parser.parse(buf), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    config = builder.create_builder_config()
    config.num_threads = threads
    for p in off:
        config.set_pass_enabled(p, False)
    prof = builder.create_optimization_profile()
    prof.set_shape("x", shape, shape, shape)
    config.add_optimization_profile(prof)
    engine = builder.build_engine(net, config)
    ctx = engine.create_execution_context()
    ctx.num_threads = threads
    ctx.set_input_shape("x", shape)
    return engine, ctx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--shapes", default="bert,vit")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--gelu", action="store_true")
    ap.add_argument("--wall", action="store_true", help="report wall time instead of process CPU time")
    ap.add_argument("--no-ort", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    clock = time.perf_counter if a.wall else time.process_time
    batches = {int(x) for x in a.batch.split(",")}
    print(f"threads={a.threads} clock={'wall' if a.wall else 'process cpu'}")
    print(f"{'shape':>26} {'trt ms':>8} {'ort ms':>8} {'trt GF/s':>9} {'ort GF/s':>9} {'ort/trt':>8} {'err':>8}")
    for fam in a.shapes.split(","):
        for (b, m, k, n) in SHAPES[fam]:
            if b not in batches:
                continue
            buf, w, bias = model(b, m, k, n, a.gelu, rng)
            x = rng.standard_normal((b, m, k)).astype(np.float32)
            ref = x.astype(np.float64) @ w.astype(np.float64) + bias
            engine, ctx = build_trt(buf, x.shape, a.threads)
            out = np.empty((b, m, n), np.float32)
            ptrs = [x.ctypes.data, out.ctypes.data]
            ctx.execute_v2(ptrs)
            err = 0.0 if a.gelu else float(np.abs(out - ref).max())
            so = ort.SessionOptions()
            so.intra_op_num_threads = a.threads
            so.inter_op_num_threads = 1
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            sess = None if a.no_ort else ort.InferenceSession(buf, so, providers=["CPUExecutionProvider"])
            best = {"trt": 1e9, "ort": 1e9}
            runs = {"trt": lambda: ctx.execute_v2(ptrs)}
            if sess:
                runs["ort"] = lambda: sess.run(None, {"x": x})
            for r in range(a.rounds):
                for key in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
                    runs[key]()
                    for _ in range(a.iters):
                        t0 = clock()
                        runs[key]()
                        best[key] = min(best[key], clock() - t0)
            fl = 2.0 * b * m * k * n
            print(f"{f'b{b} M{m} K{k} N{n}':>26} {best['trt']*1e3:8.3f} {best['ort']*1e3:8.3f} "
                  f"{fl/best['trt']/1e9:9.1f} {fl/best['ort']/1e9:9.1f} {best['ort']/best['trt']:8.3f} {err:8.1e}")


if __name__ == "__main__":
    main()
