"""Reading Caffe files: the deploy prototxt (protobuf text format), the .caffemodel (wire format; only layer names,
types and blobs are read) and .binaryproto mean files.  Every failure raises CaffeParserError naming the file and what
is wrong with it."""
from __future__ import annotations

import math
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from google.protobuf import message as _message
from google.protobuf import text_format

from . import schema
from .errors import CaffeParserError

# Messages whose every field trtlite reads or knowingly ignores: an unknown field inside one of them is a typo (or a
# fork's option trtlite would silently drop), so the deploy file is refused.  Unknown fields elsewhere (a fork's
# extra layer parameters, training-only options) are skipped with a warning, as they cannot change the network
# trtlite builds (a layer whose type trtlite does not import fails on its own).
STRICT_MESSAGES = {m for _, _, m in schema.LAYER_PARAMS if m != "TransformationParameter"} | \
    {"NetParameter", "BlobShape", "NonMaximumSuppressionParameter"}

_UNKNOWN = re.compile(r'Message type "caffe\.(\w+)" has no field named "(\w+)"')


def read_deploy(text: Any, what: str, warn: Callable[[str], None]) -> Any:
    """Parses a deploy prototxt (str or bytes) into a caffe.NetParameter.  `what` names the source in messages.

    Unknown fields: inside STRICT_MESSAGES an error; elsewhere skipped with one warning listing them.  Skipping works
    by rewriting the field's name as an unknown extension (``[name]``), which text_format skips with its value, and
    parsing again (once per unknown field)."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise CaffeParserError("%s: not UTF-8 text (a prototxt is protobuf text format): %s" % (what, e)) from None
    if not isinstance(text, str):
        raise CaffeParserError("%s: expected the prototxt text (str or bytes), got %s" % (what, type(text).__name__))
    lines = text.split("\n")
    ignored: List[str] = []
    while True:
        net = schema.NetParameter()
        try:
            text_format.Parse("\n".join(lines), net, allow_unknown_extension=True)
            break
        except text_format.ParseError as e:
            m = _UNKNOWN.search(str(e))
            row, col = (e.GetLine() or 0) - 1, (e.GetColumn() or 0) - 1
            if m is None or m.group(1) in STRICT_MESSAGES or not 0 <= row < len(lines) or \
                    lines[row][col:col + len(m.group(2))] != m.group(2) or len(ignored) > len(text):
                raise CaffeParserError("%s: cannot parse the prototxt: %s" % (what, e)) from None
            ignored.append("%s.%s" % m.groups())
            name = m.group(2)
            lines[row] = lines[row][:col] + "[" + name + "]" + lines[row][col + len(name):]
    if ignored:
        warn("%s: skipped fields trtlite does not read (they do not change the imported network): %s"
             % (what, ", ".join(sorted(set(ignored)))))
    return net


def blob_array(blob: Any, what: str) -> np.ndarray:
    """A BlobProto as a float32 array of its shape (BlobShape, else the legacy num/channels/height/width)."""
    if blob.HasField("shape"):
        shape: Tuple[int, ...] = tuple(int(d) for d in blob.shape.dim)
    elif blob.num or blob.channels or blob.height or blob.width:
        shape = (blob.num, blob.channels, blob.height, blob.width)
    else:
        shape = (len(blob.data) or len(blob.double_data),)
    if any(d < 0 for d in shape):
        raise CaffeParserError("%s: negative dimension in shape %s" % (what, list(shape)))
    data = np.asarray(blob.data, np.float32) if len(blob.data) else np.asarray(blob.double_data, np.float64)
    count = math.prod(shape)
    if data.size != count:
        raise CaffeParserError("%s: holds %d values but its shape %s needs %d" % (what, data.size, list(shape), count))
    return np.ascontiguousarray(data.astype(np.float32).reshape(shape))


def read_weights(data: bytes, what: str) -> Dict[str, Tuple[str, List[np.ndarray]]]:
    """layer name -> (type, blobs) of a serialized .caffemodel (a NetParameter; new `layer` and V1 `layers`)."""
    net = schema.WeightsNet()
    try:
        net.ParseFromString(bytes(data))
    except _message.DecodeError as e:
        raise CaffeParserError("%s: not a valid .caffemodel (protobuf wire format NetParameter): %s" % (what, e)) \
            from None
    out: Dict[str, Tuple[str, List[np.ndarray]]] = {}
    layers: List[Tuple[str, str, Any]] = [(l.name, l.type, l.blobs) for l in net.layer]
    layers += [(l.name, schema.V1_TYPE_BY_NUMBER.get(l.type, str(l.type)), l.blobs) for l in net.layers]
    for name, ltype, blobs in layers:
        if name in out and not blobs:
            continue  # a later blob-less duplicate (train/test variants) does not hide the weights
        out[name] = (ltype, [blob_array(b, "%s: layer '%s' blob %d" % (what, name, i)) for i, b in enumerate(blobs)])
    if not out and len(data):
        raise CaffeParserError("%s: not a .caffemodel: it holds no layers" % what)
    return out


def read_mean(data: bytes, what: str) -> np.ndarray:
    """The array of a .binaryproto mean file (a serialized BlobProto)."""
    blob = schema.BlobProto()
    try:
        blob.ParseFromString(bytes(data))
    except _message.DecodeError as e:
        raise CaffeParserError("%s: not a valid .binaryproto (protobuf wire format BlobProto): %s" % (what, e)) \
            from None
    if not len(blob.data) and not len(blob.double_data):
        raise CaffeParserError("%s: the blob holds no data" % what)
    return blob_array(blob, what)


def read_file(path: Any, what: str, limit: Optional[int] = None) -> bytes:
    """The bytes of `path`; a missing file or one above `limit` bytes (protobuf_buffer_size) is an error."""
    try:
        with open(path, "rb") as f:
            data = f.read() if limit is None else f.read(limit + 1)
    except OSError as e:
        raise CaffeParserError("cannot read the %s %r: %s" % (what, str(path), e.strerror or e)) from None
    if limit is not None and len(data) > limit:
        raise CaffeParserError("the %s %r is larger than protobuf_buffer_size (%d bytes)" % (what, str(path), limit))
    return data
