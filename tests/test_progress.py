"""Build progress reporting (IProgressMonitor) and cancellation."""
import numpy as np
import pytest

import trtlite as trt


class Monitor(trt.IProgressMonitor):
    def __init__(self, cancel_at=None):
        self.events, self.cancel_at = [], cancel_at

    def phase_start(self, phase_name, parent_phase, num_steps):
        self.events.append(("start", phase_name, parent_phase, num_steps))

    def step_complete(self, phase_name, step):
        self.events.append(("step", phase_name, step))
        return (phase_name, step) != self.cancel_at

    def phase_finish(self, phase_name):
        self.events.append(("finish", phase_name))


def small_network():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (1, 3, 8, 8))
    w = np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32)
    conv = net.add_convolution_nd(x, 4, (3, 3), w)
    pool = net.add_pooling_nd(conv.get_output(0), trt.PoolingType.MAX, (2, 2))
    net.mark_output(pool.get_output(0))
    return builder, net


def test_phases_nest_and_steps_cover_every_layer():
    builder, net = small_network()
    config = builder.create_builder_config()
    m = Monitor()
    config.progress_monitor = m
    engine = builder.build_engine(net, config)
    starts = [e for e in m.events if e[0] == "start"]
    assert starts[0] == ("start", "Building engine", None, 4)
    assert ("start", "Kernel selection", "Building engine", engine.num_layers) in starts
    assert [e[2] for e in m.events if e[:2] == ("step", "Kernel selection")] == list(range(engine.num_layers))
    assert [e[2] for e in m.events if e[:2] == ("step", "Building engine")] == [0, 1, 2, 3]
    assert m.events[-1] == ("finish", "Building engine")
    assert m.events.index(("finish", "Kernel selection")) < len(m.events) - 1


@pytest.mark.parametrize("cancel_at", [("Building engine", 0), ("Kernel selection", 0), ("Building engine", 3)])
def test_step_complete_false_cancels(cancel_at):
    builder, net = small_network()
    config = builder.create_builder_config()
    config.progress_monitor = Monitor(cancel_at)
    with pytest.raises(trt.StateError, match="cancelled"):
        builder.build_serialized_network(net, config)
    config.progress_monitor = None
    assert builder.build_serialized_network(net, config).nbytes > 0


def test_progress_monitor_must_have_methods():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    with pytest.raises(TypeError, match="IProgressMonitor"):
        builder.create_builder_config().progress_monitor = object()
