"""INetworkDefinition.add_dynamic_quantize: TensorRT 10's IDynamicQuantizeLayer (NVFP4 block quantization with
scales computed at run time), composed from existing layers.

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

Output 0 has the input's shape (FP4 codes, one a byte, as trtlite stores its storage types); output 1 has it too
except along `axis`, which is divided by the block size (FP8 codes).  TensorRT also accepts FP8 output with E8M0
(MXFP8) scales and 2-D block shapes in its newest releases; trtlite refuses those with an error naming the layer.
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
        """The blocked axis (as given, normalized to >= 0)."""
        return self._axis

    @property
    def block_size(self) -> int:
        """Elements a block."""
        return self._block_size

    @property
    def to_type(self) -> DataType:
        """The quantized output's type (FP4)."""
        return self._to_type

    @property
    def scale_type(self) -> DataType:
        """The scales' type (FP8)."""
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


def add_dynamic_quantize(network: Any, input: Any, axis: int, block_size: int, output_type: Any,
                         scale_type: Any) -> IDynamicQuantizeLayer:
    """add_dynamic_quantize(input, axis, block_size, output_type, scale_type) -> IDynamicQuantizeLayer."""
    net = network
    layer_name = "(Unnamed Layer* %d) [DynamicQuantize]" % net.num_layers
    for what, v in (("axis", axis), ("block_size", block_size)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"add_dynamic_quantize(): {what} must be an int, not {type(v).__name__}")
    output_type, scale_type = DataType(output_type), DataType(scale_type)
    if output_type != DataType.FP4 or scale_type != DataType.FP8:
        raise _C.UnsupportedError(f"layer '{layer_name}': trtlite's dynamic quantization is NVFP4 only "
                                  f"(output_type FP4, scale_type FP8), got {output_type.name} / {scale_type.name}")
    if input.dtype not in (DataType.FLOAT, DataType.HALF):
        raise _C.DTypeError(f"layer '{layer_name}': the input must be FLOAT or HALF, got {input.dtype.name}")
    shape = tuple(input.shape)
    r = len(shape)
    if r not in (2, 3):
        raise _C.ShapeError(f"layer '{layer_name}': the input must be 2-D or 3-D (as TensorRT's), got shape {shape}")
    a = int(axis) + r if axis < 0 else int(axis)
    if a not in (r - 1, r - 2):
        raise _C.ShapeError(f"layer '{layer_name}': axis {axis} must be the last or second to last of {r} dims")
    bs = int(block_size)
    if bs < 1:
        raise ValueError(f"layer '{layer_name}': block_size must be >= 1, got {bs}")
    d = shape[a]
    if d < 0 or d % bs:
        raise _C.ShapeError(f"layer '{layer_name}': the blocked extent (axis {a}) must be static and a multiple of "
                            f"block_size {bs}, got {d} in shape {shape}")
    layers: List[Any] = []

    def L(layer: Any) -> Any:
        layers.append(layer)
        return layer.get_output(0)

    trail = [-1] if a == r - 2 else []
    x = input
    if x.dtype == DataType.HALF:
        x = L(net.add_cast(x, DataType.FLOAT))
    sh = net.add_shuffle(x)
    sh.reshape_dims = tuple([0] * a + [d // bs, bs] + trail)
    xb = L(sh)                                                            # [.., D/bs, bs, (T)]
    amax = L(net.add_reduce(L(net.add_unary(xb, UnaryOperation.ABS)), ReduceOperation.MAX, 1 << (a + 1), True))
    one = _const(net, 1.0, r + 1)
    raw = L(net.add_elementwise(amax, _const(net, _FP4_MAX, r + 1), ElementWiseOperation.DIV))
    div_dq = net.add_elementwise(raw, one, ElementWiseOperation.DIV)      # / double_quant_scale
    scale8 = L(net.add_cast(L(div_dq), DataType.FP8))
    mul_dq = net.add_elementwise(L(net.add_cast(scale8, DataType.FLOAT)), one, ElementWiseOperation.PROD)
    eff = L(mul_dq)
    zero = L(net.add_elementwise(eff, _const(net, 0.0, r + 1), ElementWiseOperation.EQUAL))
    safe = L(net.add_select(zero, one, eff))
    q = L(net.add_cast(L(net.add_elementwise(xb, safe, ElementWiseOperation.DIV)), DataType.FP4))
    back = net.add_shuffle(q)
    back.reshape_dims = tuple([0] * a + [d] + trail)
    data = L(back)
    sc = net.add_shuffle(scale8)
    sc.reshape_dims = tuple([0] * a + [d // bs] + trail)
    scales = L(sc)
    out = IDynamicQuantizeLayer(layer_name, input, a, bs, output_type, scale_type, [data, scales],
                                [div_dq, mul_dq], layers)
    object.__setattr__(out, "_network", net)
    out.name = layer_name
    return out


_C._set_plugin_hook("_add_dynamic_quantize", add_dynamic_quantize)
