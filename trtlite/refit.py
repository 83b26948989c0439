"""trt.Refitter: new weights for an engine built with ``BuilderFlag.REFIT``, without rebuilding it.

    config.set_flag(trt.BuilderFlag.REFIT)
    engine = builder.build_engine(network, config)
    refitter = trt.Refitter(engine, logger)
    refitter.set_weights("conv1", trt.WeightsRole.KERNEL, new_kernel)
    refitter.set_weights("conv1", trt.WeightsRole.BIAS, new_bias)
    assert refitter.refit_cuda_engine()

The engine keeps each convolution, deconvolution, fully connected and scale layer's float32 weights in its node
(the builder skips the passes that would fold or quantize them), and refitting re-runs the node's kernel weight
preparation (packed GEMM panels, Winograd filters, bf16/fp16 copies) -- csrc/engine/refit.c.  Refittable:
KERNEL and BIAS of convolution, deconvolution and fully connected layers, SHIFT and SCALE of scale layers (each
when built non-empty), and CONSTANT: every FLOAT constant of more than one element that a layer of the engine
reads (a MatMul's or Gemm's weights, a bias added, an embedding table; one-element constants are not refittable:
builder passes copy their value into the layers using them).  A constant is named by its constant layer's name
or its tensor's (``set_weights("W/const", trt.WeightsRole.CONSTANT, w)``); constants the builder computed from
others (constant folding) are not refittable.  ``set_weights`` checks the layer, role and count at once (an
exception naming them, where TensorRT returns False); ``refit_cuda_engine`` applies every weight set so far.
As in TensorRT, the weights given are held by reference, not copied: each ``refit_cuda_engine`` reads their
values then (float32 arrays and ``trt.Weights(trt.DataType.FLOAT, ptr, count)`` at that address; other dtypes
are converted when set), so weights set once at an address are read again at every refit (NVIDIA's
engine_refit_onnx_bidaf sample sets them once and copies new values there before each refit).  Names:
``get_all_weights`` lists ``"<layer>/<ROLE>"`` (a constant's tensor for its layer) and the names of ONNX
initializers (``"conv1.weight"``, as TensorRT names a parsed engine's weights), which ``set_named_weights`` and
``get_weights_prototype`` take: the parser records them in the network, the engine keeps them and so do its plans
(version 7), so a deserialized engine finds them in any process.  No context of the engine may execute while it
is refitted (as in TensorRT); contexts use the new weights from their next run.  A refitted engine serializes
with its new weights.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from . import _C
from ._enums import DataType, _TrtEnum
from ._types import Weights

__all__ = ["WeightsRole", "Refitter"]


# ONNX initializer name -> [(layer, role)] of the layers the ONNX parser gave those weights unchanged, from every
# parse in this process (trtlite/onnx/refitter.py: record_weight_names).  TensorRT names a parsed engine's
# weights after its initializers; trtlite's plans carry no such names, so they are known where the model was
# parsed.
_ONNX_WEIGHT_NAMES: Dict[str, List[Tuple[str, int]]] = {}


def register_weight_name(name: str, layer: str, role: int) -> None:
    """Records that weights `name` (an ONNX initializer) are (layer, role) of the networks parsed from it."""
    entries = _ONNX_WEIGHT_NAMES.setdefault(name, [])
    if (layer, int(role)) not in entries:
        entries.append((layer, int(role)))


class WeightsRole(_TrtEnum):
    """Which weights of a layer (TensorRT's values)."""
    KERNEL = 0
    BIAS = 1
    SHIFT = 2
    SCALE = 3
    CONSTANT = 4
    ANY = 5


def _values(weights: Any, what: str) -> np.ndarray:
    if isinstance(weights, Weights):
        arr = weights.numpy() if weights.size else np.zeros(0, np.float32)
    else:
        arr = np.asarray(weights)
    if arr.dtype not in (np.float32, np.float16, np.float64):
        raise TypeError(f"{what}: weights must be float32 (or float16/float64, converted), not {arr.dtype}")
    if arr.dtype == np.float64:
        with np.errstate(over="ignore"):
            out = arr.astype(np.float32)
        if np.any(np.isfinite(arr) & ~np.isfinite(out)):
            raise ValueError(f"{what}: float64 values out of float32's range")
        arr = out
    return np.ascontiguousarray(arr, dtype=np.float32).reshape(-1)


class _Prototype:
    """get_weights_prototype's answer: a FLOAT type and a count, no values."""

    def __init__(self, count: int) -> None:
        self.dtype = DataType.FLOAT
        self.size = int(count)
        self.nbytes = 4 * self.size


class Refitter:
    """Updates the weights of an engine built with BuilderFlag.REFIT (TensorRT's trt.Refitter)."""

    def __init__(self, engine: Any, logger: Any) -> None:
        if not isinstance(engine, _C.ICudaEngine):
            raise TypeError(f"Refitter: engine must be an ICudaEngine, not {type(engine).__name__}")
        if not engine.refittable:
            raise _C.StateError("Refitter: the engine was not built with BuilderFlag.REFIT (build it with "
                                "config.set_flag(trt.BuilderFlag.REFIT) to refit its weights)")
        self._engine = engine
        self.logger = logger
        self.max_threads = 1
        self.weights_validation = True
        self.error_recorder = None
        # (engine layer, role) -> the weights given (held by reference; refit_cuda_engine reads them)
        self._given: Dict[Tuple[str, int], Tuple[Any, str]] = {}

    def _all(self) -> List[Tuple[str, int, int]]:
        return _C._refit_info(self._engine)

    def get_all(self) -> Tuple[List[str], List[WeightsRole]]:
        """(layer names, roles) of every refittable weights."""
        info = self._all()
        return [n for n, _, _ in info], [WeightsRole(r) for _, r, _ in info]

    def _engine_names(self) -> Dict[str, List[Tuple[str, int]]]:
        """Weights name -> [(layer, role)] as the engine records them (the ONNX parser's initializer names; plans
        keep them, so a deserialized engine knows them in any process)."""
        names: Dict[str, List[Tuple[str, int]]] = {}
        for line in _C._refit_names(self._engine).splitlines():
            layer, role, name = line.split("\t", 2)
            names.setdefault(name, []).append((layer, int(role)))
        return names

    def get_all_weights(self) -> List[str]:
        """Names of every refittable weights: ``"<layer>/<ROLE>"``, and the names the engine records for them (an
        ONNX model's initializer names, as TensorRT names a parsed engine's weights)."""
        have = {(n, r) for n, r, _ in self._all()}
        named = [name for name, targets in self._engine_names().items() if any(t in have for t in targets)]
        return [f"{n}/{WeightsRole(r).name}" for n, r, _ in self._all()] + named

    def get_missing(self) -> Tuple[List[str], List[WeightsRole]]:
        """Weights that must be given with those set so far.  TensorRT reports the partners of weights it
        combined at build time; a refittable trtlite engine combines none, so this is always empty."""
        return [], []

    def get_missing_weights(self) -> List[str]:
        """Names of the missing weights (always empty: see get_missing)."""
        return []

    def _target(self, layer_name: str, role: int) -> str:
        """The engine's name for (layer_name, role): a constant layer's name (or an ONNX initializer's) becomes
        its tensor's, which the engine knows it by; other names are the engine's own."""
        if role == int(WeightsRole.CONSTANT):
            have = {n for n, r, _ in self._all() if r == role}
            if layer_name not in have:
                targets = [layer for layer, r in self._engine_names().get(layer_name, ()) if r == role]
                for layer in sorted(targets, key=lambda t: t not in have):
                    return layer
        return layer_name

    def set_weights(self, layer_name: str, role: WeightsRole, weights: Any) -> bool:
        """New weights for (layer, role), applied by refit_cuda_engine.  An unknown layer, a role the layer does
        not have, or a count other than the built one raises an error naming them.  The weights are held by
        reference: refit_cuda_engine reads their values (keep them alive and unchanged until then)."""
        if not isinstance(layer_name, str):
            raise TypeError(f"set_weights: layer_name must be a str, not {type(layer_name).__name__}")
        try:
            role = WeightsRole(role)
        except ValueError:
            raise ValueError(f"set_weights: layer '{layer_name}': {role!r} is not a trt.WeightsRole") from None
        if role == WeightsRole.ANY:
            raise _C.UnsupportedError(f"set_weights: layer '{layer_name}': trtlite refits KERNEL, BIAS, SHIFT, SCALE "
                                      f"and CONSTANT weights, not ANY")
        what = f"set_weights('{layer_name}', {role})"
        vals = _values(weights, what)
        target = self._target(layer_name, int(role))
        _C._refit_check(self._engine, target, int(role), int(vals.size))
        self._given[(target, int(role))] = (weights, what)
        return True

    def _onnx_targets(self, name: str) -> List[Tuple[str, int, int]]:
        """(layer, role, count) of this engine's refittable weights that ONNX initializer `name` became."""
        have = {(n, r): c for n, r, c in self._all()}
        targets = self._engine_names().get(name) or _ONNX_WEIGHT_NAMES.get(name, ())
        if not targets and (name, int(WeightsRole.CONSTANT)) in have:  # a constant's tensor name
            targets = [(name, int(WeightsRole.CONSTANT))]
        return [(layer, role, have[(layer, role)]) for layer, role in targets if (layer, role) in have]

    def set_named_weights(self, name: str, weights: Any, location: Any = None) -> bool:
        """set_weights by name: an ONNX initializer's name, as TensorRT names the weights of an engine built
        through trt.OnnxParser (``"conv1.weight"``, ``"W_0"``: every layer or constant that took that initializer
        unchanged; the engine and its plans keep the names), a constant layer's name, or a name from
        get_all_weights (``"<layer>/<ROLE>"``).  The weights are held by reference, as in set_weights.  `location`
        (TensorRT 10's trt.TensorLocation.HOST or DEVICE) is accepted: both are host memory here."""
        if not isinstance(name, str):
            raise TypeError(f"set_named_weights: the name must be a str, not {type(name).__name__}")
        targets = self._onnx_targets(name)
        if targets:
            vals = _values(weights, f"set_named_weights('{name}')")
            for layer, role, _ in targets:
                self.set_weights(layer, WeightsRole(role), vals)
            return True
        layer, _, role = name.rpartition("/")
        if not layer:
            raise ValueError(f"set_named_weights: {name!r} is not a name get_all_weights() gives (\"<layer>/<ROLE>\") "
                             f"nor the name of an ONNX initializer or constant layer that became refittable "
                             f"weights of this engine")
        if role not in WeightsRole.__members__:
            raise ValueError(f"set_named_weights: '{name}': '{role}' is not a WeightsRole name")
        return self.set_weights(layer, WeightsRole[role], weights)

    def get_weights_prototype(self, name: str) -> "_Prototype":
        """Empty FLOAT Weights whose `size` is the count the engine holds for weights `name` (as TensorRT's
        prototype, which carries type and count but no values)."""
        if isinstance(name, str) and self._onnx_targets(name):
            return _Prototype(self._onnx_targets(name)[0][2])
        if not isinstance(name, str) or "/" not in name:
            raise ValueError(f"get_weights_prototype: {name!r} is not a name get_all_weights() gives "
                             f"(\"<layer>/<ROLE>\") nor an ONNX initializer of this engine's refittable weights")
        for n, r, count in self._all():
            if f"{n}/{WeightsRole(r).name}" == name:
                return _Prototype(count)
        raise _C.NotFoundError(f"get_weights_prototype: no refittable weights '{name}' (see get_all_weights())")

    def refit_cuda_engine(self) -> bool:
        """Applies every weights set so far, reading their values now (each layer's kernel prepares them again);
        True.  Weights stay set: a later refit reads them again (weights at an address refit what is there)."""
        for (layer, role), (weights, what) in self._given.items():
            _C._refit_apply(self._engine, layer, role, _values(weights, what))
        return True

    def refit_cuda_engine_async(self, stream: int = 0) -> bool:
        """refit_cuda_engine (no streams on the CPU)."""
        return self.refit_cuda_engine()

    def __enter__(self) -> "Refitter":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None
