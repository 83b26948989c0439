"""Importers of resizing: Resize, Upsample."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._enums import (DataType, ElementWiseOperation, InterpolationMode, ReduceOperation,
                      ResizeCoordinateTransformation, ResizeRoundMode, ResizeSelector, UnaryOperation)
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
                        "pytorch_half_pixel, align_corners or asymmetric (and half_pixel_symmetric with run-time "
                        "scales); scales known while parsing, or at run time with the output's shape static (each "
                        "axis resampled by gathers and weights computed from the scale; floor(size * scale) "
                        "asserted); sizes known while parsing or a shape tensor; no antialias, no "
                        "keep_aspect_ratio_policy but stretch; nearest before opset 11 must not mix up- and "
                        "downsampling"))
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
    elif legacy and p._inp(node, 1) is not None and not p._is_const(p._inp(node, 1)):
        # Upsample / Resize-10 with run-time scales: asymmetric coordinates; nearest floors when upsampling and
        # ceils when downsampling (ONNX Runtime's rule), told apart by the output's static shape
        want = p._sym_dims(node.output[0]) or []
        up = all(isinstance(w, int) and w >= n for w, n in zip(want, xs))
        down = all(isinstance(w, int) and w <= n for w, n in zip(want, xs))
        if mode == "nearest" and not (up or down):
            raise unsupported("nearest Resize that upsamples some axes and downsamples others (opset < 11)")
        a2 = dict(a, coordinate_transformation_mode="asymmetric", nearest_mode="floor" if up else "ceil")
        m2 = "linear" if mode in ("linear", "bilinear") else mode
        return [_resize_runtime_scales(p, node, a2, x, p._inp(node, 1), None, m2)]
    elif legacy:
        scales = [float(v) for v in p._cval(p._inp(node, 1), "scales").reshape(-1)]
    else:
        sn, zn = p._inp(node, 2), p._inp(node, 3)
        if sn is not None and not p._is_const(sn):  # scales computed at run time
            return [_resize_runtime_scales(p, node, a, x, sn, attr_ints(a, "axes"), mode)]
        if sn is not None and p._cval(sn, "scales").size > 0:
            scales = [float(v) for v in p._cval(sn, "scales").reshape(-1)]
        elif zn is not None and not p._is_const(zn) and (
                a.get("keep_aspect_ratio_policy", "stretch") != "stretch" or
                a.get("coordinate_transformation_mode") == "tf_crop_and_resize"):
            # sizes at run time that are not the output shape as they are (a kept aspect ratio) or whose
            # coordinates come from roi: resampled as for run-time scales
            return [_resize_runtime_scales(p, node, a, x, None, attr_ints(a, "axes"), mode, zn)]
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


def _coords(p: ImporterContext, s: Any, n_in: int, n_out: int, ctm: str) -> Any:
    """[n_out] FLOAT source coordinates of the output positions for the run-time scale `s` ([1] FLOAT), as ONNX's
    coordinate_transformation_mode defines them."""
    E = ElementWiseOperation
    i = p._const_tensor(np.arange(n_out, dtype=np.float32))
    if ctm == "align_corners":  # i * (in - 1) / (in * s - 1): the resized length unrounded, as ONNX's reference
        if n_out <= 1:
            return p._const_tensor(np.zeros(n_out, np.float32))
        denom = p._ew_const(p._ew_const(s, np.float32(n_in), E.PROD), np.float32(1.0), E.SUB)
        return p._ew(p._ew_const(i, np.float32(n_in - 1), E.PROD), denom, E.DIV)
    if ctm == "asymmetric":
        return p._ew(i, s, E.DIV)
    if ctm == "pytorch_half_pixel" and n_out <= 1:
        return p._const_tensor(np.zeros(n_out, np.float32))
    x = p._ew_const(p._ew(p._ew_const(i, np.float32(0.5), E.SUM), s, E.DIV), np.float32(0.5), E.SUB)
    if ctm == "half_pixel_symmetric":
        # offset = in/2 * (1 - floor(s * in) / (s * in))
        out_w = p._ew_const(s, np.float32(n_in), E.PROD)
        adj = p._ew(p._unary(out_w, UnaryOperation.FLOOR), out_w, E.DIV)
        offset = p._ew_const(p._ew_const(adj, np.float32(1.0), E.SUB, const_first=True), np.float32(n_in / 2.0),
                             E.PROD)
        x = p._ew(x, offset, E.SUM)
    return x


def _cubic_weight(p: ImporterContext, d: Any, A: float) -> Any:
    """Keys' cubic kernel W(d) for d in [0, 2] (ONNX's cubic_coeffs with coefficient A)."""
    E = ElementWiseOperation
    d2 = p._ew(d, d, E.PROD)
    d3 = p._ew(d2, d, E.PROD)
    near = p._ew_const(p._ew(p._ew_const(d3, np.float32(A + 2), E.PROD), p._ew_const(d2, np.float32(A + 3), E.PROD),
                             E.SUB), np.float32(1.0), E.SUM)                      # (A+2)d^3 - (A+3)d^2 + 1
    far = p._ew(p._ew(p._ew_const(d3, np.float32(A), E.PROD), p._ew_const(d2, np.float32(5 * A), E.PROD), E.SUB),
                p._ew_const(p._ew_const(d, np.float32(8 * A), E.PROD), np.float32(4 * A), E.SUB), E.SUM)
    is_near = p._ew_const(d, np.float32(1.0), E.LESS)                           # A d^3 - 5A d^2 + 8A d - 4A
    return p._L(p.network.add_select(is_near, near, far))


def _resize_runtime_scales(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any, sn: Optional[str],
                           axes: Optional[List[int]], mode: str, zn: Optional[str] = None) -> Any:
    """Resize whose scales (`sn`) or sizes (`zn`, with keep_aspect_ratio_policy not_larger / not_smaller or
    coordinate_transformation_mode tf_crop_and_resize) are computed at run time.  The output's shape must be
    static (declared, or ONNX shape inference's): each axis whose extent is not 1 in and out is resampled
    separately -- source coordinates computed from its scale (or roi), then a gather per tap (nearest: 1, linear:
    2, cubic: 4) weighted and summed -- and the output extents the run-time values give (floor(extent * scale);
    round(extent * scale) for a kept aspect ratio; the sizes themselves for tf_crop_and_resize) are asserted to
    be the static ones."""
    E = ElementWiseOperation
    xs = tuple(x.shape)
    r = len(xs)
    want = p._sym_dims(node.output[0])
    if want is None or len(want) != r or not all(isinstance(d, int) and d >= 0 for d in want) or \
            any(d < 0 for d in xs):
        raise Fail(ErrorCode.UNSUPPORTED_NODE_INPUT, "%s '%s' is computed at run time: the input's and the "
                   "output's shapes must then be static (the output's as declared or inferred by ONNX)"
                   % ("scales" if sn else "sizes", sn or zn))
    if int(a.get("antialias", 0)) and mode != "nearest":
        raise unsupported("Resize with antialias=1")
    ctm = a.get("coordinate_transformation_mode", "half_pixel")
    if ctm not in ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric",
                   "tf_crop_and_resize"):
        raise unsupported("Resize coordinate_transformation_mode '%s'" % ctm)
    if mode not in ("nearest", "linear", "cubic"):
        raise unsupported("Resize mode '%s'" % mode)
    ax_list = [p._norm_axis(v, r) for v in axes] if axes else list(range(r))
    policy = a.get("keep_aspect_ratio_policy", "stretch") if zn else "stretch"
    if sn is not None:
        scales = p._float(p._tensor(sn), "scales")
        if tuple(scales.shape) != (len(ax_list),):
            raise Fail(ErrorCode.INVALID_NODE, "scales of shape %s for %d resized axes" % (tuple(scales.shape),
                                                                                          len(ax_list)))
    else:
        sizes = p._tensor(zn)
        if sizes.dtype != DataType.FLOAT:
            sizes = p._cast(sizes, DataType.FLOAT)
        if tuple(sizes.shape) != (len(ax_list),):
            raise Fail(ErrorCode.INVALID_NODE, "sizes of shape %s for %d resized axes" % (tuple(sizes.shape),
                                                                                        len(ax_list)))
        scales = p._ew(sizes, p._const_tensor(np.array([xs[i] for i in ax_list], np.float32)), E.DIV)
        if policy in ("not_larger", "not_smaller"):  # one scale for every resized axis
            one = p._L(p.network.add_reduce(scales, ReduceOperation.MIN if policy == "not_larger" else
                                            ReduceOperation.MAX, 1, True))
            scales = p._ew(p._const_tensor(np.ones(len(ax_list), np.float32)), one, E.PROD)
        elif policy != "stretch":
            raise unsupported("Resize keep_aspect_ratio_policy '%s'" % policy)
    roi = None
    if ctm == "tf_crop_and_resize":
        rn = p._inp(node, 1)
        if rn is None:
            raise Fail(ErrorCode.INVALID_NODE, "tf_crop_and_resize needs roi (input 1)")
        roi = p._float(p._tensor(rn), "roi")
        if tuple(roi.shape) != (2 * len(ax_list),):
            raise Fail(ErrorCode.INVALID_NODE, "roi of shape %s for %d resized axes" % (tuple(roi.shape),
                                                                                      len(ax_list)))
    outside = None  # tf_crop_and_resize: output positions mapped outside the input
    y = x
    if mode != "nearest" and y.dtype != DataType.FLOAT:
        y = p._cast(y, DataType.FLOAT)
    checks = None
    for k, ax in enumerate(ax_list):
        n_in, n_out = xs[ax], want[ax]
        s = p._L(p.network.add_gather(scales, p._const_tensor(np.array([k], np.int32)), 0))
        if sn is not None:
            got = p._unary(p._ew_const(s, np.float32(n_in), E.PROD), UnaryOperation.FLOOR)
        elif policy != "stretch":  # round half up, as ONNX's reference rounds the kept-ratio sizes
            got = p._unary(p._ew_const(p._ew_const(s, np.float32(n_in), E.PROD), np.float32(0.5), E.SUM),
                           UnaryOperation.FLOOR)
        else:
            got = p._L(p.network.add_gather(sizes, p._const_tensor(np.array([k], np.int32)), 0))
        fits = p._ew_const(got, np.float32(n_out), E.EQUAL)
        checks = fits if checks is None else p._ew(checks, fits, E.AND)
        if n_in == n_out == 1 and roi is None:
            continue
        if roi is not None:  # start * (in - 1) + i * (end - start) * (in - 1) / (out - 1)
            st = p._L(p.network.add_gather(roi, p._const_tensor(np.array([k], np.int32)), 0))
            en = p._L(p.network.add_gather(roi, p._const_tensor(np.array([k + len(ax_list)], np.int32)), 0))
            if n_out > 1:
                step = p._ew_const(p._ew(en, st, E.SUB), np.float32((n_in - 1) / (n_out - 1)), E.PROD)
                c = p._ew(p._ew_const(st, np.float32(n_in - 1), E.PROD),
                          p._ew(p._const_tensor(np.arange(n_out, dtype=np.float32)), step, E.PROD), E.SUM)
            else:
                c = p._ew_const(p._ew(st, en, E.SUM), np.float32(0.5 * (n_in - 1)), E.PROD)
            out_k = p._ew(p._ew_const(c, np.float32(0.0), E.LESS), p._ew_const(c, np.float32(n_in - 1),
                                                                                E.GREATER), E.OR)
            shape_k = [1] * r
            shape_k[ax] = n_out
            out_k = p._reshape(out_k, shape_k, zero_is_placeholder=False)
            outside = out_k if outside is None else p._ew(outside, out_k, E.OR)
        else:
            c = _coords(p, s, n_in, n_out, ctm)
        if mode == "nearest":
            nm = a.get("nearest_mode", "round_prefer_floor")
            if nm == "round_prefer_floor":
                c = p._unary(p._ew_const(c, np.float32(0.5), E.SUB), UnaryOperation.CEIL)
            elif nm == "round_prefer_ceil":
                c = p._unary(p._ew_const(c, np.float32(0.5), E.SUM), UnaryOperation.FLOOR)
            elif nm in ("floor", "ceil"):
                c = p._unary(c, UnaryOperation.FLOOR if nm == "floor" else UnaryOperation.CEIL)
            else:
                raise unsupported("Resize nearest_mode '%s'" % nm)
            taps = [(c, None)]
        else:
            i0 = p._unary(c, UnaryOperation.FLOOR)
            t = p._ew(c, i0, E.SUB)
            if mode == "linear":
                taps = [(i0, p._ew_const(t, np.float32(1.0), E.SUB, const_first=True)),
                        (p._ew_const(i0, np.float32(1.0), E.SUM), t)]
            else:
                A = float(a.get("cubic_coeff_a", -0.75))
                taps = []
                for off, dist in ((-1, p._ew_const(t, np.float32(1.0), E.SUM)), (0, t),
                                  (1, p._ew_const(t, np.float32(1.0), E.SUB, const_first=True)),
                                  (2, p._ew_const(t, np.float32(2.0), E.SUB, const_first=True))):
                    taps.append((p._ew_const(i0, np.float32(off), E.SUM), _cubic_weight(p, dist, A)))
                if bool(int(a.get("exclude_outside", 0))):
                    kept = []
                    for idx, w in taps:
                        inside = p._ew(p._ew_const(idx, np.float32(0.0), E.LESS),
                                       p._ew_const(idx, np.float32(n_in - 1), E.GREATER), E.OR)
                        kept.append((idx, p._L(p.network.add_select(inside, p._const_tensor(
                            np.zeros(1, np.float32)), w))))
                    total = kept[0][1]
                    for _, w in kept[1:]:
                        total = p._ew(total, w, E.SUM)
                    taps = [(idx, p._ew(w, total, E.DIV)) for idx, w in kept]
        shape = [1] * r
        shape[ax] = n_out
        acc = None
        for idx, w in taps:
            idx = p._ew_const(p._ew_const(idx, np.float32(0.0), E.MAX), np.float32(n_in - 1), E.MIN)
            g = p._L(p.network.add_gather(y, p._cast(idx, DataType.INT32), ax))
            if w is not None:
                g = p._ew(g, p._reshape(w, shape, zero_is_placeholder=False), E.PROD)
            acc = g if acc is None else p._ew(acc, g, E.SUM)
        y = acc
    if outside is not None:
        ext = p._const_tensor(np.full([1] * r, float(a.get("extrapolation_value", 0.0)), np.float32))
        y = p._L(p.network.add_select(outside, ext, y))
    what = "floor(input extent * scale)" if sn is not None else (
        "round(input extent * scale)" if policy != "stretch" else "the sizes")
    assertion = p.network.add_assertion(p._reshape(checks, [], zero_is_placeholder=False),
                                        "Resize '%s': %s must equal the output's static shape %s"
                                        % (node.name, what, list(want)))
    p._name_layer(assertion, "assert")
    if y.dtype != x.dtype:
        y = p._cast(y, x.dtype)
    return y

