"""Quantized ops whose scales and zero points may be computed at run time: QLinearMatMul, QLinearConv,
MatMulInteger, ConvInteger, DynamicQuantizeLinear.

Both are composed from FLOAT layers, so their quantization parameters can be graph inputs (TensorRT's Q/DQ
layers, and trtlite's, need constant scales): integer codes are cast to FLOAT (exact), zero points subtracted,
the products accumulated by IMatrixMultiplyLayer in FLOAT (exact while the sums of code products stay below
2^24, i.e. K <= 258 for 8-bit codes), and results rounded half to even (UnaryOperation.ROUND), clamped and cast
back to INT8 / UINT8, as ONNX's reference computes them.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from .._enums import DataType, ElementWiseOperation, MatrixOperation, ReduceOperation, UnaryOperation
from .context import ImporterContext
from .dtypes import T_INT8, T_UINT8
from .errors import ErrorCode, Fail
from .ops_bitwise import onnx_elem_type
from .registry import importer

E, U = ElementWiseOperation, UnaryOperation
_CODE = {T_INT8: (DataType.INT8, -128, 127), T_UINT8: (DataType.UINT8, 0, 255)}


def _code_type(p: ImporterContext, node: Any, name: str, what: str) -> Any:
    t = onnx_elem_type(p, name)
    if t not in _CODE:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "%s: %s '%s' must be int8 or uint8, got ONNX type %d"
                   % (node.op_type, what, name, t))
    return _CODE[t]


def _as_float(p: ImporterContext, name: str) -> Any:
    t = p._tensor(name, DataType.FLOAT)
    return t if t.dtype == DataType.FLOAT else p._cast(t, DataType.FLOAT)


def _scalar_or_vector(p: ImporterContext, node: Any, name: str, what: str, row: Optional[int]) -> Any:
    """A FLOAT scale / zero point: a scalar, or a 1-D tensor (per row of A when `row` is its length's axis
    position from the end, 2 -> shaped [M, 1]; per column otherwise)."""
    t = _as_float(p, name)
    if len(t.shape) > 1:
        raise Fail(ErrorCode.INVALID_NODE, "%s: %s '%s' must be a scalar or 1-D, got shape %s"
                   % (node.op_type, what, name, tuple(t.shape)))
    if len(t.shape) == 1 and row is not None and t.shape[0] != 1:
        t = p._reshape(t, [-1, 1], zero_is_placeholder=False)
    return t


def _matmul(p: ImporterContext, A: Any, B: Any) -> Any:
    """ONNX MatMul of FLOAT tensors (1-D operands as vectors, batch dims broadcast)."""
    M = MatrixOperation
    ra, rb = len(A.shape), len(B.shape)
    op0 = M.VECTOR if ra == 1 else M.NONE
    op1 = M.VECTOR if rb == 1 else M.NONE
    ba, bb = ra - (1 if ra == 1 else 2), rb - (1 if rb == 1 else 2)
    if ba < bb:
        A = p._unsqueeze_to(A, ra + bb - ba)
    elif bb < ba:
        B = p._unsqueeze_to(B, rb + ba - bb)
    return p._L(p.network.add_matrix_multiply(A, op0, B, op1))


def _quantize(p: ImporterContext, v: Any, zp: Any, qmin: int, qmax: int, out_t: DataType) -> Any:
    """clip(rint(v) + zp, qmin, qmax) as `out_t` (v, zp FLOAT; zp integral)."""
    q = p._ew(p._unary(v, U.ROUND), zp, E.SUM)
    q = p._ew_const(p._ew_const(q, np.float32(qmin), E.MAX), np.float32(qmax), E.MIN)
    return p._cast(q, out_t)


@importer("QLinearMatMul",
          restrictions=("int8 / uint8 codes; scales and zero points scalars or 1-D (per row of A / per column of "
                        "B), constants or computed at run time; exact while K <= 258"),
          opsets=(10, None))
def _qlinear_matmul(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """y = clip(rint(((a - a_zp) @ (b - b_zp)) * (a_scale * b_scale / y_scale)) + y_zp): the integer matrix
    product computed exactly in FLOAT, then requantized (ONNX's reference order)."""
    if len(node.input) < 8 or not all(node.input[:8]):
        raise Fail(ErrorCode.INVALID_NODE, "QLinearMatMul needs its 8 inputs")
    an, asn, azn, bn, bsn, bzn, ysn, yzn = node.input[:8]
    _code_type(p, node, an, "input a")
    _code_type(p, node, bn, "input b")
    out_t, qmin, qmax = _code_type(p, node, yzn, "y_zero_point")
    A = p._ew(_as_float(p, an), _scalar_or_vector(p, node, azn, "a_zero_point", 2), E.SUB)
    B = p._ew(_as_float(p, bn), _scalar_or_vector(p, node, bzn, "b_zero_point", None), E.SUB)
    C = _matmul(p, A, B)
    scale = p._ew(p._ew(_scalar_or_vector(p, node, asn, "a_scale", 2), _scalar_or_vector(p, node, bsn, "b_scale",
                                                                                           None), E.PROD),
                  _scalar_or_vector(p, node, ysn, "y_scale", None), E.DIV)
    return [_quantize(p, p._ew(C, scale, E.PROD), _scalar_or_vector(p, node, yzn, "y_zero_point", None),
                      qmin, qmax, out_t)]


@importer("DynamicQuantizeLinear",
          restrictions="FLOAT input (uint8 output, as ONNX defines)",
          opsets=(11, None))
def _dynamic_quantize_linear(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """ONNX's definition over the whole tensor: max = max(0, max(x)), min = min(0, min(x)); scale = (max - min)
    / 255 (1 / 255 when they are equal); zp = rint(clip(-min / scale, 0, 255)); y = clip(rint(x / scale) + zp,
    0, 255).  Outputs y (UINT8), y_scale (FLOAT scalar), y_zero_point (UINT8 scalar)."""
    x = p._float(p._tensor(node.input[0]), "DynamicQuantizeLinear's input")
    r = len(x.shape)
    if r == 0:
        x1 = p._reshape(x, [1], zero_is_placeholder=False)
        r1 = 1
    else:
        x1, r1 = x, r
    mask = (1 << r1) - 1
    hi = p._ew_const(p._L(p.network.add_reduce(x1, ReduceOperation.MAX, mask, False)), np.float32(0), E.MAX)
    lo = p._ew_const(p._L(p.network.add_reduce(x1, ReduceOperation.MIN, mask, False)), np.float32(0), E.MIN)
    span = p._ew(hi, lo, E.SUB)
    one = p._const_tensor(np.float32(1.0), DataType.FLOAT)
    span = p._L(p.network.add_select(p._ew(hi, lo, E.EQUAL), one, span))
    scale = p._ew_const(span, np.float32(255.0), E.DIV)
    zp_f = p._ew(p._ew_const(lo, np.float32(0), E.SUB, const_first=True), scale, E.DIV)
    zp_f = p._unary(p._ew_const(p._ew_const(zp_f, np.float32(0), E.MAX), np.float32(255), E.MIN), U.ROUND)
    scale_b = p._reshape(scale, [1] * r, zero_is_placeholder=False) if r else scale
    zp_b = p._reshape(zp_f, [1] * r, zero_is_placeholder=False) if r else zp_f
    y = _quantize(p, p._ew(x, scale_b, E.DIV), zp_b, 0, 255, DataType.UINT8)
    return [y, scale, p._cast(zp_f, DataType.UINT8)]


@importer("MatMulInteger",
          restrictions="int8 / uint8 operands; zero points scalars or 1-D (per row of A / per column of B); exact "
                       "while K <= 258 (INT32 result)",
          opsets=(10, None))
def _matmul_integer(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """y = (a - a_zp) @ (b - b_zp) as INT32: the products summed exactly in FLOAT, then cast."""
    an, bn = node.input[0], node.input[1]
    _code_type(p, node, an, "input A")
    _code_type(p, node, bn, "input B")
    A, B = _as_float(p, an), _as_float(p, bn)
    azn, bzn = p._inp(node, 2), p._inp(node, 3)
    if azn:
        _code_type(p, node, azn, "a_zero_point")
        A = p._ew(A, _scalar_or_vector(p, node, azn, "a_zero_point", 2), E.SUB)
    if bzn:
        _code_type(p, node, bzn, "b_zero_point")
        B = p._ew(B, _scalar_or_vector(p, node, bzn, "b_zero_point", None), E.SUB)
    return [p._cast(_matmul(p, A, B), DataType.INT32)]


def _int_conv(p: ImporterContext, node: Any, a: Dict[str, Any], xn: str, wn: str, xzn: Optional[str],
              wzn: Optional[str]) -> Any:
    """conv(x - x_zp, w - w_zp) in FLOAT (exact while the sums stay below 2^24): zero padding of the shifted
    input is padding with x_zp, as ONNX's reference pads; ops_conv_tensor's im2col and matrix multiplies."""
    from .ops_conv_tensor import conv_tensor_weights
    _code_type(p, node, xn, "input x")
    _code_type(p, node, wn, "input w")
    x, w = _as_float(p, xn), _as_float(p, wn)
    if xzn:
        _code_type(p, node, xzn, "x_zero_point")
        z = _as_float(p, xzn)
        if len(z.shape) > 1 or (len(z.shape) == 1 and z.shape[0] != 1):
            raise Fail(ErrorCode.INVALID_NODE, "%s's x_zero_point must be a scalar, got shape %s"
                       % (node.op_type, tuple(z.shape)))
        x = p._ew(x, z, E.SUB)
    if wzn:
        _code_type(p, node, wzn, "w_zero_point")
        w = p._ew(w, _per_channel(p, _as_float(p, wzn), len(w.shape), 0), E.SUB)
    return conv_tensor_weights(p, node, a, x, w)


def _per_channel(p: ImporterContext, t: Any, rank: int, axis: int) -> Any:
    """A scalar, or a 1-D tensor of one value per channel shaped to broadcast along `axis` of a rank-`rank` tensor."""
    if len(t.shape) == 1 and t.shape[0] != 1:
        return p._reshape(t, [1] * axis + [-1] + [1] * (rank - axis - 1), zero_is_placeholder=False)
    return t


@importer("ConvInteger",
          restrictions="int8 / uint8 operands; x_zero_point a scalar, w_zero_point a scalar or one per output "
                       "channel; the convolution of run-time weights (im2col, static weights and spatial dims); "
                       "exact while the sums stay below 2^24",
          opsets=(10, None))
def _conv_integer(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """y = conv(x - x_zp, w - w_zp) as INT32."""
    return [p._cast(_int_conv(p, node, a, node.input[0], node.input[1], p._inp(node, 2), p._inp(node, 3)),
                    DataType.INT32)]


@importer("QLinearConv",
          restrictions="int8 / uint8 codes; x_scale, x_zero_point, y_scale, y_zero_point scalars, w_scale / "
                       "w_zero_point scalars or one per output channel, constants or computed at run time; the "
                       "convolution of run-time weights (im2col); exact while the sums stay below 2^24",
          opsets=(10, None))
def _qlinear_conv(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """y = clip(rint((conv(x - x_zp, w - w_zp) + B) * (x_scale * w_scale / y_scale)) + y_zp): the integer
    convolution computed exactly in FLOAT, the INT32 bias added, then requantized (ONNX's reference order)."""
    if len(node.input) < 8 or not all(node.input[:8]):
        raise Fail(ErrorCode.INVALID_NODE, "QLinearConv needs its 8 inputs (x, x_scale, x_zero_point, w, w_scale, "
                   "w_zero_point, y_scale, y_zero_point)")
    xn, xsn, xzn, wn, wsn, wzn, ysn, yzn = node.input[:8]
    out_t, qmin, qmax = _code_type(p, node, yzn, "y_zero_point")
    y = _int_conv(p, node, a, xn, wn, xzn, wzn)
    r = len(y.shape)
    bn = p._inp(node, 8)
    if bn:
        y = p._ew(y, _per_channel(p, _as_float(p, bn), r, 1), E.SUM)
    scale = p._ew(p._ew(_as_float(p, xsn), _per_channel(p, _as_float(p, wsn), r, 1), E.PROD), _as_float(p, ysn),
                  E.DIV)
    return [_quantize(p, p._ew(y, scale, E.PROD), _as_float(p, yzn), qmin, qmax, out_t)]
