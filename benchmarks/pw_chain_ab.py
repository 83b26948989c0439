"""A/B of the fuse_chain pass (csrc/builder/passes/fuse_chain.c) on pointwise chains alone: each chain built as a
network with the pass on (one pw_chain.simd step) and off (one step per layer), timed in one process by the calling
thread's CPU time (time.thread_time), engines alternating, minimum and median per engine; outputs compared bit for bit.

Chains: 'gelu_qdq' (BERT-base's feed-forward GELU as quantize_static writes it: x / sqrt2, erf, Q/DQ, + 1, Q/DQ,
* h, Q/DQ, * 0.5 over [S, 3072]), 'bias_silu' (x + bias[C], SiLU via Sigmoid * x is fused by fuse_pointwise, so:
x * s[C] + t[C] then ReLU, then * y), 'scalar3' (three scalar ops).

    PYTHONPATH=. python3 benchmarks/pw_chain_ab.py [--rows 128] [--rounds 30] [--threads 1]
"""
import argparse
import statistics
import time

import numpy as np

import trtlite as trt

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
E = trt.ElementWiseOperation


def _qdq(net, v, scale):
    s = net.add_constant((1, 1), np.array([[scale]], np.float32)).get_output(0)
    q = net.add_quantize(v, s, trt.int8)
    return net.add_dequantize(q.get_output(0), s).get_output(0)


def _const(net, arr):
    return net.add_constant(arr.shape, arr).get_output(0)


def gelu_qdq(net, rows, cols):
    x = net.add_input("x", trt.float32, (rows, cols))
    h = x
    d = net.add_elementwise(h, _const(net, np.full((1, 1), 1.4142135, np.float32)), E.DIV).get_output(0)
    er = _qdq(net, net.add_unary(d, trt.UnaryOperation.ERF).get_output(0), 1 / 127)
    a = _qdq(net, net.add_elementwise(er, _const(net, np.ones((1, 1), np.float32)), E.SUM).get_output(0), 2 / 127)
    m = _qdq(net, net.add_elementwise(h, a, E.PROD).get_output(0), 0.1)
    y = net.add_elementwise(m, _const(net, np.full((1, 1), 0.5, np.float32)), E.PROD).get_output(0)
    net.mark_output(y)
    y.name = "y"


def bias_relu_mul(net, rows, cols):
    rng = np.random.default_rng(1)
    x = net.add_input("x", trt.float32, (rows, cols))
    z = net.add_input("z", trt.float32, (rows, cols))
    v = net.add_elementwise(x, _const(net, rng.standard_normal((1, cols)).astype(np.float32)), E.PROD).get_output(0)
    v = net.add_elementwise(v, _const(net, rng.standard_normal((1, cols)).astype(np.float32)), E.SUM).get_output(0)
    v = net.add_activation(v, trt.ActivationType.RELU).get_output(0)
    y = net.add_elementwise(v, z, E.PROD).get_output(0)
    net.mark_output(y)
    y.name = "y"


def scalar3(net, rows, cols):
    x = net.add_input("x", trt.float32, (rows, cols))
    v = net.add_elementwise(x, _const(net, np.full((1, 1), 3.0, np.float32)), E.SUB).get_output(0)
    v = net.add_unary(v, trt.UnaryOperation.ABS).get_output(0)
    y = net.add_activation(v, trt.ActivationType.TANH).get_output(0)
    net.mark_output(y)
    y.name = "y"


CHAINS = {"gelu_qdq": gelu_qdq, "bias_relu_mul": bias_relu_mul, "scalar3": scalar3}


def build(make, rows, cols, threads, on):
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    net = builder.create_network(EXPLICIT)
    make(net, rows, cols)
    config = builder.create_builder_config()
    config.num_threads = threads
    config.avg_timing_iterations = 0
    if not on:
        config.set_pass_enabled("fuse_chain", False)
    engine = builder.build_engine(net, config)
    return engine, engine.num_layers


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=128)
    ap.add_argument("--cols", type=int, default=3072)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--chains", default=",".join(CHAINS))
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    for name in args.chains.split(","):
        eng = {}
        for on in (True, False):
            e, n = build(CHAINS[name], args.rows, args.cols, args.threads, on)
            ctx = e.create_execution_context()
            ctx.num_threads = args.threads
            names = [e.get_tensor_name(i) for i in range(e.num_io_tensors)]
            if not eng:
                feeds = {k: (rng.standard_normal((args.rows, args.cols)) * 2).astype(np.float32) for k in names
                         if e.get_tensor_mode(k) == trt.TensorIOMode.INPUT}
            arrays = dict(feeds, y=np.empty((args.rows, args.cols), np.float32))
            eng[on] = (ctx, n, arrays, [arrays[k].ctypes.data for k in names])
        for on in eng:
            eng[on][0].execute_v2(eng[on][3])
        outs = {on: eng[on][2]["y"] for on in eng}
        same = np.array_equal(outs[True].view(np.uint32), outs[False].view(np.uint32))
        times = {True: [], False: []}
        for _ in range(args.rounds):
            for on in (True, False):
                ctx, ptrs = eng[on][0], eng[on][3]
                t0 = time.thread_time()
                ctx.execute_v2(ptrs)
                times[on].append((time.thread_time() - t0) * 1e3)
        print(f"{name} [{args.rows}, {args.cols}] t{args.threads}: fused ({eng[True][1]} steps) min "
              f"{min(times[True]):.3f} ms median {statistics.median(times[True]):.3f}; unfused ({eng[False][1]} steps) "
              f"min {min(times[False]):.3f} median {statistics.median(times[False]):.3f}; "
              f"min ratio {min(times[False]) / min(times[True]):.2f}x; outputs bit-equal: {same}")


if __name__ == "__main__":
    main()
