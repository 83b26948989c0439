"""Writes the package's type stubs: trtlite/_C.pyi (the extension) and trtlite/__init__.pyi (the public names).

trtlite/_C.pyi: every method docstring of the bindings starts with its signature, "name(args) -> ReturnType";
parameter types come by name from tools/stub_hints.py; each property's type is read from a sample object (a small
network with one layer of each kind, its engine and context, built here), and whether it can be assigned is found
by assigning the value it holds.  trtlite/__init__.pyi re-exports every public name of the package (mypy --strict
does not treat plain imports as exports) and declares the classes and values trtlite/__init__.py defines itself.
Anything the generator cannot type becomes Any (permissive), so new bindings never break a user's type check.

Run after changing the bindings: `make stubs` (or `python tools/gen_stubs.py OUTDIR` to write both files there).
Checked by tests/test_docs_and_stubs.py (current) and tests/test_typing.py (mypy --strict, stubtest).
"""
from __future__ import annotations

import enum
import inspect
import os
import re
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import numpy as np  # noqa: E402

import trtlite  # noqa: E402
import trtlite._C as C  # noqa: E402
from trtlite import _enums, _types  # noqa: E402

import stub_hints as H  # noqa: E402

DUNDERS = {"__enter__", "__exit__", "__len__", "__getitem__", "__iter__", "__bool__"}
BUILTIN_TYPES = {"bool", "int", "float", "str", "bytes", "None", "object"}
TYPES_NAMES = ["Dims", "Dims2", "Dims3", "Dims4", "DimsHW", "Permutation", "Weights", "ILogger", "IProfiler",
               "IProgressMonitor"]
UNKNOWN = object()


# ---- sample objects: one instance of as many binding types as can be made -----------------------------------

def _samples() -> Dict[type, Any]:
    """Instances of the binding types, keyed by type; a construction that fails (an API change) is skipped."""
    import trtlite as trt
    out: Dict[type, Any] = {}

    def keep(o: Any) -> Any:
        out.setdefault(type(o), o)
        if isinstance(o, trt.Builder):
            out.setdefault(C.Builder, o)
        return o

    def w(*shape: int) -> np.ndarray:
        return np.full(shape, 0.5, np.float32)

    logger = trt.Logger(trt.Logger.ERROR)
    b = keep(trt.Builder(logger))
    keep(trt.Runtime(logger))
    cfg = keep(b.create_builder_config())
    keep(b.create_optimization_profile())
    net = keep(b.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)))
    x = keep(net.add_input("x", trt.float32, (1, 4, 8, 8)))
    idx = net.add_input("i", trt.int32, (2,))
    cond = net.add_input("c", trt.bool, (1, 4, 8, 8))
    scale = net.add_constant((1,), w(1)).get_output(0)
    chan = net.add_constant((1, 4, 1, 1), w(1, 4, 1, 1)).get_output(0)
    makers: List[Callable[[], Any]] = [
        lambda: net.add_convolution_nd(x, 4, (3, 3), w(4, 4, 3, 3), w(4)),
        lambda: net.add_deconvolution_nd(x, 4, (2, 2), w(4, 4, 2, 2), w(4)),
        lambda: net.add_activation(x, trt.ActivationType.RELU),
        lambda: net.add_pooling_nd(x, trt.PoolingType.MAX, (2, 2)),
        lambda: net.add_lrn(x, 3, 1e-4, 0.75, 1.0),
        lambda: net.add_scale(x, trt.ScaleMode.CHANNEL, w(4), w(4), w(4)),
        lambda: net.add_softmax(x),
        lambda: net.add_concatenation([x, x]),
        lambda: net.add_elementwise(x, x, trt.ElementWiseOperation.SUM),
        lambda: net.add_unary(x, trt.UnaryOperation.EXP),
        lambda: net.add_padding_nd(x, (1, 1), (1, 1)),
        lambda: net.add_shuffle(x),
        lambda: net.add_reduce(x, trt.ReduceOperation.SUM, 2, True),
        lambda: net.add_topk(x, trt.TopKOperation.MAX, 2, 8),
        lambda: net.add_matrix_multiply(x, trt.MatrixOperation.NONE, x, trt.MatrixOperation.NONE),
        lambda: net.add_identity(x),
        lambda: net.add_cast(x, trt.int32),
        lambda: net.add_fully_connected(x, 3, w(3, 256)),
        lambda: net.add_slice(x, (0, 0, 0, 0), (1, 2, 4, 4), (1, 1, 1, 1)),
        lambda: net.add_gather(x, idx, 1),
        lambda: net.add_resize(x),
        lambda: net.add_parametric_relu(x, chan),
        lambda: net.add_select(cond, x, x),
        lambda: net.add_normalization(x, chan, chan, 1 << 1),
        lambda: net.add_quantize(x, scale),
        lambda: net.add_dequantize(net.add_quantize(x, scale).get_output(0), scale),
    ]
    for make in makers:
        try:
            keep(make())
        except Exception:  # the API changed: that class falls back to Any
            pass
    for i in range(len(net)):
        keep(net[i])
    try:  # an engine, its context, inspector, plan and timing cache
        small = b.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
        t = small.add_input("x", trt.float32, (1, 2))
        small.mark_output(small.add_identity(t).get_output(0))
        plan = keep(b.build_serialized_network(small, cfg))
        engine = keep(trt.Runtime(logger).deserialize_cuda_engine(plan))
        keep(engine.create_execution_context())
        keep(engine.create_engine_inspector())
        keep(cfg.create_timing_cache(b""))
    except Exception:
        pass
    return out


def _sample_for(cls: type, samples: Dict[type, Any]) -> Any:
    if cls in samples:
        return samples[cls]
    for t, o in samples.items():
        if issubclass(t, cls):
            return o
    return UNKNOWN


# ---- types ----------------------------------------------------------------------------------------------------

def _value_type(v: Any) -> Optional[str]:
    """The annotation of a property holding `v`, or None when the value does not tell (None, mixed lists)."""
    if isinstance(v, enum.Enum) and type(v).__module__ == _enums.__name__:
        return type(v).__name__
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float, str, bytes)):
        return type(v).__name__
    if isinstance(v, _types.Dims) or isinstance(v, _types.Permutation):
        return type(v).__name__
    if isinstance(v, np.ndarray):
        return "npt.NDArray[Any]"
    if isinstance(v, _types.Weights):
        return "Weights"
    if getattr(C, type(v).__name__, None) is type(v):
        return type(v).__name__
    if isinstance(v, tuple) and v and all(type(e) is int for e in v):
        return "tuple[int, ...]"
    if isinstance(v, list) and v and all(type(e) is str for e in v):
        return "list[str]"
    return None


def _setter_type(getter: str) -> str:
    """What an assignment accepts where reading gives `getter`: shapes take any int sequence, weights any array."""
    if getter in ("Dims", "Dims2", "Dims3", "Dims4", "DimsHW", "Permutation", "tuple[int, ...]"):
        return "_Shape"
    if getter in ("npt.NDArray[Any]", "Weights"):
        return "_Weights"
    return getter


def _is_writable(desc: Any, obj: Any, value: Any) -> bool:
    """Whether the getset descriptor has a setter: assign the value it holds and see whether Python refuses."""
    try:
        desc.__set__(obj, None if value is UNKNOWN else value)
    except AttributeError as e:
        return "not writable" not in str(e) and "readonly" not in str(e)
    except Exception:
        return True
    return True


def _known(name: str) -> bool:
    return (name in BUILTIN_TYPES or name in TYPES_NAMES or name in _enums.__all__ or name in H.ALIASES
            or isinstance(getattr(C, name, None), type))


def _type_expr(text: str) -> str:
    """A docstring's return text ("ITensor", "ITimingCache | None", "[min, opt, max]") as an annotation."""
    t = re.sub(r"\s*\(.*$", "", text.strip().rstrip("."))
    if t in H.RETURNS:
        return H.RETURNS[t]
    names = re.findall(r"[A-Za-z_][A-Za-z_0-9.]*", t)
    if names and all(_known(n) or n in ("list", "tuple", "dict") for n in names):
        return t
    return "Any"


def _param(name: str, qual: str) -> str:
    return H.METHOD_PARAMS.get(qual, {}).get(name) or H.PARAMS.get(name, "Any")


def _signature(qual: str, doc: str, name: str) -> str:
    """"(self, a: T, b: U = ...) -> R" from a docstring's first line "name(a, b=default) -> R"."""
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    m = re.match(r"^\s*%s\((.*?)\)\s*(?:->\s*(.+))?$" % re.escape(name), first)
    if not m:
        return "(self, *args: Any, **kwargs: Any) -> Any"
    params, seen_default = ["self"], False
    raw = [a.strip() for a in m.group(1).split(",") if a.strip() and a.strip() != "..."]
    for a in raw:
        if a == "index or name":
            params.append("index: int | str")
            continue
        pname = re.sub(r"[^A-Za-z0-9_]", "", a.split("=")[0])
        ptype = _param(pname, qual)
        if "=" in a or seen_default:  # after a default every parameter has one (execute(batch_size=1, bindings))
            seen_default = True
            if a.endswith("=None") and "None" not in ptype:
                ptype += " | None"
            params.append(f"{pname}: {ptype} = ...")
        else:
            params.append(f"{pname}: {ptype}")
    ret = _type_expr(m.group(2)) if m.group(2) else "Any"
    if first.rstrip().endswith(")") and not m.group(2):
        ret = "None"
    return f"({', '.join(params)}) -> {ret}"


def _docstring(doc: str, indent: str) -> str:
    text = (doc or "").strip()
    parts = text.split("\n\n")
    summary = (parts[1] if len(parts) > 1 and re.match(r"^\w+\(.*\)", parts[0]) else parts[0]).strip()
    summary = " ".join(summary.split()).replace('"""', "'''").replace("\\", "\\\\")
    return f'{indent}"""{summary}"""' if summary else f"{indent}..."


# ---- trtlite/_C.pyi -----------------------------------------------------------------------------------------

def _py_function_sig(fn: Any) -> str:
    """A Python function attached to a binding type (trtlite/_views.py), from its annotations."""
    sig = inspect.signature(fn)
    params = []
    for i, (pn, p) in enumerate(sig.parameters.items()):
        if i == 0:
            params.append("self")
            continue
        ann = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "Any")
        ann = ann if p.annotation is not inspect.Parameter.empty else "Any"
        ann = _type_expr(ann) if ann != "Any" else ann
        params.append(f"{pn}: {ann}" + (" = ..." if p.default is not inspect.Parameter.empty else ""))
    ret = sig.return_annotation
    ret = "Any" if ret is inspect.Signature.empty else _type_expr(ret if isinstance(ret, str) else ret.__name__)
    return f"({', '.join(params)}) -> {ret}"


def _class_lines(name: str, cls: type, samples: Dict[type, Any]) -> List[str]:
    base = cls.__base__.__name__ if cls.__base__ is not object else ""
    lines = []
    if not cls.__flags__ & (1 << 10):  # no Py_TPFLAGS_BASETYPE: cannot be subclassed
        lines.append("@final")
    elif cls.__basicsize__ != cls.__base__.__basicsize__:  # a C layout of its own: no class has two such bases
        lines.append("@disjoint_base")
    lines += [f"class {name}({base}):" if base else f"class {name}:", _docstring(cls.__doc__ or "", "    ")]
    init = H.INIT.get(name)
    doc0 = (cls.__doc__ or "").strip().split(":")[0]
    if not init and re.match(r"^%s\((.*)\)$" % name, doc0) and not (cls.__flags__ & (1 << 7)) and cls.__new__ \
            is not object.__new__:  # a C constructor (tp_new), documented as "Name(args): ..."
        init = _signature(name + ".__new__", doc0.replace(name + "(", "__new__(", 1) + " -> Self", "__new__")
        init = init.replace("(self", "(cls", 1)
    if init:
        lines.append(f"    def __new__{init}: ...")
    obj = _sample_for(cls, samples)
    bases_props = {a for b in cls.__mro__[1:] for a, v in vars(b).items() if inspect.isgetsetdescriptor(v)}
    for an, av in sorted(vars(cls).items()):
        qual = f"{name}.{an}"
        if an.startswith("__") and an not in DUNDERS:
            continue
        if inspect.isgetsetdescriptor(av) or inspect.ismemberdescriptor(av):
            lines += _property_lines(qual, an, av, obj, an in bases_props)
        elif inspect.isfunction(av):  # Python functions attached by the package (trtlite/_views.py)
            lines.append(f"    def {an}{_py_function_sig(av)}:")
            lines.append(_docstring(av.__doc__ or "", "        "))
        elif callable(av):
            sig = H.METHODS.get(qual) or H.METHODS.get("*." + an) or _signature(qual, av.__doc__ or "", an)
            lines.append(f"    def {an}{sig}:")
            lines.append(_docstring(av.__doc__ or "", "        "))
    for extra in H.EXTRA_METHODS.get(name, []):
        lines.append("    " + extra)
    lines.append("")
    return lines


def _property_lines(qual: str, an: str, desc: Any, obj: Any, overrides: bool) -> List[str]:
    hint = H.PROPERTIES.get(qual)
    value = UNKNOWN
    if obj is not UNKNOWN:
        try:
            value = desc.__get__(obj, type(obj))
        except Exception:
            value = UNKNOWN
    if hint is not None:
        get_t, set_t = hint if isinstance(hint, tuple) else (hint, hint)
    else:
        get_t = (_value_type(value) if value is not UNKNOWN else None) or "Any"
        set_t = _setter_type(get_t)
    writable = True if obj is UNKNOWN else _is_writable(desc, obj, value)
    ignore = "  # type: ignore[override]" if overrides else ""
    out = ["    @property" + ignore, f"    def {an}(self) -> {get_t}:", _docstring(desc.__doc__ or "", "        ")]
    if writable:
        out += [f"    @{an}.setter", f"    def {an}(self, value: {set_t}) -> None: ..."]
    return out


def c_stub() -> str:
    samples = _samples()
    out = ['"""Type stubs of trtlite._C (generated by tools/gen_stubs.py from the bindings and tools/stub_hints.py; '
           'do not edit)."""',
           "from typing import Any, Iterator, Mapping, Self, Sequence, final", "",
           "from typing_extensions import disjoint_base", "",
           "import numpy.typing as npt", "",
           "from ._enums import " + ", ".join(sorted(_enums.__all__)),
           "from ._types import " + ", ".join(TYPES_NAMES),
           "from .calibration import IInt8Calibrator as _PyIInt8Calibrator",
           "from .plugins import IPluginRegistry as _PyIPluginRegistry, IPluginV2 as _PyIPluginV2, "
           "PluginFieldCollection", ""]
    out += [f"{k} = {v}" for k, v in H.ALIASES.items()] + ["", "__version__: str", ""]
    types = [(n, o) for n, o in sorted(vars(C).items()) if isinstance(o, type)]
    errors = [(n, o) for n, o in types if issubclass(o, BaseException)]
    for n, o in sorted(errors, key=lambda x: x[0] != "Error"):  # the base exception first
        out += [f"class {n}({', '.join(b.__name__ for b in o.__bases__)}):", _docstring(o.__doc__ or "", "    "), ""]
    ordered = [t for t in types if not issubclass(t[1], BaseException)]
    ordered.sort(key=lambda t: (t[1].__base__.__name__ != "object", t[0]))  # bases before subclasses
    for n, o in ordered:
        out += _class_lines(n, o, samples)
    for n, o in sorted(vars(C).items()):
        if inspect.isbuiltin(o):
            sig = H.METHODS.get(n) or _signature(n, o.__doc__ or "", n)
            sig = sig.replace("(self, ", "(").replace("(self)", "()")
            out += [f"def {n}{sig}:", _docstring(o.__doc__ or "", "    "), ""]
    return "\n".join(out).rstrip("\n") + "\n"


# ---- trtlite/__init__.pyi -----------------------------------------------------------------------------------

def _annotation(a: Any) -> str:
    s = a if isinstance(a, str) else getattr(a, "__name__", "Any")
    return re.sub(r"\bbool\b", "builtins.bool", s)  # trtlite.bool (DataType.BOOL) shadows the builtin here


def _own_class_lines(name: str, cls: type) -> List[str]:
    """A class trtlite/__init__.py defines (trt.Builder): its methods and properties from their annotations."""
    bases = ", ".join(("_C." + b.__name__) if getattr(C, b.__name__, None) is b else b.__name__
                      for b in cls.__bases__)
    lines = [f"class {name}({bases}):", _docstring(cls.__doc__ or "", "    ")]
    for an, av in sorted(vars(cls).items()):
        if an.startswith("_"):
            continue
        if isinstance(av, property):
            ret = _annotation(inspect.signature(av.fget).return_annotation) if av.fget else "Any"
            lines += ["    @property", f"    def {an}(self) -> {ret}:", _docstring(av.__doc__ or "", "        ")]
        elif inspect.isfunction(av):
            sig = inspect.signature(av)
            ps = ["self"] + [f"{p}: {_annotation(v.annotation)}" for p, v in list(sig.parameters.items())[1:]]
            lines += [f"    def {an}({', '.join(ps)}) -> {_annotation(sig.return_annotation)}:",
                      _docstring(av.__doc__ or "", "        ")]
    return lines + [""]


def init_stub() -> str:
    pkg = trtlite
    imports: Dict[str, List[str]] = {}
    own: List[Tuple[str, type]] = []
    values: List[str] = []
    modules: List[str] = []
    names = sorted(n for n in vars(pkg) if not n.startswith("_") and n != "annotations")
    lazy = sorted(getattr(pkg, "_LAZY", ()))
    for n in names:
        o = getattr(pkg, n)
        if inspect.ismodule(o):
            if o.__name__.startswith("trtlite."):
                modules.append(o.__name__.split(".", 1)[1])
            continue
        if getattr(C, n, None) is o and (isinstance(o, type) or callable(o)):
            imports.setdefault("._C", []).append(n)
        elif isinstance(o, type) and getattr(C, o.__name__, None) is o:  # another name of a _C class
            values.append(f"{n} = _C.{o.__name__}")
        elif isinstance(o, type) or inspect.isfunction(o):
            mod = o.__module__
            if mod == "trtlite" and isinstance(o, type):
                own.append((n, o))
            elif mod == "trtlite":  # a function of trtlite/__init__.py itself
                sig = inspect.signature(o)
                star = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
                ps = [f"{star.get(v.kind, '')}{p}: "
                      f"{_annotation(v.annotation) if v.annotation is not inspect.Parameter.empty else 'Any'}"
                      + (" = ..." if v.default is not inspect.Parameter.empty else "")
                      for p, v in sig.parameters.items()]
                ret = sig.return_annotation
                values.append(f"def {n}({', '.join(ps)}) -> "
                              f"{'Any' if ret is inspect.Signature.empty else _annotation(ret)}: ...")
            elif mod.startswith("trtlite.") and getattr(sys.modules[mod], n, None) is o:
                imports.setdefault("." + mod.split(".", 1)[1], []).append(n)
            else:
                values.append(f"{n}: Any")
        elif isinstance(o, enum.Enum):
            values.append(f"{n}: {type(o).__name__}")
        elif isinstance(o, str):
            values.append(f"{n}: str")
        else:
            values.append(f"{n}: Any")
    out = ['"""Type stubs of the trtlite package\'s public names (generated by tools/gen_stubs.py; do not edit)."""',
           "import builtins", "from typing import Any", ""]
    out.append("from . import _C")
    out += [f"from . import {m} as {m}" for m in sorted(set(modules))]
    if lazy:  # loaded on first use (the package's module __getattr__)
        imports.setdefault(".onnx", []).extend(lazy)
    lazy_caffe = sorted(getattr(pkg, "_LAZY_CAFFE", ()))
    if lazy_caffe:  # the Caffe parser, loaded the same way
        imports.setdefault(".caffe", []).extend(lazy_caffe)
    for mod in sorted(imports):
        out.append(f"from {mod} import (" + "".join(f"\n    {n} as {n}," for n in sorted(imports[mod])) + "\n)")
    out += ["", "__version__: str"] + values + [""]
    if hasattr(pkg, "__all__"):
        out += ["__all__ = ["] + [f"    {n!r}," for n in pkg.__all__] + ["]", ""]
    for n, o in own:
        out += _own_class_lines(n, o)
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> None:
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "trtlite")
    for fname, text in (("_C.pyi", c_stub()), ("__init__.pyi", init_stub())):
        path = os.path.join(outdir, fname)
        with open(path, "w") as f:
            f.write(text)
        print("wrote", path)


if __name__ == "__main__":
    main()
