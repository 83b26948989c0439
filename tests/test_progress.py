"""Build progress reporting (IProgressMonitor) and cancellation."""
import io
import logging
import sys

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


# ---- every phase, in order, with its step counts (issue #13) ------------------------------------------------

def phases_of(events):
    return [e for e in events if e[0] in ("start", "finish")]


def test_serialized_build_reports_every_phase_in_order():
    builder, net = small_network()
    config = builder.create_builder_config()
    m = Monitor()
    config.progress_monitor = m
    plan = builder.build_serialized_network(net, config)
    n_steps = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan).num_layers
    n_pass = len(trt.builder_passes())
    assert n_pass >= 5
    assert phases_of(m.events) == [
        ("start", "Building engine", None, 4),
        ("start", "Optimization passes", "Building engine", n_pass), ("finish", "Optimization passes"),
        ("start", "Kernel selection", "Building engine", n_steps), ("finish", "Kernel selection"),
        ("start", "Weight packing", "Building engine", n_steps), ("finish", "Weight packing"),
        ("finish", "Building engine"),
        ("start", "Serializing engine", None, 1), ("finish", "Serializing engine")]
    steps = lambda phase: [e[2] for e in m.events if e[:2] == ("step", phase)]
    assert steps("Optimization passes") == list(range(n_pass))
    assert steps("Kernel selection") == steps("Weight packing") == list(range(n_steps))
    assert steps("Serializing engine") == [0]
    # the outer phase's steps fall between its sub-phases
    order = [e[:2] if e[0] == "step" else e[:2] for e in m.events if e[0] != "step" or e[1] == "Building engine"]
    assert order.index(("step", "Building engine")) < order.index(("start", "Optimization passes"))


@pytest.mark.parametrize("cancel_at", [("Optimization passes", 0), ("Optimization passes", "last"),
                                       ("Weight packing", 0), ("Serializing engine", 0)])
def test_cancel_in_new_phases(cancel_at):
    if cancel_at[1] == "last":
        cancel_at = (cancel_at[0], len(trt.builder_passes()) - 1)
    builder, net = small_network()
    config = builder.create_builder_config()
    m = Monitor(cancel_at)
    config.progress_monitor = m
    with pytest.raises(trt.StateError, match="cancelled by the progress monitor"):
        builder.build_serialized_network(net, config)
    assert ("finish", cancel_at[0]) in m.events  # the phase is closed even when cancelled
    config.progress_monitor = None
    assert builder.build_serialized_network(net, config).nbytes > 0


class Interrupting(Monitor):
    def __init__(self, where):
        super().__init__()
        self.where = where

    def phase_start(self, phase_name, parent_phase, num_steps):
        super().phase_start(phase_name, parent_phase, num_steps)
        if self.where == ("start", phase_name):
            raise KeyboardInterrupt

    def step_complete(self, phase_name, step):
        super().step_complete(phase_name, step)
        if self.where == ("step", phase_name):
            raise KeyboardInterrupt
        return True


@pytest.mark.parametrize("where", [("step", "Kernel selection"), ("start", "Weight packing"),
                                   ("step", "Optimization passes"), ("step", "Serializing engine")])
def test_keyboard_interrupt_in_a_monitor_propagates(where):
    builder, net = small_network()
    config = builder.create_builder_config()
    config.progress_monitor = Interrupting(where)
    with pytest.raises(KeyboardInterrupt):
        builder.build_serialized_network(net, config)
    config.progress_monitor = None
    assert builder.build_serialized_network(net, config).nbytes > 0


def test_exception_in_a_monitor_is_reported_not_fatal(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_value))

    class Broken(Monitor):
        def step_complete(self, phase_name, step):
            super().step_complete(phase_name, step)
            raise ValueError("monitor bug")

    builder, net = small_network()
    config = builder.create_builder_config()
    config.progress_monitor = Broken()
    assert builder.build_serialized_network(net, config).nbytes > 0
    assert seen and all(isinstance(e, ValueError) for e in seen)


# ---- INT8 calibration reports its batches ------------------------------------------------------------------

class Batches(trt.IInt8MinMaxCalibrator):
    def __init__(self, count):
        super().__init__()
        rng = np.random.default_rng(1)
        self.data = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(count)]

    def get_batch_size(self):
        return 1

    def get_batch(self, names):
        return [self.data.pop(0)] if self.data else None

    def read_calibration_cache(self):
        return None

    def write_calibration_cache(self, cache):
        pass


def test_calibration_phase_counts_batches_and_cancels():
    builder, net = small_network()
    config = builder.create_builder_config()
    config.set_flag(trt.BuilderFlag.INT8)
    config.int8_calibrator = Batches(3)
    m = Monitor()
    config.progress_monitor = m
    builder.build_engine(net, config)
    assert m.events[:5] == [("start", "Calibration", None, 0), ("step", "Calibration", 0),
                            ("step", "Calibration", 1), ("step", "Calibration", 2), ("finish", "Calibration")]
    assert m.events[5] == ("start", "Building engine", None, 4)  # the calibration engine's build is not reported
    builder, net = small_network()
    config = builder.create_builder_config()
    config.set_flag(trt.BuilderFlag.INT8)
    config.int8_calibrator = Batches(3)
    config.progress_monitor = Monitor(("Calibration", 1))
    with pytest.raises(trt.StateError, match="cancelled"):
        builder.build_engine(net, config)
    assert config.progress_monitor.events[-1] == ("finish", "Calibration")


# ---- trt.ProgressBar -----------------------------------------------------------------------------------------

class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_plain_line_covers_every_phase():
    stream = io.StringIO()  # not a terminal: the library bar draws anyway (only_tty=False)
    bar = trt.ProgressBar(stream, use_tqdm=False, interval=0.0)
    assert isinstance(bar, trt.IProgressMonitor) and not bar.uses_tqdm
    builder, net = small_network()
    config = builder.create_builder_config()
    config.progress_monitor = bar
    builder.build_serialized_network(net, config)
    text = stream.getvalue()
    frames = [f.strip() for f in text.split("\r") if f.strip()]
    for label in ("Building engine  0/4", "Building engine > Optimization passes", "Building engine > Kernel selection",
                  "Building engine > Weight packing", "Serializing engine  0/1", "Serializing engine  1/1"):
        assert any(label in f for f in frames), (label, frames)
    assert any(f.startswith("[####################] 100%  Building engine > Kernel selection") for f in frames)
    assert text.endswith("\r") and not bar.order  # cleared after the last phase
    quiet = io.StringIO()
    config.progress_monitor = trt.ProgressBar(quiet, use_tqdm=False, only_tty=True)
    builder.build_serialized_network(net, config)
    assert quiet.getvalue() == ""


def test_progress_bar_phase_context_manager():
    stream = FakeTTY()
    bar = trt.ProgressBar(stream, use_tqdm=False, interval=0.0)
    with bar.phase("Parsing ONNX model"):
        assert bar.current() == "Parsing ONNX model" and bar.fraction() == 0.0
    assert "Parsing ONNX model  1/1" in stream.getvalue() and bar.current() is None


def test_progress_bar_uses_tqdm_when_available(monkeypatch):
    made = []

    class FakeTqdm:
        def __init__(self, total=None, desc=None, file=None, leave=True, dynamic_ncols=False):
            self.total, self.n, self.desc, self.log, self.closed = total, 0, "", [], False
            made.append(self)

        def reset(self, total=None):
            self.total, self.n = total, 0

        def set_description_str(self, desc, refresh=True):
            self.desc = desc

        def refresh(self):
            self.log.append((self.desc, self.n, self.total))

        def close(self):
            self.closed = True

    monkeypatch.setattr(trt.progress, "_load_tqdm", lambda: FakeTqdm)
    bar = trt.ProgressBar(io.StringIO(), interval=0.0)
    assert bar.uses_tqdm
    builder, net = small_network()
    config = builder.create_builder_config()
    config.progress_monitor = bar
    engine = builder.build_engine(net, config)
    assert len(made) == 1 and made[0].closed
    log = made[0].log
    assert ("Building engine > Kernel selection", engine.num_layers, engine.num_layers) in log
    assert ("Building engine", 4, 4) in log


def test_progress_bar_cancel_flag():
    bar = trt.ProgressBar(io.StringIO(), use_tqdm=False)
    bar.cancel = True
    builder, net = small_network()
    config = builder.create_builder_config()
    config.progress_monitor = bar
    with pytest.raises(trt.StateError, match="cancelled"):
        builder.build_engine(net, config)


# ---- logging ------------------------------------------------------------------------------------------------

def test_logging_logger_forwards_with_levels(caplog):
    caplog.set_level(logging.DEBUG, logger="trtlite")
    builder = trt.Builder(trt.LoggingLogger())
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (2, 3))
    net.mark_output(net.add_activation(x, trt.ActivationType.RELU).get_output(0))
    builder.build_engine(net, builder.create_builder_config())
    recs = [r for r in caplog.records if r.name == "trtlite"]
    verbose = [r for r in recs if "running builder pass" in r.getMessage()]
    info = [r for r in recs if r.getMessage().startswith("built engine")]
    assert verbose and all(r.levelno == logging.DEBUG and r.trt_severity == trt.Severity.VERBOSE for r in verbose)
    assert len(info) == 1 and info[0].levelno == logging.INFO
    caplog.clear()
    bad = builder.create_network(0)
    bad.add_input("x", trt.float32, (2, 3))  # no output
    with pytest.raises(trt.Error):
        builder.build_engine(bad, builder.create_builder_config())
    errors = [r for r in caplog.records if r.name == "trtlite" and r.levelno == logging.ERROR]
    assert errors and "no outputs" in errors[0].getMessage() and errors[0].trt_severity == trt.Severity.ERROR


def test_logger_forward_keeps_min_severity(caplog, capsys):
    caplog.set_level(logging.DEBUG)
    logger = trt.Logger(trt.Logger.WARNING, forward_to_logging=True, logger_name="trtlite.test")
    logger.log(trt.Logger.INFO, "hidden")
    logger.log(trt.Logger.WARNING, "shown")
    logger.log(trt.Logger.INTERNAL_ERROR, "fatal")
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("trtlite.test", logging.WARNING, "shown"), ("trtlite.test", logging.CRITICAL, "fatal")]
    assert capsys.readouterr().err == ""  # forwarded, not printed
    trt.Logger(trt.Logger.INFO).log(trt.Logger.INFO, "printed")
    assert "[TRT] [I] printed" in capsys.readouterr().err
