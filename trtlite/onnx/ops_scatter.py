"""Importers of ScatterND, ScatterElements and Scatter (its deprecated name).  trtlite has no scatter layer, so a
scatter is a one-hot contraction over static shapes:

    P positions of data (the leading dims the indices address, each with `rest` trailing elements),
    U updates, each aimed at position L[u] (computed at run time from the indices; negative indices wrap),
    hit[u, p] = (L[u] == p)
    none: out[p] = sum_u hit[u, p] * upd[u]   where any u hits p, else data[p]
          (ONNX leaves duplicate indices undefined here; trtlite sums them)
    add:  out[p] = data[p] + sum_u hit[u, p] * upd[u]
    mul / max / min: data[p] combined with the reduction over u of (hit ? upd[u] : identity)

Costs U * P * rest work and memory: meant for the small scatters of index bookkeeping, not for large tensors.
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._enums import DataType, ElementWiseOperation, MatrixOperation, ReduceOperation
from .context import ImporterContext
from .dtypes import TRT_NP
from .errors import ErrorCode, Fail, unsupported
from .registry import importer
from .shape_eval import is_static

E, R = ElementWiseOperation, ReduceOperation


def _wrap(p: ImporterContext, idx: Any, dims: Any) -> Any:
    """Negative indices + the dim (dims: a constant broadcasting against idx)."""
    dt = p._const_tensor(np.asarray(dims, np.int32), DataType.INT32)
    neg = p._ew(idx, p._const_tensor(np.zeros((1,) * len(idx.shape), np.int32), DataType.INT32), E.LESS)
    return p._L(p.network.add_select(neg, p._ew(idx, dt, E.SUM), idx))


def _scatter(p: ImporterContext, data: Any, lin: Any, upd: Any, n_pos: int, reduction: str) -> Any:
    """data (P, rest), lin (U,) int32 positions, upd (U, rest) -> (P, rest)."""
    pos = p._const_tensor(np.arange(n_pos, dtype=np.int32).reshape(1, n_pos), DataType.INT32)
    hit = p._ew(p._unsqueeze(lin, [1]), pos, E.EQUAL)  # (U, P)
    any_hit = p._L(p.network.add_reduce(p._cast(hit, DataType.INT32), R.MAX, 1, True))  # (1, P) over u
    any_hit = p._ew(p._transpose(any_hit, [1, 0]), p._const_tensor(np.zeros((1, 1), np.int32), DataType.INT32),
                    E.GREATER)  # (P, 1)
    dt = data.dtype
    if reduction in ("none", "add"):
        if dt == DataType.FLOAT:
            hf = p._cast(hit, DataType.FLOAT)
            s = p._L(p.network.add_matrix_multiply(hf, MatrixOperation.TRANSPOSE, upd, MatrixOperation.NONE))
        else:  # integers: no integer matrix multiply; a masked sum over u
            zero = p._const_tensor(np.zeros((1, 1, 1), TRT_NP[DataType(dt)]), dt)
            terms = p._L(p.network.add_select(p._unsqueeze(hit, [2]), p._unsqueeze(upd, [1]), zero))
            s = p._L(p.network.add_reduce(terms, R.SUM, 1, False))  # (P, rest)
        if reduction == "add":
            return p._ew(data, s, E.SUM)
        return p._L(p.network.add_select(any_hit, s, data))
    ops = {"mul": (R.PROD, 1, E.PROD), "max": (R.MAX, -np.inf, E.MAX), "min": (R.MIN, np.inf, E.MIN)}
    if reduction not in ops:
        raise Fail(ErrorCode.INVALID_NODE, "reduction '%s' (none, add, mul, max or min)" % reduction)
    rop, ident, eop = ops[reduction]
    if dt != DataType.FLOAT and reduction != "mul":
        ident = np.iinfo(np.int32).min if reduction == "max" else np.iinfo(np.int32).max
    fill = p._const_tensor(np.full((1, 1, 1), ident, TRT_NP[DataType(dt)]), dt)
    terms = p._L(p.network.add_select(p._unsqueeze(hit, [2]), p._unsqueeze(upd, [1]), fill))  # (U, P, rest)
    red = p._L(p.network.add_reduce(terms, rop, 1, False))  # (P, rest)
    return p._L(p.network.add_select(any_hit, p._ew(data, red, eop), data))


@importer("ScatterND",
          restrictions="static shapes; O(updates x positions) work (a one-hot contraction)")
def _scatter_nd(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    data, idx, upd = (p._tensor(n) for n in node.input[:3])
    ds, is_, us = tuple(data.shape), tuple(idx.shape), tuple(upd.shape)
    if not (is_static(ds) and is_static(is_) and is_static(us)):
        raise unsupported("ScatterND needs static shapes, got %s, %s, %s" % (ds, is_, us),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    k = is_[-1]
    if k > len(ds) or us != is_[:-1] + ds[k:]:
        raise Fail(ErrorCode.INVALID_NODE, "data %s, indices %s and updates %s do not fit" % (ds, is_, us))
    n_pos = int(np.prod(ds[:k]))
    rest = int(np.prod(ds[k:]))
    n_upd = int(np.prod(is_[:-1]))
    upd = p._cast(upd, data.dtype)
    it = _wrap(p, p._reshape(idx, [n_upd, k], zero_is_placeholder=False), np.array(ds[:k]).reshape(1, k))
    strides = np.array([int(np.prod(ds[i + 1:k])) for i in range(k)], np.int32).reshape(1, k)
    lin = p._L(p.network.add_reduce(p._ew(it, p._const_tensor(strides, DataType.INT32), E.PROD), R.SUM, 2, False))
    out = _scatter(p, p._reshape(data, [n_pos, rest], zero_is_placeholder=False), lin,
                   p._reshape(upd, [n_upd, rest], zero_is_placeholder=False), n_pos, a.get("reduction", "none"))
    return [p._reshape(out, list(ds), zero_is_placeholder=False)]


@importer("ScatterElements", "Scatter",
          restrictions="static shapes; O(updates x elements) work (a one-hot contraction)")
def _scatter_elements(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    data, idx, upd = (p._tensor(n) for n in node.input[:3])
    ds, is_ = tuple(data.shape), tuple(idx.shape)
    if not (is_static(ds) and is_static(is_)) or tuple(upd.shape) != is_:
        raise unsupported("ScatterElements needs static shapes and updates shaped like the indices, got %s, %s, %s"
                          % (ds, is_, tuple(upd.shape)), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    r = len(ds)
    axis = p._norm_axis(int(a.get("axis", 0)), r)
    n_pos, n_upd = int(np.prod(ds)), int(np.prod(is_))
    strides = [int(np.prod(ds[i + 1:])) for i in range(r)]
    # each update's own coordinates (static) give its target, with the axis coordinate replaced by the index
    coords = np.indices(is_).reshape(r, -1)
    base = sum(coords[i] * strides[i] for i in range(r) if i != axis).astype(np.int32)
    it = _wrap(p, p._reshape(idx, [n_upd], zero_is_placeholder=False), np.array([ds[axis]]))
    lin = p._ew(p._ew_const(it, np.int32(strides[axis]), E.PROD), p._const_tensor(base, DataType.INT32), E.SUM)
    upd = p._cast(upd, data.dtype)
    out = _scatter(p, p._reshape(data, [n_pos, 1], zero_is_placeholder=False), lin,
                   p._reshape(upd, [n_upd, 1], zero_is_placeholder=False), n_pos, a.get("reduction", "none"))
    return [p._reshape(out, list(ds), zero_is_placeholder=False)]
