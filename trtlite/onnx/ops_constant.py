"""Importers of constants: Constant, ConstantOfShape (the latter only for shapes with dynamic dims)."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .context import ImporterContext, node_attrs
from .errors import ErrorCode, Fail, unsupported
from .registry import importer
from .shape_eval import Sym


@importer("Constant",
          restrictions="value, value_float(s) and value_int(s); no string values (value_string(s)) or sparse_value")
def _constant(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    return [constant_value(p, node)]


@importer("ConstantOfShape",
          restrictions=("static shapes are computed while parsing; dynamic dims of the shape must be dims of network "
                        "tensors"))
def _constant_of_shape(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Only reached when the shape holds dynamic dims (static shapes are folded): a constant of the static
    dims, broadcast to the dynamic ones at run time."""
    shape = list(p._cval(p._inp(node, 0), "shape", allow_sym=True).reshape(-1))
    val = a.get("value")
    fill = np.zeros(1, np.float32) if val is None else p._tensor_value(val).reshape(-1)
    if fill.size != 1:
        raise Fail(ErrorCode.INVALID_NODE, "value must hold one element, it has %d" % fill.size)
    base = [1 if isinstance(v, Sym) else int(v) for v in shape]
    if any(d < 0 for d in base):
        raise Fail(ErrorCode.INVALID_NODE, "negative dimension in shape %s" % (shape,))
    p._set_syms(0, [v.key if isinstance(v, Sym) else int(v) for v in shape])
    c = p._const_tensor(np.full(base, fill[0], dtype=fill.dtype))
    syms = {i: v for i, v in enumerate(shape) if isinstance(v, Sym)}
    return [p._broadcast_to_syms(c, syms, "the shape")]


def constant_value(p: ImporterContext, node: Any) -> np.ndarray:
    a = node_attrs(node)
    if "value" in a:
        return p._tensor_value(a["value"])
    if "value_float" in a:
        return np.array(a["value_float"], dtype=np.float32)
    if "value_floats" in a:
        return np.array(a["value_floats"], dtype=np.float32)
    if "value_int" in a:
        return np.array(a["value_int"], dtype=np.int64)
    if "value_ints" in a:
        return np.array(a["value_ints"], dtype=np.int64)
    if "sparse_value" in a:
        raise unsupported("Constant with a sparse_value")
    raise unsupported("Constant with string values (or no value)", ErrorCode.UNSUPPORTED_NODE_DATATYPE)
