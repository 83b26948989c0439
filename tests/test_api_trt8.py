"""The TensorRT 8 / 10 workflow through ``import trtlite as trt``, end to end, against numpy float64 references.

One small classifier -- convolution(+bias) -> ReLU -> max pool -> flatten -> FC written as matrix multiply with a
constant + elementwise bias -> softmax -- is defined with the network API, built, serialized, deserialized and run
through every execution entry point (execute_v2 with arrays and with int addresses, set_tensor_address +
execute_async_v3, execute_async_v2, infer).  Around it: the engine's name- and binding-based queries, default
layer/tensor names, layer attributes after creation, network accessors, Weights / Dims helpers, loggers, the
profiler, the engine inspector and context managers.
"""
import gc
import json

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)

N, C, H, W = 2, 3, 8, 8
K = 4          # conv output maps
CLASSES = 10


# ------------------------------------------------------------------------------------------------------------
# float64 references
# ------------------------------------------------------------------------------------------------------------

def ref_conv2d(x, w, b=None, stride=(1, 1), pad=(0, 0)):
    """Cross-correlation NCHW x KCRS with symmetric zero padding, float64."""
    x = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    w = np.asarray(w, np.float64)
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    oh = (h - r) // stride[0] + 1
    ow = (wd - s) // stride[1] + 1
    out = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(s):
            patch = x[:, :, i:i + stride[0] * oh:stride[0], j:j + stride[1] * ow:stride[1]]
            out += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j])
    if b is not None:
        out += np.asarray(b, np.float64).reshape(1, -1, 1, 1)
    return out


def ref_maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def ref_avgpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).mean(axis=(3, 5))


def ref_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


class Params:
    def __init__(self, seed=1):
        rng = np.random.default_rng(seed)
        self.conv_w = (rng.standard_normal((K, C, 3, 3)) * 0.5).astype(np.float32)
        self.conv_b = rng.standard_normal(K).astype(np.float32)
        self.fc_w = (rng.standard_normal((K * (H // 2) * (W // 2), CLASSES)) * 0.3).astype(np.float32)
        self.fc_b = rng.standard_normal((1, CLASSES)).astype(np.float32)

    def reference(self, x, pool="max"):
        y = np.maximum(ref_conv2d(x, self.conv_w, self.conv_b, pad=(1, 1)), 0.0)
        y = ref_maxpool2(y) if pool == "max" else ref_avgpool2(y)
        y = y.reshape(y.shape[0], -1) @ self.fc_w.astype(np.float64) + self.fc_b.astype(np.float64)
        return ref_softmax(y, axis=1)


P = Params()


def define(network, params=P, batch=N):
    """Adds the classifier to an explicit-batch network; returns the layers by role."""
    x = network.add_input("x", trt.float32, (batch, C, H, W))
    conv = network.add_convolution_nd(input=x, num_output_maps=K, kernel_shape=(3, 3),
                                      kernel=trt.Weights(params.conv_w), bias=trt.Weights(params.conv_b))
    conv.padding_nd = (1, 1)
    relu = network.add_activation(input=conv.get_output(0), type=trt.ActivationType.RELU)
    pool = network.add_pooling_nd(input=relu.get_output(0), type=trt.PoolingType.MAX, window_size=(2, 2))
    pool.stride_nd = (2, 2)
    flat = network.add_shuffle(pool.get_output(0))
    flat.reshape_dims = (batch, -1)
    fc_w = network.add_constant((K * (H // 2) * (W // 2), CLASSES), params.fc_w)
    mm = network.add_matrix_multiply(flat.get_output(0), trt.MatrixOperation.NONE, fc_w.get_output(0),
                                     trt.MatrixOperation.NONE)
    fc_b = network.add_constant((1, CLASSES), trt.Weights(params.fc_b))
    add = network.add_elementwise(mm.get_output(0), fc_b.get_output(0), trt.ElementWiseOperation.SUM)
    sm = network.add_softmax(add.get_output(0))
    sm.axes = 1 << 1
    sm.get_output(0).name = "prob"
    network.mark_output(sm.get_output(0))
    return dict(x=x, conv=conv, relu=relu, pool=pool, flat=flat, fc_w=fc_w, mm=mm, fc_b=fc_b, add=add, sm=sm)


def build_plan(logger=None, flags=EXPLICIT, params=P, config_fn=None):
    logger = logger or trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(flags)
    define(network, params)
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 30)
    if config_fn:
        config_fn(config)
    plan = builder.build_serialized_network(network, config)
    assert plan is not None
    return plan


@pytest.fixture(scope="module")
def engine():
    logger = trt.Logger(trt.Logger.WARNING)
    return trt.Runtime(logger).deserialize_cuda_engine(build_plan(logger))


def inputs(seed=0, n=N):
    return np.random.default_rng(seed).standard_normal((n, C, H, W)).astype(np.float32)


def garbage_out(n=N):
    return np.full((n, CLASSES), np.nan, np.float32)


# ------------------------------------------------------------------------------------------------------------
# build / deserialize / execute
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [EXPLICIT, 0], ids=["EXPLICIT_BATCH", "zero"])
def test_build_serialize_deserialize_execute_v2(flags):
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(flags)
    # TensorRT 10 semantics (and the brief): create_network(0) is explicit batch too
    assert network.has_implicit_batch_dimension is False
    define(network)
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 30)
    assert config.get_memory_pool_limit(trt.MemoryPoolType.WORKSPACE) == 1 << 30
    plan = builder.build_serialized_network(network, config)
    assert isinstance(plan, trt.IHostMemory)
    raw = bytes(plan)
    assert plan.nbytes == len(raw) > 64
    assert memoryview(plan).nbytes == len(raw)
    engine = trt.Runtime(logger).deserialize_cuda_engine(plan)
    assert isinstance(engine, trt.ICudaEngine)
    assert engine.has_implicit_batch_dimension is False
    context = engine.create_execution_context()
    x = inputs(3)
    y = garbage_out()
    assert context.execute_v2([x, y])
    assert_close(y, P.reference(x))
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-5)


def test_deserialize_accepts_bytes_and_buffers(engine):
    plan = engine.serialize()
    raw = bytes(plan)
    x = inputs(4)
    expected = P.reference(x)
    runtime = trt.Runtime(trt.Logger(trt.Logger.WARNING))
    for buf in (raw, bytearray(raw), memoryview(raw), np.frombuffer(raw, np.uint8), plan):
        e = runtime.deserialize_cuda_engine(buf)
        assert_close(e.create_execution_context().infer({"x": x})["prob"], expected)
    assert runtime.deserialize_engine(raw).num_io_tensors == 2   # the alias


def test_execute_v2_with_int_addresses(engine):
    context = engine.create_execution_context()
    x = inputs(5)
    y = garbage_out()
    assert context.execute_v2(bindings=[x.ctypes.data, y.ctypes.data])
    assert_close(y, P.reference(x))
    # mixing an array and an address
    y2 = garbage_out()
    context.execute_v2([x, y2.ctypes.data])
    np.testing.assert_array_equal(y2, y)


def test_set_tensor_address_and_execute_async_v3(engine):
    context = engine.create_execution_context()
    x = inputs(6)
    y = garbage_out()
    assert context.set_tensor_address("x", x)
    assert context.set_tensor_address("prob", y.ctypes.data)
    assert context.get_tensor_address("x") == x.ctypes.data
    assert context.get_tensor_address("prob") == y.ctypes.data
    assert context.execute_async_v3(0)
    assert_close(y, P.reference(x))
    # new input values at the same address, stream_handle as keyword
    x[...] = inputs(7)
    y[...] = np.nan
    assert context.execute_async_v3(stream_handle=0)
    assert_close(y, P.reference(x))


def test_execute_async_v2(engine):
    context = engine.create_execution_context()
    x = inputs(8)
    y = garbage_out()
    assert context.execute_async_v2([x, y], 0)
    assert_close(y, P.reference(x))


def test_execute_v2_does_not_rebind_set_tensor_address(engine):
    context = engine.create_execution_context()
    x1 = inputs(9)
    y1 = garbage_out()
    context.set_tensor_address("x", x1)
    context.set_tensor_address("prob", y1)
    x2 = inputs(10)
    y2 = garbage_out()
    context.execute_v2([x2, y2])
    assert_close(y2, P.reference(x2))
    y2[...] = -1.0
    context.execute_async_v3(0)
    assert context.get_tensor_address("prob") == y1.ctypes.data
    np.testing.assert_array_equal(y2, -1.0)       # the execute_v2 array is not written again
    assert_close(y1, P.reference(x1))             # the registered one is


def test_infer_convenience(engine):
    context = engine.create_execution_context()
    x = inputs(11)
    out = context.infer({"x": x})
    assert set(out) == {"prob"}
    assert out["prob"].dtype == np.float32 and out["prob"].shape == (N, CLASSES)
    assert_close(out["prob"], P.reference(x))
    # float64 input is converted to the engine's dtype
    assert_close(context.infer({"x": x.astype(np.float64)})["prob"], P.reference(x))


def test_results_do_not_depend_on_previous_runs(engine):
    context = engine.create_execution_context()
    xs = [inputs(s) for s in (20, 21, 20)]
    outs = [context.infer({"x": x})["prob"] for x in xs]
    np.testing.assert_array_equal(outs[0], outs[2])
    assert not np.allclose(outs[0], outs[1])


def test_serialize_round_trip_is_bit_identical(engine):
    x = inputs(12)
    y0 = engine.create_execution_context().infer({"x": x})["prob"]
    again = trt.Runtime(trt.Logger()).deserialize_cuda_engine(engine.serialize())
    y1 = again.create_execution_context().infer({"x": x})["prob"]
    np.testing.assert_array_equal(y0.view(np.uint32), y1.view(np.uint32))
    assert bytes(again.serialize()) == bytes(engine.serialize())


def test_build_engine_trt8():
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(EXPLICIT)
    define(network)
    engine = builder.build_engine(network, builder.create_builder_config())
    assert isinstance(engine, trt.ICudaEngine)
    x = inputs(13)
    assert_close(engine.create_execution_context().infer({"x": x})["prob"], P.reference(x))


def test_config_flags_and_properties():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    config = builder.create_builder_config()
    assert config.get_flag(trt.BuilderFlag.FP16) is False
    config.set_flag(trt.BuilderFlag.FP16)
    config.set_flag(trt.BuilderFlag.STRICT_TYPES)
    assert config.get_flag(trt.BuilderFlag.FP16) is True
    assert config.flags == (1 << int(trt.BuilderFlag.FP16)) | (1 << int(trt.BuilderFlag.STRICT_TYPES))
    config.clear_flag(trt.BuilderFlag.FP16)
    assert config.get_flag(trt.BuilderFlag.FP16) is False
    assert config.flags == 1 << int(trt.BuilderFlag.STRICT_TYPES)
    config.max_workspace_size = 1 << 20
    assert config.get_memory_pool_limit(trt.MemoryPoolType.WORKSPACE) == 1 << 20
    config.avg_timing_iterations = 2
    assert config.avg_timing_iterations == 2
    assert isinstance(builder.platform_has_fast_fp16, bool)
    assert isinstance(builder.platform_has_fast_int8, bool)
    # a config with flags still builds a correct (fp32-computing) engine
    network = builder.create_network(EXPLICIT)
    define(network)
    config.set_flag(trt.BuilderFlag.FP16)
    engine = builder.build_engine(network, config)
    x = inputs(14)
    assert_close(engine.create_execution_context().infer({"x": x})["prob"], P.reference(x), rtol=2e-3, atol=1e-3)


# ------------------------------------------------------------------------------------------------------------
# engine queries
# ------------------------------------------------------------------------------------------------------------

def test_name_based_io_queries(engine):
    assert engine.num_io_tensors == 2
    assert [engine.get_tensor_name(i) for i in range(2)] == ["x", "prob"]
    assert engine.get_tensor_mode("x") == trt.TensorIOMode.INPUT
    assert engine.get_tensor_mode("prob") == trt.TensorIOMode.OUTPUT
    assert isinstance(engine.get_tensor_mode("x"), trt.TensorIOMode)
    shape = engine.get_tensor_shape("x")
    assert isinstance(shape, trt.Dims) and shape == (N, C, H, W)
    assert engine.get_tensor_shape("prob") == (N, CLASSES)
    assert engine.get_tensor_dtype("x") == trt.float32 == trt.DataType.FLOAT
    assert engine.get_tensor_dtype("prob") == trt.DataType.FLOAT
    with pytest.raises(IndexError):
        engine.get_tensor_name(2)
    with pytest.raises(trt.NotFoundError, match="nope"):
        engine.get_tensor_shape("nope")
    with pytest.raises(LookupError):
        engine.get_tensor_mode("nope")


def test_binding_queries(engine):
    assert engine.num_bindings == 2
    assert engine.binding_is_input(0) is True
    assert engine.binding_is_input(1) is False
    assert engine.binding_is_input("x") is True
    assert engine.get_binding_name(0) == "x" and engine.get_binding_name(1) == "prob"
    assert engine.get_binding_index("prob") == 1
    assert engine.get_binding_index("nope") == -1
    assert engine.get_binding_shape(0) == (N, C, H, W)
    assert engine.get_binding_shape(1) == (N, CLASSES)
    assert engine.get_binding_shape("prob") == (N, CLASSES)
    assert engine.get_binding_dtype(1) == trt.float32
    assert engine[0] == "x" and engine[1] == "prob"
    assert engine["x"] == 0 and engine["prob"] == 1
    with pytest.raises(LookupError):
        engine["nope"]
    with pytest.raises(IndexError):
        engine.get_binding_shape(2)
    assert engine.has_implicit_batch_dimension is False


def test_context_shape_queries(engine):
    context = engine.create_execution_context()
    assert context.engine is engine
    assert context.get_tensor_shape("x") == (N, C, H, W)
    assert context.get_tensor_shape("prob") == (N, CLASSES)
    assert context.get_binding_shape(1) == (N, CLASSES)
    assert context.all_binding_shapes_specified is True


# ------------------------------------------------------------------------------------------------------------
# context managers, lifetimes
# ------------------------------------------------------------------------------------------------------------

def test_context_managers():
    logger = trt.Logger(trt.Logger.WARNING)
    x = inputs(15)
    with trt.Builder(logger) as builder, builder.create_network(EXPLICIT) as network, \
            builder.create_builder_config() as config:
        define(network)
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 28)
        plan = builder.build_serialized_network(network, config)
    with trt.Runtime(logger) as runtime, runtime.deserialize_cuda_engine(plan) as engine, \
            engine.create_execution_context() as context:
        y = garbage_out()
        context.execute_v2([x, y])
    assert_close(y, P.reference(x))
    # __exit__ does not swallow exceptions
    with pytest.raises(KeyError):
        with trt.Builder(logger):
            raise KeyError("inside")


def test_objects_keep_what_they_need_alive():
    """Engine outlives builder/network; context outlives the Python engine reference; weights the user dropped
    before build are kept by the network."""
    params = Params(seed=7)
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(EXPLICIT)
    x = network.add_input("x", trt.float32, (N, C, H, W))
    w = params.conv_w.copy()
    conv = network.add_convolution_nd(x, K, (3, 3), trt.Weights(w), trt.Weights(params.conv_b.copy()))
    conv.get_output(0).name = "y"
    network.mark_output(conv.get_output(0))
    del w, x
    gc.collect()
    for _ in range(3):     # churn the allocator where the weights were
        [np.full(K * C * 9, 123.0, np.float32) for _ in range(50)]
    engine = builder.build_engine(network, builder.create_builder_config())
    del builder, network, conv
    gc.collect()
    context = engine.create_execution_context()
    del engine
    gc.collect()
    xin = inputs(16)
    out = context.infer({"x": xin})["y"]
    assert_close(out, ref_conv2d(xin, params.conv_w, params.conv_b))


# ------------------------------------------------------------------------------------------------------------
# names, layers, attributes, network accessors
# ------------------------------------------------------------------------------------------------------------

def test_default_layer_and_tensor_names():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    L = define(network)
    # (IActivationLayer.type and IPoolingLayer.type are the activation / pooling kind, as in TensorRT)
    expected = [("conv", "Convolution", trt.IConvolutionLayer, trt.LayerType.CONVOLUTION),
                ("relu", "Activation", trt.IActivationLayer, trt.ActivationType.RELU),
                ("pool", "Pooling", trt.IPoolingLayer, trt.PoolingType.MAX),
                ("flat", "Shuffle", trt.IShuffleLayer, trt.LayerType.SHUFFLE),
                ("fc_w", "Constant", trt.IConstantLayer, trt.LayerType.CONSTANT),
                ("mm", "Matrix Multiply", trt.IMatrixMultiplyLayer, trt.LayerType.MATRIX_MULTIPLY),
                ("fc_b", "Constant", trt.IConstantLayer, trt.LayerType.CONSTANT),
                ("add", "ElementWise", trt.IElementWiseLayer, trt.LayerType.ELEMENTWISE),
                ("sm", "Softmax", trt.ISoftMaxLayer, trt.LayerType.SOFTMAX)]
    for i, (key, display, cls, ltype) in enumerate(expected):
        layer = L[key]
        assert layer.name == "(Unnamed Layer* %d) [%s]" % (i, display)
        assert type(layer) is cls and isinstance(layer, trt.ILayer)
        assert layer.type == ltype and type(layer.type) is type(ltype)
        assert layer.num_outputs == 1
        if key != "sm":   # the softmax output was renamed "prob"
            assert layer.get_output(0).name == "(Unnamed Layer* %d) [%s]_output" % (i, display)
    assert L["conv"].get_output(0).name == "(Unnamed Layer* 0) [Convolution]_output"
    assert L["mm"].num_inputs == 2
    assert L["mm"].get_input(0) == L["flat"].get_output(0)
    assert L["mm"].get_input(1) == L["fc_w"].get_output(0)
    # renaming is visible in the engine: the inspector reports the new names
    L["pool"].name = "my_pool"
    L["relu"].name = "my_relu"
    assert L["pool"].name == "my_pool"
    assert network.get_layer(2).name == "my_pool"
    engine = builder.build_engine(network, builder.create_builder_config())
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    names = [layer["name"] for layer in info["layers"]]
    assert "my_pool" in names
    assert any("my_relu" in n for n in names)


def test_tensor_properties():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    L = define(network)
    x = L["x"]
    assert x.name == "x" and x.is_network_input and not x.is_network_output
    assert x.shape == (N, C, H, W) and x.dtype == trt.float32
    prob = L["sm"].get_output(0)
    assert prob.is_network_output and not prob.is_network_input
    assert prob.shape == (N, CLASSES)
    assert L["conv"].get_output(0).shape == (N, K, H, W)
    assert L["pool"].get_output(0).shape == (N, K, H // 2, W // 2)
    assert L["flat"].get_output(0).shape == (N, K * H * W // 4)
    x.name = "image"
    assert network.get_input(0).name == "image"
    assert x.dynamic_range is None
    x.dynamic_range = (-2.0, 3.0)
    assert x.dynamic_range == (-2.0, 3.0)
    x.set_dynamic_range(-1.0, 1.0)
    assert x.dynamic_range == (-1.0, 1.0)


def test_attributes_may_be_fixed_after_add():
    """A convolution whose kernel does not fit until its padding is set (the next line of a script) is accepted
    by add_*; once padding is set the shapes check and the engine is correct."""
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    x = network.add_input("x", trt.float32, (1, C, 4, 4))
    w = np.random.default_rng(3).standard_normal((2, C, 5, 5)).astype(np.float32)
    conv = network.add_convolution_nd(x, 2, (5, 5), w)
    conv.padding_nd = (2, 2)
    assert conv.get_output(0).shape == (1, 2, 4, 4)
    conv.get_output(0).name = "y"
    network.mark_output(conv.get_output(0))
    engine = builder.build_engine(network, builder.create_builder_config())
    xin = inputs(25, n=1)[:, :, :4, :4].copy()
    assert_close(engine.create_execution_context().infer({"x": xin})["y"], ref_conv2d(xin, w, pad=(2, 2)))


def test_upstream_shape_query_while_a_later_layer_awaits_attributes():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    x = network.add_input("x", trt.float32, (1, C, 4, 4))
    relu = network.add_activation(x, trt.ActivationType.RELU)
    conv = network.add_convolution_nd(relu.get_output(0), 2, (5, 5), np.ones((2, C, 5, 5), np.float32))
    assert relu.get_output(0).shape == (1, C, 4, 4)      # does not depend on the convolution
    conv.padding_nd = (2, 2)
    assert conv.get_output(0).shape == (1, 2, 4, 4)


def test_network_accessors():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    L = define(network)
    order = ["conv", "relu", "pool", "flat", "fc_w", "mm", "fc_b", "add", "sm"]
    assert network.num_layers == len(network) == len(order)
    for i, key in enumerate(order):
        assert network.get_layer(i) == L[key]
        assert network[i] == L[key]
    assert [layer.name for layer in network] == [L[k].name for k in order]
    assert network[-1] == L["sm"]
    assert network.num_inputs == 1 and network.get_input(0) == L["x"]
    assert network.num_outputs == 1 and network.get_output(0).name == "prob"
    for bad in (len(order), -1):
        with pytest.raises(IndexError):
            network.get_layer(bad)
    with pytest.raises(IndexError):
        network.get_input(1)
    with pytest.raises(IndexError):
        network.get_output(1)
    network.name = "classifier"
    assert network.name == "classifier"
    network.unmark_output(network.get_output(0))
    assert network.num_outputs == 0
    network.mark_output(L["sm"].get_output(0))
    network.mark_output(L["relu"].get_output(0))
    assert network.num_outputs == 2
    engine = builder.build_engine(network, builder.create_builder_config())
    assert engine.num_io_tensors == 3
    x = inputs(17)
    out = engine.create_execution_context().infer({"x": x})
    assert_close(out["prob"], P.reference(x))
    assert_close(out[L["relu"].get_output(0).name],
                 np.maximum(ref_conv2d(x, P.conv_w, P.conv_b, pad=(1, 1)), 0.0))


def test_layer_attributes_default_read_write():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    L = define(network)
    conv = L["conv"]
    assert conv.num_output_maps == K
    assert conv.kernel_size_nd == (3, 3)
    assert conv.stride_nd == (1, 1) and conv.dilation_nd == (1, 1) and conv.num_groups == 1
    assert conv.padding_nd == (1, 1)
    assert conv.padding_mode == trt.PaddingMode.EXPLICIT_ROUND_DOWN
    np.testing.assert_array_equal(np.asarray(conv.kernel).ravel(), P.conv_w.ravel())
    np.testing.assert_array_equal(np.asarray(conv.bias).ravel(), P.conv_b.ravel())
    conv.stride_nd = trt.Dims2(2, 1)
    assert conv.stride_nd == (2, 1)
    conv.stride_nd = (1, 1)
    conv.dilation_nd = [2, 2]
    assert conv.dilation_nd == (2, 2)
    conv.dilation_nd = (1, 1)
    pool = network.add_pooling_nd(L["x"], trt.PoolingType.AVERAGE, (3, 3))
    assert pool.type == trt.PoolingType.AVERAGE
    assert pool.window_size_nd == (3, 3)
    assert pool.stride_nd == (1, 1)              # TensorRT's default stride is 1, not the window
    assert pool.average_count_excludes_padding is True
    pool.average_count_excludes_padding = False
    assert pool.average_count_excludes_padding is False
    act = network.add_activation(L["x"], trt.ActivationType.LEAKY_RELU)
    act.alpha = 0.25
    assert act.alpha == pytest.approx(0.25)
    act.type = trt.ActivationType.ELU
    assert act.type == trt.ActivationType.ELU
    ew = L["add"]
    assert ew.op == trt.ElementWiseOperation.SUM
    mm = L["mm"]
    assert mm.op0 == trt.MatrixOperation.NONE and mm.op1 == trt.MatrixOperation.NONE
    assert L["sm"].axes == 2
    assert L["flat"].reshape_dims == (N, -1)
    assert L["fc_w"].shape == (K * H * W // 4, CLASSES)


def test_attribute_changes_after_creation_take_effect():
    """Attributes and weights set after add_* are what gets built: max -> average pooling, new conv kernel and
    bias, a different softmax... all checked numerically."""
    other = Params(seed=5)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    L = define(network)
    L["pool"].type = trt.PoolingType.AVERAGE
    L["conv"].kernel = other.conv_w
    L["conv"].bias = trt.Weights(other.conv_b)
    L["fc_w"].weights = other.fc_w
    L["fc_b"].weights = other.fc_b
    engine = builder.build_engine(network, builder.create_builder_config())
    x = inputs(18)
    assert_close(engine.create_execution_context().infer({"x": x})["prob"], other.reference(x, pool="avg"))


def test_weights_are_read_at_build_time():
    """trt.Weights keeps a reference to the user's float32 array without copying: values written into the array
    after add_* and before the build are the ones built (TensorRT's contract)."""
    params = Params(seed=9)
    w = params.conv_w.copy()
    weights = trt.Weights(w)
    assert weights.numpy() is w
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    x = network.add_input("x", trt.float32, (1, C, 5, 5))
    conv = network.add_convolution_nd(x, K, (3, 3), weights)
    conv.get_output(0).name = "y"
    network.mark_output(conv.get_output(0))
    w *= -3.0
    engine = builder.build_engine(network, builder.create_builder_config())
    w *= 100.0        # after the build: no effect
    xin = inputs(19, n=1)[:, :, :5, :5].copy()
    out = engine.create_execution_context().infer({"x": xin})["y"]
    assert_close(out, ref_conv2d(xin, params.conv_w * -3.0))


def test_weights_class():
    a = np.arange(6, dtype=np.float32)
    w = trt.Weights(a)
    assert w.dtype == trt.float32 and w.size == 6 and len(w) == 6 and w.nbytes == 24
    assert trt.Weights().size == 0
    assert trt.Weights(trt.int32).dtype == trt.int32
    w64 = trt.Weights(np.arange(3, dtype=np.float64))
    assert w64.dtype == trt.float32 and w64.numpy().dtype == np.float32
    np.testing.assert_array_equal(w64.numpy(), [0, 1, 2])
    assert trt.Weights(np.arange(3, dtype=np.int64)).dtype == trt.int32
    assert trt.Weights(np.zeros(2, np.float16)).dtype == trt.float16
    with pytest.raises(TypeError):
        trt.Weights(np.zeros(2, np.complex64))


def test_dims_helpers():
    assert trt.Dims([1, 2, 3]) == (1, 2, 3) and trt.Dims([1, 2, 3]).nbDims == 3
    assert trt.Dims2(4, 5) == (4, 5)
    hw = trt.DimsHW(6, 7)
    assert hw == (6, 7) and hw.h == 6 and hw.w == 7
    assert trt.Dims3(1, 2, 3) == (1, 2, 3) and trt.Dims3((1, 2, 3)) == (1, 2, 3)
    assert trt.Dims4(1, 2, 3, 4) == (1, 2, 3, 4)
    for bad in (lambda: trt.Dims2(1, 2, 3), lambda: trt.Dims3(1), lambda: trt.Dims4(1, 2, 3)):
        with pytest.raises(ValueError):
            bad()
    assert tuple(trt.Permutation([2, 0, 1])) == (2, 0, 1)
    # Dims objects are accepted wherever shapes are
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    x = network.add_input("x", trt.float32, trt.Dims4(1, 2, 6, 6))
    conv = network.add_convolution_nd(x, 3, trt.DimsHW(3, 3), np.ones((3, 2, 3, 3), np.float32))
    conv.stride_nd = trt.DimsHW(3, 3)
    shuffle = network.add_shuffle(conv.get_output(0))
    shuffle.first_transpose = trt.Permutation([0, 2, 3, 1])
    assert shuffle.get_output(0).shape == (1, 2, 2, 3)
    assert isinstance(shuffle.get_output(0).shape, trt.Dims)


def test_nptype_and_volume():
    table = {trt.float32: np.float32, trt.float16: np.float16, trt.int8: np.int8, trt.int32: np.int32,
             trt.bool: np.bool_, trt.uint8: np.uint8}
    for dt, npt in table.items():
        assert trt.nptype(dt) is npt
        assert np.dtype(trt.nptype(dt)).itemsize == dt.itemsize
    assert trt.volume((2, 3, 4)) == 24
    assert trt.volume(trt.Dims3(2, 3, 4)) == 24
    assert trt.volume(()) == 1
    assert trt.volume((5, 0, 3)) == 0


# ------------------------------------------------------------------------------------------------------------
# logger, profiler, inspector
# ------------------------------------------------------------------------------------------------------------

class RecordingLogger(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.messages = []

    def log(self, severity, msg):
        self.messages.append((severity, msg))


def test_logger_subclass_receives_fusion_messages():
    logger = RecordingLogger()
    builder = trt.Builder(logger)
    network = builder.create_network(EXPLICIT)
    L = define(network)
    L["conv"].name = "conv1"
    L["relu"].name = "relu1"
    builder.build_serialized_network(network, builder.create_builder_config())
    assert logger.messages, "the builder logged nothing"
    for sev, msg in logger.messages:
        assert int(sev) in range(5) and isinstance(msg, str)
    info = [m for s, m in logger.messages if s == trt.ILogger.Severity.INFO]
    fused = [m for m in info if "fused" in m and "relu1" in m and "conv1" in m]
    assert fused, "no INFO message reports fusing relu1 into conv1: %r" % info
    assert not [m for s, m in logger.messages if s <= trt.ILogger.Severity.WARNING]


def test_logger_subclass_receives_severity_enum():
    logger = RecordingLogger()
    builder = trt.Builder(logger)
    network = builder.create_network(EXPLICIT)
    define(network)
    builder.build_serialized_network(network, builder.create_builder_config())
    assert logger.messages
    for sev, _ in logger.messages:
        assert isinstance(sev, trt.ILogger.Severity), "severity %r is a %s" % (sev, type(sev).__name__)
        assert sev.name in ("INTERNAL_ERROR", "ERROR", "WARNING", "INFO", "VERBOSE")


def test_builder_error_is_logged_and_raised():
    logger = RecordingLogger()
    builder = trt.Builder(logger)
    network = builder.create_network(EXPLICIT)
    network.add_input("x", trt.float32, (1, 2))
    with pytest.raises(trt.Error) as ei:
        builder.build_serialized_network(network, builder.create_builder_config())
    errors = [m for s, m in logger.messages if s == trt.ILogger.Severity.ERROR]
    assert errors and "mark_output" in errors[-1]
    assert str(ei.value) == errors[-1]


def test_default_logger_filters_by_severity(capfd):
    for severity, expect_info in ((trt.Logger.INFO, True), (trt.Logger.WARNING, False)):
        logger = trt.Logger(severity)
        assert logger.min_severity == severity
        builder = trt.Builder(logger)
        network = builder.create_network(EXPLICIT)
        define(network)
        builder.build_serialized_network(network, builder.create_builder_config())
        err = capfd.readouterr().err
        assert ("[I]" in err and "fused" in err) == expect_info, err
    assert trt.Logger().min_severity == trt.Logger.WARNING
    assert trt.Logger.WARNING == trt.ILogger.Severity.WARNING == trt.Logger.Severity.WARNING
    assert [int(s) for s in (trt.Logger.INTERNAL_ERROR, trt.Logger.ERROR, trt.Logger.WARNING, trt.Logger.INFO,
                             trt.Logger.VERBOSE)] == [0, 1, 2, 3, 4]


class RecordingProfiler(trt.IProfiler):
    def __init__(self):
        trt.IProfiler.__init__(self)
        self.calls = []

    def report_layer_time(self, layer_name, ms):
        self.calls.append((layer_name, ms))


def test_profiler_reports_every_step(engine):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    steps = [layer["name"] for layer in info["layers"]]
    context = engine.create_execution_context()
    assert context.profiler is None
    prof = RecordingProfiler()
    context.profiler = prof
    assert context.profiler is prof
    x = inputs(22)
    y = garbage_out()
    context.execute_v2([x, y])
    assert [name for name, _ in prof.calls] == steps
    assert all(isinstance(ms, float) and ms >= 0.0 for _, ms in prof.calls)
    context.execute_v2([x, y])
    assert len(prof.calls) == 2 * len(steps)
    context.profiler = None
    context.execute_v2([x, y])
    assert len(prof.calls) == 2 * len(steps)
    assert_close(y, P.reference(x))
    with pytest.raises(TypeError):
        context.profiler = object()


def test_profiler_exception_propagates(engine):
    class Boom(trt.IProfiler):
        def report_layer_time(self, layer_name, ms):
            raise RuntimeError("profiler failed on " + layer_name)

    context = engine.create_execution_context()
    context.profiler = Boom()
    with pytest.raises(RuntimeError, match="profiler failed on"):
        context.execute_v2([inputs(23), garbage_out()])
    context.profiler = None
    x = inputs(24)
    y = garbage_out()
    context.execute_v2([x, y])
    assert_close(y, P.reference(x))


def test_engine_inspector_lists_fused_layers_and_kernels():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    L = define(network)
    L["conv"].name = "conv1"
    L["relu"].name = "relu1"
    L["sm"].name = "softmax1"
    engine = builder.build_engine(network, builder.create_builder_config())
    inspector = engine.create_engine_inspector()
    info = json.loads(inspector.get_engine_information(trt.LayerInformationFormat.JSON))
    layers = info["layers"]
    assert len(layers) == engine.num_layers
    names = [layer["name"] for layer in layers]
    assert "conv1 + relu1" in names            # the activation was fused into the convolution
    assert not any(n == "relu1" for n in names)
    assert "softmax1" in names
    for layer in layers:
        assert isinstance(layer["kernel"], str) and layer["kernel"]
    fused = layers[names.index("conv1 + relu1")]
    assert fused["outputs"][0]["dims"] == "(%d, %d, %d, %d)" % (N, K, H, W)
    assert [t["name"] for t in fused["inputs"]] == ["x"]
    oneline = inspector.get_engine_information(trt.LayerInformationFormat.ONELINE).splitlines()
    assert len(oneline) == engine.num_layers
    for line, layer in zip(oneline, layers):
        assert line.startswith(layer["name"]) and "[%s]" % layer["kernel"] in line
    for i in range(engine.num_layers):
        assert json.loads(inspector.get_layer_information(i, trt.LayerInformationFormat.JSON)) == layers[i]
    with pytest.raises(IndexError):
        inspector.get_layer_information(engine.num_layers, trt.LayerInformationFormat.JSON)


def test_all_lists_only_the_api():
    """`from trtlite import *` gives TensorRT's names, not the helpers trtlite/__init__.py imports for itself."""
    import types
    for leaked in ("Dict", "Mapping", "np", "annotations"):
        assert leaked not in trt.__all__
    for name in trt.__all__:
        obj = getattr(trt, name)
        assert not (isinstance(obj, types.ModuleType) and not obj.__name__.startswith("trtlite")), name
    for name in ("Builder", "Logger", "DataType", "Weights", "OnnxParser", "float32", "volume"):
        assert name in trt.__all__


def test_engine_is_named_after_its_network_across_serialization():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    runtime = trt.Runtime(trt.Logger(trt.Logger.ERROR))
    for explicit, name in ((True, "classifier v2 / é"), (True, None), (False, "tensorrt7-net")):
        network = builder.create_network(EXPLICIT) if explicit else builder.create_network()
        if name is not None:
            network.name = name
        x = network.add_input("x", trt.float32, (2, 3))
        network.mark_output(network.add_unary(x, trt.UnaryOperation.NEG).get_output(0))
        expected = network.name                       # TensorRT's default: "Unnamed Network 0"
        assert expected == (name if name is not None else "Unnamed Network 0")
        engine = builder.build_engine(network, builder.create_builder_config())
        assert engine.name == expected
        assert runtime.deserialize_cuda_engine(engine.serialize()).name == expected
        network.name = "renamed"                       # the engine keeps the name it was built with
        assert engine.name == expected
