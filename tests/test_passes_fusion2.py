"""Builder passes of the second fusion round (csrc/builder/passes/): concatenation and slice elision (elide_concat,
elide_slice).

Concatenation elision lets the producers of a concatenation write into their slices of its output (the memory
plan places them there, csrc/engine/alias.h) and gives the concatenation the kernel "concatenation.inplace", which
copies nothing; slice elision makes a slice that is one contiguous block of its input a view of the input's bytes
(kernel "slice.inplace").  Every network here is built with the pass on and off (and at level 0) and compared with a numpy
float64 reference or with onnxruntime; the inspector says which concatenations were elided, including the shapes
where the pass must not fire (batch 2 on the channel axis, network inputs, outputs and constants as parts, a tensor
placed twice, dynamic shapes).
"""
import json

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
INPLACE = "concatenation.inplace"
SLICE_INPLACE = "slice.inplace"
A = trt.ActivationType


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def conv(net, t, w, b, pad=(0, 0)):
    layer = net.add_convolution_nd(t, w.shape[0], tuple(w.shape[2:]), w, b)
    layer.padding_nd = pad
    return layer.get_output(0)


def relu(net, t):
    return net.add_activation(t, A.RELU).get_output(0)


def cat(net, ts, axis=1):
    layer = net.add_concatenation(list(ts))
    layer.axis = axis
    return layer.get_output(0)


def conv_ref(x, w, b, pad=(0, 0)):
    return refs.convolution(x, w, b, None, pad, pad)


def relu_ref(x):
    return np.maximum(x, 0.0)


# ------------------------------------------------------------------------------------------------------------
# the networks: make(net, rng) -> (inputs, outputs, references); with the passes on, `elided` concatenations and
# `slices` slices get the in-place kernels (none with them off)
# ------------------------------------------------------------------------------------------------------------

CASES = {}


def case(name, elided, profile=None, slices=0, elided_without_slices=None):
    """elided_without_slices: the concatenations elided with elide_slice off (default `elided`)."""
    def reg(fn):
        alone = elided if elided_without_slices is None else elided_without_slices
        CASES[name] = (fn, {"on": (elided, slices), "off:elide_concat": (0, slices), "off:elide_slice": (alone, 0)},
                       profile)
        return fn
    return reg


def _branches(net, rng, x, xf):
    """Three Inception-style branches on x: 1x1 conv, 3x3 conv + ReLU, 3x3 max pool + 1x1 conv."""
    w1, b1 = randn(rng, (3, 4, 1, 1), 0.5), randn(rng, 3)
    w2, b2 = randn(rng, (5, 4, 3, 3), 0.3), randn(rng, 5)
    w3, b3 = randn(rng, (2, 4, 1, 1), 0.5), randn(rng, 2)
    a = conv(net, x, w1, b1)
    b = relu(net, conv(net, x, w2, b2, (1, 1)))
    pool = net.add_pooling_nd(x, trt.PoolingType.MAX, (3, 3))
    pool.padding_nd = (1, 1)
    pool.stride_nd = (1, 1)
    c = conv(net, pool.get_output(0), w3, b3)
    pf = refs.pooling(xf, "MAX", (3, 3), (1, 1), (1, 1), (1, 1))
    return [a, b, c], [conv_ref(xf, w1, b1), relu_ref(conv_ref(xf, w2, b2, (1, 1))), conv_ref(pf, w3, b3)]


@case("inception", 1)
def _inception(net, rng):
    x = randn(rng, (1, 4, 9, 7))
    t = net.add_input("x", trt.float32, x.shape)
    parts, rparts = _branches(net, rng, t, x)
    w, b = randn(rng, (4, 10, 1, 1), 0.4), randn(rng, 4)
    y = conv(net, cat(net, parts), w, b)
    return {"x": x}, [y], [conv_ref(np.concatenate(rparts, 1), w, b)]


@case("densenet", 3)
def _densenet(net, rng):
    """Each concatenation's output is a prefix of the next one's: one block for all of them."""
    x = randn(rng, (1, 3, 6, 6))
    t = net.add_input("x", trt.float32, x.shape)
    w0, b0 = randn(rng, (4, 3, 3, 3), 0.4), randn(rng, 4)
    feats, rfeats = [conv(net, t, w0, b0, (1, 1))], [conv_ref(x, w0, b0, (1, 1))]
    for k in range(3):
        c = cat(net, feats) if len(feats) > 1 else feats[0]
        rc = np.concatenate(rfeats, 1)
        w, b = randn(rng, (3, rc.shape[1], 3, 3), 0.3), randn(rng, 3)
        feats.append(conv(net, relu(net, c), w, b, (1, 1)))
        rfeats.append(conv_ref(relu_ref(rc), w, b, (1, 1)))
    y = relu(net, cat(net, feats))
    return {"x": x}, [y], [relu_ref(np.concatenate(rfeats, 1))]


@case("nested", 2)
def _nested(net, rng):
    x = randn(rng, (1, 4, 5, 5))
    t = net.add_input("x", trt.float32, x.shape)
    parts, rparts = _branches(net, rng, t, x)
    inner = cat(net, parts[:2])
    y = relu(net, cat(net, [parts[2], inner]))
    return {"x": x}, [y], [relu_ref(np.concatenate([rparts[2], rparts[0], rparts[1]], 1))]


@case("axis0_batch2", 1)
def _axis0(net, rng):
    """Along the first axis every part is contiguous, whatever the batch."""
    x = randn(rng, (2, 3, 4))
    t = net.add_input("x", trt.float32, x.shape)
    e = net.add_unary(t, trt.UnaryOperation.EXP).get_output(0)
    n = net.add_unary(t, trt.UnaryOperation.NEG).get_output(0)
    y = relu(net, cat(net, [e, n], axis=0))
    return {"x": x}, [y], [relu_ref(np.concatenate([np.exp(x.astype(np.float64)), -x.astype(np.float64)], 0))]


@case("axis2_unit_dims_before", 1)
def _axis2(net, rng):
    x = randn(rng, (1, 1, 3, 5))
    t = net.add_input("x", trt.float32, x.shape)
    e = net.add_unary(t, trt.UnaryOperation.ABS).get_output(0)
    n = net.add_unary(t, trt.UnaryOperation.NEG).get_output(0)
    s = net.add_unary(t, trt.UnaryOperation.EXP).get_output(0)
    y = relu(net, cat(net, [n, e, s], axis=2))
    xf = x.astype(np.float64)
    return {"x": x}, [y], [relu_ref(np.concatenate([-xf, np.abs(xf), np.exp(xf)], 2))]


@case("batch2_channels", 0)
def _batch2(net, rng):
    """[2, C, H, W] along C: each part is two blocks, not one (must not fire)."""
    x = randn(rng, (2, 4, 5, 6))
    t = net.add_input("x", trt.float32, x.shape)
    parts, rparts = _branches(net, rng, t, x)
    y = relu(net, cat(net, parts))
    return {"x": x}, [y], [relu_ref(np.concatenate(rparts, 1))]


@case("input_part", 0)
def _input_part(net, rng):
    """A network input cannot be placed in the arena (must not fire)."""
    x = randn(rng, (1, 4, 3, 3))
    t = net.add_input("x", trt.float32, x.shape)
    y = relu(net, cat(net, [net.add_unary(t, trt.UnaryOperation.NEG).get_output(0), t]))
    return {"x": x}, [y], [relu_ref(np.concatenate([-x.astype(np.float64), x], 1))]


@case("constant_part", 0)
def _constant_part(net, rng):
    x = randn(rng, (1, 2, 3, 3))
    c = randn(rng, (1, 3, 3, 3))
    t = net.add_input("x", trt.float32, x.shape)
    k = net.add_constant(c.shape, c).get_output(0)
    y = relu(net, cat(net, [net.add_unary(t, trt.UnaryOperation.NEG).get_output(0), k]))
    return {"x": x}, [y], [relu_ref(np.concatenate([-x.astype(np.float64), c], 1))]


@case("output_concat", 0)
def _output_concat(net, rng):
    """The concatenation is a network output (a user buffer): must not fire."""
    x = randn(rng, (1, 4, 5, 5))
    t = net.add_input("x", trt.float32, x.shape)
    parts, rparts = _branches(net, rng, t, x)
    return {"x": x}, [cat(net, parts)], [np.concatenate(rparts, 1)]


@case("output_part", 0)
def _output_part(net, rng):
    """A part that is also a network output stays in its user buffer: must not fire."""
    x = randn(rng, (1, 4, 5, 5))
    t = net.add_input("x", trt.float32, x.shape)
    parts, rparts = _branches(net, rng, t, x)
    y = relu(net, cat(net, parts))
    return {"x": x}, [y, parts[1]], [relu_ref(np.concatenate(rparts, 1)), rparts[1]]


@case("same_part_twice", 0)
def _twice(net, rng):
    x = randn(rng, (1, 2, 3, 4))
    t = net.add_input("x", trt.float32, x.shape)
    a = net.add_unary(t, trt.UnaryOperation.NEG).get_output(0)
    y = relu(net, cat(net, [a, a]))
    return {"x": x}, [y], [relu_ref(np.concatenate([-x, -x], 1).astype(np.float64))]


@case("conflicting_orders", 1)
def _conflict(net, rng):
    """cat(a, b) and cat(b, a): a and b can be placed for one of them only; the other copies."""
    x = randn(rng, (1, 3, 4, 4))
    t = net.add_input("x", trt.float32, x.shape)
    a = net.add_unary(t, trt.UnaryOperation.NEG).get_output(0)
    b = net.add_unary(t, trt.UnaryOperation.ABS).get_output(0)
    c1, c2 = cat(net, [a, b]), cat(net, [b, a])
    y = net.add_elementwise(relu(net, c1), c2, trt.ElementWiseOperation.SUM).get_output(0)
    xf = x.astype(np.float64)
    return {"x": x}, [y], [relu_ref(np.concatenate([-xf, np.abs(xf)], 1)) + np.concatenate([np.abs(xf), -xf], 1)]


@case("dynamic_batch", 0, profile=((1, 4, 5, 5), (1, 4, 5, 5), (3, 4, 5, 5)))
def _dynamic(net, rng):
    """Shapes that change at run time: sizes are not known when the arena is planned (must not fire)."""
    x = randn(rng, (1, 4, 5, 5))
    t = net.add_input("x", trt.float32, (-1, 4, 5, 5))
    parts, rparts = _branches(net, rng, t, x)
    y = relu(net, cat(net, parts))
    return {"x": x}, [y], [relu_ref(np.concatenate(rparts, 1))]


def slice_(net, t, start, shape, stride=None):
    return net.add_slice(t, start, shape, stride or (1,) * len(start)).get_output(0)


@case("split_channels", 0, slices=2)
def _split(net, rng):
    """A conv's output split along the channels at batch 1: both halves are views."""
    x = randn(rng, (1, 3, 5, 6))
    t = net.add_input("x", trt.float32, x.shape)
    w, b = randn(rng, (8, 3, 3, 3), 0.4), randn(rng, 8)
    y = conv(net, t, w, b, (1, 1))
    yf = conv_ref(x, w, b, (1, 1))
    w2, b2 = randn(rng, (2, 5, 1, 1), 0.4), randn(rng, 2)
    lo = relu(net, slice_(net, y, (0, 0, 0, 0), (1, 3, 5, 6)))
    hi = conv(net, slice_(net, y, (0, 3, 0, 0), (1, 5, 5, 6)), w2, b2)
    return {"x": x}, [lo, hi], [relu_ref(yf[:, :3]), conv_ref(yf[:, 3:], w2, b2)]


@case("split_then_concat", 0, slices=2, elided_without_slices=1)
def _split_concat(net, rng):
    """ShuffleNet's unit on an intermediate tensor: the split halves are views of y, so y cannot also be placed in the
    concatenation (its other half would overlap the branch): the concatenation copies (it is elided with
    elide_slice off)."""
    x = randn(rng, (1, 3, 4, 4))
    t = net.add_input("x", trt.float32, x.shape)
    w, b = randn(rng, (8, 3, 1, 1), 0.4), randn(rng, 8)
    y = conv(net, t, w, b)
    yf = conv_ref(x, w, b)
    w2, b2 = randn(rng, (4, 4, 1, 1), 0.4), randn(rng, 4)
    x1 = slice_(net, y, (0, 0, 0, 0), (1, 4, 4, 4))
    x2 = relu(net, conv(net, slice_(net, y, (0, 4, 0, 0), (1, 4, 4, 4)), w2, b2))
    out = relu(net, cat(net, [x1, x2]))
    return {"x": x}, [out], [relu_ref(np.concatenate([yf[:, :4], relu_ref(conv_ref(yf[:, 4:], w2, b2))], 1))]


@case("slice_rows_of_first_axis", 0, slices=1)
def _slice_axis0(net, rng):
    """Rows 1..2 of a [4, 3, 5] tensor: a contiguous block at any batch."""
    x = randn(rng, (4, 3, 5))
    t = net.add_input("x", trt.float32, x.shape)
    e = net.add_unary(t, trt.UnaryOperation.NEG).get_output(0)
    y = relu(net, slice_(net, e, (1, 0, 0), (2, 3, 5)))
    return {"x": x}, [y], [relu_ref(-x[1:3].astype(np.float64))]


@case("slices_not_contiguous", 0, slices=0)
def _slices_no(net, rng):
    """Batch 2 channel slice, stride 2, a cropped inner dim, a slice of the network input, a slice that is an output:
    none is one block of an intermediate tensor (must not fire)."""
    x = randn(rng, (2, 4, 3, 6))
    t = net.add_input("x", trt.float32, x.shape)
    e = net.add_unary(t, trt.UnaryOperation.NEG).get_output(0)
    xf = -x.astype(np.float64)
    a = relu(net, slice_(net, e, (0, 1, 0, 0), (2, 2, 3, 6)))
    b = relu(net, slice_(net, e, (0, 0, 0, 0), (1, 2, 3, 6), (1, 2, 1, 1)))
    c = relu(net, slice_(net, e, (1, 1, 0, 2), (1, 2, 3, 4)))
    d = relu(net, slice_(net, t, (1, 0, 0, 0), (1, 4, 3, 6)))
    o = slice_(net, e, (1, 0, 0, 0), (1, 4, 3, 6))
    return {"x": x}, [a, b, c, d, o], [relu_ref(xf[:, 1:3]), relu_ref(xf[:1, 0:4:2]), relu_ref(xf[1:2, 1:3, :, 2:]),
                                       relu_ref(x[1:2].astype(np.float64)), xf[1:2]]


def build_net(make, off=(), level=None, profile=None):
    """(engine, make's result): make(net) adds the layers and returns (inputs, outputs, references); the outputs are
    named out0, out1, ... and marked; passes in `off` disabled, optimization level `level`, profile (min, opt, max)
    of input "x" where given; no kernel timing."""
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    made = make(net)
    for i, o in enumerate(made[1]):
        o.name = "out%d" % i
        net.mark_output(o)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if profile:
        p = builder.create_optimization_profile()
        p.set_shape("x", *profile)
        config.add_optimization_profile(p)
    if level is not None:
        config.builder_optimization_level = level
    for p in off:
        config.set_pass_enabled(p, False)
    engine = builder.build_engine(net, config)
    assert engine is not None
    return engine, made


def build(name, off=(), level=None, seed=0):
    """(engine, inputs, references, inspector layers) of case `name`."""
    fn, _, profile = CASES[name]
    engine, (inputs, _, ref) = build_net(lambda net: fn(net, np.random.default_rng(seed)), off, level, profile)
    return engine, inputs, ref, layers_of(engine)


def layers_of(engine):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return info["layers"]


def concat_kernels(layers):
    return [l["kernel"] for l in layers if l["type"] == "CONCATENATION"]


def slice_kernels(layers):
    return [l["kernel"] for l in layers if l["type"] == "SLICE"]


def run(engine, inputs, n_out):
    outs = engine.create_execution_context().infer(inputs)
    return [outs["out%d" % i] for i in range(n_out)]


MODES = ["on", "off", "off:elide_concat", "off:elide_slice", "level0"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_elision_matches_reference(name, mode):
    """Every network computes the float64 reference with the passes on, off (both, each) and at level 0, and
    exactly the expected concatenations and slices are elided."""
    off = {"off": ("elide_concat", "elide_slice")}.get(mode, (mode[4:],) if mode.startswith("off:") else ())
    engine, inputs, ref, layers = build(name, off=off, level=0 if mode == "level0" else None)
    for out, r in zip(run(engine, inputs, len(ref)), ref):
        assert_close(out, r)
    want_c, want_s = CASES[name][1].get(mode, (0, 0))
    assert concat_kernels(layers).count(INPLACE) == want_c, concat_kernels(layers)
    assert slice_kernels(layers).count(SLICE_INPLACE) == want_s, slice_kernels(layers)


def test_dynamic_batch_runs_at_every_batch():
    engine, _, _, _ = build("dynamic_batch")
    fn = CASES["dynamic_batch"][0]
    for n in (1, 3):
        # the same weights (same seed), another batch
        net = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_network(EXPLICIT)
        inputs, _, ref = fn(net, np.random.default_rng(0))
        x = np.concatenate([inputs["x"]] * n, 0)
        out = engine.create_execution_context()
        out.set_input_shape("x", x.shape)
        assert_close(out.infer({"x": x})["out0"], np.concatenate([ref[0]] * n, 0))


def test_elided_concatenations_share_the_arena():
    """With the pass, the DenseNet block's concatenations are one block of the arena: less activation memory."""
    on = build("densenet")[0].device_memory_size
    off = build("densenet", off=("elide_concat",))[0].device_memory_size
    assert on < off, (on, off)


def test_elision_survives_serialization():
    engine, inputs, ref, _ = build("densenet")
    again = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(engine.serialize())
    assert concat_kernels(layers_of(again)).count(INPLACE) == 3
    assert again.device_memory_size == engine.device_memory_size
    assert_close(run(again, inputs, 1)[0], ref[0])


def test_repeated_runs_and_contexts_agree():
    """Nothing in place is left stale between runs: new inputs, same engine, two contexts."""
    engine, _, _, _ = build("densenet")
    c1, c2 = engine.create_execution_context(), engine.create_execution_context()
    fn = CASES["densenet"][0]
    for seed in (1, 2):
        rng = np.random.default_rng(0)
        net = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_network(EXPLICIT)
        inputs, _, _ = fn(net, rng)
        x = randn(np.random.default_rng(seed), inputs["x"].shape)
        ref = run(build("densenet", off=("elide_concat",))[0], {"x": x}, 1)[0]
        np.testing.assert_allclose(c1.infer({"x": x})["out0"], ref, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(c2.infer({"x": x})["out0"], ref, rtol=1e-5, atol=1e-5)


def test_pass_logs_each_elision():
    class Rec(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.msgs = []

        def log(self, severity, msg):
            self.msgs.append(msg)

    rec = Rec()
    builder = trt.Builder(rec)
    net = builder.create_network(EXPLICIT)
    _, outs, _ = CASES["inception"][0](net, np.random.default_rng(0))
    net.mark_output(outs[0])
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    assert builder.build_engine(net, config) is not None
    assert any("concatenation elision" in m and "in place" in m for m in rec.msgs), rec.msgs


# ------------------------------------------------------------------------------------------------------------
# ONNX models with those patterns, against onnxruntime
# ------------------------------------------------------------------------------------------------------------

def onnx_build(model, off=()):
    from onnx_helpers import parse
    builder, net, _ = parse(model)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    for p in off:
        config.set_pass_enabled(p, False)
    engine = builder.build_engine(net, config)
    assert engine is not None
    return engine


def _onnx_inception(n, rng):
    from onnx import helper
    from onnx_helpers import make_model
    w = {"w1": randn(rng, (4, 6, 1, 1), 0.4), "w2": randn(rng, (5, 6, 3, 3), 0.2), "w3": randn(rng, (3, 6, 1, 1), 0.4),
         "b1": randn(rng, 4), "b2": randn(rng, 5), "b3": randn(rng, 3), "w4": randn(rng, (4, 12, 1, 1), 0.3)}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["a"]),
             helper.make_node("Conv", ["x", "w2", "b2"], ["b0"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["b0"], ["b"]),
             helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
             helper.make_node("Conv", ["p", "w3", "b3"], ["c"]),
             helper.make_node("Concat", ["a", "b", "c"], ["cat"], axis=1),
             helper.make_node("Relu", ["cat"], ["r"]),
             helper.make_node("Conv", ["r", "w4"], ["y"])]
    return make_model(nodes, {"x": (n, 6, 8, 9)}, {"y": None}, w), {"x": randn(rng, (n, 6, 8, 9))}


def _onnx_shuffle(n, rng):
    """ShuffleNetV2's unit: split the channels, convolve one half, concatenate, channel shuffle."""
    from onnx import helper
    from onnx_helpers import make_model
    w = {"w": randn(rng, (4, 4, 1, 1), 0.5), "b": randn(rng, 4), "split": np.array([4, 4], np.int64),
         "s1": np.array([n, 2, 4, 5, 5], np.int64), "s2": np.array([n, 8, 5, 5], np.int64)}
    nodes = [helper.make_node("Split", ["x", "split"], ["x1", "x2"], axis=1),
             helper.make_node("Conv", ["x2", "w", "b"], ["c0"]),
             helper.make_node("Relu", ["c0"], ["c"]),
             helper.make_node("Concat", ["x1", "c"], ["cat"], axis=1),
             helper.make_node("Reshape", ["cat", "s1"], ["r1"]),
             helper.make_node("Transpose", ["r1"], ["t"], perm=[0, 2, 1, 3, 4]),
             helper.make_node("Reshape", ["t", "s2"], ["y"])]
    return make_model(nodes, {"x": (n, 8, 5, 5)}, {"y": None}, w), {"x": randn(rng, (n, 8, 5, 5))}


@pytest.mark.parametrize("off", [(), ("elide_concat",)])
@pytest.mark.parametrize("make,n,elided", [(_onnx_inception, 1, 1), (_onnx_inception, 2, 0), (_onnx_shuffle, 1, 1),
                                           (_onnx_shuffle, 3, 0)])
def test_onnx_concat_elision_matches_onnxruntime(make, n, elided, off):
    pytest.importorskip("onnxruntime")
    from onnx_helpers import assert_outputs_close, ort_run
    model, feeds = make(n, np.random.default_rng(3))
    engine = onnx_build(model, off)
    got = engine.create_execution_context().infer(feeds)
    assert_outputs_close(got, ort_run(model, feeds))
    assert concat_kernels(layers_of(engine)).count(INPLACE) == (0 if off else elided)


# ------------------------------------------------------------------------------------------------------------
# horizontal fusion (fuse_siblings): sibling convolutions stacked into one, their results channel slices
# ------------------------------------------------------------------------------------------------------------

def conv_kernels(layers):
    return [l["kernel"] for l in layers if l["type"] == "CONVOLUTION"]


def _siblings_net(net, rng, shape=(1, 6, 7, 5), variant="same"):
    """Three sibling convolutions on x with ReLU (1x1, 1x1, 1x1 in `same`), each result used by its own layer, and
    a 3x3 one.  variant: "same", "kernels" (one 1x1 becomes 3x3 padded), "acts" (one without ReLU), "grouped"
    (one grouped), "output" (one result is a network output), "concat" (one result feeds a concatenation)."""
    x = randn(rng, shape)
    t = net.add_input("x", trt.float32, x.shape)
    outs, refs_ = [], []
    total = None
    rtotal = None
    for k, K in enumerate((3, 4, 5)):
        ks = (3, 3) if variant == "kernels" and k == 1 else (1, 1)
        pad = (1, 1) if ks == (3, 3) else (0, 0)
        groups = 2 if variant == "grouped" and k == 2 else 1
        w, b = randn(rng, (K * 2 if groups == 2 else K, 6 // groups) + ks, 0.4), randn(rng, K * 2 if groups == 2 else K)
        layer = net.add_convolution_nd(t, w.shape[0], ks, w, b)
        layer.padding_nd = pad
        layer.num_groups = groups
        y = layer.get_output(0)
        yf = refs.convolution(x, w, b, None, pad, pad, None, groups)
        if not (variant == "acts" and k == 0):
            y, yf = relu(net, y), relu_ref(yf)
        if variant == "output" and k == 1:
            outs.append(y)
            refs_.append(yf)
        e = net.add_unary(y, trt.UnaryOperation.ABS).get_output(0)
        ef = np.abs(yf)
        r = net.add_reduce(e, trt.ReduceOperation.SUM, 1 << 1, True).get_output(0)
        rf = ef.sum(1, keepdims=True)
        total = r if total is None else net.add_elementwise(total, r, trt.ElementWiseOperation.SUM).get_output(0)
        rtotal = rf if rtotal is None else rtotal + rf
        if variant == "concat" and k == 0:
            c = relu(net, cat(net, [y, net.add_unary(t, trt.UnaryOperation.NEG).get_output(0)]))
            outs.append(c)
            refs_.append(relu_ref(np.concatenate([yf, -x.astype(np.float64)], 1)))
    w3, b3 = randn(rng, (2, 6, 3, 3), 0.3), randn(rng, 2)
    z = conv(net, t, w3, b3, (1, 1))
    return {"x": x}, [total, z] + outs, [rtotal, conv_ref(x, w3, b3, (1, 1))] + refs_


SIBLING_VARIANTS = {  # variant: (convolutions with fuse_siblings on, slices elided)
    "same": (2, 3), "kernels": (3, 2), "acts": (3, 2), "grouped": (3, 2), "output": (3, 2), "concat": (3, 2)}


def build_siblings(variant, off=(), shape=(1, 6, 7, 5), level=None):
    engine, (inputs, _, ref) = build_net(lambda net: _siblings_net(net, np.random.default_rng(5), shape, variant),
                                         off, level)
    return engine, inputs, ref, layers_of(engine)


@pytest.mark.parametrize("mode", ["on", "off", "off:elide_slice", "level0"])
@pytest.mark.parametrize("variant", sorted(SIBLING_VARIANTS))
def test_sibling_convolutions_match_reference(variant, mode):
    """Stacked or not, the network computes the float64 reference; only same-geometry, same-activation siblings
    whose results are intermediates feeding no concatenation are stacked (two of the three in every variant but
    `same`, where all three are), and their slices are views unless elide_slice is off."""
    off = {"off": ("fuse_siblings",), "off:elide_slice": ("elide_slice",)}.get(mode, ())
    engine, inputs, ref, layers = build_siblings(variant, off, level=0 if mode == "level0" else None)
    for out, r in zip(run(engine, inputs, len(ref)), ref):
        assert_close(out, r)
    n_conv, n_views = SIBLING_VARIANTS[variant]
    stacked = mode in ("on", "off:elide_slice")
    assert len(conv_kernels(layers)) == (n_conv if stacked else 4), [l["name"] for l in layers]
    assert slice_kernels(layers).count(SLICE_INPLACE) == (n_views if mode == "on" else 0), slice_kernels(layers)
    assert len(slice_kernels(layers)) == (n_views if stacked else 0)


def test_siblings_at_batch_2_are_not_stacked():
    """Batch 2: a channel slice of the stacked result would be a copy, not a view."""
    engine, inputs, ref, layers = build_siblings("same", shape=(2, 6, 4, 4))
    for out, r in zip(run(engine, inputs, len(ref)), ref):
        assert_close(out, r)
    assert len(conv_kernels(layers)) == 4 and not slice_kernels(layers)


def _onnx_siblings(n, rng):
    """Q/K/V-style: three 1x1 convolutions of one input, each with its ReLU, multiplied together."""
    from onnx import helper
    from onnx_helpers import make_model
    w = {}
    nodes = []
    for k, K in enumerate((4, 4, 4)):
        w["w%d" % k], w["b%d" % k] = randn(rng, (K, 5, 1, 1), 0.4), randn(rng, K)
        nodes += [helper.make_node("Conv", ["x", "w%d" % k, "b%d" % k], ["c%d" % k]),
                  helper.make_node("Relu", ["c%d" % k], ["r%d" % k])]
    nodes += [helper.make_node("Mul", ["r0", "r1"], ["m"]), helper.make_node("Sub", ["m", "r2"], ["y"])]
    return make_model(nodes, {"x": (n, 5, 6, 6)}, {"y": None}, w), {"x": randn(rng, (n, 5, 6, 6))}


@pytest.mark.parametrize("off", [(), ("fuse_siblings",)])
@pytest.mark.parametrize("n", [1, 2])
def test_onnx_sibling_convolutions_match_onnxruntime(n, off):
    pytest.importorskip("onnxruntime")
    from onnx_helpers import assert_outputs_close, ort_run
    model, feeds = _onnx_siblings(n, np.random.default_rng(4))
    engine = onnx_build(model, off)
    assert_outputs_close(engine.create_execution_context().infer(feeds), ort_run(model, feeds))
    layers = layers_of(engine)
    assert len(conv_kernels(layers)) == (1 if n == 1 and not off else 3)


# ------------------------------------------------------------------------------------------------------------
# padding folded into the convolution (fold_padding)
# ------------------------------------------------------------------------------------------------------------

def _pad_net(net, rng, variant):
    """x -> zero padding -> 3x3 convolution (its own padding 1) -> ReLU.  variant: "fold" (spatial padding),
    "crop" (a negative entry), "channels" (pads the channel dim too), "shared" (the padded tensor has another
    consumer), "same" (the convolution pads SAME_UPPER), "pool" (max pooling instead of the convolution),
    "output" (the padded tensor is a network output)."""
    x = randn(rng, (1, 3, 7, 6))
    t = net.add_input("x", trt.float32, x.shape)
    pre, post = ((1, 2), (2, 0)) if variant != "crop" else ((1, -1), (2, 0))
    if variant == "channels":
        pre, post = (1, 1, 2), (0, 2, 0)
    pl = net.add_padding_nd(t, pre, post)
    p = pl.get_output(0)
    width = len(pre)
    full_pre = (0,) * (4 - width) + tuple(pre)
    full_post = (0,) * (4 - width) + tuple(post)
    xp = x.astype(np.float64)
    for ax in range(4):
        a, b = full_pre[ax], full_post[ax]
        if a < 0:
            xp = np.take(xp, range(-a, xp.shape[ax]), axis=ax)
            a = 0
        if b < 0:
            xp = np.take(xp, range(0, xp.shape[ax] + b), axis=ax)
            b = 0
        widths = [(0, 0)] * 4
        widths[ax] = (a, b)
        xp = np.pad(xp, widths)
    if variant == "pool":
        pool = net.add_pooling_nd(p, trt.PoolingType.MAX, (3, 3))
        pool.padding_nd = (1, 1)
        pool.stride_nd = (1, 1)
        return {"x": x}, [pool.get_output(0)], [refs.pooling(xp, "MAX", (3, 3), (1, 1), (1, 1), (1, 1))]
    cin = xp.shape[1]
    w, b = randn(rng, (4, cin, 3, 3), 0.3), randn(rng, 4)
    layer = net.add_convolution_nd(p, 4, (3, 3), w, b)
    if variant == "same":
        layer.padding_mode = trt.PaddingMode.SAME_UPPER
        pad = (1, 1)
    else:
        layer.padding_nd = (1, 1)
        pad = (1, 1)
    y = relu(net, layer.get_output(0))
    outs, rs = [y], [relu_ref(conv_ref(xp, w, b, pad))]
    if variant == "shared":
        outs.append(relu(net, net.add_unary(p, trt.UnaryOperation.NEG).get_output(0)))
        rs.append(relu_ref(-xp))
    if variant == "output":
        outs.append(p)
        rs.append(xp)
    return {"x": x}, outs, rs


PAD_VARIANTS = {"fold": True, "crop": False, "channels": False, "shared": False, "same": False, "pool": False,
                "output": False}


@pytest.mark.parametrize("off", [(), ("fold_padding",)])
@pytest.mark.parametrize("variant", sorted(PAD_VARIANTS))
def test_fold_padding_matches_reference(variant, off):
    """Zero spatial padding into the explicit padding of the convolution it alone feeds; crops, channel pads, other
    consumers, SAME padding, pooling and network outputs keep the padding layer."""
    engine, (inputs, _, ref) = build_net(lambda net: _pad_net(net, np.random.default_rng(7), variant), off)
    for out, r in zip(run(engine, inputs, len(ref)), ref):
        assert_close(out, r)
    folded = PAD_VARIANTS[variant] and not off
    assert sum(l["type"] == "PADDING" for l in layers_of(engine)) == (0 if folded else 1)


@pytest.mark.parametrize("off", [(), ("fold_padding",)])
@pytest.mark.parametrize("pads,folded", [([0, 0, 1, 2, 0, 0, 2, 1], True), ([0, 1, 1, 1, 0, 0, 1, 1], False)])
def test_onnx_pad_conv_matches_onnxruntime(pads, folded, off):
    """ONNX Pad (constant 0) -> Conv: the spatial case folds, a channel pad does not."""
    pytest.importorskip("onnxruntime")
    from onnx import helper
    from onnx_helpers import assert_outputs_close, make_model, ort_run
    rng = np.random.default_rng(8)
    cin = 3 + pads[1] + pads[5]
    w = {"w": randn(rng, (4, cin, 3, 3), 0.3), "b": randn(rng, 4), "pads": np.array(pads, np.int64)}
    nodes = [helper.make_node("Pad", ["x", "pads"], ["p"], mode="constant"),
             helper.make_node("Conv", ["p", "w", "b"], ["c"], strides=[2, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    model = make_model(nodes, {"x": (1, 3, 8, 7)}, {"y": None}, w)
    feeds = {"x": randn(rng, (1, 3, 8, 7))}
    engine = onnx_build(model, off)
    assert_outputs_close(engine.create_execution_context().infer(feeds), ort_run(model, feeds))
    n_pad = sum(l["type"] == "PADDING" for l in layers_of(engine))
    assert n_pad == (0 if folded and not off else 1), [l["type"] for l in layers_of(engine)]


# ---- gather_slice: gathers of constant index progressions are slices (and views where contiguous) ---------------

def _gathers_net(net, rng, batch_dims):
    """x [B, 6, 5] (B dynamic where batch_dims is a profile) -> relu, then gathers: axis 1 [2] (a block per batch
    row), axis 2 [0, 2, 4] (step 2), axis 1 [-1] (from the end), axis 1 [3, 1] (descending: stays a gather),
    axis 2 [[0, 1]] (2-D indices: stays); each read by an abs, so that no gather writes a network output."""
    x = randn(rng, (2, 6, 5))
    t = net.add_input("x", trt.float32, (-1, 6, 5) if batch_dims else x.shape)
    r = relu(net, t)
    specs = [(1, np.array([2], np.int32)), (2, np.array([0, 2, 4], np.int64)), (1, np.array([-1], np.int32)),
             (1, np.array([3, 1], np.int32)), (2, np.array([[0, 1]], np.int32))]
    outs, refs_ = [], []
    xr = np.maximum(x.astype(np.float64), 0.0)
    for axis, idx in specs:
        i = net.add_constant(idx.shape, idx).get_output(0)
        g = net.add_gather(r, i, axis).get_output(0)
        outs.append(net.add_unary(g, trt.UnaryOperation.ABS).get_output(0))
        refs_.append(np.abs(np.take(xr, idx, axis=axis)))
    return x, outs, refs_


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("on", [True, False])
def test_gathers_of_progressions_are_slices(dynamic, on):
    engine, (x, _, want) = build_net(lambda net: _gathers_net(net, np.random.default_rng(3), dynamic),
                                     () if on else ("gather_slice",),
                                     profile=((1, 6, 5), (2, 6, 5), (4, 6, 5)) if dynamic else None)
    kinds = [lay["kernel"].split(".")[0] for lay in layers_of(engine) if "Gather" in lay["name"]]
    assert kinds == (["slice"] * 3 + ["gather"] * 2 if on else ["gather"] * 5), layers_of(engine)
    ctx = engine.create_execution_context()
    for b in ((1, 2, 4) if dynamic else (2,)):
        xb = x if b == 2 else randn(np.random.default_rng(b), (b, 6, 5))
        if dynamic:
            ctx.set_input_shape("x", xb.shape)
        got = ctx.infer({"x": xb})
        xr = np.maximum(xb.astype(np.float64), 0.0)
        for k, (axis, idx) in enumerate([(1, [2]), (2, [0, 2, 4]), (1, [-1]), (1, [3, 1]), (2, [[0, 1]])]):
            ref = np.abs(np.take(xr, np.array(idx), axis=axis))
            assert_close(got["out%d" % k], ref)
            if b == 2:
                np.testing.assert_array_equal(ref, want[k])
