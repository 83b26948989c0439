"""Dynamic shapes: -1 dims, optimization profiles and per-context input shapes, against numpy float64 references.

Network: x (-1, 3, -1, -1) -> 3x3 convolution (padding 1) + ReLU -> "feat" (N, 4, H, W), and the spatial mean of
feat -> "pooled" (N, 4).  Profile for x: min (1,3,4,4), opt (2,3,8,8), max (4,3,16,16).
"""
import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
MIN, OPT, MAX = (1, 3, 4, 4), (2, 3, 8, 8), (4, 3, 16, 16)
K = 4
RNG = np.random.default_rng(42)
CONV_W = (RNG.standard_normal((K, 3, 3, 3)) * 0.5).astype(np.float32)
CONV_B = RNG.standard_normal(K).astype(np.float32)


def ref_conv_relu(x):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    n, _, h, w = x.shape
    out = np.zeros((n, K, h, w))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + h, j:j + w], CONV_W[:, :, i, j].astype(np.float64))
    return np.maximum(out + CONV_B.reshape(1, -1, 1, 1), 0.0)


def reference(x):
    feat = ref_conv_relu(x)
    return {"feat": feat, "pooled": feat.mean(axis=(2, 3))}


def define(network):
    x = network.add_input("x", trt.float32, (-1, 3, -1, -1))
    conv = network.add_convolution_nd(x, K, (3, 3), CONV_W, CONV_B)
    conv.padding_nd = (1, 1)
    relu = network.add_activation(conv.get_output(0), trt.ActivationType.RELU)
    relu.get_output(0).name = "feat"
    mean = network.add_reduce(relu.get_output(0), trt.ReduceOperation.AVG, (1 << 2) | (1 << 3), False)
    mean.get_output(0).name = "pooled"
    network.mark_output(relu.get_output(0))
    network.mark_output(mean.get_output(0))
    return x


def build(profiles=((MIN, OPT, MAX),), logger=None):
    builder = trt.Builder(logger or trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    define(network)
    config = builder.create_builder_config()
    for mn, op, mx in profiles:
        profile = builder.create_optimization_profile()
        profile.set_shape("x", mn, op, mx)
        config.add_optimization_profile(profile)
    plan = builder.build_serialized_network(network, config)
    return trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)


@pytest.fixture(scope="module")
def engine():
    return build()


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def run_v2(context, x):
    context.set_input_shape("x", x.shape)
    outs = {n: np.full(tuple(context.get_tensor_shape(n)), np.nan, np.float32) for n in ("feat", "pooled")}
    assert context.execute_v2([x, outs["feat"], outs["pooled"]])
    return outs


def check(outs, x):
    ref = reference(x)
    for name in ("feat", "pooled"):
        assert_close(outs[name], ref[name])


# ------------------------------------------------------------------------------------------------------------

def test_engine_reports_dynamic_dims(engine):
    assert engine.get_tensor_shape("x") == (-1, 3, -1, -1)
    assert engine.get_tensor_shape("feat") == (-1, K, -1, -1)
    assert engine.get_tensor_shape("pooled") == (-1, K)
    assert engine.num_optimization_profiles == 1


def test_profile_shapes_are_reported(engine):
    expected = [MIN, OPT, MAX]
    assert [tuple(d) for d in engine.get_tensor_profile_shape("x", 0)] == expected
    assert [tuple(d) for d in engine.get_profile_shape(0, "x")] == expected
    assert [tuple(d) for d in engine.get_profile_shape(0, 0)] == expected
    with pytest.raises(trt.Error):
        engine.get_tensor_profile_shape("x", 1)
    with pytest.raises(trt.Error, match="feat"):
        engine.get_tensor_profile_shape("feat", 0)        # not an input


def test_profile_object():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    profile = builder.create_optimization_profile()
    assert profile.get_shape("x") == []
    profile.set_shape("x", trt.Dims4(*MIN), OPT, list(MAX))
    assert [tuple(d) for d in profile.get_shape("x")] == [MIN, OPT, MAX]
    config = builder.create_builder_config()
    assert config.add_optimization_profile(profile) == 0
    assert config.num_optimization_profiles == 1


def test_profile_truth_value():
    profile = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_optimization_profile()
    assert bool(profile) == profile.__bool__() == False  # noqa: E712
    profile.set_shape("x", MIN, OPT, MAX)
    assert bool(profile) and profile.__bool__()


def test_output_shapes_follow_input_shapes(engine):
    context = engine.create_execution_context()
    assert context.all_binding_shapes_specified is False
    for n, h, w in [(1, 4, 4), (2, 8, 8), (4, 16, 16), (3, 5, 11), (1, 16, 4)]:
        assert context.set_input_shape("x", (n, 3, h, w))
        assert context.get_tensor_shape("x") == (n, 3, h, w)
        assert context.get_tensor_shape("feat") == (n, K, h, w)
        assert context.get_tensor_shape("pooled") == (n, K)
        assert context.all_binding_shapes_specified is True


@pytest.mark.parametrize("via", ["execute_v2", "execute_async_v3", "infer"])
def test_one_context_runs_many_shapes(engine, via):
    """Smaller and larger than opt, up to max, mixed, back again -- one context, exact output shapes."""
    context = engine.create_execution_context()
    shapes = [OPT, MIN, MAX, (1, 3, 6, 5), (3, 3, 12, 9), (4, 3, 4, 16), (1, 3, 16, 16), OPT]
    for i, shape in enumerate(shapes):
        x = data(shape, seed=i)
        if via == "execute_v2":
            outs = run_v2(context, x)
        elif via == "execute_async_v3":
            context.set_input_shape("x", shape)
            outs = {n: np.full(tuple(context.get_tensor_shape(n)), np.nan, np.float32) for n in ("feat", "pooled")}
            context.set_tensor_address("x", x)
            for n, a in outs.items():
                context.set_tensor_address(n, a)
            assert context.execute_async_v3(0)
        else:
            outs = context.infer({"x": x})
        assert outs["feat"].shape == (shape[0], K) + shape[2:]
        assert outs["pooled"].shape == (shape[0], K)
        check(outs, x)


def test_contexts_keep_their_own_shapes(engine):
    a = engine.create_execution_context()
    b = engine.create_execution_context()
    xa = data((1, 3, 5, 7), seed=1)
    xb = data((4, 3, 16, 12), seed=2)
    a.set_input_shape("x", xa.shape)
    b.set_input_shape("x", xb.shape)
    assert a.get_tensor_shape("feat") == (1, K, 5, 7)
    assert b.get_tensor_shape("feat") == (4, K, 16, 12)
    for _ in range(2):
        check(run_v2(a, xa), xa)
        check(run_v2(b, xb), xb)


def test_growing_shape_rechecks_bound_arrays(engine):
    context = engine.create_execution_context()
    x = data(MIN, seed=3)
    context.set_input_shape("x", MIN)
    feat = np.empty((1, K, 4, 4), np.float32)
    pooled = np.empty((1, K), np.float32)
    context.set_tensor_address("x", x)
    context.set_tensor_address("feat", feat)
    context.set_tensor_address("pooled", pooled)
    context.execute_async_v3(0)
    check({"feat": feat, "pooled": pooled}, x)
    context.set_input_shape("x", (2, 3, 4, 4))            # the bound arrays are now too small
    with pytest.raises(trt.ShapeError, match="'x'|'feat'|'pooled'"):
        context.execute_async_v3(0)
    x2 = data((2, 3, 4, 4), seed=4)
    feat2, pooled2 = np.empty((2, K, 4, 4), np.float32), np.empty((2, K), np.float32)
    for n, a in (("x", x2), ("feat", feat2), ("pooled", pooled2)):
        context.set_tensor_address(n, a)
    context.execute_async_v3(0)
    check({"feat": feat2, "pooled": pooled2}, x2)


# ------------------------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 3, 8, 8), (2, 3, 17, 8), (2, 3, 8, 3), (0, 3, 8, 8), (2, 2, 8, 8)],
                         ids=["batch_above_max", "h_above_max", "w_below_min", "zero_batch", "fixed_dim_differs"])
def test_shape_outside_profile_raises_shape_error_naming_input(engine, shape):
    context = engine.create_execution_context()
    context.set_input_shape("x", OPT)
    with pytest.raises(trt.ShapeError) as ei:
        context.set_input_shape("x", shape)
    assert "'x'" in str(ei.value)
    assert isinstance(ei.value, ValueError)
    # the context keeps the last valid shape and still works
    assert context.get_tensor_shape("x") == OPT
    x = data(OPT, seed=5)
    check(run_v2(context, x), x)


def test_wrong_rank_raises_shape_error(engine):
    context = engine.create_execution_context()
    for shape in [(2, 3, 8), (1, 2, 3, 8, 8)]:
        with pytest.raises(trt.ShapeError, match="'x'"):
            context.set_input_shape("x", shape)


def test_set_input_shape_errors(engine):
    context = engine.create_execution_context()
    with pytest.raises(trt.NotFoundError, match="'nope'"):
        context.set_input_shape("nope", OPT)
    with pytest.raises(trt.Error, match="'feat'"):
        context.set_input_shape("feat", (2, K, 8, 8))        # an output
    with pytest.raises(TypeError):
        context.set_input_shape("x", "2,3,8,8")


def test_infer_with_shape_outside_profile(engine):
    with pytest.raises(trt.ShapeError, match="'x'"):
        engine.create_execution_context().infer({"x": data((8, 3, 8, 8))})


@pytest.mark.parametrize("via", ["execute_v2", "execute_async_v3"])
def test_executing_without_input_shape_raises_state_error(engine, via):
    context = engine.create_execution_context()
    x = data(OPT)
    feat, pooled = np.empty((2, K, 8, 8), np.float32), np.empty((2, K), np.float32)
    with pytest.raises(trt.StateError) as ei:
        if via == "execute_v2":
            context.execute_v2([x, feat, pooled])
        else:
            for n, a in (("x", x), ("feat", feat), ("pooled", pooled)):
                context.set_tensor_address(n, a)
            context.execute_async_v3(0)
    assert "'x'" in str(ei.value) and "set_input_shape" in str(ei.value)
    # before any shape is set, outputs report their -1 dims
    assert context.get_tensor_shape("feat") == (-1, K, -1, -1)
    context.set_input_shape("x", OPT)
    check(run_v2(context, x), x)


def test_state_error_names_the_input_left_unset():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    a = network.add_input("a", trt.float32, (-1, 4))
    b = network.add_input("b", trt.float32, (-1, 4))
    s = network.add_elementwise(a, b, trt.ElementWiseOperation.SUM)
    s.get_output(0).name = "s"
    network.mark_output(s.get_output(0))
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("a", (1, 4), (2, 4), (8, 4))
    profile.set_shape("b", (1, 4), (2, 4), (8, 4))
    config.add_optimization_profile(profile)
    engine = builder.build_engine(network, config)
    context = engine.create_execution_context()
    context.set_input_shape("a", (3, 4))
    assert context.all_binding_shapes_specified is False
    with pytest.raises(trt.StateError, match="'b'"):
        context.execute_v2([np.zeros((3, 4), np.float32)] * 2 + [np.zeros((3, 4), np.float32)])
    context.set_input_shape("b", (3, 4))
    xa, xb = data((3, 4), 1), data((3, 4), 2)
    assert_close(context.infer({"a": xa, "b": xb})["s"], xa.astype(np.float64) + xb)


def test_missing_profile_is_a_build_error_naming_the_input():
    class Rec(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.errors = []

        def log(self, severity, msg):
            if severity <= trt.ILogger.Severity.ERROR:
                self.errors.append(msg)

    logger = Rec()
    builder = trt.Builder(logger)
    network = builder.create_network(EXPLICIT)
    define(network)
    with pytest.raises(trt.Error) as ei:
        builder.build_serialized_network(network, builder.create_builder_config())
    assert "'x'" in str(ei.value) and "profile" in str(ei.value)
    assert logger.errors and "'x'" in logger.errors[-1]


def test_profile_validation_errors():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    profile = builder.create_optimization_profile()
    with pytest.raises(trt.ShapeError, match="'x'"):
        profile.set_shape("x", OPT, MIN, MAX)                  # min > opt
    with pytest.raises(trt.ShapeError, match="'x'"):
        profile.set_shape("x", (1, 3, 4), OPT, MAX)            # ranks differ
    config = builder.create_builder_config()
    with pytest.raises(trt.Error):
        config.add_optimization_profile(profile)               # no shapes
    with pytest.raises(TypeError):
        config.add_optimization_profile(None)

    network = builder.create_network(EXPLICIT)
    define(network)
    wrong_name = builder.create_optimization_profile()
    wrong_name.set_shape("x", MIN, OPT, MAX)
    wrong_name.set_shape("image", MIN, OPT, MAX)
    config = builder.create_builder_config()
    config.add_optimization_profile(wrong_name)
    with pytest.raises(trt.NotFoundError, match="'image'"):
        builder.build_serialized_network(network, config)

    fixed = builder.create_optimization_profile()
    fixed.set_shape("x", (1, 2, 4, 4), (2, 2, 8, 8), (4, 2, 16, 16))   # C is fixed at 3 in the network
    config = builder.create_builder_config()
    config.add_optimization_profile(fixed)
    with pytest.raises(trt.ShapeError, match="'x'"):
        builder.build_serialized_network(network, config)


def test_profile_max_shape_over_the_element_limit_is_refused():
    """The 2^40-element limit of input shapes holds for profile shapes too (a max of (2^40, 4) used to build and
    only fail at context creation with OutOfMemoryError)."""
    builder = trt.Builder(trt.Logger(trt.Logger.INTERNAL_ERROR))
    network = builder.create_network(EXPLICIT)
    x = network.add_input("x", trt.float32, (-1, 4))
    y = network.add_unary(x, trt.UnaryOperation.NEG).get_output(0)
    network.mark_output(y)
    profile = builder.create_optimization_profile()
    with pytest.raises(trt.ShapeError, match="'x'") as ei:
        profile.set_shape("x", (1, 4), (1, 4), (2 ** 40, 4))
    assert "2^40" in str(ei.value)
    with pytest.raises(trt.ShapeError, match="'x'.*overflows"):
        profile.set_shape("x", (1, 4), (1, 4), (2 ** 62, 4))
    assert profile.get_shape("x") == []                                 # nothing was recorded
    profile.set_shape("x", (1, 4), (2, 4), (2 ** 20, 4))                 # within the limit: fine
    config = builder.create_builder_config()
    config.add_optimization_profile(profile)
    engine = builder.build_engine(network, config)
    assert tuple(engine.get_tensor_profile_shape("x", 0)[2]) == (2 ** 20, 4)


def test_second_optimization_profile_can_be_selected():
    engine = build(profiles=[(MIN, OPT, MAX), ((5, 3, 4, 4), (6, 3, 8, 8), (8, 3, 8, 8))])
    assert engine.num_optimization_profiles == 2
    assert [tuple(d) for d in engine.get_tensor_profile_shape("x", 1)] == [(5, 3, 4, 4), (6, 3, 8, 8), (8, 3, 8, 8)]
    context = engine.create_execution_context()
    assert context.active_optimization_profile == 0
    context.set_optimization_profile_async(1, 0)
    assert context.active_optimization_profile == 1
    x = data((6, 3, 5, 7), seed=8)
    check(run_v2(context, x), x)
    with pytest.raises(trt.ShapeError, match="'x'"):
        context.set_input_shape("x", OPT)                       # batch 2 is outside profile 1


def test_zero_batch_and_one_pixel_inputs():
    engine = build(profiles=[((0, 3, 1, 1), OPT, MAX)])
    context = engine.create_execution_context()
    for shape in [(0, 3, 8, 8), (1, 3, 1, 1), (0, 3, 1, 1), (3, 3, 2, 9), (1, 3, 1, 1)]:
        x = data(shape, seed=sum(shape))
        outs = context.infer({"x": x})
        assert outs["feat"].shape == (shape[0], K) + shape[2:]
        assert outs["pooled"].shape == (shape[0], K)
        check(outs, x)
    # explicit empty bindings for batch 0 (zero-size arrays, no data)
    context.set_input_shape("x", (0, 3, 4, 4))
    empty = [np.empty((0, 3, 4, 4), np.float32), np.empty((0, K, 4, 4), np.float32), np.empty((0, K), np.float32)]
    assert context.execute_v2(empty)


def test_fixed_dimension_profile_error_shows_the_profile():
    builder = trt.Builder(trt.Logger(trt.Logger.INTERNAL_ERROR))
    network = builder.create_network(EXPLICIT)
    define(network)
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 2, 4, 4), (2, 2, 8, 8), (4, 2, 16, 16))
    config = builder.create_builder_config()
    config.add_optimization_profile(profile)
    with pytest.raises(trt.ShapeError) as ei:
        builder.build_serialized_network(network, config)
    assert "(1, 2, 4, 4)" in str(ei.value) and "(4, 2, 16, 16)" in str(ei.value)
