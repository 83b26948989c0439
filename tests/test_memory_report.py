"""What an execution context holds (issue #10): IExecutionContext.update_device_memory_size_for_shapes() and
memory_report() (activation arena + scratch at the current shapes, byte counts rather than a noisy RSS).  The
linear layers' per-thread scratch slots follow the context's num_threads (trtl_scratch_threads: the pool, at most the
CPUs), not every CPU of the host (2 MiB a slot at depth > ~1700: 128 MiB a context on a 64-CPU host), and the
context re-sizes them when num_threads changes; results stay the float64 reference's."""
import json
import os

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


def _linear_engine(M, D, K, dynamic=False):
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((D, K)) / np.sqrt(D)).astype(np.float32)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (-1, D) if dynamic else (M, D))
    c = net.add_constant(w.shape, w).get_output(0)
    y = net.add_matrix_multiply(x, trt.MatrixOperation.NONE, c, trt.MatrixOperation.NONE).get_output(0)
    y.name = "y"
    net.mark_output(y)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0  # the first applicable kernel: the packed GEMM where the CPU has it
    if dynamic:
        p = builder.create_optimization_profile()
        p.set_shape("x", (1, D), (M, D), (M, D))
        config.add_optimization_profile(p)
    engine = builder.build_engine(net, config)
    assert engine is not None
    return engine, w


def _kernel(engine):
    doc = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return [layer["kernel"] for layer in doc["layers"]]


def _run(ctx, x, K):
    y = np.full((x.shape[0], K), 77, np.float32)
    ctx.set_input_shape("x", x.shape)
    assert ctx.execute_v2([x, y])
    return y


def test_linear_scratch_follows_context_threads():
    M, D, K = 96, 2304, 192
    engine, w = _linear_engine(M, D, K)
    if "packed_gemm" not in _kernel(engine)[0]:
        pytest.skip("the packed GEMM is no candidate on this CPU: %s" % _kernel(engine))
    x = np.random.default_rng(1).standard_normal((M, D)).astype(np.float32)
    want = x.astype(np.float64) @ w.astype(np.float64)
    ctx = engine.create_execution_context()
    ctx.num_threads = 1
    one = ctx.memory_report()
    assert one["activation_bytes"] == engine.device_memory_size
    assert ctx.update_device_memory_size_for_shapes() == one["activation_bytes"] + one["scratch_bytes"]
    assert one["scratch_bytes"] > 64
    assert_close(_run(ctx, x, K), want)
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: a two-thread pool is sized as one")
    ctx.num_threads = 2
    two = ctx.memory_report()
    # scratch() returns slots * slot bytes + 64: two slots now, one before
    assert two["scratch_bytes"] - 64 == 2 * (one["scratch_bytes"] - 64), (one, two)
    assert_close(_run(ctx, x, K), want)
    ctx.num_threads = 1  # back to one slot: the larger buffer is given back
    assert ctx.memory_report() == one
    assert_close(_run(ctx, x, K), want)
    # a second context at the default thread count (every CPU this process may use): as many slots as CPUs, at most
    other = engine.create_execution_context()
    cpus = min(len(os.sched_getaffinity(0)), 64)
    assert other.memory_report()["scratch_bytes"] - 64 <= cpus * (one["scratch_bytes"] - 64)


def test_memory_report_needs_input_shapes():
    M, D, K = 8, 64, 16
    engine, w = _linear_engine(M, D, K, dynamic=True)
    ctx = engine.create_execution_context()
    with pytest.raises(Exception, match="'x'"):
        ctx.update_device_memory_size_for_shapes()
    x = np.random.default_rng(2).standard_normal((3, D)).astype(np.float32)
    ctx.set_input_shape("x", x.shape)
    r = ctx.memory_report()
    assert r["activation_bytes"] >= 0 and r["scratch_bytes"] >= 0
    assert ctx.update_device_memory_size_for_shapes() == r["activation_bytes"] + r["scratch_bytes"]
    assert_close(_run(ctx, x, K), x.astype(np.float64) @ w.astype(np.float64))


@pytest.mark.parametrize("C,K,groups", [(16, 32, 1), (3, 32, 1), (64, 64, 8)])
def test_convolution_scratch_follows_context_threads(C, K, groups):
    """The convolution kernels' per-thread scratch (trtl_scratch_slots / trtl_scratch_slots_all: im2col, packed
    GEMM, stem, grouped, ...) is sized for the context's pool too: more with two threads than with one, and the
    results stay numpy's either way."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: a two-thread pool is sized as one")
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((K, C // groups, 3, 3)) / 8).astype(np.float32)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    x_t = net.add_input("x", trt.float32, (1, C, 40, 40))
    conv = net.add_convolution_nd(x_t, K, (3, 3), w, np.zeros(K, np.float32))
    conv.num_groups = groups
    conv.padding_nd = (1, 1)
    conv.get_output(0).name = "y"
    net.mark_output(conv.get_output(0))
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0  # the first applicable kernel
    engine = builder.build_engine(net, config)
    assert engine is not None
    x = rng.standard_normal((1, C, 40, 40)).astype(np.float32)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    cg, kg = C // groups, K // groups
    want = np.zeros((1, K, 40, 40))
    for k in range(K):
        g = k // kg
        for c in range(cg):
            for i in range(3):
                for j in range(3):
                    want[0, k] += w[k, c, i, j] * xp[0, g * cg + c, i:i + 40, j:j + 40]
    sizes = {}
    for threads in (1, 2):
        ctx = engine.create_execution_context()
        ctx.num_threads = threads
        sizes[threads] = ctx.memory_report()["scratch_bytes"]
        y = np.full((1, K, 40, 40), 77, np.float32)
        assert ctx.execute_v2([x, y])
        assert_close(y, want)
    assert sizes[2] > sizes[1] > 0, (sizes, _kernel(engine))
