"""Importers of constants: Constant, ConstantOfShape (the latter only for shapes with dynamic dims)."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported
from .registry import importer
from .shape_eval import Sym


@importer("Constant",
          restrictions="value, value_float(s) and value_int(s); no string values (value_string(s)) or sparse_value")
def _constant(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    return [constant_value(p, node)]


@importer("ConstantOfShape",
          restrictions=("none: static shapes are computed while parsing, others at run time (a shape tensor)"))
def _constant_of_shape(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Only reached when the shape holds dynamic dims or is past the fold budget (other static shapes are
    folded): one element, broadcast to the static dims by a slice and to the dynamic ones at run time."""
    val = a.get("value")
    fill = np.zeros(1, np.float32) if val is None else p._tensor_value(val, "attribute 'value'").reshape(-1)
    if fill.size != 1:
        raise Fail(ErrorCode.INVALID_NODE, "value must hold one element, it has %d" % fill.size)
    if not p._is_const(p._inp(node, 0) or ""):  # the shape is computed at run time: a shape tensor
        from .shape_tensors import runtime_constant_of_shape, shape_input
        return [runtime_constant_of_shape(p, shape_input(p, node.input[0]), fill)]
    shape = list(p._cval(p._inp(node, 0), "shape", allow_sym=True).reshape(-1))
    base = [1 if isinstance(v, Sym) else int(v) for v in shape]
    if any(d < 0 for d in base):
        raise Fail(ErrorCode.INVALID_NODE, "negative dimension in shape %s" % (shape,))
    p._set_syms(0, [v.key if isinstance(v, Sym) else int(v) for v in shape])
    if int(np.prod(base, dtype=np.float64)) > 1:  # one element broadcast at run time (a stride-0 slice)
        one = p._const_tensor(np.full([1] * len(base), fill[0], dtype=fill.dtype))
        c = p._L(p.network.add_slice(one, [0] * len(base), base, [0] * len(base)))
    else:
        c = p._const_tensor(np.full(base, fill[0], dtype=fill.dtype))
    syms = {i: v for i, v in enumerate(shape) if isinstance(v, Sym)}
    return [p._broadcast_to_syms(c, syms, "the shape")]


# A Constant's value attributes (ONNX sets exactly one) and the attribute type each must have.
_VALUE_TYPES = {"value": "TENSOR", "value_float": "FLOAT", "value_floats": "FLOATS", "value_int": "INT",
                "value_ints": "INTS", "value_string": "STRING", "value_strings": "STRINGS",
                "sparse_value": "SPARSE_TENSOR"}


def constant_value(p: ImporterContext, node: Any) -> np.ndarray:
    """A Constant node's value, from its one value attribute: value (a tensor), value_float / value_floats
    (float32, rank 0 / 1) or value_int / value_ints (int64, rank 0 / 1).  value_string(s) and sparse_value are
    valid ONNX that trtlite does not support; no value attribute, several, or one of the wrong attribute type
    is INVALID_NODE naming the attribute."""
    from onnx import AttributeProto
    given = [at for at in node.attribute if at.name in _VALUE_TYPES]
    if len(given) != 1:
        raise Fail(ErrorCode.INVALID_NODE, "a Constant has exactly one of the attributes %s; this one has %s"
                   % (", ".join(_VALUE_TYPES), " and ".join("'%s'" % at.name for at in given) or "none"))
    at = given[0]
    want = _VALUE_TYPES[at.name]
    if at.type != getattr(AttributeProto, want):
        try:
            got = AttributeProto.AttributeType.Name(at.type)
        except ValueError:
            got = "of unknown type %d" % at.type
        raise Fail(ErrorCode.INVALID_NODE, "attribute '%s' must be %s, but it is %s" % (at.name, want, got))
    if at.name == "value":
        return p._tensor_value(at.t, "attribute 'value'")
    if at.name == "value_float":
        return np.array(at.f, dtype=np.float32)
    if at.name == "value_floats":
        return np.array(list(at.floats), dtype=np.float32)
    if at.name == "value_int":
        return np.array(at.i, dtype=np.int64)
    if at.name == "value_ints":
        return np.array(list(at.ints), dtype=np.int64)
    if at.name == "sparse_value":
        raise unsupported("Constant with a sparse_value (trtlite has no sparse tensors)")
    raise unsupported("Constant with string values (attribute '%s'): trtlite has no string tensors" % at.name,
                      ErrorCode.UNSUPPORTED_NODE_DATATYPE)
