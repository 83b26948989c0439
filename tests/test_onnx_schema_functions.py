"""LLM-era ops (issue #12 (4)): CausalConvWithState and LinearAttention (opset 27), which have no importer and are
imported as the function body onnx builds for the node, and TensorScatter (opset 24, a KV-cache update).  References:
numpy float64 implementations written from the ONNX operator documentation, on random shapes."""
import numpy as np
import pytest

from onnx_helpers import ParseFailed, helper, make_model, parse, trt_build


def _causal_conv_ref(x, w, b, past, act):
    """y[n, c, t] = sum_j w[c, 0, j] * xp[n, c, t + j] over the past state prepended to x; present = last k-1."""
    k = w.shape[2]
    xp = np.concatenate([past, x], axis=2).astype(np.float64)
    T = x.shape[2]
    y = np.zeros(x.shape, np.float64)
    for j in range(k):
        y += w[None, :, 0, j, None] * xp[:, :, j:j + T]
    if b is not None:
        y += b[None, :, None]
    if act in ("silu", "swish"):
        y = y / (1 + np.exp(-y))
    return y, xp[:, :, xp.shape[2] - (k - 1):]


@pytest.mark.parametrize("n,c,t,k,bias,past,act", [(2, 3, 7, 4, True, True, "silu"), (1, 5, 1, 3, False, True, "none"),
                                                     (3, 2, 9, 2, True, False, "swish")])
def test_causal_conv_with_state(n, c, t, k, bias, past, act):
    rng = np.random.default_rng(n * 100 + t)
    x = rng.standard_normal((n, c, t)).astype(np.float32)
    w = rng.standard_normal((c, 1, k)).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32) if bias else None
    ps = rng.standard_normal((n, c, k - 1)).astype(np.float32) if past else np.zeros((n, c, k - 1), np.float32)
    ins = {"x": ((n, c, t), np.float32), "w": ((c, 1, k), np.float32)}
    names = ["x", "w", "b" if bias else "", "p" if past else ""]
    if bias:
        ins["b"] = ((c,), np.float32)
    if past:
        ins["p"] = ((n, c, k - 1), np.float32)
    node = helper.make_node("CausalConvWithState", names, ["y", "s"], activation=act)
    m = make_model([node], ins, {"y": None, "s": None}, opset=27)
    eng, _ = trt_build(m)
    feeds = {"x": x, "w": w}
    if bias:
        feeds["b"] = b
    if past:
        feeds["p"] = ps
    out = eng.create_execution_context().infer(feeds)
    y, s = _causal_conv_ref(x, w, b, ps, act)
    np.testing.assert_allclose(out["y"], y, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out["s"], s, rtol=1e-6, atol=1e-6)


def _linear_attention_ref(q, k, v, state, decay, beta, hq, hkv, rule, scale):
    """The recurrences of the ONNX LinearAttention documentation, token by token, in float64."""
    B, T, _ = q.shape
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    q4 = q.reshape(B, T, hq, dk).astype(np.float64)
    k4 = k.reshape(B, T, hkv, dk).astype(np.float64)
    v4 = v.reshape(B, T, hkv, dv).astype(np.float64)
    S = state.astype(np.float64).copy()  # [B, hkv, dk, dv]
    out = np.zeros((B, T, hq, dv))
    g = hq // hkv
    for t in range(T):
        kt, vt = k4[:, t], v4[:, t]  # [B, hkv, dk], [B, hkv, dv]
        if rule in ("gated", "gated_delta"):
            S = np.exp(decay.reshape(B, T, -1)[:, t].astype(np.float64))[:, :, None, None] * S
        if rule == "linear" or rule == "gated":
            S = S + kt[:, :, :, None] * vt[:, :, None, :]
        else:
            bt = beta.reshape(B, T, -1)[:, t].astype(np.float64)[:, :, None]  # [B, hkv, 1]
            pred = np.einsum("bhkv,bhk->bhv", S, kt)
            S = S + kt[:, :, :, None] * (bt * (vt - pred))[:, :, None, :]
        for h in range(hq):
            out[:, t, h] = scale * np.einsum("bk,bkv->bv", q4[:, t, h], S[:, h // g])
    return out.reshape(B, T, hq * dv), S


@pytest.mark.parametrize("rule,hq,hkv,t", [("linear", 2, 2, 5), ("gated", 2, 1, 3), ("delta", 2, 2, 1),
                                           ("gated_delta", 4, 2, 4)])
def test_linear_attention(rule, hq, hkv, t):
    rng = np.random.default_rng(hq * 10 + t)
    B, dk, dv = 2, 3, 5
    q = rng.standard_normal((B, t, hq * dk)).astype(np.float32)
    k = (rng.standard_normal((B, t, hkv * dk)) * 0.5).astype(np.float32)
    v = rng.standard_normal((B, t, hkv * dv)).astype(np.float32)
    st = rng.standard_normal((B, hkv, dk, dv)).astype(np.float32)
    decay = (-rng.random((B, t, hkv))).astype(np.float32)
    beta = rng.random((B, t, hkv)).astype(np.float32)
    names = ["q", "k", "v", "s", "g" if "gated" in rule else "", "b" if "delta" in rule else ""]
    ins = {"q": (q.shape, np.float32), "k": (k.shape, np.float32), "v": (v.shape, np.float32),
           "s": (st.shape, np.float32)}
    feeds = {"q": q, "k": k, "v": v, "s": st}
    if "gated" in rule:
        ins["g"], feeds["g"] = (decay.shape, np.float32), decay
    if "delta" in rule:
        ins["b"], feeds["b"] = (beta.shape, np.float32), beta
    node = helper.make_node("LinearAttention", names, ["o", "ps"], q_num_heads=hq, kv_num_heads=hkv,
                            update_rule=rule)
    m = make_model([node], ins, {"o": None, "ps": None}, opset=27)
    eng, _ = trt_build(m)
    out = eng.create_execution_context().infer(feeds)
    o, s = _linear_attention_ref(q, k, v, st, decay, beta, hq, hkv, rule, 1 / np.sqrt(dk))
    np.testing.assert_allclose(out["o"], o, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out["ps"], s, rtol=1e-4, atol=1e-4)


def test_an_op_with_no_importer_and_no_function_is_still_refused():
    node = helper.make_node("MelWeightMatrix", ["n", "d", "r", "lo", "hi"], ["y"])
    m = make_model([node], {"n": ((), np.int32), "d": ((), np.int32), "r": ((), np.int32), "lo": ((), np.float32),
                            "hi": ((), np.float32)}, {"y": None}, opset=17)
    with pytest.raises(ParseFailed, match="no built-in mapping for op 'MelWeightMatrix'"):
        parse(m)


def _tensor_scatter_ref(past, upd, wi, axis, mode):
    out = past.copy()
    L, S = past.shape[axis], upd.shape[axis]
    for idx in np.ndindex(past.shape[:axis]):
        for s in range(S):
            c = wi[idx[0]] + s
            c = c % L if mode == "circular" else c
            out[idx + (c,)] = upd[idx + (s,)]
    return out


@pytest.mark.parametrize("mode,axis,with_indices", [("linear", -2, True), ("circular", 2, True),
                                                    ("linear", 1, False)])
def test_tensor_scatter_kv_cache_update(mode, axis, with_indices):
    """TensorScatter (opset 24), with a dynamic batch."""
    rng = np.random.default_rng(7)
    shape_p, shape_u = [3, 5, 6, 4], [3, 5, 6, 4]
    ax = axis % 4
    shape_u[ax] = 3
    past = rng.standard_normal(shape_p).astype(np.float32)
    upd = rng.standard_normal(shape_u).astype(np.float32)
    wi = np.array([0, 2, 5 if mode == "circular" else 3], np.int64)
    if ax != 2:
        wi = np.array([0, 1, 2], np.int64)
    names = ["p", "u", "w" if with_indices else ""]
    ins = {"p": ([-1] + shape_p[1:], np.float32), "u": ([-1] + shape_u[1:], np.float32)}
    if with_indices:
        ins["w"] = ([-1], np.int64)
    node = helper.make_node("TensorScatter", names, ["y"], mode=mode, axis=axis)
    m = make_model([node], ins, {"y": None}, opset=24)
    feeds = {"p": past, "u": upd}
    if with_indices:
        feeds["w"] = wi
    eng, _ = trt_build(m, feeds)
    ctx = eng.create_execution_context()
    got = ctx.infer(feeds)["y"]
    np.testing.assert_array_equal(got, _tensor_scatter_ref(past, upd, wi if with_indices else np.zeros(3, int),
                                                           ax, mode))
    # batch 1 through the same engine
    f1 = {k: v[:1] for k, v in feeds.items()}
    np.testing.assert_array_equal(ctx.infer(f1)["y"], _tensor_scatter_ref(
        past[:1], upd[:1], wi[:1] if with_indices else np.zeros(1, int), ax, mode))


# ---- Range of run-time integer scalars of rank 0 and rank 1 (affine_grid_3d_expanded's Range: was a ShapeError) ----

@pytest.mark.parametrize("n,delta", [(7, 2), (1, 1), (9, 4)])
def test_range_over_a_dynamic_dim_with_a_rank_1_delta(n, delta):
    """Range(0-d start, 0-d limit from a dynamic dim, 1-element delta): was a ShapeError (ranks 0 and 1 met)."""
    nodes = [helper.make_node("Shape", ["x"], ["sh"]), helper.make_node("Gather", ["sh", "i0"], ["lim"], axis=0),
             helper.make_node("Range", ["st", "lim", "d"], ["y"])]
    m = make_model(nodes, {"x": ((-1, 3), np.float32)}, {"y": None},
                   {"i0": np.array(0, np.int64), "st": np.array(0, np.int64), "d": np.array([delta], np.int64)},
                   opset=11)
    x = np.zeros((n, 3), np.float32)
    eng, _ = trt_build(m, {"x": x})
    out = eng.create_execution_context().infer({"x": x})["y"]
    np.testing.assert_array_equal(out, np.arange(0, n, delta))


# ---- QLinearConv (was without an importer) ---------------------------------------------------------------------

@pytest.mark.parametrize("x_t,w_t,per_channel,bias,pads,strides", [
    (np.uint8, np.int8, True, True, [1, 1, 1, 1], [1, 1]), (np.int8, np.int8, False, False, [0, 0, 0, 0], [2, 1]),
    (np.uint8, np.uint8, True, True, [0, 1, 2, 0], [1, 2])])
def test_qlinear_conv_against_onnx_reference(x_t, w_t, per_channel, bias, pads, strides):
    """Against onnx's own numpy reference implementation (onnx.reference), scales and zero points fed at run
    time, per-output-channel weight scales / zero points, INT32 bias, padding with the input's zero point."""
    from onnx.reference import ReferenceEvaluator
    rng = np.random.default_rng(int(per_channel) + 2 * int(bias) + 4 * strides[0])
    N, C, H, W, M, k = 2, 3, 7, 6, 4, 3
    lo_x, hi_x = np.iinfo(x_t).min, np.iinfo(x_t).max
    lo_w, hi_w = np.iinfo(w_t).min, np.iinfo(w_t).max
    feeds = {"x": rng.integers(lo_x, hi_x + 1, (N, C, H, W)).astype(x_t),
             "xs": np.array(0.02, np.float32), "xz": np.array(rng.integers(lo_x, hi_x // 2 + 1), x_t),
             "w": rng.integers(lo_w, hi_w + 1, (M, C, k, k)).astype(w_t),
             "ws": (rng.random(M if per_channel else ()) * 0.01 + 0.002).astype(np.float32),
             "wz": (rng.integers(lo_w // 4, hi_w // 4 + 1, M if per_channel else ())).astype(w_t),
             "ys": np.array(0.5, np.float32), "yz": np.array(100 if x_t == np.uint8 else -5, x_t)}
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        feeds["b"] = rng.integers(-3000, 3000, M).astype(np.int32)
        names.append("b")
    node = helper.make_node("QLinearConv", names, ["y"], pads=pads, strides=strides)
    m = make_model([node], {n: (feeds[n].shape, feeds[n].dtype.type) for n in names}, {"y": None}, opset=13)
    eng, _ = trt_build(m)
    got = eng.create_execution_context().infer(feeds)["y"]
    ref = ReferenceEvaluator(m).run(None, feeds)[0]
    assert got.dtype == ref.dtype and len(np.unique(ref)) > 20  # not a saturated, near-constant output
    np.testing.assert_array_equal(got, ref)


# ---- Det (was without an importer) -------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_det_against_numpy(n):
    rng = np.random.default_rng(n)
    m = make_model([helper.make_node("Det", ["x"], ["y"])], {"x": ((-1, 2, n, n), np.float32)}, {"y": None})
    x = rng.standard_normal((3, 2, n, n)).astype(np.float32)
    eng, _ = trt_build(m, {"x": x})
    ctx = eng.create_execution_context()
    for xb in (x, x[:1]):
        got = ctx.infer({"x": xb})["y"]
        ref = np.linalg.det(xb.astype(np.float64))
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(ref).max())))


def test_det_of_a_large_matrix_is_refused():
    m = make_model([helper.make_node("Det", ["x"], ["y"])], {"x": ((6, 6), np.float32)}, {"y": None})
    with pytest.raises(ParseFailed, match=r"Det of 6x6 matrices \(N static, from 1 to 5\)"):
        parse(m)


# ---- TfIdfVectorizer over integer tokens (was without an importer) ----------------------------------------------

@pytest.mark.parametrize("mode,lo,hi,skip,batch,seed", [("TF", 1, 2, 2, True, 0), ("IDF", 2, 3, 1, False, 1),
                                                       ("TFIDF", 1, 3, 0, True, 2), ("TFIDF", 1, 1, 3, False, 3)])
def test_tfidf_vectorizer_against_references(mode, lo, hi, skip, batch, seed):
    """Random pools of 1..3-grams over a small vocabulary (so they occur), shared output columns (TF), weights per
    pool n-gram (IDF, TFIDF); against onnxruntime, and onnx's reference implementation for TF."""
    from onnx.reference import ReferenceEvaluator
    from onnx_helpers import ort_run
    rng = np.random.default_rng(seed)
    grams = {n: [tuple(int(v) for v in rng.integers(0, 4, n)) for _ in range(3)] for n in (1, 2, 3)}
    grams = {n: sorted(set(g)) for n, g in grams.items()}
    pool, counts = [], []
    for n in (1, 2, 3):
        counts.append(len(pool))
        for g in grams[n]:
            pool.extend(g)
    k = sum(len(g) for g in grams.values())
    index = [int(v) for v in rng.permutation(k)]
    if mode == "TF":
        index = [v % (k - 1) for v in index]  # two entries share a column
    attrs = dict(mode=mode, min_gram_length=lo, max_gram_length=hi, max_skip_count=skip, ngram_counts=counts,
                 ngram_indexes=index, pool_int64s=pool)
    if mode != "TF":
        attrs["weights"] = [float(w) for w in rng.random(k) + 0.5]  # one per ngram_indexes entry
    shape = (3, 11) if batch else (13,)
    x = rng.integers(0, 5, shape).astype(np.int32)
    m = make_model([helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)], {"x": (shape, np.int32)},
                   {"y": None}, opset=9)
    eng, _ = trt_build(m)
    got = eng.create_execution_context().infer({"x": x})["y"]
    ref = ort_run(m, {"x": x})["y"]
    assert np.abs(ref).sum() > 0  # some n-grams occur
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    if mode == "TF":  # (onnx's reference indexes weights by output column, the spec and onnxruntime by n-gram)
        np.testing.assert_allclose(got, ReferenceEvaluator(m).run(None, {"x": x})[0], rtol=1e-6)


# ---- STFT with constant frame_step / frame_length (was without an importer) --------------------------------------

@pytest.mark.parametrize("n,step,length,window,onesided,complex_in", [
    (64, 8, 16, True, 1, False), (50, 7, 12, False, 1, False), (40, 5, 10, True, 0, True), (33, 4, 9, True, 0, False)])
def test_stft_against_numpy(n, step, length, window, onesided, complex_in):
    rng = np.random.default_rng(n)
    sig = rng.standard_normal((2, n, 2 if complex_in else 1)).astype(np.float32)
    win = np.hanning(length + 2)[1:-1].astype(np.float32)
    inits = {"step": np.array(step, np.int64)}
    names = ["x", "step", "w" if window else "", "" if window else "fl"]
    if window:
        inits["w"] = win
    else:
        inits["fl"] = np.array(length, np.int64)
    m = make_model([helper.make_node("STFT", names, ["y"], onesided=onesided)], {"x": (sig.shape, np.float32)},
                   {"y": None}, inits, opset=17)
    eng, _ = trt_build(m)
    got = eng.create_execution_context().infer({"x": sig})["y"]
    z = sig[..., 0].astype(np.float64) + (1j * sig[..., 1] if complex_in else 0)
    frames = 1 + (n - length) // step
    fr = np.stack([z[:, f * step:f * step + length] for f in range(frames)], 1)
    if window:
        fr = fr * win.astype(np.float64)
    spec = np.fft.fft(fr, axis=-1)
    if onesided:
        spec = spec[..., :length // 2 + 1]
    np.testing.assert_allclose(got, np.stack([spec.real, spec.imag], -1), rtol=1e-4, atol=1e-4)
