"""slice.rows (csrc/kernels/x86/copy_ops.c, issue #10 session 18) at layer level: channel slices of NCHW maps whose
rows follow each other in the input (ShuffleNetV2's channel halves: merged into one copy per image), the forms next
to them that must not merge (channel stride 2 / -1, a partial H) and a merge across a length-1 dim, with a batch,
built with timing, at optimization level 0 (reference kernels) and with slice.rows forced through the timing cache,
each vs numpy."""
import numpy as np
import pytest

import trtlite as trt

import test_conv_pixel_gemm as pg

KERNEL = "slice.rows"

CASES = [  # input shape, start, size, stride
    ((3, 10, 7, 5), (0, 5, 0, 0), (3, 5, 7, 5), (1, 1, 1, 1)),   # the second half of the channels
    ((2, 10, 14, 14), (0, 0, 0, 0), (2, 5, 14, 14), (1, 1, 1, 1)),  # the first half
    ((3, 10, 7, 5), (0, 1, 0, 0), (3, 4, 7, 5), (1, 2, 1, 1)),   # channel stride 2
    ((3, 10, 7, 5), (1, 9, 0, 0), (2, 5, 7, 5), (1, -2, 1, 1)),  # negative channel stride, images 1..2
    ((3, 10, 7, 5), (0, 5, 1, 0), (3, 5, 6, 5), (1, 1, 1, 1)),   # H not whole
    ((2, 10, 7, 5), (0, 3, 3, 1), (2, 4, 1, 3), (1, 1, 1, 1)),   # one row of H, part of W: merged across the 1
]


def _case(shape, start, size, stride):
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    x[0, start[1], 0, 0] = np.nan
    idx = tuple(slice(s, s + (n - 1) * d + (1 if d > 0 else -1) if s + (n - 1) * d + (1 if d > 0 else -1) >= 0
                      else None, d) for s, n, d in zip(start, size, stride))
    want = np.maximum(x[idx], 0.0)
    want[np.isnan(x[idx])] = np.nan

    def make(network):
        t = network.add_input("x", trt.float32, shape)
        out = network.add_slice(t, start, size, stride).get_output(0)
        out = network.add_activation(out, trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    return make, {"x": x}, want


@pytest.mark.parametrize("case", CASES)
def test_slice_rows_layer(case):
    """Timed, reference and slice.rows-forced builds match numpy."""
    make, inputs, want = _case(*case)
    assert want.shape == case[2]
    pg._check_timed_ref_forced(make, inputs, want, KERNEL, required=True)
