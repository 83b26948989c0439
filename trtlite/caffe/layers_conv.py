"""Convolution, Deconvolution, InnerProduct, Pooling."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np

from .. import _enums
from .registry import importer


def _spatial(ctx: Any, rep: Sequence[int], h: Optional[int], w: Optional[int], nsp: int, default: Optional[int],
             field: str) -> List[int]:
    """Caffe's per-axis values: <field>_h/<field>_w (2-D only) or the repeated <field> (one value for all axes, or
    one per axis), else `default`."""
    if h is not None or w is not None:
        if nsp != 2 or h is None or w is None:
            raise ctx.fail("%s_h and %s_w must be given together, for 2-D blobs only" % (field, field))
        if len(rep):
            raise ctx.fail("give either %s or %s_h/%s_w, not both" % (field, field, field))
        return [int(h), int(w)]
    if len(rep) == 0:
        if default is None:
            raise ctx.fail("%s is required" % ("kernel_size (or kernel_h and kernel_w)" if field == "kernel" else field))
        return [default] * nsp
    if len(rep) == 1:
        return [int(rep[0])] * nsp
    if len(rep) != nsp:
        raise ctx.fail("%s has %d values; give 1 or one per spatial axis (%d)" % (field, len(rep), nsp))
    return [int(v) for v in rep]


def _opt(L: Any, p: Any, name: str) -> Optional[int]:
    return int(getattr(p, name)) if p.HasField(name) else None


def _conv(ctx: Any, L: Any, deconv: bool, depthwise: bool = False) -> List[Any]:
    p = L.param("convolution_param")
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    nsp = len(shape) - 2
    if p.axis != 1:
        raise ctx.fail("axis %d: only axis 1 (channels) is supported" % p.axis)
    if nsp < 1:
        raise ctx.fail("needs a blob with spatial axes, got shape %s" % shape)
    kernel = _spatial(ctx, p.kernel_size, _opt(L, p, "kernel_h"), _opt(L, p, "kernel_w"), nsp, None, "kernel")
    pad = _spatial(ctx, p.pad, _opt(L, p, "pad_h"), _opt(L, p, "pad_w"), nsp, 0, "pad")
    stride = _spatial(ctx, p.stride, _opt(L, p, "stride_h"), _opt(L, p, "stride_w"), nsp, 1, "stride")
    dilation = _spatial(ctx, p.dilation, None, None, nsp, 1, "dilation")
    K, g, C = int(p.num_output), int(p.group), shape[1]
    if depthwise:
        if p.HasField("group") and g != C:
            raise ctx.fail("group %d of a depthwise convolution must equal the input channels (%d)" % (g, C))
        g = C
    if not p.HasField("num_output") or K < 1:
        raise ctx.fail("num_output must be given and >= 1")
    if g < 1 or C % g or K % g:
        raise ctx.fail("group %d must divide the input channels (%d) and num_output (%d)" % (g, C, K))
    if min(kernel) < 1 or min(stride) < 1 or min(dilation) < 1:
        raise ctx.fail("kernel %s, stride %s and dilation %s must be >= 1" % (kernel, stride, dilation))
    blobs = ctx.blobs_of((1 + p.bias_term,) * 2, "weights and bias" if p.bias_term else "weights (bias_term: false)")
    wshape = ([C, K // g] if deconv else [K, C // g]) + kernel
    w = ctx.blob(blobs, 0, wshape, "weights")
    b = ctx.blob(blobs, 1, [K], "bias") if p.bias_term else None
    net = ctx.network
    add = net.add_deconvolution_nd if deconv else net.add_convolution_nd
    layer = ctx.named(add(x, K, tuple(kernel), w, b) if b is not None else add(x, K, tuple(kernel), w))
    layer.stride_nd = tuple(stride)
    layer.padding_nd = tuple(pad)
    layer.dilation_nd = tuple(dilation)
    layer.num_groups = g
    return [layer.get_output(0)]


@importer("Convolution", "DepthwiseConvolution", "ConvolutionDepthwise")
def convolution(ctx: Any, L: Any) -> List[Any]:
    """Weights [K, C/group, kh, kw], bias [K] (bias_term); pad/kernel/stride as one value, one per axis or _h/_w;
    dilation; group.  Output size floor((H + 2p - d(k-1) - 1) / s) + 1, as TensorRT's.  The MobileNet forks'
    DepthwiseConvolution / ConvolutionDepthwise types are convolutions with group = channels (their
    convolution_param's group, when given, must say so)."""
    return _conv(ctx, L, False, depthwise=L.type != "Convolution")


@importer("Deconvolution")
def deconvolution(ctx: Any, L: Any) -> List[Any]:
    """Weights [C, K/group, kh, kw]; output size s(H - 1) + d(k - 1) + 1 - 2p."""
    return _conv(ctx, L, True)


@importer("InnerProduct")
def inner_product(ctx: Any, L: Any) -> List[Any]:
    """y = x' W^T + b with x' the input flattened from `axis` on; weights [num_output, K] ([K, num_output] with
    transpose: true).  Output shape: input dims before `axis` + [num_output] (Caffe's; e.g. [N, 10] for LeNet's ip2).
    Built as reshape -> fully connected -> reshape."""
    p = L.param("inner_product_param")
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    axis = ctx.axis(p.axis, len(shape), "axis")
    if ctx.implicit and axis == 0:
        ctx.trt_axis(0, "axis")
    lead, K, N = shape[:axis], int(np.prod(shape[axis:], dtype=np.int64)), int(p.num_output)
    if not p.HasField("num_output") or N < 1:
        raise ctx.fail("num_output must be given and >= 1")
    blobs = ctx.blobs_of((1 + p.bias_term,) * 2, "weights and bias" if p.bias_term else "weights (bias_term: false)")
    w = ctx.blob(blobs, 0, [K, N] if p.transpose else [N, K], "weights")
    if p.transpose:
        w = np.ascontiguousarray(w.T)
    b = ctx.blob(blobs, 1, [N], "bias") if p.bias_term else None
    x4 = ctx.reshape(x, lead + [K, 1, 1], "the flattening")
    fc = ctx.named(ctx.network.add_fully_connected(x4, N, w, b) if b is not None else
                   ctx.network.add_fully_connected(x4, N, w))
    return [ctx.reshape(fc.get_output(0), lead + [N], "the output reshape")]


@importer("Pooling")
def pooling(ctx: Any, L: Any) -> List[Any]:
    """MAX and AVE (average over the window clipped to the padded input, padding counted: Caffe's divisor);
    global_pooling; Caffe's output size ceil((H + 2p - k) / s) + 1 (round_mode FLOOR: floor), minus one when the
    last window would start in the padding (PaddingMode.CAFFE_ROUND_UP / CAFFE_ROUND_DOWN)."""
    p = L.param("pooling_param")
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    nsp = len(shape) - 2
    if nsp < 1:
        raise ctx.fail("needs a blob with spatial axes, got shape %s" % shape)
    if p.pool == 2:
        raise ctx.fail("pool: STOCHASTIC is not supported (MAX and AVE are)")
    if p.global_pooling:
        if p.HasField("kernel_size") or p.HasField("kernel_h") or p.HasField("kernel_w"):
            raise ctx.fail("global_pooling takes no kernel size")
        kernel, stride, pad = shape[2:], [1] * nsp, [0] * nsp
        if p.pad or p.pad_h or p.pad_w:
            raise ctx.fail("global_pooling takes no padding")
    else:
        ks = [p.kernel_size] if p.HasField("kernel_size") else []
        kernel = _spatial(ctx, ks, _opt(L, p, "kernel_h"), _opt(L, p, "kernel_w"), nsp, None, "kernel")
        pads = [p.pad] if p.HasField("pad") else []
        pad = _spatial(ctx, pads, _opt(L, p, "pad_h"), _opt(L, p, "pad_w"), nsp, 0, "pad")
        strides = [p.stride] if p.HasField("stride") else []
        stride = _spatial(ctx, strides, _opt(L, p, "stride_h"), _opt(L, p, "stride_w"), nsp, 1, "stride")
        if min(kernel) < 1 or min(stride) < 1:
            raise ctx.fail("kernel %s and stride %s must be >= 1" % (kernel, stride))
        if any(pd >= k for pd, k in zip(pad, kernel)):
            raise ctx.fail("pad %s must be smaller than the kernel %s" % (pad, kernel))
    ptype = _enums.PoolingType.MAX if p.pool == 0 else _enums.PoolingType.AVERAGE
    layer = ctx.named(ctx.network.add_pooling_nd(x, ptype, tuple(kernel)))
    layer.stride_nd = tuple(stride)
    layer.padding_nd = tuple(pad)
    layer.padding_mode = _enums.PaddingMode.CAFFE_ROUND_DOWN if p.round_mode == 1 else _enums.PaddingMode.CAFFE_ROUND_UP
    layer.average_count_excludes_padding = False
    return [layer.get_output(0)]
