"""ONNX element types and the trtlite types that carry them inside a network."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .._enums import DataType


# onnx.TensorProto.DataType values
T_FLOAT, T_UINT8, T_INT8, T_UINT16, T_INT16, T_INT32, T_INT64, T_STRING, T_BOOL, T_FLOAT16, \
    T_DOUBLE, T_UINT32, T_UINT64 = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
T_BFLOAT16 = 16
T_FLOAT8E4M3FN, T_FLOAT8E4M3FNUZ, T_FLOAT8E5M2, T_FLOAT8E5M2FNUZ, T_UINT4, T_INT4, T_FLOAT4E2M1, T_FLOAT8E8M0, \
    T_UINT2, T_INT2 = 17, 18, 19, 20, 21, 22, 23, 24, 25, 26

# The low-bit ONNX types -> trtlite's storage types (TensorRT 10's FP8, INT4, FP4, E8M0 and trtlite's
# extensions), carried as they are: one code a byte (trt.DataType's docstring).
ONNX_STORAGE = {
    T_FLOAT8E4M3FN: DataType.FP8, T_FLOAT8E4M3FNUZ: DataType.FP8E4M3FNUZ, T_FLOAT8E5M2: DataType.FP8E5M2,
    T_FLOAT8E5M2FNUZ: DataType.FP8E5M2FNUZ, T_UINT4: DataType.UINT4, T_INT4: DataType.INT4,
    T_FLOAT4E2M1: DataType.FP4, T_FLOAT8E8M0: DataType.E8M0, T_UINT2: DataType.UINT2, T_INT2: DataType.INT2,
}
# ml_dtypes names (onnx.numpy_helper's arrays of those types) -> the storage types
ML_STORAGE = {
    "float8_e4m3fn": DataType.FP8, "float8_e4m3fnuz": DataType.FP8E4M3FNUZ, "float8_e5m2": DataType.FP8E5M2,
    "float8_e5m2fnuz": DataType.FP8E5M2FNUZ, "uint4": DataType.UINT4, "int4": DataType.INT4,
    "float4_e2m1fn": DataType.FP4, "float8_e8m0fnu": DataType.E8M0, "uint2": DataType.UINT2, "int2": DataType.INT2,
}
ML_NAME = {v: k for k, v in ML_STORAGE.items()}

ONNX_TO_NP = {
    T_FLOAT: np.float32, T_UINT8: np.uint8, T_INT8: np.int8, T_UINT16: np.uint16, T_INT16: np.int16,
    T_INT32: np.int32, T_INT64: np.int64, T_BOOL: np.bool_, T_FLOAT16: np.float16, T_DOUBLE: np.float64,
    T_UINT32: np.uint32, T_UINT64: np.uint64, T_BFLOAT16: np.float32,
}


def onnx_to_trt(t: int) -> Optional[DataType]:
    """The trtlite type that carries ONNX type `t` inside the network (None: unsupported)."""
    if t in (T_FLOAT, T_DOUBLE, T_BFLOAT16, T_FLOAT16):
        return DataType.FLOAT
    if t in (T_INT32, T_INT64, T_INT16, T_UINT16, T_UINT32, T_UINT64, T_INT8, T_UINT8):
        return DataType.INT32
    if t == T_BOOL:
        return DataType.BOOL
    return ONNX_STORAGE.get(t)


def ml_dtype(dt: DataType) -> Any:
    """The ml_dtypes numpy dtype of storage type `dt` (ml_dtypes comes with onnx >= 1.16)."""
    import ml_dtypes
    return np.dtype(getattr(ml_dtypes, ML_NAME[DataType(dt)]))


def storage_array(a: np.ndarray, dt: DataType, saturate: bool = True) -> np.ndarray:
    """Constant values `a` as an ml_dtypes array of storage type `dt`, converted as ONNX Cast does (while
    parsing, for constants only): float8 targets saturate unless told not to."""
    want = ml_dtype(dt)
    if a.dtype == want:
        return a
    if saturate and dt in (DataType.FP8, DataType.FP8E5M2, DataType.FP8E4M3FNUZ, DataType.FP8E5M2FNUZ):
        import ml_dtypes
        m = float(ml_dtypes.finfo(want).max)
        a = np.clip(a.astype(np.float32), -m, m)
    return a.astype(want)


def trt_of_np(dt: np.dtype) -> DataType:
    """The trtlite type of a constant of numpy dtype `dt` (bool, 32-bit integers or float)."""
    dt = np.dtype(dt)
    if dt.name in ML_STORAGE:
        return ML_STORAGE[dt.name]
    if dt == np.bool_:
        return DataType.BOOL
    if np.issubdtype(dt, np.integer):
        return DataType.INT32
    return DataType.FLOAT


TRT_NP = {DataType.FLOAT: np.float32, DataType.INT32: np.int32, DataType.BOOL: np.bool_,
          DataType.HALF: np.float16, DataType.INT8: np.int8, DataType.UINT8: np.uint8}


def to_dtype(a: np.ndarray, dt: DataType) -> np.ndarray:
    """`a` as the numpy type of trtlite type `dt` (integers saturate to int32, floats truncate to it)."""
    if DataType(dt) in ML_NAME:
        return storage_array(a, DataType(dt))
    np_t = TRT_NP[DataType(dt)]
    if np_t == np.int32 and a.dtype != np.int32 and a.size:
        if np.issubdtype(a.dtype, np.integer):
            a = np.clip(a, -2 ** 31, 2 ** 31 - 1)
        elif np.issubdtype(a.dtype, np.floating):
            a = np.trunc(np.nan_to_num(a))
    return np.asarray(a.astype(np_t, copy=False), order="C")  # (ascontiguousarray would make 0-d 1-d)
