"""Helpers for the ONNX parser tests: build ONNX models, run them with onnxruntime and with trtlite.

    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": (2, 3)}, {"y": None}, opset=13)
    compare(model, {"x": x})                      # trtlite vs onnxruntime, raises on mismatch
    outs, engine = trt_run(model, {"x": x}, profile_shapes={"x": ((1, 3), (2, 3), (4, 3))})
    profile = add_profile(builder, config, network, {"x": (1, 4, 8)})   # profiles for dynamic inputs
"""
import io

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import trtlite as trt  # noqa: E402

NP_TO_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
              np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL,
              np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.float64): TensorProto.DOUBLE,
              np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8}


def value_info(name, shape, dtype=np.float32):
    """shape: tuple (ints, or strings / None for dynamic dims) or None for unknown shape."""
    elem = NP_TO_ONNX[np.dtype(dtype)]
    if shape is None:
        return helper.make_tensor_value_info(name, elem, None)
    return helper.make_tensor_value_info(name, elem, list(shape))


def make_model(nodes, inputs, outputs, initializers=None, opset=13, extra_opsets=None, ir_version=None):
    """inputs/outputs: {name: shape} or {name: (shape, dtype)}; initializers: {name: array}."""
    def vis(d):
        out = []
        for name, spec in d.items():
            if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], type):
                out.append(value_info(name, spec[0], spec[1]))
            else:
                out.append(value_info(name, spec))
        return out
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()]
    graph = helper.make_graph(nodes, "g", vis(inputs), vis(outputs), inits)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()]
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = ir_version or min(m.ir_version, 10)
    return m


def to_bytes(model):
    return model if isinstance(model, (bytes, bytearray)) else model.SerializeToString()


def ort_run(model, feeds):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(to_bytes(model), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def add_profile(builder, config, network, opt_shapes, min_shapes=None, max_shapes=None):
    """One optimization profile for every network input that has dynamic dims.

    opt_shapes: {input: shape}; min/max default to opt with each dynamic dim set to 1 / 2 * opt."""
    profile = builder.create_optimization_profile()
    for i in range(network.num_inputs):
        t = network.get_input(i)
        shape = tuple(t.shape)
        if all(d >= 0 for d in shape):
            continue
        opt = tuple(opt_shapes[t.name])
        mn = tuple((min_shapes or {}).get(t.name) or [1 if d < 0 else o for d, o in zip(shape, opt)])
        mx = tuple((max_shapes or {}).get(t.name) or [2 * o if d < 0 else o for d, o in zip(shape, opt)])
        profile.set_shape(t.name, mn, opt, mx)
    config.add_optimization_profile(profile)
    return profile


class ParseFailed(AssertionError):
    pass


def parse(model, logger=None, path=None):
    """(builder, network, parser) with the model parsed; raises ParseFailed listing the errors."""
    logger = logger or trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    ok = parser.parse(to_bytes(model), path) if path else parser.parse(to_bytes(model))
    if not ok:
        raise ParseFailed("\n".join(str(parser.get_error(i)) for i in range(parser.num_errors)))
    return builder, network, parser


def trt_build(model, feeds=None, logger=None, path=None, parsed=None):
    builder, network, parser = parsed or parse(model, logger, path)
    config = builder.create_builder_config()
    if any(d < 0 for i in range(network.num_inputs) for d in network.get_input(i).shape):
        add_profile(builder, config, network, {k: v.shape for k, v in (feeds or {}).items()})
    plan = builder.build_serialized_network(network, config)
    assert plan is not None, "build failed"
    engine = trt.Runtime(logger or trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
    return engine, network


def trt_run(model, feeds, logger=None, path=None, engine=None):
    if engine is None:
        engine, _ = trt_build(model, feeds, logger, path)
    ctx = engine.create_execution_context()
    return ctx.infer(feeds), engine


def errors(a, b):
    """(max abs error, max relative error) of a vs reference b."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if a.size == 0:
        return 0.0, 0.0
    d = np.abs(a - b)
    return float(d.max()), float((d / np.maximum(np.abs(b), 1e-6)).max())


def assert_outputs_close(got, ref, rtol=1e-3, atol=1e-5, names=None):
    """rtol 1e-3; atol is scaled by max(1, max|ref|) of each output (large outputs are judged relatively)."""
    names = names or list(ref)
    for n in names:
        r = np.asarray(ref[n])
        g = np.asarray(got[n])
        assert g.shape == r.shape, "output %s: shape %s, onnxruntime %s" % (n, g.shape, r.shape)
        if r.dtype == np.bool_:
            np.testing.assert_array_equal(g.astype(bool), r, err_msg="output %s" % n)
        elif np.issubdtype(r.dtype, np.integer):
            np.testing.assert_array_equal(g.astype(np.int64), r.astype(np.int64), err_msg="output %s" % n)
        else:
            finite = np.isfinite(r)
            scale = max(1.0, float(np.abs(r[finite]).max())) if finite.any() else 1.0
            np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), rtol=rtol, atol=atol * scale,
                                       err_msg="output %s" % n, equal_nan=True)


def compare(model, feeds, rtol=1e-3, atol=1e-5, logger=None):
    """Parses, builds and runs `model` with trtlite and onnxruntime; asserts the outputs match.
    Returns (trtlite outputs, onnxruntime outputs)."""
    ref = ort_run(model, feeds)
    got, _ = trt_run(model, feeds, logger)
    assert_outputs_close(got, ref, rtol, atol)
    return got, ref


def export_torch(module, args, opset, input_names=("x",), output_names=("y",), dynamic_axes=None):
    """ONNX bytes from torch.onnx.export (the TorchScript exporter, dynamo=False)."""
    import torch
    import warnings
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(module, args, f, opset_version=opset, dynamo=False,
                              input_names=list(input_names), output_names=list(output_names),
                              dynamic_axes=dynamic_axes, do_constant_folding=True)
    return f.getvalue()
