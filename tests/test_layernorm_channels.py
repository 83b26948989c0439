"""Layer normalization over the channels of an NCHW tensor (issue #10, ConvNeXt's LayerNorm2d): the fold_transpose
pass turns permute(0, 2, 3, 1) -> LayerNorm(last dim) -> permute(0, 3, 1, 2) into one normalization over dim 1,
which "normalization.channels" (csrc/kernels/x86/normalization_channels.c) runs.

Each network is built with the pass on and off (and at level 0) and compared with a numpy float64 reference; the
inspector says which steps are left.  Where the pass must not fire (the normalized tensor also a network output,
transposes that are not inverse, scale shared with another layer) the engine keeps the transposes and is still right.
An ONNX LayerNorm2d (as torchvision's ConvNeXt exports it) is compared with onnxruntime.
"""
import json

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


def const(net, a):
    return net.add_constant(a.shape, a).get_output(0)


def ln_ref(x, axis, s, b, eps):
    x = x.astype(np.float64)
    m = x.mean(axis=axis, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axis, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * s + b


def build(make, off=(), level=None):
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    inputs, outs, refs = make(net, np.random.default_rng(0))
    for i, o in enumerate(outs):
        o.name = "out%d" % i
        net.mark_output(o)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if level is not None:
        config.builder_optimization_level = level
    for p in off:
        config.set_pass_enabled(p, False)
    engine = builder.build_engine(net, config)
    assert engine is not None
    return engine, inputs, refs


def kernels(engine):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return [layer["kernel"] for layer in info["layers"]]


def layernorm2d(shape, eps=1e-6, shared_scale=False, bad_perm=False, mid_output=False):
    """x [N, C, H, W] -> permute(0, 2, 3, 1) -> LN over C (scale / bias [1, 1, 1, C]) -> permute back."""
    def make(net, rng):
        N, C, H, W = shape
        x = (3.0 + 2.0 * rng.standard_normal(shape)).astype(np.float32)
        s = rng.standard_normal((1, 1, 1, C)).astype(np.float32)
        b = rng.standard_normal((1, 1, 1, C)).astype(np.float32)
        xi = net.add_input("x", trt.float32, shape)
        t1 = net.add_shuffle(xi)
        t1.first_transpose = (0, 2, 3, 1)
        sc = const(net, s)
        ln = net.add_normalization(t1.get_output(0), sc, const(net, b), 1 << 3)
        ln.epsilon = eps
        t2 = net.add_shuffle(ln.get_output(0))
        t2.first_transpose = (0, 3, 2, 1) if bad_perm else (0, 3, 1, 2)
        y = ln_ref(x.transpose(0, 2, 3, 1), 3, s, b, eps)
        outs, refs = [t2.get_output(0)], [y.transpose(0, 3, 2, 1) if bad_perm else y.transpose(0, 3, 1, 2)]
        if mid_output:
            outs.append(ln.get_output(0))
            refs.append(y)
        if shared_scale:  # the scale also feeds a product: it may not be re-shaped
            outs.append(net.add_elementwise(t1.get_output(0), sc, trt.ElementWiseOperation.PROD).get_output(0))
            refs.append(x.transpose(0, 2, 3, 1).astype(np.float64) * s)
        return {"x": x}, outs, refs
    return make


@pytest.mark.parametrize("shape", [(1, 13, 5, 7), (2, 96, 9, 9), (1, 768, 1, 1), (1, 24, 7, 56)])
def test_layernorm2d_becomes_one_step(shape):
    """The pass on: one normalization.channels step; off and at level 0: the transposes stay; all match float64
    (tails of 32 / 16 / 8 / single pixels, one pixel, C = 768)."""
    make = layernorm2d(shape)
    for off, level, want_steps in (((), None, 1), (("fold_transpose",), None, 3), ((), 0, 3)):
        engine, inputs, refs = build(make, off, level)
        ks = kernels(engine)
        assert len(ks) == want_steps, ks
        if want_steps == 1:
            assert ks == ["normalization.channels"], ks
        out = engine.create_execution_context().infer(inputs)["out0"]
        assert_close(out, refs[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", ["mid_output", "bad_perm", "shared_scale"])
def test_layernorm2d_pass_must_not_fire(case):
    """The normalized tensor also an output, transposes that do not cancel, a scale another layer reads: the
    transposes stay (no normalization.channels step), and every output matches float64."""
    make = layernorm2d((1, 10, 3, 11), **{case: True})
    engine, inputs, refs = build(make)
    ks = kernels(engine)
    assert "normalization.channels" not in ks and ks.count("shuffle.transpose") >= 1, ks
    outs = engine.create_execution_context().infer(inputs)
    for i, r in enumerate(refs):
        assert_close(outs["out%d" % i], r, rtol=1e-4, atol=1e-4)


def test_onnx_layernorm2d_vs_onnxruntime(tmp_path):
    """torchvision's LayerNorm2d as ONNX exports it (Transpose -> LayerNormalization -> Transpose, opset 17) between
    two convolutions, with the pass on and off, against onnxruntime."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    C = 40
    w1 = (0.2 * rng.standard_normal((C, 3, 3, 3))).astype(np.float32)
    w2 = (0.2 * rng.standard_normal((C, C, 1, 1))).astype(np.float32)
    s = rng.standard_normal(C).astype(np.float32)
    b = rng.standard_normal(C).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Transpose", ["c1"], ["t1"], perm=[0, 2, 3, 1]),
        helper.make_node("LayerNormalization", ["t1", "s", "b"], ["n"], axis=-1, epsilon=1e-6),
        helper.make_node("Transpose", ["n"], ["t2"], perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["t2", "w2"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "ln2d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 17, 19])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (w2, "w2"), (s, "s"), (b, "b"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = str(tmp_path / "ln2d.onnx")
    onnx.save(model, path)
    x = rng.standard_normal((1, 3, 17, 19)).astype(np.float32)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for off in ((), ("fold_transpose",)):
        builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
        net = builder.create_network(EXPLICIT)
        parser = trt.OnnxParser(net, trt.Logger(trt.Logger.WARNING))
        assert parser.parse_from_file(path)
        config = builder.create_builder_config()
        config.avg_timing_iterations = 0
        for p in off:
            config.set_pass_enabled(p, False)
        engine = builder.build_engine(net, config)
        ks = kernels(engine)
        assert ("normalization.channels" in ks) == (not off), ks
        assert ks.count("shuffle.transpose") == (2 if off else 0), ks
        got = engine.create_execution_context().infer({"x": x})["y"]
        assert_close(got, want, rtol=1e-4, atol=1e-4)
