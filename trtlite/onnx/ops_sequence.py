"""Importers of ONNX sequences (SequenceEmpty / Construct / Insert / Erase / At / Length, SplitToSequence,
ConcatFromSequence) and of optionals holding a plain tensor (OptionalHasElement / OptionalGetElement).

TensorRT has no sequence values, so a sequence lives only while parsing: a Python list of the tensors (or constants)
it holds, every position a constant.  Whatever a model computes from it (an element, its length, the concatenation)
becomes ordinary layers or constants; a sequence that leaves the graph (an output), enters it (an input) or is
indexed by a position computed at run time is refused with a message naming it."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported
from .registry import importer


class Seq:
    """A sequence value while parsing: its items (layer outputs or numpy constants), in order."""

    def __init__(self, items: List[Any]) -> None:
        self.items = list(items)


def _seq(p: ImporterContext, name: Optional[str]) -> Seq:
    s = p._seqs.get(name) if name else None
    if s is None:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_INPUT, "input '%s' must be a sequence made in the graph "
                   "(SequenceEmpty / SequenceConstruct / SplitToSequence ...): sequences exist only while parsing"
                   % name)
    return s


def _position(p: ImporterContext, node: Any, k: int, n: int, default: int, insert: bool = False) -> int:
    """The position input `k` (a constant; `default` when absent) in 0..n-1 (0..n for an insert)."""
    name = p._inp(node, k)
    if name is None:
        return default
    pos = int(np.asarray(p._cval(name, "position")).reshape(-1)[0])
    hi = n if insert else n - 1
    if not -n <= pos <= hi:
        raise Fail(ErrorCode.INVALID_NODE, "position %d is out of range for a sequence of %d tensors" % (pos, n))
    return pos + n if pos < 0 else pos


def _item(p: ImporterContext, name: str) -> Any:
    """A tensor or constant to put in a sequence."""
    if name in p._consts:
        return p._consts[name]
    return p._tensor(name)


def _as_tensor(p: ImporterContext, v: Any) -> Any:
    return p._const_tensor(v) if isinstance(v, np.ndarray) else v


@importer("SequenceEmpty", restrictions="sequences exist only while parsing (see SequenceConstruct)")
def _sequence_empty(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    return [Seq([])]


@importer("SequenceConstruct",
          restrictions="sequences exist only while parsing: positions must be constants, and no graph input or "
                       "output may be a sequence")
def _sequence_construct(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    return [Seq([_item(p, n) for n in node.input if n])]


@importer("SequenceInsert", restrictions="a constant position")
def _sequence_insert(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    s = _seq(p, node.input[0])
    items = list(s.items)
    items.insert(_position(p, node, 2, len(items), len(items), insert=True), _item(p, node.input[1]))
    return [Seq(items)]


@importer("SequenceErase", restrictions="a constant position")
def _sequence_erase(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    items = list(_seq(p, node.input[0]).items)
    if not items:
        raise Fail(ErrorCode.INVALID_NODE, "SequenceErase of an empty sequence")
    del items[_position(p, node, 1, len(items), len(items) - 1)]
    return [Seq(items)]


@importer("SequenceAt", restrictions="a constant position")
def _sequence_at(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    items = _seq(p, node.input[0]).items
    if not items:
        raise Fail(ErrorCode.INVALID_NODE, "SequenceAt of an empty sequence")
    v = items[_position(p, node, 1, len(items), 0)]
    return [v if isinstance(v, np.ndarray) else p._L(p.network.add_identity(v))]


@importer("SequenceLength", restrictions="none")
def _sequence_length(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    return [np.array(len(_seq(p, node.input[0]).items), np.int64)]


@importer("ConcatFromSequence", restrictions="a non-empty sequence")
def _concat_from_sequence(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    items = _seq(p, node.input[0]).items
    if not items:
        raise Fail(ErrorCode.INVALID_NODE, "ConcatFromSequence of an empty sequence")
    ts = [_as_tensor(p, v) for v in items]
    r = len(ts[0].shape)
    new_axis = int(a.get("new_axis", 0))
    axis = int(a["axis"]) if "axis" in a else 0
    rank = r + 1 if new_axis else r
    if not -rank <= axis < rank:
        raise Fail(ErrorCode.INVALID_NODE, "axis %d is out of range for rank %d" % (axis, rank))
    axis = axis + rank if axis < 0 else axis
    if new_axis:
        ts = [p._unsqueeze(t, [axis]) for t in ts]
    if len(ts) == 1:
        return [p._L(p.network.add_identity(ts[0]))]
    return [p._concat_layer(ts, axis)]


# Pieces a SplitToSequence may make (each one a layer): a fuzzed [2^20] input split into single elements kept the
# parser adding a million slice layers for minutes.
SEQUENCE_MAX = 4096


@importer("SplitToSequence",
          restrictions="split sizes constant, or a run-time 1-D split of static length (a scalar split must be "
                       "constant)")
def _split_to_sequence(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    axis = p._norm_axis(int(a.get("axis", 0)), len(xs))
    sn = p._inp(node, 1)
    if sn is not None and not p._is_const(sn):  # sizes at run time: as many pieces as the split has entries
        from .shape_tensors import runtime_split, shape_input
        return [Seq(runtime_split(p, x, shape_input(p, sn, SEQUENCE_MAX), axis))]
    split = None if sn is None else np.asarray(p._cval(sn, "split"))
    dim = xs[axis]
    if split is not None and split.ndim == 0:  # pieces of that size, the last one smaller
        if dim < 0:
            raise Fail(ErrorCode.UNSUPPORTED_NODE_INPUT, "a scalar split along the dynamic axis %d" % axis)
        c = int(split)
        if c <= 0:
            raise Fail(ErrorCode.INVALID_NODE, "split %d must be positive" % c)
        count = dim // c + (dim % c > 0)
    elif split is not None:
        count = int(split.size)
    else:
        if dim < 0:
            raise Fail(ErrorCode.UNSUPPORTED_NODE_INPUT, "SplitToSequence without split along the dynamic axis %d"
                       % axis)
        count = dim
    if count > SEQUENCE_MAX:  # counted before any list of that length is built
        raise unsupported("SplitToSequence into %d pieces: at most %d (each piece is a layer of the network)"
                          % (count, SEQUENCE_MAX), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if split is not None and split.ndim == 0:
        sizes = [c] * (dim // c) + ([dim % c] if dim % c else [])
    elif split is not None:
        sizes = [int(v) for v in split.reshape(-1)]
        if any(v < 0 for v in sizes) or (dim >= 0 and sum(sizes) != dim):
            raise Fail(ErrorCode.INVALID_NODE, "split %s does not divide the axis of size %d" % (sizes, dim))
    else:
        sizes = [1] * dim
    keep = split is not None or int(a.get("keepdims", 1))
    items, start = [], 0
    for n in sizes:
        piece = p._slice(x, {axis: (start, n, 1)}) if n != dim else p._L(p.network.add_identity(x))
        items.append(piece if keep else p._squeeze(piece, [axis]))
        start += n
    return [Seq(items)]


@importer("OptionalHasElement", restrictions="a plain tensor input (true) or none (false): no optional values")
def _optional_has_element(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    name = p._inp(node, 0)
    if name is not None and name not in p._tensors and name not in p._consts:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_INPUT, "input '%s' must be a tensor (no optional values)" % name)
    return [np.array(name is not None, np.bool_)]


@importer("OptionalGetElement", restrictions="a plain tensor input (no optional values)")
def _optional_get_element(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    name = node.input[0]
    if name in p._consts:
        return [p._consts[name]]
    if name in p._seqs:
        raise Fail(ErrorCode.UNSUPPORTED_NODE_INPUT, "input '%s' is a sequence (no optional or sequence values "
                   "leave a node)" % name)
    return [p._L(p.network.add_identity(p._tensor(name)))]

