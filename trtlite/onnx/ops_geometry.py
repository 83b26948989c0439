"""Ops whose output shape is an input's values, built on shape tensors: CenterCropPad, AffineGrid, HannWindow,
HammingWindow, BlackmanWindow, MaxUnpool, Col2Im (and RoiAlign and DeformConv, whose sampling grids
are computed from run-time ROIs / offsets; the random generators, whose shapes may be run-time ones).

Both take their target shape from an integer input that may be fed at run time (the backend suite feeds every
input); its values become an INT32 shape tensor (``shape_tensors.shape_input``) that the engine evaluates on the
host when the input values are set, as for Reshape or Expand.
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._enums import (DataType, ElementWiseOperation, FillOperation, InterpolationMode, MatrixOperation, PoolingType,
                      SampleMode, ScatterMode, ScatterReduction, UnaryOperation)
from .context import ImporterContext
from .errors import ErrorCode, Fail, bound_dims_constant, unsupported
from .dtypes import onnx_to_trt
from .registry import importer
from .constants import attr_ints
from .ops_conv_tensor import MAX_TAP_SLICES
from .shape_tensors import runtime_constant_of_shape, runtime_reshape, shape_input

E = ElementWiseOperation


def _i32(p: ImporterContext, values: Any) -> Any:
    return p._const_tensor(np.asarray(values, np.int32).reshape(-1), DataType.INT32)


def _pick(p: ImporterContext, t: Any, idx: int) -> Any:
    """Element idx of a 1-D tensor, as a [1] tensor."""
    return p._L(p.network.add_gather(t, _i32(p, [idx]), 0))


def _cat(p: ImporterContext, parts: List[Any]) -> Any:
    return p._concat_layer(parts, 0) if len(parts) > 1 else parts[0]


def _vector_input(p: ImporterContext, node: Any, name: str, what: str) -> Any:
    t = shape_input(p, name)
    if len(t.shape) != 1 or t.shape[0] < 0:
        raise Fail(ErrorCode.INVALID_NODE, "%s: %s '%s' must be a 1-D tensor of static length, got shape %s"
                   % (node.op_type, what, name, tuple(t.shape)))
    return t


@importer("CenterCropPad",
          restrictions="the shape input constant or fed at run time (a shape tensor); any axes",
          opsets=(18, None))
def _center_crop_pad(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """One FILL-mode ISliceLayer (zeros outside the input): along each of `axes` the size is the target and the
    start trunc((in - target) / 2), i.e. (in - target) // 2 when cropping and -((target - in) // 2) when padding,
    ONNX's centring; the other axes keep their dims (start 0)."""
    x = p._tensor(node.input[0])
    r = len(x.shape)
    axes = [p._norm_axis(int(v), r, "axes") for v in a.get("axes", list(range(r)))]
    if len(set(axes)) != len(axes):
        raise Fail(ErrorCode.INVALID_NODE, "CenterCropPad's axes %s repeat an axis" % (a.get("axes"),))
    target = _vector_input(p, node, node.input[1], "shape")
    if target.shape[0] != len(axes):
        raise Fail(ErrorCode.INVALID_NODE, "CenterCropPad's shape has %d values for %d axes"
                   % (target.shape[0], len(axes)))
    xs = p._L(p.network.add_shape(x))
    size = _cat(p, [_pick(p, target, axes.index(i)) if i in axes else _pick(p, xs, i) for i in range(r)])
    start = p._ew(p._ew(xs, size, E.SUB), _i32(p, [2] * r), E.DIV)  # INT32 DIV truncates toward zero
    layer = p.network.add_slice(x, [0] * r, [1] * r, [1] * r)
    layer.mode = SampleMode.FILL
    layer.set_input(1, start)
    layer.set_input(2, size)
    return [p._L(layer)]


def _axis_coords(p: ImporterContext, n_i: Any, r: int, pos: int, align: bool) -> Any:
    """ONNX AffineGrid's normalized coordinates along one spatial axis of length n (an INT32 [1] shape tensor),
    as an IFillLayer LINSPACE shaped [1, .., n, .., 1] (n at `pos` of `r` dims):
    align_corners: -1 + 2 i / (n - 1) (just -1 when n == 1); else -1 + (2 i + 1) / n."""
    net = p.network
    n_f = p._cast(n_i, DataType.FLOAT)
    one = p._const_tensor(np.ones(1, np.float32), DataType.FLOAT)
    if align:
        step = p._ew(p._const_tensor(np.full(1, 2.0, np.float32)), p._ew(p._ew(n_f, one, E.SUB), one, E.MAX), E.DIV)
        first = p._const_tensor(np.full(1, -1.0, np.float32))
    else:
        step = p._ew(p._const_tensor(np.full(1, 2.0, np.float32)), n_f, E.DIV)
        first = p._ew(p._ew(one, n_f, E.DIV), one, E.SUB)
    zero = p._const_tensor(np.zeros(1, np.float32))
    beta = _cat(p, [step if k == pos else zero for k in range(r)])
    shape = _cat(p, [n_i if k == pos else _i32(p, [1]) for k in range(r)])
    layer = net.add_fill((0,), FillOperation.LINSPACE, DataType.FLOAT)
    layer.set_input(0, shape)
    layer.set_input(1, p._reshape(first, [], zero_is_placeholder=False))
    layer.set_input(2, beta)
    return p._L(layer)


@importer("AffineGrid",
          restrictions="2-D (theta [N, 2, 3]) and 3-D (theta [N, 3, 4]); size constant or fed at run time",
          opsets=(20, None))
def _affine_grid(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """grid[n, (d,) h, w, k] = sum_j theta[n, k, j] * base_j + theta[n, k, last], with base the normalized (x, y
    (, z)) coordinates along W, H (, D): per output component k, broadcast products of theta's columns (shaped
    [N, 1, .., 1, dims]) with coordinate fills ([1, (D,) H, W, 1]) -- no matrix multiply, any N."""
    theta = p._float(p._tensor(node.input[0]), "AffineGrid's theta")
    ts = tuple(theta.shape)
    if len(ts) != 3 or ts[1] not in (2, 3) or ts[2] != ts[1] + 1:
        raise Fail(ErrorCode.INVALID_NODE, "AffineGrid's theta must be [N, 2, 3] or [N, 3, 4], got %s" % (ts,))
    nd = ts[1]
    size = _vector_input(p, node, node.input[1], "size")
    if size.shape[0] != nd + 2:
        raise Fail(ErrorCode.INVALID_NODE, "AffineGrid's size must have %d values for a [N, %d, %d] theta, got %d"
                   % (nd + 2, nd, nd + 1, size.shape[0]))
    align = bool(int(a.get("align_corners", 0)))
    r = nd + 2  # output rank: N, spatial dims, components
    # spatial dims of size: D, H, W (3-D) or H, W; the coordinate along W is component 0 (x)
    coords = []
    for k in range(nd):
        axis = nd + 1 - k  # x: the last spatial dim (W), y: the one before, z: D
        coords.append(_axis_coords(p, _pick(p, size, axis), r, axis - 1, align))  # output dims: [N, spatial.., k]
    out = None
    for j in range(nd + 1):
        col = p._reshape(p._gather_axis(theta, 2, np.array([j])), [-1] + [1] * nd + [nd],
                         zero_is_placeholder=False)  # theta[:, :, j] as [N, 1.., nd]
        term = p._ew(col, coords[j], E.PROD) if j < nd else col
        out = term if out is None else p._ew(out, term, E.SUM)
    return [out]


# cos terms of the windows: w[n] = sum_k c_k * cos(2 pi k n / N)
_WINDOWS = {"HannWindow": (0.5, -0.5), "HammingWindow": (25.0 / 46.0, -21.0 / 46.0),
            "BlackmanWindow": (0.42, -0.5, 0.08)}


@importer(*_WINDOWS.keys(),
          restrictions="size constant or fed at run time (a shape tensor); FLOAT or integer output_datatype",
          opsets=(17, None))
def _window(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """w[n] = sum_k c_k cos(2 pi k n / N), n = 0 .. size - 1 (an IFillLayer LINSPACE of the run-time length), N =
    size when periodic (the default), size - 1 when symmetric; Hann (0.5, -0.5), Hamming (25/46, -21/46),
    Blackman (0.42, -0.5, 0.08), as ONNX defines them."""
    size = shape_input(p, node.input[0])
    if tuple(size.shape) not in ((), (1,)):
        raise Fail(ErrorCode.INVALID_NODE, "%s's size must be a scalar, got shape %s" % (node.op_type,
                                                                                          tuple(size.shape)))
    out_t = onnx_to_trt(int(a.get("output_datatype", 1)))
    if out_t is None:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "%s's output_datatype %d is not supported"
                   % (node.op_type, int(a.get("output_datatype", 1))))
    size = p._reshape(size, [1], zero_is_placeholder=False) if len(size.shape) == 0 else size
    fill = p.network.add_fill((0,), FillOperation.LINSPACE, DataType.FLOAT)
    fill.set_input(0, size)
    fill.alpha, fill.beta = 0.0, 1.0
    n = p._L(fill)
    big_n = p._cast(size, DataType.FLOAT)
    if not int(a.get("periodic", 1)):
        big_n = p._ew_const(big_n, np.float32(1.0), E.SUB)
    phase = p._ew(p._ew_const(n, np.float32(2.0 * np.pi), E.PROD), big_n, E.DIV)  # 2 pi n / N
    coeffs = _WINDOWS[node.op_type]
    w = p._const_tensor(np.full(1, coeffs[0], np.float32))
    for k, c in enumerate(coeffs[1:], start=1):
        term = p._unary(p._ew_const(phase, np.float32(k), E.PROD) if k > 1 else phase, UnaryOperation.COS)
        w = p._ew(w, p._ew_const(term, np.float32(c), E.PROD), E.SUM)
    return [w if out_t == DataType.FLOAT else p._cast(w, out_t)]


@importer("MaxUnpool",
          restrictions="1-D to 3-D; output_shape constant or fed at run time (a shape tensor); indices as MaxPool "
                       "gives them (flat over the whole output)",
          opsets=(9, None))
def _max_unpool(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Zeros of the unpooled shape ((in - 1) * stride - pads + kernel per spatial dim), flattened, with X
    scattered to the flat positions I (IScatterLayer ELEMENT along the one axis), reshaped back, then padded with
    zeros at the end of each dim to output_shape when given: ONNX's definition (indices count over the whole
    unpooled N x C x spatial tensor)."""
    x = p._tensor(node.input[0])
    idx = p._tensor(node.input[1])
    r = len(x.shape)
    ks = attr_ints(a, "kernel_shape")
    if not ks or len(ks) != r - 2 or not 1 <= len(ks) <= 3:
        raise Fail(ErrorCode.INVALID_NODE, "MaxUnpool's kernel_shape %s does not fit an input of rank %d" % (ks, r))
    if tuple(idx.shape) != tuple(x.shape) and -1 not in tuple(x.shape) + tuple(idx.shape):
        raise Fail(ErrorCode.INVALID_NODE, "MaxUnpool's indices %s and input %s differ in shape"
                   % (tuple(idx.shape), tuple(x.shape)))
    nsp = len(ks)
    strides = attr_ints(a, "strides") or [1] * nsp
    pads = attr_ints(a, "pads") or [0] * (2 * nsp)
    xs = p._L(p.network.add_shape(x))
    parts = [_pick(p, xs, 0), _pick(p, xs, 1)]
    for i in range(nsp):
        d = _pick(p, xs, 2 + i)  # (d - 1) * stride - pad_begin - pad_end + kernel
        parts.append(p._ew_const(p._ew_const(d, np.int32(strides[i]), E.PROD),
                                 np.int32(ks[i] - strides[i] - pads[i] - pads[i + nsp]), E.SUM))
    shape = _cat(p, parts)
    zeros = runtime_constant_of_shape(p, shape, np.zeros(1, np.float32 if x.dtype == DataType.FLOAT
                                                          else np.int32))
    flat = p._reshape(zeros, [-1], zero_is_placeholder=False)
    if idx.dtype != DataType.INT32:
        idx = p._cast(idx, DataType.INT32)
    upd = x if x.dtype in (DataType.FLOAT, DataType.INT32) else p._cast(x, DataType.INT32)
    layer = p.network.add_scatter(flat, p._reshape(idx, [-1], zero_is_placeholder=False),
                                  p._reshape(upd, [-1], zero_is_placeholder=False), ScatterMode.ELEMENT)
    layer.axis = 0
    y = runtime_reshape(p, p._L(layer), shape, allowzero=True)
    on = p._inp(node, 2)
    if not on:
        return [y]
    # output_shape: the unpooled values keep their places, zeros after them (ONNX's reference pads at the end)
    target = _vector_input(p, node, on, "output_shape")
    if target.shape[0] != r:
        raise Fail(ErrorCode.INVALID_NODE, "MaxUnpool's output_shape has %d values for an input of rank %d"
                   % (target.shape[0], r))
    pad = p.network.add_slice(y, [0] * r, [1] * r, [1] * r)
    pad.mode = SampleMode.FILL
    pad.set_input(2, target)
    return [p._L(pad)]


def _linspace_i32(p: ImporterContext, n: Any) -> Any:
    """0, 1, .., n - 1 as INT32 (n a [1] shape tensor)."""
    fill = p.network.add_fill((0,), FillOperation.LINSPACE, DataType.INT32)
    fill.set_input(0, n)
    fill.alpha, fill.beta = 0.0, 1.0
    return p._L(fill)


@importer("Col2Im",
          restrictions="image_shape and block_shape constants or fed at run time (shape tensors); any number of "
                       "spatial dims",
          opsets=(18, None))
def _col2im(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """ONNX Col2Im (the inverse of im2col, overlapping blocks summed): input [N, C * K, L] with K = prod(block)
    and L the number of block positions.  The image position of column (c * K + k, l) is, per spatial dim d,
    l_d * stride_d - pad_begin_d + k_d * dilation_d (k_d, l_d: k and l unravelled over the block dims / the
    block counts (img_d + pads_d - dilation_d * (block_d - 1) - 1) // stride_d + 1); every element is added there
    by one IScatterLayer ELEMENT with SUM reduction into a flat [N, C, prod(img) + 1] zero tensor, positions
    outside the image going to the extra last slot, which is then cut off.  All index arithmetic is INT32 on
    values the engine resolves from the run-time shapes."""
    x = p._float(p._tensor(node.input[0]), "Col2Im's input")
    if len(x.shape) != 3:
        raise Fail(ErrorCode.INVALID_NODE, "Col2Im's input must be [N, C * K, L], got shape %s" % (tuple(x.shape),))
    img = _vector_input(p, node, node.input[1], "image_shape")
    blk = _vector_input(p, node, node.input[2], "block_shape")
    nsp = int(img.shape[0])
    if int(blk.shape[0]) != nsp or nsp < 1:
        raise Fail(ErrorCode.INVALID_NODE, "Col2Im's image_shape (%d values) and block_shape (%d values) must have "
                   "one value per spatial dim" % (nsp, int(blk.shape[0])))
    dil = attr_ints(a, "dilations") or [1] * nsp
    strides = attr_ints(a, "strides") or [1] * nsp
    pads = attr_ints(a, "pads") or [0] * (2 * nsp)
    if len(dil) != nsp or len(strides) != nsp or len(pads) != 2 * nsp:
        raise Fail(ErrorCode.INVALID_NODE, "Col2Im's dilations %s, strides %s and pads %s do not fit %d spatial dims"
                   % (dil, strides, pads, nsp))
    net = p.network
    xs = p._L(net.add_shape(x))
    n_t, ck, ell = _pick(p, xs, 0), _pick(p, xs, 1), _pick(p, xs, 2)
    img_d = [_pick(p, img, d) for d in range(nsp)]
    blk_d = [_pick(p, blk, d) for d in range(nsp)]
    k_t = blk_d[0]
    for b in blk_d[1:]:
        k_t = p._ew(k_t, b, E.PROD)
    c_t = p._ew(ck, k_t, E.DIV)
    kk = p._reshape(_linspace_i32(p, k_t), [-1, 1], zero_is_placeholder=False)  # [K, 1]
    ll = p._reshape(_linspace_i32(p, ell), [1, -1], zero_is_placeholder=False)  # [1, L]
    count = []  # block positions per dim: (img + pads - dilation * (block - 1) - 1) // stride + 1
    for d, b in enumerate(blk_d):
        span = p._ew(p._ew_const(img_d[d], np.int32(pads[d] + pads[d + nsp] - 1), E.SUM),
                     p._ew_const(p._ew_const(b, np.int32(-1), E.SUM), np.int32(dil[d]), E.PROD), E.SUB)
        count.append(p._ew_const(p._ew_const(span, np.int32(strides[d]), E.FLOOR_DIV), np.int32(1), E.SUM))
    flat = valid = place = None  # place: the product of the image dims after d (the flat stride of dim d)
    k_rest, l_rest = kk, ll
    for d in range(nsp - 1, -1, -1):  # unravel from the last (fastest) dim
        b2 = p._reshape(blk_d[d], [1, 1], zero_is_placeholder=False)
        c2 = p._reshape(count[d], [1, 1], zero_is_placeholder=False)
        k_d = p._ew(k_rest, p._ew(p._ew(k_rest, b2, E.FLOOR_DIV), b2, E.PROD), E.SUB)
        l_d = p._ew(l_rest, p._ew(p._ew(l_rest, c2, E.FLOOR_DIV), c2, E.PROD), E.SUB)
        k_rest, l_rest = p._ew(k_rest, b2, E.FLOOR_DIV), p._ew(l_rest, c2, E.FLOOR_DIV)
        pos = p._ew(p._ew_const(p._ew_const(l_d, np.int32(strides[d]), E.PROD), np.int32(pads[d]), E.SUB),
                    p._ew_const(k_d, np.int32(dil[d]), E.PROD), E.SUM)  # [K, L]
        i2 = p._reshape(img_d[d], [1, 1], zero_is_placeholder=False)
        ok = p._ew(p._ew_const(pos, np.int32(-1), E.GREATER), p._ew(pos, i2, E.LESS), E.AND)
        valid = ok if valid is None else p._ew(valid, ok, E.AND)
        term = pos if place is None else p._ew(pos, place, E.PROD)
        flat = term if flat is None else p._ew(flat, term, E.SUM)
        place = i2 if place is None else p._ew(place, i2, E.PROD)
    total = p._reshape(place, [1], zero_is_placeholder=False)  # prod(img)
    flat = p._L(net.add_select(valid, flat, p._reshape(total, [1, 1], zero_is_placeholder=False)))
    idx = p._reshape(flat, [1, 1, -1], zero_is_placeholder=False)  # [1, 1, K * L]
    plane = _cat(p, [n_t, c_t, _i32(p, [1])])
    idx = p._ew(idx, runtime_constant_of_shape(p, plane, np.zeros(1, np.int32)), E.SUM)  # [N, C, K * L]
    upd = runtime_reshape(p, x, _cat(p, [n_t, c_t, p._ew(k_t, ell, E.PROD)]), allowzero=True)
    zeros = runtime_constant_of_shape(p, _cat(p, [n_t, c_t, p._ew_const(total, np.int32(1), E.SUM)]),
                                      np.zeros(1, np.float32))
    layer = net.add_scatter(zeros, idx, upd, ScatterMode.ELEMENT)
    layer.axis = 2
    layer.reduction = ScatterReduction.SUM
    summed = p._L(layer)
    cut = net.add_slice(summed, [0, 0, 0], [1, 1, 1], [1, 1, 1])
    cut.set_input(2, _cat(p, [n_t, c_t, total]))
    return [runtime_reshape(p, p._L(cut), _cat(p, [n_t, c_t] + img_d), allowzero=True)]


def _roi_axis(p: ImporterContext, lo: Any, hi: Any, n: int, pooled: int, grid: int, scale: float, half: bool):
    """Per ROI, the sample coordinates along one image axis of static length n: [R, pooled * grid] low / high
    pixel indices (FLOAT, whole numbers) and their weights (1 - l, l), zero where the sample is outside
    [-1, n] -- ONNX RoiAlign's bilinear_interpolate, with the coordinate clamped to [0, n - 1]."""
    off = 0.5 if half else 0.0
    start = p._ew_const(p._ew_const(lo, np.float32(scale), E.PROD), np.float32(off), E.SUB)
    size = p._ew(p._ew_const(p._ew_const(hi, np.float32(scale), E.PROD), np.float32(off), E.SUB), start, E.SUB)
    if not half:
        size = p._ew_const(size, np.float32(1.0), E.MAX)  # malformed ROIs forced to 1 pixel
    binsz = p._ew_const(size, np.float32(pooled), E.DIV)  # [R, 1]
    frac = np.array([ph + (i + 0.5) / grid for ph in range(pooled) for i in range(grid)], np.float32)[None, :]
    pos = p._ew(start, p._ew(binsz, p._const_tensor(frac), E.PROD), E.SUM)  # [R, pooled * grid]
    inside = p._ew(p._unary(p._ew_const(pos, np.float32(-1.0), E.LESS), UnaryOperation.NOT),
                   p._unary(p._ew_const(pos, np.float32(n), E.GREATER), UnaryOperation.NOT), E.AND)
    c = p._ew_const(p._ew_const(pos, np.float32(0.0), E.MAX), np.float32(n - 1), E.MIN)
    low = p._unary(c, UnaryOperation.FLOOR)
    high = p._ew_const(p._ew_const(low, np.float32(1.0), E.SUM), np.float32(n - 1), E.MIN)
    frac_l = p._ew(c, low, E.SUB)
    zero = p._const_tensor(np.zeros((1, 1), np.float32))
    w_low = p._L(p.network.add_select(inside, p._ew_const(frac_l, np.float32(1.0), E.SUB, const_first=True), zero))
    w_high = p._L(p.network.add_select(inside, frac_l, zero))
    return low, high, w_low, w_high


@importer("RoiAlign",
          restrictions="X with static H and W; sampling_ratio > 0 (0 makes the sampling grid depend on each ROI's "
                       "size); rois and batch_indices may be computed at run time",
          opsets=(10, None))
def _roi_align(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """ONNX RoiAlign: each ROI's image (a gather along the batch) sampled at grid x grid points per output bin;
    the four bilinear corners of every sample are read by IGridSampleLayer NEAREST at pixel centres, weighted,
    and combined as ONNX's reference does: avg sums the weighted corners and averages over the grid (an average
    pool), max takes the largest weighted corner and the largest over the grid (a max pool)."""
    x = p._float(p._tensor(node.input[0]), "RoiAlign's X")
    rois = p._float(p._tensor(node.input[1]), "RoiAlign's rois")
    bidx = p._tensor(node.input[2])
    xs = tuple(x.shape)
    if len(xs) != 4 or xs[2] < 1 or xs[3] < 1:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_SHAPE, "RoiAlign needs X [N, C, H, W] with static H and W, got %s"
                   % (xs,))
    if len(rois.shape) != 2 or rois.shape[1] not in (4, -1):
        raise Fail(ErrorCode.INVALID_NODE, "RoiAlign's rois must be [R, 4], got %s" % (tuple(rois.shape),))
    mode = a.get("mode", "avg")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    ctm = a.get("coordinate_transformation_mode", "half_pixel" if p._opset >= 16 else "output_half_pixel")
    ctm = ctm.decode() if isinstance(ctm, bytes) else str(ctm)
    if mode not in ("avg", "max") or ctm not in ("half_pixel", "output_half_pixel"):
        raise Fail(ErrorCode.INVALID_NODE, "RoiAlign mode '%s' / coordinate_transformation_mode '%s'" % (mode, ctm))
    oh, ow = int(a.get("output_height", 1)), int(a.get("output_width", 1))
    grid = int(a.get("sampling_ratio", 0))
    if grid <= 0:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "RoiAlign with sampling_ratio %d: the adaptive grid "
                   "(ceil(roi size / output size)) depends on each ROI at run time" % grid)
    if oh < 1 or ow < 1:
        raise Fail(ErrorCode.INVALID_NODE, "RoiAlign's output_height / output_width must be positive")
    # (a sampling position table per axis; output_height or sampling_ratio 2^31 - 1: minutes and gigabytes)
    bound_dims_constant(max(oh, ow) * grid, "RoiAlign's %d x %d bins sampled %d x %d: a sample position table"
                        % (oh, ow, grid, grid))
    scale, half = float(a.get("spatial_scale", 1.0)), ctm == "half_pixel"
    h_, w_ = xs[2], xs[3]
    col = [p._gather_axis(rois, 1, np.array([k])) for k in range(4)]  # x1, y1, x2, y2 as [R, 1]
    ylo, yhi, wyl, wyh = _roi_axis(p, col[1], col[3], h_, oh, grid, scale, half)
    xlo, xhi, wxl, wxh = _roi_axis(p, col[0], col[2], w_, ow, grid, scale, half)
    if bidx.dtype != DataType.INT32:
        bidx = p._cast(bidx, DataType.INT32)
    img = p._L(p.network.add_gather(x, bidx, 0))  # [R, C, H, W]
    gh, gw = oh * grid, ow * grid

    def norm(t: Any, n: int, shape: List[int]) -> Any:  # pixel index -> grid coordinate of its centre
        return p._reshape(p._ew_const(p._ew_const(t, np.float32(2.0 / n), E.PROD), np.float32(1.0 / n - 1.0),
                                      E.SUM), shape, zero_is_placeholder=False)

    zeros = p._const_tensor(np.zeros((1, 1, 1, 1), np.float32))
    terms = []
    for yt, wy in ((ylo, wyl), (yhi, wyh)):
        gy = norm(yt, h_, [-1, gh, 1, 1])
        for xt, wx in ((xlo, wxl), (xhi, wxh)):
            gx = norm(xt, w_, [-1, 1, gw, 1])
            g = p._concat_layer([p._ew(gx, p._ew(gy, zeros, E.PROD), E.SUM),
                                 p._ew(gy, p._ew(gx, zeros, E.PROD), E.SUM)], 3)  # [R, gh, gw, 2]: (x, y)
            layer = p.network.add_grid_sample(img, g)
            layer.interpolation_mode = InterpolationMode.NEAREST
            layer.sample_mode = SampleMode.CLAMP
            layer.align_corners = False
            w = p._ew(p._reshape(wy, [-1, 1, gh, 1], zero_is_placeholder=False),
                      p._reshape(wx, [-1, 1, 1, gw], zero_is_placeholder=False), E.PROD)  # [R, 1, gh, gw]
            terms.append(p._ew(p._L(layer), w, E.PROD))
    acc = terms[0]
    for t in terms[1:]:
        acc = p._ew(acc, t, E.SUM if mode == "avg" else E.MAX)
    pool = p.network.add_pooling_nd(acc, PoolingType.AVERAGE if mode == "avg" else PoolingType.MAX, [grid, grid])
    pool.stride_nd = [grid, grid]
    return [p._L(pool)]


@importer("DeformConv",
          restrictions="2-D; static input, weight and offset shapes; weights, offsets, bias and mask constants or "
                       "computed at run time",
          opsets=(19, None))
def _deform_conv(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """ONNX DeformConv: for each kernel tap (i, j) and offset group, the input sampled bilinearly (zeros outside)
    at (out_y * stride - pad + i * dilation + dy, out_x * stride - pad + j * dilation + dx) by one
    IGridSampleLayer (LINEAR, FILL), times the mask; the samples of all taps form the im2col matrix that each
    weight group multiplies (IMatrixMultiplyLayer), plus the bias."""
    x = p._float(p._tensor(node.input[0]), "DeformConv's X")
    w = p._float(p._tensor(node.input[1], DataType.FLOAT), "DeformConv's W")
    off = p._float(p._tensor(node.input[2]), "DeformConv's offset")
    xs, ws, os_ = tuple(x.shape), tuple(w.shape), tuple(off.shape)
    if len(xs) != 4 or len(ws) != 4 or len(os_) != 4 or any(d < 0 for d in xs[1:] + ws + os_[1:]):
        raise Fail(ErrorCode.UNSUPPORTED_NODE_SHAPE, "DeformConv needs 2-D X, W and offset with static dims (but "
                   "the batch), got %s, %s, %s" % (xs, ws, os_))
    group, og = int(a.get("group", 1)), int(a.get("offset_group", 1))
    c, oc = xs[1], ws[0]
    kh, kw = attr_ints(a, "kernel_shape") or list(ws[2:])
    k = kh * kw
    if c != ws[1] * group or oc % group or c % og or os_[1] != og * k * 2:
        raise Fail(ErrorCode.INVALID_NODE, "DeformConv: X %s, W %s, offset %s, group %d and offset_group %d do not "
                   "match" % (xs, ws, os_, group, og))
    sh, sw = attr_ints(a, "strides") or [1, 1]
    dh, dw = attr_ints(a, "dilations") or [1, 1]
    pt, pl = (attr_ints(a, "pads") or [0, 0, 0, 0])[:2]
    oh, ow = os_[2], os_[3]
    hh, ww = xs[2], xs[3]
    mask = p._float(p._tensor(node.input[4]), "DeformConv's mask") if p._inp(node, 4) else None
    # (the offset's channels, 2 * og * k, and the groups may be up to 2^31 - 1: a group of 2^31 - 1 hung the parser)
    if og * k > MAX_TAP_SLICES or group > MAX_TAP_SLICES:
        raise unsupported("DeformConv unrolls one sampling per offset group and kernel tap (%d x %d) and one matrix "
                          "multiply per group (%d): over trtlite's limit of %d" % (og, k, group, MAX_TAP_SLICES),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    bound_dims_constant(max(oh, ow), "DeformConv to %d x %d: its sampling grid's row or column" % (oh, ow))
    base_y = p._const_tensor((np.arange(oh, dtype=np.float32) * sh - pt).reshape(1, 1, oh, 1))
    base_x = p._const_tensor((np.arange(ow, dtype=np.float32) * sw - pl).reshape(1, 1, 1, ow))
    cg = c // og
    taps: List[List[Any]] = [[] for _ in range(k)]  # per tap, the offset groups' samples
    for g in range(og):
        if xs[0] < 0 and og > 1:
            raise Fail(ErrorCode.UNSUPPORTED_NODE_SHAPE, "DeformConv with offset groups needs a static batch")
        xg = p._L(p.network.add_slice(x, [0, g * cg, 0, 0], [xs[0], cg, hh, ww], [1, 1, 1, 1])) if og > 1 else x
        for t in range(k):
            i, j = divmod(t, kw)
            ch = (g * k + t) * 2
            dy = p._gather_axis(off, 1, np.array([ch]))  # [N, 1, oh, ow]
            dx = p._gather_axis(off, 1, np.array([ch + 1]))
            y = p._ew(p._ew_const(dy, np.float32(i * dh), E.SUM), base_y, E.SUM)
            xx = p._ew(p._ew_const(dx, np.float32(j * dw), E.SUM), base_x, E.SUM)
            # pixel index -> grid coordinate of its centre (align_corners False): (2 v + 1) / n - 1
            gy = p._ew_const(p._ew_const(y, np.float32(2.0 / hh), E.PROD), np.float32(1.0 / hh - 1.0), E.SUM)
            gx = p._ew_const(p._ew_const(xx, np.float32(2.0 / ww), E.PROD), np.float32(1.0 / ww - 1.0), E.SUM)
            grid = p._concat_layer([p._reshape(gx, [-1, oh, ow, 1], zero_is_placeholder=False),
                                    p._reshape(gy, [-1, oh, ow, 1], zero_is_placeholder=False)], 3)
            layer = p.network.add_grid_sample(xg, grid)
            layer.interpolation_mode = InterpolationMode.LINEAR
            layer.sample_mode = SampleMode.FILL
            layer.align_corners = False
            s = p._L(layer)  # [N, cg, oh, ow]
            if mask is not None:
                s = p._ew(s, p._gather_axis(mask, 1, np.array([g * k + t])), E.PROD)
            taps[t].append(s)
    full = [p._concat_layer(ts, 1) if len(ts) > 1 else ts[0] for ts in taps]  # per tap [N, C, oh, ow]
    cw, mg = c // group, oc // group
    if group > 1 and xs[0] < 0:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_SHAPE, "DeformConv with groups needs a static batch")
    outs = []
    for g in range(group):
        cols = [p._L(p.network.add_slice(t, [0, g * cw, 0, 0], [xs[0], cw, oh, ow], [1, 1, 1, 1]))
                if group > 1 else t for t in full]
        colm = p._reshape(p._concat_layer(cols, 1) if k > 1 else cols[0], [0, k * cw, oh * ow])  # (tap, c) rows
        wg = p._L(p.network.add_slice(w, [g * mg, 0, 0, 0], [mg, cw, kh, kw], [1, 1, 1, 1])) if group > 1 else w
        wm = p._reshape(p._transpose(wg, [0, 2, 3, 1]), [1, mg, k * cw], zero_is_placeholder=False)
        outs.append(p._L(p.network.add_matrix_multiply(wm, MatrixOperation.NONE, colm, MatrixOperation.NONE)))
    y = p._concat_layer(outs, 1) if group > 1 else outs[0]
    y = p._reshape(y, [0, oc, oh, ow])
    if p._inp(node, 3):
        y = p._ew(y, p._reshape(p._float(p._tensor(node.input[3], DataType.FLOAT), "DeformConv's B"),
                                [1, oc, 1, 1], zero_is_placeholder=False), E.SUM)
    return [y]


def _seed(a: Dict[str, Any]) -> int:
    """ONNX's float seed as the fill's integer seed (its float32 bits; 0 when absent: trtlite draws the same
    values on every run and build unless a seed says otherwise)."""
    if "seed" not in a:
        return 0
    return int(np.array(float(a["seed"]), np.float32).view(np.int32)) & 0x7FFFFFFF


def _random_fill(p: ImporterContext, shape: Any, op: Any, alpha: float, beta: float, seed: int) -> Any:
    fill = p.network.add_fill((0,), op, DataType.FLOAT)
    fill.set_input(0, shape)
    fill.alpha, fill.beta = float(alpha), float(beta)
    fill.seed = seed
    return p._L(fill)


@importer("RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli",
          restrictions="floating-point outputs (Bernoulli: any numeric or bool dtype); values from trtlite's seeded "
                       "generator (IFillLayer RANDOM_UNIFORM / RANDOM_NORMAL: splitmix64 of the seed and the element "
                       "index), not numpy's; no seed: seed 0, the same values every run")
def _random(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """IFillLayer RANDOM_UNIFORM [low, high) / RANDOM_NORMAL (mean, scale) of the `shape` attribute or of the
    input's shape (*Like, Bernoulli); Bernoulli is uniform[0, 1) < p, cast to `dtype` (the input's type by
    default)."""
    op = node.op_type
    if op in ("RandomUniform", "RandomNormal"):
        dims = [int(v) for v in a.get("shape", [])]
        if "shape" not in a or any(d < 0 for d in dims):
            raise Fail(ErrorCode.INVALID_NODE, "%s needs a 'shape' attribute of non-negative dims, got %s"
                       % (op, a.get("shape")))
        shape = _i32(p, dims)
        ref_t = DataType.FLOAT
    else:
        x = p._tensor(node.input[0])
        shape = p._L(p.network.add_shape(x))
        ref_t = DataType(x.dtype)
    if "dtype" in a:
        out_t = onnx_to_trt(int(a["dtype"]))
        if out_t is None:
            raise Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "%s's dtype %d is not supported" % (op, int(a["dtype"])))
    else:
        out_t = ref_t
    if op == "Bernoulli":
        prob = p._float(x, "Bernoulli's input")
        u = _random_fill(p, shape, FillOperation.RANDOM_UNIFORM, 0.0, 1.0, _seed(a))
        hit = p._ew(u, prob, E.LESS)
        return [hit if out_t == DataType.BOOL else p._cast(hit, out_t)]
    if out_t != DataType.FLOAT:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "%s gives floating-point values, not %s" % (op, out_t.name))
    if "Uniform" in op:
        return [_random_fill(p, shape, FillOperation.RANDOM_UNIFORM, float(a.get("low", 0.0)),
                             float(a.get("high", 1.0)), _seed(a))]
    return [_random_fill(p, shape, FillOperation.RANDOM_NORMAL, float(a.get("mean", 0.0)),
                         float(a.get("scale", 1.0)), _seed(a))]
