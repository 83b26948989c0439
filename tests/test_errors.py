"""Error paths of the network, builder and runtime API.

Every mistake must raise a Python exception (never crash the process) whose message names the layer or tensor
involved: trt.ShapeError / DTypeError / InvalidArgumentError / NotFoundError / StateError (all trt.Error) for what
trtlite checks, TypeError for arguments of the wrong Python type.  After a runtime error the same context still
runs correctly.
"""
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(trt.__file__)))


class Recorder(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.errors = []

    def log(self, severity, msg):
        if int(severity) <= int(trt.ILogger.Severity.ERROR):
            self.errors.append(msg)


def new(explicit=True, logger=None):
    builder = trt.Builder(logger or trt.Logger(trt.Logger.INTERNAL_ERROR))
    network = builder.create_network(EXPLICIT) if explicit else builder.create_network()
    return builder, network, builder.create_builder_config()


def raises_naming(exc, names, fn, *args, **kwargs):
    """fn(*args) must raise `exc`; the message must contain one of `names`."""
    if isinstance(names, str):
        names = (names,)
    with pytest.raises(exc) as ei:
        fn(*args, **kwargs)
    msg = str(ei.value)
    assert any(n in msg for n in names), "message %r names none of %r" % (msg, names)
    return ei.value


# ------------------------------------------------------------------------------------------------------------
# network definition and build
# ------------------------------------------------------------------------------------------------------------

def test_elementwise_incompatible_shapes():
    _, network, _ = new()
    a = network.add_input("a", trt.float32, (2, 3))
    b = network.add_input("b", trt.float32, (4, 5))
    err = raises_naming(trt.ShapeError, "(Unnamed Layer* 0) [ElementWise]", network.add_elementwise, a, b,
                        trt.ElementWiseOperation.SUM)
    assert "(2, 3)" in str(err) and "(4, 5)" in str(err)
    assert isinstance(err, ValueError)
    assert network.num_layers == 0                          # the failed layer is not left behind
    ok = network.add_elementwise(a, a, trt.ElementWiseOperation.SUM)
    assert ok.name == "(Unnamed Layer* 0) [ElementWise]"


def test_matrix_multiply_inner_dims_at_build():
    logger = Recorder()
    builder, network, config = new(logger=logger)
    a = network.add_input("a", trt.float32, (2, 3))
    b = network.add_input("b", trt.float32, (4, 5))
    with pytest.raises(trt.ShapeError) as ei:
        mm = network.add_matrix_multiply(a, trt.MatrixOperation.NONE, b, trt.MatrixOperation.NONE)
        mm.name = "scores"
        network.mark_output(mm.get_output(0))
        builder.build_serialized_network(network, config)
    assert "scores" in str(ei.value) or "[Matrix Multiply]" in str(ei.value)
    assert logger.errors and logger.errors[-1] == str(ei.value)


def test_convolution_weight_count():
    builder, network, config = new()
    x = network.add_input("x", trt.float32, (1, 3, 8, 8))
    with pytest.raises(trt.ShapeError) as ei:
        conv = network.add_convolution_nd(x, 4, (3, 3), np.zeros(4 * 3 * 3 * 2, np.float32))
        conv.name = "conv1"
        network.mark_output(conv.get_output(0))
        builder.build_serialized_network(network, config)
    msg = str(ei.value)
    assert "conv1" in msg or "[Convolution]" in msg
    assert "72" in msg and "108" in msg


def test_fully_connected_weight_count_implicit():
    builder, network, _ = new(explicit=False)
    x = network.add_input("x", trt.float32, (3, 2, 2))
    with pytest.raises(trt.ShapeError) as ei:
        fc = network.add_fully_connected(x, 5, np.zeros(5 * 11, np.float32))
        fc.name = "fc1"
        network.mark_output(fc.get_output(0))
        builder.build_cuda_engine(network)
    assert "fc1" in str(ei.value) or "[Fully Connected]" in str(ei.value)


def test_unmarked_network_mentions_mark_output():
    logger = Recorder()
    builder, network, config = new(logger=logger)
    x = network.add_input("x", trt.float32, (1, 4))
    network.add_activation(x, trt.ActivationType.RELU)
    for build in (lambda: builder.build_serialized_network(network, config),
                  lambda: builder.build_engine(network, config)):
        with pytest.raises(trt.Error, match="mark_output"):
            build()
    assert logger.errors and "mark_output" in logger.errors[-1]


def test_int32_input_to_convolution():
    _, network, _ = new()
    x = network.add_input("ids", trt.int32, (1, 3, 8, 8))
    err = raises_naming(trt.DTypeError, "[Convolution]", network.add_convolution_nd, x, 4, (3, 3),
                        np.zeros((4, 3, 3, 3), np.float32))
    assert "INT32" in str(err) and isinstance(err, TypeError)


def test_int32_input_at_build_when_dtype_changes_later():
    builder, network, config = new()
    x = network.add_input("x", trt.float32, (1, 3, 4, 4))
    conv = network.add_convolution_nd(x, 2, (1, 1), np.ones((2, 3, 1, 1), np.float32))
    conv.name = "conv_after"
    network.mark_output(conv.get_output(0))
    x.dtype = trt.int32
    raises_naming(trt.DTypeError, "conv_after", builder.build_serialized_network, network, config)


def test_add_input_errors():
    _, network, _ = new()
    network.add_input("x", trt.float32, (1, 2))
    raises_naming(trt.Error, "'x'", network.add_input, "x", trt.float32, (3,))
    raises_naming(trt.DTypeError, "'q'", network.add_input, "q", 42, (1, 2))
    raises_naming(trt.Error, "'q'", network.add_input, "q", trt.float32, (1, -2))
    raises_naming(trt.Error, "shape", network.add_input, "q", trt.float32, (1,) * 9)
    with pytest.raises(TypeError, match="shape"):
        network.add_input("q", trt.float32, (1.5, 2))
    with pytest.raises(TypeError):
        network.add_input("q", trt.float32, None)
    with pytest.raises(trt.Error):
        network.add_input("", trt.float32, (1, 2))
    assert network.num_inputs == 1


def test_tensor_from_another_network():
    _, net1, _ = new()
    _, net2, _ = new()
    x = net1.add_input("x", trt.float32, (2, 3))
    y = net2.add_input("foreign", trt.float32, (2, 3))
    raises_naming(trt.Error, "'foreign'", net1.add_activation, y, trt.ActivationType.RELU)
    raises_naming(trt.Error, "'foreign'", net1.add_elementwise, x, y, trt.ElementWiseOperation.SUM)
    raises_naming(trt.Error, "'foreign'", net1.add_concatenation, [x, y])
    relu = net1.add_activation(x, trt.ActivationType.RELU)
    relu.name = "r1"
    raises_naming(trt.Error, "r1", relu.set_input, 0, y)
    assert net1.num_layers == 1


def test_mark_output_of_another_network_names_the_tensor():
    _, net1, _ = new()
    _, net2, _ = new()
    net1.add_input("x", trt.float32, (2, 3))
    y = net2.add_input("foreign", trt.float32, (2, 3))
    raises_naming(trt.Error, "foreign", net1.mark_output, y)


def test_none_as_a_tensor():
    _, network, _ = new()
    x = network.add_input("x", trt.float32, (2, 3))
    raises_naming(TypeError, "input", network.add_activation, None, trt.ActivationType.RELU)
    raises_naming(TypeError, "input2", network.add_elementwise, x, None, trt.ElementWiseOperation.SUM)
    raises_naming(TypeError, "input1", network.add_matrix_multiply, x, trt.MatrixOperation.NONE, None,
                  trt.MatrixOperation.NONE)
    raises_naming(TypeError, "inputs", network.add_concatenation, [x, None])
    raises_naming(TypeError, "input", network.add_activation, "x", trt.ActivationType.RELU)
    with pytest.raises(TypeError):
        network.mark_output(None)
    assert network.num_layers == 0


def test_bad_enum_values_name_the_layer():
    logger = Recorder()
    builder, network, config = new(logger=logger)
    x = network.add_input("x", trt.float32, (1, 2, 4, 4))
    with pytest.raises(trt.Error) as ei:
        act = network.add_activation(x, trt.ActivationType.RELU)
        act.name = "act99"
        act.type = 99
        network.mark_output(act.get_output(0))
        builder.build_serialized_network(network, config)
    assert "act99" in str(ei.value) and "99" in str(ei.value)

    builder, network, config = new()
    x = network.add_input("x", trt.float32, (1, 2, 4, 4))
    raises_naming(trt.Error, "[ElementWise]", network.add_elementwise, x, x, 77)
    raises_naming(trt.Error, "[Activation]", network.add_activation, x, 1234)
    pool = network.add_pooling_nd(x, trt.PoolingType.MAX, (2, 2))
    pool.name = "pool5"
    with pytest.raises(trt.Error) as ei:
        pool.type = 5                     # may be refused now ...
        network.mark_output(pool.get_output(0))
        builder.build_serialized_network(network, config)   # ... or at build
    assert "pool5" in str(ei.value)

    builder, network, config = new()
    x = network.add_input("x", trt.float32, (1, 2, 4, 4))
    conv = network.add_convolution_nd(x, 2, (1, 1), np.ones((2, 2, 1, 1), np.float32))
    conv.name = "conv_pm"
    with pytest.raises(trt.Error) as ei:
        conv.padding_mode = 42
        network.mark_output(conv.get_output(0))
        builder.build_serialized_network(network, config)
    assert "conv_pm" in str(ei.value)


def test_attribute_type_errors_name_layer_and_attribute():
    _, network, _ = new()
    x = network.add_input("x", trt.float32, (1, 3, 4, 4))
    conv = network.add_convolution_nd(x, 2, (3, 3), np.zeros((2, 3, 3, 3), np.float32))
    conv.name = "convA"
    for attr, value, exc in (("stride_nd", "ab", TypeError), ("num_groups", 1.5, TypeError),
                             ("kernel", np.zeros(54, np.complex64), trt.DTypeError),
                             ("padding_nd", None, TypeError)):
        err = raises_naming(exc, "convA", setattr, conv, attr, value)
        assert attr in str(err)
    with pytest.raises(AttributeError):
        conv.no_such_attribute = 1


def test_shape_errors_at_build_name_the_layer():
    def pool_too_big(network, x):
        p = network.add_pooling_nd(x, trt.PoolingType.MAX, (5, 5))
        p.name = "bigpool"
        return p, "bigpool"

    def concat_mismatch(network, x):
        y = network.add_input("y", trt.float32, (1, 3, 5, 4))
        c = network.add_concatenation([x, y])
        c.name = "cat"
        return c, "cat"

    def reshape_volume(network, x):
        s = network.add_shuffle(x)
        s.name = "reshape"
        s.reshape_dims = (5, 7)
        return s, "reshape"

    def groups(network, x):
        c = network.add_convolution_nd(x, 4, (1, 1), np.ones((4, 1, 1, 1), np.float32))
        c.num_groups = 2                  # 3 channels do not split into 2 groups
        c.name = "grouped"
        return c, "grouped"

    cases = [pool_too_big, concat_mismatch, reshape_volume, groups]
    for make in cases:
        builder, network, config = new()
        x = network.add_input("x", trt.float32, (1, 3, 4, 4))
        with pytest.raises(trt.Error) as ei:
            layer, name = make(network, x)
            network.mark_output(layer.get_output(0))
            builder.build_serialized_network(network, config)
        assert name in str(ei.value), (make.__name__, str(ei.value))


def test_cycle_error_names_a_layer():
    builder, network, config = new()
    x = network.add_input("x", trt.float32, (2, 3))
    a = network.add_activation(x, trt.ActivationType.RELU)
    a.name = "layerA"
    b = network.add_activation(a.get_output(0), trt.ActivationType.RELU)
    b.name = "layerB"
    network.mark_output(b.get_output(0))
    with pytest.raises(trt.Error) as ei:
        a.set_input(0, b.get_output(0))     # may be refused here, or at build
        builder.build_serialized_network(network, config)
    assert "layerA" in str(ei.value) or "layerB" in str(ei.value)


def test_cycle_never_crashes():
    builder, network, config = new()
    x = network.add_input("x", trt.float32, (2, 3))
    a = network.add_activation(x, trt.ActivationType.RELU)
    b = network.add_activation(a.get_output(0), trt.ActivationType.RELU)
    network.mark_output(b.get_output(0))
    with pytest.raises(trt.Error, match="cycle"):
        a.set_input(0, b.get_output(0))
        builder.build_serialized_network(network, config)


def test_network_input_cannot_be_marked_as_output():
    """TensorRT refuses a tensor that is both a network input and output (trtlite used to rename the input)."""
    builder, network, config = new()
    x = network.add_input("x", trt.float32, (2, 3))
    err = raises_naming(trt.InvalidArgumentError, "'x'", network.mark_output, x)
    assert "input" in str(err)
    assert not x.is_network_output and network.num_outputs == 0
    # the way to pass an input through: an identity layer
    y = network.add_identity(x).get_output(0)
    y.name = "y"
    network.mark_output(y)
    engine = builder.build_engine(network, config)
    assert [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)] == ["x", "y"]
    np.testing.assert_array_equal(engine.create_execution_context().infer({"x": X})["y"], X)


def enum_cases():
    """(what, fn(network, x)) pairs passing an out-of-range enum value, at creation or through a property."""
    w = np.ones((2, 2, 1, 1), np.float32)

    def setattr_(make, attr, value):
        def fn(network, x):
            setattr(make(network, x), attr, value)
        return fn
    return [
        ("add_pooling_nd type", "PoolingType", lambda n, x: n.add_pooling_nd(x, 999, (2, 2))),
        ("add_matrix_multiply op0", "MatrixOperation", lambda n, x: n.add_matrix_multiply(x, 99, x, 0)),
        ("add_matrix_multiply op1", "MatrixOperation", lambda n, x: n.add_matrix_multiply(x, 0, x, -1)),
        ("add_scale mode", "ScaleMode", lambda n, x: n.add_scale(x, 99)),
        ("add_activation type", "ActivationType", lambda n, x: n.add_activation(x, 14)),
        ("add_elementwise op", "ElementWiseOperation", lambda n, x: n.add_elementwise(x, x, 99)),
        ("add_unary op", "UnaryOperation", lambda n, x: n.add_unary(x, 99)),
        ("add_reduce op", "ReduceOperation", lambda n, x: n.add_reduce(x, 5, 1, True)),
        ("add_topk op", "TopKOperation", lambda n, x: n.add_topk(x, 2, 1, 1)),
        ("pooling.type", "PoolingType",
         setattr_(lambda n, x: n.add_pooling_nd(x, trt.PoolingType.MAX, (2, 2)), "type", 999)),
        ("pooling.padding_mode", "PaddingMode",
         setattr_(lambda n, x: n.add_pooling_nd(x, trt.PoolingType.MAX, (2, 2)), "padding_mode", 6)),
        ("activation.type", "ActivationType",
         setattr_(lambda n, x: n.add_activation(x, trt.ActivationType.RELU), "type", 999)),
        ("conv.padding_mode", "PaddingMode",
         setattr_(lambda n, x: n.add_convolution_nd(x, 2, (1, 1), w), "padding_mode", 99)),
        ("resize.resize_mode", "InterpolationMode", setattr_(lambda n, x: n.add_resize(x), "resize_mode", 3)),
        ("resize.nearest_rounding", "ResizeRoundMode", setattr_(lambda n, x: n.add_resize(x), "nearest_rounding", -1)),
        ("slice.mode", "SampleMode",
         setattr_(lambda n, x: n.add_slice(x, (0, 0, 0, 0), (1, 1, 1, 1), (1, 1, 1, 1)), "mode", 5)),
    ]


@pytest.mark.parametrize("case", range(len(enum_cases())), ids=[c[0] for c in enum_cases()])
def test_out_of_range_enum_values_are_refused_where_given(case):
    what, enum_name, fn = enum_cases()[case]
    _, network, _ = new()
    x = network.add_input("x", trt.float32, (1, 2, 4, 4))
    before = network.num_layers
    err = raises_naming(trt.InvalidArgumentError, "Unnamed Layer*", fn, network, x)
    attr = what.split()[-1].split(".")[-1]
    assert enum_name in str(err) and ("%s = " % attr) in str(err)
    if what.startswith("add_"):
        assert network.num_layers == before                 # the refused layer is not left behind


def test_in_range_enum_values_are_kept():
    _, network, _ = new()
    x = network.add_input("x", trt.float32, (1, 2, 4, 4))
    pool = network.add_pooling_nd(x, trt.PoolingType.MAX, (2, 2))
    pool.type = 1
    assert pool.type == trt.PoolingType.AVERAGE
    with pytest.raises(trt.InvalidArgumentError):
        pool.type = 3
    assert pool.type == trt.PoolingType.AVERAGE             # a refused value leaves the attribute as it was
    act = network.add_activation(x, trt.ActivationType.GELU_TANH)
    assert act.type == trt.ActivationType.GELU_TANH


def test_builder_config_setters_refuse_bad_values():
    _, _, config = new()
    WS = trt.MemoryPoolType.WORKSPACE
    config.set_memory_pool_limit(WS, 1 << 33)
    raises_naming(trt.InvalidArgumentError, "-1", config.set_memory_pool_limit, WS, -1)   # used to read back 2**64-1
    raises_naming(trt.InvalidArgumentError, "2**64", config.set_memory_pool_limit, WS, 1 << 64)
    raises_naming(trt.InvalidArgumentError, "MemoryPoolType", config.set_memory_pool_limit, 99, 1)
    raises_naming(trt.InvalidArgumentError, "MemoryPoolType", config.get_memory_pool_limit, -1)
    with pytest.raises(TypeError):
        config.set_memory_pool_limit(WS, 1.5)
    assert config.get_memory_pool_limit(WS) == 1 << 33                     # unchanged by the refused calls
    config.set_memory_pool_limit(trt.MemoryPoolType.TACTIC_DRAM, 1 << 20)   # GPU pools: accepted, no meaning
    for fn in (config.set_flag, config.clear_flag, config.get_flag):
        raises_naming(trt.InvalidArgumentError, "BuilderFlag", fn, 99)
        raises_naming(trt.InvalidArgumentError, "BuilderFlag", fn, -1)
    config.set_flag(trt.BuilderFlag.FP16)
    assert config.get_flag(trt.BuilderFlag.FP16)
    for attr, bad, good in (("builder_optimization_level", 99, 5), ("builder_optimization_level", -1, 0),
                            ("avg_timing_iterations", -5, 0), ("num_threads", -1, 2)):
        setattr(config, attr, good)
        raises_naming(trt.InvalidArgumentError, attr, setattr, config, attr, bad)
        assert getattr(config, attr) == good                                # not clamped, not changed


def test_stream_handle_must_be_an_int_or_none(engine):
    context = engine.create_execution_context()
    y = np.empty((2, 3), np.float32)
    raises_naming(TypeError, "stream_handle", context.execute_async_v2, [X, y], "s")
    raises_naming(TypeError, "stream_handle", context.execute_async_v2, [X, y], 1.0)
    raises_naming(TypeError, "stream_handle", context.execute_async_v3, "s")
    raises_naming(TypeError, "stream_handle", context.set_optimization_profile_async, 0, [])
    assert context.execute_async_v2([X, y], 0) and context.execute_async_v2([X, y], None)
    assert context.execute_async_v2([X, y], stream_handle=12345)
    np.testing.assert_array_equal(y, -X)


@pytest.mark.parametrize("kind", ["conv", "pool", "deconv"])
@pytest.mark.parametrize("attr,value", [("padding_nd", (2 ** 63 - 1, 2 ** 63 - 1)), ("pre_padding", (2 ** 63 - 1, 0)),
                                        ("padding_nd", (2 ** 62, 0))])
def test_output_size_arithmetic_does_not_wrap(kind, attr, value):
    """Huge paddings/strides used to wrap around int64 into a small output ((1, 2, 1, 1) for padding 2**63-1)."""
    builder, network, config = new()
    x = network.add_input("x", trt.float32, (1, 2, 4, 4))
    w = np.ones((2, 2, 1, 1), np.float32)
    layer = {"conv": lambda: network.add_convolution_nd(x, 2, (1, 1), w),
             "deconv": lambda: network.add_deconvolution_nd(x, 2, (1, 1), w),
             "pool": lambda: network.add_pooling_nd(x, trt.PoolingType.MAX, (1, 1))}[kind]()
    setattr(layer, attr, value)
    err = raises_naming(trt.ShapeError, layer.name, lambda: layer.get_output(0).shape)
    assert "overflows" in str(err) or "2^40" in str(err) or "crops the whole output" in str(err), str(err)
    layer.get_output(0).name = "y"
    network.mark_output(layer.get_output(0))
    raises_naming(trt.ShapeError, layer.name, builder.build_engine, network, config)


def test_huge_stride():
    """A huge stride is fine for convolution and pooling (one output), an overflow for deconvolution."""
    _, network, _ = new()
    x = network.add_input("x", trt.float32, (1, 2, 4, 4))
    w = np.ones((2, 2, 1, 1), np.float32)
    conv = network.add_convolution_nd(x, 2, (1, 1), w)
    conv.stride_nd = (2 ** 62, 2 ** 63 - 1)
    assert tuple(conv.get_output(0).shape) == (1, 2, 1, 1)
    pool = network.add_pooling_nd(x, trt.PoolingType.MAX, (1, 1))
    pool.stride_nd = (2 ** 62, 1)
    assert tuple(pool.get_output(0).shape) == (1, 2, 1, 4)
    deconv = network.add_deconvolution_nd(x, 2, (1, 1), w)
    deconv.stride_nd = (2 ** 62, 1)
    err = raises_naming(trt.ShapeError, deconv.name, lambda: deconv.get_output(0).shape)
    assert "overflows" in str(err)


def test_dilated_kernel_size_overflow():
    _, network, _ = new()
    x = network.add_input("x", trt.float32, (1, 2, 4, 4))
    conv = network.add_convolution_nd(x, 2, (3, 3), np.ones((2, 2, 3, 3), np.float32))
    conv.dilation_nd = (2 ** 62, 1)
    err = raises_naming(trt.ShapeError, conv.name, lambda: conv.get_output(0).shape)
    assert "overflows" in str(err)


def test_constant_shape_volume_overflow_is_named():
    _, network, _ = new()
    err = raises_naming(trt.ShapeError, "[Constant]", network.add_constant, (2 ** 40, 2 ** 40), np.ones(1, np.float32))
    assert "overflows" in str(err) and "volume -1" not in str(err)
    err = raises_naming(trt.ShapeError, "[Constant]", network.add_constant, (2 ** 20, 2 ** 21), np.ones(1, np.float32))
    assert "2^40" in str(err)


def test_dynamic_range_setter_takes_a_pair():
    _, network, _ = new()
    x = network.add_input("x", trt.float32, (2, 3))
    assert x.dynamic_range is None
    for bad in (None, 1.0, (1.0,), (1.0, 2.0, 3.0), "ab", ("a", 1.0), {}):
        raises_naming(TypeError, "'x'", setattr, x, "dynamic_range", bad)      # None used to be a SystemError
    with pytest.raises(AttributeError):
        del x.dynamic_range
    assert x.dynamic_range is None
    x.dynamic_range = [-1, 2.5]                                                 # any 2-sequence of numbers
    assert x.dynamic_range == (-1.0, 2.5)
    x.dynamic_range = np.array([-3.0, 3.0], np.float32)
    assert x.dynamic_range == (-3.0, 3.0)
    raises_naming(trt.InvalidArgumentError, "'x'", setattr, x, "dynamic_range", (2.0, 1.0))
    assert x.dynamic_range == (-3.0, 3.0)


# ------------------------------------------------------------------------------------------------------------
# runtime: bindings
# ------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def engine():
    builder, network, config = new()
    x = network.add_input("x", trt.float32, (2, 3))
    neg = network.add_unary(x, trt.UnaryOperation.NEG)
    neg.get_output(0).name = "y"
    network.mark_output(neg.get_output(0))
    return builder.build_engine(network, config)


X = np.arange(6, dtype=np.float32).reshape(2, 3)


def works(context):
    y = np.full((2, 3), np.nan, np.float32)
    assert context.execute_v2([X, y])
    np.testing.assert_array_equal(y, -X)


def test_float64_binding_is_a_dtype_error(engine):
    context = engine.create_execution_context()
    err = raises_naming(trt.DTypeError, "'x'", context.execute_v2, [X.astype(np.float64), np.empty((2, 3), np.float32)])
    assert "float32" in str(err)
    raises_naming(trt.DTypeError, "'y'", context.execute_v2, [X, np.empty((2, 3), np.float64)])
    raises_naming(trt.DTypeError, "'x'", context.execute_v2, [X.view(np.int32), np.empty((2, 3), np.float32)])
    raises_naming(trt.DTypeError, "'y'", context.execute_v2, [X, np.empty((2, 3), np.float16)])
    raises_naming(trt.DTypeError, "'x'", context.set_tensor_address, "x", X.astype(np.float64))
    works(context)


def test_too_small_buffers_are_shape_errors(engine):
    context = engine.create_execution_context()
    err = raises_naming(trt.ShapeError, "'x'", context.execute_v2, [X[:1], np.empty((2, 3), np.float32)])
    assert "(2, 3)" in str(err)
    raises_naming(trt.ShapeError, "'y'", context.execute_v2, [X, np.empty(5, np.float32)])
    raises_naming(trt.ShapeError, "'y'", context.execute_v2, [X, np.empty((0,), np.float32)])
    # set_tensor_address with a too-small array: refused at execution
    context.set_tensor_address("x", X)
    context.set_tensor_address("y", np.empty(4, np.float32))
    raises_naming(trt.ShapeError, "'y'", context.execute_async_v3, 0)
    # larger buffers are fine (TensorRT 7 scripts allocate for the maximum)
    big = np.full(10, np.nan, np.float32)
    context.execute_v2([X, big])
    np.testing.assert_array_equal(big[:6], -X.ravel())
    assert np.isnan(big[6:]).all()
    works(context)


def test_wrong_number_of_bindings(engine):
    context = engine.create_execution_context()
    for bindings in ([X], [X, np.empty((2, 3), np.float32), X], []):
        err = raises_naming(trt.Error, "'x'", context.execute_v2, bindings)
        assert "'y'" in str(err) and "2" in str(err)
    with pytest.raises((TypeError, trt.Error)):
        context.execute_v2(X)                    # an array, not a list of bindings
    with pytest.raises(TypeError):
        context.execute_v2(None)
    works(context)


def test_bindings_of_the_wrong_kind(engine):
    context = engine.create_execution_context()
    out = np.empty((2, 3), np.float32)
    raises_naming(TypeError, "'x'", context.execute_v2, [None, out])
    raises_naming(TypeError, "'x'", context.execute_v2, [[0.0] * 6, out])
    raises_naming(TypeError, "'y'", context.execute_v2, [X, "y"])
    raises_naming(trt.Error, "'x'", context.execute_v2, [0, out])        # a NULL address
    works(context)


def test_negative_or_too_large_int_addresses(engine):
    """Addresses are unsigned: a negative int used to be taken as a high address and crash the run."""
    context = engine.create_execution_context()
    out = np.empty((2, 3), np.float32)
    for bad in (-8, -1, -(2 ** 70), 2 ** 64):
        err = raises_naming(trt.InvalidArgumentError, "'x'", context.execute_v2, [bad, out])
        assert str(bad) in str(err)
        raises_naming(trt.InvalidArgumentError, "'y'", context.execute_v2, [X, bad])
        raises_naming(trt.InvalidArgumentError, "'x'", context.set_tensor_address, "x", bad)
        raises_naming(trt.InvalidArgumentError, "'y'", context.execute_async_v2, [X, bad], 0)
    works(context)


def test_non_contiguous_arrays(engine):
    context = engine.create_execution_context()
    x_t = np.ascontiguousarray(X.T).T                      # (2, 3) view, Fortran order
    assert not x_t.flags.c_contiguous
    raises_naming(TypeError, "'x'", context.execute_v2, [x_t, np.empty((2, 3), np.float32)])
    y_t = np.empty((3, 2), np.float32).T
    raises_naming(TypeError, "'y'", context.execute_v2, [X, y_t])
    strided = np.empty((2, 6), np.float32)[:, ::2]
    raises_naming(TypeError, "'y'", context.execute_v2, [X, strided])
    raises_naming(TypeError, "'x'", context.set_tensor_address, "x", x_t)
    works(context)


def test_read_only_output_arrays(engine):
    context = engine.create_execution_context()
    ro = np.zeros((2, 3), np.float32)
    ro.flags.writeable = False
    raises_naming(TypeError, "'y'", context.execute_v2, [X, ro])
    raises_naming(TypeError, "'y'", context.set_tensor_address, "y", ro)
    np.testing.assert_array_equal(ro, 0.0)
    # a read-only input is fine
    ro_in = X.copy()
    ro_in.flags.writeable = False
    y = np.empty((2, 3), np.float32)
    context.execute_v2([ro_in, y])
    np.testing.assert_array_equal(y, -X)
    # so is a bytes-backed input
    context.execute_v2([np.frombuffer(X.tobytes(), np.float32), y])
    np.testing.assert_array_equal(y.ravel(), -X.ravel())


def test_set_tensor_address_errors(engine):
    context = engine.create_execution_context()
    raises_naming(trt.NotFoundError, "'nope'", context.set_tensor_address, "nope", X)
    raises_naming(trt.NotFoundError, "'nope'", context.get_tensor_shape, "nope")
    with pytest.raises(TypeError):
        context.set_tensor_address("x", "not an array")
    # only the input bound: the missing output is named
    context.set_tensor_address("x", X)
    raises_naming(trt.StateError, "'y'", context.execute_async_v3, 0)
    y = np.empty((2, 3), np.float32)
    context.set_tensor_address("y", y)
    context.execute_async_v3(0)
    np.testing.assert_array_equal(y, -X)


def test_infer_errors(engine):
    context = engine.create_execution_context()
    raises_naming(trt.Error, "'x'", context.infer, {})
    err = raises_naming(trt.NotFoundError, "'z'", context.infer, {"x": X, "z": X})
    assert isinstance(err, LookupError)
    raises_naming(trt.ShapeError, "'x'", context.infer, {"x": np.ones((3, 3), np.float32)})
    np.testing.assert_array_equal(context.infer({"x": X})["y"], -X)


def test_execute_batch_size_on_explicit_engine(engine):
    context = engine.create_execution_context()
    raises_naming(trt.Error, "execute_v2", context.execute, 2, [X, np.empty((2, 3), np.float32)])


# ------------------------------------------------------------------------------------------------------------
# runtime: implicit batch sizes
# ------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def implicit_engine():
    builder, network, _ = new(explicit=False)
    x = network.add_input("x", trt.float32, (3,))
    sq = network.add_elementwise(x, x, trt.ElementWiseOperation.PROD)
    sq.get_output(0).name = "sq"
    network.mark_output(sq.get_output(0))
    builder.max_batch_size = 4
    return builder.build_cuda_engine(network)


@pytest.mark.parametrize("bs", [5, 0, -1, 100])
def test_execute_batch_size_out_of_range(implicit_engine, bs):
    context = implicit_engine.create_execution_context()
    x = np.ones((8, 3), np.float32)
    y = np.zeros((8, 3), np.float32)
    with pytest.raises(trt.Error) as ei:
        context.execute(batch_size=bs, bindings=[x, y])
    assert "max_batch_size" in str(ei.value) and str(bs) in str(ei.value)
    np.testing.assert_array_equal(y, 0.0)
    context.execute(4, [x, y])
    np.testing.assert_array_equal(y[:4], 1.0)
    with pytest.raises(TypeError):
        context.execute(batch_size=2.0, bindings=[x, y])


def test_huge_ints_are_not_truncated(implicit_engine):
    context = implicit_engine.create_execution_context()
    x = np.ones((8, 3), np.float32)
    y = np.zeros((8, 3), np.float32)
    with pytest.raises((trt.Error, OverflowError, ValueError)):
        context.execute(batch_size=(1 << 32) + 2, bindings=[x, y])
    np.testing.assert_array_equal(y, 0.0)
    _, network, _ = new()
    with pytest.raises((trt.Error, OverflowError, ValueError)):
        network.add_input("x", (1 << 32) + 3, (1, 2))
    t = network.add_input("t", trt.float16, (1, 2))
    with pytest.raises((trt.Error, OverflowError, ValueError)):
        t.dtype = 1 << 32
    assert t.dtype == trt.float16


def test_implicit_buffers_too_small_for_batch(implicit_engine):
    context = implicit_engine.create_execution_context()
    small, right = np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)
    raises_naming(trt.ShapeError, "'x'", context.execute, 3, [small, right])
    raises_naming(trt.ShapeError, "'sq'", context.execute, 3, [right, small])
    raises_naming(trt.ShapeError, "'x'", context.infer, {"x": np.ones((2, 4), np.float32)})
    with pytest.raises(trt.Error):
        context.infer({"x": np.ones((5, 3), np.float32)})         # batch above max


def test_execute_v2_on_an_implicit_batch_engine_says_how_to_run_it(implicit_engine):
    """execute_v2 has no batch size; it used to fail with 'batch size 0 is outside 1..4'."""
    context = implicit_engine.create_execution_context()
    x = np.ones((4, 3), np.float32)
    y = np.zeros((4, 3), np.float32)
    for call in (lambda: context.execute_v2([x, y]), lambda: context.execute_async_v2([x, y], 0)):
        err = raises_naming(trt.InvalidArgumentError, "implicit batch", call)
        assert "execute(batch_size, bindings)" in str(err) and "batch size 0" not in str(err)
    np.testing.assert_array_equal(y, 0.0)
    assert context.execute(4, [x, y])
    np.testing.assert_array_equal(y, 1.0)


def test_implicit_set_input_shape_must_match(implicit_engine):
    context = implicit_engine.create_execution_context()
    raises_naming(trt.ShapeError, "'x'", context.set_input_shape, "x", (4,))
    assert context.set_input_shape("x", (3,))


# ------------------------------------------------------------------------------------------------------------
# shapes whose volume does not fit 64 bits (run in a subprocess: the failure mode is a crash)
# ------------------------------------------------------------------------------------------------------------

HUGE = r"""
import sys
import numpy as np
import trtlite as trt
shape = tuple(int(v) for v in sys.argv[1].split(","))
op = sys.argv[2]
try:
    builder = trt.Builder(trt.Logger(trt.Logger.INTERNAL_ERROR))
    network = builder.create_network(1)
    x = network.add_input("x", trt.float32, shape)
    if op == "softmax":
        layer = network.add_softmax(x)
        layer.axes = 1 << (len(shape) - 1)
    else:
        layer = network.add_reduce(x, trt.ReduceOperation.SUM, 1 << (len(shape) - 1), True)
    layer.get_output(0).name = "y"
    network.mark_output(layer.get_output(0))
    engine = builder.build_engine(network, builder.create_builder_config())
    context = engine.create_execution_context()
    context.execute_v2([np.ones(16, np.float32), np.zeros(16, np.float32)])
    print("EXECUTED")
except trt.Error as e:
    print("ERROR", type(e).__name__, e)
"""


@pytest.mark.parametrize("shape,op", [("4,4611686018427387904", "softmax"), ("4611686018427387904,4", "reduce")])
def test_shapes_whose_volume_overflows_are_rejected(shape, op):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-c", HUGE, shape, op], capture_output=True, text=True, timeout=120,
                          env=env)
    assert proc.returncode == 0, "returncode %d (killed by a signal?)\n%s" % (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.startswith("ERROR"), proc.stdout
    assert "'x'" in proc.stdout or "(Unnamed Layer* 0)" in proc.stdout


# ------------------------------------------------------------------------------------------------------------
# arrays a network (weights) or a context (set_tensor_address) keeps using
# ------------------------------------------------------------------------------------------------------------

def conv_1x1(w, builder_network_config=None):
    builder, network, config = builder_network_config or new()
    x = network.add_input("x", trt.float32, (1, 2, 2, 2))
    conv = network.add_convolution_nd(x, 1, (1, 1), w)
    conv.get_output(0).name = "y"
    network.mark_output(conv.get_output(0))
    return builder, network, config, conv


def test_weights_stay_exported_while_the_network_holds_them():
    import array
    w = array.array("f", [2.0, 3.0])
    builder, network, config, conv = conv_1x1(w)
    # array.array frees or moves its memory on resize; while exported it refuses (the network points into it)
    with pytest.raises(BufferError):
        del w[:]
    with pytest.raises(BufferError):
        w.extend([0.0] * 100000)
    engine = builder.build_engine(network, config)
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    y = engine.create_execution_context().infer({"x": x})["y"]
    np.testing.assert_array_equal(y[0, 0], 2 * x[0, 0] + 3 * x[0, 1])
    # replacing the weights releases the old array
    conv.kernel = np.array([1.0, 1.0], np.float32)
    w.append(4.0)
    # so does freeing the network
    w2 = array.array("f", [1.0, 1.0])
    held = conv_1x1(w2)
    with pytest.raises(BufferError):
        w2.append(1.0)
    del held
    gc.collect()
    w2.append(1.0)


def test_tensor_address_arrays_stay_exported_until_rebound(engine):
    import array
    context = engine.create_execution_context()
    x = array.array("f", range(6))
    y = array.array("f", [0.0] * 6)
    context.set_tensor_address("x", x)
    context.set_tensor_address("y", y)
    with pytest.raises(BufferError):
        del x[:]
    with pytest.raises(BufferError):
        y.extend([0.0] * 100000)
    context.execute_async_v3(0)
    assert list(y) == [-v for v in range(6)]
    # rebinding (to another array or to an int address) releases the previous array
    context.set_tensor_address("x", X)
    x.append(1.0)
    y_np = np.empty((2, 3), np.float32)
    context.set_tensor_address("y", y_np.ctypes.data)
    y.append(1.0)
    context.execute_async_v3(0)
    np.testing.assert_array_equal(y_np, -X)
    # a failed rebinding leaves the old binding (and its export) in place
    z = array.array("f", [0.0] * 6)
    context.set_tensor_address("y", z)
    with pytest.raises(trt.DTypeError):
        context.set_tensor_address("y", np.empty((2, 3), np.float64))
    with pytest.raises(BufferError):
        z.append(1.0)
    # freeing the context releases what it held
    del context
    gc.collect()
    z.append(1.0)


def test_held_arrays_are_released_without_leaks(engine):
    """Every path that drops weights or an address releases the export and its reference."""
    w = np.ones(2, np.float32)
    a = np.zeros((2, 3), np.float32)
    base_w, base_a = sys.getrefcount(w), sys.getrefcount(a)
    for _ in range(20):
        _, network, _, conv = conv_1x1(w)
        conv.kernel = w                                  # replaced by itself
        conv.bias = trt.Weights(w[:1])                   # through trt.Weights
        conv.bias = None
        conv.kernel = [1.0, 1.0]                         # a list: copied by numpy
        conv.kernel = w.astype(np.float64)               # converted: the array itself is not held
        conv.kernel = w
        del network, conv
        context = engine.create_execution_context()
        for _ in range(3):
            context.set_tensor_address("x", a)
            context.set_tensor_address("y", a)
        assert sys.getrefcount(a) == base_a + 2
        context.set_tensor_address("y", a.ctypes.data)
        assert sys.getrefcount(a) == base_a + 1
        del context
    gc.collect()
    assert sys.getrefcount(w) == base_w
    assert sys.getrefcount(a) == base_a


@pytest.mark.parametrize("scale", [1e30, 3e38])
def test_resize_scale_past_the_element_bound_is_a_shape_error(scale):
    """A finite but huge scale made floor(dim * scale) overflow int64 (undefined behaviour; the plan fuzzer found
    it under UBSan): it is a ShapeError naming the layer."""
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = n.add_input("x", trt.float32, (1, 1, 2, 2))
    r = n.add_resize(x)
    r.name = "big_resize"
    r.scales = [1.0, 1.0, scale, 1.0]
    n.mark_output(r.get_output(0))
    with pytest.raises(trt.ShapeError, match="big_resize.*2\\^40"):
        b.build_serialized_network(n, b.create_builder_config())
        raise AssertionError("the build did not fail")
