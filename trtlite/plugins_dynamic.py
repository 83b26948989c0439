"""TensorRT's newer Python plugin interfaces: IPluginV2DynamicExt and IPluginV3 (with IPluginCreatorV3One).

Both are run through trtlite's Python-plugin adapter (plugins.py / csrc/python/plugin_adapter.c): an internal
:class:`IPluginV2` subclass, ``_Adapter``, stands for the user's plugin and translates each call:

- output shapes: the input shapes become :class:`DimsExprs` of :class:`IDimensionExpr` (an unknown value for a
  dynamic dimension at build time, so expressions on it stay unknown and the output dimension is -1); the
  plugin's expressions are evaluated by :class:`IExprBuilder`;
- at build time ``supports_format_combination`` is asked about every input and output (LINEAR, the dtypes the
  network has), then ``configure_plugin`` is called once;
- before the first ``enqueue`` and whenever the input shapes change, V2DynamicExt's ``configure_plugin`` (V3:
  ``on_shape_change``) sees the concrete shapes and ``get_workspace_size`` sizes a host workspace;
- ``enqueue(input_desc, output_desc, inputs, outputs, workspace, stream)`` gets PluginTensorDescs and host
  addresses (ints) of C-contiguous buffers (stream is 0).  The buffers are the adapter's own arrays, copied from
  and to the engine's after the call, so writing through the address is safe for the call's duration.

Serialization: a V2DynamicExt plugin is stored as its ``serialize()`` bytes (str is encoded as UTF-8) and
recreated by its creator's ``deserialize_plugin``, as for IPluginV2.  A V3 plugin is stored as the fields its
``get_fields_to_serialize()`` returns (plus the chosen tactic), and recreated with
``creator.create_plugin(name, fields, TensorRTPhase.RUNTIME)``.

Every failure of a user callback -- an exception, a wrong return type, a wrong number of outputs -- becomes a
Python exception whose message names the plugin and the callback (and, through the engine, the layer).
"""
from __future__ import annotations

import struct
from typing import Any, Iterable, List, Optional, Sequence, Union

import numpy as np

from . import _C
from ._enums import DataType, PluginFieldType, TensorFormat, _TrtEnum
from ._types import Dims, nptype
from .plugins import IPluginCreator, IPluginV2, PluginField, PluginFieldCollection

__all__ = ["DimensionOperation", "TensorRTPhase", "PluginCapabilityType", "IDimensionExpr", "IExprBuilder",
           "DimsExprs", "PluginTensorDesc", "DynamicPluginTensorDesc", "IPluginV2DynamicExt", "IPluginV3",
           "IPluginV3OneCore", "IPluginV3OneBuild", "IPluginV3OneRuntime", "IPluginCreatorV3One",
           "IPluginCreatorInterface", "IPluginResourceContext", "IPluginResource"]


class DimensionOperation(_TrtEnum):
    """Operations of IExprBuilder.operation (TensorRT's values)."""
    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    SUB = 4
    EQUAL = 5
    LESS = 6
    FLOOR_DIV = 7
    CEIL_DIV = 8


class TensorRTPhase(_TrtEnum):
    """The phase an IPluginV3 is created for."""
    BUILD = 0
    RUNTIME = 1


class PluginCapabilityType(_TrtEnum):
    """The capability interfaces of IPluginV3.get_capability_interface."""
    CORE = 0
    BUILD = 1
    RUNTIME = 2


# ---- shape expressions ------------------------------------------------------------------------------------------

class IDimensionExpr:
    """One dimension as an expression.  trtlite evaluates expressions as they are built: a dimension known at
    build time (every static one, and every one at run time) is a constant; one that depends on a dynamic input
    dimension at build time is unknown (``is_constant()`` False) and makes the output dimension -1."""

    __slots__ = ("_v",)

    def __init__(self, value: Optional[int] = None) -> None:
        self._v = None if value is None or int(value) < 0 else int(value)

    def is_constant(self) -> bool:
        """True when the value is known now."""
        return self._v is not None

    def get_constant_value(self) -> int:
        """The value (-1 when unknown, as TensorRT's API returns for non-constants)."""
        return -1 if self._v is None else self._v

    def is_size_tensor(self) -> bool:
        """True when this is what IExprBuilder.declare_size_tensor returned (a data-dependent extent)."""
        return False

    def __repr__(self) -> str:
        return f"IDimensionExpr({'?' if self._v is None else self._v})"

    # Python operators (trtlite.plugin's ShapeExpr arithmetic uses them too).
    def _bin(self, other: Any, op: DimensionOperation, swap: bool = False) -> "IDimensionExpr":
        o = _as_expr(other, "operand")
        a, b = (o, self) if swap else (self, o)
        return _evaluate(op, a, b)

    def __add__(self, o): return self._bin(o, DimensionOperation.SUM)
    def __radd__(self, o): return self._bin(o, DimensionOperation.SUM, True)
    def __sub__(self, o): return self._bin(o, DimensionOperation.SUB)
    def __rsub__(self, o): return self._bin(o, DimensionOperation.SUB, True)
    def __mul__(self, o): return self._bin(o, DimensionOperation.PROD)
    def __rmul__(self, o): return self._bin(o, DimensionOperation.PROD, True)
    def __floordiv__(self, o): return self._bin(o, DimensionOperation.FLOOR_DIV)
    def __rfloordiv__(self, o): return self._bin(o, DimensionOperation.FLOOR_DIV, True)

    def __int__(self) -> int:
        if self._v is None:
            raise ValueError("the dimension is not known at build time (it depends on a dynamic input dimension)")
        return self._v

    __index__ = __int__


def _as_expr(x: Any, what: str) -> IDimensionExpr:
    if isinstance(x, IDimensionExpr):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if int(x) < 0:
            raise ValueError(f"{what}: a dimension cannot be negative ({int(x)})")
        return IDimensionExpr(int(x))
    raise TypeError(f"{what} must be an IDimensionExpr (or an int), not {type(x).__name__}")


class _SizeDimExpr(IDimensionExpr):
    """What IExprBuilder.declare_size_tensor returns: the value of the size tensor output ``output``, known only
    once the plugin has run; ``upper`` bounds it (``opt`` is recorded: trtlite does not tune)."""

    __slots__ = ("_output", "_opt", "_upper")

    def __init__(self, output: int, opt: IDimensionExpr, upper: IDimensionExpr) -> None:
        super().__init__(None)
        self._output, self._opt, self._upper = output, opt, upper

    def is_size_tensor(self) -> bool:
        """True."""
        return True

    def __repr__(self) -> str:
        return f"IDimensionExpr(size tensor of output {self._output})"


def _evaluate(op: Any, a: IDimensionExpr, b: IDimensionExpr) -> IDimensionExpr:
    try:
        op = DimensionOperation(op)
    except ValueError:
        raise ValueError(f"unknown DimensionOperation {op!r}") from None
    if isinstance(a, _SizeDimExpr) or isinstance(b, _SizeDimExpr):
        raise ValueError(f"DimensionOperation.{op.name} on a size tensor's expression (declare_size_tensor): trtlite "
                         "supports a size tensor only as a whole output dimension (declare another size tensor for "
                         "that extent)")
    if a._v is None or b._v is None:
        return IDimensionExpr(None)
    x, y = a._v, b._v
    if op in (DimensionOperation.FLOOR_DIV, DimensionOperation.CEIL_DIV) and y == 0:
        raise ZeroDivisionError(f"DimensionOperation.{op.name} by zero")
    r = {DimensionOperation.SUM: lambda: x + y, DimensionOperation.PROD: lambda: x * y,
         DimensionOperation.MAX: lambda: max(x, y), DimensionOperation.MIN: lambda: min(x, y),
         DimensionOperation.SUB: lambda: x - y, DimensionOperation.EQUAL: lambda: int(x == y),
         DimensionOperation.LESS: lambda: int(x < y), DimensionOperation.FLOOR_DIV: lambda: x // y,
         DimensionOperation.CEIL_DIV: lambda: -(-x // y)}[op]()
    if r < 0:
        raise ValueError(f"DimensionOperation.{op.name}({x}, {y}) = {r}: a dimension cannot be negative")
    return IDimensionExpr(r)


class IExprBuilder:
    """Builds dimension expressions in get_output_dimensions / get_output_shapes."""

    def __init__(self) -> None:
        self._sizes: dict = {}                  # output index -> its _SizeDimExpr
        self._num_outputs: Optional[int] = None  # known when trtlite asks a plugin
        self._refuse: Optional[str] = None       # why size tensors cannot be declared here (None: they can)

    def constant(self, value: int) -> IDimensionExpr:
        """A constant dimension."""
        return _as_expr(value, "IExprBuilder.constant()")

    def operation(self, op: DimensionOperation, first: IDimensionExpr, second: IDimensionExpr) -> IDimensionExpr:
        """``op(first, second)``: SUM, PROD, MAX, MIN, SUB, EQUAL, LESS, FLOOR_DIV, CEIL_DIV."""
        return _evaluate(op, _as_expr(first, "IExprBuilder.operation() first"),
                         _as_expr(second, "IExprBuilder.operation() second"))

    def declare_size_tensor(self, output_index: int, opt: IDimensionExpr, upper: IDimensionExpr) -> IDimensionExpr:
        """Declare output ``output_index`` a size tensor (an IPluginV3's get_output_shapes): a 0-D INT32/INT64
        output the plugin writes with an extent known only once it has run; the returned expression is that
        extent, used as a whole dimension of other outputs.  ``upper`` (an expression of the input dims) bounds
        it and sizes the buffer; ``opt`` (the tuning value, recorded only) must lie in [0, upper].  Neither may
        depend on a size tensor.  Declaring an output twice returns the same expression if the bounds agree."""
        if self._refuse is not None:
            raise NotImplementedError(self._refuse)
        if isinstance(output_index, bool) or not isinstance(output_index, (int, np.integer)):
            raise TypeError(f"declare_size_tensor(): output_index must be an int, not {type(output_index).__name__}")
        k = int(output_index)
        if k < 0 or (self._num_outputs is not None and k >= self._num_outputs):
            raise ValueError(f"declare_size_tensor(): output_index {k} is not an output of the plugin (it has "
                             f"{self._num_outputs} outputs)")
        o, u = _as_expr(opt, "declare_size_tensor() opt"), _as_expr(upper, "declare_size_tensor() upper")
        for what, e in (("opt", o), ("upper", u)):
            if isinstance(e, _SizeDimExpr):
                raise ValueError(f"declare_size_tensor({k}): {what} must not depend on a size tensor")
        if o._v is not None and u._v is not None and o._v > u._v:
            raise ValueError(f"declare_size_tensor({k}): opt is {o._v}; it must lie in [0, upper = {u._v}]")
        have = self._sizes.get(k)
        if have is not None:
            if (have._opt._v, have._upper._v) != (o._v, u._v):
                raise ValueError(f"declare_size_tensor({k}): output {k} is already a size tensor with opt "
                                 f"{have._opt.get_constant_value()} and upper {have._upper.get_constant_value()}")
            return have
        e = _SizeDimExpr(k, o, u)
        self._sizes[k] = e
        return e


class DimsExprs(list):
    """A shape as a list of IDimensionExpr: ``DimsExprs(inputs[0])`` copies, ``DimsExprs(n)`` has n unknown dims."""

    def __init__(self, dims: Union[int, Iterable[Any]] = ()) -> None:
        if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
            super().__init__(IDimensionExpr(None) for _ in range(int(dims)))
        else:
            super().__init__(_as_expr(d, f"DimsExprs[{i}]") for i, d in enumerate(dims))

    def __setitem__(self, i, v) -> None:  # type: ignore[override]
        """Set one dimension (an IDimensionExpr or an int)."""
        super().__setitem__(i, _as_expr(v, f"DimsExprs[{i}]"))

    @property
    def nbDims(self) -> int:
        """Number of dimensions."""
        return len(self)

    def __repr__(self) -> str:
        return "DimsExprs(" + ", ".join("?" if d._v is None else str(d._v) for d in self) + ")"


def _dims_exprs_of(shape: Sequence[int]) -> DimsExprs:
    return DimsExprs(IDimensionExpr(None if d < 0 else d) for d in shape)


class PluginTensorDesc:
    """What a plugin sees of one input or output: ``dims``, ``type`` (DataType), ``format`` (always LINEAR) and
    ``scale`` (-1.0: no int8 scale)."""

    def __init__(self, dims: Sequence[int] = (), type: DataType = DataType.FLOAT,
                 format: TensorFormat = TensorFormat.LINEAR, scale: float = -1.0) -> None:
        self.dims = Dims(dims)
        self.type = DataType(type)
        self.format = TensorFormat(format)
        self.scale = float(scale)

    def __repr__(self) -> str:
        return f"PluginTensorDesc(dims={self.dims!r}, type={self.type}, format={self.format})"


class DynamicPluginTensorDesc:
    """A PluginTensorDesc (``desc``; -1 for a dynamic dimension at build time) with the ``min``/``max``/``opt``
    shapes.  trtlite gives a plugin the shapes it knows: concrete ones at run time, and at build time min = opt =
    max = desc.dims (with -1 where the input is dynamic)."""

    def __init__(self, desc: Optional[PluginTensorDesc] = None, min: Sequence[int] = (), max: Sequence[int] = (),
                 opt: Sequence[int] = ()) -> None:
        self.desc = desc if desc is not None else PluginTensorDesc()
        self.min = Dims(min)
        self.max = Dims(max)
        self.opt = Dims(opt)

    def __repr__(self) -> str:
        return f"DynamicPluginTensorDesc(desc={self.desc!r})"


class IPluginResourceContext:
    """What attach_to_context receives (trtlite has no GPU resources to offer; kept for the signature)."""


class IPluginResource:
    """Base class of shared plugin resources (IPluginRegistry.acquire_plugin_resource): implement ``clone()`` and
    ``release()``."""

    def clone(self) -> "IPluginResource":
        """A copy to register (TensorRT registers the clone)."""
        return self

    def release(self) -> None:
        """Free what the resource holds."""


# ---- the user-facing base classes ---------------------------------------------------------------------------------

class IPluginV2DynamicExt:
    """Base class of dynamic-shape plugins written in Python (TensorRT's IPluginV2DynamicExt).

    Set ``num_outputs``, ``plugin_type``, ``plugin_version`` and ``plugin_namespace`` (in ``__init__``) and
    implement ``get_output_dimensions(output_index, inputs, expr_builder) -> DimsExprs``, ``enqueue(input_desc,
    output_desc, inputs, outputs, workspace, stream)`` (host addresses; return 0 or None),
    ``serialize() -> bytes|str`` and ``clone()``.  Optional: ``get_output_datatype(index, input_types)`` (default:
    the first input's), ``supports_format_combination(pos, in_out, num_inputs)`` (default: every input and
    output has the first input's type), ``configure_plugin(inp, out)``, ``get_workspace_size(input_desc,
    output_desc)`` (default 0), ``initialize()``, ``terminate()``, ``destroy()``.
    """

    num_outputs: int = 1
    plugin_type: str = ""
    plugin_version: str = "1"
    plugin_namespace: str = ""
    tensorrt_version: int = 10

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to set up (TensorRT's trampoline constructor)."""

    def get_output_datatype(self, index: int, input_types: List[DataType]) -> DataType:
        """Dtype of output `index` (default: the first input's)."""
        return input_types[0] if input_types else DataType.FLOAT

    def supports_format_combination(self, pos: int, in_out: List[PluginTensorDesc], num_inputs: int) -> bool:
        """Whether in_out[pos] is supported given in_out[:pos] (default: the first input's type, LINEAR)."""
        return in_out[pos].format == TensorFormat.LINEAR and in_out[pos].type == in_out[0].type

    def configure_plugin(self, inp: List[DynamicPluginTensorDesc], out: List[DynamicPluginTensorDesc]) -> None:
        """Called at build time and whenever the input shapes change before enqueue."""

    def get_workspace_size(self, input_desc: List[PluginTensorDesc], output_desc: List[PluginTensorDesc]) -> int:
        """Scratch bytes enqueue needs (default 0)."""
        return 0

    def initialize(self) -> int:
        """Called once before the plugin first runs."""
        return 0

    def terminate(self) -> None:
        """Counterpart of initialize (trtlite leaves cleanup to Python's garbage collection)."""

    def destroy(self) -> None:
        """Nothing to do: Python frees the object."""

    def serialize(self) -> bytes:
        """Bytes that the creator's deserialize_plugin turns back into this plugin (default: none)."""
        return b""

    def clone(self) -> "IPluginV2DynamicExt":
        """A copy (each execution context works on its own)."""
        import copy
        return copy.deepcopy(self)

    def get_serialization_size(self) -> int:
        """len(serialize())."""
        return len(_as_bytes(self.serialize(), self, "serialize()"))

    def _trtl_adapter(self) -> "_Adapter":
        return _Adapter(self, "v2dyn")

    def _trtl_clone_capsule(self):
        return _C._python_plugin_capsule(_Adapter(self, "v2dyn"))


class IPluginV3:
    """Base class of TensorRT 10's plugins (a V3 plugin class derives from IPluginV3 and the IPluginV3One*
    capability classes, and returns the object for each from ``get_capability_interface(type)``)."""

    num_outputs: int = 1
    plugin_name: str = ""
    plugin_version: str = "1"
    plugin_namespace: str = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to set up (TensorRT's trampoline constructor)."""

    @property
    def plugin_type(self) -> str:
        """plugin_name (the name IPluginV2 code and layer messages use)."""
        return getattr(self, "plugin_name", "")

    def get_capability_interface(self, type: PluginCapabilityType) -> Any:
        """The object implementing capability `type` (default: self)."""
        return self

    def clone(self) -> "IPluginV3":
        """A copy."""
        import copy
        return copy.deepcopy(self)

    def destroy(self) -> None:
        """Nothing to do: Python frees the object."""

    def _trtl_adapter(self) -> "_Adapter":
        return _Adapter(self, "v3", phase=getattr(self, "phase", TensorRTPhase.BUILD),
                        n_sizes=getattr(self, "_trtl_size_tensors", 0))

    def _trtl_clone_capsule(self):
        return _C._python_plugin_capsule(_Adapter(self, "v3", n_sizes=getattr(self, "_trtl_size_tensors", 0)))


class IPluginV3OneCore:
    """V3 core capability: plugin_name, plugin_version, plugin_namespace (attributes)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to set up."""


class IPluginV3OneBuild:
    """V3 build capability: get_output_data_types, get_output_shapes, supports_format_combination,
    configure_plugin, get_workspace_size, get_valid_tactics, timing_cache_id."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to set up."""

    def get_output_data_types(self, input_types: List[DataType]) -> List[DataType]:
        """Dtypes of the outputs (default: the first input's for each)."""
        return [input_types[0] if input_types else DataType.FLOAT] * int(getattr(self, "num_outputs", 1))

    def supports_format_combination(self, pos: int, in_out: List[DynamicPluginTensorDesc], num_inputs: int) -> bool:
        """Whether in_out[pos].desc is supported (default: the first input's type, LINEAR)."""
        return in_out[pos].desc.format == TensorFormat.LINEAR and in_out[pos].desc.type == in_out[0].desc.type

    def configure_plugin(self, inp: List[DynamicPluginTensorDesc], out: List[DynamicPluginTensorDesc]) -> None:
        """Called once at build time."""

    def get_workspace_size(self, inp: List[DynamicPluginTensorDesc], out: List[DynamicPluginTensorDesc]) -> int:
        """Scratch bytes enqueue needs (default 0)."""
        return 0

    def get_valid_tactics(self) -> List[int]:
        """Tactics to choose from (default: none).  trtlite does not time plugin tactics: it uses the first."""
        return []


class IPluginV3OneRuntime:
    """V3 runtime capability: set_tactic, on_shape_change, enqueue, attach_to_context, get_fields_to_serialize."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to set up."""

    def set_tactic(self, tactic: int) -> None:
        """The tactic chosen at build time."""

    def on_shape_change(self, inp: List[PluginTensorDesc], out: List[PluginTensorDesc]) -> None:
        """Called before enqueue whenever the input shapes change."""

    def attach_to_context(self, context: IPluginResourceContext) -> Any:
        """The plugin an execution context uses (default: a clone)."""
        return self.clone()  # type: ignore[attr-defined]

    def get_fields_to_serialize(self) -> PluginFieldCollection:
        """The fields that recreate this plugin through its creator (default: none)."""
        return PluginFieldCollection()


class IPluginCreatorInterface:
    """Common base of plugin creators (TensorRT 10)."""


class IPluginCreatorV3One(IPluginCreatorInterface):
    """Base class of V3 plugin creators: set ``name``, ``plugin_version``, ``plugin_namespace`` and
    ``field_names``, implement ``create_plugin(name, field_collection, phase) -> IPluginV3``, and register it with
    ``get_plugin_registry().register_creator(creator, namespace)``."""

    name: str = ""
    plugin_version: str = "1"
    plugin_namespace: str = ""
    field_names: PluginFieldCollection = PluginFieldCollection()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to set up."""

    def create_plugin(self, name: str, field_collection: PluginFieldCollection, phase: TensorRTPhase) -> IPluginV3:
        """Make a plugin from fields for `phase`."""
        raise NotImplementedError(f"plugin creator '{self.name}' does not implement create_plugin")

    # Called by the registry's adapter (csrc/python/plugin_adapter.c): creation from fields is for a build.
    def _trtl_v3_create(self, name: str, fc: PluginFieldCollection) -> "_Adapter":
        p = _checked_v3(self.create_plugin(name, fc, TensorRTPhase.BUILD), self.name, "create_plugin()")
        return _Adapter(p, "v3", phase=TensorRTPhase.BUILD)

    def deserialize_plugin(self, name: str, data: bytes) -> "_Adapter":
        """A plugin from a plan: the stored fields go to ``create_plugin(name, fields, TensorRTPhase.RUNTIME)``,
        then the stored tactic to ``set_tactic``."""
        fc, tactic = _decode_v3(data, self.name)
        n_sizes = 0
        for f in list(fc):  # trtlite's record of the size tensors (hidden outputs), not a field of the plugin's
            if f.name == _V3_SIZES_FIELD:
                n_sizes = int(np.asarray(f.data).reshape(-1)[0])
                fc = PluginFieldCollection([g for g in fc if g.name != _V3_SIZES_FIELD])
        p = _checked_v3(self.create_plugin(name, fc, TensorRTPhase.RUNTIME), self.name, "create_plugin()")
        p._trtl_size_tensors = n_sizes
        a = _Adapter(p, "v3", phase=TensorRTPhase.RUNTIME, n_sizes=n_sizes)
        if tactic is not None:
            a._runtime("set_tactic")(tactic)
        a._tactic = tactic
        return a


def _checked_v3(p: Any, creator: str, what: str) -> IPluginV3:
    if not isinstance(p, IPluginV3):
        raise TypeError(f"plugin creator '{creator}': {what} must return a trt.IPluginV3, not {type(p).__name__}")
    return p


# ---- serialization of V3 fields -----------------------------------------------------------------------------------
# b"TRTLV3\0" | int32 tactic flag | int64 tactic | int32 count | per field: uint16 name length, name (UTF-8),
# int32 PluginFieldType, uint32 byte count, bytes.  Little-endian.

_MAGIC = b"TRTLV3\0"
_ITEM = {PluginFieldType.FLOAT16: 2, PluginFieldType.FLOAT32: 4, PluginFieldType.FLOAT64: 8,
         PluginFieldType.INT8: 1, PluginFieldType.INT16: 2, PluginFieldType.INT32: 4, PluginFieldType.CHAR: 1}


def _field_bytes(f: Any, plugin: str) -> bytes:
    from .plugins import _field_array
    if not isinstance(getattr(f, "name", None), str):
        raise TypeError(f"plugin '{plugin}': get_fields_to_serialize() must return PluginFields, got "
                        f"{type(f).__name__}")
    if f.data is None:
        return b""
    try:
        return _field_array(f.data, int(f.type)).tobytes()
    except (ValueError, TypeError) as e:
        raise TypeError(f"plugin '{plugin}': field '{f.name}': {e}") from e


_V3_SIZES_FIELD = "_trtl_v3_size_tensors"  # how many size tensors (hidden mask outputs) a V3 plugin declared


def _encode_v3(fc: Any, tactic: Optional[int], plugin: str, n_sizes: int = 0) -> bytes:
    if fc is None:
        fc = []
    if not isinstance(fc, (list, tuple)):
        raise TypeError(f"plugin '{plugin}': get_fields_to_serialize() must return a PluginFieldCollection, not "
                        f"{type(fc).__name__}")
    if n_sizes:
        fc = list(fc) + [PluginField(_V3_SIZES_FIELD, np.array([n_sizes], np.int32), PluginFieldType.INT32)]
    out = [_MAGIC, struct.pack("<iqi", tactic is not None, 0 if tactic is None else int(tactic), len(fc))]
    for f in fc:
        data = _field_bytes(f, plugin)
        name = f.name.encode()
        out.append(struct.pack("<H", len(name)) + name + struct.pack("<iI", int(f.type), len(data)) + data)
    return b"".join(out)


def _decode_v3(data: bytes, creator: str):
    data = bytes(data)
    bad = ValueError(f"plugin creator '{creator}': the stored plugin data is not a trtlite V3 plugin record")
    if not data.startswith(_MAGIC):
        raise bad
    try:
        pos = len(_MAGIC)
        has, tactic, n = struct.unpack_from("<iqi", data, pos)
        pos += 16
        fields = []
        for _ in range(n):
            (ln,) = struct.unpack_from("<H", data, pos)
            name = data[pos + 2:pos + 2 + ln].decode()
            pos += 2 + ln
            t, nb = struct.unpack_from("<iI", data, pos)
            pos += 8
            raw = data[pos:pos + nb]
            if len(raw) != nb:
                raise bad
            pos += nb
            t = PluginFieldType(t)
            if t == PluginFieldType.CHAR:
                value: Any = np.frombuffer(raw, np.uint8).copy()
            elif t in _ITEM:
                from .plugins import _FIELD_DTYPES
                value = np.frombuffer(raw, _FIELD_DTYPES[t]).copy()
            else:
                value = np.frombuffer(raw, np.uint8).copy()
            fields.append(PluginField(name, value, t))
        if pos != len(data):
            raise bad
    except (struct.error, UnicodeDecodeError, ValueError) as e:
        raise bad from e
    return PluginFieldCollection(fields), (tactic if has else None)


def _as_bytes(b: Any, plugin: Any, what: str) -> bytes:
    if b is None:
        return b""
    if isinstance(b, str):
        return b.encode("utf-8")
    try:
        return bytes(memoryview(b))
    except TypeError:
        raise TypeError(f"plugin '{_name_of(plugin)}': {what} must return bytes (or str), not "
                        f"{type(b).__name__}") from None


def _name_of(p: Any) -> str:
    for attr in ("plugin_name", "plugin_type"):
        try:
            v = getattr(p, attr)
        except Exception:  # noqa: BLE001 (a user property that raises: the class name serves)
            continue
        if isinstance(v, str) and v:
            return v
    return type(p).__name__


# ---- the adapter ---------------------------------------------------------------------------------------------------

class PluginCallbackError(_C.PluginError):
    """A user callback failed; the message names the plugin and the callback."""


_ENUM_DT = {int(d): d for d in DataType}


class _Adapter(IPluginV2):
    """Runs an IPluginV2DynamicExt or IPluginV3 through the IPluginV2 protocol the C adapter speaks."""

    def __init__(self, inner: Any, kind: str, phase: TensorRTPhase = TensorRTPhase.BUILD,
                 n_sizes: Optional[int] = 0) -> None:
        self._inner = inner
        # size tensors (IExprBuilder.declare_size_tensor): how many the layer was added with (None: not known
        # yet, when add_plugin_v3 asks), the outputs they are, {output: {dim: size tensor number}}, and that
        # layout as first seen (it must not change with the shapes)
        self._n_sizes = n_sizes
        self._sizes: List[int] = []
        self._dd: dict = {}
        self._layout: Any = None
        self._kind = kind
        self._phase = TensorRTPhase(phase)
        self._tactic: Optional[int] = None
        self._shape_cache: Any = None   # (input shapes) -> [output shape tuples]
        self._dtype_cache: Any = None   # (input dtypes) -> [output dtypes]
        self._checked = False           # supports_format_combination and configure_plugin ran (build time)
        self._configured: Any = None    # the concrete shapes configure_plugin/on_shape_change last saw
        self._ws = np.empty(0, np.uint8)
        self._attached = False
        self._initialized = False
        name = self._pname()
        if kind == "v3":
            self._core = self._capability(PluginCapabilityType.CORE)
        n = self.num_outputs  # validates
        del n, name

    # -- identity (forwarded to the user's object) --
    def _pname(self) -> str:
        return _name_of(self._inner)

    @property  # type: ignore[override]
    def plugin_type(self) -> str:
        return self._pname()

    @property  # type: ignore[override]
    def plugin_version(self) -> str:
        v = getattr(self._inner, "plugin_version", "1")
        return v if isinstance(v, str) else str(v)

    @property  # type: ignore[override]
    def plugin_namespace(self) -> str:
        v = getattr(self._inner, "plugin_namespace", "")
        return v if isinstance(v, str) else ""

    @plugin_namespace.setter
    def plugin_namespace(self, ns: str) -> None:
        self._inner.plugin_namespace = ns

    @property
    def _trtl_user_plugin(self) -> Any:
        return self._inner

    @property  # type: ignore[override]
    def num_outputs(self) -> int:
        """The plugin's outputs plus one hidden mask output per size tensor."""
        return self._n_user() + (self._n_sizes or 0)

    def _n_user(self) -> int:
        n = getattr(self._inner, "num_outputs", None)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= int(n) <= 16:
            raise TypeError(f"plugin '{self._pname()}': num_outputs must be an int from 1 to 16, not {n!r}")
        return int(n)

    # -- calling the user's code --
    def _fail(self, what: str, e: BaseException) -> PluginCallbackError:
        return PluginCallbackError(f"plugin '{self._pname()}': {what} raised {type(e).__name__}: {e}")

    def _call(self, obj: Any, method: str, *args: Any) -> Any:
        f = getattr(obj, method, None)
        if f is None:
            raise PluginCallbackError(f"plugin '{self._pname()}': {type(obj).__name__} has no {method}()")
        try:
            return f(*args)
        except PluginCallbackError:
            raise
        except Exception as e:  # noqa: BLE001 (any error of user code becomes one naming the plugin)
            raise self._fail(method + "()", e) from e

    def _capability(self, t: PluginCapabilityType) -> Any:
        obj = self._call(self._inner, "get_capability_interface", t)
        if obj is None:
            raise PluginCallbackError(f"plugin '{self._pname()}': get_capability_interface({t}) returned None")
        return obj

    def _build(self, method: str):
        target = self._inner if self._kind == "v2dyn" else self._capability(PluginCapabilityType.BUILD)
        return lambda *a: self._call(target, method, *a)

    def _runtime(self, method: str):
        target = self._inner if self._kind == "v2dyn" else self._capability(PluginCapabilityType.RUNTIME)
        return lambda *a: self._call(target, method, *a)

    def _expect_int(self, v: Any, what: str, lo: int = 0) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < lo:
            raise PluginCallbackError(f"plugin '{self._pname()}': {what} must return an int >= {lo}, not {v!r}")
        return int(v)

    def _expect_dtype(self, v: Any, what: str) -> DataType:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) not in _ENUM_DT:
            raise PluginCallbackError(f"plugin '{self._pname()}': {what} must return a trt.DataType, not {v!r}")
        return _ENUM_DT[int(v)]

    def _dims_result(self, d: Any, what: str) -> tuple:
        if not isinstance(d, (list, tuple)):
            raise PluginCallbackError(f"plugin '{self._pname()}': {what} must return trt.DimsExprs, not "
                                 f"{type(d).__name__}")
        out = []
        for i, e in enumerate(d):
            try:
                out.append(_as_expr(e, f"dimension {i}").get_constant_value())
            except (TypeError, ValueError) as err:
                raise PluginCallbackError(f"plugin '{self._pname()}': {what}: {err}") from None
        return tuple(out)

    # -- shapes and dtypes --
    def _out_shapes(self, input_shapes: List[tuple]) -> List[tuple]:
        key = tuple(tuple(s) for s in input_shapes)
        if self._shape_cache and self._shape_cache[0] == key:
            return self._shape_cache[1]
        n = self._n_user()
        ins = [_dims_exprs_of(s) for s in key]
        eb = IExprBuilder()
        eb._num_outputs = n
        if self._kind == "v2dyn":
            eb._refuse = (f"plugin '{self._pname()}': IExprBuilder.declare_size_tensor(): size tensors "
                          "(data-dependent output shapes) need an IPluginV3 plugin (get_output_shapes), as in "
                          "TensorRT; an IPluginV2DynamicExt cannot declare them")
            what = "get_output_dimensions()"
            r = [self._call(self._inner, "get_output_dimensions", i, ins, eb) for i in range(n)]
        else:
            what = "get_output_shapes()"
            r = self._build("get_output_shapes")(ins, [], eb)
            if not isinstance(r, (list, tuple)) or (len(r) and not isinstance(r[0], (list, tuple))):
                raise PluginCallbackError(f"plugin '{self._pname()}': get_output_shapes() must return a list of "
                                     f"trt.DimsExprs (one per output), not {type(r).__name__}")
            if len(r) != n:
                raise PluginCallbackError(f"plugin '{self._pname()}': get_output_shapes() returned {len(r)} shapes for "
                                     f"{n} outputs (num_outputs)")
        shapes = self._resolve_sizes(list(r), eb, what)
        self._shape_cache = (key, shapes)
        return shapes

    def _resolve_sizes(self, raw: List[Any], eb: IExprBuilder, what: str) -> List[tuple]:
        """The output shapes with each size tensor's dimension at its upper bound, followed by one hidden INT32
        mask shape [upper] per size tensor; records which outputs are size tensors and which dims they size."""
        p = self._pname()
        sizes = sorted(eb._sizes)
        number = {k: i for i, k in enumerate(sizes)}
        dd: dict = {}
        shapes = []
        for j, d in enumerate(raw):
            if not isinstance(d, (list, tuple)):
                self._dims_result(d, what)  # raises naming the type
            if j in number and len(d):
                raise PluginCallbackError(f"plugin '{p}': output {j} is a size tensor (declare_size_tensor({j}, "
                                          f"...)), so its shape must be 0-D (trt.DimsExprs(0)), not {len(d)}-D")
            shape = []
            for k, e in enumerate(d):
                if isinstance(e, _SizeDimExpr):
                    if eb._sizes.get(e._output) is not e:
                        raise PluginCallbackError(f"plugin '{p}': {what}: output {j} dim {k} is a size tensor's "
                                                  "expression from another call; declare it in this one")
                    dd.setdefault(j, {})[k] = number[e._output]
                    e = e._upper
                shape.append(e)
            shapes.append(self._dims_result(shape, what))
        if self._n_sizes is not None and len(sizes) != self._n_sizes:
            if not self._n_sizes:
                raise PluginCallbackError(f"plugin '{p}': {what} declares size tensors (outputs {sizes}), which "
                                          "need the layer added with network.add_plugin_v3")
            raise PluginCallbackError(f"plugin '{p}': {what} declares {len(sizes)} size tensors here and "
                                      f"{self._n_sizes} when the layer was added; their number must not depend on "
                                      "the input shapes")
        layout = (tuple(sizes), tuple(sorted((j, tuple(sorted(m.items()))) for j, m in dd.items())))
        if self._layout is not None and layout != self._layout:
            raise PluginCallbackError(f"plugin '{p}': {what}: which outputs are size tensors and which dims they "
                                      "size must not depend on the input shapes")
        self._layout, self._sizes, self._dd = layout, sizes, dd
        return shapes + [(eb._sizes[k]._upper.get_constant_value(),) for k in sizes]

    def _out_dtypes(self, input_dtypes: List[DataType]) -> List[DataType]:
        key = tuple(int(t) for t in input_dtypes)
        if self._dtype_cache and self._dtype_cache[0] == key:
            return self._dtype_cache[1]
        n = self._n_user()
        ins = [_ENUM_DT[t] for t in key]
        if self._kind == "v2dyn":
            dts = [self._expect_dtype(self._call(self._inner, "get_output_datatype", i, ins),
                                      "get_output_datatype()") for i in range(n)]
        else:
            r = self._build("get_output_data_types")(ins)
            if not isinstance(r, (list, tuple)):
                raise PluginCallbackError(f"plugin '{self._pname()}': get_output_data_types() must return a list of "
                                     f"trt.DataType, not {type(r).__name__}")
            if len(r) != n:
                raise PluginCallbackError(f"plugin '{self._pname()}': get_output_data_types() returned {len(r)} dtypes "
                                     f"for {n} outputs (num_outputs)")
            dts = [self._expect_dtype(t, "get_output_data_types()") for t in r]
        dts += [DataType.INT32] * (self._n_sizes or 0)  # the size tensors' masks
        self._dtype_cache = (key, dts)
        return dts

    def _trtl_output_desc(self, index: int, input_shapes: List[tuple], input_dtypes: List[DataType]):
        """(shape, dtype) of output `index` (the C adapter's call): dtypes first, then shapes, then -- at build
        time, after the last output -- the format check and configure_plugin."""
        shapes_in = [tuple(s) for s in input_shapes]
        dtypes_in = [_ENUM_DT[int(t)] for t in input_dtypes]
        descs = getattr(self._inner, "_trtl_descs", None)  # trtlite.plugin's plugins describe both at once
        if descs is not None:
            key = (tuple(shapes_in), tuple(dtypes_in))
            if not (self._shape_cache and self._shape_cache[0] == key):
                shapes, dts = descs([_dims_exprs_of(s) for s in shapes_in], dtypes_in)
                self._shape_cache = (key, [self._dims_result(d, "the shape function") for d in shapes])
                self._dtype_cache = (tuple(int(t) for t in dtypes_in), list(dts))
            out_shapes, out_dtypes = self._shape_cache[1], self._dtype_cache[1]
        else:
            out_dtypes = self._out_dtypes(dtypes_in)
            out_shapes = self._out_shapes(shapes_in)
            for k in self._sizes:
                if out_dtypes[k] not in (DataType.INT32, DataType.INT64):
                    raise PluginCallbackError(f"plugin '{self._pname()}': output {k} is a size tensor, so "
                                              "get_output_data_types() must give it INT32 or INT64, not "
                                              f"{out_dtypes[k]}")
        if index == self.num_outputs - 1:
            self._check_formats(shapes_in, dtypes_in, out_dtypes[:self._n_user()])
        return out_shapes[index], int(out_dtypes[index])

    def get_output_shape(self, index: int, input_shapes: List[tuple]) -> tuple:
        """Shape of output `index` (IPluginV2 protocol; the C adapter uses _trtl_output_desc)."""
        return self._out_shapes([tuple(s) for s in input_shapes])[index]

    def get_output_dtype(self, index: int, input_dtypes: List[DataType]) -> DataType:
        """Dtype of output `index` (IPluginV2 protocol)."""
        return self._out_dtypes(input_dtypes)[index]

    def _descs(self, shapes: Sequence[tuple], dtypes: Sequence[DataType]) -> List[PluginTensorDesc]:
        return [PluginTensorDesc(s, t) for s, t in zip(shapes, dtypes)]

    @staticmethod
    def _dyn(descs: List[PluginTensorDesc]) -> List[DynamicPluginTensorDesc]:
        return [DynamicPluginTensorDesc(d, d.dims, d.dims, d.dims) for d in descs]

    def _check_formats(self, in_shapes, in_dtypes, out_dtypes) -> None:
        """Build time: supports_format_combination for every position, configure_plugin, tactics."""
        if self._phase == TensorRTPhase.RUNTIME:
            return
        if self._checked:  # once, when the layer is added (later shape inferences see profile/run shapes)
            return
        out_shapes = self._shape_cache[1][:len(out_dtypes)]
        ins, outs = self._descs(in_shapes, in_dtypes), self._descs(out_shapes, out_dtypes)
        io = ins + outs
        arg = io if self._kind == "v2dyn" else self._dyn(io)
        for pos in range(len(io)):
            ok = self._build("supports_format_combination")(pos, arg, len(ins))
            if not isinstance(ok, (bool, np.bool_)):
                raise PluginCallbackError(f"plugin '{self._pname()}': supports_format_combination() must return a bool, "
                                     f"not {type(ok).__name__}")
            if not ok:
                what = f"input {pos}" if pos < len(ins) else f"output {pos - len(ins)}"
                raise PluginCallbackError(
                    f"plugin '{self._pname()}': supports_format_combination() refuses {what} as {io[pos].type} "
                    f"(LINEAR) with inputs {[str(t) for t in in_dtypes]} and outputs {[str(t) for t in out_dtypes]}: "
                    f"no implementation for the network's types")
        self._build("configure_plugin")(self._dyn(ins), self._dyn(outs))
        if self._kind == "v3" and self._tactic is None:
            tactics = self._build("get_valid_tactics")()
            if tactics is None:
                tactics = []
            if not isinstance(tactics, (list, tuple)):
                raise PluginCallbackError(f"plugin '{self._pname()}': get_valid_tactics() must return a list of int, not "
                                     f"{type(tactics).__name__}")
            if len(tactics):
                self._tactic = self._expect_int(tactics[0], "get_valid_tactics()", 1)
                self._runtime("set_tactic")(self._tactic)
        self._checked = True

    # -- execution --
    def _prepare(self, ins: List[PluginTensorDesc], outs: List[PluginTensorDesc]) -> None:
        if self._kind == "v3" and not self._attached:
            new = self._runtime("attach_to_context")(IPluginResourceContext())
            self._inner = _checked_v3(new, self._pname(), "attach_to_context()")
            self._attached = True
        if self._kind == "v2dyn" and not self._initialized:
            r = self._call(self._inner, "initialize")
            if r not in (None, 0):
                raise PluginCallbackError(f"plugin '{self._pname()}': initialize() returned {r!r}")
            self._initialized = True
        key = tuple((d.dims, int(d.type)) for d in ins + outs)
        if self._configured == key:
            return
        if self._kind == "v2dyn":
            self._call(self._inner, "configure_plugin", self._dyn(ins), self._dyn(outs))
            ws = self._call(self._inner, "get_workspace_size", ins, outs)
        else:
            self._runtime("on_shape_change")(ins, outs)
            ws = self._build("get_workspace_size")(self._dyn(ins), self._dyn(outs))
        ws = self._expect_int(ws if ws is not None else 0, "get_workspace_size()")
        if ws > (1 << 34):
            raise PluginCallbackError(f"plugin '{self._pname()}': get_workspace_size() asks for {ws} bytes")
        if self._ws.size < ws:
            self._ws = np.zeros(ws, np.uint8)
        self._configured = key

    def enqueue(self, inputs: List[np.ndarray], outputs: List[np.ndarray]) -> None:
        outputs, masks = outputs[:self._n_user()], outputs[self._n_user():]
        ins = [PluginTensorDesc(a.shape, _dtype_of(a)) for a in inputs]
        outs = [PluginTensorDesc(a.shape, _dtype_of(a)) for a in outputs]
        self._prepare(ins, outs)
        addr = [a.__array_interface__["data"][0] for a in inputs]
        oaddr = [a.__array_interface__["data"][0] for a in outputs]
        ws = self._ws.__array_interface__["data"][0] if self._ws.size else 0
        target = self._inner if self._kind == "v2dyn" else self._capability(PluginCapabilityType.RUNTIME)
        r = self._call(target, "enqueue", ins, outs, addr, oaddr, ws, 0)
        if not (r is None or (isinstance(r, (int, np.integer)) and int(r) == 0)):
            raise PluginCallbackError(f"plugin '{self._pname()}': enqueue() returned {r!r} (0 or None means "
                                      "success)")
        if self._n_sizes:
            if self._layout is None:  # an instance that has not been asked for shapes yet
                self._out_shapes([a.shape for a in inputs])
            self._finish_sizes(outputs, masks)

    def _finish_sizes(self, outputs: List[np.ndarray], masks: List[np.ndarray]) -> None:
        """After enqueue: the size tensors' values checked and written as their masks' leading ones; each
        output with a size-tensor dim holds its data packed at its real shape (as TensorRT's plugins write it),
        which is moved to the leading corner of the upper-bound buffer, where the network's gathers read it."""
        values = _fill_size_masks(self._pname(), [(k, outputs[k]) for k in self._sizes], masks)
        for j, dims in self._dd.items():
            a = outputs[j]
            real = list(a.shape)
            for k, n in dims.items():
                real[k] = values[n]
            packed = a.reshape(-1)[:int(np.prod(real, dtype=np.int64))].reshape(real).copy()
            a[tuple(slice(0, r) for r in real)] = packed

    # -- copies and serialization --
    def clone(self) -> "_Adapter":
        c = self._call(self._inner, "clone")
        if self._kind == "v2dyn" and not isinstance(c, IPluginV2DynamicExt):
            raise PluginCallbackError(f"plugin '{self._pname()}': clone() must return a trt.IPluginV2DynamicExt, not "
                                 f"{type(c).__name__}")
        if self._kind == "v3":
            _checked_v3(c, self._pname(), "clone()")
        a = _Adapter(c, self._kind, self._phase, self._n_sizes)
        a._layout, a._sizes, a._dd = self._layout, list(self._sizes), dict(self._dd)
        a._tactic = self._tactic
        a._checked = self._checked
        return a

    def serialize(self) -> bytes:
        if self._kind == "v2dyn":
            return _as_bytes(self._call(self._inner, "serialize"), self._inner, "serialize()")
        fc = self._runtime("get_fields_to_serialize")()
        return _encode_v3(fc, self._tactic, self._pname(), self._n_sizes or 0)

    def __deepcopy__(self, memo: Any) -> "_Adapter":
        return self.clone()


def _fill_size_masks(plugin: str, sizes: List[Any], masks: List[np.ndarray]) -> List[int]:
    """Size tensors after a plugin ran: each (output index, 0-D array) value checked against its mask's length
    (the upper bound) and written as the mask's leading ones; returns the values."""
    values = []
    for (k, a), m in zip(sizes, masks):
        v = int(np.asarray(a).reshape(-1)[0])
        if not 0 <= v <= m.size:
            raise ValueError(f"plugin '{plugin}': size tensor (output {k}) holds {v}, outside [0, {m.size}] (its "
                             "upper_bound)")
        m[...] = 0
        m[:v] = 1
        values.append(v)
    return values


class _SizeTensorPluginLayer:
    """What adding a plugin with size tensors returns: the plugin layer (names, precision and the rest are its),
    whose ``get_output(j)`` is output j at its real, data-dependent shape."""

    def __init__(self, layer: Any, outputs: List[Any]) -> None:
        object.__setattr__(self, "_layer", layer)
        object.__setattr__(self, "_outputs", outputs)

    @property
    def num_outputs(self) -> int:
        """The plugin's declared outputs."""
        return len(self._outputs)

    def get_output(self, index: int) -> Any:
        """Output ``index`` (a data-dependent one as the gather of its valid part)."""
        if not 0 <= int(index) < len(self._outputs):
            raise IndexError(f"plugin layer '{self._layer.name}': output {index} of {len(self._outputs)}")
        return self._outputs[int(index)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._layer, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._layer, name, value)


def _gather_valid(network: Any, layer: Any, n_out: int, n_sizes: int, dd: dict) -> _SizeTensorPluginLayer:
    """A plugin layer whose outputs n_out.. are one INT32 mask per size tensor: per size tensor the indices of
    its mask's ones (NonZero, reshaped to 1-D), and per data-dependent dim ({output: {dim: size tensor
    number}}) a gather of those indices, so the outputs carry their real shapes."""
    index = []
    for n in range(n_sizes):
        nz = network.add_non_zero(layer.get_output(n_out + n))
        flat = network.add_shuffle(nz.get_output(0))
        flat.reshape_dims = (-1,)
        index.append(flat.get_output(0))
    outs = []
    for j in range(n_out):
        t = layer.get_output(j)
        for k, n in sorted(dd.get(j, {}).items()):
            t = network.add_gather(t, index[n], k).get_output(0)
        outs.append(t)
    return _SizeTensorPluginLayer(layer, outs)


def _dtype_of(a: np.ndarray) -> DataType:
    for d in DataType:
        try:
            if np.dtype(nptype(d)) == a.dtype:
                return d
        except (TypeError, KeyError, ValueError):
            continue
    return DataType.FLOAT


# ---- INetworkDefinition.add_plugin_v3 -------------------------------------------------------------------------------

def _add_plugin_v3(network: Any, inputs: Sequence[Any], shape_inputs: Sequence[Any] = (), plugin: Any = None) -> Any:
    """add_plugin_v3(inputs, shape_inputs, plugin): a plugin layer for a trt.IPluginV3 (or a plugin a registry
    creator made).  Shape inputs are not supported yet: a non-empty list is refused."""
    if plugin is None:
        raise TypeError("add_plugin_v3(): missing the plugin (add_plugin_v3(inputs, shape_inputs, plugin))")
    if shape_inputs is None:
        shape_inputs = ()
    if not isinstance(shape_inputs, (list, tuple)):
        raise TypeError(f"add_plugin_v3(): shape_inputs must be a list of ITensor, not {type(shape_inputs).__name__}")
    if len(shape_inputs):
        raise _C.UnsupportedError(f"add_plugin_v3(): plugin '{_name_of(plugin)}': shape inputs are not supported "
                                  "by trtlite (pass shape_inputs=[])")
    if not isinstance(plugin, (IPluginV3, _C.PluginV2)):
        raise TypeError(f"add_plugin_v3(): plugin must be a trt.IPluginV3, not {type(plugin).__name__}")
    if hasattr(plugin, "_trtl_descs") and getattr(plugin, "_n_sizes", 0) is None:
        from .plugin import _add_with_sizes, _OpCall  # a trtp plugin made from fields (an ONNX node): its sizes
        return _add_with_sizes(network, _OpCall(list(inputs), plugin))
    n_out, dd, sizes = 0, {}, []
    if isinstance(plugin, IPluginV3) and not hasattr(plugin, "_trtl_descs"):  # (trtp plugins: plugin.py)
        try:  # the shapes at the network's input shapes: does it declare size tensors?
            probe = _Adapter(plugin, "v3", n_sizes=None)
            probe._out_shapes([tuple(t.shape) for t in inputs])
            n_out, dd, sizes = probe._n_user(), probe._dd, probe._sizes
        except Exception:  # noqa: BLE001 (add_plugin_v2 asks again and reports it as a PluginError naming the layer)
            pass
        plugin._trtl_size_tensors = len(sizes)
    layer = network.add_plugin_v2(inputs, plugin)
    n_sizes = getattr(plugin, "_trtl_size_tensors", 0)
    return _gather_valid(network, layer, n_out, n_sizes, dd) if n_sizes else layer


def _add_plugin(network: Any, *args: Any, **kwargs: Any) -> Any:
    """add_plugin(trtp.op.ns.name(...)) (trtlite/plugin.py, imported here on first use)."""
    from .plugin import _add_plugin as add
    return add(network, *args, **kwargs)


_C._set_plugin_hook("_add_plugin_v3", _add_plugin_v3)
_C._set_plugin_hook("_add_plugin", _add_plugin)
