"""Built-in SSD / YOLO plugins: GridAnchor_TRT, NMS_TRT, PriorBox_TRT, Region_TRT, Normalize_TRT, FlattenConcat_TRT.

Each plugin runs inside an engine (loaded from its serialized plan) and is compared with an independent float64 numpy
reference written from the semantics of TensorRT's open-source plugins (see the comments at the top of each
csrc/plugins/builtin/*.c).  Then: an SSD detection head (convolutions, GridAnchor_TRT, FlattenConcat_TRT, NMS_TRT) on a
synthetic scene whose surviving boxes are known, plans with all six plugins reloaded, and every field / shape error.
"""
import itertools

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

I32, F32 = trt.PluginFieldType.INT32, trt.PluginFieldType.FLOAT32
LOGGER = trt.Logger(trt.Logger.ERROR)
trt.init_libnvinfer_plugins(LOGGER, "")


# ------------------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------------------

def i32(v):
    return (np.atleast_1d(np.asarray(v, np.int32)), I32)


def f32(v):
    return (np.atleast_1d(np.asarray(v, np.float32)), F32)


def make_plugin(type_name, layer_name="plugin", **fields):
    """fields: name=i32(...)/f32(...) -> a built-in plugin made through the registry, as TensorRT scripts do."""
    creator = trt.get_plugin_registry().get_plugin_creator(type_name, "1", "")
    assert creator is not None, type_name
    fc = trt.PluginFieldCollection([trt.PluginField(k, data, t) for k, (data, t) in fields.items()])
    return creator.create_plugin(name=layer_name, field_collection=fc)


def new_network(explicit):
    builder = trt.Builder(LOGGER)
    if explicit:
        net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    else:
        net = builder.create_network()
    return builder, net


def build_from_plan(builder, net, explicit, max_batch=4):
    """Every engine here is loaded from its serialized plan, so each test also covers the plugins' fields in plans."""
    if explicit:
        plan = builder.build_serialized_network(net, builder.create_builder_config())
    else:
        builder.max_batch_size = max_batch
        plan = builder.build_cuda_engine(net).serialize()
    assert plan is not None
    return trt.Runtime(LOGGER).deserialize_cuda_engine(bytes(plan))


def run_plugin_net(make, inputs, explicit=True):
    """make(net, *input_tensors) -> layer; its outputs are marked out0, out1, ...  inputs: name -> array (batch
    first, also for implicit networks).  Returns the outputs with full dims (batch first)."""
    builder, net = new_network(explicit)
    tensors = [net.add_input(k, trt.float32, v.shape if explicit else v.shape[1:]) for k, v in inputs.items()]
    layer = make(net, *tensors)
    for i in range(layer.num_outputs):
        layer.get_output(i).name = "out%d" % i
        net.mark_output(layer.get_output(i))
    engine = build_from_plan(builder, net, explicit)
    out = engine.create_execution_context().infer({k: np.ascontiguousarray(v) for k, v in inputs.items()})
    return [np.asarray(out["out%d" % i]) for i in range(layer.num_outputs)]


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ------------------------------------------------------------------------------------------------------------
# float64 references
# ------------------------------------------------------------------------------------------------------------

def ref_grid_anchor(min_size, max_size, ratios, fmaps, variance):
    """TF SSD anchors: list of [2, F*F*numPriors*4] (row 0 boxes xmin, ymin, xmax, ymax; row 1 variances)."""
    L = len(fmaps)
    s = [min_size + (max_size - min_size) * k / (L - 1) if L > 1 else min_size for k in range(L)] + [1.0]
    outs = []
    for k, F in enumerate(fmaps):
        if k == 0:  # lowest layer: three boxes, the first at scale 0.1
            wh = [(sc * np.sqrt(a), sc / np.sqrt(a)) for sc, a in zip([0.1, s[0], s[0]], ratios[:3])]
        else:
            wh = [(s[k] * np.sqrt(a), s[k] / np.sqrt(a)) for a in ratios] + [(np.sqrt(s[k] * s[k + 1]),) * 2]
        wh = np.array(wh)
        y, x = np.meshgrid(np.arange(F), np.arange(F), indexing="ij")
        cy, cx = ((y + 0.5) / F).reshape(-1, 1), ((x + 0.5) / F).reshape(-1, 1)
        w, h = wh[:, 0][None], wh[:, 1][None]
        boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1).reshape(-1)
        outs.append(np.stack([boxes, np.tile(np.asarray(variance, np.float64), boxes.size // 4)]))
    return outs


def ref_prior_box(H, W, IH, IW, min_sizes, max_sizes=(), ratios=(), flip=1, clip=0, variance=(0.1,) * 4,
                  img_h=0, img_w=0, step_h=0.0, step_w=0.0, offset=0.5):
    """Caffe SSD PriorBox: [2, H*W*numPriors*4]."""
    ars = [1.0]
    for a in ratios:
        if all(abs(a - b) >= 1e-6 for b in ars):
            ars += [a, 1.0 / a] if flip else [a]
    if img_h == 0 or img_w == 0:
        img_h, img_w = IH, IW
    if step_h == 0 or step_w == 0:
        step_h, step_w = img_h / H, img_w / W
    rows = []
    for h in range(H):
        for w in range(W):
            cx, cy = (w + offset) * step_w, (h + offset) * step_h
            for m, ms in enumerate(min_sizes):
                sizes = [(ms, ms)]
                if len(max_sizes):
                    sizes.append((np.sqrt(ms * max_sizes[m]),) * 2)
                sizes += [(ms * np.sqrt(a), ms / np.sqrt(a)) for a in ars[1:]]
                rows += [[(cx - bw / 2) / img_w, (cy - bh / 2) / img_h, (cx + bw / 2) / img_w, (cy + bh / 2) / img_h]
                         for bw, bh in sizes]
    boxes = np.array(rows, np.float64).reshape(-1)
    if clip:
        boxes = np.clip(boxes, 0, 1)
    variance = list(variance) * (4 // len(variance))  # one value (Caffe) stands for all four
    return np.stack([boxes, np.tile(np.asarray(variance, np.float64), boxes.size // 4)])


def ref_region(x, num, coords, classes):
    N, C, H, W = x.shape
    y = x.astype(np.float64).reshape(N, num, coords + 1 + classes, H, W).copy()
    y[:, :, 0:2] = 1 / (1 + np.exp(-y[:, :, 0:2]))
    y[:, :, coords] = 1 / (1 + np.exp(-y[:, :, coords]))
    c = y[:, :, coords + 1:]
    e = np.exp(c - c.max(axis=2, keepdims=True))
    y[:, :, coords + 1:] = e / e.sum(axis=2, keepdims=True)
    return y.reshape(N, C, H, W)


def ref_normalize(x, weights, across, shared, eps):
    x = x.astype(np.float64)
    N, C = x.shape[:2]
    if across:
        ss = (x.reshape(N, -1) ** 2).sum(1).reshape((N,) + (1,) * (x.ndim - 1))
    else:
        ss = (x ** 2).sum(1, keepdims=True)
    w = np.asarray(weights, np.float64)
    scale = w[0] if shared else w.reshape((1, C) + (1,) * (x.ndim - 2))
    return x / np.sqrt(ss + eps) * scale


def ref_flatten_concat(inputs, axis, ignore_batch):
    if ignore_batch:
        inputs = [x[:1] for x in inputs]
    N = inputs[0].shape[0]
    y = np.concatenate([x.reshape(N, -1) for x in inputs], 1).astype(np.float64)
    shape = [N, 1, 1, 1]
    shape[axis] = y.shape[1]
    return y.reshape(shape)


def _iou(a, b, normalized):
    a = [min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])]
    b = [min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])]
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return 0.0
    pad = 0.0 if normalized else 1.0  # Caffe's pixel convention
    iw, ih = min(a[2], b[2]) - max(a[0], b[0]) + pad, min(a[3], b[3]) - max(a[1], b[1]) + pad
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    sa = (a[2] - a[0] + pad) * (a[3] - a[1] + pad)
    sb = (b[2] - b[0] + pad) * (b[3] - b[1] + pad)
    return inter / (sa + sb - inter)


def _decode(l, pr, v, code, var_in_target):
    l, pr, v = (np.asarray(t, np.float64) for t in (l, pr, v))
    if var_in_target and code != 3:
        v = np.ones(4)
    pw, ph = pr[2] - pr[0], pr[3] - pr[1]
    if code == 0:  # CORNER
        return pr + v * l
    if code == 2:  # CORNER_SIZE
        return pr + v * l * np.array([pw, ph, pw, ph])
    ty, tx, th, tw = (l[0], l[1], l[2], l[3]) if code == 3 else (l[1], l[0], l[3], l[2])  # TF_CENTER: y first
    cx, cy = v[0] * tx * pw + (pr[0] + pr[2]) / 2, v[1] * ty * ph + (pr[1] + pr[3]) / 2
    w, h = np.exp(v[2] * tw) * pw, np.exp(v[3] * th) * ph
    return np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def ref_nms(loc, conf, priors, num_classes, top_k, keep_top_k, conf_thr, nms_thr, share_location=1, background=0,
            code_type=3, var_in_target=0, conf_sigmoid=0, is_normalized=1, batch_agnostic=1):
    """SSD DetectionOutput: loc [N, P*L*4], conf [N, P*C], priors [B, 2, P*4] -> (dets [N, keepTopK, 7], counts [N])."""
    N, C = loc.shape[0], num_classes
    pri = priors.reshape(priors.shape[0], 2, -1, 4).astype(np.float64)
    P = pri.shape[2]
    L = 1 if share_location else C
    loc = loc.reshape(N, P, L, 4).astype(np.float64)
    conf = conf.reshape(N, P, C).astype(np.float64)
    if conf_sigmoid:
        conf = 1 / (1 + np.exp(-conf))
    dets, counts = np.zeros((N, keep_top_k, 7)), np.zeros(N, np.int32)
    for n in range(N):
        pb = 0 if (batch_agnostic or pri.shape[0] == 1) else n
        kept = []
        for c in range(C):
            if c == background:
                continue
            lc = 0 if share_location else c
            boxes = [_decode(loc[n, q, lc], pri[pb, 0, q], pri[pb, 1, q], code_type, var_in_target) for q in range(P)]
            cand = sorted((-conf[n, q, c], q) for q in range(P) if conf[n, q, c] > conf_thr)[:top_k]
            keep = []
            for _, q in cand:
                if all(_iou(boxes[q], boxes[k], is_normalized) <= nms_thr for k in keep):
                    keep.append(q)
            kept += [(-conf[n, q, c], c, q, boxes[q]) for q in keep]
        kept = sorted(kept, key=lambda t: t[:3])[:keep_top_k]
        counts[n] = len(kept)
        for i in range(keep_top_k):
            if i < len(kept):
                s, c, q, b = kept[i]
                dets[n, i] = [n, c, -s, *(np.clip(b, 0, 1) if is_normalized else b)]
            else:
                dets[n, i] = [n, -1, 0, 0, 0, 0, 0]
    return dets, counts


# ------------------------------------------------------------------------------------------------------------
# GridAnchor_TRT
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("explicit", [True, False])
def test_grid_anchor(explicit, rng):
    L = int(rng.integers(2, 5))
    fmaps = sorted(rng.integers(1, 7, L).tolist(), reverse=True)
    ratios = [1.0, 2.0, 0.5, 3.0, 1.0 / 3][:int(rng.integers(3, 6))]
    var = [0.1, 0.1, 0.2, 0.2]
    p = make_plugin("GridAnchor_TRT", "anchors", minSize=f32(0.2), maxSize=f32(0.95), aspectRatios=f32(ratios),
                    featureMapShapes=i32(fmaps), variance=f32(var), numLayers=i32(L))
    assert p.num_outputs == L and p.plugin_type == "GridAnchor_TRT"
    builder, net = new_network(explicit)
    layer = net.add_plugin_v2(inputs=[], plugin=p)
    refs = ref_grid_anchor(0.2, 0.95, ratios, fmaps, var)
    for i, r in enumerate(refs):
        # full dims [1, 2, X, 1]: an implicit-batch network shows TensorRT's (2, X, 1)
        want = (1,) + r.shape + (1,)
        assert tuple(layer.get_output(i).shape) == (want if explicit else want[1:])
        layer.get_output(i).name = "a%d" % i
        net.mark_output(layer.get_output(i))
    engine = build_from_plan(builder, net, explicit)
    out = engine.create_execution_context().infer({})
    for i, r in enumerate(refs):
        assert_close(out["a%d" % i], r.reshape((1,) + r.shape + (1,)), atol=1e-6)


def test_grid_anchor_single_layer_and_few_ratios():
    """numLayers = 1 uses minSize (TensorRT divides by zero); fewer than 3 ratios: layer 0 uses those given."""
    p = make_plugin("GridAnchor_TRT", minSize=f32(0.3), maxSize=f32(0.9), aspectRatios=f32([1.0, 2.0]),
                    featureMapShapes=i32([3]), variance=f32([0.1, 0.1, 0.2, 0.2]), numLayers=i32(1))
    (out,) = run_plugin_net(lambda net: net.add_plugin_v2([], p), {})
    assert_close(out, ref_grid_anchor(0.3, 0.9, [1.0, 2.0], [3], [0.1, 0.1, 0.2, 0.2])[0][None, :, :, None],
                 atol=1e-6)


# ------------------------------------------------------------------------------------------------------------
# PriorBox_TRT
# ------------------------------------------------------------------------------------------------------------

PRIOR_CASES = [
    dict(min_sizes=[30.0], max_sizes=[60.0], ratios=[2.0, 3.0], flip=1, clip=1),
    dict(min_sizes=[20.0, 40.0], max_sizes=[], ratios=[2.0, 0.5, 1.0], flip=1, clip=0, variance=[0.1, 0.2, 0.3, 0.4],
         img_h=100, img_w=120, step_h=9.0, step_w=11.0, offset=0.3),
    dict(min_sizes=[20.0, 40.0], max_sizes=[50.0, 70.0], ratios=[2.0], flip=0, clip=0),
    dict(min_sizes=[16.0], ratios=[], flip=1, clip=1, variance=[0.2]),
]


@pytest.mark.parametrize("case,explicit", list(itertools.product(range(len(PRIOR_CASES)), [True, False])))
def test_prior_box(case, explicit, rng):
    kw = PRIOR_CASES[case]
    H, W = (int(v) for v in rng.integers(1, 7, 2))
    IH, IW = 8 * H + int(rng.integers(0, 8)), 8 * W + int(rng.integers(0, 8))
    fields = dict(minSize=f32(kw["min_sizes"]), maxSize=f32(kw.get("max_sizes", [])), aspectRatios=f32(kw["ratios"]),
                  flip=i32(kw["flip"]), clip=i32(kw["clip"]), variance=f32(kw.get("variance", [0.1] * 4)),
                  imgH=i32(kw.get("img_h", 0)), imgW=i32(kw.get("img_w", 0)), stepH=f32(kw.get("step_h", 0.0)),
                  stepW=f32(kw.get("step_w", 0.0)), offset=f32(kw.get("offset", 0.5)))
    p = make_plugin("PriorBox_TRT", "priors", **fields)
    feat, img = randn(rng, (3, 4, H, W)), randn(rng, (3, 1, IH, IW))
    (out,) = run_plugin_net(lambda net, f, i: net.add_plugin_v2([f, i], p), {"feat": feat, "img": img}, explicit)
    ref = ref_prior_box(H, W, IH, IW, **kw)
    # no batch in the priors: [1, 2, X, 1] whatever the batch of the inputs (an implicit-batch binding is batch-sized,
    # and only its first sample is written, as in TensorRT)
    assert_close(out[:1], ref[None, :, :, None], atol=2e-6)


# ------------------------------------------------------------------------------------------------------------
# Region_TRT, Normalize_TRT, FlattenConcat_TRT
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("num,coords,classes,explicit", [(5, 4, 20, True), (3, 4, 1, False), (2, 3, 7, True)])
def test_region(num, coords, classes, explicit, rng):
    H, W = (int(v) for v in rng.integers(1, 8, 2))
    x = randn(rng, (3, num * (coords + 1 + classes), H, W), 3.0)
    p = make_plugin("Region_TRT", "region", num=i32(num), coords=i32(coords), classes=i32(classes))
    (out,) = run_plugin_net(lambda net, t: net.add_plugin_v2([t], p), {"x": x}, explicit)
    assert_close(out, ref_region(x, num, coords, classes))


@pytest.mark.parametrize("across,shared,explicit", [(0, 0, True), (0, 1, False), (1, 0, False), (1, 1, True)])
def test_normalize(across, shared, explicit, rng):
    C, H, W = (int(v) for v in rng.integers(1, 9, 3))
    x = randn(rng, (3, C, H, W))
    w = rng.uniform(1, 20, 1 if shared else C).astype(np.float32)
    p = make_plugin("Normalize_TRT", "l2norm", weights=f32(w), acrossSpatial=i32(across), channelShared=i32(shared),
                    nbWeights=i32(1), eps=f32(1e-6))
    (out,) = run_plugin_net(lambda net, t: net.add_plugin_v2([t], p), {"x": x}, explicit)
    assert_close(out, ref_normalize(x, w, across, shared, 1e-6))


@pytest.mark.parametrize("axis,ignore_batch,explicit", [(1, 0, True), (2, 0, False), (3, 0, True), (1, 1, True),
                                                         (3, 1, False)])
def test_flatten_concat(axis, ignore_batch, explicit, rng):
    shapes = [(3,) + tuple(int(v) for v in rng.integers(1, 6, 3)) for _ in range(int(rng.integers(1, 4)))]
    xs = {"x%d" % i: randn(rng, s) for i, s in enumerate(shapes)}
    p = make_plugin("FlattenConcat_TRT", "fc", axis=i32(axis), ignoreBatch=i32(ignore_batch))
    (out,) = run_plugin_net(lambda net, *t: net.add_plugin_v2(list(t), p), xs, explicit)
    ref = ref_flatten_concat(list(xs.values()), axis, ignore_batch)
    # ignoreBatch: only sample 0 of each input, output batch 1 (implicit batch: the first sample of the binding)
    assert_close(out[:1] if ignore_batch else out, ref, rtol=0, atol=0)


# ------------------------------------------------------------------------------------------------------------
# NMS_TRT
# ------------------------------------------------------------------------------------------------------------

def random_priors(rng, P, batch=1, scale=1.0):
    c = rng.uniform(0.2, 0.8, (batch, P, 2)) * scale
    s = rng.uniform(0.1, 0.4, (batch, P, 2)) * scale
    box = np.concatenate([c - s / 2, c + s / 2], -1).reshape(batch, -1)
    var = np.tile([0.1, 0.1, 0.2, 0.2], (batch, P))
    return np.stack([box, var], 1)[..., None].astype(np.float32)  # [B, 2, P*4, 1]


def nms_fields(C, top_k, keep_top_k, conf_thr, nms_thr, order=(0, 1, 2), **kw):
    names = dict(share_location="shareLocation", background="backgroundLabelId", code_type="codeType",
                 var_in_target="varianceEncodedInTarget", conf_sigmoid="confSigmoid", is_normalized="isNormalized",
                 batch_agnostic="isBatchAgnostic")
    f = dict(numClasses=i32(C), topK=i32(top_k), keepTopK=i32(keep_top_k), confidenceThreshold=f32(conf_thr),
             nmsThreshold=f32(nms_thr), inputOrder=i32(list(order)))
    f.update({names[k]: i32(v) for k, v in kw.items()})
    return f


NMS_CASES = [  # code_type, share_location, conf_sigmoid, is_normalized, background, batch_agnostic, order, explicit
    (3, 1, 1, 1, 0, 1, (0, 2, 1), True),
    (1, 1, 0, 1, 0, 1, (0, 1, 2), False),
    (1, 0, 0, 1, 2, 1, (1, 0, 2), True),
    (0, 1, 0, 1, -1, 0, (0, 1, 2), True),
    (2, 0, 1, 1, 0, 0, (2, 0, 1), True),
    (1, 1, 0, 0, 0, 1, (0, 1, 2), True),
    (3, 0, 0, 0, -1, 1, (0, 1, 2), False),
    (2, 1, 1, 1, 1, 1, (0, 1, 2), True),
]


@pytest.mark.parametrize("case", range(len(NMS_CASES)))
def test_nms_random(case, rng):
    code, share, sig, norm, bg, agnostic, order, explicit = NMS_CASES[case]
    N, C = 3, int(rng.integers(2, 5))
    P = int(rng.integers(20, 50))
    L = 1 if share else C
    per_image = not agnostic and explicit
    priors = random_priors(rng, P, N if per_image else 1, 1.0 if norm else 100.0)
    loc = randn(rng, (N, P * L * 4, 1, 1), 0.5)
    conf = randn(rng, (N, P * C, 1, 1)) if sig else rng.uniform(0, 1, (N, P * C, 1, 1)).astype(np.float32)
    top_k, keep_top_k = int(rng.integers(5, 15)), int(rng.integers(5, 30))
    kw = dict(share_location=share, background=bg, code_type=code, conf_sigmoid=sig, is_normalized=norm,
              batch_agnostic=agnostic)
    p = make_plugin("NMS_TRT", "nms", **nms_fields(C, top_k, keep_top_k, 0.3, 0.45, order, **kw))
    assert p.num_outputs == 2
    named = {"loc": loc, "conf": conf, "priors": priors}
    # network input j is the one inputOrder sends there: loc at order[0], conf at order[1], priors at order[2]
    inputs = {k: named[k] for k in sorted(named, key=lambda k: order[["loc", "conf", "priors"].index(k)])}
    if not explicit:  # an implicit-batch input always has the batch: give the priors N identical samples
        inputs["priors"] = np.repeat(priors, N, 0)
    det, count = run_plugin_net(lambda net, *t: net.add_plugin_v2(list(t), p), inputs, explicit)
    rd, rc = ref_nms(loc.reshape(N, -1), conf.reshape(N, -1), priors, C, top_k, keep_top_k, 0.3, 0.45, **kw)
    assert det.shape == (N, 1, keep_top_k, 7) and det.dtype == np.float32
    assert count.shape == (N, 1, 1, 1) and count.dtype == np.int32
    np.testing.assert_array_equal(count.reshape(N), rc)
    assert (rc > 0).all()
    assert_close(det.reshape(N, keep_top_k, 7), rd, rtol=1e-4, atol=1e-4)


def test_nms_ties_padding_and_empty(rng):
    """Equal scores keep class order, then prior order; topK > numPriors and keepTopK > numClasses * topK pad with
    (n, -1, 0, ...) rows; nothing above the threshold gives keep_count 0."""
    N, P, C = 2, 6, 3
    priors = random_priors(rng, P)
    loc = np.zeros((N, P * 4, 1, 1), np.float32)
    conf = np.full((N, P * C, 1, 1), 0.5, np.float32)
    for thr, want in ((0.1, P * C), (0.9, 0)):
        p = make_plugin("NMS_TRT", **nms_fields(C, 50, 40, thr, 1.0, background=-1, code_type=1))
        det, count = run_plugin_net(lambda net, a, b, c: net.add_plugin_v2([a, b, c], p),
                                    {"loc": loc, "conf": conf, "priors": priors})
        np.testing.assert_array_equal(count.reshape(N), [want] * N)
        rd, _ = ref_nms(loc.reshape(N, -1), conf.reshape(N, -1), priors, C, 50, 40, thr, 1.0, background=-1,
                        code_type=1)
        assert_close(det.reshape(N, 40, 7), rd, atol=1e-6)
        if want:
            np.testing.assert_array_equal(det[0, 0, :want, 1], np.repeat(np.arange(C), P))
            np.testing.assert_array_equal(det[1, 0, want:, :3], np.tile([1, -1, 0], (40 - want, 1)))


# ------------------------------------------------------------------------------------------------------------
# an SSD detection head on a synthetic scene
# ------------------------------------------------------------------------------------------------------------

def _ssd_weights():
    """Block-mean convolutions and 1x1 heads: class 1 fires on bright squares of channel 0, class 2 on channel 1.
    Layer 0 (4x4 cells): priors (AR 1 at 0.1, AR 2, AR 0.5) get logits 10m-5, 6m-5, 4m-5 from the cell mean m; layer 1
    (2x2 cells): only the extra prior (AR 1 at sqrt(s1 * 1)) fires, 9m-5.  Every box is shifted by tx = 1."""
    eye = np.eye(2, dtype=np.float32)
    w1 = np.repeat(np.repeat(eye[:, :, None, None], 4, 2), 4, 3) / 16  # 4x4 stride 4 block mean
    w2 = np.repeat(np.repeat(eye[:, :, None, None], 2, 2), 2, 3) / 4  # 2x2 stride 2 block mean
    heads = []
    for gains in ((10.0, 6.0, 4.0), (0.0, 0.0, 0.0, 9.0)):
        k = len(gains)
        wc = np.zeros((k * 3, 2, 1, 1), np.float32)
        bc = np.zeros(k * 3, np.float32)
        for q, g in enumerate(gains):
            for c in (1, 2):
                wc[q * 3 + c, c - 1] = g
                bc[q * 3 + c] = -5.0
        wl = np.zeros((k * 4, 2, 1, 1), np.float32)
        bl = np.tile(np.array([0.0, 1.0, 0.0, 0.0], np.float32), k)  # TF order (ty, tx, th, tw)
        heads.append((wc, bc, wl, bl))
    return w1, w2, heads


SSD_NMS = dict(C=3, top_k=20, keep_top_k=10, conf_thr=0.5, nms_thr=0.2, background=0, code_type=3, conf_sigmoid=1)
SSD_ANCHORS = dict(min_size=0.2, max_size=0.9, ratios=[1.0, 2.0, 0.5], fmaps=[4, 2], variance=[0.1, 0.1, 0.2, 0.2])


def build_ssd_head(explicit, N=2):
    w1, w2, heads = _ssd_weights()
    builder, net = new_network(explicit)
    img = net.add_input("image", trt.float32, (N, 2, 16, 16) if explicit else (2, 16, 16))
    c1 = net.add_convolution_nd(input=img, num_output_maps=2, kernel_shape=(4, 4), kernel=w1, bias=np.zeros(2, np.float32))
    c1.stride_nd = (4, 4)
    c2 = net.add_convolution_nd(input=c1.get_output(0), num_output_maps=2, kernel_shape=(2, 2), kernel=w2,
                                bias=np.zeros(2, np.float32))
    c2.stride_nd = (2, 2)
    locs, confs = [], []
    for feat, (wc, bc, wl, bl) in zip((c1.get_output(0), c2.get_output(0)), heads):
        for w, b, dst in ((wc, bc, confs), (wl, bl, locs)):
            head = net.add_convolution_nd(input=feat, num_output_maps=w.shape[0], kernel_shape=(1, 1), kernel=w, bias=b)
            perm = net.add_shuffle(head.get_output(0))  # NCHW -> NHWC: channel = prior * K + k
            perm.first_transpose = (0, 2, 3, 1) if explicit else (1, 2, 0)
            dst.append(perm.get_output(0))
    loc = net.add_plugin_v2(locs, make_plugin("FlattenConcat_TRT", "concat_loc", axis=i32(1), ignoreBatch=i32(0)))
    conf = net.add_plugin_v2(confs, make_plugin("FlattenConcat_TRT", "concat_conf", axis=i32(1), ignoreBatch=i32(0)))
    a = SSD_ANCHORS
    anchors = net.add_plugin_v2([], make_plugin(
        "GridAnchor_TRT", "anchors", minSize=f32(a["min_size"]), maxSize=f32(a["max_size"]),
        aspectRatios=f32(a["ratios"]), featureMapShapes=i32(a["fmaps"]), variance=f32(a["variance"]), numLayers=i32(2)))
    pri = net.add_concatenation([anchors.get_output(0), anchors.get_output(1)])
    pri.axis = 2 if explicit else 1
    s = SSD_NMS
    nms = net.add_plugin_v2([loc.get_output(0), conf.get_output(0), pri.get_output(0)], make_plugin(
        "NMS_TRT", "detection_out", **nms_fields(s["C"], s["top_k"], s["keep_top_k"], s["conf_thr"], s["nms_thr"],
                                                 background=s["background"], code_type=s["code_type"],
                                                 conf_sigmoid=s["conf_sigmoid"], share_location=1)))
    nms.name = "detection_out"
    nms.get_output(0).name = "detections"
    nms.get_output(1).name = "keep_count"
    net.mark_output(nms.get_output(0))
    net.mark_output(nms.get_output(1))
    return builder, net


def ssd_scene():
    """Image 0: class-1 squares in cells (0,0) and (2,3), a class-2 square in cell (3,1).  Image 1: a class-1 object
    filling the 8x8 quadrant (rows 8..15, cols 0..7) and a class-2 square in cell (0,3)."""
    x = np.zeros((2, 2, 16, 16), np.float32)
    for n, ch, (y, xx) in ((0, 0, (0, 0)), (0, 0, (2, 3)), (0, 1, (3, 1)), (1, 1, (0, 3))):
        x[n, ch, 4 * y:4 * y + 4, 4 * xx:4 * xx + 4] = 1
    x[1, 0, 8:16, 0:8] = 1
    return x


def ssd_expected(x):
    """The surviving boxes, worked out by hand: per object cell, the 0.1 square of layer 0 (its AR-2 neighbour scores
    0.73 but overlaps it with IoU 0.25 > 0.2); for the big object also layer 1's extra prior (side sqrt(0.9)).  tx = 1
    moves every centre by 0.1 * width.  Rows: (label, score, xmin, ymin, xmax, ymax), sorted as NMS_TRT sorts."""
    sig = lambda v: 1 / (1 + np.exp(-v))
    small = lambda y, xx: [(xx + 0.5) / 4 + 0.01 - 0.05, (y + 0.5) / 4 - 0.05, (xx + 0.5) / 4 + 0.01 + 0.05,
                           (y + 0.5) / 4 + 0.05]
    e = np.sqrt(0.9)
    big = [0.25 + 0.1 * e - e / 2, 0.75 - e / 2, 0.25 + 0.1 * e + e / 2, 0.75 + e / 2]
    img0 = [(1, sig(5), *small(0, 0)), (1, sig(5), *small(2, 3)), (2, sig(5), *small(3, 1))]
    img1 = [(1, sig(5), *small(y, xx)) for y, xx in ((2, 0), (2, 1), (3, 0), (3, 1))] + \
           [(2, sig(5), *small(0, 3)), (1, sig(4), *np.clip(big, 0, 1))]
    return [np.array(img0), np.array(img1)]


def ssd_reference(x):
    """The whole head in numpy: block means, linear heads, anchors, ref_nms."""
    w1, w2, heads = _ssd_weights()
    N = x.shape[0]
    f1 = x.reshape(N, 2, 4, 4, 4, 4).mean((3, 5)).astype(np.float64)  # [N, 2, 4, 4]
    f2 = f1.reshape(N, 2, 2, 2, 2, 2).mean((3, 5))  # [N, 2, 2, 2]
    locs, confs = [], []
    for f, (wc, bc, wl, bl) in zip((f1, f2), heads):
        for w, b, dst in ((wc, bc, confs), (wl, bl, locs)):
            y = np.einsum("kc,nchw->nhwk", w[:, :, 0, 0].astype(np.float64), f) + b
            dst.append(y.reshape(N, -1))
    a = SSD_ANCHORS
    pri = np.concatenate(ref_grid_anchor(a["min_size"], a["max_size"], a["ratios"], a["fmaps"], a["variance"]), 1)
    s = SSD_NMS
    return ref_nms(np.concatenate(locs, 1), np.concatenate(confs, 1), pri[None], s["C"], s["top_k"], s["keep_top_k"],
                   s["conf_thr"], s["nms_thr"], background=s["background"], code_type=s["code_type"],
                   conf_sigmoid=s["conf_sigmoid"])


@pytest.mark.parametrize("explicit", [True, False])
def test_ssd_detection_head(explicit):
    builder, net = build_ssd_head(explicit)
    if not explicit:  # TensorRT 7 shapes
        assert tuple(net.get_output(0).shape) == (1, 10, 7) and tuple(net.get_output(1).shape) == (1, 1, 1)
    engine = build_from_plan(builder, net, explicit)
    x = ssd_scene()
    out = engine.create_execution_context().infer({"image": x})
    det, count = out["detections"].reshape(2, 10, 7), out["keep_count"].reshape(2)
    assert out["keep_count"].dtype == np.int32
    want = ssd_expected(x)
    np.testing.assert_array_equal(count, [len(w) for w in want])
    for n in range(2):
        k = len(want[n])
        np.testing.assert_array_equal(det[n, :, 0], n)
        np.testing.assert_allclose(det[n, :k, 1:], want[n], atol=1e-5)
        np.testing.assert_array_equal(det[n, k:, 1:], np.tile([-1, 0, 0, 0, 0, 0], (10 - k, 1)))
    rd, rc = ssd_reference(x)
    np.testing.assert_array_equal(count, rc)
    assert_close(det, rd.astype(np.float64), atol=1e-5)


# ------------------------------------------------------------------------------------------------------------
# plans: every plugin's fields survive serialization
# ------------------------------------------------------------------------------------------------------------

def _all_plugins_network(explicit):
    builder, net = new_network(explicit)
    sh = lambda s: s if explicit else s[1:]
    x = net.add_input("x", trt.float32, sh((2, 6, 4, 5)))
    img = net.add_input("img", trt.float32, sh((2, 1, 32, 40)))
    r = net.add_input("r", trt.float32, sh((2, 2 * (4 + 1 + 3), 4, 5)))
    norm = net.add_plugin_v2([x], make_plugin("Normalize_TRT", weights=f32(np.arange(1, 7)), acrossSpatial=i32(0),
                                              channelShared=i32(0), eps=f32(1e-5)))
    region = net.add_plugin_v2([r], make_plugin("Region_TRT", num=i32(2), coords=i32(4), classes=i32(3)))
    pb = net.add_plugin_v2([norm.get_output(0), img], make_plugin(
        "PriorBox_TRT", minSize=f32([8.0]), maxSize=f32([16.0]), aspectRatios=f32([2.0]), flip=i32(1), clip=i32(1),
        variance=f32([0.1, 0.1, 0.2, 0.2])))
    fc = net.add_plugin_v2([norm.get_output(0), region.get_output(0)],
                           make_plugin("FlattenConcat_TRT", axis=i32(2), ignoreBatch=i32(0)))
    ga = net.add_plugin_v2([], make_plugin("GridAnchor_TRT", aspectRatios=f32([1.0, 2.0, 0.5]),
                                           featureMapShapes=i32([4, 5]), variance=f32([0.1, 0.1, 0.2, 0.2]),
                                           numLayers=i32(2)))
    for i, t in enumerate([fc.get_output(0), pb.get_output(0), ga.get_output(0), ga.get_output(1)]):
        t.name = "o%d" % i
        net.mark_output(t)
    return builder, net


@pytest.mark.parametrize("explicit", [True, False])
def test_plans_with_all_plugins_reload(explicit, rng):
    inputs = {"x": randn(rng, (2, 6, 4, 5)), "img": randn(rng, (2, 1, 32, 40)), "r": randn(rng, (2, 16, 4, 5))}
    builder, net = _all_plugins_network(explicit)
    if explicit:
        engine = builder.build_engine(net, builder.create_builder_config())
    else:
        builder.max_batch_size = 3
        engine = builder.build_cuda_engine(net)
    first = engine.create_execution_context().infer(inputs)
    again = trt.Runtime(LOGGER).deserialize_cuda_engine(engine.serialize())
    second = again.create_execution_context().infer(inputs)
    for k in first:  # the priors have no batch: only sample 0 of an implicit-batch binding is written
        np.testing.assert_array_equal(first[k] if k == "o0" else first[k][:1], second[k] if k == "o0" else second[k][:1])
    # and the values: region/normalize flattened together, then the priors
    ref = ref_flatten_concat([ref_normalize(inputs["x"], np.arange(1, 7), 0, 0, 1e-5),
                              ref_region(inputs["r"], 2, 4, 3)], 2, 0)
    assert_close(first["o0"], ref)
    assert_close(first["o1"][:1], ref_prior_box(4, 5, 32, 40, [8.0], [16.0], [2.0], 1, 1, [0.1, 0.1, 0.2, 0.2])[None, ..., None],
                 atol=2e-6)


@pytest.mark.parametrize("name,fields", [
    ("GridAnchor_TRT", dict(aspectRatios=f32([1.0, 2.0, 0.5]), featureMapShapes=i32([3]), variance=f32([1, 2, 3, 4]),
                            numLayers=i32(1), minSize=f32(0.25))),
    ("PriorBox_TRT", dict(minSize=f32([4.0, 6.0]), maxSize=f32([5.0, 9.0]), aspectRatios=f32([]), variance=f32([0.3]))),
    ("NMS_TRT", nms_fields(4, 7, 9, 0.1, 0.4, (2, 1, 0), share_location=0, code_type=2, background=-1)),
    ("Region_TRT", dict(num=i32(3), classes=i32(2))),
    ("Normalize_TRT", dict(weights=f32([2.5]), channelShared=i32(1), acrossSpatial=i32(1))),
    ("FlattenConcat_TRT", dict(ignoreBatch=i32(1))),
])
def test_plugin_serialize_deserialize_roundtrip(name, fields):
    """IPluginV2.serialize() -> IPluginCreator.deserialize_plugin() gives a plugin with the same fields."""
    p = make_plugin(name, "orig", **fields)
    creator = trt.get_plugin_registry().get_plugin_creator(name, "1", "")
    q = creator.deserialize_plugin("copy", p.serialize())
    assert q.plugin_type == name and q.num_outputs == p.num_outputs and q.serialize() == p.serialize()
    assert p.serialization_size == len(p.serialize())


# ------------------------------------------------------------------------------------------------------------
# errors name the plugin, the layer and the field
# ------------------------------------------------------------------------------------------------------------

GA = dict(aspectRatios=f32([1.0, 2.0, 0.5]), featureMapShapes=i32([3, 2]), variance=f32([0.1, 0.1, 0.2, 0.2]),
          numLayers=i32(2))
NMS = nms_fields(3, 5, 4, 0.1, 0.5)

FIELD_ERRORS = [
    ("GridAnchor_TRT", dict(GA, variance=f32([0.1, 0.2])), "variance"),
    ("GridAnchor_TRT", dict(GA, numLayers=i32(3)), "featureMapShapes"),
    ("GridAnchor_TRT", dict(GA, numLayers=i32(0)), "numLayers"),
    ("GridAnchor_TRT", dict(GA, aspectRatios=f32([1.0, -2.0])), "aspectRatios"),
    ("GridAnchor_TRT", dict(GA, featureMapShapes=i32([3, 0])), "featureMapShapes"),
    ("GridAnchor_TRT", dict(GA, minSize=f32(0.0)), "minSize"),
    ("GridAnchor_TRT", dict(GA, minSize=f32([0.1, 0.2])), "minSize"),
    ("GridAnchor_TRT", {k: v for k, v in GA.items() if k != "featureMapShapes"}, "featureMapShapes"),
    ("GridAnchor_TRT", dict(GA, numLayers=f32(2.0)), "numLayers"),
    ("NMS_TRT", dict(NMS, nmsThreshold=f32(1.5)), "nmsThreshold"),
    ("NMS_TRT", dict(NMS, confidenceThreshold=f32(np.nan)), "confidenceThreshold"),
    ("NMS_TRT", dict(NMS, numClasses=i32(0)), "numClasses"),
    ("NMS_TRT", dict(NMS, topK=i32(0)), "topK"),
    ("NMS_TRT", dict(NMS, keepTopK=i32(-1)), "keepTopK"),
    ("NMS_TRT", dict(NMS, codeType=i32(4)), "codeType"),
    ("NMS_TRT", dict(NMS, backgroundLabelId=i32(3)), "backgroundLabelId"),
    ("NMS_TRT", dict(NMS, inputOrder=i32([0, 0, 1])), "inputOrder"),
    ("NMS_TRT", dict(NMS, inputOrder=i32([0, 1])), "inputOrder"),
    ("NMS_TRT", dict(NMS, shareLocation=i32([1, 1])), "shareLocation"),
    ("NMS_TRT", dict(NMS, numClasses=f32(3.0)), "numClasses"),
    ("NMS_TRT", {k: v for k, v in NMS.items() if k != "keepTopK"}, "keepTopK"),
    ("PriorBox_TRT", dict(minSize=f32([])), "minSize"),
    ("PriorBox_TRT", dict(minSize=f32([-1.0])), "minSize"),
    ("PriorBox_TRT", dict(minSize=f32([10.0, 20.0]), maxSize=f32([30.0])), "maxSize"),
    ("PriorBox_TRT", dict(minSize=f32([10.0]), maxSize=f32([5.0])), "maxSize"),
    ("PriorBox_TRT", dict(minSize=f32([10.0]), variance=f32([0.1, 0.2])), "variance"),
    ("PriorBox_TRT", dict(minSize=f32([10.0]), aspectRatios=f32([0.0])), "aspectRatios"),
    ("PriorBox_TRT", dict(minSize=f32([10.0]), imgH=i32(-4)), "imgH"),
    ("PriorBox_TRT", dict(minSize=f32([10.0]), stepW=f32(-1.0)), "stepW"),
    ("PriorBox_TRT", dict(minSize=f32([10.0]), offset=f32(np.inf)), "offset"),
    ("PriorBox_TRT", dict(minSize=f32([10.0]), flip=f32(1.0)), "flip"),
    ("PriorBox_TRT", dict(minSize=f32([10.0]), clip=i32([0, 1])), "clip"),
    ("PriorBox_TRT", dict(maxSize=f32([10.0])), "minSize"),
    ("Region_TRT", dict(num=i32(0), classes=i32(3)), "num"),
    ("Region_TRT", dict(num=i32(2), classes=i32(0)), "classes"),
    ("Region_TRT", dict(num=i32(2), classes=i32(3), coords=i32(1)), "coords"),
    ("Region_TRT", dict(num=i32(2), classes=i32(3), smTree=i32(1)), "smTree"),
    ("Region_TRT", dict(classes=i32(3)), "num"),
    ("Normalize_TRT", dict(weights=f32([])), "weights"),
    ("Normalize_TRT", dict(weights=f32([1.0, 2.0]), channelShared=i32(1)), "weights"),
    ("Normalize_TRT", dict(weights=f32([1.0]), nbWeights=i32(2)), "nbWeights"),
    ("Normalize_TRT", dict(weights=f32([1.0]), eps=f32(-1.0)), "eps"),
    ("Normalize_TRT", dict(weights=i32([1])), "weights"),
    ("Normalize_TRT", dict(acrossSpatial=i32(1)), "weights"),
    ("FlattenConcat_TRT", dict(axis=i32(0)), "axis"),
    ("FlattenConcat_TRT", dict(axis=i32(4)), "axis"),
    ("FlattenConcat_TRT", dict(ignoreBatch=f32(1.0)), "ignoreBatch"),
]


@pytest.mark.parametrize("name,fields,field", FIELD_ERRORS)
def test_field_errors(name, fields, field):
    with pytest.raises((trt.PluginError, trt.InvalidArgumentError)) as ei:
        make_plugin(name, "my_layer", **fields)
    msg = str(ei.value)
    assert name in msg and "my_layer" in msg and "'%s'" % field in msg, msg


def test_unknown_field_is_ignored_with_warning():
    class Capture(trt.ILogger):
        def __init__(self):
            super().__init__()
            self.messages = []

        def log(self, severity, msg):
            self.messages.append(msg)

    log = Capture()
    trt.init_libnvinfer_plugins(log, "")
    p = make_plugin("Region_TRT", "yolo", num=i32(2), classes=i32(3), softmaxTree=i32(0))
    assert p.plugin_type == "Region_TRT"
    assert any("softmaxTree" in m and "Region_TRT" in m for m in log.messages)


SHAPE_ERRORS = [  # plugin, fields, input shapes (explicit batch), message
    ("NMS_TRT", NMS, [(2, 24), (2, 19), (1, 2, 24, 1)], "conf"),
    ("NMS_TRT", NMS, [(2, 25, 1, 1), (2, 18, 1, 1), (1, 2, 24, 1)], "loc"),
    ("NMS_TRT", NMS, [(2, 24, 1, 1), (3, 18, 1, 1), (1, 2, 24, 1)], "batches"),
    ("NMS_TRT", NMS, [(2, 24, 1, 1), (2, 18, 1, 1), (1, 3, 24, 1)], "priors"),
    ("NMS_TRT", NMS, [(2, 24, 1, 1), (2, 18, 1, 1), (3, 2, 24, 1)], "priors"),
    ("NMS_TRT", NMS, [(2, 24, 1, 1), (2, 18, 1, 1)], "3 inputs"),
    ("PriorBox_TRT", dict(minSize=f32([4.0])), [(1, 3, 4, 4)], "2 inputs"),
    ("PriorBox_TRT", dict(minSize=f32([4.0])), [(1, 4, 4), (4, 4)], "image"),
    ("Region_TRT", dict(num=i32(2), classes=i32(3)), [(1, 17, 4, 4)], "channels"),
    ("Region_TRT", dict(num=i32(2), classes=i32(3)), [(1, 16, 4)], "[N, C, H, W]"),
    ("Normalize_TRT", dict(weights=f32([1.0, 2.0])), [(1, 3, 4, 4)], "weights"),
    ("Normalize_TRT", dict(weights=f32([1.0])), [(5,)], "rank"),
    ("FlattenConcat_TRT", dict(), [(2, 3, 4, 4), (3, 3, 4, 4)], "batch"),
    ("FlattenConcat_TRT", dict(), [], "at least one input"),
    ("GridAnchor_TRT", GA, [(1, 2)], "no inputs"),
]


@pytest.mark.parametrize("name,fields,shapes,match", SHAPE_ERRORS)
def test_shape_errors_name_the_layer(name, fields, shapes, match):
    builder, net = new_network(True)
    ins = [net.add_input("in%d" % i, trt.float32, s) for i, s in enumerate(shapes)]
    with pytest.raises(trt.PluginError) as ei:
        net.add_plugin_v2(ins, make_plugin(name, "my_layer", **fields))
    msg = str(ei.value)
    # TensorRT's default layer name, and the plugin by the name it was created under and its type
    assert "layer '(Unnamed Layer* 0) [PluginV2]' (plugin 'my_layer' %s v1)" % name in msg, msg
    assert match in msg, msg


def test_non_float_inputs_are_refused():
    builder, net = new_network(True)
    x = net.add_input("x", trt.int32, (1, 2, 3, 3))
    with pytest.raises(trt.PluginError, match="Region_TRT.*float32"):
        net.add_plugin_v2([x], make_plugin("Region_TRT", num=i32(1), coords=i32(2), classes=i32(1)))
