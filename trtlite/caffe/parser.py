"""trt.CaffeParser: TensorRT's Caffe parser API (parse, parse_buffer, parse_binary_proto, plugin_factory_v2,
plugin_namespace, protobuf_buffer_size) over the importer, and IBlobNameToTensor, the map parse returns."""
from __future__ import annotations

import logging
import os
from typing import Any, Dict, Iterator, Optional

import numpy as np

from .._enums import DataType, Severity
from .context import ImportContext
from .errors import CaffeParserError
from .importer import import_net
from .reader import read_deploy, read_file, read_mean, read_weights

_LOG = logging.getLogger("trtlite.caffe")
DEFAULT_BUFFER_SIZE = (1 << 31) - 1  # TensorRT's default protobuf limit (2 GiB - 1)


class IBlobNameToTensor:
    """What CaffeParser.parse returns: Caffe blob name -> the network tensor that holds it."""

    def __init__(self, blobs: Dict[str, Any]) -> None:
        self._blobs = dict(blobs)

    def find(self, name: str) -> Any:
        """The tensor of blob `name`, or None when the deploy file has no such blob."""
        return self._blobs.get(name)

    def __getitem__(self, name: str) -> Any:
        return self._blobs[name]

    def __contains__(self, name: object) -> bool:
        return name in self._blobs

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)

    def __repr__(self) -> str:
        return "IBlobNameToTensor(%s)" % ", ".join(self._blobs)


class CaffeParser:
    """trt.CaffeParser(): imports a Caffe model -- a deploy prototxt and a .caffemodel -- into a network.

    trtlite's parser is pure Python on the optional ``protobuf`` package (``pip install trtlite[caffe]``).  Beyond
    TensorRT, ``CaffeParser(logger)`` takes a logger for its warnings and errors (default: Python's logging,
    logger 'trtlite.caffe').  Failures raise CaffeParserError naming the layer and its type (TensorRT's parser
    logs and returns None; trtlite logs too, then raises).  See docs/caffe.md for the layers and their mapping."""

    def __init__(self, logger: Any = None) -> None:
        self.logger = logger
        self.plugin_factory_v2: Any = None
        self.plugin_namespace: str = ""
        self.protobuf_buffer_size: int = DEFAULT_BUFFER_SIZE
        # SSD's layers become the built-in plugins: register them, as the ONNX parser does (idempotent and silent;
        # no logger is passed, which would make this parser's logger the registry's for the whole process).
        try:
            from ..plugins import init_libnvinfer_plugins
            init_libnvinfer_plugins(None, "")
        except Exception as e:  # the parser works without them; SSD layers then name the missing plugin
            self._log(Severity.WARNING, "Caffe parser: cannot register the built-in plugins: %s" % (e,))

    def __enter__(self) -> "CaffeParser":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    # ---- TensorRT API --------------------------------------------------------------------------------------

    def parse(self, deploy: str, model: Optional[str], network: Any, dtype: Any = DataType.FLOAT) -> IBlobNameToTensor:
        """Parses the deploy prototxt at path `deploy` and the weights at path `model` (a .caffemodel) into
        `network`; returns the blob-name -> tensor map (mark outputs with network.mark_output(map.find(name))).
        `dtype`: trt.float32 or trt.float16 (weights are kept float32; trt.BuilderFlag.FP16 picks the precision)."""
        self._check(network, dtype)
        text = self._read(deploy, "deploy file")
        weights = self._read(model, "model file") if model is not None else None
        return self._parse(text, weights, network, str(deploy), str(model))

    def parse_buffer(self, deploy_buffer: Any, model_buffer: Any, network: Any,
                     dtype: Any = DataType.FLOAT) -> IBlobNameToTensor:
        """As parse, from the deploy prototxt's text and the .caffemodel's bytes in memory."""
        self._check(network, dtype)
        weights = None if model_buffer is None else bytes(model_buffer)
        if weights is not None and len(weights) > self.protobuf_buffer_size:
            raise self._error("the model buffer is larger than protobuf_buffer_size (%d bytes)"
                              % self.protobuf_buffer_size)
        return self._parse(deploy_buffer, weights, network, "deploy buffer", "model buffer")

    def parse_binary_proto(self, filename: str) -> np.ndarray:
        """The mean image of a .binaryproto file (a BlobProto) as a float32 array of its shape ([1, C, H, W] for
        Caffe's compute_image_mean output)."""
        try:
            return read_mean(self._read(filename, "mean file"), str(filename))
        except CaffeParserError as e:
            self._log(Severity.ERROR, str(e))
            raise

    # ---- helpers -------------------------------------------------------------------------------------------

    def _parse(self, text: Any, weights: Optional[bytes], network: Any, dname: str, mname: str) -> IBlobNameToTensor:
        try:
            net = read_deploy(text, dname, lambda m: self._log(Severity.WARNING, m))
            w = read_weights(weights, mname) if weights is not None else {}
            if weights is None:
                self._log(Severity.INFO, "no model given: every layer with weights must carry them in the "
                                         "prototxt ('blobs')")
            ctx = ImportContext(network, w, lambda m: self._log(Severity.WARNING, m), self.plugin_factory_v2,
                                self.plugin_namespace)
            import_net(ctx, net)
            return IBlobNameToTensor(ctx.blobs)
        except CaffeParserError as e:
            self._log(Severity.ERROR, str(e))
            raise
        except Exception as e:  # the network refused a layer (or a bug here): an error naming the layer all the same
            layer = getattr(locals().get("ctx"), "layer", None)
            kind = "" if isinstance(e, (ValueError, TypeError, RuntimeError)) else "internal error (%s): " \
                % type(e).__name__
            err = CaffeParserError("%s%s" % (kind, "%s: %s" % (layer, e) if layer is not None else e))
            self._log(Severity.ERROR, str(err))
            raise err from e

    def _read(self, path: Any, what: str) -> bytes:
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise self._error("the %s must be a path, got %s" % (what, type(path).__name__))
        try:
            return read_file(path, what, self.protobuf_buffer_size)
        except CaffeParserError as e:
            self._log(Severity.ERROR, str(e))
            raise

    def _check(self, network: Any, dtype: Any) -> None:
        from .._C import INetworkDefinition
        if not isinstance(network, INetworkDefinition):
            raise self._error("network must be a trt.INetworkDefinition, got %s" % type(network).__name__)
        if dtype not in (DataType.FLOAT, DataType.HALF):
            raise self._error("dtype must be trt.float32 or trt.float16, got %s" % (dtype,))

    def _error(self, msg: str) -> CaffeParserError:
        self._log(Severity.ERROR, msg)
        return CaffeParserError(msg)

    def _log(self, severity: Any, msg: str) -> None:
        if self.logger is not None:
            self.logger.log(severity, msg)
        else:
            level = {Severity.INTERNAL_ERROR: logging.CRITICAL, Severity.ERROR: logging.ERROR,
                     Severity.WARNING: logging.WARNING, Severity.INFO: logging.INFO}.get(severity, logging.DEBUG)
            _LOG.log(level, msg)


def shutdown_protobuf_library() -> None:
    """TensorRT's hook to free libprotobuf's global state; nothing to free for Python's protobuf (a no-op kept for
    scripts that call it)."""
    return None
