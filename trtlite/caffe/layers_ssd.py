"""SSD's layers (weiliu89's Caffe fork) on trtlite's built-in plugins: Normalize -> Normalize_TRT, PriorBox ->
PriorBox_TRT, DetectionOutput -> NMS_TRT (see csrc/plugins/builtin/ for their semantics)."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .registry import importer


def _plugin(ctx: Any, type_name: str, inputs: List[Any], fields: Dict[str, Any]) -> Any:
    from ..plugins import PluginField, PluginFieldCollection, get_plugin_registry
    from .._enums import PluginFieldType
    reg = get_plugin_registry()
    creator = reg.get_plugin_creator(type_name, "1", ctx.plugin_namespace) or reg.get_plugin_creator(type_name, "1", "")
    if creator is None:
        raise ctx.fail("needs the plugin %s, which is not registered (trt.init_libnvinfer_plugins registers the "
                       "built-in ones)" % type_name)
    fc = []
    for name, value in fields.items():
        arr = np.atleast_1d(np.asarray(value))
        if arr.dtype.kind in "fc":
            fc.append(PluginField(name, np.ascontiguousarray(arr, np.float32), PluginFieldType.FLOAT32))
        else:
            fc.append(PluginField(name, np.ascontiguousarray(arr, np.int32), PluginFieldType.INT32))
    plugin = creator.create_plugin(ctx.layer.name, PluginFieldCollection(fc))
    return ctx.named(ctx.network.add_plugin_v2(inputs, plugin))


@importer("Normalize")
def normalize(ctx: Any, L: Any) -> List[Any]:
    """x / sqrt(sum of x^2 + eps) * scale, the sum per position over channels (across_spatial: false) or over the
    whole sample; scale blob [C] ([1] with channel_shared)."""
    p = L.param("norm_param")
    x = ctx.bottom(0)
    shape = ctx.full_shape(x)
    if len(shape) < 3:
        raise ctx.fail("needs a blob [N, C, ...], got shape %s" % shape)
    C = 1 if p.channel_shared else shape[1]
    w = ctx.blob(ctx.blobs_of((1, 1), "scale"), 0, [C], "scale")
    layer = _plugin(ctx, "Normalize_TRT", [x], {
        "weights": w.astype(np.float32), "acrossSpatial": np.int32(p.across_spatial),
        "channelShared": np.int32(p.channel_shared), "nbWeights": np.int32(1), "eps": np.float32(p.eps)})
    return [layer.get_output(0)]


@importer("PriorBox")
def prior_box(ctx: Any, L: Any) -> List[Any]:
    """Bottoms (feature map, image); output [1, 2, H*W*priors*4, 1] (boxes, then variances), as Caffe's
    [1, 2, H*W*priors*4] with a trailing 1.  img_size/img_h/img_w, step/step_h/step_w as Caffe."""
    p = L.param("prior_box_param")
    feat, img = ctx.bottom(0), ctx.bottom(1)
    if not len(p.min_size) or any(m <= 0 for m in p.min_size):
        raise ctx.fail("min_size must be given and > 0")
    if len(p.max_size) and (len(p.max_size) != len(p.min_size) or any(M <= m for m, M in zip(p.min_size,
                                                                                             p.max_size))):
        raise ctx.fail("max_size needs one value per min_size, each larger")
    if len(p.variance) not in (0, 1, 4):
        raise ctx.fail("variance must hold 1 or 4 values, got %d" % len(p.variance))
    if p.HasField("img_size") and (p.HasField("img_h") or p.HasField("img_w")):
        raise ctx.fail("give img_size or img_h/img_w, not both")
    if p.HasField("step") and (p.HasField("step_h") or p.HasField("step_w")):
        raise ctx.fail("give step or step_h/step_w, not both")
    img_h = p.img_size if p.HasField("img_size") else p.img_h
    img_w = p.img_size if p.HasField("img_size") else p.img_w
    step_h = p.step if p.HasField("step") else p.step_h
    step_w = p.step if p.HasField("step") else p.step_w
    layer = _plugin(ctx, "PriorBox_TRT", [feat, img], {
        "minSize": np.asarray(p.min_size, np.float32), "maxSize": np.asarray(p.max_size, np.float32),
        "aspectRatios": np.asarray(p.aspect_ratio, np.float32), "flip": np.int32(p.flip), "clip": np.int32(p.clip),
        "variance": np.asarray(list(p.variance) or [0.1], np.float32), "imgH": np.int32(img_h),
        "imgW": np.int32(img_w), "stepH": np.float32(step_h), "stepW": np.float32(step_w),
        "offset": np.float32(p.offset)})
    return [layer.get_output(0)]


@importer("DetectionOutput")
def detection_output(ctx: Any, L: Any) -> List[Any]:
    """Bottoms (loc, conf, priors) as Caffe orders them (conf already softmaxed by the prototxt).  Outputs:
    detections [N, 1, keep_top_k, 7] rows (image, label, score, xmin, ymin, xmax, ymax), unused rows label -1 (Caffe
    gives [1, 1, num_det, 7] over all images), and the kept count [N, 1, 1, 1] int32 -- the second top, or
    '<top>_keep_count' when the layer lists one top.  nms_param.top_k / keep_top_k of -1 (all) become the number of
    priors / priors * classes; an unset confidence_threshold keeps every box (Caffe's -FLT_MAX)."""
    p = L.param("detection_output_param")
    loc, conf, pri = ctx.bottom(0), ctx.bottom(1), ctx.bottom(2)
    if len(L.tops) not in (1, 2):
        raise ctx.fail("has %d tops; give 1 (detections) or 2 (detections, keep count)" % len(L.tops))
    pshape = ctx.full_shape(pri)
    P = int(np.prod(pshape[2:])) // 4 if len(pshape) >= 3 else 0
    C = int(p.num_classes)
    if not p.HasField("num_classes") or C < 1:
        raise ctx.fail("num_classes must be given and >= 1")
    nms = p.nms_param
    if nms.eta != 1.0:
        raise ctx.fail("nms_param.eta %g (adaptive NMS) is not supported; only 1" % nms.eta)
    top_k = int(nms.top_k) if nms.HasField("top_k") and nms.top_k > 0 else max(P, 1)
    keep = int(p.keep_top_k) if p.keep_top_k > 0 else max(P, 1) * C
    thr = float(p.confidence_threshold) if p.HasField("confidence_threshold") else -3.0e38
    layer = _plugin(ctx, "NMS_TRT", [loc, conf, pri], {
        "shareLocation": np.int32(p.share_location), "varianceEncodedInTarget": np.int32(p.variance_encoded_in_target),
        "backgroundLabelId": np.int32(p.background_label_id), "numClasses": np.int32(C), "topK": np.int32(top_k),
        "keepTopK": np.int32(keep), "confidenceThreshold": np.float32(thr),
        "nmsThreshold": np.float32(nms.nms_threshold), "inputOrder": np.array([0, 1, 2], np.int32),
        "confSigmoid": np.int32(0), "isNormalized": np.int32(1), "codeType": np.int32(int(p.code_type) - 1)})
    return [layer.get_output(0), layer.get_output(1)]
