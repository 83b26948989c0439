"""Plugins: fields, the registry, and base classes for plugins written in Python.

Built-in plugins (``init_libnvinfer_plugins``) and plugin libraries (``load_library``) are C
code behind the versioned ABI in csrc/include/trtlite/plugin.h.  Plugins written in Python
subclass :class:`IPluginV2` and are created by an :class:`IPluginCreator` subclass registered
with ``get_plugin_registry().register_creator``; trtlite calls them back (with the GIL) during
build and execution.
"""
from __future__ import annotations

import abc
import copy
import threading
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Union

import numpy as np

from . import _C
from ._enums import DataType, PluginFieldType

if TYPE_CHECKING:  # plugins_dynamic imports this module
    from .plugins_dynamic import IPluginCreatorInterface

__all__ = ["PluginField", "PluginFieldCollection", "IPluginV2", "IPluginV2Ext", "IPluginCreator",
           "IPluginRegistry", "get_plugin_registry", "init_libnvinfer_plugins", "init_plugins"]

_FIELD_DTYPES = {PluginFieldType.FLOAT16: np.float16, PluginFieldType.FLOAT32: np.float32,
                 PluginFieldType.FLOAT64: np.float64, PluginFieldType.INT8: np.int8,
                 PluginFieldType.INT16: np.int16, PluginFieldType.INT32: np.int32, PluginFieldType.CHAR: np.uint8}


def _field_array(data: Any, type: int) -> np.ndarray:
    """PluginField data -> a C-contiguous array of the field type's dtype (raw bytes for DIMS and
    UNKNOWN), for the C plugin API.  Values are converted only when they fit: numpy's casts wrap
    (2**32 + 1 -> 1 as int32) or truncate (2.5 -> 2) silently.  ValueError says what does not fit;
    the caller names the plugin and the field."""
    t = PluginFieldType(type)
    if t == PluginFieldType.CHAR and isinstance(data, (str, bytes)):
        return np.frombuffer(data.encode() if isinstance(data, str) else data, np.uint8)
    if t in (PluginFieldType.DIMS, PluginFieldType.UNKNOWN):
        return np.ascontiguousarray(data).view(np.uint8)
    dtype = np.dtype(_FIELD_DTYPES[t])
    src = np.asarray(data)
    if src.dtype.kind not in "biuf":
        raise ValueError(f"{src.dtype} data cannot be converted to {dtype}")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if src.dtype.kind == "f":
            if src.size and not np.all(np.isfinite(src) & (src == np.round(src))):
                raise ValueError(f"{src.dtype} data with non-integral values cannot be converted to {dtype}")
        if src.size and src.dtype.kind != "b":
            lo, hi = src.min(), src.max()
            if lo < info.min or hi > info.max:
                bad = lo if lo < info.min else hi
                raise ValueError(f"value {bad} is out of {dtype}'s range {info.min}..{info.max}")
    else:
        with np.errstate(over="ignore"):
            out = np.ascontiguousarray(src, dtype=dtype)
        if src.size and np.any(np.isfinite(src) & ~np.isfinite(out)):
            bad = src[np.isfinite(src) & ~np.isfinite(out)].flat[0]
            raise ValueError(f"value {bad} is out of {dtype}'s range")
        return out
    return np.ascontiguousarray(src, dtype=dtype)


class PluginField:
    """A named, typed plugin parameter: ``PluginField("stride", np.array([2], np.int32), PluginFieldType.INT32)``."""

    def __init__(self, name: str = "", data: Any = None, type: PluginFieldType = PluginFieldType.UNKNOWN) -> None:
        self.name = name
        if data is not None and not isinstance(data, (np.ndarray, bytes, str)):
            data = np.asarray(data)
        self.data = data
        self.type = PluginFieldType(type)

    @property
    def size(self) -> int:
        """Number of elements."""
        if self.data is None:
            return 0
        return len(self.data) if isinstance(self.data, (bytes, str)) else int(np.asarray(self.data).size)

    def __repr__(self) -> str:
        return f"PluginField({self.name!r}, type={self.type.name}, size={self.size})"


class PluginFieldCollection(list):
    """A list of :class:`PluginField` (TensorRT's PluginFieldCollection)."""

    def __init__(self, fields: Sequence[PluginField] = ()) -> None:
        super().__init__(fields)

    def __getitem__(self, key):  # type: ignore[override]
        """Index by position, or by field name."""
        if isinstance(key, str):
            for f in self:
                if f.name == key:
                    return f
            raise KeyError(key)
        return super().__getitem__(key)


class IPluginV2(abc.ABC):
    """Base class of plugins written in Python.

    Set the class attributes ``plugin_type``, ``plugin_version`` and ``plugin_namespace`` to the
    creator's, and implement:

    - ``num_outputs`` (property or attribute; default 1);
    - ``get_output_shape(index, input_shapes) -> tuple``: shapes include the batch dimension,
      also in implicit-batch networks; -1 marks a dynamic dimension at build time;
    - ``get_output_dtype(index, input_dtypes) -> DataType`` (default: FLOAT);
    - ``enqueue(inputs, outputs)``: numpy arrays holding the inputs (read-only) and arrays to
      write the results into (``outputs[i][...] = ...``), copied from and to the engine's
      buffers, so keeping them after enqueue returns is safe; raise to report an error;
    - ``serialize() -> bytes``: what ``IPluginCreator.deserialize_plugin`` needs to recreate it;
    - ``clone()`` (default: ``copy.deepcopy(self)``).

    C plugins made by a creator (trtlite.PluginV2) also count as IPluginV2.
    """

    plugin_type: str = ""
    plugin_version: str = "1"
    plugin_namespace: str = ""
    num_outputs: int = 1

    def get_output_shape(self, index: int, input_shapes: List[tuple]) -> tuple:
        """Shape of output `index` from the inputs' shapes (default: the first input's)."""
        return tuple(input_shapes[0])

    def get_output_dtype(self, index: int, input_dtypes: List[DataType]) -> DataType:
        """Dtype of output `index` (default FLOAT)."""
        return DataType.FLOAT

    @abc.abstractmethod
    def enqueue(self, inputs: List[np.ndarray], outputs: List[np.ndarray]) -> None:
        """Compute: read `inputs` (read-only arrays), write `outputs` in place."""

    def serialize(self) -> bytes:
        """Bytes that recreate this plugin through its creator's deserialize_plugin (default: none)."""
        return b""

    def clone(self) -> "IPluginV2":
        """A deep copy (each execution context works on its own clone)."""
        return copy.deepcopy(self)

    @property
    def serialization_size(self) -> int:
        """len(serialize())."""
        return len(self.serialize())

    def destroy(self) -> None:
        """Nothing to do: Python frees the object."""

    def _trtl_clone_capsule(self):
        return _C._python_plugin_capsule(self)


IPluginV2Ext = IPluginV2
IPluginV2.register(_C.PluginV2)


class IPluginCreator(abc.ABC):
    """Base class of plugin creators written in Python.

    Set ``name``, ``plugin_version``, ``plugin_namespace`` and ``field_names`` (a
    PluginFieldCollection of PluginField(name, None, type)), and implement ``create_plugin(name,
    field_collection)`` and ``deserialize_plugin(name, data)``.
    """

    name: str = ""
    plugin_version: str = "1"
    plugin_namespace: str = ""
    field_names: PluginFieldCollection = PluginFieldCollection()

    @abc.abstractmethod
    def create_plugin(self, name: str, field_collection: PluginFieldCollection) -> IPluginV2:
        """Make a plugin from fields."""

    @abc.abstractmethod
    def deserialize_plugin(self, name: str, serialized_plugin: bytes) -> IPluginV2:
        """Make a plugin from IPluginV2.serialize() bytes."""


IPluginCreator.register(_C.PluginCreator)


class IPluginRegistry:
    """The process-wide plugin registry, keyed by (namespace, name, version); thread-safe."""

    @property
    def plugin_creator_list(self) -> List[IPluginCreator]:
        """Every registered creator."""
        return _C._registry_list()

    @property
    def all_creators(self) -> List[IPluginCreator]:
        """Every registered creator (TensorRT 10 name)."""
        return _C._registry_list()

    def get_plugin_creator(self, type: str, version: str, plugin_namespace: str = "") -> Optional[IPluginCreator]:
        """The creator registered as (plugin_namespace, type, version), or None."""
        return _C._registry_get(type, version, plugin_namespace)

    get_creator = get_plugin_creator

    def register_creator(self, creator: Union[IPluginCreator, IPluginCreatorInterface],
                         plugin_namespace: str = "") -> bool:
        """Register `creator` (an IPluginV2 creator or a V3 one) under `plugin_namespace`; False (and a warning) if the key is taken."""
        return _C._registry_register(creator, plugin_namespace)

    def deregister_creator(self, creator: Union[IPluginCreator, IPluginCreatorInterface]) -> bool:
        """Remove `creator`; False if it was not registered."""
        return _C._registry_deregister(creator)

    def load_library(self, path: str) -> bool:
        """dlopen a plugin library built against trtlite/plugin.h and register its creators."""
        return _C._registry_load_library(path)

    def acquire_plugin_resource(self, key: str, resource: Any) -> Any:
        """The resource registered under `key`: on first acquisition ``resource.clone()`` is registered (as
        TensorRT does); later acquisitions return it and count a reference.  Thread-safe."""
        if not isinstance(key, str):
            raise TypeError(f"acquire_plugin_resource: key must be a str, not {type(key).__name__}")
        with _RESOURCE_LOCK:
            if key in _RESOURCES:
                _RESOURCES[key][1] += 1
                return _RESOURCES[key][0]
            clone = getattr(resource, "clone", None)
            if clone is None:
                raise TypeError(f"acquire_plugin_resource('{key}'): the resource must be a trt.IPluginResource (with "
                                f"clone() and release()), not {type(resource).__name__}")
            r = clone()
            if r is None:
                raise TypeError(f"acquire_plugin_resource('{key}'): resource.clone() returned None")
            _RESOURCES[key] = [r, 1]
            return r

    def release_plugin_resource(self, key: str) -> int:
        """Drops one reference to the resource under `key`; the last calls its ``release()``.  Returns the
        references left (-1 when nothing is registered under `key`)."""
        with _RESOURCE_LOCK:
            entry = _RESOURCES.get(key)
            if entry is None:
                return -1
            entry[1] -= 1
            if entry[1] > 0:
                return entry[1]
            del _RESOURCES[key]
        release = getattr(entry[0], "release", None)
        if release is not None:
            release()
        return 0


_RESOURCES: dict = {}
_RESOURCE_LOCK = threading.Lock()
_REGISTRY = IPluginRegistry()


def get_plugin_registry() -> IPluginRegistry:
    """The plugin registry."""
    return _REGISTRY


def init_libnvinfer_plugins(logger: Any = None, namespace: str = "") -> bool:
    """Register the built-in plugins (Adder2d_TRT, SPP_TRT, NMS_TRT, ...) under `namespace`.

    `logger` receives the registry's messages (duplicates, ignored unknown fields)."""
    if logger is not None:
        _C._set_logger(logger)
    return _C._init_builtins(namespace)


init_plugins = init_libnvinfer_plugins

_C._register_plugin_classes(PluginField, PluginFieldCollection, _REGISTRY, _field_array)
