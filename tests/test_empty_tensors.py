"""Tensors with a zero-sized dim through every kind of layer, optimized and reference kernels (the `build_and_run`
fixture runs both): no crash, and the non-empty outputs they can still have (a deconvolution or padded
convolution of an empty image is its bias; a reduction or matrix multiply over an empty axis is its identity)
match PyTorch / numpy.  Found by the ONNX fuzzer: a ConvTranspose of a 1x2x0x3 image divided by zero in the
optimized kernel's scratch planning."""
import numpy as np
import pytest
import torch

import trtlite as trt
from conftest import assert_close


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def _deconv_ref(x, w, b, stride):
    """float64 transposed convolution by scattering (PyTorch refuses empty spatial dims)."""
    n, c, h, wd = x.shape
    k, r, s = w.shape[1], w.shape[2], w.shape[3]
    oh, ow = (h - 1) * stride[0] + r, (wd - 1) * stride[1] + s
    y = np.zeros((n, k, max(oh, 0), max(ow, 0)))
    for i in range(h):
        for j in range(wd):
            y[:, :, i * stride[0]:i * stride[0] + r, j * stride[1]:j * stride[1] + s] += np.einsum(
                "nc,ckrs->nkrs", x[:, :, i, j].astype(np.float64), w.astype(np.float64))
    return y + b.astype(np.float64)[None, :, None, None]


@pytest.mark.parametrize("shape", [(1, 2, 0, 3), (0, 2, 4, 3), (2, 2, 0, 0)])
@pytest.mark.parametrize("act", [None, trt.ActivationType.RELU])
def test_deconvolution_of_an_empty_image_is_its_bias(build_and_run, rng, shape, act):
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    b = (rng.standard_normal(3) - 0.5).astype(np.float32)

    def make(net, t):
        d = net.add_deconvolution_nd(t, 3, (3, 3), w, b)
        d.stride_nd = (2, 1)
        out = d.get_output(0)
        if act is not None:
            out = net.add_activation(out, act).get_output(0)
        return out

    out = build_and_run(make, {"x": x})
    ref = _deconv_ref(x, w, b, (2, 1))
    if act is not None:
        ref = np.maximum(ref, 0)
    assert out.shape == ref.shape
    assert_close(out, ref)


@pytest.mark.parametrize("shape", [(1, 3, 0, 4), (0, 3, 5, 4)])
def test_padded_convolution_of_an_empty_image(build_and_run, rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)

    def make(net, t):
        c = net.add_convolution_nd(t, 4, (3, 3), w, b)
        c.padding_nd = (2, 1)
        return c

    out = build_and_run(make, {"x": x})
    n, _, h, wd = x.shape
    if h and n:
        ref = torch.nn.functional.conv2d(_t(x), _t(w), _t(b), padding=(2, 1)).numpy()
    else:  # PyTorch refuses empty spatial dims: an image of padding only gives the bias
        ref = np.broadcast_to(b[None, :, None, None], (n, 4, h + 4 - 2, wd + 2 - 2))
    assert out.shape == ref.shape
    assert_close(out, ref)


def test_matrix_multiply_over_an_empty_axis_is_zero(build_and_run, rng):
    a = rng.standard_normal((2, 3, 0)).astype(np.float32)
    b = rng.standard_normal((2, 0, 5)).astype(np.float32)
    out = build_and_run(lambda net, x, y: net.add_matrix_multiply(x, trt.MatrixOperation.NONE, y,
                                                                   trt.MatrixOperation.NONE),
                         {"a": a, "b": b})
    np.testing.assert_array_equal(out, np.zeros((2, 3, 5), np.float32))


@pytest.mark.parametrize("op,ref", [(trt.ReduceOperation.SUM, 0.0), (trt.ReduceOperation.PROD, 1.0)])
def test_reduction_over_an_empty_axis_is_its_identity(build_and_run, rng, op, ref):
    x = rng.standard_normal((2, 0, 3)).astype(np.float32)
    out = build_and_run(lambda net, t: net.add_reduce(t, op, 1 << 1, False), {"x": x})
    np.testing.assert_array_equal(out, np.full((2, 3), ref, np.float32))


def test_concatenation_with_an_empty_input(build_and_run, rng):
    a = rng.standard_normal((1, 0, 4)).astype(np.float32)
    b = rng.standard_normal((1, 3, 4)).astype(np.float32)

    def make(net, x, y):
        c = net.add_concatenation([x, y])
        c.axis = 1
        return c

    out = build_and_run(make, {"a": a, "b": b})
    np.testing.assert_array_equal(out, np.concatenate([a, b], axis=1))


@pytest.mark.parametrize("make,ref", [
    (lambda net, t: net.add_activation(t, trt.ActivationType.SIGMOID), lambda x: 1 / (1 + np.exp(-x))),
    (lambda net, t: net.add_elementwise(t, t, trt.ElementWiseOperation.SUM), lambda x: x + x),
    (lambda net, t: net.add_unary(t, trt.UnaryOperation.EXP), np.exp),
    (lambda net, t: net.add_softmax(t), None),
    (lambda net, t: net.add_pooling_nd(t, trt.PoolingType.MAX, (1, 2)), None),
    (lambda net, t: net.add_pooling_nd(t, trt.PoolingType.AVERAGE, (1, 2)), None),
    (lambda net, t: net.add_shuffle(t), lambda x: x),
    (lambda net, t: net.add_identity(t), lambda x: x),
], ids=["sigmoid", "sum", "exp", "softmax", "maxpool", "avgpool", "shuffle", "identity"])
@pytest.mark.parametrize("shape", [(0, 3, 4, 4), (2, 3, 4, 0)])
def test_empty_in_empty_out(build_and_run, rng, make, ref, shape, request):
    x = rng.standard_normal(shape).astype(np.float32)
    if "pool" in request.node.callspec.id and shape[3] == 0:
        with pytest.raises(trt.ShapeError, match="window 2 .* does not fit input size 0"):
            build_and_run(make, {"x": x})  # as PyTorch and onnxruntime: a window larger than the input
        return
    out = build_and_run(make, {"x": x})
    assert out.size == 0
    if ref is not None:
        assert out.shape == ref(x).shape


def test_onnx_fuzz_input_conv_transpose_of_empty_image():
    """The fuzzer's input itself: ConvTranspose -> InstanceNormalization over a 1x2x0x3 image parses, builds and runs
    (every optimization level) to onnxruntime's answer."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper
    rng = np.random.default_rng(3)
    dw = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    db = rng.standard_normal(3).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("ConvTranspose", ["x", "dw", "db"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 0, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("dw", TensorProto.FLOAT, dw.shape, dw.ravel()),
         helper.make_tensor("db", TensorProto.FLOAT, db.shape, db.ravel())])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    data = m.SerializeToString()
    x = np.zeros((1, 2, 0, 3), np.float32)
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for level in (0, 3):
        b = trt.Builder(trt.Logger(trt.Logger.ERROR))
        net = b.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
        p = trt.OnnxParser(net, trt.Logger(trt.Logger.ERROR))
        assert p.parse(data), p.get_error(0)
        cfg = b.create_builder_config()
        cfg.builder_optimization_level = level
        e = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(b.build_serialized_network(net, cfg))
        out = e.create_execution_context().infer({"x": x})
        y = out["y"]
        assert y.shape == ref.shape
        assert_close(y, ref)
