"""Importers of pooling: MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._enums import ElementWiseOperation, PaddingMode, PoolingType, ReduceOperation, UnaryOperation
from .constants import attr_ints
from .context import ImporterContext
from .errors import ErrorCode, unsupported
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
          restrictions={"MaxPool": ("1-D to 3-D; no dilations; no Indices output; ceil_mode output sizes trtlite's "
                                    "padding modes can express"),
                        "AveragePool": ("1-D to 3-D; no dilations; ceil_mode output sizes trtlite's padding modes "
                                        "can express"),
                        "LpPool": ("1-D to 3-D; no dilations; ceil_mode output sizes trtlite's padding modes can "
                                   "express")})
def _pool(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = node.op_type
    if len([o for o in node.output if o]) > 1:
        raise unsupported("MaxPool's Indices output")
    x = p._float(p._tensor(node.input[0]))
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
    if any(d != 1 for d in dil):
        raise unsupported("pooling with dilations %s" % dil)
    ceil = bool(int(a.get("ceil_mode", 0)))
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
        return [_pow(p, y, 1.0 / order)]
    return [p._L(layer)]


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
