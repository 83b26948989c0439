"""trt.OnnxParser: TensorRT's ONNX parser API (parse, parse_from_file, supports_model, the error list) over the
model importer.  One parse gets one ImporterContext; errors are kept here until clear_errors()."""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

from .._enums import Severity
from . import (loading, model_importer, ops_activation, ops_constant, ops_conv, ops_elementwise, ops_matmul, ops_norm,
               ops_pool, ops_reduce, ops_resize, ops_shape, ops_slice, ops_quant)
from .constants import FOLDABLE
from .context import ImporterContext
from .errors import ErrorCode, Fail, ParserError, bad_name
from .ops_plugin import find_creator
from .registry import IMPORTERS, MIN_OPSET

# The importer modules: importing them fills the registry (each registers its ops).
IMPORTER_MODULES = (ops_activation, ops_constant, ops_conv, ops_elementwise, ops_matmul, ops_norm, ops_pool, ops_reduce,
                    ops_resize, ops_shape, ops_slice, ops_quant)

# Importers added for ONNX's backend test suite (tests/test_onnx_backend.py).
from . import ops_attention, ops_grid_sample, ops_loss, ops_misc, ops_rnn, ops_scatter  # noqa: E402
from . import ops_bitwise, ops_geometry, ops_qlinear, ops_text  # noqa: E402
IMPORTER_MODULES += (ops_bitwise, ops_geometry, ops_qlinear, ops_text)
IMPORTER_MODULES += (ops_attention, ops_grid_sample, ops_loss, ops_misc, ops_rnn, ops_scatter)
from . import ops_control  # noqa: E402  (If, Loop, Scan)
IMPORTER_MODULES += (ops_control,)
from . import ops_data_dependent  # noqa: E402  (NonZero, NonMaxSuppression)
IMPORTER_MODULES += (ops_data_dependent,)
from . import ops_sequence  # noqa: E402  (sequences while parsing, optionals of tensors)
IMPORTER_MODULES += (ops_sequence,)


class OnnxParser:
    """trt.OnnxParser(network, logger): parses ONNX models into an explicit-batch network."""

    def __init__(self, network: Any, logger: Any) -> None:
        loading.import_onnx()
        self.network = network
        self.logger = logger
        self._errors: List[ParserError] = []
        self._ctx: Optional[ImporterContext] = None  # the parse in progress (names the node in internal errors)
        # TensorRT's ONNX parser registers the built-in plugin library when it is created, so that a
        # custom node finds e.g. Adder2d_TRT without the caller's init_libnvinfer_plugins.  Registering is
        # idempotent and silent (creators already there are skipped); no logger is passed, since that
        # would make this parser's logger the plugin registry's for the whole process.
        try:
            from ..plugins import init_libnvinfer_plugins
            init_libnvinfer_plugins(None, "")
        except Exception as e:  # the parser works without them; custom nodes then report the missing plugin
            self._log(Severity.WARNING, "ONNX parser: cannot register the built-in plugins: %s" % (e,))

    # ---- TensorRT API --------------------------------------------------------------------------------------

    def __enter__(self) -> "OnnxParser":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    @property
    def num_errors(self) -> int:
        """Number of errors recorded since the parser was made (or clear_errors)."""
        return len(self._errors)

    def get_error(self, index: int) -> Optional[ParserError]:
        """Error `index` (0 .. num_errors - 1), or None."""
        if 0 <= index < len(self._errors):
            return self._errors[index]
        return None

    def clear_errors(self) -> None:
        """Forgets the recorded errors."""
        self._errors = []

    def supports_operator(self, op_name: str) -> bool:
        """True when ops named `op_name` (default domain) have a mapping or a registered plugin creator."""
        if op_name in IMPORTERS or op_name in FOLDABLE:
            return True
        return find_creator(op_name, "", {}) is not None

    def parse(self, model: Any, path: Optional[str] = None) -> bool:
        """Parses a serialized ModelProto (bytes-like).  `path`: the model file's path, for initializers
        stored as external data (they are read relative to its folder)."""
        return self._parse_held([model], path)

    def _parse_held(self, held: List[Any], path: Optional[str]) -> bool:
        """parse() of the model bytes in the one-element list `held`, which this call empties: the bytes and then
        the decoded model are referenced only from here on, so each can be freed as soon as it is used up
        (parse_from_file's bytes after decoding; the protobuf's weight data once copied into numpy arrays)."""
        loading.import_onnx()  # outside the catch-all: a missing onnx package is the caller's ImportError
        self._ctx = None
        try:
            return self._parse(held, path)
        except Exception as e:
            # Whatever a model triggers, parse() reports it as a parser error and returns False, as
            # TensorRT's parser does: a bug must never reach the caller as a raw traceback.
            self._internal_error(e)
            return False
        finally:
            self._ctx = None

    def _internal_error(self, e: BaseException) -> None:
        """Records an exception that escaped the importers, naming the node being imported (if any)."""
        node = self._ctx._node if self._ctx is not None else None
        idx = self._ctx._node_idx if node is not None else -1
        code = ErrorCode.MEM_ALLOC_FAILED if isinstance(e, MemoryError) else ErrorCode.INTERNAL_ERROR
        what = "importing this node" if idx >= 0 else "parsing the graph"
        try:
            text = str(e)
        except Exception:  # an exception that cannot even print itself
            text = "(no message)"
        desc = "unexpected %s while %s: %s (a bug in trtlite's ONNX parser; please report it with the model)" \
            % (type(e).__name__, what, text)
        try:
            self._error(code, desc, idx, node.name if idx >= 0 else "", node.op_type if idx >= 0 else "", "parse")
        except Exception:  # the report itself must not raise either
            self._errors.append(ParserError(code, "unexpected %s" % type(e).__name__))

    def _parse(self, held: List[Any], path: Optional[str]) -> bool:
        try:
            held.append(loading.decode_model(held.pop()))  # the bytes go once decoded (unless the caller holds them)
        except Fail as e:
            self._error(e.code, str(e))
            return False
        return self._parse_proto(held, loading.base_dir_of(path))

    def parse_from_file(self, model: str) -> bool:
        """Parses the model in file `model`; initializers in external data files are read relative to it."""
        try:
            with open(model, "rb") as f:
                data = f.read()
        except OSError as e:
            self._error(ErrorCode.INVALID_VALUE, "cannot read model file '%s': %s" % (model, e))
            return False
        held = [data]
        del data  # only `held` references the bytes: decoding frees them
        return self._parse_held(held, model)

    def supports_model(self, model: Any, path: Optional[str] = None) -> Tuple[bool, List[Tuple[List[int], bool]]]:
        """(all ops supported, [(node indices, supported)]) -- a static check of the ops only."""
        onnx = loading.import_onnx()
        proto = onnx.ModelProto()
        try:
            proto.ParseFromString(bytes(model))
            if any(bad_name(n.op_type) or bad_name(n.domain) for n in proto.graph.node):
                return False, []
        except Exception:
            return False, []
        groups: List[Tuple[List[int], bool]] = []
        for i, n in enumerate(proto.graph.node):
            ok = (n.domain in ("", "ai.onnx") and (n.op_type in IMPORTERS or n.op_type in FOLDABLE)) or \
                find_creator(n.op_type, n.domain, {}) is not None
            if groups and groups[-1][1] == ok:
                groups[-1][0].append(i)
            else:
                groups.append(([i], ok))
        return all(g[1] for g in groups), groups

    # ---- errors and logging -----------------------------------------------------------------------------

    def _log(self, severity: Severity, msg: str) -> None:
        try:
            self.logger.log(severity, msg)
        except Exception:
            pass

    def _error(self, code: ErrorCode, desc: str, node: int = -1, node_name: str = "", op: str = "",
               func: str = "") -> None:
        err = ParserError(code, desc, node, node_name, op, func)
        self._errors.append(err)
        self._log(Severity.ERROR, "ONNX parser: %s" % err)

    # ---- model level ------------------------------------------------------------------------------------

    def _parse_proto(self, held: List[Any], base_dir: Optional[str]) -> bool:
        if self.network.has_implicit_batch_dimension:
            self._error(ErrorCode.UNSUPPORTED_GRAPH, "the ONNX parser needs an explicit-batch network: create it "
                        "with 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)")
            return False
        try:
            model, opset, opsets = loading.prepare_model(held.pop())
        except Fail as e:
            self._error(e.code, str(e))
            return False
        if opset < MIN_OPSET:
            self._log(Severity.WARNING, "ONNX parser: the model's opset %d is older than %d, the oldest this parser "
                      "is tested with; importing it with the newer operator definitions" % (opset, MIN_OPSET))
        ctx = self._ctx = ImporterContext(self.network, self.logger, self._error, model, opset, opsets, base_dir)
        del model  # ctx._model is the only reference: import_graph replaces it by a copy without weight data
        try:
            ok = model_importer.import_graph(ctx)
        finally:
            ctx.apply_layer_names()
        if ok:
            from .refitter import record_weight_names
            record_weight_names(ctx)
        return ok
