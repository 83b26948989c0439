"""INetworkDefinition.add_dynamic_quantize: TensorRT 10's IDynamicQuantizeLayer (NVFP4 and MXFP8 block
quantization with scales computed at run time), composed from existing layers.

    dq = network.add_dynamic_quantize(x, axis=-1, block_size=16, output_type=trt.DataType.FP4,
                                      scale_type=trt.DataType.FP8)
    dq.set_input(1, double_quant_scale)     # optional: a FLOAT scalar (build-time constant), default 1
    data, scales = dq.get_output(0), dq.get_output(1)

For each block of `block_size` consecutive elements of the input along `axis` (the last or second to last of a
2-D or 3-D FLOAT / HALF input whose blocked extent is static and a multiple of the block size), as TensorRT's
DynamicQuantize operator defines NVFP4:

    amax    = max(|x|) over the block
    scale   = FP8(amax / 6 / double_quant_scale)       (6: FP4 e2m1's largest value; round to nearest even,
                                                         saturating at 448)
    data    = FP4(x / (float(scale) * double_quant_scale))   (round to nearest even on FP4's grid, saturating at 6;
                                                         a block whose scale is 0 gives 0s)

MXFP8 (output_type FP8, scale_type E8M0; TensorRT's block size 32, any block size here), as the OCP
Microscaling format defines it (TensorRT: "the quantization formulas are identical to FP8's"):

    amax    = max(|x|) over the block
    scale   = 2^(floor(log2(amax)) - 8)                 (8: e4m3's largest exponent; as E8M0, clamped to
                                                         2^-127 .. 2^127; an all-zero block gets 2^-127)
    data    = FP8(x / scale)                            (round to nearest even, saturating at +-448)

computed exactly: floor(log2(amax)) from amax's E8M0 rounding up (2^ceil(log2 amax)), halved unless amax is a
power of two.  MXFP8 takes no double-quantization scale (set_input(1) is refused).

Output 0 has the input's shape (FP4 / FP8 codes, one a byte, as trtlite stores its storage types); output 1 has it
too except along `axis`, which is divided by the block size (FP8 / E8M0 codes).

TensorRT 10's block shapes: ``network.add_dynamic_quantize_v2(x, block_shape, output_type, scale_type)`` takes one
extent per input dim (-1: the whole dim), e.g. ``(16, 16)``: a block is the product of those ranges, its amax the
maximum over all of it, the formulas as above; the scales' shape is the input's divided by ``block_shape``, and
``layer.block_shape`` reports it (1-D layers: ``block_size`` on ``axis``, 1 elsewhere).  Every blocked dim must be
static and a multiple of its block extent.  Both forms are one composition (``_compose``).
The layer's attributes are fixed at creation (the composition is built then): setting them raises.
"""
from __future__ import annotations

from typing import Any, List

import numpy as np

from . import _C
from ._enums import DataType, ElementWiseOperation, ReduceOperation, UnaryOperation
from ._types import Weights

__all__ = ["IDynamicQuantizeLayer"]

_FP4_MAX = 6.0


class IDynamicQuantizeLayer:
    """TensorRT's IDynamicQuantizeLayer (made by ``network.add_dynamic_quantize``): two outputs, the quantized
    data and the per-block scales; input 1 is the optional double-quantization scale."""

    def __init__(self, name: str, x: Any, axis: int, block_size: int, to_type: DataType, scale_type: DataType,
                 outputs: List[Any], dq_users: List[Any], layers: List[Any]) -> None:
        self._name = name
        self._inputs = [x, None]
        self._axis, self._block_size = axis, block_size
        self._to_type, self._scale_type = to_type, scale_type
        self._outputs = outputs
        self._dq_users = dq_users  # elementwise layers whose input 1 is the double-quantization scale
        self._layers = layers

    # ---- TensorRT's attributes (read-only here) ----
    @property
    def axis(self) -> int:
        """The blocked axis (as given, normalized to >= 0; -1 for a layer made with a block shape)."""
        return self._axis

    @property
    def block_size(self) -> int:
        """Elements a block (0 for a layer made with a block shape: see block_shape)."""
        return self._block_size

    @property
    def block_shape(self) -> tuple:
        """The block's extent along each input dim (1-D blocks: block_size on axis, 1 elsewhere)."""
        return self._block_shape

    @property
    def to_type(self) -> DataType:
        """The quantized output's type (FP4, or FP8 for MXFP8)."""
        return self._to_type

    @property
    def scale_type(self) -> DataType:
        """The scales' type (FP8, or E8M0 for MXFP8)."""
        return self._scale_type

    def __setattr__(self, key: str, value: Any) -> None:
        if key in ("axis", "block_size", "to_type", "scale_type", "block_shape"):
            raise _C.UnsupportedError(f"layer '{self._name}': {key} of an IDynamicQuantizeLayer is fixed when "
                                      f"add_dynamic_quantize creates it (trtlite composes the layer then)")
        object.__setattr__(self, key, value)

    @property
    def name(self) -> str:
        """The layer's name (prefix of the layers it is made of)."""
        return self._name

    @name.setter
    def name(self, v: str) -> None:
        object.__setattr__(self, "_name", str(v))
        for i, layer in enumerate(self._layers):
            layer.name = f"{v}/{i}"

    @property
    def type(self) -> Any:
        """trt.LayerType: trtlite has no DYNAMIC_QUANTIZE layer type of its own; reported as QUANTIZE."""
        from ._enums import LayerType
        return LayerType.QUANTIZE

    @property
    def num_inputs(self) -> int:
        """1, or 2 once the double-quantization scale is set."""
        return 1 if self._inputs[1] is None else 2

    @property
    def num_outputs(self) -> int:
        """2: data and scales."""
        return 2

    def get_input(self, i: int) -> Any:
        """Input i (0: the data, 1: the double-quantization scale or None)."""
        if not 0 <= i < 2:
            raise IndexError(f"layer '{self._name}': input index {i} out of range")
        return self._inputs[i]

    def get_output(self, i: int) -> Any:
        """Output i (0: quantized data, 1: block scales)."""
        if not 0 <= i < 2:
            raise IndexError(f"layer '{self._name}': output index {i} out of range (2 outputs)")
        return self._outputs[i]

    def set_input(self, i: int, tensor: Any) -> None:
        """Input 1: the double-quantization scale, a FLOAT tensor of one element (TensorRT: a build-time
        constant).  Input 0 is fixed at creation."""
        if i != 1:
            raise _C.UnsupportedError(f"layer '{self._name}': only input 1 (the double-quantization scale) can be "
                                      f"set after add_dynamic_quantize")
        if not self._dq_users:
            raise _C.UnsupportedError(f"layer '{self._name}': MXFP8 dynamic quantization (FP8 data, E8M0 scales) "
                                      f"takes no double-quantization scale")
        if tensor.dtype != DataType.FLOAT:
            raise _C.DTypeError(f"layer '{self._name}': the double-quantization scale must be FLOAT, got "
                                f"{tensor.dtype.name}")
        shape = tuple(tensor.shape)
        if int(np.prod(shape)) != 1:
            raise _C.ShapeError(f"layer '{self._name}': the double-quantization scale must hold one value, got "
                                f"shape {shape}")
        rank = len(tuple(self._dq_users[0].get_input(0).shape))
        t = tensor
        if len(shape) != rank:
            net = self._network
            sh = net.add_shuffle(tensor)
            sh.reshape_dims = (1,) * rank
            sh.name = f"{self._name}/double_quant_scale"
            t = sh.get_output(0)
        for layer in self._dq_users:
            layer.set_input(1, t)
        self._inputs[1] = tensor


def _const(net: Any, value: float, rank: int) -> Any:
    return net.add_constant((1,) * rank, Weights(np.full((1,) * rank, value, np.float32))).get_output(0)


def _check_types(layer_name: str, input: Any, output_type: Any, scale_type: Any):
    output_type, scale_type = DataType(output_type), DataType(scale_type)
    mx = (output_type, scale_type) == (DataType.FP8, DataType.E8M0)
    if (output_type, scale_type) != (DataType.FP4, DataType.FP8) and not mx:
        raise _C.UnsupportedError(f"layer '{layer_name}': trtlite's dynamic quantization is NVFP4 (output_type FP4, "
                                  f"scale_type FP8) or MXFP8 (output_type FP8, scale_type E8M0), got "
                                  f"{output_type.name} / {scale_type.name}")
    if input.dtype not in (DataType.FLOAT, DataType.HALF):
        raise _C.DTypeError(f"layer '{layer_name}': the input must be FLOAT or HALF, got {input.dtype.name}")
    shape = tuple(input.shape)
    if len(shape) not in (2, 3):
        raise _C.ShapeError(f"layer '{layer_name}': the input must be 2-D or 3-D (as TensorRT's), got shape {shape}")
    return output_type, scale_type, mx, shape


def add_dynamic_quantize(network: Any, input: Any, axis: int, block_size: int, output_type: Any,
                         scale_type: Any) -> IDynamicQuantizeLayer:
    """add_dynamic_quantize(input, axis, block_size, output_type, scale_type) -> IDynamicQuantizeLayer."""
    layer_name = "(Unnamed Layer* %d) [DynamicQuantize]" % network.num_layers
    for what, v in (("axis", axis), ("block_size", block_size)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"add_dynamic_quantize(): {what} must be an int, not {type(v).__name__}")
    output_type, scale_type, mx, shape = _check_types(layer_name, input, output_type, scale_type)
    r = len(shape)
    a = int(axis) + r if axis < 0 else int(axis)
    if a not in (r - 1, r - 2):
        raise _C.ShapeError(f"layer '{layer_name}': axis {axis} must be the last or second to last of {r} dims")
    bs = int(block_size)
    if bs < 1:
        raise ValueError(f"layer '{layer_name}': block_size must be >= 1, got {bs}")
    block = [1] * r
    block[a] = bs
    return _compose(network, layer_name, input, shape, block, output_type, scale_type, mx, a)


def add_dynamic_quantize_v2(network: Any, input: Any, block_shape: Any, output_type: Any,
                            scale_type: Any) -> IDynamicQuantizeLayer:
    """add_dynamic_quantize_v2(input, block_shape, output_type, scale_type) -> IDynamicQuantizeLayer: TensorRT
    10's block shape (one entry per input dim; -1: the whole extent), e.g. (16, 16) for 2-D blocks."""
    layer_name = "(Unnamed Layer* %d) [DynamicQuantize]" % network.num_layers
    output_type, scale_type, mx, shape = _check_types(layer_name, input, output_type, scale_type)
    try:
        block = [int(v) for v in block_shape]
    except (TypeError, ValueError):
        raise TypeError(f"add_dynamic_quantize_v2(): block_shape must be a sequence of ints, not "
                        f"{type(block_shape).__name__}") from None
    if len(block) != len(shape):
        raise _C.ShapeError(f"layer '{layer_name}': block_shape {tuple(block)} must have the input's rank "
                            f"{len(shape)} (input shape {shape})")
    for i, (bv, d) in enumerate(zip(block, shape)):
        if bv == -1:
            if d < 0:
                raise _C.ShapeError(f"layer '{layer_name}': block_shape[{i}] = -1 (the whole extent) needs a static "
                                    f"dim {i}, got shape {shape}")
            block[i] = d
        elif bv < 1:
            raise ValueError(f"layer '{layer_name}': block_shape[{i}] must be >= 1 or -1, got {bv}")
    return _compose(network, layer_name, input, shape, block, output_type, scale_type, mx, None)


def _reshape_dims(targets: List[List[int]], split_before: List[bool], layer_name: str) -> tuple:
    """Reshape dims from the target extents of each input dim i (a dynamic one -1): 0 (copy) for a dynamic dim with
    no blocked dim before it (it keeps its position on both sides of the reshape), -1 for one other."""
    out: List[int] = []
    for i, piece in enumerate(targets):
        out.extend(v if v >= 0 else (-1 if split_before[i] else 0) for v in piece)
    if out.count(-1) > 1:
        raise _C.ShapeError(f"layer '{layer_name}': more than one dynamic dim after a blocked one")
    return tuple(out)


def _compose(net: Any, layer_name: str, input: Any, shape: tuple, block: List[int], output_type: DataType,
             scale_type: DataType, mx: bool, axis: Any) -> IDynamicQuantizeLayer:
    """The layers: the input split into [.., D/b, b, ..] for each blocked dim, |x|'s block maxima, the scales
    (NVFP4 or MXFP8), the data divided by them and cast, both reshaped back to the input's layout."""
    r = len(shape)
    split = [i for i in range(r) if block[i] > 1]
    for i in split:
        if shape[i] < 0 or shape[i] % block[i]:
            raise _C.ShapeError(f"layer '{layer_name}': the blocked extent (axis {i}) must be static and a multiple "
                                f"of block_size {block[i]}, got {shape[i]} in shape {shape}")
    if not split:
        raise _C.ShapeError(f"layer '{layer_name}': block shape {tuple(block)} blocks no dim (every entry 1)")
    pieces = [[shape[i] // block[i], block[i]] if i in split else [shape[i]] for i in range(r)]
    R = sum(len(p) for p in pieces)
    layers: List[Any] = []

    def L(layer: Any) -> Any:
        layers.append(layer)
        return layer.get_output(0)

    x = input
    if x.dtype == DataType.HALF:
        x = L(net.add_cast(x, DataType.FLOAT))
    before = [any(j in split for j in range(i)) for i in range(r)]
    sh = net.add_shuffle(x)
    sh.reshape_dims = _reshape_dims(pieces, before, layer_name)
    xb = L(sh)                                                            # [.., D/b, b, ..]
    mask, pos = 0, 0
    for p in pieces:
        if len(p) == 2:
            mask |= 1 << (pos + 1)
        pos += len(p)
    amax = L(net.add_reduce(L(net.add_unary(xb, UnaryOperation.ABS)), ReduceOperation.MAX, mask, True))
    if mx:
        q, scale8, dq_users = _mxfp8(net, L, xb, amax, R)
    else:
        one = _const(net, 1.0, R)
        raw = L(net.add_elementwise(amax, _const(net, _FP4_MAX, R), ElementWiseOperation.DIV))
        div_dq = net.add_elementwise(raw, one, ElementWiseOperation.DIV)      # / double_quant_scale
        scale8 = L(net.add_cast(L(div_dq), DataType.FP8))
        mul_dq = net.add_elementwise(L(net.add_cast(scale8, DataType.FLOAT)), one, ElementWiseOperation.PROD)
        eff = L(mul_dq)
        zero = L(net.add_elementwise(eff, _const(net, 0.0, R), ElementWiseOperation.EQUAL))
        safe = L(net.add_select(zero, one, eff))
        q = L(net.add_cast(L(net.add_elementwise(xb, safe, ElementWiseOperation.DIV)), DataType.FP4))
        dq_users = [div_dq, mul_dq]
    back = net.add_shuffle(q)
    back.reshape_dims = _reshape_dims([[shape[i]] for i in range(r)], before, layer_name)
    data = L(back)
    sc = net.add_shuffle(scale8)
    sc.reshape_dims = _reshape_dims([[p[0]] for p in pieces], before, layer_name)
    scales = L(sc)
    a = axis if axis is not None else -1
    bs = block[axis] if axis is not None else 0
    out = IDynamicQuantizeLayer(layer_name, input, a, bs, output_type, scale_type, [data, scales], dq_users, layers)
    object.__setattr__(out, "_block_shape", tuple(block))
    object.__setattr__(out, "_network", net)
    out.name = layer_name
    return out


def _mxfp8(net: Any, L: Any, xb: Any, amax: Any, R: int) -> Any:
    """(FP8 data, E8M0 scales, []) of MXFP8 from the blocked input xb (rank R) and its block maxima amax (exact
    powers of two throughout: see the module docstring)."""
    E = ElementWiseOperation
    up = L(net.add_cast(L(net.add_cast(amax, DataType.E8M0)), DataType.FLOAT))   # 2^ceil(log2 amax)
    above = L(net.add_elementwise(up, amax, E.GREATER))
    p2 = L(net.add_select(above, L(net.add_elementwise(up, _const(net, 0.5, R), E.PROD)), up))
    raw = L(net.add_elementwise(p2, _const(net, 2.0 ** -8, R), E.PROD))
    # below 2^-126 (float32's normal range, where E8M0's cast reads exponents) the scale clamps at 2^-127:
    # 0 is E8M0's code 0, 2^-127
    tiny = L(net.add_elementwise(raw, _const(net, 2.0 ** -126, R), E.LESS))
    raw = L(net.add_select(tiny, _const(net, 0.0, R), raw))
    scale = L(net.add_cast(raw, DataType.E8M0))
    s32 = L(net.add_cast(scale, DataType.FLOAT))
    q = L(net.add_cast(L(net.add_elementwise(xb, s32, E.DIV)), DataType.FP8))     # saturating at 448
    return q, scale, []


_C._set_plugin_hook("_add_dynamic_quantize", add_dynamic_quantize)
_C._set_plugin_hook("_add_dynamic_quantize_v2", add_dynamic_quantize_v2)
