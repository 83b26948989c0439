"""ONNX parser: fills a trtlite network from an ONNX model, as TensorRT's ``trt.OnnxParser`` does.

Usage (exactly as with TensorRT)::

    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file("model.onnx"):
        for i in range(parser.num_errors):
            print(parser.get_error(i))

The parser is pure Python over the network API and needs the optional ``onnx`` package
(``pip install trtlite[onnx]``); it is imported when a parser is created.

How a model is mapped
---------------------
* Graph inputs become network inputs.  ``dim_param`` (or missing) dims become -1: add an optimization
  profile for them.  Types: float/double/bfloat16 -> FLOAT; float16 -> HALF input cast to FLOAT at
  once (outputs declared float16 are cast back to HALF); every integer type but int8/uint8 -> INT32
  (trtlite has no 64-bit integers: int64 inputs and outputs are INT32); bool -> BOOL.
* Each node maps to one or a few layers named after the node (extra layers get ``<node>/<n>``); the
  tensors a node produces keep their ONNX names.
* Values that do not depend on the inputs (initializers, Constant, and chains such as
  Shape -> Gather -> Unsqueeze -> Concat over static shapes) are computed with numpy while parsing and
  become constant layers only where a layer needs them.  A dynamic dimension read by Shape stays a
  symbol; a Reshape whose target holds such a symbol copies the dimension (reshape dim 0) when it is
  the same dimension of the reshaped tensor (by ONNX shape inference), or infers it (-1) when it is the
  only unknown.
* An op with no mapping becomes a plugin layer when the plugin registry has a creator named like the
  op (or like the op plus "_TRT", TensorRT's naming of its plugins: op "Adder2d" finds "Adder2d_TRT"),
  version "1" (or the node's ``plugin_version`` attribute), looked up in the node's domain as
  namespace (or its ``plugin_namespace`` attribute) and then in the default namespace "".  Creating a
  parser registers the built-in plugins (``init_libnvinfer_plugins(None, "")``, as TensorRT's parser
  does; idempotent).  The node's attributes become plugin fields (ints -> INT32, floats -> FLOAT32,
  strings -> CHAR, tensors -> their dtype); its constant inputs (initializers) become fields too -- named
  by the last component of the initializer's name when the creator lists such a field, else the first
  listed field of the array's type that no attribute or earlier input gave, else the first it converts
  to -- and its other inputs become the plugin's inputs.  A value is converted to the type the creator
  declares for its field when that is exact (integral floats to ints, ints in range, ints to floats that
  hold them, float16/float64 to float32); otherwise the node fails naming the field.

Limits
------
* trtlite has no shape tensors, so values computed from dynamic dims at run time are limited to these:
  - Expand targets and ConstantOfShape shapes may hold dynamic dims that are dims of a network tensor
    (cls_token.expand(x.shape[0], -1, -1), torch.zeros(x.size(0), 4)): the value is broadcast at run time
    by a Select against a boolean "carrier" of that dim, gathered from the tensor it was read from.
  - Slice along a dynamic axis with constant bounds: x[s:] and x[s:-k] (step 1) crop with a padding layer
    (the profile must keep the result non-empty); bounds that give a constant count (x[a:b], x[-a:],
    x[-a:-b], x[a::-1], any step) gather those indices, so the axis must be long enough at run time (a
    shorter one fails there with a gather index error, where ONNX would clamp).
  Not supported (UNSUPPORTED_NODE_DYNAMIC): Range, Tile and Resize sizes and Slice bounds computed from
  dynamic dims (torch.arange(x.shape[1]), pe[:x.shape[1]]), dims computed from several dynamic dims
  (Reshape (B*T, C) -> (B, T, C)), and slices of a dynamic axis whose length depends on it otherwise
  (x[::-1], x[-3:5], x[1::2]).  Slicing (Slice, Split, Pad reflect/edge, Expand) along static axes of
  tensors with dynamic dims is lowered to gathers, since ISliceLayer's output shape is static.
* A graph output that is also a graph input (a pass-through such as outputs {y, x}, or a graph with no
  nodes) is an error (UNSUPPORTED_GRAPH): an engine's I/O tensors are bound by name, and one name cannot be
  both an input and an output -- TensorRT refuses such networks too.  Give the output its own name with an
  Identity node.  A graph output that is an initializer becomes a constant output.
* At most 64 graph inputs and outputs in all (MAX_IO_TENSORS: what an execution context binds); more is
  an error while parsing.
* Not mapped (become plugins when a creator exists, else errors): control flow (If/Loop/Scan), NonZero,
  NonMaxSuppression, Scatter*, CumSum, Einsum, RoiAlign, quantization ops on tensors, LpPool, pooling
  with dilations, MaxPool's Indices output, Resize antialias / tf_crop_and_resize /
  tf_half_pixel_for_nn / keep_aspect_ratio_policy, LRN with an even size, ArgMax select_last_index
  along a dynamic axis, string tensors.  Ops over constants only are computed while parsing (numpy,
  or onnx's reference implementation), whatever the op.

Errors
------
``parse`` returns False and records ParserError objects naming the node, its op and the reason:
malformed protobuf (MODEL_DESERIALIZE_FAILED), unsupported opset (UNSUPPORTED_GRAPH), an op with no
mapping and no plugin (UNSUPPORTED_NODE), unsupported attributes or dynamic values
(UNSUPPORTED_NODE_ATTR / UNSUPPORTED_NODE_DYNAMIC ...), malformed nodes (input/output counts against
the op's schema, names that are not valid UTF-8 or hold NUL: INVALID_NODE / INVALID_GRAPH), and anything
the network rejects, such as shape conflicts (INVALID_NODE).  Anything else raised while parsing (a bug)
is caught too and recorded as INTERNAL_ERROR naming the node being imported: ``parse`` never raises.
Parsing stops at the first failing node, as TensorRT's does.
"""
from __future__ import annotations

import enum
import itertools
import math
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _C
from ._enums import (ActivationType, DataType, ElementWiseOperation, GatherMode, InterpolationMode, MatrixOperation,
                     PaddingMode, PluginFieldType, PoolingType, ReduceOperation, ResizeCoordinateTransformation,
                     ResizeRoundMode, ResizeSelector, SampleMode, ScaleMode, Severity, TopKOperation, UnaryOperation)
from .plugins import _field_array

__all__ = ["OnnxParser", "ParserError", "ErrorCode"]

_INSTALL_HINT = ("trtlite's ONNX parser needs the 'onnx' package, which is not installed: "
                 "pip install trtlite[onnx]  (or: pip install onnx)")

MIN_OPSET = 7

# An execution context binds at most this many I/O tensors (csrc/python/py_context.c's run()).
MAX_IO_TENSORS = 64
# add_concatenation takes at most this many inputs (csrc/python/py_network.c); longer Concats are chained.
MAX_CONCAT_INPUTS = 64


def _import_onnx():
    try:
        import onnx  # noqa: F401
        from onnx import numpy_helper  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from e
    return onnx


class ErrorCode(enum.IntEnum):
    """TensorRT's ``trt.ErrorCode`` (the ONNX parser's error codes)."""
    SUCCESS = 0
    INTERNAL_ERROR = 1
    MEM_ALLOC_FAILED = 2
    MODEL_DESERIALIZE_FAILED = 3
    INVALID_VALUE = 4
    INVALID_GRAPH = 5
    INVALID_NODE = 6
    UNSUPPORTED_GRAPH = 7
    UNSUPPORTED_NODE = 8
    UNSUPPORTED_NODE_ATTR = 9
    UNSUPPORTED_NODE_INPUT = 10
    UNSUPPORTED_NODE_DATATYPE = 11
    UNSUPPORTED_NODE_DYNAMIC = 12
    UNSUPPORTED_NODE_SHAPE = 13
    REFIT_FAILED = 14


class ParserError:
    """One parser error, with TensorRT's IParserError accessors."""

    def __init__(self, code: ErrorCode, desc: str, node: int = -1, node_name: str = "", node_operator: str = "",
                 func: str = "") -> None:
        self._code = ErrorCode(code)
        self._desc = desc
        self._node = node
        self._node_name = _text(node_name)
        self._node_operator = _text(node_operator)
        self._func = func

    def code(self) -> ErrorCode:
        return self._code

    def desc(self) -> str:
        return self._desc

    def node(self) -> int:
        """Index of the failing node in the graph (-1 when the error is not about a node)."""
        return self._node

    def node_name(self) -> str:
        return self._node_name

    def node_operator(self) -> str:
        return self._node_operator

    def file(self) -> str:
        return __file__

    def func(self) -> str:
        return self._func

    def line(self) -> int:
        return 0

    def local_function_stack(self) -> List[str]:
        return []

    def local_function_stack_size(self) -> int:
        return 0

    def __str__(self) -> str:
        if self._node >= 0:
            return "In node %d (name '%s', operator '%s'): %s: %s" % (
                self._node, self._node_name, self._node_operator, self._code.name, self._desc)
        return "%s: %s" % (self._code.name, self._desc)

    def __repr__(self) -> str:
        return "<ParserError %s>" % self


class _Fail(Exception):
    """A node (or the graph) cannot be imported; becomes a ParserError."""

    def __init__(self, code: ErrorCode, msg: str) -> None:
        super().__init__(msg)
        self.code = code


def _text(v: Any) -> str:
    """A protobuf string field as text.  protobuf hands back `bytes` for a string field that is not valid
    UTF-8; error messages must still be built from it (with the bad bytes shown as replacement chars)."""
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    return v if isinstance(v, str) else str(v)


def _bad_name(v: Any) -> Optional[str]:
    """Why `v` cannot name a tensor, layer or op (None: it can).  trtlite's names are C strings: a name
    must be text (valid UTF-8) without NUL characters."""
    if not isinstance(v, str):
        return "%r is not valid UTF-8" % (bytes(v) if isinstance(v, (bytes, bytearray)) else v,)
    if "\0" in v:
        return "%r holds a NUL character" % (v,)
    return None


def _unsupported(msg: str, code: ErrorCode = ErrorCode.UNSUPPORTED_NODE_ATTR) -> _Fail:
    return _Fail(code, msg)


class _Dynamic(_Fail):
    def __init__(self, msg: str) -> None:
        super().__init__(ErrorCode.UNSUPPORTED_NODE_DYNAMIC, msg)


# ----------------------------------------------------------------------------------------------------------
# Symbolic dimensions: what Shape gives for a dynamic dim.  Arrays holding them are numpy object arrays.
# ----------------------------------------------------------------------------------------------------------

_OPAQUE = itertools.count()

_NEEDS_VALUE = ("the model needs the value of the dynamic dimension %r while parsing: it is known only at run time, "
                "and trtlite has no shape tensors to compute with it")


class _Sym:
    """An unknown (dynamic) dimension: `key` identifies it (a dim_param name from ONNX shape inference, or
    (tensor, axis) of the tensor Shape read); `origin` is the (tensor, axis) it was read from, if any."""
    __slots__ = ("key", "origin", "depth")

    # Keys of expressions deeper than this become opaque: a key nested thousands deep (a long chain of Adds
    # on a dim) would overflow Python's recursion in hash/==/repr.  An opaque key equals nothing else,
    # which is only more conservative (such a dim is then unsupported wherever it must be matched).
    MAX_DEPTH = 32

    def __init__(self, key: Any, origin: Optional[Tuple[str, int]] = None, depth: int = 0) -> None:
        if depth > _Sym.MAX_DEPTH:
            key = ("(expression)", next(_OPAQUE))
        self.key = key
        self.origin = origin
        self.depth = depth

    def __repr__(self) -> str:
        k = self.key
        if isinstance(k, tuple) and len(k) == 2 and isinstance(k[0], str) and isinstance(k[1], int):
            if k[0] == "(expression)":
                return "<an expression of dynamic dimensions>"
            return "%s[%d]" % k
        return str(k)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, o: Any) -> Any:
        if isinstance(o, _Sym):
            return self.key == o.key
        if isinstance(o, (int, np.integer)) and o < 0:
            return False  # a dimension is never negative
        raise _Dynamic("the model compares the dynamic dimension %r with %r" % (self, o))

    def __ne__(self, o: Any) -> Any:
        return not self.__eq__(o)

    def _bin(self, o: Any, op: str, identity: Optional[int] = None, swap: bool = False) -> Any:
        if identity is not None and not isinstance(o, _Sym) and o == identity:
            return self
        ok = o.key if isinstance(o, _Sym) else int(o)
        depth = max(self.depth, o.depth if isinstance(o, _Sym) else 0) + 1
        return _Sym(("(" + op + ")", ok, self.key) if swap else ("(" + op + ")", self.key, ok), None, depth)

    def __mul__(self, o: Any) -> Any:
        if not isinstance(o, _Sym) and o == 0:
            return 0
        return self._bin(o, "*", 1)

    def __rmul__(self, o: Any) -> Any:
        return self.__mul__(o)

    def __add__(self, o: Any) -> Any:
        return self._bin(o, "+", 0)

    def __radd__(self, o: Any) -> Any:
        return self._bin(o, "+", 0)

    def __sub__(self, o: Any) -> Any:
        return self._bin(o, "-", 0)

    def __rsub__(self, o: Any) -> Any:
        return self._bin(o, "-", None, swap=True)

    def __floordiv__(self, o: Any) -> Any:
        return self._bin(o, "//", 1)

    def __rfloordiv__(self, o: Any) -> Any:
        return self._bin(o, "//", None, swap=True)

    __truediv__ = __floordiv__
    __rtruediv__ = __rfloordiv__

    def __mod__(self, o: Any) -> Any:
        return self._bin(o, "%")

    def __neg__(self) -> Any:
        return _Sym(("neg", self.key), None, self.depth + 1)

    def _cmp(self, o: Any) -> Any:
        raise _Dynamic("the model compares the dynamic dimension %r with %r" % (self, o))

    __lt__ = __le__ = __gt__ = __ge__ = _cmp

    def __index__(self) -> int:
        raise _Dynamic(_NEEDS_VALUE % (self,))

    __int__ = __index__

    def __float__(self) -> float:
        raise _Dynamic(_NEEDS_VALUE % (self,))


def _has_sym(a: Any) -> bool:
    return isinstance(a, np.ndarray) and a.dtype == object and any(isinstance(v, _Sym) for v in a.flat)


def _norm(a: Any) -> np.ndarray:
    """An object array without symbols becomes an int64 (or float/bool) array."""
    a = np.asarray(a)
    if a.dtype == object and not any(isinstance(v, _Sym) for v in a.flat):
        vals = list(a.flat)
        if all(isinstance(v, (bool, np.bool_)) for v in vals) and vals:
            return np.array(vals, dtype=np.bool_).reshape(a.shape)
        if all(isinstance(v, (int, np.integer)) for v in vals):
            return np.array(vals, dtype=np.int64).reshape(a.shape)
        return np.array(vals, dtype=np.float64).reshape(a.shape)
    return a


def _as_obj(a: np.ndarray) -> np.ndarray:
    if a.dtype == object:
        return a
    out = np.empty(a.shape, dtype=object)
    for idx, v in np.ndenumerate(a):
        out[idx] = int(v) if np.issubdtype(a.dtype, np.integer) else v.item()
    return out


# ----------------------------------------------------------------------------------------------------------
# Types
# ----------------------------------------------------------------------------------------------------------

# onnx.TensorProto.DataType values
_T_FLOAT, _T_UINT8, _T_INT8, _T_UINT16, _T_INT16, _T_INT32, _T_INT64, _T_STRING, _T_BOOL, _T_FLOAT16, \
    _T_DOUBLE, _T_UINT32, _T_UINT64 = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
_T_BFLOAT16 = 16

_ONNX_TO_NP = {
    _T_FLOAT: np.float32, _T_UINT8: np.uint8, _T_INT8: np.int8, _T_UINT16: np.uint16, _T_INT16: np.int16,
    _T_INT32: np.int32, _T_INT64: np.int64, _T_BOOL: np.bool_, _T_FLOAT16: np.float16, _T_DOUBLE: np.float64,
    _T_UINT32: np.uint32, _T_UINT64: np.uint64, _T_BFLOAT16: np.float32,
}


def _onnx_to_trt(t: int) -> Optional[DataType]:
    """The trtlite type that carries ONNX type `t` inside the network (None: unsupported)."""
    if t in (_T_FLOAT, _T_DOUBLE, _T_BFLOAT16, _T_FLOAT16):
        return DataType.FLOAT
    if t in (_T_INT32, _T_INT64, _T_INT16, _T_UINT16, _T_UINT32, _T_UINT64, _T_INT8, _T_UINT8):
        return DataType.INT32
    if t == _T_BOOL:
        return DataType.BOOL
    return None


def _trt_of_np(dt: np.dtype) -> DataType:
    dt = np.dtype(dt)
    if dt == np.bool_:
        return DataType.BOOL
    if np.issubdtype(dt, np.integer):
        return DataType.INT32
    return DataType.FLOAT


_TRT_NP = {DataType.FLOAT: np.float32, DataType.INT32: np.int32, DataType.BOOL: np.bool_,
           DataType.HALF: np.float16, DataType.INT8: np.int8, DataType.UINT8: np.uint8}


def _to_dtype(a: np.ndarray, dt: DataType) -> np.ndarray:
    np_t = _TRT_NP[DataType(dt)]
    if np_t == np.int32 and a.dtype != np.int32 and a.size:
        if np.issubdtype(a.dtype, np.integer):
            a = np.clip(a, -2 ** 31, 2 ** 31 - 1)
        elif np.issubdtype(a.dtype, np.floating):
            a = np.trunc(np.nan_to_num(a))
    return np.asarray(a.astype(np_t, copy=False), order="C")  # (ascontiguousarray would make 0-d 1-d)


_FIELD_NP = {"FLOAT16": np.float16, "FLOAT32": np.float32, "FLOAT64": np.float64, "INT8": np.int8,
             "INT16": np.int16, "INT32": np.int32}


def _field_type_of(a: np.ndarray) -> str:
    """The PluginFieldType (member name) an attribute/initializer value has by itself (its array is
    converted with _field_convert): floats keep their width, bool is INT8, wider integers INT32."""
    dt = a.dtype
    if dt == np.float16:
        return "FLOAT16"
    if dt == np.float64:
        return "FLOAT64"
    if dt == np.int8 or dt == np.bool_:
        return "INT8"
    if dt == np.int16:
        return "INT16"
    if dt == np.uint8:
        return "INT8" if a.size == 0 or int(a.max()) <= 127 else "INT16"
    if np.issubdtype(dt, np.integer):
        return "INT32"
    return "FLOAT32"


def _field_convert(a: np.ndarray, ft: str) -> Optional[np.ndarray]:
    """`a` as plugin field type `ft` (a _FIELD_NP key) when the conversion is exact, else None: integers
    must fit, floats become integers only when integral, integers become floats only when representable;
    float16/float64 -> float32 is accepted (float64 rounded to nearest, but not overflowing).  The range and
    integrality checks are PluginField's own (plugins._field_array); a model's value must also survive a
    conversion to a float type narrower than itself or from an integer, which PluginField does not ask."""
    want = np.dtype(_FIELD_NP[ft])
    if a.dtype == want:
        return a
    if a.dtype == np.bool_:
        a = a.astype(np.int8)
    if want.kind == "f" and (a.dtype.kind in "iu" or want.itemsize < 4):
        if a.dtype.kind not in "iuf":
            return None
        with np.errstate(all="ignore"):
            b = a.astype(want)
        return b if np.array_equal(b.astype(a.dtype), a, equal_nan=a.dtype.kind == "f") else None
    try:
        return _field_array(a, PluginFieldType[ft])
    except ValueError:
        return None


# ----------------------------------------------------------------------------------------------------------
# Constant folding (numpy, aware of symbolic dims)
# ----------------------------------------------------------------------------------------------------------

def _attr_ints(a: Dict[str, Any], name: str, default: Any = None) -> Any:
    v = a.get(name, default)
    return None if v is None else [int(x) for x in v]


def _axes_of(p: "OnnxParser", node: Any, a: Dict[str, Any], vals: List[Any], idx: int,
             since: int) -> Optional[List[int]]:
    """`axes` given as an attribute before opset `since` and as input `idx` from it on."""
    if p._opset >= since:
        if idx < len(vals) and vals[idx] is not None:
            return [int(x) for x in np.asarray(vals[idx]).reshape(-1)]
        return None
    return _attr_ints(a, "axes")


def _int_div(x: Any, y: Any) -> Any:
    if isinstance(x, np.ndarray) and x.dtype == object or isinstance(y, np.ndarray) and y.dtype == object:
        return np.floor_divide(x, y)  # only shape arithmetic reaches here (non-negative)
    q = np.abs(x) // np.abs(y)
    return (q * np.sign(x) * np.sign(y)).astype(np.result_type(x, y))


def _onnx_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype == object or y.dtype == object or (np.issubdtype(x.dtype, np.integer) and
                                                  np.issubdtype(y.dtype, np.integer)):
        return _int_div(x, y)
    return (x / y).astype(np.result_type(x, y))


def _same_type(x: np.ndarray, r: Any) -> np.ndarray:
    r = np.asarray(r)
    if x.dtype != object and r.dtype != object and r.dtype != x.dtype:
        r = r.astype(x.dtype)
    return r


def _slice_params(p: "OnnxParser", a: Dict[str, Any], vals: List[Any], rank: int):
    if p._opset < 10:
        starts, ends = _attr_ints(a, "starts", []), _attr_ints(a, "ends", [])
        axes = _attr_ints(a, "axes")
        steps = None
    else:
        starts = list(np.asarray(vals[1]).reshape(-1))
        ends = list(np.asarray(vals[2]).reshape(-1))
        axes = None if len(vals) < 4 or vals[3] is None else [int(x) for x in np.asarray(vals[3]).reshape(-1)]
        steps = None if len(vals) < 5 or vals[4] is None else [int(x) for x in np.asarray(vals[4]).reshape(-1)]
    if axes is None:
        axes = list(range(len(starts)))
    if steps is None:
        steps = [1] * len(starts)
    if not (len(starts) == len(ends) == len(axes) == len(steps)):
        raise _Fail(ErrorCode.INVALID_NODE, "starts, ends, axes and steps have different lengths")
    axes = [ax + rank if ax < 0 else ax for ax in axes]
    for ax in axes:
        if not 0 <= ax < rank:
            raise _Fail(ErrorCode.INVALID_NODE, "axis out of range for an input of rank %d" % rank)
    if len(set(axes)) != len(axes):
        raise _Fail(ErrorCode.INVALID_NODE, "repeated axes %s" % axes)
    for s in steps:
        if s == 0:
            raise _Fail(ErrorCode.INVALID_NODE, "a step is 0")
    return starts, ends, axes, steps


def _clamp_slice(start: int, end: int, step: int, dim: int) -> Tuple[int, int]:
    """ONNX Slice's start and element count for one axis of size dim."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start = min(max(start, 0), dim)
        end = min(max(end, 0), dim)
        count = max(0, -(-(end - start) // step))
    else:
        start = min(max(start, 0), dim - 1)
        end = min(max(end, -1), dim - 1)
        count = max(0, -(-(start - end) // -step))
    return start, count


def _split_sizes(p: "OnnxParser", node: Any, a: Dict[str, Any], vals: List[Any], dim: int) -> List[int]:
    n_out = len(node.output)
    split = None
    if p._opset >= 13:
        if len(vals) > 1 and vals[1] is not None:
            split = [int(x) for x in np.asarray(vals[1]).reshape(-1)]
    else:
        split = _attr_ints(a, "split")
    if split is not None:
        if len(split) != n_out:
            raise _Fail(ErrorCode.INVALID_NODE, "split %s has %d entries for %d outputs" % (split, len(split), n_out))
        if dim >= 0 and sum(split) != dim:
            raise _Fail(ErrorCode.INVALID_NODE, "split %s does not sum to the axis size %d" % (split, dim))
        return split
    if dim < 0:
        raise _Dynamic("Split along a dynamic axis needs explicit split sizes")
    if "num_outputs" in a:
        n = int(a["num_outputs"])
        if n != n_out:
            raise _Fail(ErrorCode.INVALID_NODE, "num_outputs %d but the node has %d outputs" % (n, n_out))
        chunk = -(-dim // n)
        sizes = [chunk] * (n - 1) + [dim - chunk * (n - 1)]
        if sizes[-1] < 0:
            raise _Fail(ErrorCode.INVALID_NODE, "cannot split %d into %d outputs" % (dim, n))
        return sizes
    if dim % n_out:
        raise _Fail(ErrorCode.INVALID_NODE, "axis size %d is not divisible by the %d outputs" % (dim, n_out))
    return [dim // n_out] * n_out


def _reduce_axes(p: "OnnxParser", node: Any, a: Dict[str, Any], vals: List[Any], rank: int) -> List[int]:
    since = 13 if node.op_type == "ReduceSum" else 18
    axes = _axes_of(p, node, a, vals, 1, since)
    if not axes:
        if int(a.get("noop_with_empty_axes", 0)):
            return []
        axes = list(range(rank))
    return sorted(set(ax + rank if ax < 0 else ax for ax in axes))


def _fold(p: "OnnxParser", node: Any, a: Dict[str, Any], vals: List[Any]) -> List[np.ndarray]:
    """Computes a node over constant inputs (object arrays may hold _Sym dims)."""
    op = node.op_type
    x = vals[0] if vals else None
    if op in ("Identity", "Dropout"):
        outs = [x]
        if len(node.output) > 1:
            outs.append(np.ones(x.shape, dtype=np.bool_))
        return outs
    if op == "Cast":
        to = int(a["to"])
        if x.dtype == object:
            return [x]
        if to == _T_STRING:
            raise _unsupported("Cast to STRING", ErrorCode.UNSUPPORTED_NODE_DATATYPE)
        return [x.astype(_ONNX_TO_NP[to])]
    if op == "CastLike":
        return [x if x.dtype == object else x.astype(vals[1].dtype)]
    if op == "Reshape":
        shape = [int(v) for v in (np.asarray(vals[1]).reshape(-1) if p._opset >= 5 else a["shape"])]
        if not int(a.get("allowzero", 0)):
            shape = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
        return [x.reshape(shape)]
    if op == "Flatten":
        axis = int(a.get("axis", 1))
        axis = axis + x.ndim if axis < 0 else axis
        return [x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)]
    if op == "Squeeze":
        axes = _axes_of(p, node, a, vals, 1, 13)
        if axes is None:
            axes = [i for i, d in enumerate(x.shape) if d == 1]
        return [np.squeeze(x, axis=tuple(ax + x.ndim if ax < 0 else ax for ax in axes))]
    if op == "Unsqueeze":
        axes = _axes_of(p, node, a, vals, 1, 13)
        r = x.ndim + len(axes)
        axes = sorted(ax + r if ax < 0 else ax for ax in axes)
        y = x
        for ax in axes:
            y = np.expand_dims(y, ax)
        return [y]
    if op == "Concat":
        parts = [v for v in vals if v is not None]
        if any(v.dtype == object for v in parts):
            parts = [_as_obj(v) for v in parts]
        return [np.concatenate(parts, axis=int(a["axis"]))]
    if op == "Gather":
        idx = np.asarray(vals[1])
        axis = int(a.get("axis", 0))
        return [np.take(x, idx.astype(np.int64), axis=axis)]
    if op == "Slice":
        starts, ends, axes, steps = _slice_params(p, a, vals, x.ndim)
        sl = [slice(None)] * x.ndim
        for s, e, ax, st in zip(starts, ends, axes, steps):
            s0, n = _clamp_slice(int(s), int(e), st, x.shape[ax])
            sl[ax] = slice(s0, s0 + n * st, st) if s0 + n * st >= 0 else slice(s0, None, st)
        return [x[tuple(sl)]]
    if op == "Split":
        axis = int(a.get("axis", 0))
        sizes = _split_sizes(p, node, a, vals, x.shape[axis])
        return list(np.split(x, np.cumsum(sizes)[:-1], axis=axis))
    if op == "Transpose":
        perm = _attr_ints(a, "perm")
        return [np.transpose(x, perm)]
    if op in ("Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal", "Less",
              "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitShift"):
        y = vals[1] if len(vals) > 1 else None
        if op == "Add":
            return [_same_type(x, x + y)]
        if op == "Sub":
            return [_same_type(x, x - y)]
        if op == "Mul":
            return [_same_type(x, x * y)]
        if op == "Div":
            return [_onnx_div(x, y)]
        if op == "Pow":
            return [_same_type(x, np.power(x, y))]
        if op == "Mod":
            if int(a.get("fmod", 0)):
                return [np.fmod(x, y)]
            return [np.mod(x, y)]
        if op in ("Max", "Min", "Sum", "Mean"):
            r = vals[0]
            for v in vals[1:]:
                r = np.maximum(r, v) if op == "Max" else np.minimum(r, v) if op == "Min" else r + v
            if op == "Mean":
                r = r / len(vals)
            return [_same_type(x, r)]
        if op == "Equal":
            return [np.asarray(np.equal(x, y), dtype=np.bool_)]
        if op == "Less":
            return [np.less(x, y)]
        if op == "Greater":
            return [np.greater(x, y)]
        if op == "LessOrEqual":
            return [np.less_equal(x, y)]
        if op == "GreaterOrEqual":
            return [np.greater_equal(x, y)]
        if op == "And":
            return [np.logical_and(x, y)]
        if op == "Or":
            return [np.logical_or(x, y)]
        if op == "Xor":
            return [np.logical_xor(x, y)]
        raise KeyError(op)
    if op == "Not":
        return [np.logical_not(x)]
    if op == "Neg":
        return [-x]
    if op == "Abs":
        return [np.abs(x)]
    if op == "Where":
        r = np.where(np.asarray(x, dtype=np.bool_), vals[1], vals[2])
        return [r if r.dtype == object else r.astype(np.result_type(vals[1], vals[2]))]
    if op == "Range":
        start, limit, delta = (np.asarray(v).reshape(-1)[0] for v in vals[:3])
        n = max(int(math.ceil((limit - start) / delta)), 0)
        return [(start + np.arange(n) * delta).astype(np.asarray(vals[0]).dtype)]
    if op == "ConstantOfShape":
        shape = [int(v) for v in np.asarray(x).reshape(-1)]
        val = a.get("value")
        fill = np.zeros(1, np.float32) if val is None else p._tensor_value(val).reshape(-1)
        return [np.full(shape, fill[0], dtype=fill.dtype)]
    if op == "Expand":
        shape = [int(v) for v in np.asarray(vals[1]).reshape(-1)]
        out = np.broadcast_shapes(x.shape, tuple(shape))
        return [np.array(np.broadcast_to(x, out))]
    if op == "Tile":
        return [np.tile(x, [int(v) for v in np.asarray(vals[1]).reshape(-1)])]
    if op in ("ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean"):
        axes = _reduce_axes(p, node, a, vals, x.ndim)
        keep = bool(int(a.get("keepdims", 1)))
        if not axes:
            return [x]
        f = {"ReduceProd": np.prod, "ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min,
             "ReduceMean": np.mean}[op]
        r = f(x, axis=tuple(axes), keepdims=keep)
        return [np.asarray(r) if x.dtype == object or op == "ReduceMean" else np.asarray(r, dtype=x.dtype)]
    if op == "Shape":
        return [p._shape_value(x.shape, None, a)]
    if op == "Size":
        return [np.array(x.size, dtype=np.int64)]
    raise KeyError(op)


_FOLDABLE = frozenset([
    "Identity", "Dropout", "Cast", "CastLike", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Gather",
    "Slice", "Split", "Transpose", "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal",
    "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not", "Neg", "Abs", "Where", "Range",
    "ConstantOfShape", "Expand", "Tile", "ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean",
    "Shape", "Size"])

# ONNX schemas by (op, opset), for _check_arity (None: not a known op).
_SCHEMAS: Dict[Tuple[str, int], Any] = {}

# Ops never computed while parsing (random or with side effects).
_NOT_FOLDED = frozenset(["RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                         "Bernoulli", "If", "Loop", "Scan"])


# ----------------------------------------------------------------------------------------------------------
# The parser
# ----------------------------------------------------------------------------------------------------------

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

_ACTIVATIONS = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "Elu", "Selu", "Softplus", "Softsign",
                "ThresholdedRelu"}

_REDUCE = {"ReduceMean": ReduceOperation.AVG, "ReduceSum": ReduceOperation.SUM, "ReduceMax": ReduceOperation.MAX,
           "ReduceMin": ReduceOperation.MIN, "ReduceProd": ReduceOperation.PROD}


_BATCH_ONLY = frozenset(["Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool",
                         "GlobalMaxPool", "Resize", "Upsample", "Pad", "LRN", "DepthToSpace", "SpaceToDepth", "Tile",
                         "Expand", "Concat"])


def _infer_keys(node: Any, a: Dict[str, Any], r: int, in_keys: List[List[Any]]) -> Optional[List[Any]]:
    """Symbols of an output of rank r from the inputs' (None: unknown).  Conservative: only where the op
    certainly keeps a dim."""
    if not in_keys:
        return None
    op = node.op_type
    x = in_keys[0]
    if node.domain not in ("", "ai.onnx") or op in _BATCH_ONLY:
        if op == "Concat":  # every dim but the axis
            axis = int(a.get("axis", 0))
            axis = axis + r if axis < 0 else axis
            return [x[i] if i != axis and len(x) == r else None for i in range(r)]
        return [x[0] if len(x) == r and r else None] + [None] * (r - 1) if r else []
    if op == "GatherElements":
        return in_keys[1] if len(in_keys) > 1 and len(in_keys[1]) == r else None
    if op == "GatherND":
        return None
    if op == "Transpose":
        perm = [int(v) for v in a.get("perm", list(range(len(x)))[::-1])]
        return [x[i] for i in perm] if len(perm) == r else None
    if op in ("MatMul", "Gemm"):
        if len(in_keys) < 2:
            return None
        A, B = in_keys[0], in_keys[1]
        if op == "Gemm":
            if len(A) != 2 or len(B) != 2:
                return None
            return [A[1] if int(a.get("transA", 0)) else A[0], B[0] if int(a.get("transB", 0)) else B[1]]
        if len(A) >= 2 and len(B) >= 2:
            ba, bb = A[:-2], B[:-2]
            n = max(len(ba), len(bb))
            ba, bb = [1] * (n - len(ba)) + ba, [1] * (n - len(bb)) + bb
            batch = [u if u != 1 else v for u, v in zip(ba, bb)]
            return batch + [A[-2], B[-1]]
        return None
    if any(len(k) > r for k in in_keys):
        return None  # rank-reducing ops state their symbols themselves
    out: List[Any] = []
    for j in range(r):
        pick = None
        for k in in_keys:
            i = j - (r - len(k))
            if i < 0:
                continue
            v = k[i]
            if v is None or v == 1:
                continue
            pick = v
            break
        out.append(pick)
    return out


def _mask(axes: Sequence[int]) -> int:
    m = 0
    for ax in axes:
        m |= 1 << int(ax)
    return m


def _static(shape: Sequence[int]) -> bool:
    return all(d >= 0 for d in shape)


class OnnxParser:
    """trt.OnnxParser(network, logger): parses ONNX models into an explicit-batch network."""

    def __init__(self, network: Any, logger: Any) -> None:
        _import_onnx()
        self.network = network
        self.logger = logger
        self._errors: List[ParserError] = []
        # TensorRT's ONNX parser registers the built-in plugin library when it is created, so that a
        # custom node finds e.g. Adder2d_TRT without the caller's init_libnvinfer_plugins.  Registering is
        # idempotent and silent (creators already there are skipped); no logger is passed, since that
        # would make this parser's logger the plugin registry's for the whole process.
        try:
            from .plugins import init_libnvinfer_plugins
            init_libnvinfer_plugins(None, "")
        except Exception as e:  # the parser works without them; custom nodes then report the missing plugin
            self._log(Severity.WARNING, "ONNX parser: cannot register the built-in plugins: %s" % (e,))

    # ---- TensorRT API --------------------------------------------------------------------------------------

    def __enter__(self) -> "OnnxParser":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    @property
    def num_errors(self) -> int:
        return len(self._errors)

    def get_error(self, index: int) -> Optional[ParserError]:
        if 0 <= index < len(self._errors):
            return self._errors[index]
        return None

    def clear_errors(self) -> None:
        self._errors = []

    def supports_operator(self, op_name: str) -> bool:
        """True when ops named `op_name` (default domain) have a mapping or a registered plugin creator."""
        if op_name in _IMPORTERS or op_name in _FOLDABLE:
            return True
        return self._find_creator(op_name, "", {}) is not None

    def parse(self, model: Any, path: Optional[str] = None) -> bool:
        """Parses a serialized ModelProto (bytes-like).  `path`: the model file's path, for initializers
        stored as external data (they are read relative to its folder)."""
        onnx = _import_onnx()  # outside the catch-all: a missing onnx package is the caller's ImportError
        self._node_idx, self._node = -1, None
        try:
            return self._parse(onnx, model, path)
        except Exception as e:
            # Whatever a model triggers, parse() reports it as a parser error and returns False, as
            # TensorRT's parser does: a bug must never reach the caller as a raw traceback.
            self._internal_error(e)
            return False

    def _internal_error(self, e: BaseException) -> None:
        """Records an exception that escaped the importers, naming the node being imported (if any)."""
        node = getattr(self, "_node", None)
        idx = getattr(self, "_node_idx", -1) if node is not None else -1
        code = ErrorCode.MEM_ALLOC_FAILED if isinstance(e, MemoryError) else ErrorCode.INTERNAL_ERROR
        what = "importing this node" if idx >= 0 else "parsing the graph"
        try:
            text = str(e)
        except Exception:  # an exception that cannot even print itself
            text = "(no message)"
        desc = "unexpected %s while %s: %s (a bug in trtlite's ONNX parser; please report it with the model)" \
            % (type(e).__name__, what, text)
        try:
            self._error(code, desc, idx, node.name if idx >= 0 else "", node.op_type if idx >= 0 else "", "parse")
        except Exception:  # the report itself must not raise either
            self._errors.append(ParserError(code, "unexpected %s" % type(e).__name__))

    def _parse(self, onnx: Any, model: Any, path: Optional[str]) -> bool:
        try:
            data = bytes(model)
        except TypeError:
            self._error(ErrorCode.INVALID_VALUE, "parse() needs the serialized model as bytes, got %s"
                        % type(model).__name__)
            return False
        proto = onnx.ModelProto()
        try:
            proto.ParseFromString(data)
        except Exception as e:  # google.protobuf.message.DecodeError, RuntimeWarning-ish errors
            self._error(ErrorCode.MODEL_DESERIALIZE_FAILED,
                        "the data is not a valid ONNX model (protobuf decoding failed: %s)" % (e,))
            return False
        base = os.path.dirname(os.path.abspath(path)) if path else None
        return self._parse_proto(proto, base)

    def parse_from_file(self, model: str) -> bool:
        """Parses the model in file `model`; initializers in external data files are read relative to it."""
        try:
            with open(model, "rb") as f:
                data = f.read()
        except OSError as e:
            self._error(ErrorCode.INVALID_VALUE, "cannot read model file '%s': %s" % (model, e))
            return False
        return self.parse(data, path=model)

    def supports_model(self, model: Any, path: Optional[str] = None) -> Tuple[bool, List[Tuple[List[int], bool]]]:
        """(all ops supported, [(node indices, supported)]) -- a static check of the ops only."""
        onnx = _import_onnx()
        proto = onnx.ModelProto()
        try:
            proto.ParseFromString(bytes(model))
            if any(_bad_name(n.op_type) or _bad_name(n.domain) for n in proto.graph.node):
                return False, []
        except Exception:
            return False, []
        groups: List[Tuple[List[int], bool]] = []
        for i, n in enumerate(proto.graph.node):
            ok = (n.domain in ("", "ai.onnx") and (n.op_type in _IMPORTERS or n.op_type in _FOLDABLE)) or \
                self._find_creator(n.op_type, n.domain, {}) is not None
            if groups and groups[-1][1] == ok:
                groups[-1][0].append(i)
            else:
                groups.append(([i], ok))
        return all(g[1] for g in groups), groups

    # ---- errors and logging -----------------------------------------------------------------------------

    def _log(self, severity: Severity, msg: str) -> None:
        try:
            self.logger.log(severity, msg)
        except Exception:
            pass

    def _error(self, code: ErrorCode, desc: str, node: int = -1, node_name: str = "", op: str = "",
               func: str = "") -> None:
        err = ParserError(code, desc, node, node_name, op, func)
        self._errors.append(err)
        self._log(Severity.ERROR, "ONNX parser: %s" % err)

    # ---- model level ------------------------------------------------------------------------------------

    def _parse_proto(self, model: Any, base_dir: Optional[str]) -> bool:
        onnx = _import_onnx()
        net = self.network
        if net.has_implicit_batch_dimension:
            self._error(ErrorCode.UNSUPPORTED_GRAPH, "the ONNX parser needs an explicit-batch network: create it "
                        "with 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)")
            return False
        if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
            self._error(ErrorCode.MODEL_DESERIALIZE_FAILED, "the data is not a valid ONNX model (it has no graph)")
            return False
        if len(model.functions):
            try:  # model-local functions: expand their calls into plain nodes
                from onnx import inliner
                model = inliner.inline_local_functions(model)
            except Exception as e:
                self._error(ErrorCode.UNSUPPORTED_GRAPH, "cannot expand the model's local functions: %s" % (e,))
                return False
        opsets = {}
        for imp in model.opset_import:
            opsets[imp.domain or ""] = int(imp.version)
        if "ai.onnx" in opsets and "" not in opsets:
            opsets[""] = opsets["ai.onnx"]
        max_opset = onnx.defs.onnx_opset_version()
        if "" not in opsets:
            if model.ir_version >= 3 or any(n.domain in ("", "ai.onnx") for n in model.graph.node):
                self._error(ErrorCode.UNSUPPORTED_GRAPH, "the model imports no opset of the default ONNX domain")
                return False
            opsets[""] = max_opset
        opset = opsets[""]
        if opset < MIN_OPSET or opset > max_opset:
            self._error(ErrorCode.UNSUPPORTED_GRAPH, "unsupported ONNX opset %d: this parser supports opsets %d to %d "
                        "(the installed onnx package's newest)" % (opset, MIN_OPSET, max_opset))
            return False
        self._opset = opset
        self._opsets = opsets
        self._model = model
        self._base_dir = base_dir
        self._tensors: Dict[str, Any] = {}
        self._consts: Dict[str, np.ndarray] = {}
        self._const_tensors: Dict[Tuple[str, int], Any] = {}
        self._named: set = set()
        self._sym_cache: Optional[Dict[str, List[Any]]] = None
        self._msyms: Dict[str, List[Any]] = {}  # tensor -> per-dim symbol keys (ints where static)
        self._explicit_syms: Dict[int, List[Any]] = {}
        self._node_idx = -1
        self._node = None
        self._input_names: List[str] = []
        self._node_name = ""  # layers made outside any node (graph outputs that are initializers) use these
        self._sub = 0
        self._layer_names: List[Tuple[Any, str]] = []
        try:
            return self._parse_graph(model)
        finally:
            for layer, name in self._layer_names:
                try:
                    layer.name = name
                except Exception:
                    pass
            self._layer_names = []

    def _parse_graph(self, model: Any) -> bool:
        graph = model.graph
        if not self._check_names(graph):
            return False
        try:
            self._load_initializers(graph)
            self._add_inputs(graph)
        except _Fail as e:
            self._error(e.code, str(e))
            return False
        except _C.Error as e:
            self._error(ErrorCode.INVALID_GRAPH, "%s: %s" % (type(e).__name__, e))
            return False
        except (ValueError, TypeError) as e:  # e.g. a shape the network API refuses
            self._error(ErrorCode.INVALID_GRAPH, "cannot add the graph's inputs: %s: %s" % (type(e).__name__, e))
            return False
        n_io = self.network.num_inputs + self.network.num_outputs + len(graph.output)
        if n_io > MAX_IO_TENSORS:
            # found now rather than at the first inference, where the execution context refuses the engine
            self._error(ErrorCode.UNSUPPORTED_GRAPH, "the model has %d inputs and %d outputs: trtlite's engines bind "
                        "at most %d input and output tensors in all (merge some, e.g. with Concat)"
                        % (self.network.num_inputs, self.network.num_outputs + len(graph.output), MAX_IO_TENSORS))
            return False
        order = self._topo_order(graph)
        if order is None:
            return False
        for idx in order:
            node = graph.node[idx]
            if not self._import_node(idx, node):
                return False
        self._node_idx, self._node = -1, None  # what follows is about the graph, not the last node
        self._node_name, self._sub = "", 0
        return self._mark_outputs(graph)

    def _check_names(self, graph: Any) -> bool:
        """Every name that becomes a network name (or an error message) must be valid UTF-8 without NUL:
        protobuf hands back bytes for invalid UTF-8, and trtlite's names are C strings."""
        for what, items in (("graph input", graph.input), ("graph output", graph.output),
                            ("initializer", graph.initializer)):
            for k, item in enumerate(items):
                why = _bad_name(item.name)
                if why:
                    self._error(ErrorCode.INVALID_GRAPH, "the name of %s %d, %s" % (what, k, why))
                    return False
        for idx, n in enumerate(graph.node):
            fields = [("op_type", n.op_type), ("domain", n.domain), ("name", n.name)]
            fields += [("input %d" % i, v) for i, v in enumerate(n.input)]
            fields += [("output %d" % i, v) for i, v in enumerate(n.output)]
            fields += [("attribute %d" % i, at.name) for i, at in enumerate(n.attribute)]
            for what, v in fields:
                why = _bad_name(v)
                if why:
                    self._error(ErrorCode.INVALID_NODE, "the node's %s, %s" % (what, why), idx, n.name, n.op_type,
                                "import" + _text(n.op_type))
                    return False
        return True

    def _load_initializers(self, graph: Any) -> None:
        from onnx import numpy_helper
        from onnx.external_data_helper import uses_external_data
        for init in graph.initializer:
            if uses_external_data(init):
                if self._base_dir is None:
                    raise _Fail(ErrorCode.INVALID_GRAPH, "initializer '%s' is stored as external data: parse the "
                                "model with parse_from_file(path) or parse(data, path) so that its file can be found"
                                % init.name)
                try:
                    arr = numpy_helper.to_array(init, self._base_dir)
                except Exception as e:
                    raise _Fail(ErrorCode.INVALID_GRAPH, "cannot read the external data of initializer '%s' "
                                "(relative to %s): %s" % (init.name, self._base_dir, e))
            else:
                try:
                    arr = numpy_helper.to_array(init)
                except Exception as e:
                    raise _Fail(ErrorCode.INVALID_GRAPH, "cannot decode initializer '%s': %s" % (init.name, e))
            if arr.dtype.kind in "OSU":
                raise _Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "initializer '%s' holds strings" % init.name)
            self._consts[init.name] = arr
        for sp in graph.sparse_initializer:
            raise _Fail(ErrorCode.UNSUPPORTED_GRAPH, "sparse initializer '%s' is not supported" % sp.values.name)

    def _add_inputs(self, graph: Any) -> None:
        net = self.network
        for vi in graph.input:
            name = vi.name
            if name in self._consts:
                continue  # IR < 4 lists initializers as inputs too
            tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
            if tt is None:
                raise _Fail(ErrorCode.UNSUPPORTED_GRAPH, "graph input '%s' is not a tensor" % name)
            elem = int(tt.elem_type)
            if not tt.HasField("shape"):
                raise _Fail(ErrorCode.UNSUPPORTED_GRAPH, "graph input '%s' has an unknown rank" % name)
            dims = []
            keys: List[Any] = []
            for j, d in enumerate(tt.shape.dim):
                dims.append(int(d.dim_value) if d.HasField("dim_value") else -1)
                keys.append(dims[-1] if dims[-1] >= 0 else (d.dim_param if d.dim_param else ("?", name, j)))
            if any(d < 0 for d in dims):
                self._msyms[name] = keys
            if elem == _T_FLOAT16:
                t = net.add_input(name, DataType.HALF, dims)
                self._named.add(name)
                cast = net.add_cast(t, DataType.FLOAT)
                cast.name = "%s/cast_to_float" % name
                self._tensors[name] = cast.get_output(0)
                self._input_names.append(name)
                continue
            if elem in (_T_INT8, _T_UINT8):
                dt = DataType.INT8 if elem == _T_INT8 else DataType.UINT8
            else:
                dt = _onnx_to_trt(elem)
            if dt is None:
                raise _Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "graph input '%s' has an unsupported type %d"
                            % (name, elem))
            if elem in (_T_INT64, _T_UINT64, _T_DOUBLE):
                self._log(Severity.WARNING, "ONNX parser: input '%s' is %s in the model; trtlite's input is %s"
                          % (name, "int64" if elem != _T_DOUBLE else "double", dt.name))
            self._tensors[name] = net.add_input(name, dt, dims)
            self._named.add(name)
            self._input_names.append(name)

    def _topo_order(self, graph: Any) -> Optional[List[int]]:
        """Node indices in an order where each node follows its producers (the file's order when it is one)."""
        produced = set(self._consts) | set(self._tensors)
        order: List[int] = []
        defined = set(produced)
        nodes = graph.node
        in_order = True
        for n in nodes:
            for i in n.input:
                if i and i not in defined:
                    in_order = False
                    break
            if not in_order:
                break
            defined.update(o for o in n.output if o)
        if in_order:
            return list(range(len(nodes)))
        producer: Dict[str, int] = {}
        for idx, n in enumerate(nodes):
            for o in n.output:
                if o:
                    producer[o] = idx
        waiting = [0] * len(nodes)
        users: Dict[int, List[int]] = {}
        for idx, n in enumerate(nodes):
            deps = set()
            for i in n.input:
                if not i or i in produced:
                    continue
                if i not in producer:
                    self._error(ErrorCode.INVALID_GRAPH, "input '%s' is not a graph input, an initializer or the "
                                "output of any node" % i, idx, n.name, n.op_type)
                    return None
                deps.add(producer[i])
            waiting[idx] = len(deps)
            for d in deps:
                users.setdefault(d, []).append(idx)
        ready = [i for i in range(len(nodes)) if waiting[i] == 0]
        ready.reverse()
        while ready:
            i = ready.pop()
            order.append(i)
            for u in users.get(i, ()):
                waiting[u] -= 1
                if waiting[u] == 0:
                    ready.append(u)
        if len(order) != len(nodes):
            bad = next(i for i in range(len(nodes)) if waiting[i] > 0)
            self._error(ErrorCode.INVALID_GRAPH, "the graph has a cycle", bad, nodes[bad].name, nodes[bad].op_type)
            return None
        return order

    def _mark_outputs(self, graph: Any) -> bool:
        net = self.network
        inputs = set(vi.name for vi in graph.input if vi.name not in self._consts)
        for vi in graph.output:
            name = vi.name
            try:
                if name in inputs:
                    # An engine's I/O tensors are looked up by name, so one name cannot be both an input and
                    # an output; copying the input through an identity would need a second tensor of the
                    # same name.  TensorRT refuses such a network too (when it is built).
                    raise _Fail(ErrorCode.UNSUPPORTED_GRAPH, "graph output '%s' is also a graph input: trtlite (like "
                                "TensorRT) cannot bind one tensor name as both an input and an output of an "
                                "engine; write the output through an Identity node under another name" % name)
                if name in self._tensors:
                    t = self._tensors[name]
                elif name in self._consts:
                    if _has_sym(self._consts[name]):
                        raise _Dynamic("graph output '%s' is a shape computed from dynamic dimensions" % name)
                    t = self._const_tensor(self._consts[name], None, name)
                else:
                    raise _Fail(ErrorCode.INVALID_GRAPH, "graph output '%s' is not produced by any node" % name)
                if t.name != name or t.is_network_input or t.is_network_output:
                    layer = net.add_identity(t)
                    layer.name = "%s/output" % name
                    t = layer.get_output(0)
                t.name = name
                elem = int(vi.type.tensor_type.elem_type) if vi.type.HasField("tensor_type") else 0
                if elem == _T_FLOAT16 and t.dtype == DataType.FLOAT:
                    layer = net.add_cast(t, DataType.HALF)
                    layer.name = "%s/cast_to_half" % name
                    t.name = "%s/float" % name
                    t = layer.get_output(0)
                    t.name = name
                net.mark_output(t)
            except _Fail as e:
                self._error(e.code, str(e))
                return False
            except Exception as e:
                self._error(ErrorCode.INVALID_GRAPH, "cannot mark graph output '%s': %s: %s"
                            % (name, type(e).__name__, e))
                return False
        return True

    # ---- symbolic dims (ONNX shape inference, computed once when first needed) ------------------------------

    def _sym_dims(self, name: str) -> Optional[List[Any]]:
        if self._sym_cache is None:
            self._sym_cache = {}
            try:
                import onnx
                from onnx import shape_inference
                m = onnx.ModelProto()
                m.CopyFrom(self._model)
                del m.graph.initializer[:]  # inference needs no weights (and stays small)
                have = set(i.name for i in m.graph.input)
                for init in self._model.graph.initializer:
                    if init.name in have:
                        continue
                    vi = m.graph.input.add()
                    vi.name = init.name
                    vi.type.tensor_type.elem_type = init.data_type
                    for d in init.dims:
                        vi.type.tensor_type.shape.dim.add().dim_value = d
                inferred = shape_inference.infer_shapes(m, strict_mode=False, data_prop=True)
                for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
                    tt = vi.type.tensor_type
                    if not tt.HasField("shape"):
                        continue
                    dims: List[Any] = []
                    for d in tt.shape.dim:
                        if d.HasField("dim_value"):
                            dims.append(int(d.dim_value))
                        elif d.HasField("dim_param") and d.dim_param:
                            dims.append(d.dim_param)
                        else:
                            dims.append(None)
                    self._sym_cache[vi.name] = dims
            except Exception as e:
                self._log(Severity.VERBOSE, "ONNX parser: shape inference failed (%s); dynamic dims are matched "
                          "by position only" % e)
        return self._sym_cache.get(name)

    def _raw_keys(self, name: str) -> List[Any]:
        """Per-dim symbol keys of a value as tracked while parsing (ints for static dims, None unknown)."""
        if name in self._consts:
            return list(self._consts[name].shape)
        t = self._tensors.get(name)
        if t is None:
            return []
        shape = tuple(t.shape)
        keys = self._msyms.get(name)
        if keys is None or len(keys) != len(shape):
            return [d if d >= 0 else None for d in shape]
        return [d if d >= 0 else keys[j] for j, d in enumerate(shape)]

    def _key_of(self, name: str, j: int) -> Any:
        """The symbol of dim j of tensor `name` (its size if static)."""
        keys = self._raw_keys(name)
        k = keys[j] if j < len(keys) else None
        if isinstance(k, (int, str)) or (isinstance(k, tuple) and k and k[0] != "?"):
            return k
        sd = self._sym_dims(name)  # ONNX shape inference, when tracking lost the dim
        if sd and j < len(sd) and isinstance(sd[j], str):
            return sd[j]
        return k if k is not None else ("?", name, j)

    def _shape_value(self, shape: Sequence[int], name: Optional[str], a: Dict[str, Any]) -> np.ndarray:
        dims: List[Any] = []
        for j, d in enumerate(shape):
            d = int(d)
            if d >= 0:
                dims.append(d)
                continue
            key = self._key_of(name, j) if name is not None else ("?", id(shape), j)
            dims.append(_Sym(key, (name, j) if name is not None else None))
        r = len(dims)
        start = int(a.get("start", 0))
        end = a.get("end")
        end = r if end is None else int(end)
        start = min(max(start + r if start < 0 else start, 0), r)
        end = min(max(end + r if end < 0 else end, 0), r)
        dims = dims[start:end]
        if any(isinstance(v, _Sym) for v in dims):
            out = np.empty(len(dims), dtype=object)
            for i, v in enumerate(dims):
                out[i] = v
            return out
        return np.array(dims, dtype=np.int64)

    def _dim_is(self, sym: Any, tensor: str, axis: int) -> bool:
        """Whether symbol `sym` is certainly dim `axis` of `tensor`."""
        if not isinstance(sym, _Sym):
            return False
        if sym.origin == (tensor, axis):
            return True
        return self._key_of(tensor, axis) == sym.key

    def _set_syms(self, out_index: int, keys: List[Any]) -> None:
        """An importer states the symbols of an output's dims (see _propagate)."""
        self._explicit_syms[out_index] = list(keys)

    def _propagate(self, node: Any, a: Dict[str, Any], outs: List[Any]) -> None:
        """Records which dynamic dims of the node's outputs are which input dims (for Shape -> Reshape)."""
        explicit, self._explicit_syms = self._explicit_syms, {}
        in_keys = None
        for k, (oname, v) in enumerate(zip(node.output, outs)):
            if not oname or isinstance(v, np.ndarray):
                continue
            shape = tuple(v.shape)
            if all(d >= 0 for d in shape):
                continue
            if k in explicit:
                keys = explicit[k]
            else:
                if in_keys is None:
                    in_keys = [self._raw_keys(n) for n in node.input if n and (n in self._tensors or
                                                                                  n in self._consts)]
                keys = _infer_keys(node, a, len(shape), in_keys)
            self._msyms[oname] = [d if d >= 0 else (keys[j] if keys and j < len(keys) and keys[j] is not None
                                                   and not isinstance(keys[j], int) else ("?", oname, j))
                                  for j, d in enumerate(shape)]

    # ---- nodes --------------------------------------------------------------------------------------------

    def _import_node(self, idx: int, node: Any) -> bool:
        self._node_idx = idx
        self._node = node
        self._node_name = node.name or "%s_%d" % (node.op_type, idx)
        self._sub = 0
        self._explicit_syms = {}
        op = node.op_type
        try:
            self._check_arity(node)
            a = self._attrs(node)
            outs = self._dispatch(node, a)
            for name, v in zip(node.output, outs):
                if name:
                    self._set(name, v)
            self._propagate(node, a, outs)
            self._log(Severity.VERBOSE, "ONNX parser: node %d '%s' (%s) imported" % (idx, self._node_name, op))
            return True
        except _Fail as e:
            code, msg = e.code, str(e)
        except _C.UnsupportedError as e:
            code, msg = ErrorCode.UNSUPPORTED_NODE, "%s: %s" % (type(e).__name__, e)
        except _C.Error as e:
            code, msg = ErrorCode.INVALID_NODE, "%s: %s" % (type(e).__name__, e)
        except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, OverflowError) as e:
            code, msg = ErrorCode.INVALID_NODE, "%s: %s" % (type(e).__name__, e)
        except MemoryError as e:
            code, msg = ErrorCode.MEM_ALLOC_FAILED, "out of memory: %s" % (e,)
        except Exception as e:  # never let a model crash the caller
            code, msg = ErrorCode.INTERNAL_ERROR, "%s: %s" % (type(e).__name__, e)
        self._error(code, msg, idx, node.name, op, "import" + _text(op))
        return False

    def _check_arity(self, node: Any) -> None:
        """Input and output counts of a default-domain node against its ONNX schema, so that importers can
        index node.input / node.output and a malformed node gets a message, not an IndexError."""
        if node.domain not in ("", "ai.onnx"):
            return
        key = (node.op_type, self._opset)
        if key not in _SCHEMAS:
            try:
                from onnx import defs
                _SCHEMAS[key] = defs.get_schema(node.op_type, self._opset, "")
            except Exception:  # an op unknown to the installed onnx: left to the plugin fallback
                _SCHEMAS[key] = None
        sch = _SCHEMAS[key]
        if sch is None:
            return

        def span(lo: int, hi: int) -> str:
            return "%d" % lo if lo == hi else "%d or more" % lo if hi >= 2 ** 31 - 1 else "%d to %d" % (lo, hi)
        n_in, n_out = len(node.input), len(node.output)
        if not sch.min_input <= n_in <= sch.max_input:
            raise _Fail(ErrorCode.INVALID_NODE, "the node has %d inputs but %s-%d takes %s"
                        % (n_in, node.op_type, sch.since_version, span(sch.min_input, sch.max_input)))
        for k in range(min(sch.min_input, n_in)):
            if not node.input[k]:
                raise _Fail(ErrorCode.INVALID_NODE, "required input %d of %s is empty" % (k, node.op_type))
        if not sch.min_output <= n_out <= sch.max_output:
            raise _Fail(ErrorCode.INVALID_NODE, "the node has %d outputs but %s-%d gives %s"
                        % (n_out, node.op_type, sch.since_version, span(sch.min_output, sch.max_output)))

    def _attrs(self, node: Any) -> Dict[str, Any]:
        from onnx import helper
        a: Dict[str, Any] = {}
        for at in node.attribute:
            if at.ref_attr_name:
                raise _unsupported("attribute '%s' refers to a function attribute" % at.name)
            if at.type == 0:  # AttributeProto.UNDEFINED: get_attribute_value gives None, which importers misread
                raise _Fail(ErrorCode.INVALID_NODE, "attribute '%s' has no type (UNDEFINED)" % at.name)
            v = helper.get_attribute_value(at)
            if isinstance(v, bytes):
                v = v.decode("utf-8", "replace")
            a[at.name] = v
        return a

    def _dispatch(self, node: Any, a: Dict[str, Any]) -> List[Any]:
        op = node.op_type
        if node.domain not in ("", "ai.onnx"):
            return self._plugin(node, a, "no built-in mapping for domain '%s'" % node.domain)
        ins = list(node.input)
        if op == "Shape":
            x = ins[0]
            if x in self._consts:
                return [self._shape_value(self._consts[x].shape, None, a)]
            t = self._tensor(x)
            return [self._shape_value(tuple(t.shape), x, a)]
        if op == "Size" and ins[0] in self._tensors:
            shp = self._shape_value(tuple(self._tensors[ins[0]].shape), ins[0], {})
            if shp.dtype == object:
                r = 1
                for v in shp:
                    r = v * r
                out = np.empty((), dtype=object)
                out[()] = r
                return [out]
            return [np.array(int(np.prod(shp)), dtype=np.int64)]
        present = [i for i in ins if i]
        sym_shape = op in ("Expand", "ConstantOfShape") and len(ins) > (op == "Expand") and \
            _has_sym(self._consts.get(ins[op == "Expand"]))
        if (present or op == "Constant") and all(i in self._consts for i in present) and op not in _NOT_FOLDED \
                and not sym_shape:  # a shape with dynamic dims is built at run time by the importer
            vals = [self._consts[i] if i else None for i in ins]
            if op in _FOLDABLE:
                try:
                    return [_norm(v) for v in _fold(self, node, a, vals)]
                except _Fail:
                    raise
                except (KeyError, ValueError, TypeError, IndexError) as e:
                    if any(v is not None and v.dtype == object for v in vals):
                        raise _Dynamic("cannot compute %s over dynamic dimensions: %s" % (op, e))
                    raise _Fail(ErrorCode.INVALID_NODE, "%s: %s" % (type(e).__name__, e))
            if op != "Constant" and not any(v is not None and v.dtype == object for v in vals):
                r = self._reference_fold(node, vals)
                if r is not None:
                    return r
        imp = _IMPORTERS.get(op)
        if imp is None:
            return self._plugin(node, a, "no built-in mapping for op '%s'" % op)
        return imp(self, node, a)

    def _reference_fold(self, node: Any, vals: List[Any]) -> Optional[List[np.ndarray]]:
        """Computes a node over constants with onnx's reference implementation (None if it cannot)."""
        try:
            from onnx.reference import ReferenceEvaluator
            import onnx
            n = onnx.NodeProto()
            n.CopyFrom(node)
            del n.input[:]
            del n.output[:]
            feeds = {}
            for k, v in enumerate(vals):
                nm = "in%d" % k if v is not None else ""
                n.input.append(nm)
                if v is not None:
                    feeds[nm] = v
            for k, o in enumerate(node.output):
                n.output.append("out%d" % k if o else "")
            ev = ReferenceEvaluator(n, opsets={"": self._opset})
            res = ev.run([o for o in n.output if o], feeds)
            outs: List[Any] = []
            it = iter(res)
            for o in n.output:
                outs.append(np.asarray(next(it)) if o else None)
            return outs
        except Exception as e:
            self._log(Severity.VERBOSE, "ONNX parser: not folding %s over constants (%s)" % (node.op_type, e))
            return None

    # ---- values -------------------------------------------------------------------------------------------

    def _set(self, name: str, v: Any) -> None:
        if isinstance(v, np.ndarray):
            self._consts[name] = v
            self._tensors.pop(name, None)
            return
        self._tensors[name] = v
        if v.name not in self._named:
            v.name = name
            self._named.add(name)

    def _is_const(self, name: str) -> bool:
        return bool(name) and name in self._consts

    def _inp(self, node: Any, i: int) -> Optional[str]:
        return node.input[i] if i < len(node.input) and node.input[i] else None

    def _cval(self, name: Optional[str], what: str = "input", allow_sym: bool = False) -> np.ndarray:
        """The constant value of `name` (an error naming `what` if it is computed at run time)."""
        if name is None:
            raise _Fail(ErrorCode.INVALID_NODE, "%s is missing" % what)
        if name not in self._consts:
            raise _Fail(ErrorCode.UNSUPPORTED_NODE_INPUT, "%s '%s' must be a constant (an initializer or computed "
                        "from static shapes), but it is computed at run time" % (what, name))
        v = self._consts[name]
        if not allow_sym and _has_sym(v):
            raise _Dynamic("%s '%s' depends on dynamic dimensions (%s)" % (what, name, list(v.reshape(-1))))
        return v

    def _tensor(self, name: str, dtype: Optional[DataType] = None) -> Any:
        if name in self._tensors:
            t = self._tensors[name]
            return t
        if name in self._consts:
            return self._const_tensor(self._consts[name], dtype, name)
        raise _Fail(ErrorCode.INVALID_GRAPH, "tensor '%s' is not defined (not a graph input, an initializer or an "
                    "output of an earlier node)" % name)

    def _const_tensor(self, arr: np.ndarray, dtype: Optional[DataType] = None, name: Optional[str] = None) -> Any:
        arr = np.asarray(arr)
        if _has_sym(arr):
            raise _Dynamic("value %s%s depends on dynamic dimensions, which trtlite cannot compute at run time"
                           % ("'%s' " % name if name else "", list(arr.reshape(-1))))
        arr = _norm(arr)
        if dtype is None:
            dtype = _trt_of_np(arr.dtype)
        key = (name, int(dtype)) if name else None
        if key is not None and key in self._const_tensors:
            return self._const_tensors[key]
        a = _to_dtype(arr, dtype)
        layer = self.network.add_constant(a.shape, a)
        self._name_layer(layer, "const" if not name else None, const_name=name)
        t = layer.get_output(0)
        if key is not None:
            self._const_tensors[key] = t
        return t

    def _name_layer(self, layer: Any, hint: Optional[str] = None, const_name: Optional[str] = None) -> Any:
        if const_name:
            name = "%s/const" % const_name
        elif self._sub == 0 and hint is None:
            name = self._node_name
        else:
            name = "%s/%s%d" % (self._node_name, hint or "", self._sub)
        self._sub += 1
        # named when parsing ends: renaming a layer makes trtlite re-infer the network's shapes at the next
        # shape query, which would make parsing quadratic
        self._layer_names.append((layer, name))
        return layer

    def _L(self, layer: Any) -> Any:
        """Names a layer after the current node and returns its first output."""
        self._name_layer(layer)
        return layer.get_output(0)

    # ---- tensor helpers -----------------------------------------------------------------------------------

    def _shuffle(self, t: Any, first: Optional[Sequence[int]] = None, reshape: Optional[Sequence[int]] = None,
                 second: Optional[Sequence[int]] = None, zero_is_placeholder: bool = True) -> Any:
        layer = self.network.add_shuffle(t)
        if first is not None:
            layer.first_transpose = tuple(int(v) for v in first)
        if reshape is not None:
            layer.reshape_dims = tuple(int(v) for v in reshape)
        if second is not None:
            layer.second_transpose = tuple(int(v) for v in second)
        if not zero_is_placeholder:
            layer.zero_is_placeholder = False
        return self._L(layer)

    def _reshape(self, t: Any, dims: Sequence[int], zero_is_placeholder: bool = True) -> Any:
        return self._shuffle(t, reshape=dims, zero_is_placeholder=zero_is_placeholder)

    def _unsqueeze(self, t: Any, axes: Sequence[int]) -> Any:
        """Inserts 1-dims at output positions `axes` (sorted, non-negative)."""
        shape = tuple(t.shape)
        r = len(shape)
        k = len(axes)
        if k == 0:
            return t
        axes = sorted(axes)
        out_r = r + k
        if _static(shape):
            it = iter(shape)
            dims = [1 if i in axes else next(it) for i in range(out_r)]
            return self._reshape(t, dims, zero_is_placeholder=False)
        perm = []
        src, one = 0, r
        aset = set(axes)
        for i in range(out_r):
            if i in aset:
                perm.append(one)
                one += 1
            else:
                perm.append(src)
                src += 1
        return self._shuffle(t, reshape=[0] * r + [1] * k, second=perm)

    def _squeeze(self, t: Any, axes: Sequence[int]) -> Any:
        shape = tuple(t.shape)
        r = len(shape)
        axes = sorted(set(axes))
        for ax in axes:
            if shape[ax] != 1 and shape[ax] >= 0:
                raise _Fail(ErrorCode.INVALID_NODE, "cannot squeeze axis %d of shape %s (size %d, not 1)"
                            % (ax, shape, shape[ax]))
        if not axes:
            return t
        keep = [i for i in range(r) if i not in axes]
        if _static(shape):
            return self._reshape(t, [shape[i] for i in keep], zero_is_placeholder=False)
        if keep == list(range(len(keep))):
            return self._reshape(t, [0] * len(keep))
        return self._shuffle(t, first=keep + axes, reshape=[0] * len(keep))

    def _unsqueeze_to(self, t: Any, rank: int) -> Any:
        r = len(t.shape)
        if r >= rank:
            return t
        return self._unsqueeze(t, list(range(rank - r)))

    def _transpose(self, t: Any, perm: Sequence[int]) -> Any:
        if list(perm) == list(range(len(perm))):
            return t
        return self._shuffle(t, first=perm)

    def _operands(self, names: Sequence[str], dtype: Optional[DataType] = None,
                  dtypes: Optional[Dict[int, DataType]] = None) -> List[Any]:
        """Tensors for `names` (constants take the type of the first non-constant, or `dtype`, or
        dtypes[position]), broadcast to one rank (numpy rules: missing leading dims are 1)."""
        dtypes = dtypes or {}
        if dtype is None:
            for n in names:
                if n in self._tensors:
                    dtype = self._tensors[n].dtype
                    break
        rank = 0
        for n in names:
            rank = max(rank, len(self._tensors[n].shape) if n in self._tensors else self._consts[n].ndim
                       if n in self._consts else 0)
        ts = []
        for k, n in enumerate(names):
            if n in self._tensors:
                ts.append(self._unsqueeze_to(self._tensors[n], rank))
            else:
                v = self._cval(n)
                v = v.reshape((1,) * (rank - v.ndim) + v.shape)
                ts.append(self._const_tensor(v, dtypes.get(k, dtype), None if v.shape != self._consts[n].shape
                                             else n))
        return ts

    def _concat_layer(self, ts: Sequence[Any], axis: int) -> Any:
        layer = self.network.add_concatenation(list(ts))
        layer.axis = axis
        return self._L(layer)

    def _ew(self, a: Any, b: Any, op: ElementWiseOperation) -> Any:
        ra, rb = len(a.shape), len(b.shape)
        if ra < rb:
            a = self._unsqueeze_to(a, rb)
        elif rb < ra:
            b = self._unsqueeze_to(b, ra)
        return self._L(self.network.add_elementwise(a, b, op))

    def _ew_const(self, t: Any, value: Any, op: ElementWiseOperation, const_first: bool = False) -> Any:
        v = np.asarray(value)
        v = v.reshape((1,) * max(0, len(t.shape) - v.ndim) + v.shape)
        c = self._const_tensor(v, t.dtype)
        return self._ew(c, t, op) if const_first else self._ew(t, c, op)

    def _activation(self, t: Any, kind: ActivationType, alpha: Optional[float] = None,
                    beta: Optional[float] = None) -> Any:
        layer = self.network.add_activation(t, kind)
        if alpha is not None:
            layer.alpha = float(alpha)
        if beta is not None:
            layer.beta = float(beta)
        return self._L(layer)

    def _unary(self, t: Any, op: UnaryOperation) -> Any:
        return self._L(self.network.add_unary(t, op))

    def _cast(self, t: Any, dtype: DataType) -> Any:
        if t.dtype == dtype:
            return t
        return self._L(self.network.add_cast(t, dtype))

    def _float(self, t: Any, what: str = "input") -> Any:
        if t.dtype == DataType.FLOAT:
            return t
        if t.dtype == DataType.HALF:
            return self._cast(t, DataType.FLOAT)
        raise _Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "%s must be a floating-point tensor, got %s"
                    % (what, DataType(t.dtype).name))

    def _gather_axis(self, t: Any, axis: int, indices: np.ndarray) -> Any:
        idx = self._const_tensor(np.asarray(indices, dtype=np.int32), DataType.INT32)
        layer = self.network.add_gather(t, idx, axis)
        return self._L(layer)

    # ---- dynamic dims at run time -------------------------------------------------------------------------
    #
    # trtlite has no shape tensors, so a value such as Expand's target shape cannot carry a dynamic dim.  A
    # tensor can, though: a boolean "carrier" whose dims are all 1 but one, which is the dynamic dim of
    # the tensor the symbol was read from.  Select(carrier, v, v) broadcasts v to that dim whatever the
    # carrier's values are (no arithmetic: NaN/Inf in the source cannot leak in).

    def _sym_source(self, sym: "_Sym") -> Optional[Tuple[str, int]]:
        """(tensor, axis) of a network tensor whose dynamic dim `axis` is the symbol, or None."""
        if sym.origin is not None:
            name, axis = sym.origin
            t = self._tensors.get(name)
            if t is not None and 0 <= axis < len(t.shape) and t.shape[axis] < 0:
                return sym.origin
        # a dim_param shared with a graph input (or a tracked tensor) carries the same size
        for name in list(self._input_names) + [n for n in self._msyms if n not in self._input_names]:
            t = self._tensors.get(name)
            if t is None:
                continue
            for j, d in enumerate(t.shape):
                if d < 0 and self._key_of(name, j) == sym.key:
                    return name, j
        return None

    def _dim_carrier(self, sym: "_Sym", rank: int, pos: int, what: str) -> Any:
        """A BOOL tensor of rank `rank`, all dims 1 but dim `pos`, which is the run-time size of `sym`."""
        src = self._sym_source(sym)
        if src is None:
            raise _Dynamic("%s has the dynamic dimension %r, which is not a dimension of any tensor of the network "
                           "(it is computed from dynamic dims; trtlite has no shape tensors to carry it)"
                           % (what, sym))
        name, j = src
        c = self._tensors[name]
        shape = tuple(c.shape)
        # index 0 along every other dim (the largest static ones first: each gather copies less)
        others = sorted((i for i in range(len(shape)) if i != j and shape[i] != 1),
                        key=lambda i: (shape[i] < 0, -shape[i]))
        for i in others:
            c = self._gather_axis(c, i, np.zeros(1, np.int32))
        if c.dtype != DataType.BOOL:
            c = self._cast(c, DataType.BOOL)
        if len(shape) != rank or j != pos:
            c = self._reshape(c, [-1 if i == pos else 1 for i in range(rank)], zero_is_placeholder=False)
        return c

    def _broadcast_to_syms(self, t: Any, dims: Dict[int, "_Sym"], what: str) -> Any:
        """`t` broadcast (numpy rules) along dims {axis: symbol} to the symbols' run-time sizes."""
        r = len(t.shape)
        cond = None
        for ax, sym in sorted(dims.items()):
            c = self._dim_carrier(sym, r, ax, what)
            cond = c if cond is None else self._ew(cond, c, ElementWiseOperation.AND)
        if cond is None:
            return t
        return self._L(self.network.add_select(cond, t, t))

    def _slice(self, t: Any, spec: Dict[int, Tuple[int, int, int]]) -> Any:
        """Slices axis -> (start, count, step) (already clamped)."""
        shape = tuple(t.shape)
        spec = {ax: s for ax, s in spec.items() if not (s[0] == 0 and s[2] == 1 and s[1] == shape[ax])}
        if not spec:
            return t
        if _static(shape):
            start = [0] * len(shape)
            size = list(shape)
            stride = [1] * len(shape)
            for ax, (s0, n, st) in spec.items():
                start[ax], size[ax], stride[ax] = s0, n, st
            return self._L(self.network.add_slice(t, start, size, stride))
        # trtlite's slice has static output shapes: with dynamic dims slice each axis with a gather
        for ax, (s0, n, st) in sorted(spec.items()):
            if shape[ax] < 0:
                raise _Dynamic("slicing along the dynamic axis %d of a tensor of shape %s" % (ax, shape))
            t = self._gather_axis(t, ax, s0 + np.arange(n) * st)
        return t

    def _norm_axis(self, axis: int, rank: int, what: str = "axis") -> int:
        a = int(axis)
        if a < 0:
            a += rank
        if not 0 <= a < max(rank, 1):
            raise _Fail(ErrorCode.INVALID_NODE, "%s %d is out of range for rank %d" % (what, axis, rank))
        return a

    def _reshape_2d(self, t: Any, axis: int) -> Any:
        shape = tuple(t.shape)
        head, tail = shape[:axis], shape[axis:]
        if _static(head):
            h = int(np.prod(head, dtype=np.int64))
            if _static(tail):
                return self._reshape(t, [h, int(np.prod(tail, dtype=np.int64))], zero_is_placeholder=False)
            if h == 0:
                raise _Fail(ErrorCode.INVALID_NODE, "cannot flatten an empty tensor with dynamic dims")
            return self._reshape(t, [h, -1], zero_is_placeholder=False)
        if _static(tail):
            return self._reshape(t, [-1, int(np.prod(tail, dtype=np.int64))], zero_is_placeholder=False)
        if axis == 1:
            return self._reshape(t, [0, -1])
        raise _Dynamic("flattening shape %s at axis %d needs more than one dynamic dimension inferred" % (shape, axis))

    # ---- plugin fallback ----------------------------------------------------------------------------------

    def _registry(self) -> Any:
        import trtlite
        get = getattr(trtlite, "get_plugin_registry", None)
        return get() if get is not None else None

    def _find_creator(self, op: str, domain: str, a: Dict[str, Any]) -> Any:
        try:
            reg = self._registry()
        except Exception:
            return None
        if reg is None:
            return None
        version = str(a.get("plugin_version", "1"))
        namespaces = []
        if "plugin_namespace" in a:
            namespaces.append(str(a["plugin_namespace"]))
        if domain and domain not in ("ai.onnx",):
            namespaces.append(domain)
        namespaces.append("")
        # TensorRT's plugins are registered as <Name>_TRT: an ONNX op "Adder2d" finds "Adder2d_TRT" too
        names = [op] if op.endswith("_TRT") else [op, op + "_TRT"]
        for name in names:
            for ns in namespaces:
                try:
                    c = reg.get_plugin_creator(name, version, ns)
                except Exception:
                    c = None
                if c is not None:
                    self._found_ns = ns
                    return c
        return None

    def _plugin(self, node: Any, a: Dict[str, Any], why: str) -> List[Any]:
        import trtlite as trt
        op = node.op_type
        creator = self._find_creator(op, node.domain, a)
        if creator is None:
            dom = " in domain '%s'" % node.domain if node.domain not in ("", "ai.onnx") else ""
            raise _Fail(ErrorCode.UNSUPPORTED_NODE, "%s and no plugin creator named '%s'%s (version \"%s\")%s is "
                        "registered: the op is not supported" % (why, op, "" if op.endswith("_TRT") else " or '%s_TRT'"
                                                                 % op, a.get("plugin_version", "1"), dom))
        PF, PFT = trt.PluginField, trt.PluginFieldType
        # the creator's fields, in order, with the types it declares (None: any)
        listed: List[Tuple[str, Optional[str]]] = []
        try:
            for f in creator.field_names or []:
                t = getattr(f, "type", None)
                tname = getattr(t, "name", None) if t is not None else None
                listed.append((f.name, tname if tname in _FIELD_NP or tname == "CHAR" else None))
        except Exception:
            listed = []
        declared = dict(listed)
        fields = []
        given = set()

        def add(fname: str, what: str, arr: Optional[np.ndarray] = None, text: Optional[bytes] = None) -> None:
            """One field, converted to the type the creator declares for `fname` (an exact conversion, else
            an error naming the field): creators match fields by name and type."""
            want = declared.get(fname)
            if text is not None:
                if want not in (None, "CHAR"):
                    raise _unsupported("plugin '%s': %s is a string but the creator's field '%s' is %s"
                                       % (op, what, fname, want))
                fields.append(PF(fname, np.frombuffer(text, dtype=np.uint8).copy(), PFT.CHAR))
                given.add(fname)
                return
            arr = np.ascontiguousarray(arr).reshape(-1)
            if want == "CHAR":
                raise _unsupported("plugin '%s': %s is numeric but the creator's field '%s' is CHAR (a string)"
                                   % (op, what, fname))
            ft = want or _field_type_of(arr)
            conv = _field_convert(arr, ft)
            if conv is None:
                shown = arr[:8].tolist()
                raise _unsupported("plugin '%s': %s (%s %s%s) cannot be converted exactly to %s, the type of the "
                                   "creator's field '%s'" % (op, what, arr.dtype, shown, "..." if arr.size > 8 else "",
                                                             ft, fname))
            fields.append(PF(fname, np.ascontiguousarray(conv), getattr(PFT, ft)))
            given.add(fname)

        for k, v in a.items():
            if k in ("plugin_version", "plugin_namespace"):
                continue
            what = "attribute '%s'" % k
            arr = None
            if isinstance(v, str):
                add(k, what, text=v.encode("utf-8"))
                continue
            if isinstance(v, float):
                arr = np.array([v], dtype=np.float32)  # ONNX float attributes are float32
            elif isinstance(v, int):
                arr = np.array([v], dtype=np.int64)
            elif isinstance(v, (list, tuple)):
                if all(isinstance(x, int) for x in v):
                    arr = np.array(v, dtype=np.int64)
                elif all(isinstance(x, (int, float)) for x in v):
                    arr = np.array(v, dtype=np.float32)
                elif all(isinstance(x, (str, bytes)) for x in v):
                    add(k, what, text=b"\0".join(x.encode("utf-8") if isinstance(x, str) else x for x in v))
                    continue
                else:
                    arr = np.array([self._tensor_value(x) for x in v]) if v and hasattr(v[0], "dims") else None
            elif hasattr(v, "dims") and hasattr(v, "data_type"):
                arr = self._tensor_value(v)
            if arr is None:
                raise _unsupported("plugin '%s': attribute '%s' of this kind cannot be passed as a plugin field"
                                   % (op, k))
            add(k, what, arr)
        listed_names = set(declared)
        inputs = []
        for i, name in enumerate(node.input):
            if not name:
                continue
            if name in self._consts:
                v = np.ascontiguousarray(self._cval(name, "plugin input %d" % i)).reshape(-1)
                short = name.replace("/", ".").replace(":", ".").split(".")[-1]
                fname = None
                if short in listed_names and short not in given:
                    fname = short
                else:  # the first free field of the value's own type, else the first it converts to exactly
                    free = [(n, t) for n, t in listed if n not in given]
                    own = _field_type_of(v)
                    fname = next((n for n, t in free if t is None or t == own), None)
                    if fname is None:
                        fname = next((n for n, t in free if t in _FIELD_NP and _field_convert(v, t) is not None),
                                     None)
                if fname is None:
                    fname = short
                add(fname, "input %d ('%s')" % (i, name), v)
            else:
                inputs.append(self._tensor(name))
        plugin = creator.create_plugin(self._node_name, trt.PluginFieldCollection(fields))
        if plugin is None:
            raise _Fail(ErrorCode.INVALID_NODE, "plugin creator '%s' could not create a plugin from fields %s"
                        % (op, sorted(given)))
        ns = getattr(creator, "plugin_namespace", "") or getattr(self, "_found_ns", "")
        if ns and not isinstance(plugin, _C.PluginV2) and not getattr(plugin, "plugin_namespace", ""):
            try:  # a Python plugin must name its creator's namespace to be found again (serialization)
                plugin.plugin_namespace = ns
            except Exception:
                pass
        layer = self.network.add_plugin_v2(inputs, plugin)
        self._name_layer(layer)
        n_out = layer.num_outputs
        outs = [o for o in node.output]
        if len([o for o in outs if o]) > n_out:
            raise _Fail(ErrorCode.INVALID_NODE, "the node has %d outputs but plugin '%s' gives %d"
                        % (len(outs), op, n_out))
        return [layer.get_output(i) for i in range(min(len(outs), n_out))]

    def _tensor_value(self, tp: Any) -> np.ndarray:
        from onnx import numpy_helper
        return numpy_helper.to_array(tp, self._base_dir) if self._base_dir else numpy_helper.to_array(tp)

    def _constant_node_value(self, node: Any) -> np.ndarray:
        a = self._attrs(node)
        if "value" in a:
            return self._tensor_value(a["value"])
        if "value_float" in a:
            return np.array(a["value_float"], dtype=np.float32)
        if "value_floats" in a:
            return np.array(a["value_floats"], dtype=np.float32)
        if "value_int" in a:
            return np.array(a["value_int"], dtype=np.int64)
        if "value_ints" in a:
            return np.array(a["value_ints"], dtype=np.int64)
        if "sparse_value" in a:
            raise _unsupported("Constant with a sparse_value")
        raise _unsupported("Constant with string values (or no value)", ErrorCode.UNSUPPORTED_NODE_DATATYPE)


# ==========================================================================================================
# Importers: one function per op, returning the node's outputs (ITensor or numpy constants).
# ==========================================================================================================

_IMPORTERS: Dict[str, Any] = {}


def _importer(*ops: str):
    def deco(f):
        for op in ops:
            _IMPORTERS[op] = f
        return f
    return deco


def _conv_weights(p: OnnxParser, node: Any, what: str = "weights") -> np.ndarray:
    w = p._cval(p._inp(node, 1), "%s (input 1)" % what)
    return np.ascontiguousarray(w.astype(np.float32))


def _opt_bias(p: OnnxParser, node: Any, k: int) -> Tuple[Optional[np.ndarray], Optional[Any]]:
    """(constant bias, or tensor bias) of input 2."""
    b = p._inp(node, 2)
    if b is None:
        return None, None
    if p._is_const(b):
        v = p._cval(b, "bias").astype(np.float32).reshape(-1)
        if v.size != k:
            raise _Fail(ErrorCode.INVALID_NODE, "bias has %d values, expected %d" % (v.size, k))
        return np.ascontiguousarray(v), None
    return None, p._tensor(b)


def _channel_tensor_add(p: OnnxParser, y: Any, bias_t: Any) -> Any:
    """y [N, K, ...] + bias [K] (a tensor)."""
    r = len(y.shape)
    b = p._reshape(bias_t, [1, -1] + [1] * (r - 2), zero_is_placeholder=False)
    return p._ew(y, b, ElementWiseOperation.SUM)


def _pads(a: Dict[str, Any], nsp: int) -> Tuple[List[int], List[int]]:
    pads = _attr_ints(a, "pads") or [0] * (2 * nsp)
    if len(pads) != 2 * nsp:
        raise _Fail(ErrorCode.INVALID_NODE, "pads %s must have %d entries" % (pads, 2 * nsp))
    return pads[:nsp], pads[nsp:]


@_importer("Conv")
def _conv(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    w = _conv_weights(p, node)
    nsp = w.ndim - 2
    if nsp < 1 or nsp > 3:
        raise _unsupported("Conv with %d spatial dims (trtlite supports 1 to 3)" % nsp,
                           ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if len(x.shape) != nsp + 2:
        raise _Fail(ErrorCode.INVALID_NODE, "input of shape %s does not match weights of shape %s"
                    % (tuple(x.shape), w.shape))
    ks = list(w.shape[2:])
    if "kernel_shape" in a and _attr_ints(a, "kernel_shape") != ks:
        raise _Fail(ErrorCode.INVALID_NODE, "kernel_shape %s differs from the weights' %s" % (a["kernel_shape"], ks))
    group = int(a.get("group", 1))
    k = w.shape[0]
    bias, bias_t = _opt_bias(p, node, k)
    layer = p.network.add_convolution_nd(x, k, ks, w, bias)
    layer.stride_nd = _attr_ints(a, "strides") or [1] * nsp
    layer.dilation_nd = _attr_ints(a, "dilations") or [1] * nsp
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
        raise _unsupported("auto_pad '%s'" % auto_pad)
    y = p._L(layer)
    if bias_t is not None:
        y = _channel_tensor_add(p, y, bias_t)
    return [y]


@_importer("ConvTranspose")
def _conv_transpose(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    w = _conv_weights(p, node)
    nsp = w.ndim - 2
    if nsp < 1 or nsp > 3:
        raise _unsupported("ConvTranspose with %d spatial dims" % nsp, ErrorCode.UNSUPPORTED_NODE_SHAPE)
    xs = tuple(x.shape)
    if len(xs) != nsp + 2:
        raise _Fail(ErrorCode.INVALID_NODE, "input of shape %s does not match weights of shape %s" % (xs, w.shape))
    group = int(a.get("group", 1))
    k_out = w.shape[1] * group
    ks = list(w.shape[2:])
    strides = _attr_ints(a, "strides") or [1] * nsp
    dil = _attr_ints(a, "dilations") or [1] * nsp
    opad = _attr_ints(a, "output_padding") or [0] * nsp
    out_shape = _attr_ints(a, "output_shape")
    auto_pad = a.get("auto_pad", "NOTSET")
    k_eff = [d * (kk - 1) + 1 for d, kk in zip(dil, ks)]
    if out_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if out_shape is not None and len(out_shape) == nsp + 2:
            out_shape = out_shape[2:]
        sp = xs[2:]
        if not _static(sp):
            raise _Dynamic("ConvTranspose with output_shape or SAME padding needs static spatial dims, got %s" % (xs,))
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
        raise _unsupported("auto_pad '%s'" % auto_pad)
    post_eff = [q - o for q, o in zip(post, opad)]  # output_padding extends the end
    bias, bias_t = _opt_bias(p, node, k_out)
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


@_importer("BatchNormalization")
def _batchnorm(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    if int(a.get("training_mode", 0)) or len([o for o in node.output if o]) > 1:
        raise _unsupported("BatchNormalization in training mode (running statistics outputs)")
    x = p._float(p._tensor(node.input[0]))
    names = ["scale", "B", "input_mean", "input_var"]
    vals = [p._cval(p._inp(node, i + 1), names[i]).astype(np.float64).reshape(-1) for i in range(4)]
    eps = float(a.get("epsilon", 1e-5))
    gamma, beta, mean, var = vals
    scale = gamma / np.sqrt(var + eps)
    shift = beta - mean * scale
    if len(x.shape) < 2:
        raise _Fail(ErrorCode.INVALID_NODE, "input of shape %s has no channel dim" % (tuple(x.shape),))
    layer = p.network.add_scale(x, ScaleMode.CHANNEL, np.ascontiguousarray(shift, np.float32),
                                np.ascontiguousarray(scale, np.float32), None)
    return [p._L(layer)]


def _param_tensor(p: OnnxParser, name: Optional[str], rank: int, shape_at: Sequence[int], fill: float,
                  count: Optional[int] = None, trailing: bool = False) -> Any:
    """A scale/bias input reshaped to `rank` with its values along dims `shape_at` (the rest 1).
    trailing: the input broadcasts numpy-style against the last dims (LayerNormalization's scale and bias
    broadcast to X.shape[axis:], so a (4,) scale of a (2, 3, 4) input with axis=1 lies on the last dim)."""
    if name is None:
        shape = [1] * rank
        for i in shape_at:
            shape[i] = count
        return p._const_tensor(np.full(shape, fill, np.float32), DataType.FLOAT)
    if p._is_const(name):
        v = p._cval(name).astype(np.float32)
        shape = [1] * rank
        src = list(v.shape)
        if trailing:
            if v.ndim > len(shape_at):
                raise _Fail(ErrorCode.INVALID_NODE, "parameter '%s' of shape %s has more dims than the %d normalized "
                            "ones" % (name, v.shape, len(shape_at)))
            return p._const_tensor(v.reshape((1,) * (rank - v.ndim) + v.shape), DataType.FLOAT)
        if len(src) == len(shape_at):
            for i, d in zip(shape_at, src):
                shape[i] = d
        else:
            if v.size != (count or v.size):
                raise _Fail(ErrorCode.INVALID_NODE, "parameter '%s' has %d values, expected %s" % (name, v.size, count))
            shape[shape_at[0]] = v.size
        return p._const_tensor(v.reshape(shape), DataType.FLOAT)
    t = p._tensor(name)
    return p._unsqueeze_to(t, rank)


@_importer("InstanceNormalization")
def _instance_norm(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    if r < 3:
        raise _Fail(ErrorCode.INVALID_NODE, "input of shape %s needs spatial dims" % (tuple(x.shape),))
    c = x.shape[1]
    s = _param_tensor(p, p._inp(node, 1), r, [1], 1.0, c)
    b = _param_tensor(p, p._inp(node, 2), r, [1], 0.0, c)
    layer = p.network.add_normalization(x, s, b, _mask(range(2, r)))
    layer.epsilon = float(a.get("epsilon", 1e-5))
    return [p._L(layer)]


@_importer("LayerNormalization")
def _layer_norm(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    if len([o for o in node.output if o]) > 1:
        raise _unsupported("LayerNormalization's Mean and InvStdDev outputs")
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    axis = p._norm_axis(int(a.get("axis", -1)), r)
    axes = list(range(axis, r))
    s = _param_tensor(p, p._inp(node, 1), r, axes, 1.0, trailing=True)
    bname = p._inp(node, 2)
    if bname is None:
        shape = [1] * r
        for i in axes:
            shape[i] = x.shape[i] if x.shape[i] > 0 else 1
        b = p._const_tensor(np.zeros(shape, np.float32), DataType.FLOAT)
    else:
        b = _param_tensor(p, bname, r, axes, 0.0, trailing=True)
    layer = p.network.add_normalization(x, s, b, _mask(axes))
    layer.epsilon = float(a.get("epsilon", 1e-5))
    return [p._L(layer)]


@_importer("GroupNormalization")
def _group_norm(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    g = int(a["num_groups"])
    # opset 18: scale and bias per group; opset 21: per channel
    s = _param_tensor(p, p._inp(node, 1), r, [1], 1.0)
    b = _param_tensor(p, p._inp(node, 2), r, [1], 0.0)
    layer = p.network.add_normalization(x, s, b, _mask(range(2, r)))
    layer.num_groups = g
    layer.epsilon = float(a.get("epsilon", 1e-5))
    return [p._L(layer)]


@_importer(*_ACTIVATIONS)
def _act(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = node.op_type
    x = p._float(p._tensor(node.input[0]))
    A = ActivationType
    if op == "Relu":
        return [p._activation(x, A.RELU)]
    if op == "LeakyRelu":
        return [p._activation(x, A.LEAKY_RELU, a.get("alpha", 0.01))]
    if op == "Sigmoid":
        return [p._activation(x, A.SIGMOID)]
    if op == "Tanh":
        return [p._activation(x, A.TANH)]
    if op == "HardSigmoid":
        return [p._activation(x, A.HARD_SIGMOID, a.get("alpha", 0.2), a.get("beta", 0.5))]
    if op == "Elu":
        return [p._activation(x, A.ELU, a.get("alpha", 1.0))]
    if op == "Selu":
        return [p._activation(x, A.SELU, a.get("alpha", 1.67326319217681884765625),
                              a.get("gamma", 1.05070102214813232421875))]
    if op == "Softplus":
        return [p._activation(x, A.SOFTPLUS, 1.0, 1.0)]
    if op == "Softsign":
        return [p._activation(x, A.SOFTSIGN)]
    if op == "ThresholdedRelu":
        return [p._activation(x, A.THRESHOLDED_RELU, a.get("alpha", 1.0))]
    raise KeyError(op)


@_importer("HardSwish")
def _hardswish(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    hs = p._activation(x, ActivationType.HARD_SIGMOID, 1.0 / 6.0, 0.5)
    return [p._ew(x, hs, ElementWiseOperation.PROD)]


@_importer("Mish")
def _mish(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    sp = p._activation(x, ActivationType.SOFTPLUS, 1.0, 1.0)
    return [p._ew(x, p._activation(sp, ActivationType.TANH), ElementWiseOperation.PROD)]


@_importer("Gelu")
def _gelu(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    approx = a.get("approximate", "none")
    if approx == "none":
        return [p._activation(x, ActivationType.GELU_ERF)]
    if approx == "tanh":
        return [p._activation(x, ActivationType.GELU_TANH)]
    raise _unsupported("Gelu approximate='%s'" % approx)


@_importer("Clip")
def _clip(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    if p._opset < 11:
        lo, hi = a.get("min", -math.inf), a.get("max", math.inf)
        lo_n = hi_n = None
    else:
        lo_n, hi_n = p._inp(node, 1), p._inp(node, 2)
        lo = float(p._cval(lo_n, "min").reshape(-1)[0]) if lo_n and p._is_const(lo_n) else (None if lo_n else -math.inf)
        hi = float(p._cval(hi_n, "max").reshape(-1)[0]) if hi_n and p._is_const(hi_n) else (None if hi_n else math.inf)
    if lo is not None and hi is not None and lo > hi:
        # ONNX: y = min(max(x, min), max), so min > max gives max everywhere; trtlite's CLIP activation
        # would give min where x <= min.  With min lowered to max both agree.
        lo = hi
    if x.dtype == DataType.FLOAT and lo is not None and hi is not None:
        if lo == 0.0 and hi == math.inf:
            return [p._activation(x, ActivationType.RELU)]
        return [p._activation(x, ActivationType.CLIP, lo, hi)]
    y = x
    for bound, name, op in ((lo, lo_n, ElementWiseOperation.MAX), (hi, hi_n, ElementWiseOperation.MIN)):
        if bound is None:
            y = p._ew(y, p._tensor(name), op)
        elif math.isfinite(bound):
            y = p._ew_const(y, np.array(bound).astype(_TRT_NP[DataType(x.dtype)]), op)
    return [y]


@_importer("PRelu")
def _prelu(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    sn = node.input[1]
    if p._is_const(sn):
        s = p._cval(sn).astype(np.float32)
        if s.ndim > r:
            raise _Fail(ErrorCode.INVALID_NODE, "slope of shape %s has more dims than the input %s"
                        % (s.shape, tuple(x.shape)))
        s = s.reshape((1,) * (r - s.ndim) + s.shape)
        st = p._const_tensor(s, DataType.FLOAT)
    else:
        st = p._unsqueeze_to(p._float(p._tensor(sn)), r)
    return [p._L(p.network.add_parametric_relu(x, st))]


@_importer(*_UNARY.keys())
def _unary_op(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    op = _UNARY[node.op_type]
    if node.op_type not in ("Abs", "Neg", "Sign", "Not"):
        x = p._float(x)
    return [p._unary(x, op)]


@_importer("IsNaN")
def _isnan(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    return [p._unary(p._ew(x, x, ElementWiseOperation.EQUAL), UnaryOperation.NOT)]


@_importer("IsInf")
def _isinf(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    neg, pos = int(a.get("detect_negative", 1)), int(a.get("detect_positive", 1))
    inf = p._unary(x, UnaryOperation.ISINF)
    if neg and pos:
        return [inf]
    if not neg and not pos:
        return [p._ew(inf, p._unary(inf, UnaryOperation.NOT), ElementWiseOperation.AND)]
    sign = p._ew_const(x, np.float32(0.0), ElementWiseOperation.GREATER if pos else ElementWiseOperation.LESS)
    return [p._ew(inf, sign, ElementWiseOperation.AND)]


def _arith_operands(p: OnnxParser, node: Any, names: Sequence[str]) -> List[Any]:
    ts = p._operands(names)
    dts = {t.dtype for t in ts}
    if len(dts) > 1:  # e.g. Pow(float, int): ONNX allows the exponent's type to differ
        ts = [ts[0]] + [p._cast(t, ts[0].dtype) for t in ts[1:]]
    return ts


@_importer(*_BINARY.keys())
def _binary(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = _BINARY[node.op_type]
    a_t, b_t = _arith_operands(p, node, node.input[:2])
    if op == ElementWiseOperation.EQUAL and a_t.dtype == DataType.BOOL:
        a_t, b_t = p._cast(a_t, DataType.INT32), p._cast(b_t, DataType.INT32)
    return [p._L(p.network.add_elementwise(a_t, b_t, op))]


@_importer("GreaterOrEqual", "LessOrEqual")
def _cmp_or_equal(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    a_t, b_t = _arith_operands(p, node, node.input[:2])
    inv = ElementWiseOperation.LESS if node.op_type == "GreaterOrEqual" else ElementWiseOperation.GREATER
    return [p._unary(p._L(p.network.add_elementwise(a_t, b_t, inv)), UnaryOperation.NOT)]


@_importer(*_VARIADIC.keys())
def _variadic(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = _VARIADIC[node.op_type]
    names = [n for n in node.input if n]
    ts = _arith_operands(p, node, names)
    y = ts[0]
    for t in ts[1:]:
        y = p._L(p.network.add_elementwise(y, t, op))
    if node.op_type == "Mean" and len(ts) > 1:
        y = p._ew_const(y, np.array(len(ts), dtype=_TRT_NP[DataType(y.dtype)]), ElementWiseOperation.DIV)
    if len(ts) == 1:
        y = p._L(p.network.add_identity(y))
    return [y]


@_importer("Mod")
def _mod(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x, y = _arith_operands(p, node, node.input[:2])
    E = ElementWiseOperation
    if int(a.get("fmod", 0)):
        if x.dtype == DataType.INT32:
            q = p._L(p.network.add_elementwise(x, y, E.DIV))
        else:
            q = p._L(p.network.add_elementwise(x, y, E.DIV))
            q = p._ew(p._unary(q, UnaryOperation.SIGN), p._unary(p._unary(q, UnaryOperation.ABS),
                                                                   UnaryOperation.FLOOR), E.PROD)
    else:
        q = p._L(p.network.add_elementwise(x, y, E.FLOOR_DIV))
    return [p._ew(x, p._ew(y, q, E.PROD), E.SUB)]


@_importer("Where")
def _where(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    c, t, e = node.input[:3]
    dtype = None
    for n in (t, e):
        if n in p._tensors:
            dtype = p._tensors[n].dtype
            break
    if dtype is None:
        dtype = _trt_of_np(p._cval(t).dtype)
    vals = p._operands([c, t, e], dtype, {0: DataType.BOOL})
    cond = vals[0]
    if cond.dtype != DataType.BOOL:
        cond = p._cast(cond, DataType.BOOL)
    return [p._L(p.network.add_select(cond, vals[1], vals[2]))]


@_importer("Gemm")
def _gemm(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    ta, tb = int(a.get("transA", 0)), int(a.get("transB", 0))
    A = p._float(p._tensor(node.input[0]))
    if len(A.shape) != 2:
        raise _Fail(ErrorCode.INVALID_NODE, "A must be 2-D, got %s" % (tuple(A.shape),))
    M = MatrixOperation
    bn = node.input[1]
    if p._is_const(bn):
        b = p._cval(bn).astype(np.float32)
        if b.ndim != 2:
            raise _Fail(ErrorCode.INVALID_NODE, "B must be 2-D, got %s" % (b.shape,))
        if alpha != 1.0:
            b = b * np.float32(alpha)
            alpha = 1.0
        # keep the weights as stored ([N, K] with transB: the usual fully-connected layout)
        B = p._const_tensor(np.ascontiguousarray(b), DataType.FLOAT, bn if alpha == 1.0 and
                            float(a.get("alpha", 1.0)) == 1.0 else None)
    else:
        B = p._float(p._tensor(bn))
    y = p._L(p.network.add_matrix_multiply(A, M.TRANSPOSE if ta else M.NONE, B, M.TRANSPOSE if tb else M.NONE))
    if alpha != 1.0:
        y = p._ew_const(y, np.float32(alpha), ElementWiseOperation.PROD)
    cn = p._inp(node, 2)
    if cn is not None and beta != 0.0:
        if p._is_const(cn):
            c = p._cval(cn).astype(np.float32) * np.float32(beta)
            c = c.reshape((1,) * (2 - c.ndim) + c.shape)
            C = p._const_tensor(c, DataType.FLOAT)
        else:
            C = p._unsqueeze_to(p._float(p._tensor(cn)), 2)
            if beta != 1.0:
                C = p._ew_const(C, np.float32(beta), ElementWiseOperation.PROD)
        y = p._ew(y, C, ElementWiseOperation.SUM)
    return [y]


@_importer("MatMul")
def _matmul(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    an, bn = node.input[:2]
    A = p._float(p._tensor(an))
    B = p._float(p._tensor(bn, DataType.FLOAT))
    ra, rb = len(A.shape), len(B.shape)
    M = MatrixOperation
    op0 = M.VECTOR if ra == 1 else M.NONE
    op1 = M.VECTOR if rb == 1 else M.NONE
    ba = ra - (1 if ra == 1 else 2)
    bb = rb - (1 if rb == 1 else 2)
    if ba < bb:
        A = p._unsqueeze_to(A, ra + bb - ba)
    elif bb < ba:
        B = p._unsqueeze_to(B, rb + ba - bb)
    return [p._L(p.network.add_matrix_multiply(A, op0, B, op1))]


@_importer("Constant")
def _constant(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    return [p._constant_node_value(node)]


@_importer("Identity", "Dropout")
def _identity(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    outs = [x]
    if len(node.output) > 1 and node.output[1]:
        shp = tuple(x.shape)
        if not _static(shp):
            raise _Dynamic("Dropout's mask output with a dynamic shape %s" % (shp,))
        outs.append(np.ones(shp, np.bool_))
    return outs


@_importer("Cast", "CastLike")
def _cast_op(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    if node.op_type == "Cast":
        to = int(a["to"])
    else:
        ln = node.input[1]
        if p._is_const(ln):
            v = p._consts[ln]
            to = {np.dtype(np.float32): _T_FLOAT, np.dtype(np.float64): _T_DOUBLE, np.dtype(np.float16): _T_FLOAT16,
                  np.dtype(np.bool_): _T_BOOL}.get(v.dtype, _T_INT64)
        else:
            dt = p._tensors[ln].dtype
            to = {DataType.FLOAT: _T_FLOAT, DataType.BOOL: _T_BOOL}.get(dt, _T_INT32)
    dt = _onnx_to_trt(to)
    if dt is None:
        raise _unsupported("Cast to ONNX type %d" % to, ErrorCode.UNSUPPORTED_NODE_DATATYPE)
    if x.dtype == dt:
        return [x]
    if x.dtype == DataType.FLOAT and dt == DataType.INT32:
        pass  # trtlite's float -> int truncates toward zero, as ONNX
    return [p._cast(x, dt)]


def _resolve_reshape(p: OnnxParser, xname: str, x: Any, target: np.ndarray, allowzero: bool) -> Tuple[List[int], bool]:
    xs = tuple(x.shape)
    dims: List[Optional[int]] = []
    copy_used = False
    literal_zero = False
    for i, v in enumerate(target.reshape(-1)):
        if isinstance(v, _Sym):
            if i < len(xs) and xs[i] < 0 and p._dim_is(v, xname, i):
                dims.append(0)
                copy_used = True
            else:
                dims.append(None)
            continue
        v = int(v)
        if v == 0:
            if allowzero:
                literal_zero = True
            else:
                copy_used = True
        dims.append(v)
    unknown = [i for i, d in enumerate(dims) if d is None]
    if unknown:
        if len(unknown) == 1 and -1 not in dims:
            dims[unknown[0]] = -1
        else:
            raise _Dynamic("Reshape target %s holds dynamic dimensions that are neither copied from the input "
                           "(same position) nor inferable (at most one -1)" % list(target.reshape(-1)))
    if literal_zero and copy_used:
        raise _unsupported("Reshape with allowzero=1, a literal 0 and a dynamic dimension to copy")
    return [int(d) for d in dims], not literal_zero


@_importer("Reshape")
def _reshape_op(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    xname = node.input[0]
    x = p._tensor(xname)
    if p._opset < 5:
        target = np.array(a["shape"], dtype=np.int64)
    else:
        target = p._cval(p._inp(node, 1), "shape (input 1)", allow_sym=True)
    allowzero = bool(int(a.get("allowzero", 0)))
    dims, zero_ph = _resolve_reshape(p, xname, x, target, allowzero)
    xs = tuple(x.shape)
    xk = p._raw_keys(xname)
    keys = []
    for i, v in enumerate(target.reshape(-1)):
        if isinstance(v, _Sym):
            keys.append(v.key)
        elif int(v) == 0 and not allowzero and i < len(xk):
            keys.append(xk[i])
        else:
            keys.append(None if int(v) < 0 else int(v))
    p._set_syms(0, keys)
    if zero_ph and _static(xs):  # write the copied dims out: plain static reshape
        dims = [xs[i] if d == 0 else d for i, d in enumerate(dims)]
    return [p._reshape(x, dims, zero_is_placeholder=zero_ph)]


@_importer("Flatten")
def _flatten(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    r = len(x.shape)
    axis = int(a.get("axis", 1))
    if axis < 0:
        axis += r
    if not 0 <= axis <= r:
        raise _Fail(ErrorCode.INVALID_NODE, "axis %d out of range for rank %d" % (a.get("axis", 1), r))
    if axis == 0:
        return [p._reshape(x, [1, -1], zero_is_placeholder=False)]
    if axis == 1:
        p._set_syms(0, [p._raw_keys(node.input[0])[0], None])
    return [p._reshape_2d(x, axis)]


@_importer("Transpose")
def _transpose_op(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    r = len(x.shape)
    perm = _attr_ints(a, "perm") or list(range(r))[::-1]
    if sorted(perm) != list(range(r)):
        raise _Fail(ErrorCode.INVALID_NODE, "perm %s is not a permutation of rank %d" % (perm, r))
    if perm == list(range(r)):
        return [p._L(p.network.add_identity(x))]
    return [p._transpose(x, perm)]


@_importer("Squeeze")
def _squeeze_op(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    r = len(xs)
    if p._opset >= 13:
        an = p._inp(node, 1)
        axes = None if an is None else [int(v) for v in p._cval(an, "axes").reshape(-1)]
    else:
        axes = _attr_ints(a, "axes")
    if axes is None:
        axes = [i for i, d in enumerate(xs) if d == 1]
        if any(d < 0 for d in xs):
            p._log(Severity.WARNING, "ONNX parser: node '%s': Squeeze without axes keeps the dynamic dims of %s"
                   % (p._node_name, xs))
    axes = [p._norm_axis(ax, r) for ax in axes]
    xk = p._raw_keys(node.input[0])
    p._set_syms(0, [k for i, k in enumerate(xk) if i not in axes])
    y = p._squeeze(x, axes)
    if y is x:
        y = p._L(p.network.add_identity(x))
    return [y]


@_importer("Unsqueeze")
def _unsqueeze_op(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    if p._opset >= 13:
        axes = [int(v) for v in p._cval(p._inp(node, 1), "axes").reshape(-1)]
    else:
        axes = _attr_ints(a, "axes")
    out_r = len(x.shape) + len(axes)
    axes = sorted(p._norm_axis(ax, out_r) for ax in axes)
    if len(set(axes)) != len(axes):
        raise _Fail(ErrorCode.INVALID_NODE, "repeated axes %s" % axes)
    it = iter(p._raw_keys(node.input[0]))
    p._set_syms(0, [1 if i in axes else next(it, None) for i in range(out_r)])
    return [p._unsqueeze(x, axes)]


@_importer("Concat")
def _concat(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    names = [n for n in node.input if n]
    dtype = None
    for n in names:
        if n in p._tensors:
            dtype = p._tensors[n].dtype
            break
    ts = [p._tensor(n, dtype) for n in names]
    r = len(ts[0].shape)
    axis = p._norm_axis(int(a["axis"]), r)
    # drop empty constants along the axis (exporters write them for optional pieces)
    keep = [t for t, n in zip(ts, names) if not (n in p._consts and p._consts[n].ndim == r and
                                                 p._consts[n].shape[axis] == 0)]
    ts = keep or ts
    if len(ts) == 1:
        return [p._L(p.network.add_identity(ts[0]))]
    # add_concatenation takes at most MAX_CONCAT_INPUTS tensors: concatenate runs of them first (a concat
    # of concats along one axis is the same concat)
    while len(ts) > MAX_CONCAT_INPUTS:
        runs = [ts[i:i + MAX_CONCAT_INPUTS] for i in range(0, len(ts), MAX_CONCAT_INPUTS)]
        ts = [run[0] if len(run) == 1 else p._concat_layer(run, axis) for run in runs]
    return [p._concat_layer(ts, axis)]


@_importer("Split")
def _split(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    axis = p._norm_axis(int(a.get("axis", 0)), len(xs))
    vals = [None] + [p._cval(n, "split") if n else None for n in node.input[1:2]]
    sizes = _split_sizes(p, node, a, vals, xs[axis])
    outs = []
    start = 0
    for n in sizes:
        outs.append(p._slice(x, {axis: (start, n, 1)}) if n != xs[axis] else p._L(p.network.add_identity(x)))
        start += n
    return outs


def _resolve_bound(p: OnnxParser, v: Any, xname: str, axis: int, dim: int) -> int:
    if isinstance(v, _Sym):
        if p._dim_is(v, xname, axis):
            return 2 ** 62  # "the whole dim": clamps to dim
        raise _Dynamic("Slice bound %r is a dynamic dimension that is not the sliced axis' own size (e.g. "
                       "pe[:T] with T from another tensor): trtlite has no shape tensors to slice by it" % (v,))
    return int(v)


_END = 2 ** 31 - 1  # bounds at least this large mean "to the end" (exporters write INT_MAX or INT64_MAX)


def _dynamic_axis_slice(s: int, e: int, st: int) -> Tuple[str, Any]:
    """How to slice a dynamic axis (size D known at run time) from constant bounds: ("crop", (pre, post))
    for a padding layer that crops pre elements at the start and post at the end (output D - pre - post),
    or ("gather", indices) when the output size is static (negative indices count from the end, which
    trtlite's gather resolves at run time).  Raises _Dynamic when the output size depends on D in a way
    neither can express.  Bounds of magnitude >= _END mean "past the end" / "before the start"."""
    if st == 1 and 0 <= s < _END and (e >= _END or -_END < e < 0):
        return "crop", (s, 0 if e >= _END else -e)  # x[s:] and x[s:-k]
    idx = None
    if abs(s) < _END and abs(e) < _END and (s >= 0) == (e >= 0):
        idx = np.arange(s, e, st)  # x[a:b], x[-a:-b] (either direction)
    elif -_END < s < 0 and e >= _END and st > 0:
        idx = np.arange(s, 0, st)  # x[-a:]
    elif 0 <= s < _END and e <= -_END and st < 0:
        idx = np.arange(s, -1, st)  # x[a::-1]
    if idx is None:
        raise _Dynamic("Slice (starts %d, ends %d, step %d) along a dynamic axis gives a size that depends on the "
                       "axis' run-time size in a way trtlite cannot express (it slices dynamic axes by cropping a "
                       "constant number of elements from each end, step 1, or by a constant number of indices)"
                       % (s, e, st))
    if idx.size == 0:
        raise _unsupported("Slice gives an empty tensor", ErrorCode.UNSUPPORTED_NODE_SHAPE)
    # as many elements as the bounds say, provided the axis is long enough at run time: a shorter one fails
    # there with a gather index error (ONNX would clamp the bounds)
    return "gather", idx


@_importer("Slice")
def _slice_op(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    xname = node.input[0]
    x = p._tensor(xname)
    xs = tuple(x.shape)
    r = len(xs)
    vals: List[Any] = [None]
    if p._opset >= 10:
        for i in range(1, 5):
            n = p._inp(node, i)
            vals.append(None if n is None else p._cval(n, ["", "starts", "ends", "axes", "steps"][i], allow_sym=True))
    starts, ends, axes, steps = _slice_params(p, a, vals, r)
    spec = {}
    crop: Dict[int, Tuple[int, int]] = {}
    gathers: Dict[int, np.ndarray] = {}
    for s, e, ax, st in zip(starts, ends, axes, steps):
        dim = xs[ax]
        s = _resolve_bound(p, s, xname, ax, dim)
        e = _resolve_bound(p, e, xname, ax, dim)
        if dim < 0:
            if s == 0 and st == 1 and e >= _END:
                continue
            try:
                how, arg = _dynamic_axis_slice(s, e, st)
            except _Fail as f:
                raise type(f)("axis %d of %s: %s" % (ax, xs, f)) if isinstance(f, _Dynamic) else f
            if how == "crop":
                crop[ax] = arg
            else:
                gathers[ax] = arg
            continue
        s0, n = _clamp_slice(s, e, st, dim)
        if n == 0:
            raise _unsupported("Slice gives an empty tensor (axis %d of %s)" % (ax, xs),
                               ErrorCode.UNSUPPORTED_NODE_SHAPE)
        spec[ax] = (s0, n, st)
    y = p._slice(x, spec)
    if crop:
        # one padding layer crops every such axis (it pads the trailing dims from the first one on)
        first = min(crop)
        pre = [-crop[i][0] if i in crop else 0 for i in range(first, r)]
        post = [-crop[i][1] if i in crop else 0 for i in range(first, r)]
        y = p._L(p.network.add_padding_nd(y, pre, post))
    for ax, idx in sorted(gathers.items()):
        y = p._gather_axis(y, ax, idx)
    if gathers or crop:
        keys = p._raw_keys(xname)
        p._set_syms(0, [len(gathers[i]) if i in gathers else None if i in crop else k for i, k in enumerate(keys)])
    if y is x:
        y = p._L(p.network.add_identity(x))
    return [y]


@_importer("Pad")
def _pad(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    r = len(xs)
    mode = a.get("mode", "constant")
    if p._opset < 11:
        pads = _attr_ints(a, "pads") or _attr_ints(a, "paddings")
        value = float(a.get("value", 0.0))
        axes = list(range(r))
    else:
        pads = [int(v) for v in p._cval(p._inp(node, 1), "pads").reshape(-1)]
        vn = p._inp(node, 2)
        value = p._cval(vn, "constant_value").reshape(-1) if vn else np.zeros(1)
        value = value[0].item() if value.size else 0
        an = p._inp(node, 3)
        axes = [p._norm_axis(int(v), r) for v in p._cval(an, "axes").reshape(-1)] if an else list(range(r))
    if len(pads) != 2 * len(axes):
        raise _Fail(ErrorCode.INVALID_NODE, "pads %s must have %d entries" % (pads, 2 * len(axes)))
    pre, post = [0] * r, [0] * r
    for i, ax in enumerate(axes):
        pre[ax] = pads[i]
        post[ax] = pads[i + len(axes)]
    padded = [i for i in range(r) if pre[i] or post[i]]
    if not padded:
        return [p._L(p.network.add_identity(x))]
    if mode == "constant":
        first = padded[0]
        y = p._L(p.network.add_padding_nd(x, pre[first:], post[first:]))
        if value != 0:
            # padding layers pad with zeros: add `value` where the padding went (an exact mask)
            mshape = [1] * r
            for i in padded:
                if xs[i] < 0:
                    raise _Dynamic("constant padding with value %r along the dynamic axis %d" % (value, i))
                mshape[i] = xs[i] + pre[i] + post[i]
            mask = np.full(mshape, value, dtype=_TRT_NP[DataType(x.dtype)])
            inner = tuple(slice(max(pre[i], 0), max(pre[i], 0) + xs[i] + min(pre[i], 0) + min(post[i], 0))
                          if i in padded else slice(None) for i in range(r))
            mask[inner] = 0
            y = p._ew_const(y, mask, ElementWiseOperation.SUM)
        return [y]
    if mode not in ("reflect", "edge", "wrap"):
        raise _unsupported("Pad mode '%s'" % mode)
    slice_mode = {"reflect": SampleMode.REFLECT, "edge": SampleMode.CLAMP, "wrap": SampleMode.WRAP}[mode]
    for i in padded:
        if xs[i] < 0:
            raise _Dynamic("%s padding along the dynamic axis %d" % (mode, i))
    if _static(xs):
        layer = p.network.add_slice(x, [-v for v in pre], [xs[i] + pre[i] + post[i] for i in range(r)], [1] * r)
        layer.mode = slice_mode
        return [p._L(layer)]
    y = x
    for i in padded:
        n = xs[i]
        idx = np.arange(-pre[i], n + post[i])
        if mode == "edge":
            idx = np.clip(idx, 0, n - 1)
        elif mode == "wrap":
            idx = np.mod(idx, n)
        else:
            period = 2 * (n - 1) if n > 1 else 1
            idx = np.abs(np.mod(idx, period)) if n > 1 else np.zeros_like(idx)
            idx = np.where(idx >= n, period - idx, idx)
        y = p._gather_axis(y, i, idx)
    return [y]


@_importer("Tile")
def _tile(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    reps = [int(v) for v in p._cval(p._inp(node, 1), "repeats").reshape(-1)]
    if len(reps) != len(xs):
        raise _Fail(ErrorCode.INVALID_NODE, "repeats %s for an input of rank %d" % (reps, len(xs)))
    y = x
    for ax, rep in enumerate(reps):
        if rep == 1:
            continue
        if xs[ax] < 0:
            raise _Dynamic("Tile along the dynamic axis %d" % ax)
        y = p._gather_axis(y, ax, np.tile(np.arange(xs[ax]), rep))
    if y is x:
        y = p._L(p.network.add_identity(x))
    return [y]


@_importer("Expand")
def _expand(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    xname = node.input[0]
    x = p._tensor(xname)
    shape = p._cval(p._inp(node, 1), "shape", allow_sym=True).reshape(-1)
    r0 = len(x.shape)
    r = max(r0, len(shape))
    xk = p._raw_keys(xname)
    x = p._unsqueeze_to(x, r)
    xs = tuple(x.shape)
    off = r - r0
    shape = [1] * (r - len(shape)) + list(shape)
    spec: Dict[int, int] = {}  # static target n of a static 1-dim: copied n times
    dyn: Dict[int, Any] = {}  # dims whose size is known only at run time: broadcast by a select
    keys: List[Any] = []
    for i in range(r):
        s, d = shape[i], xs[i]
        k = xk[i - off] if i >= off and i - off < len(xk) else 1
        if isinstance(s, _Sym):
            if d >= 0 and d != 1:
                keys.append(d)
                continue  # broadcasting keeps x's static dim
            keys.append(s.key)
            if d < 0 and p._dim_is(s, xname, i - off):
                continue
            dyn[i] = s  # x's 1 (or a dynamic dim of size 1 or s at run time) broadcast to s
            continue
        s = int(s)
        keys.append(k if s == 1 else s)
        if s == 1 or s == d:
            continue
        if d == 1:
            spec[i] = s
        elif d < 0:
            dyn[i] = s  # x's dynamic dim must be 1 or s at run time: broadcast against a static carrier
        else:
            raise _Fail(ErrorCode.INVALID_NODE, "cannot expand shape %s to %s" % (xs, shape))
    p._set_syms(0, keys)
    if not spec and not dyn:
        return [p._L(p.network.add_identity(x))]
    y = x
    if spec and _static(xs):
        out = [spec.get(i, xs[i]) for i in range(r)]
        stride = [0 if i in spec else 1 for i in range(r)]
        y = p._L(p.network.add_slice(x, [0] * r, out, stride))
    else:
        for i, n in sorted(spec.items()):
            y = p._gather_axis(y, i, np.zeros(n, np.int32))
    static_dyn = {i: n for i, n in dyn.items() if not isinstance(n, _Sym)}
    if static_dyn:
        cond = p._const_tensor(np.ones([static_dyn.get(i, 1) for i in range(r)], np.bool_), DataType.BOOL)
        y = p._L(p.network.add_select(cond, y, y))
    return [p._broadcast_to_syms(y, {i: v for i, v in dyn.items() if isinstance(v, _Sym)}, "the target shape")]


@_importer("ConstantOfShape")
def _constant_of_shape(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Only reached when the shape holds dynamic dims (static shapes are folded): a constant of the static
    dims, broadcast to the dynamic ones at run time."""
    shape = list(p._cval(p._inp(node, 0), "shape", allow_sym=True).reshape(-1))
    val = a.get("value")
    fill = np.zeros(1, np.float32) if val is None else p._tensor_value(val).reshape(-1)
    if fill.size != 1:
        raise _Fail(ErrorCode.INVALID_NODE, "value must hold one element, it has %d" % fill.size)
    base = [1 if isinstance(v, _Sym) else int(v) for v in shape]
    if any(d < 0 for d in base):
        raise _Fail(ErrorCode.INVALID_NODE, "negative dimension in shape %s" % (shape,))
    p._set_syms(0, [v.key if isinstance(v, _Sym) else int(v) for v in shape])
    c = p._const_tensor(np.full(base, fill[0], dtype=fill.dtype))
    syms = {i: v for i, v in enumerate(shape) if isinstance(v, _Sym)}
    return [p._broadcast_to_syms(c, syms, "the shape")]


@_importer("Gather")
def _gather(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    data = p._tensor(node.input[0])
    r = len(data.shape)
    axis = p._norm_axis(int(a.get("axis", 0)), r)
    iname = node.input[1]
    if p._is_const(iname):
        idx = p._cval(iname, "indices")
        dim = data.shape[axis]
        if dim >= 0 and idx.size and (idx.max() >= dim or idx.min() < -dim):
            raise _Fail(ErrorCode.INVALID_NODE, "indices out of range for axis %d of size %d" % (axis, dim))
        it = p._const_tensor(idx.astype(np.int64), DataType.INT32, iname)
    else:
        it = p._cast(p._tensor(iname), DataType.INT32)
    dk, ik = p._raw_keys(node.input[0]), p._raw_keys(iname)
    p._set_syms(0, dk[:axis] + ik + dk[axis + 1:])
    return [p._L(p.network.add_gather(data, it, axis))]


@_importer("GatherElements")
def _gather_elements(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    data = p._tensor(node.input[0])
    axis = p._norm_axis(int(a.get("axis", 0)), len(data.shape))
    it = p._cast(p._tensor(node.input[1], DataType.INT32), DataType.INT32)
    layer = p.network.add_gather_v2(data, it, GatherMode.ELEMENT)
    layer.axis = axis
    return [p._L(layer)]


@_importer("GatherND")
def _gather_nd(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    data = p._tensor(node.input[0])
    it = p._cast(p._tensor(node.input[1], DataType.INT32), DataType.INT32)
    layer = p.network.add_gather_v2(data, it, GatherMode.ND)
    layer.num_elementwise_dims = int(a.get("batch_dims", 0))
    return [p._L(layer)]


def _resize_scales_from_sizes(p: OnnxParser, xname: str, xs: Sequence[int],
                              sizes: Sequence[Any]) -> Tuple[Optional[List[int]], Optional[List[float]]]:
    """(static output shape) or (scales) for Resize's `sizes`."""
    static_out = []
    scales = []
    for i, s in enumerate(sizes):
        if isinstance(s, _Sym):
            if xs[i] < 0 and p._dim_is(s, xname, i):
                static_out.append(None)
                scales.append(1.0)
                continue
            raise _Dynamic("Resize to the dynamic size %r" % (s,))
        s = int(s)
        static_out.append(s)
        if xs[i] < 0:
            raise _Dynamic("Resize of the dynamic axis %d to the fixed size %d" % (i, s))
        scales.append(s / xs[i] if xs[i] else 1.0)
    if all(v is not None for v in static_out) and _static(xs):
        return [int(v) for v in static_out], None
    for i, (s, n) in enumerate(zip(static_out, xs)):
        if s is not None and int(math.floor(float(np.float32(n) * np.float32(scales[i])))) != s:
            raise _Dynamic("Resize to size %d along axis %d cannot be written as a scale with dynamic dims" % (s, i))
    return None, scales


@_importer("Resize", "Upsample")
def _resize(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    xname = node.input[0]
    x = p._tensor(xname)
    xs = tuple(x.shape)
    r = len(xs)
    mode = a.get("mode", "nearest")
    legacy = node.op_type == "Upsample" or p._opset < 11
    sizes = scales = None
    axes = None
    if node.op_type == "Upsample" and p._opset < 9:
        scales = [float(v) for v in a["scales"]]
    elif legacy:
        scales = [float(v) for v in p._cval(p._inp(node, 1), "scales").reshape(-1)]
    else:
        sn, zn = p._inp(node, 2), p._inp(node, 3)
        if sn is not None and p._cval(sn, "scales").size > 0:
            scales = [float(v) for v in p._cval(sn, "scales").reshape(-1)]
        elif zn is not None:
            sizes = list(p._cval(zn, "sizes", allow_sym=True).reshape(-1))
        else:
            raise _Fail(ErrorCode.INVALID_NODE, "neither scales nor sizes is given")
        axes = _attr_ints(a, "axes")
        if int(a.get("antialias", 0)) and mode != "nearest":
            raise _unsupported("Resize with antialias=1")
        if a.get("keep_aspect_ratio_policy", "stretch") != "stretch" and sizes is not None:
            raise _unsupported("Resize keep_aspect_ratio_policy '%s'" % a["keep_aspect_ratio_policy"])
    if axes is not None:
        axes = [p._norm_axis(v, r) for v in axes]
        full_sc = [1.0] * r
        full_sz: List[Any] = list(p._shape_value(xs, xname, {}))
        for k, ax in enumerate(axes):
            if scales is not None:
                full_sc[ax] = scales[k]
            else:
                full_sz[ax] = sizes[k]
        if scales is not None:
            scales = full_sc
        else:
            sizes = full_sz
    layer = p.network.add_resize(x)
    if scales is not None:
        if len(scales) != r:
            raise _Fail(ErrorCode.INVALID_NODE, "%d scales for an input of rank %d" % (len(scales), r))
        layer.scales = [float(np.float32(s)) for s in scales]
        ratio = scales
    else:
        if len(sizes) != r:
            raise _Fail(ErrorCode.INVALID_NODE, "%d sizes for an input of rank %d" % (len(sizes), r))
        shape, sc = _resize_scales_from_sizes(p, xname, xs, sizes)
        if shape is not None:
            layer.shape = shape
            ratio = [s / n if n else 1.0 for s, n in zip(shape, xs)]
        else:
            layer.scales = [float(np.float32(s)) for s in sc]
            ratio = sc
    if mode == "nearest":
        layer.resize_mode = InterpolationMode.NEAREST
    elif mode in ("linear", "bilinear", "trilinear"):
        layer.resize_mode = InterpolationMode.LINEAR
    elif mode in ("cubic", "bicubic"):
        layer.resize_mode = InterpolationMode.CUBIC
        layer.cubic_coeff = float(a.get("cubic_coeff_a", -0.75))
        layer.exclude_outside = bool(int(a.get("exclude_outside", 0)))
    else:
        raise _unsupported("Resize mode '%s'" % mode)
    C = ResizeCoordinateTransformation
    if legacy:
        layer.coordinate_transformation = C.ASYMMETRIC
        if mode == "nearest":
            # Upsample and Resize-10: floor when upsampling, ceil when downsampling (ONNX Runtime's rule)
            up = [s >= 1.0 for s in ratio]
            down = [s <= 1.0 for s in ratio]
            if all(up):
                layer.nearest_rounding = ResizeRoundMode.FLOOR
            elif all(down):
                layer.nearest_rounding = ResizeRoundMode.CEIL
            else:
                raise _unsupported("nearest Resize that upsamples some axes and downsamples others (opset < 11)")
        return [p._L(layer)]
    ctm = a.get("coordinate_transformation_mode", "half_pixel")
    if ctm == "half_pixel":
        layer.coordinate_transformation = C.HALF_PIXEL
    elif ctm == "pytorch_half_pixel":
        layer.coordinate_transformation = C.HALF_PIXEL
        layer.selector_for_single_pixel = ResizeSelector.UPPER
    elif ctm == "align_corners":
        layer.coordinate_transformation = C.ALIGN_CORNERS
    elif ctm == "asymmetric":
        layer.coordinate_transformation = C.ASYMMETRIC
    else:
        raise _unsupported("Resize coordinate_transformation_mode '%s'" % ctm)
    if mode == "nearest":
        nm = a.get("nearest_mode", "round_prefer_floor")
        R = ResizeRoundMode
        table = {"round_prefer_floor": R.HALF_DOWN, "round_prefer_ceil": R.HALF_UP, "floor": R.FLOOR, "ceil": R.CEIL}
        if nm not in table:
            raise _unsupported("Resize nearest_mode '%s'" % nm)
        layer.nearest_rounding = table[nm]
    return [p._L(layer)]


def _pool_out(n: int, k: int, s: int, pre: int, post: int, ceil: bool) -> int:
    if ceil:
        o = -(-(n + pre + post - k) // s) + 1
        if (o - 1) * s >= n + pre:
            o -= 1
        return o
    return (n + pre + post - k) // s + 1


@_importer("MaxPool", "AveragePool", "LpPool")
def _pool(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = node.op_type
    if op == "LpPool":
        raise _unsupported("LpPool", ErrorCode.UNSUPPORTED_NODE)
    if len([o for o in node.output if o]) > 1:
        raise _unsupported("MaxPool's Indices output")
    x = p._float(p._tensor(node.input[0]))
    xs = tuple(x.shape)
    ks = _attr_ints(a, "kernel_shape")
    nsp = len(ks)
    if nsp < 1 or nsp > 3 or len(xs) != nsp + 2:
        raise _unsupported("pooling with kernel %s on input %s" % (ks, xs), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    strides = _attr_ints(a, "strides") or [1] * nsp
    dil = _attr_ints(a, "dilations") or [1] * nsp
    if any(d != 1 for d in dil):
        raise _unsupported("pooling with dilations %s" % dil)
    ceil = bool(int(a.get("ceil_mode", 0)))
    layer = p.network.add_pooling_nd(x, PoolingType.MAX if op == "MaxPool" else PoolingType.AVERAGE, ks)
    layer.stride_nd = strides
    auto_pad = a.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        layer.padding_mode = PaddingMode.SAME_UPPER if auto_pad == "SAME_UPPER" else PaddingMode.SAME_LOWER
    else:
        if auto_pad == "VALID":
            pre, post = [0] * nsp, [0] * nsp
        elif auto_pad == "NOTSET":
            pre, post = _pads(a, nsp)
        else:
            raise _unsupported("auto_pad '%s'" % auto_pad)
        layer.pre_padding = pre
        layer.post_padding = post
        if ceil:
            sp = xs[2:]
            mode = PaddingMode.CAFFE_ROUND_UP if any(pre) or any(post) else PaddingMode.EXPLICIT_ROUND_UP
            if _static(sp):
                want = [_pool_out(sp[i], ks[i], strides[i], pre[i], post[i], True) for i in range(nsp)]
                for cand in (mode, PaddingMode.EXPLICIT_ROUND_UP, PaddingMode.CAFFE_ROUND_UP,
                             PaddingMode.EXPLICIT_ROUND_DOWN):
                    got = [_trt_pool_out(sp[i], ks[i], strides[i], pre[i], post[i], cand) for i in range(nsp)]
                    if got == want:
                        mode = cand
                        break
                else:
                    raise _unsupported("ceil_mode output size %s cannot be expressed" % want)
            layer.padding_mode = mode
    if op == "AveragePool":
        layer.average_count_excludes_padding = not bool(int(a.get("count_include_pad", 0)))
    return [p._L(layer)]


def _trt_pool_out(n: int, k: int, s: int, pre: int, post: int, mode: PaddingMode) -> int:
    if mode in (PaddingMode.EXPLICIT_ROUND_DOWN, PaddingMode.CAFFE_ROUND_DOWN):
        return (n + pre + post - k) // s + 1
    o = -(-(n + pre + post - k) // s) + 1
    if mode == PaddingMode.CAFFE_ROUND_UP and (pre or post) and (o - 1) * s >= n + pre:
        o -= 1
    return o


@_importer("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    r = len(x.shape)
    op = ReduceOperation.AVG if node.op_type == "GlobalAveragePool" else ReduceOperation.MAX
    return [p._L(p.network.add_reduce(x, op, _mask(range(2, r)), True))]


def _softmax_core(p: OnnxParser, x: Any, axis: int, log: bool) -> Any:
    if not log:
        layer = p.network.add_softmax(x)
        layer.axes = 1 << axis
        return p._L(layer)
    # log-softmax, stable: (x - max) - log(sum(exp(x - max)))
    m = p._L(p.network.add_reduce(x, ReduceOperation.MAX, 1 << axis, True))
    s = p._ew(x, m, ElementWiseOperation.SUB)
    e = p._unary(s, UnaryOperation.EXP)
    lse = p._unary(p._L(p.network.add_reduce(e, ReduceOperation.SUM, 1 << axis, True)), UnaryOperation.LOG)
    return p._ew(s, lse, ElementWiseOperation.SUB)


@_importer("Softmax", "LogSoftmax")
def _softmax(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    xs = tuple(x.shape)
    r = len(xs)
    log = node.op_type == "LogSoftmax"
    if r == 0:
        raise _Fail(ErrorCode.INVALID_NODE, "softmax of a scalar")
    if p._opset >= 13:
        axis = p._norm_axis(int(a.get("axis", -1)), r)
        return [_softmax_core(p, x, axis, log)]
    # opset < 13: the input is flattened to 2-D at `axis`, softmax runs over the second dim
    axis = p._norm_axis(int(a.get("axis", 1)), r)
    if axis == r - 1:
        return [_softmax_core(p, x, axis, log)]
    flat = p._reshape_2d(x, axis)
    y = _softmax_core(p, flat, 1, log)
    if _static(xs):
        return [p._reshape(y, xs, zero_is_placeholder=False)]
    unknown = [i for i, d in enumerate(xs) if d < 0]
    if len(unknown) == 1:
        return [p._reshape(y, [(-1 if d < 0 else d) for d in xs], zero_is_placeholder=False)]
    raise _Dynamic("Softmax-%d over a flattened shape %s with several dynamic dims" % (p._opset, xs))


@_importer("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")
def _reduce(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    op = node.op_type
    x = p._tensor(node.input[0])
    r = len(x.shape)
    vals: List[Any] = [None]
    an = p._inp(node, 1)
    if an is not None:
        vals.append(p._cval(an, "axes"))
    axes = _reduce_axes(p, node, a, vals, r)
    keep = bool(int(a.get("keepdims", 1)))
    if not axes:
        return [p._L(p.network.add_identity(x))]
    for ax in axes:
        if not 0 <= ax < r:
            raise _Fail(ErrorCode.INVALID_NODE, "axis %d out of range for rank %d" % (ax, r))
    if not keep:
        p._set_syms(0, [k for i, k in enumerate(p._raw_keys(node.input[0])) if i not in axes])
    mask = _mask(axes)
    E, U = ElementWiseOperation, UnaryOperation
    if op in _REDUCE:
        return [p._L(p.network.add_reduce(x, _REDUCE[op], mask, keep))]
    x = p._float(x)
    if op == "ReduceL1":
        return [p._L(p.network.add_reduce(p._unary(x, U.ABS), ReduceOperation.SUM, mask, keep))]
    if op in ("ReduceL2", "ReduceSumSquare"):
        s = p._L(p.network.add_reduce(p._ew(x, x, E.PROD), ReduceOperation.SUM, mask, keep))
        return [p._unary(s, U.SQRT) if op == "ReduceL2" else s]
    if op == "ReduceLogSum":
        return [p._unary(p._L(p.network.add_reduce(x, ReduceOperation.SUM, mask, keep)), U.LOG)]
    # ReduceLogSumExp, stable
    m = p._L(p.network.add_reduce(x, ReduceOperation.MAX, mask, True))
    e = p._unary(p._ew(x, m, E.SUB), U.EXP)
    lse = p._unary(p._L(p.network.add_reduce(e, ReduceOperation.SUM, mask, True)), U.LOG)
    y = p._ew(lse, m, E.SUM)
    if not keep:
        y = p._squeeze(y, axes)
    return [y]


@_importer("ArgMax", "ArgMin")
def _argmax(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    r = len(xs)
    axis = p._norm_axis(int(a.get("axis", 0)), r)
    keep = bool(int(a.get("keepdims", 1)))
    last = bool(int(a.get("select_last_index", 0)))
    op = TopKOperation.MAX if node.op_type == "ArgMax" else TopKOperation.MIN
    src = x
    if last:
        if xs[axis] < 0:
            raise _Dynamic("select_last_index along a dynamic axis")
        src = p._gather_axis(x, axis, np.arange(xs[axis] - 1, -1, -1))
    idx = p.network.add_topk(src, op, 1, 1 << axis)
    p._name_layer(idx)
    y = idx.get_output(1)
    if last:
        y = p._ew_const(y, np.int32(xs[axis] - 1), ElementWiseOperation.SUB, const_first=True)
    if not keep:
        p._set_syms(0, [k for i, k in enumerate(p._raw_keys(node.input[0])) if i != axis])
        y = p._squeeze(y, [axis])
    return [y]


@_importer("TopK")
def _topk(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    r = len(x.shape)
    axis = p._norm_axis(int(a.get("axis", -1)), r)
    if p._opset >= 10:
        k = int(p._cval(p._inp(node, 1), "K").reshape(-1)[0])
    else:
        k = int(a["k"])
    op = TopKOperation.MAX if int(a.get("largest", 1)) else TopKOperation.MIN
    layer = p.network.add_topk(x, op, k, 1 << axis)
    p._name_layer(layer)
    return [layer.get_output(0), layer.get_output(1)]


@_importer("LRN")
def _lrn(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    size = int(a["size"])
    if size % 2 == 0:
        raise _unsupported("LRN with an even size %d (trtlite's window is symmetric)" % size)
    layer = p.network.add_lrn(x, size, float(a.get("alpha", 1e-4)), float(a.get("beta", 0.75)),
                              float(a.get("bias", 1.0)))
    return [p._L(layer)]


@_importer("DepthToSpace", "SpaceToDepth")
def _depth_space(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    if len(xs) != 4 or not _static(xs[1:]):
        raise _unsupported("%s needs a 4-D input with static C, H, W, got %s" % (node.op_type, xs),
                           ErrorCode.UNSUPPORTED_NODE_SHAPE)
    b = int(a["blocksize"])
    _, c, h, w = xs
    if node.op_type == "DepthToSpace":
        if c % (b * b):
            raise _Fail(ErrorCode.INVALID_NODE, "channels %d not divisible by blocksize^2 %d" % (c, b * b))
        c2 = c // (b * b)
        if a.get("mode", "DCR") == "DCR":
            t = p._shuffle(x, reshape=[0, b, b, c2, h, w], second=[0, 3, 4, 1, 5, 2])
        else:
            t = p._shuffle(x, reshape=[0, c2, b, b, h, w], second=[0, 1, 4, 2, 5, 3])
        return [p._reshape(t, [0, c2, h * b, w * b])]
    if h % b or w % b:
        raise _Fail(ErrorCode.INVALID_NODE, "H, W (%d, %d) not divisible by blocksize %d" % (h, w, b))
    t = p._shuffle(x, reshape=[0, c, h // b, b, w // b, b], second=[0, 3, 5, 1, 2, 4])
    return [p._reshape(t, [0, c * b * b, h // b, w // b])]


@_importer("Shape", "Size", "Range")
def _shape_only(p: OnnxParser, node: Any, a: Dict[str, Any]) -> List[Any]:
    raise _Dynamic("%s needs its inputs known while parsing (static shapes), but they are computed at run time"
                   % node.op_type)
