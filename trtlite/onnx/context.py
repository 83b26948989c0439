"""The importer context: what one parse knows -- the network being filled, the value of every ONNX name (an
ITensor, or a numpy constant computed while parsing), the symbols of dynamic dims, the opset, and the node being
imported (which names the layers it adds).  Importers receive it as `p`."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._enums import DataType, LayerType, Severity
from .._types import Weights
from .dtypes import ML_STORAGE, to_dtype, trt_of_np
from .errors import Dynamic, ErrorCode, Fail, unsupported
from .isolated import infer_shapes as infer_shapes_isolated
from .layers import LayerBuilder
from .shape_eval import Sym, has_sym, infer_keys, normalize


# The largest tensor trtlite handles (elements): the bound of the network's and the engine's shape checks.
MAX_ELEMENTS = 1 << 40
# Control-flow ops and the graph attributes they need.
# onnx's data propagation walks the values of rank-0/1 tensors element by element (a Slice over a declared
# [2^31] vector runs for minutes in C++, where it cannot be interrupted): past this length it is left off.
DATA_PROP_MAX_LEN = 1 << 16
CONTROL_FLOW_BODIES = {"If": ("then_branch", "else_branch"), "Loop": ("body",), "Scan": ("body",)}


def bad_control_flow(node: Any) -> Optional[str]:
    """Why a control-flow node (If, Loop, Scan) is malformed -- a missing or non-graph body -- or None."""
    need = CONTROL_FLOW_BODIES.get(node.op_type)
    if not need or node.domain not in ("", "ai.onnx"):
        return None
    attrs = {a.name: a for a in node.attribute}
    for n in need:
        a = attrs.get(n)
        if a is None:
            return "%s has no '%s' graph attribute" % (node.op_type, n)
        if not a.HasField("g"):
            return "%s attribute '%s' is not a graph" % (node.op_type, n)
    return None


def shape_inference_hazard(model: Any) -> Optional[str]:
    """Why onnx.shape_inference must not run on `model` (it can take minutes and gigabytes on malformed or
    huge models): a malformed control-flow node, or a declared tensor past MAX_ELEMENTS elements.  None: safe."""
    g = model.graph
    for n in g.node:
        why = bad_control_flow(n)
        if why:
            return "node '%s': %s" % (n.name, why)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        vol = 1
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_value"):
                v = int(d.dim_value)
                if v < 0 or v > MAX_ELEMENTS:
                    return "tensor '%s' declares a dim of %d" % (vi.name, v)
                vol *= v
        if vol > MAX_ELEMENTS:
            return "tensor '%s' declares %d elements (more than 2^40)" % (vi.name, vol)
    for init in g.initializer:
        vol = 1
        for v in init.dims:
            vol *= max(int(v), 0)
        if vol > MAX_ELEMENTS:
            return "initializer '%s' declares %d elements (more than 2^40)" % (init.name, vol)
    return None


def data_prop_hazard(model: Any) -> Optional[str]:
    """Why onnx shape inference must run without data propagation on `model` (a declared vector longer than
    DATA_PROP_MAX_LEN), or None."""
    g = model.graph
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = vi.type.tensor_type.shape.dim
        if len(dims) == 1 and dims[0].HasField("dim_value") and dims[0].dim_value > DATA_PROP_MAX_LEN:
            return "tensor '%s' declares %d elements" % (vi.name, dims[0].dim_value)
    for init in g.initializer:
        if len(init.dims) == 1 and init.dims[0] > DATA_PROP_MAX_LEN:
            return "initializer '%s' has %d elements" % (init.name, init.dims[0])
    return None


class ImporterContext(LayerBuilder):
    """Per-parse state and the value, naming and symbolic-dim services importers use.

    `error` records a ParserError (the parser's own list); the context never raises for it.  The underscore
    methods (here and in LayerBuilder) are package-internal: the interface between the context and the
    importers of trtlite.onnx, not trtlite's public API.  One context serves one parse, on one thread."""

    def __init__(self, network: Any, logger: Any, error: Callable[..., None], model: Any, opset: int,
                 opsets: Dict[str, int], base_dir: Optional[str]) -> None:
        self.network = network
        self.logger = logger
        self._report = error
        self._opset = opset
        self._opsets = opsets
        self._model = model
        self._base_dir = base_dir
        self._tensors: Dict[str, Any] = {}
        self._consts: Dict[str, np.ndarray] = {}
        self._const_tensors: Dict[Tuple[str, int], Any] = {}
        self._named: set = set()
        self._sym_cache: Optional[Dict[str, List[Any]]] = None
        self._msyms: Dict[str, List[Any]] = {}  # tensor -> per-dim symbol keys (ints where static)
        self._explicit_syms: Dict[int, List[Any]] = {}
        self._node_idx = -1
        self._node: Any = None
        self._seqs: Dict[str, Any] = {}  # sequence values while parsing (ops_sequence.py)
        self._weight_layers: List[Any] = []  # (layer with weights, the node it was imported for)
        self._input_names: List[str] = []
        self._node_name = ""  # layers made outside any node (graph outputs that are initializers) use these
        self._sub = 0
        self._layer_names: List[Tuple[Any, str]] = []
        self._import_node: Optional[Callable[[Any, Any], None]] = None  # set by model_importer (control-flow bodies)

    def _log(self, severity: Severity, msg: str) -> None:
        try:
            self.logger.log(severity, msg)
        except Exception:
            pass

    def _error(self, code: ErrorCode, desc: str, node: int = -1, node_name: str = "", op: str = "",
               func: str = "") -> None:
        self._report(code, desc, node, node_name, op, func)

    def apply_layer_names(self) -> None:
        """Names the layers made while parsing (deferred: see _name_layer)."""
        for layer, name in self._layer_names:
            try:
                layer.name = name
            except Exception:
                pass
        self._layer_names = []

    # ---- symbolic dims (ONNX shape inference, computed once when first needed) ------------------------------

    def _sym_dims(self, name: str) -> Optional[List[Any]]:
        if self._sym_cache is None:
            self._sym_cache = {}
            why = shape_inference_hazard(self._model)
            if why:
                self._log(Severity.VERBOSE, "ONNX parser: no ONNX shape inference (%s); dynamic dims are matched "
                          "by position only" % why)
                return None
            try:
                import onnx
                m = onnx.ModelProto()
                m.CopyFrom(self._model)
                del m.graph.initializer[:]  # inference needs no weights (and stays small)
                have = set(i.name for i in m.graph.input)
                for init in self._model.graph.initializer:
                    if init.name in have:
                        continue
                    vi = m.graph.input.add()
                    vi.name = init.name
                    vi.type.tensor_type.elem_type = init.data_type
                    for d in init.dims:
                        vi.type.tensor_type.shape.dim.add().dim_value = d
                no_prop = data_prop_hazard(self._model)
                if no_prop:
                    self._log(Severity.VERBOSE, "ONNX parser: shape inference without data propagation (%s)"
                              % no_prop)
                inferred = infer_shapes_isolated(m, data_prop=not no_prop)
                if inferred is None:
                    self._log(Severity.VERBOSE, "ONNX parser: onnx shape inference crashed, failed or timed out (in "
                              "its own process); dynamic dims are matched by position only")
                    return None
                for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
                    tt = vi.type.tensor_type
                    if not tt.HasField("shape"):
                        continue
                    dims: List[Any] = []
                    for d in tt.shape.dim:
                        if d.HasField("dim_value"):
                            dims.append(int(d.dim_value))
                        elif d.HasField("dim_param") and d.dim_param:
                            dims.append(d.dim_param)
                        else:
                            dims.append(None)
                    self._sym_cache[vi.name] = dims
            except Exception as e:
                self._log(Severity.VERBOSE, "ONNX parser: shape inference failed (%s); dynamic dims are matched "
                          "by position only" % e)
        return self._sym_cache.get(name)

    def _raw_keys(self, name: str) -> List[Any]:
        """Per-dim symbol keys of a value as tracked while parsing (ints for static dims, None unknown)."""
        if name in self._consts:
            return list(self._consts[name].shape)
        t = self._tensors.get(name)
        if t is None:
            return []
        shape = tuple(t.shape)
        keys = self._msyms.get(name)
        if keys is None or len(keys) != len(shape):
            return [d if d >= 0 else None for d in shape]
        return [d if d >= 0 else keys[j] for j, d in enumerate(shape)]

    def _key_of(self, name: str, j: int) -> Any:
        """The symbol of dim j of tensor `name` (its size if static)."""
        keys = self._raw_keys(name)
        k = keys[j] if j < len(keys) else None
        if isinstance(k, (int, str)) or (isinstance(k, tuple) and k and k[0] != "?"):
            return k
        sd = self._sym_dims(name)  # ONNX shape inference, when tracking lost the dim
        if sd and j < len(sd) and isinstance(sd[j], str):
            return sd[j]
        return k if k is not None else ("?", name, j)

    def _shape_value(self, shape: Sequence[int], name: Optional[str], a: Dict[str, Any]) -> np.ndarray:
        dims: List[Any] = []
        for j, d in enumerate(shape):
            d = int(d)
            if d >= 0:
                dims.append(d)
                continue
            key = self._key_of(name, j) if name is not None else ("?", id(shape), j)
            dims.append(Sym(key, (name, j) if name is not None else None))
        r = len(dims)
        start = int(a.get("start", 0))
        end = a.get("end")
        end = r if end is None else int(end)
        start = min(max(start + r if start < 0 else start, 0), r)
        end = min(max(end + r if end < 0 else end, 0), r)
        dims = dims[start:end]
        if any(isinstance(v, Sym) for v in dims):
            out = np.empty(len(dims), dtype=object)
            for i, v in enumerate(dims):
                out[i] = v
            return out
        return np.array(dims, dtype=np.int64)

    def _dim_is(self, sym: Any, tensor: str, axis: int) -> bool:
        """Whether symbol `sym` is certainly dim `axis` of `tensor`."""
        if not isinstance(sym, Sym):
            return False
        if sym.origin == (tensor, axis):
            return True
        return self._key_of(tensor, axis) == sym.key

    def _set_syms(self, out_index: int, keys: List[Any]) -> None:
        """An importer states the symbols of an output's dims (see _propagate)."""
        self._explicit_syms[out_index] = list(keys)

    def _propagate(self, node: Any, a: Dict[str, Any], outs: List[Any]) -> None:
        """Records which dynamic dims of the node's outputs are which input dims (for Shape -> Reshape)."""
        explicit, self._explicit_syms = self._explicit_syms, {}
        in_keys = None
        for k, (oname, v) in enumerate(zip(node.output, outs)):
            if not oname or isinstance(v, np.ndarray) or type(v).__name__ == "Seq":
                continue
            shape = tuple(v.shape)
            if all(d >= 0 for d in shape):
                continue
            if k in explicit:
                keys = explicit[k]
            else:
                if in_keys is None:
                    in_keys = [self._raw_keys(n) for n in node.input if n and (n in self._tensors or
                                                                                  n in self._consts)]
                keys = infer_keys(node, a, len(shape), in_keys)
            self._msyms[oname] = [d if d >= 0 else (keys[j] if keys and j < len(keys) and keys[j] is not None
                                                   and not isinstance(keys[j], int) else ("?", oname, j))
                                  for j, d in enumerate(shape)]

    # ---- values -------------------------------------------------------------------------------------------

    def _set(self, name: str, v: Any) -> None:
        if type(v).__name__ == "Seq":  # a sequence (ops_sequence.py): a list of tensors while parsing
            self._seqs[name] = v
            return
        if isinstance(v, np.ndarray):
            self._consts[name] = v
            self._tensors.pop(name, None)
            return
        self._tensors[name] = v
        if v.name not in self._named:
            v.name = name
            self._named.add(name)

    def _is_const(self, name: str) -> bool:
        return bool(name) and name in self._consts

    def _inp(self, node: Any, i: int) -> Optional[str]:
        return node.input[i] if i < len(node.input) and node.input[i] else None

    def _cval(self, name: Optional[str], what: str = "input", allow_sym: bool = False) -> np.ndarray:
        """The constant value of `name` (an error naming `what` if it is computed at run time)."""
        if name is None:
            raise Fail(ErrorCode.INVALID_NODE, "%s is missing" % what)
        if name not in self._consts:
            raise Fail(ErrorCode.UNSUPPORTED_NODE_INPUT, "%s '%s' must be a constant (an initializer or computed "
                       "from static shapes), but it is computed at run time" % (what, name))
        v = self._consts[name]
        if not allow_sym and has_sym(v):
            raise Dynamic("%s '%s' depends on dynamic dimensions (%s)" % (what, name, list(v.reshape(-1))))
        return v

    def _tensor(self, name: str, dtype: Optional[DataType] = None) -> Any:
        if name in self._tensors:
            t = self._tensors[name]
            return t
        if name in self._consts:
            return self._const_tensor(self._consts[name], dtype, name)
        raise Fail(ErrorCode.INVALID_GRAPH, "tensor '%s' is not defined (not a graph input, an initializer or an "
                   "output of an earlier node)" % name)

    def _const_tensor(self, arr: np.ndarray, dtype: Optional[DataType] = None, name: Optional[str] = None) -> Any:
        arr = np.asarray(arr)
        if has_sym(arr):  # computed at run time from the dims (a shape tensor)
            from .shape_tensors import sym_tensor
            return sym_tensor(self, arr)
        arr = normalize(arr)
        if dtype is None:
            dtype = trt_of_np(arr.dtype)
        key = (name, int(dtype)) if name else None
        if key is not None and key in self._const_tensors:
            return self._const_tensors[key]
        if DataType(dtype) == DataType.INT64 and arr.dtype.kind in "iu" and arr.size and \
                (int(arr.max()) > 2 ** 31 - 1 or int(arr.min()) < -2 ** 31):  # values beyond int32: INT64 weights
            layer = self.network.add_constant(arr.shape, Weights(np.asarray(arr, np.int64)))
            self._name_layer(layer, "const" if not name else None, const_name=name)
        elif DataType(dtype) == DataType.INT64:  # meeting an INT64 input kept wide: an INT32 constant cast
            layer = self.network.add_cast(self._const_tensor(arr, DataType.INT32, name), DataType.INT64)
            self._name_layer(layer, "int64")
        else:
            if DataType(dtype) == DataType.INT32 and arr.dtype.kind in "iu" and arr.size and \
                    (int(arr.max()) > 2 ** 31 - 1 or int(arr.min()) < -2 ** 31):
                self._log(Severity.WARNING, "ONNX parser: node '%s': constant%s holds int64 values beyond int32 (%d "
                          "of them, e.g. %d); it meets INT32 tensors here, so they are clamped to int32 (as TensorRT's "
                          "parser casts INT64 weights down)" % (self._node_name, " '%s'" % name if name else "",
                                                                int(((arr > 2 ** 31 - 1) | (arr < -2 ** 31)).sum()),
                                                                int(arr[(arr > 2 ** 31 - 1) | (arr < -2 ** 31)][0])))
            a = to_dtype(arr, dtype)
            layer = self.network.add_constant(a.shape, Weights(a) if a.dtype.name in ML_STORAGE else a)
            self._name_layer(layer, "const" if not name else None, const_name=name)
        t = layer.get_output(0)
        if key is not None:
            self._const_tensors[key] = t
        return t

    def _name_layer(self, layer: Any, hint: Optional[str] = None, const_name: Optional[str] = None) -> Any:
        if const_name:
            name = "%s/const" % const_name
        elif self._sub == 0 and hint is None:
            name = self._node_name
        else:
            name = "%s/%s%d" % (self._node_name, hint or "", self._sub)
        self._sub += 1
        # named when parsing ends: renaming a layer makes trtlite re-infer the network's shapes at the next
        # shape query, which would make parsing quadratic
        self._layer_names.append((layer, name))
        if self._node is not None and (hasattr(layer, "kernel") or hasattr(layer, "shift") or
                                       layer.type == LayerType.CONSTANT):
            self._weight_layers.append((layer, self._node))  # refit by initializer name (refitter.py)
        return layer

    def _L(self, layer: Any) -> Any:
        """Names a layer after the current node and returns its first output."""
        self._name_layer(layer)
        return layer.get_output(0)

    def _norm_axis(self, axis: int, rank: int, what: str = "axis") -> int:
        a = int(axis)
        if a < 0:
            a += rank
        if not 0 <= a < max(rank, 1):
            raise Fail(ErrorCode.INVALID_NODE, "%s %d is out of range for rank %d" % (what, axis, rank))
        return a

    def _tensor_value(self, tp: Any, what: str = "the tensor attribute") -> np.ndarray:
        """The value of a node's tensor attribute `tp` (`what` names it in errors; external data is read
        relative to the model's folder): INVALID_NODE when it is not a tensor or cannot be decoded,
        UNSUPPORTED_NODE_DATATYPE when it holds strings."""
        from onnx import TensorProto, numpy_helper
        if not isinstance(tp, TensorProto):
            raise Fail(ErrorCode.INVALID_NODE, "%s must be a tensor (TENSOR), but it is a %s"
                       % (what, type(tp).__name__))
        try:
            arr = numpy_helper.to_array(tp, self._base_dir) if self._base_dir else numpy_helper.to_array(tp)
        except MemoryError:
            raise
        except Exception as e:
            raise Fail(ErrorCode.INVALID_NODE, "cannot decode %s: %s: %s" % (what, type(e).__name__, e))
        if arr.dtype.kind in "OSU":
            raise unsupported("%s holds strings (trtlite has no string tensors)" % what,
                              ErrorCode.UNSUPPORTED_NODE_DATATYPE)
        return arr


def node_attrs(node: Any) -> Dict[str, Any]:
    """A node's attributes as Python values (strings decoded; Fail for function references and UNDEFINED)."""
    from onnx import helper
    a: Dict[str, Any] = {}
    for at in node.attribute:
        if at.ref_attr_name:
            raise unsupported("attribute '%s' refers to a function attribute" % at.name)
        if at.type == 0:  # AttributeProto.UNDEFINED: get_attribute_value gives None, which importers misread
            raise Fail(ErrorCode.INVALID_NODE, "attribute '%s' has no type (UNDEFINED)" % at.name)
        v = helper.get_attribute_value(at)
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        a[at.name] = v
    return a
