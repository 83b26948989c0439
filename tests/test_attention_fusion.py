"""Attention fusion (csrc/builder/passes/fuse_attention.c -> the internal ATTENTION step, kernels/x86/attention.c)
and transpose folding (passes/fold_transpose.c).

Networks written with the layer API over transformer shapes (seq 1..197, heads 1/3/12, head dims 32/64/80, masks
none / broadcast / per batch / causal -inf) are compared with a numpy float64 reference with the passes on (one
attention step, asserted through the engine inspector) and off; PyTorch's nn.TransformerEncoderLayer, a
HuggingFace-BERT-style block and scaled_dot_product_attention are exported to ONNX and compared with onnxruntime.
The kernel itself is compared with the reference kernel in tests/c/test_kernels.c (both ISA paths).
"""
import json

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close

E = trt.ElementWiseOperation
M = trt.MatrixOperation
EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


def layers_of(engine):
    return json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]


def attention_steps(engine):
    return [layer for layer in layers_of(engine) if layer["kernel"].startswith("attention.")]


def transpose(net, t, perm):
    layer = net.add_shuffle(t)
    layer.first_transpose = perm
    return layer.get_output(0)


def scalar(net, v, rank):
    return net.add_constant((1,) * rank, np.full((1,) * rank, v, np.float32)).get_output(0)


def make_mask(rng, kind, B, H, Sq, Sk):
    if kind == "none":
        return None
    if kind == "broadcast":  # key padding, one row for every batch and head
        return np.where(rng.random((1, 1, 1, Sk)) < 0.25, -1e4, 0).astype(np.float32)
    if kind == "per_batch":
        return (rng.standard_normal((B, 1, 1, Sk)) * 2).astype(np.float32)
    if kind == "causal":
        return np.triu(np.full((Sq, Sk), -np.inf, np.float32), 1)[None, None]
    raise ValueError(kind)


def build_attention(B, H, Sq, Sk, D, Dv, mask_kind, seed=0, k_form="transpose", scale_form="div", off=(),
                    q_scale=None):
    """Builds softmax(Q K^T * s [+ mask]) V as separate layers; returns (engine, inputs, float64 reference)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, H, Sq, D)).astype(np.float32)
    k = rng.standard_normal((B, H, Sk, D)).astype(np.float32)
    v = rng.standard_normal((B, H, Sk, Dv)).astype(np.float32)
    m = make_mask(rng, mask_kind, B, H, Sq, Sk)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    tq, tk, tv = (net.add_input(n, trt.float32, a.shape) for n, a in (("q", q), ("k", k), ("v", v)))
    s = 1.0 / np.sqrt(D)
    if q_scale is not None:  # scaled_dot_product_attention's export: Q and K^T each times sqrt(s)
        tq = net.add_elementwise(tq, scalar(net, q_scale, 4), E.PROD).get_output(0)
    if k_form == "transpose":    # K^T as a transpose layer (folded into op1 by fold_transpose)
        scores = net.add_matrix_multiply(tq, M.NONE, transpose(net, tk, (0, 1, 3, 2)), M.NONE)
    else:                        # op1 TRANSPOSE as a parser writes MatMul(Q, K^T) of a transposed K
        scores = net.add_matrix_multiply(tq, M.NONE, tk, M.TRANSPOSE)
    x = scores.get_output(0)
    if scale_form == "div":
        x = net.add_elementwise(x, scalar(net, float(np.sqrt(D)), 4), E.DIV).get_output(0)
    elif scale_form == "mul":
        x = net.add_elementwise(scalar(net, s, 4), x, E.PROD).get_output(0)
    inputs = {"q": q, "k": k, "v": v}
    if m is not None:
        tm = net.add_input("m", trt.float32, m.shape)
        inputs["m"] = m
        x = net.add_elementwise(x, tm, E.SUM).get_output(0)
    sm = net.add_softmax(x)
    sm.axes = 1 << 3
    y = net.add_matrix_multiply(sm.get_output(0), M.NONE, tv, M.NONE).get_output(0)
    y.name = "y"
    net.mark_output(y)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    for p in off:
        config.set_pass_enabled(p, False)
    engine = builder.build_engine(net, config)
    qf = q.astype(np.float64) * (q_scale if q_scale is not None else 1.0)
    sc = qf @ np.swapaxes(k.astype(np.float64), 2, 3)
    sc = sc / np.sqrt(D) if scale_form == "div" else sc * s if scale_form == "mul" else sc
    if m is not None:
        sc = sc + m
    with np.errstate(invalid="ignore"):
        ref = refs.softmax(sc, 3) @ v.astype(np.float64)
    return engine, inputs, ref


# (B, H, S, D, mask): every sequence length with tails, heads 1/3/12, head dims 32/64/80
SHAPES = [
    (2, 3, 1, 32, "none"), (1, 12, 7, 64, "broadcast"), (2, 1, 64, 80, "per_batch"), (1, 3, 128, 64, "causal"),
    (1, 12, 128, 64, "broadcast"), (1, 3, 197, 80, "none"), (2, 12, 7, 32, "causal"), (1, 1, 197, 64, "per_batch"),
]


@pytest.mark.parametrize("B,H,S,D,mask", SHAPES)
def test_fused_attention_matches_reference(B, H, S, D, mask):
    engine, inputs, ref = build_attention(B, H, S, S, D, D, mask)
    steps = attention_steps(engine)
    assert len(steps) == 1 and len(layers_of(engine)) == 1, [layer["name"] for layer in layers_of(engine)]
    out = engine.create_execution_context().infer(inputs)["y"]
    assert_close(out, ref)


@pytest.mark.parametrize("B,H,S,D,mask", SHAPES[:4])
def test_pass_off_computes_the_same(B, H, S, D, mask):
    on, inputs, ref = build_attention(B, H, S, S, D, D, mask)
    off, _, _ = build_attention(B, H, S, S, D, D, mask, off=("fuse_attention",))
    assert attention_steps(on) and not attention_steps(off)
    a = on.create_execution_context().infer(inputs)["y"]
    b = off.create_execution_context().infer(inputs)["y"]
    assert_close(a, ref)
    assert_close(b, ref)
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("k_form,scale_form,q_scale", [
    ("op1", "mul", None), ("transpose", "none", None), ("op1", "none", 0.35), ("transpose", "div", 2.0)])
def test_variants_fuse(k_form, scale_form, q_scale):
    """K^T as op1 or a transpose layer; scale as c * S, S / c, none, or on Q (Swin, SDPA exports); Sq != Sk."""
    engine, inputs, ref = build_attention(2, 3, 9, 21, 16, 24, "per_batch", seed=3, k_form=k_form,
                                          scale_form=scale_form, q_scale=q_scale)
    assert len(attention_steps(engine)) == 1 and len(layers_of(engine)) == 1
    assert_close(engine.create_execution_context().infer(inputs)["y"], ref)


def test_fully_masked_rows_are_nan_as_unfused():
    """A row masked entirely with -inf gives NaN (softmax of all -inf), fused or not."""
    engine, inputs, ref = build_attention(1, 2, 5, 5, 8, 8, "causal")
    inputs["m"] = inputs["m"].copy()
    inputs["m"][0, 0, 3, :] = -np.inf
    off, _, _ = build_attention(1, 2, 5, 5, 8, 8, "causal", off=("fuse_attention",))
    a = engine.create_execution_context().infer(inputs)["y"]
    b = off.create_execution_context().infer(inputs)["y"]
    assert np.isnan(a[0, :, 3]).all() and np.isnan(b[0, :, 3]).all()
    assert not np.isnan(np.delete(a, 3, axis=2)).any()
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_not_fused_when_an_intermediate_is_used_elsewhere():
    """The softmax is also a network output: no fusion, both outputs right."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 6, 8)).astype(np.float32) for _ in range(3))
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    tq, tk, tv = (net.add_input(n, trt.float32, a.shape) for n, a in (("q", q), ("k", k), ("v", v)))
    s = net.add_matrix_multiply(tq, M.NONE, tk, M.TRANSPOSE).get_output(0)
    sm = net.add_softmax(s)
    sm.axes = 1 << 3
    p = sm.get_output(0)
    y = net.add_matrix_multiply(p, M.NONE, tv, M.NONE).get_output(0)
    p.name, y.name = "p", "y"
    net.mark_output(y)
    net.mark_output(p)
    engine = builder.build_engine(net, builder.create_builder_config())
    assert not attention_steps(engine)
    out = engine.create_execution_context().infer({"q": q, "k": k, "v": v})
    pr = refs.softmax(q.astype(np.float64) @ np.swapaxes(k, 2, 3), 3)
    assert_close(out["p"], pr)
    assert_close(out["y"], pr @ v)


def test_plan_round_trip_keeps_the_attention_step():
    engine, inputs, ref = build_attention(1, 3, 7, 7, 16, 16, "broadcast")
    again = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(engine.serialize())
    assert len(attention_steps(again)) == 1
    assert_close(again.create_execution_context().infer(inputs)["y"], ref)


def test_transpose_folding_on_and_off():
    """x @ transpose(w): with fold_transpose the multiply reads w with op1 TRANSPOSE (one step), without it the
    transpose is a step of its own; both compute x @ w^T."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((3, 5, 7)).astype(np.float32), rng.standard_normal((3, 6, 7)).astype(np.float32)
    outs = {}
    for on in (True, False):
        builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
        net = builder.create_network(EXPLICIT)
        tx, tw = net.add_input("x", trt.float32, x.shape), net.add_input("w", trt.float32, w.shape)
        y = net.add_matrix_multiply(transpose(net, tx, (0, 2, 1)), M.TRANSPOSE, transpose(net, tw, (0, 2, 1)),
                                    M.NONE).get_output(0)
        y.name = "y"
        net.mark_output(y)
        config = builder.create_builder_config()
        if not on:
            config.set_pass_enabled("fold_transpose", False)
        engine = builder.build_engine(net, config)
        assert len(layers_of(engine)) == (1 if on else 3)
        outs[on] = engine.create_execution_context().infer({"x": x, "w": w})["y"]
    ref = x.astype(np.float64) @ np.swapaxes(w, 1, 2)
    assert_close(outs[True], ref)
    assert_close(outs[False], ref)


# ---- PyTorch exports compared with onnxruntime -------------------------------------------------------------

torch = pytest.importorskip("torch")
oh = pytest.importorskip("onnx_helpers")


def run_onnx(model_bytes, feeds, off=(), dynamic=None, dynamic_min=None):
    """Builds with trtlite (passes `off` disabled); returns (outputs, engine)."""
    builder, network, _ = oh.parse(model_bytes)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    for p in off:
        config.set_pass_enabled(p, False)
    if any(d < 0 for i in range(network.num_inputs) for d in network.get_input(i).shape):
        oh.add_profile(builder, config, network, {k: v.shape for k, v in feeds.items()}, min_shapes=dynamic_min,
                       max_shapes=dynamic)
    engine = builder.build_engine(network, config)
    return engine.create_execution_context().infer(feeds), engine


def check_onnx(model_bytes, feeds, n_attention, dynamic=None, dynamic_min=None):
    ref = oh.ort_run(model_bytes, feeds)
    got, engine = run_onnx(model_bytes, feeds, dynamic=dynamic, dynamic_min=dynamic_min)
    assert len(attention_steps(engine)) == n_attention, [layer["name"] for layer in layers_of(engine)]
    oh.assert_outputs_close(got, ref, rtol=1e-3, atol=1e-5)
    off, engine_off = run_onnx(model_bytes, feeds, off=("fuse_attention", "fold_transpose"), dynamic=dynamic,
                               dynamic_min=dynamic_min)
    assert not attention_steps(engine_off)
    oh.assert_outputs_close(off, ref, rtol=1e-3, atol=1e-5)
    return engine


@pytest.mark.parametrize("causal", [False, True])
def test_torch_transformer_encoder_layer(causal):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=48, nhead=3, dim_feedforward=96, dropout=0.0,
                                             batch_first=True).eval()

    class Enc(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = layer
            self.register_buffer("mask", torch.triu(torch.full((11, 11), float("-inf")), 1))

        def forward(self, x):
            return self.layer(x, src_mask=self.mask if causal else None)

    x = torch.randn(2, 11, 48)
    model = oh.export_torch(Enc().eval(), (x,), 17)
    check_onnx(model, {"x": x.numpy()}, 1)


class BertSelfAttention(torch.nn.Module if torch else object):
    """HuggingFace BERT's self-attention as written there: view + permute heads, Q K^T / sqrt(d) + extended mask."""

    def __init__(self, hidden=64, heads=4):
        super().__init__()
        self.h, self.d = heads, hidden // heads
        self.q, self.k, self.v = (torch.nn.Linear(hidden, hidden) for _ in range(3))
        self.o = torch.nn.Linear(hidden, hidden)
        self.ln = torch.nn.LayerNorm(hidden)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.h, self.d).permute(0, 2, 1, 3)

    def forward(self, x, attention_mask):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        ext = (1.0 - attention_mask[:, None, None, :]) * -10000.0
        scores = torch.matmul(q, k.transpose(-1, -2)) / (self.d ** 0.5) + ext
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        return self.ln(self.o(ctx.view(x.shape[0], x.shape[1], -1)) + x)


def test_bert_like_block_dynamic_shapes():
    torch.manual_seed(1)
    x = torch.randn(2, 13, 64)
    am = torch.ones(2, 13)
    am[1, 9:] = 0
    model = oh.export_torch(BertSelfAttention().eval(), (x, am), 17, input_names=("x", "mask"),
                            dynamic_axes={"x": {0: "b", 1: "s"}, "mask": {0: "b", 1: "s"}})
    feeds = {"x": x.numpy(), "mask": am.numpy()}
    engine = check_onnx(model, feeds, 1, dynamic={"x": (3, 40, 64), "mask": (3, 40)})
    # another shape inside the profile
    ctx = engine.create_execution_context()
    x2 = np.random.default_rng(2).standard_normal((3, 40, 64)).astype(np.float32)
    m2 = np.ones((3, 40), np.float32)
    m2[0, 30:] = 0
    ctx.set_input_shape("x", x2.shape)
    ctx.set_input_shape("mask", m2.shape)
    got = ctx.infer({"x": x2, "mask": m2})
    oh.assert_outputs_close(got, oh.ort_run(model, {"x": x2, "mask": m2}))


@pytest.mark.parametrize("kind", ["plain", "mask", "causal"])
def test_scaled_dot_product_attention_export(kind):
    import torch.nn.functional as F

    class Sdpa(torch.nn.Module):
        def forward(self, q, k, v, m):
            if kind == "mask":
                return F.scaled_dot_product_attention(q, k, v, attn_mask=m)
            return F.scaled_dot_product_attention(q, k, v, is_causal=kind == "causal")

    torch.manual_seed(2)
    q, k, v = torch.randn(2, 3, 10, 32), torch.randn(2, 3, 10, 32), torch.randn(2, 3, 10, 40)
    m = torch.randn(2, 1, 10, 10)
    model = oh.export_torch(Sdpa().eval(), (q, k, v, m), 17, input_names=("q", "k", "v", "m"))
    feeds = {n: t.numpy() for n, t in zip("qkvm", (q, k, v, m))}
    import onnx
    used = {i.name for i in onnx.load_from_string(model).graph.input}
    feeds = {n: a for n, a in feeds.items() if n in used}
    check_onnx(model, feeds, 1)


class ShiftedWindowAttention(torch.nn.Module if torch else object):
    """Swin's window attention as torchvision writes it: q * scale @ k^T + relative position bias, then for shifted
    windows the scores viewed as [B, nW, h, N, N] plus a per-window mask and viewed back."""

    def __init__(self, dim=32, heads=2, n=9, nw=4, shifted=True):
        super().__init__()
        self.h, self.d, self.n, self.nw, self.shifted = heads, dim // heads, n, nw, shifted
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.register_buffer("bias", torch.randn(1, heads, n, n))
        mask = torch.zeros(nw, n, n)
        mask[1:, :, 5:] = -100.0
        mask[3, 2:, :2] = -100.0
        self.register_buffer("mask", mask)

    def forward(self, x):  # x [B * nW, N, C]
        bw, n, c = x.shape
        qkv = self.qkv(x).reshape(bw, n, 3, self.h, self.d).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * self.d ** -0.5).matmul(k.transpose(-2, -1)) + self.bias
        if self.shifted:
            attn = attn.view(bw // self.nw, self.nw, self.h, n, n) + self.mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.h, n, n)
        x = attn.softmax(dim=-1).matmul(v).transpose(1, 2).reshape(bw, n, c)
        return self.proj(x)


@pytest.mark.parametrize("shifted", [False, True])
def test_swin_window_attention(shifted):
    """Both Swin blocks fuse: the shifted one with the bias and the window mask folded into one [nW, h, N, N]
    constant that repeats along the scores' dim 0 (mask_mode 2); dynamic batch."""
    torch.manual_seed(3)
    x = torch.randn(8, 9, 32)
    model = oh.export_torch(ShiftedWindowAttention(shifted=shifted).eval(), (x,), 17,
                            dynamic_axes={"x": {0: "bw"}, "y": {0: "bw"}})
    engine = check_onnx(model, {"x": x.numpy()}, 1, dynamic={"x": (16, 9, 32)}, dynamic_min={"x": (4, 9, 32)})
    ctx = engine.create_execution_context()
    x2 = np.random.default_rng(4).standard_normal((12, 9, 32)).astype(np.float32)
    ctx.set_input_shape("x", x2.shape)
    oh.assert_outputs_close(ctx.infer({"x": x2}), oh.ort_run(model, {"x": x2}))
