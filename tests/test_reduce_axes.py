"""Reductions over non-trailing axes (kernel reduce.axes, csrc/kernels/x86/reduce_axes.c) against numpy float64:
AdderNet's channel sums, several separated axes, NaN / +-Inf for MAX and MIN, on the optimized kernel (checked by
name) and on the reference kernels (builder level 0)."""
import json

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


def run_reduce(x, op, axes, keep, level=None):
    """Builds x -> IReduceLayer(op, axes, keep) (default level: the optimized kernels, untimed) and runs it; returns
    (output, kernel names of the engine)."""
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    t = net.add_input("x", trt.float32, x.shape)
    y = net.add_reduce(t, getattr(trt.ReduceOperation, op), sum(1 << a for a in axes), keep).get_output(0)
    y.name = "y"
    net.mark_output(y)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if level is not None:
        config.builder_optimization_level = level
    engine = builder.build_engine(net, config)
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return engine.create_execution_context().infer({"x": x})["y"], [l["kernel"] for l in info["layers"]]


def check(x, op, axes, keep):
    want = refs.reduce(x, op, axes, keep)
    for level in (None, 0):
        out, kernels = run_reduce(x, op, axes, keep, level)
        if level is None:
            assert kernels == ["reduce.axes"], kernels
        assert_close(out, want, rtol=3e-4)


@pytest.mark.parametrize("shape,axes", [((1, 6, 25, 24, 24), (2,)),   # AdderNet, first layer (fewer filters)
                                        ((2, 5, 120, 8, 8), (2,)),    # AdderNet, second layer (fewer channels)
                                        ((3, 37, 5, 131), (1, 2)),    # rows of 131 (128 + tail)
                                        ((4, 3, 6, 10), (0, 2)),      # two reduced groups, a kept one between
                                        ((4, 3, 6, 10), (1, 3)),      # runs: reduced innermost and one further out
                                        ((2, 1, 7, 1, 5), (0, 3))])   # size-1 dims
@pytest.mark.parametrize("op", refs.REDUCE_OPS)
def test_reduce_axes(shape, axes, op):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(np.float32)
    if op == "PROD":
        x = (1 + 0.05 * x).astype(np.float32)
    check(x, op, axes, keep=bool(len(shape) % 2))


@pytest.mark.parametrize("op", ["MAX", "MIN", "SUM"])
@pytest.mark.parametrize("axes", [(0,), (0, 2), (1, 3)])
def test_reduce_axes_nan_inf(op, axes):
    """A NaN anywhere in a reduced slice makes its result NaN; +-Inf wins MAX / MIN and sums to +-Inf."""
    x = np.random.default_rng(5).standard_normal((3, 4, 5, 19)).astype(np.float32)
    x[1, 2, 3, 4] = np.nan
    x[2, 0, 1, 17] = np.inf
    x[0, 3, 4, 0] = -np.inf
    want = refs.reduce(x, op, axes, True)
    assert np.isnan(want).any() and np.isinf(want).any()
    check(x, op, axes, True)
