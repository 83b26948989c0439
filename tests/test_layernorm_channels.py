"""Layer normalization over the channels of an NCHW tensor (issue #10, ConvNeXt's LayerNorm2d): the fold_transpose
pass turns permute(0, 2, 3, 1) -> LayerNorm(last dim) -> permute(0, 3, 1, 2) into one normalization over dim 1,
which "normalization.channels" (csrc/kernels/x86/normalization_channels.c) runs; and ConvNeXt's layer scale after
the transpose back (x W + b -> permute -> * gamma) folded into W and b.

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


def build(make, off=(), level=None, flags=()):
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
    for f in flags:
        config.set_flag(f)
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


# ---- layer scale folded across the transpose (fold_transpose rewrite 4) ----------------------------------------

def layer_scale_block(transposed=False, gamma_dim=1, shared_w=False, mid_output=False, shape=(1, 5, 7, 12), N=20):
    """x [1, H, W, K] -> x W + b -> permute(0, 3, 1, 2) -> * gamma [1, N, 1, 1] -> + r (ConvNeXt's block end).
    transposed: W given as [1, 1, N, K] with TRANSPOSE; gamma_dim: the dim gamma varies along (1: the channels);
    shared_w: W also feeds a second multiply (an extra output); mid_output: the transposed result is an output."""
    def make(net, rng):
        _, H, W_, K = shape
        x = rng.standard_normal(shape).astype(np.float32)
        r = rng.standard_normal((1, N, H, W_)).astype(np.float32)
        w = (0.3 * rng.standard_normal((1, 1, K, N))).astype(np.float32)
        b = rng.standard_normal((1, 1, 1, N)).astype(np.float32)
        gshape = [1, 1, 1, 1]
        gshape[gamma_dim] = (N, H, W_)[gamma_dim - 1] if gamma_dim else 1
        gam = (0.5 + rng.random(gshape)).astype(np.float32)
        xi, ri = net.add_input("x", trt.float32, shape), net.add_input("r", trt.float32, (1, N, H, W_))
        wc = const(net, np.ascontiguousarray(w.transpose(0, 1, 3, 2)) if transposed else w)
        mm = net.add_matrix_multiply(xi, trt.MatrixOperation.NONE, wc,
                                     trt.MatrixOperation.TRANSPOSE if transposed else trt.MatrixOperation.NONE)
        add = net.add_elementwise(mm.get_output(0), const(net, b), trt.ElementWiseOperation.SUM)
        t = net.add_shuffle(add.get_output(0))
        t.first_transpose = (0, 3, 1, 2)
        mul = net.add_elementwise(t.get_output(0), const(net, gam), trt.ElementWiseOperation.PROD)
        out = net.add_elementwise(mul.get_output(0), ri, trt.ElementWiseOperation.SUM)
        lin = (x.astype(np.float64) @ w[0, 0] + b).transpose(0, 3, 1, 2)
        outs, refs = [out.get_output(0)], [lin * gam + r]
        if shared_w:
            outs.append(net.add_matrix_multiply(xi, trt.MatrixOperation.NONE, wc, mm.op1).get_output(0))
            refs.append(x.astype(np.float64) @ w[0, 0])
        if mid_output:
            outs.append(t.get_output(0))
            refs.append(lin)
        return {"x": x, "r": r}, outs, refs
    return make


@pytest.mark.parametrize("transposed", [False, True])
def test_layer_scale_folds_into_linear(transposed):
    """The pass on: the product step is gone (W's columns and b scaled), so the skip addition then reads the
    transpose and becomes its epilogue residual (fuse_epilogue): two steps fewer; off / level 0: it stays; all vs
    float64."""
    make = layer_scale_block(transposed=transposed)
    counts = {}
    for off, level in (((), None), (("fold_transpose",), None), ((), 0)):
        engine, inputs, refs = build(make, off + ("fuse_chain",), level)  # (it would join the product and the add)
        counts[(off, level)] = len(kernels(engine))
        out = engine.create_execution_context().infer(inputs)["out0"]
        assert_close(out, refs[0], rtol=1e-4, atol=1e-4)
    assert counts[((), None)] == counts[(("fold_transpose",), None)] - 2, counts


@pytest.mark.parametrize("case", [dict(gamma_dim=2), dict(shared_w=True), dict(mid_output=True)])
def test_layer_scale_must_not_fold(case):
    """gamma along a spatial dim, W read by another layer, the transposed result an output: the product stays (same
    step count as with the pass off), and every output matches float64."""
    make = layer_scale_block(**case)
    on, inputs, refs = build(make)
    off, _, _ = build(make, ("fold_transpose",))
    assert len(kernels(on)) == len(kernels(off)), (kernels(on), kernels(off))
    outs = on.create_execution_context().infer(inputs)
    for i, r in enumerate(refs):
        assert_close(outs["out%d" % i], r, rtol=1e-4, atol=1e-4)


def test_onnx_layer_scale_vs_onnxruntime(tmp_path):
    """ConvNeXt's block end as ONNX exports it (MatMul by a 2-D weight, Add, Transpose, Mul by [N, 1, 1], Add) with the
    pass on and off against onnxruntime: the Mul step is gone with the pass on, and the Add after the Transpose then
    becomes its epilogue residual (fuse_epilogue: one linear step and one transpose step; 3 steps with fuse_epilogue
    off)."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(2)
    K, N, H, W = 24, 16, 6, 9
    w = (0.3 * rng.standard_normal((K, N))).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    gam = (0.5 + rng.random((N, 1, 1))).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Transpose", ["a"], ["t"], perm=[0, 3, 1, 2]), helper.make_node("Mul", ["g", "t"], ["s"]),
        helper.make_node("Add", ["s", "r"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "ls", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, H, W, K]),
                                            helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, N, H, W])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(a, n) for a, n in ((w, "w"), (b, "b"), (gam, "g"))])
    path = str(tmp_path / "ls.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    feeds = {"x": rng.standard_normal((1, H, W, K)).astype(np.float32),
             "r": rng.standard_normal((1, N, H, W)).astype(np.float32)}
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    steps = {}
    for off in ((), ("fold_transpose",), ("fuse_epilogue",)):  # fuse_chain off: it would join the Mul and the Add
        builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
        net = builder.create_network(EXPLICIT)
        assert trt.OnnxParser(net, trt.Logger(trt.Logger.WARNING)).parse_from_file(path)
        config = builder.create_builder_config()
        config.avg_timing_iterations = 0
        for p in off + ("fuse_chain",):
            config.set_pass_enabled(p, False)
        engine = builder.build_engine(net, config)
        steps[off] = len(kernels(engine))
        assert_close(engine.create_execution_context().infer(feeds)["y"], want, rtol=1e-4, atol=1e-4)
    assert steps[()] == 2 and steps[("fold_transpose",)] == 4 and steps[("fuse_epilogue",)] == 3, steps


def test_refit_builds_keep_weights_as_given():
    """Under BuilderFlag.REFIT neither rewrite runs (the layer norm's transposes and the layer-scale product stay:
    the same steps as with the pass off), and both networks still match float64."""
    for make in (layernorm2d((1, 13, 5, 7)), layer_scale_block()):
        on, inputs, refs = build(make, flags=(trt.BuilderFlag.REFIT,))
        off, _, _ = build(make, ("fold_transpose",), flags=(trt.BuilderFlag.REFIT,))
        assert kernels(on) == kernels(off), (kernels(on), kernels(off))
        assert_close(on.create_execution_context().infer(inputs)["out0"], refs[0], rtol=1e-4, atol=1e-4)
