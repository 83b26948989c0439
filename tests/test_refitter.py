"""trt.Refitter: an engine built with BuilderFlag.REFIT takes new weights and then computes what an engine freshly
built with those weights computes (optimized kernels, whose weight preparation -- Winograd filters, packed GEMM
panels -- is redone, and reference kernels); plans keep the flag and the new weights; misuse is a clear error."""
import numpy as np
import pytest

import trtlite as trt

LOG = trt.Logger(trt.Logger.ERROR)
SHAPE = (2, 4, 9, 9)


def make_weights(seed):
    rng = np.random.default_rng(seed)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {
        "conv3": (f(6, 4, 3, 3), f(6)),         # 3x3 stride 1: Winograd / packed GEMM candidates
        "conv5": (f(8, 6, 5, 5) * 0.2, f(8)),   # 5x5 stride 2: im2col GEMM
        "dw": (f(8, 1, 3, 3), None),            # depthwise, no bias
        "deconv": (f(8, 3, 2, 2) * 0.3, f(3)),
        "bn": (f(3), f(3)),                     # shift, scale
        "fc": (f(5, 3 * 6 * 6) * 0.1, f(5)),
    }


def build(w, refit=True, mode="opt", dynamic=False, serialize=False):
    builder = trt.Builder(LOG)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, (-1,) + SHAPE[1:] if dynamic else SHAPE)
    k, b = w["conv3"]
    c3 = net.add_convolution_nd(x, 6, (3, 3), trt.Weights(k), trt.Weights(b))
    c3.padding_nd = (1, 1)
    c3.name = "conv3"
    r = net.add_activation(c3.get_output(0), trt.ActivationType.RELU)
    r.name = "relu3"
    k, b = w["conv5"]
    c5 = net.add_convolution_nd(r.get_output(0), 8, (5, 5), trt.Weights(k), trt.Weights(b))
    c5.stride_nd = (2, 2)
    c5.padding_nd = (2, 2)
    c5.name = "conv5"
    dw = net.add_convolution_nd(c5.get_output(0), 8, (3, 3), trt.Weights(w["dw"][0]), trt.Weights())
    dw.num_groups = 8
    dw.padding_nd = (1, 1)
    dw.name = "dw"
    k, b = w["deconv"]
    de = net.add_deconvolution_nd(dw.get_output(0), 3, (2, 2), trt.Weights(k), trt.Weights(b))
    de.stride_nd = (1, 1)
    de.name = "deconv"
    sh, sc = w["bn"]
    bn = net.add_scale(de.get_output(0), trt.ScaleMode.CHANNEL, trt.Weights(sh), trt.Weights(sc), trt.Weights())
    bn.name = "bn"
    k, b = w["fc"]
    fc = net.add_fully_connected(bn.get_output(0), 5, trt.Weights(k), trt.Weights(b))
    fc.name = "fc"
    fc.get_output(0).name = "y"
    net.mark_output(fc.get_output(0))
    config = builder.create_builder_config()
    if refit:
        config.set_flag(trt.BuilderFlag.REFIT)
    if mode == "ref":
        config.builder_optimization_level = 0
    else:
        config.avg_timing_iterations = 0
    if dynamic:
        p = builder.create_optimization_profile()
        p.set_shape("x", (1,) + SHAPE[1:], SHAPE, (4,) + SHAPE[1:])
        config.add_optimization_profile(p)
    if serialize:
        return builder.build_serialized_network(net, config)
    return builder.build_engine(net, config)


ROLES = {"conv3": ("KERNEL", "BIAS"), "conv5": ("KERNEL", "BIAS"), "dw": ("KERNEL",), "deconv": ("KERNEL", "BIAS"),
         "bn": ("SHIFT", "SCALE"), "fc": ("KERNEL", "BIAS")}


def refit_all(engine, w, named=False):
    r = trt.Refitter(engine, LOG)
    for layer, roles in ROLES.items():
        for role, vals in zip(roles, [v for v in w[layer] if v is not None]):
            if named:
                assert r.set_named_weights(f"{layer}/{role}", vals)
            else:
                assert r.set_weights(layer, trt.WeightsRole[role], trt.Weights(vals))
    assert r.get_missing() == ([], []) and r.get_missing_weights() == []
    assert r.refit_cuda_engine()


def x_input(n=SHAPE[0], seed=7):
    return np.random.default_rng(seed).standard_normal((n,) + SHAPE[1:]).astype(np.float32)


@pytest.mark.parametrize("mode", ["opt", "ref"])
def test_refit_matches_a_fresh_build_with_the_new_weights(mode):
    w1, w2 = make_weights(1), make_weights(2)
    engine = build(w1, mode=mode)
    assert engine.refittable
    ctx = engine.create_execution_context()  # made before the refit: it sees the new weights
    x = x_input()
    before = ctx.infer({"x": x})["y"]
    r = trt.Refitter(engine, LOG)
    layers, roles = r.get_all()
    assert sorted(zip(layers, [ro.name for ro in roles])) == sorted((l, ro) for l, rs in ROLES.items() for ro in rs)
    assert sorted(r.get_all_weights()) == sorted(f"{l}/{ro}" for l, rs in ROLES.items() for ro in rs)
    refit_all(engine, w2)
    fresh = build(w2, refit=False, mode=mode).create_execution_context().infer({"x": x})["y"]
    after = ctx.infer({"x": x})["y"]
    assert np.abs(before - fresh).max() > 1e-2  # the weights really differ
    np.testing.assert_allclose(after, fresh, rtol=1e-5, atol=1e-5)
    # and back again, by name
    refit_all(engine, w1, named=True)
    np.testing.assert_allclose(ctx.infer({"x": x})["y"], before, rtol=1e-5, atol=1e-5)


def test_refit_one_layer_only_and_dynamic_shapes():
    w1 = make_weights(3)
    w2 = dict(w1, fc=make_weights(4)["fc"])
    engine = build(w1, dynamic=True)
    r = trt.Refitter(engine, LOG)
    r.set_weights("fc", trt.WeightsRole.KERNEL, w2["fc"][0])
    r.set_weights("fc", trt.WeightsRole.BIAS, w2["fc"][1])
    r.refit_cuda_engine()
    fresh = build(w2, refit=False, dynamic=True)
    ctx, ref = engine.create_execution_context(), fresh.create_execution_context()
    for n in (1, 3, 4):
        x = x_input(n, seed=n)
        ctx.set_input_shape("x", x.shape)
        ref.set_input_shape("x", x.shape)
        np.testing.assert_allclose(ctx.infer({"x": x})["y"], ref.infer({"x": x})["y"], rtol=1e-5, atol=1e-5)


def test_refitted_engine_serializes_new_weights_and_stays_refittable():
    w1, w2, w3 = make_weights(5), make_weights(6), make_weights(7)
    runtime = trt.Runtime(LOG)
    engine = runtime.deserialize_cuda_engine(build(w1, serialize=True))
    assert engine.refittable  # the flag survives the plan
    refit_all(engine, w2)
    again = runtime.deserialize_cuda_engine(engine.serialize())
    x = x_input()
    fresh2 = build(w2, refit=False).create_execution_context().infer({"x": x})["y"]
    np.testing.assert_allclose(again.create_execution_context().infer({"x": x})["y"], fresh2, rtol=1e-5, atol=1e-5)
    refit_all(again, w3)
    fresh3 = build(w3, refit=False).create_execution_context().infer({"x": x})["y"]
    np.testing.assert_allclose(again.create_execution_context().infer({"x": x})["y"], fresh3, rtol=1e-5, atol=1e-5)


def test_refit_keeps_scale_layers_that_a_normal_build_folds():
    """Without REFIT fold_scale folds the scale into the deconvolution before it (its weights are gone); with
    REFIT the builder keeps it, so its SHIFT/SCALE stay refittable."""
    w = make_weights(8)
    plain = build(w, refit=False)
    assert not plain.refittable
    info = plain.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE)
    assert "deconv + bn" in info
    refit_info = build(w).create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE)
    assert "deconv + bn" not in refit_info and any(line.startswith("bn [") for line in refit_info.splitlines())


def test_refitter_misuse_is_a_clear_error():
    w = make_weights(9)
    with pytest.raises(trt.StateError, match="not built with BuilderFlag.REFIT"):
        trt.Refitter(build(w, refit=False), LOG)
    with pytest.raises(TypeError, match="ICudaEngine"):
        trt.Refitter("engine", LOG)
    engine = build(w)
    r = trt.Refitter(engine, LOG)
    with pytest.raises(trt.NotFoundError, match="no layer 'nope'"):
        r.set_weights("nope", trt.WeightsRole.KERNEL, w["fc"][0])
    with pytest.raises(trt.InvalidArgumentError, match=r"layer 'dw' has no BIAS weights \(it has: KERNEL\)"):
        r.set_weights("dw", trt.WeightsRole.BIAS, np.zeros(8, np.float32))
    with pytest.raises(trt.InvalidArgumentError, match=r"layer 'bn' has no KERNEL weights \(it has: SHIFT, SCALE\)"):
        r.set_weights("bn", trt.WeightsRole.KERNEL, np.zeros(3, np.float32))
    with pytest.raises(trt.InvalidArgumentError, match=r"layer 'fc' KERNEL weights: 539 values given, the engine "
                                                       r"was built with 540"):
        r.set_weights("fc", trt.WeightsRole.KERNEL, np.zeros(539, np.float32))
    with pytest.raises(TypeError, match="must be float32"):
        r.set_weights("fc", trt.WeightsRole.BIAS, np.zeros(5, np.int32))
    with pytest.raises(trt.InvalidArgumentError, match=r"layer 'fc' has no CONSTANT weights \(it has: KERNEL, BIAS\)"):
        r.set_weights("fc", trt.WeightsRole.CONSTANT, np.zeros(5, np.float32))
    with pytest.raises(trt.UnsupportedError, match="not ANY"):
        r.set_weights("fc", trt.WeightsRole.ANY, np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="is not a trt.WeightsRole"):
        r.set_weights("fc", 9, np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="not a name get_all_weights"):
        r.set_named_weights("fc", np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="'BIASES' is not a WeightsRole name"):
        r.set_named_weights("fc/BIASES", np.zeros(5, np.float32))
    # nothing was applied by the failed calls: the engine still computes with w
    x = x_input()
    assert r.refit_cuda_engine()
    fresh = build(w, refit=False).create_execution_context().infer({"x": x})["y"]
    np.testing.assert_allclose(engine.create_execution_context().infer({"x": x})["y"], fresh, rtol=1e-5, atol=1e-5)
