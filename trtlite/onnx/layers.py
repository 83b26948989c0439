"""Layer-building helpers the importers share (reshapes, broadcasts, casts, slices, run-time carriers of
dynamic dims).  A mixin of ImporterContext: the methods use its network, value map and layer naming."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._enums import ActivationType, DataType, ElementWiseOperation, UnaryOperation
from .errors import Dynamic, ErrorCode, Fail, bound_dims_constant
from .shape_eval import Sym, is_static

# add_concatenation takes at most this many inputs (csrc/python/py_network.c); _concat_layer chains longer ones.
MAX_CONCAT_INPUTS = 64


class LayerBuilder:
    """Helpers over ImporterContext's network; every layer is named after the node being imported.  They use
    the context's network, _L / _const_tensor (layers and constants), _tensors, _input_names, _msyms and
    _key_of (values and symbolic dims)."""

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
        if is_static(shape):
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
                raise Fail(ErrorCode.INVALID_NODE, "cannot squeeze axis %d of shape %s (size %d, not 1)"
                           % (ax, shape, shape[ax]))
        if not axes:
            return t
        keep = [i for i in range(r) if i not in axes]
        if is_static(shape):
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
        # add_concatenation takes at most MAX_CONCAT_INPUTS tensors: concatenate runs of them first (a concat of
        # concats along one axis is the same concat)
        ts = list(ts)
        while len(ts) > MAX_CONCAT_INPUTS:
            runs = [ts[i:i + MAX_CONCAT_INPUTS] for i in range(0, len(ts), MAX_CONCAT_INPUTS)]
            ts = [run[0] if len(run) == 1 else self._concat_layer(run, axis) for run in runs]
        layer = self.network.add_concatenation(ts)
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
        raise Fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, "%s must be a floating-point tensor, got %s"
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

    def _sym_source(self, sym: Sym) -> Optional[Tuple[str, int]]:
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

    def _dim_carrier(self, sym: Sym, rank: int, pos: int, what: str) -> Any:
        """A BOOL tensor of rank `rank`, all dims 1 but dim `pos`, which is the run-time size of `sym`."""
        src = self._sym_source(sym)
        if src is None:
            raise Dynamic("%s has the dynamic dimension %r, which is not a dimension of any tensor of the network "
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

    def _broadcast_to_syms(self, t: Any, dims: Dict[int, Sym], what: str) -> Any:
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
        if is_static(shape):
            start = [0] * len(shape)
            size = list(shape)
            stride = [1] * len(shape)
            for ax, (s0, n, st) in spec.items():
                start[ax], size[ax], stride[ax] = s0, n, st
            return self._L(self.network.add_slice(t, start, size, stride))
        # trtlite's slice has static output shapes: with dynamic dims slice each axis with a gather
        for ax, (s0, n, st) in sorted(spec.items()):
            if shape[ax] < 0:
                raise Dynamic("slicing along the dynamic axis %d of a tensor of shape %s" % (ax, shape))
            bound_dims_constant(n, "a slice of %d elements along axis %d of a tensor of shape %s (dynamic axes beside "
                                "it: a gather): its index table" % (n, ax, shape))
            t = self._gather_axis(t, ax, s0 + np.arange(n) * st)
        return t

    def _reshape_2d(self, t: Any, axis: int) -> Any:
        shape = tuple(t.shape)
        head, tail = shape[:axis], shape[axis:]
        if is_static(head):
            h = int(np.prod(head, dtype=np.int64))
            if is_static(tail):
                return self._reshape(t, [h, int(np.prod(tail, dtype=np.int64))], zero_is_placeholder=False)
            if h == 0:
                raise Fail(ErrorCode.INVALID_NODE, "cannot flatten an empty tensor with dynamic dims")
            return self._reshape(t, [h, -1], zero_is_placeholder=False)
        if is_static(tail):
            return self._reshape(t, [-1, int(np.prod(tail, dtype=np.int64))], zero_is_placeholder=False)
        if axis == 1:
            return self._reshape(t, [0, -1])
        raise Dynamic("flattening shape %s at axis %d needs more than one dynamic dimension inferred" % (shape, axis))
