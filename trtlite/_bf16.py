"""bfloat16 host buffers (trt.DataType.BF16).

numpy has no bfloat16 and ml_dtypes' bfloat16 arrays export no buffer, so trtlite's host buffers of a
BF16 tensor hold its **uint16 bit patterns** (the top half of the float32 bit pattern): bindings take
uint16 arrays, ``trt.nptype(trt.bfloat16)`` is ``np.uint16``, ``trt.Weights(ml_dtypes.bfloat16 array)``
and ``trt.Weights(trt.bfloat16, ptr, count)`` hold bit patterns.  ``context.infer`` also takes
ml_dtypes bfloat16 arrays and numbers (rounded to nearest even, NaN kept) and returns ml_dtypes
bfloat16 arrays when ml_dtypes imports (uint16 bit patterns otherwise).
"""
from typing import Any

import numpy as np


def bits_from_float(a: Any) -> np.ndarray:
    """Numbers -> bfloat16 bit patterns (uint16), rounded once to nearest even; NaN stays a quiet NaN
    of the same sign, values past the largest bfloat16 round to +-Inf."""
    a64 = np.asarray(a, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = a64.astype(np.float32)
    x = f.view(np.uint32).astype(np.uint64)
    nan = np.isnan(a64)
    r = (x + 0x7FFF + ((x >> 16) & 1)) >> 16
    # float64 -> float32 -> bf16 rounds twice: wrong only where the float32 is a bf16 tie the float64 was not
    with np.errstate(invalid="ignore"):
        f64 = f.astype(np.float64)
        tie = ((x & 0xFFFF) == 0x8000) & (f64 != a64) & ~nan
        away = np.abs(a64) > np.abs(f64)
    r = np.where(tie, (x >> 16) + away.astype(np.uint64), r)
    r = np.where(nan, (x >> 16) | 0x40, r)
    return r.astype(np.uint16)


def bits_to_float(bits: Any) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values (exact)."""
    b = np.asarray(bits, dtype=np.uint16, order="C")
    return (b.astype(np.uint32) << 16).view(np.float32)


def _ml_bfloat16() -> Any:
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def host_bits(v: Any, name: str) -> np.ndarray:
    """An infer() input of a BF16 tensor as C-contiguous uint16 bit patterns: an ml_dtypes bfloat16 array
    or uint16 array as it is; float / integer / bool numbers rounded to nearest even."""
    arr = np.asarray(v)
    ml = _ml_bfloat16()
    if ml is not None and arr.dtype == ml:
        return np.asarray(arr, order="C").view(np.uint16)  # (ascontiguousarray would make 0-d arrays 1-d)
    if arr.dtype == np.uint16:
        return np.asarray(arr, order="C")
    if arr.dtype.kind not in "fiub":
        raise TypeError(f"infer(): input '{name}' is BF16: give numbers, an ml_dtypes bfloat16 array or uint16 "
                        f"bit patterns, not {arr.dtype}")
    return np.asarray(bits_from_float(arr), order="C")


def typed_output(bits: np.ndarray, name: str) -> np.ndarray:
    """An infer() output of a BF16 tensor: its uint16 bit patterns viewed as ml_dtypes bfloat16 when ml_dtypes
    imports, else the bit patterns themselves."""
    ml = _ml_bfloat16()
    return bits if ml is None else bits.view(ml)
