"""The Caffe schema (package ``caffe``), written here from Caffe's published field numbers and compiled at import time
without protoc: a FileDescriptorProto is built from the tables below and loaded into a private DescriptorPool, so a
``caffe_pb2`` the user imports elsewhere cannot clash with it.

Covered: NetParameter, LayerParameter (new ``layer {}``) and V1LayerParameter (old ``layers {}`` with the LayerType
enum), BlobProto / BlobShape / BlobProtoVector, the parameter messages of the layers trtlite imports, the training
fields deploy files still carry (``param {}``, fillers, ``include {}``, ``transform_param``), and weiliu89's SSD
additions (Permute, Normalize, PriorBox, DetectionOutput).  Fields that are not here are unknown to the text reader
(see reader.py for how it treats them); in the binary .caffemodel only the layer names, types and blobs are read, with
a separate three-field schema (``WeightsNet``) so that forks that reuse field numbers do not matter.

Table format: message -> list of (name, number, type, label, default).  type is a scalar name ("float", "uint32", ...),
"M:<Message>" or "E:<Enum>"; label "o" optional, "r" repeated, "p" repeated packed; default "" for none.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as _e:  # an optional dependency, as onnx is for the ONNX parser
    raise ImportError("trt.CaffeParser needs the protobuf package: pip install trtlite[caffe] (or protobuf)") from _e

PACKAGE = "caffe"
EXTENSION_START, EXTENSION_END = 536870000, 536870912  # the top of the field-number space

_ENGINE = [("DEFAULT", 0), ("CAFFE", 1), ("CUDNN", 2)]

# enum name (top level, or "<Message>.<Enum>" nested) -> values
ENUMS: Dict[str, List[Tuple[str, int]]] = {
    "Phase": [("TRAIN", 0), ("TEST", 1)],
    "FillerParameter.VarianceNorm": [("FAN_IN", 0), ("FAN_OUT", 1), ("AVERAGE", 2)],
    "ParamSpec.DimCheckMode": [("STRICT", 0), ("PERMISSIVE", 1)],
    "ConvolutionParameter.Engine": _ENGINE,
    "PoolingParameter.PoolMethod": [("MAX", 0), ("AVE", 1), ("STOCHASTIC", 2)],
    "PoolingParameter.Engine": _ENGINE,
    "PoolingParameter.RoundMode": [("CEIL", 0), ("FLOOR", 1)],
    "ReLUParameter.Engine": _ENGINE,
    "SigmoidParameter.Engine": _ENGINE,
    "TanHParameter.Engine": _ENGINE,
    "SoftmaxParameter.Engine": _ENGINE,
    "LRNParameter.NormRegion": [("ACROSS_CHANNELS", 0), ("WITHIN_CHANNEL", 1)],
    "LRNParameter.Engine": _ENGINE,
    "EltwiseParameter.EltwiseOp": [("PROD", 0), ("SUM", 1), ("MAX", 2)],
    "PriorBoxParameter.CodeType": [("CORNER", 1), ("CENTER_SIZE", 2), ("CORNER_SIZE", 3)],
    "V1LayerParameter.LayerType": [
        ("NONE", 0), ("ABSVAL", 35), ("ACCURACY", 1), ("ARGMAX", 30), ("BNLL", 2), ("CONCAT", 3),
        ("CONTRASTIVE_LOSS", 37), ("CONVOLUTION", 4), ("DATA", 5), ("DECONVOLUTION", 39), ("DROPOUT", 6),
        ("DUMMY_DATA", 32), ("EUCLIDEAN_LOSS", 7), ("ELTWISE", 25), ("EXP", 38), ("FLATTEN", 8), ("HDF5_DATA", 9),
        ("HDF5_OUTPUT", 10), ("HINGE_LOSS", 28), ("IM2COL", 11), ("IMAGE_DATA", 12), ("INFOGAIN_LOSS", 13),
        ("INNER_PRODUCT", 14), ("LRN", 15), ("MEMORY_DATA", 29), ("MULTINOMIAL_LOGISTIC_LOSS", 16), ("MVN", 34),
        ("POOLING", 17), ("POWER", 26), ("RELU", 18), ("SIGMOID", 19), ("SIGMOID_CROSS_ENTROPY_LOSS", 27),
        ("SILENCE", 36), ("SOFTMAX", 20), ("SOFTMAX_LOSS", 21), ("SPLIT", 22), ("SLICE", 33), ("TANH", 23),
        ("WINDOW_DATA", 24), ("THRESHOLD", 31)],
}

_F = "M:FillerParameter"

MESSAGES: Dict[str, List[Tuple[str, int, str, str, str]]] = {
    "BlobShape": [("dim", 1, "int64", "p", "")],
    "BlobProto": [
        ("shape", 7, "M:BlobShape", "o", ""), ("data", 5, "float", "p", ""), ("diff", 6, "float", "p", ""),
        ("double_data", 8, "double", "p", ""), ("double_diff", 9, "double", "p", ""),
        ("num", 1, "int32", "o", "0"), ("channels", 2, "int32", "o", "0"), ("height", 3, "int32", "o", "0"),
        ("width", 4, "int32", "o", "0")],
    "BlobProtoVector": [("blobs", 1, "M:BlobProto", "r", "")],
    "FillerParameter": [
        ("type", 1, "string", "o", "constant"), ("value", 2, "float", "o", "0"), ("min", 3, "float", "o", "0"),
        ("max", 4, "float", "o", "1"), ("mean", 5, "float", "o", "0"), ("std", 6, "float", "o", "1"),
        ("sparse", 7, "int32", "o", "-1"), ("variance_norm", 8, "E:FillerParameter.VarianceNorm", "o", "FAN_IN")],
    "ParamSpec": [
        ("name", 1, "string", "o", ""), ("share_mode", 2, "E:ParamSpec.DimCheckMode", "o", ""),
        ("lr_mult", 3, "float", "o", "1"), ("decay_mult", 4, "float", "o", "1")],
    "NetState": [("phase", 1, "E:Phase", "o", "TEST"), ("level", 2, "int32", "o", "0"), ("stage", 3, "string", "r", "")],
    "NetStateRule": [
        ("phase", 1, "E:Phase", "o", ""), ("min_level", 2, "int32", "o", ""), ("max_level", 3, "int32", "o", ""),
        ("stage", 4, "string", "r", ""), ("not_stage", 5, "string", "r", "")],
    "NetParameter": [
        ("name", 1, "string", "o", ""), ("input", 3, "string", "r", ""), ("input_shape", 8, "M:BlobShape", "r", ""),
        ("input_dim", 4, "int32", "r", ""), ("force_backward", 5, "bool", "o", "false"),
        ("state", 6, "M:NetState", "o", ""), ("debug_info", 7, "bool", "o", "false"),
        ("layer", 100, "M:LayerParameter", "r", ""), ("layers", 2, "M:V1LayerParameter", "r", "")],
    "TransformationParameter": [
        ("scale", 1, "float", "o", "1"), ("mirror", 2, "bool", "o", "false"), ("crop_size", 3, "uint32", "o", "0"),
        ("mean_file", 4, "string", "o", ""), ("mean_value", 5, "float", "r", ""),
        ("force_color", 6, "bool", "o", "false"), ("force_gray", 7, "bool", "o", "false")],
    "ConvolutionParameter": [
        ("num_output", 1, "uint32", "o", ""), ("bias_term", 2, "bool", "o", "true"), ("pad", 3, "uint32", "r", ""),
        ("kernel_size", 4, "uint32", "r", ""), ("stride", 6, "uint32", "r", ""), ("dilation", 18, "uint32", "r", ""),
        ("pad_h", 9, "uint32", "o", "0"), ("pad_w", 10, "uint32", "o", "0"), ("kernel_h", 11, "uint32", "o", ""),
        ("kernel_w", 12, "uint32", "o", ""), ("stride_h", 13, "uint32", "o", ""), ("stride_w", 14, "uint32", "o", ""),
        ("group", 5, "uint32", "o", "1"), ("weight_filler", 7, _F, "o", ""), ("bias_filler", 8, _F, "o", ""),
        ("engine", 15, "E:ConvolutionParameter.Engine", "o", "DEFAULT"), ("axis", 16, "int32", "o", "1"),
        ("force_nd_im2col", 17, "bool", "o", "false")],
    "InnerProductParameter": [
        ("num_output", 1, "uint32", "o", ""), ("bias_term", 2, "bool", "o", "true"), ("weight_filler", 3, _F, "o", ""),
        ("bias_filler", 4, _F, "o", ""), ("axis", 5, "int32", "o", "1"), ("transpose", 6, "bool", "o", "false")],
    "PoolingParameter": [
        ("pool", 1, "E:PoolingParameter.PoolMethod", "o", "MAX"), ("pad", 4, "uint32", "o", "0"),
        ("pad_h", 9, "uint32", "o", "0"), ("pad_w", 10, "uint32", "o", "0"), ("kernel_size", 2, "uint32", "o", ""),
        ("kernel_h", 5, "uint32", "o", ""), ("kernel_w", 6, "uint32", "o", ""), ("stride", 3, "uint32", "o", "1"),
        ("stride_h", 7, "uint32", "o", ""), ("stride_w", 8, "uint32", "o", ""),
        ("engine", 11, "E:PoolingParameter.Engine", "o", "DEFAULT"), ("global_pooling", 12, "bool", "o", "false"),
        ("round_mode", 13, "E:PoolingParameter.RoundMode", "o", "CEIL")],
    "ReLUParameter": [("negative_slope", 1, "float", "o", "0"), ("engine", 2, "E:ReLUParameter.Engine", "o", "DEFAULT")],
    "PReLUParameter": [("filler", 1, _F, "o", ""), ("channel_shared", 2, "bool", "o", "false")],
    "ELUParameter": [("alpha", 1, "float", "o", "1")],
    "SigmoidParameter": [("engine", 1, "E:SigmoidParameter.Engine", "o", "DEFAULT")],
    "TanHParameter": [("engine", 1, "E:TanHParameter.Engine", "o", "DEFAULT")],
    "PowerParameter": [("power", 1, "float", "o", "1"), ("scale", 2, "float", "o", "1"), ("shift", 3, "float", "o", "0")],
    "ExpParameter": [("base", 1, "float", "o", "-1"), ("scale", 2, "float", "o", "1"), ("shift", 3, "float", "o", "0")],
    "LogParameter": [("base", 1, "float", "o", "-1"), ("scale", 2, "float", "o", "1"), ("shift", 3, "float", "o", "0")],
    "SoftmaxParameter": [("engine", 1, "E:SoftmaxParameter.Engine", "o", "DEFAULT"), ("axis", 2, "int32", "o", "1")],
    "LRNParameter": [
        ("local_size", 1, "uint32", "o", "5"), ("alpha", 2, "float", "o", "1"), ("beta", 3, "float", "o", "0.75"),
        ("norm_region", 4, "E:LRNParameter.NormRegion", "o", "ACROSS_CHANNELS"), ("k", 5, "float", "o", "1"),
        ("engine", 6, "E:LRNParameter.Engine", "o", "DEFAULT")],
    "BatchNormParameter": [
        ("use_global_stats", 1, "bool", "o", ""), ("moving_average_fraction", 2, "float", "o", "0.999"),
        ("eps", 3, "float", "o", "1e-05")],
    "ScaleParameter": [
        ("axis", 1, "int32", "o", "1"), ("num_axes", 2, "int32", "o", "1"), ("filler", 3, _F, "o", ""),
        ("bias_term", 4, "bool", "o", "false"), ("bias_filler", 5, _F, "o", "")],
    "BiasParameter": [("axis", 1, "int32", "o", "1"), ("num_axes", 2, "int32", "o", "1"), ("filler", 3, _F, "o", "")],
    "EltwiseParameter": [
        ("operation", 1, "E:EltwiseParameter.EltwiseOp", "o", "SUM"), ("coeff", 2, "float", "r", ""),
        ("stable_prod_grad", 3, "bool", "o", "true")],
    "ConcatParameter": [("axis", 2, "int32", "o", "1"), ("concat_dim", 1, "uint32", "o", "1")],
    "SliceParameter": [("axis", 3, "int32", "o", "1"), ("slice_point", 2, "uint32", "r", ""),
                       ("slice_dim", 1, "uint32", "o", "1")],
    "FlattenParameter": [("axis", 1, "int32", "o", "1"), ("end_axis", 2, "int32", "o", "-1")],
    "ReshapeParameter": [("shape", 1, "M:BlobShape", "o", ""), ("axis", 2, "int32", "o", "0"),
                         ("num_axes", 3, "int32", "o", "-1")],
    "DropoutParameter": [("dropout_ratio", 1, "float", "o", "0.5")],
    "InputParameter": [("shape", 1, "M:BlobShape", "r", "")],
    "CropParameter": [("axis", 1, "int32", "o", "2"), ("offset", 2, "uint32", "r", "")],
    # weiliu89's SSD fork
    "PermuteParameter": [("order", 1, "uint32", "r", "")],
    "NormalizeParameter": [
        ("across_spatial", 1, "bool", "o", "true"), ("scale_filler", 2, _F, "o", ""),
        ("channel_shared", 3, "bool", "o", "true"), ("eps", 4, "float", "o", "1e-10")],
    "PriorBoxParameter": [
        ("min_size", 1, "float", "r", ""), ("max_size", 2, "float", "r", ""), ("aspect_ratio", 3, "float", "r", ""),
        ("flip", 4, "bool", "o", "true"), ("clip", 5, "bool", "o", "false"), ("variance", 6, "float", "r", ""),
        ("img_size", 7, "uint32", "o", ""), ("img_h", 8, "uint32", "o", ""), ("img_w", 9, "uint32", "o", ""),
        ("step", 10, "float", "o", ""), ("step_h", 11, "float", "o", ""), ("step_w", 12, "float", "o", ""),
        ("offset", 13, "float", "o", "0.5")],
    "NonMaximumSuppressionParameter": [
        ("nms_threshold", 1, "float", "o", "0.3"), ("top_k", 2, "int32", "o", ""), ("eta", 3, "float", "o", "1")],
    "SaveOutputParameter": [
        ("output_directory", 1, "string", "o", ""), ("output_name_prefix", 2, "string", "o", ""),
        ("output_format", 3, "string", "o", ""), ("label_map_file", 4, "string", "o", ""),
        ("name_size_file", 5, "string", "o", ""), ("num_test_image", 6, "uint32", "o", "")],
    "DetectionOutputParameter": [
        ("num_classes", 1, "uint32", "o", ""), ("share_location", 2, "bool", "o", "true"),
        ("background_label_id", 3, "int32", "o", "0"), ("nms_param", 4, "M:NonMaximumSuppressionParameter", "o", ""),
        ("save_output_param", 5, "M:SaveOutputParameter", "o", ""),
        ("code_type", 6, "E:PriorBoxParameter.CodeType", "o", "CORNER"),
        ("variance_encoded_in_target", 8, "bool", "o", "false"), ("keep_top_k", 7, "int32", "o", "-1"),
        ("confidence_threshold", 9, "float", "o", ""), ("visualize", 10, "bool", "o", "false"),
        ("visualize_threshold", 11, "float", "o", ""), ("save_file", 12, "string", "o", "")],
}

# (field name, number, message) of the layer parameter messages, in LayerParameter and V1LayerParameter.
LAYER_PARAMS = [
    ("transform_param", 100, "TransformationParameter"), ("batch_norm_param", 139, "BatchNormParameter"),
    ("bias_param", 141, "BiasParameter"), ("concat_param", 104, "ConcatParameter"),
    ("convolution_param", 106, "ConvolutionParameter"), ("crop_param", 144, "CropParameter"),
    ("dropout_param", 108, "DropoutParameter"), ("eltwise_param", 110, "EltwiseParameter"),
    ("elu_param", 140, "ELUParameter"), ("exp_param", 111, "ExpParameter"), ("flatten_param", 135, "FlattenParameter"),
    ("inner_product_param", 117, "InnerProductParameter"), ("input_param", 143, "InputParameter"),
    ("log_param", 134, "LogParameter"), ("lrn_param", 118, "LRNParameter"), ("pooling_param", 121, "PoolingParameter"),
    ("power_param", 122, "PowerParameter"), ("prelu_param", 131, "PReLUParameter"), ("relu_param", 123, "ReLUParameter"),
    ("reshape_param", 133, "ReshapeParameter"), ("scale_param", 142, "ScaleParameter"),
    ("sigmoid_param", 124, "SigmoidParameter"), ("softmax_param", 125, "SoftmaxParameter"),
    ("slice_param", 126, "SliceParameter"), ("tanh_param", 127, "TanHParameter"),
    ("permute_param", 202, "PermuteParameter"), ("prior_box_param", 203, "PriorBoxParameter"),
    ("detection_output_param", 204, "DetectionOutputParameter"), ("norm_param", 206, "NormalizeParameter"),
]
V1_LAYER_PARAMS = [
    ("concat_param", 9, "ConcatParameter"), ("convolution_param", 10, "ConvolutionParameter"),
    ("dropout_param", 12, "DropoutParameter"), ("eltwise_param", 24, "EltwiseParameter"),
    ("exp_param", 41, "ExpParameter"), ("inner_product_param", 17, "InnerProductParameter"),
    ("lrn_param", 18, "LRNParameter"), ("pooling_param", 19, "PoolingParameter"), ("power_param", 21, "PowerParameter"),
    ("relu_param", 30, "ReLUParameter"), ("sigmoid_param", 38, "SigmoidParameter"),
    ("softmax_param", 39, "SoftmaxParameter"), ("slice_param", 31, "SliceParameter"), ("tanh_param", 37, "TanHParameter"),
    ("transform_param", 36, "TransformationParameter"),
]

MESSAGES["LayerParameter"] = [
    ("name", 1, "string", "o", ""), ("type", 2, "string", "o", ""), ("bottom", 3, "string", "r", ""),
    ("top", 4, "string", "r", ""), ("phase", 10, "E:Phase", "o", ""), ("loss_weight", 5, "float", "r", ""),
    ("param", 6, "M:ParamSpec", "r", ""), ("blobs", 7, "M:BlobProto", "r", ""),
    ("propagate_down", 11, "bool", "r", ""), ("include", 8, "M:NetStateRule", "r", ""),
    ("exclude", 9, "M:NetStateRule", "r", ""),
] + [(n, k, "M:" + m, "o", "") for n, k, m in LAYER_PARAMS]
MESSAGES["V1LayerParameter"] = [
    ("bottom", 2, "string", "r", ""), ("top", 3, "string", "r", ""), ("name", 4, "string", "o", ""),
    ("include", 32, "M:NetStateRule", "r", ""), ("exclude", 33, "M:NetStateRule", "r", ""),
    ("type", 5, "E:V1LayerParameter.LayerType", "o", ""), ("blobs", 6, "M:BlobProto", "r", ""),
    ("param", 1001, "string", "r", ""), ("blobs_lr", 7, "float", "r", ""), ("weight_decay", 8, "float", "r", ""),
    ("loss_weight", 35, "float", "r", ""),
] + [(n, k, "M:" + m, "o", "") for n, k, m in V1_LAYER_PARAMS]

# The weights reader's view of a .caffemodel: names, types and blobs only (see the module docstring).
MESSAGES["WeightsLayer"] = [("name", 1, "string", "o", ""), ("type", 2, "string", "o", ""),
                            ("blobs", 7, "M:BlobProto", "r", "")]
MESSAGES["WeightsV1Layer"] = [("name", 4, "string", "o", ""), ("type", 5, "int32", "o", ""),
                              ("blobs", 6, "M:BlobProto", "r", "")]
MESSAGES["WeightsNet"] = [("name", 1, "string", "o", ""), ("layer", 100, "M:WeightsLayer", "r", ""),
                          ("layers", 2, "M:WeightsV1Layer", "r", "")]

_SCALARS = {
    "double": descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE, "float": descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT,
    "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64, "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    "uint32": descriptor_pb2.FieldDescriptorProto.TYPE_UINT32, "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING, "bytes": descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
}


def _file_proto() -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(name="trtlite_caffe.proto", package=PACKAGE, syntax="proto2")
    msgs: Dict[str, Any] = {}
    for name in MESSAGES:
        msgs[name] = fdp.message_type.add(name=name)
        # An extension range, never used for data: the text reader skips unknown fields by rewriting them as
        # unknown extensions ([name]: ...), which text_format drops with allow_unknown_extension.
        msgs[name].extension_range.add(start=EXTENSION_START, end=EXTENSION_END)
    for ename, values in ENUMS.items():
        owner, _, short = ename.rpartition(".")
        enum = (msgs[owner].enum_type if owner else fdp.enum_type).add(name=short)
        for vname, number in values:
            enum.value.add(name=vname, number=number)
    F = descriptor_pb2.FieldDescriptorProto
    for name, fields in MESSAGES.items():
        for fname, number, ftype, label, default in fields:
            f = msgs[name].field.add(name=fname, number=number)
            f.label = F.LABEL_OPTIONAL if label == "o" else F.LABEL_REPEATED
            if label == "p":
                f.options.packed = True
            if ftype.startswith("M:"):
                f.type, f.type_name = F.TYPE_MESSAGE, ".%s.%s" % (PACKAGE, ftype[2:])
            elif ftype.startswith("E:"):
                f.type, f.type_name = F.TYPE_ENUM, ".%s.%s" % (PACKAGE, ftype[2:])
            else:
                f.type = _SCALARS[ftype]
            if default:
                f.default_value = default
    return fdp


def _compile() -> Dict[str, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file_proto())
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName("%s.%s" % (PACKAGE, name)))
            for name in MESSAGES}


_CLASSES = _compile()

NetParameter = _CLASSES["NetParameter"]
LayerParameter = _CLASSES["LayerParameter"]
V1LayerParameter = _CLASSES["V1LayerParameter"]
BlobProto = _CLASSES["BlobProto"]
BlobShape = _CLASSES["BlobShape"]
BlobProtoVector = _CLASSES["BlobProtoVector"]
WeightsNet = _CLASSES["WeightsNet"]

# V1 LayerType number -> the new-style type string (CONVOLUTION -> "Convolution").
V1_TYPE_NAMES = {
    "ABSVAL": "AbsVal", "ACCURACY": "Accuracy", "ARGMAX": "ArgMax", "BNLL": "BNLL", "CONCAT": "Concat",
    "CONTRASTIVE_LOSS": "ContrastiveLoss", "CONVOLUTION": "Convolution", "DATA": "Data",
    "DECONVOLUTION": "Deconvolution", "DROPOUT": "Dropout", "DUMMY_DATA": "DummyData", "EUCLIDEAN_LOSS": "EuclideanLoss",
    "ELTWISE": "Eltwise", "EXP": "Exp", "FLATTEN": "Flatten", "HDF5_DATA": "HDF5Data", "HDF5_OUTPUT": "HDF5Output",
    "HINGE_LOSS": "HingeLoss", "IM2COL": "Im2col", "IMAGE_DATA": "ImageData", "INFOGAIN_LOSS": "InfogainLoss",
    "INNER_PRODUCT": "InnerProduct", "LRN": "LRN", "MEMORY_DATA": "MemoryData",
    "MULTINOMIAL_LOGISTIC_LOSS": "MultinomialLogisticLoss", "MVN": "MVN", "POOLING": "Pooling", "POWER": "Power",
    "RELU": "ReLU", "SIGMOID": "Sigmoid", "SIGMOID_CROSS_ENTROPY_LOSS": "SigmoidCrossEntropyLoss",
    "SILENCE": "Silence", "SOFTMAX": "Softmax", "SOFTMAX_LOSS": "SoftmaxWithLoss", "SPLIT": "Split", "SLICE": "Slice",
    "TANH": "TanH", "WINDOW_DATA": "WindowData", "THRESHOLD": "Threshold", "NONE": "None",
}
V1_TYPE_BY_NUMBER = {number: V1_TYPE_NAMES[name] for name, number in ENUMS["V1LayerParameter.LayerType"]}
