"""Conv and ConvTranspose with weights computed at run time (a graph input or a computed tensor), which trtlite's
convolution layers cannot take (their weights are fixed when the layer is made; TensorRT's can be a tensor input).
The convolution is lowered to im2col and one matrix multiply per group:

    x_pad  = zero-padded x                                  (N, C, S1 + p1, ...)
    cols   = concat over kernel taps t of x_pad[:, group channels, t * d : ... : s]   (N, K * Cg, O1, ...)
    y_g    = cols^T @ W_g^T, W_g the group's weights ordered (tap, channel)          (N, O1, ..., Mg)
    y      = concat over groups of y_g, channels moved back to axis 1, plus the bias

The kernel taps are unrolled while parsing, so x's spatial dims and W's shape must be static.  It is much slower
than the convolution layer: fold the weights (make them an initializer) where they are constant.
"""
from __future__ import annotations

import itertools
from typing import Any, Dict, List

import numpy as np

from .._enums import DataType, MatrixOperation
from .constants import attr_ints
from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported
from .shape_eval import is_static

# A convolution by run-time weights is built from one slice layer per kernel tap and group (conv_tensor_weights):
# past this many the network would be unreasonably large (a fuzzed 1 x 1048576 kernel took minutes to parse).
MAX_TAP_SLICES = 16384


def conv_tensor_weights(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any, w: Any) -> Any:
    """Conv of `x` by the weight tensor `w` (no bias), as the module docstring says."""
    xs, ws = tuple(x.shape), tuple(w.shape)
    nsp = len(ws) - 2
    if nsp < 1 or nsp > 3 or len(xs) != nsp + 2:
        raise unsupported("Conv of input %s by weights %s" % (xs, ws), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if not is_static(xs[1:]) or not is_static(ws):
        raise unsupported("Conv with run-time weights needs static weights and input channels and spatial dims, "
                          "got input %s, weights %s" % (xs, ws), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    group = int(a.get("group", 1))
    m, cg = ws[0], ws[1]
    ks = list(ws[2:])
    if xs[1] != cg * group or m % group:
        raise Fail(ErrorCode.INVALID_NODE, "input of shape %s, weights %s and group %d do not match" % (xs, ws, group))
    strides = attr_ints(a, "strides") or [1] * nsp
    dil = attr_ints(a, "dilations") or [1] * nsp
    sp = list(xs[2:])
    k_eff = [d * (k - 1) + 1 for d, k in zip(dil, ks)]
    auto_pad = a.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pre, post = [], []
        for i in range(nsp):
            total = max(0, (-(-sp[i] // strides[i]) - 1) * strides[i] + k_eff[i] - sp[i])
            small, big = total // 2, total - total // 2
            pre.append(small if auto_pad == "SAME_UPPER" else big)
            post.append(big if auto_pad == "SAME_UPPER" else small)
    elif auto_pad == "VALID":
        pre, post = [0] * nsp, [0] * nsp
    elif auto_pad == "NOTSET":
        pads = attr_ints(a, "pads") or [0] * (2 * nsp)
        pre, post = list(pads[:nsp]), list(pads[nsp:])
    else:
        raise unsupported("auto_pad '%s'" % auto_pad)
    if any(pre) or any(post):
        x = p._L(p.network.add_padding_nd(x, pre, post))
    out = [(sp[i] + pre[i] + post[i] - k_eff[i]) // strides[i] + 1 for i in range(nsp)]
    if any(o <= 0 for o in out):
        raise Fail(ErrorCode.INVALID_NODE, "the kernel %s does not fit the padded input %s" % (ks, xs))
    mg = m // group
    taps_total = group * int(np.prod(ks))
    if taps_total > MAX_TAP_SLICES:
        raise unsupported("Conv with weights computed at run time takes one slice layer per tap and group: %d "
                          "groups x kernel %s is %d, over trtlite's limit of %d" % (group, ks, taps_total,
                                                                                     MAX_TAP_SLICES))
    # (N, O..., C') <- (N, C', O...): channels last for the matrix multiply
    to_last = [0] + list(range(2, nsp + 2)) + [1]
    ys = []
    for g in range(group):
        taps = []
        for t in itertools.product(*[range(k) for k in ks]):
            spec = {1: (g * cg, cg, 1)}
            for i in range(nsp):
                spec[i + 2] = (t[i] * dil[i], out[i], strides[i])
            taps.append(p._slice(x, spec))
        cols = taps[0] if len(taps) == 1 else p._concat_layer(taps, 1)  # (N, K * Cg, O...), tap-major
        cols = p._transpose(cols, to_last)  # (N, O..., K * Cg)
        wg = p._slice(w, {0: (g * mg, mg, 1)}) if group > 1 else w  # (Mg, Cg, K...)
        wg = p._transpose(wg, [0] + list(range(2, nsp + 2)) + [1])  # (Mg, K..., Cg): tap-major like cols
        wg = p._reshape(wg, [1] * nsp + [mg, -1], zero_is_placeholder=False)  # (1.., Mg, K * Cg)
        ys.append(p._L(p.network.add_matrix_multiply(cols, MatrixOperation.NONE, wg, MatrixOperation.TRANSPOSE)))
    y = ys[0] if group == 1 else p._concat_layer(ys, nsp + 1)
    return p._transpose(y, [0, nsp + 1] + list(range(1, nsp + 1)))  # (N, M, O...)


def deconv_tensor_weights(p: ImporterContext, x: Any, w: Any, strides: List[int], dil: List[int], group: int,
                          pre: List[int], post: List[int]) -> Any:
    """ConvTranspose of `x` by the weight tensor `w` (C, M / group, K...), `post` already less output_padding,
    as a convolution: x with stride - 1 zeros inserted between its samples, padded by (K - 1) * d - pre before and
    (K - 1) * d - post after (negative: cropped), convolved (stride 1, dilation d) with the kernel flipped and its
    two channel dims swapped within each group."""
    xs, ws = tuple(x.shape), tuple(int(d) for d in w.shape)
    nsp = len(ws) - 2
    if not is_static(xs):
        raise unsupported("ConvTranspose with run-time weights needs a static input shape, got %s" % (xs,),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    c, mg, ks = ws[0], ws[1], ws[2:]
    if xs[1] != c or c % group:
        raise Fail(ErrorCode.INVALID_NODE, "input of shape %s, weights %s and group %d do not match" % (xs, ws, group))
    cg = c // group
    for i in range(nsp):  # zero insertion along spatial axis i
        s = strides[i]
        if s == 1:
            continue
        ax = i + 2
        shape = list(x.shape)
        n = shape[ax]
        zshape = shape[:ax + 1] + [s - 1] + shape[ax + 1:]
        zshape[ax] = n
        zeros = p._const_tensor(np.zeros(zshape, np.float32), DataType.FLOAT)
        t = p._concat_layer([p._unsqueeze(x, [ax + 1]), zeros], ax + 1)  # (..., n, s, ...)
        merged = shape[:ax] + [n * s] + shape[ax + 1:]
        t = p._reshape(t, merged, zero_is_placeholder=False)
        x = p._slice(t, {ax: (0, (n - 1) * s + 1, 1)})
    k_eff = [d * (k - 1) for d, k in zip(dil, ks)]
    x = p._L(p.network.add_padding_nd(x, [k - q for k, q in zip(k_eff, pre)], [k - q for k, q in zip(k_eff, post)]))
    for i in range(nsp):  # flip the kernel
        if ks[i] > 1:
            w = p._gather_axis(w, i + 2, np.arange(ks[i] - 1, -1, -1))
    # (C, Mg, K...) = (g, Cg, Mg, K...) -> (g, Mg, Cg, K...) -> (g * Mg, Cg, K...)
    w = p._shuffle(w, reshape=[group, cg, mg] + list(ks), second=[0, 2, 1] + list(range(3, nsp + 3)))
    w = p._reshape(w, [group * mg, cg] + list(ks), zero_is_placeholder=False)
    attrs = {"group": group, "dilations": list(dil), "strides": [1] * nsp, "auto_pad": "VALID"}
    return conv_tensor_weights(p, None, attrs, x, w)
