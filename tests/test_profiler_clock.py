"""The per-layer profiler's clock: wall time by default, the calling thread's CPU time with TRTL_PROFILE_CLOCK=thread
(read by trtl_context_set_profiler, which the bindings call at each execution with a profiler), told apart by a layer that sleeps (wall time passes, no CPU time is used)."""
import time

import numpy as np
import pytest

import trtlite as trt

SLEEP_S = 0.06


class Sleeper(trt.IPluginV2):
    """y = x after sleeping SLEEP_S."""
    plugin_type = "PySleepClock_TEST"
    plugin_version = "1"
    num_outputs = 1

    def get_output_dtype(self, index, input_dtypes):
        return trt.DataType.FLOAT

    def enqueue(self, inputs, outputs):
        time.sleep(SLEEP_S)
        outputs[0][...] = inputs[0]

    def serialize(self):
        return b""


@pytest.fixture(scope="module")
def context():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, (2, 64))
    sleep = net.add_plugin_v2(inputs=[x], plugin=Sleeper())
    sleep.name = "sleep"
    relu = net.add_activation(sleep.get_output(0), trt.ActivationType.RELU)
    relu.name = "relu"
    relu.get_output(0).name = "y"
    net.mark_output(relu.get_output(0))
    cfg = builder.create_builder_config()
    cfg.num_threads = 1
    return builder.build_engine(net, cfg).create_execution_context()


def profile(ctx, monkeypatch, clock):
    if clock is None:
        monkeypatch.delenv("TRTL_PROFILE_CLOCK", raising=False)
    else:
        monkeypatch.setenv("TRTL_PROFILE_CLOCK", clock)
    prof = trt.LayerProfiler()
    ctx.profiler = prof
    x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(2, 64)
    y = ctx.infer({"x": x})["y"]
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    ctx.profiler = None
    monkeypatch.delenv("TRTL_PROFILE_CLOCK", raising=False)
    return {r["name"]: r["timeMs"] for r in prof.rows()}


@pytest.mark.parametrize("clock", [None, "wall", "cpu", ""])
def test_wall_clock_by_default_and_for_other_values(context, monkeypatch, clock):
    t = profile(context, monkeypatch, clock)
    assert set(t) == {"sleep", "relu"}
    assert t["sleep"] >= 0.9 * SLEEP_S * 1e3


def test_thread_clock_counts_cpu_time_only(context, monkeypatch):
    t = profile(context, monkeypatch, "thread")
    assert set(t) == {"sleep", "relu"}
    assert 0.0 <= t["sleep"] < 0.5 * SLEEP_S * 1e3  # a sleep uses no CPU time
    assert t["relu"] >= 0.0
    # and back to wall time without the variable
    assert profile(context, monkeypatch, None)["sleep"] >= 0.9 * SLEEP_S * 1e3
