"""Constant folding: nodes whose inputs are all known while parsing are computed with numpy (fold, aware of
symbolic dims) or, for ops fold does not know, with onnx's reference implementation (reference_fold)."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._enums import Severity
from .context import MAX_ELEMENTS, ImporterContext
from .dtypes import ML_STORAGE, ONNX_STORAGE, ONNX_TO_NP, T_STRING, storage_array
from .errors import Dynamic, ErrorCode, Fail, unsupported
from .shape_eval import as_object_array


def attr_ints(a: Dict[str, Any], name: str, default: Any = None) -> Any:
    """Attribute `name` as a list of ints (`default` when absent; None stays None)."""
    v = a.get(name, default)
    return None if v is None else [int(x) for x in v]


def _axes_of(p: ImporterContext, node: Any, a: Dict[str, Any], vals: List[Any], idx: int,
             since: int) -> Optional[List[int]]:
    """`axes` given as an attribute before opset `since` and as input `idx` from it on."""
    if p._opset >= since:
        if idx < len(vals) and vals[idx] is not None:
            return [int(x) for x in np.asarray(vals[idx]).reshape(-1)]
        return None
    return attr_ints(a, "axes")


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


def slice_params(p: ImporterContext, a: Dict[str, Any], vals: List[Any], rank: int):
    """Slice's (starts, ends, axes, steps), from attributes before opset 10 and inputs from it on; axes
    made non-negative and checked against `rank`."""
    if p._opset < 10:
        starts, ends = attr_ints(a, "starts", []), attr_ints(a, "ends", [])
        axes = attr_ints(a, "axes")
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
        raise Fail(ErrorCode.INVALID_NODE, "starts, ends, axes and steps have different lengths")
    axes = [ax + rank if ax < 0 else ax for ax in axes]
    for ax in axes:
        if not 0 <= ax < rank:
            raise Fail(ErrorCode.INVALID_NODE, "axis out of range for an input of rank %d" % rank)
    if len(set(axes)) != len(axes):
        raise Fail(ErrorCode.INVALID_NODE, "repeated axes %s" % axes)
    for s in steps:
        if s == 0:
            raise Fail(ErrorCode.INVALID_NODE, "a step is 0")
    return starts, ends, axes, steps


def clamp_slice(start: int, end: int, step: int, dim: int) -> Tuple[int, int]:
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


def split_sizes(p: ImporterContext, node: Any, a: Dict[str, Any], vals: List[Any], dim: int) -> List[int]:
    """Split's output sizes along an axis of size `dim` (-1: dynamic): the split attribute / input, or
    num_outputs / the output count in equal parts (the last one smaller)."""
    n_out = len(node.output)
    split = None
    if p._opset >= 13:
        if len(vals) > 1 and vals[1] is not None:
            split = [int(x) for x in np.asarray(vals[1]).reshape(-1)]
    else:
        split = attr_ints(a, "split")
    if split is not None:
        if len(split) != n_out:
            raise Fail(ErrorCode.INVALID_NODE, "split %s has %d entries for %d outputs" % (split, len(split), n_out))
        if dim >= 0 and sum(split) != dim:
            raise Fail(ErrorCode.INVALID_NODE, "split %s does not sum to the axis size %d" % (split, dim))
        return split
    if dim < 0:
        raise Dynamic("Split along a dynamic axis needs explicit split sizes")
    if "num_outputs" in a:
        n = int(a["num_outputs"])
        if n != n_out:
            raise Fail(ErrorCode.INVALID_NODE, "num_outputs %d but the node has %d outputs" % (n, n_out))
        chunk = -(-dim // n)
        sizes = [chunk] * (n - 1) + [dim - chunk * (n - 1)]
        if sizes[-1] < 0:
            raise Fail(ErrorCode.INVALID_NODE, "cannot split %d into %d outputs" % (dim, n))
        return sizes
    if dim % n_out:
        raise Fail(ErrorCode.INVALID_NODE, "axis size %d is not divisible by the %d outputs" % (dim, n_out))
    return [dim // n_out] * n_out


def reduce_axes(p: ImporterContext, node: Any, a: Dict[str, Any], vals: List[Any], rank: int) -> List[int]:
    """A Reduce* node's axes (attribute or input by opset), sorted and non-negative; all axes when none
    are given, none with noop_with_empty_axes."""
    since = 13 if node.op_type == "ReduceSum" else 18
    axes = _axes_of(p, node, a, vals, 1, since)
    if not axes:
        if int(a.get("noop_with_empty_axes", 0)):
            return []
        axes = list(range(rank))
    return sorted(set(ax + rank if ax < 0 else ax for ax in axes))


def fold(p: ImporterContext, node: Any, a: Dict[str, Any], vals: List[Any]) -> List[np.ndarray]:
    """Computes a node over constant inputs (object arrays may hold Sym dims)."""
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
        if to == T_STRING:
            raise unsupported("Cast to STRING", ErrorCode.UNSUPPORTED_NODE_DATATYPE)
        if to in ONNX_STORAGE:
            return [storage_array(x, ONNX_STORAGE[to], bool(int(a.get("saturate", 1))))]
        return [x.astype(ONNX_TO_NP[to])]
    if op == "CastLike":
        if x.dtype != object and vals[1].dtype.name in ML_STORAGE:
            return [storage_array(x, ML_STORAGE[vals[1].dtype.name], bool(int(a.get("saturate", 1))))]
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
            parts = [as_object_array(v) for v in parts]
        return [np.concatenate(parts, axis=int(a["axis"]))]
    if op == "Gather":
        idx = np.asarray(vals[1])
        axis = int(a.get("axis", 0))
        return [np.take(x, idx.astype(np.int64), axis=axis)]
    if op == "Slice":
        starts, ends, axes, steps = slice_params(p, a, vals, x.ndim)
        sl = [slice(None)] * x.ndim
        for s, e, ax, st in zip(starts, ends, axes, steps):
            s0, n = clamp_slice(int(s), int(e), st, x.shape[ax])
            sl[ax] = slice(s0, s0 + n * st, st) if s0 + n * st >= 0 else slice(s0, None, st)
        return [x[tuple(sl)]]
    if op == "Split":
        axis = int(a.get("axis", 0))
        sizes = split_sizes(p, node, a, vals, x.shape[axis])
        return list(np.split(x, np.cumsum(sizes)[:-1], axis=axis))
    if op == "Transpose":
        perm = attr_ints(a, "perm")
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
        fill = np.zeros(1, np.float32) if val is None else p._tensor_value(val, "attribute 'value'").reshape(-1)
        return [np.full(shape, fill[0], dtype=fill.dtype)]
    if op == "Expand":
        shape = [int(v) for v in np.asarray(vals[1]).reshape(-1)]
        out = np.broadcast_shapes(x.shape, tuple(shape))
        return [np.array(np.broadcast_to(x, out))]
    if op == "Tile":
        reps = [int(v) for v in np.asarray(vals[1]).reshape(-1)]
        if len(reps) != np.ndim(x) or any(r < 0 for r in reps):  # np.tile would pad the rank and tile anyway
            raise Fail(ErrorCode.INVALID_NODE, "repeats %s for an input of rank %d" % (reps, np.ndim(x)))
        return [np.tile(x, reps)]
    if op in ("ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean"):
        axes = reduce_axes(p, node, a, vals, x.ndim)
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


FOLDABLE = frozenset([
    "Identity", "Dropout", "Cast", "CastLike", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Gather",
    "Slice", "Split", "Transpose", "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal",
    "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not", "Neg", "Abs", "Where", "Range",
    "ConstantOfShape", "Expand", "Tile", "ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean",
    "Shape", "Size"])

# Ops never computed while parsing (random or with side effects).
NOT_FOLDED = frozenset(["RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                        "Bernoulli", "If", "Loop", "Scan"])


# The fold budget: the most elements a folded constant may have when folding would make it larger than every
# input (Expand, Tile, ConstantOfShape, Range, Pad, Resize, broadcasting ops...).  A node past it is not folded:
# its importer adds layers that compute it at run time, so parsing stays fast and small.  Folds that do not grow
# the data (Reshape, Transpose, Cast of a large initializer...) are not limited.  Past MAX_ELEMENTS (2^40) the
# node is refused.
FOLD_LIMIT = 1 << 24


# Ops whose output is the numpy broadcast of their inputs.
_BROADCASTING = frozenset([
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal", "Less", "Greater", "LessOrEqual",
    "GreaterOrEqual", "And", "Or", "Xor", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Where", "PRelu"])


def _volume(shape: Any) -> int:
    r = 1
    for d in shape:
        r *= max(int(d), 0)
    return r


def _broadcast_volume(shapes: List[Tuple[int, ...]]) -> Optional[int]:
    """Elements of the numpy broadcast of `shapes` (exact ints; None when they do not broadcast)."""
    r = max((len(s) for s in shapes), default=0)
    out = [1] * r
    for s in shapes:
        for i, d in enumerate(s):
            j = r - len(s) + i
            d = int(d)
            if d != 1:
                if out[j] not in (1, d):
                    return None
                out[j] = d
    return _volume(out)


def _ints(v: Any) -> List[int]:
    return [int(x) for x in np.asarray(v).reshape(-1)]


def fold_output_bound(p: ImporterContext, node: Any, a: Dict[str, Any], vals: List[Any]) -> Optional[int]:
    """The element count of the node's largest output, computed from its constant inputs' shapes and values
    without folding it, for the ops whose output can outgrow their inputs; None when it is not cheap to tell
    (the result is checked after folding then) or the inputs are malformed (folding reports them)."""
    op = node.op_type
    x = vals[0] if vals else None
    try:
        if op == "Expand" and len(vals) > 1:
            return _broadcast_volume([x.shape, tuple(_ints(vals[1]))])
        if op == "Tile" and len(vals) > 1:
            reps = _ints(vals[1])
            return _volume(list(x.shape) + reps) if len(reps) == x.ndim else None
        if op == "ConstantOfShape" and x is not None:
            return _volume(_ints(x))
        if op == "Range" and len(vals) >= 3:
            start, limit, delta = (float(np.asarray(v).reshape(-1)[0]) for v in vals[:3])
            if delta == 0 or not all(math.isfinite(v) for v in (start, limit, delta)):
                return None
            return max(int(math.ceil((limit - start) / delta)), 0)
        if op == "Pad":
            pads = _ints(vals[1]) if p._opset >= 11 and len(vals) > 1 and vals[1] is not None \
                else attr_ints(a, "pads", [])
            if len(pads) != 2 * x.ndim:
                return None  # axes given, or malformed: checked after folding
            return _volume([d + pads[i] + pads[i + x.ndim] for i, d in enumerate(x.shape)])
        if op == "Resize" and x is not None:
            if len(vals) > 3 and vals[3] is not None and np.asarray(vals[3]).size:
                sizes = _ints(vals[3])
                want = len(attr_ints(a, "axes", [])) or x.ndim
                if len(sizes) != want or any(v < 0 for v in sizes):
                    # onnx's reference would allocate from them (a fuzzed [2^31, -2, 1, 2^40] for a 1-D input: 24 GiB)
                    raise Fail(ErrorCode.INVALID_NODE, "Resize sizes %s for an input of rank %d (%d non-negative "
                               "values expected)" % (sizes, x.ndim, want))
                return _volume(sizes)
            if len(vals) > 2 and vals[2] is not None and np.asarray(vals[2]).size == x.ndim:
                sc = [float(v) for v in np.asarray(vals[2]).reshape(-1)]
                if not all(math.isfinite(v) for v in sc):
                    return None
                return _volume([math.floor(d * s) for d, s in zip(x.shape, sc)])
            return None
        present = [v for v in vals if v is not None]
        if op in _BROADCASTING and len(present) > 1:
            return _broadcast_volume([tuple(v.shape) for v in present])
    except (TypeError, ValueError, OverflowError, IndexError, AttributeError):
        return None
    return None


def fold_too_big(p: ImporterContext, node: Any, n: Optional[int], vals: List[Any]) -> bool:
    """Whether an output of `n` elements is past the fold budget and larger than every input (then the node is
    computed by layers at run time); INVALID_NODE past the 2^40-element bound."""
    if n is None:
        return False
    if n > MAX_ELEMENTS:
        raise Fail(ErrorCode.INVALID_NODE, "%s would make a tensor of %d elements, more than trtlite's 2^40 bound"
                   % (node.op_type, n))
    biggest = max((int(np.asarray(v).size) for v in vals if v is not None), default=0)
    return n > FOLD_LIMIT and n > biggest


def _axis_out_of_range(node: Any, vals: List[Any]) -> bool:
    """An `axis`/`axes` attribute no op accepts for the first input's rank (|axis| > rank + 1)."""
    if not vals or vals[0] is None:
        return False
    r = int(np.asarray(vals[0]).ndim)
    for a in node.attribute:
        if a.name == "axis" and a.type == 2 and not -r - 1 <= a.i <= r:  # AttributeProto.INT
            return True
        if a.name == "axes" and a.type == 7 and any(not -r - 1 <= v <= r for v in a.ints):  # INTS
            return True
    return False


def indices_out_of_range(op: str, axis: int, batch_dims: int, data_shape: Tuple[int, ...],
                         idx: Any) -> Optional[str]:
    """Why the constant indices `idx` of a gather / scatter op (GatherElements, ScatterElements, Scatter: along
    `axis`; GatherND: the axes past `batch_dims`; ScatterND: the leading axes) address outside data of
    `data_shape`; None when they are in range (-dim <= i < dim) or cannot be judged here (malformed shapes are
    the op's own checks)."""
    idx = np.asarray(idx)
    if idx.dtype.kind in "fcb":  # onnx's reference took float indices of 1e30 / -inf to np.choose: a hang (fuzzing)
        return "%s's indices are %s: they must be int32 or int64" % (op, idx.dtype)
    if idx.size == 0 or idx.dtype.kind not in "iu" or any(int(d) < 0 for d in data_shape):
        return None
    r = len(data_shape)
    if op in ("GatherElements", "ScatterElements", "Scatter"):
        if not -r <= axis < r:
            return None
        axes = [axis % r]
        cols = idx.reshape(-1, 1)
    elif op in ("GatherND", "ScatterND"):
        first = batch_dims if op == "GatherND" else 0
        q = int(idx.shape[-1]) if idx.ndim else 0
        if q < 1 or first < 0 or first + q > r:
            return None
        axes = list(range(first, first + q))
        cols = idx.reshape(-1, q)
    else:
        return None
    for j, ax in enumerate(axes):
        dim, lo, hi = int(data_shape[ax]), int(cols[:, j].min()), int(cols[:, j].max())
        if hi >= dim or lo < -dim:
            return "indices out of range for axis %d of size %d (%d .. %d)" % (ax, dim, lo, hi)
    return None


_INDEXING = frozenset(["GatherElements", "ScatterElements", "Scatter", "GatherND", "ScatterND"])


def reference_fold(p: ImporterContext, node: Any, vals: List[Any]) -> Optional[List[np.ndarray]]:
    """Computes a node over constants with onnx's reference implementation (None if it cannot)."""
    if _axis_out_of_range(node, vals):
        return None  # the importer reports it; onnx's reference may compute absurd shapes from it (17 GB, fuzzing)
    if node.op_type in _INDEXING and len(vals) > 1 and vals[0] is not None and vals[1] is not None:
        # onnx's reference gathers with numpy fancy indexing and np.choose: indices past the data (2^40, fuzzing)
        # ran for minutes instead of failing
        ax = bd = 0
        for at in node.attribute:
            if at.name == "axis" and at.type == 2:
                ax = int(at.i)
            if at.name == "batch_dims" and at.type == 2:
                bd = int(at.i)
        why = indices_out_of_range(node.op_type, ax, bd, tuple(np.asarray(vals[0]).shape), vals[1])
        if why:
            raise Fail(ErrorCode.INVALID_NODE, why)
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
        ev = ReferenceEvaluator(n, opsets={"": p._opset})
        res = ev.run([o for o in n.output if o], feeds)
        outs: List[Any] = []
        it = iter(res)
        for o in n.output:
            outs.append(np.asarray(next(it)) if o else None)
        return outs
    except Exception as e:
        p._log(Severity.VERBOSE, "ONNX parser: not folding %s over constants (%s)" % (node.op_type, e))
        return None
