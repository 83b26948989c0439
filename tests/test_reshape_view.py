"""Reshape elision (pass elide_reshape, kernel shuffle.inplace): ShuffleNet's channel shuffle (concatenation ->
reshape -> transpose -> reshape -> channel split) against numpy float64 with the pass on, off and at level 0; which
reshapes it takes and which it leaves."""
import json

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


def _shuffle(net, t, reshape=None, perm=None):
    layer = net.add_shuffle(t)
    if perm is not None:
        layer.first_transpose = perm
    if reshape is not None:
        layer.reshape_dims = reshape
    return layer.get_output(0)


def channel_shuffle_net(net, a, b):
    """relu(concat(a, b)) channel-shuffled in 2 groups, then split into halves (each through a relu) and the
    shuffled tensor itself reshaped to 2-D as a third output."""
    n, c, h, w = a.shape
    ta, tb = net.add_input("a", trt.float32, a.shape), net.add_input("b", trt.float32, b.shape)
    cat = net.add_concatenation([ta, tb])
    cat.axis = 1
    x = net.add_activation(cat.get_output(0), trt.ActivationType.RELU).get_output(0)
    r = _shuffle(net, x, reshape=(n, 2, c, h, w))
    t = _shuffle(net, r, perm=(0, 2, 1, 3, 4))
    s = _shuffle(net, t, reshape=(n, 2 * c, h, w))
    lo = net.add_slice(s, (0, 0, 0, 0), (n, c, h, w), (1, 1, 1, 1)).get_output(0)
    hi = net.add_slice(s, (0, c, 0, 0), (n, c, h, w), (1, 1, 1, 1)).get_output(0)
    outs = [net.add_activation(lo, trt.ActivationType.RELU).get_output(0),
            net.add_activation(hi, trt.ActivationType.SIGMOID).get_output(0), _shuffle(net, s, reshape=(n * 2 * c, h * w))]
    return outs


def reference(a, b):
    n, c, h, w = a.shape
    x = np.maximum(np.concatenate([a, b], axis=1).astype(np.float64), 0)
    s = x.reshape(n, 2, c, h, w).transpose(0, 2, 1, 3, 4).reshape(n, 2 * c, h, w)
    return [np.maximum(s[:, :c], 0), 1 / (1 + np.exp(-s[:, c:])), s.reshape(n * 2 * c, h * w)]


def build_run(a, b, level=None, off=()):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    for i, o in enumerate(channel_shuffle_net(net, a, b)):
        o.name = "y%d" % i
        net.mark_output(o)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if level is not None:
        config.builder_optimization_level = level
    for p in off:
        config.set_pass_enabled(p, False)
    engine = builder.build_engine(net, config)
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    outs = engine.create_execution_context().infer({"a": a, "b": b})
    return [outs["y%d" % i] for i in range(3)], [l["kernel"] for l in info["layers"]]


@pytest.mark.parametrize("n", [1, 2])
def test_channel_shuffle_reshapes_are_views(n):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((n, 6, 5, 7)).astype(np.float32)
    b = rng.standard_normal((n, 6, 5, 7)).astype(np.float32)
    want = reference(a, b)
    kernels = {}
    for mode, kw in (("on", {}), ("off", {"off": ("elide_reshape",)}), ("level0", {"level": 0})):
        outs, kernels[mode] = build_run(a, b, **kw)
        for o, r in zip(outs, want):
            assert_close(o, r)
    # the two reshapes around the transpose are views; the one producing a network output copies
    assert kernels["on"].count("shuffle.inplace") == 2, kernels["on"]
    assert "shuffle.inplace" not in kernels["off"] and "shuffle.inplace" not in kernels["level0"]


def test_reshape_of_a_network_input_is_not_elided():
    """A network input's bytes belong to the caller: reshaping it copies."""
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = net.add_input("x", trt.float32, x.shape)
    y = net.add_activation(_shuffle(net, t, reshape=(6, 4)), trt.ActivationType.RELU).get_output(0)
    y.name = "y"
    net.mark_output(y)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    engine = builder.build_engine(net, config)
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    assert "shuffle.inplace" not in [l["kernel"] for l in info["layers"]]
    assert_close(engine.create_execution_context().infer({"x": x})["y"], x.reshape(6, 4))


def squeeze_unsqueeze_net(net, x):
    """relu(x [1, a, b, c]) squeezed at axis 0 and then unsqueezed at axis 2 the way the ONNX importer writes them
    for dynamic shapes (a transpose of the 1 to the end and a reshape; a reshape and a transpose placing the 1), each
    through an activation (the squeezed tensor also through a second one: outputs are not views); and a transpose
    that swaps two longer axes (a copy) as a third output."""
    a, b, c = x.shape[1:]
    t = net.add_input("x", trt.float32, x.shape)
    r = net.add_activation(t, trt.ActivationType.RELU).get_output(0)
    sq = net.add_shuffle(r)
    sq.first_transpose = (1, 2, 3, 0)
    sq.reshape_dims = (a, b, c)
    s = net.add_activation(sq.get_output(0), trt.ActivationType.SIGMOID).get_output(0)
    un = net.add_shuffle(s)
    un.reshape_dims = (a, b, c, 1)
    un.second_transpose = (0, 1, 3, 2)
    u = net.add_activation(un.get_output(0), trt.ActivationType.TANH).get_output(0)
    sw = net.add_shuffle(r)
    sw.first_transpose = (0, 2, 1, 3)
    w = net.add_activation(sw.get_output(0), trt.ActivationType.RELU).get_output(0)
    return [net.add_activation(s, trt.ActivationType.RELU).get_output(0), u, w]


@pytest.mark.parametrize("shape", [(1, 3, 5, 7), (1, 1, 4, 6)])
def test_squeeze_and_unsqueeze_transposing_ones_are_views(shape):
    """Shuffles whose transposes only move axes of extent 1 (BERT's Squeeze of the split Q / K / V, ViT's Unsqueeze,
    as the ONNX importer writes them for dynamic shapes) are views with elide_reshape on and copies with it off, with
    the same values (float64 numpy); a transpose of two longer axes stays a copy."""
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    r = np.maximum(x.astype(np.float64), 0)
    s = 1 / (1 + np.exp(-r[0]))
    want = [s, np.tanh(s)[:, :, None, :], np.maximum(r.transpose(0, 2, 1, 3), 0)]
    kernels = {}
    for mode, off in (("on", ()), ("off", ("elide_reshape",))):
        builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
        net = builder.create_network(EXPLICIT)
        for i, o in enumerate(squeeze_unsqueeze_net(net, x)):
            o.name = "y%d" % i
            net.mark_output(o)
        config = builder.create_builder_config()
        config.avg_timing_iterations = 0
        for p in off:
            config.set_pass_enabled(p, False)
        engine = builder.build_engine(net, config)
        info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
        kernels[mode] = {l["name"]: l["kernel"] for l in info["layers"] if l["type"] == "SHUFFLE"}
        outs = engine.create_execution_context().infer({"x": x})
        for i, w in enumerate(want):
            assert outs["y%d" % i].shape == w.shape
            assert_close(outs["y%d" % i], w)
    on = sorted(kernels["on"].values())
    # the swap of axes 1 and 2 moves only a 1 when shape[1] is 1: a view too
    assert on.count("shuffle.inplace") == (3 if shape[1] == 1 else 2) and len(on) == 3, kernels["on"]
    assert "shuffle.inplace" not in kernels["off"].values(), kernels["off"]
