"""BatchNorm, Scale, Bias, LRN."""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from .._enums import ElementWiseOperation, PaddingMode, PoolingType, ScaleMode
from .layers_pointwise import affine
from .registry import importer


@importer("BatchNorm")
def batch_norm(ctx: Any, L: Any) -> List[Any]:
    """y = (x - mean / f) / sqrt(var / f + eps) with the blobs mean [C], var [C] and the moving-average factor f [1]
    (f = 0 gives 0, as Caffe); a CHANNEL scale layer (the builder folds it into a preceding convolution).  Always
    the stored statistics: use_global_stats: false (batch statistics, a training mode) is warned about and treated
    as true, as TensorRT does."""
    p = L.param("batch_norm_param")
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    if len(shape) < 2:
        raise ctx.fail("needs a blob with a channel axis, got shape %s" % shape)
    if p.HasField("use_global_stats") and not p.use_global_stats:
        ctx.warn("%s: use_global_stats: false asks for batch statistics (training); the stored mean and variance "
                 "are used" % L)
    C = shape[1]
    blobs = ctx.blobs_of((2, 3), "mean, variance and the moving-average factor")
    mean = ctx.blob(blobs, 0, [C], "mean").astype(np.float64)
    var = ctx.blob(blobs, 1, [C], "variance").astype(np.float64)
    if len(blobs) == 3:
        f = float(ctx.blob(blobs, 2, [1], "moving-average factor")[0])
        s = 0.0 if f == 0 else 1.0 / f
        mean, var = mean * s, var * s
    scale = 1.0 / np.sqrt(var + float(p.eps))
    if not np.all(np.isfinite(scale)):
        raise ctx.fail("variance + eps must be > 0 in every channel")
    return [_channel_scale(ctx, x, scale, -mean * scale, 1)]


def _channel_scale(ctx: Any, x: Any, scale: Optional[np.ndarray], shift: Optional[np.ndarray], axis: int) -> Any:
    C = ctx.full_shape(x)[axis]
    mode = ScaleMode.CHANNEL if C > 1 else ScaleMode.UNIFORM
    layer = ctx.network.add_scale_nd(x, mode, None if shift is None else np.ascontiguousarray(shift, np.float32),
                                     None if scale is None else np.ascontiguousarray(scale, np.float32), None,
                                     ctx.trt_axis(axis, "axis"))
    return ctx.named(layer).get_output(0)


def _covered(ctx: Any, L: Any, shape: List[int], p: Any) -> List[int]:
    """The axes [axis, axis + num_axes) of `shape` a Scale/Bias parameter spans, checked."""
    axis = ctx.axis(p.axis, len(shape), "axis")
    n = int(p.num_axes)
    if n < -1 or (n >= 0 and axis + n > len(shape)):
        raise ctx.fail("num_axes %d does not fit a %d-D blob from axis %d" % (n, len(shape), axis))
    return list(range(axis, len(shape) if n == -1 else axis + n))


def _broadcast(ctx: Any, x: Any, values: np.ndarray, axes: List[int], op: Any) -> Any:
    """x (op) values, values spanning `axes` of x: one CHANNEL scale layer when that is the channel axis, else an
    element-wise layer with a constant."""
    shape = ctx.full_shape(x)
    if axes == [1] and shape[1] != -1:
        return _channel_scale(ctx, x, values if op == ElementWiseOperation.PROD else None,
                              values if op == ElementWiseOperation.SUM else None, 1)
    full = [1] * len(shape)
    for a in axes:
        full[a] = shape[a]
    return ctx.named(ctx.network.add_elementwise(x, ctx.constant(values, full), op)).get_output(0)


def _scale_or_bias(ctx: Any, L: Any, p: Any, is_scale: bool) -> List[Any]:
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    axes = _covered(ctx, L, shape, p)
    op = ElementWiseOperation.PROD if is_scale else ElementWiseOperation.SUM
    if len(L.bottoms) == 2:  # the factor is a blob of the network
        y = ctx.bottom(1)
        yshape = ctx.full_shape(y)
        axis = axes[0] if axes else len(shape)
        if yshape != shape[axis:axis + len(yshape)]:
            raise ctx.fail("bottom 1 of shape %s does not match bottom 0's axes from %d: %s"
                           % (yshape, axis, shape[axis:axis + len(yshape)]))
        if ctx.implicit and axis > 0:
            raise ctx.fail("a second bottom blob needs axis 0 in an implicit-batch network (use EXPLICIT_BATCH)")
        full = [1] * axis + yshape + [1] * (len(shape) - axis - len(yshape))
        y = ctx.reshape(y, full, "the factor's reshape")
        t = ctx.named(ctx.network.add_elementwise(x, y, op)).get_output(0)
        if is_scale and p.bias_term:
            b = ctx.blob(ctx.blobs_of((1, 1), "bias"), 0, [shape[a] for a in axes[:len(yshape)]], "bias")
            t = _broadcast(ctx, t, b, list(range(axis, axis + len(yshape))), ElementWiseOperation.SUM)
        return [t]
    want = [shape[a] for a in axes]
    if any(d == -1 for d in want):
        raise ctx.fail("the parameter cannot span the batch axis of an implicit-batch network")
    n_blobs = 1 + int(is_scale and p.bias_term)
    blobs = ctx.blobs_of((n_blobs, n_blobs), "scale and bias" if n_blobs == 2 else ("scale" if is_scale else "bias"))
    v = ctx.blob(blobs, 0, want, "scale" if is_scale else "bias")
    if is_scale and p.bias_term:
        b = ctx.blob(blobs, 1, want, "bias")
        if axes == [1]:
            return [_channel_scale(ctx, x, v.ravel(), b.ravel(), 1)]
        t = _broadcast(ctx, x, v, axes, ElementWiseOperation.PROD)
        return [_broadcast(ctx, t, b, axes, ElementWiseOperation.SUM)]
    if v.size == 1:
        return [affine(ctx, x, float(v.ravel()[0]), 0.0) if is_scale else affine(ctx, x, 1.0, float(v.ravel()[0]))]
    return [_broadcast(ctx, x, v, axes, op)]


@importer("Scale")
def scale(ctx: Any, L: Any) -> List[Any]:
    """y = x * s (+ b with bias_term), s spanning axes [axis, axis + num_axes) (default: the channel axis): a blob
    of the .caffemodel, or bottom 1.  The channel case is a CHANNEL scale layer (folded after convolutions)."""
    return _scale_or_bias(ctx, L, L.param("scale_param"), True)


@importer("Bias")
def bias(ctx: Any, L: Any) -> List[Any]:
    """y = x + b, b spanning axes [axis, axis + num_axes): a blob of the .caffemodel, or bottom 1."""
    return _scale_or_bias(ctx, L, L.param("bias_param"), False)


@importer("LRN")
def lrn(ctx: Any, L: Any) -> List[Any]:
    """ACROSS_CHANNELS: x / (k + alpha / n * sum of x^2 over n neighbouring channels) ^ beta (the LRN layer).
    WITHIN_CHANNEL: x / (1 + alpha / n^2 * sum of x^2 over an n x n window) ^ beta, built as x*x -> average pooling
    (padding counted) -> scale layer -> product."""
    p = L.param("lrn_param")
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    n = int(p.local_size)
    if len(shape) != 4:
        raise ctx.fail("needs a 4-D blob, got shape %s" % shape)
    if n < 1 or n % 2 == 0:
        raise ctx.fail("local_size %d must be odd and >= 1" % n)
    if p.norm_region == 0:
        return [ctx.named(ctx.network.add_lrn(x, n, float(p.alpha), float(p.beta), float(p.k))).get_output(0)]
    sq = ctx.named(ctx.network.add_elementwise(x, x, ElementWiseOperation.PROD)).get_output(0)
    pool = ctx.named(ctx.network.add_pooling_nd(sq, PoolingType.AVERAGE, (n, n)))
    pool.padding_nd = ((n - 1) // 2,) * 2
    pool.padding_mode = PaddingMode.EXPLICIT_ROUND_DOWN
    pool.average_count_excludes_padding = False
    den = affine(ctx, pool.get_output(0), float(p.alpha), 1.0, -float(p.beta))
    return [ctx.named(ctx.network.add_elementwise(x, den, ElementWiseOperation.PROD)).get_output(0)]
