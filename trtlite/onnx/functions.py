"""Schema functions: an ONNX op without an importer whose schema defines it as a function of other ops (a function
body, or a context-dependent one that onnx builds for the node's attributes and input types -- CausalConvWithState,
LinearAttention, ...) is imported as that body's nodes, inlined under names private to the node."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from .._enums import DataType
from .context import ImporterContext

# ONNX element types of the types trtlite carries (int64 values are carried as INT32 or INT64; the model's own
# declaration, where it has one, is used first)
_ONNX_OF = {DataType.FLOAT: 1, DataType.UINT8: 2, DataType.INT8: 3, DataType.INT32: 6, DataType.INT64: 7,
            DataType.BOOL: 9, DataType.HALF: 10, DataType.BF16: 16}


def _declared_types(ctx: ImporterContext) -> Dict[str, Any]:
    """name -> TypeProto as the model declares it (graph inputs, outputs, value_info, initializers)."""
    cache = getattr(ctx, "_fn_types", None)
    if cache is None:
        from onnx import helper
        g = ctx._model.graph
        cache = {vi.name: vi.type for vi in list(g.input) + list(g.output) + list(g.value_info)
                 if vi.type.HasField("tensor_type")}
        for init in g.initializer:
            cache.setdefault(init.name, helper.make_tensor_type_proto(init.data_type, list(init.dims)))
        ctx._fn_types = cache
    return cache


def _input_type(ctx: ImporterContext, name: str) -> Any:
    """The TypeProto of a node input for onnx's function builder: declared, else from the value trtlite holds."""
    from onnx import helper
    if not name:
        return helper.make_tensor_type_proto(1, None)
    declared = _declared_types(ctx).get(name)
    if declared is not None:
        return declared
    if name in ctx._consts:
        v = np.asarray(ctx._consts[name])
        elem = helper.np_dtype_to_tensor_dtype(v.dtype) if v.dtype != object else 7
        return helper.make_tensor_type_proto(elem, list(v.shape))
    t = ctx._tensors[name]
    return helper.make_tensor_type_proto(_ONNX_OF.get(DataType(t.dtype), 1),
                                         [d if d >= 0 else None for d in tuple(t.shape)])


def _body(ctx: ImporterContext, node: Any) -> Optional[Any]:
    """The FunctionProto the op's schema gives for this node at the model's opset, or None."""
    from onnx import FunctionProto, defs
    try:
        sch = defs.get_schema(node.op_type, ctx._opset, "")
    except Exception:  # noqa: BLE001 (an op unknown to the installed onnx)
        return None
    if sch.has_function:
        return sch.function_body
    if not sch.has_context_dependent_function:
        return None
    types = [_input_type(ctx, n).SerializeToString() for n in node.input]
    try:
        raw = sch.get_context_dependent_function(node.SerializeToString(), types)
    except Exception:  # noqa: BLE001 (onnx cannot build it for these types/attributes)
        return None
    return FunctionProto.FromString(raw) if raw else None


def _rename_graph(g: Any, rename: Any) -> None:
    """Every tensor name in graph `g` (and its subgraphs) through `rename`."""
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        vi.name = rename(vi.name)
    for init in g.initializer:
        init.name = rename(init.name)
    for n in g.node:
        _rename_node(n, rename, {})


def _rename_node(n: Any, rename: Any, attrs: Dict[str, Any]) -> None:
    """Node `n`'s tensor names through `rename`; its attribute references (ref_attr_name) resolved from `attrs`
    (the calling node's attributes; an unset one is dropped, so the op's default applies)."""
    for i, x in enumerate(n.input):
        n.input[i] = rename(x) if x else x
    for i, x in enumerate(n.output):
        n.output[i] = rename(x) if x else x
    keep = []
    for at in n.attribute:
        if at.ref_attr_name:
            src = attrs.get(at.ref_attr_name)
            if src is None:
                continue
            new = type(at)()
            new.CopyFrom(src)
            new.name = at.name
            at = new
        if at.type == 5:  # GRAPH
            _rename_graph(at.g, rename)
        elif at.type == 10:  # GRAPHS
            for sg in at.graphs:
                _rename_graph(sg, rename)
        keep.append(at)
    del n.attribute[:]
    n.attribute.extend(keep)


def expand(ctx: ImporterContext, node: Any) -> Optional[List[Any]]:
    """The node's outputs computed by importing its schema function's nodes, or None when the schema has none."""
    body = _body(ctx, node)
    if body is None or not len(body.node):
        return None
    prefix = "%s/%s/" % (ctx._node_name, node.op_type)
    mapping = {}
    for formal, actual in zip(body.input, node.input):
        mapping[formal] = actual
    for formal in list(body.input)[len(node.input):]:
        mapping[formal] = ""  # an optional input the node leaves out
    for formal, actual in zip(body.output, node.output):
        mapping[formal] = actual if actual else prefix + formal
    def rename(x: str) -> str:
        return mapping[x] if x in mapping else prefix + x
    from onnx import NodeProto
    attrs = {at.name: at for at in node.attribute}
    for n in body.node:
        m = NodeProto()
        m.CopyFrom(n)
        _rename_node(m, rename, attrs)
        if not m.name:
            m.name = prefix + m.op_type
        ctx._import_node(ctx, m)
    outs = []
    for name in node.output:
        if not name:
            outs.append(None)
        elif name in ctx._consts:
            outs.append(ctx._consts[name])
        else:
            outs.append(ctx._tensors[name])
    return outs
