"""ONNX element types and the trtlite types that carry them inside a network."""
from __future__ import annotations

from typing import Optional

import numpy as np

from .._enums import DataType


# onnx.TensorProto.DataType values
T_FLOAT, T_UINT8, T_INT8, T_UINT16, T_INT16, T_INT32, T_INT64, T_STRING, T_BOOL, T_FLOAT16, \
    T_DOUBLE, T_UINT32, T_UINT64 = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
T_BFLOAT16 = 16

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
    return None


def trt_of_np(dt: np.dtype) -> DataType:
    """The trtlite type of a constant of numpy dtype `dt` (bool, 32-bit integers or float)."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return DataType.BOOL
    if np.issubdtype(dt, np.integer):
        return DataType.INT32
    return DataType.FLOAT


TRT_NP = {DataType.FLOAT: np.float32, DataType.INT32: np.int32, DataType.BOOL: np.bool_,
          DataType.HALF: np.float16, DataType.INT8: np.int8, DataType.UINT8: np.uint8}


def to_dtype(a: np.ndarray, dt: DataType) -> np.ndarray:
    """`a` as the numpy type of trtlite type `dt` (integers saturate to int32, floats truncate to it)."""
    np_t = TRT_NP[DataType(dt)]
    if np_t == np.int32 and a.dtype != np.int32 and a.size:
        if np.issubdtype(a.dtype, np.integer):
            a = np.clip(a, -2 ** 31, 2 ** 31 - 1)
        elif np.issubdtype(a.dtype, np.floating):
            a = np.trunc(np.nan_to_num(a))
    return np.asarray(a.astype(np_t, copy=False), order="C")  # (ascontiguousarray would make 0-d 1-d)
