"""The model importer: adds a graph's inputs, imports its nodes in order (each through its importer from the
registry, after constant folding, or the plugin fallback) and marks its outputs.  Every failure becomes a
ParserError naming the node; parsing stops at the first failing node, as TensorRT's does."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from .. import _C
from .._enums import DataType, Severity
from . import constants, functions, loading
from .constants import FOLDABLE, NOT_FOLDED, fold
from .context import ImporterContext, bad_control_flow, node_attrs
from .dtypes import T_BFLOAT16, T_DOUBLE, T_FLOAT16, T_INT8, T_INT64, T_UINT8, T_UINT64, onnx_to_trt
from .errors import Dynamic, ErrorCode, Fail, as_text, unsupported
from .ops_plugin import find_creator, plugin_layer
from .registry import IMPORTERS
from .shape_eval import has_sym, normalize


# An execution context binds at most this many I/O tensors (csrc/python/py_context.c's run()).
MAX_IO_TENSORS = 64

# ONNX schemas by (op, opset), for check_arity (None: not a known op).
_SCHEMAS: Dict[Tuple[str, int], Any] = {}

INPUT_DIM_MAX = 2 ** 31 - 1  # the largest static dim of a graph input


def import_graph(ctx: ImporterContext) -> bool:
    """Fills ctx.network from ctx._model's graph; False (with the error recorded) at the first failure.  Once the
    initializers are numpy arrays, ctx._model becomes a copy without their data (loading.drop_weight_data)."""
    graph = ctx._model.graph
    if not loading.check_names(ctx, graph):
        return False
    for idx, n in enumerate(graph.node):  # before anything runs ONNX shape inference on the model
        why = bad_control_flow(n)
        if why:
            ctx._error(ErrorCode.INVALID_NODE, why, idx, n.name, n.op_type, "import" + as_text(n.op_type))
            return False
    try:
        loading.load_initializers(ctx, graph)
        n = graph = None  # no reference into the old model may survive drop_weight_data
        loading.drop_weight_data(ctx)
        graph = ctx._model.graph
        add_inputs(ctx, graph)
    except Fail as e:
        ctx._error(e.code, str(e))
        return False
    except _C.Error as e:
        ctx._error(ErrorCode.INVALID_GRAPH, "%s: %s" % (type(e).__name__, e))
        return False
    except (ValueError, TypeError) as e:  # e.g. a shape the network API refuses
        ctx._error(ErrorCode.INVALID_GRAPH, "cannot add the graph's inputs: %s: %s" % (type(e).__name__, e))
        return False
    n_io = ctx.network.num_inputs + ctx.network.num_outputs + len(graph.output)
    if n_io > MAX_IO_TENSORS:
        # found now rather than at the first inference, where the execution context refuses the engine
        ctx._error(ErrorCode.UNSUPPORTED_GRAPH, "the model has %d inputs and %d outputs: trtlite's engines bind "
                   "at most %d input and output tensors in all (merge some, e.g. with Concat)"
                   % (ctx.network.num_inputs, ctx.network.num_outputs + len(graph.output), MAX_IO_TENSORS))
        return False
    order = loading.topo_order(ctx, graph)
    if order is None:
        return False
    ctx._import_node = import_subgraph_node  # control-flow bodies (ops_control.py) import their nodes through it
    for idx in order:
        node = graph.node[idx]
        if not import_node(ctx, idx, node):
            return False
    ctx._node_idx, ctx._node = -1, None  # what follows is about the graph, not the last node
    ctx._node_name, ctx._sub = "", 0
    narrow_shape_inputs(ctx)
    return mark_outputs(ctx, graph)


def narrow_shape_inputs(ctx: ImporterContext) -> None:
    """int64 graph inputs whose values decide shapes (Reshape's shape, Slice's starts, ... fed at run time)
    become INT32 inputs: trtlite's shape tensors are INT32 (TensorRT 10's may be INT64; the values are dims,
    which fit).  Their cast to INT32 is then an identity."""
    net = ctx.network
    for i in range(net.num_inputs):
        t = net.get_input(i)
        if t.dtype == DataType.INT64 and t.is_shape_tensor:
            t.dtype = DataType.INT32


# ONNX ops that trtlite computes on INT64 tensors (elementwise, unary, reduce: "INT64 arithmetic" in
# docs/ARCHITECTURE.md) or moves as they are (shuffle, concatenation, slice, gather data), with the input positions
# that may be INT64 (None: all); their outputs carry INT64 on.  At the positions in _INT64_ENDS an INT64 value
# stops: comparisons (BOOL), Cast (its own type), indices of the gathers, shapes (Shape, Size).
_INT64_OPS = {op: None for op in ("Add", "Sub", "Mul", "Div", "Min", "Max", "Neg", "Abs", "Sign", "Identity", "Sum",
                                  "Concat", "MatMul", "Mod")}
_INT64_OPS.update({op: (0,) for op in ("CumSum", "CumProd")})
_INT64_OPS.update({op: (0,) for op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "Reshape", "Flatten",
                                       "Squeeze", "Unsqueeze", "Transpose", "Gather", "GatherElements", "GatherND",
                                       "Slice", "Expand", "Tile", "Split")})
_INT64_OPS["Where"] = (1, 2)
_INT64_ENDS = {op: None for op in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Cast", "Shape",
                                   "Size")}
_INT64_ENDS.update({op: (1,) for op in ("Gather", "GatherElements", "GatherND")})


def _int64_role(n: Any, k: int) -> Optional[str]:
    """How node `n` takes an INT64 value at input `k`: "carry" (computes or moves it: its outputs are INT64),
    "end" (takes it without passing it on), or None (it cannot take INT64 there)."""
    if n.domain not in ("", "ai.onnx"):
        return None
    if n.op_type == "Cast" and any(at.name == "to" and at.i == T_INT64 for at in n.attribute):
        return "carry"  # Cast(to=int64) of an INT64 tensor is an identity (ops_elementwise.py)
    for table, role in ((_INT64_OPS, "carry"), (_INT64_ENDS, "end")):
        if n.op_type in table and (table[n.op_type] is None or k in table[n.op_type]):
            return role
    return None


def wide_int64_inputs(ctx: ImporterContext, graph: Any) -> set:
    """The int64 graph inputs that stay INT64 inside (and the Cast(to=int64) outputs computed INT64, where their
    values meet integer constants beyond int32): every node their values reach (through the ops above) takes
    INT64 there, and every other operand a carrying node computes with is a constant (integer constants are INT32
    cast to INT64 where they fit, INT64 constants where they do not) or itself reached from inputs kept wide.  A
    graph with subgraphs (If / Loop / Scan bodies may read any outer tensor) keeps the narrowing."""
    if any(at.type in (5, 10) for n in graph.node for at in n.attribute):  # GRAPH, GRAPHS
        return set()
    consumers: Dict[str, List[Tuple[Any, int]]] = {}
    for n in graph.node:
        for k, nm in enumerate(n.input):
            consumers.setdefault(nm, []).append((n, k))
    reach: Dict[str, set] = {}  # seed -> the tensors its value reaches as INT64
    seeds = [vi.name for vi in graph.input if vi.name not in ctx._consts and vi.type.HasField("tensor_type") and
             int(vi.type.tensor_type.elem_type) == T_INT64]
    # Cast(to=int64) outputs too, where their values meet an integer constant beyond int32 (which would otherwise
    # be clamped to meet the INT32 the cast's value is carried as)
    casts = [n.output[0] for n in graph.node if n.op_type == "Cast" and n.output and n.output[0] and
             n.domain in ("", "ai.onnx") and any(at.name == "to" and at.i == T_INT64 for at in n.attribute)]
    for name in seeds + casts:
        if name in reach:
            continue
        seen, todo = set(), [name]
        while todo and seen is not None:
            t = todo.pop()
            if t in seen:
                continue
            seen.add(t)
            for n, k in consumers.get(t, []):
                role = _int64_role(n, k)
                if role is None:
                    seen = None
                    break
                if role == "carry":
                    todo.extend(o for o in n.output if o)
        if seen is not None and (name in seeds or _meets_a_big_constant(ctx, seen, consumers)):
            reach[name] = seen
    while True:  # drop inputs whose carrying nodes compute with a run-time operand that is not INT64
        wide_tensors = set().union(*reach.values()) if reach else set()
        bad = set()
        for name, seen in reach.items():
            for t in seen:
                for n, k in consumers.get(t, []):
                    if _int64_role(n, k) != "carry":
                        continue
                    for j, other in enumerate(n.input):
                        if other and other not in ctx._consts and other not in wide_tensors and \
                                _int64_role(n, j) == "carry":
                            bad.add(name)
        if not bad:
            return set(reach)
        for name in bad:
            del reach[name]


def _meets_a_big_constant(ctx: ImporterContext, tensors: set, consumers: Dict[str, List[Tuple[Any, int]]]) -> bool:
    """Whether a node carrying one of `tensors` as INT64 computes with an integer constant beyond int32."""
    for t in tensors:
        for n, k in consumers.get(t, []):
            if _int64_role(n, k) != "carry":
                continue
            for other in n.input:
                c = ctx._consts.get(other) if other else None
                if c is not None and np.asarray(c).dtype.kind in "iu" and np.asarray(c).size and \
                        (np.asarray(c).max() > 2 ** 31 - 1 or np.asarray(c).min() < -2 ** 31):
                    return True
    return False


def add_inputs(ctx: ImporterContext, graph: Any) -> None:
    """Adds the graph inputs that are not initializers as network inputs (dynamic dims -1, types as trtlite
    carries them: float16 is cast to FLOAT at once, int64 inputs are INT64 cast to INT32 at once, uint64 is INT32)."""
    net = ctx.network
    wide = wide_int64_inputs(ctx, graph)
    ctx._wide_casts = wide - set(vi.name for vi in graph.input)  # Cast(to=int64) outputs computed INT64
    for vi in graph.input:
        name = vi.name
        if name in ctx._consts:
            continue  # IR < 4 lists initializers as inputs too
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None:
            kind = vi.type.WhichOneof("value") or "untyped"
            raise Fail(ErrorCode.UNSUPPORTED_GRAPH, "graph input '%s' is not a tensor but a %s%s" % (
                name, kind.replace("_type", ""), ": sequences exist only while parsing (TensorRT has no sequence "
                "values); feed its tensors as separate inputs" if kind == "sequence_type" else ""))
        elem = int(tt.elem_type)
        if not tt.HasField("shape"):
            raise Fail(ErrorCode.UNSUPPORTED_GRAPH, "graph input '%s' has an unknown rank" % name)
        dims = []
        keys: List[Any] = []
        for j, d in enumerate(tt.shape.dim):
            dims.append(int(d.dim_value) if d.HasField("dim_value") else -1)
            keys.append(dims[-1] if dims[-1] >= 0 else (d.dim_param if d.dim_param else ("?", name, j)))
        big = [d for d in dims if d > INPUT_DIM_MAX]
        if big:
            # a dim no int32 index reaches (TensorRT's Dims held int32 until 10); fuzzed inputs of [2^31, ...] made
            # importers build constants of that extent (LayerNormalization, MaxPool indices, Hardmax: 8-24 GiB)
            raise Fail(ErrorCode.UNSUPPORTED_GRAPH, "graph input '%s' of shape %s: a dim of %d is past %d" % (
                name, tuple(dims), big[0], INPUT_DIM_MAX))
        if any(d < 0 for d in dims):
            ctx._msyms[name] = keys
        if elem in (T_FLOAT16, T_BFLOAT16):  # 16-bit inputs keep their type; the graph computes in FLOAT
            t = net.add_input(name, DataType.HALF if elem == T_FLOAT16 else DataType.BF16, dims)
            ctx._named.add(name)
            cast = net.add_cast(t, DataType.FLOAT)
            cast.name = "%s/cast_to_float" % name
            ctx._tensors[name] = cast.get_output(0)
            ctx._input_names.append(name)
            continue
        if elem in (T_INT8, T_UINT8):
            dt = DataType.INT8 if elem == T_INT8 else DataType.UINT8
        else:
            dt = onnx_to_trt(elem)
        if dt is None:
            raise Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "graph input '%s' has an unsupported type %d"
                       % (name, elem))
        if elem == T_INT64:
            # TensorRT 10 keeps int64 graph inputs INT64 (numpy int64 buffers).  Where every node the value
            # reaches computes INT64 in trtlite (wide_int64_inputs) it stays INT64; otherwise the parser's
            # integers are INT32 and the value is narrowed once, right after the input (low bits, as numpy).
            t = net.add_input(name, DataType.INT64, dims)
            ctx._named.add(name)
            if name in wide:
                ctx._tensors[name] = t
                ctx._input_names.append(name)
                continue
            cast = net.add_cast(t, DataType.INT32)
            cast.name = "%s/cast_to_int32" % name
            ctx._tensors[name] = cast.get_output(0)
            ctx._input_names.append(name)
            continue
        if elem in (T_UINT64, T_DOUBLE):
            ctx._log(Severity.WARNING, "ONNX parser: input '%s' is %s in the model; trtlite's input is %s"
                     % (name, "int64" if elem != T_DOUBLE else "double", dt.name))
        ctx._tensors[name] = net.add_input(name, dt, dims)
        ctx._named.add(name)
        ctx._input_names.append(name)


def mark_outputs(ctx: ImporterContext, graph: Any) -> bool:
    """Marks the graph outputs as network outputs under their ONNX names (float16 outputs cast back to HALF,
    bfloat16 ones to BF16, int64 ones to INT64, as TensorRT 10 gives them)."""
    net = ctx.network
    inputs = set(vi.name for vi in graph.input if vi.name not in ctx._consts)
    for vi in graph.output:
        name = vi.name
        try:
            if name in inputs:
                # An engine's I/O tensors are looked up by name, so one name cannot be both an input and
                # an output; copying the input through an identity would need a second tensor of the
                # same name.  TensorRT refuses such a network too (when it is built).
                raise Fail(ErrorCode.UNSUPPORTED_GRAPH, "graph output '%s' is also a graph input: trtlite (like "
                           "TensorRT) cannot bind one tensor name as both an input and an output of an "
                           "engine; write the output through an Identity node under another name" % name)
            if name in ctx._tensors:
                t = ctx._tensors[name]
            elif name in ctx._consts:
                c = ctx._consts[name]
                if has_sym(c):
                    raise Dynamic("graph output '%s' is a shape computed from dynamic dimensions" % name)
                wide = np.asarray(c).dtype == np.int64 and c.size and (c.max() > 2 ** 31 - 1 or c.min() < -2 ** 31)
                t = ctx._const_tensor(c, DataType.INT64 if wide else None, name)  # beyond int32: INT64 as it is
            elif name in ctx._seqs:
                raise Fail(ErrorCode.UNSUPPORTED_GRAPH, "graph output '%s' is a sequence: sequences exist only while "
                           "parsing (TensorRT has no sequence values)" % name)
            else:
                raise Fail(ErrorCode.INVALID_GRAPH, "graph output '%s' is not produced by any node" % name)
            if t.name != name or t.is_network_input or t.is_network_output:
                layer = net.add_identity(t)
                layer.name = "%s/output" % name
                t = layer.get_output(0)
            t.name = name
            elem = int(vi.type.tensor_type.elem_type) if vi.type.HasField("tensor_type") else 0
            back = {T_FLOAT16: (DataType.FLOAT, DataType.HALF, "half"), T_BFLOAT16: (DataType.FLOAT, DataType.BF16, "bf16"),
                    T_INT64: (DataType.INT32, DataType.INT64, "int64")}.get(elem)
            if back is not None and t.dtype == back[0]:
                layer = net.add_cast(t, back[1])
                layer.name = "%s/cast_to_%s" % (name, back[2])
                t.name = "%s/float" % name
                t = layer.get_output(0)
                t.name = name
            net.mark_output(t)
        except Fail as e:
            ctx._error(e.code, str(e))
            return False
        except Exception as e:
            ctx._error(ErrorCode.INVALID_GRAPH, "cannot mark graph output '%s': %s: %s"
                       % (name, type(e).__name__, e))
            return False
    return True


def import_node(ctx: ImporterContext, idx: int, node: Any) -> bool:
    """Imports node `idx`; any failure is recorded as a ParserError naming it (False)."""
    ctx._node_idx = idx
    ctx._node = node
    ctx._node_name = node.name or "%s_%d" % (node.op_type, idx)
    ctx._sub = 0
    ctx._explicit_syms = {}
    op = node.op_type
    try:
        check_arity(ctx, node)
        a = node_attrs(node)
        outs = dispatch(ctx, node, a)
        for name, v in zip(node.output, outs):
            if name:
                ctx._set(name, v)
        ctx._propagate(node, a, outs)
        ctx._log(Severity.VERBOSE, "ONNX parser: node %d '%s' (%s) imported" % (idx, ctx._node_name, op))
        return True
    except Fail as e:
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
    ctx._error(code, msg, idx, node.name, op, "import" + as_text(op))
    return False


def import_subgraph_node(ctx: ImporterContext, node: Any) -> None:
    """Imports one node of a control-flow body into the current scope; failures raise (Fail) to the importer of
    the If / Loop / Scan node, which reports them as its own."""
    check_arity(ctx, node)
    a = node_attrs(node)
    outs = dispatch(ctx, node, a)
    for name, v in zip(node.output, outs):
        if name:
            ctx._set(name, v)
    ctx._propagate(node, a, outs)


def check_arity(ctx: ImporterContext, node: Any) -> None:
    """Input and output counts of a default-domain node against its ONNX schema, so that importers can
    index node.input / node.output and a malformed node gets a message, not an IndexError."""
    if node.domain not in ("", "ai.onnx"):
        return
    key = (node.op_type, ctx._opset)
    if key not in _SCHEMAS:
        try:
            from onnx import defs
            _SCHEMAS[key] = defs.get_schema(node.op_type, ctx._opset, "")
        except Exception:  # an op unknown to the installed onnx: left to the plugin fallback
            _SCHEMAS[key] = None
    sch = _SCHEMAS[key]
    if sch is None:
        return

    def span(lo: int, hi: int) -> str:
        return "%d" % lo if lo == hi else "%d or more" % lo if hi >= 2 ** 31 - 1 else "%d to %d" % (lo, hi)
    n_in, n_out = len(node.input), len(node.output)
    if not sch.min_input <= n_in <= sch.max_input:
        raise Fail(ErrorCode.INVALID_NODE, "the node has %d inputs but %s-%d takes %s"
                   % (n_in, node.op_type, sch.since_version, span(sch.min_input, sch.max_input)))
    for k in range(min(sch.min_input, n_in)):
        optional = k < len(sch.inputs) and sch.inputs[k].option == sch.inputs[k].option.Optional  # Loop's M, cond
        if not node.input[k] and not optional:
            raise Fail(ErrorCode.INVALID_NODE, "required input %d of %s is empty" % (k, node.op_type))
    if not sch.min_output <= n_out <= sch.max_output:
        raise Fail(ErrorCode.INVALID_NODE, "the node has %d outputs but %s-%d gives %s"
                   % (n_out, node.op_type, sch.since_version, span(sch.min_output, sch.max_output)))


def _folded_too_big(ctx: ImporterContext, node: Any, outs: List[Any], vals: List[Any]) -> bool:
    """After folding: whether an output is past the fold budget (fold_too_big), for the ops whose output size
    fold_output_bound cannot tell beforehand; the node is then imported as layers instead."""
    n = max((int(np.asarray(o).size) for o in outs if o is not None), default=0)
    if node.op_type == "Range" or not constants.fold_too_big(ctx, node, n, vals):
        return False
    ctx._log(Severity.VERBOSE, "ONNX parser: not keeping the folded %s (%d elements, past the fold budget of %d): "
             "computed at run time" % (node.op_type, n, constants.FOLD_LIMIT))
    return True


# Ops whose importer computes, at run time, values that need dynamic dims (shape tensors), when folding fails.
RUNTIME_SYM_OPS = ("Slice", "Reshape")


def dispatch(ctx: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """The node's outputs: computed while parsing when its inputs are known (Shape and Size of tensors give
    their dims), else from its importer, else from a plugin."""
    op = node.op_type
    if node.domain not in ("", "ai.onnx"):
        return plugin_layer(ctx, node, a, "no built-in mapping for domain '%s'" % node.domain)
    ins = list(node.input)
    if op == "Shape":
        x = ins[0]
        if x in ctx._consts:
            return [ctx._shape_value(ctx._consts[x].shape, None, a)]
        t = ctx._tensor(x)
        return [ctx._shape_value(tuple(t.shape), x, a)]
    if op == "Size" and ins[0] in ctx._tensors:
        shp = ctx._shape_value(tuple(ctx._tensors[ins[0]].shape), ins[0], {})
        if shp.dtype == object:
            r = 1
            for v in shp:
                r = v * r
            out = np.empty((), dtype=object)
            out[()] = r
            return [out]
        return [np.array(int(np.prod(shp)), dtype=np.int64)]
    present = [i for i in ins if i]
    sym_shape = (op in ("Expand", "ConstantOfShape") and len(ins) > (op == "Expand") and
                 has_sym(ctx._consts.get(ins[op == "Expand"]))) or \
        (op == "Range" and any(has_sym(ctx._consts.get(i)) for i in present))
    if (present or op == "Constant") and all(i in ctx._consts for i in present) and op not in NOT_FOLDED \
            and not sym_shape:  # a shape with dynamic dims is built at run time by the importer
        vals = [ctx._consts[i] if i else None for i in ins]
        big = constants.fold_too_big(ctx, node, constants.fold_output_bound(ctx, node, a, vals), vals)
        if big:
            ctx._log(Severity.VERBOSE, "ONNX parser: not folding %s (its output is past the fold budget of %d "
                     "elements): computed at run time" % (op, constants.FOLD_LIMIT))
        elif op in FOLDABLE:
            try:
                r = [normalize(v) for v in fold(ctx, node, a, vals)]
            except Dynamic:
                # a value needs a dynamic dim: the importer may compute it at run time (shape tensors)
                if op not in RUNTIME_SYM_OPS or not any(v is not None and v.dtype == object for v in vals):
                    raise
                r = None
            except Fail:
                raise
            except (KeyError, ValueError, TypeError, IndexError) as e:
                if any(v is not None and v.dtype == object for v in vals):
                    raise Dynamic("cannot compute %s over dynamic dimensions: %s" % (op, e))
                raise Fail(ErrorCode.INVALID_NODE, "%s: %s" % (type(e).__name__, e))
            if r is not None and not _folded_too_big(ctx, node, r, vals):
                return r
        elif op != "Constant" and not any(v is not None and v.dtype == object for v in vals):
            r = constants.reference_fold(ctx, node, vals)
            if r is not None and not _folded_too_big(ctx, node, r, vals):
                return r
    imp = IMPORTERS.get(op)
    if imp is None:
        if find_creator(op, node.domain, a) is None:  # a registered plugin comes first
            outs = functions.expand(ctx, node)  # else the body the op's schema defines it by
            if outs is not None:
                return outs
        return plugin_layer(ctx, node, a, "no built-in mapping for op '%s'" % op)
    return imp(ctx, node, a)
