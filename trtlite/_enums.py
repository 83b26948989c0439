"""TensorRT's Python enums, with TensorRT's names and integer values.

They are ``enum.IntEnum`` classes, so ``int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)``,
``1 << int(...)`` and comparisons with plain ints work as in TensorRT scripts.  They print as
TensorRT's do: ``str(trt.DataType.FLOAT) == "DataType.FLOAT"`` (also in f-strings without a format
spec), ``repr(trt.DataType.FLOAT) == "<DataType.FLOAT: 0>"``; a numeric format spec formats the
value (``f"{trt.DataType.HALF:d}" == "1"``).
"""
from __future__ import annotations

import enum


class _TrtEnum(enum.IntEnum):
    """IntEnum that prints like TensorRT's enums: ``DataType.FLOAT`` (Python 3.11's IntEnum prints
    the bare number)."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}: {int(self)}>"

    def __format__(self, spec: str) -> str:
        if spec and spec[-1] in "bcdeEfFgGnoxX%":  # a numeric presentation type: the value
            return int(self).__format__(spec)
        return str(self).__format__(spec)

    # Members of two different TensorRT enums are never equal, as in TensorRT (pybind11 enums compare
    # their types first), while a member still equals its int.  `layer.type` of an activation or
    # pooling layer is its ActivationType / PoolingType (TensorRT's subclasses shadow ILayer.type), so
    # without this `ActivationType.RELU in {LayerType.CONVOLUTION: ...}` was True (both 0): polygraphy's
    # network inspector took ReLU layers for convolutions.
    def __eq__(self, other: object) -> bool:
        if isinstance(other, _TrtEnum) and type(other) is not type(self):
            return False
        return int.__eq__(self, other)  # type: ignore[no-any-return]

    def __ne__(self, other: object) -> bool:
        if isinstance(other, _TrtEnum) and type(other) is not type(self):
            return True
        return int.__ne__(self, other)  # type: ignore[no-any-return]

    __hash__ = int.__hash__

__all__ = [
    "DataType", "LayerType", "ActivationType", "PoolingType", "ElementWiseOperation", "UnaryOperation",
    "MatrixOperation", "ScaleMode", "ReduceOperation", "TopKOperation", "PaddingMode", "InterpolationMode",
    "ResizeMode", "ResizeCoordinateTransformation", "ResizeSelector", "ResizeRoundMode", "SampleMode",
    "SliceMode", "GatherMode", "NetworkDefinitionCreationFlag", "BuilderFlag", "MemoryPoolType",
    "TensorIOMode", "ProfilingVerbosity", "PluginFieldType", "TensorLocation", "TensorFormat", "DeviceType",
    "EngineCapability", "LayerInformationFormat", "CalibrationAlgoType", "Severity",
    "ScatterMode", "ScatterReduction", "CumulativeOperation",
    "TripLimit", "LoopOutput",
    "FillOperation",
    "BoundingBoxFormat",
    "PreviewFeature",
    "AttentionNormalizationOp",
]


class DataType(_TrtEnum):
    """Tensor element types (trt.DataType), TensorRT 10's values.

    INT64 is an integer type (8 bytes).  FP8 (float8 e4m3fn), INT4, FP4 (float4 e2m1) and E8M0
    (float8 e8m0fnu, TensorRT 10.12) are storage types: tensors of them are moved (identity,
    shuffle, concatenation, slice, gather) and converted (cast, quantize, dequantize), never computed
    on.  trtlite extensions, the other ONNX storage types (values outside TensorRT's range):
    FP8E5M2, FP8E4M3FNUZ, FP8E5M2FNUZ, UINT4, INT2, UINT2.

    Host buffers of a storage type hold one code a byte, unpacked (TensorRT packs INT4 / FP4 two a
    byte; trtlite does not): the bytes of the ml_dtypes arrays that onnx.numpy_helper gives
    (``arr.view(np.uint8)``; INT4 / UINT4 / INT2 / UINT2 in the low bits).  Bindings take uint8 or
    int8 arrays of codes; ``context.infer`` also takes and returns ml_dtypes arrays.

    BF16 (bfloat16) is a 2-byte float tensor type, stored and converted (cast, identity, byte-moving
    layers) and computed on through float32 (compute layers cast around themselves, as for HALF).
    numpy has no bfloat16, so host buffers hold uint16 bit patterns (``nptype(BF16)`` is np.uint16);
    ``context.infer`` also takes ml_dtypes bfloat16 arrays or numbers (rounded to nearest even) and
    returns ml_dtypes bfloat16 arrays when ml_dtypes imports.
    """
    FLOAT = 0
    HALF = 1
    INT8 = 2
    INT32 = 3
    BOOL = 4
    UINT8 = 5
    FP8 = 6
    BF16 = 7  # a tensor type (host buffers: uint16 bit patterns) and a compute precision (layer.precision)
    INT64 = 8
    INT4 = 9
    FP4 = 10
    E8M0 = 11
    FP8E5M2 = 32  # trtlite extension
    FP8E4M3FNUZ = 33  # trtlite extension
    FP8E5M2FNUZ = 34  # trtlite extension
    UINT4 = 35  # trtlite extension
    INT2 = 36  # trtlite extension
    UINT2 = 37  # trtlite extension

    @property
    def itemsize(self) -> int:
        """Bytes per element of a host buffer (1 for every storage type: codes are unpacked)."""
        return {0: 4, 1: 2, 3: 4, 7: 2, 8: 8}.get(int(self), 1)


class LayerType(_TrtEnum):
    """Layer kinds (trt.LayerType), TensorRT 8.6 values."""
    CONVOLUTION = 0
    FULLY_CONNECTED = 1
    ACTIVATION = 2
    POOLING = 3
    LRN = 4
    SCALE = 5
    SOFTMAX = 6
    DECONVOLUTION = 7
    CONCATENATION = 8
    ELEMENTWISE = 9
    PLUGIN = 10
    UNARY = 11
    PADDING = 12
    SHUFFLE = 13
    REDUCE = 14
    TOPK = 15
    GATHER = 16
    MATRIX_MULTIPLY = 17
    RAGGED_SOFTMAX = 18
    CONSTANT = 19
    RNN_V2 = 20
    IDENTITY = 21
    PLUGIN_V2 = 22
    SLICE = 23
    SHAPE = 24
    PARAMETRIC_RELU = 25
    RESIZE = 26
    SELECT = 31
    QUANTIZE = 33
    DEQUANTIZE = 34
    NORMALIZATION = 46
    CAST = 47
    SCATTER = 38
    EINSUM = 39
    ASSERTION = 40
    ONE_HOT = 41
    GRID_SAMPLE = 43
    REVERSE_SEQUENCE = 45
    UNSQUEEZE = 48  # TensorRT 10's value
    CUMULATIVE = 49  # TensorRT 10's value
    SQUEEZE = 60  # TensorRT 10 says 47, which is CAST in the 8.6 numbering used here
    TRIP_LIMIT = 27
    RECURRENCE = 28
    ITERATOR = 29
    LOOP_OUTPUT = 30
    CONDITION = 35
    CONDITIONAL_INPUT = 36
    CONDITIONAL_OUTPUT = 37
    FILL = 32
    NON_ZERO = 42
    NMS = 44


class ActivationType(_TrtEnum):
    """Activation functions (trt.ActivationType), TensorRT's formulas with alpha/beta.

    A new activation layer's alpha / beta are its type's natural defaults (ONNX's operator defaults,
    which TensorRT's ONNX parser passes; TensorRT documents none): LEAKY_RELU 0.01; ELU 1; SELU
    1.6733 / 1.0507; SOFTPLUS and SCALED_TANH 1 / 1; HARD_SIGMOID 0.2 / 0.5; THRESHOLDED_RELU 1; the
    others (CLIP included) 0 / 0.  Changing ``layer.type`` moves parameters still at the old type's
    defaults to the new type's; values set by the user are kept.
    """
    RELU = 0
    SIGMOID = 1
    TANH = 2
    LEAKY_RELU = 3
    ELU = 4
    SELU = 5
    SOFTSIGN = 6
    SOFTPLUS = 7
    CLIP = 8
    HARD_SIGMOID = 9
    SCALED_TANH = 10
    THRESHOLDED_RELU = 11
    GELU_ERF = 12
    GELU_TANH = 13


class PoolingType(_TrtEnum):
    """Pooling kinds (trt.PoolingType)."""
    MAX = 0
    AVERAGE = 1
    MAX_AVERAGE_BLEND = 2


class ElementWiseOperation(_TrtEnum):
    """Binary operations (trt.ElementWiseOperation)."""
    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    SUB = 4
    DIV = 5
    POW = 6
    FLOOR_DIV = 7
    AND = 8
    OR = 9
    XOR = 10
    EQUAL = 11
    GREATER = 12
    LESS = 13
    # trtlite extensions (ONNX BitwiseAnd/Or/Xor, BitShift): INT32 inputs only
    BITWISE_AND = 14
    BITWISE_OR = 15
    BITWISE_XOR = 16
    SHIFT_LEFT = 17  # amounts outside 0..31 give 0
    SHIFT_RIGHT = 18  # arithmetic; amounts outside 0..31 give the sign fill


class UnaryOperation(_TrtEnum):
    """Unary operations (trt.UnaryOperation)."""
    EXP = 0
    LOG = 1
    SQRT = 2
    RECIP = 3
    ABS = 4
    NEG = 5
    SIN = 6
    COS = 7
    TAN = 8
    SINH = 9
    COSH = 10
    ASIN = 11
    ACOS = 12
    ATAN = 13
    ASINH = 14
    ACOSH = 15
    ATANH = 16
    CEIL = 17
    FLOOR = 18
    ERF = 19
    NOT = 20
    SIGN = 21
    ROUND = 22
    ISINF = 23
    BITWISE_NOT = 24  # trtlite extension (ONNX BitwiseNot): INT32 input only


class MatrixOperation(_TrtEnum):
    """Operand treatment of a matrix multiply (trt.MatrixOperation)."""
    NONE = 0
    TRANSPOSE = 1
    VECTOR = 2


class ScaleMode(_TrtEnum):
    """How scale weights apply (trt.ScaleMode)."""
    UNIFORM = 0
    CHANNEL = 1
    ELEMENTWISE = 2


class ReduceOperation(_TrtEnum):
    """Reductions (trt.ReduceOperation)."""
    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    AVG = 4


class TopKOperation(_TrtEnum):
    """Top-k direction (trt.TopKOperation)."""
    MAX = 0
    MIN = 1


class PaddingMode(_TrtEnum):
    """Padding rules of convolution and pooling (trt.PaddingMode)."""
    EXPLICIT_ROUND_DOWN = 0
    EXPLICIT_ROUND_UP = 1
    SAME_UPPER = 2
    SAME_LOWER = 3
    CAFFE_ROUND_DOWN = 4
    CAFFE_ROUND_UP = 5


class InterpolationMode(_TrtEnum):
    """Resize interpolation (trt.InterpolationMode, formerly ResizeMode)."""
    NEAREST = 0
    LINEAR = 1
    CUBIC = 2


ResizeMode = InterpolationMode


class ResizeCoordinateTransformation(_TrtEnum):
    """Output-to-input coordinate mapping of resize."""
    ALIGN_CORNERS = 0
    ASYMMETRIC = 1
    HALF_PIXEL = 2


class ResizeSelector(_TrtEnum):
    """Coordinate rule for outputs of size 1."""
    FORMULA = 0
    UPPER = 1


class ResizeRoundMode(_TrtEnum):
    """Rounding of nearest-neighbour resize."""
    HALF_UP = 0
    HALF_DOWN = 1
    FLOOR = 2
    CEIL = 3


class SampleMode(_TrtEnum):
    """Out-of-bounds behaviour of slice (trt.SampleMode, formerly SliceMode)."""
    STRICT_BOUNDS = 0
    DEFAULT = 0
    WRAP = 1
    CLAMP = 2
    FILL = 3
    REFLECT = 4


SliceMode = SampleMode


class GatherMode(_TrtEnum):
    """Gather flavours (trt.GatherMode)."""
    DEFAULT = 0
    ELEMENT = 1
    ND = 2


class ScatterMode(_TrtEnum):
    """Scatter flavours (trt.ScatterMode): ELEMENT (ONNX ScatterElements), ND (ONNX ScatterND)."""
    ELEMENT = 0
    ND = 1


class ScatterReduction(_TrtEnum):
    """trtlite extension (IScatterLayer.reduction): how an update combines with the value in place; NONE
    replaces, as TensorRT does."""
    NONE = 0
    SUM = 1
    PROD = 2
    MAX = 3
    MIN = 4


class CumulativeOperation(_TrtEnum):
    """Cumulative operations (trt.CumulativeOperation)."""
    SUM = 0
    PROD = 1  # trtlite extension (ONNX CumProd)


class NetworkDefinitionCreationFlag(_TrtEnum):
    """Flags of Builder.create_network (use as ``1 << int(flag)``)."""
    EXPLICIT_BATCH = 0
    EXPLICIT_PRECISION = 1
    STRONGLY_TYPED = 1  # TensorRT 10 gave bit 1 to this flag; trtlite's types are always strict (Q/DQ decide int8)


class BuilderFlag(_TrtEnum):
    """Builder flags (trt.BuilderFlag)."""
    FP16 = 0
    INT8 = 1
    DEBUG = 2
    GPU_FALLBACK = 3
    STRICT_TYPES = 4
    REFIT = 5
    DISABLE_TIMING_CACHE = 6
    TF32 = 7
    SPARSE_WEIGHTS = 8
    SAFETY_SCOPE = 9
    OBEY_PRECISION_CONSTRAINTS = 10
    PREFER_PRECISION_CONSTRAINTS = 11
    DIRECT_IO = 12
    REJECT_EMPTY_ALGORITHMS = 13
    ENABLE_TACTIC_HEURISTIC = 14
    VERSION_COMPATIBLE = 15
    EXCLUDE_LEAN_RUNTIME = 16
    FP8 = 17
    BF16 = 18  # bf16 kernels (vdpbf16ps, fp32 accumulate) where the CPU has AVX512_BF16


class MemoryPoolType(_TrtEnum):
    """Memory pools of IBuilderConfig.set_memory_pool_limit (only WORKSPACE means something on the CPU)."""
    WORKSPACE = 0
    DLA_MANAGED_SRAM = 1
    DLA_LOCAL_DRAM = 2
    DLA_GLOBAL_DRAM = 3
    TACTIC_DRAM = 4


class TensorIOMode(_TrtEnum):
    """Whether an engine tensor is an input or an output."""
    NONE = 0
    INPUT = 1
    OUTPUT = 2


class ProfilingVerbosity(_TrtEnum):
    """How much the engine inspector reports (informational)."""
    LAYER_NAMES_ONLY = 0
    NONE = 1
    DETAILED = 2
    DEFAULT = 0
    VERBOSE = 2


class PluginFieldType(_TrtEnum):
    """Types of plugin fields (trt.PluginFieldType)."""
    FLOAT16 = 0
    FLOAT32 = 1
    FLOAT64 = 2
    INT8 = 3
    INT16 = 4
    INT32 = 5
    CHAR = 6
    DIMS = 7
    UNKNOWN = 8


class TensorLocation(_TrtEnum):
    """Where a tensor lives: always HOST for trtlite."""
    DEVICE = 0
    HOST = 1


class TensorFormat(_TrtEnum):
    """Memory layout of I/O tensors, with TensorRT's members and values; trtlite's engines always use LINEAR
    (the others name GPU vectorized layouts, which clients compare against)."""
    LINEAR = 0
    CHW2 = 1
    HWC8 = 2
    CHW4 = 3
    CHW16 = 4
    CHW32 = 5
    DHWC8 = 6
    CDHW32 = 7
    HWC = 8
    DLA_LINEAR = 9
    DLA_HWC4 = 10
    HWC16 = 11
    DHWC = 12


class DeviceType(_TrtEnum):
    """Device kinds (kept for compatibility)."""
    GPU = 0
    DLA = 1


class EngineCapability(_TrtEnum):
    """Engine capability (kept for compatibility)."""
    STANDARD = 0
    SAFETY = 1
    DLA_STANDALONE = 2
    DEFAULT = 0


class LayerInformationFormat(_TrtEnum):
    """Output formats of the engine inspector."""
    ONELINE = 0
    JSON = 1


class CalibrationAlgoType(_TrtEnum):
    """INT8 calibration algorithms."""
    LEGACY_CALIBRATION = 0
    ENTROPY_CALIBRATION = 1
    ENTROPY_CALIBRATION_2 = 2
    MINMAX_CALIBRATION = 3


class Severity(_TrtEnum):
    """Log severities (trt.ILogger.Severity)."""
    INTERNAL_ERROR = 0
    ERROR = 1
    WARNING = 2
    INFO = 3
    VERBOSE = 4


class TripLimit(_TrtEnum):
    """How a loop's trip limit ends it (trt.TripLimit): COUNT runs a 0-d INT32 number of iterations, WHILE runs
    while a 0-d BOOL computed in the body from the iteration's values is true."""
    COUNT = 0
    WHILE = 1


class LoopOutput(_TrtEnum):
    """What a loop output gives (trt.LoopOutput): the value of the last iteration, or every iteration's value
    concatenated along a new axis (REVERSE: last iteration first)."""
    LAST_VALUE = 0
    CONCATENATE = 1
    REVERSE = 2
class FillOperation(_TrtEnum):
    """What an IFillLayer computes (trt.FillOperation)."""
    LINSPACE = 0
    RANDOM_UNIFORM = 1
    RANDOM_NORMAL = 2


class BoundingBoxFormat(_TrtEnum):
    """How an INMSLayer reads its boxes (trt.BoundingBoxFormat): CORNER_PAIRS (x1, y1, x2, y2), any two diagonal
    corners; CENTER_SIZES (x_center, y_center, width, height)."""
    CORNER_PAIRS = 0
    CENTER_SIZES = 1


class PreviewFeature(_TrtEnum):
    """TensorRT's preview-feature switches (``config.set_preview_feature``), TensorRT 10.10's values.  trtlite
    remembers them (``get_preview_feature``); none changes what it builds."""
    PROFILE_SHARING_0806 = 0
    ALIASED_PLUGIN_IO_10_03 = 1
    RUNTIME_ACTIVATION_RESIZE_10_10 = 2


class AttentionNormalizationOp(_TrtEnum):
    """How an IAttention normalizes its scores (trt.AttentionNormalizationOp, TensorRT 10.14): NONE (the scaled,
    masked scores weigh the values directly; keys ruled out by causality or a BOOL mask weigh 0) or SOFTMAX
    over the keys."""
    NONE = 0
    SOFTMAX = 1
