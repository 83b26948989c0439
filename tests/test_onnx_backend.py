"""The ONNX backend test suite (onnx.backend.test, from the installed onnx wheel) through trtlite's parser, against
an explicit expected-failure list; and regression tests (against onnxruntime / numpy) for the parser bugs the
suite found.

The suite: tests/onnx_backend/run_cases.py runs every case in a pool of child processes and judges it as onnx's
runner does.  tests/onnx_backend/expected_failures.txt lists each case trtlite fails, with the reason; the test
fails on a case that fails without being listed (a regression, or a new onnx case) and on a listed case that
passes (the list must stay true: remove the line).  Regenerate the list after a fix with
``python tests/onnx_backend/expected.py --update`` (reasons written by hand go in its OVERRIDES).
"""
import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import helper  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_helpers import ParseFailed, ort_run, parse, trt_run  # noqa: E402

import trtlite as trt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "onnx_backend"))
import expected  # noqa: E402
import run_cases  # noqa: E402


# ---- the suite -------------------------------------------------------------------------------------------------

def test_backend_suite_matches_expected_failures():
    """Every case of the suite runs (2 worker processes); the failures are exactly the listed ones."""
    cases = run_cases.collect(run_cases.KINDS)
    assert len(cases) > 1900, "onnx's backend cases were not found (%d)" % len(cases)
    results = run_cases.run_all(cases, "trtlite", jobs=2, timeout=120)
    listed = expected.load()
    unexpected_fail, unexpected_pass, unknown = expected.diff(results, listed)
    msg = []
    if unexpected_fail:
        msg.append("%d cases fail that are not in expected_failures.txt:\n  %s" % (
            len(unexpected_fail), "\n  ".join("%s: %s %s" % (n, results[n][0], results[n][1][:200])
                                             for n in unexpected_fail[:40])))
    if unexpected_pass:
        msg.append("%d cases pass that expected_failures.txt lists (remove them):\n  %s"
                   % (len(unexpected_pass), "\n  ".join(unexpected_pass[:40])))
    if unknown:
        msg.append("%d entries of expected_failures.txt name no case of the installed onnx:\n  %s"
                   % (len(unknown), "\n  ".join(unknown[:40])))
    assert not msg, "\n".join(msg)


def test_expected_failures_state_a_reason():
    """Each entry of the list says why it fails."""
    for name, reason in expected.load().items():
        assert reason.strip(), "expected_failures.txt: '%s' has no reason" % name


def test_runner_isolates_crashes_and_timeouts(monkeypatch):
    """A case that kills its worker or hangs is reported as CRASH / TIMEOUT, and the cases after it still run
    (the workers are forked, so the patched backend table reaches them)."""
    monkeypatch.setitem(run_cases.BACKENDS, "crashy", _crash_or_hang)
    cases = run_cases.collect(["node"], r"^test_(abs|relu|neg|sigmoid)$")
    assert len(cases) == 4
    res = run_cases.run_all(cases, "crashy", jobs=2, timeout=5)
    assert res["test_neg"][0] == "CRASH"
    assert res["test_sigmoid"][0] == "TIMEOUT"
    assert res["test_abs"] == ("PASS", "") and res["test_relu"] == ("PASS", "")


def _crash_or_hang(model_bytes, feeds):
    """A backend that dies on Neg, hangs on Sigmoid and runs the rest with onnxruntime."""
    import time
    op = onnx.load_from_string(model_bytes).graph.node[0].op_type
    if op == "Neg":
        os._exit(3)
    if op == "Sigmoid":
        time.sleep(60)
    return run_cases.run_onnxruntime(model_bytes, feeds)


def test_compare_is_onnx_runners_rule():
    """Same shape, allclose with rtol/atol; outputs are cast to the expected dtype first."""
    run_cases.compare([np.array([1, 2], np.int32)], [np.array([1, 2], np.int64)], 1e-3, 1e-7)
    with pytest.raises(AssertionError):
        run_cases.compare([np.array([1.0, 2.0], np.float32)], [np.array([1.0, 2.01], np.float32)], 1e-3, 1e-7)
    with pytest.raises(AssertionError):
        run_cases.compare([np.zeros((2, 1), np.float32)], [np.zeros((2,), np.float32)], 1e-3, 1e-7)
    with pytest.raises(AssertionError):
        run_cases.compare([np.zeros(2, np.float32)], [np.zeros(2, np.float32)] * 2, 1e-3, 1e-7)


# ---- regression tests of parser bugs the suite found -----------------------------------------------------------

def _vi(name, shape, elem=onnx.TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, opset):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = min(m.ir_version, 10)
    return m


@pytest.mark.parametrize("shape", [(2, 4, 3, 4), (2, 3, 4, 5), (1, 5, 6)])
def test_instance_norm_runtime_scale_bias_on_channels(shape):
    """Scale and bias given as graph inputs apply per channel (dim 1), not along the last dim (with W == C this
    was a silent wrong answer, else a parse error)."""
    c = shape[1]
    m = _model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-5)],
               [_vi("x", shape), _vi("s", [c]), _vi("b", [c])], [_vi("y", shape)], 13)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal(shape).astype(np.float32),
             "s": rng.standard_normal(c).astype(np.float32), "b": rng.standard_normal(c).astype(np.float32)}
    got, _ = trt_run(m, feeds)
    np.testing.assert_allclose(got["y"], ort_run(m, feeds)["y"], rtol=1e-4, atol=1e-4)


def test_group_norm_runtime_scale_bias_on_channels():
    shape, c, g = (2, 4, 3, 4), 4, 2
    m = _model([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=g, epsilon=1e-5)],
               [_vi("x", shape), _vi("s", [c]), _vi("b", [c])], [_vi("y", shape)], 21)
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal(shape).astype(np.float32),
             "s": rng.standard_normal(c).astype(np.float32), "b": rng.standard_normal(c).astype(np.float32)}
    got, _ = trt_run(m, feeds)
    np.testing.assert_allclose(got["y"], ort_run(m, feeds)["y"], rtol=1e-4, atol=1e-4)


def _space_to_depth_ref(x, b, mode):
    """Element by element from the ONNX definition (opset 28): output channel (bh * b + bw) * C + c for DCR,
    c * b * b + bh * b + bw for CRD."""
    n, c, h, w = x.shape
    y = np.empty((n, c * b * b, h // b, w // b), x.dtype)
    for cc in range(c):
        for bh in range(b):
            for bw in range(b):
                oc = (bh * b + bw) * c + cc if mode == "DCR" else cc * b * b + bh * b + bw
                y[:, oc] = x[:, cc, bh::b, bw::b]
    return y


@pytest.mark.parametrize("mode", ["CRD", "DCR"])
def test_space_to_depth_modes(mode):
    """SpaceToDepth-28's mode=CRD was read as DCR (onnxruntime does not know the attribute yet: numpy reference)."""
    shape = (2, 3, 4, 6)
    m = _model([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode=mode)], [_vi("x", shape)],
               [_vi("y", None)], 28)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got, _ = trt_run(m, {"x": x})
    np.testing.assert_array_equal(got["y"], _space_to_depth_ref(x, 2, mode))


@pytest.mark.parametrize("mode", ["CRD", "DCR"])
def test_depth_to_space_modes(mode):
    shape = (2, 12, 2, 3)
    m = _model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode=mode)], [_vi("x", shape)],
               [_vi("y", None)], 13)
    feeds = {"x": np.arange(np.prod(shape), dtype=np.float32).reshape(shape)}
    got, _ = trt_run(m, feeds)
    np.testing.assert_array_equal(got["y"], ort_run(m, feeds)["y"])


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_infinite_divisor_and_signs(fmod):
    """x mod +-inf is x when the signs agree and +-inf (fmod=0) otherwise, as numpy's mod (C's fmod for fmod=1):
    it was NaN; zeros take the divisor's sign under fmod=0."""
    x = np.array([0, -0.0, 0, -0.0, -3, 3, -1, 1, np.inf, -np.inf, 1, 1, np.nan, 1, 5.5, -5.5, 7, -7], np.float32)
    y = np.array([-2, 2, 2, -2, np.inf, np.inf, -np.inf, -np.inf, 2, 2, 0, -0.0, 2, np.nan, 2, 2, -3, 3],
                 np.float32)
    m = _model([helper.make_node("Mod", ["x", "y"], ["z"], fmod=fmod)], [_vi("x", [18]), _vi("y", [18])],
               [_vi("z", [18])], 13)
    got, _ = trt_run(m, {"x": x, "y": y})
    with np.errstate(all="ignore"):
        ref = np.mod(x, y) if fmod == 0 else np.fmod(x, y)
    np.testing.assert_array_equal(got["z"], ref)
    if fmod == 0:
        np.testing.assert_array_equal(np.signbit(got["z"][:4]), np.signbit(ref[:4]))


def test_dropout_runtime_training_mode_is_honoured():
    """Dropout with a run-time training_mode was an identity even when it is true (silently not dropping); it was
    then refused, and now drops (a seeded random mask, tests/test_onnx_ops_coverage2.py checks the statistics)."""
    m = _model([helper.make_node("Dropout", ["x", "r", "t"], ["y"])],
               [_vi("x", [20, 30]), _vi("r", []), _vi("t", [], onnx.TensorProto.BOOL)], [_vi("y", [20, 30])], 13)
    x = np.random.default_rng(0).uniform(1, 2, (20, 30)).astype(np.float32)
    for train in (False, True):
        got, _ = trt_run(m, {"x": x, "r": np.array(0.5, np.float32), "t": np.array(train)})
        if train:
            dropped = got["y"] == 0
            assert 0.3 < dropped.mean() < 0.7
            np.testing.assert_allclose(got["y"][~dropped], 2 * x[~dropped], rtol=1e-6)
        else:
            np.testing.assert_array_equal(got["y"], x)


def test_opset_6_model_parses_with_a_warning():
    """Models below opset 7 are imported (TensorRT only warns), and opset 6's explicit broadcast (broadcast=1,
    axis=k: B lines up with A from dim k) is honoured."""
    m = _model([helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1)],
               [_vi("x", [2, 3, 4, 5]), _vi("b", [3, 4])], [_vi("y", [2, 3, 4, 5])], 6)

    class Log(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.msgs = []

        def log(self, severity, msg):
            self.msgs.append((severity, msg))
    log = Log()
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    got, _ = trt_run(m, {"x": x, "b": b}, logger=log)
    np.testing.assert_array_equal(got["y"], x + b[None, :, :, None])
    assert any(s == trt.Logger.WARNING and "opset 6" in msg for s, msg in log.msgs)


def test_onnx_operators_doc_is_current():
    """docs/onnx_operators.md is what tools/gen_onnx_ops_doc.py makes of the importer registry."""
    import subprocess
    root = os.path.dirname(HERE)
    r = subprocess.run([sys.executable, os.path.join(root, "tools", "gen_onnx_ops_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(root, "docs", "onnx_operators.md")) as f:
        doc = f.read()
    from trtlite.onnx import supported_ops
    for op, _ in supported_ops():
        assert "| %s |" % op in doc, op


@pytest.mark.parametrize("causal,mask,past,rank", [(1, "bool", True, 4), (0, "float", False, 3), (1, None, False, 3),
                                                   (0, "bool", False, 4)])
def test_attention_against_onnxruntime(causal, mask, past, rank):
    """Attention-23 (grouped-query heads, causal with a past cache, bool / float masks, 3-D and 4-D); the
    backend suite covers the rest (short masks, softcap, sliding windows, nonpad_kv_seqlen, qk outputs)."""
    rng = np.random.default_rng(3)
    b, hq, hk, lq, lk, e, lp = 2, 4, 2, 3, 3, 8, 2
    s = lk + (lp if past else 0)
    if rank == 4:
        shapes = {"Q": (b, hq, lq, e), "K": (b, hk, lk, e), "V": (b, hk, lk, e)}
        attrs = {}
    else:
        shapes = {"Q": (b, lq, hq * e), "K": (b, lk, hk * e), "V": (b, lk, hk * e)}
        attrs = {"q_num_heads": hq, "kv_num_heads": hk}
    feeds = {n: rng.standard_normal(sh).astype(np.float32) for n, sh in shapes.items()}
    ins = ["Q", "K", "V"]
    vis = [_vi(n, list(sh)) for n, sh in shapes.items()]
    if mask or past:
        ins.append("M" if mask else "")
    if mask:
        ms = (lq, s) if mask == "bool" else (b, 1, lq, s)
        feeds["M"] = rng.random(ms) > 0.3 if mask == "bool" else rng.standard_normal(ms).astype(np.float32)
        vis.append(_vi("M", list(ms), onnx.TensorProto.BOOL if mask == "bool" else onnx.TensorProto.FLOAT))
    outs = ["Y"]
    if past:
        ins += ["PK", "PV"]
        for n in ("PK", "PV"):
            feeds[n] = rng.standard_normal((b, hk, lp, e)).astype(np.float32)
            vis.append(_vi(n, [b, hk, lp, e]))
        outs += ["present_k", "present_v"]
    m = _model([helper.make_node("Attention", ins, outs, is_causal=causal, **attrs)], vis,
               [_vi(o, None) for o in outs], 23)
    got, _ = trt_run(m, feeds)
    ref = ort_run(m, feeds)
    for o in outs:
        np.testing.assert_allclose(got[o], ref[o], rtol=1e-4, atol=1e-5, err_msg=o)


@pytest.mark.parametrize("eq,shapes", [("...ij,...jk->...ik", [(2, 3, 4, 5), (3, 5, 2)]), ("ij,jk", [(3, 4), (4, 2)]),
                                       ("i,i", [(5,), (5,)]), ("bij->bji", [(2, 3, 4)]), ("ij->", [(3, 4)]),
                                       ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("i,j->ij", [(3,), (4,)]),
                                       ("abc,cd,de->ae", [(2, 3, 4), (4, 5), (5, 2)])])
def test_einsum_against_numpy(eq, shapes):
    rng = np.random.default_rng(4)
    names = ["x%d" % i for i in range(len(shapes))]
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
    m = _model([helper.make_node("Einsum", names, ["y"], equation=eq)], [_vi(n, list(s)) for n, s in
                                                                         zip(names, shapes)], [_vi("y", None)], 12)
    got, _ = trt_run(m, feeds)
    ref = np.einsum(eq, *[feeds[n].astype(np.float64) for n in names])
    np.testing.assert_allclose(got["y"], ref, rtol=1e-4, atol=1e-4)


def test_einsum_diagonal_runs_on_the_einsum_layer():
    """A repeated index (a diagonal) goes to IEinsumLayer (it was refused before the layer existed)."""
    m = _model([helper.make_node("Einsum", ["x"], ["y"], equation="ii->i")], [_vi("x", [3, 3])], [_vi("y", None)], 12)
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    got, _ = trt_run(m, {"x": x})
    np.testing.assert_array_equal(got["y"], np.diagonal(x))


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
@pytest.mark.parametrize("axis,reverse,exclusive", [(1, 0, 0), (-1, 1, 0), (0, 0, 1), (2, 1, 1)])
def test_cumulative_constant_axis_against_numpy(op, axis, reverse, exclusive):
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)
    g = helper.make_graph([helper.make_node(op, ["x", "ax"], ["y"], reverse=reverse, exclusive=exclusive)], "g",
                          [_vi("x", [2, 3, 4])], [_vi("y", None)],
                          [onnx.numpy_helper.from_array(np.array(axis, np.int64), "ax")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 26)])
    m.ir_version = min(m.ir_version, 10)
    got, _ = trt_run(m, {"x": x})
    f = np.cumsum if op == "CumSum" else np.cumprod
    xd = x.astype(np.float64)
    if reverse:
        xd = np.flip(xd, axis)
    ref = f(xd, axis=axis)
    if exclusive:
        ident = 0.0 if op == "CumSum" else 1.0
        ref = np.concatenate([np.full_like(np.take(ref, [0], axis=axis), ident),
                              np.take(ref, range(ref.shape[axis] - 1), axis=axis)], axis=axis)
    if reverse:
        ref = np.flip(ref, axis)
    np.testing.assert_allclose(got["y"], ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,xshape,wshape,attrs", [
    ("Conv", (2, 4, 7, 6), (6, 2, 3, 2), dict(group=2, strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1])),
    ("Conv", (1, 3, 9), (4, 3, 3), dict(auto_pad="SAME_LOWER", strides=[2])),
    ("Conv", (1, 2, 4, 4, 5), (3, 2, 2, 3, 2), dict(pads=[1, 1, 0, 0, 1, 1])),
    ("ConvTranspose", (2, 4, 3, 5), (4, 3, 3, 2), dict(group=2, strides=[2, 3], dilations=[1, 2], pads=[1, 0, 0, 2],
                                                        output_padding=[1, 1])),
    ("ConvTranspose", (1, 2, 5), (2, 3, 4), dict(strides=[2], auto_pad="SAME_UPPER")),
])
def test_conv_with_run_time_weights_against_onnxruntime(op, xshape, wshape, attrs):
    """Weights (and bias) fed as graph inputs: lowered to im2col + matrix multiplies (TensorRT takes such weights
    as layer inputs; trtlite's convolution layers take only constants)."""
    rng = np.random.default_rng(6)
    m_out = wshape[0] if op == "Conv" else wshape[1] * attrs.get("group", 1)
    feeds = {"x": rng.standard_normal(xshape).astype(np.float32), "w": rng.standard_normal(wshape).astype(np.float32),
             "b": rng.standard_normal(m_out).astype(np.float32)}
    m = _model([helper.make_node(op, ["x", "w", "b"], ["y"], **attrs)],
               [_vi("x", list(xshape)), _vi("w", list(wshape)), _vi("b", [m_out])], [_vi("y", None)], 13)
    got, _ = trt_run(m, feeds)
    np.testing.assert_allclose(got["y"], ort_run(m, feeds)["y"], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_against_onnxruntime(mode, pad, align):
    """GridSample-20 on random grids reaching past the borders (where the padding modes differ), against onnx's
    reference implementation; onnxruntime 1.32 agrees with both except for cubic with border padding, where it
    clamps the taps differently from the ONNX definition (the backend cases follow the reference)."""
    rng = np.random.default_rng(7)
    feeds = {"x": rng.standard_normal((2, 3, 5, 6)).astype(np.float32),
             "g": rng.uniform(-1.6, 1.6, (2, 4, 7, 2)).astype(np.float32)}
    m = _model([helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=pad, align_corners=align)],
               [_vi("x", [2, 3, 5, 6]), _vi("g", [2, 4, 7, 2])], [_vi("y", None)], 20)
    got, _ = trt_run(m, feeds)
    from onnx.reference import ReferenceEvaluator
    ref = ReferenceEvaluator(m).run(None, feeds)[0]
    np.testing.assert_allclose(got["y"], ref, rtol=1e-4, atol=1e-4)
    if not (mode == "cubic" and pad == "border"):
        np.testing.assert_allclose(got["y"], ort_run(m, feeds)["y"], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op,attrs", [
    ("MaxPool", dict(kernel_shape=[3, 3], dilations=[2, 3], strides=[2, 1], pads=[1, 2, 2, 0], ceil_mode=1)),
    ("AveragePool", dict(kernel_shape=[3, 3], dilations=[3, 2], strides=[1, 2], pads=[2, 1, 1, 2],
                         count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[2, 2], dilations=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
])
def test_dilated_pooling_against_onnxruntime(op, attrs):
    rng = np.random.default_rng(8)
    feeds = {"x": rng.standard_normal((2, 3, 9, 10)).astype(np.float32)}
    m = _model([helper.make_node(op, ["x"], ["y"], **attrs)], [_vi("x", [2, 3, 9, 10])], [_vi("y", None)], 19)
    got, _ = trt_run(m, feeds)
    np.testing.assert_allclose(got["y"], ort_run(m, feeds)["y"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("inverse,onesided,complex_in,length", [(0, 0, 0, None), (0, 1, 0, None), (1, 0, 1, None),
                                                                (1, 1, 1, None), (0, 0, 1, 6), (0, 0, 0, 12)])
def test_dft_against_numpy(inverse, onesided, complex_in, length):
    """DFT-17 with the axis attribute (and a constant dft_length that truncates or zero-pads) against numpy.fft."""
    rng = np.random.default_rng(9)
    n = 8 if not (inverse and onesided) else 5
    z = rng.standard_normal((2, n, 3)) + (1j * rng.standard_normal((2, n, 3)) if complex_in else 0)
    x = np.stack([z.real, z.imag], -1) if complex_in else z.real[..., None]
    L = length or (2 * (n - 1) if inverse and onesided else n)
    if inverse:
        ref = np.fft.irfft(z, n=L, axis=1)[..., None] if onesided else np.fft.ifft(z, n=L, axis=1)
    else:
        ref = np.fft.fft(z, n=L, axis=1)
        ref = ref[:, :L // 2 + 1] if onesided else ref
    if np.iscomplexobj(ref):
        ref = np.stack([ref.real, ref.imag], -1)
    ins = ["x"] + (["L"] if length else [])
    inits = [onnx.numpy_helper.from_array(np.array(length, np.int64), "L")] if length else []
    g = helper.make_graph([helper.make_node("DFT", ins, ["y"], axis=1, inverse=inverse, onesided=onesided)], "g",
                          [_vi("x", list(x.shape))], [_vi("y", None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = min(m.ir_version, 10)
    got, _ = trt_run(m, {"x": x.astype(np.float32)})
    np.testing.assert_allclose(got["y"], ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op,attrs,extra", [
    ("LSTM", dict(hidden_size=4, direction="bidirectional", clip=2.5), ["B", "sequence_lens", "initial_h", "initial_c",
                                                                        "P"]),
    ("GRU", dict(hidden_size=3, linear_before_reset=1), ["B", "sequence_lens", "initial_h"]),
    ("GRU", dict(hidden_size=3, direction="reverse"), ["B"]),
    ("RNN", dict(hidden_size=5, activations=["Relu"]), ["B", "", "initial_h"]),
])
def test_recurrent_against_onnxruntime(op, attrs, extra):
    """RNN/GRU/LSTM unrolled over the steps: directions, sequence_lens given at run time, initial states,
    peepholes, clip, linear_before_reset."""
    rng = np.random.default_rng(10)
    t, b, i, h = 4, 3, 5, attrs["hidden_size"]
    g = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    d = 2 if attrs.get("direction") == "bidirectional" else 1
    shapes = {"X": (t, b, i), "W": (d, g * h, i), "R": (d, g * h, h), "B": (d, 2 * g * h), "initial_h": (d, b, h),
              "initial_c": (d, b, h), "P": (d, 3 * h)}
    feeds = {k: (rng.standard_normal(shapes[k]) * 0.5).astype(np.float32) for k in ["X", "W", "R"] + extra
             if k and k != "sequence_lens"}
    vis = [_vi(k, list(shapes[k])) for k in ["X", "W", "R"] + extra if k and k != "sequence_lens"]
    if "sequence_lens" in extra:
        feeds["sequence_lens"] = np.array([4, 2, 3], np.int32)
        vis.append(_vi("sequence_lens", [b], onnx.TensorProto.INT32))
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    m = _model([helper.make_node(op, ["X", "W", "R"] + extra, outs, **attrs)], vis, [_vi(o, None) for o in outs], 14)
    got, _ = trt_run(m, feeds)
    ref = ort_run(m, feeds)
    for o in outs:
        np.testing.assert_allclose(got[o], ref[o], rtol=1e-4, atol=1e-5, err_msg=o)


@pytest.mark.parametrize("op,attrs,dshape,ishape,ivals", [
    ("ScatterND", {}, (4, 3, 2), (2, 2), [[1, 2], [-1, 0]]),
    ("ScatterND", dict(reduction="add"), (5, 3), (3, 1), [[1], [3], [1]]),
    ("ScatterND", dict(reduction="max"), (4, 3), (2, 2), [[0, 1], [0, 1]]),
    ("ScatterElements", dict(axis=1), (3, 5), (3, 2), [[0, 4], [-1, 2], [3, 1]]),
    ("ScatterElements", dict(axis=0, reduction="mul"), (3, 4), (2, 4), [[0, 1, 2, 0], [0, 1, 2, 2]]),
])
def test_scatter_against_onnxruntime(op, attrs, dshape, ishape, ivals):
    rng = np.random.default_rng(11)
    idx = np.array(ivals, np.int64).reshape(ishape)
    ushape = ishape if op == "ScatterElements" else ishape[:-1] + dshape[ishape[-1]:]
    feeds = {"d": rng.standard_normal(dshape).astype(np.float32), "i": idx,
             "u": rng.standard_normal(ushape).astype(np.float32)}
    m = _model([helper.make_node(op, ["d", "i", "u"], ["y"], **attrs)],
               [_vi("d", list(dshape)), _vi("i", list(ishape), onnx.TensorProto.INT64), _vi("u", list(ushape))],
               [_vi("y", None)], 18)
    got, _ = trt_run(m, feeds)
    np.testing.assert_allclose(got["y"], ort_run(m, feeds)["y"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_onehot_constant_depth_against_onnxruntime(axis):
    """OneHot with depth an initializer (the backend cases feed it at run time): negative and out-of-range
    indices, values at run time."""
    feeds = {"i": np.array([[1, -1, 9], [0, 4, -6]], np.int64), "v": np.array([-2.0, 3.5], np.float32)}
    g = helper.make_graph([helper.make_node("OneHot", ["i", "depth", "v"], ["y"], axis=axis)], "g",
                          [_vi("i", [2, 3], onnx.TensorProto.INT64), _vi("v", [2])], [_vi("y", None)],
                          [onnx.numpy_helper.from_array(np.array(5, np.int64), "depth")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = min(m.ir_version, 10)
    got, _ = trt_run(m, feeds)
    np.testing.assert_array_equal(got["y"], ort_run(m, feeds)["y"])
