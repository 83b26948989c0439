"""The importers of Attention and RotaryEmbedding (opset 23+).  Attention is scaled dot-product attention from
matrix multiplies, a softmax and elementwise layers, following the ONNX definition step by step:

    Q, K, V of rank 3 (B, L, H*E; q_num_heads / kv_num_heads split the heads) or 4 (B, H, L, E)
    present_key / present_value = concat(past, K / V) along the sequence axis 2
    grouped-query attention: each K / V head repeated q_heads / kv_heads times (h0, h0, h1, h1, ...)
    qk   = (Q @ K^T) * scale                       (scale: the attribute, else 1 / sqrt(E))
    qk   = softcap * tanh(qk / softcap)            (softcap > 0)
    bias = attn_mask (bool: 0 where true, -inf where false; padded with -inf to the full key length)
           + causal (-inf where key j > query i + past length, when is_causal)
    p    = softmax(qk + bias) over the keys, 0 for a row whose bias is -inf everywhere
    Y    = p @ V                                   (rank 3: back to B, L, H*Ev)
    qk_matmul_output: qk (mode 0 / 1), qk + bias (2), p (3)

    sliding window (left / right_window_size >= 0): key j allowed where -right <= i + offset - j <= left
    nonpad_kv_seqlen (B,): keys j >= nonpad[b] masked, and the causal / window offset is nonpad[b] - L per batch

Most nodes become one IAttention layer (network.add_attention: the fused ATTENTION step) with its scale set,
grouped-query heads, the mask as a BOOL or FLOAT input broadcast to rank 4, and causality upper left (no past)
or lower right (past keys, when the past length is S - L): those without softcap, sliding windows,
nonpad_kv_seqlen, a qk_matmul_output, or a mask shorter than the keys; their shapes may be dynamic but for the
head size.  The others are composed from matrix multiplies, a softmax and elementwise layers as above, with static
shapes (the masks and head repeats are built while parsing).  softmax_precision is ignored (computed in FLOAT).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from .._enums import ActivationType, AttentionNormalizationOp, DataType, ElementWiseOperation, MatrixOperation, ReduceOperation, UnaryOperation
from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported
from .registry import importer
from .shape_eval import is_static

E, U, M = ElementWiseOperation, UnaryOperation, MatrixOperation


def _heads(p: ImporterContext, t: Any, h: int) -> Any:
    """(B, S, H*E) -> (B, H, S, E)."""
    return p._shuffle(t, reshape=[0, 0, h, -1], second=[0, 2, 1, 3])


def _bias(p: ImporterContext, mask_name: Optional[str], causal: bool, left: int, right: int, offset: int,
          nonpad: Optional[str], lq: int, s: int) -> Optional[Any]:
    """The additive bias of shape (..., L, S) -- a tensor, or None without mask, causality, window or padding."""
    neg = np.float32(-np.inf)
    bias: Optional[Any] = None
    if mask_name is not None:
        m = p._tensor(mask_name)
        ms = tuple(m.shape)
        if not is_static(ms) or len(ms) < 1:
            raise unsupported("Attention's attn_mask needs a static shape, got %s" % (ms,),
                              ErrorCode.UNSUPPORTED_NODE_SHAPE)
        rank = len(ms)
        if m.dtype == DataType.BOOL:
            zero = p._const_tensor(np.zeros((1,) * rank, np.float32), DataType.FLOAT)
            ninf = p._const_tensor(np.full((1,) * rank, neg, np.float32), DataType.FLOAT)
            bias = p._L(p.network.add_select(m, zero, ninf))
        else:
            bias = p._float(m, "attn_mask")
        if ms[-1] < s:  # a mask shorter than the keys: the rest is masked out
            pad = p._const_tensor(np.full(ms[:-1] + (s - ms[-1],), neg, np.float32), DataType.FLOAT)
            bias = p._concat_layer([bias, pad], rank - 1)
        elif ms[-1] > s:
            raise Fail(ErrorCode.INVALID_NODE, "attn_mask of shape %s is longer than the %d keys" % (ms, s))
    i, j = np.arange(lq)[:, None], np.arange(s)[None, :]
    if nonpad is None:  # the frontier is the same for every batch: a constant
        if causal or left >= 0 or right >= 0:
            allowed = np.ones((lq, s), np.bool_)
            if causal:
                allowed &= j <= i + offset
            if left >= 0:
                allowed &= i + offset - j <= left
            if right >= 0:
                allowed &= j - i - offset <= right
            ct = p._const_tensor(np.where(allowed, np.float32(0), neg).astype(np.float32), DataType.FLOAT)
            bias = ct if bias is None else p._ew(bias, ct, E.SUM)
        return bias
    # nonpad_kv_seqlen (B,): per-batch frontier, offset[b] = nonpad[b] - L; keys j >= nonpad[b] are padding
    nt = p._tensor(nonpad)
    if nt.dtype != DataType.INT32 or len(nt.shape) != 1:
        raise Fail(ErrorCode.INVALID_NODE, "nonpad_kv_seqlen '%s' must be an integer vector" % nonpad)
    nt = p._reshape(nt, [-1, 1, 1, 1], zero_is_placeholder=False)

    def c(v: np.ndarray) -> Any:
        return p._const_tensor(np.broadcast_to(v, (lq, s)).astype(np.int32).reshape(1, 1, lq, s), DataType.INT32)
    ok = p._ew(c(j + 0 * i), nt, E.LESS)  # j < nonpad
    conds = []
    if causal:  # j <= i + nonpad - L  <=>  not (j - i + L > nonpad)
        conds.append(p._unary(p._ew(c(j - i + lq), nt, E.GREATER), U.NOT))
    if left >= 0:  # i + nonpad - L - j <= left  <=>  not (nonpad > left - i + j + L)
        conds.append(p._unary(p._ew(nt, c(left - i + j + lq), E.GREATER), U.NOT))
    if right >= 0:  # j - i - nonpad + L <= right  <=>  not (j - i + L - right > nonpad)
        conds.append(p._unary(p._ew(c(j - i + lq - right), nt, E.GREATER), U.NOT))
    for cond in conds:
        ok = p._ew(ok, cond, E.AND)
    zero = p._const_tensor(np.zeros((1, 1, 1, 1), np.float32), DataType.FLOAT)
    ninf = p._const_tensor(np.full((1, 1, 1, 1), neg, np.float32), DataType.FLOAT)
    pb = p._L(p.network.add_select(ok, zero, ninf))
    bias = pb if bias is None else p._ew(bias, pb, E.SUM)
    return bias


def _fusable(p: ImporterContext, node: Any, a: Dict[str, Any], q: Any, k: Any, r: int) -> bool:
    """Can the node be one IAttention layer (see the module's docstring)?"""
    if float(a.get("softcap", 0.0)) > 0 or int(a.get("left_window_size", -1)) >= 0 or \
            int(a.get("right_window_size", -1)) >= 0 or p._inp(node, 6) is not None or \
            (len(node.output) > 3 and node.output[3]):
        return False
    qs, ks = [int(d) for d in q.shape], [int(d) for d in k.shape]
    e = qs[3] if r == 4 else (qs[2] // int(a["q_num_heads"]) if qs[2] >= 0 else -1)
    lq, s = qs[r - 2], ks[r - 2]
    past = p._inp(node, 4)
    offset = 0
    if past is not None:
        ps = [int(d) for d in p._tensor(past).shape]
        if len(ps) != 4 or ps[2] < 0:
            return False
        offset = ps[2]
        s = s + offset if s >= 0 else -1
    if e < 0 or (offset and bool(int(a.get("is_causal", 0))) and (lq < 0 or s < 0 or s - lq != offset)):
        return False
    mask = p._inp(node, 3)
    if mask is not None:
        ms = [int(d) for d in p._tensor(mask).shape]
        if not 1 <= len(ms) <= 4 or s < 0 or ms[-1] != s:
            return False
    return True


def _fused(p: ImporterContext, node: Any, a: Dict[str, Any], q: Any, k: Any, v: Any, r: int) -> List[Any]:
    """The node as one IAttention layer (_fusable said it can be)."""
    if r == 3:
        hq, hk = int(a["q_num_heads"]), int(a["kv_num_heads"])
        q, k, v = _heads(p, q, hq), _heads(p, k, hk), _heads(p, v, hk)
    past_k, past_v = p._inp(node, 4), p._inp(node, 5)
    if past_k is not None:
        pk, pv = p._float(p._tensor(past_k), "past_key"), p._float(p._tensor(past_v), "past_value")
        k = p._concat_layer([pk, k], 2)
        v = p._concat_layer([pv, v], 2)
    hq, hk = int(q.shape[1]), int(k.shape[1])
    if hq > 0 and hk > 0 and hq % hk:
        raise Fail(ErrorCode.INVALID_NODE, "%d query heads are not a multiple of %d key/value heads" % (hq, hk))
    m = None
    mask = p._inp(node, 3)
    if mask is not None:
        m = p._tensor(mask)
        if m.dtype != DataType.BOOL:
            m = p._float(m, "attn_mask")
        if len(m.shape) < 4:
            m = p._unsqueeze(m, list(range(4 - len(m.shape))))
    layer = p.network.add_attention(q, k, v, AttentionNormalizationOp.SOFTMAX, bool(int(a.get("is_causal", 0))))
    layer.scale = float(a["scale"]) if "scale" in a else 1.0 / np.sqrt(int(q.shape[3]))
    layer.causal_lower_right = past_k is not None
    if m is not None:
        layer.mask = m
    y = p._L(layer)
    if r == 3:
        y = p._shuffle(y, first=[0, 2, 1, 3], reshape=[0, 0, -1])
    return [y, k, v][:max(1, len(node.output))]


@importer("Attention",
          restrictions="one fused IAttention layer without softcap, sliding windows, nonpad_kv_seqlen or "
                       "qk_matmul_output (dynamic shapes but the head size); otherwise composed, with static shapes "
                       "of Q, K, V and attn_mask; softmax_precision ignored (computed in FLOAT)")
def _attention(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    q, k, v = (p._float(p._tensor(node.input[i]), name) for i, name in enumerate(("Q", "K", "V")))
    r = len(q.shape)
    if r not in (3, 4) or len(k.shape) != r or len(v.shape) != r:
        raise Fail(ErrorCode.INVALID_NODE, "Q, K and V must all be of rank 3 or 4, got %s, %s, %s"
                   % (tuple(q.shape), tuple(k.shape), tuple(v.shape)))
    if r == 3 and ("q_num_heads" not in a or "kv_num_heads" not in a):
        raise Fail(ErrorCode.INVALID_NODE, "3-D Q, K, V need the q_num_heads and kv_num_heads attributes")
    if (p._inp(node, 4) is None) != (p._inp(node, 5) is None):
        raise Fail(ErrorCode.INVALID_NODE, "past_key and past_value must be given together")
    if _fusable(p, node, a, q, k, r):
        return _fused(p, node, a, q, k, v, r)
    for t, name in ((q, "Q"), (k, "K"), (v, "V")):
        if not is_static(tuple(t.shape)):
            raise unsupported("Attention needs a static shape of %s, got %s" % (name, tuple(t.shape)),
                              ErrorCode.UNSUPPORTED_NODE_SHAPE)
    nonpad = p._inp(node, 6)
    if r == 3:
        if "q_num_heads" not in a or "kv_num_heads" not in a:
            raise Fail(ErrorCode.INVALID_NODE, "3-D Q, K, V need the q_num_heads and kv_num_heads attributes")
        hq, hk = int(a["q_num_heads"]), int(a["kv_num_heads"])
        q, k, v = _heads(p, q, hq), _heads(p, k, hk), _heads(p, v, hk)
    past_k, past_v = p._inp(node, 4), p._inp(node, 5)
    if (past_k is None) != (past_v is None):
        raise Fail(ErrorCode.INVALID_NODE, "past_key and past_value must be given together")
    offset = 0
    if past_k is not None:
        pk, pv = p._float(p._tensor(past_k), "past_key"), p._float(p._tensor(past_v), "past_value")
        if not is_static(tuple(pk.shape)) or len(pk.shape) != 4:
            raise unsupported("Attention's past_key needs a static 4-D shape, got %s" % (tuple(pk.shape),),
                              ErrorCode.UNSUPPORTED_NODE_SHAPE)
        offset = int(pk.shape[2])
        k = p._concat_layer([pk, k], 2)
        v = p._concat_layer([pv, v], 2)
    present_k, present_v = k, v
    b, hq, lq, e = (int(d) for d in q.shape)
    hk, s = int(k.shape[1]), int(k.shape[2])
    if hq != hk:
        if hq % hk:
            raise Fail(ErrorCode.INVALID_NODE, "%d query heads are not a multiple of %d key/value heads" % (hq, hk))
        idx = np.repeat(np.arange(hk), hq // hk)
        k, v = p._gather_axis(k, 1, idx), p._gather_axis(v, 1, idx)
    scale = float(a["scale"]) if "scale" in a else 1.0 / np.sqrt(e)
    qk = p._L(p.network.add_matrix_multiply(q, M.NONE, k, M.TRANSPOSE))
    qk = p._ew_const(qk, np.float32(scale), E.PROD)
    softcap = float(a.get("softcap", 0.0))
    if softcap > 0:
        qk = _softcap(p, qk, softcap)
    if nonpad is not None and past_k is not None:
        raise Fail(ErrorCode.INVALID_NODE, "nonpad_kv_seqlen cannot be combined with past_key / past_value")
    bias = _bias(p, p._inp(node, 3), bool(int(a.get("is_causal", 0))), int(a.get("left_window_size", -1)),
                 int(a.get("right_window_size", -1)), offset, nonpad, lq, s)
    qkb = qk if bias is None else p._ew(qk, bias, E.SUM)
    sm = p.network.add_softmax(qkb)
    sm.axes = 1 << 3
    prob = p._L(sm)
    if bias is not None:  # a row masked everywhere has no attendable key: 0, not NaN
        br = len(bias.shape)
        row_max = p._L(p.network.add_reduce(bias, ReduceOperation.MAX, 1 << (br - 1), True))
        dead = p._ew_const(row_max, np.float32(-np.inf), E.EQUAL)
        zero = p._const_tensor(np.zeros((1,) * 4, np.float32), DataType.FLOAT)
        dead = p._unsqueeze_to(dead, 4) if br < 4 else dead
        prob = p._L(p.network.add_select(dead, zero, prob))
    y = p._L(p.network.add_matrix_multiply(prob, M.NONE, v, M.NONE))
    if r == 3:
        y = p._shuffle(y, first=[0, 2, 1, 3], reshape=[0, 0, -1])
    mode = int(a.get("qk_matmul_output_mode", 0))
    outs: List[Any] = [y, present_k, present_v]
    if len(node.output) > 3 and node.output[3]:
        if mode not in (0, 1, 2, 3):
            raise Fail(ErrorCode.INVALID_NODE, "qk_matmul_output_mode %d (expected 0 to 3)" % mode)
        outs.append({0: qk, 1: qk, 2: qkb, 3: prob}[mode])
    return outs[:max(1, len(node.output))]


def _softcap(p: ImporterContext, qk: Any, cap: float) -> Any:
    """cap * tanh(qk / cap), with tanh as an activation."""
    x = p._ew_const(qk, np.float32(1.0 / cap), E.PROD)
    return p._ew_const(p._activation(x, ActivationType.TANH), np.float32(cap), E.PROD)


@importer("RotaryEmbedding",
          restrictions="static input shape")
def _rotary(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Rotates pairs of features by the cached angles: x1' = cos x1 - sin x2, x2' = sin x1 + cos x2, the pairs
    being (x[2i], x[2i+1]) when interleaved, else (x[i], x[i + R/2]), over the first R features of each head."""
    x = p._float(p._tensor(node.input[0]))
    xs = tuple(x.shape)
    if len(xs) not in (3, 4) or not is_static(xs):
        raise unsupported("RotaryEmbedding needs a static 3-D or 4-D input, got %s" % (xs,),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if len(xs) == 4:  # (B, H, S, D) -> (B, S, H, D)
        t = p._transpose(x, [0, 2, 1, 3])
    else:
        nh = int(a.get("num_heads", 0))
        if nh <= 0 or xs[2] % nh:
            raise Fail(ErrorCode.INVALID_NODE, "3-D input %s needs num_heads dividing its last dim" % (xs,))
        t = p._reshape(x, [0, 0, nh, xs[2] // nh])
    d = int(t.shape[3])
    rd = int(a.get("rotary_embedding_dim", 0)) or d
    if rd % 2 or rd > d:
        raise Fail(ErrorCode.INVALID_NODE, "rotary_embedding_dim %d must be even and at most the head size %d"
                   % (rd, d))
    cos, sin = (p._float(p._tensor(node.input[i]), n) for i, n in ((1, "cos_cache"), (2, "sin_cache")))
    pos = p._inp(node, 3)
    if pos is not None:  # caches (max_pos, R/2) indexed by position_ids (B, S)
        pt = p._tensor(pos)
        cos, sin = (p._L(p.network.add_gather(c, pt, 0)) for c in (cos, sin))
    if len(cos.shape) != 3 or int(cos.shape[-1]) != rd // 2:
        raise Fail(ErrorCode.INVALID_NODE, "the cos/sin caches give shape %s, expected (B, S, %d)"
                   % (tuple(cos.shape), rd // 2))
    cos, sin = p._unsqueeze(cos, [2]), p._unsqueeze(sin, [2])  # (B, S, 1, R/2)
    interleaved = bool(int(a.get("interleaved", 0)))
    if interleaved:
        x1, x2 = p._gather_axis(t, 3, np.arange(0, rd, 2)), p._gather_axis(t, 3, np.arange(1, rd, 2))
    else:
        x1, x2 = p._gather_axis(t, 3, np.arange(rd // 2)), p._gather_axis(t, 3, np.arange(rd // 2, rd))
    real = p._ew(p._ew(cos, x1, E.PROD), p._ew(sin, x2, E.PROD), E.SUB)
    imag = p._ew(p._ew(sin, x1, E.PROD), p._ew(cos, x2, E.PROD), E.SUM)
    if interleaved:
        rot = p._reshape(p._concat_layer([p._unsqueeze(real, [4]), p._unsqueeze(imag, [4])], 4),
                         [0, 0, 0, rd])
    else:
        rot = p._concat_layer([real, imag], 3)
    if rd < d:
        rot = p._concat_layer([rot, p._gather_axis(t, 3, np.arange(rd, d))], 3)
    if len(xs) == 4:
        return [p._transpose(rot, [0, 2, 1, 3])]
    return [p._reshape(rot, [0, 0, xs[2]])]
