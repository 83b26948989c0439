"""Threads: one engine, several execution contexts executing concurrently from Python threads.

Execution releases the GIL, so contexts really run in parallel; each must give exactly the results of a sequential
run.  Builds and plan loads from several threads keep their loggers and error messages apart.
"""
import threading
import time

import numpy as np
import pytest

import trtlite as trt

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
THREADS = 4
RUNS = 50


def conv_relu_net(network, channels, hw, name="x", seed=0, batch=-1):
    """x (batch, channels, hw, hw) -> conv3x3 -> relu -> conv3x3 + x (residual) -> "y"; a spatial mean -> "m"."""
    rng = np.random.default_rng(seed)
    x = network.add_input(name, trt.float32, (batch, channels, hw, hw))
    w1 = (rng.standard_normal((channels, channels, 3, 3)) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((channels, channels, 3, 3)) * 0.2).astype(np.float32)
    c1 = network.add_convolution_nd(x, channels, (3, 3), w1, rng.standard_normal(channels).astype(np.float32))
    c1.padding_nd = (1, 1)
    r = network.add_activation(c1.get_output(0), trt.ActivationType.RELU)
    c2 = network.add_convolution_nd(r.get_output(0), channels, (3, 3), w2)
    c2.padding_nd = (1, 1)
    s = network.add_elementwise(c2.get_output(0), x, trt.ElementWiseOperation.SUM)
    s.get_output(0).name = "y"
    m = network.add_reduce(s.get_output(0), trt.ReduceOperation.AVG, (1 << 2) | (1 << 3), False)
    m.get_output(0).name = "m"
    network.mark_output(s.get_output(0))
    network.mark_output(m.get_output(0))


def reference(x, seed, channels):
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((channels, channels, 3, 3)) * 0.2).astype(np.float32).astype(np.float64)
    w2 = (rng.standard_normal((channels, channels, 3, 3)) * 0.2).astype(np.float32).astype(np.float64)
    b1 = rng.standard_normal(channels).astype(np.float32).astype(np.float64)

    def conv(a, w):
        ap = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
        n, _, h, wd = a.shape
        out = np.zeros((n, w.shape[0], h, wd))
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,kc->nkhw", ap[:, :, i:i + h, j:j + wd], w[:, :, i, j])
        return out

    x = x.astype(np.float64)
    y = conv(np.maximum(conv(x, w1) + b1.reshape(1, -1, 1, 1), 0.0), w2) + x
    return y, y.mean(axis=(2, 3))


CH, HW = 8, 24


@pytest.fixture(scope="module")
def engine():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    conv_relu_net(network, CH, HW)
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, CH, HW, HW), (2, CH, HW, HW), (4, CH, HW, HW))
    config.add_optimization_profile(profile)
    plan = builder.build_serialized_network(network, config)
    return trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)


def run_threads(target, n):
    """Runs target(i) in n threads started together; re-raises the first exception of any thread."""
    errors = []
    barrier = threading.Barrier(n)

    def wrapper(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:     # noqa: BLE001 -- reported below
            errors.append((i, e))

    threads = [threading.Thread(target=wrapper, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hangs"
    if errors:
        raise AssertionError("thread %d failed: %r" % errors[0]) from errors[0][1]


def test_reference_agrees(engine):
    x = np.random.default_rng(1).standard_normal((2, CH, HW, HW)).astype(np.float32)
    out = engine.create_execution_context().infer({"x": x})
    y, m = reference(x, 0, CH)
    np.testing.assert_allclose(out["y"], y, rtol=1e-4, atol=1e-4 * np.abs(y).max())
    np.testing.assert_allclose(out["m"], m, rtol=1e-4, atol=1e-4 * np.abs(y).max())


def test_contexts_in_threads_match_sequential_runs(engine):
    """4 threads x 50 runs on one engine, each thread with its own context and its own batch size; every output
    must equal (bit for bit) what one context computes sequentially."""
    rng = np.random.default_rng(2)
    batches = [1, 2, 3, 4]
    inputs = [[rng.standard_normal((batches[t], CH, HW, HW)).astype(np.float32) for _ in range(RUNS)]
              for t in range(THREADS)]
    seq = engine.create_execution_context()
    expected = [[seq.infer({"x": x}) for x in xs] for xs in inputs]
    results = [[None] * RUNS for _ in range(THREADS)]

    def work(t):
        context = engine.create_execution_context()
        context.set_input_shape("x", inputs[t][0].shape)
        y = np.empty((batches[t], CH, HW, HW), np.float32)
        m = np.empty((batches[t], CH), np.float32)
        for r in range(RUNS):
            context.execute_v2([inputs[t][r], y, m])
            results[t][r] = (y.copy(), m.copy())

    run_threads(work, THREADS)
    for t in range(THREADS):
        for r in range(RUNS):
            np.testing.assert_array_equal(results[t][r][0], expected[t][r]["y"], err_msg="thread %d run %d" % (t, r))
            np.testing.assert_array_equal(results[t][r][1], expected[t][r]["m"], err_msg="thread %d run %d" % (t, r))


def test_threads_changing_shapes_with_execute_async_v3(engine):
    """Each thread alternates batch sizes on its context through set_input_shape + set_tensor_address."""
    rng = np.random.default_rng(3)
    xs = {b: rng.standard_normal((b, CH, HW, HW)).astype(np.float32) for b in (1, 2, 3, 4)}
    seq = engine.create_execution_context()
    expected = {b: seq.infer({"x": x}) for b, x in xs.items()}
    mismatches = []

    def work(t):
        context = engine.create_execution_context()
        order = [1 + (t + k) % 4 for k in range(20)]
        for b in order:
            y = np.empty((b, CH, HW, HW), np.float32)
            m = np.empty((b, CH), np.float32)
            context.set_input_shape("x", (b, CH, HW, HW))
            context.set_tensor_address("x", xs[b])
            context.set_tensor_address("y", y)
            context.set_tensor_address("m", m)
            context.execute_async_v3(0)
            if not (np.array_equal(y, expected[b]["y"]) and np.array_equal(m, expected[b]["m"])):
                mismatches.append((t, b))

    run_threads(work, THREADS)
    assert mismatches == []


def test_execute_releases_the_gil():
    """While one thread is inside a long execute_v2, another Python thread runs: it finishes its small job long
    before the execution returns (with the GIL held it could only run afterwards)."""
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    conv_relu_net(network, 32, 128, batch=16)
    config = builder.create_builder_config()
    config.num_threads = 1
    config.avg_timing_iterations = 0
    engine = builder.build_engine(network, config)
    context = engine.create_execution_context()
    x = np.ones((16, 32, 128, 128), np.float32)
    y = np.empty_like(x)
    m = np.empty((16, 32), np.float32)
    t0 = time.perf_counter()
    context.execute_v2([x, y, m])
    single = time.perf_counter() - t0

    outcomes = []
    for _ in range(3):
        go = threading.Event()
        done = {}

        def helper():
            go.wait()
            done["t"] = time.perf_counter()

        th = threading.Thread(target=helper)
        th.start()
        time.sleep(0.02)                     # the helper is blocked in go.wait()
        go.set()
        start = time.perf_counter()
        context.execute_v2([x, y, m])
        end = time.perf_counter()
        th.join()
        outcomes.append((start <= done["t"] <= start + 0.5 * (end - start), done["t"] - start, end - start, single))
        if outcomes[-1][0]:
            break
    assert single > 0.02, "execution too short (%.4f s) to tell" % single
    assert any(o[0] for o in outcomes), outcomes


def test_profilers_per_context_in_threads(engine):
    steps = engine.num_layers
    counts = [0] * THREADS

    class Counter(trt.IProfiler):
        def __init__(self, t):
            trt.IProfiler.__init__(self)
            self.t = t

        def report_layer_time(self, layer_name, ms):
            counts[self.t] += 1

    def work(t):
        context = engine.create_execution_context()
        context.profiler = Counter(t)
        x = np.ones((1, CH, HW, HW), np.float32)
        for _ in range(10):
            context.infer({"x": x})

    run_threads(work, THREADS)
    assert counts == [10 * steps] * THREADS


def test_builds_in_threads_log_to_their_own_logger():
    class Rec(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.messages = []

        def log(self, severity, msg):
            self.messages.append(msg)

    loggers = [Rec() for _ in range(THREADS)]
    engines = [None] * THREADS

    def work(t):
        builder = trt.Builder(loggers[t])
        network = builder.create_network(EXPLICIT)
        x = network.add_input("x", trt.float32, (1, 4, 8, 8))
        conv = network.add_convolution_nd(x, 4, (3, 3), np.full((4, 4, 3, 3), 0.1 * (t + 1), np.float32))
        conv.padding_nd = (1, 1)
        conv.name = "conv_of_thread_%d" % t
        relu = network.add_activation(conv.get_output(0), trt.ActivationType.RELU)
        relu.name = "relu_of_thread_%d" % t
        relu.get_output(0).name = "y"
        network.mark_output(relu.get_output(0))
        for _ in range(5):
            engines[t] = builder.build_engine(network, builder.create_builder_config())

    run_threads(work, THREADS)
    for t, logger in enumerate(loggers):
        mine = [m for m in logger.messages if "thread_%d" % t in m]
        others = [m for m in logger.messages if "thread_" in m and "thread_%d" % t not in m]
        assert mine, "logger %d got nothing about its own layers" % t
        assert others == [], "logger %d got another thread's messages: %r" % (t, others[:3])
    x = np.ones((1, 4, 8, 8), np.float32)
    for t, e in enumerate(engines):
        out = e.create_execution_context().infer({"x": x})["y"]
        # interior pixels: 4 channels x 9 taps x 0.1 (t+1)
        np.testing.assert_allclose(out[0, :, 1:-1, 1:-1], 3.6 * (t + 1), rtol=1e-5)


def test_errors_in_threads_keep_their_own_messages(engine):
    """Failing builds and plan loads in several threads at once: each exception names its own layer / problem."""
    plan = bytes(engine.serialize())
    results = [None] * (2 * THREADS)

    def work(i):
        if i % 2 == 0:
            builder = trt.Builder(trt.Logger(trt.Logger.INTERNAL_ERROR))
            network = builder.create_network(EXPLICIT)
            a = network.add_input("a", trt.float32, (2, 3 + i))
            b = network.add_input("b", trt.float32, (4 + i, 5))
            for _ in range(20):
                try:
                    mm = network.add_matrix_multiply(a, trt.MatrixOperation.NONE, b, trt.MatrixOperation.NONE)
                    mm.name = "matmul_%d" % i
                    network.mark_output(mm.get_output(0))
                    builder.build_serialized_network(network, builder.create_builder_config())
                    results[i] = "built?"
                    return
                except trt.ShapeError as e:
                    if "matmul_%d'" % i not in str(e):
                        results[i] = "wrong message: " + str(e)
                        return
                    network.unmark_output(mm.get_output(0))
            results[i] = "ok"
        else:
            runtime = trt.Runtime(trt.Logger(trt.Logger.INTERNAL_ERROR))
            for k in range(20):
                cut = 64 + (i * 37 + k) % (len(plan) - 64)
                try:
                    runtime.deserialize_cuda_engine(plan[:cut])
                    results[i] = "loaded a truncated plan"
                    return
                except trt.PlanError as e:
                    if "%d present" % (cut - 64) not in str(e):
                        results[i] = "wrong message: " + str(e)
                        return
                assert runtime.deserialize_cuda_engine(plan).num_io_tensors == 3
            results[i] = "ok"

    run_threads(work, 2 * THREADS)
    assert results == ["ok"] * (2 * THREADS)
