"""Optimized softmax / normalization / shuffle / copy kernels (csrc/kernels/x86/softmax.c, normalization.c,
transpose.c, copy_ops.c) at layer level, and the fuse_layernorm builder pass.

Every layer test runs twice (conftest's kernel modes): "opt" takes the first applicable optimized kernel, "ref" builds
at optimization level 0 (reference kernels); both must match numpy float64, NaN/Inf included.  The opt engines are
checked to really use the optimized kernel.  The pass is checked on API-built patterns, on a LayerNorm exported by
torch.onnx at opsets 11-16 (where it arrives as nine layers), with the pass switched off, and where an intermediate is
a network output (no fusion).
"""
import io
import json

import numpy as np
import pytest

import trtlite as trt
from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


def kernels_of(engine):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return [l["kernel"] for l in info["layers"]]


def build_one(make, x_shapes, level=None, off=()):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    ins = [net.add_input("x%d" % i, trt.float32, s) for i, s in enumerate(x_shapes)]
    out = make(net, *ins)
    out.name = "y"
    net.mark_output(out)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if level is not None:
        config.builder_optimization_level = level
    for p in off:
        config.set_pass_enabled(p, False)
    return builder.build_engine(net, config)


def run_both(make, xs, ref, kernel):
    """Builds at the default level (optimized kernel, which must be `kernel`) and at level 0; both match ref."""
    for level in (None, 0):
        engine = build_one(make, [x.shape for x in xs], level)
        if level is None:
            assert kernel in kernels_of(engine), kernels_of(engine)
        out = engine.create_execution_context().infer({"x%d" % i: x for i, x in enumerate(xs)})["y"]
        assert_close(out, ref)


# ---- softmax -------------------------------------------------------------------------------------------------

def softmax_ref(x, axis):
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("shape", [(2, 5, 17, 33), (3, 130), (1, 4, 9, 70)])
def test_softmax_every_axis(build_and_run, rng, shape):
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    for axis in range(len(shape)):
        def make(net, t):
            layer = net.add_softmax(t)
            layer.axes = 1 << axis
            return layer.get_output(0)
        assert_close(build_and_run(make, {"x": x}), softmax_ref(x, axis))


@pytest.mark.parametrize("axis", [1, 2])
def test_softmax_nan_inf(axis):
    """A row holding +Inf, one holding NaN, one all -Inf and one with some -Inf: numpy's values on both kernels."""
    x = np.random.default_rng(3).standard_normal((2, 6, 21)).astype(np.float32)
    x[0, 1, 2] = np.inf
    x[0, 2, 5] = np.nan
    x[1, 3, 7] = -np.inf
    x[1, 4, 0] = -np.inf
    if axis == 2:
        x[1, 5, :] = -np.inf
    else:
        x[1, :, 9] = -np.inf

    def make(net, t):
        layer = net.add_softmax(t)
        layer.axes = 1 << axis
        return layer.get_output(0)
    ref = softmax_ref(x, axis)
    assert np.isnan(ref).any() and (ref == 0).any()
    run_both(make, [x], ref, "softmax.simd")


# ---- normalization -------------------------------------------------------------------------------------------

def norm_ref(x, axes, eps, scale, bias, groups=1):
    x = np.asarray(x, np.float64)
    if groups > 1:
        n, c = x.shape[:2]
        xg = x.reshape((n, groups, c // groups) + x.shape[2:])
        ax = tuple(range(2, xg.ndim))
        m = xg.mean(axis=ax, keepdims=True)
        v = ((xg - m) ** 2).mean(axis=ax, keepdims=True)
        y = ((xg - m) / np.sqrt(v + eps)).reshape(x.shape)
        if scale.shape[1] == groups and groups != c:
            scale = np.repeat(scale, c // groups, axis=1)
        if bias.shape[1] == groups and groups != c:
            bias = np.repeat(bias, c // groups, axis=1)
    else:
        with np.errstate(invalid="ignore"):
            m = x.mean(axis=axes, keepdims=True)
            v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
            y = (x - m) / np.sqrt(v + eps)
    return y * scale + bias


NORM_CASES = [
    # name, x shape, axes, groups, scale shape
    ("layer_last", (2, 13, 768), (2,), 1, (1, 1, 768)),
    ("layer_last2", (2, 5, 7, 9), (2, 3), 1, (1, 1, 7, 9)),
    ("layer_bcast", (3, 4, 33), (1, 2), 1, (1, 1, 33)),
    ("instance", (2, 6, 5, 7), (2, 3), 1, (1, 6, 1, 1)),
    ("group_per_channel", (2, 6, 5, 3), (2, 3), 3, (1, 6, 1, 1)),
    ("group_per_group", (2, 8, 4, 5), (2, 3), 4, (1, 4, 1, 1)),
]


@pytest.mark.parametrize("name,shape,axes,groups,sshape", NORM_CASES, ids=[c[0] for c in NORM_CASES])
def test_normalization(name, shape, axes, groups, sshape):
    rng = np.random.default_rng(len(name))
    x = (rng.standard_normal(shape) * 2 + 3).astype(np.float32)
    s = rng.standard_normal(sshape).astype(np.float32)
    b = rng.standard_normal(sshape).astype(np.float32)
    x[0].flat[3] = np.nan  # one normalized slice becomes NaN, as in numpy
    if len(shape) == 3:
        x[1].flat[5] = np.inf

    def make(net, t):
        layer = net.add_normalization(t, net.add_constant(sshape, s).get_output(0),
                                      net.add_constant(sshape, b).get_output(0), sum(1 << a for a in axes))
        layer.num_groups = groups
        return layer.get_output(0)
    with np.errstate(invalid="ignore"):
        ref = norm_ref(x, axes, 1e-5, s.astype(np.float64), b.astype(np.float64), groups)
    run_both(make, [x], ref, "normalization.rows")


# ---- shuffle and copies --------------------------------------------------------------------------------------

def test_transpose_nhwc_to_nchw(build_and_run, rng):
    x = rng.standard_normal((1, 14, 15, 40)).astype(np.float32)

    def make(net, t):
        layer = net.add_shuffle(t)
        layer.first_transpose = (0, 3, 1, 2)
        return layer.get_output(0)
    assert_close(build_and_run(make, {"x": x}), x.transpose(0, 3, 1, 2))


def test_channel_shuffle_and_reshape():
    """ShuffleNet's channel shuffle: reshape [N, 2, C/2, H, W], swap the group axes, then a reshape back."""
    x = np.random.default_rng(5).standard_normal((2, 24, 5, 7)).astype(np.float32)

    def make(net, t):
        a = net.add_shuffle(t)
        a.reshape_dims = (2, 2, 12, 5, 7)
        a.second_transpose = (0, 2, 1, 3, 4)
        b = net.add_shuffle(a.get_output(0))
        b.reshape_dims = (2, 24, 5, 7)
        return b.get_output(0)
    ref = x.reshape(2, 2, 12, 5, 7).transpose(0, 2, 1, 3, 4).reshape(2, 24, 5, 7)
    run_both(make, [x], ref, "shuffle.transpose")


@pytest.mark.parametrize("axis", [0, 1, 3])
def test_concat(axis):
    rng = np.random.default_rng(axis)
    shapes = [[2, 3, 4, 5] for _ in range(3)]
    for i, s in enumerate(shapes):
        s[axis] = i + 1
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]

    def make(net, *ts):
        layer = net.add_concatenation(list(ts))
        layer.axis = axis
        return layer.get_output(0)
    run_both(make, xs, np.concatenate(xs, axis), "concatenation.copy")


def test_slice_rows():
    x = np.random.default_rng(7).standard_normal((3, 9, 40)).astype(np.float32)
    run_both(lambda net, t: net.add_slice(t, (1, 8, 3), (2, 4, 30), (1, -2, 1)).get_output(0), [x],
             x[1:3, 8:0:-2, 3:33], "slice.rows")


def test_gather_rows():
    x = np.random.default_rng(8).standard_normal((4, 10, 6)).astype(np.float32)
    idx = np.array([[3, -1], [0, 9], [-10, 2]], np.int32)

    def make(net, t):
        i = net.add_constant(idx.shape, idx).get_output(0)
        return net.add_gather(t, i, 1).get_output(0)
    run_both(make, [x], np.take(x, idx, axis=1), "gather.rows")


def test_padding_rows():
    x = np.random.default_rng(9).standard_normal((2, 3, 6, 7)).astype(np.float32)
    ref = np.pad(x, ((0, 0), (0, 0), (2, 1), (0, 3)))[:, :, :, 1:]  # post 3 on W, crop 1 in front
    run_both(lambda net, t: net.add_padding_nd(t, (2, -1), (1, 3)).get_output(0), [x], ref, "padding.rows")


# ---- fuse_layernorm ------------------------------------------------------------------------------------------

def torch_layernorm_onnx(opset, shape=(2, 5, 32), affine=True):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    torch.manual_seed(opset)
    m = torch.nn.LayerNorm(shape[-1], elementwise_affine=affine)
    if affine:
        with torch.no_grad():
            m.weight.uniform_(-1, 1)
            m.bias.uniform_(-1, 1)
    f = io.BytesIO()
    torch.onnx.export(m, torch.randn(*shape), f, opset_version=opset, input_names=["x"], output_names=["y"],
                      dynamo=False)
    w = m.weight.detach().numpy().astype(np.float64) if affine else 1.0
    b = m.bias.detach().numpy().astype(np.float64) if affine else 0.0
    return f.getvalue(), (lambda x: norm_ref(x, (len(shape) - 1,), m.eps, w, b))


def parse_and_build(model, off=(), level=None):
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    net = builder.create_network(EXPLICIT)
    parser = trt.OnnxParser(net, logger)
    assert parser.parse(model), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if level is not None:
        config.builder_optimization_level = level
    for p in off:
        config.set_pass_enabled(p, False)
    return net.num_layers, builder.build_engine(net, config)


@pytest.mark.parametrize("opset,affine", [(11, True), (13, True), (16, True), (14, False)])
def test_torch_layernorm_becomes_one_step(opset, affine):
    model, ref = torch_layernorm_onnx(opset, affine=affine)
    x = (np.random.default_rng(opset).standard_normal((2, 5, 32)) * 3 + 1).astype(np.float32)
    n_layers, on = parse_and_build(model)
    _, off = parse_and_build(model, off=("fuse_layernorm",))
    _, lvl0 = parse_and_build(model, level=0)
    assert n_layers >= 7  # arrives unfused
    assert on.num_layers == 1 and kernels_of(on) == ["normalization.rows"], kernels_of(on)
    assert off.num_layers > 1 and "normalization.rows" not in kernels_of(off)
    for engine in (on, off, lvl0):
        assert_close(engine.create_execution_context().infer({"x": x})["y"], ref(x))


def _api_layernorm(net, t, var_out=False):
    """The exported pattern built through the API; with var_out the variance is a second output."""
    E = trt.ElementWiseOperation

    def const(v, shape=(1, 1, 1)):
        return net.add_constant(shape, np.full(shape, v, np.float32)).get_output(0)
    m = net.add_reduce(t, trt.ReduceOperation.AVG, 4, True).get_output(0)
    d = net.add_elementwise(t, m, E.SUB).get_output(0)
    sq = net.add_elementwise(d, const(2.0), E.POW).get_output(0)
    v = net.add_reduce(sq, trt.ReduceOperation.AVG, 4, True).get_output(0)
    s = net.add_unary(net.add_elementwise(v, const(1e-5), E.SUM).get_output(0), trt.UnaryOperation.SQRT)
    y = net.add_elementwise(d, s.get_output(0), E.DIV).get_output(0)
    g = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 1, 16)
    y = net.add_elementwise(y, net.add_constant(g.shape, g).get_output(0), E.PROD).get_output(0)
    y = net.add_elementwise(y, const(0.25), E.SUM).get_output(0)
    return (y, v) if var_out else y


@pytest.mark.parametrize("var_out", [False, True])
def test_api_layernorm_fusion(var_out):
    """Fires on the API-built pattern (one step); not when an intermediate (the variance) is a network output."""
    x = (np.random.default_rng(2).standard_normal((3, 4, 16)) * 2).astype(np.float32)
    g = np.linspace(-1, 1, 16).reshape(1, 1, 16)
    steps = {}
    for off in ((), ("fuse_layernorm",)):
        builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
        net = builder.create_network(EXPLICIT)
        t = net.add_input("x", trt.float32, x.shape)
        outs = _api_layernorm(net, t, var_out)
        outs = outs if var_out else (outs,)
        for i, o in enumerate(outs):
            o.name = "y%d" % i
            net.mark_output(o)
        config = builder.create_builder_config()
        for p in off:
            config.set_pass_enabled(p, False)
        engine = builder.build_engine(net, config)
        steps[off] = engine.num_layers
        res = engine.create_execution_context().infer({"x": x})
        assert_close(res["y0"], norm_ref(x, (2,), 1e-5, g, 0.25))
        if var_out:
            xd = x.astype(np.float64)
            assert_close(res["y1"], ((xd - xd.mean(2, keepdims=True)) ** 2).mean(2, keepdims=True))
    if var_out:
        assert steps[()] == steps[("fuse_layernorm",)], steps
    else:
        assert steps[()] == 1 and steps[("fuse_layernorm",)] > 1, steps


def test_layernorm_nan_inf_through_the_fusion():
    """NaN and Inf rows give numpy's NaNs with the pass on and off."""
    model, ref = torch_layernorm_onnx(13)
    x = np.random.default_rng(4).standard_normal((2, 5, 32)).astype(np.float32)
    x[0, 1, 3] = np.nan
    x[1, 2, 0] = np.inf
    x[1, 3, 4] = -np.inf
    with np.errstate(invalid="ignore"):
        want = ref(x)
    assert np.isnan(want).sum() == 3 * 32
    for off in ((), ("fuse_layernorm",)):
        engine = parse_and_build(model, off=off)[1]
        assert_close(engine.create_execution_context().infer({"x": x})["y"], want)
