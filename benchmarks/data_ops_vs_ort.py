"""One-layer TopK / Where / PRelu / Cast / Einsum / GridSample / LRN models (session 22: GatherElements / GatherND /
flips / Expand / comparisons / Not / Pow / And / CumSum / 3-D MaxPool): trtlite's optimized kernel, trtlite's reference kernel
(builder optimization level 0) and onnxruntime, in one process, one thread, by the calling thread's CPU time.

    python benchmarks/data_ops_vs_ort.py [--runs 40] [--only topk,where] [--threads 1]

Each case is an ONNX model of one node (opset 17, static shapes, shapes of real models: detection score TopK,
attention-mask Where, per-channel PRelu, fp16 / index casts), built twice by trtlite (default level: the kernel the
inspector names; level 0: the reference) and loaded by onnxruntime (intra_op_num_threads = --threads, sequential).
The three run alternately (rotating order) `--runs` times; the table gives each one's minimum thread CPU time in
ms (at --threads 1 every engine runs on the calling thread, so a loaded machine inflates it little) and the ratios.
Outputs are checked against onnxruntime first (TopK: the values; onnxruntime's order of ties differs).  Not part of
CI.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # trtlite in place

NP2ONNX = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, np.int32: TensorProto.INT32,
           np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL, np.uint8: TensorProto.UINT8}


def model(op, inputs, outputs, attrs=None, inits=()):
    """inputs: [(name, array)]; outputs: [(name, np dtype, shape or None)]."""
    node = helper.make_node(op, [n for n, _ in inputs] + [i.name for i in inits], [n for n, _, _ in outputs],
                            **(attrs or {}))
    g = helper.make_graph([node], "one", [helper.make_tensor_value_info(n, NP2ONNX[a.dtype.type], a.shape)
                                          for n, a in inputs],
                          [helper.make_tensor_value_info(n, NP2ONNX[t], s) for n, t, s in outputs],
                          initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


def cases(rng):
    c = []
    x = rng.standard_normal((1, 8400)).astype(np.float32)
    k = numpy_helper.from_array(np.array([100], np.int64), "k")
    c.append(("TopK [1,8400] k=100 (YOLO scores)", model("TopK", [("x", x)], [("v", np.float32, None),
             ("i", np.int64, None)], {"axis": 1}, [k]), {"x": x}))
    x = rng.standard_normal((1, 100000)).astype(np.float32)
    k = numpy_helper.from_array(np.array([300], np.int64), "k")
    c.append(("TopK [1,100000] k=300", model("TopK", [("x", x)], [("v", np.float32, None), ("i", np.int64, None)],
                                             {"axis": 1}, [k]), {"x": x}))
    x = rng.standard_normal((8, 1000)).astype(np.float32)
    k = numpy_helper.from_array(np.array([5], np.int64), "k")
    c.append(("TopK [8,1000] k=5 (classifier)", model("TopK", [("x", x)], [("v", np.float32, None),
             ("i", np.int64, None)], {"axis": 1}, [k]), {"x": x}))
    x = rng.standard_normal((1, 1000, 80)).astype(np.float32)
    k = numpy_helper.from_array(np.array([10], np.int64), "k")
    c.append(("TopK [1,1000,80] axis 1 k=10", model("TopK", [("x", x)], [("v", np.float32, None),
             ("i", np.int64, None)], {"axis": 1}, [k]), {"x": x}))
    x = rng.standard_normal((16, 2048)).astype(np.float32)
    k = numpy_helper.from_array(np.array([2048], np.int64), "k")
    c.append(("TopK [16,2048] k=2048 (sort)", model("TopK", [("x", x)], [("v", np.float32, None),
             ("i", np.int64, None)], {"axis": 1}, [k]), {"x": x}))
    cond = rng.random((8, 1, 1, 128)) < 0.8
    s = rng.standard_normal((8, 12, 128, 128)).astype(np.float32)
    ninf = numpy_helper.from_array(np.array(-np.inf, np.float32), "ninf")
    c.append(("Where [8,1,1,128] ? [8,12,128,128] : -inf", model("Where", [("c", cond), ("s", s)],
             [("y", np.float32, None)], inits=[ninf]), {"c": cond, "s": s}))
    cond = np.tril(np.ones((1, 1, 256, 256), bool))
    s = rng.standard_normal((1, 12, 256, 256)).astype(np.float32)
    c.append(("Where causal [1,1,256,256] ? [1,12,256,256] : -inf", model("Where", [("c", cond), ("s", s)],
             [("y", np.float32, None)], inits=[ninf]), {"c": cond, "s": s}))
    cond = rng.random((1 << 20,)) < 0.5
    a = rng.standard_normal((1 << 20,)).astype(np.float32)
    b = rng.standard_normal((1 << 20,)).astype(np.float32)
    c.append(("Where [1M] same shapes", model("Where", [("c", cond), ("a", a), ("b", b)], [("y", np.float32, None)]),
              {"c": cond, "a": a, "b": b}))
    for shape in ((1, 64, 112, 112), (1, 256, 28, 28)):
        x = rng.standard_normal(shape).astype(np.float32)
        sl = numpy_helper.from_array((rng.random((shape[1], 1, 1)) * 0.3).astype(np.float32), "slope")
        c.append(("PRelu %s per channel" % (list(shape),), model("PRelu", [("x", x)], [("y", np.float32, None)],
                  inits=[sl]), {"x": x}))
    for src, dst, n in ((np.float32, np.float16, 1 << 20), (np.float16, np.float32, 1 << 20),
                        (np.float32, np.int32, 1 << 20), (np.int64, np.int32, 1 << 20), (np.int32, np.float32, 1 << 20),
                        (np.bool_, np.float32, 1 << 20)):
        x = (rng.standard_normal(n) * 100).astype(src) if src != np.bool_ else rng.random(n) < 0.5
        c.append(("Cast %s -> %s [1M]" % (np.dtype(src).name, np.dtype(dst).name),
                  model("Cast", [("x", x)], [("y", dst, None)], {"to": NP2ONNX[dst]}), {"x": x}))
    for eq, sa, sb in (("bhqd,bhkd->bhqk", (1, 12, 128, 64), (1, 12, 128, 64)), ("bij,bjk->bik", (8, 64, 256),
                                                                                    (8, 256, 64))):
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        c.append(("Einsum %s %s" % (eq, list(sa)), model("Einsum", [("a", a), ("b", b)], [("y", np.float32, None)],
                                                         {"equation": eq}), {"a": a, "b": b}))
    for xs, gs, mode in (((8, 32, 64, 64), (8, 1000, 4, 2), "bilinear"), ((1, 128, 64, 64), (1, 64, 64, 2), "bilinear"),
                         ((1, 64, 32, 32), (1, 64, 64, 2), "bicubic")):
        x = rng.standard_normal(xs).astype(np.float32)
        g = (rng.random(gs) * 2.2 - 1.1).astype(np.float32)
        c.append(("GridSample %s %s grid %s" % (mode, list(xs), list(gs)), model("GridSample", [("x", x), ("g", g)],
                  [("y", np.float32, None)], {"mode": mode, "padding_mode": "zeros"}), {"x": x, "g": g}))
    x = rng.standard_normal((1, 96, 55, 55)).astype(np.float32)
    c.append(("LRN [1,96,55,55] size 5 (AlexNet)", model("LRN", [("x", x)], [("y", np.float32, None)],
             {"size": 5, "alpha": 1e-4, "beta": 0.75, "bias": 2.0}), {"x": x}))
    # session 22 (s22-cov): gathers by index, flips, Expand, integer / bool elementwise
    x = rng.standard_normal((1, 8400, 85)).astype(np.float32)
    idx = rng.integers(0, 8400, (1, 300, 85)).astype(np.int32)
    c.append(("GatherElements [1,8400,85] axis 1 idx [1,300,85]", model("GatherElements", [("x", x), ("i", idx)],
             [("y", np.float32, None)], {"axis": 1}), {"x": x, "i": idx}))
    x = rng.standard_normal((8, 12, 128, 128)).astype(np.float32)
    idx = rng.integers(-128, 128, (8, 12, 128, 128)).astype(np.int32)
    c.append(("GatherElements [8,12,128,128] last axis", model("GatherElements", [("x", x), ("i", idx)],
             [("y", np.float32, None)], {"axis": 3}), {"x": x, "i": idx}))
    x = rng.standard_normal((4, 64, 56, 56)).astype(np.float32)
    idx = rng.integers(0, 64, (4, 64, 56, 56)).astype(np.int32)
    c.append(("GatherElements [4,64,56,56] axis 1", model("GatherElements", [("x", x), ("i", idx)],
             [("y", np.float32, None)], {"axis": 1}), {"x": x, "i": idx}))
    idx = idx.astype(np.int64)
    c.append(("GatherElements [4,64,56,56] axis 1 int64 idx", model("GatherElements", [("x", x), ("i", idx)],
             [("y", np.float32, None)], {"axis": 1}), {"x": x, "i": idx}))
    x = rng.standard_normal((1, 8400, 85)).astype(np.float32)
    idx = rng.integers(0, 8400, (1, 300, 1)).astype(np.int64)
    c.append(("GatherND [1,8400,85] idx [1,300,1] batch_dims 1", model("GatherND", [("x", x), ("i", idx)],
             [("y", np.float32, None)], {"batch_dims": 1}), {"x": x, "i": idx}))
    x = rng.standard_normal((64, 64, 64)).astype(np.float32)
    idx = rng.integers(0, 64, (20000, 3)).astype(np.int64)
    c.append(("GatherND [64,64,64] idx [20000,3] (points)", model("GatherND", [("x", x), ("i", idx)],
             [("y", np.float32, None)]), {"x": x, "i": idx}))
    for shape, axis in (((1, 3, 224, 224), 3), ((8, 64, 56, 56), 3), ((1, 3, 224, 224), 2), ((8, 512, 768), 1)):
        x = rng.standard_normal(shape).astype(np.float32)
        inits = [numpy_helper.from_array(np.array([-1], np.int64), "st"),
                 numpy_helper.from_array(np.array([-(2 ** 62)], np.int64), "en"),
                 numpy_helper.from_array(np.array([axis], np.int64), "ax"),
                 numpy_helper.from_array(np.array([-1], np.int64), "sp")]
        c.append(("Flip %s axis %d (Slice step -1)" % (list(shape), axis), model("Slice", [("x", x)],
                  [("y", np.float32, None)], inits=inits), {"x": x}))
    for src, shape, dt in (((1, 64, 56, 1), (8, 64, 56, 56), np.float32), ((1, 512), (8, 512), np.int64),
                           ((8, 1, 1, 128), (8, 12, 128, 128), np.int64)):
        x = (rng.standard_normal(src) * 100).astype(dt)
        sh = numpy_helper.from_array(np.array(shape, np.int64), "shape")
        c.append(("Expand %s -> %s %s" % (list(src), list(shape), np.dtype(dt).name), model("Expand", [("x", x)],
                  [("y", dt, None)], inits=[sh]), {"x": x}))
    a = rng.integers(0, 4, (8, 512)).astype(np.int64)
    z = numpy_helper.from_array(np.array(0, np.int64), "z")
    c.append(("Equal int64 [8,512] == 0 (padding mask)", model("Equal", [("a", a)], [("y", np.bool_, None)],
             inits=[z]), {"a": a}))
    a = rng.standard_normal((1, 12, 256, 256)).astype(np.float32)
    b = rng.standard_normal((1, 1, 256, 256)).astype(np.float32)
    c.append(("Less f32 [1,12,256,256] < [1,1,256,256]", model("Less", [("a", a), ("b", b)],
             [("y", np.bool_, None)]), {"a": a, "b": b}))
    m = rng.random((8, 1, 128, 128)) < 0.5
    c.append(("Not bool [8,1,128,128]", model("Not", [("m", m)], [("y", np.bool_, None)]), {"m": m}))
    x = rng.standard_normal((1, 128, 3072)).astype(np.float32)
    for ev, why in ((2.0, "RMSNorm"), (0.5, "sqrt"), (3.0, "GELU tanh")):
        e = numpy_helper.from_array(np.array(ev, np.float32), "e")
        c.append(("Pow f32 [1,128,3072] ^ %g (%s)" % (ev, why), model("Pow", [("x", np.abs(x) if ev == 0.5 else x)],
                 [("y", np.float32, None)], inits=[e]), {"x": np.abs(x) if ev == 0.5 else x}))
    m1, m2 = rng.random((8, 1, 128, 128)) < 0.5, rng.random((1, 1, 128, 128)) < 0.5
    c.append(("And bool [8,1,128,128] & [1,1,128,128]", model("And", [("m1", m1), ("m2", m2)],
             [("y", np.bool_, None)]), {"m1": m1, "m2": m2}))
    p = rng.integers(0, 2, (8, 512)).astype(np.int64)
    ax = numpy_helper.from_array(np.array(1, np.int64), "ax")
    c.append(("CumSum int64 [8,512] axis 1 (position ids)", model("CumSum", [("p", p)], [("y", np.int64, None)],
             inits=[ax]), {"p": p}))
    x = rng.standard_normal((1, 32, 16, 56, 56)).astype(np.float32)
    c.append(("MaxPool3d [1,32,16,56,56] 3x3x3 s2", model("MaxPool", [("x", x)], [("y", np.float32, None)],
             {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1, 1, 1, 1, 1, 1]}), {"x": x}))
    x = rng.standard_normal((1, 64, 16, 56, 56)).astype(np.float32)
    c.append(("MaxPool3d [1,64,16,56,56] 1x3x3 s(1,2,2) (R3D stem)", model("MaxPool", [("x", x)],
             [("y", np.float32, None)], {"kernel_shape": [1, 3, 3], "strides": [1, 2, 2], "pads": [0, 1, 1, 0, 1, 1]}),
             {"x": x}))
    x = rng.standard_normal((1, 32, 64, 64, 64)).astype(np.float32)
    c.append(("MaxPool3d [1,32,64,64,64] 2x2x2 s2 (3-D U-Net)", model("MaxPool", [("x", x)],
             [("y", np.float32, None)], {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}), {"x": x}))
    x = rng.standard_normal((1, 64, 8, 28, 28)).astype(np.float32)
    c.append(("AveragePool3d [1,64,8,28,28] 3x3x3 s1 pad 1", model("AveragePool", [("x", x)],
             [("y", np.float32, None)], {"kernel_shape": [3, 3, 3], "strides": [1, 1, 1], "pads": [1, 1, 1, 1, 1, 1],
                                         "count_include_pad": 0}), {"x": x}))
    return c


def trt_engine(trt, data, threads, level):
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(net, logger)
    if not parser.parse(data):
        raise RuntimeError("; ".join(str(parser.get_error(i)) for i in range(parser.num_errors)))
    config = builder.create_builder_config()
    config.num_threads = threads
    if level is not None:
        config.builder_optimization_level = level
    engine = builder.build_engine(net, config)
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return engine, [l["kernel"] for l in info["layers"]]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default="", help="comma list of case-name prefixes (TopK, Where, PRelu, Cast, Einsum, GridSample, LRN, "
                    "GatherElements, GatherND, Flip, Expand, Equal, Less, Not, Pow, And, CumSum, MaxPool3d, AveragePool3d)")
    args = ap.parse_args(argv)
    import onnxruntime as ort
    import trtlite as trt
    rng = np.random.default_rng(0)
    only = [s.strip().lower() for s in args.only.split(",") if s.strip()]
    print("load: %s" % open("/proc/loadavg").read().split()[:3])
    print("%-46s %-22s %9s %9s %9s %7s %7s" % ("case", "kernel", "opt ms", "ref ms", "ort ms", "ref/opt", "ort/opt"))
    for name, data, feeds in cases(rng):
        if only and not any(name.lower().startswith(o) for o in only):
            continue
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        eo, ko = trt_engine(trt, data, args.threads, None)
        er, _ = trt_engine(trt, data, args.threads, 0)
        co, cr = eo.create_execution_context(), er.create_execution_context()
        want = sess.run(None, feeds)
        got = co.infer(feeds)
        gv = got[sorted(got)[-1] if "v" in got else sorted(got)[0]] if len(got) == 1 else got["v"]
        if len(want) == 1 and np.asarray(want[0]).dtype != np.float32:
            np.testing.assert_array_equal(np.asarray(gv), want[0])
        w0 = np.asarray(want[0], np.float64)
        np.testing.assert_allclose(np.asarray(gv, np.float64), w0, rtol=1e-5,
                                   atol=1e-5 * float(np.abs(w0[np.isfinite(w0)]).max(initial=1.0)))
        fns = {"opt": lambda: co.infer(feeds), "ref": lambda: cr.infer(feeds), "ort": lambda: sess.run(None, feeds)}
        t = {k: [] for k in fns}
        order = list(fns)
        for i in range(args.runs):
            for k in order[i % 3:] + order[:i % 3]:
                c0 = time.thread_time()
                fns[k]()
                t[k].append((time.thread_time() - c0) * 1e3)
        m = {k: min(v) for k, v in t.items()}
        print("%-46s %-22s %9.3f %9.3f %9.3f %7.2f %7.2f" % (name, ",".join(ko), m["opt"], m["ref"], m["ort"],
                                                            m["ref"] / m["opt"], m["ort"] / m["opt"]), flush=True)


if __name__ == "__main__":
    main()
