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
        """Size tensors (data-dependent shapes) are not supported: always False."""
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


def _evaluate(op: Any, a: IDimensionExpr, b: IDimensionExpr) -> IDimensionExpr:
    try:
        op = DimensionOperation(op)
    except ValueError:
        raise ValueError(f"unknown DimensionOperation {op!r}") from None
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

    def constant(self, value: int) -> IDimensionExpr:
        """A constant dimension."""
        return _as_expr(value, "IExprBuilder.constant()")

    def operation(self, op: DimensionOperation, first: IDimensionExpr, second: IDimensionExpr) -> IDimensionExpr:
        """``op(first, second)``: SUM, PROD, MAX, MIN, SUB, EQUAL, LESS, FLOOR_DIV, CEIL_DIV."""
        return _evaluate(op, _as_expr(first, "IExprBuilder.operation() first"),
                         _as_expr(second, "IExprBuilder.operation() second"))

    def declare_size_tensor(self, output_index: int, opt: IDimensionExpr, upper: IDimensionExpr) -> IDimensionExpr:
        """Size tensors (data-dependent output shapes) are not supported by trtlite."""
        raise NotImplementedError("trtlite does not support size tensors (data-dependent plugin output shapes)")


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
        return _Adapter(self, "v3", phase=getattr(self, "phase", TensorRTPhase.BUILD))

    def _trtl_clone_capsule(self):
        return _C._python_plugin_capsule(_Adapter(self, "v3"))


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
        p = _checked_v3(self.create_plugin(name, fc, TensorRTPhase.RUNTIME), self.name, "create_plugin()")
        a = _Adapter(p, "v3", phase=TensorRTPhase.RUNTIME)
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


def _encode_v3(fc: Any, tactic: Optional[int], plugin: str) -> bytes:
    if fc is None:
        fc = []
    if not isinstance(fc, (list, tuple)):
        raise TypeError(f"plugin '{plugin}': get_fields_to_serialize() must return a PluginFieldCollection, not "
                        f"{type(fc).__name__}")
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

    def __init__(self, inner: Any, kind: str, phase: TensorRTPhase = TensorRTPhase.BUILD) -> None:
        self._inner = inner
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
        n = self.num_outputs
        ins = [_dims_exprs_of(s) for s in key]
        eb = IExprBuilder()
        if self._kind == "v2dyn":
            shapes = [self._dims_result(self._call(self._inner, "get_output_dimensions", i, ins, eb),
                                        "get_output_dimensions()") for i in range(n)]
        else:
            r = self._build("get_output_shapes")(ins, [], eb)
            if not isinstance(r, (list, tuple)) or (len(r) and not isinstance(r[0], (list, tuple))):
                raise PluginCallbackError(f"plugin '{self._pname()}': get_output_shapes() must return a list of "
                                     f"trt.DimsExprs (one per output), not {type(r).__name__}")
            if len(r) != n:
                raise PluginCallbackError(f"plugin '{self._pname()}': get_output_shapes() returned {len(r)} shapes for "
                                     f"{n} outputs (num_outputs)")
            shapes = [self._dims_result(d, "get_output_shapes()") for d in r]
        self._shape_cache = (key, shapes)
        return shapes

    def _out_dtypes(self, input_dtypes: List[DataType]) -> List[DataType]:
        key = tuple(int(t) for t in input_dtypes)
        if self._dtype_cache and self._dtype_cache[0] == key:
            return self._dtype_cache[1]
        n = self.num_outputs
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
        if index == self.num_outputs - 1:
            self._check_formats(shapes_in, dtypes_in, out_dtypes)
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
        out_shapes = self._shape_cache[1]
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
        from ._types import DataType as _DT  # noqa: F401
        ins = [PluginTensorDesc(a.shape, _dtype_of(a)) for a in inputs]
        outs = [PluginTensorDesc(a.shape, _dtype_of(a)) for a in outputs]
        self._prepare(ins, outs)
        addr = [a.__array_interface__["data"][0] for a in inputs]
        oaddr = [a.__array_interface__["data"][0] for a in outputs]
        ws = self._ws.__array_interface__["data"][0] if self._ws.size else 0
        target = self._inner if self._kind == "v2dyn" else self._capability(PluginCapabilityType.RUNTIME)
        r = self._call(target, "enqueue", ins, outs, addr, oaddr, ws, 0)
        if r is None or (isinstance(r, (int, np.integer)) and int(r) == 0):
            return
        raise PluginCallbackError(f"plugin '{self._pname()}': enqueue() returned {r!r} (0 or None means success)")

    # -- copies and serialization --
    def clone(self) -> "_Adapter":
        c = self._call(self._inner, "clone")
        if self._kind == "v2dyn" and not isinstance(c, IPluginV2DynamicExt):
            raise PluginCallbackError(f"plugin '{self._pname()}': clone() must return a trt.IPluginV2DynamicExt, not "
                                 f"{type(c).__name__}")
        if self._kind == "v3":
            _checked_v3(c, self._pname(), "clone()")
        a = _Adapter(c, self._kind, self._phase)
        a._tactic = self._tactic
        a._checked = self._checked
        return a

    def serialize(self) -> bytes:
        if self._kind == "v2dyn":
            return _as_bytes(self._call(self._inner, "serialize"), self._inner, "serialize()")
        fc = self._runtime("get_fields_to_serialize")()
        return _encode_v3(fc, self._tactic, self._pname())

    def __deepcopy__(self, memo: Any) -> "_Adapter":
        return self.clone()


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
    return network.add_plugin_v2(inputs, plugin)


def _add_plugin(network: Any, *args: Any, **kwargs: Any) -> Any:
    """add_plugin(trtp.op.ns.name(...)) (trtlite/plugin.py, imported here on first use)."""
    from .plugin import _add_plugin as add
    return add(network, *args, **kwargs)


_C._set_plugin_hook("_add_plugin_v3", _add_plugin_v3)
_C._set_plugin_hook("_add_plugin", _add_plugin)
