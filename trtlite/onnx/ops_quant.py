"""Importers of quantization: QuantizeLinear, DequantizeLinear (opsets 10-21).

Each becomes one IQuantizeLayer / IDequantizeLayer (ONNX semantics: round half to even, saturation, zero
points); the builder's fuse_qdq pass turns DQ -> Conv / Gemm / MatMul -> Q chains into int8 computation.  A node
whose inputs are all constants (the quantized weights and int32 biases that quantize_static writes) is computed
while parsing like any other, so Conv and Gemm get their weights as float32 values that are exact multiples of
the weight scales."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._enums import DataType
from .dtypes import ML_STORAGE, ONNX_STORAGE
from .context import ImporterContext
from .errors import ErrorCode, Fail, bound_dims_constant, unsupported
from .registry import importer

_INT_TYPES = {np.dtype(np.int8): DataType.INT8, np.dtype(np.uint8): DataType.UINT8}
# onnx.TensorProto values of output_dtype (QuantizeLinear, opset 21) trtlite supports: int8, uint8 and the
# storage types (float8 formats, float4 e2m1, 4- and 2-bit integers)
_OUTPUT_DTYPES = {2: DataType.UINT8, 3: DataType.INT8}
_OUTPUT_DTYPES.update({k: v for k, v in ONNX_STORAGE.items() if v != DataType.E8M0})
_QTYPES = set(_OUTPUT_DTYPES.values())


def _zp_type(zp: np.ndarray) -> Optional[DataType]:
    """trtlite type of a zero point's numpy dtype (None: unsupported)."""
    if zp.dtype.name in ML_STORAGE:
        return ML_STORAGE[zp.dtype.name]
    return _INT_TYPES.get(np.dtype(zp.dtype))


def _scale_and_zero_point(p: ImporterContext, node: Any, a: Dict[str, Any], rank: int
                          ) -> Tuple[np.ndarray, Optional[np.ndarray], int]:
    """(float32 scale, zero point or None, axis normalized to the data's rank)."""
    block = int(a.get("block_size", 0))
    scale = p._cval(p._inp(node, 1), "scale (input 1)")
    if not np.issubdtype(scale.dtype, np.floating):
        raise Fail(ErrorCode.INVALID_NODE, "scale must be a floating-point tensor, got %s" % scale.dtype)
    if block:
        # blocked quantization: the scale has the data's rank; trtlite (as TensorRT) infers the block size from
        # the dims, so blocks must split the axis evenly
        axis = int(a.get("axis", 1))
        xs = p._tensor(node.input[0]).shape
        if scale.ndim != rank or not -rank <= axis < rank:
            raise Fail(ErrorCode.INVALID_NODE, "block_size %d needs a scale of the input's rank %d and an axis in "
                       "range, got scale %s, axis %d" % (block, rank, scale.shape, axis))
        axis = axis + rank if axis < 0 else axis
        if xs[axis] < 0 or scale.shape[axis] * block != xs[axis]:
            raise unsupported("blocked quantization with block_size %d over a dim of %d split into %d blocks: "
                              "trtlite needs equal blocks (dim = blocks * block_size)"
                              % (block, xs[axis], scale.shape[axis]))
    elif scale.ndim > 1:
        raise unsupported("a scale of shape %s: trtlite quantizes per tensor (scalar scale) or per channel (1-D)"
                          % (scale.shape,))
    scale = np.ascontiguousarray(scale.astype(np.float32)).reshape(scale.shape)
    if not np.all(np.isfinite(scale)) or not np.all(scale > 0):
        raise Fail(ErrorCode.INVALID_NODE, "scales must be positive and finite, got %s" % scale.reshape(-1)[:8])
    zp = None
    zname = p._inp(node, 2)
    if zname is not None:
        zp = p._cval(zname, "zero point (input 2)")
        if _zp_type(zp) is None:
            raise unsupported("zero point of type %s (trtlite quantizes to int8, uint8 and the float8 / float4 / "
                              "4- and 2-bit types)" % zp.dtype)
        if zp.shape != scale.shape and zp.size != scale.size:
            raise Fail(ErrorCode.INVALID_NODE, "zero point of shape %s differs from the scale's %s"
                       % (zp.shape, scale.shape))
        zp = zp.reshape(scale.shape)
    axis = int(a.get("axis", 1))
    if scale.size > 1 or block:
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
          restrictions=("scale and zero point constants; per tensor, per channel (1-D scale along axis) or blocked "
                        "(block_size dividing the axis evenly); int8, uint8, float8, float4 e2m1, int4/uint4, int2/uint2 "
                        "output (no int16); float8 outputs saturate"),
          opsets=(10, None))
def _quantize_linear(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    if _runtime_params(p, node):
        return [_q_runtime(p, node, a, x)]
    scale, zp, axis = _scale_and_zero_point(p, node, a, len(x.shape))
    if "output_dtype" in a and int(a["output_dtype"]) != 0:
        od = int(a["output_dtype"])
        if od not in _OUTPUT_DTYPES:
            raise unsupported("output_dtype %d (trtlite quantizes to int8, uint8 and the float8 / float4 / 4- and "
                              "2-bit types)" % od)
        out_t = _OUTPUT_DTYPES[od]
        if zp is not None and _zp_type(zp) != out_t:
            raise Fail(ErrorCode.INVALID_NODE, "output_dtype and the zero point's type %s differ" % zp.dtype)
    else:
        out_t = _zp_type(zp) if zp is not None else DataType.UINT8  # ONNX: uint8 without one
    if out_t not in _QTYPES:
        raise unsupported("QuantizeLinear to %s" % DataType(out_t).name)
    if not int(a.get("saturate", 1)) and out_t in (DataType.FP8, DataType.FP8E5M2, DataType.FP8E4M3FNUZ,
                                                   DataType.FP8E5M2FNUZ):
        raise unsupported("saturate=0: trtlite's quantization to float8 saturates")
    layer = p.network.add_quantize(x, p._const_tensor(scale, DataType.FLOAT), out_t)
    return [_attach(p, layer, scale, zp, axis, out_t)]


@importer("DequantizeLinear",
          restrictions=("scale and zero point constants; per tensor, per channel (1-D scale along axis) or blocked "
                        "(block_size dividing the axis evenly); int8, uint8, float8, float4 e2m1, int4/uint4 or "
                        "int2/uint2 data computed at run time (constant data of any type, int32 biases included, is "
                        "computed while parsing)"),
          opsets=(10, None))
def _dequantize_linear(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    if _runtime_params(p, node):
        return [_dq_runtime(p, node, a, x)]
    scale, zp, axis = _scale_and_zero_point(p, node, a, len(x.shape))
    int_t = _zp_type(zp) if zp is not None else None
    if x.dtype in _QTYPES and x.dtype not in (DataType.INT8, DataType.UINT8):
        if int_t is not None and int_t != x.dtype:
            raise Fail(ErrorCode.INVALID_NODE, "the zero point's type %s differs from the input's %s"
                       % (zp.dtype, DataType(x.dtype).name))
    elif x.dtype not in (DataType.INT8, DataType.UINT8):
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


# ---- scale / zero point computed at run time (graph inputs, DynamicQuantizeLinear's expansion) -----------------
#
# TensorRT's Q/DQ layers (and trtlite's, network/qdq_check.c) need build-time constant scales.  A node whose scale
# or zero point is known only at run time becomes the same arithmetic in plain layers instead (trtlite's own
# lowering, no fusion):  DQ  y = (float(x) - float(zp)) * scale   (float8 / float4 data: float(x) * scale)
#                        Q   y = cast(clip(round_half_even(x / scale) + zp, lo, hi))   (integer targets)
#                            y = cast_saturating(x / scale [+ zp for float4])            (float8 / float4 targets)
# with per-axis scales reshaped along `axis` and blocked ones repeated along it (a gather), so each operand
# broadcasts to the data.  int16 / uint16 are carried as INT32 (as every ONNX 16-bit integer is).

_INT_RANGE = {DataType.INT8: (-128, 127), DataType.UINT8: (0, 255), DataType.INT4: (-8, 7), DataType.UINT4: (0, 15),
              DataType.INT2: (-2, 1), DataType.UINT2: (0, 3)}
_ONNX_INT16 = {"uint16": (0, 65535), "int16": (-32768, 32767)}  # carried as INT32
_INT16_OF_ONNX = {4: "uint16", 5: "int16"}
_FLOAT8 = (DataType.FP8, DataType.FP8E5M2, DataType.FP8E4M3FNUZ, DataType.FP8E5M2FNUZ)


def _runtime_params(p: ImporterContext, node: Any) -> bool:
    return any(n is not None and not p._is_const(n) for n in (p._inp(node, 1), p._inp(node, 2)))


def _onnx_elem(p: ImporterContext, name: str) -> Optional[int]:
    """The ONNX element type of `name`: a graph input's or value_info's, or the `to` of the Cast making it."""
    g = p._model.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if vi.name == name and vi.type.HasField("tensor_type"):
            return int(vi.type.tensor_type.elem_type)
    for n in g.node:
        if name in n.output and n.op_type == "Cast":
            for at in n.attribute:
                if at.name == "to":
                    return int(at.i)
    return None


def _operand(p: ImporterContext, name: str) -> Any:
    if p._is_const(name):
        v = p._cval(name)
        return p._const_tensor(v, DataType.FLOAT if np.issubdtype(v.dtype, np.floating) else None)
    return p._tensor(name)


def _aligned(p: ImporterContext, t: Any, xshape: Sequence[int], axis: int, block: int) -> Any:
    """Scale or zero point `t` shaped to broadcast against data of shape `xshape`."""
    r = len(xshape)
    shape = tuple(t.shape)
    n = int(np.prod(shape)) if shape else 1
    if (block or n != 1) and not 0 <= axis < r:
        raise Fail(ErrorCode.INVALID_NODE, "axis %d is out of range for an input of rank %d" % (axis, r))
    if block:
        if len(shape) != r or xshape[axis] < 0 or shape[axis] < 0 or shape[axis] * block < xshape[axis]:
            raise Fail(ErrorCode.INVALID_NODE, "block_size %d: scale %s does not block the input %s along axis %d"
                       % (block, shape, tuple(xshape), axis))
        bound_dims_constant(xshape[axis], "block_size %d along axis %d of %s: the scale's gather index table"
                            % (block, axis, tuple(xshape)))
        return p._gather_axis(t, axis, np.arange(xshape[axis]) // block)
    if n == 1:
        return p._reshape(t, [1] * r) if len(shape) != r else t
    if len(shape) != 1:
        raise unsupported("a scale of shape %s without block_size" % (shape,))
    dims = [1] * r
    dims[axis] = shape[0]
    return p._reshape(t, dims)


def _layout(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any) -> Tuple[int, int]:
    r = len(x.shape)
    axis = int(a.get("axis", 1))  # checked where a scale needs it (_aligned)
    return (axis + r if axis < 0 else axis), int(a.get("block_size", 0))


def _zero_point_type(p: ImporterContext, name: Optional[str], a: Dict[str, Any]) -> Any:
    """trtlite type (or an ONNX 16-bit integer code) of the quantized side; UINT8 without any."""
    od = int(a.get("output_dtype", 0))
    if od:
        return _OUTPUT_DTYPES.get(od) or _INT16_OF_ONNX.get(od)
    if name is None:
        return DataType.UINT8
    if p._is_const(name):
        t = _zp_type(p._cval(name))
        if t is not None:
            return t
        return {np.dtype(np.int16): "int16", np.dtype(np.uint16): "uint16"}.get(np.dtype(p._cval(name).dtype))
    t = p._tensor(name).dtype
    if t in _QTYPES:
        return t
    e = _onnx_elem(p, name)
    return {2: DataType.UINT8, 3: DataType.INT8}.get(e) or _INT16_OF_ONNX.get(e)


def _q_runtime(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any) -> Any:
    from .._enums import ElementWiseOperation as EW, UnaryOperation
    axis, block = _layout(p, node, a, x)
    zname = p._inp(node, 2)
    qt = _zero_point_type(p, zname, a)
    if qt is None or (not isinstance(qt, str) and qt not in _QTYPES):
        raise unsupported("QuantizeLinear to this zero point's type (run-time scale)")
    s = _aligned(p, p._float(_operand(p, p._inp(node, 1)), "scale (input 1)"), x.shape, axis, block)
    v = p._ew(x, s, EW.DIV)
    zf = None
    if zname is not None and (isinstance(qt, str) or qt not in _FLOAT8):
        zf = _aligned(p, p._cast(_operand(p, zname), DataType.FLOAT), x.shape, axis, block)
    if not isinstance(qt, str) and (qt in _FLOAT8 or qt == DataType.FP4):
        if zf is not None:
            v = p._ew(v, zf, EW.SUM)
        layer = p.network.add_cast(v, qt)
        if qt in _FLOAT8 and not int(a.get("saturate", 1)):
            layer.saturate = False
        return p._L(layer)
    v = p._unary(v, UnaryOperation.ROUND)
    if zf is not None:
        v = p._ew(v, zf, EW.SUM)
    lo, hi = _ONNX_INT16[qt] if isinstance(qt, str) else _INT_RANGE[qt]
    v = p._ew_const(v, np.float32(lo), EW.MAX)
    v = p._ew_const(v, np.float32(hi), EW.MIN)
    return p._cast(v, DataType.INT32 if isinstance(qt, str) else qt)


def _dq_runtime(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any) -> Any:
    from .._enums import ElementWiseOperation as EW
    axis, block = _layout(p, node, a, x)
    s = _aligned(p, p._float(_operand(p, p._inp(node, 1)), "scale (input 1)"), x.shape, axis, block)
    xf = p._cast(x, DataType.FLOAT)
    zname = p._inp(node, 2)
    if zname is not None and x.dtype not in _FLOAT8 and x.dtype != DataType.FP4:
        xf = p._ew(xf, _aligned(p, p._cast(_operand(p, zname), DataType.FLOAT), x.shape, axis, block), EW.SUB)
    return p._ew(xf, s, EW.PROD)
