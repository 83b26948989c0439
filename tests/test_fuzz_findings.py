"""Fixes of fuzzer findings (tests/fuzz/known_findings.txt history), through the public API and the ONNX parser:
slice index arithmetic past int64, FILL values an integer tensor cannot hold, ONNX shape inference and Pad
memory blow-ups on malformed or huge models."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close
from test_layers_shape import slice_make, slice_mode

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _slice_net(shape, start, size, stride, mode, dtype=trt.float32, fill=None, fill_dtype=np.float32):
    def make(net):
        x = net.add_input("x", dtype, shape)
        layer = net.add_slice(x, start, size, stride)
        layer.name = "fz_slice"
        layer.mode = slice_mode(mode)
        if fill is not None:
            c = net.add_constant((), np.array(fill, fill_dtype).reshape(()))
            layer.set_input(4, c.get_output(0))
        net.mark_output(layer.get_output(0))
    return make


# ---- 1. slice start + (size-1)*stride past int64 --------------------------------------------------------------

@pytest.mark.parametrize("mode", ["WRAP", "CLAMP", "FILL", "REFLECT", "DEFAULT"])
@pytest.mark.parametrize("start,size,stride", [((0,), (3,), (2 ** 62,)), ((2 ** 62,), (2,), (2 ** 62,)),
                                               ((-2 ** 62,), (3,), (-2 ** 62,)), ((0,), (2 ** 40,), (2 ** 24,))])
def test_slice_index_overflow_is_a_shape_error(mode, start, size, stride, expect_layer_error):
    e = expect_layer_error(_slice_net((4,), start, size, stride, mode), trt.Error, ("fz_slice",))
    assert isinstance(e, trt.ShapeError) and "overflow" in str(e), e


@pytest.mark.parametrize("mode", ["WRAP", "CLAMP", "FILL", "REFLECT"])
def test_slice_huge_legal_stride_runs(mode, rng, build_and_run):
    """The largest strides whose indices stay in int64 are legal in the sampling modes, and index the input
    correctly (independent reference: refs.slice_ in Python integers)."""
    x = rng.standard_normal((2, 5)).astype(np.float32)
    start, size, stride = (1, -3), (2, 3), (-1, 2 ** 61 + 1)
    out = build_and_run(slice_make(start, size, stride, mode), {"x": x})
    assert_close(out, refs.slice_(x, start, size, stride, mode))


# ---- 2. FILL values an integer tensor cannot hold ------------------------------------------------------------

@pytest.mark.parametrize("fill", [1e35, -1e35, float("nan"), float("inf"), 2.5, 2147483648.0, -2147483904.0])
def test_slice_int32_fill_not_representable_is_rejected(fill, expect_layer_error):
    e = expect_layer_error(_slice_net((2, 3), (0, -1), (2, 5), (1, 1), "FILL", trt.int32, fill), trt.Error,
                           ("fz_slice",))
    assert "FILL value" in str(e), e


def test_slice_int32_fill_int_constant_not_float_exact_is_rejected(expect_layer_error):
    """An INT32 fill constant is kept as a float: one it would round (2^24 + 1) is refused, not changed."""
    expect_layer_error(_slice_net((2, 3), (0, -1), (2, 5), (1, 1), "FILL", trt.int32, 2 ** 24 + 1, np.int32),
                       trt.Error, ("fz_slice",))


def _fill_make(start, size, fill, fdt):
    def make(net, x):
        layer = net.add_slice(x, start, size, (1,) * len(start))
        layer.mode = slice_mode("FILL")
        layer.set_input(4, net.add_constant((), np.array(fill, fdt).reshape(())).get_output(0))
        return layer
    return make


@pytest.mark.parametrize("fill,fdt", [(-7.0, np.float32), (-2147483648.0, np.float32), (2147483520.0, np.float32),
                                      (16777216, np.int32), (-5, np.int32)])
def test_slice_int32_fill_exact_values(fill, fdt, rng, build_and_run):
    x = rng.integers(-100, 100, (2, 3)).astype(np.int32)
    out = build_and_run(_fill_make((0, -1), (2, 5), fill, fdt), {"x": x})
    want = refs.slice_(x.astype(np.float64), (0, -1), (2, 5), (1, 1), "FILL", fill=float(fill))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.astype(np.float64), want)


# ---- 3./4. ONNX parser: shape inference and Pad within bounded time and memory ----------------------------------

_PARSE_LIMITED = textwrap.dedent("""
    import resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (%d << 20,) * 2)
    import trtlite as trt
    t = time.time()
    lg = trt.Logger(trt.Logger.ERROR)
    net = trt.Builder(lg).create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    p = trt.OnnxParser(net, lg)
    ok = p.parse_from_file(sys.argv[1])
    print("RESULT", ok, "%%.1f" %% (time.time() - t))
    for i in range(p.num_errors):
        print("ERROR", p.get_error(i))
""")


def _parse_limited(path, mib=1536, timeout=60):
    """Parses the model file in a subprocess limited to `mib` MiB of address space; (ok, seconds, errors)."""
    # one OpenBLAS thread: its per-thread buffers (32 MiB each, one per core) would count against the limit on a
    # many-core host (a 16-core machine refused to start); the limit is for the parser
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), OPENBLAS_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", _PARSE_LIMITED % mib, path], capture_output=True, text=True,
                       timeout=timeout, env=env)
    lines = p.stdout.splitlines()
    res = [ln for ln in lines if ln.startswith("RESULT ")]
    assert p.returncode == 0 and res, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    _, ok, secs = res[0].split()
    return ok == "True", float(secs), [ln[6:] for ln in lines if ln.startswith("ERROR ")]


def test_onnx_scan_without_body_is_refused_quickly():
    path = os.path.join(HERE, "fuzz", "regressions", "onnx", "scan_shape_inference_blowup.onnx")
    ok, secs, errors = _parse_limited(path)
    assert not ok and secs < 10, (secs, errors)
    assert any("INVALID_NODE" in e and "Scan" in e and "body" in e for e in errors), errors


def _dyn_reshape_model(out_dims):
    """x [?, 3] (an unnamed dynamic dim: the parser asks ONNX shape inference for it) reshaped through
    Shape/Gather/Concat; the graph output declares `out_dims`."""
    from onnx_helpers import helper, make_model, TensorProto
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
             helper.make_node("Concat", ["n", "three"], ["shp"], axis=0),
             helper.make_node("Reshape", ["x", "shp"], ["y"])]
    m = make_model(nodes, {"x": ((None, 3), np.float32)}, {"y": (out_dims, np.float32)},
                   {"i0": np.array([0], np.int64), "three": np.array([3], np.int64)})
    assert not m.graph.input[0].type.tensor_type.shape.dim[0].HasField("dim_param")
    return m


@pytest.mark.parametrize("out_dims", [(2 ** 41, 3), (2 ** 30, 2 ** 11)])
def test_onnx_shape_inference_skipped_for_huge_declared_dims(out_dims, monkeypatch):
    from onnx_helpers import parse
    from trtlite.onnx import context
    called = []
    real = context.infer_shapes_isolated  # onnx's shape inference, run in a forked child (onnx/isolated.py)
    monkeypatch.setattr(context, "infer_shapes_isolated", lambda *a, **k: called.append(1) or real(*a, **k))
    parse(_dyn_reshape_model((None, 3)))
    assert called, "the model must reach ONNX shape inference (else this test proves nothing)"
    called.clear()
    _, net, _ = parse(_dyn_reshape_model(out_dims))
    assert not called
    assert tuple(net.get_output(0).shape) == (-1, 3)


def test_onnx_shape_inference_failure_falls_back(monkeypatch, rng):
    from onnx import shape_inference
    from onnx_helpers import compare

    def boom(*a, **k):
        raise RuntimeError("shape inference exploded")
    monkeypatch.setattr(shape_inference, "infer_shapes", boom)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    compare(_dyn_reshape_model((None, 3)), {"x": x})


def test_onnx_pad_finding_parses_in_bounded_memory():
    path = os.path.join(HERE, "fuzz", "findings", "onnx", "pad_constant_mask_blowup.onnx")
    ok, secs, errors = _parse_limited(path, mib=700)
    assert ok and secs < 20, (secs, errors)


def _pad_model(shape, pads, value, dtype=np.float32, dyn=False):
    from onnx_helpers import helper, make_model
    node = helper.make_node("Pad", ["x", "p", "v"], ["y"], mode="constant")
    ishape = ((None if dyn else shape[0]),) + tuple(shape[1:])
    return make_model([node], {"x": (ishape, dtype)}, {"y": (None, dtype)},
                      {"p": np.array(pads, np.int64), "v": np.array(value, dtype)})


def test_onnx_pad_large_constant_in_bounded_memory(tmp_path):
    """A [1, 1, 4] input padded to [1, 8001, 10004] (80M elements, 320 MB as float32): the parse must not make
    data of the padded size (it made a dense mask, several copies of it)."""
    m = _pad_model((1, 1, 4), [0, 4000, 0, 0, 4000, 10000], 1.5)
    path = str(tmp_path / "pad.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    ok, secs, errors = _parse_limited(path, mib=450)
    assert ok, errors


@pytest.mark.parametrize("shape,pads,value,dtype,dyn", [
    ((2, 3, 4), [0, 1, -1, 1, 2, 3], 0.75, np.float32, False),
    ((2, 3, 4), [0, 1, -1, 0, 2, 3], -2.5, np.float32, True),
    ((2, 3, 4), [0, 0, 2, 0, 3, 1], float("inf"), np.float32, True),
    ((2, 3, 4), [1, 0, 2, 0, 3, 1], 7, np.int32, False),
    ((2, 3, 4), [0, 2, 0, 0, 0, 3], -9, np.int64, True),
])
def test_onnx_pad_constant_values(shape, pads, value, dtype, dyn, rng):
    from onnx_helpers import compare
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    compare(_pad_model(shape, pads, value, dtype, dyn), {"x": x})


def test_onnx_pad_past_element_bound_is_refused():
    from onnx_helpers import ParseFailed, parse
    with pytest.raises(ParseFailed) as ei:
        parse(_pad_model((2, 3), [0, 0, 2 ** 20, 2 ** 20], 1.0))
    assert "INVALID_NODE" in str(ei.value) and "Pad" in str(ei.value) and "2^40" in str(ei.value), ei.value


@pytest.mark.parametrize("value,mode", [(1.5, "constant"), (0.0, "edge")])
def test_onnx_pad_dynamic_input_huge_padded_axis_is_refused_quickly(value, mode, tmp_path):
    """ONNX fuzz finding: an input with a dynamic axis, padded along a static axis of 2^31 (the declared dim of a
    malformed model): the parser built a 2^31-element mask constant (minutes, gigabytes).  Now a clear error."""
    from onnx_helpers import helper, make_model
    node = helper.make_node("Pad", ["x", "p", "v"], ["y"], mode=mode)
    # (2^31 - 1: graph inputs with a larger dim are refused before any importer runs, since session 15)
    m = make_model([node], {"x": ((None, 2, 2 ** 31 - 1, 3), np.float32)}, {"y": (None, np.float32)},
                   {"p": np.array([0, 0, 1, 0, 0, 0, 1, 0], np.int64), "v": np.array(value, np.float32)})
    path = str(tmp_path / "pad.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    ok, secs, errors = _parse_limited(path, mib=700)
    assert not ok and secs < 10, (secs, errors)
    assert any("UNSUPPORTED_NODE" in e and "padded axis 2" in e and str(2 ** 31 + 1) in e for e in errors), errors


def test_onnx_constant_fold_with_absurd_axis_is_refused_quickly():
    """ONNX fuzz finding: LayerNormalization over constants with axis -2^31 was folded by onnx's reference
    implementation, which allocated ~17 GB for it; the importer's own error (axis out of range) comes first now."""
    path = os.path.join(HERE, "fuzz", "regressions", "onnx", "layernorm_axis_int_min_reference_fold_17gb.onnx")
    ok, secs, errors = _parse_limited(path, mib=1024)
    assert not ok and secs < 10, (secs, errors)
    assert any("INVALID_NODE" in e and "axis -2147483648" in e for e in errors), errors


def test_onnx_reference_fold_not_asked_for_absurd_axis(monkeypatch):
    """The check above, without relying on timing: onnx's reference evaluator is never asked to fold it."""
    from onnx import reference
    from onnx_helpers import ParseFailed, parse
    import onnx
    asked = []
    real = reference.ReferenceEvaluator

    def spy(node, *a, **k):
        asked.append(getattr(node, "op_type", "?"))
        return real(node, *a, **k)
    monkeypatch.setattr(reference, "ReferenceEvaluator", spy)
    path = os.path.join(HERE, "fuzz", "regressions", "onnx", "layernorm_axis_int_min_reference_fold_17gb.onnx")
    with pytest.raises(ParseFailed) as ei:
        parse(onnx.load(path))
    assert "axis -2147483648" in str(ei.value)
    assert "LayerNormalization" not in asked, asked


def test_onnx_gather_elements_float_indices_are_refused_before_folding():
    """GatherElements of a float constant by itself (a fuzzing input): onnx's reference fold took the indices 1e30 /
    -inf to np.choose and hung the parser (the 30 s timeout, three inputs of one 10-minute run).  Indices of a
    non-integer type are INVALID_NODE naming the op, before any fold."""
    path = os.path.join(ROOT, "tests", "fuzz", "regressions", "onnx",
                        "gather_elements_float_indices_reference_fold_hang.onnx")
    ok, secs, errors = _parse_limited(path, mib=700)
    assert not ok and secs < 10, (secs, errors)
    assert any("INVALID_NODE: GatherElements's indices are float32: they must be int32 or int64" in e
               for e in errors), errors


def test_infer_of_an_output_numpy_cannot_shape_is_a_shape_error():
    """An empty output [0, 2, 2^62] (Expand of an empty tensor, a fuzzing input): numpy refuses that shape (its
    dims' product overflows), and infer() raised numpy's ValueError, naming nothing.  Now a trt.ShapeError naming
    the output."""
    path = os.path.join(ROOT, "tests", "fuzz", "regressions", "onnx",
                        "infer_empty_output_dims_product_overflow_valueerror.onnx")
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(net, trt.Logger(trt.Logger.ERROR))
    with open(path, "rb") as f:
        assert parser.parse(f.read())
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    ctx = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan).create_execution_context()
    with pytest.raises(trt.ShapeError, match="infer\\(\\): output 'y' of shape \\(0, 2, 4611686018427387904\\): numpy "
                                            "cannot make an array"):
        ctx.infer({"x": np.zeros((3, 4, 3), np.float32)})
