"""Text, notebook (HTML) and Graphviz views of trtlite's objects.

The C types (INetworkDefinition, IBuilderConfig, ICudaEngine, EngineInspector, IExecutionContext)
are immutable heap types: their ``__repr__``, ``_repr_html_``, ``to_dot`` and ``to_svg`` slots call
:func:`repr`, :func:`html`, :func:`to_dot` and :func:`to_svg` here (csrc/python/views.c).  Every
view reads the objects through their public Python API only (layers, tensors, the engine
inspector's JSON), so what a view shows is what a script can read.

* network: a layer table (index, name, type, inputs -> outputs with shapes and dtypes);
  ``network.to_dot()`` is the layer graph.
* builder config: flags, memory pool limits, optimization profiles, level, threads, passes.
* engine / inspector: the steps after fusion (fused layer names, kernel, precision, output shapes,
  output memory) and the I/O tensors; ``engine.to_dot()`` is the fused graph.
* execution context: the engine, threads, profile, current I/O shapes, profiler.
* :class:`LayerProfiler`: a ``context.profiler`` collecting per-layer times; shows them sorted,
  with each step's share of the total.

All user text (layer and tensor names) is HTML-escaped in ``_repr_html_`` and quoted in DOT.
"""
from __future__ import annotations

import builtins
import html as _html
import json
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ._types import IProfiler

__all__ = ["repr", "html", "to_dot", "to_svg", "LayerProfiler", "network_rows", "engine_steps"]

#: Rows a text repr shows before eliding the rest (HTML shows every row).
MAX_TEXT_ROWS = 200

_ITEMSIZE = {"FLOAT": 4, "HALF": 2, "INT8": 1, "INT32": 4, "BOOL": 1, "UINT8": 1}


# ---- helpers ---------------------------------------------------------------------------------

def _trt() -> Any:
    import trtlite
    return trtlite


def _esc(x: Any) -> str:
    return _html.escape(str(x), quote=True)


def _dot_str(x: Any) -> str:
    """A DOT double-quoted string (backslashes, quotes and newlines escaped)."""
    s = str(x).replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return f'"{s}"'


def _shape_str(shape: Any) -> str:
    if shape is None:
        return "?"
    if isinstance(shape, str):
        return shape.replace(", ", "x").strip("()").rstrip(",") or "scalar"
    dims = [int(d) for d in shape]
    return "x".join(str(d) for d in dims) if dims else "scalar"


def _dtype_name(dt: Any) -> str:
    return getattr(dt, "name", str(dt))


def _fmt_bytes(n: Optional[int]) -> str:
    if n is None:
        return "dynamic"
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if v < 1024 or unit == "GiB":
            return f"{int(v)} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024.0
    return f"{v:.1f} GiB"  # pragma: no cover


def _table_text(header: Sequence[str], rows: Sequence[Sequence[Any]], limit: int = MAX_TEXT_ROWS) -> List[str]:
    shown = [[str(c) for c in r] for r in rows[:limit]]
    widths = [max([len(h)] + [len(r[i]) for r in shown]) for i, h in enumerate(header)]
    # the last column is not padded (names can be long)
    fmt = lambda r: "  ".join(c.ljust(widths[i]) if i < len(r) - 1 else c for i, c in enumerate(r)).rstrip()
    out = ["  " + fmt(list(header))]
    out += ["  " + fmt(r) for r in shown]
    if len(rows) > limit:
        out.append(f"  ... {len(rows) - limit} more rows")
    return out


_CSS = ("<style>.trtl-view table{border-collapse:collapse;font-size:12px}"
        ".trtl-view th,.trtl-view td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
        ".trtl-view th{background:#f0f0f0}.trtl-view .num{text-align:right}"
        ".trtl-view .bar{background:#7aa6da;height:10px;display:inline-block}</style>")


def _table_html(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Iterable[int] = (),
                raw: Iterable[int] = ()) -> str:
    """An HTML table; every cell is escaped unless its column is in `raw` (already-escaped HTML)."""
    numeric, raw = set(numeric), set(raw)
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = []
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            cls = ' class="num"' if i in numeric else ""
            cells.append(f"<td{cls}>{c if i in raw else _esc(c)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _box(title: str, summary: Sequence[Tuple[str, Any]], tables: Sequence[str]) -> str:
    items = "".join(f"<li><b>{_esc(k)}</b>: {_esc(v)}</li>" for k, v in summary)
    return (f'<div class="trtl-view">{_CSS}<b>{_esc(title)}</b><ul>{items}</ul>' + "".join(tables) + "</div>")


# ---- network -----------------------------------------------------------------------------------

def _tensor_info(t: Any) -> Optional[Tuple[str, str, str]]:
    if t is None:
        return None
    try:
        shape = _shape_str(t.shape)
    except Exception:
        shape = "?"
    try:
        dtype = _dtype_name(t.dtype)
    except Exception:
        dtype = "?"
    return (t.name, shape, dtype)


def _layer_type(layer: Any) -> str:
    """The trt.LayerType name (some layer classes redefine .type, e.g. IPoolingLayer's PoolingType)."""
    try:
        return _dtype_name(_trt().ILayer.type.__get__(layer))
    except Exception:
        return type(layer).__name__


def network_rows(network: Any) -> List[Dict[str, Any]]:
    """One dict per layer: index, name, type, inputs and outputs as (name, shape, dtype) tuples."""
    rows = []
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        ins = [_tensor_info(layer.get_input(j)) for j in range(layer.num_inputs)]
        outs = [_tensor_info(layer.get_output(j)) for j in range(layer.num_outputs)]
        rows.append({"index": i, "name": layer.name, "type": _layer_type(layer), "inputs": ins, "outputs": outs})
    return rows


def _io_text(items: Sequence[Optional[Tuple[str, str, str]]]) -> str:
    return ", ".join("-" if t is None else f"{t[0]} {t[1]} {t[2]}" for t in items)


def _network_io(network: Any) -> Tuple[List[Any], List[Any]]:
    ins = [_tensor_info(network.get_input(i)) for i in range(network.num_inputs)]
    outs = [_tensor_info(network.get_output(i)) for i in range(network.num_outputs)]
    return ins, outs


def _network_title(network: Any) -> str:
    batch = "implicit batch" if network.has_implicit_batch_dimension else "explicit batch"
    return f"INetworkDefinition '{network.name}': {network.num_layers} layers, {batch}"


def _network_repr(network: Any) -> str:
    ins, outs = _network_io(network)
    rows = [(r["index"], r["name"], r["type"], f"{_io_text(r['inputs'])} -> {_io_text(r['outputs'])}")
            for r in network_rows(network)]
    lines = [f"<{_network_title(network)}", f"  inputs:  {_io_text(ins) or '-'}", f"  outputs: {_io_text(outs) or '-'}"]
    lines += _table_text(("#", "name", "type", "inputs -> outputs"), rows)
    return "\n".join(lines) + ">"


def _io_html(items: Sequence[Optional[Tuple[str, str, str]]]) -> str:
    return "<br>".join("-" if t is None else f"{_esc(t[0])} <i>{_esc(t[1])} {_esc(t[2])}</i>" for t in items)


def _network_html(network: Any) -> str:
    ins, outs = _network_io(network)
    rows = [(r["index"], r["name"], r["type"], _io_html(r["inputs"]), _io_html(r["outputs"]))
            for r in network_rows(network)]
    return _box(_network_title(network), [("inputs", _io_text(ins) or "-"), ("outputs", _io_text(outs) or "-")],
                [_table_html(("#", "name", "type", "inputs", "outputs"), rows, numeric=[0], raw=[3, 4])])


def _network_dot(network: Any) -> str:
    lines = ["digraph network {", "  rankdir=TB;", "  node [shape=box, fontsize=10];", "  edge [fontsize=9];"]
    producer: Dict[str, str] = {}
    for i in range(network.num_inputs):
        t = _tensor_info(network.get_input(i))
        if t:
            nid = f"in{i}"
            lines.append(f"  {nid} [shape=ellipse, label={_dot_str(f'{t[0]}' + chr(10) + f'{t[1]} {t[2]}')}];")
            producer[t[0]] = nid
    rows = network_rows(network)
    for r in rows:
        nid = f"l{r['index']}"
        lines.append(f"  {nid} [label={_dot_str(r['name'] + chr(10) + r['type'])}];")
        for t in r["outputs"]:
            if t:
                producer[t[0]] = nid
    for r in rows:
        for t in r["inputs"]:
            if t and t[0] in producer:
                lines.append(f"  {producer[t[0]]} -> l{r['index']} [label={_dot_str(f'{t[1]} {t[2]}')}];")
    for i in range(network.num_outputs):
        t = _tensor_info(network.get_output(i))
        if t:
            lines.append(f"  out{i} [shape=ellipse, label={_dot_str(t[0])}];")
            if t[0] in producer:
                lines.append(f"  {producer[t[0]]} -> out{i} [label={_dot_str(f'{t[1]} {t[2]}')}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---- engine and inspector ----------------------------------------------------------------------

def _volume(dims: str) -> Optional[int]:
    """Elements of a "(1, 3, 8, 8)"-style dims string; None when a dim is dynamic (-1)."""
    inner = dims.strip().strip("()").strip()
    if not inner:
        return 1
    v = 1
    for d in inner.split(","):
        d = d.strip()
        if not d:
            continue
        n = int(d)
        if n < 0:
            return None
        v *= n
    return v


def engine_steps(info_json: str) -> Dict[str, Any]:
    """The engine inspector's JSON with, per step, 'precision' (output dtypes) and 'bytes' (output
    memory at the build shapes; None when dynamic) added."""
    doc = json.loads(info_json)
    for s in doc.get("layers", []):
        outs = s.get("outputs", [])
        s["precision"] = "/".join(dict.fromkeys(o.get("dtype", "?") for o in outs)) or "-"
        total: Optional[int] = 0
        for o in outs:
            v = _volume(o.get("dims", "()"))
            if v is None or total is None:
                total = None
            else:
                total += v * _ITEMSIZE.get(o.get("dtype", "FLOAT"), 4)
        s["bytes"] = total
        fused = []
        act = s.get("activation", -1)
        if act not in (-1, None):
            try:
                fused.append(f"activation {_trt().ActivationType(act).name}")
            except ValueError:
                fused.append(f"activation {act}")
        if s.get("residual"):
            fused.append("residual add")
        if s.get("program"):  # a PW_CHAIN step: its ops
            fused.append(f"program {s['program']}")
        s["epilogue"] = " + ".join(fused)
    return doc


def _step_rows(doc: Dict[str, Any]) -> List[Tuple[Any, ...]]:
    rows = []
    for i, s in enumerate(doc.get("layers", [])):
        outs = ", ".join(_shape_str(o.get("dims")) for o in s.get("outputs", []))
        rows.append((i, s.get("name", ""), s.get("type", ""), s.get("kernel", ""), s.get("precision", ""), outs,
                     _fmt_bytes(s.get("bytes")), s.get("epilogue", "")))
    return rows


_STEP_HEADER = ("#", "step (fused layers)", "type", "kernel", "precision", "output shapes", "output memory",
                "fused epilogue")


def _engine_io(engine: Any) -> List[Tuple[str, str, str, str]]:
    out = []
    for i in range(engine.num_io_tensors):
        n = engine.get_tensor_name(i)
        mode = "input" if engine.get_tensor_mode(n) == _trt().TensorIOMode.INPUT else "output"
        out.append((mode, n, _shape_str(engine.get_tensor_shape(n)), _dtype_name(engine.get_tensor_dtype(n))))
    return out


def _engine_doc(engine: Any) -> Dict[str, Any]:
    insp = engine.create_engine_inspector()
    return engine_steps(insp.get_engine_information(_trt().LayerInformationFormat.JSON))


def _engine_title(engine: Any) -> str:
    batch = (f"implicit batch (max {engine.max_batch_size})" if engine.has_implicit_batch_dimension
             else f"explicit batch, {engine.num_optimization_profiles} profile(s)")
    return (f"ICudaEngine '{engine.name}': {engine.num_layers} steps, {batch}, "
            f"activation memory {_fmt_bytes(engine.device_memory_size)}")


def _engine_repr(engine: Any) -> str:
    io = _engine_io(engine)
    lines = [f"<{_engine_title(engine)}"]
    lines += [f"  {m:<6}  {n} {s} {d}" for m, n, s, d in io]
    lines += _table_text(_STEP_HEADER, _step_rows(_engine_doc(engine)))
    return "\n".join(lines) + ">"


def _engine_html(engine: Any) -> str:
    io = _table_html(("mode", "name", "shape", "dtype"), _engine_io(engine))
    steps = _table_html(_STEP_HEADER, _step_rows(_engine_doc(engine)), numeric=[0])
    return _box(_engine_title(engine), [], ["<p>I/O tensors</p>", io, "<p>Steps</p>", steps])


def _steps_dot(doc: Dict[str, Any], name: str) -> str:
    lines = [f"digraph {_dot_str(name)} {{", "  rankdir=TB;", "  node [shape=box, fontsize=10];",
             "  edge [fontsize=9];"]
    producer: Dict[str, str] = {}
    steps = doc.get("layers", [])
    io_nodes: Dict[str, str] = {}
    for i, s in enumerate(steps):
        for t in s.get("inputs", []):
            if t.get("kind") == "input" and t["name"] not in io_nodes:
                nid = f"in{len(io_nodes)}"
                io_nodes[t["name"]] = nid
                producer[t["name"]] = nid
                lines.append(f"  {nid} [shape=ellipse, label={_dot_str(t['name'])}];")
    for i, s in enumerate(steps):
        label = f"{s.get('name', '')}\n{s.get('kernel', '')}"
        lines.append(f"  s{i} [label={_dot_str(label)}];")
        for t in s.get("outputs", []):
            producer[t["name"]] = f"s{i}"
    n_out = 0
    for i, s in enumerate(steps):
        for t in s.get("inputs", []):
            src = producer.get(t["name"])
            if src:
                lines.append(f"  {src} -> s{i} [label={_dot_str(_shape_str(t.get('dims')) + ' ' + t.get('dtype', ''))}];")
        for t in s.get("outputs", []):
            if t.get("kind") == "output":
                lines.append(f"  out{n_out} [shape=ellipse, label={_dot_str(t['name'])}];")
                lines.append(f"  s{i} -> out{n_out} [label={_dot_str(_shape_str(t.get('dims')) + ' ' + t.get('dtype', ''))}];")
                n_out += 1
    lines.append("}")
    return "\n".join(lines) + "\n"


def _inspector_doc(insp: Any) -> Dict[str, Any]:
    return engine_steps(insp.get_engine_information(_trt().LayerInformationFormat.JSON))


def _inspector_repr(insp: Any) -> str:
    doc = _inspector_doc(insp)
    lines = [f"<EngineInspector: {len(doc.get('layers', []))} steps, activation memory "
             f"{_fmt_bytes(doc.get('activation_bytes'))}"]
    lines += _table_text(_STEP_HEADER, _step_rows(doc))
    return "\n".join(lines) + ">"


def _inspector_html(insp: Any) -> str:
    doc = _inspector_doc(insp)
    return _box(f"EngineInspector: {len(doc.get('layers', []))} steps",
                [("activation memory", _fmt_bytes(doc.get("activation_bytes")))],
                [_table_html(_STEP_HEADER, _step_rows(doc), numeric=[0])])


# ---- builder config ------------------------------------------------------------------------------

def _config_items(config: Any) -> List[Tuple[str, str]]:
    trt = _trt()
    flags = [f.name for f in trt.BuilderFlag if config.get_flag(f)]
    pools = []
    for p in trt.MemoryPoolType:
        limit = config.get_memory_pool_limit(p)
        if p == trt.MemoryPoolType.WORKSPACE or limit:
            pools.append(f"{p.name}={_fmt_bytes(limit)}")
    monitor = config.progress_monitor
    calib = config.int8_calibrator
    return [("flags", ", ".join(flags) or "none"),
            ("memory pool limits", ", ".join(pools)),
            ("optimization profiles", str(config.num_optimization_profiles)),
            ("builder_optimization_level", str(config.builder_optimization_level)),
            ("avg_timing_iterations", str(config.avg_timing_iterations)),
            ("num_threads", str(config.num_threads) + (" (all CPUs)" if config.num_threads == 0 else "")),
            ("profiling_verbosity", _dtype_name(config.profiling_verbosity)),
            ("disabled passes", ", ".join(config.disabled_passes) or "none"),
            ("int8_calibrator", "none" if calib is None else type(calib).__name__),
            ("progress_monitor", "none" if monitor is None else type(monitor).__name__)]


def _config_repr(config: Any) -> str:
    return "<IBuilderConfig\n" + "\n".join(f"  {k}: {v}" for k, v in _config_items(config)) + ">"


def _config_html(config: Any) -> str:
    return _box("IBuilderConfig", [], [_table_html(("setting", "value"), _config_items(config))])


# ---- execution context -----------------------------------------------------------------------

def _context_items(ctx: Any) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str, str, str]]]:
    e = ctx.engine
    prof = ctx.profiler
    items = [("engine", f"'{e.name}' ({e.num_layers} steps)"), ("name", ctx.name),
             ("num_threads", str(ctx.num_threads)),
             ("active_optimization_profile", str(ctx.active_optimization_profile)),
             ("all_binding_shapes_specified", str(ctx.all_binding_shapes_specified)),
             ("profiler", "none" if prof is None else type(prof).__name__)]
    io = []
    for mode, name, _, dtype in _engine_io(e):
        try:
            shape = _shape_str(ctx.get_tensor_shape(name))
        except Exception:
            shape = "unresolved"
        io.append((mode, name, shape, dtype))
    return items, io


def _context_repr(ctx: Any) -> str:
    items, io = _context_items(ctx)
    lines = ["<IExecutionContext"] + [f"  {k}: {v}" for k, v in items]
    lines += [f"  {m:<6}  {n} {s} {d}" for m, n, s, d in io]
    return "\n".join(lines) + ">"


def _context_html(ctx: Any) -> str:
    items, io = _context_items(ctx)
    return _box("IExecutionContext", items, [_table_html(("mode", "name", "current shape", "dtype"), io)])


# ---- per-layer profiler ----------------------------------------------------------------------

class LayerProfiler(IProfiler):
    """A ``context.profiler`` (trt.IProfiler) that collects per-step times over many executions.

    ``repr(profiler)`` (and ``_repr_html_`` in notebooks) shows the steps sorted by total time with
    their share of the total; :meth:`rows` returns the same as dicts in trtexec's ``--exportProfile``
    fields (name, timeMs, averageMs, medianMs, percentage)::

        prof = trt.LayerProfiler()
        context.profiler = prof
        for _ in range(10):
            context.execute_v2(bindings)
        prof            # the sorted table
    """

    def __init__(self) -> None:
        self.times: Dict[str, List[float]] = {}

    def report_layer_time(self, layer_name: str, ms: float) -> None:
        """Record one step's time (called by the context after each execution)."""
        self.times.setdefault(layer_name, []).append(float(ms))

    @property
    def runs(self) -> int:
        """Executions recorded (the most reports of any one step)."""
        return max((len(v) for v in self.times.values()), default=0)

    def reset(self) -> None:
        """Forget every recorded time."""
        self.times.clear()

    def rows(self) -> List[Dict[str, Any]]:
        """Per-step totals, sorted by total time (largest first): name, timeMs, averageMs, medianMs,
        percentage (of the sum over all steps)."""
        total = sum(sum(v) for v in self.times.values())
        rows = []
        for name, v in self.times.items():
            s = sorted(v)
            n = len(s)
            median = s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])
            rows.append({"name": name, "timeMs": sum(v), "averageMs": sum(v) / n, "medianMs": median,
                         "percentage": 100.0 * sum(v) / total if total > 0 else 0.0})
        rows.sort(key=lambda r: -r["timeMs"])
        return rows

    def total_ms(self) -> float:
        """Sum of every recorded step time."""
        return sum(sum(v) for v in self.times.values())

    def __repr__(self) -> str:
        rows = self.rows()
        lines = [f"<LayerProfiler: {len(rows)} steps, {self.runs} runs, total {self.total_ms():.4f} ms"]
        lines += _table_text(("time(ms)", "avg(ms)", "median(ms)", "share", "step"),
                             [(f"{r['timeMs']:.4f}", f"{r['averageMs']:.4f}", f"{r['medianMs']:.4f}",
                               f"{r['percentage']:5.1f}%", r["name"]) for r in rows])
        return "\n".join(lines) + ">"

    def _repr_html_(self) -> str:
        """The sorted table with a bar per step's share (Jupyter)."""
        rows = self.rows()
        table = _table_html(("step", "time (ms)", "avg (ms)", "median (ms)", "share"),
                            [(r["name"], f"{r['timeMs']:.4f}", f"{r['averageMs']:.4f}", f"{r['medianMs']:.4f}",
                              f'<span class="bar" style="width:{r["percentage"]:.1f}px"></span> '
                              f'{r["percentage"]:.1f}%') for r in rows], numeric=[1, 2, 3], raw=[4])
        return _box(f"LayerProfiler: {len(rows)} steps, {self.runs} runs",
                    [("total", f"{self.total_ms():.4f} ms")], [table])


# ---- dispatch (called from csrc/python/views.c) -------------------------------------------------

def _kind(obj: Any) -> str:
    C = _trt()._C
    for cls, kind in ((C.INetworkDefinition, "network"), (C.IBuilderConfig, "config"), (C.ICudaEngine, "engine"),
                      (C.EngineInspector, "inspector"), (C.IExecutionContext, "context")):
        if isinstance(obj, cls):
            return kind
    raise TypeError(f"no view for {type(obj).__name__}")


def repr(obj: Any) -> str:  # noqa: A001  (the module's API mirrors the slot it serves)
    """Text view: the object's summary and table (network layers, engine steps, config settings, ...)."""
    return {"network": _network_repr, "config": _config_repr, "engine": _engine_repr,
            "inspector": _inspector_repr, "context": _context_repr}[_kind(obj)](obj)


def html(obj: Any) -> str:
    """HTML view for notebooks (every name escaped)."""
    return {"network": _network_html, "config": _config_html, "engine": _engine_html,
            "inspector": _inspector_html, "context": _context_html}[_kind(obj)](obj)


def to_dot(obj: Any) -> str:
    """Graphviz DOT text of a network (layers) or an engine (fused steps)."""
    kind = _kind(obj)
    if kind == "network":
        return _network_dot(obj)
    if kind == "engine":
        return _steps_dot(_engine_doc(obj), obj.name or "engine")
    if kind == "inspector":
        return _steps_dot(_inspector_doc(obj), "engine")
    raise TypeError(f"to_dot: no graph for {type(obj).__name__}")


def to_svg(obj: Any) -> str:
    """SVG of :func:`to_dot`, rendered by the optional `graphviz` package."""
    dot = to_dot(obj)
    try:
        import graphviz  # type: ignore[import-not-found]
    except ImportError:
        raise ImportError("to_svg() needs the graphviz package (pip install graphviz) and the Graphviz 'dot' "
                          "program; to_dot() gives the DOT text without them") from None
    try:
        return builtins.bytes(graphviz.Source(dot).pipe(format="svg")).decode("utf-8")
    except Exception as e:  # graphviz.ExecutableNotFound and friends
        raise RuntimeError(f"to_svg(): rendering with Graphviz failed: {e}") from e
