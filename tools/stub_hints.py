"""Type hints the stub generator (tools/gen_stubs.py) cannot read from the extension itself.

The bindings' docstrings give each method's parameter names and return type ("add_input(name, dtype, shape) ->
ITensor"); properties' types are read from sample objects at generation time.  What is left comes from here:

- PARAMS: a parameter's type by its name, for every method that uses the name;
- METHOD_PARAMS: per-method exceptions ("Class.method" -> {param: type}), where a name means something else;
- RETURNS: return annotations of the docstrings that are prose rather than types;
- METHODS: whole signatures where the docstring has none (or the generic form would be wrong);
- PROPERTIES: property types the samples cannot tell (a None default, a base class rather than the sample's type),
  as "Type" (the setter takes the same) or ("GetterType", "SetterType");
- INIT: constructors, as __new__ (the C types with tp_new document theirs only in the class docstring).

A name found nowhere here is typed Any, so new bindings type-check permissively until someone adds their types.
Aliases used below are defined at the top of the generated trtlite/_C.pyi (see ALIASES).
"""

ALIASES = {
    # A shape: trt.Dims, or any sequence of ints (tuples, lists), as the bindings accept.
    "_Shape": "Sequence[int]",
    # Weights: trt.Weights or anything numpy converts (arrays, lists, scalars).
    "_Weights": "Weights | npt.ArrayLike",
    # A serialized plan or timing cache: any bytes-like object.
    "_Buffer": "IHostMemory | bytes | bytearray | memoryview | npt.NDArray[Any]",
    # One entry of execute_v2's bindings: a numpy array (or other buffer) or an int host address.
    "_Binding": "npt.NDArray[Any] | memoryview | bytearray | int | None",
}

PARAMS = {
    "input": "ITensor", "input0": "ITensor", "input1": "ITensor", "input2": "ITensor", "tensor": "ITensor",
    "condition": "ITensor", "then_input": "ITensor", "else_input": "ITensor", "indices": "ITensor",
    "slopes": "ITensor",
    "inputs": "Sequence[ITensor]",
    "index": "int", "layer_index": "int", "profile_index": "int", "num_output_maps": "int", "num_outputs": "int",
    "axis": "int", "axes": "int", "axesMask": "int", "batch_size": "int", "pool_size": "int", "window": "int",
    "stream_handle": "int", "k": "int",
    "name": "str",
    "shape": "_Shape", "kernel_shape": "_Shape", "window_size": "_Shape", "stride": "_Shape", "start": "_Shape",
    "pre_padding": "_Shape", "post_padding": "_Shape", "min": "_Shape", "opt": "_Shape", "max": "_Shape",
    "kernel": "_Weights", "bias": "_Weights | None", "weights": "_Weights",
    "shift": "_Weights | None", "scale": "_Weights | None", "power": "_Weights | None",
    "network": "INetworkDefinition", "config": "IBuilderConfig", "layer": "ILayer", "profile": "IOptimizationProfile",
    "flag": "BuilderFlag", "flags": "int | None", "dtype": "DataType", "to_type": "DataType",
    "output_type": "DataType", "device_type": "DeviceType", "pool": "MemoryPoolType",
    "format": "LayerInformationFormat",
    "serialized_engine": "_Buffer", "serialized_timing_cache": "_Buffer", "serialized_plugin": "_Buffer",
    "cache": "ITimingCache | None", "input_cache": "ITimingCache",
    "ignore_mismatch": "bool", "enabled": "bool", "enable": "bool", "keep_dims": "bool",
    "bindings": "Sequence[_Binding]", "feed": "Mapping[str, npt.ArrayLike]",
    "logger": "ILogger",
    "field_collection": "PluginFieldCollection",
    "plugin": "_PyIPluginV2 | PluginV2",
    "binding": "int | str",
    "index or name": "int | str",
}

METHOD_PARAMS = {
    "INetworkDefinition.add_activation": {"type": "ActivationType"},
    "INetworkDefinition.add_pooling": {"type": "PoolingType"},
    "INetworkDefinition.add_pooling_nd": {"type": "PoolingType"},
    "INetworkDefinition.add_elementwise": {"op": "ElementWiseOperation"},
    "INetworkDefinition.add_unary": {"op": "UnaryOperation"},
    "INetworkDefinition.add_reduce": {"op": "ReduceOperation"},
    "INetworkDefinition.add_topk": {"op": "TopKOperation"},
    "INetworkDefinition.add_matrix_multiply": {"op0": "MatrixOperation", "op1": "MatrixOperation"},
    "INetworkDefinition.add_scale": {"mode": "ScaleMode"},
    "INetworkDefinition.add_scale_nd": {"mode": "ScaleMode", "channel_axis": "int"},
    "INetworkDefinition.add_gather_v2": {"mode": "GatherMode"},
    "INetworkDefinition.add_lrn": {"alpha": "float", "beta": "float", "k": "float"},
    "INetworkDefinition.add_normalization": {"scale": "ITensor", "bias": "ITensor"},
    "INetworkDefinition.add_quantize": {"scale": "ITensor"},
    "INetworkDefinition.add_dequantize": {"scale": "ITensor"},
    "ITensor.set_dynamic_range": {"min": "float", "max": "float"},
    "IOptimizationProfile.set_shape": {"input": "str"},
    "IOptimizationProfile.set_shape_input": {"input": "str"},
    "IOptimizationProfile.get_shape": {"input": "str"},
    "IExecutionContext.set_tensor_address": {"memory": "_Binding"},
    "IBuilderConfig.set_preview_feature": {"feature": "int"},
    "IBuilderConfig.set_tactic_sources": {"sources": "int"},
    "IBuilderConfig.create_timing_cache": {"serialized_timing_cache": "_Buffer"},
    "IExecutionContext.execute_async": {"input_consumed": "object"},
    "IExecutionContext.execute_async_v2": {"input_consumed": "object"},
}

RETURNS = {
    "[min, opt, max]": "list[Dims]",
    "TensorLocation.HOST": "TensorLocation",
    "TensorFormat.LINEAR": "TensorFormat",
    "True": "bool",
    "dict": "dict[str, npt.NDArray[Any]]",
    "IPluginV2": "PluginV2",
    "IPluginRegistry": "_PyIPluginRegistry",
}

METHODS = {
    "ICudaEngine.create_execution_context_without_device_memory": "(self) -> IExecutionContext",
    "IBuilderConfig.set_preview_feature": "(self, feature: int, enable: bool) -> None",
    "IOptimizationProfile.set_shape_input": "(self, input: str, min: _Shape, opt: _Shape, max: _Shape) -> None",
    "ICudaEngine.__getitem__": "(self, index: int, /) -> str",
    "ICudaEngine.__iter__": "(self) -> Iterator[str]",
    "INetworkDefinition.__getitem__": "(self, index: int, /) -> ILayer",
    "IOptimizationProfile.__bool__": "(self) -> bool",
    "*.__len__": "(self) -> int",
    "*.__enter__": "(self) -> Self",
    "*.__exit__": "(self, *args: object) -> None",
}

# Methods the stubs add although the runtime type lacks them (each also in tests/typing/stubtest_allowlist.txt,
# which says why): IHostMemory exports a buffer through the C buffer protocol, which Python 3.11 does not show as
# a __buffer__ method; mypy needs it to accept the plan where bytes-like objects go (f.write(plan), bytes(plan)).
EXTRA_METHODS = {
    "IHostMemory": ["def __buffer__(self, flags: int, /) -> memoryview: ..."],
}

PROPERTIES = {
    "Builder.logger": ("ILogger | None", "ILogger | None"),
    "Runtime.logger": ("ILogger | None", "ILogger | None"),
    "Builder.int8_calibrator": "_PyIInt8Calibrator | None",
    "IBuilderConfig.int8_calibrator": "_PyIInt8Calibrator | None",
    "IBuilderConfig.progress_monitor": "IProgressMonitor | None",
    "IBuilderConfig.disabled_passes": ("list[str]", "Sequence[str]"),
    "IExecutionContext.profiler": "IProfiler | None",
    "ITensor.dynamic_range": "tuple[float, float] | None",
    "IShuffleLayer.first_transpose": ("Permutation", "Sequence[int]"),
    "IShuffleLayer.second_transpose": ("Permutation", "Sequence[int]"),
    "IShuffleLayer.reshape_dims": ("Dims | None", "_Shape | None"),
    "IResizeLayer.scales": ("list[float]", "Sequence[float]"),
    "ILayer.name": "str",
}

INIT = {
    "Builder": "(cls, logger: ILogger) -> Self",
    "Runtime": "(cls, logger: ILogger) -> Self",
}
