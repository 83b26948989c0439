"""The plugin fallback: a node with no importer becomes a plugin layer when the plugin registry has a creator named
like its op (or the op plus "_TRT"); its attributes and constant inputs become the plugin's fields, converted
exactly to the types the creator declares."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import _C
from .._enums import PluginFieldType
from ..plugins import _field_array
from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported


_FIELD_NP = {"FLOAT16": np.float16, "FLOAT32": np.float32, "FLOAT64": np.float64, "INT8": np.int8,
             "INT16": np.int16, "INT32": np.int32}


def _field_type_of(a: np.ndarray) -> str:
    """The PluginFieldType (member name) an attribute/initializer value has by itself (its array is
    converted with _field_convert): floats keep their width, bool is INT8, wider integers INT32."""
    dt = a.dtype
    if dt == np.float16:
        return "FLOAT16"
    if dt == np.float64:
        return "FLOAT64"
    if dt == np.int8 or dt == np.bool_:
        return "INT8"
    if dt == np.int16:
        return "INT16"
    if dt == np.uint8:
        return "INT8" if a.size == 0 or int(a.max()) <= 127 else "INT16"
    if np.issubdtype(dt, np.integer):
        return "INT32"
    return "FLOAT32"


def _field_convert(a: np.ndarray, ft: str) -> Optional[np.ndarray]:
    """`a` as plugin field type `ft` (a _FIELD_NP key) when the conversion is exact, else None: integers
    must fit, floats become integers only when integral, integers become floats only when representable;
    float16/float64 -> float32 is accepted (float64 rounded to nearest, but not overflowing).  The range and
    integrality checks are PluginField's own (plugins._field_array); a model's value must also survive a
    conversion to a float type narrower than itself or from an integer, which PluginField does not ask."""
    want = np.dtype(_FIELD_NP[ft])
    if a.dtype == want:
        return a
    if a.dtype == np.bool_:
        a = a.astype(np.int8)
    if want.kind == "f" and (a.dtype.kind in "iu" or want.itemsize < 4):
        if a.dtype.kind not in "iuf":
            return None
        with np.errstate(all="ignore"):
            b = a.astype(want)
        return b if np.array_equal(b.astype(a.dtype), a, equal_nan=a.dtype.kind == "f") else None
    try:
        return _field_array(a, PluginFieldType[ft])
    except ValueError:
        return None


def _registry() -> Any:
    """trtlite's plugin registry (looked up at call time: trtlite imports this package lazily)."""
    import trtlite
    get = getattr(trtlite, "get_plugin_registry", None)
    return get() if get is not None else None


def find_creator(op: str, domain: str, a: Dict[str, Any]) -> Any:
    """The plugin creator an op named `op` in `domain` maps to (None: none registered)."""
    return _lookup_creator(op, domain, a)[0]


def _lookup_creator(op: str, domain: str, a: Dict[str, Any]) -> Tuple[Any, str]:
    """(creator, the namespace it was found in), or (None, "").  Tries the node's plugin_namespace attribute,
    its domain and the default namespace, each with the op's name and the name plus "_TRT"."""
    try:
        reg = _registry()
    except Exception:
        return None, ""
    if reg is None:
        return None, ""
    version = str(a.get("plugin_version", "1"))
    namespaces = []
    if "plugin_namespace" in a:
        namespaces.append(str(a["plugin_namespace"]))
    if domain and domain not in ("ai.onnx",):
        namespaces.append(domain)
    namespaces.append("")
    # TensorRT's plugins are registered as <Name>_TRT: an ONNX op "Adder2d" finds "Adder2d_TRT" too
    names = [op] if op.endswith("_TRT") else [op, op + "_TRT"]
    for name in names:
        for ns in namespaces:
            try:
                c = reg.get_plugin_creator(name, version, ns)
            except Exception:
                c = None
            if c is not None:
                return c, ns
    return None, ""


def plugin_layer(p: ImporterContext, node: Any, a: Dict[str, Any], why: str) -> List[Any]:
    """The plugin layer for `node` (an op without an importer); `why` says why it is not imported
    otherwise, for the error when no creator is registered."""
    import trtlite as trt
    op = node.op_type
    creator, found_ns = _lookup_creator(op, node.domain, a)
    if creator is None:
        dom = " in domain '%s'" % node.domain if node.domain not in ("", "ai.onnx") else ""
        raise Fail(ErrorCode.UNSUPPORTED_NODE, "%s and no plugin creator named '%s'%s (version \"%s\")%s is "
                   "registered: the op is not supported" % (why, op, "" if op.endswith("_TRT") else " or '%s_TRT'"
                                                            % op, a.get("plugin_version", "1"), dom))
    PF, PFT = trt.PluginField, trt.PluginFieldType
    # the creator's fields, in order, with the types it declares (None: any)
    listed: List[Tuple[str, Optional[str]]] = []
    try:
        for f in creator.field_names or []:
            t = getattr(f, "type", None)
            tname = getattr(t, "name", None) if t is not None else None
            listed.append((f.name, tname if tname in _FIELD_NP or tname == "CHAR" else None))
    except Exception:
        listed = []
    declared = dict(listed)
    fields = []
    given = set()

    def add(fname: str, what: str, arr: Optional[np.ndarray] = None, text: Optional[bytes] = None) -> None:
        """One field, converted to the type the creator declares for `fname` (an exact conversion, else
        an error naming the field): creators match fields by name and type."""
        want = declared.get(fname)
        if text is not None:
            if want not in (None, "CHAR"):
                raise unsupported("plugin '%s': %s is a string but the creator's field '%s' is %s"
                                  % (op, what, fname, want))
            fields.append(PF(fname, np.frombuffer(text, dtype=np.uint8).copy(), PFT.CHAR))
            given.add(fname)
            return
        arr = np.ascontiguousarray(arr).reshape(-1)
        if want == "CHAR":
            raise unsupported("plugin '%s': %s is numeric but the creator's field '%s' is CHAR (a string)"
                              % (op, what, fname))
        ft = want or _field_type_of(arr)
        conv = _field_convert(arr, ft)
        if conv is None:
            shown = arr[:8].tolist()
            raise unsupported("plugin '%s': %s (%s %s%s) cannot be converted exactly to %s, the type of the "
                              "creator's field '%s'" % (op, what, arr.dtype, shown, "..." if arr.size > 8 else "",
                                                        ft, fname))
        fields.append(PF(fname, np.ascontiguousarray(conv), getattr(PFT, ft)))
        given.add(fname)

    for k, v in a.items():
        if k in ("plugin_version", "plugin_namespace"):
            continue
        what = "attribute '%s'" % k
        arr = None
        if isinstance(v, str):
            add(k, what, text=v.encode("utf-8"))
            continue
        if isinstance(v, float):
            arr = np.array([v], dtype=np.float32)  # ONNX float attributes are float32
        elif isinstance(v, int):
            arr = np.array([v], dtype=np.int64)
        elif isinstance(v, (list, tuple)):
            if all(isinstance(x, int) for x in v):
                arr = np.array(v, dtype=np.int64)
            elif all(isinstance(x, (int, float)) for x in v):
                arr = np.array(v, dtype=np.float32)
            elif all(isinstance(x, (str, bytes)) for x in v):
                add(k, what, text=b"\0".join(x.encode("utf-8") if isinstance(x, str) else x for x in v))
                continue
            else:
                arr = np.array([p._tensor_value(x) for x in v]) if v and hasattr(v[0], "dims") else None
        elif hasattr(v, "dims") and hasattr(v, "data_type"):
            arr = p._tensor_value(v)
        if arr is None:
            raise unsupported("plugin '%s': attribute '%s' of this kind cannot be passed as a plugin field"
                              % (op, k))
        add(k, what, arr)
    listed_names = set(declared)
    inputs = []
    for i, name in enumerate(node.input):
        if not name:
            continue
        if name in p._consts:
            v = np.ascontiguousarray(p._cval(name, "plugin input %d" % i)).reshape(-1)
            short = name.replace("/", ".").replace(":", ".").split(".")[-1]
            fname = None
            if short in listed_names and short not in given:
                fname = short
            else:  # the first free field of the value's own type, else the first it converts to exactly
                free = [(n, t) for n, t in listed if n not in given]
                own = _field_type_of(v)
                fname = next((n for n, t in free if t is None or t == own), None)
                if fname is None:
                    fname = next((n for n, t in free if t in _FIELD_NP and _field_convert(v, t) is not None),
                                 None)
            if fname is None:
                fname = short
            add(fname, "input %d ('%s')" % (i, name), v)
        else:
            inputs.append(p._tensor(name))
    plugin = creator.create_plugin(p._node_name, trt.PluginFieldCollection(fields))
    if plugin is None:
        raise Fail(ErrorCode.INVALID_NODE, "plugin creator '%s' could not create a plugin from fields %s"
                   % (op, sorted(given)))
    ns = getattr(creator, "plugin_namespace", "") or found_ns
    if ns and not isinstance(plugin, _C.PluginV2) and not getattr(plugin, "plugin_namespace", ""):
        try:  # a Python plugin must name its creator's namespace to be found again (serialization)
            plugin.plugin_namespace = ns
        except Exception:
            pass
    if isinstance(plugin, trt.IPluginV3):  # add_plugin_v3 wires size tensors (data-dependent output shapes)
        layer = p.network.add_plugin_v3(inputs, [], plugin)
    else:
        layer = p.network.add_plugin_v2(inputs, plugin)
    p._name_layer(layer)
    n_out = layer.num_outputs
    outs = [o for o in node.output]
    if len([o for o in outs if o]) > n_out:
        raise Fail(ErrorCode.INVALID_NODE, "the node has %d outputs but plugin '%s' gives %d"
                   % (len(outs), op, n_out))
    return [layer.get_output(i) for i in range(min(len(outs), n_out))]
