"""Importers of convolutions: Conv, ConvTranspose."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._enums import ElementWiseOperation, PaddingMode, ScaleMode
from .constants import attr_ints
from .context import ImporterContext
from .errors import Dynamic, ErrorCode, Fail, unsupported
from .ops_conv_tensor import conv_tensor_weights, deconv_tensor_weights
from .registry import importer
from .shape_eval import is_static


def _conv_weights(p: ImporterContext, node: Any, what: str = "weights") -> np.ndarray:
    w = p._cval(p._inp(node, 1), "%s (input 1)" % what)
    return np.ascontiguousarray(w.astype(np.float32))


def _opt_bias(p: ImporterContext, node: Any, k: int) -> Tuple[Optional[np.ndarray], Optional[Any]]:
    """(constant bias, or tensor bias) of input 2."""
    b = p._inp(node, 2)
    if b is None:
        return None, None
    if p._is_const(b):
        v = p._cval(b, "bias").astype(np.float32).reshape(-1)
        if v.size != k:
            raise Fail(ErrorCode.INVALID_NODE, "bias has %d values, expected %d" % (v.size, k))
        return np.ascontiguousarray(v), None
    return None, p._tensor(b)


def _channel_tensor_add(p: ImporterContext, y: Any, bias_t: Any) -> Any:
    """y [N, K, ...] + bias [K] (a tensor)."""
    r = len(y.shape)
    b = p._reshape(bias_t, [1, -1] + [1] * (r - 2), zero_is_placeholder=False)
    return p._ew(y, b, ElementWiseOperation.SUM)


def _pads(a: Dict[str, Any], nsp: int) -> Tuple[List[int], List[int]]:
    pads = attr_ints(a, "pads") or [0] * (2 * nsp)
    if len(pads) != 2 * nsp:
        raise Fail(ErrorCode.INVALID_NODE, "pads %s must have %d entries" % (pads, 2 * nsp))
    return pads[:nsp], pads[nsp:]


@importer("Conv",
          restrictions=("1-D to 3-D convolutions; auto_pad NOTSET, VALID, SAME_UPPER or SAME_LOWER; weights computed "
                        "at run time (not an initializer) need static shapes and run as im2col + matrix multiplies "
                        "(slow)"))
def _conv(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    wn = p._inp(node, 1)
    if wn is not None and not p._is_const(wn):  # weights computed at run time: im2col and matrix multiplies
        wt = p._float(p._tensor(wn), "weights (input 1)")
        bias, bias_t = _opt_bias(p, node, int(wt.shape[0]))
        y = conv_tensor_weights(p, node, a, x, wt)
        if bias is not None:
            y = p._L(p.network.add_scale(y, ScaleMode.CHANNEL, bias, None, None))
        return [_channel_tensor_add(p, y, bias_t) if bias_t is not None else y]
    w = _conv_weights(p, node)
    nsp = w.ndim - 2
    if nsp < 1 or nsp > 3:
        raise unsupported("Conv with %d spatial dims (trtlite supports 1 to 3)" % nsp,
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if len(x.shape) != nsp + 2:
        raise Fail(ErrorCode.INVALID_NODE, "input of shape %s does not match weights of shape %s"
                   % (tuple(x.shape), w.shape))
    ks = list(w.shape[2:])
    if "kernel_shape" in a and attr_ints(a, "kernel_shape") != ks:
        raise Fail(ErrorCode.INVALID_NODE, "kernel_shape %s differs from the weights' %s" % (a["kernel_shape"], ks))
    group = int(a.get("group", 1))
    k = w.shape[0]
    bias, bias_t = _opt_bias(p, node, k)
    layer = p.network.add_convolution_nd(x, k, ks, w, bias)
    layer.stride_nd = attr_ints(a, "strides") or [1] * nsp
    layer.dilation_nd = attr_ints(a, "dilations") or [1] * nsp
    layer.num_groups = group
    auto_pad = a.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        layer.padding_mode = PaddingMode.SAME_UPPER if auto_pad == "SAME_UPPER" else PaddingMode.SAME_LOWER
    elif auto_pad == "VALID":
        layer.pre_padding = [0] * nsp
        layer.post_padding = [0] * nsp
    elif auto_pad == "NOTSET":
        pre, post = _pads(a, nsp)
        layer.pre_padding = pre
        layer.post_padding = post
    else:
        raise unsupported("auto_pad '%s'" % auto_pad)
    y = p._L(layer)
    if bias_t is not None:
        y = _channel_tensor_add(p, y, bias_t)
    return [y]


@importer("ConvTranspose",
          restrictions=("1-D to 3-D; output_shape and SAME auto_pad need static spatial dims; weights computed at "
                        "run time need static shapes (input included) and run as zero insertion + im2col + matrix "
                        "multiplies (slow)"))
def _conv_transpose(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    wn = p._inp(node, 1)
    wt = None  # the weights as a tensor when computed at run time
    if wn is not None and not p._is_const(wn):
        wt = p._float(p._tensor(wn), "weights (input 1)")
        wshape = tuple(int(d) for d in wt.shape)
        if not is_static(wshape):
            raise unsupported("ConvTranspose with run-time weights of dynamic shape %s" % (wshape,),
                              ErrorCode.UNSUPPORTED_NODE_SHAPE)
    else:
        w = _conv_weights(p, node)
        wshape = w.shape
    nsp = len(wshape) - 2
    if nsp < 1 or nsp > 3:
        raise unsupported("ConvTranspose with %d spatial dims" % nsp, ErrorCode.UNSUPPORTED_NODE_SHAPE)
    xs = tuple(x.shape)
    if len(xs) != nsp + 2:
        raise Fail(ErrorCode.INVALID_NODE, "input of shape %s does not match weights of shape %s" % (xs, wshape))
    group = int(a.get("group", 1))
    k_out = wshape[1] * group
    ks = list(wshape[2:])
    strides = attr_ints(a, "strides") or [1] * nsp
    dil = attr_ints(a, "dilations") or [1] * nsp
    opad = attr_ints(a, "output_padding") or [0] * nsp
    out_shape = attr_ints(a, "output_shape")
    auto_pad = a.get("auto_pad", "NOTSET")
    k_eff = [d * (kk - 1) + 1 for d, kk in zip(dil, ks)]
    if out_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if out_shape is not None and len(out_shape) == nsp + 2:
            out_shape = out_shape[2:]
        sp = xs[2:]
        if not is_static(sp):
            raise Dynamic("ConvTranspose with output_shape or SAME padding needs static spatial dims, got %s" % (xs,))
        if out_shape is None:
            out_shape = [i * s for i, s in zip(sp, strides)]
        pre, post = [], []
        for i in range(nsp):
            total = strides[i] * (sp[i] - 1) + opad[i] + k_eff[i] - out_shape[i]
            if auto_pad == "SAME_UPPER":  # as ONNX specifies (and ONNX Runtime does)
                pre.append(total // 2)
                post.append(total - total // 2)
            else:
                pre.append(total - total // 2)
                post.append(total // 2)
    elif auto_pad == "VALID":
        pre, post = [0] * nsp, [0] * nsp
    elif auto_pad == "NOTSET":
        pre, post = _pads(a, nsp)
    else:
        raise unsupported("auto_pad '%s'" % auto_pad)
    post_eff = [q - o for q, o in zip(post, opad)]  # output_padding extends the end
    bias, bias_t = _opt_bias(p, node, k_out)
    if wt is not None:
        y = deconv_tensor_weights(p, x, wt, strides, dil, group, pre, post_eff)
        if bias is not None:
            y = p._L(p.network.add_scale(y, ScaleMode.CHANNEL, bias, None, None))
        return [_channel_tensor_add(p, y, bias_t) if bias_t is not None else y]
    direct = all(v >= 0 for v in pre) and all(v >= 0 for v in post_eff)
    layer = p.network.add_deconvolution_nd(x, k_out, ks, w, bias if direct else None)
    layer.stride_nd = strides
    layer.dilation_nd = dil
    layer.num_groups = group
    layer.pre_padding = [max(v, 0) for v in pre]
    layer.post_padding = [max(v, 0) for v in post_eff]
    y = p._L(layer)
    if not direct:
        # pads below zero: the output reaches past the full transposed convolution (zeros, plus the bias)
        y = p._L(p.network.add_padding_nd(y, [-min(v, 0) for v in pre], [-min(v, 0) for v in post_eff]))
        if bias is not None:
            y = p._L(p.network.add_scale(y, ScaleMode.CHANNEL, bias, None, None))
    if bias_t is not None:
        y = _channel_tensor_add(p, y, bias_t)
    return [y]
