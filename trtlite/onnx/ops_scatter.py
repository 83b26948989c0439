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
from .errors import ErrorCode, Fail, unsupported
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
