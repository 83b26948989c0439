# Writes a version-4 plan holding int8 (QLINEAR) steps with trtlite at cf534a8 (a version-4 writer, before the
# QLINEAR attributes of version 5), kernels portable (TRTL_CPU_MASK=0): x -> Q/DQ (scale 0.03) -> conv 3x3 (int8
# weights per channel, given as their fp32 values) -> ReLU -> Q/DQ (scale 0.05) -> conv 1x1 -> y.
# tests/test_precision.py imports LAYERS / params() for its reference.
import sys

import numpy as np

LAYERS = [(6, 3, 3), (4, 6, 1)]  # (output channels, input channels, kernel size)
SCALES = (0.03, 0.05)


def params(rng):
    """[(int8 weights, per-channel scales, bias)] per convolution."""
    out = []
    for k, c, ks in LAYERS:
        q = rng.integers(-127, 128, (k, c, ks, ks)).astype(np.int8)
        q.reshape(k, -1)[:, 0] = 127  # max |q| = 127 in every channel, as quantize_static makes them
        s = rng.uniform(0.002, 0.01, k).astype(np.float32)
        out.append((q, s, rng.standard_normal(k).astype(np.float32)))
    return out


def network(trt, b, rng):
    def const(a):
        return net.add_constant(a.shape, np.ascontiguousarray(a)).get_output(0)

    def fq(t, s):
        st = const(np.array([s], np.float32))
        return net.add_dequantize(net.add_quantize(t, st, trt.int8).get_output(0), st).get_output(0)

    net = b.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    h = fq(net.add_input("x", trt.float32, (1, 3, 8, 8)), SCALES[0])
    for i, ((k, c, ks), (q, s, bias)) in enumerate(zip(LAYERS, params(rng))):
        w = (q.astype(np.float32) * s.reshape(-1, 1, 1, 1)).astype(np.float32)
        conv = net.add_convolution_nd(h, k, (ks, ks), w, bias)
        conv.padding_nd = (ks // 2, ks // 2)
        h = conv.get_output(0)
        if i == 0:
            h = fq(net.add_activation(h, trt.ActivationType.RELU).get_output(0), SCALES[1])
    h.name = "y"
    net.mark_output(h)
    return net


if __name__ == "__main__":
    import trtlite as trt
    b = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = network(trt, b, np.random.default_rng(2026))
    open(sys.argv[1], "wb").write(bytes(b.build_serialized_network(net, b.create_builder_config())))
