"""Memory of the build process (issue 10, session 11): the ONNX parser holds the weights as the protobuf or as numpy
arrays but not both (trtlite/onnx/loading.py drop_weight_data), constant folding frees the constants it consumed
(builder/passes/constant_fold.c), and build_serialized_network frees each weight buffer of its throw-away engine as
soon as the plan holds it (serialize/writer.c trtl_engine_serialize_consume).  Checked here by what they must keep
unchanged -- plan bytes, outputs against float64 numpy / onnxruntime -- and by the slimmed protobuf itself, not by
RSS (noisy on a shared machine; benchmarks/zoo/run.py measures that)."""
import numpy as np
import pytest

import trtlite as trt

from onnx_helpers import helper, make_model, ort_run, assert_outputs_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
MO = trt.MatrixOperation


def mixed_net(net, rng):
    """Weights of every kind the plan writer frees, each over its 64 KiB threshold: a convolution's kernel, two
    fully connected layers sharing one weights array (a buffer two nodes point at), a constant transposed by
    constant folding (its input then unread) into a matrix multiply, a constant tensor added elementwise, and a
    small constant that stays.  Returns (inputs, output, float64 reference)."""
    C, K, H, W, N, F = 32, 96, 16, 12, 32, 600
    x = rng.standard_normal((1, C, H, W)).astype(np.float32)
    wc = (rng.standard_normal((K, C, 3, 3)) * 0.1).astype(np.float32)   # 108 KiB
    bc = (rng.standard_normal(K) * 0.1).astype(np.float32)
    big = (rng.standard_normal((1, K, H, W)) * 0.1).astype(np.float32)  # constant tensor, 72 KiB
    xt = net.add_input("x", trt.float32, x.shape)
    y = net.add_convolution_nd(xt, K, (3, 3), trt.Weights(wc), trt.Weights(bc))
    y.padding_nd = (1, 1)
    h = net.add_elementwise(y.get_output(0), net.add_constant(big.shape, big).get_output(0),
                            trt.ElementWiseOperation.SUM).get_output(0)
    h = net.add_activation(h, trt.ActivationType.RELU).get_output(0)
    wf = (rng.standard_normal((N, K * H * W)) * 0.01).astype(np.float32)  # 2.3 MiB, used twice
    f1 = net.add_fully_connected(h, N, trt.Weights(wf), trt.Weights()).get_output(0)
    f2 = net.add_fully_connected(h, N, trt.Weights(wf), trt.Weights()).get_output(0)
    s = net.add_elementwise(f1, f2, trt.ElementWiseOperation.SUM).get_output(0)
    s = net.add_shuffle(s)
    s.reshape_dims = (1, N)
    wt = (rng.standard_normal((F, N)) * 0.05).astype(np.float32)  # 75 KiB [F, N]: transposed by a folded shuffle
    c = net.add_constant(wt.shape, wt).get_output(0)
    tr = net.add_shuffle(c)
    tr.first_transpose = (1, 0)
    out = net.add_matrix_multiply(s.get_output(0), MO.NONE, tr.get_output(0), MO.NONE).get_output(0)
    xf = x.astype(np.float64)
    pad = np.pad(xf[0], ((0, 0), (1, 1), (1, 1)))
    conv = np.zeros((K, H, W))
    for i in range(3):
        for j in range(3):
            conv += np.einsum("kc,chw->khw", wc[:, :, i, j].astype(np.float64), pad[:, i:i + H, j:j + W])
    hf = np.maximum(conv + bc[:, None, None] + big[0], 0).reshape(-1)
    sf = 2 * (wf.astype(np.float64) @ hf)
    ref = (sf[None, :] @ wt.T.astype(np.float64))
    return {"x": x}, out, ref


def build_both(disabled=()):
    """(build_serialized_network's plan, build_engine(...).serialize(), inputs, reference), kernels chosen
    without timing so that both builds choose alike."""
    plans = []
    for serialized in (True, False):
        builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
        net = builder.create_network(EXPLICIT)
        inputs, out, ref = mixed_net(net, np.random.default_rng(3))
        out.name = "y"
        net.mark_output(out)
        config = builder.create_builder_config()
        config.avg_timing_iterations = 0
        for p in disabled:
            config.set_pass_enabled(p, False)
        if serialized:
            plans.append(bytes(builder.build_serialized_network(net, config)))
        else:
            plans.append(bytes(builder.build_engine(net, config).serialize()))
    return plans[0], plans[1], inputs, ref


@pytest.mark.parametrize("disabled", [(), ("constant_fold",)], ids=["all passes", "no constant_fold"])
def test_plan_only_build_writes_what_it_frees(disabled):
    """build_serialized_network frees each buffer right after writing it (shared ones only after their last
    reader): its plan is byte for byte the one a kept engine serializes to, and it computes the float64 result."""
    consumed, kept, inputs, ref = build_both(disabled)
    assert consumed == kept
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(consumed)
    got = engine.create_execution_context().infer(inputs)["y"]
    np.testing.assert_allclose(got.reshape(ref.shape), ref, rtol=2e-4, atol=2e-4)


def test_parse_drops_protobuf_weights(tmp_path, monkeypatch):
    """After the initializers became numpy arrays the parser's model is a copy without their values (names,
    types and dims kept, for shape inference and the type queries of some importers); outputs are onnxruntime's,
    including a dynamic batch that needs ONNX shape inference over the slim model."""
    from trtlite.onnx import loading
    seen = []
    orig = loading.drop_weight_data

    def spy(ctx):
        orig(ctx)
        seen.append(ctx._model)
    monkeypatch.setattr(loading, "drop_weight_data", spy)
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((64, 300)) * 0.1).astype(np.float32)   # 75 KiB
    b = (rng.standard_normal(300) * 0.1).astype(np.float32)
    shape = np.array([0, -1, 30], np.int64)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Reshape", ["a", "shape"], ["r"]), helper.make_node("Relu", ["r"], ["y"])]
    model = make_model(nodes, {"x": ("N", 64)}, {"y": None}, {"w": w, "b": b, "shape": shape})
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    net = builder.create_network(EXPLICIT)
    parser = trt.OnnxParser(net, logger)
    assert parser.parse_from_file(str(path)), parser.get_error(0)
    assert len(seen) == 1
    slim = {i.name: i for i in seen[0].graph.initializer}
    assert set(slim) == {"w", "b", "shape"}
    assert list(slim["w"].dims) == [64, 300] and slim["w"].data_type == 1
    assert all(i.ByteSize() < 100 for i in slim.values())
    assert not slim["w"].raw_data and not slim["shape"].raw_data and not slim["shape"].int64_data
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 64), (3, 64), (4, 64))
    config.add_optimization_profile(profile)
    engine = trt.Runtime(logger).deserialize_cuda_engine(builder.build_serialized_network(net, config))
    x = rng.standard_normal((3, 64)).astype(np.float32)
    ctx = engine.create_execution_context()
    ctx.set_input_shape("x", x.shape)
    got = ctx.infer({"x": x})
    ref = ort_run(model, {"x": x})
    assert_outputs_close(got, ref)
    xf = x.astype(np.float64)
    np.testing.assert_allclose(got["y"], np.maximum((xf @ w + b).reshape(3, -1, 30), 0), rtol=1e-4, atol=1e-5)
