"""Importers for ONNX control flow: If, Loop and Scan, mapped onto IIfConditional and ILoop (trtlite.controlflow).

A body graph is imported into the same network, in a scope of its own: its inputs are bound to the loop's
recurrences / iterators, names of the enclosing graphs stay visible (outer-scope values), and its own names are
forgotten afterwards.  The builder finds which layers belong to the loop or to each branch by data flow, so
outer-scope values need no special treatment; the conditional's inputs are still routed through
``add_input`` so that the work of a branch is done only when it is taken.  Inside a body, nodes whose inputs
are all constants are computed while parsing, as everywhere.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from .._enums import DataType, ElementWiseOperation, LoopOutput, TripLimit
from .context import ImporterContext
from .errors import ErrorCode, Fail, unsupported
from .registry import importer

INT32_MAX = 2 ** 31 - 1


def _import_body(p: ImporterContext, graph: Any, bind: Dict[str, Any], what: str) -> List[Any]:
    """Imports `graph`'s nodes with its inputs bound as `bind` (name -> ITensor or numpy value); returns its
    outputs (ITensor or numpy).  The enclosing scope's names are restored afterwards."""
    from . import loading
    saved = (dict(p._tensors), dict(p._consts), p._node_idx, p._node, p._node_name, p._sub, p._explicit_syms)
    try:
        for gi in graph.input:
            p._tensors.pop(gi.name, None)
            p._consts.pop(gi.name, None)
        loading.load_initializers(p, graph)
        for name, v in bind.items():
            if isinstance(v, np.ndarray):
                p._consts[name] = v
                p._tensors.pop(name, None)
            else:
                p._tensors[name] = v
                p._consts.pop(name, None)
        for k, node in enumerate(graph.node):
            p._node = node
            p._node_name = "%s/%s" % (saved[4], node.name or "%s_%d" % (node.op_type, k))
            p._sub = 0
            p._explicit_syms = {}
            try:
                p._import_node(p, node)
            except Fail as e:
                raise Fail(e.code, "%s, node '%s' (%s): %s" % (what, node.name, node.op_type, e))
        res = []
        for go in graph.output:
            if go.name in p._consts:
                res.append(p._consts[go.name])
            elif go.name in p._tensors:
                res.append(p._tensors[go.name])
            else:
                raise Fail(ErrorCode.INVALID_GRAPH, "%s: output '%s' is not computed" % (what, go.name))
        return res
    finally:
        p._tensors, p._consts = saved[0], saved[1]
        p._node_idx, p._node, p._node_name, p._sub, p._explicit_syms = saved[2:]


def _as_tensor(p: ImporterContext, v: Any) -> Any:
    return p._const_tensor(v) if isinstance(v, np.ndarray) else v


def _distinct(p: ImporterContext, nxt: Any, rec: Any) -> Any:
    """A recurrence's next value, through an identity when it is the recurrence's own output (carried unchanged)."""
    if nxt.name == rec.get_output(0).name:
        return p._L(p.network.add_identity(nxt))
    return nxt


def _scalar(p: ImporterContext, t: Any) -> Any:
    """A 1-element tensor as a 0-d one."""
    if len(t.shape) == 0:
        return t
    return p._reshape(t, [])


class _Outer:
    """Routes the outer-scope tensors a branch reads through IIfConditional.add_input (once per tensor)."""

    def __init__(self, p: ImporterContext, cond: Any, graphs: List[Any]) -> None:
        self.p, self.cond, self.seen = p, cond, {}
        names = set()
        for g in graphs:
            names |= _outer_names(g)
        self.names = names

    def bind(self) -> Dict[str, Any]:
        """name -> conditional input, for every outer tensor (not constant) some branch reads."""
        out = {}
        for n in sorted(self.names):
            if n in self.p._tensors:
                if n not in self.seen:
                    self.seen[n] = self.p._name_layer(self.cond.add_input(self.p._tensors[n]), "in").get_output(0)
                out[n] = self.seen[n]
        return out


def _outer_names(graph: Any) -> set:
    """Names a graph (and the graphs nested in it) reads but does not define."""
    defined = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    used = set()
    for n in graph.node:
        used.update(i for i in n.input if i)
        for at in n.attribute:
            if at.HasField("g"):
                used |= _outer_names(at.g)
            for g in at.graphs:
                used |= _outer_names(g)
        defined.update(o for o in n.output if o)
    used.update(o.name for o in graph.output)
    return used - defined


@importer("If", restrictions="both branches must give outputs of the same shapes and types (TensorRT's "
          "IIfConditional); a condition known while parsing imports only the taken branch")
def _if(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    then_g, else_g = a["then_branch"], a["else_branch"]
    c = node.input[0]
    if p._is_const(c):
        taken = then_g if bool(np.asarray(p._cval(c, "condition")).reshape(-1)[0]) else else_g
        return _import_body(p, taken, {}, "If branch")
    cond = p.network.add_if_conditional()
    ct = p._tensor(c)
    if ct.dtype != DataType.BOOL:
        raise unsupported("If condition '%s' is %s, not BOOL" % (c, ct.dtype))
    p._name_layer(cond.set_condition(_scalar(p, ct)), "cond")
    outer = _Outer(p, cond, [then_g, else_g])
    t = _import_body(p, then_g, outer.bind(), "If then_branch")
    e = _import_body(p, else_g, outer.bind(), "If else_branch")
    if len(t) != len(e) or len(t) != len(node.output):
        raise Fail(ErrorCode.INVALID_NODE, "If: the branches give %d and %d outputs, the node has %d"
                   % (len(t), len(e), len(node.output)))
    outs = []
    for k, (tv, ev) in enumerate(zip(t, e)):
        layer = cond.add_output(_as_tensor(p, tv), _as_tensor(p, ev))
        outs.append(p._name_layer(layer, "out").get_output(0))
    return outs


def _count_tensor(p: ImporterContext, name: Optional[str]) -> Optional[Any]:
    """Loop's M as a 0-d INT32 tensor (clamped to INT32's range when known), or None when absent."""
    if not name:
        return None
    if p._is_const(name):
        m = int(np.asarray(p._cval(name, "M")).reshape(-1)[0])
        return p._const_tensor(np.array(max(0, min(m, INT32_MAX)), np.int32))
    t = p._tensor(name)
    if t.dtype != DataType.INT32:
        t = p._cast(t, DataType.INT32)
    return _scalar(p, t)


@importer("Loop", restrictions="loop-carried values keep their shapes; scan outputs need the trip count M known "
          "while parsing (a constant), as TensorRT needs the length of a concatenating loop output")
def _loop(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    body = a["body"]
    net = p.network
    m_name = p._inp(node, 0)
    c_name = p._inp(node, 1)
    v_names = list(node.input[2:])
    n_v = len(v_names)
    if len(body.input) != n_v + 2 or len(body.output) < n_v + 1:
        raise Fail(ErrorCode.INVALID_NODE, "Loop body has %d inputs / %d outputs for %d loop-carried values"
                   % (len(body.input), len(body.output), n_v))
    loop = net.add_loop()
    count = _count_tensor(p, m_name)
    if count is not None:
        p._name_layer(loop.add_trip_limit(count, TripLimit.COUNT), "trip")
    bind: Dict[str, Any] = {}
    it = p._name_layer(loop.add_recurrence(p._const_tensor(np.array(0, np.int32))), "iter")
    bind[body.input[0].name] = it.get_output(0)
    it.set_input(1, p._L(net.add_elementwise(it.get_output(0), p._const_tensor(np.array(1, np.int32)),
                                              ElementWiseOperation.SUM)))
    cond_rec = None
    cond_in, cond_out = body.input[1].name, body.output[0].name
    passthrough = cond_out == cond_in
    if c_name and p._is_const(c_name):
        if not bool(np.asarray(p._cval(c_name, "cond")).reshape(-1)[0]):  # no iteration runs
            count = p._const_tensor(np.array(0, np.int32))
            if m_name is None:
                p._name_layer(loop.add_trip_limit(count, TripLimit.COUNT), "trip")
            else:
                raise unsupported("Loop with a constant false condition and a trip count")
        bind[cond_in] = np.array(True)
        if passthrough and m_name is None:
            raise unsupported("Loop without a trip count whose condition never changes (it would never end)")
        if not passthrough:
            cond_rec = loop.add_recurrence(p._const_tensor(np.array(True)))
    elif c_name:
        ct = _scalar(p, p._tensor(c_name))
        if passthrough:
            p._name_layer(loop.add_trip_limit(ct, TripLimit.WHILE), "while")
            bind[cond_in] = ct
        else:
            cond_rec = loop.add_recurrence(ct)
    elif not passthrough:
        cond_rec = loop.add_recurrence(p._const_tensor(np.array(True)))
    else:
        bind[cond_in] = np.array(True)
    if cond_rec is not None:
        p._name_layer(cond_rec, "cond")
        bind[cond_in] = cond_rec.get_output(0)
    if count is None and cond_rec is None and not (c_name and passthrough):
        raise unsupported("Loop with neither a trip count nor a condition would never end")
    recs = []
    for k, v in enumerate(v_names):
        r = p._name_layer(loop.add_recurrence(p._tensor(v)), "v")
        recs.append(r)
        bind[body.input[2 + k].name] = r.get_output(0)
    outs = _import_body(p, body, bind, "Loop body")
    if cond_rec is not None:
        cv = outs[0]
        ct = _scalar(p, _as_tensor(p, np.asarray(cv, dtype=bool) if isinstance(cv, np.ndarray) else cv))
        cond_rec.set_input(1, _distinct(p, ct, cond_rec))
        p._name_layer(loop.add_trip_limit(cond_rec.get_output(0), TripLimit.WHILE), "while")
    for k, r in enumerate(recs):
        r.set_input(1, _distinct(p, _as_tensor(p, outs[1 + k]), r))
    results = [p._name_layer(loop.add_loop_output(r.get_output(0), LoopOutput.LAST_VALUE), "final").get_output(0)
               for r in recs]
    for sv in outs[1 + n_v:]:
        layer = loop.add_loop_output(_as_tensor(p, sv), LoopOutput.CONCATENATE, 0)
        results.append(p._name_layer(layer, "scan").get_output(0))
    return results


@importer("Scan", restrictions="state variables keep their shapes; Scan-8 (opset 8: a batch axis) with a static "
          "batch size and no sequence_lens shorter than the sequence", opsets=(8, None))
def _scan(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    if p._opset < 9:
        return _scan8(p, node, a)
    body = a["body"]
    n_scan = int(a["num_scan_inputs"])
    ins = list(node.input)
    n_state = len(ins) - n_scan
    n_scan_out = len(body.output) - n_state
    if n_state < 0 or len(body.input) != len(ins) or n_scan_out < 0:
        raise Fail(ErrorCode.INVALID_NODE, "Scan: %d inputs, %d scan inputs, body has %d inputs / %d outputs"
                   % (len(ins), n_scan, len(body.input), len(body.output)))
    in_axes = list(a.get("scan_input_axes", [0] * n_scan))
    in_dirs = list(a.get("scan_input_directions", [0] * n_scan))
    out_axes = list(a.get("scan_output_axes", [0] * n_scan_out))
    out_dirs = list(a.get("scan_output_directions", [0] * n_scan_out))
    return _scan_loop(p, body, ins, n_state, n_scan, in_axes, in_dirs, out_axes, out_dirs)


def _scan8(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Scan-8: input 0 the optional sequence_lens, then the states and scan inputs, each with a leading batch
    axis (scan inputs scanned along axis 1).  The body runs per batch entry, so each entry is one Scan-9 loop
    over that entry's slices (the batch size must be static), and the results are stacked along a new batch
    axis.  sequence_lens must be absent or a constant holding the full sequence length."""
    body = a["body"]
    n_scan = int(a["num_scan_inputs"])
    ins = list(node.input)
    seq, ins = (ins[0] if ins else ""), ins[1:]
    n_state = len(ins) - n_scan
    n_scan_out = len(body.output) - n_state
    if n_state < 0 or len(body.input) != len(ins) or n_scan_out < 0 or not ins:
        raise Fail(ErrorCode.INVALID_NODE, "Scan-8: %d inputs, %d scan inputs, body has %d inputs / %d outputs"
                   % (len(ins) + 1, n_scan, len(body.input), len(body.output)))
    ts = [p._tensor(n) for n in ins]
    batch = int(ts[0].shape[0]) if len(ts[0].shape) else -1
    if batch < 0 or any(len(t.shape) == 0 or int(t.shape[0]) != batch for t in ts):
        raise unsupported("Scan-8 needs one static batch size, the first dim of every input (got %s)"
                          % [tuple(t.shape) for t in ts], ErrorCode.UNSUPPORTED_NODE_SHAPE)
    if seq:
        lengths = [int(t.shape[1]) for t in ts[n_state:]]
        if not p._is_const(seq) or not lengths or min(lengths) < 0 or \
                any(int(v) != lengths[0] for v in np.asarray(p._cval(seq, "sequence_lens")).reshape(-1)):
            raise unsupported("Scan-8 with sequence_lens other than the full (static) sequence length")
    dirs = list(a.get("directions", [0] * n_scan))
    per_batch = []
    for b in range(batch):
        names = []
        for k, t in enumerate(ts):
            name = "%s/scan8_batch%d_input%d" % (node.output[0] or node.name, b, k)
            p._tensors[name] = p._squeeze(p._gather_axis(t, 0, np.array([b])), [0])
            names.append(name)
        per_batch.append(_scan_loop(p, body if b == 0 else _renamed_body(body, "/scan8_batch%d" % b), names,
                                    n_state, n_scan, [0] * n_scan, dirs, [0] * n_scan_out, [0] * n_scan_out))
    results = []
    for j in range(len(per_batch[0])):
        parts = [p._unsqueeze(res[j], [0]) for res in per_batch]
        results.append(p._concat_layer(parts, 0) if len(parts) > 1 else parts[0])
    return results


def _renamed_body(body: Any, suffix: str) -> Any:
    """A copy of `body` whose own values (inputs, initializers, node outputs) carry `suffix`, so that importing
    it once more makes tensors of new names; names from the enclosing scope and nested subgraphs are left as
    they are (a nested subgraph reading a renamed value of this body is refused by the import as undefined)."""
    import onnx
    g = onnx.GraphProto()
    g.CopyFrom(body)
    own = {v.name for v in g.input} | {t.name for t in g.initializer} | {o for n in g.node for o in n.output if o}
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.name in own:
            v.name += suffix
    for t in g.initializer:
        t.name += suffix
    for n in g.node:
        for i, name in enumerate(n.input):
            if name in own:
                n.input[i] = name + suffix
        for i, name in enumerate(n.output):
            if name:
                n.output[i] = name + suffix
        if n.name:
            n.name += suffix
    return g


def _scan_loop(p: ImporterContext, body: Any, ins: List[str], n_state: int, n_scan: int, in_axes: List[int],
               in_dirs: List[int], out_axes: List[int], out_dirs: List[int]) -> List[Any]:
    """Scan-9 and later as one ILoop: states as recurrences, scan inputs as iterators, scan outputs
    concatenated (or reversed) loop outputs."""
    net = p.network
    loop = net.add_loop()
    # the iterators bound the trip count (all scan inputs have the same length along their axes)
    p._name_layer(loop.add_trip_limit(p._const_tensor(np.array(INT32_MAX, np.int32)), TripLimit.COUNT), "trip")
    bind: Dict[str, Any] = {}
    recs = []
    for k in range(n_state):
        r = p._name_layer(loop.add_recurrence(p._tensor(ins[k])), "state")
        recs.append(r)
        bind[body.input[k].name] = r.get_output(0)
    for k in range(n_scan):
        t = p._tensor(ins[n_state + k])
        axis = p._norm_axis(int(in_axes[k]), len(t.shape), "scan_input_axes")
        layer = p._name_layer(loop.add_iterator(t, axis, bool(in_dirs[k])), "iter")
        bind[body.input[n_state + k].name] = layer.get_output(0)
    outs = _import_body(p, body, bind, "Scan body")
    for k, r in enumerate(recs):
        r.set_input(1, _distinct(p, _as_tensor(p, outs[k]), r))
    results = [p._name_layer(loop.add_loop_output(r.get_output(0), LoopOutput.LAST_VALUE), "final").get_output(0)
               for r in recs]
    for k, sv in enumerate(outs[n_state:]):
        t = _as_tensor(p, sv)
        axis = p._norm_axis(int(out_axes[k]), len(t.shape) + 1, "scan_output_axes")
        kind = LoopOutput.REVERSE if out_dirs[k] else LoopOutput.CONCATENATE
        results.append(p._name_layer(loop.add_loop_output(t, kind, axis), "scan").get_output(0))
    return results
