"""Integer bit operations: BitwiseAnd/Or/Xor/Not, BitShift, BitCast.

Integers are carried as INT32 inside a network (int8/uint8/int16/uint16 sign- or zero-extended, 32- and 64-bit
types as their low 32 bits), so each importer computes on INT32 with the trtlite layers made for it
(ElementWiseOperation.BITWISE_AND/OR/XOR, SHIFT_LEFT/RIGHT, UnaryOperation.BITWISE_NOT) and then brings a result of
a narrower ONNX type back to its carried form (``_narrow``): a left shift or a NOT of a uint8 keeps only 8 bits,
one of an int8 is sign-extended from bit 7.  The ONNX type of an operand is read from the model (graph inputs,
value_info, initializers, constants); where the model does not state it, the carried type decides (INT8 / UINT8
network inputs, else a signed 32-bit integer).
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from .._enums import DataType, ElementWiseOperation, UnaryOperation
from .context import ImporterContext
from .dtypes import (T_BOOL, T_DOUBLE, T_FLOAT, T_FLOAT16, T_INT8, T_INT16, T_INT32, T_INT64, T_UINT8, T_UINT16,
                     T_UINT32, T_UINT64, T_BFLOAT16)
from .errors import ErrorCode, Fail, unsupported
from .isolated import infer_shapes as infer_shapes_isolated
from .registry import importer

E, U = ElementWiseOperation, UnaryOperation

# ONNX integer type -> (bits, signed)
_INT_TYPES = {T_INT8: (8, True), T_UINT8: (8, False), T_INT16: (16, True), T_UINT16: (16, False),
              T_INT32: (32, True), T_UINT32: (32, False), T_INT64: (64, True), T_UINT64: (64, False)}
_NP_TO_ONNX = {np.dtype(np.int8): T_INT8, np.dtype(np.uint8): T_UINT8, np.dtype(np.int16): T_INT16,
               np.dtype(np.uint16): T_UINT16, np.dtype(np.int32): T_INT32, np.dtype(np.uint32): T_UINT32,
               np.dtype(np.int64): T_INT64, np.dtype(np.uint64): T_UINT64, np.dtype(np.bool_): T_BOOL,
               np.dtype(np.float32): T_FLOAT, np.dtype(np.float64): T_DOUBLE, np.dtype(np.float16): T_FLOAT16}


def onnx_elem_type(p: ImporterContext, name: str) -> int:
    """The ONNX element type of value `name`: as the model declares it (graph input / output, value_info,
    initializer) or onnx's type inference gives it, a constant's numpy type, else guessed from the carried type
    (INT8, UINT8, BOOL, FLOAT; other integers: int32)."""
    types = _declared_types(p)
    if name in types:
        return types[name]
    if name in p._consts:
        return _NP_TO_ONNX.get(np.asarray(p._consts[name]).dtype, T_INT32)
    t = p._tensors.get(name)
    if t is None:
        return T_INT32
    return {DataType.INT8: T_INT8, DataType.UINT8: T_UINT8, DataType.BOOL: T_BOOL, DataType.FLOAT: T_FLOAT,
            DataType.HALF: T_FLOAT16}.get(DataType(t.dtype), T_INT32)


def _declared_types(p: ImporterContext) -> Dict[str, int]:
    """name -> ONNX element type for the values the model declares or onnx's type inference gives (run once per
    parse, in a child process as the parser's shape inference is: isolated.py), initializers included."""
    cache = p.__dict__.get("_onnx_elem_types")
    if cache is not None:
        return cache
    cache = {}
    p.__dict__["_onnx_elem_types"] = cache
    model = p._model
    try:
        import onnx
        m = onnx.ModelProto()
        m.CopyFrom(model)
        del m.graph.initializer[:]  # types only: no weights needed
        have = set(i.name for i in m.graph.input)
        for init in model.graph.initializer:
            if init.name not in have:
                vi = m.graph.input.add()
                vi.name = init.name
                vi.type.tensor_type.elem_type = init.data_type
                for d in init.dims:
                    vi.type.tensor_type.shape.dim.add().dim_value = d
        inferred = infer_shapes_isolated(m, data_prop=False) or m
    except Exception:
        inferred = model
    g = inferred.graph
    for vi in list(g.value_info) + list(g.output) + list(g.input):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            cache[vi.name] = int(vi.type.tensor_type.elem_type)
    for init in model.graph.initializer:
        cache[init.name] = int(init.data_type)
    return cache


def _int_type(p: ImporterContext, node: Any, name: str, what: str) -> Tuple[int, bool]:
    t = onnx_elem_type(p, name)
    if t not in _INT_TYPES:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "%s: %s '%s' must be an integer tensor, got ONNX type %d"
                   % (node.op_type, what, name, t))
    return _INT_TYPES[t]


def _int32(p: ImporterContext, t: Any) -> Any:
    """`t` as INT32 (INT8 / UINT8 / BOOL extended)."""
    if t.dtype == DataType.INT32:
        return t
    if t.dtype in (DataType.FLOAT, DataType.HALF):
        raise Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "expected an integer tensor, got %s" % DataType(t.dtype).name)
    return p._cast(t, DataType.INT32)


def _narrow(p: ImporterContext, v: Any, bits: int, signed: bool) -> Any:
    """INT32 `v` brought to the carried form of a `bits`-wide integer: its low bits, zero-extended (unsigned) or
    sign-extended ((v & m) ^ s) - s; 32- and 64-bit types are carried as all 32 bits."""
    if bits >= 32:
        return v
    m = p._ew_const(v, np.int32((1 << bits) - 1), E.BITWISE_AND)
    if not signed:
        return m
    s = np.int32(1 << (bits - 1))
    return p._ew_const(p._ew_const(m, s, E.BITWISE_XOR), s, E.SUB)


@importer("BitwiseAnd", "BitwiseOr", "BitwiseXor",
          restrictions="integer types, carried as INT32 (64-bit values keep their low 32 bits)")
def _bitwise(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """IElementWiseLayer BITWISE_AND / OR / XOR (trtlite's INT32 extension) with numpy broadcasting; sign- or
    zero-extended operands give the extended result, so no narrowing is needed."""
    for k in range(2):
        _int_type(p, node, node.input[k], "input %d" % k)
    x, y = (_int32(p, t) for t in p._operands(node.input[:2], DataType.INT32))
    op = {"BitwiseAnd": E.BITWISE_AND, "BitwiseOr": E.BITWISE_OR, "BitwiseXor": E.BITWISE_XOR}[node.op_type]
    return [p._ew(x, y, op)]


@importer("BitwiseNot",
          restrictions="integer types, carried as INT32 (64-bit values keep their low 32 bits)")
def _bitwise_not(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """IUnaryLayer BITWISE_NOT (trtlite's INT32 extension); an unsigned 8/16-bit result keeps its low bits."""
    bits, signed = _int_type(p, node, node.input[0], "input")
    x = _int32(p, p._tensor(node.input[0]))
    return [_narrow(p, p._unary(x, U.BITWISE_NOT), bits, signed)]


@importer("BitShift",
          restrictions=("integer types, carried as INT32 (64-bit values keep their low 32 bits); amounts outside "
                        "0..width-1 give 0 (LEFT, and RIGHT of unsigned types) or the sign fill (RIGHT of signed "
                        "types), as ONNX's reference"))
def _bitshift(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """IElementWiseLayer SHIFT_LEFT / SHIFT_RIGHT on INT32.  Narrow types: the left shift's bits past the type's
    width are dropped (``_narrow``), which also makes a shift by width..31 give 0; the arithmetic right shift of a
    sign- or zero-extended value is the shift at the type's width, including the out-of-range sign fill.  Unsigned
    32/64-bit types (carried with bit 31 as a sign) shift right logically: the arithmetic shift masked with
    ~(-1 << (32 - y)), and 0 where y is outside 0..31."""
    direction = a.get("direction", "")
    if direction not in ("LEFT", "RIGHT"):
        raise Fail(ErrorCode.INVALID_NODE, "BitShift's direction must be LEFT or RIGHT, got '%s'" % direction)
    bits, signed = _int_type(p, node, node.input[0], "input X")
    _int_type(p, node, node.input[1], "input Y")
    x, y = (_int32(p, t) for t in p._operands(node.input[:2], DataType.INT32))
    if direction == "LEFT":
        return [_narrow(p, p._ew(x, y, E.SHIFT_LEFT), bits, signed)]
    r = p._ew(x, y, E.SHIFT_RIGHT)
    if bits < 32 or signed:
        return [r]
    minus_one = p._const_tensor(np.full((1,) * len(y.shape), -1, np.int32), DataType.INT32)
    keep = p._unary(p._ew(minus_one, p._ew_const(y, np.int32(32), E.SUB, const_first=True), E.SHIFT_LEFT),
                    U.BITWISE_NOT)
    r = p._ew(r, keep, E.BITWISE_AND)
    valid = p._ew(p._ew_const(y, np.int32(-1), E.GREATER), p._ew_const(y, np.int32(32), E.LESS), E.AND)
    zero = p._const_tensor(np.zeros((1,) * len(r.shape), np.int32), DataType.INT32)
    rk = max(len(valid.shape), len(r.shape))
    valid, r = (p._unsqueeze_to(t, rk) if len(t.shape) < rk else t for t in (valid, r))
    return [p._L(p.network.add_select(valid, r, p._unsqueeze_to(zero, rk)))]


@importer("BitCast",
          restrictions=("between integer types of one width (carried as INT32: the value is re-read at the new "
                        "type's width and signedness) and bool <-> 8-bit integers; not between floating-point and "
                        "integer types (no reinterpreting layer), nor 64-bit types (trtlite carries them in 32 "
                        "bits)"))
def _bitcast(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Same-width integer types: the carried INT32 brought to the new type's carried form (``_narrow``); bool to
    an 8-bit integer is 0 / 1, an 8-bit integer to bool is nonzero (ONNX bool bytes are 0 or 1)."""
    if "to" not in a:
        raise Fail(ErrorCode.INVALID_NODE, "BitCast needs the attribute 'to'")
    to = int(a["to"])
    src = onnx_elem_type(p, node.input[0])
    x = p._tensor(node.input[0])
    if src == to:
        return [x]
    widths = {T_BOOL: 8, T_FLOAT: 32, T_FLOAT16: 16, T_BFLOAT16: 16, T_DOUBLE: 64}
    for t, (b, _) in _INT_TYPES.items():
        widths[t] = b
    if src not in widths or to not in widths:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "BitCast from ONNX type %d to %d is not supported"
                   % (src, to))
    if widths[src] != widths[to]:
        raise Fail(ErrorCode.INVALID_NODE, "BitCast needs types of one width, got %d-bit ONNX type %d and %d-bit "
                   "ONNX type %d" % (widths[src], src, widths[to], to))
    if src in _INT_TYPES and to in _INT_TYPES and widths[src] < 64:
        bits, signed = _INT_TYPES[to]
        return [_narrow(p, _int32(p, x), bits, signed)]
    if src == T_BOOL and to in (T_INT8, T_UINT8):
        return [p._cast(x, DataType.INT32)]
    if to == T_BOOL and src in (T_INT8, T_UINT8):
        return [p._cast(x, DataType.BOOL)]
    raise unsupported("BitCast from ONNX type %d to %d (floating-point or 64-bit bits; trtlite carries 64-bit "
                      "types in 32 bits and has no reinterpreting layer)" % (src, to),
                      ErrorCode.UNSUPPORTED_NODE_DATATYPE)
