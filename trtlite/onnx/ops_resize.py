"""Importers of resizing: Resize, Upsample."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._enums import InterpolationMode, ResizeCoordinateTransformation, ResizeRoundMode, ResizeSelector
from .constants import attr_ints
from .context import ImporterContext
from .errors import Dynamic, ErrorCode, Fail, unsupported
from .registry import importer
from .shape_eval import Sym, is_static
from .shape_tensors import shape_input


def _full_sizes(p: ImporterContext, x: Any, sizes: Any, axes: Optional[List[int]]) -> Any:
    """The output shape tensor: `sizes` (run-time values) for `axes` (all when None), x's dims elsewhere."""
    if axes is None:
        return sizes
    net = p.network
    xs = p._L(net.add_shape(x))
    parts = []
    for i in range(len(x.shape)):
        src, j = (sizes, axes.index(i)) if i in axes else (xs, i)
        idx = p._const_tensor(np.array([j], np.int32))
        parts.append(p._L(net.add_gather(src, idx, 0)))
    cat = net.add_concatenation(parts)
    cat.axis = 0
    return p._L(cat)


def _resize_scales_from_sizes(p: ImporterContext, xname: str, xs: Sequence[int],
                              sizes: Sequence[Any]) -> Tuple[Optional[List[int]], Optional[List[float]]]:
    """(static output shape) or (scales) for Resize's `sizes`."""
    static_out = []
    scales = []
    for i, s in enumerate(sizes):
        if isinstance(s, Sym):
            if xs[i] < 0 and p._dim_is(s, xname, i):
                static_out.append(None)
                scales.append(1.0)
                continue
            raise Dynamic("Resize to the dynamic size %r" % (s,))
        s = int(s)
        static_out.append(s)
        if xs[i] < 0:
            raise Dynamic("Resize of the dynamic axis %d to the fixed size %d" % (i, s))
        scales.append(s / xs[i] if xs[i] else 1.0)
    if all(v is not None for v in static_out) and is_static(xs):
        return [int(v) for v in static_out], None
    for i, (s, n) in enumerate(zip(static_out, xs)):
        if s is not None and int(math.floor(float(np.float32(n) * np.float32(scales[i])))) != s:
            raise Dynamic("Resize to size %d along axis %d cannot be written as a scale with dynamic dims" % (s, i))
    return None, scales


@importer("Resize", "Upsample",
          restrictions=("modes nearest, linear and cubic; coordinate_transformation_mode half_pixel, "
                        "pytorch_half_pixel, align_corners or asymmetric; scales and sizes known while parsing; no "
                        "antialias, no keep_aspect_ratio_policy but stretch; nearest before opset 11 must not mix "
                        "up- and downsampling"))
def _resize(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    xname = node.input[0]
    x = p._tensor(xname)
    xs = tuple(x.shape)
    r = len(xs)
    mode = a.get("mode", "nearest")
    legacy = node.op_type == "Upsample" or p._opset < 11
    sizes = scales = None
    sizes_t = None
    axes = None
    if node.op_type == "Upsample" and p._opset < 9:
        scales = [float(v) for v in a["scales"]]
    elif legacy:
        scales = [float(v) for v in p._cval(p._inp(node, 1), "scales").reshape(-1)]
    else:
        sn, zn = p._inp(node, 2), p._inp(node, 3)
        if sn is not None and p._cval(sn, "scales").size > 0:
            scales = [float(v) for v in p._cval(sn, "scales").reshape(-1)]
        elif zn is not None and not p._is_const(zn):  # sizes computed at run time: a shape tensor
            sizes_t = shape_input(p, zn)
        elif zn is not None:
            sizes = list(p._cval(zn, "sizes", allow_sym=True).reshape(-1))
        else:
            raise Fail(ErrorCode.INVALID_NODE, "neither scales nor sizes is given")
        axes = attr_ints(a, "axes")
        if int(a.get("antialias", 0)) and mode != "nearest":
            raise unsupported("Resize with antialias=1")
        if a.get("keep_aspect_ratio_policy", "stretch") != "stretch" and (sizes is not None or sizes_t is not None):
            raise unsupported("Resize keep_aspect_ratio_policy '%s'" % a["keep_aspect_ratio_policy"])
    if sizes_t is not None:
        layer = p.network.add_resize(x)
        layer.set_input(1, _full_sizes(p, x, sizes_t, [p._norm_axis(v, r) for v in axes] if axes else None))
    elif axes is not None:
        axes = [p._norm_axis(v, r) for v in axes]
        full_sc = [1.0] * r
        full_sz: List[Any] = list(p._shape_value(xs, xname, {}))
        for k, ax in enumerate(axes):
            if scales is not None:
                full_sc[ax] = scales[k]
            else:
                full_sz[ax] = sizes[k]
        if scales is not None:
            scales = full_sc
        else:
            sizes = full_sz
    if sizes_t is not None:
        ratio = None
    elif scales is not None:
        layer = p.network.add_resize(x)
        if len(scales) != r:
            raise Fail(ErrorCode.INVALID_NODE, "%d scales for an input of rank %d" % (len(scales), r))
        layer.scales = [float(np.float32(s)) for s in scales]
        ratio = scales
    else:
        layer = p.network.add_resize(x)
        if len(sizes) != r:
            raise Fail(ErrorCode.INVALID_NODE, "%d sizes for an input of rank %d" % (len(sizes), r))
        shape, sc = _resize_scales_from_sizes(p, xname, xs, sizes)
        if shape is not None:
            layer.shape = shape
            ratio = [s / n if n else 1.0 for s, n in zip(shape, xs)]
        else:
            layer.scales = [float(np.float32(s)) for s in sc]
            ratio = sc
    if mode == "nearest":
        layer.resize_mode = InterpolationMode.NEAREST
    elif mode in ("linear", "bilinear", "trilinear"):
        layer.resize_mode = InterpolationMode.LINEAR
    elif mode in ("cubic", "bicubic"):
        layer.resize_mode = InterpolationMode.CUBIC
        layer.cubic_coeff = float(a.get("cubic_coeff_a", -0.75))
        layer.exclude_outside = bool(int(a.get("exclude_outside", 0)))
    else:
        raise unsupported("Resize mode '%s'" % mode)
    C = ResizeCoordinateTransformation
    if legacy:
        layer.coordinate_transformation = C.ASYMMETRIC
        if mode == "nearest":
            # Upsample and Resize-10: floor when upsampling, ceil when downsampling (ONNX Runtime's rule)
            up = [s >= 1.0 for s in ratio]
            down = [s <= 1.0 for s in ratio]
            if all(up):
                layer.nearest_rounding = ResizeRoundMode.FLOOR
            elif all(down):
                layer.nearest_rounding = ResizeRoundMode.CEIL
            else:
                raise unsupported("nearest Resize that upsamples some axes and downsamples others (opset < 11)")
        return [p._L(layer)]
    ctm = a.get("coordinate_transformation_mode", "half_pixel")
    if ctm == "half_pixel":
        layer.coordinate_transformation = C.HALF_PIXEL
    elif ctm == "pytorch_half_pixel":
        layer.coordinate_transformation = C.HALF_PIXEL
        layer.selector_for_single_pixel = ResizeSelector.UPPER
    elif ctm == "align_corners":
        layer.coordinate_transformation = C.ALIGN_CORNERS
    elif ctm == "asymmetric":
        layer.coordinate_transformation = C.ASYMMETRIC
    else:
        raise unsupported("Resize coordinate_transformation_mode '%s'" % ctm)
    if mode == "nearest":
        nm = a.get("nearest_mode", "round_prefer_floor")
        R = ResizeRoundMode
        table = {"round_prefer_floor": R.HALF_DOWN, "round_prefer_ceil": R.HALF_UP, "floor": R.FLOOR, "ceil": R.CEIL}
        if nm not in table:
            raise unsupported("Resize nearest_mode '%s'" % nm)
        layer.nearest_rounding = table[nm]
    return [p._L(layer)]
