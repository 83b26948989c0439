"""trt.OnnxParserRefitter: refits an engine from the initializers of an ONNX model (TensorRT 10's API).

    refitter = trt.Refitter(engine, logger)
    parser_refitter = trt.OnnxParserRefitter(refitter, logger)
    assert parser_refitter.refit_from_file("model_v2.onnx")
    assert refitter.refit_cuda_engine()

The model must be the one the engine was built from, with other weight values.  TensorRT names a weight after its
ONNX initializer; trtlite names it ``"<layer>/<ROLE>"`` and the importers may reshape or transpose an initializer
on its way into a layer (Gemm's transB, Conv's 1-D form, a MatMul by a constant, ...).  So the model is imported
again, by the same importers, into a scratch network: its layers carry the same names as the engine's (they come
from the node names and positions), and each refittable (layer, role) of the engine takes the weights of its
namesake there, exactly as the build would have.  A refittable layer missing from the model, or weights of
another size, are errors (``get_error``), as are parse errors; ``refit_from_*`` then returns False and sets
nothing.  Weights are set on the Refitter; ``refit_cuda_engine`` applies them, as in TensorRT.

Only the weights trtlite's engines can refit are set: convolution, deconvolution, fully connected and scale
layers' (trt.Refitter).  Initializers that became constant layers (a Gemm's or MatMul's weights, which the
parser imports as a constant times a matrix multiply) keep their built values: TensorRT refits those too
(WeightsRole.CONSTANT), trtlite's Refitter does not.
"""
from __future__ import annotations

import os
from typing import Any, List, Optional

import numpy as np

from .errors import ErrorCode, ParserError
from .parser import OnnxParser

# (engine weight role, layer property holding those weights in the network)
_ROLE_PROPERTY = {0: "kernel", 1: "bias", 2: "shift", 3: "scale"}


class OnnxParserRefitter:
    """Sets a Refitter's weights from an ONNX model's initializers (TensorRT 10's trt.OnnxParserRefitter)."""

    def __init__(self, refitter: Any, logger: Any) -> None:
        from ..refit import Refitter
        if not isinstance(refitter, Refitter):
            raise TypeError("OnnxParserRefitter: refitter must be a trt.Refitter, not %s" % type(refitter).__name__)
        self._refitter = refitter
        self.logger = logger
        self._errors: List[ParserError] = []

    # ---- TensorRT's accessors -------------------------------------------------------------------------------

    def get_num_errors(self) -> int:
        """Errors of the last refit_from_file / refit_from_bytes."""
        return len(self._errors)

    @property
    def num_errors(self) -> int:
        """Errors of the last refit_from_file / refit_from_bytes."""
        return len(self._errors)

    def get_error(self, index: int) -> ParserError:
        """Error `index` (0 .. get_num_errors() - 1) of the last refit."""
        if not 0 <= int(index) < len(self._errors):
            raise IndexError("OnnxParserRefitter.get_error: index %d out of range (%d errors)"
                             % (int(index), len(self._errors)))
        return self._errors[int(index)]

    def clear_errors(self) -> None:
        """Forgets the recorded errors."""
        self._errors = []

    # ---- refitting ------------------------------------------------------------------------------------------

    def refit_from_file(self, path: str) -> bool:
        """refit_from_bytes with the contents of the ONNX file at `path` (external data read beside it)."""
        self._errors = []
        try:
            with open(os.fspath(path), "rb") as f:
                data = f.read()
        except OSError as e:
            self._errors.append(ParserError(ErrorCode.MODEL_DESERIALIZE_FAILED, "cannot read '%s': %s" % (path, e)))
            return False
        return self._refit(data, os.fspath(path))

    def refit_from_bytes(self, model: Any, path: Optional[str] = None) -> bool:
        """Sets the refitter's weights from a serialized ModelProto (bytes-like; `path` for external data).  True
        when every refittable weight of the engine was found and set; False with errors (and nothing set)
        otherwise."""
        self._errors = []
        return self._refit(model, path)

    def _refit(self, model: Any, path: Optional[str]) -> bool:
        from .. import Builder, _C
        from ..refit import WeightsRole
        engine = self._refitter._engine
        builder = Builder(self.logger)
        network = builder.create_network(0)
        parser = OnnxParser(network, self.logger)
        if not parser.parse(model, path):
            self._errors = [parser.get_error(i) for i in range(parser.num_errors)]
            return False
        layers = {}
        for i in range(network.num_layers):
            layer = network.get_layer(i)
            layers[layer.name] = layer
        found = []
        for name, role, count in _C._refit_info(engine):
            layer = layers.get(name)
            prop = _ROLE_PROPERTY.get(int(role))
            what = "weights '%s/%s'" % (name, WeightsRole(role).name)
            if layer is None or prop is None or not hasattr(layer, prop):
                self._errors.append(ParserError(ErrorCode.REFIT_FAILED, "%s of the engine: the model has no layer "
                                                "'%s' with such weights (is it the model the engine was built "
                                                "from?)" % (what, name)))
                continue
            w = getattr(layer, prop)
            w = np.asarray(w.numpy() if hasattr(w, "numpy") else w, dtype=np.float32).reshape(-1)
            if w.size != count:
                self._errors.append(ParserError(ErrorCode.REFIT_FAILED, "%s: the model gives %d values, the "
                                                "engine holds %d" % (what, w.size, count)))
                continue
            found.append((name, WeightsRole(role), w))
        if self._errors:
            return False
        for name, role, w in found:
            self._refitter.set_weights(name, role, w)
        return True


def record_weight_names(ctx: Any) -> None:
    """After a parse: the initializers that became a refittable layer's weights unchanged (Conv's W and B, ...),
    registered as TensorRT names them (``Refitter.set_named_weights("conv1.weight", ...)``; trtlite/refit.py).
    Only initializers among the inputs of the node a layer was imported for are matched, by their values, so
    weights the importer transformed (transposed, folded with a BatchNormalization, ...) keep only their
    ``"<layer>/<ROLE>"`` names."""
    from .. import _C
    from ..refit import register_weight_name
    for layer, node in ctx._weight_layers:
        inits = [n for n in node.input if n in ctx._consts and n not in ctx._tensors]
        if not inits:
            continue
        for role, prop in _ROLE_PROPERTY.items():
            try:
                w = getattr(layer, prop)
            except AttributeError:
                continue
            arr = w.numpy() if hasattr(w, "numpy") else np.asarray(w)
            if arr.size == 0 or arr.dtype.kind != "f":
                continue
            arr = np.asarray(arr, np.float32).reshape(-1)
            for name in inits:
                c = ctx._consts[name]
                if c.dtype.kind == "f" and c.size == arr.size and np.array_equal(
                        np.asarray(c, np.float32).reshape(-1), arr):
                    register_weight_name(name, layer.name, role)
                    try:  # kept in the engine and its plans; a name with a tab or newline stays unrecorded
                        _C._network_add_weights_name(ctx.network, layer.name, role, name)
                    except _C.InvalidArgumentError:
                        pass
                    break

