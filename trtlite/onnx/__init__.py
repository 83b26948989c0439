"""trtlite.onnx, the ONNX front end: fills a trtlite network from an ONNX model, as TensorRT's ``trt.OnnxParser`` does.

Usage (exactly as with TensorRT)::

    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file("model.onnx"):
        for i in range(parser.num_errors):
            print(parser.get_error(i))

The parser is pure Python over the network API and needs the optional ``onnx`` package
(``pip install trtlite[onnx]``); it is imported when a parser is created.

How a model is mapped
---------------------
* Graph inputs become network inputs.  ``dim_param`` (or missing) dims become -1: add an optimization
  profile for them.  Types: float/double -> FLOAT; float16 / bfloat16 -> HALF / BF16 input cast to FLOAT
  at once (outputs declared float16 / bfloat16 are cast back; Cast to bfloat16 rounds); every integer type but int8/uint8 -> INT32
  inside the network; int64 graph inputs and outputs are INT64 (numpy int64, as TensorRT 10's parser binds
  them), cast to and from INT32 at the boundary (int64 shape-tensor inputs are INT32); bool -> BOOL.
* Each node maps to one or a few layers named after the node (extra layers get ``<node>/<n>``); the
  tensors a node produces keep their ONNX names.
* Values that do not depend on the inputs (initializers, Constant, and chains such as
  Shape -> Gather -> Unsqueeze -> Concat over static shapes) are computed with numpy while parsing and
  become constant layers only where a layer needs them.  A dynamic dimension read by Shape stays a
  symbol; a Reshape whose target holds such a symbol copies the dimension (reshape dim 0) when it is
  the same dimension of the reshaped tensor (by ONNX shape inference), or infers it (-1) when it is the
  only unknown.
* An op with no mapping becomes a plugin layer when the plugin registry has a creator named like the
  op (or like the op plus "_TRT", TensorRT's naming of its plugins: op "Adder2d" finds "Adder2d_TRT"),
  version "1" (or the node's ``plugin_version`` attribute), looked up in the node's domain as
  namespace (or its ``plugin_namespace`` attribute) and then in the default namespace "".  Creating a
  parser registers the built-in plugins (``init_libnvinfer_plugins(None, "")``, as TensorRT's parser
  does; idempotent).  The node's attributes become plugin fields (ints -> INT32, floats -> FLOAT32,
  strings -> CHAR, tensors -> their dtype); its constant inputs (initializers) become fields too -- named
  by the last component of the initializer's name when the creator lists such a field, else the first
  listed field of the array's type that no attribute or earlier input gave, else the first it converts
  to -- and its other inputs become the plugin's inputs.  A value is converted to the type the creator
  declares for its field when that is exact (integral floats to ints, ints in range, ints to floats that
  hold them, float16/float64 to float32); otherwise the node fails naming the field.

Limits
------
* Values computed at run time that decide shapes become shape tensors (trtlite/onnx/shape_tensors.py): Reshape,
  Expand, Tile, ConstantOfShape, Pad (pads), Slice (starts/ends/axes/steps) and Resize (sizes) whose shape
  input is a graph input or a layer output, and values computed from dynamic dims (Shape -> Gather -> Mul ->
  Concat -> Reshape (B*T, C)), are evaluated by the engine once input shapes are set.  Without them (older
  paths still used where the values are known while parsing):
  - Expand targets and ConstantOfShape shapes may hold dynamic dims that are dims of a network tensor
    (cls_token.expand(x.shape[0], -1, -1), torch.zeros(x.size(0), 4)): the value is broadcast at run time
    by a Select against a boolean "carrier" of that dim, gathered from the tensor it was read from.
  - Slice along a dynamic axis with constant bounds: x[s:] and x[s:-k] (step 1) crop with a padding layer
    (the profile must keep the result non-empty); bounds that give a constant count (x[a:b], x[-a:],
    x[-a:-b], x[a::-1], any step) gather those indices, so the axis must be long enough at run time (a
    shorter one fails there with a gather index error, where ONNX would clamp).
  Not supported (UNSUPPORTED_NODE_DYNAMIC): Range computed from dynamic dims (torch.arange(x.shape[1]): no
  IFillLayer yet) and the other ops' values computed from dynamic dims where no shape-tensor path exists
  (Split's split, OneHot's depth, Reduce axes).  Slicing (Slice, Split, Pad reflect/edge, Expand) along static axes of
  tensors with dynamic dims is lowered to gathers, since ISliceLayer's output shape is static.
* A graph output that is also a graph input (a pass-through such as outputs {y, x}, or a graph with no
  nodes) is an error (UNSUPPORTED_GRAPH): an engine's I/O tensors are bound by name, and one name cannot be
  both an input and an output -- TensorRT refuses such networks too.  Give the output its own name with an
  Identity node.  A graph output that is an initializer becomes a constant output.
* At most 64 graph inputs and outputs in all (MAX_IO_TENSORS: what an execution context binds); more is
  an error while parsing.
* Control flow: If, Loop and Scan become IIfConditional / ILoop (ops_control.py; Scan-8: one loop per batch
  entry); a body's values keep their shapes from one iteration to the next, and a Loop's scan outputs need its
  trip count M known while parsing.
* NonZero, NonMaxSuppression and Compress (with a condition computed at run time) give outputs whose size is known
  only after execution (ops_data_dependent.py): bind them with ``context.set_output_allocator``.
* Sequences (SequenceConstruct, SplitToSequence, ...) exist only while parsing, as lists of tensors with constant
  positions (ops_sequence.py); no graph input or output may be a sequence.
* Not mapped (become plugins when a creator exists, else errors): RoiAlign with sampling_ratio 0, quantization ops
  on tensors, MaxPool's Indices output with dynamic channel or spatial dims, Resize antialias / tf_crop_and_resize / tf_half_pixel_for_nn /
  keep_aspect_ratio_policy, LRN with an even size, ArgMax select_last_index along a dynamic axis, string tensors.
  Ops over constants only are computed while parsing (numpy, or onnx's reference implementation), whatever the op.

Errors
------
``parse`` returns False and records ParserError objects naming the node, its op and the reason:
malformed protobuf (MODEL_DESERIALIZE_FAILED), unsupported opset (UNSUPPORTED_GRAPH), an op with no
mapping and no plugin (UNSUPPORTED_NODE), unsupported attributes or dynamic values
(UNSUPPORTED_NODE_ATTR / UNSUPPORTED_NODE_DYNAMIC ...), malformed nodes (input/output counts against
the op's schema, names that are not valid UTF-8 or hold NUL: INVALID_NODE / INVALID_GRAPH), and anything
the network rejects, such as shape conflicts (INVALID_NODE).  Anything else raised while parsing (a bug)
is caught too and recorded as INTERNAL_ERROR naming the node being imported: ``parse`` never raises.
Parsing stops at the first failing node, as TensorRT's does.

Layout (modelled on onnx-tensorrt's ModelImporter / ImporterContext / op importers)
-----------------------------------------------------------------------------------
``parser`` (OnnxParser, the public API) -> ``model_importer`` (inputs, nodes in order, outputs) over an
``ImporterContext`` (``context``: values, names, symbolic dims; ``layers``: layer-building helpers).
``loading``: decoding, opset checks, initializers and external data, node order.  ``constants``: folding
while parsing; ``shape_eval``: symbolic dims.  ``registry``: op -> importer with its restrictions
(``supported_ops()``); the importers live in ``ops_*`` modules, one per op family, and ``ops_plugin`` is the
fallback for ops without one.  Nothing here changes the network beyond importing it: graph rewrites (such as
fusing the Erf-GELU subgraph) are the builder's passes.
"""
from __future__ import annotations

from .errors import ErrorCode, ParserError
from .parser import OnnxParser
from .refitter import OnnxParserRefitter
from .registry import op_info, supported_ops

__all__ = ["OnnxParser", "OnnxParserRefitter", "ParserError", "ErrorCode", "supported_ops", "op_info"]
