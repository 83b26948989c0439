"""Importers of ops whose output sizes depend on the data: NonZero, NonMaxSuppression (INonZeroLayer, INMSLayer).

Their outputs have a dim of -1 until execution; an engine output computed from them needs an output allocator
(``context.set_output_allocator``) or a buffer of ``context.get_max_output_size(name)`` bytes.  ONNX's int64
index outputs are INT32 here, as every integer tensor the parser makes.
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._enums import BoundingBoxFormat, DataType
from .context import ImporterContext
from .registry import importer


@importer("NonZero",
          restrictions="output indices are INT32 (ONNX: INT64); the count is known only after execution")
def _non_zero(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    layer = p.network.add_non_zero(x)
    p._name_layer(layer)
    return [layer.get_output(0)]


@importer("NonMaxSuppression",
          restrictions="selected indices are INT32 (ONNX: INT64); their count is known only after execution")
def _nms(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    boxes = p._tensor(node.input[0], DataType.FLOAT)
    scores = p._tensor(node.input[1], DataType.FLOAT)
    # ONNX scores are [batch, classes, boxes]; INMSLayer takes [batch, boxes, classes]
    tr = p.network.add_shuffle(scores)
    tr.first_transpose = (0, 2, 1)
    p._name_layer(tr, "transpose")
    mo = p._inp(node, 2)
    max_out = p._tensor(mo, DataType.INT32) if mo else p._const_tensor(np.array(0, np.int32))
    it = p._inp(node, 3)
    iou = p._tensor(it, DataType.FLOAT) if it else p._const_tensor(np.array(0.0, np.float32))
    st = p._inp(node, 4)
    # no score threshold in ONNX: every score counts (INMSLayer's default 0 would drop scores <= 0)
    score = p._tensor(st, DataType.FLOAT) if st else p._const_tensor(np.array(-np.inf, np.float32))
    layer = p.network.add_nms(boxes, tr.get_output(0), max_out)
    layer.set_input(3, iou)
    layer.set_input(4, score)
    layer.bounding_box_format = (BoundingBoxFormat.CENTER_SIZES if int(a.get("center_point_box", 0))
                                 else BoundingBoxFormat.CORNER_PAIRS)
    layer.topk_box_limit = 2**31 - 1  # ONNX has no such limit
    p._name_layer(layer)
    return [layer.get_output(0)]


@importer("Compress",
          restrictions="a condition computed at run time gives a data-dependent output (count known after execution)")
def _compress(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    if "axis" not in a:  # the flattened input
        flat = p.network.add_shuffle(x)
        flat.reshape_dims = (-1,)
        p._name_layer(flat, "flatten")
        x, axis = flat.get_output(0), 0
    else:
        axis = p._norm_axis(int(a["axis"]), len(x.shape))
    cn = node.input[1]
    if p._is_const(cn):  # known while parsing: a gather of constant indices
        idx = p._const_tensor(np.nonzero(np.asarray(p._cval(cn, "condition")).reshape(-1))[0].astype(np.int32))
    else:
        nz = p.network.add_non_zero(p._tensor(cn))
        p._name_layer(nz, "nonzero")
        flat = p.network.add_shuffle(nz.get_output(0))
        flat.reshape_dims = (-1,)
        p._name_layer(flat, "indices")
        idx = flat.get_output(0)
    layer = p.network.add_gather(x, idx, axis)
    p._name_layer(layer)
    return [layer.get_output(0)]
