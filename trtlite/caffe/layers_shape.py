"""Input, Concat, Slice, Split, Flatten, Reshape, Permute, Crop, Silence."""
from __future__ import annotations

from typing import Any, List

import numpy as np

from .. import _enums
from .context import BATCH
from .registry import importer


@importer("Input")
def input_layer(ctx: Any, L: Any) -> List[Any]:
    """Network inputs named after the tops, shaped by input_param.shape (one shape, or one per top).  Handled by
    the importer (importer.add_input); listed here for supported_layers()."""
    raise AssertionError("Input layers are added by the importer")


@importer("Split")
def split(ctx: Any, L: Any) -> List[Any]:
    """Every top is the bottom's tensor."""
    return [ctx.bottom(0)] * len(L.tops)


@importer("Silence")
def silence(ctx: Any, L: Any) -> List[Any]:
    """No output: the bottoms are just consumed."""
    ctx.bottoms()
    return []


@importer("Concat")
def concat(ctx: Any, L: Any) -> List[Any]:
    """Concatenation along `axis` (or the legacy concat_dim)."""
    p = L.param("concat_param")
    xs = ctx.bottoms()
    ndim = len(ctx.full_shape(xs[0]))
    a = int(p.concat_dim) if p.HasField("concat_dim") and not p.HasField("axis") else int(p.axis)
    axis = ctx.trt_axis(ctx.axis(a, ndim, "axis"), "axis")
    if len(xs) == 1:
        return [ctx.named(ctx.network.add_identity(xs[0])).get_output(0)]
    layer = ctx.named(ctx.network.add_concatenation(xs))
    layer.axis = axis
    return [layer.get_output(0)]


@importer("Slice")
def slice_layer(ctx: Any, L: Any) -> List[Any]:
    """Splits along `axis` (or the legacy slice_dim) at slice_point, or into len(top) equal parts."""
    p = L.param("slice_param")
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    a = int(p.slice_dim) if p.HasField("slice_dim") and not p.HasField("axis") else int(p.axis)
    axis = ctx.axis(a, len(shape), "axis")
    ta = ctx.trt_axis(axis, "axis")
    n, D = len(L.tops), shape[axis]
    if len(p.slice_point):
        pts = [int(v) for v in p.slice_point]
        if len(pts) != n - 1 or any(b <= a for a, b in zip([0] + pts, pts + [D])):
            raise ctx.fail("slice_point %s must hold %d increasing points inside (0, %d) for %d tops"
                           % (pts, n - 1, D, n))
    else:
        if D % n:
            raise ctx.fail("axis %d of size %d does not split into %d equal parts (give slice_point)" % (axis, D, n))
        pts = [D // n * i for i in range(1, n)]
    tshape = [int(d) for d in x.shape]
    outs = []
    for lo, hi in zip([0] + pts, pts + [D]):
        start, size = [0] * len(tshape), list(tshape)
        start[ta], size[ta] = lo, hi - lo
        outs.append(ctx.named(ctx.network.add_slice(x, tuple(start), tuple(size), (1,) * len(tshape))).get_output(0))
    return outs


@importer("Flatten")
def flatten(ctx: Any, L: Any) -> List[Any]:
    """Axes [axis, end_axis] merged into one."""
    p = L.param("flatten_param")
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    a = ctx.axis(p.axis, len(shape), "axis")
    e = ctx.axis(p.end_axis, len(shape), "end_axis")
    if e < a:
        raise ctx.fail("end_axis %d comes before axis %d" % (e, a))
    if BATCH in shape[a:e + 1] and e > a:
        ctx.trt_axis(0, "axis")
    merged = shape[a] if e == a else int(np.prod(shape[a:e + 1]))
    return [_copy_if_same(ctx, x, ctx.reshape(x, shape[:a] + [merged] + shape[e + 1:], "the flattening"))]


def _copy_if_same(ctx: Any, x: Any, y: Any) -> Any:
    """A layer whose output is its input (a no-op reshape) still gets its own tensor, named after its top."""
    return ctx.named(ctx.network.add_identity(x)).get_output(0) if y is x else y


@importer("Reshape")
def reshape(ctx: Any, L: Any) -> List[Any]:
    """reshape_param.shape replaces axes [axis, axis + num_axes) (num_axes -1: to the end): 0 copies the input's
    dim at that position, one -1 is inferred."""
    p = L.param("reshape_param")
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    nd = len(shape)
    axis = int(p.axis)
    axis = axis + nd + 1 if axis < 0 else axis
    if not 0 <= axis <= nd:
        raise ctx.fail("axis %d is out of range for a %d-D blob" % (p.axis, nd))
    end = nd if p.num_axes == -1 else axis + int(p.num_axes)
    if p.num_axes < -1 or end > nd:
        raise ctx.fail("num_axes %d does not fit a %d-D blob from axis %d" % (p.num_axes, nd, axis))
    dims = [int(d) for d in p.shape.dim]
    new: List[int] = []
    infer = [i for i, d in enumerate(dims) if d == -1]
    if len(infer) > 1 or any(d < -1 for d in dims):
        raise ctx.fail("shape %s: at most one -1 and no other negative dims" % dims)
    for i, d in enumerate(dims):
        if d == 0:
            if axis + i >= nd:
                raise ctx.fail("shape %s: dim %d copies input axis %d, which does not exist" % (dims, i, axis + i))
            new.append(shape[axis + i])
        else:
            new.append(d)
    if BATCH in shape[axis:end] and BATCH not in new:
        ctx.trt_axis(0, "the reshape")
    if infer:
        known = int(np.prod([d for d in new if d not in (-1, BATCH)] or [1]))
        total = int(np.prod([d for d in shape[axis:end] if d != BATCH] or [1]))
        if known == 0 or total % known:
            raise ctx.fail("shape %s does not fit the input's %s" % (dims, shape[axis:end]))
        new[infer[0]] = total // known
    out = shape[:axis] + new + shape[end:]
    if int(np.prod([d for d in out if d != BATCH])) != int(np.prod([d for d in shape if d != BATCH])):
        raise ctx.fail("shape %s gives %s, which does not hold the %s values of the input %s"
                       % (dims, out, int(np.prod([d for d in shape if d != BATCH])), shape))
    return [_copy_if_same(ctx, x, ctx.reshape(x, out, "the reshape"))]


@importer("Permute")
def permute(ctx: Any, L: Any) -> List[Any]:
    """Transpose to `order` (SSD); axes not listed follow in their order."""
    x = ctx.bottom(0)
    nd = len(ctx.full_shape(x))
    order = [int(o) for o in L.param("permute_param").order]
    if any(not 0 <= o < nd for o in order) or len(set(order)) != len(order):
        raise ctx.fail("order %s is not a permutation of the axes of a %d-D blob" % (order, nd))
    order += [a for a in range(nd) if a not in order]
    if ctx.implicit:
        if order[0] != 0:
            ctx.trt_axis(0, "order")
        order = [o - 1 for o in order[1:]]
    s = ctx.named(ctx.network.add_shuffle(x))
    s.first_transpose = tuple(order)
    return [s.get_output(0)]


@importer("Crop")
def crop(ctx: Any, L: Any) -> List[Any]:
    """Bottom 0 cropped to bottom 1's shape from `axis` on, starting at `offset` (one value for all cropped axes,
    or one per axis; default 0)."""
    p = L.param("crop_param")
    x, ref = ctx.bottom(0), ctx.bottom(1)
    shape, rshape = ctx.full_shape(x), ctx.full_shape(ref)
    if len(shape) != len(rshape):
        raise ctx.fail("bottoms have different ranks: %s and %s" % (shape, rshape))
    axis = ctx.axis(p.axis, len(shape), "axis")
    if ctx.implicit and axis == 0:
        ctx.trt_axis(0, "axis")
    n = len(shape) - axis
    offs = [int(o) for o in p.offset]
    offs = [0] * n if not offs else (offs * n if len(offs) == 1 else offs)
    if len(offs) != n:
        raise ctx.fail("offset has %d values; give 1 or one per cropped axis (%d)" % (len(p.offset), n))
    start, size = [0] * len(shape), list(shape)
    for i in range(n):
        a = axis + i
        if offs[i] + rshape[a] > shape[a]:
            raise ctx.fail("crop of %d at offset %d does not fit axis %d of size %d" % (rshape[a], offs[i], a, shape[a]))
        start[a], size[a] = offs[i], rshape[a]
    if ctx.implicit:
        start, size = start[1:], size[1:]
    layer = ctx.named(ctx.network.add_slice(x, tuple(start), tuple(size), (1,) * len(start)))
    return [layer.get_output(0)]
