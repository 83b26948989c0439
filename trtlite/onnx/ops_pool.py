"""Importers of pooling: MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool."""
from __future__ import annotations

import itertools
from typing import Any, Dict, List

import numpy as np

from .._enums import (CumulativeOperation, DataType, ElementWiseOperation, PaddingMode, PoolingType, ReduceOperation,
                      TopKOperation, UnaryOperation)
from .constants import attr_ints
from .context import ImporterContext
from .errors import ErrorCode, bound_dims_constant, unsupported
from .ops_conv import _pads
from .registry import importer
from .shape_eval import axes_mask, is_static


def _pool_out(n: int, k: int, s: int, pre: int, post: int, ceil: bool) -> int:
    if ceil:
        o = -(-(n + pre + post - k) // s) + 1
        if (o - 1) * s >= n + pre:
            o -= 1
        return o
    return (n + pre + post - k) // s + 1


@importer("MaxPool", "AveragePool", "LpPool",
          restrictions={"MaxPool": ("1-D to 3-D; FLOAT, or int8 / uint8 (pooled exactly as FLOAT); the Indices "
                                    "output needs static channel and spatial dims (the batch may be dynamic); ceil_mode output sizes trtlite's padding modes can "
                                    "express; "
                                    "dilations need static spatial dims (one strided slice per tap)"),
                        "AveragePool": ("1-D to 3-D; ceil_mode output sizes trtlite's padding modes can express; "
                                        "dilations need static spatial dims (one strided slice per tap)"),
                        "LpPool": ("1-D to 3-D; ceil_mode output sizes trtlite's padding modes can express; "
                                   "dilations need static spatial dims (one strided slice per tap)")})
def _pool(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = node.op_type
    x = p._tensor(node.input[0])
    if op == "MaxPool" and len(node.output) > 1 and node.output[1]:
        y = _pool_float(p, node, a, p._float(x))
        return [p._cast(y, DataType.INT32) if x.dtype in (DataType.INT8, DataType.UINT8) else y,
                _maxpool_indices(p, a, p._float(x), tuple(y.shape))]
    if op == "MaxPool" and x.dtype in (DataType.INT8, DataType.UINT8):
        # 8-bit codes pooled exactly as FLOAT, then carried as INT32 like every integer the parser computes on
        return [p._cast(_pool_float(p, node, a, p._cast(x, DataType.FLOAT)), DataType.INT32)]
    return [_pool_float(p, node, a, p._float(x))]


def _maxpool_indices(p: ImporterContext, a: Dict[str, Any], x: Any, out: tuple) -> Any:
    """MaxPool's Indices: the flat index into x (N, C, spatial row-major, or spatial column-major with
    storage_order 1) of each window's first maximum.  Every window's taps are gathered from x's flattened spatial
    axis plus one -inf slot standing for the padding ([N, C, O, K]), TopK(1) picks the tap, and the tap's index
    becomes base[o] + offset[k] (both constants: the index is linear in the tap position)."""
    xs = tuple(x.shape)
    if not is_static(xs[1:]) or not is_static(out[2:]):
        raise unsupported("MaxPool's Indices output with dynamic channel or spatial dims %s (only the batch may be "
                          "dynamic)" % (xs,), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    n, c, sp, osp = xs[0], xs[1], xs[2:], out[2:]
    nsp = len(sp)
    ks = attr_ints(a, "kernel_shape")
    strides = attr_ints(a, "strides") or [1] * nsp
    dil = attr_ints(a, "dilations") or [1] * nsp
    auto_pad = a.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        tot = [max((osp[i] - 1) * strides[i] + (ks[i] - 1) * dil[i] + 1 - sp[i], 0) for i in range(nsp)]
        pre = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in tot]
    else:
        pre = [0] * nsp if auto_pad == "VALID" else _pads(a, nsp)[0]
    S, K, O = int(np.prod(sp)), int(np.prod(ks)), int(np.prod(osp))
    bound_dims_constant(nsp * O * K, "MaxPool's Indices over %d windows of %d taps: its tap position table" % (O, K))
    if is_static(xs[:1]):
        bound_dims_constant(n * c * O, "MaxPool's Indices over %d x %d planes of %d windows: its plane offset table"
                            % (n, c, O))
    row = [int(np.prod(sp[i + 1:])) for i in range(nsp)]  # row-major spatial strides
    col = [int(np.prod(sp[:i])) for i in range(nsp)]      # column-major (storage_order 1)
    order = col if int(a.get("storage_order", 0)) else row
    col_v = lambda v: np.asarray(v, np.int64).reshape(nsp, 1)  # noqa: E731
    start = np.indices(osp).reshape(nsp, O) * col_v(strides) - col_v(pre)   # [nsp, O]
    taps = np.indices(ks).reshape(nsp, K) * col_v(dil)                         # [nsp, K]
    pos = start[:, :, None] + taps[:, None, :]                                 # [nsp, O, K]
    inside = np.all((pos >= 0) & (pos < col_v(sp)[:, :, None]), axis=0)
    table = np.where(inside, np.tensordot(np.asarray(row, np.int64), pos, 1), S)  # [O, K]; S: the -inf slot
    base = np.asarray(order, np.int64) @ start
    offset = np.asarray(order, np.int64) @ taps
    if not is_static(xs[:1]):
        return _maxpool_indices_dynamic_batch(p, x, c, S, O, K, osp, inside, table, base[:, None] + offset[None, :])
    flat = p._reshape(x, [n, c, S])
    neg = p._const_tensor(np.full((n, c, 1), -np.inf, np.float32), DataType.FLOAT)
    taps = p._gather_axis(p._concat_layer([flat, neg], 2), 2, table.reshape(-1))
    taps = p._reshape(taps, [n, c, O, K])
    pick = p.network.add_topk(taps, TopKOperation.MAX, 1, 1 << 3)
    p._L(pick)
    k_idx = pick.get_output(1)  # [N, C, O, 1], INT32
    tap = p._L(p.network.add_gather(p._const_tensor(offset.astype(np.int32), DataType.INT32), k_idx, 0))
    tap = p._reshape(tap, [n, c, O])
    nc = (np.arange(n * c, dtype=np.int64) * S).reshape(n, c, 1) + base.reshape(1, 1, O)
    if nc.size and int(nc.max()) + int(offset.max(initial=0)) > 2 ** 31 - 1:
        raise unsupported("MaxPool's Indices beyond int32 (%d elements)" % (n * c * S), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    idx = p._ew(tap, p._const_tensor(nc.astype(np.int32), DataType.INT32), ElementWiseOperation.SUM)
    return p._reshape(idx, [n, c] + list(osp))


def _maxpool_indices_dynamic_batch(p: ImporterContext, x: Any, c: int, S: int, O: int, K: int, osp: tuple,
                                   inside: np.ndarray, table: np.ndarray, index: np.ndarray) -> Any:
    """_maxpool_indices with a run-time batch: no [N, C, 1] -inf constant, so a padding tap reads its window's first
    tap inside the input instead (picking it names that tap, which a tie resolves to anyway: it is the window's
    first inside tap), the chosen tap's index comes from a per-(window, tap) table, and the (n, c) plane's offset
    (n * C + c) * S is an exclusive running sum of ones over the [N * C] planes.  Indices are INT32, as the static
    path's."""
    if not inside.any(axis=1).all():
        raise unsupported("MaxPool's Indices with a window wholly in the padding", ErrorCode.UNSUPPORTED_NODE_SHAPE)
    first = inside.argmax(axis=1)  # [O]: each window's first tap inside the input
    rows = np.arange(O)
    table = np.where(inside, table, table[rows, first][:, None])
    index = np.where(inside, index, index[rows, first][:, None])
    if int(index.max(initial=0)) + c * S > 2 ** 31 - 1:
        raise unsupported("MaxPool's Indices beyond int32 (%d elements an image)" % (c * S),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    flat = p._reshape(x, [0, c, S])
    taps = p._reshape(p._gather_axis(flat, 2, table.reshape(-1)), [0, c, O, K])
    pick = p.network.add_topk(taps, TopKOperation.MAX, 1, 1 << 3)
    p._L(pick)
    k_idx = pick.get_output(1)  # [N, C, O, 1], INT32
    at = p._ew(k_idx, p._const_tensor((rows * K).astype(np.int32).reshape(1, 1, O, 1), DataType.INT32),
               ElementWiseOperation.SUM)
    tap = p._L(p.network.add_gather(p._const_tensor(index.reshape(-1).astype(np.int32), DataType.INT32), at, 0))
    ones = p._ew_const(p._ew_const(p._gather_axis(k_idx, 2, np.array([0])), np.int32(0), ElementWiseOperation.PROD),
                       np.int32(1), ElementWiseOperation.SUM)  # [N, C, 1, 1]
    axis = p._const_tensor(np.array(0, np.int32), DataType.INT32)
    plane = p._L(p.network.add_cumulative(p._reshape(ones, [-1]), axis, CumulativeOperation.SUM, True, False))
    plane = p._ew_const(p._reshape(plane, [-1, c, 1, 1]), np.int32(S), ElementWiseOperation.PROD)
    idx = p._ew(tap, plane, ElementWiseOperation.SUM)  # [N, C, O, 1]
    return p._reshape(idx, [0, c] + list(osp))


def _pool_float(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any) -> Any:
    op = node.op_type
    xs = tuple(x.shape)
    order = float(a.get("p", 2))
    if op == "LpPool":  # (sum over the window of |x|^p)^(1/p): an average pool counting the padding, times K
        x = _pow(p, p._unary(x, UnaryOperation.ABS), order)
    ks = attr_ints(a, "kernel_shape")
    nsp = len(ks)
    if nsp < 1 or nsp > 3 or len(xs) != nsp + 2:
        raise unsupported("pooling with kernel %s on input %s" % (ks, xs), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    strides = attr_ints(a, "strides") or [1] * nsp
    dil = attr_ints(a, "dilations") or [1] * nsp
    ceil = bool(int(a.get("ceil_mode", 0)))
    if any(d != 1 for d in dil):
        y = _pool_dilated(p, x, op, ks, strides, dil, ceil, a)
        return _pow(p, y, 1.0 / order) if op == "LpPool" else y  # LpPool: y is the sum of |x|^p
    layer = p.network.add_pooling_nd(x, PoolingType.MAX if op == "MaxPool" else PoolingType.AVERAGE, ks)
    layer.stride_nd = strides
    auto_pad = a.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        layer.padding_mode = PaddingMode.SAME_UPPER if auto_pad == "SAME_UPPER" else PaddingMode.SAME_LOWER
    else:
        if auto_pad == "VALID":
            pre, post = [0] * nsp, [0] * nsp
        elif auto_pad == "NOTSET":
            pre, post = _pads(a, nsp)
        else:
            raise unsupported("auto_pad '%s'" % auto_pad)
        layer.pre_padding = pre
        layer.post_padding = post
        if ceil:
            sp = xs[2:]
            mode = PaddingMode.CAFFE_ROUND_UP if any(pre) or any(post) else PaddingMode.EXPLICIT_ROUND_UP
            if is_static(sp):
                want = [_pool_out(sp[i], ks[i], strides[i], pre[i], post[i], True) for i in range(nsp)]
                for cand in (mode, PaddingMode.EXPLICIT_ROUND_UP, PaddingMode.CAFFE_ROUND_UP,
                             PaddingMode.EXPLICIT_ROUND_DOWN):
                    got = [_trt_pool_out(sp[i], ks[i], strides[i], pre[i], post[i], cand) for i in range(nsp)]
                    if got == want:
                        mode = cand
                        break
                else:
                    raise unsupported("ceil_mode output size %s cannot be expressed" % want)
            layer.padding_mode = mode
    if op == "AveragePool":
        layer.average_count_excludes_padding = not bool(int(a.get("count_include_pad", 0)))
    if op == "LpPool":
        layer.average_count_excludes_padding = False  # padding adds |0|^p = 0 to the sum
        y = p._ew_const(p._L(layer), np.float32(np.prod(ks)), ElementWiseOperation.PROD)
        return _pow(p, y, 1.0 / order)
    return p._L(layer)


def _pow(p: ImporterContext, x: Any, e: float) -> Any:
    """x^e for x >= 0 (x * x for 2, sqrt for 1/2)."""
    if e == 1.0:
        return x
    if e == 2.0:
        return p._ew(x, x, ElementWiseOperation.PROD)
    if e == 0.5:
        return p._unary(x, UnaryOperation.SQRT)
    return p._ew_const(x, np.float32(e), ElementWiseOperation.POW)


def _trt_pool_out(n: int, k: int, s: int, pre: int, post: int, mode: PaddingMode) -> int:
    if mode in (PaddingMode.EXPLICIT_ROUND_DOWN, PaddingMode.CAFFE_ROUND_DOWN):
        return (n + pre + post - k) // s + 1
    o = -(-(n + pre + post - k) // s) + 1
    if mode == PaddingMode.CAFFE_ROUND_UP and (pre or post) and (o - 1) * s >= n + pre:
        o -= 1
    return o


@importer("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool",
          restrictions="none")
def _global_pool(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    if node.op_type == "GlobalLpPool":
        order = float(a.get("p", 2))
        s = p._L(p.network.add_reduce(_pow(p, p._unary(x, UnaryOperation.ABS), order), ReduceOperation.SUM,
                                      axes_mask(range(2, r)), True))
        return [_pow(p, s, 1.0 / order)]
    op = ReduceOperation.AVG if node.op_type == "GlobalAveragePool" else ReduceOperation.MAX
    return [p._L(p.network.add_reduce(x, op, axes_mask(range(2, r)), True))]


def _pool_dilated(p: ImporterContext, x: Any, op: str, ks: List[int], strides: List[int], dil: List[int],
                  ceil: bool, a: Dict[str, Any]) -> Any:
    """Pooling with dilations, which the pooling layer lacks: the input padded (-inf for max, 0 otherwise, and as
    far past the end as ceil_mode's last window reaches), one strided slice per kernel tap, combined by max or sum;
    an average divides by the taps inside the padded input (count_include_pad) or inside the input itself, a count
    computed while parsing."""
    xs = tuple(x.shape)
    nsp = len(ks)
    sp = list(xs[2:])
    if not is_static(sp):
        raise unsupported("pooling with dilations %s over dynamic spatial dims %s" % (dil, xs),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    k_eff = [d * (k - 1) + 1 for d, k in zip(dil, ks)]
    auto_pad = a.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pre, post = [], []
        for i in range(nsp):
            total = max(0, (-(-sp[i] // strides[i]) - 1) * strides[i] + k_eff[i] - sp[i])
            small, big = total // 2, total - total // 2
            pre.append(small if auto_pad == "SAME_UPPER" else big)
            post.append(big if auto_pad == "SAME_UPPER" else small)
    elif auto_pad in ("VALID", "NOTSET"):
        pre, post = _pads(a, nsp) if auto_pad == "NOTSET" else ([0] * nsp, [0] * nsp)
    else:
        raise unsupported("auto_pad '%s'" % auto_pad)
    out = [_pool_out(sp[i], k_eff[i], strides[i], pre[i], post[i], ceil) for i in range(nsp)]
    extra = [max(0, (out[i] - 1) * strides[i] + k_eff[i] - (sp[i] + pre[i] + post[i])) for i in range(nsp)]
    full = [sp[i] + pre[i] + post[i] + extra[i] for i in range(nsp)]
    inside = np.zeros(full, np.bool_)  # the input's own positions within the padded extent
    inside[tuple(slice(pre[i], pre[i] + sp[i]) for i in range(nsp))] = True
    padded = np.zeros(full, np.bool_)  # the positions count_include_pad counts: input and explicit pads
    padded[tuple(slice(0, sp[i] + pre[i] + post[i]) for i in range(nsp))] = True
    if any(pre) or any(post) or any(extra):
        x = p._L(p.network.add_padding_nd(x, pre, [q + e for q, e in zip(post, extra)]))
        if op == "MaxPool":
            bias = np.where(inside, np.float32(0), np.float32(-np.inf)).astype(np.float32)
            x = p._ew(x, p._const_tensor(bias.reshape((1, 1) + bias.shape), DataType.FLOAT), ElementWiseOperation.SUM)
    combine = ElementWiseOperation.MAX if op == "MaxPool" else ElementWiseOperation.SUM
    y = None
    count = np.zeros(out, np.float64)
    counted = padded if int(a.get("count_include_pad", 0)) else inside
    for t in itertools.product(*[range(k) for k in ks]):
        spec = {i + 2: (t[i] * dil[i], out[i], strides[i]) for i in range(nsp)}
        sl = p._slice(x, spec)
        y = sl if y is None else p._ew(y, sl, combine)
        count += counted[tuple(slice(t[i] * dil[i], t[i] * dil[i] + (out[i] - 1) * strides[i] + 1, strides[i])
                               for i in range(nsp))]
    if op == "AveragePool":
        y = p._ew(y, p._const_tensor(np.maximum(count, 1).astype(np.float32).reshape((1, 1) + tuple(out)),
                                     DataType.FLOAT), ElementWiseOperation.DIV)
    return y
