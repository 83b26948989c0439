"""Element-wise layers: ReLU, PReLU, Sigmoid, TanH, ELU, BNLL, AbsVal, Power, Exp, Log, Softmax, Dropout, Eltwise."""
from __future__ import annotations

import math
from typing import Any, List

import numpy as np

from .._enums import ActivationType, ElementWiseOperation, ScaleMode, UnaryOperation
from .registry import importer


def _activation(ctx: Any, x: Any, kind: Any, alpha: float = 0.0, beta: float = 0.0) -> Any:
    layer = ctx.named(ctx.network.add_activation(x, kind))
    if kind in (ActivationType.LEAKY_RELU, ActivationType.ELU, ActivationType.SOFTPLUS):
        layer.alpha = alpha
        layer.beta = beta
    return layer.get_output(0)


def affine(ctx: Any, x: Any, scale: float, shift: float, power: float = 1.0) -> Any:
    """(scale * x + shift) ^ power as a UNIFORM scale layer; `x` itself when that is the identity."""
    if scale == 1.0 and shift == 0.0 and power == 1.0:
        return x
    f = lambda v: np.array([v], np.float32)  # noqa: E731
    return ctx.named(ctx.network.add_scale(x, ScaleMode.UNIFORM, f(shift), f(scale), f(power))).get_output(0)


@importer("ReLU")
def relu(ctx: Any, L: Any) -> List[Any]:
    """negative_slope 0: RELU; else LEAKY_RELU with alpha = negative_slope."""
    slope = float(L.param("relu_param").negative_slope)
    if slope == 0.0:
        return [_activation(ctx, ctx.bottom(0), ActivationType.RELU)]
    return [_activation(ctx, ctx.bottom(0), ActivationType.LEAKY_RELU, slope)]


@importer("ReLU6")
def relu6(ctx: Any, L: Any) -> List[Any]:
    """min(max(x, 0), 6) (MobileNet-v2 forks): CLIP with alpha 0, beta 6."""
    layer = ctx.named(ctx.network.add_activation(ctx.bottom(0), ActivationType.CLIP))
    layer.alpha, layer.beta = 0.0, 6.0
    return [layer.get_output(0)]


@importer("Sigmoid")
def sigmoid(ctx: Any, L: Any) -> List[Any]:
    """SIGMOID activation."""
    return [_activation(ctx, ctx.bottom(0), ActivationType.SIGMOID)]


@importer("TanH")
def tanh(ctx: Any, L: Any) -> List[Any]:
    """TANH activation."""
    return [_activation(ctx, ctx.bottom(0), ActivationType.TANH)]


@importer("ELU")
def elu(ctx: Any, L: Any) -> List[Any]:
    """ELU activation with Caffe's alpha (default 1)."""
    return [_activation(ctx, ctx.bottom(0), ActivationType.ELU, float(L.param("elu_param").alpha))]


@importer("BNLL")
def bnll(ctx: Any, L: Any) -> List[Any]:
    """log(1 + e^x): SOFTPLUS with alpha = beta = 1."""
    return [_activation(ctx, ctx.bottom(0), ActivationType.SOFTPLUS, 1.0, 1.0)]


@importer("AbsVal")
def absval(ctx: Any, L: Any) -> List[Any]:
    """|x| (unary ABS)."""
    return [ctx.named(ctx.network.add_unary(ctx.bottom(0), UnaryOperation.ABS)).get_output(0)]


@importer("PReLU")
def prelu(ctx: Any, L: Any) -> List[Any]:
    """Slopes blob [C] (channel axis 1), or [1] with channel_shared."""
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    if len(shape) < 2:
        raise ctx.fail("needs a blob with a channel axis, got shape %s" % shape)
    shared = L.param("prelu_param").channel_shared
    C = 1 if shared else shape[1]
    slopes = ctx.blob(ctx.blobs_of((1, 1), "slopes"), 0, [C], "slopes")
    full = [1] * len(shape)
    full[1] = C
    return [ctx.named(ctx.network.add_parametric_relu(x, ctx.constant(slopes, full))).get_output(0)]


@importer("Power")
def power(ctx: Any, L: Any) -> List[Any]:
    """(shift + scale * x) ^ power: a UNIFORM scale layer."""
    p = L.param("power_param")
    return [_layer_output(ctx, affine(ctx, ctx.bottom(0), float(p.scale), float(p.shift), float(p.power)))]


def _layer_output(ctx: Any, t: Any) -> Any:
    """An identity layer where a layer maps to no computation (so the top is its own tensor)."""
    if t is ctx.bottom(0):
        return ctx.named(ctx.network.add_identity(t)).get_output(0)
    return t


@importer("Exp")
def exp(ctx: Any, L: Any) -> List[Any]:
    """base ^ (shift + scale * x) (base -1: e) = exp(ln(base) * (shift + scale * x))."""
    p = L.param("exp_param")
    ln = 1.0 if p.base == -1 else _ln_base(ctx, float(p.base))
    t = affine(ctx, ctx.bottom(0), ln * float(p.scale), ln * float(p.shift))
    return [ctx.named(ctx.network.add_unary(t, UnaryOperation.EXP)).get_output(0)]


@importer("Log")
def log(ctx: Any, L: Any) -> List[Any]:
    """log_base(shift + scale * x) (base -1: natural log) = ln(shift + scale * x) / ln(base)."""
    p = L.param("log_param")
    t = affine(ctx, ctx.bottom(0), float(p.scale), float(p.shift))
    t = ctx.named(ctx.network.add_unary(t, UnaryOperation.LOG)).get_output(0)
    if p.base != -1:
        t = affine(ctx, t, 1.0 / _ln_base(ctx, float(p.base)), 0.0)
    return [t]


def _ln_base(ctx: Any, base: float) -> float:
    if not (base > 0 and base != 1 and math.isfinite(base)):
        raise ctx.fail("base %g must be -1 (e) or a positive number other than 1" % base)
    return math.log(base)


@importer("Softmax")
def softmax(ctx: Any, L: Any) -> List[Any]:
    """Softmax along `axis` (default 1)."""
    x = ctx.bottom(0)
    axis = ctx.axis(L.param("softmax_param").axis, len(ctx.full_shape(x)), "axis")
    layer = ctx.named(ctx.network.add_softmax(x))
    layer.axes = 1 << ctx.trt_axis(axis, "axis")
    return [layer.get_output(0)]


@importer("Dropout")
def dropout(ctx: Any, L: Any) -> List[Any]:
    """Identity at inference (Caffe's dropout scales while training): the top is the bottom's tensor."""
    return [ctx.bottom(0)]


@importer("Eltwise")
def eltwise(ctx: Any, L: Any) -> List[Any]:
    """SUM (with per-input coeff: scaled first), PROD, MAX over two or more bottoms of one shape."""
    p = L.param("eltwise_param")
    xs = ctx.bottoms()
    if len(xs) < 2:
        raise ctx.fail("needs at least 2 bottom blobs, has %d" % len(xs))
    shapes = [ctx.full_shape(x) for x in xs]
    if any(s != shapes[0] for s in shapes):
        raise ctx.fail("bottom blobs must have one shape, got %s" % shapes)
    op = {0: ElementWiseOperation.PROD, 1: ElementWiseOperation.SUM, 2: ElementWiseOperation.MAX}[int(p.operation)]
    if len(p.coeff):
        if op != ElementWiseOperation.SUM:
            raise ctx.fail("coeff is only for operation SUM")
        if len(p.coeff) != len(xs):
            raise ctx.fail("coeff has %d values for %d bottom blobs" % (len(p.coeff), len(xs)))
        xs = [affine(ctx, x, float(c), 0.0) for x, c in zip(xs, p.coeff)]
    y = xs[0]
    for x in xs[1:]:
        y = ctx.named(ctx.network.add_elementwise(y, x, op)).get_output(0)
    return [y]
