"""The importer of GridSample (opset 16+, where opset 16 names the modes bilinear / bicubic and 20 linear / cubic)
onto IGridSampleLayer, 2-D and 3-D: modes nearest / linear / cubic map to InterpolationMode NEAREST / LINEAR / CUBIC,
padding_mode zeros / border / reflection to SampleMode FILL / CLAMP / REFLECT.  The layer follows ONNX's definition
(kernels/ref/grid_sample.c; cubic with border clamps the coordinate, then each tap, as ONNX's reference does).
"""
from __future__ import annotations

from typing import Any, Dict, List

from .._enums import InterpolationMode, SampleMode
from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported
from .registry import importer

_MODE = {"nearest": InterpolationMode.NEAREST, "linear": InterpolationMode.LINEAR, "bilinear": InterpolationMode.LINEAR,
         "cubic": InterpolationMode.CUBIC, "bicubic": InterpolationMode.CUBIC}
_PAD = {"zeros": SampleMode.FILL, "border": SampleMode.CLAMP, "reflection": SampleMode.REFLECT}


@importer("GridSample",
          restrictions="2-D and 3-D")
def _grid_sample(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]), "X")
    g = p._float(p._tensor(node.input[1]), "grid")
    xs, gs = tuple(x.shape), tuple(g.shape)
    nd = len(xs) - 2
    if nd not in (2, 3) or len(gs) != nd + 2:
        raise unsupported("GridSample of X %s with grid %s (2-D and 3-D only)" % (xs, gs),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    mode, pad = str(a.get("mode", "linear")), str(a.get("padding_mode", "zeros"))
    if mode not in _MODE or pad not in _PAD:
        raise Fail(ErrorCode.INVALID_NODE, "GridSample mode '%s' / padding_mode '%s'" % (mode, pad))
    layer = p.network.add_grid_sample(x, g)
    layer.interpolation_mode = _MODE[mode]
    layer.sample_mode = _PAD[pad]
    layer.align_corners = bool(int(a.get("align_corners", 0)))
    return [p._L(layer)]
