"""Importers of shape ops: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split, Identity, Dropout,
Tile, Expand, DepthToSpace, SpaceToDepth, and Shape/Size/Range over run-time values."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._enums import DataType, ElementWiseOperation, FillOperation, SampleMode, Severity, UnaryOperation
from .constants import FOLD_LIMIT, attr_ints, split_sizes
from .context import ImporterContext
from .errors import Dynamic, ErrorCode, Fail, unsupported
from .registry import importer
from .shape_eval import Sym, has_sym, is_static
from .shape_tensors import runtime_expand, runtime_reshape, shape_input


@importer("Identity", "Dropout",
          restrictions={"Identity": "none",
                        "Dropout": "training_mode absent or false: an identity (the mask output needs a static "
                                   "shape); training_mode true or fed at run time: a seeded RANDOM_UNIFORM fill "
                                   "decides the kept elements (not numpy's generator: other values than onnx's "
                                   "reference draws)"})
def _identity(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    mode = p._inp(node, 2) if node.op_type == "Dropout" else None
    if mode is not None and (not p._is_const(mode) or
                             bool(np.asarray(p._cval(mode, "training_mode")).reshape(-1)[:1].any())):
        return _dropout_training(p, node, a, x, mode)
    outs = [x]
    if len(node.output) > 1 and node.output[1]:
        shp = tuple(x.shape)
        if not is_static(shp):
            raise Dynamic("Dropout's mask output with a dynamic shape %s" % (shp,))
        if int(np.prod(shp, dtype=np.float64)) > FOLD_LIMIT:  # one element broadcast at run time (stride 0)
            one = p._const_tensor(np.ones([1] * len(shp), np.bool_))
            outs.append(p._L(p.network.add_slice(one, [0] * len(shp), list(shp), [0] * len(shp))))
        else:
            outs.append(np.ones(shp, np.bool_))
    return outs


def _dropout_training(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any, mode: str) -> List[Any]:
    """Dropout-12+ with training_mode true or fed at run time: keep = uniform[0, 1) >= ratio (an IFillLayer
    RANDOM_UNIFORM of x's shape, seeded by the `seed` attribute, else 0), y = x * keep / (1 - ratio) where
    training_mode holds, x elsewhere; the mask output is keep (true where not training)."""
    E = ElementWiseOperation
    x = p._float(x, "Dropout's input")
    r = len(x.shape)
    rn = p._inp(node, 1)
    ratio = p._float(p._tensor(rn), "Dropout's ratio") if rn else p._const_tensor(np.float32(0.5))
    if len(ratio.shape) != 0 and tuple(ratio.shape) != (1,):
        raise Fail(ErrorCode.INVALID_NODE, "Dropout's ratio must be a scalar, got shape %s" % (tuple(ratio.shape),))
    if rn and p._is_const(rn):
        rv = float(np.asarray(p._cval(rn, "ratio")).reshape(-1)[0])
        if not 0.0 <= rv < 1.0:
            raise Fail(ErrorCode.INVALID_NODE, "Dropout's ratio %g must be in [0, 1)" % rv)
    ratio = p._reshape(ratio, [1] * r, zero_is_placeholder=False) if r else p._reshape(ratio, [],
                                                                                     zero_is_placeholder=False)
    train = p._tensor(mode)
    if train.dtype != DataType.BOOL:
        train = p._cast(train, DataType.BOOL)
    train = p._reshape(train, [1] * r, zero_is_placeholder=False) if r else p._reshape(train, [],
                                                                                     zero_is_placeholder=False)
    fill = p.network.add_fill((0,), FillOperation.RANDOM_UNIFORM, DataType.FLOAT)
    fill.set_input(0, p._L(p.network.add_shape(x)))
    fill.alpha, fill.beta = 0.0, 1.0
    fill.seed = int(float(a.get("seed", 0))) & 0x7FFFFFFF
    u = p._L(fill)
    keep = p._unary(p._ew(u, ratio, E.LESS), UnaryOperation.NOT)
    scale = p._ew(p._const_tensor(np.ones([1] * r, np.float32)), p._ew_const(ratio, np.float32(1), E.SUB,
                                                                             const_first=True), E.DIV)
    kept = p._L(p.network.add_select(keep, p._ew(x, scale, E.PROD), p._const_tensor(np.zeros([1] * r, np.float32))))
    y = p._L(p.network.add_select(train, kept, x))
    outs = [y]
    if len(node.output) > 1 and node.output[1]:
        outs.append(p._ew(keep, p._unary(train, UnaryOperation.NOT), E.OR))
    return outs


def _resolve_reshape(p: ImporterContext, xname: str, x: Any, target: np.ndarray,
                     allowzero: bool) -> Tuple[List[int], bool]:
    xs = tuple(x.shape)
    dims: List[Optional[int]] = []
    copy_used = False
    literal_zero = False
    for i, v in enumerate(target.reshape(-1)):
        if isinstance(v, Sym):
            if i < len(xs) and xs[i] < 0 and p._dim_is(v, xname, i):
                dims.append(0)
                copy_used = True
            else:
                dims.append(None)
            continue
        v = int(v)
        if v == 0:
            if allowzero:
                literal_zero = True
            else:
                copy_used = True
        dims.append(v)
    unknown = [i for i, d in enumerate(dims) if d is None]
    if unknown:
        if len(unknown) == 1 and -1 not in dims:
            dims[unknown[0]] = -1
        else:
            raise Dynamic("Reshape target %s holds dynamic dimensions that are neither copied from the input "
                          "(same position) nor inferable (at most one -1)" % list(target.reshape(-1)))
    if literal_zero and copy_used:
        raise unsupported("Reshape with allowzero=1, a literal 0 and a dynamic dimension to copy")
    return [int(d) for d in dims], not literal_zero


@importer("Reshape",
          restrictions=("none: a shape computed at run time (a graph input or from dynamic dims) is a shape tensor "
                        "(its values known once input shapes and shape-input values are set)"))
def _reshape_op(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    xname = node.input[0]
    x = p._tensor(xname)
    allowzero = bool(int(a.get("allowzero", 0)))
    if p._opset < 5:
        target = np.array(a["shape"], dtype=np.int64)
    elif not p._is_const(p._inp(node, 1) or ""):
        return [runtime_reshape(p, x, shape_input(p, node.input[1]), allowzero)]
    else:
        target = p._cval(p._inp(node, 1), "shape (input 1)", allow_sym=True)
    try:
        dims, zero_ph = _resolve_reshape(p, xname, x, target, allowzero)
    except Dynamic:
        if target.dtype != object:
            raise
        return [runtime_reshape(p, x, p._const_tensor(target), allowzero)]
    xs = tuple(x.shape)
    xk = p._raw_keys(xname)
    keys = []
    for i, v in enumerate(target.reshape(-1)):
        if isinstance(v, Sym):
            keys.append(v.key)
        elif int(v) == 0 and not allowzero and i < len(xk):
            keys.append(xk[i])
        else:
            keys.append(None if int(v) < 0 else int(v))
    p._set_syms(0, keys)
    if zero_ph and is_static(xs):  # write the copied dims out: plain static reshape
        dims = [xs[i] if d == 0 else d for i, d in enumerate(dims)]
    return [p._reshape(x, dims, zero_is_placeholder=zero_ph)]


@importer("Flatten",
          restrictions="the dims before or after axis must be static, or axis is 1")
def _flatten(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    r = len(x.shape)
    axis = int(a.get("axis", 1))
    if axis < 0:
        axis += r
    if not 0 <= axis <= r:
        raise Fail(ErrorCode.INVALID_NODE, "axis %d out of range for rank %d" % (a.get("axis", 1), r))
    if axis == 0:
        return [p._reshape(x, [1, -1], zero_is_placeholder=False)]
    if axis == 1:
        p._set_syms(0, [p._raw_keys(node.input[0])[0], None])
    return [p._reshape_2d(x, axis)]


@importer("Transpose",
          restrictions="none")
def _transpose_op(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    r = len(x.shape)
    perm = attr_ints(a, "perm") or list(range(r))[::-1]
    if sorted(perm) != list(range(r)):
        raise Fail(ErrorCode.INVALID_NODE, "perm %s is not a permutation of rank %d" % (perm, r))
    if perm == list(range(r)):
        return [p._L(p.network.add_identity(x))]
    return [p._transpose(x, perm)]


def _runtime_axes_layer(p: ImporterContext, add: Any, x: Any, an: str) -> Any:
    """A squeeze / unsqueeze layer whose axes are the run-time values of `an` (a 1-D tensor of static length)."""
    from .shape_tensors import shape_input
    axes = shape_input(p, an)
    if len(axes.shape) != 1 or axes.shape[0] < 0:
        raise Dynamic("axes of a dynamic length or rank")
    return p._L(add(x, axes))


@importer("Squeeze",
          restrictions="axes computed at run time must have a static count")
def _squeeze_op(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    r = len(xs)
    if p._opset >= 13:
        an = p._inp(node, 1)
        if an is not None and not p._is_const(an):  # axes known at run time: a shape tensor (trtlite's extension)
            return [_runtime_axes_layer(p, p.network.add_squeeze, x, an)]
        axes = None if an is None else [int(v) for v in p._cval(an, "axes").reshape(-1)]
    else:
        axes = attr_ints(a, "axes")
    if axes is None:
        axes = [i for i, d in enumerate(xs) if d == 1]
        if any(d < 0 for d in xs):
            p._log(Severity.WARNING, "ONNX parser: node '%s': Squeeze without axes keeps the dynamic dims of %s"
                   % (p._node_name, xs))
    axes = [p._norm_axis(ax, r) for ax in axes]
    xk = p._raw_keys(node.input[0])
    p._set_syms(0, [k for i, k in enumerate(xk) if i not in axes])
    y = p._squeeze(x, axes)
    if y is x:
        y = p._L(p.network.add_identity(x))
    return [y]


@importer("Unsqueeze",
          restrictions="axes computed at run time must have a static count")
def _unsqueeze_op(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    if p._opset >= 13:
        an = p._inp(node, 1)
        if an is not None and not p._is_const(an):
            return [_runtime_axes_layer(p, p.network.add_unsqueeze, x, an)]
        axes = [int(v) for v in p._cval(an, "axes").reshape(-1)]
    else:
        axes = attr_ints(a, "axes")
    out_r = len(x.shape) + len(axes)
    axes = sorted(p._norm_axis(ax, out_r) for ax in axes)
    if len(set(axes)) != len(axes):
        raise Fail(ErrorCode.INVALID_NODE, "repeated axes %s" % axes)
    it = iter(p._raw_keys(node.input[0]))
    p._set_syms(0, [1 if i in axes else next(it, None) for i in range(out_r)])
    return [p._unsqueeze(x, axes)]


@importer("Concat",
          restrictions="none")
def _concat(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    names = [n for n in node.input if n]
    dtype = None
    for n in names:
        if n in p._tensors:
            dtype = p._tensors[n].dtype
            break
    ts = [p._tensor(n, dtype) for n in names]
    r = len(ts[0].shape)
    axis = p._norm_axis(int(a["axis"]), r)
    # drop empty constants along the axis (exporters write them for optional pieces)
    keep = [t for t, n in zip(ts, names) if not (n in p._consts and p._consts[n].ndim == r and
                                                 p._consts[n].shape[axis] == 0)]
    ts = keep or ts
    if len(ts) == 1:  # the piece itself, as Identity (DenseNet's first layer of a block: a copy of the map otherwise)
        return [ts[0]]
    return [p._concat_layer(ts, axis)]  # (runs of at most 64 inputs first)


@importer("Split",
          restrictions="none: split sizes may be constants or computed at run time, and equal parts of a dynamic "
                       "axis are computed at run time")
def _split(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    axis = p._norm_axis(int(a.get("axis", 0)), len(xs))
    sn = p._inp(node, 1)
    if sn is not None and not p._is_const(sn):  # split sizes known at run time: slices with shape-tensor inputs
        from .shape_tensors import runtime_split
        outs = runtime_split(p, x, shape_input(p, sn, 1 << 16), axis)
        if len(outs) != len([o for o in node.output]):
            raise Fail(ErrorCode.INVALID_NODE, "split has %d sizes for %d outputs" % (len(outs), len(node.output)))
        return outs
    vals = [None] + [p._cval(n, "split") if n else None for n in node.input[1:2]]
    given = (len(vals) > 1 and vals[1] is not None) if p._opset >= 13 else "split" in a
    if xs[axis] < 0 and not given:  # equal parts of a dynamic axis: sizes computed at run time
        from .shape_tensors import runtime_split, runtime_split_sizes
        n_out = len(node.output)
        if "num_outputs" in a and int(a["num_outputs"]) != n_out:
            raise Fail(ErrorCode.INVALID_NODE, "num_outputs %d but the node has %d outputs"
                       % (int(a["num_outputs"]), n_out))
        sizes_t = runtime_split_sizes(p, node.input[0], axis, n_out, "num_outputs" in a)
        return runtime_split(p, x, sizes_t, axis)
    sizes = split_sizes(p, node, a, vals, xs[axis])
    outs = []
    start = 0
    for n in sizes:
        outs.append(p._slice(x, {axis: (start, n, 1)}) if n != xs[axis] else p._L(p.network.add_identity(x)))
        start += n
    return outs


TILE_TABLE_MAX = 1 << 24  # elements of one axis' gather index table in Tile (else a WRAP slice)


@importer("Tile",
          restrictions="repeats known while parsing may not repeat dynamic axes; repeats computed at run time may")
def _tile(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    if not p._is_const(p._inp(node, 1) or ""):  # repeats computed at run time: a shape tensor
        from .shape_tensors import runtime_tile
        return [runtime_tile(p, x, shape_input(p, node.input[1]))]
    reps = [int(v) for v in p._cval(p._inp(node, 1), "repeats").reshape(-1)]
    if len(reps) != len(xs):
        raise Fail(ErrorCode.INVALID_NODE, "repeats %s for an input of rank %d" % (reps, len(xs)))
    if any(v < 0 for v in reps):
        raise Fail(ErrorCode.INVALID_NODE, "repeats %s must not be negative" % (reps,))
    for ax, rep in enumerate(reps):
        if rep != 1 and xs[ax] < 0:
            raise Dynamic("Tile along the dynamic axis %d" % ax)
    if any(d * rep > TILE_TABLE_MAX or d > TILE_TABLE_MAX for d, rep in zip(xs, reps) if d >= 0):
        # the gather index tables below hold the output's extent per axis (a fuzzed [2^31] input made a 16 GiB
        # arange; a [2, 3, N] input repeated 2^40 times along axis 0, 16 TiB): a WRAP slice of the output's size
        # reads the same elements with no table -- of a static size, or of the input's run-time shape times the
        # repeats where the input has dynamic axes (repeated once: checked above)
        if is_static(xs):
            layer = p.network.add_slice(x, [0] * len(xs), [d * rep for d, rep in zip(xs, reps)], [1] * len(xs))
            layer.mode = SampleMode.WRAP
            return [p._L(layer)]
        for ax, (d, rep) in enumerate(zip(xs, reps)):
            if d * rep > 2 ** 31 - 1:  # the run-time shape arithmetic is int32
                raise unsupported("Tile of axis %d (size %d) by %d: an extent of %d beside dynamic axes (at most "
                                  "2^31 - 1)" % (ax, d, rep, d * rep), ErrorCode.UNSUPPORTED_NODE_SHAPE)
        from .shape_tensors import runtime_tile
        return [runtime_tile(p, x, p._const_tensor(np.array(reps, np.int32)))]
    y = x
    for ax, rep in enumerate(reps):
        if rep == 1:
            continue
        y = p._gather_axis(y, ax, np.tile(np.arange(xs[ax]), rep))
    if y is x:
        y = p._L(p.network.add_identity(x))
    return [y]


@importer("Expand",
          restrictions="none: a shape computed at run time (a graph input or a layer output) is a shape tensor")
def _expand(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    xname = node.input[0]
    x = p._tensor(xname)
    if not p._is_const(p._inp(node, 1) or ""):
        return [runtime_expand(p, x, shape_input(p, node.input[1]))]
    shape = p._cval(p._inp(node, 1), "shape", allow_sym=True).reshape(-1)
    r0 = len(x.shape)
    r = max(r0, len(shape))
    xk = p._raw_keys(xname)
    x = p._unsqueeze_to(x, r)
    xs = tuple(x.shape)
    off = r - r0
    shape = [1] * (r - len(shape)) + list(shape)
    spec: Dict[int, int] = {}  # static target n of a static 1-dim: copied n times
    dyn: Dict[int, Any] = {}  # dims whose size is known only at run time: broadcast by a select
    keys: List[Any] = []
    for i in range(r):
        s, d = shape[i], xs[i]
        k = xk[i - off] if i >= off and i - off < len(xk) else 1
        if isinstance(s, Sym):
            if d >= 0 and d != 1:
                keys.append(d)
                continue  # broadcasting keeps x's static dim
            keys.append(s.key)
            if d < 0 and p._dim_is(s, xname, i - off):
                continue
            dyn[i] = s  # x's 1 (or a dynamic dim of size 1 or s at run time) broadcast to s
            continue
        s = int(s)
        keys.append(k if s == 1 else s)
        if s == 1 or s == d:
            continue
        if d == 1:
            spec[i] = s
        elif d < 0:
            dyn[i] = s  # x's dynamic dim must be 1 or s at run time: broadcast against a static carrier
        else:
            raise Fail(ErrorCode.INVALID_NODE, "cannot expand shape %s to %s" % (xs, shape))
    p._set_syms(0, keys)
    if not spec and not dyn:
        return [p._L(p.network.add_identity(x))]
    y = x
    static_dyn = {i: n for i, n in dyn.items() if not isinstance(n, Sym)}
    if spec and is_static(xs):
        out = [spec.get(i, xs[i]) for i in range(r)]
        stride = [0 if i in spec else 1 for i in range(r)]
        y = p._L(p.network.add_slice(x, [0] * r, out, stride))
    else:
        static_dyn.update(spec)  # x's static 1 broadcast by the same select (x has dynamic dims: no static slice)
    if static_dyn:
        # the carrier [1.., n, ..1] is a zero-stride slice of a one-element constant, not an n-element constant (or
        # an n-element gather index): fuzzed Expands to [1, 2^31 - 1] made the parser hold 2-8 GiB constants
        one = p._const_tensor(np.ones([1] * r, np.bool_), DataType.BOOL)
        cond = p._L(p.network.add_slice(one, [0] * r, [static_dyn.get(i, 1) for i in range(r)], [0] * r))
        y = p._L(p.network.add_select(cond, y, y))
    return [p._broadcast_to_syms(y, {i: v for i, v in dyn.items() if isinstance(v, Sym)}, "the target shape")]


def _integral_source(p: ImporterContext, name: str) -> Any:
    """An INT32 [1] shape tensor holding the value of the scalar FLOAT `name` when that value is an integer known
    to be one: a constant with an integral value below 2^24, or the output of an ONNX Cast of an integer value
    computed at run time (exactly representable while below 2^24, which the Range length bounds anyway); None
    otherwise."""
    if p._is_const(name):
        v = np.asarray(p._consts[name]).reshape(-1)
        if v.size != 1 or has_sym(v) or not float(v[0]).is_integer() or abs(float(v[0])) >= 2 ** 24:
            return None
        return p._const_tensor(np.array([int(v[0])], np.int32), DataType.INT32)
    producer = None
    for nd in p._model.graph.node:
        if name in nd.output:
            producer = nd
    if producer is None or producer.op_type != "Cast" or producer.input[0] not in p._tensors:
        return None
    src = p._tensors[producer.input[0]]
    if src.dtype != DataType.INT32 or tuple(src.shape) not in ((), (1,)):
        return None
    return p._reshape(shape_input(p, producer.input[0]), [1], zero_is_placeholder=False)


@importer("DepthToSpace", "SpaceToDepth",
          restrictions="4-D input with static C, H and W")
def _depth_space(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    xs = tuple(x.shape)
    if len(xs) != 4 or not is_static(xs[1:]):
        raise unsupported("%s needs a 4-D input with static C, H, W, got %s" % (node.op_type, xs),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)
    b = int(a["blocksize"])
    _, c, h, w = xs
    if node.op_type == "DepthToSpace":
        if c % (b * b):
            raise Fail(ErrorCode.INVALID_NODE, "channels %d not divisible by blocksize^2 %d" % (c, b * b))
        c2 = c // (b * b)
        if a.get("mode", "DCR") == "DCR":
            t = p._shuffle(x, reshape=[0, b, b, c2, h, w], second=[0, 3, 4, 1, 5, 2])
        else:
            t = p._shuffle(x, reshape=[0, c2, b, b, h, w], second=[0, 1, 4, 2, 5, 3])
        return [p._reshape(t, [0, c2, h * b, w * b])]
    if h % b or w % b:
        raise Fail(ErrorCode.INVALID_NODE, "H, W (%d, %d) not divisible by blocksize %d" % (h, w, b))
    # DCR (the default): output channel (bh * b + bw) * C + c; CRD (opset 25's mode): c * b * b + bh * b + bw
    perm = [0, 3, 5, 1, 2, 4] if a.get("mode", "DCR") == "DCR" else [0, 1, 3, 5, 2, 4]
    t = p._shuffle(x, reshape=[0, c, h // b, b, w // b, b], second=perm)
    return [p._reshape(t, [0, c * b * b, h // b, w // b])]


@importer("Shape", "Size",
          restrictions={"Shape": "none (computed while parsing; dynamic dims become symbols)",
                        "Size": "none (computed while parsing; dynamic dims become symbols)"})
def _shape_only(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    raise Dynamic("%s needs its inputs known while parsing (static shapes), but they are computed at run time"
                  % node.op_type)


@importer("Range",
          restrictions="integer start / limit / delta may be computed at run time (a LINSPACE fill whose length is a "
                       "shape tensor); FLOAT ones at run time when they are integers cast to float (HannWindow's "
                       "expansion) or when the output's length is static (asserted against the values)")
def _range(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Range (when not folded while parsing): an IFillLayer LINSPACE of max(ceil((limit - start) / delta), 0)
    elements, start and delta as its alpha / beta inputs; the length is computed on the host (shape tensors)
    when the inputs are integers fed at run time."""
    names = [node.input[i] for i in range(3)]
    consts = [p._is_const(n) for n in names]
    ts = [p._tensor(n) for n in names]
    dtype = DataType(ts[0].dtype)
    if dtype not in (DataType.FLOAT, DataType.INT32):
        raise unsupported("Range over %s" % dtype.name)
    E = ElementWiseOperation
    if all(consts) and not any(has_sym(p._consts[n]) for n in names):
        st, li, de = (p._cval(n, what).reshape(-1)[0] for n, what in zip(names, ("start", "limit", "delta")))
        if de == 0:
            raise Fail(ErrorCode.INVALID_NODE, "Range with delta 0")
        count = max(int(np.ceil((float(li) - float(st)) / float(de))), 0)
        length = p._const_tensor(np.array([count], np.int32), DataType.INT32)
    elif dtype == DataType.INT32:  # fed at run time, or holding dynamic dims (torch.arange(x.shape[1]))
        s, lim, d = (shape_input(p, n) for n in names)
        for t, what in zip((s, lim, d), ("start", "limit", "delta")):
            if tuple(t.shape) not in ((), (1,)):
                raise Fail(ErrorCode.INVALID_NODE, "Range's %s must be a scalar, got shape %s" % (what, tuple(t.shape)))
        # ceil((limit - start) / delta) as -((start - limit) // delta), at least 0
        q = p._ew(p._ew(s, lim, E.SUB), d, E.FLOOR_DIV)  # (_ew: scalars of rank 0 and 1 meet)
        n = p._ew_const(q, np.int32(0), E.SUB, const_first=True)
        n = p._ew_const(n, np.int32(0), E.MAX)
        length = p._reshape(n, [1], zero_is_placeholder=False)
    elif all(_integral_source(p, n) is not None for n in names):
        # FLOAT values that are integers cast to float (HannWindow's expansion: Range(0, Cast(size), 1)): the
        # length is the same INT32 shape arithmetic on the integers, the values stay FLOAT
        s, lim, d = (_integral_source(p, n) for n in names)
        q = p._ew(p._ew(s, lim, E.SUB), d, E.FLOOR_DIV)
        n = p._ew_const(p._ew_const(q, np.int32(0), E.SUB, const_first=True), np.int32(0), E.MAX)
        length = p._reshape(n, [1], zero_is_placeholder=False)
    else:
        # FLOAT values at run time: the length from the output's static shape, asserted against
        # max(ceil((limit - start) / delta), 0) computed from the values
        want = p._sym_dims(node.output[0])
        if want is None or len(want) != 1 or not isinstance(want[0], int) or want[0] < 0:
            raise unsupported("Range over FLOAT values computed at run time (its length would need float shape "
                              "tensors), with an output whose shape is not static")
        sc = [p._reshape(t, [1], zero_is_placeholder=False) for t in ts]
        cnt = p._unary(p._ew(p._ew(sc[1], sc[0], E.SUB), sc[2], E.DIV), UnaryOperation.CEIL)
        cnt = p._ew_const(cnt, np.float32(0.0), E.MAX)
        ok = p._ew_const(cnt, np.float32(want[0]), E.EQUAL)
        assertion = p.network.add_assertion(p._reshape(ok, [], zero_is_placeholder=False),
                                            "Range '%s': max(ceil((limit - start) / delta), 0) must be %d (the "
                                            "output's static length)" % (node.name, want[0]))
        p._name_layer(assertion, "assert")
        length = p._const_tensor(np.array([want[0]], np.int32), DataType.INT32)
    layer = p.network.add_fill((0,), FillOperation.LINSPACE, dtype)
    layer.set_input(0, length)
    layer.set_input(1, p._reshape(ts[0], [], zero_is_placeholder=False) if tuple(ts[0].shape) else ts[0])
    layer.set_input(2, p._reshape(ts[2], [1], zero_is_placeholder=False))
    return [p._L(layer)]
