"""Value types of the API: Dims tuples, Weights, loggers, profilers."""
from __future__ import annotations

import builtins
import logging
import operator
import sys
import time
from typing import Any, Iterable, Optional, Tuple, TypeAlias

import numpy as np

from ._enums import DataType, Severity

__all__ = ["Dims", "Dims2", "DimsHW", "Dims3", "Dims4", "Permutation", "Weights", "ILogger", "Logger",
           "IProfiler", "Profiler", "IProgressMonitor", "LoggingLogger", "nptype", "volume"]


def _dim(x: Any, i: int) -> int:
    """One dimension: an int (numpy ints included); floats and bools are refused instead of truncated."""
    if isinstance(x, bool) or not hasattr(type(x), "__index__"):
        raise TypeError(f"Dims[{i}] must be an int, not {type(x).__name__} ({x!r})")
    return operator.index(x)


class Dims(tuple):
    """A shape: a tuple of ints (trt.Dims).  Compares equal to plain tuples."""

    def __new__(cls, shape: Iterable[int] = ()) -> "Dims":
        return super().__new__(cls, [_dim(x, i) for i, x in enumerate(shape)])

    @property
    def nbDims(self) -> int:
        """Number of dimensions (TensorRT's C++ name)."""
        return len(self)

    def __repr__(self) -> str:
        return "(" + ", ".join(str(x) for x in self) + ("," if len(self) == 1 else "") + ")"


class Dims2(Dims):
    """Two dims: ``Dims2(a, b)``."""

    def __new__(cls, *args: int) -> "Dims2":
        if len(args) == 1 and not isinstance(args[0], int):
            args = tuple(args[0])
        if len(args) != 2:
            raise ValueError(f"Dims2 takes 2 values, got {len(args)}")
        return super().__new__(cls, args)


class DimsHW(Dims2):
    """Height and width: ``DimsHW(h, w)`` with ``.h`` and ``.w``."""

    @property
    def h(self) -> int:
        """Height."""
        return self[0]

    @property
    def w(self) -> int:
        """Width."""
        return self[1]


class Dims3(Dims):
    """Three dims: ``Dims3(a, b, c)``."""

    def __new__(cls, *args: int) -> "Dims3":
        if len(args) == 1 and not isinstance(args[0], int):
            args = tuple(args[0])
        if len(args) != 3:
            raise ValueError(f"Dims3 takes 3 values, got {len(args)}")
        return super().__new__(cls, args)


class Dims4(Dims):
    """Four dims: ``Dims4(a, b, c, d)``."""

    def __new__(cls, *args: int) -> "Dims4":
        if len(args) == 1 and not isinstance(args[0], int):
            args = tuple(args[0])
        if len(args) != 4:
            raise ValueError(f"Dims4 takes 4 values, got {len(args)}")
        return super().__new__(cls, args)


class Permutation(tuple):
    """A permutation of axes (trt.Permutation)."""

    def __new__(cls, order: Iterable[int] = ()) -> "Permutation":
        return super().__new__(cls, (int(x) for x in order))


# ml_dtypes names -> the storage types (trt.DataType's docstring)
_ML_DTYPES = {"float8_e4m3fn": DataType.FP8, "float8_e5m2": DataType.FP8E5M2,
              "float8_e4m3fnuz": DataType.FP8E4M3FNUZ, "float8_e5m2fnuz": DataType.FP8E5M2FNUZ,
              "float8_e8m0fnu": DataType.E8M0, "float4_e2m1fn": DataType.FP4, "int4": DataType.INT4,
              "uint4": DataType.UINT4, "int2": DataType.INT2, "uint2": DataType.UINT2}


def _weights_at_address(dt: DataType, ptr: Any, count: Any) -> Optional[np.ndarray]:
    """A numpy view of `count` values of type `dt` at address `ptr` (Weights(type, ptr, count))."""
    import ctypes
    for what, v in (("ptr", ptr), ("count", count)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"Weights(type, ptr, count): {what} must be an int, not {type(v).__name__}")
    ptr, count = int(ptr), int(count)
    if count < 0:
        raise ValueError(f"Weights(type, ptr, count): count must be >= 0, got {count}")
    np_t = {DataType.FLOAT: np.float32, DataType.HALF: np.float16, DataType.INT32: np.int32,
            DataType.INT8: np.int8, DataType.BOOL: np.bool_, DataType.UINT8: np.uint8,
            DataType.INT64: np.int64, DataType.BF16: np.uint16}.get(dt)
    if np_t is None and dt in _ML_DTYPES.values():
        np_t = np.uint8  # storage types: one code a byte
    if np_t is None:
        raise TypeError(f"Weights(type, ptr, count): type {dt.name} is not a weights type (FLOAT, HALF, BF16, "
                        f"INT32, INT64, INT8, BOOL, UINT8 or a storage type)")
    if count == 0:
        return None
    if ptr == 0:
        raise ValueError(f"Weights(type, ptr, count): ptr is NULL but count is {count}")
    if ptr < 0 or ptr >= 1 << 64:
        raise ValueError(f"Weights(type, ptr, count): ptr {ptr:#x} is not an address")
    nbytes = count * np.dtype(np_t).itemsize
    return np.frombuffer((ctypes.c_char * nbytes).from_address(ptr), dtype=np_t, count=count)


def _int64_values(arr: Optional[np.ndarray]) -> Tuple[Optional[np.ndarray], DataType]:
    """int64 weights: INT32 (a copy) where every value fits, else INT64 as they are (constant layers only)."""
    if arr is None:
        return None, DataType.INT32
    if arr.size and (int(arr.max()) > 2 ** 31 - 1 or int(arr.min()) < -2 ** 31):
        return np.ascontiguousarray(arr), DataType.INT64
    return np.ascontiguousarray(arr.astype(np.int32)), DataType.INT32


class Weights:
    """Weights for a layer: keeps a reference to a C-contiguous numpy array (no copy until build).

    ``Weights()`` is empty; ``Weights(array)`` wraps an array (float64 is converted to float32,
    as TensorRT has no float64 weights; int64 to INT32 where every value fits, else INT64 weights, which only
    constant layers take); ``Weights(DataType)`` is an empty weight of that type.
    An ml_dtypes array (float8_e4m3fn, int4, ...: what onnx.numpy_helper gives for those ONNX types)
    gives weights of the storage type (FP8, INT4, ...) holding its code bytes (constant layers only);
    an ml_dtypes bfloat16 array gives BF16 weights holding its uint16 bit patterns (``Weights(DataType.BF16)``
    plus ``Weights(DataType.BF16, ptr, count)`` read bit patterns too).
    ``Weights(DataType, ptr, count)`` (TensorRT's form) reads `count` values of that type at the raw address
    `ptr` (e.g. ``array.ctypes.data``) without copying: the memory must stay valid until the build.
    TensorRT's keyword spellings work too: ``Weights(type=DataType.HALF)``, ``Weights(type=..., ptr=..., count=...)``.
    """

    def __init__(self, a: Any = None, ptr: Any = None, count: Any = None, type: Any = None) -> None:
        if type is not None:  # TensorRT's keyword forms: Weights(type=...), Weights(type=..., ptr=..., count=...)
            if a is not None:
                raise TypeError("Weights: give the type once (positionally or as type=), not both")
            if not isinstance(type, DataType):
                raise TypeError(f"Weights: type must be a trt.DataType, not {builtins.type(type).__name__}")
            a = type
        if isinstance(a, DataType) and (ptr is not None or count is not None):
            # TensorRT's Weights(type, ptr, count): `count` values of `type` at the raw address `ptr`, not
            # copied (the memory must stay valid until the network is built, as TensorRT requires).
            arr = _weights_at_address(a, ptr, count)
            if a == DataType.INT64:  # as Weights(int64 array): INT32 values (a copy) where they fit
                self._trtl_array, self._dtype = _int64_values(arr)
            else:
                self._trtl_array, self._dtype = arr, a
            return
        if a is None or isinstance(a, DataType):
            self._trtl_array: Optional[np.ndarray] = None
            self._dtype = a if isinstance(a, DataType) else DataType.FLOAT
            return
        arr = np.asarray(a)
        if arr.dtype.name == "bfloat16":  # ml_dtypes: numpy has no bfloat16; keep the bit patterns
            self._trtl_array, self._dtype = np.ascontiguousarray(arr).view(np.uint16), DataType.BF16
            return
        storage = _ML_DTYPES.get(arr.dtype.name)
        if storage is not None:  # an ml_dtypes array (FP8, INT4, ...): its code bytes, typed
            self._trtl_array = np.ascontiguousarray(arr).view(np.uint8)
            self._dtype = storage
            return
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64:
            self._trtl_array, self._dtype = _int64_values(arr)
            return
        self._trtl_array = np.ascontiguousarray(arr)
        self._dtype = {np.dtype(np.float32): DataType.FLOAT, np.dtype(np.float16): DataType.HALF,
                       np.dtype(np.int32): DataType.INT32, np.dtype(np.int8): DataType.INT8,
                       np.dtype(np.bool_): DataType.BOOL, np.dtype(np.uint8): DataType.UINT8}.get(
                           self._trtl_array.dtype)
        if self._dtype is None:
            raise TypeError(f"Weights: unsupported dtype {self._trtl_array.dtype}")

    @property
    def dtype(self) -> DataType:
        """trt.DataType of the values."""
        return self._dtype

    @property
    def size(self) -> int:
        """Number of values."""
        return 0 if self._trtl_array is None else int(self._trtl_array.size)

    @property
    def nbytes(self) -> int:
        """Bytes of the values."""
        return 0 if self._trtl_array is None else int(self._trtl_array.nbytes)

    def numpy(self) -> np.ndarray:
        """The wrapped array (an empty float32 array for empty weights)."""
        return np.zeros(0, np.float32) if self._trtl_array is None else self._trtl_array

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"Weights(dtype={self._dtype.name}, size={self.size})"


class ILogger:
    """Base class of loggers: subclass it and implement ``log(severity, msg)``.

    trtlite calls ``log`` for every message (builder optimizations at INFO/VERBOSE, errors at ERROR).
    """

    Severity: TypeAlias = Severity  # a type too: `def log(self, severity: trt.ILogger.Severity, msg: str)`
    INTERNAL_ERROR = Severity.INTERNAL_ERROR
    ERROR = Severity.ERROR
    WARNING = Severity.WARNING
    INFO = Severity.INFO
    VERBOSE = Severity.VERBOSE

    def __init__(self) -> None:
        pass

    def log(self, severity: Severity, msg: str) -> None:
        """Receive one message."""
        raise NotImplementedError

    def __enter__(self) -> "ILogger":
        """``with trt.Logger() as logger:`` (TensorRT's loggers are context managers); returns the logger."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Leaves the ``with`` block; a logger holds nothing to release."""
        return None


#: Python logging level of each severity (forward_to_logging).
LOGGING_LEVELS = {Severity.INTERNAL_ERROR: logging.CRITICAL, Severity.ERROR: logging.ERROR,
                  Severity.WARNING: logging.WARNING, Severity.INFO: logging.INFO, Severity.VERBOSE: logging.DEBUG}


class Logger(ILogger):
    """The default logger: prints messages at ``min_severity`` or worse to stderr, TensorRT-style.

    ``Logger(min_severity, forward_to_logging=True)`` sends them to Python's ``logging`` instead, to
    the logger named `logger_name` ("trtlite"), at CRITICAL (INTERNAL_ERROR), ERROR, WARNING, INFO
    or DEBUG (VERBOSE); the record's ``trt_severity`` attribute is the trt.Severity.  Both filters
    apply: ``min_severity`` first, then the logging logger's level (pass ``trt.Logger.VERBOSE`` to
    let logging alone decide).  trtlite's own extension: TensorRT's Logger only prints.
    """

    _TAGS = {0: "F", 1: "E", 2: "W", 3: "I", 4: "V"}

    def __init__(self, min_severity: Severity = Severity.WARNING, forward_to_logging: bool = False,
                 logger_name: str = "trtlite") -> None:
        super().__init__()
        self.min_severity = Severity(min_severity)
        self.forward_to_logging = bool(forward_to_logging)
        self.logger_name = logger_name

    def log(self, severity: Severity, msg: str) -> None:
        """Print (or forward to logging) `msg` if `severity` is at least as severe as ``min_severity``."""
        if int(severity) <= int(self.min_severity):
            if self.forward_to_logging:
                sev = Severity(int(severity))
                logging.getLogger(self.logger_name).log(LOGGING_LEVELS[sev], "%s", msg, extra={"trt_severity": sev})
                return
            stamp = time.strftime("%m/%d/%Y-%H:%M:%S")
            print(f"[{stamp}] [TRT] [{self._TAGS.get(int(severity), '?')}] {msg}", file=sys.stderr)


class LoggingLogger(Logger):
    """A trt.Logger that forwards every message to ``logging.getLogger(logger_name)`` (default
    "trtlite"): ``Logger(min_severity, forward_to_logging=True)``, with VERBOSE as the default
    minimum so that the logging configuration decides what is shown."""

    def __init__(self, min_severity: Severity = Severity.VERBOSE, logger_name: str = "trtlite") -> None:
        super().__init__(min_severity, forward_to_logging=True, logger_name=logger_name)


class IProfiler:
    """Base class of profilers: ``report_layer_time(layer_name, ms)`` is called per step after execution."""

    def report_layer_time(self, layer_name: str, ms: float) -> None:
        """Receive the time of one step."""
        raise NotImplementedError


class Profiler(IProfiler):
    """A profiler that prints each step's time."""

    def report_layer_time(self, layer_name: str, ms: float) -> None:
        """Print the step's time."""
        print(f"{layer_name}: {ms:.4f} ms")


class IProgressMonitor:
    """Build progress (TensorRT 10's IProgressMonitor); set ``config.progress_monitor = monitor``.

    Phases, in order: "Calibration" (INT8 with a calibrator running batches; a step per batch, 0
    steps announced), "Building engine" (4 steps) containing "Optimization passes" (a step per
    builder pass), "Kernel selection" and "Weight packing" (a step per engine step each), then
    "Serializing engine" (1 step, build_serialized_network only).  Returning False from
    ``step_complete`` cancels the build (it raises trt.StateError); a KeyboardInterrupt raised here
    propagates out of the build.  trt.ProgressBar is a ready one.
    """

    def phase_start(self, phase_name: str, parent_phase: Optional[str], num_steps: int) -> None:
        """A phase begins."""

    def step_complete(self, phase_name: str, step: int) -> bool:
        """A step of `phase_name` finished; return False to cancel."""
        return True

    def phase_finish(self, phase_name: str) -> None:
        """A phase ended."""


_NP = {DataType.FLOAT: np.float32, DataType.HALF: np.float16, DataType.INT8: np.int8,
       DataType.INT32: np.int32, DataType.BOOL: np.bool_, DataType.UINT8: np.uint8, DataType.INT64: np.int64}


def nptype(dtype: DataType) -> type:
    """The numpy type of a trt.DataType: np.uint8 (the code bytes) for the storage types FP8, INT4, FP4,
    E8M0 and the extensions; np.uint16 (the bit patterns; numpy has no bfloat16) for BF16."""
    dt = DataType(dtype)
    if dt == DataType.BF16:
        return np.uint16
    return _NP.get(dt, np.uint8)


def volume(shape: Iterable[int]) -> int:
    """Product of the dims."""
    v = 1
    for d in shape:
        v *= int(d)
    return v
