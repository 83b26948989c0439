"""A residual addition after a pure transpose as one step (issue #10, ConvNeXt: its block's permute back to NCHW and
the skip addition after it): fuse_epilogue gives the transpose the addition as its epilogue residual, and
"shuffle.transpose" (csrc/kernels/x86/transpose.c) adds the skip as it stores each row / tile.

Each network is built with the pass on, off and at level 0 and compared with numpy float64; the inspector says how
many steps are left.  Where the fusion must not happen (the transposed tensor also a network output or read by
another layer, a broadcast addition, a shuffle that only reshapes) the addition stays its own step, still right.
"""
import json

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close
from test_layernorm_channels import build  # noqa: E402  (the same builder: pass list off, optimization level)


def layers(engine):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return info["layers"]


def transpose_add(shape, perm, skip_first=False, mid_output=False, second_reader=False, broadcast=False):
    """x (shape) -> transpose(perm) -> + skip (the transposed shape, or [1, d1, 1, ..] when broadcast)."""
    def make(net, rng):
        x = rng.standard_normal(shape).astype(np.float32)
        yshape = tuple(shape[p] for p in perm)
        sshape = tuple(d if i == 1 else 1 for i, d in enumerate(yshape)) if broadcast else yshape
        s = rng.standard_normal(sshape).astype(np.float32)
        xi = net.add_input("x", trt.float32, shape)
        si = net.add_input("skip", trt.float32, sshape)
        t = net.add_shuffle(xi)
        t.first_transpose = perm
        a, b = (si, t.get_output(0)) if skip_first else (t.get_output(0), si)
        add = net.add_elementwise(a, b, trt.ElementWiseOperation.SUM)
        xt = x.astype(np.float64).transpose(perm)
        outs, refs = [add.get_output(0)], [xt + s]
        if mid_output:
            outs.append(t.get_output(0))
            refs.append(xt)
        if second_reader:
            outs.append(net.add_activation(t.get_output(0), trt.ActivationType.RELU).get_output(0))
            refs.append(np.maximum(xt, 0.0))
        return {"x": x, "skip": s}, outs, refs
    return make


@pytest.mark.parametrize("shape,perm,skip_first", [
    ((1, 56, 56, 8), (0, 3, 1, 2), False),   # ConvNeXt's NHWC -> NCHW (8x8 tiles, no tails)
    ((1, 7, 7, 37), (0, 3, 1, 2), True),     # tails of 8 both ways, the skip as the addition's first input
    ((2, 5, 9, 13), (0, 3, 1, 2), False),    # batch 2
    ((3, 4, 16), (1, 0, 2), True),           # rows case (the last dim stays innermost)
    ((2, 3, 4, 5, 6), (0, 4, 2, 1, 3), False),
])
def test_transpose_residual_one_step(shape, perm, skip_first):
    """The pass on: one shuffle.transpose step with a residual; off and at level 0: the addition is its own step;
    all match float64."""
    make = transpose_add(shape, perm, skip_first=skip_first)
    for off, level, want_steps in (((), None, 1), (("fuse_epilogue",), None, 2), ((), 0, 2)):
        engine, inputs, refs = build(make, off, level)
        ls = layers(engine)
        assert len(ls) == want_steps, [l["kernel"] for l in ls]
        if want_steps == 1:
            assert ls[0]["kernel"] == "shuffle.transpose" and ls[0]["residual"] is True, ls[0]
            # the plan keeps the residual input and epilogue
            engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(engine.serialize())
            assert [l["residual"] for l in layers(engine)] == [True]
        out = engine.create_execution_context().infer(inputs)["out0"]
        assert_close(out, refs[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", ["mid_output", "second_reader", "broadcast"])
def test_transpose_residual_must_not_fuse(case):
    """The transposed tensor also an output or read by another layer, a broadcast skip: the addition stays a step of
    its own (no transpose with a residual), and every output matches float64."""
    make = transpose_add((1, 6, 5, 11), (0, 3, 1, 2), **{case: True})
    engine, inputs, refs = build(make)
    ls = layers(engine)
    assert not any(l["residual"] for l in ls if l["kernel"].startswith("shuffle.")), ls
    outs = engine.create_execution_context().infer(inputs)
    for i, r in enumerate(refs):
        assert_close(outs["out%d" % i], r, rtol=1e-6, atol=1e-6)


def test_reshape_shuffle_keeps_its_addition():
    """A shuffle that moves no element (a transpose of size-1 dims only) is not given the residual: it stays a view
    (elide_reshape) and the addition its own step."""
    make = transpose_add((1, 1, 6, 10), (1, 0, 2, 3))
    engine, inputs, refs = build(make)
    ls = layers(engine)
    assert not any(l["residual"] for l in ls if l["kernel"].startswith("shuffle.")), ls
    out = engine.create_execution_context().infer(inputs)["out0"]
    assert_close(out, refs[0], rtol=1e-6, atol=1e-6)
