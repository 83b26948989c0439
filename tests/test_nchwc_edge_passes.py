"""nchwc_conv.avx2's plain edges in passes of whole images (issue #10): a region's first / last convolution stages
its blocked copy of the input / output in scratch for as many images as fit 8 MiB (at least one), not for the whole
batch (FCN-ResNet50 at batch 8 held 49 MiB of scratch for one 1x1 layer).  A 1x1 -> depthwise 3x3 -> 1x1 chain at
batch 3 over 64 x 128 x 128 maps (4 MiB an image: one image a pass) against float64 numpy, and the context's scratch
(memory_report) below one batch's blocked copy."""
import json

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
C, HW, N = 64, 128, 3


def test_plain_edges_run_image_by_image():
    rng = np.random.default_rng(11)
    ws = [(rng.standard_normal(s) / np.sqrt(np.prod(s[1:]))).astype(np.float32)
          for s in [(C, C, 1, 1), (C, 1, 3, 3), (C, C, 1, 1)]]
    bs = [rng.standard_normal(C).astype(np.float32) for _ in range(3)]
    x = rng.standard_normal((N, C, HW, HW)).astype(np.float32)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(EXPLICIT)
    t = net.add_input("x", trt.float32, x.shape)
    h = net.add_convolution_nd(t, C, (1, 1), ws[0], bs[0]).get_output(0)
    d = net.add_convolution_nd(h, C, (3, 3), ws[1], bs[1])
    d.padding_nd, d.num_groups = (1, 1), C
    y = net.add_convolution_nd(d.get_output(0), C, (1, 1), ws[2], bs[2]).get_output(0)
    y.name = "y"
    net.mark_output(y)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 1
    engine = builder.build_engine(net, config)
    assert engine is not None
    doc = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    if not all(layer["kernel"].startswith("nchwc_conv.avx") for layer in doc["layers"]) or len(doc["layers"]) != 3:
        pytest.skip("no blocked region here: %s" % [layer["kernel"] for layer in doc["layers"]])
    ctx = engine.create_execution_context()
    ctx.set_input_shape("x", x.shape)
    assert ctx.memory_report()["scratch_bytes"] < N * C * HW * HW * 4  # one image's copy, not the batch's
    out = np.full(x.shape, 77, np.float32)
    assert ctx.execute_v2([x, out])
    xf = x.astype(np.float64)
    h = refs.convolution(xf, ws[0].astype(np.float64), bs[0].astype(np.float64))
    h = refs.convolution(h, ws[1].astype(np.float64), bs[1].astype(np.float64), pre_padding=(1, 1),
                         post_padding=(1, 1), groups=C)
    want = refs.convolution(h, ws[2].astype(np.float64), bs[2].astype(np.float64))
    assert_close(out, want)
