"""INT8 calibration with TensorRT's API: calibrator base classes and the calibration run.

Users subclass one of the calibrators below exactly as for TensorRT::

    class MyCalibrator(trt.IInt8EntropyCalibrator2):
        def __init__(self, batches, cache_file):
            super().__init__()
            ...
        def get_batch_size(self):            return 8
        def get_batch(self, names):           return [batch.ctypes.data] or None when done
        def read_calibration_cache(self):     return bytes or None
        def write_calibration_cache(self, cache): open(self.cache_file, "wb").write(cache)

    config.set_flag(trt.BuilderFlag.INT8)
    config.int8_calibrator = MyCalibrator(...)
    plan = builder.build_serialized_network(network, config)

When a build has the INT8 flag and a calibrator, ``trt.Builder`` first calls
:func:`calibrate`: it reads the calibrator's cache if it has one, otherwise it builds an fp32
calibration engine whose outputs are every float tensor of the network, runs the calibrator's
batches through it and derives one threshold (|x| range) per tensor; it then sets
``tensor.dynamic_range = (-threshold, threshold)`` on the network's float tensors and writes the
cache in TensorRT's text format::

    TRT-8601-EntropyCalibration2
    data: 3c010204
    conv1: 3d1a2b3c
    (Unnamed Layer* 1) [Activation]_output: 3d1a2b3c

(a header naming the algorithm, then ``tensor_name: <scale>`` per tensor, where the scale is
threshold / 127 as a float32 and ``<scale>`` is its IEEE-754 bit pattern printed as a hexadecimal
integer, the way TensorRT prints it).  trtlite's kernels compute in fp32
(``platform_has_fast_int8`` is False): the ranges are recorded, not used to quantize.
"""
from __future__ import annotations

import ctypes
import json
import math
import operator
import re
import struct
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._C import Error, InvalidArgumentError, ShapeError, StateError
from ._enums import BuilderFlag, CalibrationAlgoType, DataType, Severity
from ._types import nptype, volume
from .progress import monitor_call as _monitor_call

__all__ = ["IInt8Calibrator", "IInt8EntropyCalibrator2", "IInt8EntropyCalibrator", "IInt8MinMaxCalibrator",
           "IInt8LegacyCalibrator", "calibrate", "entropy_threshold", "parse_calibration_cache",
           "format_calibration_cache", "CACHE_VERSION", "NUM_BINS"]

#: The TensorRT version trtlite's API follows, as it appears in cache headers (TensorRT 8.6.1).
CACHE_VERSION = "8601"
#: Histogram bins of the entropy and legacy calibrators (TensorRT's 2048).
NUM_BINS = 2048
#: Quantized levels of the positive int8 range used by the KL search (TensorRT's 128).
NUM_QUANTIZED_BINS = 128

_ALGO_NAMES = {
    CalibrationAlgoType.LEGACY_CALIBRATION: "LegacyCalibration",
    CalibrationAlgoType.ENTROPY_CALIBRATION: "EntropyCalibration",
    CalibrationAlgoType.ENTROPY_CALIBRATION_2: "EntropyCalibration2",
    CalibrationAlgoType.MINMAX_CALIBRATION: "MinMaxCalibration",
}
_ALGO_BY_NAME = {v: k for k, v in _ALGO_NAMES.items()}


# ---- calibrator base classes -----------------------------------------------------------------

class IInt8Calibrator:
    """Base of INT8 calibrators (trt.IInt8Calibrator).

    Subclasses implement ``get_batch_size()``, ``get_batch(names)``, ``read_calibration_cache()``
    and ``write_calibration_cache(cache)``; ``get_algorithm()`` says which algorithm turns the
    collected statistics into ranges.  Prefer the concrete bases (IInt8EntropyCalibrator2, ...).
    """

    def __init__(self) -> None:
        pass

    def get_batch_size(self) -> int:
        """The batch size of the batches get_batch returns (the batch of implicit-batch networks)."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_batch_size()")

    def get_batch(self, names: List[str]) -> Optional[Sequence[Any]]:
        """One batch: a list (in the order of `names`, the network's input names) of host addresses
        (ints) or numpy arrays; None (or an empty list) when there is no more data."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_batch(names)")

    def get_algorithm(self) -> CalibrationAlgoType:
        """The calibration algorithm (ENTROPY_CALIBRATION_2 unless a subclass says otherwise)."""
        return CalibrationAlgoType.ENTROPY_CALIBRATION_2

    def read_calibration_cache(self) -> Optional[bytes]:
        """A calibration cache written earlier (bytes), or None to calibrate."""
        return None

    def write_calibration_cache(self, cache: memoryview) -> None:
        """Receive the calibration cache (TensorRT's text format) to store it: a read-only memoryview over the
        bytes, as TensorRT passes a buffer (``f.write(cache)``, ``bytes(cache)`` and ``cache.tobytes()`` work)."""
        return None


class IInt8EntropyCalibrator2(IInt8Calibrator):
    """Entropy calibration, version 2 (TensorRT's recommended calibrator for CNNs).

    Thresholds minimize the KL divergence between the |x| histogram and its 8-bit quantization
    (see :func:`entropy_threshold`).
    """

    def get_algorithm(self) -> CalibrationAlgoType:
        """CalibrationAlgoType.ENTROPY_CALIBRATION_2."""
        return CalibrationAlgoType.ENTROPY_CALIBRATION_2


class IInt8EntropyCalibrator(IInt8Calibrator):
    """Entropy calibration (the original version; same threshold search as version 2 in trtlite)."""

    def get_algorithm(self) -> CalibrationAlgoType:
        """CalibrationAlgoType.ENTROPY_CALIBRATION."""
        return CalibrationAlgoType.ENTROPY_CALIBRATION


class IInt8MinMaxCalibrator(IInt8Calibrator):
    """Min-max calibration: each tensor's threshold is the largest |x| seen over all batches."""

    def get_algorithm(self) -> CalibrationAlgoType:
        """CalibrationAlgoType.MINMAX_CALIBRATION."""
        return CalibrationAlgoType.MINMAX_CALIBRATION


class IInt8LegacyCalibrator(IInt8Calibrator):
    """Legacy calibration: each tensor's threshold is the `get_quantile()` percentile of |x|.

    Besides the calibration cache it keeps a histogram cache (``read_histogram_cache(length)`` /
    ``write_histogram_cache(data, length)``): with one, new quantiles are tried without running
    the batches again.  The histogram cache is trtlite's own format (TensorRT's is not documented).
    ``get_regression_cutoff()`` is queried and checked (0..1) as TensorRT does, but trtlite derives
    the threshold with the quantile method only.
    """

    def get_algorithm(self) -> CalibrationAlgoType:
        """CalibrationAlgoType.LEGACY_CALIBRATION."""
        return CalibrationAlgoType.LEGACY_CALIBRATION

    def get_quantile(self) -> float:
        """The fraction (0..1] of |x| values the range must cover."""
        return 0.9999

    def get_regression_cutoff(self) -> float:
        """The fraction (0..1) of the maximum that bounds the regression (informational in trtlite)."""
        return 1.0

    def read_histogram_cache(self, length: int = 0) -> Optional[bytes]:
        """A histogram cache written earlier (bytes), or None."""
        return None

    def write_histogram_cache(self, data: bytes, length: int) -> None:
        """Receive the histogram cache (`length` bytes) to store it."""
        return None


# ---- the calibration cache -------------------------------------------------------------------

def _scale_to_hex(scale: float) -> str:
    """IEEE-754 bits of the float32 `scale` as TensorRT prints them (hex integer, no padding)."""
    return format(struct.unpack(">I", struct.pack(">f", float(np.float32(scale))))[0], "x")


def _hex_to_scale(text: str) -> float:
    return struct.unpack(">f", struct.pack(">I", int(text, 16)))[0]


def format_calibration_cache(algorithm: CalibrationAlgoType, scales: Sequence[Tuple[str, float]]) -> bytes:
    """TensorRT's calibration-cache text: ``TRT-8601-<Algorithm>`` then ``name: <hex scale>`` lines."""
    lines = [f"TRT-{CACHE_VERSION}-{_ALGO_NAMES[CalibrationAlgoType(algorithm)]}"]
    lines += [f"{name}: {_scale_to_hex(s)}" for name, s in scales]
    return ("\n".join(lines) + "\n").encode()


_HEADER = re.compile(r"^TRT-(\d+)-([A-Za-z0-9]+)$")
_HEX = re.compile(r"^[0-9A-Fa-f]{1,8}$")


def parse_calibration_cache(data: Any) -> Tuple[str, str, Dict[str, float]]:
    """Parse a calibration cache -> (version, algorithm name, {tensor name: scale}).

    Raises InvalidArgumentError, naming the line, for text that is not a calibration cache.
    """
    if isinstance(data, str):
        raw = data.encode()
    else:
        try:
            raw = bytes(memoryview(data).cast("B"))
        except TypeError:
            raise InvalidArgumentError(
                f"read_calibration_cache() returned {type(data).__name__}; expected bytes or None") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidArgumentError("read_calibration_cache(): the cache is not text (expected TensorRT's "
                                   "'TRT-<version>-<Algorithm>' header and 'tensor: hexscale' lines)") from None
    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        raise InvalidArgumentError("read_calibration_cache(): the cache is empty text")
    m = _HEADER.match(lines[0])
    if not m or m.group(2) not in _ALGO_BY_NAME:
        raise InvalidArgumentError(
            f"read_calibration_cache(): bad header {lines[0][:80]!r}; expected 'TRT-<version>-<Algorithm>' with "
            f"Algorithm one of {', '.join(_ALGO_BY_NAME)}")
    scales: Dict[str, float] = {}
    for no, ln in enumerate(lines[1:], start=2):
        name, sep, value = ln.rpartition(":")
        name, value = name.strip(), value.strip()
        if not sep or not name or not _HEX.match(value):
            raise InvalidArgumentError(
                f"read_calibration_cache(): line {no} {ln[:80]!r} is not 'tensor_name: <hex float32 scale>'")
        s = _hex_to_scale(value)
        if not math.isfinite(s) or s < 0:
            raise InvalidArgumentError(f"read_calibration_cache(): line {no}: tensor '{name}' has scale {s} "
                                       f"(expected a finite, non-negative float32)")
        scales[name] = s
    return m.group(1), m.group(2), scales


# ---- statistics ------------------------------------------------------------------------------

class _Stats:
    """Running |x| statistics of one tensor: the maximum, and (optionally) a NUM_BINS histogram.

    Histogram bins have a fixed width w (bin b holds |x| in [b*w, (b+1)*w); the largest value goes
    to the last bin).  The first batch with a non-zero value sets w = max/NUM_BINS.  A later batch
    beyond NUM_BINS*w widens the bins by the smallest integer factor k that covers it, merging
    each run of k old bins into one; merging is exact, so no value ever changes bin order.
    """

    __slots__ = ("amax", "width", "counts")

    def __init__(self, histogram: bool) -> None:
        self.amax = 0.0
        self.width = 0.0
        self.counts = np.zeros(NUM_BINS, np.int64) if histogram else None

    def add(self, x: np.ndarray) -> None:
        a = np.abs(np.asarray(x, dtype=np.float32).ravel())
        if a.size == 0:
            return
        m = float(a.max())
        if not math.isfinite(m):  # NaN/inf carry no range information
            a = a[np.isfinite(a)]
            if a.size == 0:
                return
            m = float(a.max())
        self.amax = max(self.amax, m)
        if self.counts is None:
            return
        if self.width == 0.0:
            if m == 0.0:
                self.counts[0] += a.size
                return
            self.width = m / NUM_BINS
        elif m > self.width * NUM_BINS:
            k = max(2, math.ceil(m / (self.width * NUM_BINS)))
            while self.width * NUM_BINS * k < m:
                k += 1
            self._widen(k)
        idx = np.floor(a.astype(np.float64) / self.width)
        idx = np.minimum(idx, NUM_BINS - 1).astype(np.int64)
        self.counts += np.bincount(idx, minlength=NUM_BINS)

    def _widen(self, k: int) -> None:
        n = -(-NUM_BINS // k)
        padded = np.zeros(n * k, np.int64)
        padded[:NUM_BINS] = self.counts
        self.counts = np.zeros(NUM_BINS, np.int64)
        self.counts[:n] = padded.reshape(n, k).sum(axis=1)
        self.width *= k

    def to_json(self) -> dict:
        return {"amax": self.amax, "width": self.width, "counts": [int(c) for c in self.counts]}

    @classmethod
    def from_json(cls, d: dict) -> "_Stats":
        s = cls(True)
        s.amax, s.width = float(d["amax"]), float(d["width"])
        counts = np.asarray(d["counts"], np.int64)
        if counts.shape != (NUM_BINS,) or (counts < 0).any() or not (s.amax >= 0 and s.width >= 0):
            raise ValueError("bad histogram")
        s.counts = counts
        return s


def entropy_threshold(counts: np.ndarray, width: float, num_quantized_bins: int = NUM_QUANTIZED_BINS,
                      start_bin: int = NUM_QUANTIZED_BINS) -> Optional[float]:
    """TensorRT's entropy (KL-divergence) threshold of an |x| histogram; None if no candidate is finite.

    The algorithm, as NVIDIA published it (Migacz, "8-bit Inference with TensorRT", GTC 2017):
    for every candidate number of kept bins i in [128, len(counts)):

    * reference distribution P = counts[0:i], with the mass of all bins >= i (the outliers that
      the threshold would clip) added to its last bin P[i-1]; normalized to sum 1;
    * candidate distribution Q = counts[0:i] quantized to 128 levels: the i bins are split into 128
      consecutive groups of i // 128 bins (the last group also takes the remaining i % 128 bins),
      each group's total is spread evenly over the group's non-empty bins (empty bins stay empty),
      normalized to sum 1;
    * divergence KL(P || Q) = sum over P > 0 of P * log(P / Q); infinite where Q = 0 < P (the
      candidate cannot represent clipped mass that fell into an empty bin).

    The i with the smallest divergence (the first one on ties) gives threshold = (i + 0.5) * width.
    """
    c = np.asarray(counts, dtype=np.float64)
    n = c.size
    total = float(c.sum())
    if total <= 0 or width <= 0:
        return 0.0
    nonzero = c > 0
    csum = np.concatenate(([0.0], np.cumsum(c)))
    cnz = np.concatenate(([0], np.cumsum(nonzero)))
    bins = np.arange(n)
    best_i, best_kl = None, math.inf
    for i in range(start_bin, n):
        kept = csum[i]
        if kept <= 0:
            continue
        p = c[:i].copy()
        p[i - 1] += total - kept
        step = i // num_quantized_bins
        edges = np.arange(num_quantized_bins + 1) * step
        edges[-1] = i
        gsum = csum[edges[1:]] - csum[edges[:-1]]
        gnz = cnz[edges[1:]] - cnz[edges[:-1]]
        per_bin = np.divide(gsum, gnz, out=np.zeros_like(gsum), where=gnz > 0)
        group = np.minimum(bins[:i] // step, num_quantized_bins - 1)
        q = np.where(nonzero[:i], per_bin[group], 0.0)
        p /= total
        q /= kept
        mask = p > 0
        if (q[mask] <= 0).any():
            continue
        kl = float(np.sum(p[mask] * np.log(p[mask] / q[mask])))
        if kl < best_kl:
            best_i, best_kl = i, kl
    if best_i is None:
        return None
    return (best_i + 0.5) * width


def _quantile_threshold(st: _Stats, quantile: float) -> float:
    """Upper edge of the first bin where the cumulative count reaches `quantile` of all values."""
    total = int(st.counts.sum())
    if total == 0 or st.width == 0.0:
        return 0.0
    cum = np.cumsum(st.counts)
    b = int(np.searchsorted(cum, quantile * total, side="left"))
    return min((min(b, NUM_BINS - 1) + 1) * st.width, st.amax)


def _threshold(st: _Stats, algo: CalibrationAlgoType, quantile: float) -> float:
    if algo == CalibrationAlgoType.MINMAX_CALIBRATION:
        return st.amax
    if algo == CalibrationAlgoType.LEGACY_CALIBRATION:
        return _quantile_threshold(st, quantile)
    t = entropy_threshold(st.counts, st.width)
    # the threshold never exceeds the largest |x| seen (bins above it may be empty after widening)
    return st.amax if t is None else min(t, st.amax)


# ---- calling the user's calibrator -----------------------------------------------------------

def _call(cal: Any, method: str, *args: Any) -> Any:
    fn = getattr(cal, method, None)
    if not callable(fn):
        raise InvalidArgumentError(f"INT8 calibrator {type(cal).__name__} has no method {method}()")
    try:
        return fn(*args)
    except Exception as e:  # the user's code: report it as a build error naming the method
        raise Error(f"INT8 calibrator {type(cal).__name__}.{method}() raised {type(e).__name__}: {e}") from e


def _algorithm(cal: Any) -> CalibrationAlgoType:
    a = _call(cal, "get_algorithm") if hasattr(cal, "get_algorithm") else CalibrationAlgoType.ENTROPY_CALIBRATION_2
    try:
        return CalibrationAlgoType(int(a))
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"INT8 calibrator {type(cal).__name__}.get_algorithm() returned {a!r}, "
                                   f"not a trt.CalibrationAlgoType") from None


def _log(logger: Any, severity: Severity, msg: str) -> None:
    if logger is None:
        return
    try:
        logger.log(severity, msg)
    except Exception:  # a broken logger must not break the build (the C core ignores it too)
        pass


def _to_array(cal: Any, item: Any, name: str, shape: Tuple[int, ...], dtype: np.dtype, batch: int) -> np.ndarray:
    """One element of get_batch()'s list as an array of `shape` (-1: taken from an array)."""
    who = f"INT8 calibrator {type(cal).__name__}.get_batch()"
    dynamic = any(d < 0 for d in shape)
    if isinstance(item, (bool, np.bool_)):
        raise InvalidArgumentError(f"{who}: the entry for input '{name}' is a bool, not an address or array")
    if not isinstance(item, (int, np.integer, np.ndarray)):
        if hasattr(item, "__array_interface__") or hasattr(item, "__array__"):
            item = np.asarray(item)
        elif hasattr(item, "__index__") or hasattr(item, "__int__"):
            item = int(item)
    if isinstance(item, (int, np.integer)):
        addr = int(item)
        if addr == 0:
            raise InvalidArgumentError(f"{who}: input '{name}' has a null address")
        if dynamic:
            raise ShapeError(f"{who}: input '{name}' has dynamic shape {shape}; return numpy arrays (their "
                             f"shapes say the batch's shape) instead of addresses")
        nbytes = volume(shape) * dtype.itemsize
        buf = (ctypes.c_char * nbytes).from_address(addr)
        return np.frombuffer(buf, dtype=dtype).reshape(shape)
    if not isinstance(item, np.ndarray):
        raise InvalidArgumentError(f"{who}: the entry for input '{name}' is {type(item).__name__}; expected a host "
                                   f"address (int) or a numpy array")
    arr = item
    if dynamic:
        if arr.ndim != len(shape) or any(d >= 0 and d != a for d, a in zip(shape, arr.shape)):
            raise ShapeError(f"{who}: input '{name}' got shape {arr.shape}, expected {shape} (-1: any)")
        want = arr.shape
    else:
        want = shape
        if arr.size != volume(shape):
            raise ShapeError(f"{who}: input '{name}' got an array of shape {arr.shape} ({arr.size} values), "
                             f"expected shape {shape} ({volume(shape)} values"
                             + (f", batch size {batch} from get_batch_size()" if batch else "") + ")")
    return np.ascontiguousarray(arr, dtype=dtype).reshape(want)


# ---- the calibration run ---------------------------------------------------------------------

def _float_tensors(network: Any) -> List[Any]:
    """Network inputs then layer outputs (layer order), FLOAT only, each once."""
    seen, out = set(), []
    tensors = [network.get_input(i) for i in range(network.num_inputs)]
    for li in range(network.num_layers):
        layer = network.get_layer(li)
        tensors += [layer.get_output(j) for j in range(layer.num_outputs)]
    for t in tensors:
        if t is None or t.name in seen:
            continue
        seen.add(t.name)
        if t.dtype == DataType.FLOAT:
            out.append(t)
    return out


def _output_names(network: Any) -> List[str]:
    return [network.get_output(i).name for i in range(network.num_outputs)]


_PHASE = "Calibration"


def _collect(builder: Any, network: Any, cal: Any, algo: CalibrationAlgoType,
             build_calibration_engine: Callable[[], Any], logger: Any, monitor: Any = None,
             profile: Any = None) -> Dict[str, _Stats]:
    """Run the calibrator's batches through an fp32 engine with every float tensor as an output.

    `profile` (config.set_calibration_profile's): inputs with dynamic dimensions are fed at its opt shapes."""
    implicit = bool(network.has_implicit_batch_dimension)
    bs = _call(cal, "get_batch_size")
    try:
        batch_size = operator.index(bs)
    except TypeError:
        raise InvalidArgumentError(f"INT8 calibrator {type(cal).__name__}.get_batch_size() returned {bs!r}, "
                                   f"not an int") from None
    if implicit and batch_size < 1:
        raise InvalidArgumentError(f"INT8 calibrator {type(cal).__name__}.get_batch_size() returned {batch_size}; "
                                   f"an implicit-batch network needs a batch size >= 1")
    inputs = [network.get_input(i) for i in range(network.num_inputs)]
    names = [t.name for t in inputs]
    shapes = {t.name: ((batch_size,) if implicit else ()) + tuple(t.shape) for t in inputs}
    if profile is not None:
        for n, shape in shapes.items():
            got = profile.get_shape(n) if any(d < 0 for d in shape) else None
            if got:
                shapes[n] = tuple(got[1])
    dtypes = {t.name: np.dtype(nptype(t.dtype)) for t in inputs}
    tensors = _float_tensors(network)
    histogram = algo != CalibrationAlgoType.MINMAX_CALIBRATION
    stats = {t.name: _Stats(histogram) for t in tensors}

    # The calibration engine: every float layer output becomes an output for the time of the build.
    before = _output_names(network)
    extra = [t for t in tensors if not t.is_network_input and not t.is_network_output]
    marked = []
    saved_mbs = builder.max_batch_size
    try:
        for t in extra:
            network.mark_output(t)
            marked.append(t)
        if implicit and batch_size > saved_mbs:
            builder.max_batch_size = batch_size
        engine = build_calibration_engine()
    finally:
        for t in reversed(marked):
            network.unmark_output(t)
        if builder.max_batch_size != saved_mbs:
            builder.max_batch_size = saved_mbs
    if _output_names(network) != before:  # unmark_output keeps the others' order; check it anyway
        raise Error(f"INT8 calibration: the network's outputs changed ({before} -> {_output_names(network)})")
    context = engine.create_execution_context()

    _log(logger, Severity.INFO, "Starting Calibration." if not implicit
         else f"Starting Calibration with batch size {batch_size}.")
    t_start = time.perf_counter()
    _monitor_call(monitor, "phase_start", _PHASE, None, 0)  # the number of batches is not known
    try:
        n_batches = _run_batches(cal, names, shapes, dtypes, implicit, batch_size, context, stats, logger, monitor)
    finally:
        _monitor_call(monitor, "phase_finish", _PHASE)
    if n_batches == 0:
        raise Error(f"INT8 calibration failed: {type(cal).__name__}.get_batch() returned no batch (None or an "
                    f"empty list on its first call), so no scaling factors could be computed")
    _log(logger, Severity.VERBOSE, f"Calibration collected {n_batches} batches in "
         f"{time.perf_counter() - t_start:.6g} seconds.")
    return stats


def _run_batches(cal: Any, names: List[str], shapes: Dict[str, Tuple[int, ...]], dtypes: Dict[str, np.dtype],
                 implicit: bool, batch_size: int, context: Any, stats: Dict[str, _Stats], logger: Any,
                 monitor: Any) -> int:
    """Feed the calibrator's batches through `context` into `stats`; one progress step per batch.
    Returns the number of batches."""
    n_batches = 0
    while True:
        t0 = time.perf_counter()
        got = _call(cal, "get_batch", list(names))
        if got is None:
            break
        if isinstance(got, (str, bytes)) or not hasattr(got, "__len__"):
            raise InvalidArgumentError(f"INT8 calibrator {type(cal).__name__}.get_batch() returned "
                                       f"{type(got).__name__}; expected a list of addresses or arrays, or None")
        got = list(got)
        if not got:
            break
        if len(got) != len(names):
            raise InvalidArgumentError(f"INT8 calibrator {type(cal).__name__}.get_batch() returned {len(got)} "
                                       f"entries for {len(names)} inputs {names}")
        feed = {n: _to_array(cal, item, n, shapes[n], dtypes[n], batch_size if implicit else 0)
                for n, item in zip(names, got)}
        try:
            outs = context.infer(feed)
        except Error as e:
            raise type(e)(f"INT8 calibration: running batch {n_batches} failed: {e}") from e
        for n, st in stats.items():
            x = feed[n] if n in feed else outs.get(n)
            if x is not None:
                st.add(x)
        _log(logger, Severity.INFO, f"  Calibrated batch {n_batches} in {time.perf_counter() - t0:.6g} seconds.")
        n_batches += 1
        if _monitor_call(monitor, "step_complete", _PHASE, n_batches - 1) is False:
            raise StateError("build cancelled by the progress monitor (during INT8 calibration)")
    return n_batches


def _read_histogram_cache(cal: Any) -> Optional[Dict[str, _Stats]]:
    data = _call(cal, "read_histogram_cache", 0)
    if data is None:
        return None
    try:
        raw = data.encode() if isinstance(data, str) else bytes(memoryview(data).cast("B"))
    except TypeError:
        raise InvalidArgumentError(f"INT8 calibrator {type(cal).__name__}.read_histogram_cache() returned "
                                   f"{type(data).__name__}; expected bytes or None") from None
    if not raw:
        return None
    try:
        d = json.loads(raw.decode("utf-8"))
        if d.get("format") != "trtlite-histogram-cache" or int(d.get("bins", 0)) != NUM_BINS:
            raise ValueError("not a trtlite histogram cache")
        return {name: _Stats.from_json(v) for name, v in d["tensors"].items()}
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as e:
        raise InvalidArgumentError(f"INT8 calibrator {type(cal).__name__}.read_histogram_cache(): the cache does "
                                   f"not parse ({e}); return None to recollect the histograms") from None


def _histogram_cache(stats: Dict[str, _Stats]) -> bytes:
    return json.dumps({"format": "trtlite-histogram-cache", "version": 1, "bins": NUM_BINS,
                       "tensors": {n: s.to_json() for n, s in stats.items()}}).encode()


def _apply(network: Any, thresholds: Dict[str, float], logger: Any, source: str) -> None:
    missing = []
    for t in _float_tensors(network):
        if t.name in thresholds:
            amax = float(np.float32(thresholds[t.name]))
            t.dynamic_range = (-amax, amax)
        else:
            missing.append(t.name)
    for name in missing:
        _log(logger, Severity.WARNING, f"Missing scale for tensor {name} in the {source}; it keeps no dynamic range "
             f"(expect fall back to non-int8 implementation)")


def calibrate(builder: Any, network: Any, calibrator: Any, build_calibration_engine: Callable[[], Any],
              logger: Any = None, monitor: Any = None, profile: Any = None) -> Dict[str, float]:
    """Calibrate `network` with `calibrator`; sets the tensors' dynamic ranges; returns {tensor: threshold}.

    `build_calibration_engine()` builds an fp32 engine of `network` as it is when called (the
    calibration marks every float tensor as an output around that call and restores the outputs
    exactly afterwards).  Errors raise trt.Error subclasses (logged at ERROR too).  `monitor` (a
    trt.IProgressMonitor) gets a "Calibration" phase with a step per batch; step_complete returning
    False cancels with trt.StateError.  `profile`: the calibration profile (its opt shapes feed inputs with
    dynamic dimensions).
    """
    try:
        return _calibrate(builder, network, calibrator, build_calibration_engine, logger, monitor, profile)
    except Error as e:
        _log(logger, Severity.ERROR, str(e))
        raise


def _calibrate(builder: Any, network: Any, cal: Any, build_calibration_engine: Callable[[], Any],
               logger: Any, monitor: Any = None, profile: Any = None) -> Dict[str, float]:
    algo = _algorithm(cal)
    algo_name = _ALGO_NAMES[algo]
    cache = _call(cal, "read_calibration_cache")
    if cache is not None and not (hasattr(cache, "__len__") and len(cache) == 0):
        version, cached_algo, scales = parse_calibration_cache(cache)
        if cached_algo != algo_name:
            _log(logger, Severity.WARNING, f"Calibration table does not match calibrator algorithm type "
                 f"(cache: {cached_algo}, calibrator: {algo_name}); calibrating again.")
        else:
            _log(logger, Severity.INFO, f"Reading Calibration Cache for calibrator: {algo_name}")
            if version != CACHE_VERSION:
                _log(logger, Severity.INFO, f"The calibration cache was written by TensorRT version {version}; "
                     f"trtlite reads it as version {CACHE_VERSION}.")
            thresholds = {n: s * 127.0 for n, s in scales.items()}
            _apply(network, thresholds, logger, "calibration cache")
            _log(logger, Severity.INFO, "Generated calibration scales using calibration cache. Make sure that "
                 "calibration cache has latest scales.")
            return thresholds

    t_start = time.perf_counter()
    quantile = 1.0
    stats: Optional[Dict[str, _Stats]] = None
    if algo == CalibrationAlgoType.LEGACY_CALIBRATION:
        quantile = float(_call(cal, "get_quantile"))
        cutoff = float(_call(cal, "get_regression_cutoff"))
        if not 0.0 < quantile <= 1.0:
            raise InvalidArgumentError(f"INT8 calibrator {type(cal).__name__}.get_quantile() returned {quantile}; "
                                       f"expected a value in (0, 1]")
        if not 0.0 <= cutoff <= 1.0:
            raise InvalidArgumentError(f"INT8 calibrator {type(cal).__name__}.get_regression_cutoff() returned "
                                       f"{cutoff}; expected a value in [0, 1]")
        stats = _read_histogram_cache(cal)
        if stats is not None:
            _log(logger, Severity.INFO, "Reading Histogram Cache for calibrator: LegacyCalibration")
    if stats is None:
        stats = _collect(builder, network, cal, algo, build_calibration_engine, logger, monitor, profile)
        if algo == CalibrationAlgoType.LEGACY_CALIBRATION:
            data = _histogram_cache(stats)
            _call(cal, "write_histogram_cache", data, len(data))

    t_post = time.perf_counter()
    thresholds = {n: float(_threshold(st, algo, quantile)) for n, st in stats.items()}
    _log(logger, Severity.INFO, f"  Post Processing Calibration data in {time.perf_counter() - t_post:.6g} seconds.")
    _log(logger, Severity.INFO, f"Calibration completed in {time.perf_counter() - t_start:.6g} seconds.")
    scales = [(n, np.float32(t) / np.float32(127.0)) for n, t in thresholds.items()]
    _apply(network, thresholds, logger, "calibration")
    header = f"TRT-{CACHE_VERSION}-{algo_name}"
    _log(logger, Severity.INFO, f"Writing Calibration Cache for calibrator: {header}")
    # A memoryview as TensorRT passes a buffer object: polygraphy's calibrator calls cache.tobytes().
    _call(cal, "write_calibration_cache", memoryview(format_calibration_cache(algo, scales)))
    return thresholds


# ---- hooks used by trt.Builder ---------------------------------------------------------------

def _calibrator_for(config: Any) -> Any:
    try:
        if not config.get_flag(BuilderFlag.INT8):
            return None
        return config.int8_calibrator
    except (AttributeError, TypeError):
        return None


def before_build(builder: Any, network: Any, config: Any, build_calibration_engine: Callable[[], Any]) -> None:
    """Calibrate before build_engine/build_serialized_network when `config` has INT8 and a calibrator."""
    cal = _calibrator_for(config)
    if cal is None:
        return
    monitor = getattr(config, "progress_monitor", None)

    def build() -> Any:
        # the user's progress monitor follows the real build only
        if monitor is not None:
            config.progress_monitor = None
        try:
            return build_calibration_engine()
        finally:
            if monitor is not None:
                config.progress_monitor = monitor

    get_profile = getattr(config, "get_calibration_profile", None)
    calibrate(builder, network, cal, build, builder.logger, monitor, get_profile() if get_profile else None)


def before_build_cuda_engine(builder: Any, network: Any, build_calibration_engine: Callable[[], Any]) -> None:
    """TensorRT 7: calibrate before build_cuda_engine when builder.int8_mode and builder.int8_calibrator."""
    cal = builder.int8_calibrator
    if not builder.int8_mode or cal is None:
        return
    calibrate(builder, network, cal, build_calibration_engine, builder.logger)
