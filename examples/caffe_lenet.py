#!/usr/bin/env python3
"""LeNet as a Caffe model, imported with trt.CaffeParser -- NVIDIA's int8_caffe_mnist flow (TensorRT 7/8).

Users of Caffe-era models arrive with a deploy.prototxt, a .caffemodel and often a mean .binaryproto.  This script
first writes such a model itself (no Caffe needed): the trained Fashion-MNIST LeNet of examples/lenet (converted from
its .npz; random weights with --random) as

  deploy.prototxt        new-style `layer {}` entries: Power (the 1/(255*std) input scale), Convolution, Pooling,
                         InnerProduct, ReLU, Softmax -- the layout of TensorRT's mnist.prototxt
  lenet.caffemodel       a NetParameter in protobuf wire format (written with trtlite.caffe.schema)
  mean.binaryproto       the mean image in pixel units (a BlobProto), subtracted on the host

then does what the TensorRT sample does: an implicit-batch network, ``trt.CaffeParser().parse(deploy=, model=,
network=, dtype=trt.float32)``, ``network.mark_output(blob_map.find("prob"))``, ``parse_binary_proto`` for the mean,
build, and classify (Fashion-MNIST test images when the dataset is installed, random images otherwise), checking
the answers against PyTorch on the same weights.

    python examples/caffe_lenet.py                 # 10k test images (or 200 random ones without the dataset)
    python examples/caffe_lenet.py --quick         # 1000 test images
    python examples/caffe_lenet.py --out DIR       # keep the Caffe files in DIR
"""

import argparse
import os
import sys
import tempfile
from typing import Dict, List

import numpy as np
import numpy.typing as npt
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import demo_common as common  # noqa: E402
from demo_common import fashion_mnist  # noqa: E402

common.import_trtlite()  # this checkout's trtlite, when none is installed
import trtlite as trt  # noqa: E402
from trtlite.caffe import schema  # noqa: E402  (Caffe's messages, to write the .caffemodel)

lenet = common.load_example("lenet")

TRT_LOGGER = trt.Logger(trt.Logger.WARNING)
MAX_BATCH = 100

DEPLOY = """name: "LeNet"
input: "data"
input_shape { dim: 1 dim: 1 dim: 28 dim: 28 }
layer { name: "scale" type: "Power" bottom: "data" top: "scale" power_param { scale: %(scale).9g } }
layer { name: "conv1" type: "Convolution" bottom: "scale" top: "conv1"
  param { lr_mult: 1 } param { lr_mult: 2 }
  convolution_param { num_output: 20 kernel_size: 5 stride: 1 weight_filler { type: "xavier" } } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2" convolution_param { num_output: 50 kernel_size: 5 } }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1" inner_product_param { num_output: 500 } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2" inner_product_param { num_output: 10 } }
layer { name: "prob" type: "Softmax" bottom: "ip2" top: "prob" }
"""

# Caffe layer -> the PyTorch checkpoint's arrays (weights, bias)
CAFFE_LAYERS = {"conv1": "conv1", "conv2": "conv2", "ip1": "fc1", "ip2": "fc2"}


def write_caffe_model(out: str, weights: Dict[str, npt.NDArray[np.float32]]) -> None:
    """deploy.prototxt, lenet.caffemodel and mean.binaryproto in `out`.  The model reads images in pixel units minus
    the mean image: (pixel - 255*MEAN) * 1/(255*STD) is the normalization the checkpoint was trained with."""
    with open(os.path.join(out, "deploy.prototxt"), "w") as f:
        f.write(DEPLOY % {"scale": 1.0 / (255.0 * fashion_mnist.STD)})
    net = schema.NetParameter(name="LeNet")
    for caffe_name, torch_name in CAFFE_LAYERS.items():
        layer = net.layer.add(name=caffe_name, type="Convolution" if caffe_name.startswith("conv") else "InnerProduct")
        for suffix in ("weight", "bias"):
            arr = np.asarray(weights["%s.%s" % (torch_name, suffix)], np.float32)
            blob = layer.blobs.add()
            blob.shape.dim.extend(arr.shape)
            blob.data.extend(arr.ravel().tolist())
    with open(os.path.join(out, "lenet.caffemodel"), "wb") as f:
        f.write(net.SerializeToString())
    mean = schema.BlobProto(num=1, channels=1, height=28, width=28)
    mean.data.extend([255.0 * fashion_mnist.MEAN] * (28 * 28))
    with open(os.path.join(out, "mean.binaryproto"), "wb") as f:
        f.write(mean.SerializeToString())


def build_engine(deploy: str, model: str) -> trt.ICudaEngine:
    """The int8_caffe_mnist sample's build (fp32 here): implicit batch, CaffeParser, mark "prob"."""
    with trt.Builder(TRT_LOGGER) as builder, builder.create_network() as network, \
            builder.create_builder_config() as config, trt.CaffeParser() as parser:
        builder.max_batch_size = MAX_BATCH
        model_tensors = parser.parse(deploy=deploy, model=model, network=network, dtype=trt.float32)
        network.mark_output(model_tensors.find("prob"))
        return builder.build_engine(network, config)


def classify(engine: trt.ICudaEngine, images: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Class probabilities [N, 10], MAX_BATCH images at a time through context.execute (TensorRT 7's call)."""
    context = engine.create_execution_context()
    probs: List[npt.NDArray[np.float32]] = []
    for i in range(0, len(images), MAX_BATCH):
        batch = np.ascontiguousarray(images[i:i + MAX_BATCH])
        out = np.empty((len(batch), 10), np.float32)
        context.execute(len(batch), [batch, out])
        probs.append(out)
    return np.concatenate(probs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="1000 test images")
    p.add_argument("--random", action="store_true", help="random weights instead of the trained checkpoint")
    p.add_argument("--out", help="directory for the Caffe files (default: a temporary one)")
    args = p.parse_args()

    weights = lenet.load_weights() if not args.random and os.path.exists(lenet.CHECKPOINT) else \
        lenet.state_to_numpy(lenet.random_model(0))
    try:
        x_norm, labels = fashion_mnist.load("test", limit=1000 if args.quick else None)
        have_data = True
    except fashion_mnist.DatasetMissingError as e:
        print("%s\nusing 200 random images instead" % e)
        x_norm = np.random.default_rng(0).standard_normal((200, 1, 28, 28)).astype(np.float32)
        labels = np.zeros(200, np.int64)
        have_data = False
    pixels = (x_norm * np.float32(fashion_mnist.STD) + np.float32(fashion_mnist.MEAN)) * np.float32(255.0)

    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or tmp
        os.makedirs(out, exist_ok=True)
        write_caffe_model(out, weights)
        engine = build_engine(os.path.join(out, "deploy.prototxt"), os.path.join(out, "lenet.caffemodel"))
        mean = trt.CaffeParser().parse_binary_proto(os.path.join(out, "mean.binaryproto"))  # [1, 1, 28, 28]
        probs = classify(engine, (pixels - mean).astype(np.float32))

    with torch.no_grad():
        ref = torch.softmax(lenet.model_from_weights(weights).logits(torch.from_numpy(x_norm)), 1).numpy()
    err = float(np.abs(probs - ref).max())
    agree = float(np.mean(probs.argmax(1) == ref.argmax(1)))
    print("Caffe LeNet through trt.CaffeParser: %d images, max |p - p_torch| = %.2e, same class as PyTorch: %.2f%%"
          % (len(probs), err, 100 * agree))
    if have_data:
        print("accuracy: trtlite %.2f%%, PyTorch %.2f%%" % (100 * np.mean(probs.argmax(1) == labels),
                                                           100 * np.mean(ref.argmax(1) == labels)))
    if err > 1e-3:
        sys.exit("trtlite and PyTorch disagree")


if __name__ == "__main__":
    main()
