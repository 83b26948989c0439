"""Gaps found by re-running real TensorRT clients on trtlite once IOutputAllocator existed (issue #12's proof,
second round: polygraphy `run --trt/--int8/--fp16`, `inspect model` on ONNX, NVIDIA's python_plugin and
quickly_deployable_plugins samples, tensorrtx's large builders; docs/clients.md says what each client did).
Each test is written here in the client's style, not copied from it, and checks numbers against numpy.
"""
import numpy as np
import pytest

import trtlite as trt


def _scaled_outputs(n_out):
    """x (2, 3) -> y_k = x * (k + 1) for k < n_out, each marked as an output."""
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network(0)
    x = n.add_input("x", trt.float32, (2, 3))
    for k in range(n_out):
        c = n.add_constant((1, 1), np.array([[k + 1]], np.float32)).get_output(0)
        y = n.add_elementwise(x, c, trt.ElementWiseOperation.PROD).get_output(0)
        y.name = f"y{k}"
        n.mark_output(y)
    return b, n


def test_engines_with_more_than_64_io_tensors_execute():
    # INT8 calibration marks every float tensor as an output (hundreds for polygraphy's ResNet-50 --int8 run);
    # the bindings path refused more than 64
    b, n = _scaled_outputs(70)
    engine = b.build_engine(n, b.create_builder_config())
    ctx = engine.create_execution_context()
    xv = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    outs = [np.full((2, 3), np.nan, np.float32) for _ in range(70)]
    assert ctx.execute_v2([xv] + outs)
    for k, o in enumerate(outs):
        np.testing.assert_array_equal(o, xv.astype(np.float64) * (k + 1))
    outs2 = [np.full((2, 3), np.nan, np.float32) for _ in range(70)]
    for i, a in enumerate([xv] + outs2):
        ctx.set_tensor_address(engine.get_tensor_name(i), a.ctypes.data)
    assert ctx.execute_async_v3(0)
    np.testing.assert_array_equal(outs2[69], xv.astype(np.float64) * 70)
    with pytest.raises(trt.InvalidArgumentError, match="expected 71 bindings"):
        ctx.execute_v2([xv] + outs[:-1])


class _PolygraphyStyleCalibrator(trt.IInt8MinMaxCalibrator):
    """polygraphy's calibrator keeps `cache.tobytes()` (TensorRT passes a buffer object, not bytes)."""

    def __init__(self, batch):
        trt.IInt8MinMaxCalibrator.__init__(self)
        self.batch, self.cache_contents = batch, None

    def get_batch_size(self):
        return 1

    def get_batch(self, names):
        b, self.batch = self.batch, None
        return None if b is None else [b]

    def read_calibration_cache(self):
        return None

    def write_calibration_cache(self, cache):
        self.cache_contents = cache.tobytes()


def test_int8_calibration_of_a_deep_network_writes_a_buffer_cache():
    # 70 leaky-ReLU layers: 71 float tensors in the calibration engine, and polygraphy's cache.tobytes()
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network(0)
    t = n.add_input("x", trt.float32, (1, 4, 2, 2))
    for _ in range(70):
        act = n.add_activation(t, trt.ActivationType.LEAKY_RELU)
        act.alpha = 0.5
        t = act.get_output(0)
    t.name = "y"
    n.mark_output(t)
    xv = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 4, 2, 2)
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.INT8)
    cal = _PolygraphyStyleCalibrator(xv)
    cfg.int8_calibrator = cal
    plan = b.build_serialized_network(n, cfg)
    text = cal.cache_contents.decode()
    assert text.startswith("TRT-") and "MinMaxCalibration" in text.splitlines()[0]
    assert len(text.splitlines()) == 1 + 71  # the input and the 70 layer outputs
    assert [t.name for t in (n.get_output(i) for i in range(n.num_outputs))] == ["y"]
    ctx = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan).create_execution_context()
    got = ctx.infer({"x": xv})["y"]
    ref = np.where(xv > 0, xv, xv * 0.5 ** 70).astype(np.float64)
    np.testing.assert_allclose(got, ref, atol=1.0 / 127)


def _conv_relu_pool_network():
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network(0)
    x = n.add_input("x", trt.float32, (1, 2, 4, 4))
    w = np.arange(2 * 2 * 9, dtype=np.float32).reshape(2, 2, 3, 3) / 10 - 1
    conv = n.add_convolution_nd(x, 2, (3, 3), w, np.zeros(2, np.float32))
    conv.padding_nd = (1, 1)
    relu = n.add_activation(conv.get_output(0), trt.ActivationType.RELU)
    pool = n.add_pooling_nd(relu.get_output(0), trt.PoolingType.MAX, (2, 2))
    pool.stride_nd = (2, 2)
    n.mark_output(pool.get_output(0))
    return n, (conv, relu, pool)


def test_members_of_different_enums_are_not_equal():
    # IActivationLayer.type is its ActivationType (as in TensorRT, where the subclass shadows ILayer.type):
    # ActivationType.RELU and PoolingType.MAX are 0 like LayerType.CONVOLUTION, and matched it in dicts
    assert trt.ActivationType.RELU != trt.LayerType.CONVOLUTION
    assert not (trt.PoolingType.MAX == trt.LayerType.CONVOLUTION)
    assert trt.ActivationType.RELU not in {trt.LayerType.CONVOLUTION: 1}
    assert trt.DataType.HALF == 1 and trt.DataType.HALF != 2 and {1: "h"}[trt.DataType.HALF] == "h"
    assert hash(trt.DataType.HALF) == hash(1) and trt.LayerType.CONVOLUTION == trt.LayerType(0)
    n, (conv, relu, pool) = _conv_relu_pool_network()
    assert [layer.type for layer in n] == [trt.LayerType.CONVOLUTION, trt.ActivationType.RELU, trt.PoolingType.MAX]


def test_layer_downcast_by_class_assignment_as_polygraphy_inspects():
    # polygraphy's network inspector: `if layer.type in mapping: layer.__class__ = mapping[layer.type]`
    mapping = {trt.LayerType.CONVOLUTION: trt.IConvolutionLayer, trt.LayerType.ACTIVATION: trt.IActivationLayer,
               trt.LayerType.POOLING: trt.IPoolingLayer}
    n, _ = _conv_relu_pool_network()
    seen = []
    for layer in n:
        if layer.type in mapping:
            layer.__class__ = mapping[layer.type]
        layer.__class__ = trt.ILayer  # a base class: nothing to change either
        seen.append(type(layer))
    assert seen == [trt.IConvolutionLayer, trt.IActivationLayer, trt.IPoolingLayer]
    assert n.get_layer(0).kernel_size_nd == (3, 3) and n.get_layer(2).window_size_nd == (2, 2)
    with pytest.raises(TypeError, match=r"class of layer '.*' from trtlite.IActivationLayer to .*IConvolutionLayer"):
        n.get_layer(1).__class__ = trt.IConvolutionLayer
    with pytest.raises(TypeError, match="class of layer"):
        n.get_layer(1).__class__ = int
    assert type(n.get_layer(1)) is trt.IActivationLayer


# ---- NVIDIA's quickly_deployable_plugins sample (tensorrt.plugin) -----------------------------------------------------

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from typing import Tuple  # noqa: E402

import numpy.typing as npt  # noqa: E402

import trtlite.plugin as trtp  # noqa: E402

LOG = trt.Logger(trt.Logger.ERROR)
AOT_CALLS = []


@trtp.register("trtlgaps::roll_pad")
def _roll_pad_desc(inp0: trtp.TensorDesc, pads: npt.NDArray[np.int32]) -> trtp.TensorDesc:
    out = inp0.like()
    out.shape_expr[inp0.ndim - 1] += int(pads[0] + pads[1])
    return out


@trtp.impl("trtlgaps::roll_pad")
def _roll_pad_impl(inp0: trtp.Tensor, pads: npt.NDArray[np.int32], outputs: Tuple[trtp.Tensor], stream: int) -> None:
    np.asarray(outputs[0])[...] = np.pad(np.asarray(inp0), [(0, 0)] * (inp0.ndim - 1) + [tuple(pads[:2])], "wrap")


def _roll_pad_aot_body(inp0, pads, outputs, block):
    # the sample's AOT body in shape: symbolic scalars and launch sizes (a GPU kernel would be compiled here)
    AOT_CALLS.append(block)
    args = trtp.SymIntExprs.from_tuple([trtp.SymInt32(e) for e in [int(pads[0]), inp0.shape_expr[0],
                                                                   outputs[0].shape_expr.numel()]])
    p = trtp.KernelLaunchParams()
    p.grid_x = trtp.cdiv(outputs[0].shape_expr.numel(), block)
    p.block_x = block
    return b"roll_pad", b"// ptx", p, args


@trtp.aot_impl("trtlgaps::roll_pad")
def _roll_pad_aot(inp0: trtp.TensorDesc, pads: npt.NDArray[np.int32], outputs: Tuple[trtp.TensorDesc],
                  tactic: int) -> Tuple[bytes, bytes, trtp.KernelLaunchParams, trtp.SymExprs]:
    return _roll_pad_aot_body(inp0, pads, outputs, 256)


@trtp.register("trtlgaps::aot_only")
def _aot_only_desc(inp0: trtp.TensorDesc) -> trtp.TensorDesc:
    return inp0.like()


@trtp.aot_impl("trtlgaps::aot_only")
def _aot_only_aot(inp0: trtp.TensorDesc, outputs: Tuple[trtp.TensorDesc], tactic: int):
    return _roll_pad_aot_body(inp0, np.zeros(2, np.int32), outputs, 128)


@trtp.register("trtlgaps::add_in_place")
def _add_in_place_desc(inp0: trtp.TensorDesc, delta: float) -> trtp.TensorDesc:
    return inp0.aliased()


@trtp.impl("trtlgaps::add_in_place")
def _add_in_place_impl(inp0, delta: float, outputs, stream) -> None:
    a = np.asarray(inp0)
    a += np.float32(delta)  # in place on the input, as the sample's torch add_()


def _explicit():
    b = trt.Builder(LOG)
    return b, b.create_network(0)


def _roll_ref(xv, pads):
    return np.pad(xv.astype(np.float64), [(0, 0)] * (xv.ndim - 1) + [tuple(pads)], "wrap")


def test_trtp_aot_declarations_are_accepted_and_the_impl_runs():
    AOT_CALLS.clear()
    b, n = _explicit()
    x = n.add_input("x", trt.float32, (2, 5))
    pads = np.array([2, 1], np.int32)
    with pytest.warns(RuntimeWarning, match="runs its trtp.impl instead"):
        layer = n.add_plugin(trtp.op.trtlgaps.roll_pad(x, pads=pads), aot=True)
    layer.get_output(0).name = "y"
    n.mark_output(layer.get_output(0))
    plan = b.build_serialized_network(n, b.create_builder_config())
    xv = np.arange(10, dtype=np.float32).reshape(2, 5)
    got = trt.Runtime(LOG).deserialize_cuda_engine(plan).create_execution_context().infer({"x": xv})["y"]
    np.testing.assert_array_equal(got, _roll_ref(xv, pads))
    assert AOT_CALLS == []  # never called: a CPU cannot run the kernel
    # the AOT helpers themselves, as an aot_impl body builds them
    d = trtp.TensorDesc((4, 7))
    name, code, params, args = _roll_pad_aot_body(d, pads, [trtp.TensorDesc((4, 10))], 16)
    assert int(params.grid_x) == 3 and int(params.block_x) == 16 and int(params.shared_mem) == 0
    assert [int(a) for a in args] == [2, 4, 40] and isinstance(args, trtp.SymExprs)
    assert trtp.cdiv(41, 8) == 6 and int(trtp.cdiv(trtp.SymInt32(40), 8)) == 5
    with pytest.raises(AttributeError, match="no field 'grid_w'"):
        params.grid_w = 1


def test_trtp_plugin_with_only_an_aot_impl_is_refused_naming_it():
    b, n = _explicit()
    x = n.add_input("x", trt.float32, (2, 5))
    with pytest.raises(NotImplementedError, match=r"'trtlgaps::aot_only' has only an ahead-of-time implementation"):
        n.add_plugin(trtp.op.trtlgaps.aot_only(x))
    # an ONNX node of it (TensorRT's parser: plugin_namespace and aot attributes) is refused the same way
    node = helper.make_node("aot_only", ["x"], ["y"], plugin_namespace="trtlgaps", aot=1)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])])
    b, n = _explicit()
    parser = trt.OnnxParser(n, LOG)
    assert not parser.parse(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]).SerializeToString())
    assert "has only an ahead-of-time implementation" in str(parser.get_error(0))


def test_trtp_onnx_node_with_aot_attribute_runs_the_impl():
    node = helper.make_node("roll_pad", ["x"], ["y"], plugin_namespace="trtlgaps", aot=0,
                            pads=helper.make_tensor("pads", TensorProto.INT32, [2], [1, 3]))
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8])])
    b, n = _explicit()
    parser = trt.OnnxParser(n, LOG)
    assert parser.parse(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]).SerializeToString()), \
        parser.get_error(0)
    xv = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    ctx = b.build_engine(n, b.create_builder_config()).create_execution_context()
    np.testing.assert_array_equal(ctx.infer({"x": xv})["y"], _roll_ref(xv, [1, 3]))


def test_trtp_aliased_output_is_written_in_place_and_reloads():
    # the sample's inplace_add: two in-place plugins, x and y bound to one buffer, ALIASED_PLUGIN_IO_10_03 enabled
    b, n = _explicit()
    x = n.add_input("x", trt.float32, (2, 3))
    l0 = n.add_plugin(trtp.op.trtlgaps.add_in_place(x, delta=2.0))
    l1 = n.add_plugin(trtp.op.trtlgaps.add_in_place(l0.get_output(0), delta=4.5))
    l1.get_output(0).name = "y"
    n.mark_output(l1.get_output(0))
    cfg = b.create_builder_config()
    assert cfg.get_preview_feature(trt.PreviewFeature.PROFILE_SHARING_0806)
    assert not cfg.get_preview_feature(trt.PreviewFeature.ALIASED_PLUGIN_IO_10_03)
    cfg.set_preview_feature(trt.PreviewFeature.ALIASED_PLUGIN_IO_10_03, True)
    assert cfg.get_preview_feature(trt.PreviewFeature.ALIASED_PLUGIN_IO_10_03)
    with pytest.raises(trt.InvalidArgumentError, match="7 is not a trt.PreviewFeature"):
        cfg.set_preview_feature(7, True)
    plan = b.build_serialized_network(n, cfg)
    engine = trt.Runtime(LOG).deserialize_cuda_engine(plan)  # runtime plugins: aliasing found again
    ctx = engine.create_execution_context()
    buf = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    ref = buf.astype(np.float64) + 6.5
    ctx.set_tensor_address("x", buf.ctypes.data)
    ctx.set_tensor_address("y", buf.ctypes.data)
    assert ctx.execute_async_v3(0)
    np.testing.assert_allclose(buf, ref, rtol=1e-6)
    with pytest.raises(ValueError, match="aliased\\(\\) needs one of the plugin's input TensorDescs"):
        trtp.TensorDesc((2,)).aliased()
