"""CaffeParserError: what trt.CaffeParser raises for every bad input (file, prototxt, weights, unsupported layer)."""
from __future__ import annotations

from .._C import Error


class CaffeParserError(Error):
    """A Caffe model that trtlite cannot import: the message names the file, or the layer and its type, and the
    reason.  (TensorRT's parser logs the error and returns None; trtlite logs it too, then raises, as its builder
    does for failed builds.)"""
