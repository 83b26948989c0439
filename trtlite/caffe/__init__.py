"""trtlite.caffe, the Caffe front end: ``trt.CaffeParser`` as in TensorRT 7/8 (dropped in TensorRT 10), for models
that come as a deploy prototxt and a .caffemodel (LeNet, AlexNet/VGG/GoogLeNet/ResNet, MobileNet(-SSD), SSD).

Usage (as with TensorRT)::

    network = builder.create_network()                      # implicit batch, as TensorRT 7's samples
    with trt.CaffeParser() as parser:
        blobs = parser.parse(deploy="deploy.prototxt", model="net.caffemodel", network=network, dtype=trt.float32)
    network.mark_output(blobs.find("prob"))

Needs the optional ``protobuf`` package (``pip install trtlite[caffe]``).  The Caffe schema is written in
``schema`` from Caffe's published field numbers and compiled at import time (no protoc, no caffe_pb2).

Layout: ``schema`` (the messages), ``reader`` (text format prototxt, wire format .caffemodel / .binaryproto),
``importer`` (inputs and layers in order) over an ``ImportContext`` (``context``), one importer module per layer
family (``layers_conv``, ``layers_pointwise``, ``layers_norm``, ``layers_shape``, ``layers_ssd``) registered in
``registry``, and ``parser`` (the public API).  docs/caffe.md lists the layers and how each maps.
"""
from __future__ import annotations

from .errors import CaffeParserError
from .parser import CaffeParser, IBlobNameToTensor, shutdown_protobuf_library
from .registry import supported_layers

__all__ = ["CaffeParser", "CaffeParserError", "IBlobNameToTensor", "shutdown_protobuf_library", "supported_layers"]
