"""Transformer speed paths (issues #10 / #11): the fuse_linear builder pass (csrc/builder/passes/fuse_linear.c).

A matrix multiply by a constant weight becomes the internal LINEAR step, run by the fully connected kernels
(linear.packed_gemm / linear.sgemm in fp32, linear.bf16_gemm / linear.amx_bf16 under BuilderFlag.BF16), with the
bias add, the activation and a residual add fused into its epilogue.  Every network is built with the pass on, off
and at level 0 and compared with a numpy float64 reference (or onnxruntime for an ONNX encoder block); the
inspector says which steps became LINEAR and what they absorbed, including the shapes where the pass must not
fire (a weight with a batch dim, a non-constant B, a bias add whose input is also a network output).
"""
import json
import os

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
MO = trt.MatrixOperation
HAS_BF16 = "avx512bf16" in trt.cpu_features()


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def const(net, a):
    return net.add_constant(a.shape, a).get_output(0)


def gelu_ref(x):
    from math import erf
    return 0.5 * x * (1.0 + np.vectorize(erf)(x / np.sqrt(2.0)))


def layers_of(engine):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return info["layers"]


def linear_steps(engine):
    return [layer for layer in layers_of(engine) if layer["kernel"].startswith("linear.")]


def build(make, off=(), level=None, flags=(), seed=0):
    """(engine, inputs, references) of the network make(net, rng) builds."""
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    inputs, outs, ref = make(net, np.random.default_rng(seed))
    for i, o in enumerate(outs):
        o.name = "out%d" % i
        net.mark_output(o)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    for f in flags:
        config.set_flag(f)
    if level is not None:
        config.builder_optimization_level = level
    for p in off:
        config.set_pass_enabled(p, False)
    engine = builder.build_engine(net, config)
    assert engine is not None
    return engine, inputs, ref


def run(engine, inputs, n_out):
    outs = engine.create_execution_context().infer(inputs)
    return [outs["out%d" % i] for i in range(n_out)]


# ---- networks: make(net, rng) -> (inputs, outputs, float64 references) -------------------------------------

def ffn_block(net, rng, S=13, D=24, F=40):
    """x + (gelu(x W1 + b1) W2 + b2): W1, W2 [1, K, N] (the layer API wants equal ranks; ONNX's 2-D weights are
    the ONNX test's), bias [1, 1, N]; and x Wt^T with Wt [1, F, D] given TRANSPOSE (no bias)."""
    x = randn(rng, (1, S, D))
    w1, b1 = randn(rng, (1, D, F), 0.2), randn(rng, (1, 1, F), 0.1)
    w2, b2 = randn(rng, (1, F, D), 0.2), randn(rng, (D,), 0.1)
    wt = randn(rng, (1, F, D), 0.2)
    xt = net.add_input("x", trt.float32, x.shape)
    h = net.add_matrix_multiply(xt, MO.NONE, const(net, w1), MO.NONE).get_output(0)
    h = net.add_elementwise(h, const(net, b1), trt.ElementWiseOperation.SUM).get_output(0)
    h = net.add_activation(h, trt.ActivationType.GELU_ERF).get_output(0)
    y = net.add_matrix_multiply(h, MO.NONE, const(net, w2), MO.NONE).get_output(0)
    y = net.add_elementwise(const(net, b2.reshape(1, 1, D)), y, trt.ElementWiseOperation.SUM).get_output(0)
    y = net.add_elementwise(y, xt, trt.ElementWiseOperation.SUM).get_output(0)
    z = net.add_matrix_multiply(xt, MO.NONE, const(net, wt), MO.TRANSPOSE).get_output(0)
    xf = x.astype(np.float64)
    hf = gelu_ref(xf @ w1[0] + b1)
    return {"x": x}, [y, z], [xf + (hf @ w2[0] + b2), xf @ wt[0].T.astype(np.float64)]


def not_fusable(net, rng, S=5, D=8, F=12):
    """Where the pass must not fire: a weight with a batch dim of 2 (stays a matrix multiply), B an input (stays),
    and a product that is also a network output (becomes LINEAR, but its bias add stays apart)."""
    x = randn(rng, (2, S, D))
    wb = randn(rng, (2, D, F), 0.3)
    w, b = randn(rng, (1, D, F), 0.3), randn(rng, (F,), 0.1)
    bin_ = randn(rng, (2, D, F), 0.3)
    xt = net.add_input("x", trt.float32, x.shape)
    bt = net.add_input("b", trt.float32, bin_.shape)
    a = net.add_matrix_multiply(xt, MO.NONE, const(net, wb), MO.NONE).get_output(0)
    c = net.add_matrix_multiply(xt, MO.NONE, bt, MO.NONE).get_output(0)
    p = net.add_matrix_multiply(xt, MO.NONE, const(net, w), MO.NONE).get_output(0)
    q = net.add_elementwise(p, const(net, b.reshape(1, 1, F)), trt.ElementWiseOperation.SUM).get_output(0)
    xf = x.astype(np.float64)
    return {"x": x, "b": bin_}, [a, c, p, q], [xf @ wb, xf @ bin_, xf @ w[0], xf @ w[0] + b]


def gemm_head(net, rng, D=37, N=29):
    """An ONNX Gemm classifier head at batch 1: x[1, D] W^T (TRANSPOSE) + bias [1, N] -> ReLU, where the bias has
    the product's dims, so epilogue fusion takes the add first as a residual (the LINEAR keeps it as its bias); and
    the same product plus an input [1, N] (a true residual: stays a matrix multiply)."""
    x = randn(rng, (1, D))
    w, b = randn(rng, (N, D), 0.3), randn(rng, (1, N), 0.1)
    s = randn(rng, (1, N))
    xt = net.add_input("x", trt.float32, x.shape)
    st = net.add_input("s", trt.float32, s.shape)
    p = net.add_matrix_multiply(xt, MO.NONE, const(net, w), MO.TRANSPOSE).get_output(0)
    y = net.add_elementwise(p, const(net, b), trt.ElementWiseOperation.SUM).get_output(0)
    y = net.add_activation(y, trt.ActivationType.RELU).get_output(0)
    q = net.add_matrix_multiply(xt, MO.NONE, const(net, w), MO.TRANSPOSE).get_output(0)
    z = net.add_elementwise(q, st, trt.ElementWiseOperation.SUM).get_output(0)
    xf = x.astype(np.float64)
    return {"x": x, "s": s}, [y, z], [np.maximum(xf @ w.T + b, 0.0), xf @ w.T + s]


NETS = {"ffn_block": (ffn_block, 3), "not_fusable": (not_fusable, 1), "gemm_head": (gemm_head, 1)}
MODES = ["on", "off", "level0"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(NETS))
def test_fuse_linear_matches_reference(name, mode):
    """The networks compute the float64 reference with fuse_linear on, off and at level 0; with it on exactly the
    expected multiplies are LINEAR steps."""
    make, n_linear = NETS[name]
    off = ("fuse_linear",) if mode == "off" else ()
    engine, inputs, ref = build(make, off=off, level=0 if mode == "level0" else None)
    for out, r in zip(run(engine, inputs, len(ref)), ref):
        assert_close(out, r)
    assert len(linear_steps(engine)) == (n_linear if mode == "on" else 0)


def test_fuse_linear_absorbs_bias_activation_and_residual():
    """The FFN block is three steps: W1 + bias + GELU, W2 + bias + residual, and the transposed product."""
    engine, _, _ = build(ffn_block)
    layers = layers_of(engine)
    assert len(layers) == 3, [layer["name"] for layer in layers]
    names = [layer["name"] for layer in linear_steps(engine)]
    assert sum(n.count(" + ") == 2 for n in names) == 2, names  # matmul + bias add + (activation | residual add)
    engine_off, _, _ = build(ffn_block, off=("fuse_linear",))
    assert len(layers_of(engine_off)) > 3


def test_fuse_linear_leaves_unfusable_steps():
    """A weight with a batch dim and a B input stay matrix multiplies; the product that is a network output keeps
    its bias add apart."""
    engine, _, _ = build(not_fusable)
    kinds = [layer["kernel"].split(".")[0] for layer in layers_of(engine)]
    assert kinds.count("matrix_multiply") == 2 and kinds.count("linear") == 1, kinds
    assert kinds.count("elementwise") == 1, kinds


def test_fuse_linear_takes_an_epilogue_fused_bias():
    """The Gemm head's bias add, fused first by epilogue fusion, becomes the LINEAR step's bias (one step: matmul +
    bias + ReLU); the product with an input residual stays a matrix multiply with its residual."""
    engine, _, _ = build(gemm_head)
    layers = layers_of(engine)
    lin = linear_steps(engine)
    assert len(lin) == 1 and lin[0]["name"].count(" + ") == 2, [(x["name"], x["kernel"]) for x in layers]
    assert [x["kernel"].split(".")[0] for x in layers].count("matrix_multiply") == 1, layers


def test_fuse_linear_plan_round_trip():
    """A LINEAR step is stored in plans and loads back (the reader re-infers its shape)."""
    engine, inputs, ref = build(ffn_block)
    plan = engine.serialize()
    loaded = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)
    assert len(linear_steps(loaded)) == 3
    for out, r in zip(run(loaded, inputs, len(ref)), ref):
        assert_close(out, r)


def test_network_cannot_add_linear():
    """LINEAR is internal: the network API has no way to add it (it is no TensorRT layer)."""
    assert not hasattr(trt.INetworkDefinition, "add_linear")


@pytest.mark.skipif(not HAS_BF16, reason="CPU lacks AVX512_BF16")
def test_fuse_linear_bf16_kernels():
    """Under BuilderFlag.BF16 the LINEAR steps run the bf16 kernels (AMX where the CPU has it, at >= 16 rows)
    and stay within bf16 rounding of the float64 reference."""
    engine, inputs, ref = build(lambda n, r: ffn_block(n, r, S=32), flags=(trt.BuilderFlag.BF16,))
    kernels = [layer["kernel"] for layer in linear_steps(engine)]
    assert len(kernels) == 3 and all("bf16" in k for k in kernels), kernels
    for out, r in zip(run(engine, inputs, len(ref)), ref):
        assert_close(out, r, rtol=3e-2, atol=3e-2)


def test_onnx_encoder_ffn_vs_onnxruntime():
    """An exported-style encoder feed-forward block (MatMul + Add + erf GELU + MatMul + Add + residual +
    LayerNormalization) agrees with onnxruntime with fuse_linear on and off; on, the matmuls are LINEAR steps."""
    oh = pytest.importorskip("onnx_helpers")
    pytest.importorskip("onnxruntime")
    from onnx import helper
    rng = np.random.default_rng(3)
    S, D, F = 16, 32, 64
    inits = {"w1": randn(rng, (D, F), 0.2), "b1": randn(rng, (F,), 0.1), "w2": randn(rng, (F, D), 0.2),
             "b2": randn(rng, (D,), 0.1), "g": randn(rng, (D,), 0.5) + 1, "be": randn(rng, (D,), 0.1),
             "sq2": np.array(np.sqrt(2.0), np.float32), "one": np.array(1.0, np.float32),
             "half": np.array(0.5, np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"]), helper.make_node("Add", ["m1", "b1"], ["a1"]),
             helper.make_node("Div", ["a1", "sq2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]), helper.make_node("Mul", ["a1", "e1"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["h"]), helper.make_node("MatMul", ["h", "w2"], ["m2"]),
             helper.make_node("Add", ["m2", "b2"], ["a2"]), helper.make_node("Add", ["x", "a2"], ["r"]),
             helper.make_node("LayerNormalization", ["r", "g", "be"], ["y"], axis=-1, epsilon=1e-5)]
    model = oh.make_model(nodes, {"x": (1, S, D)}, {"y": (1, S, D)}, inits, opset=17)
    feeds = {"x": randn(rng, (1, S, D))}
    ref = oh.ort_run(model, feeds)
    for off in ((), ("fuse_linear",)):
        builder, network, _ = oh.parse(model)
        config = builder.create_builder_config()
        config.avg_timing_iterations = 0
        for p in off:
            config.set_pass_enabled(p, False)
        engine = builder.build_engine(network, config)
        got = engine.create_execution_context().infer(feeds)
        oh.assert_outputs_close(got, ref, rtol=1e-4, atol=1e-5)
        assert len(linear_steps(engine)) == (0 if off else 2)


class _Log(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.msgs = []

    def log(self, severity, msg):
        self.msgs.append(msg)


def test_build_serialized_network_skips_weight_packing():
    """build_serialized_network builds straight into a plan: no kernel packs its weights (the plan loader does),
    and the plan is byte for byte the one build_engine's engine serializes to, and runs the same."""
    log = _Log()
    builder = trt.Builder(log)
    net = builder.create_network(EXPLICIT)
    inputs, outs, ref = ffn_block(net, np.random.default_rng(0))
    for i, o in enumerate(outs):
        o.name = "out%d" % i
        net.mark_output(o)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    log.msgs.clear()
    plan = bytes(builder.build_serialized_network(net, config))
    assert any("weight packing skipped" in m for m in log.msgs)
    log.msgs.clear()
    engine = builder.build_engine(net, config)
    assert not any("weight packing skipped" in m for m in log.msgs)
    assert plan == bytes(engine.serialize())
    loaded = trt.Runtime(log).deserialize_cuda_engine(plan)
    for out, r in zip(run(loaded, inputs, len(ref)), ref):
        assert_close(out, r)


def big_linears(net, rng, S=100, D=200, F=300, DD=1800):
    """Shapes past the packed kernel's order switches (csrc/kernels/x86/fully_connected_gemm.c): x W1 + b1 -> GELU
    with 10 weight tiles (the tile-major order: A packed over the whole depth, the GELU applied every 8 tiles and
    at the chunk's end), (.) W2 + b2 + x (residual, 7 tiles), and u Wu^T with a depth of 1800 (past what the
    tile-major order packs whole: the depth-major order, depth blocks with a remainder)."""
    x, u = randn(rng, (1, S, D)), randn(rng, (1, 40, DD))
    w1, b1 = randn(rng, (1, D, F), 0.1), randn(rng, (1, 1, F), 0.1)
    w2, b2 = randn(rng, (1, F, D), 0.1), randn(rng, (1, 1, D), 0.1)
    wu = randn(rng, (1, F, DD), 0.03)
    xt, ut = net.add_input("x", trt.float32, x.shape), net.add_input("u", trt.float32, u.shape)
    h = net.add_matrix_multiply(xt, MO.NONE, const(net, w1), MO.NONE).get_output(0)
    h = net.add_elementwise(h, const(net, b1), trt.ElementWiseOperation.SUM).get_output(0)
    h = net.add_activation(h, trt.ActivationType.GELU_ERF).get_output(0)
    y = net.add_matrix_multiply(h, MO.NONE, const(net, w2), MO.NONE).get_output(0)
    y = net.add_elementwise(y, const(net, b2), trt.ElementWiseOperation.SUM).get_output(0)
    y = net.add_elementwise(y, xt, trt.ElementWiseOperation.SUM).get_output(0)
    z = net.add_matrix_multiply(ut, MO.NONE, const(net, wu), MO.TRANSPOSE).get_output(0)
    xf = x.astype(np.float64)
    hf = gelu_ref(xf @ w1[0] + b1)
    return {"x": x, "u": u}, [y, z], [xf + (hf @ w2[0] + b2), u.astype(np.float64) @ wu[0].T.astype(np.float64)]


@pytest.mark.parametrize("cpu_mask", [None, "1f"])
def test_packed_linear_orders_vs_float64(cpu_mask):
    """linear.packed_gemm on both of its weight-tile-stationary orders (tile-major and depth-major), with the bias,
    GELU and residual epilogues, on AVX-512 and on AVX2 (TRTL_CPU_MASK=1f is read once per process, so the masked
    variant runs in a child process), against float64 numpy."""
    if cpu_mask is not None:
        import subprocess
        import sys
        code = ("import sys; sys.path.insert(0, %r); import test_transformer_speed as t; "
                "t.test_packed_linear_orders_vs_float64(None)" % os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, TRTL_CPU_MASK=cpu_mask)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr[-3000:]
        return
    engine, inputs, ref = build(big_linears)
    kernels = [layer["kernel"] for layer in linear_steps(engine)]
    if "avx2" in trt.cpu_features() and "fma" in trt.cpu_features():
        assert kernels == ["linear.packed_gemm"] * 3, kernels
    for out, r in zip(run(engine, inputs, len(ref)), ref):
        assert_close(out, r)
