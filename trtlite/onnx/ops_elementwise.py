"""Importers of elementwise ops: unary math, binary arithmetic and comparisons, Max/Min/Sum/Mean, Mod,
Where, IsNaN, IsInf, Cast, CastLike."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .._enums import DataType, ElementWiseOperation, UnaryOperation
from .context import ImporterContext
from .dtypes import (ML_NAME, ML_STORAGE, T_BFLOAT16, T_BOOL, T_DOUBLE, T_FLOAT, T_FLOAT16, T_INT32, T_INT64, TRT_NP, onnx_to_trt,
                     trt_of_np)
from .errors import ErrorCode, Fail, unsupported
from .registry import importer


_UNARY = {
    "Sqrt": UnaryOperation.SQRT, "Exp": UnaryOperation.EXP, "Log": UnaryOperation.LOG, "Erf": UnaryOperation.ERF,
    "Abs": UnaryOperation.ABS, "Neg": UnaryOperation.NEG, "Reciprocal": UnaryOperation.RECIP,
    "Floor": UnaryOperation.FLOOR, "Ceil": UnaryOperation.CEIL, "Sin": UnaryOperation.SIN,
    "Cos": UnaryOperation.COS, "Tan": UnaryOperation.TAN, "Asin": UnaryOperation.ASIN,
    "Acos": UnaryOperation.ACOS, "Atan": UnaryOperation.ATAN, "Sinh": UnaryOperation.SINH,
    "Cosh": UnaryOperation.COSH, "Asinh": UnaryOperation.ASINH, "Acosh": UnaryOperation.ACOSH,
    "Atanh": UnaryOperation.ATANH, "Sign": UnaryOperation.SIGN, "Round": UnaryOperation.ROUND,
    "Not": UnaryOperation.NOT,
}

_BINARY = {
    "Add": ElementWiseOperation.SUM, "Sub": ElementWiseOperation.SUB, "Mul": ElementWiseOperation.PROD,
    "Div": ElementWiseOperation.DIV, "Pow": ElementWiseOperation.POW, "Equal": ElementWiseOperation.EQUAL,
    "Greater": ElementWiseOperation.GREATER, "Less": ElementWiseOperation.LESS, "And": ElementWiseOperation.AND,
    "Or": ElementWiseOperation.OR, "Xor": ElementWiseOperation.XOR,
}

_VARIADIC = {"Max": ElementWiseOperation.MAX, "Min": ElementWiseOperation.MIN, "Sum": ElementWiseOperation.SUM,
             "Mean": ElementWiseOperation.SUM}


@importer(*_UNARY.keys(),
          restrictions="floating-point input (Abs, Neg, Sign and Not take any type)")
def _unary_op(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    op = _UNARY[node.op_type]
    if node.op_type not in ("Abs", "Neg", "Sign", "Not"):
        x = p._float(x)
    return [p._unary(x, op)]


@importer("IsNaN",
          restrictions="floating-point input")
def _isnan(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    return [p._unary(p._ew(x, x, ElementWiseOperation.EQUAL), UnaryOperation.NOT)]


@importer("IsInf",
          restrictions="floating-point input")
def _isinf(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    neg, pos = int(a.get("detect_negative", 1)), int(a.get("detect_positive", 1))
    inf = p._unary(x, UnaryOperation.ISINF)
    if neg and pos:
        return [inf]
    if not neg and not pos:
        return [p._ew(inf, p._unary(inf, UnaryOperation.NOT), ElementWiseOperation.AND)]
    sign = p._ew_const(x, np.float32(0.0), ElementWiseOperation.GREATER if pos else ElementWiseOperation.LESS)
    return [p._ew(inf, sign, ElementWiseOperation.AND)]


def _legacy_axis(p: ImporterContext, node: Any, names: Sequence[str]) -> Optional[int]:
    """Opset < 7's explicit broadcast (broadcast=1, axis=k): B's dims line up with A's from dim k, not from
    the end as numpy's do.  The axis (normalized) when that applies, else None."""
    if p._opset >= 7 or len(names) != 2:
        return None
    at = {x.name: x for x in node.attribute}
    if "broadcast" not in at or not at["broadcast"].i or "axis" not in at:
        return None
    return int(at["axis"].i)


def _arith_operands(p: ImporterContext, node: Any, names: Sequence[str]) -> List[Any]:
    ts = p._operands(names)
    axis = _legacy_axis(p, node, names)
    if axis is not None:
        bshape = p._consts[names[1]].shape if names[1] in p._consts else tuple(p._tensors[names[1]].shape)
        ra, rb = len(ts[0].shape), len(bshape)
        axis = p._norm_axis(axis, ra)
        if axis + rb > ra or any(d < 0 for d in bshape):
            raise Fail(ErrorCode.INVALID_NODE, "B of shape %s cannot broadcast from axis %d of a rank-%d A"
                       % (tuple(bshape), axis, ra))
        if axis + rb != ra:
            ts[1] = p._reshape(ts[1], [1] * axis + list(bshape) + [1] * (ra - axis - rb), zero_is_placeholder=False)
    # int8 / uint8 tensors (graph inputs keep those types for Q/DQ) compute as the INT32 that carries every other
    # integer type; _wrap8 brings an arithmetic result back to 8 bits
    ts = [p._cast(t, DataType.INT32) if t.dtype in (DataType.INT8, DataType.UINT8) else t for t in ts]
    dts = {t.dtype for t in ts}
    if len(dts) > 1:  # e.g. Pow(float, int): ONNX allows the exponent's type to differ
        ts = [ts[0]] + [p._cast(t, ts[0].dtype) for t in ts[1:]]
    return ts


def _int8_kind(p: ImporterContext, names: Sequence[str]) -> Optional[DataType]:
    """INT8 or UINT8 when the first operand computed at run time has that type (its ONNX type is int8 / uint8)."""
    for n in names:
        if n in p._tensors:
            dt = DataType(p._tensors[n].dtype)
            return dt if dt in (DataType.INT8, DataType.UINT8) else None
    return None


def _wrap8(p: ImporterContext, y: Any, kind: Optional[DataType]) -> Any:
    """An INT32 arithmetic result of int8 / uint8 operands wrapped to 8 bits as ONNX (numpy) computes it, in the
    carried form (sign- or zero-extended)."""
    if kind is None or y.dtype != DataType.INT32:
        return y
    from .ops_bitwise import _narrow
    return _narrow(p, y, 8, kind == DataType.INT8)


@importer(*_BINARY.keys(),
          restrictions=("a second operand of another type is cast to the first's (Pow's exponent); int8 / uint8 "
                        "compute as INT32, results wrapped to 8 bits"))
def _binary(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = _BINARY[node.op_type]
    kind = _int8_kind(p, node.input[:2])
    a_t, b_t = _arith_operands(p, node, node.input[:2])
    if op == ElementWiseOperation.EQUAL and a_t.dtype == DataType.BOOL:
        a_t, b_t = p._cast(a_t, DataType.INT32), p._cast(b_t, DataType.INT32)
    return [_wrap8(p, p._L(p.network.add_elementwise(a_t, b_t, op)), kind)]


@importer("GreaterOrEqual", "LessOrEqual",
          restrictions="a second operand of another type is cast to the first's")
def _cmp_or_equal(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    a_t, b_t = _arith_operands(p, node, node.input[:2])
    inv = ElementWiseOperation.LESS if node.op_type == "GreaterOrEqual" else ElementWiseOperation.GREATER
    return [p._unary(p._L(p.network.add_elementwise(a_t, b_t, inv)), UnaryOperation.NOT)]


@importer(*_VARIADIC.keys(),
          restrictions="operands of another type are cast to the first's")
def _variadic(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = _VARIADIC[node.op_type]
    names = [n for n in node.input if n]
    kind = _int8_kind(p, names)
    ts = _arith_operands(p, node, names)
    y = ts[0]
    for t in ts[1:]:
        y = p._L(p.network.add_elementwise(y, t, op))
    if node.op_type == "Mean" and len(ts) > 1:
        y = p._ew_const(y, np.array(len(ts), dtype=TRT_NP[DataType(y.dtype)]), ElementWiseOperation.DIV)
    if len(ts) == 1:
        y = p._L(p.network.add_identity(y))
    return [_wrap8(p, y, kind)]


def _select(p: ImporterContext, c: Any, t: Any, e: Any) -> Any:
    """Select(c, t, e) with the three brought to one rank first (numpy broadcasting)."""
    r = max(len(c.shape), len(t.shape), len(e.shape))
    c, t, e = (p._unsqueeze_to(v, r) if len(v.shape) < r else v for v in (c, t, e))
    return p._L(p.network.add_select(c, t, e))


def _fmod_float(p: ImporterContext, x: Any, y: Any) -> Any:
    """C's fmod over floats: x - trunc(x / y) * y, and x itself where the quotient truncates to 0 (so that a
    finite x over an infinite y gives x, not x - 0 * inf = NaN).  NaN where x is infinite or y is 0."""
    E, U = ElementWiseOperation, UnaryOperation
    q = p._ew(x, y, E.DIV)
    t = p._ew(p._unary(q, U.SIGN), p._unary(p._unary(q, U.ABS), U.FLOOR), E.PROD)
    r = p._ew(x, p._ew(y, t, E.PROD), E.SUB)
    return _select(p, p._ew_const(t, 0.0, E.EQUAL), x, r)


@importer("Mod",
          restrictions="none")
def _mod(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x, y = _arith_operands(p, node, node.input[:2])
    E = ElementWiseOperation
    if x.dtype in (DataType.INT32, DataType.INT64):
        op = E.DIV if int(a.get("fmod", 0)) else E.FLOOR_DIV  # integer DIV truncates, as C's % does
        q = p._L(p.network.add_elementwise(x, y, op))
        return [p._ew(x, p._ew(y, q, E.PROD), E.SUB)]
    r = _fmod_float(p, x, y)
    if int(a.get("fmod", 0)):
        return [r]
    # numpy's mod (Python's %): the remainder takes the divisor's sign -- r + y where r is nonzero and of the
    # other sign (so -3 mod inf is inf, 3 mod inf is 3), and a zero remainder is a zero of y's sign.
    r_neg = p._ew_const(r, 0.0, E.LESS)
    y_neg = p._ew_const(y, 0.0, E.LESS)
    r_zero = p._ew_const(r, 0.0, E.EQUAL)
    flip = p._ew(p._ew(r_neg, y_neg, E.XOR), p._unary(r_zero, UnaryOperation.NOT), E.AND)
    r = _select(p, flip, p._ew(r, y, E.SUM), r)
    signed_zero = _select(p, y_neg, p._const_tensor(np.array(-0.0, np.float32).reshape((1,) * len(y.shape)),
                                                     DataType.FLOAT),
                          p._const_tensor(np.zeros((1,) * len(y.shape), np.float32), DataType.FLOAT))
    return [_select(p, r_zero, signed_zero, r)]


@importer("Where",
          restrictions="none")
def _where(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    c, t, e = node.input[:3]
    dtype = None
    for n in (t, e):
        if n in p._tensors:
            dtype = p._tensors[n].dtype
            break
    if dtype is None:
        dtype = trt_of_np(p._cval(t).dtype)
    vals = p._operands([c, t, e], dtype, {0: DataType.BOOL})
    cond = vals[0]
    if cond.dtype != DataType.BOOL:
        cond = p._cast(cond, DataType.BOOL)
    return [p._L(p.network.add_select(cond, vals[1], vals[2]))]


@importer("Cast", "CastLike",
          restrictions=("no STRING target; 64-bit integers are carried as INT32 (INT64 where an int64 graph input "
                        "only meets INT64-capable ops, or a Cast to int64 meets a constant beyond int32), double as "
                        "FLOAT; float8 / float4 / "
                        "4- and 2-bit integer types are storage types (trt.DataType), saturate honoured; FLOAT8E8M0 "
                        "only with round_mode 'up'"))
def _cast_op(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    if node.op_type == "Cast":
        to = int(a["to"])
        dt = onnx_to_trt(to)
    else:
        ln = node.input[1]
        if p._is_const(ln):
            v = p._consts[ln]
            to = {np.dtype(np.float32): T_FLOAT, np.dtype(np.float64): T_DOUBLE, np.dtype(np.float16): T_FLOAT16,
                  np.dtype(np.bool_): T_BOOL}.get(v.dtype, T_INT64)
            dt = ML_STORAGE.get(v.dtype.name) or onnx_to_trt(to)
        else:
            dt = p._tensors[ln].dtype
            to = {DataType.FLOAT: T_FLOAT, DataType.BOOL: T_BOOL}.get(dt, T_INT32)
            if dt not in ML_NAME:
                dt = onnx_to_trt(to)
    if dt is None:
        raise unsupported("Cast to ONNX type %d" % to, ErrorCode.UNSUPPORTED_NODE_DATATYPE)
    if to == T_INT64 and x.dtype == DataType.INT64:  # an INT64 graph input kept wide (model_importer.py)
        return [x]
    if to == T_INT64 and node.output[0] in getattr(p, "_wide_casts", ()):  # meets constants beyond int32
        dt = DataType.INT64
    rm = a.get("round_mode", "up")
    rm = rm.decode() if isinstance(rm, bytes) else str(rm)
    if dt == DataType.E8M0 and rm != "up":
        raise unsupported("Cast to FLOAT8E8M0 with round_mode '%s' (trtlite rounds up, ONNX's default)" % rm,
                          ErrorCode.UNSUPPORTED_NODE_ATTR)
    if node.op_type == "Cast" and to == T_BFLOAT16 and x.dtype != DataType.BOOL:
        # bfloat16 is computed in FLOAT inside: round to its grid (cast there and back).  (Cast to FLOAT16 keeps
        # the float32 values, as before: rounding there but not at the ops between moved fp16 graphs such as
        # attention_4d_causal_fp16_expanded further from their reference.)
        x16 = p.network.add_cast(x, DataType.BF16)
        p._name_layer(x16, "round")
        x = x16.get_output(0)
    if x.dtype == dt:
        return [x]
    layer = p.network.add_cast(x, dt)
    if not int(a.get("saturate", 1)):
        layer.saturate = False
    return [p._L(layer)]
