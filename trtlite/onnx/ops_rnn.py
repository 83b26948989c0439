"""Importers of the recurrent ops RNN, GRU and LSTM, unrolled over a static sequence length: per direction the
input projection X W^T + Wb is one matrix multiply over all steps, then each step adds H R^T + Rb and applies the
gates as ONNX defines them (gate order LSTM i, o, f, c; GRU z, r, h):

    RNN   H  = f(x + H R^T)
    GRU   z = f(.. z ..), r = f(.. r ..), h~ = g(xh + (r * H) Rh^T + Rbh)  (or r * (H Rh^T + Rbh) with
          linear_before_reset), H = (1 - z) * h~ + z * H
    LSTM  i = f(.. + Pi * C), f = f(.. + Pf * C), c~ = g(..), C = f * C + i * c~, o = f(.. + Po * C'),
          H = o * h(C')      (input_forget: f = 1 - i)

With sequence_lens, a step t >= len[b] keeps batch b's state and writes zeros to Y.  clip clamps the gates' inputs.
Activations: Sigmoid, Tanh, Relu, HardSigmoid, LeakyRelu, ThresholdedRelu, Elu, Softsign, Softplus, ScaledTanh,
Affine.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from .._enums import ActivationType, DataType, ElementWiseOperation, MatrixOperation
from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported
from .registry import importer

E, M, A = ElementWiseOperation, MatrixOperation, ActivationType
_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
_ACTS = {"sigmoid": A.SIGMOID, "tanh": A.TANH, "relu": A.RELU, "hardsigmoid": A.HARD_SIGMOID,
         "leakyrelu": A.LEAKY_RELU, "thresholdedrelu": A.THRESHOLDED_RELU, "elu": A.ELU, "softsign": A.SOFTSIGN,
         "softplus": A.SOFTPLUS, "scaledtanh": A.SCALED_TANH}
_DEFAULT_ALPHA = {"hardsigmoid": 0.2, "leakyrelu": 0.01, "thresholdedrelu": 1.0, "elu": 1.0}
_DEFAULT_BETA = {"hardsigmoid": 0.5}


class _Act:
    """One activation with its alpha/beta (ONNX's activation_alpha/beta lists)."""

    def __init__(self, name: str, alpha: Optional[float], beta: Optional[float]) -> None:
        key = name.lower()
        if key not in _ACTS and key != "affine":
            raise unsupported("recurrent activation '%s'" % name)
        self.key = key
        self.alpha = alpha if alpha is not None else _DEFAULT_ALPHA.get(key)
        self.beta = beta if beta is not None else _DEFAULT_BETA.get(key)

    def __call__(self, p: ImporterContext, t: Any) -> Any:
        if self.key == "affine":
            return p._ew_const(p._ew_const(t, np.float32(self.alpha if self.alpha is not None else 1.0), E.PROD),
                               np.float32(self.beta or 0.0), E.SUM)
        return p._activation(t, _ACTS[self.key], self.alpha, self.beta)


def _acts(op: str, a: Dict[str, Any], n_dir: int) -> List[List[_Act]]:
    per = len(_DEFAULT_ACTS[op])
    names = [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in a.get("activations", [])] \
        or _DEFAULT_ACTS[op] * n_dir
    if len(names) == per and n_dir == 2:
        names = names * 2
    if len(names) != per * n_dir:
        raise Fail(ErrorCode.INVALID_NODE, "%d activations, expected %d" % (len(names), per * n_dir))
    alphas, betas = list(a.get("activation_alpha", [])), list(a.get("activation_beta", []))
    acts = []
    for i, n in enumerate(names):
        acts.append(_Act(n, float(alphas[i]) if i < len(alphas) else None,
                         float(betas[i]) if i < len(betas) else None))
    return [acts[d * per:(d + 1) * per] for d in range(n_dir)]


# Steps an RNN / GRU / LSTM may unroll (each 10-25 layers; 1024 LSTM steps parse in ~2 s): a fuzzed sequence of
# 2^31 - 1 steps made the importer allocate a 16 GiB list of them, and a long one kept it adding layers for minutes.
RNN_STEPS_MAX = 1024


@importer("RNN", "GRU", "LSTM",
          restrictions="static sequence length (at most 1024 steps), input size and hidden size (the steps are "
                       "unrolled)")
def _recurrent(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = node.op_type
    g = _GATES[op]
    x = p._float(p._tensor(node.input[0]), "X")
    if len(x.shape) != 3:
        raise Fail(ErrorCode.INVALID_NODE, "X of shape %s must be 3-D" % (tuple(x.shape),))
    layout = int(a.get("layout", 0))
    if layout:
        x = p._transpose(x, [1, 0, 2])  # (seq, batch, input)
    t_len, i_size = int(x.shape[0]), int(x.shape[2])
    hid = int(a["hidden_size"])
    if t_len < 0 or i_size < 0:
        raise unsupported("%s with a dynamic sequence length or input size %s" % (op, tuple(x.shape)),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if t_len > RNN_STEPS_MAX:
        raise unsupported("%s over a sequence of %d steps: the steps are unrolled into layers, at most %d"
                          % (op, t_len, RNN_STEPS_MAX), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    direction = a.get("direction", "forward")
    dirs = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}.get(direction)
    if dirs is None:
        raise Fail(ErrorCode.INVALID_NODE, "direction '%s'" % direction)
    n_dir = len(dirs)
    acts = _acts(op, a, n_dir)
    clip = float(a["clip"]) if "clip" in a else None
    w_all = p._float(p._tensor(node.input[1]), "W")
    r_all = p._float(p._tensor(node.input[2]), "R")
    names = {k: p._inp(node, i) for i, k in enumerate(["X", "W", "R", "B", "sequence_lens", "initial_h",
                                                         "initial_c", "P"]) if i < len(node.input)}
    b_all = p._float(p._tensor(names["B"]), "B") if names.get("B") else None
    h0_all = p._float(p._tensor(names["initial_h"]), "initial_h") if names.get("initial_h") else None
    c0_all = p._float(p._tensor(names["initial_c"]), "initial_c") if names.get("initial_c") else None
    p_all = p._float(p._tensor(names["P"]), "P") if names.get("P") else None
    if h0_all is not None and layout:
        h0_all = p._transpose(h0_all, [1, 0, 2])
    if c0_all is not None and layout:
        c0_all = p._transpose(c0_all, [1, 0, 2])
    seq = None
    if names.get("sequence_lens"):
        seq = p._tensor(names["sequence_lens"])  # (batch,) int
        seq = p._unsqueeze(seq, [1])  # (batch, 1)
    lbr = int(a.get("linear_before_reset", 0))
    input_forget = int(a.get("input_forget", 0))

    def pick(t: Any, d: int) -> Any:
        return p._squeeze(p._gather_axis(t, 0, np.array([d])), [0])

    def gate(t: Any, k: int, width: int = 1) -> Any:
        return p._slice(t, {len(t.shape) - 1: (k * hid, width * hid, 1)})

    def clipped(t: Any) -> Any:
        if clip is None:
            return t
        return p._ew_const(p._ew_const(t, np.float32(-clip), E.MAX), np.float32(clip), E.MIN)

    ys, hs, cs = [], [], []
    for d, rev in enumerate(dirs):
        f_act = acts[d]
        w, r = pick(w_all, d), pick(r_all, d)  # (G*H, I), (G*H, H)
        xw = p._L(p.network.add_matrix_multiply(x, M.NONE, p._unsqueeze(w, [0]), M.TRANSPOSE))  # (T, B, G*H)
        rb = None
        if b_all is not None:
            bd = pick(b_all, d)  # (2*G*H,)
            xw = p._ew(xw, p._slice(bd, {0: (0, g * hid, 1)}), E.SUM)
            rb = p._slice(bd, {0: (g * hid, g * hid, 1)})
        h = pick(h0_all, d) if h0_all is not None else None
        c = pick(c0_all, d) if c0_all is not None else None
        peep = pick(p_all, d) if p_all is not None else None
        steps: List[Optional[Any]] = [None] * t_len
        for t in (range(t_len - 1, -1, -1) if rev else range(t_len)):
            xt = p._squeeze(p._gather_axis(xw, 0, np.array([t])), [0])  # (B, G*H)
            if h is None:  # no initial state: zeros (of the batch's size, taken from x where it is dynamic)
                bsz = int(x.shape[1])
                zero = p._const_tensor(np.zeros((bsz, hid), np.float32), DataType.FLOAT) if bsz >= 0 else \
                    p._ew_const(gate(xt, 0), np.float32(0.0), E.PROD)
                h = zero
                if op == "LSTM" and c is None:
                    c = zero
            hr = p._L(p.network.add_matrix_multiply(h, M.NONE, r, M.TRANSPOSE))  # (B, G*H)
            if rb is not None and not (op == "GRU" and lbr):
                hr = p._ew(hr, rb, E.SUM)
            if op == "RNN":
                h_new = f_act[0](p, clipped(p._ew(xt, hr, E.SUM)))
                c_new = None
            elif op == "GRU":
                if lbr and rb is not None:
                    hr = p._ew(hr, rb, E.SUM)
                z = f_act[0](p, clipped(p._ew(gate(xt, 0), gate(hr, 0), E.SUM)))
                rr = f_act[0](p, clipped(p._ew(gate(xt, 1), gate(hr, 1), E.SUM)))
                if lbr:
                    hh = p._ew(rr, gate(hr, 2), E.PROD)
                else:
                    rh = p._ew(rr, h, E.PROD)
                    rh_w = p._slice(r, {0: (2 * hid, hid, 1)})  # Rh (H, H)
                    hh = p._L(p.network.add_matrix_multiply(rh, M.NONE, rh_w, M.TRANSPOSE))
                    if rb is not None:
                        hh = p._ew(hh, p._slice(rb, {0: (2 * hid, hid, 1)}), E.SUM)
                ht = f_act[1](p, clipped(p._ew(gate(xt, 2), hh, E.SUM)))
                one_m_z = p._ew_const(z, np.float32(1.0), E.SUB, const_first=True)
                h_new = p._ew(p._ew(one_m_z, ht, E.PROD), p._ew(z, h, E.PROD), E.SUM)
                c_new = None
            else:
                pre = p._ew(xt, hr, E.SUM)
                pi, po, pf = (p._slice(peep, {0: (k * hid, hid, 1)}) for k in range(3)) if peep is not None \
                    else (None, None, None)
                gi = gate(pre, 0)
                if pi is not None:
                    gi = p._ew(gi, p._ew(pi, c, E.PROD), E.SUM)
                i_g = f_act[0](p, clipped(gi))
                if input_forget:
                    f_g = p._ew_const(i_g, np.float32(1.0), E.SUB, const_first=True)
                else:
                    gf = gate(pre, 2)
                    if pf is not None:
                        gf = p._ew(gf, p._ew(pf, c, E.PROD), E.SUM)
                    f_g = f_act[0](p, clipped(gf))
                c_t = f_act[1](p, clipped(gate(pre, 3)))
                c_new = p._ew(p._ew(f_g, c, E.PROD), p._ew(i_g, c_t, E.PROD), E.SUM)
                go = gate(pre, 1)
                if po is not None:
                    go = p._ew(go, p._ew(po, c_new, E.PROD), E.SUM)
                o_g = f_act[0](p, clipped(go))
                h_new = p._ew(o_g, f_act[2](p, c_new), E.PROD)
            if seq is not None:  # steps past a batch's length keep its state and write zeros
                live = p._ew(p._const_tensor(np.full((1, 1), t, np.int32), DataType.INT32), seq, E.LESS)
                zero = p._ew_const(h_new, np.float32(0.0), E.PROD)
                steps[t] = p._L(p.network.add_select(live, h_new, zero))
                h_new = p._L(p.network.add_select(live, h_new, h))
                if c_new is not None:
                    c_new = p._L(p.network.add_select(live, c_new, c))
            else:
                steps[t] = h_new
            h, c = h_new, c_new
        ys.append(p._concat_layer([p._unsqueeze(s, [0, 1]) for s in steps], 0) if t_len > 1
                  else p._unsqueeze(steps[0], [0, 1]))  # (T, 1, B, H)
        hs.append(p._unsqueeze(h, [0]))
        if c is not None:
            cs.append(p._unsqueeze(c, [0]))
    y = ys[0] if n_dir == 1 else p._concat_layer(ys, 1)  # (T, D, B, H)
    y_h = hs[0] if n_dir == 1 else p._concat_layer(hs, 0)  # (D, B, H)
    y_c = (cs[0] if n_dir == 1 else p._concat_layer(cs, 0)) if cs else None
    if layout:
        y = p._transpose(y, [2, 0, 1, 3])
        y_h = p._transpose(y_h, [1, 0, 2])
        y_c = p._transpose(y_c, [1, 0, 2]) if y_c is not None else None
    outs = [y, y_h] + ([y_c] if op == "LSTM" else [])
    return outs[:max(1, len(node.output))]
