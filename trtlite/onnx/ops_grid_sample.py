"""The importer of GridSample (opset 16+, 2-D and 3-D): per output position, the input sampled at the grid's
coordinates, following ONNX's definition (and its reference implementation) step by step:

    x_i  = ((g_i + 1) * d_i - 1) / 2, or (g_i + 1) / 2 * (d_i - 1) with align_corners  (g_i: grid[..., D-1-i])
    nearest: x_i rounded half to even
    outside [lo_i, hi_i] (-0.5 .. d_i - 0.5, or 0 .. d_i - 1 with align_corners):
        border: clamped to [0, d_i - 1]; reflection: reflected at lo_i / hi_i until inside
    taps per dim: nearest 1 (x_i), linear 2 (floor(x_i) + 0, 1), cubic 4 (floor(x_i) - 1 .. + 2, Keys' a = -0.75)
    each tap index: zeros: 0 outside [0, d_i); border: clamped; reflection: reflected, then truncated
    y = sum over the taps' product of per-dim weights times the input there

The input is gathered as a (N * prod(d), C) table by a linear index computed per tap, so every shape must be
static.  Runs 1, 2^D or 4^D gathers.
"""
from __future__ import annotations

import itertools
from typing import Any, Dict, List, Tuple

import numpy as np

from .._enums import DataType, ElementWiseOperation, UnaryOperation
from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported
from .registry import importer
from .shape_eval import is_static

E, U = ElementWiseOperation, UnaryOperation


class _Ops:
    """Elementwise helpers over float tensors of one rank (constants broadcast)."""

    def __init__(self, p: ImporterContext, rank: int) -> None:
        self.p, self.r = p, rank

    def c(self, v: float) -> Any:
        return self.p._const_tensor(np.full((1,) * self.r, v, np.float32), DataType.FLOAT)

    def ew(self, a: Any, b: Any, op: ElementWiseOperation) -> Any:
        a = a if not isinstance(a, (int, float)) else self.c(a)
        b = b if not isinstance(b, (int, float)) else self.c(b)
        return self.p._ew(a, b, op)

    def sel(self, cond: Any, t: Any, e: Any) -> Any:
        t = t if not isinstance(t, (int, float)) else self.c(t)
        e = e if not isinstance(e, (int, float)) else self.c(e)
        return self.p._L(self.p.network.add_select(cond, t, e))

    def floor(self, t: Any) -> Any:
        return self.p._unary(t, U.FLOOR)

    def clamp(self, t: Any, lo: float, hi: float) -> Any:
        return self.ew(self.ew(t, lo, E.MAX), hi, E.MIN)

    def outside(self, t: Any, lo: float, hi: float) -> Any:
        return self.ew(self.ew(t, lo, E.LESS), self.ew(t, hi, E.GREATER), E.OR)

    def reflect(self, x: Any, lo: float, hi: float) -> Any:
        """x reflected at lo and hi until inside (the reference's _gs_reflect); x inside is kept."""
        rng = hi - lo
        below, above = self.ew(x, lo, E.LESS), self.ew(x, hi, E.GREATER)
        dx = self.sel(below, self.ew(lo, x, E.SUB), self.ew(x, hi, E.SUB))  # >= 0 where it matters
        n = self.floor(self.ew(dx, rng, E.DIV))
        r = self.ew(dx, self.ew(n, rng, E.PROD), E.SUB)
        even = self.ew(self.ew(n, self.ew(self.floor(self.ew(n, 0.5, E.PROD)), 2.0, E.PROD), E.SUB), 0.0, E.EQUAL)
        lo_r, hi_r = self.ew(lo, r, E.SUM), self.ew(hi, r, E.SUB)
        from_below = self.sel(even, lo_r, hi_r)
        from_above = self.sel(even, hi_r, lo_r)
        return self.sel(below, from_below, self.sel(above, from_above, x))


def _cubic(o: _Ops, t: Any) -> List[Any]:
    """Keys' cubic convolution weights (a = -0.75) of the 4 taps at distance t in [0, 1) past the second."""
    a = -0.75

    def far(u: Any) -> Any:  # ((a * u - 5a) * u + 8a) * u - 4a, for 1 <= u < 2
        return o.ew(o.ew(o.ew(o.ew(o.ew(o.ew(u, a, E.PROD), 5 * a, E.SUB), u, E.PROD), 8 * a, E.SUM), u, E.PROD),
                    4 * a, E.SUB)

    def near(u: Any) -> Any:  # ((a + 2) * u - (a + 3)) * u * u + 1, for 0 <= u < 1
        return o.ew(o.ew(o.ew(o.ew(o.ew(u, a + 2, E.PROD), a + 3, E.SUB), u, E.PROD), u, E.PROD), 1.0, E.SUM)
    one_m = o.ew(1.0, t, E.SUB)
    return [far(o.ew(t, 1.0, E.SUM)), near(t), near(one_m), far(o.ew(2.0, t, E.SUB))]


@importer("GridSample",
          restrictions="2-D and 3-D; static shapes of X and grid")
def _grid_sample(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]), "X")
    g = p._float(p._tensor(node.input[1]), "grid")
    xs, gs = tuple(x.shape), tuple(g.shape)
    nd = len(xs) - 2
    if nd not in (2, 3) or len(gs) != nd + 2 or gs[-1] != nd:
        raise unsupported("GridSample of X %s with grid %s (2-D and 3-D only)" % (xs, gs),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if not is_static(xs) or not is_static(gs):
        raise unsupported("GridSample needs static shapes, got X %s, grid %s" % (xs, gs),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if gs[0] != xs[0]:
        raise Fail(ErrorCode.INVALID_NODE, "grid %s and X %s differ in batch" % (gs, xs))
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(a.get("mode", "linear"), a.get("mode", "linear"))
    pad = a.get("padding_mode", "zeros")
    if mode not in ("nearest", "linear", "cubic") or pad not in ("zeros", "border", "reflection"):
        raise Fail(ErrorCode.INVALID_NODE, "GridSample mode '%s' / padding_mode '%s'" % (mode, pad))
    align = bool(int(a.get("align_corners", 0)))
    n, c, dims = xs[0], xs[1], list(xs[2:])
    rank = nd + 1  # (N, O...)
    o = _Ops(p, rank)
    taps: List[List[Tuple[Any, Any]]] = []  # per dim: [(tap index, weight or None)]
    for i in range(nd):
        gi = p._squeeze(p._gather_axis(g, nd + 1, np.array([nd - 1 - i])), [nd + 1])  # (N, O...)
        d = dims[i]
        if align:
            xi = o.ew(o.ew(o.ew(gi, 1.0, E.SUM), 0.5, E.PROD), float(d - 1), E.PROD)
            lo, hi = 0.0, float(d - 1)
        else:
            xi = o.ew(o.ew(o.ew(o.ew(gi, 1.0, E.SUM), float(d), E.PROD), 1.0, E.SUB), 0.5, E.PROD)
            lo, hi = -0.5, d - 0.5
        if mode == "nearest":
            xi = p._unary(xi, U.ROUND)  # half to even, as numpy's rint
        if pad == "border":
            xi = o.sel(o.outside(xi, lo, hi), o.clamp(xi, 0.0, float(d - 1)), xi)
        elif pad == "reflection":
            xi = o.reflect(xi, lo, hi)
        if mode == "nearest":
            taps.append([(xi, None)])
            continue
        x0 = o.floor(xi)
        t = o.ew(xi, x0, E.SUB)
        if mode == "linear":
            taps.append([(x0, o.ew(1.0, t, E.SUB)), (o.ew(x0, 1.0, E.SUM), t)])
        else:
            ws = _cubic(o, t)
            taps.append([(o.ew(x0, float(k - 1), E.SUM), ws[k]) for k in range(4)])
    # the input as a table: row n * prod(d) + linear spatial index, C columns
    table = p._reshape(p._transpose(x, [0] + list(range(2, nd + 2)) + [1]), [-1, c], zero_is_placeholder=False)
    strides = [int(np.prod(dims[i + 1:])) for i in range(nd)]
    base = p._const_tensor((np.arange(n) * int(np.prod(dims))).reshape((n,) + (1,) * nd).astype(np.float32),
                           DataType.FLOAT)
    y = None
    for combo in itertools.product(*taps):
        lin, w, valid = base, None, None
        for i, (idx, wt) in enumerate(combo):
            d = dims[i]
            if pad == "zeros":
                ok = o.p._unary(o.outside(idx, 0.0, float(d - 1)), U.NOT)
                valid = ok if valid is None else o.ew(valid, ok, E.AND)
                idx = o.clamp(idx, 0.0, float(d - 1))
            elif pad == "border":
                idx = o.clamp(idx, 0.0, float(d - 1))
            else:
                lo, hi = (0.0, float(d - 1)) if align else (-0.5, d - 0.5)
                r = o.reflect(idx, lo, hi)
                idx = o.clamp(o.ew(p._unary(r, U.SIGN), o.floor(p._unary(r, U.ABS)), E.PROD), 0.0, float(d - 1))
            lin = o.ew(lin, o.ew(idx, float(strides[i]), E.PROD), E.SUM)
            if wt is not None:
                w = wt if w is None else o.ew(w, wt, E.PROD)
        if valid is not None:
            w = o.sel(valid, w if w is not None else 1.0, 0.0)
        vals = p._L(p.network.add_gather(table, p._cast(lin, DataType.INT32), 0))  # (N, O..., C)
        if w is not None:
            vals = p._ew(vals, p._unsqueeze(w, [rank]), E.PROD)
        y = vals if y is None else p._ew(y, vals, E.SUM)
    return [p._transpose(y, [0, rank] + list(range(1, rank)))]
