"""trtlite: a TensorRT-style neural-network inference optimizer and runtime for the CPU.

Write scripts exactly as for TensorRT, with ``import trtlite as trt`` and host (numpy) buffers::

    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    ...
    plan = builder.build_serialized_network(network, builder.create_builder_config())
    engine = trt.Runtime(logger).deserialize_cuda_engine(plan)
    context = engine.create_execution_context()
    context.execute_v2([x, y])          # numpy arrays or int host addresses
    outputs = context.infer({"x": x})   # convenience: dict of numpy arrays
"""
from __future__ import annotations

from . import _C
from ._C import (EngineInspector, Error, IBuilderConfig, ICudaEngine, IExecutionContext, IHostMemory,
                 ILayer, INetworkDefinition, IOptimizationProfile, ITensor, Runtime, ShapeError, InvalidArgumentError,
                 DTypeError, NotFoundError, UnsupportedError, PlanError, PluginError, PluginFieldError, StateError,
                 OutOfMemoryError,
                 builder_passes, cpu_features)
from ._C import ITimingCache
from ._C import (IActivationLayer, ICastLayer, IConcatenationLayer, IConstantLayer, IConvolutionLayer,
                 IDeconvolutionLayer, IElementWiseLayer, IFullyConnectedLayer, IGatherLayer, IIdentityLayer,
                 ILRNLayer, IMatrixMultiplyLayer, INormalizationLayer, IPaddingLayer, IParametricReLULayer,
                 IPluginV2Layer, IPoolingLayer, IReduceLayer, IResizeLayer, IScaleLayer, ISelectLayer, IShuffleLayer,
                 ISliceLayer, ISoftMaxLayer, ITopKLayer, IUnaryLayer, IQuantizeLayer, IDequantizeLayer)
from ._C import IShapeLayer
from ._C import (IScatterLayer, IOneHotLayer, ICumulativeLayer, IReverseSequenceLayer, ISqueezeLayer,  # issue #12
                 IUnsqueezeLayer, IGridSampleLayer, IEinsumLayer, IAssertionLayer)
from ._C import IFillLayer  # run-time shape operands (issue #12)
from ._enums import *  # noqa: F401,F403  (TensorRT's enums)
from ._enums import DataType, Severity, TensorIOMode, __all__ as _enum_names
from . import _enums
from ._types import (Dims, Dims2, Dims3, Dims4, DimsHW, ILogger, IProfiler, IProgressMonitor, Logger, Permutation, Profiler, Weights,
                     nptype, volume)
from ._types import LoggingLogger
from .progress import ProgressBar
from . import progress
from ._views import LayerProfiler
from . import calibration
from .calibration import (IInt8Calibrator, IInt8EntropyCalibrator, IInt8EntropyCalibrator2, IInt8LegacyCalibrator,
                          IInt8MinMaxCalibrator)
from .plugins import (IPluginCreator, IPluginRegistry, IPluginV2, IPluginV2Ext, PluginField, PluginFieldCollection,
                      get_plugin_registry, init_libnvinfer_plugins, init_plugins)
from .plugins_dynamic import (DimensionOperation, DimsExprs, DynamicPluginTensorDesc, IDimensionExpr, IExprBuilder,
                              IPluginCreatorInterface, IPluginCreatorV3One, IPluginResource, IPluginResourceContext,
                              IPluginV2DynamicExt, IPluginV3, IPluginV3OneBuild, IPluginV3OneCore, IPluginV3OneRuntime,
                              PluginCapabilityType, PluginTensorDesc, TensorRTPhase)
from .refit import Refitter, WeightsRole
from .controlflow import IIfConditional, ILoop
from .output_allocator import IOutputAllocator  # data-dependent shapes (issue #12)
from .dynamic_quantize import IDynamicQuantizeLayer  # add_dynamic_quantize (issue #12)
from ._C import INonZeroLayer, INMSLayer
from ._C import IAttentionLayer  # network.add_attention (issue #12)
IAttention = IAttentionLayer  # TensorRT 10.14 names the class IAttention
from ._C import (IConditionLayer, IIfConditionalInputLayer, IIfConditionalOutputLayer, IIteratorLayer,  # control flow
                 ILoopOutputLayer, IRecurrenceLayer, ITripLimitLayer)

# TensorRT clients branch on `trt.__version__` (TensorRT 7 bindings vs 8.5+/10 name-based I/O ...): it names the
# TensorRT API level trtlite implements -- TensorRT 10's, with the 7/8 calls kept.  trtlite's own version is
# `trtlite_version` (and the package metadata's).
__version__ = "10.0.1"
trtlite_version = _C.__version__
from ._info import get_include  # noqa: E402  (C headers for plugin authors)

# TensorRT's dtype aliases.
float32 = DataType.FLOAT
float16 = DataType.HALF
bfloat16 = DataType.BF16
int8 = DataType.INT8
int32 = DataType.INT32
int64 = DataType.INT64
bool = DataType.BOOL  # noqa: A001  (TensorRT exposes trt.bool)
uint8 = DataType.UINT8

_C._register({name: getattr(_enums, name) for name in _enum_names}, Dims)

# TensorRT spells these as attributes of the classes too.
Logger.Severity = Severity


def _doc(method: str, extra: str) -> str:
    return (getattr(_C.Builder, method).__doc__ or "") + extra


_CALIB_DOC = ("\n\nWith BuilderFlag.INT8 and config.int8_calibrator set, calibrates first (trtlite.calibration): "
              "reads the calibrator's cache or runs its batches, sets the tensors' dynamic ranges, writes the cache.  "
              "config.progress_monitor is told of each phase (see trt.IProgressMonitor).")


# trt.Builder: the C builder plus INT8 calibration before a build (trtlite/calibration.py); everything else,
# docstrings included, is the C type's.
class Builder(_C.Builder):
    __doc__ = _C.Builder.__doc__
    __slots__ = ()

    def build_serialized_network(self, network: INetworkDefinition, config: IBuilderConfig) -> IHostMemory:
        if isinstance(network, INetworkDefinition) and isinstance(config, IBuilderConfig):
            calibration.before_build(self, network, config, lambda: _C.Builder.build_engine(self, network, config))
            monitor = config.progress_monitor
            if monitor is not None:  # the build, then a "Serializing engine" phase of one step
                engine = super().build_engine(network, config)
                return progress.serialize_with_progress(engine, monitor)
        return super().build_serialized_network(network, config)

    def build_engine(self, network: INetworkDefinition, config: IBuilderConfig) -> ICudaEngine:
        if isinstance(network, INetworkDefinition) and isinstance(config, IBuilderConfig):
            calibration.before_build(self, network, config, lambda: _C.Builder.build_engine(self, network, config))
        return super().build_engine(network, config)

    def build_cuda_engine(self, network: INetworkDefinition) -> ICudaEngine:
        if isinstance(network, INetworkDefinition):
            calibration.before_build_cuda_engine(self, network, lambda: _C.Builder.build_cuda_engine(self, network))
        return super().build_cuda_engine(network)

    @property
    def platform_has_fast_int8(self) -> bool:
        """True when the CPU has AVX512-VNNI (int8 dot products; honours TRTL_CPU_MASK).  BuilderFlag.INT8 and
        Q/DQ layers compute convolutions, fully connected layers and matrix multiplies in int8 either way."""
        return "avx512vnni" in cpu_features()

    build_serialized_network.__doc__ = _doc("build_serialized_network", _CALIB_DOC)
    build_engine.__doc__ = _doc("build_engine", _CALIB_DOC)
    build_cuda_engine.__doc__ = _doc("build_cuda_engine", _CALIB_DOC.replace(
        "BuilderFlag.INT8 and config.int8_calibrator", "builder.int8_mode and builder.int8_calibrator"))


_LAZY = {"OnnxParser", "ErrorCode", "ParserError", "OnnxParserRefitter"}
_LAZY_CAFFE = {"CaffeParser", "CaffeParserError", "IBlobNameToTensor", "shutdown_protobuf_library"}


def __getattr__(name: str):
    """The ONNX parser (the trtlite.onnx package, needs `onnx` when used: pip install trtlite[onnx]) loads on
    first use."""
    if name in _LAZY:
        from . import onnx as _onnx
        return getattr(_onnx, name)
    if name in _LAZY_CAFFE:  # the Caffe parser (trtlite.caffe, needs `protobuf`: pip install trtlite[caffe])
        from . import caffe as _caffe
        return getattr(_caffe, name)
    raise AttributeError(f"module 'trtlite' has no attribute {name!r}")


# Names this module only uses itself (the __future__ flag) are not API.
_NOT_API = {"annotations"}
__all__ = [n for n in dir() if not n.startswith("_") and n not in _NOT_API] + sorted(_LAZY) + sorted(_LAZY_CAFFE)
