"""Importers of ScatterND, ScatterElements and Scatter (its deprecated name) onto IScatterLayer (ScatterMode.ND and
ELEMENT).  ``reduction`` none / add / mul / max / min maps to trtlite's ScatterReduction extension of the layer
(TensorRT's layer only replaces; onnx-tensorrt takes a plugin for the others).  With reduction none and duplicate
indices (ONNX leaves the result undefined) the last update in row-major order wins, as onnxruntime does.  Any shapes,
dynamic ones included; out-of-range indices fail at run time naming the node.
"""
from __future__ import annotations

from typing import Any, Dict, List

from .._enums import DataType, ScatterMode, ScatterReduction
from .context import ImporterContext
from .errors import ErrorCode, Fail, bound_dims_constant, unsupported
from .registry import importer

_RED = {"none": ScatterReduction.NONE, "add": ScatterReduction.SUM, "mul": ScatterReduction.PROD,
        "max": ScatterReduction.MAX, "min": ScatterReduction.MIN}


def _scatter(p: ImporterContext, node: Any, a: Dict[str, Any], mode: ScatterMode) -> List[Any]:
    data, idx, upd = (p._tensor(n) for n in node.input[:3])
    red = a.get("reduction", "none")
    red = red.decode() if isinstance(red, bytes) else str(red)
    if red not in _RED:
        raise Fail(ErrorCode.INVALID_NODE, "reduction '%s' (none, add, mul, max or min)" % red)
    if red != "none" and data.dtype not in (DataType.FLOAT, DataType.INT32):
        raise unsupported("%s with reduction '%s' on %s data (FLOAT or INT32 only)" % (node.op_type, red, data.dtype),
                          ErrorCode.UNSUPPORTED_NODE_DATATYPE)
    if idx.dtype != DataType.INT32:
        idx = p._cast(idx, DataType.INT32)
    if upd.dtype != data.dtype:
        upd = p._cast(upd, data.dtype)
    layer = p.network.add_scatter(data, idx, upd, mode)
    if mode == ScatterMode.ELEMENT:
        layer.axis = p._norm_axis(int(a.get("axis", 0)), len(data.shape))
    layer.reduction = _RED[red]
    return [p._L(layer)]


@importer("ScatterND",
          restrictions="the indices' last dim static")
def _scatter_nd(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    return _scatter(p, node, a, ScatterMode.ND)


@importer("ScatterElements", "Scatter",
          restrictions="none")
def _scatter_elements(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    return _scatter(p, node, a, ScatterMode.ELEMENT)


@importer("TensorScatter",
          restrictions="the update's sequence length static; mode circular needs the cache's sequence length static")
def _tensor_scatter(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """present = past with, per batch sample b, update's sequence positions s written at write_indices[b] + s
    (modulo the cache length in mode circular) along `axis`: an ELEMENT scatter whose indices are that position,
    broadcast over update's other dims."""
    import numpy as np
    from .._enums import ElementWiseOperation as EW
    past, upd = p._tensor(node.input[0]), p._tensor(node.input[1])
    r = len(past.shape)
    axis = int(a.get("axis", -2))
    ax = p._norm_axis(axis, r)
    if ax == 0 or len(upd.shape) != r:
        raise Fail(ErrorCode.INVALID_NODE, "TensorScatter: axis %d must not be the batch axis, and update must have "
                   "the cache's rank %d (it has %d)" % (axis, r, len(upd.shape)))
    mode = a.get("mode", "linear")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("linear", "circular"):
        raise Fail(ErrorCode.INVALID_NODE, "TensorScatter: mode '%s' (linear or circular)" % mode)
    s = int(upd.shape[ax])
    if s < 0:
        raise unsupported("TensorScatter: the update's sequence length (axis %d) must be static" % ax)
    bound_dims_constant(s, "TensorScatter of %d update positions: their position range" % s)
    pos = p._const_tensor(np.arange(s, dtype=np.int32).reshape([1] * ax + [s] + [1] * (r - ax - 1)),
                          DataType.INT32)
    wi = node.input[2] if len(node.input) > 2 and node.input[2] else None
    if wi is not None:
        w = p._cast(p._tensor(wi), DataType.INT32)
        pos = p._ew(pos, p._reshape(w, [-1] + [1] * (r - 1)), EW.SUM)
    if mode == "circular":
        n = int(past.shape[ax])
        if n <= 0:
            raise unsupported("TensorScatter: mode circular needs the cache's sequence length (axis %d) static" % ax)
        pos = p._ew(pos, p._ew_const(p._ew_const(pos, n, EW.FLOOR_DIV), n, EW.PROD), EW.SUB)
    zeros = p._ew_const(p._cast(upd, DataType.INT32), 0, EW.PROD)  # update's shape (dynamic dims too)
    idx = p._ew(zeros, pos, EW.SUM)
    if upd.dtype != past.dtype:
        upd = p._cast(upd, past.dtype)
    layer = p.network.add_scatter(past, idx, upd, ScatterMode.ELEMENT)
    layer.axis = ax
    return [p._L(layer)]
