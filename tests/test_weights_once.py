"""An engine holds its weights once (engine/weights.c): a kernel that packs a layer's weights
(linear / fully_connected.packed_gemm) keeps them only packed, the plain copy is freed after packing (built
or loaded from a plan), plans re-derive the values from the packed state, refittable engines keep the plain
copy.  The inspector's engine information reports the plain bytes the engine still holds
("plain_weight_bytes"), which is what these tests check (a byte count, not a noisy RSS measurement)."""
import json

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
MO = trt.MatrixOperation
PACKED = ("linear.packed_gemm", "fully_connected.packed_gemm")
needs_avx2 = pytest.mark.skipif(not {"avx2", "fma"} <= set(trt.cpu_features()),
                                reason="the packed GEMM kernels need AVX2 + FMA")


def info(engine):
    return json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))


def encoder_like(net, rng, S=7, D=48, F=80):
    """x W1 + b1 -> relu -> x W2 + b1[:D] + residual; W1 [1, D, F], W2 [1, F, D].
    Returns (inputs, outputs, float64 references, bytes of the big weights)."""
    x = rng.standard_normal((1, S, D)).astype(np.float32)
    w1 = (rng.standard_normal((1, D, F)) * 0.2).astype(np.float32)
    b1 = (rng.standard_normal((1, 1, F)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((1, F, D)) * 0.2).astype(np.float32)
    xt = net.add_input("x", trt.float32, x.shape)
    h = net.add_matrix_multiply(xt, MO.NONE, net.add_constant(w1.shape, w1).get_output(0), MO.NONE).get_output(0)
    h = net.add_elementwise(h, net.add_constant(b1.shape, b1).get_output(0),
                            trt.ElementWiseOperation.SUM).get_output(0)
    h = net.add_activation(h, trt.ActivationType.RELU).get_output(0)
    y = net.add_matrix_multiply(h, MO.NONE, net.add_constant(w2.shape, w2).get_output(0),
                                MO.NONE).get_output(0)
    y = net.add_elementwise(y, net.add_constant((1, 1, D), b1[..., :D].copy()).get_output(0),
                            trt.ElementWiseOperation.SUM).get_output(0)
    y = net.add_elementwise(y, xt, trt.ElementWiseOperation.SUM).get_output(0)
    xf = x.astype(np.float64)
    ref = xf + np.maximum(xf @ w1[0] + b1, 0) @ w2[0] + b1[..., :D]
    return {"x": x}, [y], [ref], w1.nbytes + w2.nbytes


FC_W = (np.random.default_rng(2).standard_normal((40, 24)) * 0.2).astype(np.float32)


def fc_net(net, rng, C=24, K=40):
    """A fully connected layer (refittable) on [1, C, 1, 1]."""
    x = rng.standard_normal((1, C, 1, 1)).astype(np.float32)
    w = FC_W
    b = (rng.standard_normal(K) * 0.1).astype(np.float32)
    xt = net.add_input("x", trt.float32, x.shape)
    y = net.add_fully_connected(xt, K, trt.Weights(w), trt.Weights(b)).get_output(0)
    ref = (w.astype(np.float64) @ x.reshape(C).astype(np.float64) + b).reshape(1, K, 1, 1)
    return {"x": x}, [y], [ref], w.nbytes


def build(make, flags=()):
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    inputs, outs, ref, wbytes = make(net, np.random.default_rng(0))
    for i, o in enumerate(outs):
        o.name = "out%d" % i
        net.mark_output(o)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0  # the first applicable kernel: the packed GEMM where the CPU has it
    for f in flags:
        config.set_flag(f)
    engine = builder.build_engine(net, config)
    assert engine is not None
    return engine, inputs, ref, wbytes


def check(engine, inputs, ref):
    outs = engine.create_execution_context().infer(inputs)
    for i, r in enumerate(ref):
        assert_close(outs["out%d" % i], r)


@needs_avx2
def test_packed_weights_are_held_once_built_and_loaded():
    """Built and loaded from the plan, the two projections keep only the packed copy (the engine holds at most
    the bias in plain form); the loaded engine serializes to the same plan bytes and both compute the
    float64 reference."""
    engine, inputs, ref, wbytes = build(encoder_like)
    doc = info(engine)
    kernels = [layer["kernel"] for layer in doc["layers"]]
    assert kernels.count("linear.packed_gemm") == 2, kernels
    assert doc["plain_weight_bytes"] < wbytes // 4, (doc["plain_weight_bytes"], wbytes)
    # the packed copies are counted instead (tiles padded to the register width: at most twice the weights)
    assert wbytes <= doc["packed_weight_bytes"] <= 2 * wbytes + 4096, (doc["packed_weight_bytes"], wbytes)
    check(engine, inputs, ref)
    plan = bytes(engine.serialize())
    loaded = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)
    assert info(loaded)["plain_weight_bytes"] == doc["plain_weight_bytes"]
    assert info(loaded)["packed_weight_bytes"] == doc["packed_weight_bytes"]
    check(loaded, inputs, ref)
    assert bytes(loaded.serialize()) == plan


@needs_avx2
def test_plain_weights_kept_without_packing_kernel():
    """Level 0 (reference kernels, which read the plain weights) keeps them: the counter sees them."""
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    inputs, outs, ref, wbytes = encoder_like(net, np.random.default_rng(0))
    outs[0].name = "out0"
    net.mark_output(outs[0])
    config = builder.create_builder_config()
    config.builder_optimization_level = 0
    engine = builder.build_engine(net, config)
    assert info(engine)["plain_weight_bytes"] >= wbytes
    check(engine, inputs, ref)


@needs_avx2
def test_refittable_engine_keeps_plain_weights():
    """A refittable engine keeps the plain copy beside the packed one (refit writes there and packs again): a
    fully connected layer on the packed kernel still refits, built and loaded from its plan."""
    engine, inputs, ref, wbytes = build(fc_net)
    assert [layer["kernel"] for layer in info(engine)["layers"]] == ["fully_connected.packed_gemm"]
    assert info(engine)["plain_weight_bytes"] < wbytes
    check(engine, inputs, ref)
    engine, inputs, ref, wbytes = build(fc_net, flags=(trt.BuilderFlag.REFIT,))
    assert info(engine)["layers"][0]["kernel"] == "fully_connected.packed_gemm"
    assert info(engine)["plain_weight_bytes"] >= wbytes
    loaded = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(engine.serialize())
    assert info(loaded)["plain_weight_bytes"] >= wbytes
    x = inputs["x"].reshape(24).astype(np.float64)
    w2 = np.random.default_rng(1).standard_normal((40, 24)).astype(np.float32)
    bias = ref[0].reshape(40) - FC_W.astype(np.float64) @ x
    for e in (engine, loaded):
        refitter = trt.Refitter(e, trt.Logger(trt.Logger.WARNING))
        layer = refitter.get_all()[0][0]
        assert refitter.set_weights(layer, trt.WeightsRole.KERNEL, trt.Weights(w2))
        assert refitter.refit_cuda_engine()
        out = e.create_execution_context().infer(inputs)["out0"].reshape(40)
        assert_close(out, w2.astype(np.float64) @ x + bias)
