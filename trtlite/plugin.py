"""trtlite.plugin: TensorRT's ``tensorrt.plugin`` decorator API ("quickly deployable plugins") on the host.

    import trtlite.plugin as trtp

    @trtp.register("sample::circ_pad_plugin")
    def circ_pad_desc(inp0: trtp.TensorDesc, pads: npt.NDArray[np.int32]) -> trtp.TensorDesc:
        out = inp0.like()
        for i in range(np.size(pads) // 2):
            out.shape_expr[inp0.ndim - i - 1] += int(pads[2 * i] + pads[2 * i + 1])
        return out

    @trtp.impl("sample::circ_pad_plugin")
    def circ_pad_impl(inp0: trtp.Tensor, pads: npt.NDArray[np.int32], outputs: Tuple[trtp.Tensor], stream: int):
        np.asarray(outputs[0])[...] = np.pad(np.asarray(inp0), ..., mode="wrap")

    layer = network.add_plugin(trtp.op.sample.circ_pad_plugin(x, pads=np.array([1, 1, 1, 1], np.int32)))

``register`` reads the function's signature: the parameters annotated ``TensorDesc`` are the inputs, the others
are attributes (``int``, ``float``, ``bool``, ``str``, or ``npt.NDArray[dtype]``), which become the plugin's
fields; the return annotation (``TensorDesc`` or ``Tuple[TensorDesc, ...]``) gives the number of outputs.  The
plugin is an IPluginV3 registered with the plugin registry as (namespace, name, version "1"), so plans that use
it serialize its attributes and load wherever the same module has been imported.

``impl`` functions get :class:`Tensor` objects for host memory: ``np.asarray(t)``, ``torch.as_tensor(t)`` or
``torch.from_dlpack(t)`` is a view to read the inputs and write the outputs in place; ``stream`` is 0.
``autotune`` is accepted: its tactics (first one used) reach ``impl`` as ``tactic`` when impl takes it; type
combinations beyond the network's own dtypes are not explored.

An output declared ``inp.aliased()`` (in place, TensorRT's ``PreviewFeature.ALIASED_PLUGIN_IO_10_03``) starts as a
copy of that input, and ``impl`` gets the output's buffer as that input, so an impl that writes its input in place
writes the output.  ``aot_impl`` (an ahead-of-time GPU kernel: PTX/cubin with ``KernelLaunchParams`` and
``SymIntExprs``) is accepted and recorded but never called: a CPU cannot run it, so the plugin runs its ``impl``
(also for ``add_plugin(..., aot=True)`` and an ONNX node's ``aot`` attribute); a plugin with an ``aot_impl`` and no
``impl`` is refused, naming the plugin, when its layer is added.  ``trtp.size_tensor`` (data-dependent output
shapes) works through ``network.add_plugin``, ``add_plugin_v3`` and ONNX nodes naming the plugin.
"""
from __future__ import annotations

import inspect
import typing
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._enums import DataType, PluginFieldType, TensorFormat
from ._types import nptype
from .plugins import PluginField, PluginFieldCollection, get_plugin_registry
from .plugins_dynamic import (DimsExprs, IDimensionExpr, IPluginCreatorV3One, IPluginV3, IPluginV3OneBuild,
                              IPluginV3OneCore, IPluginV3OneRuntime, TensorRTPhase, _as_expr, _fill_size_masks,
                              _gather_valid)

__all__ = ["register", "impl", "autotune", "aot_impl", "TensorDesc", "Tensor", "ShapeExpr", "ShapeExprs", "Shape",
           "AutoTuneCombination", "from_shape_expr", "op", "KernelLaunchParams", "SymExprs", "SymIntExprs",
           "SymInt32", "cdiv", "size_tensor", "SizeTensorDesc"]


# ---- shapes ----------------------------------------------------------------------------------------------------------

class ShapeExpr(IDimensionExpr):
    """One symbolic dimension: supports ``+ - * //`` with ints and other ShapeExprs; ``is_constant`` and
    ``constant_value`` when it is known at build time."""

    __slots__ = ()

    @property
    def constant_value(self) -> int:
        """The value (it must be known)."""
        return int(self)

    def _bin(self, other: Any, op: Any, swap: bool = False) -> "ShapeExpr":
        return ShapeExpr(super()._bin(other, op, swap)._v)

    @property
    def is_size_tensor(self) -> bool:  # type: ignore[override]
        """True for a size tensor's ``expr()``."""
        return False


def _shape_expr(x: Any, what: str) -> ShapeExpr:
    e = _as_expr(x, what)
    return e if isinstance(e, ShapeExpr) else ShapeExpr(e._v)


class ShapeExprs(list):
    """A TensorDesc's shape: a list of ShapeExpr (assign ints or ShapeExprs)."""

    def __init__(self, dims: Any = ()) -> None:
        if isinstance(dims, int):
            super().__init__(ShapeExpr(None) for _ in range(dims))
        else:
            super().__init__(_shape_expr(d, f"shape_expr[{i}]") for i, d in enumerate(dims))

    def __setitem__(self, i, v) -> None:  # type: ignore[override]
        """Set one dimension."""
        super().__setitem__(i, _shape_expr(v, f"shape_expr[{i}]"))

    def numel(self) -> ShapeExpr:
        """The product of the dimensions."""
        r = ShapeExpr(1)
        for d in self:
            r = r * d
        return r

    @property
    def is_fake(self) -> bool:
        """False: trtlite's shape expressions always carry their (possibly unknown) values."""
        return False


class Shape(tuple):
    """A concrete shape (Tensor.shape)."""

    def numel(self) -> int:
        """The number of elements."""
        return int(np.prod(self, dtype=np.int64)) if len(self) else 1


class TensorDesc:
    """An input or output as the shape function sees it: ``shape_expr``, ``dtype``, ``ndim``, ``format``."""

    def __init__(self, shape_expr: Any = (), dtype: DataType = DataType.FLOAT,
                 format: TensorFormat = TensorFormat.LINEAR) -> None:
        self.shape_expr = ShapeExprs(shape_expr)
        self.dtype = DataType(dtype)
        self.format = TensorFormat(format)
        self._input_index: Optional[int] = None  # set on the inputs the shape function gets
        self._alias_of: Optional[int] = None  # an output made by inputs[i].aliased()

    @property
    def ndim(self) -> int:
        """Rank."""
        return len(self.shape_expr)

    def like(self) -> "TensorDesc":
        """A desc with the same shape and dtype (a new one: changing it leaves this one as it is)."""
        return TensorDesc(list(self.shape_expr), self.dtype, self.format)

    def aliased(self) -> "TensorDesc":
        """An output aliased to this input (written in place): same shape and dtype.  trtlite gives ``impl`` the
        output's buffer, holding a copy of the input, in place of the input."""
        if self._input_index is None:
            raise ValueError("trtlite.plugin: aliased() needs one of the plugin's input TensorDescs (the output is "
                             "written in place of that input); this desc is not an input")
        d = self.like()
        d._alias_of = self._input_index
        return d

    @property
    def shape(self) -> Shape:
        """The concrete shape (only when every dimension is known at build time)."""
        return Shape(int(d) for d in self.shape_expr)

    def __repr__(self) -> str:
        return f"TensorDesc(shape_expr={[('?' if d._v is None else d._v) for d in self.shape_expr]}, dtype={self.dtype})"


def from_shape_expr(shape_expr: Any, dtype: DataType = DataType.FLOAT) -> TensorDesc:
    """A TensorDesc of this shape (ints or ShapeExprs) and dtype."""
    return TensorDesc(shape_expr, dtype)


class Tensor:
    """An input or output buffer in host memory for an impl function: ``np.asarray(t)`` is a view (writable for
    outputs); ``shape``, ``dtype``, ``ndim``, ``numel()``, ``data_ptr``, ``format``; DLPack (``torch.from_dlpack``)."""

    def __init__(self, array: np.ndarray, dtype: DataType, dd: Optional[Dict[int, int]] = None,
                 owner: str = "") -> None:
        self._a = array
        self.dtype = dtype
        self.format = TensorFormat.LINEAR
        self._dd = dd  # an output with data-dependent dims: {dim: size tensor number}, its buffer at the bound
        self._owner = owner
        self._view_shape: Optional[Tuple[int, ...]] = None

    @property
    def shape(self) -> Shape:
        """Concrete shape."""
        return Shape(self._a.shape)

    @property
    def ndim(self) -> int:
        """Rank."""
        return self._a.ndim

    def numel(self) -> int:
        """Number of elements."""
        return int(self._a.size)

    @property
    def data_ptr(self) -> int:
        """Host address of the first element."""
        return int(self._a.__array_interface__["data"][0])

    @property
    def __array_interface__(self) -> Dict[str, Any]:
        return self._a.__array_interface__

    def numpy(self) -> np.ndarray:
        """The numpy view."""
        return self._a

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._a.__dlpack_device__()

    def copy_(self, src: Any) -> "Tensor":
        """Copies ``src`` (an array, torch tensor or Tensor of this many elements) into this buffer."""
        a = np.asarray(src.numpy() if hasattr(src, "numpy") else src)
        if a.size != self._a.size:
            raise ValueError(f"{self._owner}: copy_() of {a.size} elements into a tensor of shape {self._a.shape}")
        np.copyto(self._a, a.reshape(self._a.shape), casting="unsafe")
        return self

    def aliased(self, shape: Any = None) -> "Tensor":
        """A view of this output with its real shape, for an output whose shape depends on a size tensor: the
        data-dependent dims at most their upper bound, the others as declared (anything else is a ValueError:
        nothing can be written past the buffer).  Without ``shape``, or with this tensor's own shape, itself."""
        if shape is None or tuple(int(v) for v in shape) == tuple(self._a.shape):
            if self._dd is not None:
                self._view_shape = tuple(self._a.shape)
            return self
        shape = tuple(int(v) for v in shape)
        if self._dd is None:
            raise ValueError(f"{self._owner}: aliased({shape}) of a tensor of shape {tuple(self._a.shape)}: only an "
                             "output with a size-tensor dimension (trtp.size_tensor) takes another shape")
        ok = len(shape) == self._a.ndim and all(
            (0 <= v <= b) if k in self._dd else v == b for k, (v, b) in enumerate(zip(shape, self._a.shape)))
        if not ok:
            raise ValueError(f"{self._owner}: aliased({shape}): the output holds at most {tuple(self._a.shape)} "
                             f"(the data-dependent dims {sorted(self._dd)} up to their size tensor's upper bound, "
                             "the others as declared)")
        self._view_shape = shape
        t = Tensor(self._a[tuple(slice(0, v) for v in shape)], self.dtype, None, self._owner)
        return t

    def __repr__(self) -> str:
        return f"Tensor(shape={tuple(self._a.shape)}, dtype={self.dtype})"


class AutoTuneCombination:
    """Accepted for compatibility: ``AutoTuneCombination("FP32|FP16, FP32|FP16", "LINEAR", tactics)``; trtlite
    uses the network's dtypes and the first tactic."""

    def __init__(self, io_types: Optional[str] = None, layouts: Optional[str] = None,
                 tactics: Optional[Sequence[int]] = None) -> None:
        self.io_types = io_types
        self.layouts = layouts
        self._tactics = list(tactics or [])

    def pos(self, pos: Any, io_types: str, layouts: str = "LINEAR") -> None:
        """Types of some positions (recorded, not used)."""

    def tactics(self, tactics: Sequence[int]) -> None:
        """Tactics to choose from (trtlite uses the first)."""
        self._tactics = [int(t) for t in tactics]


# ---- ahead-of-time kernel declarations (accepted, never run) ---------------------------------------------------------

class SymInt32(ShapeExpr):
    """A 32-bit scalar argument of an ahead-of-time kernel: an int or a shape expression (resolved when the
    shapes are known).  trtlite records it; AOT kernels are never launched on a CPU."""

    __slots__ = ()

    def __init__(self, value: Any = None) -> None:
        if value is None:
            super().__init__(None)
        else:
            super().__init__(_shape_expr(value, "SymInt32")._v)


class SymExprs(list):
    """A list of symbolic scalar expressions (extra arguments of an AOT kernel)."""

    def __init__(self, length_or_items: Any = 0) -> None:
        if isinstance(length_or_items, (int, np.integer)) and not isinstance(length_or_items, bool):
            super().__init__(SymInt32() for _ in range(int(length_or_items)))
        else:
            super().__init__(self._item(v, i) for i, v in enumerate(length_or_items))

    @staticmethod
    def _item(v: Any, i: int) -> SymInt32:
        return v if isinstance(v, SymInt32) else SymInt32(_shape_expr(v, f"SymExprs[{i}]"))

    @classmethod
    def from_tuple(cls, items: Sequence[Any]) -> "SymExprs":
        """From SymInt32s (or ints / shape expressions)."""
        return cls(list(items))

    def __setitem__(self, i, v) -> None:  # type: ignore[override]
        """Set one expression."""
        super().__setitem__(i, self._item(v, i))


class SymIntExprs(SymExprs):
    """SymExprs of SymInt32 (TensorRT's ``trtp.SymIntExprs``)."""


class KernelLaunchParams:
    """Grid, block and shared-memory sizes of an AOT kernel launch (ints or shape expressions); recorded only."""

    _FIELDS = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "shared_mem")

    def __init__(self, grid_x: Any = 1, grid_y: Any = 1, grid_z: Any = 1, block_x: Any = 1, block_y: Any = 1,
                 block_z: Any = 1, shared_mem: Any = 0) -> None:
        for f, v in zip(self._FIELDS, (grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem)):
            setattr(self, f, v)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._FIELDS:
            raise AttributeError(f"KernelLaunchParams has no field '{name}' (fields: {', '.join(self._FIELDS)})")
        object.__setattr__(self, name, SymInt32(value))

    def __repr__(self) -> str:
        return "KernelLaunchParams(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS) + ")"


class _SizeExpr(ShapeExpr):
    """A size tensor's ``expr()``: a whole output dimension known only once the plugin has run."""

    __slots__ = ("_st",)

    def __init__(self, st: "SizeTensorDesc") -> None:
        super().__init__(None)
        self._st = st

    @property
    def is_size_tensor(self) -> bool:  # type: ignore[override]
        """True."""
        return True

    def _bin(self, other: Any, op: Any, swap: bool = False) -> "ShapeExpr":
        raise ValueError("trtlite.plugin: a size tensor's expr() stands for a whole output dimension; arithmetic on "
                         "it is not supported (declare another size tensor for that extent)")


class SizeTensorDesc(TensorDesc):
    """An output holding a data-dependent extent (``trtp.size_tensor(opt, upper_bound)``): 0-D INT64, written by
    ``impl``; ``expr()`` is the extent as an output dimension.  ``opt`` and ``upper_bound`` are ints or shape
    expressions of the inputs (``opt`` is recorded: trtlite does not tune)."""

    def __init__(self, opt: Any, upper_bound: Any) -> None:
        super().__init__((), DataType.INT64)
        for what, v in (("opt", opt), ("upper_bound", upper_bound)):
            if isinstance(v, _SizeExpr) or not isinstance(v, (int, np.integer, IDimensionExpr)) or \
                    isinstance(v, bool):
                raise TypeError(f"trtp.size_tensor: {what} must be an int or a shape expression of the inputs, not "
                                f"{type(v).__name__}")
        self.opt, self.upper_bound = _shape_expr(opt, "opt"), _shape_expr(upper_bound, "upper_bound")
        ub, o = self.upper_bound._v, self.opt._v
        if ub is not None and ub < 0:
            raise ValueError(f"trtp.size_tensor: upper_bound is {ub}; it must be at least 0")
        if o is not None and (o < 0 or (ub is not None and o > ub)):
            raise ValueError(f"trtp.size_tensor: opt is {o}; it must lie in [0, upper_bound = {ub}]")
        self._expr = _SizeExpr(self)

    def expr(self) -> ShapeExpr:
        """The extent as a dimension of another output."""
        return self._expr

    def like(self) -> "TensorDesc":
        """A plain 0-D INT64 desc."""
        return TensorDesc((), DataType.INT64)


def size_tensor(opt: Any, upper_bound: Any) -> SizeTensorDesc:
    """TensorRT's ``trtp.size_tensor(opt, upper_bound)``: an output holding an extent known only once the plugin
    has run (a data-dependent shape); return it among the outputs and use ``.expr()`` as a dimension of another
    output.  ``upper_bound`` (an int or an expression of the input dims) bounds the extent."""
    return SizeTensorDesc(opt, upper_bound)


def cdiv(a: Any, b: Any) -> Any:
    """Ceiling division of ints or shape expressions: ``(a + b - 1) // b``."""
    if isinstance(a, IDimensionExpr) or isinstance(b, IDimensionExpr):
        a, b = _shape_expr(a, "cdiv"), _shape_expr(b, "cdiv")
        return (a + b - 1) // b
    return -(-int(a) // int(b))


# ---- plugin definitions ---------------------------------------------------------------------------------------------

_PF_OF_DTYPE = {np.dtype(np.float16): PluginFieldType.FLOAT16, np.dtype(np.float32): PluginFieldType.FLOAT32,
                np.dtype(np.float64): PluginFieldType.FLOAT64, np.dtype(np.int8): PluginFieldType.INT8,
                np.dtype(np.int16): PluginFieldType.INT16, np.dtype(np.int32): PluginFieldType.INT32}


class _Attr:
    """One attribute parameter: name, kind ("int", "float", "bool", "str", "array"), numpy dtype, field type."""

    def __init__(self, plugin_id: str, name: str, ann: Any, default: Any) -> None:
        self.name, self.default = name, default
        if ann is int:
            self.kind, self.dtype, self.ftype = "int", np.dtype(np.int32), PluginFieldType.INT32
        elif ann is float:
            self.kind, self.dtype, self.ftype = "float", np.dtype(np.float32), PluginFieldType.FLOAT32
        elif ann is bool:
            self.kind, self.dtype, self.ftype = "bool", np.dtype(np.int8), PluginFieldType.INT8
        elif ann is str:
            self.kind, self.dtype, self.ftype = "str", np.dtype(np.uint8), PluginFieldType.CHAR
        else:
            dt = _ndarray_dtype(ann)
            if dt is None or dt not in _PF_OF_DTYPE:
                raise TypeError(f"trtlite.plugin.register('{plugin_id}'): attribute '{name}' has annotation {ann!r}; "
                                "supported: int, float, bool, str, numpy.typing.NDArray[<float16|float32|float64|"
                                "int8|int16|int32>]")
            self.kind, self.dtype, self.ftype = "array", dt, _PF_OF_DTYPE[dt]

    def to_field(self, plugin_id: str, value: Any) -> PluginField:
        if self.kind == "str":
            if not isinstance(value, str):
                raise TypeError(f"{plugin_id}: attribute '{self.name}' must be a str, not {type(value).__name__}")
            return PluginField(self.name, np.frombuffer(value.encode(), np.uint8).copy(), self.ftype)
        if self.kind in ("int", "bool") and not isinstance(value, (int, np.integer)):
            raise TypeError(f"{plugin_id}: attribute '{self.name}' must be an {self.kind}, not {type(value).__name__}")
        if self.kind == "float" and (isinstance(value, bool) or not isinstance(value, (int, float, np.number))):
            raise TypeError(f"{plugin_id}: attribute '{self.name}' must be a float, not {type(value).__name__}")
        a = np.asarray(value)
        if self.kind == "array" and a.dtype != self.dtype:
            if not np.can_cast(a.dtype, self.dtype, "same_kind") or a.dtype.kind not in "biuf":
                raise TypeError(f"{plugin_id}: attribute '{self.name}' must be an array of {self.dtype}, not "
                                f"{a.dtype}")
        return PluginField(self.name, a.reshape(-1).astype(self.dtype), self.ftype)

    def from_field(self, data: Any) -> Any:
        a = np.asarray(data)
        if self.kind == "str":
            return a.astype(np.uint8).tobytes().decode()
        if self.kind == "array":
            return a.astype(self.dtype).copy()
        if a.size != 1:
            raise ValueError(f"attribute '{self.name}' holds {a.size} values, expected one")
        return {"int": int, "float": float, "bool": bool}[self.kind](a.reshape(-1)[0])


def _ndarray_dtype(ann: Any) -> Optional[np.dtype]:
    """npt.NDArray[np.int32] (= np.ndarray[Any, np.dtype[np.int32]]) -> dtype('int32').  From numpy 2.5 NDArray is a
    type alias (PEP 695): NDArray[np.int32] then has the alias as origin and the scalar type as its one argument."""
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    alias_of = getattr(origin, "__value__", None)
    if origin is not np.ndarray and alias_of is not None and typing.get_origin(alias_of) is np.ndarray:
        try:
            return np.dtype(args[0]) if len(args) == 1 else None
        except TypeError:
            return None
    if origin is not np.ndarray:
        return None
    if len(args) != 2:
        return None
    inner = typing.get_args(args[1])
    try:
        return np.dtype(inner[0]) if inner else None
    except TypeError:
        return None


def _is_desc(ann: Any) -> bool:
    return ann is TensorDesc or ann == "trtp.TensorDesc" or ann == "TensorDesc"


class _PluginDef:
    """A registered plugin: its shape function, implementation, attributes and creator."""

    def __init__(self, plugin_id: str, fn: Callable) -> None:
        if not isinstance(plugin_id, str) or plugin_id.count("::") != 1 or not all(plugin_id.split("::")):
            raise ValueError(f"trtlite.plugin.register: plugin id must be 'namespace::name', not {plugin_id!r}")
        self.id = plugin_id
        self.namespace, self.name = plugin_id.split("::")
        self.desc_fn = fn
        self.impl_fn: Optional[Callable] = None
        self.autotune_fn: Optional[Callable] = None
        self.aot_impl_fn: Optional[Callable] = None  # recorded, never called (GPU code)
        try:
            hints = typing.get_type_hints(fn)
        except Exception:  # noqa: BLE001 (unresolvable annotations: fall back to the raw ones)
            hints = dict(getattr(fn, "__annotations__", {}))
        sig = inspect.signature(fn)
        self.inputs: List[str] = []
        self.attrs: List[_Attr] = []
        for p in sig.parameters.values():
            ann = hints.get(p.name, p.annotation)
            if _is_desc(ann):
                if self.attrs:
                    raise TypeError(f"trtlite.plugin.register('{plugin_id}'): input '{p.name}' follows attributes; "
                                    "TensorDesc parameters come first")
                self.inputs.append(p.name)
            elif ann is inspect.Parameter.empty:
                raise TypeError(f"trtlite.plugin.register('{plugin_id}'): parameter '{p.name}' needs an annotation "
                                "(trtp.TensorDesc for an input, or an attribute type)")
            else:
                self.attrs.append(_Attr(plugin_id, p.name, ann,
                                        None if p.default is inspect.Parameter.empty else p.default))
        ret = hints.get("return", sig.return_annotation)
        if _is_desc(ret):
            self.num_outputs = 1
        elif typing.get_origin(ret) in (tuple, Tuple) and typing.get_args(ret) and \
                all(_is_desc(a) for a in typing.get_args(ret) if a is not Ellipsis) and \
                Ellipsis not in typing.get_args(ret):
            self.num_outputs = len(typing.get_args(ret))
        else:
            raise TypeError(f"trtlite.plugin.register('{plugin_id}'): the return annotation must be trtp.TensorDesc "
                            f"or Tuple[trtp.TensorDesc, ...] with one entry per output, not {ret!r}")
        self.creator = _Creator(self)

    def attr_values(self, fc: Any) -> Dict[str, Any]:
        given = {f.name: f for f in (fc or [])}
        out = {}
        for a in self.attrs:
            if a.name in given and given[a.name].data is not None:
                try:
                    out[a.name] = a.from_field(given[a.name].data)
                except (ValueError, TypeError) as e:
                    raise ValueError(f"plugin '{self.id}': {e}") from e
            elif a.default is not None:
                out[a.name] = a.default
            else:
                raise ValueError(f"plugin '{self.id}': attribute '{a.name}' is missing")
        return out

    def fields(self, values: Dict[str, Any]) -> PluginFieldCollection:
        return PluginFieldCollection([a.to_field(self.id, values[a.name]) for a in self.attrs])

    def tactics(self, in_descs: List[TensorDesc], out_descs: List[TensorDesc]) -> List[int]:
        if self.autotune_fn is None:
            return []
        combos = self.autotune_fn(*in_descs, tuple(out_descs))
        t: List[int] = []
        for c in combos or []:
            t.extend(getattr(c, "_tactics", []))
        return t


_DEFS: Dict[str, _PluginDef] = {}


def _get(plugin_id: str, what: str) -> _PluginDef:
    d = _DEFS.get(plugin_id)
    if d is None:
        raise ValueError(f"trtlite.plugin.{what}('{plugin_id}'): no plugin registered under that id "
                         "(trtp.register comes first)")
    return d


def register(plugin_id: str, lazy_register: bool = False) -> Callable[[Callable], Callable]:
    """Decorator: registers a plugin ("namespace::name") whose shape/dtype function it decorates."""
    def deco(fn: Callable) -> Callable:
        if plugin_id in _DEFS:
            raise ValueError(f"trtlite.plugin.register: '{plugin_id}' is already registered")
        d = _PluginDef(plugin_id, fn)
        reg = get_plugin_registry()
        if not reg.register_creator(d.creator, d.namespace):
            raise ValueError(f"trtlite.plugin.register: the plugin registry already has a creator "
                             f"'{d.name}' (version 1) in namespace '{d.namespace}'")
        _DEFS[plugin_id] = d
        return fn
    return deco


def impl(plugin_id: str) -> Callable[[Callable], Callable]:
    """Decorator: the plugin's implementation ``f(inputs..., attrs..., outputs, stream[, tactic])``."""
    def deco(fn: Callable) -> Callable:
        d = _get(plugin_id, "impl")
        params = list(inspect.signature(fn).parameters)
        need = d.inputs + [a.name for a in d.attrs]
        if params[:len(need)] != need and params[:len(d.inputs)] and len(params) < len(d.inputs) + 2:
            raise TypeError(f"trtlite.plugin.impl('{plugin_id}'): the function takes {params}; expected the inputs "
                            f"and attributes {need}, then outputs and stream")
        d.impl_fn = fn
        return fn
    return deco


def autotune(plugin_id: str) -> Callable[[Callable], Callable]:
    """Decorator: returns AutoTuneCombinations; trtlite uses their first tactic (if any)."""
    def deco(fn: Callable) -> Callable:
        _get(plugin_id, "autotune").autotune_fn = fn
        return fn
    return deco


def aot_impl(plugin_id: str) -> Callable[[Callable], Callable]:
    """Decorator: the plugin's ahead-of-time kernel ``f(inputs..., attrs..., outputs, tactic) -> (kernel name,
    PTX/cubin, KernelLaunchParams, SymExprs)``.  Recorded, never called: a CPU cannot run GPU code, so the
    plugin runs its ``impl``; without an ``impl`` adding its layer raises NotImplementedError."""
    def deco(fn: Callable) -> Callable:
        _get(plugin_id, "aot_impl").aot_impl_fn = fn
        return fn
    return deco


_AOT_WARNED: set = set()


def _check_runnable(d: "_PluginDef", aot: bool) -> None:
    """Refuse a plugin that has only an ahead-of-time kernel; note once when aot=True falls back to impl."""
    if d.impl_fn is None and d.aot_impl_fn is not None:
        raise NotImplementedError(
            f"plugin '{d.id}' has only an ahead-of-time implementation (trtp.aot_impl, a GPU kernel), which cannot "
            f"run on the CPU; define a trtp.impl (numpy or torch on the CPU) for it")
    if aot and d.impl_fn is not None and d.id not in _AOT_WARNED:
        _AOT_WARNED.add(d.id)
        warnings.warn(f"plugin '{d.id}': aot=True asks for its ahead-of-time GPU kernel; trtlite runs its "
                      f"trtp.impl instead", RuntimeWarning, stacklevel=3)


# ---- the IPluginV3 behind every definition ----------------------------------------------------------------------------

class _Plugin(IPluginV3, IPluginV3OneCore, IPluginV3OneBuild, IPluginV3OneRuntime):
    def __init__(self, d: _PluginDef, values: Dict[str, Any], phase: TensorRTPhase,
                 n_sizes: Optional[int] = 0) -> None:
        self._def = d
        self._values = values
        self.phase = phase
        self._n_sizes = n_sizes  # size tensors (hidden mask outputs); None: not known (an ONNX node)
        self.num_outputs = d.num_outputs + (n_sizes or 0)
        self.plugin_name = d.name
        self.plugin_namespace = d.namespace
        self.plugin_version = "1"
        self.tactic: Optional[int] = None

    def _trtl_descs(self, inputs: List[DimsExprs], dtypes: List[DataType]):
        d = self._def
        if len(inputs) != len(d.inputs):
            raise ValueError(f"plugin '{d.id}' takes {len(d.inputs)} inputs ({', '.join(d.inputs)}), got "
                             f"{len(inputs)}")
        descs = [TensorDesc(list(e), t) for e, t in zip(inputs, dtypes)]
        for i, desc in enumerate(descs):
            desc._input_index = i
        outs = _call_desc(d, descs, self._values)
        sizes, dd, shapes = _size_layout(d, outs)
        if sizes and self._n_sizes is None:
            raise NotImplementedError(f"plugin '{d.id}' declares size tensors (data-dependent output shapes): add "
                                      "its layer with network.add_plugin(trtp.op...) or add_plugin_v3, not "
                                      "add_plugin_v2")
        if len(sizes) != (self._n_sizes or 0):
            raise ValueError(f"plugin '{d.id}': the registered function declares {len(sizes)} size tensors here and "
                             f"{self._n_sizes} when the layer was added; their number must not depend on the shapes")
        self._descs = (descs, list(outs))
        self._aliases = {j: o._alias_of for j, o in enumerate(outs) if o._alias_of is not None}
        self._sizes, self._dd = sizes, dd
        masks = [[s.upper_bound] for s in (outs[k] for k in sizes)]  # hidden INT32 masks, one per size tensor
        return shapes + masks, [o.dtype for o in outs] + [DataType.INT32] * len(sizes)

    def get_output_data_types(self, input_types):
        return [DataType.FLOAT] * self.num_outputs  # not used: _trtl_descs answers for shapes and dtypes

    def get_output_shapes(self, inputs, shape_inputs, expr_builder):
        return self._trtl_descs(inputs, [DataType.FLOAT] * len(inputs))[0]

    def supports_format_combination(self, pos, in_out, num_inputs):
        return in_out[pos].desc.format == TensorFormat.LINEAR

    def get_valid_tactics(self):
        descs = getattr(self, "_descs", None)
        return self._def.tactics(*descs) if descs else []

    def set_tactic(self, tactic):
        self.tactic = int(tactic)

    def get_fields_to_serialize(self):
        fc = self._def.fields(self._values)
        if self._n_sizes:
            fc = PluginFieldCollection(list(fc) + [PluginField(_SIZES_FIELD, np.array([self._n_sizes], np.int32),
                                                               PluginFieldType.INT32)])
        return fc

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        d = self._def
        if d.impl_fn is None:
            raise RuntimeError(f"plugin '{d.id}' has no implementation (decorate one with trtp.impl)")
        aliases = getattr(self, "_aliases", None)
        if aliases is None:  # a plugin made for the runtime: ask the shape function at the concrete shapes
            self._trtl_descs([DimsExprs(tuple(desc.dims)) for desc in input_desc], [desc.type for desc in input_desc])
            aliases = self._aliases
        nd = d.num_outputs
        ins = [Tensor(_host_view(a, desc), desc.type) for a, desc in zip(inputs, input_desc)]
        outs = tuple(Tensor(_host_view(a, desc), desc.type, self._dd.get(j), f"plugin '{d.id}': output {j}")
                     for j, (a, desc) in enumerate(zip(outputs[:nd], output_desc[:nd])))
        for j, i in aliases.items():  # in place: the output starts as the input and stands for it
            np.copyto(outs[j]._a, ins[i]._a)
            ins[i] = outs[j]
        kwargs = dict(self._values)
        if "tactic" in inspect.signature(d.impl_fn).parameters:
            kwargs["tactic"] = self.tactic if self.tactic is not None else 0
        d.impl_fn(*ins, outputs=outs, stream=stream, **kwargs)
        if self._sizes:
            self._finish_sizes(outs, [_host_view(a, desc) for a, desc in zip(outputs[nd:], output_desc[nd:])])

    def _finish_sizes(self, outs: Tuple[Tensor, ...], masks: List[np.ndarray]) -> None:
        """After impl: each size tensor's value checked against its bound and written as its mask's leading ones;
        an output's aliased() view must agree with the size tensors of its data-dependent dims."""
        d = self._def
        values = _fill_size_masks(d.id, [(k, outs[k]._a) for k in self._sizes], masks)
        for j, dims in self._dd.items():
            vs = outs[j]._view_shape
            bad = [k for k, sn in dims.items() if vs is not None and vs[k] != values[sn]]
            if bad:
                raise ValueError(f"plugin '{d.id}': output {j} was written through aliased({vs}), but its dim "
                                 f"{bad[0]} is the size tensor (output {self._sizes[dims[bad[0]]]}) that holds "
                                 f"{values[dims[bad[0]]]}")

    def attach_to_context(self, context):
        return self.clone()

    def clone(self):
        c = _Plugin(self._def, dict(self._values), self.phase, self._n_sizes)
        c.tactic = self.tactic
        if hasattr(self, "_aliases"):
            c._aliases, c._sizes, c._dd = dict(self._aliases), list(self._sizes), dict(self._dd)
        return c


_SIZES_FIELD = "_trtl_size_tensors"  # a plan's record of how many size tensors (hidden outputs) a plugin has


def _call_desc(d: _PluginDef, descs: List[TensorDesc], values: Dict[str, Any]) -> List[TensorDesc]:
    """The registered shape function's output descs, checked against its return annotation."""
    r = d.desc_fn(*descs, **values)
    outs = [r] if d.num_outputs == 1 and isinstance(r, TensorDesc) else r
    if not isinstance(outs, (list, tuple)) or not all(isinstance(o, TensorDesc) for o in outs):
        raise TypeError(f"plugin '{d.id}': the registered function must return "
                        f"{'a trtp.TensorDesc' if d.num_outputs == 1 else 'a tuple of trtp.TensorDesc'}, "
                        f"not {type(r).__name__}")
    if len(outs) != d.num_outputs:
        raise ValueError(f"plugin '{d.id}': the registered function returned {len(outs)} descs for "
                         f"{d.num_outputs} outputs (its return annotation)")
    return list(outs)


def _size_layout(d: _PluginDef, outs: List[TensorDesc]):
    """Size tensors among the outputs: (their output indices, {output: {dim: size tensor number}}, the output
    shapes with each size-tensor dim at its upper bound)."""
    sizes = [k for k, o in enumerate(outs) if isinstance(o, SizeTensorDesc)]
    number = {id(outs[k]): n for n, k in enumerate(sizes)}
    dd: Dict[int, Dict[int, int]] = {}
    shapes = []
    for j, o in enumerate(outs):
        shape = []
        for k, e in enumerate(o.shape_expr):
            if isinstance(e, _SizeExpr):
                if id(e._st) not in number:
                    raise ValueError(f"plugin '{d.id}': output {j} dim {k} is a size tensor's expr(), but that size "
                                     "tensor is not one of the outputs the registered function returns")
                dd.setdefault(j, {})[k] = number[id(e._st)]
                e = e._st.upper_bound
            shape.append(e)
        shapes.append(shape)
    return sizes, dd, shapes


def _host_view(address: int, desc: Any) -> np.ndarray:
    import ctypes
    dt = np.dtype(nptype(desc.type))
    n = int(np.prod(desc.dims, dtype=np.int64)) if len(desc.dims) else 1
    if n == 0:
        return np.empty(tuple(desc.dims), dt)
    buf = (ctypes.c_char * (n * dt.itemsize)).from_address(address)
    return np.frombuffer(buf, dt).reshape(tuple(desc.dims))


class _Creator(IPluginCreatorV3One):
    def __init__(self, d: _PluginDef) -> None:
        self._def = d
        self.name = d.name
        self.plugin_namespace = d.namespace
        self.plugin_version = "1"
        self.field_names = PluginFieldCollection([PluginField(a.name, None, a.ftype) for a in d.attrs])

    def create_plugin(self, name, field_collection, phase):
        if phase == TensorRTPhase.BUILD:  # an ONNX node (TensorRT's parser reads its "aot" attribute)
            aot = [f for f in (field_collection or []) if f.name == "aot" and f.data is not None]
            _check_runnable(self._def, bool(aot and np.asarray(aot[0].data).reshape(-1)[:1].any()))
        n_sizes: Optional[int] = 0 if phase == TensorRTPhase.RUNTIME else None
        for f in field_collection or []:
            if f.name == _SIZES_FIELD and f.data is not None:
                n_sizes = int(np.asarray(f.data).reshape(-1)[0])
        return _Plugin(self._def, self._def.attr_values(field_collection), phase, n_sizes)


# ---- trtp.op.<namespace>.<name>(inputs..., attrs...) ------------------------------------------------------------------

class _OpCall:
    """What ``trtp.op.ns.name(...)`` returns: the inputs and the plugin, for ``network.add_plugin``."""

    def __init__(self, inputs: List[Any], plugin: _Plugin) -> None:
        self.inputs = inputs
        self.plugin = plugin

    def __iter__(self):
        return iter((self.inputs, [], self.plugin))


class _OpFn:
    def __init__(self, d: _PluginDef) -> None:
        self._def = d

    def __call__(self, *inputs: Any, **attrs: Any) -> _OpCall:
        d = self._def
        if len(inputs) != len(d.inputs):
            raise TypeError(f"trtp.op.{d.namespace}.{d.name}: takes {len(d.inputs)} input tensors "
                            f"({', '.join(d.inputs)}), got {len(inputs)}")
        unknown = set(attrs) - {a.name for a in d.attrs}
        if unknown:
            raise TypeError(f"trtp.op.{d.namespace}.{d.name}: unknown attributes {sorted(unknown)} (it has "
                            f"{[a.name for a in d.attrs]})")
        values = {}
        for a in d.attrs:
            v = attrs.get(a.name, a.default)
            if v is None:
                raise TypeError(f"trtp.op.{d.namespace}.{d.name}: attribute '{a.name}' is missing")
            a.to_field(d.id, v)  # type check now, not at build time
            values[a.name] = v
        return _OpCall(list(inputs), _Plugin(d, values, TensorRTPhase.BUILD))


class _OpNamespace:
    def __init__(self, ns: str) -> None:
        self._ns = ns

    def __getattr__(self, name: str) -> _OpFn:
        d = _DEFS.get(f"{self._ns}::{name}")
        if d is None:
            raise AttributeError(f"trtp.op.{self._ns} has no plugin '{name}' (registered: "
                                 f"{sorted(k for k in _DEFS if k.startswith(self._ns + '::'))})")
        return _OpFn(d)


class _Ops:
    """``trtp.op.<namespace>.<name>``."""

    def __getattr__(self, ns: str) -> _OpNamespace:
        if ns.startswith("__"):
            raise AttributeError(ns)
        return _OpNamespace(ns)


op = _Ops()


def _add_plugin(network: Any, op_call: Any = None, aot: Optional[bool] = None) -> Any:
    """network.add_plugin(trtp.op.ns.name(...), aot=None): the plugin layer.  The plugin runs its trtp.impl
    (also with aot=True: a CPU cannot run the ahead-of-time GPU kernel); one with only an aot_impl is refused."""
    if isinstance(op_call, _OpCall):
        _check_runnable(op_call.plugin._def, bool(aot))
        return _add_with_sizes(network, op_call)
    if isinstance(op_call, tuple) and len(op_call) == 3:
        return network.add_plugin_v3(*op_call)
    raise TypeError(f"add_plugin(): expected trtp.op.<namespace>.<name>(...), not {type(op_call).__name__}")



def _add_with_sizes(network: Any, op_call: _OpCall) -> Any:
    """The plugin layer; with size tensors, also per size tensor the indices of its mask's ones (NonZero) and
    per data-dependent dim a gather of those indices, so the outputs carry their real shapes."""
    plugin = op_call.plugin
    d = plugin._def
    descs = []
    for i, t in enumerate(op_call.inputs):
        shape = getattr(t, "shape", None)
        if shape is None:
            raise TypeError(f"trtp.op.{d.namespace}.{d.name}: input {i} must be an ITensor, not {type(t).__name__}")
        descs.append(TensorDesc([ShapeExpr(int(v)) for v in shape], t.dtype))
        descs[-1]._input_index = i
    try:
        sizes, dd, _ = _size_layout(d, _call_desc(d, descs, plugin._values))
    except Exception:  # noqa: BLE001 (add_plugin_v3 asks again and reports it as a PluginError naming the layer)
        sizes, dd = [], {}
    plugin._n_sizes, plugin.num_outputs = len(sizes), d.num_outputs + len(sizes)
    layer = network.add_plugin_v3(op_call.inputs, [], plugin)
    return _gather_valid(network, layer, d.num_outputs, len(sizes), dd) if sizes else layer
