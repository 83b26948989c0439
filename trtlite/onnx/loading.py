"""Model loading: the onnx package, decoding and checking a ModelProto (opsets, model-local functions, names),
initializers (external data read relative to the model's folder), and the order nodes are imported in."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from .context import ImporterContext
from .errors import ErrorCode, Fail, as_text, bad_name
from .registry import MIN_OPSET


_INSTALL_HINT = ("trtlite's ONNX parser needs the 'onnx' package, which is not installed: "
                 "pip install trtlite[onnx]  (or: pip install onnx)")


def import_onnx() -> Any:
    """The onnx package (an ImportError saying how to install it when missing)."""
    try:
        import onnx  # noqa: F401
        from onnx import numpy_helper  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from e
    return onnx


def decode_model(model: Any) -> Any:
    """The ModelProto of serialized bytes (Fail: not bytes, or not a model)."""
    onnx = import_onnx()
    try:
        data = bytes(model)
    except TypeError:
        raise Fail(ErrorCode.INVALID_VALUE, "parse() needs the serialized model as bytes, got %s"
                   % type(model).__name__)
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as e:  # google.protobuf.message.DecodeError, RuntimeWarning-ish errors
        raise Fail(ErrorCode.MODEL_DESERIALIZE_FAILED,
                   "the data is not a valid ONNX model (protobuf decoding failed: %s)" % (e,))
    return proto


def base_dir_of(path: Optional[str]) -> Optional[str]:
    """The folder external data is read from: the model file's."""
    return os.path.dirname(os.path.abspath(path)) if path else None


def prepare_model(model: Any) -> Tuple[Any, int, Dict[str, int]]:
    """(model with its local functions expanded, default-domain opset, {domain: opset}); Fail when the model has no
    graph, its functions cannot be expanded or its opset is outside MIN_OPSET .. the onnx package's newest."""
    onnx = import_onnx()
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise Fail(ErrorCode.MODEL_DESERIALIZE_FAILED, "the data is not a valid ONNX model (it has no graph)")
    if len(model.functions):
        try:  # model-local functions: expand their calls into plain nodes
            from onnx import inliner
            model = inliner.inline_local_functions(model)
        except Exception as e:
            raise Fail(ErrorCode.UNSUPPORTED_GRAPH, "cannot expand the model's local functions: %s" % (e,))
    opsets = {}
    for imp in model.opset_import:
        opsets[imp.domain or ""] = int(imp.version)
    if "ai.onnx" in opsets and "" not in opsets:
        opsets[""] = opsets["ai.onnx"]
    max_opset = onnx.defs.onnx_opset_version()
    if "" not in opsets:
        if model.ir_version >= 3 or any(n.domain in ("", "ai.onnx") for n in model.graph.node):
            raise Fail(ErrorCode.UNSUPPORTED_GRAPH, "the model imports no opset of the default ONNX domain")
        opsets[""] = max_opset
    opset = opsets[""]
    # Below MIN_OPSET the parser only warns (ctx: see parser._parse_proto), as TensorRT's does: the importers
    # follow the newer definitions, and the few older semantics they know (opset 6's explicit broadcast axis)
    # are handled where they differ.
    if opset < 1 or opset > max_opset:
        raise Fail(ErrorCode.UNSUPPORTED_GRAPH, "unsupported ONNX opset %d: this parser supports opsets %d to %d "
                   "(the installed onnx package's newest)" % (opset, 1, max_opset))
    return model, opset, opsets


def check_names(ctx: ImporterContext, graph: Any) -> bool:
    """Every name that becomes a network name (or an error message) must be valid UTF-8 without NUL:
    protobuf hands back bytes for invalid UTF-8, and trtlite's names are C strings."""
    for what, items in (("graph input", graph.input), ("graph output", graph.output),
                        ("initializer", graph.initializer)):
        for k, item in enumerate(items):
            why = bad_name(item.name)
            if why:
                ctx._error(ErrorCode.INVALID_GRAPH, "the name of %s %d, %s" % (what, k, why))
                return False
    for idx, n in enumerate(graph.node):
        fields = [("op_type", n.op_type), ("domain", n.domain), ("name", n.name)]
        fields += [("input %d" % i, v) for i, v in enumerate(n.input)]
        fields += [("output %d" % i, v) for i, v in enumerate(n.output)]
        fields += [("attribute %d" % i, at.name) for i, at in enumerate(n.attribute)]
        for what, v in fields:
            why = bad_name(v)
            if why:
                ctx._error(ErrorCode.INVALID_NODE, "the node's %s, %s" % (what, why), idx, n.name, n.op_type,
                           "import" + as_text(n.op_type))
                return False
    return True


def load_initializers(ctx: ImporterContext, graph: Any) -> None:
    """The graph's initializers as numpy constants of ctx (external data read relative to ctx._base_dir)."""
    from onnx import numpy_helper
    from onnx.external_data_helper import uses_external_data
    for init in graph.initializer:
        if uses_external_data(init):
            if ctx._base_dir is None:
                raise Fail(ErrorCode.INVALID_GRAPH, "initializer '%s' is stored as external data: parse the "
                           "model with parse_from_file(path) or parse(data, path) so that its file can be found"
                           % init.name)
            try:
                arr = numpy_helper.to_array(init, ctx._base_dir)
            except Exception as e:
                raise Fail(ErrorCode.INVALID_GRAPH, "cannot read the external data of initializer '%s' "
                           "(relative to %s): %s" % (init.name, ctx._base_dir, e))
        else:
            try:
                arr = numpy_helper.to_array(init)
            except Exception as e:
                raise Fail(ErrorCode.INVALID_GRAPH, "cannot decode initializer '%s': %s" % (init.name, e))
        if arr.dtype.kind in "OSU":
            raise Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "initializer '%s' holds strings" % init.name)
        ctx._consts[init.name] = arr
    for sp in graph.sparse_initializer:
        raise Fail(ErrorCode.UNSUPPORTED_GRAPH, "sparse initializer '%s' is not supported" % sp.values.name)


# The TensorProto fields that hold an initializer's values (name, type, dims and external_data stay).
_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


def drop_weight_data(ctx: ImporterContext) -> None:
    """Replaces ctx._model by a copy whose top-level initializers keep their name, type and dims but not their
    values, once load_initializers has made them numpy arrays: the protobuf's copy of the weights is freed (upb
    frees a message's memory only with the whole message, hence the copy), so a parse holds the weights as the
    protobuf or as numpy arrays but not both.  Needs ctx._model to be the model's only reference."""
    onnx = import_onnx()
    model = ctx._model
    if not any(init.ByteSize() > 4096 for init in model.graph.initializer):
        return
    for init in model.graph.initializer:
        for f in _DATA_FIELDS:
            init.ClearField(f)
    slim = onnx.ModelProto()
    slim.CopyFrom(model)
    ctx._model = slim


def topo_order(ctx: ImporterContext, graph: Any) -> Optional[List[int]]:
    """Node indices in an order where each node follows its producers (the file's order when it is one)."""
    produced = set(ctx._consts) | set(ctx._tensors)
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
                ctx._error(ErrorCode.INVALID_GRAPH, "input '%s' is not a graph input, an initializer or the "
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
        ctx._error(ErrorCode.INVALID_GRAPH, "the graph has a cycle", bad, nodes[bad].name, nodes[bad].op_type)
        return None
    return order
