"""Importers of resizing: Resize, Upsample."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._enums import (DataType, ElementWiseOperation, InterpolationMode, MatrixOperation, ReduceOperation,
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
                        "asserted); sizes known while parsing or a shape tensor; antialias (linear / cubic) "
                        "only with static shapes and scales or sizes known while parsing, not with "
                        "tf_crop_and_resize; no keep_aspect_ratio_policy but stretch; nearest before opset 11 must not mix up- and "
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
                (int(a.get("antialias", 0)) and mode != "nearest") or
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
            return [_resize_antialias(p, a, x, scales, sizes, axes, mode)]
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


# Constant tables the Resize importers build: an antialias weight matrix (n_in x n_out) or a run-time-scale
# coordinate table (the output's extent): 2^24 elements at most (a fuzzed output extent of 2^31 made one of 8 GiB).
TABLE_MAX = 1 << 24


def _antialias_matrix(n_in: int, n_out: int, s: float, ctm: str, mode: str, A: float, exclude: bool) -> np.ndarray:
    """The [n_out, n_in] float64 weights of ONNX Resize-18's antialiased linear / cubic resampling of one axis by
    scale `s`: output position y reads source coordinate x(y) (coordinate_transformation_mode `ctm`); when
    downsampling (s < 1) the kernel is stretched by 1/s (its support grows to 1/s or 2/s taps each side), evaluated
    at s * (tap - x) and normalized to sum 1; the taps are the 2 * ceil(support / s) sources nearest x (ties to the
    smaller); taps outside the input are clamped to its edge, or with exclude_outside dropped and the rest
    renormalized."""
    y = np.arange(n_out, dtype=np.float64)
    out_w = s * n_in  # the resized length before rounding, as ONNX's coordinates use it
    if ctm == "asymmetric":
        x = y / s
    elif ctm == "align_corners":
        x = y * (n_in - 1) / (out_w - 1) if out_w != 1 else np.zeros(n_out)
    elif ctm == "pytorch_half_pixel" and n_out <= 1:
        x = np.zeros(n_out)
    else:  # half_pixel, pytorch_half_pixel, half_pixel_symmetric
        x = (y + 0.5) / s - 0.5
        if ctm == "half_pixel_symmetric":
            x = x + n_in / 2.0 * (1.0 - n_out / out_w)
    ss = min(s, 1.0)
    support = 1.0 if mode == "linear" else 2.0
    first = int(np.floor(-support / ss)) + 1  # taps first .. 1 - first around the source coordinate
    taps = np.arange(first, 2 - first, dtype=np.float64)
    base = np.floor(x)
    frac = x - base
    on_grid = frac == 0  # an exact source position counts as the far end of the interval before it
    base = np.where(on_grid, base - 1, base)
    frac = np.where(on_grid, 1.0, frac)
    d = np.abs(ss * (taps[None, :] - frac[:, None]))
    if mode == "linear":
        w = np.clip(1.0 - d, 0.0, 1.0)
    else:
        w = np.where(d <= 1, ((A + 2) * d - (A + 3)) * d * d + 1,
                     np.where(d < 2, ((A * d - 5 * A) * d + 8 * A) * d - 4 * A, 0.0))
    w = w / w.sum(axis=1, keepdims=True)
    idx = base[:, None].astype(np.int64) + taps[None, :].astype(np.int64)
    if exclude:
        w = np.where((idx < 0) | (idx >= n_in), 0.0, w)
        tot = w.sum(axis=1, keepdims=True)
        w = w / np.where(tot == 0, 1.0, tot)
    m = np.zeros((n_out, n_in))
    rows = np.repeat(np.arange(n_out), idx.shape[1])
    np.add.at(m, (rows, np.clip(idx, 0, n_in - 1).ravel()), w.ravel())
    return m


def _resize_antialias(p: ImporterContext, a: Dict[str, Any], x: Any, scales: Optional[List[float]],
                      sizes: Optional[List[Any]], axes: Optional[List[int]], mode: str) -> Any:
    """Resize-18 with antialias=1 (linear / cubic): with static shapes the resampling of each axis is a constant
    [n_out, n_in] matrix (_antialias_matrix), applied as a matrix multiply along that axis (the axis moved
    last by a transpose when it is not one of the last two)."""
    xs = tuple(x.shape)
    r = len(xs)
    if any(not isinstance(d, int) or d < 0 for d in xs):
        raise unsupported("Resize with antialias=1 on an input with dynamic dimensions %s" % (xs,))
    ctm = a.get("coordinate_transformation_mode", "half_pixel")
    if ctm not in ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"):
        raise unsupported("Resize with antialias=1 and coordinate_transformation_mode '%s'" % ctm)
    mode = "linear" if mode in ("linear", "bilinear", "trilinear") else "cubic" if mode in ("cubic", "bicubic") \
        else mode
    if mode not in ("linear", "cubic"):
        raise unsupported("Resize mode '%s'" % mode)
    if a.get("keep_aspect_ratio_policy", "stretch") != "stretch" and sizes is not None:
        raise unsupported("Resize keep_aspect_ratio_policy '%s'" % a["keep_aspect_ratio_policy"])
    if x.dtype != DataType.FLOAT:
        raise unsupported("Resize with antialias=1 of a %s input (FLOAT only)" % DataType(x.dtype).name)
    ax_list = [p._norm_axis(v, r) for v in axes] if axes else list(range(r))
    vals = scales if scales is not None else sizes
    if vals is None or len(vals) != len(ax_list):
        raise Fail(ErrorCode.INVALID_NODE, "%d %s for %d resized axes" % (len(vals or []),
                   "scales" if scales is not None else "sizes", len(ax_list)))
    A = float(a.get("cubic_coeff_a", -0.75))
    exclude = bool(int(a.get("exclude_outside", 0)))
    y = x
    for k, ax in enumerate(ax_list):
        n_in = xs[ax]
        if scales is not None:
            s = float(np.float32(vals[k]))
            n_out = int(math.floor(n_in * s))
        else:
            if not isinstance(vals[k], (int, np.integer)):
                raise unsupported("Resize with antialias=1 to a size computed at run time")
            n_out = int(vals[k])
            s = n_out / n_in if n_in else 1.0
        if s <= 0:
            raise Fail(ErrorCode.INVALID_NODE, "Resize scale %g along axis %d is not positive" % (s, ax))
        if n_in * n_out > TABLE_MAX:
            raise unsupported("antialiased Resize of axis %d from %d to %d: its weight matrix would be a constant "
                              "of %d elements (at most %d)" % (ax, n_in, n_out, n_in * n_out, TABLE_MAX),
                              ErrorCode.UNSUPPORTED_NODE_SHAPE)
        m = _antialias_matrix(n_in, n_out, s, ctm, mode, A, exclude)
        if m.shape[0] == m.shape[1] and np.array_equal(m, np.eye(n_in)):
            continue
        y = _apply_along(p, y, m.astype(np.float32), ax)
    if y is x:
        layer = p.network.add_identity(x)
        return p._L(layer)
    return y


def _apply_along(p: ImporterContext, t: Any, m: np.ndarray, ax: int) -> Any:
    """t with axis `ax` replaced by m @ (that axis): a matrix multiply by a constant."""
    N = MatrixOperation.NONE
    shape = tuple(t.shape)
    r = len(shape)
    if r == 1:
        t2 = p._reshape(t, [1, shape[0]], zero_is_placeholder=False)
        out = _apply_along(p, t2, m, 1)
        return p._reshape(out, [m.shape[0]], zero_is_placeholder=False)
    if ax == r - 2:  # M @ t
        c = p._const_tensor(m.reshape((1,) * (r - 2) + m.shape))
        return p._L(p.network.add_matrix_multiply(c, N, t, N))
    perm = list(range(r))
    if ax != r - 1:
        perm[ax], perm[r - 1] = perm[r - 1], perm[ax]
        t = p._transpose(t, perm)
    c = p._const_tensor(np.ascontiguousarray(m.T).reshape((1,) * (r - 2) + m.T.shape))
    out = p._L(p.network.add_matrix_multiply(t, N, c, N))
    return p._transpose(out, perm) if ax != r - 1 else out


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


def _antialias_taps(p: ImporterContext, a: Dict[str, Any], c: Any, s: Any, n_in: int, n_out: int,
                    mode: str) -> List[Tuple[Any, Any]]:
    """(source index, weight) pairs of antialiased linear / cubic resampling (Resize-18 antialias=1) with the
    run-time scale `s` ([1] FLOAT) at the source coordinates `c` ([n_out] FLOAT): the kernel stretched by 1/s'
    (s' = min(s, 1)) is evaluated at s' * (tap - c) over the taps floor(c) - T .. floor(c) + T + 1, normalized
    to sum 1 (exclude_outside: taps outside the input dropped first).  T = ceil(support / s'_min) with s'_min the
    smallest scale giving n_out (floor(n_in * s) == n_out is asserted), so the window holds every tap the kernel
    reaches for any such scale; the others weigh 0, so the result is _antialias_matrix's."""
    E = ElementWiseOperation
    support = 1.0 if mode == "linear" else 2.0
    ss_min = min(n_out / n_in, 1.0) if n_in else 1.0
    T = int(math.ceil(support / ss_min)) if ss_min > 0 else 1
    ss = p._ew_const(s, np.float32(1.0), E.MIN)
    i0 = p._unary(c, UnaryOperation.FLOOR)
    t = p._ew(c, i0, E.SUB)
    A = float(a.get("cubic_coeff_a", -0.75))
    zero = p._const_tensor(np.zeros(1, np.float32))
    taps = []
    for j in range(-T, T + 2):
        d = p._unary(p._ew(p._ew_const(t, np.float32(j), E.SUB), ss, E.PROD), UnaryOperation.ABS)
        if mode == "linear":
            w = p._ew_const(p._ew_const(d, np.float32(1.0), E.SUB, const_first=True), np.float32(0.0), E.MAX)
        else:
            w = p._L(p.network.add_select(p._ew_const(d, np.float32(2.0), E.LESS), _cubic_weight(p, d, A), zero))
        taps.append((p._ew_const(i0, np.float32(j), E.SUM), w))

    def normalized(ts: List[Tuple[Any, Any]]) -> List[Tuple[Any, Any]]:
        total = ts[0][1]
        for _, w in ts[1:]:
            total = p._ew(total, w, E.SUM)
        if bool(int(a.get("exclude_outside", 0))):  # all taps outside: weights 0, not 0 / 0
            total = p._L(p.network.add_select(p._ew_const(total, np.float32(0.0), E.EQUAL),
                                              p._const_tensor(np.ones(1, np.float32)), total))
        return [(idx, p._ew(w, total, E.DIV)) for idx, w in ts]

    taps = normalized(taps)
    if bool(int(a.get("exclude_outside", 0))):
        kept = []
        for idx, w in taps:
            inside = p._ew(p._ew_const(idx, np.float32(0.0), E.LESS),
                           p._ew_const(idx, np.float32(n_in - 1), E.GREATER), E.OR)
            kept.append((idx, p._L(p.network.add_select(inside, zero, w))))
        taps = normalized(kept)
    return taps


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
    big = [(ax, d) for ax, d in enumerate(want) if d > TABLE_MAX]
    if big:  # the coordinate tables are constants of the output's extent per resized axis
        raise unsupported("Resize with run-time %s to an extent of %d on axis %d: its coordinate table would be a "
                          "constant of that many elements (at most %d)" % ("scales" if sn else "sizes", big[0][1],
                                                                            big[0][0], TABLE_MAX),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    antialias = bool(int(a.get("antialias", 0))) and mode != "nearest"
    ctm = a.get("coordinate_transformation_mode", "half_pixel")
    if antialias and ctm == "tf_crop_and_resize":
        raise unsupported("Resize with antialias=1 and coordinate_transformation_mode 'tf_crop_and_resize'")
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
        elif antialias:
            taps = _antialias_taps(p, a, c, s, n_in, n_out, mode)
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

