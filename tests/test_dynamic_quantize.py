"""network.add_dynamic_quantize (TensorRT 10's IDynamicQuantizeLayer, NVFP4): FP4 data and FP8 block scales
computed at run time, checked against a float64 reference written here from the formats' definitions (FP4 e2m1's
and FP8 e4m3fn's value grids, round to nearest with ties to the even code, saturating) -- not ml_dtypes."""
import numpy as np
import pytest

import trtlite as trt

DT = trt.DataType
LOGGER = trt.Logger(trt.Logger.ERROR)


def e4m3(code):
    s, e, m = code >> 7, (code >> 3) & 15, code & 7
    if e == 15 and m == 7:
        return np.nan
    v = m * 2.0 ** -9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
    return -v if s else v


def e2m1(code):
    s, e, m = code >> 3, (code >> 1) & 3, code & 1
    v = m * 0.5 if e == 0 else (1 + m / 2) * 2.0 ** (e - 1)
    return -v if s else v


FP8 = [(e4m3(c), c) for c in range(128) if not np.isnan(e4m3(c))]
FP4 = [(e2m1(c), c) for c in range(8)]


def encode(v, grid, bits):
    """Nearest code (ties to the even code), saturating at the grid's maximum; v >= 0 or negative by sign bit."""
    sign = 1 << (bits - 1) if v < 0 else 0
    a = min(abs(v), grid[-1][0])
    best = min(grid, key=lambda g: (abs(g[0] - a), g[1] & 1))
    return best[1] | (sign if best[0] != 0 or v < 0 else 0)


def reference(x, axis, bs, dq=1.0):
    """(FP4 codes, FP8 codes) of x in float64."""
    x = np.moveaxis(x.astype(np.float64), axis, -1)
    blocks = x.reshape(x.shape[:-1] + (x.shape[-1] // bs, bs))
    amax = np.abs(blocks).max(-1)
    s8 = np.vectorize(lambda v: encode(v, FP8, 8))(amax / 6.0 / dq).astype(np.uint8)
    eff = np.vectorize(e4m3)(s8) * dq
    safe = np.where(eff == 0, 1.0, eff)
    ratio = blocks / safe[..., None]
    q = np.vectorize(lambda v: encode(v, FP4, 4))(ratio).astype(np.uint8)
    return (np.moveaxis(q.reshape(x.shape), -1, axis), np.moveaxis(s8, -1, axis),
            np.moveaxis(ratio.reshape(x.shape), -1, axis))


def run_layer(x, add, out_type=DT.FP4, scale_type=DT.FP8, dq=None, in_type=DT.FLOAT, dyn=None):
    """(layer, data codes, scale codes): layer = add(network, input tensor), built (through a plan) and run on x;
    dyn: the index of a dim made dynamic (profile 1 .. 2x)."""
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    shape = tuple(-1 if dyn is not None and i == dyn else d for i, d in enumerate(x.shape))
    layer = add(net, net.add_input("x", in_type, shape))
    if dq is not None:
        layer.set_input(1, net.add_constant((), trt.Weights(np.array(dq, np.float32))).get_output(0))
    assert layer.num_outputs == 2 and layer.get_output(0).dtype == out_type and \
        layer.get_output(1).dtype == scale_type
    layer.get_output(0).name, layer.get_output(1).name = "q", "s"
    net.mark_output(layer.get_output(0))
    net.mark_output(layer.get_output(1))
    cfg = b.create_builder_config()
    if dyn is not None:
        p = b.create_optimization_profile()
        lo, hi = list(x.shape), list(x.shape)
        lo[dyn], hi[dyn] = 1, x.shape[dyn] * 2
        p.set_shape("x", lo, x.shape, hi)
        cfg.add_optimization_profile(p)
    eng = trt.Runtime(LOGGER).deserialize_cuda_engine(b.build_serialized_network(net, cfg))
    out = eng.create_execution_context().infer({"x": x})
    return layer, np.asarray(out["q"]).view(np.uint8), np.asarray(out["s"]).view(np.uint8)


def build_run(x, axis, bs, dq=None, in_type=DT.FLOAT):
    return run_layer(x, lambda net, t: net.add_dynamic_quantize(t, axis, bs, DT.FP4, DT.FP8), dq=dq,
                     in_type=in_type)[1:]


def check(x, axis, bs, dq=1.0, in_type=DT.FLOAT):
    q, s = build_run(x, axis, bs, None if dq == 1.0 else dq, in_type)
    rq, rs, ratio = reference(x, axis, bs, dq)
    assert s.shape == rs.shape and q.shape == x.shape
    np.testing.assert_array_equal(s, rs)
    # float32 division may land on the other side of a rounding tie than float64: only near-ties may differ
    # (FP4's grid steps are 0.5, 1 and 2, so ties sit at multiples of 0.25)
    near_tie = np.isclose(np.abs(ratio) * 4 % 1, 0.0, atol=1e-5) | np.isclose(np.abs(ratio) * 4 % 1, 1.0, atol=1e-5)
    assert np.all((q == rq) | near_tie), np.argwhere(q != rq)[:5]


@pytest.mark.parametrize("axis", [-1, 0])
def test_nvfp4_2d_against_float64(axis):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((32, 48)) * rng.choice([0.01, 1.0, 300.0], (32, 1))).astype(np.float32)
    x[0, :16] = 0.0  # an all-zero block: scale 0, data 0
    check(x, axis, 16)


def test_nvfp4_3d_double_quant_scale_and_half_input():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 32)).astype(np.float16)
    check(x, 2, 16, dq=0.0625, in_type=DT.HALF)


def test_refusals_name_the_layer():
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    t = net.add_input("x", DT.FLOAT, (4, 20))
    with pytest.raises(trt.ShapeError, match="DynamicQuantize.*multiple of block_size 16"):
        net.add_dynamic_quantize(t, -1, 16, DT.FP4, DT.FP8)
    with pytest.raises(trt.UnsupportedError, match="NVFP4 .* or MXFP8 .* got FP8 / FP8"):
        net.add_dynamic_quantize(t, -1, 4, DT.FP8, DT.FP8)
    t3 = net.add_input("y", DT.FLOAT, (2, 4, 16, 16))
    with pytest.raises(trt.ShapeError, match="2-D or 3-D"):
        net.add_dynamic_quantize(t3, -1, 16, DT.FP4, DT.FP8)
    layer = net.add_dynamic_quantize(t, -1, 4, DT.FP4, DT.FP8)
    with pytest.raises(trt.UnsupportedError, match="fixed"):
        layer.block_size = 8


def mx_reference(x, axis, bs):
    """(FP8 codes, E8M0 codes) of MXFP8 in float64, from the OCP Microscaling definition: scale 2^(floor(log2
    amax) - 8) clamped to 2^-127 .. 2^127 (all-zero block: 2^-127), data FP8(x / scale) saturating."""
    import math
    x = np.moveaxis(x.astype(np.float64), axis, -1)
    blocks = x.reshape(x.shape[:-1] + (x.shape[-1] // bs, bs))
    amax = np.abs(blocks).max(-1)
    shared = np.vectorize(lambda v: -127 if v == 0 else min(max(math.frexp(v)[1] - 1 - 8, -127), 127))(amax)
    ratio = blocks / np.exp2(shared.astype(np.float64))[..., None]
    q = np.vectorize(lambda v: encode(v, FP8, 8))(ratio).astype(np.uint8)
    return (np.moveaxis(q.reshape(x.shape), -1, axis), np.moveaxis((shared + 127).astype(np.uint8), -1, axis),
            np.moveaxis(ratio.reshape(x.shape), -1, axis))


@pytest.mark.parametrize("axis", [-1, 1])
def test_mxfp8_against_float64(axis):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((2, 64, 64)) * rng.choice([1e-30, 0.01, 1.0, 3e4], (2, 64, 1))).astype(np.float32)
    x[0, :32, :32] = 0.0                      # all-zero blocks
    x[1, 0, :32] = 4.0                        # amax a power of two
    x[1, 1, :32] = np.float32(3.99999976)     # just below one
    x[1, 2, 0] = 1e-40                        # subnormal amax: the scale clamps at 2^-127
    def add(net, t):
        layer = net.add_dynamic_quantize(t, axis, 32, DT.FP8, DT.E8M0)
        assert layer.to_type == DT.FP8 and layer.scale_type == DT.E8M0
        with pytest.raises(trt.UnsupportedError, match="MXFP8.*no double-quantization scale"):
            layer.set_input(1, net.add_constant((), trt.Weights(np.array(1.0, np.float32))).get_output(0))
        return layer

    _, q, s = run_layer(x, add, DT.FP8, DT.E8M0)
    rq, rs, ratio = mx_reference(x, axis, 32)
    np.testing.assert_array_equal(s, rs)
    # x / scale is exact (a power-of-two scale), so the data codes match exactly
    np.testing.assert_array_equal(q, rq)


# ---- TensorRT 10's block shapes (add_dynamic_quantize_v2: 2-D and 3-D blocks) ----------------------------------------

def blocked_amax(x, block):
    """(x split as [d0/b0, b0, d1/b1, b1, ..] in float64, |x|'s max over each block with the block axes kept)."""
    xb = x.astype(np.float64).reshape(sum(((d // b, b) for d, b in zip(x.shape, block)), ()))
    return xb, np.abs(xb).max(axis=tuple(range(1, xb.ndim, 2)), keepdims=True)


def reference_blocks(x, block, dq=1.0):
    """(FP4 codes, FP8 codes [d/b per dim], ratios) of NVFP4 with this block shape, in float64."""
    xb, amax = blocked_amax(x, block)
    s8 = np.vectorize(lambda v: encode(v, FP8, 8))(amax / 6.0 / dq).astype(np.uint8)
    eff = np.vectorize(e4m3)(s8) * dq
    ratio = xb / np.where(eff == 0, 1.0, eff)
    q = np.vectorize(lambda v: encode(v, FP4, 4))(ratio).astype(np.uint8)
    sshape = tuple(d // b for d, b in zip(x.shape, block))
    return q.reshape(x.shape), s8.reshape(sshape), ratio.reshape(x.shape)


def run_v2(x, block, out_type=DT.FP4, scale_type=DT.FP8, dq=None, in_type=DT.FLOAT, dyn=None):
    if in_type == DT.HALF:
        x = x.astype(np.float16)
    return run_layer(x, lambda net, t: net.add_dynamic_quantize_v2(t, block, out_type, scale_type), out_type,
                     scale_type, dq, in_type, dyn)


def check_v2(x, block, dq=1.0, **kw):
    full = tuple(d if b == -1 else b for d, b in zip(x.shape, block))
    layer, q, s = run_v2(x, block, dq=None if dq == 1.0 else dq, **kw)
    assert layer.block_shape == full
    rq, rs, ratio = reference_blocks(x, full, dq)
    assert s.shape == rs.shape and q.shape == x.shape
    np.testing.assert_array_equal(s, rs)
    near_tie = np.isclose(np.abs(ratio) * 4 % 1, 0.0, atol=1e-5) | np.isclose(np.abs(ratio) * 4 % 1, 1.0, atol=1e-5)
    assert np.all((q == rq) | near_tie), np.argwhere(q != rq)[:5]
    return q, s


@pytest.mark.parametrize("block", [(16, 16), (8, 16), (-1, 16), (32, 1)])
def test_nvfp4_2d_blocks_against_float64(block):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((32, 48)) * rng.choice([0.01, 1.0, 300.0], (32, 1))).astype(np.float32)
    x[:8, :16] = 0.0  # an all-zero block: scale 0, data 0
    check_v2(x, block)


def test_nvfp4_3d_blocks_double_quant_half_and_dynamic_dim():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((3, 8, 32)).astype(np.float32) * 5
    check_v2(x.astype(np.float16).astype(np.float32), (1, 4, 16), dq=0.0625, in_type=DT.HALF)
    check_v2(x, (1, 8, 8), dyn=0)  # a dynamic unblocked dim
    check_v2(x, (3, 2, 32))


def test_block_shape_of_one_axis_matches_add_dynamic_quantize():
    rng = np.random.default_rng(13)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    _, q2, s2 = run_v2(x, (1, 16))
    q1, s1 = build_run(x, -1, 16)
    np.testing.assert_array_equal(q2, q1)
    np.testing.assert_array_equal(s2, s1)
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    layer = net.add_dynamic_quantize(net.add_input("x", DT.FLOAT, (16, 32)), 0, 8, DT.FP4, DT.FP8)
    assert layer.block_shape == (8, 1) and layer.axis == 0 and layer.block_size == 8


def test_mxfp8_2d_blocks_against_float64():
    import math
    rng = np.random.default_rng(14)
    x = (rng.standard_normal((64, 64)) * rng.choice([1e-3, 1.0, 3e4], (64, 1))).astype(np.float32)
    x[32:, 32:] = 0.0
    layer, q, s = run_v2(x, (32, 32), DT.FP8, DT.E8M0)
    assert layer.axis == -1 and layer.block_size == 0
    xb, amax = blocked_amax(x, (32, 32))
    shared = np.vectorize(lambda v: -127 if v == 0 else min(max(math.frexp(v)[1] - 1 - 8, -127), 127))(amax)
    rq = np.vectorize(lambda v: encode(v, FP8, 8))(xb / np.exp2(shared)).astype(np.uint8)
    np.testing.assert_array_equal(s, (shared + 127).astype(np.uint8).reshape(2, 2))
    np.testing.assert_array_equal(q, rq.reshape(x.shape))


def test_block_shape_refusals_name_the_layer():
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    t = net.add_input("x", DT.FLOAT, (16, 20))
    with pytest.raises(trt.ShapeError, match=r"DynamicQuantize.*block_shape \(16,\) must have the input's rank 2"):
        net.add_dynamic_quantize_v2(t, (16,), DT.FP4, DT.FP8)
    with pytest.raises(trt.ShapeError, match="axis 1.*multiple of block_size 16, got 20"):
        net.add_dynamic_quantize_v2(t, (16, 16), DT.FP4, DT.FP8)
    with pytest.raises(ValueError, match=r"block_shape\[0\] must be >= 1 or -1, got 0"):
        net.add_dynamic_quantize_v2(t, (0, 4), DT.FP4, DT.FP8)
    with pytest.raises(trt.ShapeError, match="blocks no dim"):
        net.add_dynamic_quantize_v2(t, (1, 1), DT.FP4, DT.FP8)
    with pytest.raises(TypeError, match="block_shape must be a sequence of ints"):
        net.add_dynamic_quantize_v2(t, 16, DT.FP4, DT.FP8)
    d = net.add_input("d", DT.FLOAT, (-1, 16))
    with pytest.raises(trt.ShapeError, match=r"block_shape\[0\] = -1 \(the whole extent\) needs a static dim 0"):
        net.add_dynamic_quantize_v2(d, (-1, 16), DT.FP4, DT.FP8)
    with pytest.raises(trt.ShapeError, match=r"\(axis 0\) must be static.*got -1 in shape \(-1, 16\)"):
        net.add_dynamic_quantize_v2(d, (2, 16), DT.FP4, DT.FP8)
    layer = net.add_dynamic_quantize_v2(t, (4, 4), DT.FP4, DT.FP8)
    with pytest.raises(trt.UnsupportedError, match="fixed"):
        layer.block_shape = (2, 2)
