"""Importers of quantization: QuantizeLinear, DequantizeLinear (opsets 10-21).

Each becomes one IQuantizeLayer / IDequantizeLayer (ONNX semantics: round half to even, saturation, zero
points); the builder's fuse_qdq pass turns DQ -> Conv / Gemm / MatMul -> Q chains into int8 computation.  A node
whose inputs are all constants (the quantized weights and int32 biases that quantize_static writes) is computed
while parsing like any other, so Conv and Gemm get their weights as float32 values that are exact multiples of
the weight scales."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._enums import DataType
from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported
from .registry import importer

_INT_TYPES = {np.dtype(np.int8): DataType.INT8, np.dtype(np.uint8): DataType.UINT8}
# onnx.TensorProto values of output_dtype (QuantizeLinear, opset 21) trtlite supports
_OUTPUT_DTYPES = {2: DataType.UINT8, 3: DataType.INT8}


def _scale_and_zero_point(p: ImporterContext, node: Any, a: Dict[str, Any], rank: int
                          ) -> Tuple[np.ndarray, Optional[np.ndarray], int]:
    """(float32 scale, zero point or None, axis normalized to the data's rank)."""
    if int(a.get("block_size", 0)) != 0:
        raise unsupported("blocked quantization (block_size %d): trtlite quantizes per tensor or per channel"
                          % int(a["block_size"]))
    scale = p._cval(p._inp(node, 1), "scale (input 1)")
    if not np.issubdtype(scale.dtype, np.floating):
        raise Fail(ErrorCode.INVALID_NODE, "scale must be a floating-point tensor, got %s" % scale.dtype)
    if scale.ndim > 1:
        raise unsupported("a scale of shape %s: trtlite quantizes per tensor (scalar scale) or per channel (1-D)"
                          % (scale.shape,))
    scale = np.ascontiguousarray(scale.astype(np.float32)).reshape(scale.shape)
    if not np.all(np.isfinite(scale)) or not np.all(scale > 0):
        raise Fail(ErrorCode.INVALID_NODE, "scales must be positive and finite, got %s" % scale.reshape(-1)[:8])
    zp = None
    zname = p._inp(node, 2)
    if zname is not None:
        zp = p._cval(zname, "zero point (input 2)")
        if np.dtype(zp.dtype) not in _INT_TYPES:
            raise unsupported("zero point of type %s (trtlite quantizes to int8 or uint8)" % zp.dtype)
        if zp.shape != scale.shape and zp.size != scale.size:
            raise Fail(ErrorCode.INVALID_NODE, "zero point of shape %s differs from the scale's %s"
                       % (zp.shape, scale.shape))
        zp = zp.reshape(scale.shape)
    axis = int(a.get("axis", 1))
    if scale.size > 1:
        if not -rank <= axis < rank:
            raise Fail(ErrorCode.INVALID_NODE, "axis %d is out of range for an input of rank %d" % (axis, rank))
        axis = axis + rank if axis < 0 else axis
    else:
        axis = -1
    return scale, zp, axis


def _attach(p: ImporterContext, layer: Any, scale: np.ndarray, zp: Optional[np.ndarray], axis: int,
            int_type: DataType) -> Any:
    layer.axis = axis
    if zp is not None:
        layer.set_input(2, p._const_tensor(zp, int_type))
    return p._L(layer)


@importer("QuantizeLinear",
          restrictions=("scale and zero point constants; per tensor or per channel (1-D scale along axis); int8 or "
                        "uint8 output (no int4/int16/float8); block_size (blocked quantization) is refused"),
          opsets=(10, None))
def _quantize_linear(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    scale, zp, axis = _scale_and_zero_point(p, node, a, len(x.shape))
    if "output_dtype" in a and int(a["output_dtype"]) != 0:
        od = int(a["output_dtype"])
        if od not in _OUTPUT_DTYPES:
            raise unsupported("output_dtype %d (trtlite quantizes to int8 or uint8)" % od)
        out_t = _OUTPUT_DTYPES[od]
        if zp is not None and _INT_TYPES[np.dtype(zp.dtype)] != out_t:
            raise Fail(ErrorCode.INVALID_NODE, "output_dtype and the zero point's type %s differ" % zp.dtype)
    else:
        out_t = _INT_TYPES[np.dtype(zp.dtype)] if zp is not None else DataType.UINT8  # ONNX: uint8 without one
    layer = p.network.add_quantize(x, p._const_tensor(scale, DataType.FLOAT), out_t)
    return [_attach(p, layer, scale, zp, axis, out_t)]


@importer("DequantizeLinear",
          restrictions=("scale and zero point constants; per tensor or per channel (1-D scale along axis); int8 or "
                        "uint8 data computed at run time (constant data of any type, int32 biases included, is "
                        "computed while parsing); block_size (blocked quantization) is refused"),
          opsets=(10, None))
def _dequantize_linear(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    scale, zp, axis = _scale_and_zero_point(p, node, a, len(x.shape))
    int_t = _INT_TYPES[np.dtype(zp.dtype)] if zp is not None else None
    if x.dtype not in (DataType.INT8, DataType.UINT8):
        # an int8/uint8 graph input travels as INT32 inside the network: back to its own type
        if x.dtype != DataType.INT32:
            raise unsupported("DequantizeLinear of a %s tensor computed at run time (int8 or uint8 only)"
                              % DataType(x.dtype).name)
        x = p._cast(x, int_t or DataType.INT8)
    if int_t is not None and x.dtype != int_t:
        raise Fail(ErrorCode.INVALID_NODE, "the zero point's type %s differs from the input's %s"
                   % (zp.dtype, DataType(x.dtype).name))
    layer = p.network.add_dequantize(x, p._const_tensor(scale, DataType.FLOAT))
    return [_attach(p, layer, scale, zp, axis, DataType(x.dtype))]
