"""Importers of ops whose output sizes depend on the data: NonZero, NonMaxSuppression (INonZeroLayer, INMSLayer),
Unique (composed, its count from a NonZero).

Their outputs have a dim of -1 until execution; an engine output computed from them needs an output allocator
(``context.set_output_allocator``) or a buffer of ``context.get_max_output_size(name)`` bytes.  ONNX's int64
index outputs are INT32 inside the network, as every integer tensor the parser makes (graph outputs are cast
back to INT64).
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._enums import BoundingBoxFormat, DataType
from .context import ImporterContext
from .registry import importer


@importer("NonZero",
          restrictions="output indices are INT32 (ONNX: INT64); the count is known only after execution")
def _non_zero(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    layer = p.network.add_non_zero(x)
    p._name_layer(layer)
    return [layer.get_output(0)]


@importer("NonMaxSuppression",
          restrictions="selected indices are INT32 (ONNX: INT64); their count is known only after execution")
def _nms(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    boxes = p._tensor(node.input[0], DataType.FLOAT)
    scores = p._tensor(node.input[1], DataType.FLOAT)
    # ONNX scores are [batch, classes, boxes]; INMSLayer takes [batch, boxes, classes]
    tr = p.network.add_shuffle(scores)
    tr.first_transpose = (0, 2, 1)
    p._name_layer(tr, "transpose")
    mo = p._inp(node, 2)
    max_out = p._tensor(mo, DataType.INT32) if mo else p._const_tensor(np.array(0, np.int32))
    it = p._inp(node, 3)
    iou = p._tensor(it, DataType.FLOAT) if it else p._const_tensor(np.array(0.0, np.float32))
    st = p._inp(node, 4)
    # no score threshold in ONNX: every score counts (INMSLayer's default 0 would drop scores <= 0)
    score = p._tensor(st, DataType.FLOAT) if st else p._const_tensor(np.array(-np.inf, np.float32))
    layer = p.network.add_nms(boxes, tr.get_output(0), max_out)
    layer.set_input(3, iou)
    layer.set_input(4, score)
    layer.bounding_box_format = (BoundingBoxFormat.CENTER_SIZES if int(a.get("center_point_box", 0))
                                 else BoundingBoxFormat.CORNER_PAIRS)
    layer.topk_box_limit = 2**31 - 1  # ONNX has no such limit
    p._name_layer(layer)
    return [layer.get_output(0)]


@importer("Compress",
          restrictions="a condition computed at run time gives a data-dependent output (count known after execution)")
def _compress(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    if "axis" not in a:  # the flattened input
        flat = p.network.add_shuffle(x)
        flat.reshape_dims = (-1,)
        p._name_layer(flat, "flatten")
        x, axis = flat.get_output(0), 0
    else:
        axis = p._norm_axis(int(a["axis"]), len(x.shape))
    cn = node.input[1]
    if p._is_const(cn):  # known while parsing: a gather of constant indices
        idx = p._const_tensor(np.nonzero(np.asarray(p._cval(cn, "condition")).reshape(-1))[0].astype(np.int32))
    else:
        nz = p.network.add_non_zero(p._tensor(cn))
        p._name_layer(nz, "nonzero")
        flat = p.network.add_shuffle(nz.get_output(0))
        flat.reshape_dims = (-1,)
        p._name_layer(flat, "indices")
        idx = flat.get_output(0)
    layer = p.network.add_gather(x, idx, axis)
    p._name_layer(layer)
    return [layer.get_output(0)]


_UNIQUE_MAX = 1 << 22  # elements of the N x N x M comparison the composition builds


@importer("Unique",
          restrictions="the input's shape static; composed from N x N comparisons of the N slices (at most 2^22 "
                       "compared elements) and a NonZero for the count, which is known only after execution")
def _unique(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Unique: slices along `axis` (elements when no axis) compared pairwise.  For slices i, j of the [N, M]
    view: eq[i, j] (all M equal), first[i] (no equal j < i), rank[i] = the number of first occurrences ordered
    before i (lexicographically smaller when sorted, earlier first occurrence otherwise) -- which is
    inverse_indices -- and per output position k: counts[k] = #{i: rank[i] = k}, indices[k] = the first i
    with rank k.  NonZero(counts) gives the C data-dependent positions, which gather Y, indices and counts."""
    from .._enums import ElementWiseOperation as E, ReduceOperation as R
    from .errors import ErrorCode, unsupported
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    if any(d < 0 for d in xs):
        raise unsupported("Unique of an input with dynamic dims", ErrorCode.UNSUPPORTED_NODE_SHAPE)
    has_axis = "axis" in a
    if has_axis:
        ax = p._norm_axis(int(a["axis"]), len(xs))
        perm = [ax] + [i for i in range(len(xs)) if i != ax]
        xt = p._transpose(x, perm) if ax else x
        n = xs[ax]
        m = int(np.prod([xs[i] for i in perm[1:]])) if len(xs) > 1 else 1
    else:
        xt = p._reshape(x, [-1], zero_is_placeholder=False)
        n, m = int(np.prod(xs)), 1
    if n == 0:
        raise unsupported("Unique of an empty input", ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if n * n * m > _UNIQUE_MAX or m > 64:
        raise unsupported("Unique over %d slices of %d elements (the composition compares %d elements; at most %d, "
                          "slices of at most 64)" % (n, m, n * n * m, _UNIQUE_MAX), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    src = xt
    if xt.dtype not in (DataType.FLOAT, DataType.INT32):
        xt = p._cast(xt, DataType.FLOAT)
    x2 = p._reshape(xt, [n, m], zero_is_placeholder=False)
    i32 = DataType.INT32

    def reduce(t: Any, op: Any, axis: int) -> Any:
        return p._L(p.network.add_reduce(t, op, 1 << axis, False))

    eq = p._ew(p._reshape(x2, [n, 1, m], zero_is_placeholder=False),
               p._reshape(x2, [1, n, m], zero_is_placeholder=False), E.EQUAL)
    eqi = reduce(p._cast(eq, i32), R.MIN, 2)                                   # [N, N] 0/1
    jj = np.arange(n, dtype=np.int32)
    before = p._const_tensor((jj[None, :] < jj[:, None]).astype(np.int32))     # [i, j]: j < i
    first = p._ew_const(reduce(p._ew(eqi, before, E.PROD), R.MAX, 1), np.int32(1), E.SUB, const_first=True)  # [N]
    if int(a.get("sorted", 1)):
        lt = None  # lt[i, j]: slice i < slice j lexicographically
        for c in reversed(range(m)):
            col = p._gather_axis(x2, 1, np.array([c]))                           # [N, 1]
            ci, cj = col, p._reshape(col, [1, n], zero_is_placeholder=False)
            less = p._ew(ci, cj, E.LESS)
            lt = less if lt is None else p._ew(less, p._ew(p._ew(ci, cj, E.EQUAL), lt, E.AND), E.OR)
        # rank[i] = sum_j first[j] * lt[j, i]
        order = p._ew(p._cast(lt, i32), p._reshape(first, [n, 1], zero_is_placeholder=False), E.PROD)
        rank = reduce(order, R.SUM, 0)
    else:
        # first occurrence of i: min j with eq[i, j]; rank = #first occurrences j before it
        idx_or_n = p._L(p.network.add_select(p._cast(eqi, DataType.BOOL), p._const_tensor(
            np.tile(jj, (n, 1))), p._const_tensor(np.full((n, n), n, np.int32))))
        fidx = reduce(idx_or_n, R.MIN, 1)                                        # [N]
        earlier = p._cast(p._ew(p._const_tensor(jj.reshape(1, n)), p._reshape(fidx, [n, 1],
                                                                               zero_is_placeholder=False), E.LESS), i32)
        rank = reduce(p._ew(earlier, p._reshape(first, [1, n], zero_is_placeholder=False), E.PROD), R.SUM, 1)
    hit = p._cast(p._ew(p._reshape(rank, [1, n], zero_is_placeholder=False),
                        p._const_tensor(jj.reshape(n, 1)), E.EQUAL), i32)       # [k, i]: rank[i] == k
    counts_all = reduce(hit, R.SUM, 1)                                           # [N]
    src_all = reduce(p._ew(p._ew(hit, p._reshape(first, [1, n], zero_is_placeholder=False), E.PROD),
                           p._const_tensor(jj.reshape(1, n)), E.PROD), R.SUM, 1)  # [N]
    nz = p.network.add_non_zero(counts_all)
    p._name_layer(nz, "count")
    pos = p._reshape(nz.get_output(0), [-1], zero_is_placeholder=False)           # [C] (data-dependent)
    indices = p._L(p.network.add_gather(src_all, pos, 0))
    counts = p._L(p.network.add_gather(counts_all, pos, 0))
    y = p._L(p.network.add_gather(src, indices, 0))  # the input's own type (src: before any cast)
    if has_axis and ax:
        y = p._transpose(y, [perm.index(i) for i in range(len(xs))])
    return [y, indices, rank, counts]
