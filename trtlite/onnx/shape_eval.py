"""Symbolic shape tracking: a dynamic dimension read by Shape is a Sym (numpy object arrays hold them), and
infer_keys says which input dims an op's output dims are, so that Reshape can copy (0) or infer (-1) them."""
from __future__ import annotations

import itertools
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .errors import Dynamic


_OPAQUE = itertools.count()

_NEEDS_VALUE = ("the model needs the value of the dynamic dimension %r while parsing: it is known only at run time, "
                "and trtlite has no shape tensors to compute with it")


class Sym:
    """An unknown (dynamic) dimension: `key` identifies it (a dim_param name from ONNX shape inference, or
    (tensor, axis) of the tensor Shape read); `origin` is the (tensor, axis) it was read from, if any."""
    __slots__ = ("key", "origin", "depth")

    # Keys of expressions deeper than this become opaque: a key nested thousands deep (a long chain of Adds
    # on a dim) would overflow Python's recursion in hash/==/repr.  An opaque key equals nothing else,
    # which is only more conservative (such a dim is then unsupported wherever it must be matched).
    MAX_DEPTH = 32

    def __init__(self, key: Any, origin: Optional[Tuple[str, int]] = None, depth: int = 0) -> None:
        if depth > Sym.MAX_DEPTH:
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
        if isinstance(o, Sym):
            return self.key == o.key
        if isinstance(o, (int, np.integer)) and o < 0:
            return False  # a dimension is never negative
        raise Dynamic("the model compares the dynamic dimension %r with %r" % (self, o))

    def __ne__(self, o: Any) -> Any:
        return not self.__eq__(o)

    def _bin(self, o: Any, op: str, identity: Optional[int] = None, swap: bool = False) -> Any:
        if identity is not None and not isinstance(o, Sym) and o == identity:
            return self
        ok = o.key if isinstance(o, Sym) else int(o)
        depth = max(self.depth, o.depth if isinstance(o, Sym) else 0) + 1
        return Sym(("(" + op + ")", ok, self.key) if swap else ("(" + op + ")", self.key, ok), None, depth)

    def __mul__(self, o: Any) -> Any:
        if not isinstance(o, Sym) and o == 0:
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
        return Sym(("neg", self.key), None, self.depth + 1)

    def _cmp(self, o: Any) -> Any:
        raise Dynamic("the model compares the dynamic dimension %r with %r" % (self, o))

    __lt__ = __le__ = __gt__ = __ge__ = _cmp

    def __index__(self) -> int:
        raise Dynamic(_NEEDS_VALUE % (self,))

    __int__ = __index__

    def __float__(self) -> float:
        raise Dynamic(_NEEDS_VALUE % (self,))


def has_sym(a: Any) -> bool:
    """Whether `a` is an object array holding a Sym."""
    return isinstance(a, np.ndarray) and a.dtype == object and any(isinstance(v, Sym) for v in a.flat)


def normalize(a: Any) -> np.ndarray:
    """An object array without symbols becomes an int64 (or float/bool) array."""
    a = np.asarray(a)
    if a.dtype == object and not any(isinstance(v, Sym) for v in a.flat):
        vals = list(a.flat)
        if all(isinstance(v, (bool, np.bool_)) for v in vals) and vals:
            return np.array(vals, dtype=np.bool_).reshape(a.shape)
        if all(isinstance(v, (int, np.integer)) for v in vals):
            return np.array(vals, dtype=np.int64).reshape(a.shape)
        return np.array(vals, dtype=np.float64).reshape(a.shape)
    return a


def as_object_array(a: np.ndarray) -> np.ndarray:
    """`a` as an object array of Python scalars (to concatenate with arrays holding Syms)."""
    if a.dtype == object:
        return a
    out = np.empty(a.shape, dtype=object)
    for idx, v in np.ndenumerate(a):
        out[idx] = int(v) if np.issubdtype(a.dtype, np.integer) else v.item()
    return out


_BATCH_ONLY = frozenset(["Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool",
                         "GlobalMaxPool", "Resize", "Upsample", "Pad", "LRN", "DepthToSpace", "SpaceToDepth", "Tile",
                         "Expand", "Concat"])


def infer_keys(node: Any, a: Dict[str, Any], r: int, in_keys: List[List[Any]]) -> Optional[List[Any]]:
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


def axes_mask(axes: Sequence[int]) -> int:
    """The bit mask of `axes` (trtlite's reduce / normalization axes)."""
    m = 0
    for ax in axes:
        m |= 1 << int(ax)
    return m


def is_static(shape: Sequence[int]) -> bool:
    """Whether every dim of `shape` is known (no -1)."""
    return all(d >= 0 for d in shape)
