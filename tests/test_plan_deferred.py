"""A plan given as bytes loads in two halves (serialize/load_weights.c, py_engine.c): deserialize_cuda_engine
checks the whole plan and keeps the bytes object; the weights are copied out, packed and the plain copies
dropped at the engine's first context / serialize / inspector / refit.  When the engine then holds the plan's
only reference (deserialize_cuda_engine(f.read())) the plan's pages are given back as they are read, so the
load peaks at about one copy of the weights; a plan the caller still holds is never changed.  These tests
check byte counters (the engine's discarded plan bytes, the inspector's plain bytes), never RSS."""
import gc
import json

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
MO = trt.MatrixOperation
LOGGER = trt.Logger(trt.Logger.WARNING)


def info(engine):
    return json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))


def mlp(net, rng, S=5, D=200, F=330):
    """x W1 + b -> relu -> x W2 (+ a constant added to the output, so a large constant tensor is in the plan);
    odd sizes so that the weights start at unaligned plan offsets.  Returns (inputs, output, float64 reference,
    weight bytes)."""
    x = rng.standard_normal((1, S, D)).astype(np.float32)
    w1 = (rng.standard_normal((1, D, F)) * 0.1).astype(np.float32)
    b1 = (rng.standard_normal((1, 1, F)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((1, F, D)) * 0.1).astype(np.float32)
    c = rng.standard_normal((1, S, D)).astype(np.float32)
    xt = net.add_input("x", trt.float32, x.shape)
    h = net.add_matrix_multiply(xt, MO.NONE, net.add_constant(w1.shape, w1).get_output(0), MO.NONE).get_output(0)
    h = net.add_elementwise(h, net.add_constant(b1.shape, b1).get_output(0), trt.ElementWiseOperation.SUM).get_output(0)
    h = net.add_activation(h, trt.ActivationType.RELU).get_output(0)
    y = net.add_matrix_multiply(h, MO.NONE, net.add_constant(w2.shape, w2).get_output(0), MO.NONE).get_output(0)
    y = net.add_elementwise(y, net.add_constant(c.shape, c).get_output(0), trt.ElementWiseOperation.PROD).get_output(0)
    xf = x.astype(np.float64)
    ref = (np.maximum(xf @ w1[0] + b1, 0) @ w2[0]) * c
    return {"x": x}, y, ref, w1.nbytes + w2.nbytes + c.nbytes


def build(level=None, refit=False, seed=0):
    builder = trt.Builder(LOGGER)
    net = builder.create_network(EXPLICIT)
    inputs, y, ref, wbytes = mlp(net, np.random.default_rng(seed))
    y.name = "y"
    net.mark_output(y)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if level is not None:
        config.builder_optimization_level = level
    if refit:
        config.set_flag(trt.BuilderFlag.REFIT)
    engine = builder.build_engine(net, config)
    assert engine is not None
    return engine, inputs, ref, wbytes


def run(engine, inputs):
    return engine.create_execution_context().infer(inputs)["y"]


@pytest.mark.parametrize("level", [None, 0])
def test_temporary_bytes_plan_is_discarded_as_read(level):
    """deserialize_cuda_engine(bytes(...)) (the caller keeps no reference): weights pending until the first
    context, then loaded with most of the plan given back, the same results (float64 reference), plain
    bytes and plan bytes as the built engine; level 0 (reference kernels, plain weights kept) as well."""
    engine, inputs, ref, wbytes = build(level)
    plan = bytes(engine.serialize())
    loaded = trt.Runtime(LOGGER).deserialize_cuda_engine(bytes(engine.serialize()))
    assert loaded._weights_pending and loaded._plan_bytes_discarded == 0
    assert loaded.num_io_tensors == 2 and loaded.get_tensor_name(1) == "y"  # metadata needs no weights
    out = run(loaded, inputs)
    assert not loaded._weights_pending
    assert loaded._plan_bytes_discarded >= wbytes - 16 * 4096, (loaded._plan_bytes_discarded, wbytes, len(plan))
    assert loaded._plan_bytes_discarded <= len(plan)
    assert_close(out, ref)
    assert info(loaded)["plain_weight_bytes"] == info(engine)["plain_weight_bytes"]
    assert bytes(loaded.serialize()) == plan


def test_plan_the_caller_holds_is_not_changed():
    """A plan the caller still references loads by copying: its bytes stay as they were, nothing is discarded."""
    engine, inputs, ref, _ = build()
    plan = bytes(engine.serialize())
    keep = bytearray(plan)
    loaded = trt.Runtime(LOGGER).deserialize_cuda_engine(plan)
    assert loaded._weights_pending
    assert_close(run(loaded, inputs), ref)
    assert loaded._plan_bytes_discarded == 0
    assert plan == bytes(keep)
    del loaded
    gc.collect()
    assert plan == bytes(keep)


def test_other_buffers_load_at_once():
    """bytearray / memoryview / IHostMemory plans may change or go after the call: they load immediately."""
    engine, inputs, ref, _ = build()
    host = engine.serialize()
    plan = bytes(host)
    for buf in (bytearray(plan), memoryview(plan), host, np.frombuffer(plan, np.uint8)):
        loaded = trt.Runtime(LOGGER).deserialize_cuda_engine(buf)
        assert not loaded._weights_pending and loaded._plan_bytes_discarded == 0
        assert_close(run(loaded, inputs), ref)
    assert bytes(host) == plan


@pytest.mark.parametrize("first", ["serialize", "inspector", "context"])
def test_each_first_use_loads(first):
    """Whichever use comes first loads the weights (from a temporary plan) and the engine then works."""
    engine, inputs, ref, _ = build()
    plan = bytes(engine.serialize())
    loaded = trt.Runtime(LOGGER).deserialize_cuda_engine(bytes(bytearray(plan)))  # (bytes(plan) is plan)
    if first == "serialize":
        assert bytes(loaded.serialize()) == plan
    elif first == "inspector":
        assert len(info(loaded)["layers"]) == len(info(engine)["layers"])
    else:
        loaded.create_execution_context()
    assert not loaded._weights_pending and loaded._plan_bytes_discarded > 0
    assert_close(run(loaded, inputs), ref)
    assert bytes(loaded.serialize()) == plan


def test_pending_engine_dropped_unused():
    """An engine destroyed before its weights were loaded frees only its own memory (no crash, no leak of the
    plan's pointers)."""
    engine, inputs, ref, _ = build()
    for _ in range(3):
        loaded = trt.Runtime(LOGGER).deserialize_cuda_engine(bytes(engine.serialize()))
        assert loaded._weights_pending
        del loaded
        gc.collect()
    assert_close(run(engine, inputs), ref)


def test_corrupt_plan_still_fails_at_deserialize():
    """Checks stay in deserialize_cuda_engine: a flipped byte in the weights region is the checksum's error
    there, not at the first use."""
    engine, _, _, _ = build()
    plan = bytearray(engine.serialize())
    plan[len(plan) // 2] ^= 0x40
    with pytest.raises(Exception, match="checksum"):
        trt.Runtime(LOGGER).deserialize_cuda_engine(bytes(plan))


def test_refittable_engine_from_temporary_plan_refits():
    """A refittable engine loaded from a temporary plan keeps its plain weights and still refits (the Refitter
    is its first use), matching float64 with the new weights."""
    rng = np.random.default_rng(3)
    C, K = 300, 170
    x = rng.standard_normal((1, C, 1, 1)).astype(np.float32)
    w = (rng.standard_normal((K, C)) * 0.1).astype(np.float32)
    b = (rng.standard_normal(K) * 0.1).astype(np.float32)
    builder = trt.Builder(LOGGER)
    net = builder.create_network(EXPLICIT)
    y = net.add_fully_connected(net.add_input("x", trt.float32, x.shape), K, trt.Weights(w), trt.Weights(b))
    y.get_output(0).name = "y"
    net.mark_output(y.get_output(0))
    config = builder.create_builder_config()
    config.set_flag(trt.BuilderFlag.REFIT)
    engine = builder.build_engine(net, config)
    loaded = trt.Runtime(LOGGER).deserialize_cuda_engine(bytes(engine.serialize()))
    assert loaded._weights_pending
    refitter = trt.Refitter(loaded, LOGGER)
    layer = refitter.get_all()[0][0]  # the first call that reads the engine's weights list loads them
    assert not loaded._weights_pending and loaded._plan_bytes_discarded > 0
    assert info(loaded)["plain_weight_bytes"] >= w.nbytes
    xf = x.reshape(C).astype(np.float64)
    assert_close(run(loaded, {"x": x}).reshape(K), w.astype(np.float64) @ xf + b)
    w2 = (rng.standard_normal((K, C)) * 0.1).astype(np.float32)
    assert refitter.set_weights(layer, trt.WeightsRole.KERNEL, trt.Weights(w2))
    assert refitter.refit_cuda_engine()
    assert_close(run(loaded, {"x": x}).reshape(K), w2.astype(np.float64) @ xf + b)
