"""network.add_attention (TensorRT 10.14's IAttention) on the ATTENTION step (kernels/x86/attention.c tiled, and
the reference kernel), against numpy float64: softmax / NONE normalization, causal (upper left and, for ONNX
Attention with past keys, lower right), BOOL and additive FLOAT masks, grouped-query attention, sequence lengths
that are no multiple of the 32-row query tile, plans serialized and loaded, and bad inputs naming the layer.
The ONNX Attention op (opset 23) goes through the same layer where it can (trtlite/onnx/ops_attention.py)."""
import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
NORM = trt.AttentionNormalizationOp


def reference(q, k, v, mask=None, causal=False, lower_right=False, norm="softmax", scale=1.0):
    """float64 attention: K / V heads repeated for grouped-query attention, ruled-out keys -inf (weight 0 with
    NONE), rows without a key zeros."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    hq, hk = q.shape[1], k.shape[1]
    if hk != hq:
        k, v = np.repeat(k, hq // hk, axis=1), np.repeat(v, hq // hk, axis=1)
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    sq, sk = s.shape[-2:]
    allowed = np.ones((sq, sk), bool)
    if causal:
        i, j = np.arange(sq)[:, None], np.arange(sk)[None, :]
        allowed = j <= i + (sk - sq if lower_right else 0)
    allowed = np.broadcast_to(allowed, s.shape)
    if mask is not None and mask.dtype == np.bool_:
        allowed = allowed & np.broadcast_to(mask, s.shape)
    elif mask is not None:
        s = s + mask
    if norm == "none":
        w = np.where(allowed, s, 0.0)
    else:
        s = np.where(allowed, s, -np.inf)
        mx = s.max(-1, keepdims=True)
        dead = mx == -np.inf
        e = np.exp(s - np.where(dead, 0, mx))
        w = np.where(dead, 0.0, e / np.where(dead, 1, e.sum(-1, keepdims=True)))
    return w @ v


def run_attention(mode, q, k, v, mask=None, causal=False, norm=None, scale=None, serialize=False):
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    net = builder.create_network(EXPLICIT)
    tq, tk, tv = (net.add_input(n, trt.float32, a.shape) for n, a in (("q", q), ("k", k), ("v", v)))
    layer = net.add_attention(tq, tk, tv, NORM.SOFTMAX if norm is None else norm, causal)
    layer.name = "attn"
    feeds = {"q": q, "k": k, "v": v}
    if mask is not None:
        layer.mask = net.add_input("m", trt.bool if mask.dtype == np.bool_ else trt.float32, mask.shape)
        feeds["m"] = mask
    if scale is not None:
        layer.scale = scale
    net.mark_output(layer.get_output(0))
    config = builder.create_builder_config()
    if mode == "ref":
        config.builder_optimization_level = 0
    else:
        config.avg_timing_iterations = 0
    plan = builder.build_serialized_network(net, config)
    engine = trt.Runtime(logger).deserialize_cuda_engine(plan)
    if serialize:
        engine = trt.Runtime(logger).deserialize_cuda_engine(engine.serialize())
    out = engine.create_execution_context().infer(feeds)
    return np.asarray(next(iter(out.values())))


def qkv(rng, b, hq, hk, sq, sk, d, dv=None):
    dv = d if dv is None else dv
    return (rng.standard_normal((b, hq, sq, d)).astype(np.float32),
            rng.standard_normal((b, hk, sk, d)).astype(np.float32),
            rng.standard_normal((b, hk, sk, dv)).astype(np.float32))


@pytest.mark.parametrize("mode", ["opt", "ref"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 3, 37, 37, 16), (1, 4, 2, 70, 45, 8), (1, 2, 1, 5, 66, 24)])
def test_attention_causal_gqa_tails(rng, mode, causal, shape):
    b, hq, hk, sq, sk, d = shape
    q, k, v = qkv(rng, b, hq, hk, sq, sk, d, d + 3)
    scale = 1.0 / np.sqrt(d)
    out = run_attention(mode, q * np.float32(scale), k, v, causal=causal)
    assert_close(out, reference(q * np.float32(scale), k, v, causal=causal))


@pytest.mark.parametrize("mode", ["opt", "ref"])
def test_attention_masks(rng, mode):
    q, k, v = qkv(rng, 2, 4, 2, 41, 35, 8)
    bmask = rng.random((2, 1, 41, 35)) < 0.7
    bmask[0, 0, 3] = False  # a row without a key: zeros
    assert_close(run_attention(mode, q, k, v, mask=bmask, scale=0.3), reference(q, k, v, bmask, scale=0.3))
    fmask = (rng.standard_normal((1, 4, 1, 35)) * 2).astype(np.float32)
    assert_close(run_attention(mode, q, k, v, mask=fmask, causal=True), reference(q, k, v, fmask, causal=True))
    assert_close(run_attention(mode, q, k, v, mask=bmask, causal=True, serialize=True),
                 reference(q, k, v, bmask, causal=True))


@pytest.mark.parametrize("mode", ["opt", "ref"])
def test_attention_norm_none(rng, mode):
    q, k, v = qkv(rng, 1, 2, 2, 33, 20, 8)
    bmask = rng.random((1, 1, 33, 20)) < 0.5
    out = run_attention(mode, q, k, v, mask=bmask, causal=True, norm=NORM.NONE)
    assert_close(out, reference(q, k, v, bmask, causal=True, norm="none"))


def test_attention_layer_api(rng):
    net = trt.Builder(trt.Logger()).create_network(EXPLICIT)
    q = net.add_input("q", trt.float32, (1, 2, 4, 8))
    kv = net.add_input("k", trt.float32, (1, 2, 6, 8))
    layer = net.add_attention(q, kv, kv, trt.AttentionNormalizationOp.SOFTMAX, False)
    assert isinstance(layer, trt.IAttention)
    assert layer.norm_op == trt.AttentionNormalizationOp.SOFTMAX and layer.causal is False
    assert layer.mask is None and layer.num_inputs == 3 and not layer.decomposable
    layer.causal = True
    layer.decomposable = True
    layer.norm_op = trt.AttentionNormalizationOp.NONE
    assert layer.causal and layer.decomposable and layer.norm_op == trt.AttentionNormalizationOp.NONE
    m = net.add_input("m", trt.bool, (1, 1, 4, 6))
    layer.mask = m
    assert layer.num_inputs == 4 and layer.mask.name == "m"
    assert tuple(layer.get_output(0).shape) == (1, 2, 4, 8)


def bad_network(shapes, mask=None):
    def make(net):
        ins = [net.add_input(n, trt.float32, s) for n, s in zip("qkv", shapes)]
        layer = net.add_attention(*ins, trt.AttentionNormalizationOp.SOFTMAX, False)
        layer.name = "my_attn"
        if mask is not None:
            layer.mask = net.add_input("m", mask[1], mask[0])
        net.mark_output(layer.get_output(0))
    return make


@pytest.mark.parametrize("shapes,mask", [
    (((1, 2, 4, 8), (1, 2, 6, 7), (1, 2, 6, 8)), None),          # head dims differ
    (((1, 2, 4, 8), (1, 2, 6, 8), (1, 2, 5, 8)), None),          # K and V sequence lengths differ
    (((1, 4, 4, 8), (1, 3, 6, 8), (1, 3, 6, 8)), None),          # 3 KV heads do not divide 4
    (((1, 2, 4, 8), (1, 2, 6, 8), (1, 2, 6, 8)), ((1, 1, 4, 5), trt.float32)),  # mask keys
    (((1, 2, 4, 8), (1, 2, 6, 8), (1, 2, 6, 8)), ((1, 1, 4, 6), trt.int32)),    # mask dtype
])
def test_attention_bad_inputs(expect_layer_error, shapes, mask):
    expect_layer_error(bad_network(shapes, mask), trt.Error, ("my_attn", "[Attention]"))
