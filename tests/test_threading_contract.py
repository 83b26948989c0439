"""The bindings' threading contract (issue 8 item 1, issue 9 items 3, 4 and 10).

An execution context runs one call at a time: calls from other threads wait for it (with the GIL released), a call
from inside its own execution (a Python plugin's enqueue, a profiler) is refused with StateError.  A network and a
builder config are refused to everyone (StateError) while a build uses them.  Every test has a deadline: a hang fails
instead of blocking the suite.
"""
import threading
import time

import numpy as np
import pytest

import trtlite as trt

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
DEADLINE = 120.0   # seconds for any one threaded scenario (each takes well under 10 s when it works)


def conv_net(network, channels=16, hw=32, seed=0):
    """x (2, C, hw, hw) -> conv3x3(pad 1) -> relu -> conv3x3(pad 1) -> "y"; weights from `seed`."""
    rng = np.random.default_rng(seed)
    x = network.add_input("x", trt.float32, (2, channels, hw, hw))
    w1 = (rng.standard_normal((channels, channels, 3, 3)) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((channels, channels, 3, 3)) * 0.2).astype(np.float32)
    c1 = network.add_convolution_nd(x, channels, (3, 3), w1)
    c1.padding_nd = (1, 1)
    r = network.add_activation(c1.get_output(0), trt.ActivationType.RELU)
    c2 = network.add_convolution_nd(r.get_output(0), channels, (3, 3), w2)
    c2.padding_nd = (1, 1)
    c2.get_output(0).name = "y"
    network.mark_output(c2.get_output(0))
    return w1, w2


def conv_ref(x, w1, w2):
    """The same network in numpy float64."""
    def conv(a, w):
        ap = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
        n, _, h, wd = a.shape
        out = np.zeros((n, w.shape[0], h, wd))
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,kc->nkhw", ap[:, :, i:i + h, j:j + wd], w[:, :, i, j].astype(np.float64))
        return out
    return conv(np.maximum(conv(x.astype(np.float64), w1), 0.0), w2)


@pytest.fixture(scope="module")
def conv_engine():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    network = builder.create_network(EXPLICIT)
    w1, w2 = conv_net(network)
    config = builder.create_builder_config()
    config.num_threads = 2
    config.avg_timing_iterations = 0
    return builder.build_engine(network, config), w1, w2


def run_with_deadline(targets):
    """Runs each callable in its own thread; fails (instead of hanging) if any is not done by DEADLINE."""
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: B036  (reported to the test)
                errors.append(e)
        return run

    threads = [threading.Thread(target=wrap(fn), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    end = time.monotonic() + DEADLINE
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "a thread is stuck (hang)"
    if errors:
        raise errors[0]


def test_two_threads_execute_v2_on_one_context_are_serialized(conv_engine):
    """Two threads x 30 execute_v2 on ONE context, each with its own arrays: every output is the numpy reference
    of its own input (no call sees the other's shapes or buffers) and nothing hangs."""
    engine, w1, w2 = conv_engine
    context = engine.create_execution_context()
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((2, 16, 32, 32)).astype(np.float32) for _ in range(2)]
    refs = [conv_ref(x, w1, w2) for x in inputs]
    bad = []

    def worker(k):
        def run():
            y = np.empty((2, 16, 32, 32), np.float32)
            for i in range(30):
                y[...] = np.nan
                assert context.execute_v2([inputs[k], y]) is True
                if not np.allclose(y, refs[k], rtol=1e-4, atol=1e-4):
                    bad.append((k, i))
        return run

    run_with_deadline([worker(0), worker(1)])
    assert bad == []


def test_num_threads_set_while_another_thread_executes(conv_engine):
    """Setting context.num_threads waits for a running execute (it replaces the pool that execute uses): no
    deadlock, and every result stays right; the getter reports what was set."""
    engine, w1, w2 = conv_engine
    context = engine.create_execution_context()
    x = np.random.default_rng(2).standard_normal((2, 16, 32, 32)).astype(np.float32)
    ref = conv_ref(x, w1, w2)
    stop = threading.Event()
    bad = []
    runs = []

    def executor():
        y = np.empty_like(x)
        try:
            while not stop.is_set() or len(runs) < 5:
                context.execute_v2([x, y])
                runs.append(1)
                if not np.allclose(y, ref, rtol=1e-4, atol=1e-4):
                    bad.append(len(runs))
        finally:
            stop.set()

    def setter():
        try:
            for i in range(40):
                context.num_threads = 1 + i % 3
                assert context.num_threads == 1 + i % 3
                time.sleep(0.002)
        finally:
            stop.set()

    run_with_deadline([executor, setter])
    assert bad == [] and len(runs) >= 5


def test_eight_threads_own_contexts_bit_identical_to_serial(conv_engine):
    """8 threads, each with its own context and input, 10 runs each: every output equals the serial run's
    bit for bit."""
    engine, _, _ = conv_engine
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((2, 16, 32, 32)).astype(np.float32) for _ in range(8)]
    serial_ctx = engine.create_execution_context()
    serial = []
    for x in inputs:
        y = np.empty_like(x)
        serial_ctx.execute_v2([x, y])
        serial.append(y)
    contexts = [engine.create_execution_context() for _ in range(8)]
    bad = []

    def worker(k):
        def run():
            y = np.empty_like(inputs[k])
            for i in range(10):
                y[...] = np.nan
                contexts[k].execute_v2([inputs[k], y])
                if not np.array_equal(y, serial[k]):
                    bad.append((k, i))
        return run

    run_with_deadline([worker(k) for k in range(8)])
    assert bad == []


class Doubler(trt.IPluginV2):
    """y = 2x; its enqueue first tries to run `Doubler.context` again (re-entrantly) and records what happened."""
    plugin_type = "Doubler_REENTRY_TEST"
    context = None
    bindings = None
    seen = []

    def enqueue(self, inputs, outputs):
        try:
            Doubler.context.execute_v2(Doubler.bindings)
            Doubler.seen.append("ran")
        except trt.StateError as e:
            Doubler.seen.append(e)
        outputs[0][...] = inputs[0] * 2


def doubler_engine():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    network = builder.create_network(EXPLICIT)
    x = network.add_input("x", trt.float32, (2, 3))
    layer = network.add_plugin_v2([x], Doubler())
    relu = network.add_activation(layer.get_output(0), trt.ActivationType.RELU)
    relu.get_output(0).name = "y"
    network.mark_output(relu.get_output(0))
    return builder.build_engine(network, builder.create_builder_config())


def test_reentrant_execute_from_a_python_plugin_is_refused():
    """A Python plugin's enqueue calling execute_v2 on the context that runs it gets StateError naming the context
    (before the fix the inner call ran and the outer call returned the inner call's result); the outer call's
    output is its own."""
    engine = doubler_engine()
    context = engine.create_execution_context()
    context.name = "ctx-under-test"
    x = np.array([[1, -2, 3], [-4, 5, 6]], np.float32)
    y = np.empty_like(x)
    inner_x = np.full((2, 3), 100.0, np.float32)
    Doubler.context, Doubler.bindings, Doubler.seen = context, [inner_x, np.empty_like(x)], []
    try:
        assert context.execute_v2([x, y]) is True
    finally:
        Doubler.context = Doubler.bindings = None
    np.testing.assert_array_equal(y, np.maximum(2 * x, 0))
    assert len(Doubler.seen) == 1 and isinstance(Doubler.seen[0], trt.StateError), Doubler.seen
    assert "ctx-under-test" in str(Doubler.seen[0]) and "execute_v2" in str(Doubler.seen[0])


def test_reentrant_execute_from_a_profiler_is_refused(conv_engine):
    """A profiler's report_layer_time calling execute_v2 (or set_input_shape, num_threads) on the profiled
    context gets StateError; the outer call completes with the right output."""
    engine, w1, w2 = conv_engine
    context = engine.create_execution_context()
    x = np.random.default_rng(4).standard_normal((2, 16, 32, 32)).astype(np.float32)
    y = np.empty_like(x)
    seen = []

    class Reenter(trt.IProfiler):
        def report_layer_time(self, layer_name, ms):
            for call in (lambda: context.execute_v2([x, np.empty_like(x)]),
                         lambda: setattr(context, "num_threads", 1),
                         lambda: context.set_input_shape("x", x.shape)):
                try:
                    call()
                    seen.append("ran")
                except trt.StateError as e:
                    seen.append(e)

    context.profiler = Reenter()
    assert context.execute_v2([x, y]) is True
    np.testing.assert_allclose(y, conv_ref(x, w1, w2), rtol=1e-4, atol=1e-4)
    assert seen and all(isinstance(e, trt.StateError) for e in seen), seen
    context.profiler = None
    context.num_threads = 1                   # usable again once the call returned
    assert context.num_threads == 1


def big_network(builder):
    """A network whose build takes a moment (a chain of convolutions, kernels timed)."""
    network = builder.create_network(EXPLICIT)
    rng = np.random.default_rng(5)
    t = network.add_input("x", trt.float32, (1, 8, 16, 16))
    for _ in range(6):
        c = network.add_convolution_nd(t, 8, (3, 3), (rng.standard_normal((8, 8, 3, 3)) * 0.1).astype(np.float32))
        c.padding_nd = (1, 1)
        t = c.get_output(0)
    network.mark_output(t)
    return network


def test_changing_network_or_config_during_a_build_is_refused():
    """While a build runs (GIL released), another thread adding a layer, reading a shape or changing the
    config gets StateError naming what was refused; afterwards both are usable and the engine is right."""
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    network = big_network(builder)
    conv, out = network[0], network.get_output(0)      # taken before the build
    config = builder.create_builder_config()
    started, attempted = threading.Event(), threading.Event()
    results = {}

    class Monitor(trt.IProgressMonitor):
        def phase_start(self, phase_name, parent_phase, num_steps):
            started.set()
            attempted.wait(DEADLINE)          # the build stays in progress until the other thread tried

        def step_complete(self, phase_name, step):
            return True

        def phase_finish(self, phase_name):
            pass

    config.progress_monitor = Monitor()

    def build():
        results["engine"] = builder.build_engine(network, config)

    def meddle():
        started.wait(DEADLINE)
        try:
            for name, call in (("add_identity", lambda: network.add_identity(network.get_input(0))),
                               ("layer", lambda: network[0]),
                               ("num_layers", lambda: network.num_layers),
                               ("avg_timing_iterations", lambda: setattr(config, "avg_timing_iterations", 3)),
                               ("set_flag", lambda: config.set_flag(trt.BuilderFlag.FP16)),
                               ("build_engine",
                                lambda: builder.build_engine(network, builder.create_builder_config())),
                               ("layer attribute", lambda: conv.padding_nd),
                               ("set layer attribute", lambda: setattr(conv, "padding_nd", (0, 0))),
                               ("tensor shape", lambda: out.shape),
                               ("tensor name", lambda: setattr(out, "name", "renamed"))):
                try:
                    call()
                    results[name] = "ran"
                except trt.StateError as e:
                    results[name] = e
        finally:
            attempted.set()

    n_before = network.num_layers
    run_with_deadline([build, meddle])
    for name in ("add_identity", "layer", "num_layers", "avg_timing_iterations", "set_flag", "build_engine",
                 "layer attribute", "set layer attribute", "tensor shape", "tensor name"):
        assert isinstance(results[name], trt.StateError), (name, results[name])
    assert "network" in str(results["add_identity"]) and "add_identity" in str(results["add_identity"])
    assert "avg_timing_iterations" in str(results["avg_timing_iterations"])
    assert network.num_layers == n_before       # nothing was added
    assert tuple(conv.padding_nd) == (1, 1) and out.name != "renamed"
    assert not config.get_flag(trt.BuilderFlag.FP16)
    network.add_identity(network.get_input(0))  # usable again
    config.avg_timing_iterations = 2
    context = results["engine"].create_execution_context()
    x = np.random.default_rng(6).standard_normal((1, 8, 16, 16)).astype(np.float32)
    y = np.empty_like(x)
    context.execute_v2([x, y])
    assert np.isfinite(y).all() and np.abs(y).sum() > 0


def test_build_callbacks_cannot_touch_the_network_being_built():
    """The build's own logger touching the network it builds is refused the same way (it runs inside the build)."""
    seen = []

    class Meddler(trt.ILogger):
        def log(self, severity, msg):
            if not seen:
                try:
                    network.add_identity(network.get_input(0))
                    seen.append("ran")
                except trt.StateError as e:
                    seen.append(e)

    builder = trt.Builder(Meddler())
    network = big_network(builder)
    n_before = network.num_layers
    builder.build_engine(network, builder.create_builder_config())
    assert seen and isinstance(seen[0], trt.StateError), seen
    assert network.num_layers == n_before
