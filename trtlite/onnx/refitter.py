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
layers', and FLOAT constants of more than one element (WeightsRole.CONSTANT: a Gemm's or MatMul's weights, which
the parser imports as a constant times a matrix multiply, biases, embedding tables), each matched to the constant
layer of the same output tensor in the scratch network.  Constants the builder computed from others (constant
folding) have no namesake there and keep their built values (a warning names them).
"""
from __future__ import annotations

import os
from typing import Any, List, Optional

import numpy as np

from .._enums import LayerType, Severity
from .errors import ErrorCode, ParserError
from .parser import OnnxParser

# (engine weight role, layer property holding those weights in the network)
_CONSTANT = 4
_ROLE_PROPERTY = {0: "kernel", 1: "bias", 2: "shift", 3: "scale", _CONSTANT: "weights"}


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
        layers, constants = {}, {}
        for i in range(network.num_layers):
            layer = network.get_layer(i)
            layers[layer.name] = layer
            if layer.type == LayerType.CONSTANT:
                constants[layer.get_output(0).name] = layer
        found = []
        for name, role, count in _C._refit_info(engine):
            if role == _CONSTANT and name not in constants:
                # computed at build time from the model's constants (constant folding): not refittable here
                if hasattr(self.logger, "log"):
                    self.logger.log(Severity.WARNING, "OnnxParserRefitter: constant '%s' of the engine was computed "
                                    "at build time (constant folding); it keeps its built values" % name)
                continue
            layer = constants.get(name) if role == _CONSTANT else layers.get(name)
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
    """After a parse: the initializers that became a refittable layer's weights or a constant unchanged (Conv's W
    and B, a MatMul's weights, a bias reshaped to broadcast, ...), registered as TensorRT names them
    (``Refitter.set_named_weights("conv1.weight", ...)``; trtlite/refit.py).  Only initializers among the inputs of
    the node a layer was imported for are matched, by their values in order, so weights the importer transformed
    (transposed, folded with a BatchNormalization, ...) keep only their ``"<layer>/<ROLE>"`` names.  A constant is
    recorded under its output tensor's name, which the engine knows it by."""
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
            if arr.size <= (1 if role == _CONSTANT else 0) or arr.dtype.kind != "f":
                continue
            arr = np.asarray(arr, np.float32).reshape(-1)
            target = layer.get_output(0).name if role == _CONSTANT else layer.name
            for name in inits:
                c = ctx._consts[name]
                if c.dtype.kind == "f" and c.size == arr.size and np.array_equal(
                        np.asarray(c, np.float32).reshape(-1), arr):
                    register_weight_name(name, target, role)
                    try:  # kept in the engine and its plans; a name with a tab or newline stays unrecorded
                        _C._network_add_weights_name(ctx.network, target, role, name)
                    except _C.InvalidArgumentError:
                        pass
                    break
