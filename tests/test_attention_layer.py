"""network.add_attention (TensorRT 10.14's IAttention) on the ATTENTION step (kernels/x86/attention.c tiled, and
the reference kernel), against numpy float64: softmax / NONE normalization, causal (upper left and, for ONNX
Attention with past keys, lower right), BOOL and additive FLOAT masks, grouped-query attention, sequence lengths
that are no multiple of the 32-row query tile, plans serialized and loaded, and bad inputs naming the layer.
The ONNX Attention op (opset 23) goes through the same layer where it can (trtlite/onnx/ops_attention.py)."""
import json

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
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    assert [layer["kernel"] for layer in info["layers"]] == ["attention.tiled" if mode == "opt" else "attention.ref"]
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


# ---- ONNX Attention (opset 23) through the layer ---------------------------------------------------------------

def onnx_attention_model(shapes, attrs, mask_dtype=None, past=None, dynamic_seq=False):
    """One Attention node: inputs Q, K, V (+ attn_mask, past_key, past_value) as graph inputs; outputs Y
    (+ present_key, present_value with past)."""
    from onnx import TensorProto, helper
    names = ["Q", "K", "V"]
    ins = []
    for n, s in zip(names, shapes):
        dims = list(s)
        if dynamic_seq:
            dims[-2 if len(s) == 4 else 1] = "S_" + n
        ins.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, dims))
    node_in = list(names)
    if mask_dtype is not None:
        ins.append(helper.make_tensor_value_info("M", mask_dtype[0], list(mask_dtype[1])))
        node_in.append("M")
    outs = ["Y"]
    if past is not None:
        node_in += [""] if mask_dtype is None else []
        node_in += ["PK", "PV"]
        ins += [helper.make_tensor_value_info("PK", TensorProto.FLOAT, list(past)),
                helper.make_tensor_value_info("PV", TensorProto.FLOAT, list(past))]
        outs += ["PKo", "PVo"]
    node = helper.make_node("Attention", node_in, outs, **attrs)
    graph = helper.make_graph([node], "attn", ins, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                                                     for o in outs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


def run_onnx(model, feeds, profile=None):
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    net = builder.create_network(EXPLICIT)
    parser = trt.OnnxParser(net, logger)
    assert parser.parse(model.SerializeToString()), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if profile:
        prof = builder.create_optimization_profile()
        for n, a in feeds.items():
            prof.set_shape(n, a.shape, a.shape, a.shape)
        config.add_optimization_profile(prof)
    engine = trt.Runtime(logger).deserialize_cuda_engine(builder.build_serialized_network(net, config))
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    kernels = [layer["kernel"] for layer in info["layers"]]
    out = engine.create_execution_context().infer(feeds)
    return {k: np.asarray(v) for k, v in out.items()}, kernels


def ort_run(model, feeds):
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


@pytest.mark.parametrize("case", ["gqa_bool_causal", "heads3d_float", "past_causal", "dynamic"])
def test_onnx_attention_fused(rng, case):
    from onnx import TensorProto
    if case == "gqa_bool_causal":
        q, k, v = qkv(rng, 2, 4, 2, 37, 37, 8)
        mask = rng.random((37, 37)) < 0.8
        model = onnx_attention_model([q.shape, k.shape, v.shape], {"is_causal": 1},
                                     (TensorProto.BOOL, mask.shape))
        feeds = {"Q": q, "K": k, "V": v, "M": mask}
        want = reference(q, k, v, mask[None, None], causal=True, scale=1 / np.sqrt(8))
    elif case == "heads3d_float":
        q, k, v = (rng.standard_normal((2, 33, 24)).astype(np.float32) for _ in range(3))
        mask = rng.standard_normal((2, 1, 33, 33)).astype(np.float32)
        model = onnx_attention_model([q.shape, k.shape, v.shape], {"q_num_heads": 3, "kv_num_heads": 3,
                                                                   "scale": 0.25}, (TensorProto.FLOAT, mask.shape))
        feeds = {"Q": q, "K": k, "V": v, "M": mask}
        heads = lambda t: t.reshape(2, 33, 3, 8).transpose(0, 2, 1, 3)  # noqa: E731
        want = reference(heads(q), heads(k), heads(v), mask, scale=0.25).transpose(0, 2, 1, 3).reshape(2, 33, 24)
    elif case == "past_causal":
        q, k, v = qkv(rng, 1, 2, 2, 5, 5, 8)
        pk, pv = (rng.standard_normal((1, 2, 40, 8)).astype(np.float32) for _ in range(2))
        model = onnx_attention_model([q.shape, k.shape, v.shape], {"is_causal": 1}, past=pk.shape)
        feeds = {"Q": q, "K": k, "V": v, "PK": pk, "PV": pv}
        want = reference(q, np.concatenate([pk, k], 2), np.concatenate([pv, v], 2), causal=True, lower_right=True,
                         scale=1 / np.sqrt(8))
    else:
        q, k, v = qkv(rng, 1, 2, 1, 45, 19, 16)
        model = onnx_attention_model([q.shape, k.shape, v.shape], {}, dynamic_seq=True)
        feeds = {"Q": q, "K": k, "V": v}
        want = reference(q, k, v, scale=0.25)
    out, kernels = run_onnx(model, feeds, profile=case == "dynamic")
    assert "attention.tiled" in kernels, kernels
    assert_close(out["Y"], want)
    ref = ort_run(model, feeds)
    assert_close(out["Y"], ref["Y"])
    if case == "past_causal":
        assert_close(out["PKo"], ref["PKo"])
