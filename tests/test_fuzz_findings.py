"""Fixes of fuzzer findings (tests/fuzz/known_findings.txt history), through the public API and the ONNX parser:
slice index arithmetic past int64, FILL values an integer tensor cannot hold, ONNX shape inference and Pad
memory blow-ups on malformed or huge models."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close
from test_layers_shape import slice_make, slice_mode

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _slice_net(shape, start, size, stride, mode, dtype=trt.float32, fill=None, fill_dtype=np.float32):
    def make(net):
        x = net.add_input("x", dtype, shape)
        layer = net.add_slice(x, start, size, stride)
        layer.name = "fz_slice"
        layer.mode = slice_mode(mode)
        if fill is not None:
            c = net.add_constant((), np.array(fill, fill_dtype).reshape(()))
            layer.set_input(4, c.get_output(0))
        net.mark_output(layer.get_output(0))
    return make


# ---- 1. slice start + (size-1)*stride past int64 --------------------------------------------------------------

@pytest.mark.parametrize("mode", ["WRAP", "CLAMP", "FILL", "REFLECT", "DEFAULT"])
@pytest.mark.parametrize("start,size,stride", [((0,), (3,), (2 ** 62,)), ((2 ** 62,), (2,), (2 ** 62,)),
                                               ((-2 ** 62,), (3,), (-2 ** 62,)), ((0,), (2 ** 40,), (2 ** 24,))])
def test_slice_index_overflow_is_a_shape_error(mode, start, size, stride, expect_layer_error):
    e = expect_layer_error(_slice_net((4,), start, size, stride, mode), trt.Error, ("fz_slice",))
    assert isinstance(e, trt.ShapeError) and "overflow" in str(e), e


@pytest.mark.parametrize("mode", ["WRAP", "CLAMP", "FILL", "REFLECT"])
def test_slice_huge_legal_stride_runs(mode, rng, build_and_run):
    """The largest strides whose indices stay in int64 are legal in the sampling modes, and index the input
    correctly (independent reference: refs.slice_ in Python integers)."""
    x = rng.standard_normal((2, 5)).astype(np.float32)
    start, size, stride = (1, -3), (2, 3), (-1, 2 ** 61 + 1)
    out = build_and_run(slice_make(start, size, stride, mode), {"x": x})
    assert_close(out, refs.slice_(x, start, size, stride, mode))


# ---- 2. FILL values an integer tensor cannot hold ------------------------------------------------------------

@pytest.mark.parametrize("fill", [1e35, -1e35, float("nan"), float("inf"), 2.5, 2147483648.0, -2147483904.0])
def test_slice_int32_fill_not_representable_is_rejected(fill, expect_layer_error):
    e = expect_layer_error(_slice_net((2, 3), (0, -1), (2, 5), (1, 1), "FILL", trt.int32, fill), trt.Error,
                           ("fz_slice",))
    assert "FILL value" in str(e), e


def test_slice_int32_fill_int_constant_not_float_exact_is_rejected(expect_layer_error):
    """An INT32 fill constant is kept as a float: one it would round (2^24 + 1) is refused, not changed."""
    expect_layer_error(_slice_net((2, 3), (0, -1), (2, 5), (1, 1), "FILL", trt.int32, 2 ** 24 + 1, np.int32),
                       trt.Error, ("fz_slice",))


def _fill_make(start, size, fill, fdt):
    def make(net, x):
        layer = net.add_slice(x, start, size, (1,) * len(start))
        layer.mode = slice_mode("FILL")
        layer.set_input(4, net.add_constant((), np.array(fill, fdt).reshape(())).get_output(0))
        return layer
    return make


@pytest.mark.parametrize("fill,fdt", [(-7.0, np.float32), (-2147483648.0, np.float32), (2147483520.0, np.float32),
                                      (16777216, np.int32), (-5, np.int32)])
def test_slice_int32_fill_exact_values(fill, fdt, rng, build_and_run):
    x = rng.integers(-100, 100, (2, 3)).astype(np.int32)
    out = build_and_run(_fill_make((0, -1), (2, 5), fill, fdt), {"x": x})
    want = refs.slice_(x.astype(np.float64), (0, -1), (2, 5), (1, 1), "FILL", fill=float(fill))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.astype(np.float64), want)
