"""Concatenation sinking (csrc/builder/passes/sink_concat.c): a concatenation that copies (batch > 1) and whose
only reader is a pooling becomes poolings of its pieces and a concatenation of the pooled results.

SqueezeNet-style Fire modules and GoogLeNet-style branches (ONNX, against onnxruntime) and networks of the layer
API (against numpy float64), each with the pass on and off; the inspector says whether it fired, including where
it must not: batch 1 (concatenation elision makes the copy free), the concatenation's output also a network output
or read twice, a concatenation along a pooled axis, dynamic shapes.
"""
import json

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
P = trt.PoolingType


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def layers_of(engine):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return info["layers"]


def n_type(engine, kind):
    return sum(l["type"] == kind for l in layers_of(engine))


# ------------------------------------------------------------------------------------------------------------
# ONNX: Fire modules (squeeze 1x1, expand 1x1 and 3x3, concatenation, ceil-mode max pool) against onnxruntime
# ------------------------------------------------------------------------------------------------------------

def _onnx_fire(n, pool, rng, h=11, w=10):
    from onnx import helper
    from onnx_helpers import make_model
    ws = {"ws": randn(rng, (4, 6, 1, 1), 0.4), "bs": randn(rng, 4), "w1": randn(rng, (5, 4, 1, 1), 0.4),
          "b1": randn(rng, 5), "w3": randn(rng, (3, 4, 3, 3), 0.3), "b3": randn(rng, 3)}
    nodes = [helper.make_node("Conv", ["x", "ws", "bs"], ["s0"]), helper.make_node("Relu", ["s0"], ["s"]),
             helper.make_node("Conv", ["s", "w1", "b1"], ["e10"]), helper.make_node("Relu", ["e10"], ["e1"]),
             helper.make_node("Conv", ["s", "w3", "b3"], ["e30"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["e30"], ["e3"]),
             # a third piece straight from the input: three pieces, one of them a network input's reader
             helper.make_node("Concat", ["e1", "e3", "x"], ["cat"], axis=1)]
    if pool == "max":
        nodes.append(helper.make_node("MaxPool", ["cat"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1))
    elif pool == "avg":
        nodes.append(helper.make_node("AveragePool", ["cat"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                      pads=[1, 1, 1, 1], count_include_pad=0))
    elif pool == "global":  # global average pooling (the classifier's)
        nodes.append(helper.make_node("GlobalAveragePool", ["cat"], ["y"]))  # lowered to a reduce: left alone
    else:  # the next Fire module's squeeze convolution: 14 channels in, K out (after a max pool: both moves)
        k = {"conv1x1": 3, "conv1x1_wide": 4, "conv3x3": 3, "pool_conv1x1": 3}[pool]  # 2 (n - 1) K <= C: 3, not 4
        ks = 3 if pool == "conv3x3" else 1
        ws["wq"], ws["bq"] = randn(rng, (k, 14, ks, ks), 0.3), randn(rng, k)
        src = "cat"
        if pool == "pool_conv1x1":
            nodes.append(helper.make_node("MaxPool", ["cat"], ["catp"], kernel_shape=[3, 3], strides=[2, 2],
                                          ceil_mode=1))
            src = "catp"
        nodes += [helper.make_node("Conv", [src, "wq", "bq"], ["q"], pads=[ks // 2] * 4),
                  helper.make_node("Relu", ["q"], ["y"])]
    x = randn(rng, (n, 6, h, w))
    return make_model(nodes, {"x": (n, 6, h, w)}, {"y": None}, ws), {"x": x}


def onnx_engine(model, off=(), refit=False):
    from onnx_helpers import parse
    builder, net, _ = parse(model)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if refit:
        config.set_flag(trt.BuilderFlag.REFIT)
    for p in off:
        config.set_pass_enabled(p, False)
    engine = builder.build_engine(net, config)
    assert engine is not None
    return engine


@pytest.mark.parametrize("off", [(), ("sink_concat",), ("sink_concat", "elide_concat")])
@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("pool", ["max", "avg", "global", "conv1x1", "conv1x1_wide", "conv3x3", "pool_conv1x1"])
def test_onnx_fire_module_matches_onnxruntime(pool, n, off):
    pytest.importorskip("onnxruntime")
    from onnx_helpers import assert_outputs_close, ort_run
    model, feeds = _onnx_fire(n, pool, np.random.default_rng(5))
    engine = onnx_engine(model, off)
    if n > 1 and not off and pool.endswith("conv1x1"):  # BuilderFlag.REFIT keeps the weights as given: not moved
        refit = onnx_engine(model, refit=True)
        assert n_type(refit, "CONCATENATION") == 1
        assert_outputs_close(refit.create_execution_context().infer(feeds), ort_run(model, feeds))
    got = engine.create_execution_context().infer(feeds)
    ref = ort_run(model, feeds)
    assert_outputs_close(got, ref)
    # a global pool is a reduce, and a 3x3 or too wide convolution stays: not moved
    fired = n > 1 and "sink_concat" not in off and pool in ("max", "avg", "conv1x1", "pool_conv1x1")
    names = [l["name"] for l in layers_of(engine)]
    if pool == "pool_conv1x1":  # below the pool (three pools), then below the convolution (a chain of three)
        convs = n_type(engine, "CONVOLUTION") + n_type(engine, "NCHWC_CONV")
        assert (n_type(engine, "POOLING"), convs, n_type(engine, "CONCATENATION")) == ((3, 6, 0) if fired else
                                                                                      (1, 4, 1)), layers_of(engine)
    elif pool.startswith("conv"):  # a chain of three convolutions, no concatenation
        convs = n_type(engine, "CONVOLUTION") + n_type(engine, "NCHWC_CONV")  # (the nchwc pass may block some)
        assert convs == (6 if fired else 4), layers_of(engine)
        assert n_type(engine, "CONCATENATION") == (0 if fired else 1), layers_of(engine)
    else:
        assert n_type(engine, "POOLING") + n_type(engine, "REDUCE") == (3 if fired else 1), layers_of(engine)
    assert any("(part 1)" in s for s in names) == fired, names


# ------------------------------------------------------------------------------------------------------------
# the layer API: where the pass must not fire, and the pooling's own parameters carried to every piece
# ------------------------------------------------------------------------------------------------------------

def _build(variant, off=(), n=2):
    rng = np.random.default_rng(7)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    shape = (-1 if variant == "dynamic" else n, 3, 9, 8)
    x = net.add_input("x", trt.float32, shape)
    xs = randn(rng, (n, 3, 9, 8))
    a = net.add_activation(x, trt.ActivationType.RELU).get_output(0)
    b = net.add_activation(x, trt.ActivationType.SIGMOID).get_output(0)
    pieces = [a, b]
    if variant == "empty_piece":  # a piece of no channels: left alone
        pieces.insert(1, net.add_slice(x, (0, 0, 0, 0), (n, 0, 9, 8), (1, 1, 1, 1)).get_output(0))
    cat = net.add_concatenation(pieces)
    cat.axis = 2 if variant == "axis2" else 1
    c = cat.get_output(0)
    pool = net.add_pooling_nd(c, P.MAX_AVERAGE_BLEND if variant == "blend" else P.MAX, (3, 2))
    pool.stride_nd = (2, 2)
    pool.padding_nd = (1, 0)
    if variant == "blend":
        pool.blend_factor = 0.3
    outs = [pool.get_output(0)]
    xf = xs.astype(np.float64)
    cf = np.concatenate([np.maximum(xf, 0.0), 1.0 / (1.0 + np.exp(-xf))], axis=cat.axis)
    ref_pool = refs.pooling(cf, "MAX_AVERAGE_BLEND" if variant == "blend" else "MAX", (3, 2), (2, 2), (1, 0), (1, 0),
                            blend_factor=0.3 if variant == "blend" else 0.0)
    refs_ = [ref_pool]
    if variant == "cat_output":
        outs.append(c)
        refs_.append(cf)
    if variant == "two_readers":
        outs.append(net.add_activation(c, trt.ActivationType.RELU).get_output(0))
        refs_.append(np.maximum(cf, 0.0))
    for i, o in enumerate(outs):
        o.name = "out%d" % i
        net.mark_output(o)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if variant == "dynamic":
        p = builder.create_optimization_profile()
        p.set_shape("x", (1, 3, 9, 8), (n, 3, 9, 8), (4, 3, 9, 8))
        config.add_optimization_profile(p)
    for name in off:
        config.set_pass_enabled(name, False)
    engine = builder.build_engine(net, config)
    assert engine is not None
    return engine, {"x": xs}, refs_


@pytest.mark.parametrize("off", [(), ("sink_concat",)])
@pytest.mark.parametrize("variant,fires", [("plain", True), ("blend", True), ("batch1", False), ("cat_output", False),
                                           ("two_readers", False), ("axis2", False), ("dynamic", False),
                                           ("empty_piece", False)])
def test_sinking_matches_reference(variant, fires, off):
    engine, inputs, want = _build(variant, off, n=1 if variant == "batch1" else 2)
    outs = engine.create_execution_context().infer(inputs)
    for i, w in enumerate(want):
        assert_close(outs["out%d" % i], w)
    assert n_type(engine, "POOLING") == (2 if fires and not off else 1), layers_of(engine)


def test_sunk_plan_round_trips():
    """A plan of a sunk network deserializes into an engine that computes the same."""
    engine, inputs, want = _build("plain")
    runtime = trt.Runtime(trt.Logger(trt.Logger.WARNING))
    again = runtime.deserialize_cuda_engine(engine.serialize())
    assert n_type(again, "POOLING") == 2
    assert_close(again.create_execution_context().infer(inputs)["out0"], want[0])


def test_convolution_chain_plan_round_trips():
    """The per-piece convolutions (their weight columns, the residual chain) survive a plan."""
    pytest.importorskip("onnxruntime")
    from onnx_helpers import assert_outputs_close, ort_run
    model, feeds = _onnx_fire(3, "pool_conv1x1", np.random.default_rng(9))
    engine = onnx_engine(model)
    again = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(engine.serialize())
    assert n_type(again, "CONCATENATION") == 0 and n_type(again, "POOLING") == 3
    assert_outputs_close(again.create_execution_context().infer(feeds), ort_run(model, feeds))
