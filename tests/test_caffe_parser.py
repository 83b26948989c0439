"""trt.CaffeParser (trtlite/caffe/): Caffe models written by the tests themselves -- a deploy prototxt as text and a
.caffemodel serialized with trtlite's own Caffe schema and random weights -- parsed, built, run, and compared with
PyTorch (float64, the same weights) or numpy float64 references written from Caffe's semantics.  Both the old V1
`layers {}` format and the new `layer {}` format; explicit-batch and implicit-batch (TensorRT 7) networks; SSD's
PriorBox / Normalize / DetectionOutput on the built-in plugins; mean files; and every kind of bad input."""
import logging
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("google.protobuf")

import trtlite as trt  # noqa: E402
from trtlite.caffe import schema  # noqa: E402

from conftest import assert_close  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGGER = trt.Logger(trt.Logger.ERROR)
EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


# ------------------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------------------

def caffemodel(weights, v1=False, name="net"):
    """layer name -> list of arrays (or (array, legacy) with legacy=True for num/channels/height/width blobs) ->
    serialized NetParameter bytes."""
    net = schema.NetParameter(name=name)
    for lname, arrays in weights.items():
        layer = net.layers.add(name=lname) if v1 else net.layer.add(name=lname)
        for a in arrays:
            b = layer.blobs.add()
            a = np.asarray(a, np.float32)
            if v1 and a.ndim <= 4:  # V1-era files store blobs as 4-D num/channels/height/width ([1, 1, K, N])
                b.num, b.channels, b.height, b.width = (1,) * (4 - a.ndim) + a.shape
            else:
                b.shape.dim.extend(a.shape)
            b.data.extend(a.ravel().tolist())
    return net.SerializeToString()


def t64(a):
    return torch.from_numpy(np.asarray(a, np.float64))


def randn(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def parse(proto, model, explicit=True, parser=None, **kw):
    builder = trt.Builder(LOGGER)
    network = builder.create_network(EXPLICIT) if explicit else builder.create_network()
    parser = parser or trt.CaffeParser(**kw)
    blobs = parser.parse_buffer(proto, model, network, trt.float32)
    return builder, network, blobs


def run(proto, model, inputs, outputs, explicit=True, max_batch=4, **kw):
    """Parses, marks `outputs` (blob names), builds (implicit: TensorRT 7's build_cuda_engine), runs; returns the
    outputs by blob name (full Caffe shapes, batch first, also for implicit networks)."""
    builder, network, blobs = parse(proto, model, explicit, **kw)
    for name in outputs:
        t = blobs.find(name)
        assert t is not None, name
        network.mark_output(t)
    if explicit:
        engine = trt.Runtime(LOGGER).deserialize_cuda_engine(
            builder.build_serialized_network(network, builder.create_builder_config()))
    else:
        builder.max_batch_size = max_batch
        engine = builder.build_cuda_engine(network)
    out = engine.create_execution_context().infer({k: np.ascontiguousarray(v, np.float32) for k, v in inputs.items()})
    names = {blobs.find(n).name: n for n in outputs}
    return {names[k]: np.asarray(v) for k, v in out.items()}


def one_layer(layer, shape, extra_inputs=""):
    """A deploy file: input "data" of `shape` and the given layer text."""
    dims = " ".join("dim: %d" % d for d in shape)
    return 'name: "t"\ninput: "data"\ninput_shape { %s }\n%s\n%s\n' % (dims, extra_inputs, layer)


# ------------------------------------------------------------------------------------------------------------
# LeNet, new and V1 formats
# ------------------------------------------------------------------------------------------------------------

LENET = '''
name: "LeNet"
input: "data"
input_shape { dim: 2 dim: 1 dim: 28 dim: 28 }
layer { name: "scale" type: "Power" bottom: "data" top: "scale" power_param { scale: 0.0125 } }
layer {
  name: "conv1" type: "Convolution" bottom: "scale" top: "conv1"
  param { lr_mult: 1 } param { lr_mult: 2 }
  convolution_param { num_output: 6 kernel_size: 5 stride: 1 weight_filler { type: "xavier" } bias_filler { type: "constant" } }
}
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2" convolution_param { num_output: 8 kernel_size: 5 } }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1" inner_product_param { num_output: 20 } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2" inner_product_param { num_output: 10 } }
layer { name: "prob" type: "Softmax" bottom: "ip2" top: "prob" }
'''

# The same net in the V1 format of TensorRT's old samples: `layers {}` with enum types, input_dim.
LENET_V1 = '''
name: "LeNet"
input: "data"
input_dim: 2 input_dim: 1 input_dim: 28 input_dim: 28
layers { name: "scale" type: POWER bottom: "data" top: "scale" power_param { scale: 0.0125 } }
layers { name: "conv1" type: CONVOLUTION bottom: "scale" top: "conv1" blobs_lr: 1 blobs_lr: 2
  convolution_param { num_output: 6 kernel_size: 5 stride: 1 } }
layers { name: "pool1" type: POOLING bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layers { name: "conv2" type: CONVOLUTION bottom: "pool1" top: "conv2" convolution_param { num_output: 8 kernel_size: 5 } }
layers { name: "pool2" type: POOLING bottom: "conv2" top: "pool2" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layers { name: "ip1" type: INNER_PRODUCT bottom: "pool2" top: "ip1" inner_product_param { num_output: 20 } }
layers { name: "relu1" type: RELU bottom: "ip1" top: "ip1" }
layers { name: "ip2" type: INNER_PRODUCT bottom: "ip1" top: "ip2" inner_product_param { num_output: 10 } }
layers { name: "prob" type: SOFTMAX bottom: "ip2" top: "prob" }
'''


def lenet_weights(rng):
    return {"conv1": [randn(rng, 6, 1, 5, 5, scale=0.5), randn(rng, 6)],
            "conv2": [randn(rng, 8, 6, 5, 5, scale=0.2), randn(rng, 8)],
            "ip1": [randn(rng, 20, 8 * 4 * 4, scale=0.1), randn(rng, 20)],
            "ip2": [randn(rng, 10, 20, scale=0.3), randn(rng, 10)]}


def lenet_reference(x, w):
    t = t64(x) * 0.0125
    for c in ("conv1", "conv2"):
        t = F.max_pool2d(F.conv2d(t, t64(w[c][0]), t64(w[c][1])), 2, 2, ceil_mode=True)
    t = torch.relu(F.linear(t.flatten(1), t64(w["ip1"][0]), t64(w["ip1"][1])))
    return torch.softmax(F.linear(t, t64(w["ip2"][0]), t64(w["ip2"][1])), 1).numpy()


@pytest.mark.parametrize("explicit", [True, False])
@pytest.mark.parametrize("v1", [False, True])
def test_lenet_from_files(tmp_path, rng, explicit, v1):
    """NVIDIA's int8_caffe_mnist flow: parse(deploy=, model=, network=, dtype=), mark blob_map.find("prob")."""
    w = lenet_weights(rng)
    (tmp_path / "deploy.prototxt").write_text(LENET_V1 if v1 else LENET)
    (tmp_path / "lenet.caffemodel").write_bytes(caffemodel(w, v1=v1))
    builder = trt.Builder(LOGGER)
    network = builder.create_network(EXPLICIT) if explicit else builder.create_network()
    with trt.CaffeParser() as parser:
        blob_map = parser.parse(deploy=str(tmp_path / "deploy.prototxt"), model=str(tmp_path / "lenet.caffemodel"),
                                network=network, dtype=trt.float32)
    network.mark_output(blob_map.find("prob"))
    assert blob_map.find("nope") is None and "conv1" in blob_map
    assert tuple(blob_map.find("prob").shape) == ((2, 10) if explicit else (10,))
    assert [network.get_layer(i).name for i in range(3)] == ["scale", "conv1", "pool1"]
    if explicit:
        engine = builder.build_engine(network, builder.create_builder_config())
    else:
        builder.max_batch_size = 2
        engine = builder.build_cuda_engine(network)
    x = randn(rng, 2, 1, 28, 28, scale=60)
    out = engine.create_execution_context().infer({"data": x})["prob"]
    assert_close(out.reshape(2, 10), lenet_reference(x, w))


# ------------------------------------------------------------------------------------------------------------
# a ResNet block: conv / BatchNorm / Scale / ReLU / Eltwise / pooling
# ------------------------------------------------------------------------------------------------------------

RESNET = '''
name: "block"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 4 dim: 9 dim: 9 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  convolution_param { num_output: 8 kernel_size: 3 pad: 1 stride: 2 bias_term: false } }
layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" batch_norm_param { use_global_stats: true } }
layer { name: "sc1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
  convolution_param { num_output: 8 kernel_h: 3 kernel_w: 1 pad_h: 1 pad_w: 0 bias_term: false group: 2 } }
layer { name: "bn2" type: "BatchNorm" bottom: "conv2" top: "conv2" batch_norm_param { eps: 0.001 } }
layer { name: "sc2" type: "Scale" bottom: "conv2" top: "conv2" scale_param { bias_term: true } }
layer { name: "proj" type: "Convolution" bottom: "data" top: "proj"
  convolution_param { num_output: 8 kernel_size: 1 stride: 2 } }
layer { name: "add" type: "Eltwise" bottom: "conv2" bottom: "proj" top: "add" }
layer { name: "relu2" type: "ReLU" bottom: "add" top: "add" relu_param { negative_slope: 0.1 } }
layer { name: "pool" type: "Pooling" bottom: "add" top: "pool" pooling_param { pool: AVE global_pooling: true } }
layer { name: "fc" type: "InnerProduct" bottom: "pool" top: "fc" inner_product_param { num_output: 5 } }
'''


def bn_blobs(rng, C, factor):
    mean = randn(rng, C)
    var = (rng.uniform(0.5, 2.0, C)).astype(np.float32)
    return [mean * factor, var * factor, np.array([factor], np.float32)]


@pytest.mark.parametrize("explicit", [True, False])
def test_resnet_block(rng, explicit):
    w = {"conv1": [randn(rng, 8, 4, 3, 3, scale=0.3)], "bn1": bn_blobs(rng, 8, 7.5),
         "sc1": [randn(rng, 8), randn(rng, 8)], "conv2": [randn(rng, 8, 4, 3, 1, scale=0.3)],
         "bn2": bn_blobs(rng, 8, 0.5), "sc2": [randn(rng, 8), randn(rng, 8)],
         "proj": [randn(rng, 8, 4, 1, 1), randn(rng, 8)], "fc": [randn(rng, 5, 8), randn(rng, 5)]}
    x = randn(rng, 2, 4, 9, 9)
    out = run(RESNET, caffemodel(w), {"data": x}, ["fc", "conv1", "pool"], explicit)

    def bn_scale(t, bn, sc, eps):
        f = w[bn][2][0]
        t = F.batch_norm(t, t64(w[bn][0] / f), t64(w[bn][1] / f), eps=eps)
        return t * t64(w[sc][0]).view(1, -1, 1, 1) + t64(w[sc][1]).view(1, -1, 1, 1)

    c1 = torch.relu(bn_scale(F.conv2d(t64(x), t64(w["conv1"][0]), stride=2, padding=1), "bn1", "sc1", 1e-5))
    c2 = bn_scale(F.conv2d(c1, t64(w["conv2"][0]), padding=(1, 0), groups=2), "bn2", "sc2", 1e-3)
    add = F.leaky_relu(c2 + F.conv2d(t64(x), t64(w["proj"][0]), t64(w["proj"][1]), stride=2), 0.1)
    pool = add.mean((2, 3), keepdim=True)
    fc = F.linear(pool.flatten(1), t64(w["fc"][0]), t64(w["fc"][1]))
    assert_close(out["conv1"], c1.numpy())  # an in-place chain: the blob is the last tensor written
    assert_close(out["pool"], pool.numpy())
    assert_close(out["fc"], fc.numpy())


@pytest.mark.parametrize("ltype", ["Convolution", "DepthwiseConvolution", "ConvolutionDepthwise"])
def test_mobilenet_depthwise_block(rng, ltype):
    """MobileNet's depthwise 3x3 (group = channels; the forks' own types) + BatchNorm + Scale + ReLU6, pointwise 1x1."""
    group = "group: 6" if ltype == "Convolution" else ""
    proto = one_layer("""
    layer { name: "dw" type: "%s" bottom: "data" top: "dw" convolution_param { num_output: 6 kernel_size: 3 pad: 1
      stride: 2 bias_term: false %s } }
    layer { name: "dw/bn" type: "BatchNorm" bottom: "dw" top: "dw" }
    layer { name: "dw/scale" type: "Scale" bottom: "dw" top: "dw" scale_param { bias_term: true } }
    layer { name: "dw/relu" type: "ReLU6" bottom: "dw" top: "dw" }
    layer { name: "pw" type: "Convolution" bottom: "dw" top: "pw" convolution_param { num_output: 4 kernel_size: 1 } }
    """ % (ltype, group), (2, 6, 7, 7))
    w = {"dw": [randn(rng, 6, 1, 3, 3)], "dw/bn": bn_blobs(rng, 6, 1.0), "dw/scale": [randn(rng, 6), randn(rng, 6)],
         "pw": [randn(rng, 4, 6, 1, 1), randn(rng, 4)]}
    x = randn(rng, 2, 6, 7, 7, scale=3)
    out = run(proto, caffemodel(w), {"data": x}, ["pw"])["pw"]
    t = F.conv2d(t64(x), t64(w["dw"][0]), stride=2, padding=1, groups=6)
    t = F.batch_norm(t, t64(w["dw/bn"][0]), t64(w["dw/bn"][1]), eps=1e-5)
    t = torch.clamp(t * t64(w["dw/scale"][0]).view(1, -1, 1, 1) + t64(w["dw/scale"][1]).view(1, -1, 1, 1), 0, 6)
    assert_close(out, F.conv2d(t, t64(w["pw"][0]), t64(w["pw"][1])).numpy())


# ------------------------------------------------------------------------------------------------------------
# InnerProduct, Deconvolution, pooling sizes
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("axis,transpose,bias", [(1, False, True), (2, True, True), (-1, False, False)])
def test_inner_product_axis(rng, axis, transpose, bias):
    x = randn(rng, 2, 3, 4, 5)
    K = int(np.prod(x.shape[axis % 4:]))
    w = randn(rng, 6, K)
    blobs = [w.T.copy() if transpose else w] + ([randn(rng, 6)] if bias else [])
    layer = ('layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param '
             '{ num_output: 6 axis: %d transpose: %s bias_term: %s } }' % (axis, str(transpose).lower(),
                                                                          str(bias).lower()))
    out = run(one_layer(layer, x.shape), caffemodel({"ip": blobs}), {"data": x}, ["ip"])["ip"]
    lead = x.shape[:axis % 4]
    want = x.reshape(lead + (K,)).astype(np.float64) @ w.T.astype(np.float64) + (blobs[1] if bias else 0)
    assert_close(out, want)


@pytest.mark.parametrize("explicit", [True, False])
def test_deconvolution(rng, explicit):
    x = randn(rng, 2, 4, 5, 6)
    w, b = randn(rng, 4, 3, 4, 3), randn(rng, 6)  # [C, K/group, kh, kw], group 2 -> K = 6
    layer = ('layer { name: "up" type: "Deconvolution" bottom: "data" top: "up" convolution_param { num_output: 6 '
             'group: 2 kernel_h: 4 kernel_w: 3 stride: 2 pad: 1 dilation: 1 } }')
    out = run(one_layer(layer, x.shape), caffemodel({"up": [w, b]}), {"data": x}, ["up"], explicit)["up"]
    want = F.conv_transpose2d(t64(x), t64(w), t64(b), stride=2, padding=1, groups=2).numpy()
    assert want.shape == (2, 6, 10, 11)  # Caffe: s(H - 1) + k - 2p
    assert_close(out, want)


def caffe_pool(x, k, s, p, ave, ceil=True):
    """Caffe's PoolingLayer, as its CPU loop computes it (float64)."""
    N, C, H, W = x.shape

    def size(I, k, s, p):
        o = (-(-(I + 2 * p - k) // s) if ceil else (I + 2 * p - k) // s) + 1
        return o - 1 if p and (o - 1) * s >= I + p else o

    OH, OW = size(H, k[0], s[0], p[0]), size(W, k[1], s[1], p[1])
    y = np.zeros((N, C, OH, OW))
    for oh in range(OH):
        for ow in range(OW):
            hs, ws = oh * s[0] - p[0], ow * s[1] - p[1]
            he, we = min(hs + k[0], H + p[0]), min(ws + k[1], W + p[1])
            count = (he - hs) * (we - ws)
            hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, H), min(we, W)
            win = x[:, :, hs:he, ws:we].astype(np.float64)
            y[:, :, oh, ow] = win.sum((2, 3)) / count if ave else win.max((2, 3))
    return y


@pytest.mark.parametrize("H,W,k,s,p", [
    (7, 8, (3, 3), (2, 2), (0, 0)),   # ceil: 3 x 4 (floor would give 3 x 3)
    (6, 6, (3, 3), (2, 2), (1, 1)),   # ceil: 4 x 4 (floor: 3 x 3)
    (5, 9, (2, 3), (2, 3), (1, 1)),   # rectangular (_h/_w); H: ceil gives 4, minus the window starting in the padding
    (10, 7, (3, 2), (3, 1), (0, 1)),
])
@pytest.mark.parametrize("ave", [False, True])
@pytest.mark.parametrize("explicit", [True, False])
def test_pooling_ceil_sizes(rng, H, W, k, s, p, ave, explicit):
    x = randn(rng, 2, 3, H, W)
    if k[0] == k[1] and s[0] == s[1] and p[0] == p[1]:
        spec = "kernel_size: %d stride: %d pad: %d" % (k[0], s[0], p[0])
    else:
        spec = "kernel_h: %d kernel_w: %d stride_h: %d stride_w: %d pad_h: %d pad_w: %d" % (k + s + p)
    layer = 'layer { name: "pool" type: "Pooling" bottom: "data" top: "pool" pooling_param { pool: %s %s } }' % (
        "AVE" if ave else "MAX", spec)
    out = run(one_layer(layer, x.shape), b"", {"data": x}, ["pool"], explicit)["pool"]
    want = caffe_pool(x, k, s, p, ave)
    assert out.shape[2:] == want.shape[2:]
    assert_close(out.reshape(want.shape), want)


def test_pooling_round_mode_floor(rng):
    x = randn(rng, 1, 2, 7, 8)
    layer = ('layer { name: "pool" type: "Pooling" bottom: "data" top: "pool" '
             'pooling_param { pool: MAX kernel_size: 3 stride: 2 round_mode: FLOOR } }')
    out = run(one_layer(layer, x.shape), b"", {"data": x}, ["pool"])["pool"]
    assert_close(out, caffe_pool(x, (3, 3), (2, 2), (0, 0), False, ceil=False))


# ------------------------------------------------------------------------------------------------------------
# element-wise layers
# ------------------------------------------------------------------------------------------------------------

def _sp(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


POINTWISE = [
    ('type: "Sigmoid"', lambda x: 1 / (1 + np.exp(-x))),
    ('type: "TanH"', np.tanh),
    ('type: "ELU" elu_param { alpha: 0.7 }', lambda x: np.where(x > 0, x, 0.7 * (np.exp(x) - 1))),
    ('type: "BNLL"', _sp),
    ('type: "AbsVal"', np.abs),
    ('type: "ReLU" relu_param { negative_slope: 0.25 }', lambda x: np.where(x > 0, x, 0.25 * x)),
    ('type: "Power" power_param { power: 2 scale: 0.5 shift: 1.5 }', lambda x: (1.5 + 0.5 * x) ** 2),
    ('type: "Exp"', np.exp),
    ('type: "Exp" exp_param { base: 2 scale: 0.5 shift: 1 }', lambda x: 2.0 ** (1 + 0.5 * x)),
    ('type: "Log" log_param { shift: 5 }', lambda x: np.log(5 + x)),
    ('type: "Log" log_param { base: 10 scale: 2 shift: 6 }', lambda x: np.log10(6 + 2 * x)),
    ('type: "Softmax"', lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    ('type: "Softmax" softmax_param { axis: -1 }', lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    ('type: "Dropout" dropout_param { dropout_ratio: 0.3 }', lambda x: x),
    ('type: "LRN" lrn_param { local_size: 3 alpha: 0.3 beta: 0.75 k: 2 }', None),
    ('type: "LRN" lrn_param { local_size: 3 alpha: 0.3 beta: 0.75 norm_region: WITHIN_CHANNEL }', None),
]


def lrn_ref(x, n, alpha, beta, k, within):
    x = x.astype(np.float64)
    if within:
        sq = np.pad(x * x, ((0, 0), (0, 0), (n // 2, n // 2), (n // 2, n // 2)))
        acc = sum(sq[:, :, i:i + x.shape[2], j:j + x.shape[3]] for i in range(n) for j in range(n))
        return x / (1 + alpha / n ** 2 * acc) ** beta
    sq = np.pad(x * x, ((0, 0), (n // 2, n // 2), (0, 0), (0, 0)))
    acc = sum(sq[:, i:i + x.shape[1]] for i in range(n))
    return x / (k + alpha / n * acc) ** beta


@pytest.mark.parametrize("spec,ref", POINTWISE, ids=[s.split('"')[1] + str(i) for i, (s, _) in enumerate(POINTWISE)])
@pytest.mark.parametrize("explicit", [True, False])
def test_pointwise(rng, spec, ref, explicit):
    x = randn(rng, 2, 5, 3, 4)
    layer = 'layer { name: "op" %s bottom: "data" top: "y" }' % spec
    out = run(one_layer(layer, x.shape), b"", {"data": x}, ["y"], explicit)["y"]
    if ref is None:
        ref = lambda v: lrn_ref(v, 3, 0.3, 0.75, 2.0, "WITHIN" in spec)  # noqa: E731
    assert_close(out, ref(x.astype(np.float64)))


@pytest.mark.parametrize("shared", [False, True])
def test_prelu(rng, shared):
    x = randn(rng, 2, 5, 3, 4)
    slopes = randn(rng, 1 if shared else 5)
    layer = ('layer { name: "pr" type: "PReLU" bottom: "data" top: "y" prelu_param { channel_shared: %s } }'
             % str(shared).lower())
    out = run(one_layer(layer, x.shape), caffemodel({"pr": [slopes]}), {"data": x}, ["y"])["y"]
    s = slopes.reshape(1, -1, 1, 1).astype(np.float64)
    assert_close(out, np.where(x > 0, x, s * x))


@pytest.mark.parametrize("op,coeff", [("SUM", ""), ("SUM", "coeff: 0.5 coeff: -2 coeff: 3"), ("PROD", ""),
                                      ("MAX", "")])
def test_eltwise(rng, op, coeff):
    xs = [randn(rng, 2, 3, 4, 4) for _ in range(3)]
    proto = ('name: "e"\ninput: "a"\ninput_shape { dim: 2 dim: 3 dim: 4 dim: 4 }\ninput: "b"\n'
             'input_shape { dim: 2 dim: 3 dim: 4 dim: 4 }\ninput: "c"\ninput_shape { dim: 2 dim: 3 dim: 4 dim: 4 }\n'
             'layer { name: "e" type: "Eltwise" bottom: "a" bottom: "b" bottom: "c" top: "y" '
             'eltwise_param { operation: %s %s } }' % (op, coeff))
    out = run(proto, b"", dict(zip("abc", xs)), ["y"])["y"]
    a, b, c = (v.astype(np.float64) for v in xs)
    want = {"SUM": (0.5 * a - 2 * b + 3 * c) if coeff else a + b + c, "PROD": a * b * c,
            "MAX": np.maximum(np.maximum(a, b), c)}[op]
    assert_close(out, want)


def test_scale_and_bias_forms(rng):
    """Scale over axes (1, 2) (num_axes 2), Scale by a second bottom blob (axis 0), Bias over the last axis."""
    x, y = randn(rng, 2, 3, 4, 5), randn(rng, 2, 3)
    s, bs, bb = randn(rng, 3, 4), randn(rng, 3, 4), randn(rng, 5)
    proto = ('name: "s"\ninput: "data"\ninput_shape { dim: 2 dim: 3 dim: 4 dim: 5 }\ninput: "f"\n'
             'input_shape { dim: 2 dim: 3 }\n'
             'layer { name: "s1" type: "Scale" bottom: "data" top: "s1" scale_param { num_axes: 2 bias_term: true } }\n'
             'layer { name: "s2" type: "Scale" bottom: "s1" bottom: "f" top: "s2" scale_param { axis: 0 } }\n'
             'layer { name: "b1" type: "Bias" bottom: "s2" top: "b1" bias_param { axis: -1 } }\n')
    out = run(proto, caffemodel({"s1": [s, bs], "b1": [bb]}), {"data": x, "f": y}, ["b1"])["b1"]
    want = (x * s[None, :, :, None] + bs[None, :, :, None]) * y[:, :, None, None] + bb
    assert_close(out, want.astype(np.float64))


# ------------------------------------------------------------------------------------------------------------
# shape layers
# ------------------------------------------------------------------------------------------------------------

SHAPES = '''
name: "shapes"
input: "data"
input_shape { dim: 2 dim: 6 dim: 4 dim: 3 }
layer { name: "split" type: "Split" bottom: "data" top: "d1" top: "d2" }
layer { name: "slice" type: "Slice" bottom: "d1" top: "s1" top: "s2" top: "s3" slice_param { axis: 1 slice_point: 1 slice_point: 4 } }
layer { name: "halves" type: "Slice" bottom: "d2" top: "h1" top: "h2" slice_param { slice_dim: 2 } }
layer { name: "cat" type: "Concat" bottom: "s3" bottom: "s1" top: "cat" concat_param { axis: 1 } }
layer { name: "cat2" type: "Concat" bottom: "h2" bottom: "h1" top: "cat2" concat_param { concat_dim: 2 } }
layer { name: "perm" type: "Permute" bottom: "cat2" top: "perm" permute_param { order: 0 order: 3 order: 1 } }
layer { name: "flat" type: "Flatten" bottom: "perm" top: "flat" flatten_param { axis: 2 } }
layer { name: "resh" type: "Reshape" bottom: "s2" top: "resh" reshape_param { shape { dim: 0 dim: -1 dim: 2 } } }
layer { name: "resh2" type: "Reshape" bottom: "data" top: "resh2" reshape_param { axis: 1 num_axes: 2 shape { dim: 3 dim: 8 } } }
layer { name: "crop" type: "Crop" bottom: "data" bottom: "h1" top: "crop" crop_param { axis: 2 offset: 1 offset: 0 } }
'''


@pytest.mark.parametrize("explicit", [True, False])
def test_shape_layers(rng, explicit):
    x = randn(rng, 2, 6, 4, 3)
    names = ["cat", "cat2", "perm", "flat", "resh", "resh2", "crop", "d2"]
    out = run(SHAPES, b"", {"data": x}, names, explicit)
    s1, s2, s3 = x[:, :1], x[:, 1:4], x[:, 4:]
    h1, h2 = x[:, :, :2], x[:, :, 2:]
    cat2 = np.concatenate([h2, h1], 2)
    perm = cat2.transpose(0, 3, 1, 2)
    cat = np.concatenate([s3, s1], 1)
    want = {"cat": cat, "cat2": cat2, "perm": perm, "flat": perm.reshape(2, 3, -1), "resh": s2.reshape(2, -1, 2),
            "resh2": x.reshape(2, 3, 8, 3), "crop": x[:, :, 1:3, 0:3], "d2": x}
    for k in names:
        assert_close(out[k], want[k].astype(np.float64))


def test_input_layer_multiple_tops_and_train_layers_skipped(rng):
    """An Input layer with two tops; TRAIN-phase layers (data, loss, accuracy) do not exist in the deploy net."""
    proto = '''
    layer { name: "train_data" type: "Data" top: "data" top: "label" include { phase: TRAIN } data_param { batch_size: 64 }
      transform_param { mirror: true resize_param { height: 300 width: 300 } } }
    layer { name: "in" type: "Input" top: "a" top: "b" input_param { shape { dim: 1 dim: 2 } shape { dim: 1 dim: 3 } } }
    layer { name: "cat" type: "Concat" bottom: "a" bottom: "b" top: "cat" }
    layer { name: "loss" type: "SoftmaxWithLoss" bottom: "cat" bottom: "label" top: "loss" exclude { phase: TEST } }
    '''
    a, b = randn(rng, 1, 2), randn(rng, 1, 3)
    out = run(proto, b"", {"a": a, "b": b}, ["cat"])["cat"]
    assert_close(out, np.concatenate([a, b], 1).astype(np.float64))


# ------------------------------------------------------------------------------------------------------------
# SSD head: Normalize, PriorBox, Permute/Flatten/Concat, Reshape + Softmax, DetectionOutput
# ------------------------------------------------------------------------------------------------------------

SSD = '''
name: "tiny_ssd"
input: "data"
input_shape { dim: 2 dim: 3 dim: 16 dim: 16 }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv" convolution_param { num_output: 4 kernel_size: 3 pad: 1 } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
layer { name: "conv_norm" type: "Normalize" bottom: "conv" top: "conv_norm" norm_param { across_spatial: false channel_shared: false } }
layer { name: "pool" type: "Pooling" bottom: "conv" top: "pool" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
@HEADS@
layer { name: "mbox_loc" type: "Concat" bottom: "f1_loc_flat" bottom: "f2_loc_flat" top: "mbox_loc" concat_param { axis: 1 } }
layer { name: "mbox_conf" type: "Concat" bottom: "f1_conf_flat" bottom: "f2_conf_flat" top: "mbox_conf" concat_param { axis: 1 } }
layer { name: "mbox_priorbox" type: "Concat" bottom: "f1_priorbox" bottom: "f2_priorbox" top: "mbox_priorbox" concat_param { axis: 2 } }
layer { name: "conf_reshape" type: "Reshape" bottom: "mbox_conf" top: "conf_reshape" reshape_param { shape { dim: 0 dim: -1 dim: 3 } } }
layer { name: "conf_softmax" type: "Softmax" bottom: "conf_reshape" top: "conf_softmax" softmax_param { axis: 2 } }
layer { name: "conf_flatten" type: "Flatten" bottom: "conf_softmax" top: "conf_flatten" flatten_param { axis: 1 } }
layer {
  name: "detection_out" type: "DetectionOutput" bottom: "mbox_loc" bottom: "conf_flatten" bottom: "mbox_priorbox"
  top: "detection_out"
  detection_output_param {
    num_classes: 3 share_location: true background_label_id: 0
    nms_param { nms_threshold: 0.45 top_k: 30 }
    save_output_param { output_directory: "/tmp" resize_param { prob: 1 resize_mode: WARP height: 16 width: 16 } }
    code_type: CENTER_SIZE keep_top_k: 12 confidence_threshold: 0.4
  }
}
'''

HEAD = '''
layer { name: "@F@_loc" type: "Convolution" bottom: "@B@" top: "@F@_loc" convolution_param { num_output: @L@ kernel_size: 1 } }
layer { name: "@F@_loc_perm" type: "Permute" bottom: "@F@_loc" top: "@F@_loc_perm" permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: "@F@_loc_flat" type: "Flatten" bottom: "@F@_loc_perm" top: "@F@_loc_flat" flatten_param { axis: 1 } }
layer { name: "@F@_conf" type: "Convolution" bottom: "@B@" top: "@F@_conf" convolution_param { num_output: @C@ kernel_size: 1 } }
layer { name: "@F@_conf_perm" type: "Permute" bottom: "@F@_conf" top: "@F@_conf_perm" permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: "@F@_conf_flat" type: "Flatten" bottom: "@F@_conf_perm" top: "@F@_conf_flat" flatten_param { axis: 1 } }
layer { name: "@F@_priorbox" type: "PriorBox" bottom: "@B@" bottom: "data" top: "@F@_priorbox"
  prior_box_param { @P@ } }
'''

PRIORS = {"f1": dict(min_size=[4.0], max_size=[8.0], aspect_ratio=[2.0], flip=True, clip=False,
                     variance=[0.1, 0.1, 0.2, 0.2], step=1.0),
          "f2": dict(min_size=[8.0], max_size=[], aspect_ratio=[2.0, 3.0], flip=False, clip=True, variance=[0.1],
                     step=0.0)}


def n_priors(p):
    ars = [1.0] + [a for a in p["aspect_ratio"]] + ([1 / a for a in p["aspect_ratio"]] if p["flip"] else [])
    return len(p["min_size"]) * (len(ars) + len(p["max_size"]))


def ssd_proto():
    heads = ""
    for f, bottom in (("f1", "conv_norm"), ("f2", "pool")):
        p = PRIORS[f]
        spec = " ".join(["min_size: %g" % v for v in p["min_size"]] + ["max_size: %g" % v for v in p["max_size"]] +
                        ["aspect_ratio: %g" % v for v in p["aspect_ratio"]] +
                        ["flip: %s" % str(p["flip"]).lower(), "clip: %s" % str(p["clip"]).lower()] +
                        ["variance: %g" % v for v in p["variance"]] + (["step: %g" % p["step"]] if p["step"] else []))
        k = n_priors(p)
        heads += HEAD.replace("@F@", f).replace("@B@", bottom).replace("@L@", str(4 * k)) \
            .replace("@C@", str(3 * k)).replace("@P@", spec)
    return SSD.replace("@HEADS@", heads)


def ssd_weights(rng):
    w = {"conv": [randn(rng, 4, 3, 3, 3, scale=0.5), randn(rng, 4)], "conv_norm": [rng.uniform(0.5, 2, 4)]}
    for f in ("f1", "f2"):
        k = n_priors(PRIORS[f])
        w[f + "_loc"] = [randn(rng, 4 * k, 4, 1, 1, scale=0.1), randn(rng, 4 * k, scale=0.1)]
        w[f + "_conf"] = [randn(rng, 3 * k, 4, 1, 1, scale=0.3), randn(rng, 3 * k)]
    return w


def ssd_reference(x, w):
    from test_plugins_builtin_b import ref_nms, ref_prior_box  # independent float64 references of the plugins
    conv = torch.relu(F.conv2d(t64(x), t64(w["conv"][0]), t64(w["conv"][1]), padding=1))
    norm = conv / torch.sqrt((conv ** 2).sum(1, keepdim=True) + 1e-10) * t64(w["conv_norm"][0]).view(1, -1, 1, 1)
    pool = F.max_pool2d(conv, 2, 2)
    locs, confs, priors = [], [], []
    for f, feat in (("f1", norm), ("f2", pool)):
        for kind, dst in (("_loc", locs), ("_conf", confs)):
            y = F.conv2d(feat, t64(w[f + kind][0]), t64(w[f + kind][1]))
            dst.append(y.permute(0, 2, 3, 1).flatten(1))
        p = PRIORS[f]
        priors.append(ref_prior_box(feat.shape[2], feat.shape[3], 16, 16, p["min_size"], p["max_size"],
                                    p["aspect_ratio"], int(p["flip"]), int(p["clip"]), p["variance"],
                                    step_h=p["step"], step_w=p["step"]))
    conf = torch.softmax(torch.cat(confs, 1).view(2, -1, 3), 2).flatten(1)
    pri = np.concatenate(priors, 1)[None]
    return ref_nms(torch.cat(locs, 1).numpy(), conf.numpy(), pri, 3, 30, 12, 0.4, 0.45, share_location=1,
                   background=0, code_type=1), pri


@pytest.mark.parametrize("explicit", [True, False])
def test_ssd_head(rng, explicit, caplog):
    w = ssd_weights(rng)
    x = randn(rng, 2, 3, 16, 16)
    with caplog.at_level(logging.WARNING, logger="trtlite.caffe"):
        out = run(ssd_proto(), caffemodel(w), {"data": x}, ["detection_out", "detection_out_keep_count",
                                                             "mbox_priorbox"], explicit)
    assert "SaveOutputParameter.resize_param" in caplog.text  # skipped, with a warning naming it
    (dets, counts), pri = ssd_reference(x, w)
    # [1, 2, P*4, 1]; an implicit-batch network repeats the priors per sample ([N, 2, P*4, 1])
    assert_close(out["mbox_priorbox"].reshape((-1,) + pri.shape[1:])[:1], pri)
    np.testing.assert_array_equal(out["detection_out_keep_count"].reshape(2), counts)
    assert counts.min() > 0
    assert_close(out["detection_out"].reshape(2, 12, 7), dets)


# ------------------------------------------------------------------------------------------------------------
# mean files, plugin factory, misc API
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("legacy", [False, True])
def test_parse_binary_proto(tmp_path, rng, legacy):
    mean = randn(rng, 1, 3, 4, 5)
    blob = schema.BlobProto()
    if legacy:
        blob.num, blob.channels, blob.height, blob.width = mean.shape
    else:
        blob.shape.dim.extend(mean.shape)
    blob.data.extend(mean.ravel().tolist())
    path = tmp_path / "mean.binaryproto"
    path.write_bytes(blob.SerializeToString())
    got = trt.CaffeParser().parse_binary_proto(str(path))
    assert got.dtype == np.float32 and got.shape == mean.shape
    np.testing.assert_array_equal(got, mean)
    path.write_bytes(b"\xff\xff\xff")
    with pytest.raises(trt.CaffeParserError, match="mean.binaryproto"):
        trt.CaffeParser().parse_binary_proto(str(path))


class ClipFactory:
    """A plugin_factory_v2: layers named "clip*" become Clip_TRT plugins with bounds from their weight blob."""

    def __init__(self):
        self.calls = []

    def is_plugin_v2(self, layer_name):
        return layer_name.startswith("clip")

    def create_plugin(self, layer_name, weights, namespace):
        self.calls.append((layer_name, [w.tolist() for w in weights], namespace))
        creator = trt.get_plugin_registry().get_plugin_creator("Clip_TRT", "1", "")
        lo, hi = weights[0].ravel()
        fields = [trt.PluginField("clipMin", np.array([lo], np.float32), trt.PluginFieldType.FLOAT32),
                  trt.PluginField("clipMax", np.array([hi], np.float32), trt.PluginFieldType.FLOAT32)]
        return creator.create_plugin(layer_name, trt.PluginFieldCollection(fields))


def test_plugin_factory_v2(rng):
    trt.init_libnvinfer_plugins(LOGGER, "")
    x = randn(rng, 2, 3, 4)
    parser = trt.CaffeParser()
    parser.plugin_factory_v2 = ClipFactory()
    parser.plugin_namespace = "ns"
    layer = 'layer { name: "clip1" type: "MyClip" bottom: "data" top: "y" }'
    out = run(one_layer(layer, x.shape), caffemodel({"clip1": [np.array([-0.5, 0.25], np.float32)]}),
              {"data": x}, ["y"], parser=parser)["y"]
    assert parser.plugin_factory_v2.calls == [("clip1", [[-0.5, 0.25]], "ns")]
    assert_close(out, np.clip(x, -0.5, 0.25).astype(np.float64))


def test_example_script():
    """examples/caffe_lenet.py --quick: writes the Caffe files, parses, builds, checks against PyTorch itself."""
    r = subprocess.run([sys.executable, os.path.join("examples", "caffe_lenet.py"), "--quick"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "same class as PyTorch: 100.00%" in r.stdout, r.stdout


def test_api_surface():
    parser = trt.CaffeParser()
    assert parser.plugin_factory_v2 is None and parser.plugin_namespace == ""
    assert parser.protobuf_buffer_size == 2 ** 31 - 1
    assert trt.shutdown_protobuf_library() is None
    from trtlite.caffe import supported_layers
    assert {"Convolution", "PriorBox", "DetectionOutput", "BatchNorm", "Input"} <= set(supported_layers())


# ------------------------------------------------------------------------------------------------------------
# bad inputs: a CaffeParserError naming the layer / file / field, and the error logged
# ------------------------------------------------------------------------------------------------------------

CONV = 'layer { name: "conv1" type: "Convolution" bottom: "data" top: "c" convolution_param { num_output: 2 kernel_size: 3 } }'


class ListLogger(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.messages = []

    def log(self, severity, msg):
        self.messages.append((severity, msg))


@pytest.mark.parametrize("proto,weights,match", [
    (one_layer('layer { name: "r" type: "ReLU" bottom: "nope" top: "y" }', (1, 2)), {},
     r"layer 'r' \(ReLU\): bottom blob 'nope' is not produced"),
    (one_layer(CONV, (1, 2, 5, 5)), {"conv1": [np.zeros((2, 2, 3, 2)), np.zeros(2)]},
     r"layer 'conv1' \(Convolution\): weight blob 0 \(weights\) has shape \[2, 2, 3, 2\] \(24 values\); "
     r"expected \[2, 2, 3, 3\]"),
    (one_layer(CONV, (1, 2, 5, 5)), {"conv1": [np.zeros((2, 2, 3, 3))]},
     r"layer 'conv1' \(Convolution\): the .caffemodel holds 1 weight blob for it; expected 2 \(weights and bias\)"),
    (one_layer(CONV, (1, 2, 5, 5)), {"other": [np.zeros(1)]},
     r"layer 'conv1' \(Convolution\): has no weights in the .caffemodel"),
    (one_layer('layer { name: "odd" type: "Threshold" bottom: "data" top: "y" }', (1, 2)), {},
     r"layer 'odd' \(Threshold\): layer type 'Threshold' is not supported"),
    (one_layer('layer { name: "c" type: "Convolution" bottom: "data" top: "y" convolution_param { num_output: 2 '
               'kernel_sise: 3 } }', (1, 2, 5, 5)), {}, r'ConvolutionParameter" has no field named "kernel_sise"'),
    (one_layer('layer { name: "c" type: "Convolution" bottom: "data" top: "y" convolution_param { num_output: 2 } }',
               (1, 2, 5, 5)), {"c": [np.zeros((2, 2, 1, 1)), np.zeros(2)]},
     r"layer 'c' \(Convolution\): kernel_size \(or kernel_h and kernel_w\) is required"),
    (one_layer('layer { name: "p" type: "Pooling" bottom: "data" top: "y" pooling_param { pool: STOCHASTIC '
               'kernel_size: 2 } }', (1, 2, 4, 4)), {}, r"layer 'p' \(Pooling\): pool: STOCHASTIC is not supported"),
    (one_layer('layer { name: "s" type: "Slice" bottom: "data" top: "a" top: "b" }', (1, 3, 2)), {},
     r"layer 's' \(Slice\): axis 1 of size 3 does not split into 2 equal parts"),
    (one_layer('layer { name: "r" type: "Reshape" bottom: "data" top: "y" reshape_param { shape { dim: 5 dim: -1 } '
               '} }', (1, 3, 2)), {}, r"layer 'r' \(Reshape\): shape \[5, -1\] does not fit"),
    ('input: "data"\ninput_dim: 1\ninput_dim: 2\n', {}, r"1 inputs need 4 input_dim values"),
    ('layer { name: "d" type: "DetectionOutput" detection_output_param { nms_param { nms_thresh: 0.4 } } }', {},
     r'NonMaximumSuppressionParameter" has no field named "nms_thresh"'),
    ('layer { name: "x" type: "ReLU" bottom: "a" top: "b"', {}, r"deploy buffer: cannot parse the prototxt"),
])
def test_bad_models(proto, weights, match):
    logger = ListLogger()
    with pytest.raises(trt.CaffeParserError, match=match):
        parse(proto, caffemodel(weights) if weights else b"", logger=logger)
    assert any(sev == trt.Logger.ERROR and re.search(match, m) for sev, m in logger.messages), logger.messages


def test_corrupt_caffemodel_and_files(tmp_path):
    proto = one_layer(CONV, (1, 2, 5, 5))
    good = caffemodel({"conv1": [np.zeros((2, 2, 3, 3)), np.zeros(2)]})
    for bad in (good[:len(good) // 2], b"\x0a\xff\xff\xff\xff\x0f", b"garbage that is not protobuf\xff"):
        with pytest.raises(trt.CaffeParserError, match=r"model buffer: not a valid .caffemodel"):
            parse(proto, bad)
    with pytest.raises(trt.CaffeParserError, match=r"cannot read the deploy file '.*missing.prototxt'"):
        trt.CaffeParser().parse(str(tmp_path / "missing.prototxt"), None, trt.Builder(LOGGER).create_network(EXPLICIT),
                                trt.float32)
    (tmp_path / "d.prototxt").write_text(proto)
    (tmp_path / "m.caffemodel").write_bytes(good)
    parser = trt.CaffeParser()
    parser.protobuf_buffer_size = 16
    with pytest.raises(trt.CaffeParserError, match="larger than protobuf_buffer_size"):
        parser.parse(str(tmp_path / "d.prototxt"), str(tmp_path / "m.caffemodel"),
                     trt.Builder(LOGGER).create_network(EXPLICIT), trt.float32)
    with pytest.raises(trt.CaffeParserError, match="dtype must be trt.float32 or trt.float16"):
        trt.CaffeParser().parse_buffer(proto, good, trt.Builder(LOGGER).create_network(EXPLICIT), trt.int8)


def test_implicit_batch_cannot_touch_the_batch_axis():
    proto = one_layer('layer { name: "cat" type: "Concat" bottom: "data" bottom: "data" top: "y" '
                      'concat_param { axis: 0 } }', (2, 3))
    with pytest.raises(trt.CaffeParserError, match=r"layer 'cat' \(Concat\): axis is the batch axis"):
        parse(proto, b"", explicit=False)
    out = run(proto, b"", {"data": np.ones((2, 3), np.float32)}, ["y"])["y"]  # explicit batch: fine
    assert out.shape == (4, 3)


def test_batchnorm_scale_on_2d_blobs_and_fp16_dtype(rng):
    """BatchNorm + Scale after an InnerProduct ([N, C] blobs); dtype=trt.float16 parses the same network."""
    proto = one_layer("""
    layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: 6 } }
    layer { name: "bn" type: "BatchNorm" bottom: "ip" top: "ip" batch_norm_param { use_global_stats: false } }
    layer { name: "sc" type: "Scale" bottom: "ip" top: "ip" scale_param { bias_term: true } }
    """, (3, 5))
    w = {"ip": [randn(rng, 6, 5), randn(rng, 6)], "bn": bn_blobs(rng, 6, 2.0), "sc": [randn(rng, 6), randn(rng, 6)]}
    x = randn(rng, 3, 5)
    logger = ListLogger()
    builder = trt.Builder(LOGGER)
    network = builder.create_network(EXPLICIT)
    blobs = trt.CaffeParser(logger).parse_buffer(proto, caffemodel(w), network, trt.float16)
    assert any("use_global_stats: false" in m for _, m in logger.messages)  # warned, stored statistics used
    network.mark_output(blobs.find("ip"))
    engine = builder.build_engine(network, builder.create_builder_config())
    out = engine.create_execution_context().infer({"data": x})["ip"]
    t = F.linear(t64(x), t64(w["ip"][0]), t64(w["ip"][1]))
    t = F.batch_norm(t, t64(w["bn"][0] / 2), t64(w["bn"][1] / 2), eps=1e-5)
    assert_close(out, (t * t64(w["sc"][0]) + t64(w["sc"][1])).numpy())


@pytest.mark.parametrize("proto,match", [
    ('input: "data"\ninput_shape { dim: 1 dim: 0 dim: 3 }\n', r"input 'data': input_shape gives the shape \[1, 0, 3\]"),
    ('input: "a"\ninput: "b"\ninput_shape { dim: 1 }\n', r"2 inputs but 1 input_shape entries"),
    ('layer { name: "in" type: "Input" top: "a" input_param { shape { dim: 1 } } }\n'
     'layer { name: "in2" type: "Input" top: "a" input_param { shape { dim: 2 } } }\n', r"input 'a' is declared twice"),
    ('layer { name: "in" type: "Input" top: "a" }\nlayers { name: "r" type: RELU bottom: "a" top: "b" }\n',
     r"mixes new-style 'layer' and V1 'layers'"),
])
def test_bad_inputs(proto, match):
    with pytest.raises(trt.CaffeParserError, match=match):
        parse(proto, b"")


@pytest.mark.parametrize("explicit", [True, False])
def test_in_place_layers_on_an_input(rng, explicit):
    """In-place layers on the network input: the input keeps its name, the tensors after it get '<layer>/<blob>',
    the earlier in-place results '<layer>/<blob>_in'; all names stay unique and the last one is the blob."""
    proto = one_layer("""
    layer { name: "scale" type: "Power" bottom: "data" top: "data" power_param { scale: 2 } }
    layer { name: "relu" type: "ReLU" bottom: "data" top: "data" }
    layer { name: "copy" type: "Split" bottom: "data" top: "y" top: "z" }
    layer { name: "tanh" type: "TanH" bottom: "y" top: "y" }
    layer { name: "sig" type: "Sigmoid" bottom: "y" top: "y" }
    """, (2, 3))
    x = randn(rng, 2, 3)
    builder, network, blobs = parse(proto, b"", explicit)
    assert blobs.find("data").name == "relu/data" and blobs.find("y").name == "y" and blobs.find("z").name == "relu/data"
    names = [network.get_layer(i).get_output(0).name for i in range(network.num_layers)]
    assert names == ["scale/data", "relu/data", "sig/y_in", "y"] and network.get_input(0).name == "data"
    out = run(proto, b"", {"data": x}, ["y", "data"], explicit)
    r = np.maximum(2 * x.astype(np.float64), 0)
    assert_close(out["data"], r)
    assert_close(out["y"], 1 / (1 + np.exp(-np.tanh(r))))
