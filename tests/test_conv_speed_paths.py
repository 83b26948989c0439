"""The speed paths of issue #10 at layer level: deconvolution.packed_gemm, the depthwise convolution kernel and
the resize kernels, each built with the default optimization level (no timing: the first applicable optimized
kernel runs, and the test checks which one) and at optimization level 0 (reference kernels), both compared with
PyTorch (conv_transpose2d, conv2d with groups, interpolate) or the float64 numpy references of tests/refs.py."""
import json

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import Net, assert_close

torch = pytest.importorskip("torch")
F = torch.nn.functional


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def run_modes(make, inputs):
    """Builds make(network, *inputs) optimized and at level 0; returns {mode: (output, kernels by layer name)}."""
    outs = {}
    for mode in ("opt", "ref"):
        net = Net(True, mode)
        tensors = [net.network.add_input(k, trt.float32, v.shape) for k, v in inputs.items()]
        names = net.mark(make(net.network, *tensors))
        engine = net.build()
        ctx = engine.create_execution_context()
        out = {k: np.full(tuple(engine.get_tensor_shape(k)), 77, np.float32) for k in names}
        arrays = dict(inputs)
        arrays.update(out)
        bindings = [arrays[engine.get_tensor_name(i)] for i in range(engine.num_io_tensors)]
        assert ctx.execute_v2(bindings)
        info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
        kernels = {layer["name"]: layer["kernel"] for layer in info["layers"]}
        outs[mode] = (out[names[0]], kernels)
    return outs


def check(make, inputs, want, kernel, rtol=1e-4, atol=1e-5):
    """Optimized and reference builds both match `want`; the optimized one ran `kernel` (somewhere)."""
    outs = run_modes(make, inputs)
    for mode, (out, kernels) in outs.items():
        assert_close(out, want, rtol=rtol, atol=atol)
    assert kernel in outs["opt"][1].values(), outs["opt"][1]
    assert all(k.endswith(".ref") for k in outs["ref"][1].values()), outs["ref"][1]
    return outs


# ------------------------------------------------------------------------------------------------------------
# deconvolution
# ------------------------------------------------------------------------------------------------------------

def deconv_make(K, w, b, act=None, residual=False, **attrs):
    def make(net, x, *skip):
        layer = net.add_deconvolution_nd(x, K, tuple(w.shape[2:]), w, b)
        for k, v in attrs.items():
            setattr(layer, k, v)
        y = layer.get_output(0)
        if residual:
            y = net.add_elementwise(y, skip[0], trt.ElementWiseOperation.SUM).get_output(0)
        if act is not None:
            y = net.add_activation(y, act).get_output(0)
        return y
    return make


DECONV_TORCH = [
    # id, input shape, K, kernel, stride, padding, dilation, groups
    ("unet_2x2_s2", (1, 32, 16, 20), 16, (2, 2), (2, 2), (0, 0), (1, 1), 1),
    ("3x3_s2_pad1", (2, 8, 9, 7), 6, (3, 3), (2, 2), (1, 1), (1, 1), 1),
    ("4x4_s2_pad1", (1, 6, 8, 8), 4, (4, 4), (2, 2), (1, 1), (1, 1), 2),
    ("dilated", (1, 5, 7, 6), 7, (3, 2), (1, 2), (2, 0), (2, 1), 1),
    ("depthwise_s2", (2, 4, 5, 6), 4, (3, 3), (2, 2), (1, 1), (1, 1), 4),
    ("1x1_s1", (1, 7, 5, 5), 9, (1, 1), (1, 1), (0, 0), (1, 1), 1),
    ("3x3_s1", (1, 9, 11, 13), 5, (3, 3), (1, 1), (1, 1), (1, 1), 1),
]


@pytest.mark.parametrize("case", DECONV_TORCH, ids=[c[0] for c in DECONV_TORCH])
@pytest.mark.parametrize("epi", ["none", "relu", "residual_relu"])
def test_deconvolution_vs_torch(case, epi, rng):
    _, shape, K, ks, stride, pad, dil, g = case
    x = randn(rng, shape)
    w = randn(rng, (shape[1], K // g) + ks)
    b = randn(rng, K)
    want = F.conv_transpose2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(), torch.from_numpy(b).double(),
                              stride=stride, padding=pad, dilation=dil, groups=g).numpy()
    inputs = {"x": x}
    if epi == "residual_relu":
        inputs["skip"] = randn(rng, want.shape)
        want = want + inputs["skip"]
    if epi != "none":
        want = np.maximum(want, 0)
    act = trt.ActivationType.RELU if epi != "none" else None
    make = deconv_make(K, w, b, act=act, residual=epi == "residual_relu", stride_nd=stride, padding_nd=pad,
                       dilation_nd=dil, num_groups=g)
    outs = check(make, inputs, want, "deconvolution.packed_gemm")
    if epi != "none":  # the epilogue was fused into the deconvolution
        assert len(outs["opt"][1]) == 1, outs["opt"][1]


@pytest.mark.parametrize("mode", refs.PADDING_MODES)
def test_deconvolution_padding_modes_and_nan(mode, rng):
    x = randn(rng, (1, 5, 6, 7))
    x[0, 1, 2, 3] = np.nan
    x[0, 3, 4, 5] = np.inf
    w = randn(rng, (5, 3, 3, 4))
    b = randn(rng, 3)
    make = deconv_make(3, w, b, stride_nd=(2, 3), pre_padding=(1, 2), post_padding=(2, 0),
                       padding_mode=getattr(trt.PaddingMode, mode))
    want = refs.deconvolution(x, w, b, (2, 3), (1, 2), (2, 0), None, 1, mode)
    assert np.isnan(want).any()
    check(make, {"x": x}, want, "deconvolution.packed_gemm")


def test_deconvolution_3d_and_1d(rng):
    x = randn(rng, (1, 4, 3, 4, 5))
    w = randn(rng, (4, 3, 2, 3, 2))
    b = randn(rng, 3)
    want = F.conv_transpose3d(torch.from_numpy(x).double(), torch.from_numpy(w).double(), torch.from_numpy(b).double(),
                              stride=(2, 1, 2), padding=(0, 1, 0)).numpy()
    check(deconv_make(3, w, b, stride_nd=(2, 1, 2), padding_nd=(0, 1, 0)), {"x": x}, want, "deconvolution.packed_gemm")
    x1 = randn(rng, (2, 6, 9))
    w1 = randn(rng, (6, 2, 3))
    want1 = F.conv_transpose1d(torch.from_numpy(x1).double(), torch.from_numpy(w1).double(), stride=2, groups=3).numpy()
    check(deconv_make(6, w1, None, stride_nd=(2,), num_groups=3), {"x": x1}, want1, "deconvolution.packed_gemm")


# ------------------------------------------------------------------------------------------------------------
# depthwise convolution
# ------------------------------------------------------------------------------------------------------------

def conv_make(K, w, b, act=None, residual=False, **attrs):
    def make(net, x, *skip):
        layer = net.add_convolution_nd(x, K, tuple(w.shape[2:]), w, b)
        for k, v in attrs.items():
            setattr(layer, k, v)
        y = layer.get_output(0)
        if residual:
            y = net.add_elementwise(y, skip[0], trt.ElementWiseOperation.SUM).get_output(0)
        if act is not None:
            y = net.add_activation(y, act).get_output(0)
        return y
    return make


DEPTHWISE = [
    # id, input shape, kernel, stride, padding, dilation
    ("3x3_s1", (1, 24, 28, 30), (3, 3), (1, 1), (1, 1), (1, 1)),
    ("3x3_s2", (2, 16, 29, 33), (3, 3), (2, 2), (1, 1), (1, 1)),
    ("5x5_s1", (1, 12, 14, 14), (5, 5), (1, 1), (2, 2), (1, 1)),
    ("5x5_s2", (1, 20, 28, 28), (5, 5), (2, 2), (2, 2), (1, 1)),
    ("7x7_s1", (1, 8, 19, 40), (7, 7), (1, 1), (3, 3), (1, 1)),
    ("3x3_dilated", (1, 10, 20, 21), (3, 3), (1, 1), (2, 2), (2, 2)),
    ("4x2_s12_nopad", (2, 6, 11, 50), (4, 2), (1, 2), (0, 0), (1, 3)),
]


@pytest.mark.parametrize("case", DEPTHWISE, ids=[c[0] for c in DEPTHWISE])
@pytest.mark.parametrize("epi", ["none", "relu", "residual_relu"])
def test_depthwise_vs_torch(case, epi, rng):
    _, shape, ks, stride, pad, dil = case
    C = shape[1]
    x = randn(rng, shape)
    w = randn(rng, (C, 1) + ks)
    b = randn(rng, C)
    want = F.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(), torch.from_numpy(b).double(),
                    stride=stride, padding=pad, dilation=dil, groups=C).numpy()
    inputs = {"x": x}
    if epi == "residual_relu":
        inputs["skip"] = randn(rng, want.shape)
        want = want + inputs["skip"]
    if epi != "none":
        want = np.maximum(want, 0)
    act = trt.ActivationType.RELU if epi != "none" else None
    make = conv_make(C, w, b, act=act, residual=epi == "residual_relu", stride_nd=stride, padding_nd=pad,
                     dilation_nd=dil, num_groups=C)
    outs = check(make, inputs, want, "convolution.depthwise")
    if epi != "none":
        assert len(outs["opt"][1]) == 1, outs["opt"][1]


def test_depthwise_nan_inf_propagate(rng):
    x = randn(rng, (1, 4, 12, 40))
    x[0, 0, 5, 7] = np.nan
    x[0, 1, 0, 0] = np.inf
    x[0, 2, 11, 39] = -np.inf
    w = randn(rng, (4, 1, 3, 3))
    want = refs.convolution(x, w, None, (1, 2), (1, 1), (1, 1), None, 4)
    assert np.isnan(want).any() and np.isinf(want).any()
    check(conv_make(4, w, None, stride_nd=(1, 2), padding_nd=(1, 1), num_groups=4), {"x": x}, want,
          "convolution.depthwise")


# ------------------------------------------------------------------------------------------------------------
# resize
# ------------------------------------------------------------------------------------------------------------

def resize_make(shape=None, scales=None, mode="NEAREST", coord="ASYMMETRIC", rounding="FLOOR", selector="FORMULA",
                cubic_coeff=None, exclude_outside=None):
    def make(net, x):
        layer = net.add_resize(x)
        if shape is not None:
            layer.shape = shape
        if scales is not None:
            layer.scales = scales
        mode_enum = getattr(trt, "InterpolationMode", None) or trt.ResizeMode
        layer.resize_mode = getattr(mode_enum, mode)
        layer.coordinate_transformation = getattr(trt.ResizeCoordinateTransformation, coord)
        layer.nearest_rounding = getattr(trt.ResizeRoundMode, rounding)
        layer.selector_for_single_pixel = getattr(trt.ResizeSelector, selector)
        if cubic_coeff is not None:
            layer.cubic_coeff = cubic_coeff
        if exclude_outside is not None:
            layer.exclude_outside = exclude_outside
        return layer
    return make


COORDS = ["ALIGN_CORNERS", "ASYMMETRIC", "HALF_PIXEL"]
ROUNDINGS = ["HALF_UP", "HALF_DOWN", "FLOOR", "CEIL"]


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("scales", [(1, 1, 2, 2), (1, 1, 0.6, 1.5), (1, 1, 3, 0.5)])
def test_resize_nearest_every_mode(coord, rounding, scales, rng):
    x = randn(rng, (2, 3, 10, 21))
    x[0, 1, 2, 3] = np.nan
    out_shape = refs.resize_out_shape(x.shape, scales)
    want = refs.resize(x, out_shape, "NEAREST", coord, rounding=rounding, scales=scales)
    check(resize_make(scales=scales, coord=coord, rounding=rounding), {"x": x}, want, "resize.tables")


@pytest.mark.parametrize("size", [(64, 64), (20, 33), (7, 9)])
def test_resize_nearest_2x_vs_torch(size, rng):
    x = randn(rng, (1, 8, 32, 32))
    want = F.interpolate(torch.from_numpy(x).double(), size=size, mode="nearest").numpy()
    check(resize_make(shape=(1, 8) + size), {"x": x}, want, "resize.tables")


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(112, 112), (20, 45), (9, 7)])
def test_resize_bilinear_vs_torch(align_corners, size, rng):
    x = randn(rng, (1, 16, 28, 28))
    want = F.interpolate(torch.from_numpy(x).double(), size=size, mode="bilinear", align_corners=align_corners).numpy()
    coord = "ALIGN_CORNERS" if align_corners else "HALF_PIXEL"
    check(resize_make(shape=(1, 16) + size, mode="LINEAR", coord=coord), {"x": x}, want, "resize.tables")


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("selector", ["FORMULA", "UPPER"])
@pytest.mark.parametrize("mode", ["LINEAR", "CUBIC"])
@pytest.mark.parametrize("exclude_outside", [False, True])
def test_resize_linear_cubic_every_mode(coord, selector, mode, exclude_outside, rng):
    x = randn(rng, (2, 3, 9, 17))
    out_shape = (2, 3, 1, 40) if selector == "UPPER" else (2, 3, 14, 11)
    want = refs.resize(x, out_shape, mode, coord, selector, cubic_coeff=-0.5, exclude_outside=exclude_outside)
    check(resize_make(shape=out_shape, mode=mode, coord=coord, selector=selector, cubic_coeff=-0.5,
                      exclude_outside=exclude_outside), {"x": x}, want, "resize.tables")


def test_resize_bicubic_vs_torch(rng):
    x = randn(rng, (1, 4, 12, 15))
    want = F.interpolate(torch.from_numpy(x).double(), size=(30, 20), mode="bicubic", align_corners=False).numpy()
    check(resize_make(shape=(1, 4, 30, 20), mode="CUBIC", coord="HALF_PIXEL", cubic_coeff=-0.75), {"x": x}, want,
          "resize.tables")


def test_resize_linear_leading_axis_changes_runs_reference_math(rng):
    x = randn(rng, (2, 3, 5, 6))
    want = refs.resize(x, (4, 3, 10, 6), "LINEAR", "HALF_PIXEL")
    check(resize_make(shape=(4, 3, 10, 6), mode="LINEAR", coord="HALF_PIXEL"), {"x": x}, want, "resize.tables")


@pytest.mark.parametrize("mode", ["NEAREST", "LINEAR", "CUBIC"])
def test_resize_nan_inf_as_the_reference_kernel(mode, rng):
    """NaN and infinities reach the same outputs as in the reference kernel: every tap, weight 0 included, multiplies
    (0 * inf = NaN, as onnxruntime computes it; tests/test_nan_inf.py compares with onnxruntime itself)."""
    x = randn(rng, (1, 3, 9, 10))
    x[0, 0, 4, 5] = np.nan
    x[0, 1, 2, 3] = np.inf
    x[0, 2, 8, 9] = -np.inf
    outs = run_modes(resize_make(shape=(1, 3, 18, 25), mode=mode, coord="ALIGN_CORNERS"), {"x": x})
    opt, ref = outs["opt"][0], outs["ref"][0]
    assert "resize.tables" in outs["opt"][1].values()
    np.testing.assert_array_equal(np.isnan(opt), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(opt), np.isinf(ref))
    assert np.isnan(ref).any() and np.isinf(ref).any()
    fin = np.isfinite(ref)
    np.testing.assert_allclose(opt[fin], ref[fin], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["LINEAR", "CUBIC"])
def test_resize_zero_weight_taps_propagate(mode):
    """Align-corners 5 -> 9, 4 -> 7 hits input samples exactly, where the neighbours get weight 0: an Inf there gives
    0 * inf = NaN (onnxruntime's values, checked by hand); the last input is one tap in LINEAR mode (onnxruntime
    blends it with itself), so an Inf there stays Inf."""
    x = np.ones((1, 1, 5, 4), np.float32)
    x[0, 0, 2, 1] = np.inf
    x[0, 0, 4, 3] = -np.inf
    outs = run_modes(resize_make(shape=(1, 1, 9, 7), mode=mode, coord="ALIGN_CORNERS"), {"x": x})
    assert "resize.tables" in outs["opt"][1].values()
    for got in (outs["opt"][0][0, 0], outs["ref"][0][0, 0]):
        assert np.isnan(got[4, 0]) and np.isnan(got[2, 2])  # the Inf at a tap of weight 0
        assert got[0, 6] == 1.0 and got[3, 1] == np.inf
        if mode == "LINEAR":
            assert got[4, 2] == np.inf and got[0, 0] == 1.0  # the Inf itself, weight 1; far from both
            assert got[3, 2] == np.inf and got[4, 1] == np.inf  # weights 0.5
            assert got[8, 6] == -np.inf and got[7, 6] == -np.inf  # the last input: one tap
        else:
            assert np.isnan(got[8, 6])  # cubic multiplies its clamped edge taps (weight 0) too, as onnxruntime
            assert got[7, 1] == -np.inf and np.isnan(got[0, 0]) and got[8, 1] == 1.0
