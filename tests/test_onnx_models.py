"""ONNX parser on whole models exported with torch.onnx.export (TorchScript exporter, dynamo=False) from the
definitions in onnx_torch_models.py (random weights, no downloads), compared with onnxruntime; dynamic batch
axes with an optimization profile; the parser's error reporting; plugin fallback.

The CNNs run at 64x64 at three opsets each (together every opset from 11 to 18, each by at least two CNNs; one
opset of each with a dynamic batch), and once at 224x224; TRTLITE_SLOW=1 adds VGG-11 at 224x224.
TRTLITE_ONNX_REPORT=<file> writes the max abs / rel errors of every model run as JSON lines."""
import json
import os

import numpy as np
import pytest

from onnx_helpers import (add_profile, assert_outputs_close, errors, export_torch, helper, make_model, numpy_helper,
                          onnx, ort_run, parse, to_bytes, trt_build, trt_run)

import trtlite as trt

torch = pytest.importorskip("torch")
import onnx_torch_models as M  # noqa: E402

SLOW = pytest.mark.skipif(not os.environ.get("TRTLITE_SLOW"), reason="224x224 runs: set TRTLITE_SLOW=1")
F32 = np.float32


def _report(name, opset, got, ref):
    errs = {k: errors(got[k], ref[k]) for k in ref}
    path = os.environ.get("TRTLITE_ONNX_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"model": name, "opset": opset,
                                "errors": {k: {"max_abs": a, "max_rel": r} for k, (a, r) in errs.items()}}) + "\n")
    return errs


def check_model(name, module, inputs, opset, dynamic_axes=None, output_names=("y",), batches=()):
    """Exports, compares trtlite with onnxruntime (rtol 1e-3, atol 1e-5 scaled by the output's magnitude),
    and with dynamic axes also runs other batch sizes on the same engine."""
    torch.manual_seed(0)
    names = list(inputs)
    model = export_torch(module, tuple(torch.from_numpy(v) for v in inputs.values()), opset, input_names=names,
                         output_names=output_names, dynamic_axes=dynamic_axes)
    ref = ort_run(model, inputs)
    engine, network = trt_build(model, inputs)
    got, _ = trt_run(model, inputs, engine=engine)
    assert_outputs_close(got, ref, rtol=1e-3, atol=1e-5)
    _report(name, opset, got, ref)
    for b in batches:
        feeds = {k: np.concatenate([v] * b, 0)[:b] if v.shape[0] < b else v[:b] for k, v in inputs.items()}
        feeds = {k: (v + np.float32(0.01) * np.arange(v.size, dtype=F32).reshape(v.shape) / v.size
                     if v.dtype == F32 else v) for k, v in feeds.items()}
        r2 = ort_run(model, feeds)
        g2, _ = trt_run(model, feeds, engine=engine)
        assert_outputs_close(g2, r2, rtol=1e-3, atol=1e-5)
    return network


def image(n, c, h, w=None, seed=0):
    return np.random.default_rng(seed).standard_normal((n, c, h, w or h)).astype(F32)


BATCH = {"x": {0: "N"}}

# ------------------------------------------------------------------------------------------------------------
# models x opsets
# ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("opset", [7, 9, 11, 13, 15, 17, 18])
def test_lenet(opset):
    check_model("lenet", M.LeNet().eval(), {"x": image(2, 1, 28)}, opset, BATCH, batches=(1, 4))


@pytest.mark.parametrize("opset", [11, 14, 18])
def test_mnist_mlp(opset):
    check_model("mnist_mlp", M.MnistMLP().eval(), {"x": image(3, 1, 28)}, opset, BATCH, batches=(1, 6))


# The CNNs at the small input sizes, each at three opsets, so that every opset from 11 to 18 is exported by
# at least two of them (TorchScript's exporter writes some ops differently across these: Squeeze/Unsqueeze
# axes as inputs from 13, Resize/Pad/Clip forms, ReduceMean axes from 18, BatchNormalization-15, ...).
# One opset of each runs with a dynamic batch: opt batch 2, then batches 1 and 3 on the same engine.
CNN_OPSETS = {  # name: (builder, input size, batch, opsets, the opset run with a dynamic batch)
    "resnet18": (M.resnet18, 64, 2, (11, 14, 17), 14),
    "resnet50": (M.resnet50, 64, 1, (12, 15, 18), 15),
    "mobilenet_v2": (M.mobilenet_v2, 64, 1, (11, 13, 16), 13),
    "vgg11": (lambda: M.vgg11(64, hidden=512), 64, 1, (12, 14, 17), 12),
    "squeezenet": (M.squeezenet, 64, 1, (13, 15, 18), 18),
    "shufflenet_v2": (M.shufflenet_v2, 64, 2, (11, 16, 18), 16),
}


def test_cnn_opsets_cover_11_to_18():
    for opset in range(11, 19):
        users = [n for n, spec in CNN_OPSETS.items() if opset in spec[3]]
        assert len(users) >= 2, (opset, users)


@pytest.mark.parametrize("name,opset", [(n, o) for n, spec in CNN_OPSETS.items() for o in spec[3]])
def test_cnn(name, opset):
    make, size, batch, _, dyn_opset = CNN_OPSETS[name]
    if opset == dyn_opset:
        check_model("%s-%d" % (name, size), make(), {"x": image(2, 3, size)}, opset, BATCH, batches=(1, 3))
    else:
        check_model("%s-%d" % (name, size), make(), {"x": image(batch, 3, size)}, opset)


@pytest.mark.parametrize("opset", [9, 10, 11, 13, 17, 18])
def test_unet(opset):
    dyn = BATCH if opset in (11, 18) else None
    net = check_model("unet", M.unet(), {"x": image(1, 3, 32)}, opset, dyn, batches=(2,) if dyn else ())
    kinds = {net.get_layer(i).type for i in range(net.num_layers)}
    assert {trt.LayerType.DECONVOLUTION, trt.LayerType.RESIZE, trt.LayerType.CONCATENATION} <= kinds


@pytest.mark.parametrize("opset", [11, 13, 17, 18, 20])
def test_transformer_block(opset):
    x = np.random.default_rng(1).standard_normal((2, 5, 32)).astype(F32)
    mask = np.tril(np.ones((2, 1, 5, 5), np.int64))
    dyn = {"x": {0: "B", 1: "T"}, "mask": {0: "B", 2: "T", 3: "T"}}
    net = check_model("transformer_block", M.encoder_block(), {"x": x, "mask": mask}, opset, dyn, batches=(1, 4))
    kinds = [net.get_layer(i) for i in range(net.num_layers)]
    if opset >= 17:  # LayerNormalization op -> normalization layers
        assert any(isinstance(layer, trt.INormalizationLayer) for layer in kinds)
    # GELU: the Gelu op (opset 20) becomes one GELU_ERF activation; the Erf subgraph exporters write for
    # older opsets is imported node by node (an Erf unary layer; fusing it is the builder's job)
    if opset >= 20:
        assert any(isinstance(layer, trt.IActivationLayer) and layer.type == trt.ActivationType.GELU_ERF
                   for layer in kinds)
    else:
        assert not any(isinstance(layer, trt.IActivationLayer) for layer in kinds)
        assert any(isinstance(layer, trt.IUnaryLayer) and layer.op == trt.UnaryOperation.ERF for layer in kinds)


def test_transformer_dynamic_sequence():
    """One engine, several (batch, sequence) shapes."""
    torch.manual_seed(0)
    module = M.encoder_block()
    x = np.random.default_rng(1).standard_normal((2, 5, 32)).astype(F32)
    mask = np.tril(np.ones((2, 1, 5, 5), np.int64))
    dyn = {"x": {0: "B", 1: "T"}, "mask": {0: "B", 2: "T", 3: "T"}}
    model = export_torch(module, (torch.from_numpy(x), torch.from_numpy(mask)), 17, ("x", "mask"), ("y",), dyn)
    builder, network, _ = parse(model)
    config = builder.create_builder_config()
    add_profile(builder, config, network, {"x": (2, 5, 32), "mask": (2, 1, 5, 5)},
                {"x": (1, 1, 32), "mask": (1, 1, 1, 1)}, {"x": (4, 9, 32), "mask": (4, 1, 9, 9)})
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(
        builder.build_serialized_network(network, config))
    ctx = engine.create_execution_context()
    rng = np.random.default_rng(2)
    for b, t in ((1, 1), (2, 5), (3, 9), (4, 2)):
        feeds = {"x": rng.standard_normal((b, t, 32)).astype(F32), "mask": np.tril(np.ones((b, 1, t, t), np.int64))}
        assert_outputs_close(ctx.infer(feeds), ort_run(model, feeds), rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("opset", [11, 13, 17])
def test_shapes_from_dynamic_dims(opset):
    """Expand to the batch (cls_token.expand(x.shape[0], -1, -1)), torch.zeros(x.size(0), C) and slices of a
    dynamic sequence axis, on one engine for several (batch, length) shapes (these were
    UNSUPPORTED_NODE_DYNAMIC)."""
    torch.manual_seed(0)
    module = M.token_ops()
    x = np.random.default_rng(1).standard_normal((2, 5, 8)).astype(F32)
    model = export_torch(module, (torch.from_numpy(x),), opset, dynamic_axes={"x": {0: "B", 1: "T"}})
    ops = {n.op_type for n in onnx.load_from_string(model).graph.node}
    assert {"Expand", "ConstantOfShape", "Slice"} <= ops
    builder, network, _ = parse(model)
    config = builder.create_builder_config()
    add_profile(builder, config, network, {"x": (2, 5, 8)}, {"x": (1, 1, 8)}, {"x": (4, 9, 8)})
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(
        builder.build_serialized_network(network, config))
    ctx = engine.create_execution_context()
    rng = np.random.default_rng(2)
    for b, t in ((2, 5), (1, 1), (3, 9), (4, 2)):
        feeds = {"x": rng.standard_normal((b, t, 8)).astype(F32)}
        got = ctx.infer(feeds)
        assert got["y"].shape == (b, t + 3, 8)
        assert_outputs_close(got, ort_run(model, feeds), rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("opset", [11, 13, 17])
def test_ssd_head(opset):
    check_model("ssd_head", M.ssd_lite(), {"x": image(2, 3, 64)}, opset, BATCH, output_names=("loc", "conf"),
                batches=(1, 3))


# At 224x224 the five cheap ones run by default (about 12 s together on 2 cores); VGG-11 alone takes about
# 20 s (its 102M-weight classifier: export, onnxruntime and packing), so it stays behind TRTLITE_SLOW=1.
@pytest.mark.parametrize("name,make,opset", [
    ("resnet18-224", M.resnet18, 13), ("resnet50-224", M.resnet50, 17), ("mobilenet_v2-224", M.mobilenet_v2, 13),
    pytest.param("vgg11-224", lambda: M.vgg11(224), 13, marks=SLOW), ("squeezenet-224", M.squeezenet, 11),
    ("shufflenet_v2-224", M.shufflenet_v2, 18)])
def test_cnn_224(name, make, opset):
    check_model(name, make(), {"x": image(1, 3, 224)}, opset, BATCH)


# ------------------------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------------------------

def new_parser():
    logger = trt.Logger(trt.Logger.INTERNAL_ERROR)
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    return trt.OnnxParser(network, logger), network


def relu_model(opset=13):
    return make_model([helper.make_node("Relu", ["x"], ["y"], name="r")], {"x": (2, 3)}, {"y": None}, opset=opset)


@pytest.mark.parametrize("data", [b"", b"not an onnx model at all", b"\x08\x07\x12\x05hello\x3a\xff\xff\xff\xff\x0f"],
                         ids=["empty", "text", "truncated"])
def test_malformed_bytes(data):
    parser, _ = new_parser()
    assert parser.parse(data) is False
    assert parser.num_errors >= 1
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.MODEL_DESERIALIZE_FAILED
    assert err.node() == -1 and "ONNX model" in err.desc()


def test_truncated_real_model():
    data = to_bytes(relu_model())
    for cut in (len(data) // 3, len(data) - 3):
        parser, _ = new_parser()
        assert parser.parse(data[:cut]) is False
        assert parser.num_errors >= 1


@pytest.mark.parametrize("opset", [0, 1000])  # below 7 the parser only warns (tests/test_onnx_backend.py)
def test_unsupported_opset(opset):
    parser, _ = new_parser()
    assert not parser.parse(to_bytes(relu_model(opset)))
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.UNSUPPORTED_GRAPH
    assert "opset %d" % opset in err.desc() and str(onnx.defs.onnx_opset_version()) in err.desc()


def test_unknown_op_without_plugin():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="first"),
             helper.make_node("FrobnicateTensor", ["a"], ["y"], name="frob_1", gain=2.0)]
    m = make_model(nodes, {"x": (2, 3)}, {"y": None})
    parser, _ = new_parser()
    assert not parser.parse(to_bytes(m))
    assert parser.num_errors == 1
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.UNSUPPORTED_NODE
    assert err.node() == 1 and err.node_name() == "frob_1" and err.node_operator() == "FrobnicateTensor"
    s = str(err)
    assert "frob_1" in s and "FrobnicateTensor" in s and "plugin" in s
    assert not parser.supports_operator("FrobnicateTensor") and parser.supports_operator("Conv")
    parser.clear_errors()
    assert parser.num_errors == 0 and parser.get_error(0) is None


def test_unknown_op_custom_domain():
    m = make_model([helper.make_node("Thing", ["x"], ["y"], name="t", domain="com.acme")], {"x": (2, 3)},
                   {"y": None}, extra_opsets={"com.acme": 1})
    parser, _ = new_parser()
    assert not parser.parse(to_bytes(m))
    assert "com.acme" in str(parser.get_error(0)) and "Thing" in str(parser.get_error(0))


@pytest.mark.parametrize("kind", ["add", "matmul", "reshape", "concat"])
def test_shape_conflict(kind):
    if kind == "add":
        node = helper.make_node("Add", ["x", "c"], ["y"], name="bad")
        init = {"c": np.ones((2, 4), F32)}
    elif kind == "matmul":
        node = helper.make_node("MatMul", ["x", "c"], ["y"], name="bad")
        init = {"c": np.ones((4, 5), F32)}
    elif kind == "reshape":
        node = helper.make_node("Reshape", ["x", "c"], ["y"], name="bad")
        init = {"c": np.array([4, 2], np.int64)}
    else:
        node = helper.make_node("Concat", ["x", "c"], ["y"], name="bad", axis=0)
        init = {"c": np.ones((1, 4), F32)}
    m = make_model([node], {"x": (2, 3)}, {"y": None}, init)
    parser, _ = new_parser()
    assert not parser.parse(to_bytes(m))
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.INVALID_NODE
    assert err.node_name() == "bad" and "bad" in str(err)


def test_errors_never_crash():
    """Odd but decodable models: missing input, cycle, no graph, run-time weights of dynamic shape, implicit
    batch."""
    cases = [
        make_model([helper.make_node("Relu", ["nowhere"], ["y"])], {"x": (2,)}, {"y": None}),
        make_model([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])], {"x": (2,)},
                   {"a": None}),
        make_model([helper.make_node("Conv", ["x", "w"], ["y"])], {"x": (1, 1, 4, 4), "w": ("k", 1, 3, 3)},
                   {"y": None}),
        make_model([], {"x": (2,)}, {"y": None}),
    ]
    for m in cases:
        parser, _ = new_parser()
        assert parser.parse(to_bytes(m)) is False
        assert parser.num_errors >= 1 and str(parser.get_error(0))
    logger = trt.Logger(trt.Logger.INTERNAL_ERROR)
    net = trt.Builder(logger).create_network()
    parser = trt.OnnxParser(net, logger)
    assert not parser.parse(to_bytes(relu_model()))
    assert "explicit-batch" in parser.get_error(0).desc()


def _relu_bytes(name="NN", x="x"):
    return to_bytes(make_model([helper.make_node("Relu", [x], ["y"], name=name)], {x: (2,)}, {"y": None}))


def _bad_name_models():
    raw = _relu_bytes()
    return {
        # protobuf hands back bytes for a string field that is not valid UTF-8
        "op_type_utf8": (raw.replace(b"Relu", b"Rel\xff"), 0, "op_type"),
        "node_name_utf8": (raw.replace(b"NN", b"N\xff"), 0, "name"),
        "input_name_utf8": (raw.replace(b"\n\x01x", b"\n\x01\xff").replace(b"\x12\x01x", b"\x12\x01\xff"), -1,
                            "graph input 0"),
        # trtlite's names are C strings
        "input_name_nul": (_relu_bytes(x="x\0"), -1, "NUL"),
        "output_name_nul": (to_bytes(make_model([helper.make_node("Relu", ["x"], ["y\0"], name="NN")], {"x": (2,)},
                                                {"y\0": None})), -1, "graph output 0"),
        "node_output_nul": (to_bytes(make_model([helper.make_node("Relu", ["x"], ["m\0"], name="NN"),
                                                 helper.make_node("Relu", ["m\0"], ["y"])], {"x": (2,)}, {"y": None})),
                            0, "output 0"),
    }


@pytest.mark.parametrize("case", sorted(_bad_name_models()))
def test_bad_names_are_parser_errors(case):
    """Invalid UTF-8 or NUL in names: a parser error naming the node (or the graph input), never a raw
    TypeError/ValueError out of parse()."""
    data, node, what = _bad_name_models()[case]
    parser, _ = new_parser()
    assert parser.parse(data) is False
    err = parser.get_error(0)
    assert err.node() == node and what in err.desc(), str(err)
    if node >= 0:
        assert err.code() == trt.ErrorCode.INVALID_NODE
        # names come back as text, the bad bytes as replacement characters
        assert err.node_operator() in ("Relu", "Rel\ufffd") and err.node_name() in ("NN", "N\ufffd")
    assert str(err)


@pytest.mark.parametrize("op", ["Constant", "Softmax"])
def test_attribute_without_type(op):
    """An attribute whose type is UNDEFINED (found by mutating models): INVALID_NODE naming it, not an
    INTERNAL_ERROR from a None value."""
    if op == "Constant":
        nodes = [helper.make_node("Constant", [], ["c"], name="bad", value=numpy_helper.from_array(np.ones(2, F32))),
                 helper.make_node("Add", ["x", "c"], ["y"])]
    else:
        nodes = [helper.make_node("Softmax", ["x"], ["y"], name="bad", axis=1)]
    nodes[0].attribute[0].type = onnx.AttributeProto.UNDEFINED
    parser, _ = new_parser()
    assert parser.parse(to_bytes(make_model(nodes, {"x": (2,)} if op == "Constant" else {"x": (2, 3)},
                                            {"y": None}))) is False
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.INVALID_NODE and err.node_name() == "bad", str(err)
    assert "UNDEFINED" in err.desc()


@pytest.mark.parametrize("term", ["Expand", "ConstantOfShape", "Reshape"])
def test_deep_dimension_expressions(term):
    """A dim built by thousands of Adds on the batch (Shape -> Gather -> Add x 3000): a dynamic-dim error,
    not a RecursionError from hashing/printing the nested expression."""
    N = helper.make_node
    depth = 3000
    nodes = [N("Shape", ["x"], ["s"]), N("Gather", ["s", "i0"], ["b0"], axis=0)]
    nodes += [N("Add", ["b%d" % i, "one"], ["b%d" % (i + 1)]) for i in range(depth)]
    nodes += [N("Unsqueeze", ["b%d" % depth, "z"], ["bu"]), N("Concat", ["bu", "c3"], ["t"], axis=0)]
    nodes.append(N(term, ["x", "t"] if term != "ConstantOfShape" else ["t"], ["y"], name="last"))
    inits = {"i0": np.array(0, np.int64), "one": np.array(1, np.int64), "z": np.array([0], np.int64),
             "c3": np.array([3] if term != "Reshape" else [-1], np.int64)}
    parser, _ = new_parser()
    assert parser.parse(to_bytes(make_model(nodes, {"x": ("N", 3)}, {"y": None}, inits))) is False
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.UNSUPPORTED_NODE_DYNAMIC and err.node_name() == "last", str(err)


def _gelu_consts():
    return {"s": np.array(np.sqrt(2.0), F32), "one": np.array(1.0, F32), "half": np.array(0.5, F32)}


@pytest.mark.parametrize("case", ["erf_no_inputs", "erf_no_outputs", "add_no_outputs", "mul_no_outputs"])
def test_malformed_gelu_pattern_nodes(case):
    """Nodes of the Erf-GELU pattern with missing inputs/outputs: the node's own import reports it (it used
    to raise IndexError out of parse(), when the parser matched the pattern)."""
    N = helper.make_node
    nodes = [N("Div", ["x", "s"], ["d"], name="div"), N("Erf", ["d"], ["e"], name="erf"),
             N("Add", ["e", "one"], ["a"], name="add"), N("Mul", ["x", "a"], ["m"], name="mul"),
             N("Mul", ["m", "half"], ["g"], name="mul_half"), N("Relu", ["x"], ["y"], name="other")]
    bad = {"erf_no_inputs": 1, "erf_no_outputs": 1, "add_no_outputs": 2, "mul_no_outputs": 3}[case]
    if case == "erf_no_inputs":
        del nodes[bad].input[:]
    else:
        del nodes[bad].output[:]
    nodes = nodes[:bad + 1] + nodes[-1:]  # the chain ends at the bad node; 'other' gives the graph output
    m = make_model(nodes, {"x": (2, 3)}, {"y": None}, _gelu_consts())
    parser, _ = new_parser()
    assert parser.parse(to_bytes(m)) is False
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.INVALID_NODE, str(err)
    assert err.node_name() == nodes[bad].name and err.node_operator() == nodes[bad].op_type
    assert ("has 0 inputs" if case == "erf_no_inputs" else "has 0 outputs") in err.desc()


def test_gelu_pattern_imported_node_by_node():
    """The parser no longer fuses the Erf-GELU subgraph (the builder does): five nodes, eight layers
    (three of them the constants), the same values as onnxruntime."""
    N = helper.make_node
    nodes = [N("Div", ["x", "s"], ["d"]), N("Erf", ["d"], ["e"]), N("Add", ["e", "one"], ["a"]),
             N("Mul", ["x", "a"], ["m"]), N("Mul", ["m", "half"], ["y"])]
    m = make_model(nodes, {"x": (2, 3)}, {"y": None}, _gelu_consts())
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(F32)
    got, engine = trt_run(m, {"x": x})
    assert_outputs_close(got, ort_run(m, {"x": x}))
    _, network, _ = parse(m)
    layers = [network.get_layer(i) for i in range(network.num_layers)]
    assert len(layers) == 8 and not any(isinstance(layer, trt.IActivationLayer) for layer in layers)
    assert [type(layer).__name__ for layer in layers].count("IConstantLayer") == 3
    assert [layer.op for layer in layers if isinstance(layer, trt.IUnaryLayer)] == [trt.UnaryOperation.ERF]


class _Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no text")


def test_unexpected_exceptions_become_internal_errors(monkeypatch):
    """The catch-all around parse(): an exception that escapes the importers' own handlers (here one that
    cannot print itself) or that is raised outside any node becomes an INTERNAL_ERROR parser error naming
    the node being imported, never a traceback out of parse()."""
    from trtlite.onnx import loading, registry

    def broken(p, node, a):
        raise _Unprintable()
    monkeypatch.setitem(registry.IMPORTERS, "Relu", broken)
    parser, _ = new_parser()
    assert parser.parse(to_bytes(relu_model())) is False
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.INTERNAL_ERROR
    assert err.node() == 0 and err.node_name() == "r" and err.node_operator() == "Relu"
    assert err.desc().startswith("unexpected ")
    monkeypatch.undo()

    def boom(ctx, graph):
        raise AssertionError("a bug outside any node")
    monkeypatch.setattr(loading, "topo_order", boom)
    parser, _ = new_parser()
    assert parser.parse(to_bytes(relu_model())) is False
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.INTERNAL_ERROR and err.node() == -1
    assert "AssertionError" in err.desc() and "a bug outside any node" in err.desc()


@pytest.mark.parametrize("nodes", [0, 1], ids=["no_nodes", "relu"])
def test_graph_input_that_is_also_an_output(nodes):
    """A graph output named like a graph input (pass-through) cannot be an engine I/O tensor of its own:
    a clear UNSUPPORTED_GRAPH error naming it (it used to be an InvalidArgumentError about a tensor
    '(Unnamed Layer* 1) [Identity]_output')."""
    ns = [helper.make_node("Relu", ["x"], ["y"])] if nodes else []
    m = make_model(ns, {"x": (2, 3)}, {"y": None, "x": None} if nodes else {"x": None})
    parser, _ = new_parser()
    assert parser.parse(to_bytes(m)) is False
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.UNSUPPORTED_GRAPH and err.node() == -1
    assert "graph output 'x' is also a graph input" in err.desc()


@pytest.mark.parametrize("nodes", [0, 1], ids=["no_nodes", "relu"])
def test_initializer_as_graph_output(nodes):
    """A graph output that is an initializer becomes a constant output (was AttributeError '_sub' with no
    nodes)."""
    c = np.arange(6, dtype=F32).reshape(2, 3)
    ns = [helper.make_node("Relu", ["x"], ["y"])] if nodes else []
    m = make_model(ns, {"x": (2,)}, {"y": None, "c": None} if nodes else {"c": None}, {"c": c})
    x = np.array([-1.0, 2.0], F32)
    got, _ = trt_run(m, {"x": x})
    assert_outputs_close(got, ort_run(m, {"x": x}))
    np.testing.assert_array_equal(got["c"], c)


def test_too_many_graph_inputs_and_outputs():
    """Engines bind at most 64 I/O tensors: rejected while parsing, not at the first inference."""
    ins = {"x%d" % i: (2,) for i in range(64)}
    m = make_model([helper.make_node("Sum", list(ins), ["y"], name="sum")], ins, {"y": None})
    parser, _ = new_parser()
    assert parser.parse(to_bytes(m)) is False
    err = parser.get_error(0)
    assert err.code() == trt.ErrorCode.UNSUPPORTED_GRAPH and "64" in err.desc() and "64 inputs" in err.desc()
    ins = {"x%d" % i: (2,) for i in range(63)}  # 63 + 1: the most that runs
    m = make_model([helper.make_node("Sum", list(ins), ["y"])], ins, {"y": None})
    feeds = {k: np.full(2, i, F32) for i, k in enumerate(ins)}
    got, _ = trt_run(m, feeds)
    np.testing.assert_allclose(got["y"], np.full(2, sum(range(63)), F32))


def test_errors_are_logged():
    class Capture(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.msgs = []

        def log(self, severity, msg):
            self.msgs.append((severity, msg))

    logger = Capture()
    net = trt.Builder(logger).create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    with trt.OnnxParser(net, logger) as parser:
        assert not parser.parse(b"garbage")
    assert any(s == trt.Logger.ERROR and "MODEL_DESERIALIZE_FAILED" in m for s, m in logger.msgs)


def test_missing_onnx_package(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "onnx", None)
    logger = trt.Logger()
    net = trt.Builder(logger).create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    with pytest.raises(ImportError, match=r"pip install trtlite\[onnx\]"):
        trt.OnnxParser(net, logger)


# ------------------------------------------------------------------------------------------------------------
# files and external data
# ------------------------------------------------------------------------------------------------------------

def test_parse_from_file_external_data(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 128)).astype(F32)
    b = rng.standard_normal(64).astype(F32)
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)]
    m = make_model(nodes, {"x": (2, 128)}, {"y": None}, {"w": w, "b": b})
    sub = tmp_path / "model"
    sub.mkdir()
    path = str(sub / "m.onnx")
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin",
                    size_threshold=0)
    assert os.path.exists(sub / "weights.bin")
    x = rng.standard_normal((2, 128)).astype(F32)
    ref = x @ w.T + b
    # from the file: the weights are read relative to it, not to the working directory
    monkeypatch.chdir(tmp_path)
    parser, network = new_parser()
    assert parser.parse_from_file(os.path.join("model", "m.onnx")), str(parser.get_error(0))
    assert network.num_layers >= 1 and network.num_outputs == 1
    # bytes alone cannot find the weights ...
    parser2, _ = new_parser()
    data = open(path, "rb").read()
    assert not parser2.parse(data)
    assert "external" in parser2.get_error(0).desc()
    # ... bytes with the model's path can
    got, _ = trt_run(data, {"x": x}, path=path)
    np.testing.assert_allclose(got["y"], ref, rtol=1e-4, atol=1e-4)
    parser3, _ = new_parser()
    assert not parser3.parse_from_file(str(tmp_path / "missing.onnx"))


# ------------------------------------------------------------------------------------------------------------
# plugin fallback
# ------------------------------------------------------------------------------------------------------------

def adder2d_ref(x, w, stride, pad):
    n, c, h, wd = x.shape
    f, _, k, _ = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    y = np.zeros((n, f, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, None, :, i * stride:i * stride + k, j * stride:j * stride + k]
            y[:, :, i, j] = -np.abs(patch - w[None]).sum(axis=(2, 3, 4))
    return y.astype(F32)


@pytest.fixture(scope="module")
def builtin_plugins():
    trt.init_libnvinfer_plugins(trt.Logger(trt.Logger.ERROR), "")
    return trt.get_plugin_registry()


@pytest.mark.parametrize("weights_as", ["initializer", "attribute"])
def test_adder2d_plugin(builtin_plugins, weights_as):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 8, 8)).astype(F32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(F32)
    attrs = dict(nbFilters=4, filterSize=3, stride=1, padding=1, nbInputChannels=3)
    if weights_as == "initializer":
        node = helper.make_node("Adder2d", ["x", "adder1.weights"], ["y"], name="adder1", domain="trtlite.test",
                                **attrs)
        inits = {"adder1.weights": w}
    else:
        node = helper.make_node("Adder2d", ["x"], ["y"], name="adder1", domain="trtlite.test",
                                weights=numpy_helper.from_array(w, "w"), **attrs)
        inits = {}
    relu = helper.make_node("Relu", ["y"], ["z"])
    m = make_model([node, relu], {"x": ("N", 3, 8, 8)}, {"z": None}, inits, extra_opsets={"trtlite.test": 1})
    builder, network, parser = parse(m)
    layer = network.get_layer(0)
    assert isinstance(layer, trt.IPluginV2Layer) and layer.name == "adder1"
    got, _ = trt_run(m, {"x": x})
    np.testing.assert_allclose(got["z"], np.maximum(adder2d_ref(x, w, 1, 1), 0), rtol=1e-4, atol=1e-3)


def _adder_model(w, attrs, weights_as="initializer"):
    if weights_as == "initializer":
        node = helper.make_node("Adder2d", ["x", "adder1.weights"], ["y"], name="adder1", domain="trtlite.test",
                                **attrs)
        inits = {"adder1.weights": w}
    else:
        node = helper.make_node("Adder2d", ["x"], ["y"], name="adder1", domain="trtlite.test",
                                weights=numpy_helper.from_array(w, "w"), **attrs)
        inits = {}
    return make_model([node], {"x": ("N", 3, 8, 8)}, {"y": None}, inits, extra_opsets={"trtlite.test": 1})


ADDER_ATTRS = dict(nbFilters=4, filterSize=3, stride=1, padding=1, nbInputChannels=3)


@pytest.mark.parametrize("case", ["stride_float", "weights_int64", "weights_float16", "weights_float64_attr",
                                  "all_float_attrs"])
def test_plugin_fields_converted_to_declared_types(builtin_plugins, case):
    """Attributes and initializers are converted to the field types the creator declares when that is
    exact: stride=1.0 for an INT32 field, int64/float16/float64 weights for a FLOAT32 one (these failed:
    creators match fields by name and type)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 8, 8)).astype(F32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(F32)
    attrs, weights_as = dict(ADDER_ATTRS), "initializer"
    if case == "stride_float":
        attrs["stride"] = 1.0
    elif case == "weights_int64":
        w = np.round(w * 3).astype(np.int64)
    elif case == "weights_float16":
        w = w.astype(np.float16)
    elif case == "weights_float64_attr":
        w, weights_as = w.astype(np.float64), "attribute"
    else:
        attrs = {k: float(v) for k, v in attrs.items()}
    got, _ = trt_run(_adder_model(w, attrs, weights_as), {"x": x})
    ref = adder2d_ref(x, w.astype(F32), 1, 1)
    np.testing.assert_allclose(got["y"], ref, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("attr,value,words", [("stride", 1.5, ["'stride'", "INT32", "1.5"]),
                                              ("padding", 2 ** 40, ["'padding'", "INT32"]),
                                              ("stride", "two", ["'stride'", "string", "INT32"])])
def test_plugin_field_not_convertible(builtin_plugins, attr, value, words):
    """An attribute that does not convert exactly to the declared field type: an error naming the node,
    the attribute and the field's type."""
    attrs = dict(ADDER_ATTRS, **{attr: value})
    parser, _ = new_parser()
    w = np.zeros((4, 3, 3, 3), F32)
    assert parser.parse(to_bytes(_adder_model(w, attrs))) is False
    err = parser.get_error(0)
    assert err.node_name() == "adder1" and err.node_operator() == "Adder2d"
    assert err.code() == trt.ErrorCode.UNSUPPORTED_NODE_ATTR
    for word in words:
        assert word in err.desc(), str(err)


def test_parser_registers_builtin_plugins(tmp_path):
    """In a fresh process the parser finds the built-in Adder2d_TRT without init_libnvinfer_plugins (as
    TensorRT's parser registers its plugin library itself); creating parsers again registers nothing twice
    and warns about nothing."""
    import subprocess
    import sys
    import textwrap
    path = tmp_path / "adder.onnx"
    path.write_bytes(to_bytes(_adder_model(np.ones((4, 3, 3, 3), F32), ADDER_ATTRS)))
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        import trtlite as trt

        class Capture(trt.ILogger):
            def __init__(self):
                trt.ILogger.__init__(self)
                self.msgs = []

            def log(self, severity, msg):
                self.msgs.append((severity, msg))

        logger = Capture()
        reg = trt.get_plugin_registry()
        assert reg.get_plugin_creator("Adder2d_TRT", "1", "") is None, "already registered"
        counts = []
        for i in range(3):
            net = trt.Builder(logger).create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
            parser = trt.OnnxParser(net, logger)
            counts.append(len(reg.plugin_creator_list))
            assert parser.parse_from_file(%r), parser.get_error(0)
            assert isinstance(net.get_layer(0), trt.IPluginV2Layer)
        assert counts[0] > 0 and len(set(counts)) == 1, counts
        bad = [m for s, m in logger.msgs if s in (trt.Logger.WARNING, trt.Logger.ERROR)]
        assert not bad, bad
        print("OK")
    """) % (os.path.dirname(os.path.dirname(os.path.abspath(__file__))), str(path))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr
    assert "WARNING" not in r.stderr and "duplicate" not in r.stderr.lower(), r.stderr


class ScaledSoftsign(trt.IPluginV2):
    plugin_type = "ScaledSoftsign"
    plugin_version = "1"

    def __init__(self, alpha, bias, label):
        self.alpha = float(alpha)
        self.bias = np.asarray(bias, F32)
        self.label = label

    def enqueue(self, inputs, outputs):
        x = inputs[0]
        outputs[0][...] = self.alpha * x / (1 + np.abs(x)) + self.bias.reshape((1, -1) + (1,) * (x.ndim - 2))

    def serialize(self):
        return json.dumps({"alpha": self.alpha, "bias": self.bias.tolist(), "label": self.label}).encode()


class ScaledSoftsignCreator(trt.IPluginCreator):
    name = "ScaledSoftsign"
    plugin_version = "1"
    plugin_namespace = ""
    field_names = trt.PluginFieldCollection([trt.PluginField("alpha", None, trt.PluginFieldType.FLOAT32),
                                             trt.PluginField("bias", None, trt.PluginFieldType.FLOAT32),
                                             trt.PluginField("label", None, trt.PluginFieldType.CHAR)])

    def __init__(self):
        trt.IPluginCreator.__init__(self)
        self.seen = None

    def create_plugin(self, name, field_collection):
        fields = {f.name: f for f in field_collection}
        self.seen = {k: (f.type, np.asarray(f.data)) for k, f in fields.items()}
        label = bytes(np.asarray(fields["label"].data, np.uint8)).decode()
        return ScaledSoftsign(np.asarray(fields["alpha"].data).reshape(-1)[0], fields["bias"].data, label)

    def deserialize_plugin(self, name, data):
        d = json.loads(bytes(data).decode())
        return ScaledSoftsign(d["alpha"], d["bias"], d["label"])


@pytest.mark.parametrize("namespace", ["", "com.example"])
def test_python_plugin_fallback(namespace):
    reg = trt.get_plugin_registry()
    creator = ScaledSoftsignCreator()
    assert reg.register_creator(creator, namespace)
    try:
        rng = np.random.default_rng(4)
        x = rng.standard_normal((2, 3, 4)).astype(F32)
        bias = rng.standard_normal(3).astype(F32)
        node = helper.make_node("ScaledSoftsign", ["x", "blk.bias"], ["y"], name="ss", domain="com.example",
                                alpha=2.5, label="hello")
        m = make_model([node], {"x": x.shape}, {"y": None}, {"blk.bias": bias}, extra_opsets={"com.example": 1})
        got, _ = trt_run(m, {"x": x})
        assert creator.seen["alpha"][0] == trt.PluginFieldType.FLOAT32
        assert creator.seen["bias"][0] == trt.PluginFieldType.FLOAT32
        assert creator.seen["label"][0] == trt.PluginFieldType.CHAR
        ref = 2.5 * x / (1 + np.abs(x)) + bias.reshape(1, 3, 1)
        np.testing.assert_allclose(got["y"], ref, rtol=1e-5, atol=1e-6)
        parser, _ = new_parser()
        assert parser.supports_operator("ScaledSoftsign") == (namespace == "")
    finally:
        reg.deregister_creator(creator)
