"""Refit of constants (WeightsRole.CONSTANT) and of weights held at an address, as NVIDIA's engine_refit_onnx_bidaf
sample uses them: an ONNX model whose refitted initializers are a MatMul's weights and a bias (not convolution
weights), built refittable into a plan, deserialized, refitted by initializer name from trt.Weights(FLOAT, ptr,
count) set once and rewritten before each refit (the sample's GPU path; host memory here) and from arrays with
TensorLocation.HOST (its CPU path).  Each result is checked against onnxruntime running the model with the same
weights; the network API form (set_weights(constant layer, CONSTANT)), trt.OnnxParserRefitter on constants, and
misuse errors naming the weights are checked too."""
import numpy as np
import pytest

from onnx_helpers import helper, make_model, ort_run

import trtlite as trt

LOG = trt.Logger(trt.Logger.ERROR)
VOCAB, EMB, HID, T = 13, 6, 7, 5


def bidaf_like(w):
    """An embedding lookup (Gather of "emb"), a MatMul by "W_0", a bias "Parameter576_B_0" added, a convolution
    over the sequence (its own weights) and the argmax of the scores: the shape of BiDAF's refitted part."""
    nodes = [helper.make_node("Gather", ["emb", "words"], ["e"], name="embed"),
             helper.make_node("MatMul", ["e", "W_0"], ["h"], name="proj"),
             helper.make_node("Add", ["h", "Parameter576_B_0"], ["hb"], name="bias"),
             helper.make_node("Relu", ["hb"], ["r"], name="relu"),
             helper.make_node("Transpose", ["r"], ["rt"], perm=[1, 0], name="tr"),
             helper.make_node("Unsqueeze", ["rt", "ax"], ["r3"], name="unsq"),
             helper.make_node("Conv", ["r3", "conv.weight"], ["c"], pads=[1, 1], name="conv"),
             helper.make_node("ReduceSum", ["c", "ax"], ["s"], keepdims=0, name="sum"),
             helper.make_node("ArgMax", ["s"], ["start"], axis=1, keepdims=0, name="argmax")]
    inits = {"emb": w["emb"], "W_0": w["W_0"], "Parameter576_B_0": w["Parameter576_B_0"],
             "conv.weight": w["conv.weight"], "ax": np.array([0], np.int64)}
    return make_model(nodes, {"words": (("T",), np.int64)}, {"s": None, "start": ((1,), np.int64)}, inits)


def weights(seed):
    rng = np.random.default_rng(seed)
    return {"emb": rng.standard_normal((VOCAB, EMB)).astype(np.float32),
            "W_0": rng.standard_normal((EMB, HID)).astype(np.float32),
            "Parameter576_B_0": rng.standard_normal(HID).astype(np.float32),
            "conv.weight": rng.standard_normal((2, HID, 3)).astype(np.float32)}


@pytest.fixture(scope="module")
def plan():
    b = trt.Builder(LOG)
    net = b.create_network(0)
    parser = trt.OnnxParser(net, LOG)
    assert parser.parse(bidaf_like(weights(1)).SerializeToString())
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.REFIT)
    for opt in (3, T):  # two profiles, as the sample builds
        prof = b.create_optimization_profile()
        prof.set_shape("words", (1,), (opt,), (8,))
        cfg.add_optimization_profile(prof)
    return bytes(b.build_serialized_network(net, cfg))


WORDS = np.array([3, 11, 0, 7, 7], np.int64)
REFITTED = ["Parameter576_B_0", "W_0"]


def check(engine, w):
    """Runs every profile as the sample does (set_optimization_profile_async, set_input_shape, tensor addresses,
    execute_async_v3) and compares with onnxruntime."""
    want = ort_run(bidaf_like(w), {"words": WORDS})
    ctx = engine.create_execution_context()
    for k in range(engine.num_optimization_profiles):
        ctx.set_optimization_profile_async(k, 0)
        ctx.set_input_shape("words", WORDS.shape)
        bufs = {"words": np.ascontiguousarray(WORDS, trt.nptype(engine.get_tensor_dtype("words")))}
        for name, ref in want.items():
            bufs[name] = np.zeros(ref.shape, trt.nptype(engine.get_tensor_dtype(name)))
        for name, buf in bufs.items():
            ctx.set_tensor_address(name, buf.ctypes.data)
        assert ctx.execute_async_v3(0)
        np.testing.assert_allclose(bufs["s"], want["s"], rtol=1e-5, atol=1e-5)
        assert int(bufs["start"][0]) == int(want["start"][0])
    return bufs["s"]


@pytest.mark.parametrize("location", ["GPU", "CPU"])
def test_bidaf_sample_flow_refits_by_initializer_name(plan, location, monkeypatch):
    from trtlite import refit
    monkeypatch.setattr(refit, "_ONNX_WEIGHT_NAMES", {})  # names from the plan only, as in another process
    built, real = weights(1), weights(2)
    fake = {k: (np.ones_like(v) if k in REFITTED else v) for k, v in built.items()}
    real = {k: (real[k] if k in REFITTED else v) for k, v in built.items()}
    engine = trt.Runtime(LOG).deserialize_cuda_engine(plan)
    refitter = trt.Refitter(engine, LOG)
    refitter.weights_validation = False
    assert set(REFITTED) | {"emb", "conv.weight"} <= set(refitter.get_all_weights())
    device = {}
    if location == "GPU":  # weights set once at an address; new values copied there before each refit
        for name in REFITTED:
            device[name] = np.empty_like(real[name])
            dw = trt.Weights(trt.DataType.FLOAT, device[name].ctypes.data, device[name].size)
            proto = refitter.get_weights_prototype(name)
            assert (proto.dtype, proto.size) == (dw.dtype, dw.size) == (trt.DataType.FLOAT, real[name].size)
            assert refitter.set_named_weights(name, dw, trt.TensorLocation.DEVICE)
    outs = []
    for w in (fake, real):
        for name in REFITTED:
            if location == "CPU":
                assert refitter.set_named_weights(name, w[name], trt.TensorLocation.HOST)
            else:
                device[name][...] = w[name]
        assert refitter.get_missing_weights() == []
        assert refitter.refit_cuda_engine()
        outs.append(check(engine, w))
    assert not np.allclose(outs[0], outs[1], atol=1e-2)  # the refits changed the answer
    # the refitted engine serializes with the new weights
    again = trt.Runtime(LOG).deserialize_cuda_engine(engine.serialize())
    check(again, real)


def test_constant_refit_misuse_names_the_weights(plan):
    engine = trt.Runtime(LOG).deserialize_cuda_engine(plan)
    r = trt.Refitter(engine, LOG)
    with pytest.raises(trt.InvalidArgumentError, match=r"constant .* CONSTANT weights: 6 values given, the engine "
                                                       r"was built with 7"):
        r.set_named_weights("Parameter576_B_0", np.zeros(6, np.float32))
    with pytest.raises(TypeError, match=r"set_named_weights\('W_0'\): weights must be float32"):
        r.set_named_weights("W_0", np.zeros((EMB, HID), np.int32))
    with pytest.raises(ValueError, match="'W_1' is not a name get_all_weights"):
        r.set_named_weights("W_1", np.zeros((EMB, HID), np.float32))
    with pytest.raises(trt.NotFoundError, match="get_weights_prototype: no refittable weights 'W_1/KERNEL'"):
        r.get_weights_prototype("W_1/KERNEL")
    with pytest.raises(ValueError, match="ptr is NULL"):
        trt.Weights(trt.DataType.FLOAT, 0, 3)
    # nothing was applied by the failed calls
    assert r.refit_cuda_engine()
    check(engine, weights(1))


def network_with_constants(a, bias, scalar):
    b = trt.Builder(LOG)
    net = b.create_network(0)
    x = net.add_input("x", trt.float32, (3, 4))
    wa = net.add_constant((4, 5), trt.Weights(a))
    wa.name = "A"
    mm = net.add_matrix_multiply(x, trt.MatrixOperation.NONE, wa.get_output(0), trt.MatrixOperation.NONE)
    cb = net.add_constant((1, 5), trt.Weights(bias))
    cb.name = "bias"
    cb.get_output(0).name = "bias_values"
    add = net.add_elementwise(mm.get_output(0), cb.get_output(0), trt.ElementWiseOperation.SUM)
    cs = net.add_constant((1, 1), trt.Weights(scalar))
    cs.name = "s"
    y = net.add_elementwise(add.get_output(0), cs.get_output(0), trt.ElementWiseOperation.PROD).get_output(0)
    y.name = "y"
    net.mark_output(y)
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.REFIT)
    return b.build_engine(net, cfg)


def test_network_api_constants_refit_by_layer_or_tensor_name():
    rng = np.random.default_rng(5)
    a, bias, s = (rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((1, 5)).astype(np.float32),
                  np.array([[1.5]], np.float32))
    engine = network_with_constants(a, bias, s)
    r = trt.Refitter(engine, LOG)
    layers, roles = r.get_all()
    assert roles.count(trt.WeightsRole.CONSTANT) == 2 and "bias_values" in layers
    a2 = rng.standard_normal((4, 5)).astype(np.float32)
    bias2 = rng.standard_normal(5)  # float64: converted when set
    assert r.set_weights("A", trt.WeightsRole.CONSTANT, trt.Weights(a2))
    assert r.set_named_weights("bias_values/CONSTANT", bias2)
    with pytest.raises(trt.UnsupportedError, match=r"constant '.*' \(FLOAT, 1 element\(s\)\) is not refittable"):
        r.set_weights("s", trt.WeightsRole.CONSTANT, np.ones(1, np.float32))
    with pytest.raises(trt.InvalidArgumentError, match="constant 'bias_values' CONSTANT weights: 4 values given"):
        r.set_weights("bias", trt.WeightsRole.CONSTANT, np.ones(4, np.float32))
    assert r.refit_cuda_engine()
    x = rng.standard_normal((3, 4)).astype(np.float32)
    got = engine.create_execution_context().infer({"x": x})["y"]
    want = (x.astype(np.float64) @ a2 + bias2) * 1.5
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_onnx_parser_refitter_sets_constants(plan):
    new = weights(3)
    engine = trt.Runtime(LOG).deserialize_cuda_engine(plan)
    r = trt.Refitter(engine, LOG)
    pr = trt.OnnxParserRefitter(r, LOG)
    assert pr.refit_from_bytes(bidaf_like(new).SerializeToString()), [str(pr.get_error(i))
                                                                      for i in range(pr.num_errors)]
    assert r.refit_cuda_engine()
    check(engine, new)


def test_weights_keyword_forms():
    a = np.arange(6, dtype=np.float32)
    assert trt.Weights(type=trt.DataType.HALF).dtype == trt.DataType.HALF
    w = trt.Weights(type=trt.DataType.FLOAT, ptr=a.ctypes.data, count=6)
    assert w.size == 6 and w.nbytes == 24
    a[2] = 40.0  # held by reference: no copy
    np.testing.assert_array_equal(w.numpy(), a)
    with pytest.raises(TypeError, match="type must be a trt.DataType"):
        trt.Weights(type="float")
    with pytest.raises(TypeError, match="give the type once"):
        trt.Weights(trt.DataType.FLOAT, type=trt.DataType.FLOAT)


def test_batched_matmul_by_an_initializer_refits_by_name():
    """x [B, T, D] @ W [D, H] (a transformer's linear layer as torch exports it): W stays the initializer's values
    in the engine (made [1, D, H] directly, not a shuffle the builder folds), so it refits by name."""
    rng = np.random.default_rng(8)
    w0, w1 = (rng.standard_normal((6, 5)).astype(np.float32) for _ in range(2))
    nodes = [helper.make_node("MatMul", ["x", "onnx::MatMul_7"], ["y"], name="lin")]

    def model(w):
        return make_model(nodes, {"x": (2, 3, 6)}, {"y": None}, {"onnx::MatMul_7": w})
    b = trt.Builder(LOG)
    net = b.create_network(0)
    assert trt.OnnxParser(net, LOG).parse(model(w0).SerializeToString())
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.REFIT)
    engine = trt.Runtime(LOG).deserialize_cuda_engine(b.build_serialized_network(net, cfg))
    r = trt.Refitter(engine, LOG)
    assert "onnx::MatMul_7" in r.get_all_weights()
    assert r.set_named_weights("onnx::MatMul_7", w1) and r.refit_cuda_engine()
    x = rng.standard_normal((2, 3, 6)).astype(np.float32)
    got = engine.create_execution_context().infer({"x": x})["y"]
    np.testing.assert_allclose(got, ort_run(model(w1), {"x": x})["y"], rtol=1e-5, atol=1e-5)
